"""The relational walk's operations in Spark SQL: the *Spark engine* (:mod:`spark_fr.relational.walk` calls them).

Sketch
------
A frame is a lazy DataFrame: ``__l`` (the link) and one column per value. Every operation adds to the plan and
runs nothing, but for the profile's small jobs:

* ``prepare``: one projection of the table (keys through :func:`~spark_fr.relational.checks.key_value`, values
  through :func:`prepared_value`);
* ``table_pass``: :func:`spark_fr.relational.checks.table_pass`, one job per table (its rows, keys, dangling
  foreign keys and the largest ``|x|`` of its values together: the fact table is scanned once for all of them);
  ``nominal_values``: one small aggregation per table (the top values are collected, not the rows);
* ``aggregate``: the local engine's kernels per hash partition (:class:`~spark_fr.relational.partition_hop.PartitionHop`),
  or, when a value of the aggregated tables may be NaN (a number to Spark, missing to the kernels), Spark's own
  ``groupBy`` (:class:`~spark_fr.relational.aggregates.GroupAggregates`): both give the same bits;
* ``join``: a left join of the parent's rows by ``on`` (nulls never match); ``fill``: ``coalesce(v, 0)`` of
  the count-like values;
* ``target`` / ``attach`` / ``finish``: the target table left-joined with each path's frame on the target key,
  one final projection naming the features (numbers as doubles).

The plan per path is one grouping per to-many hop and one join per hop, whatever the number of attributes and
aggregates; fact tables are never collected. A table without a key that a join reads costs the count of its
rows per file block (:mod:`spark_fr.relational.row_keys`).
"""
from __future__ import annotations

from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.window import Window

from ..data.columns import qcol
from . import aggregates as A
from .checks import check_declared, key_types, key_value, table_pass
from .partition_hop import PartitionHop, applies
from .plan import DOMAIN_LIMIT
from .sources import load_tables

#: threads running the data checks and table profiles (small Spark jobs) side by side
SMALL_JOBS = 4


class SparkExecutor:
    """The walk's operations on Spark DataFrames (see the module's notes).

    Parameters
    ----------
    spark : SparkSession
    schema : RelationalSchema
    tables : dict, optional
        {table name: DataFrame} replacing the schema's sources.
    kernels : bool
        Aggregate hops with the kernels per partition when no value may be NaN (False: always Spark's ``groupBy``;
        the two are checked against each other by the tests).
    """

    small_jobs = SMALL_JOBS

    def __init__(self, spark, schema, tables: dict | None = None, kernels: bool = True):
        self.schema = schema
        self.frames = load_tables(spark, schema, tables)
        self.kernels = kernels

    # --- what the kinds and the key plan read ---

    def column_types(self) -> dict:
        """{table: DataFrame} (:func:`~spark_fr.relational.checks.column_kinds` reads their schemas)."""
        return self.frames

    def key_types(self) -> dict:
        """{(table, column): Spark type name} of every key and foreign key."""
        return key_types(self.schema, self.frames)

    def check_declared(self) -> None:
        """Refuse a string column declared numeric or a date that holds something else (one job per such table)."""
        check_declared(self.schema, self.frames)

    # --- preparing and profiling ---

    def prepare(self, name: str, keys: dict, values: dict):
        """Table ``name`` as ``{internal: (key column, compared as)}`` and ``{internal: (attribute, kind)}``."""
        df = self.frames[name]
        cols = [key_value(df, column, as_type).alias(col) for col, (column, as_type) in keys.items()]
        cols += [prepared_value(df, attr, kind).alias(col) for col, (attr, kind) in values.items()]
        return df.select(*cols)

    def table_pass(self, name: str, table, plan: dict, keys, links, values):
        """One job over table ``name``: :func:`spark_fr.relational.checks.table_pass` with the largest ``|x|`` of
        each ``(attribute, kind)`` of ``values``."""
        df = self.frames[name]
        return table_pass(self.schema, name, self.frames, plan, keys, links,
                          [(a, prepared_value(df, a, kind)) for a, kind in values])

    def nominal_values(self, table, k: int) -> tuple:
        """({nominal attribute: its k most frequent non-missing values, ties by the smaller}, {nominal attribute:
        its sorted distinct non-missing values, or None when there are more than DOMAIN_LIMIT}) in one small job
        (none without nominal attributes)."""
        return nominal_values(table.frame, [(a, c) for a, (c, kind) in table.attrs.items() if kind == "nominal"], k)

    def groups(self, largest: dict):
        """The hops' groups of aggregates: the kernels per partition unless a value of an aggregated table
        (``largest``: {table: its pass's largest values}) may be NaN, then Spark's ``groupBy``."""
        if self.kernels and all(applies(v) for v in largest.values()):
            return PartitionHop
        return A.GroupAggregates

    # --- the walk ---

    def start(self, table, link: str, columns: dict):
        """A path's first frame: ``link`` of ``table`` as ``__l`` and ``{value: internal column}``."""
        return table.frame.select(F.col(link).alias("__l"), *[F.col(c).alias(v) for v, c in columns.items()])

    def aggregate(self, frame, group):
        """``frame`` grouped by ``__l`` (null keys form no group): ``__l`` and the group's columns."""
        return group.apply(frame, F.col("__l"))

    def join(self, frame, parent, on: str, link: str):
        """The rows of ``parent`` with the values of the frame's row whose ``__l`` equals their ``on`` (left join);
        their ``link`` becomes ``__l``."""
        values = [c for c in frame.columns if c != "__l"]
        p = parent.frame.select(F.col(link).alias("__l2"), F.col(on).alias("__j"))
        out = p.join(frame, F.col("__j") == F.col("__l"), "left")
        return out.select(F.col("__l2").alias("__l"), *values)

    def fill(self, frame, values):
        """Count-like values of empty groups (null) as 0."""
        return frame.select("__l", *[F.coalesce(F.col(v.col), F.lit(0)).alias(v.col) if v.count_like
                                     else F.col(v.col) for v in values])

    # --- the result ---

    def target(self, name: str, table, key: tuple, kind, columns: list):
        """The result's start: the target's key (``key``: (column, compared as)), id, class (a string when
        ``kind`` is nominal) and its own attributes ``columns`` ([(feature, internal column)])."""
        target = self.schema.target
        base = self.frames[name]
        y = qcol(target.column).cast("string") if kind == "nominal" else qcol(target.column)
        cols = [key_value(base, *key).alias("__t"), qcol(target.id).alias("__id"), y.alias("__y")]
        kinds = {c: (attr, k) for attr, (c, k) in table.attrs.items()}
        cols += [prepared_value(base, *kinds[col]).alias(f"t_{col}") for _, col in columns]
        return _Result(base.select(*cols), [F.col(f"t_{col}").alias(feature) for feature, col in columns])

    def attach(self, result, frame, features: list):
        """``result`` with the frame's values left-joined on the target key: ``features`` [(name, Value)]."""
        n = len(result.joined)
        p = f"__p{n}"
        joined = result.frame.join(frame.withColumnRenamed("__l", p), F.col("__t") == F.col(p), "left").drop(p)
        for name, v in features:
            expr = F.coalesce(F.col(v.col), F.lit(0)) if v.count_like else F.col(v.col)
            if v.kind == "numeric":
                expr = expr.cast("double")
            result.columns.append(expr.alias(name))
        result.joined.append(p)
        result.frame = joined
        return result

    def finish(self, result):
        """The result DataFrame: the target id, the target column, the features."""
        target = self.schema.target
        return result.frame.select(F.col("__id").alias(target.id), F.col("__y").alias(target.column),
                                   *result.columns)


class _Result:
    """The result being assembled: the target frame with the paths joined so far, the output columns."""

    def __init__(self, frame, columns: list):
        self.frame = frame
        self.columns = columns
        self.joined = []


def prepared_value(df, column: str, kind: str):
    """The value of ``column`` as a feature value: double, string, or days since the epoch (dates)."""
    c = qcol(column)
    if kind == "numeric":
        return c.cast("double")
    if kind == "nominal":
        return c.cast("string")
    dtype = df.schema[column].dataType
    if isinstance(dtype, T.DateType):
        return F.unix_date(c).cast("double")
    if isinstance(dtype, (T.TimestampType, T.TimestampNTZType)):
        return (F.unix_micros(c.cast("timestamp")) / 86400e6).cast("double")
    return F.unix_date(F.to_date(c)).cast("double")


def nominal_values(frame, nominal: list, k: int) -> tuple:
    """:meth:`SparkExecutor.nominal_values` of the ``[(attribute, column)]`` of ``frame``."""
    if not nominal:
        return {}, {}
    pairs = F.explode(F.array(*[F.struct(F.lit(i).alias("a"), F.col(c).alias("v")) for i, (_, c) in
                                enumerate(nominal)])).alias("s")
    counts = (frame.select(pairs).select("s.a", "s.v").where(F.col("v").isNotNull())
              .groupBy("a", "v").count())
    rank = F.row_number().over(Window.partitionBy("a").orderBy(F.col("count").desc(), F.col("v").asc()))
    distinct = F.count(F.lit(1)).over(Window.partitionBy("a"))
    rows = (counts.withColumn("r", rank).withColumn("d", distinct)
            .where(F.col("r") <= max(k, DOMAIN_LIMIT)).collect())
    frequent = {a: [] for a, _ in nominal}
    seen = {a: [] for a, _ in nominal}
    many = set()
    for row in sorted(rows, key=lambda r: (r["a"], r["r"])):
        attr = nominal[row["a"]][0]
        if row["r"] <= k:
            frequent[attr].append(row["v"])
        seen[attr].append(row["v"])
        if row["d"] > DOMAIN_LIMIT:
            many.add(attr)
    domains = {a: None if a in many else tuple(sorted(seen[a])) for a, _ in nominal}
    return (frequent if k > 0 else {a: [] for a, _ in nominal}), domains
