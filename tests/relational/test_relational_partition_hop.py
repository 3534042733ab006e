"""The Spark engine's to-many hops computed by the local engine's kernels per hash partition
(:mod:`spark_fr.relational.partition_hop`) against Spark's own ``groupBy`` of the same aggregates
(``SparkExecutor(kernels=False)``) on keys of every kind, where the local engine cannot read the tables (a decimal
attribute); values that may be NaN keep Spark's ``groupBy`` (NaN is a number there). Both against the arrays, for
any number of partitions: tests/relational/test_relational_executors.py."""
import numpy as np

from spark_fr.relational import generate_features, load_schema
from spark_fr.relational.aggregates import GroupAggregates
from spark_fr.relational.partition_hop import PartitionHop, applies
from spark_fr.relational.spark_executor import SparkExecutor
from spark_fr.relational.walk import walk
from tests.relational.relational_twin import TwinGroup


def _bits(frame, id_col):
    """A result frame as {column: comparable values} sorted by id: doubles as their int64 bits (NaN and null
    apart), strings as they are."""
    pdf = frame.toPandas().sort_values(id_col, kind="stable").reset_index(drop=True)
    out = {}
    for c in pdf.columns:
        a = pdf[c].to_numpy()
        if pdf[c].dtype == object:
            out[c] = [None if v is None else v for v in a]
        else:
            a = a.astype(np.float64)
            out[c] = (np.isnan(a).tolist(), a[~np.isnan(a)].view(np.int64).tolist())
    return out


class BothWays(SparkExecutor):
    """The Spark executor with the kernels, whose every hop is aggregated by Spark's ``groupBy`` too and the two
    compared bit for bit (:func:`_bits`) before the walk goes on with the kernels' frame: one walk where two
    (``kernels=True`` and ``kernels=False``) would run every other operation twice. ``kinds``: the group classes
    chosen (kernels, groupBy); ``compared``: the hops compared."""

    def __init__(self, spark, schema, tables):
        super().__init__(spark, schema, tables)
        self.kinds, self.compared = None, 0

    def groups(self, largest):
        kernels = super().groups(largest)
        self.kernels = False
        try:
            sql = super().groups(largest)
        finally:
            self.kernels = True
        self.kinds = (kernels, sql)
        return lambda: TwinGroup(kernels(), sql())

    def aggregate(self, frame, group):
        by_kernels, by_sql = super().aggregate(frame, group.spark), super().aggregate(frame, group.local)
        assert sorted(by_kernels.columns) == sorted(by_sql.columns)  # in either order
        assert _bits(by_kernels, "__l") == _bits(by_sql, "__l"), by_kernels.columns
        self.compared += 1
        return by_kernels


def test_keys_of_every_kind(spark):
    """Hops grouped by text, date and float keys (signed zeros: one group in Spark) and a decimal attribute:
    the kernels give the bits of Spark's groupBy."""
    import datetime as dt
    from decimal import Decimal

    day = dt.date(2020, 1, 1)
    tables = {
        "t": spark.createDataFrame([("a", "y", day, 0.0), ("b", "n", dt.date(2020, 1, 2), 1.5), ("c", "y", None, -0.0)],
                                   "tid string, label string, uday date, fz float"),
        "c": spark.createDataFrame([(1, "a", 2.0, "p"), (2, "a", None, "q"), (3, "b", -1.0, "p"), (4, None, 7.0, "p")],
                                   "cid long, tid string, x double, kind string"),
        "u": spark.createDataFrame([(day, 3.0), (dt.date(2020, 1, 2), 4.0)], "uday date, y double"),
        "w": spark.createDataFrame([(1, day, Decimal("1.25")), (2, day, Decimal("-2.50")),
                                    (3, dt.date(2020, 1, 2), None)], "wid long, uday date, z decimal(10,2)"),
        "v": spark.createDataFrame([(0.0, "zero"), (1.5, "one")], "fz float, name string"),
        "q": spark.createDataFrame([(1, -0.0, 1.0), (2, 0.0, 2.0), (3, 1.5, 3.0)], "qid long, fz float, s double"),
    }
    cfg = {"tables": {"t": {"key": "tid", "foreign_keys": {"uday": "u", "fz": "v"}},
                      "c": {"key": "cid", "foreign_keys": {"tid": "t"}},
                      "u": {"key": "uday"}, "w": {"key": "wid", "foreign_keys": {"uday": "u"}},
                      "v": {"key": "fz"}, "q": {"key": "qid", "foreign_keys": {"fz": "v"}}},
           "target": {"table": "t", "column": "label"}, "max_depth": 2}
    schema = load_schema(cfg)
    both = BothWays(spark, schema, tables)
    kernels, lineage, _ = walk(both, schema)  # every hop: the kernels' bits are Spark's groupBy's
    assert both.kinds == (PartitionHop, GroupAggregates) and both.compared >= 3
    assert {f.table for f in lineage if f.aggregates} >= {"c", "q", "w"}  # hops grouped by text, float, date keys
    rows = {r["tid"]: r.asDict() for r in kernels.collect()}
    count = next(f.feature for f in lineage if f.table == "q" and f.aggregates == ("count",))
    assert (rows["a"][count], rows["c"][count], rows["b"][count]) == (2.0, 2.0, 1.0)  # -0.0 and 0.0: one group


def test_nan_keeps_spark_semantics(spark):
    """A NaN is a value to Spark (the largest double): its group's sum, mean and max are NaN, not the numbers
    beside it (the kernels read NaN as missing, so such a table keeps Spark's groupBy)."""
    assert applies({"x": 2.0, "y": None}) and not applies({"x": float("nan")})
    parent = spark.createDataFrame([(1, "a"), (2, "b")], "pid long, label string")
    child = spark.createDataFrame([(10, 1, 1.0), (11, 1, float("nan")), (12, 2, 3.0), (13, 2, 5.0)],
                                  "cid long, pid long, x double")
    cfg = {"tables": {"p": {"key": "pid"}, "c": {"key": "cid", "foreign_keys": {"pid": "p"}}},
           "target": {"table": "p", "column": "label"}, "max_depth": 1,
           "aggregates": {"numeric": ["count", "sum", "mean", "max"]}}
    g = generate_features(spark, cfg, {"p": parent, "c": child}, engine="spark")
    rows = {r["pid"]: r.asDict() for r in g.frame.collect()}
    by = {f.aggregates[0]: f.feature for f in g.lineage if f.aggregates}
    assert rows[1][by["count"]] == 2.0
    assert all(np.isnan(rows[1][by[a]]) for a in ("sum", "mean", "max"))
    assert (rows[2][by["sum"]], rows[2][by["mean"]], rows[2][by["max"]]) == (8.0, 4.0, 5.0)

