"""Relational feature generation: one row per target example, one column per (path, attribute, aggregates).

Algorithm sketch (thesis 7.1, "feature-value back-propagation")
-----------------------------------------------------------------
For every foreign-key path ``p = (T_0 = target, T_1, ..., T_s)`` up to ``max_depth`` hops
(:func:`spark_fr.relational.paths.enumerate_paths`) and every attribute ``X`` of ``T_s``::

    A(ro, p, [agg_1..agg_m], X) = agg_1 over T_i1 related to ro ( agg_2 ( ... agg_m(X) ... ))

with one aggregate per to-many hop (a to-one hop relates at most one row: the identity). The values are
computed innermost first, for all attributes of ``T_s`` at once:

1. **Prepare** every table once: key and foreign keys under internal names (``__k``, ``__f0``, ...),
   attributes under ``a0, a1, ...``: numbers as doubles, nominal values as strings, dates as days since
   1970-01-01. The target column is never an attribute (aggregating other examples' classes leaks them).
2. **Start** from ``T_s``: the column that links it to ``T_{s-1}`` (its foreign key for a to-many hop,
   its key for a to-one hop) and its attributes.
3. **Walk the hops backwards**, ``i = s .. 1``:

   * *to-many* (``T_i`` holds a foreign key to ``T_{i-1}``): one grouping on that foreign key with
     every aggregate of every value at once: the rows hashed into partitions by the key and every aggregate
     computed per partition by the local engine's kernels (:mod:`spark_fr.relational.partition_hop`), or,
     when a value of the aggregated tables may be NaN, Spark's ``groupBy``
     (:class:`spark_fr.relational.aggregates.GroupAggregates`); both give the same bits. The first
     (innermost) aggregation takes the per-kind aggregates (numeric/date: count_distinct, mean, min, max,
     sum, std; nominal: count_distinct, mode, the share of each frequent value), the count of related rows
     (when ``T_s`` itself is the aggregated table), and the conditional aggregates (numeric attributes
     within each frequent value of each nominal attribute of ``T_s``). Later (outer) aggregations take ``outer`` (numeric values, default
     mean, min, max) or ``outer_nominal`` (a mode, default mode) of each value. Then the rows of
     ``T_{i-1}`` are attached with a left join when ``T_{i-1}`` is itself reached by a to-many hop, so that
     its rows without children count as empty groups.
   * *to-one* (``T_{i-1}`` holds a foreign key to ``T_i``): a left join of ``T_{i-1}`` onto the values
     by that key (a dangling key gives an empty group).

   After every join, count-like values of empty groups (null) become 0; other aggregates stay missing.
4. **Assemble**: the target table (id, class, its own attributes as depth-0 features) left-joined with
   each path's frame on the target key; again count-like nulls become 0.

The plan is lazy: per path one grouping per to-many hop and one join per hop, whatever the number of
attributes and aggregates; fact tables are never collected. The only Spark jobs before the caller acts
on the frame are one pass per table (:func:`spark_fr.relational.checks.table_pass`: its rows, the largest
``|x|`` of the values it aggregates, and with ``check=True`` its keys and its dangling foreign keys, together:
the fact table is scanned once for all of them), one small aggregation per table whose frequent values are
needed (shares and conditions; the top values are collected, not the rows) and, for a table without a key that
a join reads, the count of its rows per file block (:mod:`spark_fr.relational.row_keys`).

Frequent values of a nominal attribute are its ``frequent_values`` most frequent non-missing values over
its whole table, ties broken by the smaller value.
"""
from __future__ import annotations

import logging
import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.window import Window

from ..data.columns import qcol
from ..errors import InputError
from . import aggregates as A
from . import exact as X
from .checks import (check_declared, column_kinds, key_checks, key_types, key_value, report_passes, source_of,
                     table_pass)
from .keys import key_plan
from .lineage import FeatureLineage, relations_of
from .naming import Names, feature_name
from .partition_hop import PartitionHop, applies
from .paths import MANY, enumerate_paths
from .plan import DOMAIN_LIMIT, Profile, Value, innermost, out_kind, outer
from .schema import RelationalSchema, load_schema
from .sources import load_tables
from .width import DEFAULT_MAX_FEATURES, check_width

log = logging.getLogger(__name__)


@dataclass
class GeneratedTable:
    """Generated features and their lineage.

    Attributes
    ----------
    frame : pyspark.sql.DataFrame
        The target id column, the target column, then one column per feature (numeric features are doubles,
        nominal ones strings); one row per target-table row, in no particular order.
    lineage : list of FeatureLineage
        One per feature, in column order.
    id : str
        The id column's name.
    target : str
        The target column's name.
    """

    frame: object
    lineage: list
    id: str
    target: str
    paths: list = field(default_factory=list)
    pandas: object = None  # the local engine's result (pandas DataFrame); frame is then None
    engine: str = "spark"
    engine_reason: str = ""  # why this engine (engine='auto': the size rule, or what the local engine refused)

    def ranking_input(self, drop_id: bool = True):
        """A context manager giving what :func:`spark_fr.api.run_ranking` takes: the Spark frame, or (local
        engine) a Parquet file written under the system temporary directory and removed on exit."""
        from .local import ranking_input

        return ranking_input(self, drop_id)

    @property
    def features(self) -> list:
        """The feature column names, in order."""
        return [f.feature for f in self.lineage]

    def lineage_of(self, feature: str) -> FeatureLineage:
        """The lineage of one feature."""
        for f in self.lineage:
            if f.feature == feature:
                return f
        raise InputError(f"no generated feature is called {feature!r}")


@dataclass
class _Table:
    """A prepared table: internal column names, attribute kinds."""

    frame: object
    attrs: dict  # attribute -> (internal column, kind: numeric | nominal | date)
    fks: dict  # foreign-key column -> internal column


#: threads running the data checks and table profiles (small Spark jobs) side by side
SMALL_JOBS = 4


class _Context:
    def __init__(self, schema, prepared):
        self.schema = schema
        self.prepared = prepared
        self._profiles = {}
        self._n = 0
        self.kernels = True  # False: a table whose values are aggregated may hold NaN (partition_hop.applies)

    def set_profile(self, table: str, profile: Profile) -> None:
        self._profiles[table] = profile

    def profile_of(self, table: str) -> Profile:
        """The profile of a table whose attributes are aggregated (set before planning)."""
        return self._profiles[table]

    def new_col(self) -> str:
        self._n += 1
        return f"v{self._n}"

    def new_group(self):
        """An empty set of aggregates for one hop: computed by the local engine's kernels per partition
        (:mod:`spark_fr.relational.partition_hop`) unless a value may be NaN, then by Spark's own ``groupBy``."""
        return PartitionHop() if self.kernels else A.GroupAggregates()


def generate_features(spark, schema, tables: dict | None = None, *, base_dir: str | None = None,
                      check: bool = True, engine: str = "auto",
                      max_features: int | None = DEFAULT_MAX_FEATURES) -> GeneratedTable:
    """Generate relational features for the target table of ``schema``: the single entry point.

    Parameters
    ----------
    spark : SparkSession
    schema : str, dict or RelationalSchema
        A YAML schema file, the same as a dict, or a parsed schema (:func:`spark_fr.relational.schema.load_schema`).
    tables : dict, optional
        {table name: DataFrame} replacing the schema's sources (the Python API's form).
    base_dir : str, optional
        Where relative source paths resolve (see :mod:`spark_fr.relational.schema`).
    check : bool
        Check keys (unique, present) and measure dangling foreign keys (warnings) with Spark first.
    engine : {'auto', 'spark', 'local'}
        'local' generates in the driver with numpy (:mod:`spark_fr.relational.local`; ``spark`` is not
        touched unless DataFrames are given, the result is ``.pandas``); 'auto' picks it when every table is a
        DataFrame or a local CSV/TSV, Parquet or Delta source and together they fit the driver
        (:func:`spark_fr.relational.local_sources.choose_engine`), and falls back to Spark when the local
        engine cannot reproduce an input exactly; else Spark. ``engine_reason`` of the result says why.
    max_features : int or None
        Refuse, before any aggregate is computed, a schema that would generate more features than this
        (:func:`spark_fr.relational.width.check_width`; None: no limit).

    Returns
    -------
    GeneratedTable
        ``frame``: columns ``[target id, target column, *features]``, one row per target-table row (rows
        whose target is missing are kept: the ranking step decides); ``lineage``: a
        :class:`~spark_fr.relational.lineage.FeatureLineage` per feature, in column order. Feature names are
        unique (also without case), hold only ASCII letters, digits and ``_``, and never equal the id or
        target column. Numeric features are doubles (dates: days since 1970-01-01), nominal ones strings; a
        target column of kind nominal (declared, or a string column) is a string column (class labels).
        Count-like aggregates of empty groups are 0; other aggregates of empty groups are null.

    Raises
    ------
    InputError
        A bad schema, a missing table, column or source, a repeated or missing key (one line).
    """
    schema = load_schema(schema, base_dir=base_dir)
    if engine not in ("auto", "spark", "local"):
        raise InputError(f"engine must be auto, spark or local, not {engine!r}")
    reason = "engine='spark'"
    if engine != "spark":
        from .local import try_local

        done, reason = try_local(schema, tables, check, forced=engine == "local", max_features=max_features)
        if done is not None:
            pdf, lineage, paths = done
            return GeneratedTable(None, lineage, schema.target.id, schema.target.column, paths, pandas=pdf,
                                  engine="local", engine_reason=reason)
    frames = load_tables(spark, schema, tables)
    kinds = column_kinds(schema, frames)
    target = schema.target
    target_kind = kinds[target.table].get(target.column)
    kinds[target.table] = {c: k for c, k in kinds[target.table].items() if c != target.column}
    check_width(schema, kinds, max_features)
    plan = key_plan(schema, key_types(schema, frames))
    check_declared(schema, frames)
    prepared = {name: _prepare(schema.tables[name], frames[name], kinds[name], plan) for name in schema.tables}
    paths = enumerate_paths(schema)
    ctx = _Context(schema, prepared)
    # the small jobs before planning run side by side: each is mostly latency (scheduling, code generation)
    aggregated = sorted({p.table for p in paths if any(h.direction == MANY for h in p.hops)})
    plain = sorted(t for t in {p.table for p in paths} - set(aggregated)  # attributes as they are (to-one hops)
                   if any(kind != "nominal" for _, kind in prepared[t].attrs.values()))

    # one pass per table (checks and bounds together: a table is scanned once for both), and the nominal
    # values of the aggregated tables, side by side: small jobs, mostly latency (scheduling, code generation)
    measure = set(aggregated) | set(plain)
    names = [n for n, spec in schema.tables.items()
             if n in measure or (check and (key_checks(schema, n) or spec.foreign_keys))]

    def one_pass(t):
        values = [(a, _prepared_value(frames[t], a, kind)) for a, (_, kind) in prepared[t].attrs.items()
                  if kind != "nominal"] if t in measure else []
        return table_pass(schema, t, frames, plan, key_checks(schema, t) if check else (),
                          schema.tables[t].foreign_keys if check else (), values)

    with ThreadPoolExecutor(max_workers=SMALL_JOBS) as pool:
        passes = {t: pool.submit(one_pass, t) for t in names}
        nominal = {t: pool.submit(_nominal_values, prepared[t], schema.frequent_values) for t in aggregated}
        done = {t: job.result() for t, job in passes.items()}
        if check:
            report_passes(schema, done, plan)  # a data error first
        for t in sorted(measure):
            _check_finite(schema, t, done[t].largest)
        for t in aggregated:
            ctx.set_profile(t, _profile(done[t].rows, done[t].largest, *nominal[t].result()))
        ctx.kernels = all(applies(done[t].largest) for t in aggregated)
    tspec = schema.tables[target.table]
    base = frames[target.table]
    names = Names([target.id, target.column])
    y = qcol(target.column).cast("string") if target_kind == "nominal" else qcol(target.column)
    cols = [key_value(base, tspec.key, plan.get((target.table, tspec.key))).alias("__t"),
            qcol(target.id).alias("__id"), y.alias("__y")]
    lineage, out_cols = [], []
    for attr, (col, kind) in prepared[target.table].attrs.items():
        cols.append(_prepared_value(base, attr, kind).alias(f"t_{col}"))
        name = names.unique(feature_name([], attr, []))
        out_cols.append(F.col(f"t_{col}").alias(name))
        lineage.append(FeatureLineage(name, (), target.table, attr, (), None,
                                      relations_of((), target.table, attr, None), out_kind(kind)))
    frame = base.select(*cols)
    for n, path in enumerate(p for p in paths if p.hops):
        pf, values = _path_frame(path, ctx)
        if not values:
            continue
        frame = frame.join(pf.withColumnRenamed("__l", f"__p{n}"), F.col("__t") == F.col(f"__p{n}"), "left")
        frame = frame.drop(f"__p{n}")
        labels = [h.label for h in path.hops]
        for v in values:
            suffix = None
            if v.condition is not None:
                suffix = f"{v.condition[0]}_{v.condition[1]}"
            aggs = list(v.aggregates)
            if v.level is not None:
                aggs[0] = f"share_{v.level}"
            name = names.unique(feature_name(labels, v.attribute, aggs, suffix))
            expr = F.coalesce(F.col(v.col), F.lit(0)) if v.count_like else F.col(v.col)
            if v.kind == "numeric":
                expr = expr.cast("double")
            out_cols.append(expr.alias(name))
            lineage.append(FeatureLineage(name, path.hops, path.table, v.attribute, tuple(reversed(v.aggregates)),
                                          v.condition, relations_of(path.hops, path.table, v.attribute, v.condition),
                                          v.kind, v.level))
    result = frame.select(F.col("__id").alias(target.id), F.col("__y").alias(target.column), *out_cols)
    log.info("relational features: %d from %d paths (max depth %d)", len(lineage), len(paths), schema.max_depth)
    return GeneratedTable(result, lineage, target.id, target.column, paths, engine_reason=reason)


# --- preparing tables -------------------------------------------------------------------------------------


def _prepared_value(df, column: str, kind: str):
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


def _prepare(spec, df, kinds: dict, plan: dict) -> _Table:
    cols = [key_value(df, spec.key, plan.get((spec.name, spec.key))).alias("__k")]
    fks = {}
    for i, fk in enumerate(spec.foreign_keys):
        fks[fk.column] = f"__f{i}"
        cols.append(key_value(df, fk.column, plan.get((spec.name, fk.column))).alias(f"__f{i}"))
    attrs = {}
    for j, (attr, kind) in enumerate(kinds.items()):
        attrs[attr] = (f"a{j}", kind)
        cols.append(_prepared_value(df, attr, kind).alias(f"a{j}"))
    return _Table(df.select(*cols), attrs, fks)


def _profile(rows: int, largest: dict, frequent: dict, domains: dict) -> Profile:
    """The profile of a table from its pass (rows, the largest ``|x|`` of its numeric attributes, None without
    values) and its nominal values (:func:`_nominal_values`); a bound is None when it is not finite (then the
    sorted path of ``aggregates.py``)."""
    bounds = {a: b if b is not None and X.grid_exponent(b) is not None else None for a, b in largest.items()}
    return Profile(rows, bounds, frequent, domains)


def _check_finite(schema, table: str, largest: dict) -> None:
    """Refuse an infinite value in a table's numeric attribute (``largest``: its pass's measures), naming
    the table, its source and the column: a generated feature's name would point at what the user cannot fix."""
    for attr, b in largest.items():
        if b is not None and math.isinf(b):
            raise InputError(f"{schema.origin}: table '{table}' ({source_of(schema.tables[table])}): column "
                             f"'{attr}' holds an infinite value; write it as a missing value or drop the row")


def _nominal_values(table: _Table, k: int) -> tuple:
    """({nominal attribute: its k most frequent non-missing values}, {nominal attribute: its sorted distinct
    non-missing values, or None when there are more than DOMAIN_LIMIT}) in one small Spark job (none without
    nominal attributes)."""
    nominal = [(a, c) for a, (c, kind) in table.attrs.items() if kind == "nominal"]
    if not nominal:
        return {}, {}
    pairs = F.explode(F.array(*[F.struct(F.lit(i).alias("a"), F.col(c).alias("v")) for i, (_, c) in
                                enumerate(nominal)])).alias("s")
    counts = (table.frame.select(pairs).select("s.a", "s.v").where(F.col("v").isNotNull())
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


# --- one path ---------------------------------------------------------------------------------------------


def _link_col(table: _Table, hop) -> str:
    """The column of a table that a hop *into* it joins on (its foreign key, or its key)."""
    if hop is not None and hop.direction == MANY:
        return table.fks[hop.link.column]
    return "__k"


def _path_frame(path, ctx: _Context):
    """(DataFrame with ``__l`` = target key and one column per value, the values) of one path."""
    hops = path.hops
    s = len(hops)
    last = ctx.prepared[path.table]
    values = [Value(ctx.new_col(), out_kind(kind), attr) for attr, (_, kind) in last.attrs.items()]
    raw = {v.attribute: v for v in values}
    kinds = {attr: kind for attr, (_, kind) in last.attrs.items()}
    frame = last.frame.select(F.col(_link_col(last, hops[-1])).alias("__l"),
                              *[F.col(last.attrs[v.attribute][0]).alias(v.col) for v in values])
    aggregated = False
    for i in range(s, 0, -1):
        hop = hops[i - 1]
        into_parent = hops[i - 2] if i >= 2 else None
        parent = ctx.prepared[path.tables()[i - 1]]
        if hop.direction == MANY:
            if aggregated:
                group, values = outer(values, ctx)
            else:
                group, values = innermost(values, raw, kinds, path, i == s, ctx)
                aggregated = True
            if not values:
                return frame, []
            frame = group.apply(frame, F.col("__l").alias("__g"))
            if i >= 2 and into_parent.direction == MANY:
                p = parent.frame.select(F.col("__k").alias("__pk"), F.col(_link_col(parent, into_parent)).alias("__l"))
                frame = p.join(frame, F.col("__pk") == F.col("__g"), "left")
                frame = frame.select("__l", *_filled(values))
            else:
                frame = frame.withColumnRenamed("__g", "__l")
        else:
            p = parent.frame.select(F.col(_link_col(parent, into_parent)).alias("__l2"),
                                    F.col(parent.fks[hop.link.column]).alias("__j"))
            frame = p.join(frame, F.col("__j") == F.col("__l"), "left")
            frame = frame.select(F.col("__l2").alias("__l"), *_filled(values))
    return frame, values


def _filled(values):
    return [F.coalesce(F.col(v.col), F.lit(0)).alias(v.col) if v.count_like else F.col(v.col) for v in values]
