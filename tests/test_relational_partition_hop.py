"""The Spark engine's to-many hops computed by the local engine's kernels per hash partition
(:mod:`spark_fr.relational.partition_hop`): the same bits as Spark's own ``groupBy`` of the same aggregates, for
any number of partitions; values that may be NaN keep Spark's ``groupBy`` (NaN is a number there)."""
import numpy as np
import pytest

from spark_fr.relational import generate, generate_features
from spark_fr.relational.partition_hop import applies
from test_relational_local import random_tables, with_sources


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


@pytest.fixture
def shuffle_partitions(spark):
    """Set ``spark.sql.shuffle.partitions`` for one generation; restored after the test."""
    before = spark.conf.get("spark.sql.shuffle.partitions")
    yield lambda n: spark.conf.set("spark.sql.shuffle.partitions", str(n))
    spark.conf.set("spark.sql.shuffle.partitions", before)


def test_kernels_equal_spark_groupby_for_any_partitioning(spark, tmp_path, shuffle_partitions, monkeypatch):
    cfg, rows, columns = random_tables(2)
    cfg = with_sources(cfg, tmp_path, rows, columns)
    got = {}
    for n in (1, 5):
        shuffle_partitions(n)
        g = generate_features(spark, cfg, engine="spark", check=False)
        got[n] = _bits(g.frame, g.id)
    monkeypatch.setattr(generate, "applies", lambda largest: False)  # every hop by Spark's groupBy
    sql = generate_features(spark, cfg, engine="spark", check=False)
    assert got[1] == got[5]
    assert list(got[1]) == sql.frame.columns and got[1] == _bits(sql.frame, sql.id)


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

