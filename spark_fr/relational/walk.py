"""The relational walk, written once: one row per target example, one column per (path, attribute, aggregates),
over an *executor* that holds the tables (numpy arrays in the driver, or Spark SQL on a cluster).

Algorithm sketch (thesis 7.1, "feature-value back-propagation")
-----------------------------------------------------------------
For every foreign-key path ``p = (T_0 = target, T_1, ..., T_s)`` up to ``max_depth`` hops
(:func:`spark_fr.relational.paths.enumerate_paths`) and every attribute ``X`` of ``T_s``::

    A(ro, p, [agg_1..agg_m], X) = agg_1 over T_i1 related to ro ( agg_2 ( ... agg_m(X) ... ))

with one aggregate per to-many hop (a to-one hop relates at most one row: the identity). The values are
computed innermost first, for all attributes of ``T_s`` at once:

1. **Prepare** every table once (:func:`prepare`): key and foreign keys under internal names (``__k``,
   ``__f0``, ...) compared as the key plan says (:mod:`spark_fr.relational.keys`), attributes under ``a0, a1,
   ...``: numbers as doubles, nominal values as strings, dates as days since 1970-01-01. The target column is
   never an attribute (aggregating other examples' classes leaks them).
2. **Profile** (:func:`profile_tables`): one pass per table that is aggregated, read as it is or checked (its
   rows; the largest ``|x|`` of its numeric and date values; with ``check`` its keys, present and unique, and its
   dangling foreign keys), and the frequent nominal values of every aggregated table; a bad key or an infinite
   value is a one-line error here. The bounds give the exact sums' grids (:mod:`spark_fr.relational.exact`).
3. **Start** each path from ``T_s``: the column that links it to ``T_{s-1}`` (its foreign key for a to-many
   hop, its key for a to-one hop) and its attributes.
4. **Walk the hops backwards** (:func:`path_frame`), ``i = s .. 1``:

   * *to-many* (``T_i`` holds a foreign key to ``T_{i-1}``): the aggregates are planned once
     (:func:`spark_fr.relational.plan.innermost` at the first such hop, :func:`~spark_fr.relational.plan.outer`
     after) and the rows **aggregated** by the link in one operation; then, when ``T_{i-1}`` is itself reached by
     a to-many hop, the rows of ``T_{i-1}`` are **joined** (left) by their key, so that its rows without
     children count as empty groups.
   * *to-one* (``T_{i-1}`` holds a foreign key to ``T_i``): ``T_{i-1}`` **joined** (left) onto the values by
     that key (a dangling key gives an empty group).

   After every join the count-like values of empty groups are **filled** with 0; other aggregates stay missing.
5. **Assemble** (:func:`assemble`): the target table (id, class, its own attributes as depth-0 features) with
   each path's values attached by the target key (count-like values of empty groups 0 again); names and lineage
   are made here, in path order.

Executors
---------
The walk decides everything above; an executor only runs it over its tables. Its operations (the same
semantics, bit for bit, in both: ``tests/relational/test_relational_executors.py`` runs each against the other):

``column_types()``, ``key_types()``, ``check_declared()``
    What :func:`~spark_fr.relational.checks.column_kinds` and the key plan read; refusing declared types a column
    does not hold.
``prepare(name, keys, values)``
    A table's frame under the internal names (step 1).
``table_pass(name, table, plan, keys, links, values)``, ``nominal_values(table, k)``
    The profile's measures (a :class:`~spark_fr.relational.checks.TablePass`; the frequent values and domains).
``groups(largest)``
    The factory of a hop's aggregates, given the measured largest values of the aggregated tables.
``start(table, link, columns)``, ``aggregate(frame, group)``, ``join(frame, parent, on, link)``, ``fill(frame, values)``
    A path's frame (a link column and value columns) and the steps of the walk.
``target(name, table, key, kind, columns)``, ``attach(result, frame, features)``, ``finish(result)``
    The result table.

``small_jobs`` says how many profile measures run side by side (Spark's small jobs are mostly latency).
"""
from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ..errors import InputError
from . import exact as X
from .checks import column_kinds, key_checks, report_passes, source_of
from .keys import key_plan
from .lineage import FeatureLineage, relations_of
from .naming import Names, feature_name
from .paths import MANY, enumerate_paths
from .plan import Profile, Value, innermost, out_kind, outer
from .width import check_width


@dataclass
class Prepared:
    """A prepared table: its executor's frame under the internal names, and where its columns went.

    Attributes
    ----------
    frame : object
        The executor's frame: ``__k`` (the key), ``__f0 ..`` (foreign keys), ``a0 ..`` (attribute values).
    attrs : dict
        {attribute: (internal column, kind: 'numeric' | 'nominal' | 'date')}, in column order.
    fks : dict
        {foreign-key column: internal column}.
    """

    frame: object
    attrs: dict
    fks: dict


class Context:
    """What the planning (:mod:`spark_fr.relational.plan`) reads while the paths are walked: the schema, the
    prepared tables, the profiles of the aggregated tables, fresh value names and new groups of aggregates."""

    def __init__(self, schema, prepared: dict):
        self.schema = schema
        self.prepared = prepared
        self.profiles = {}
        self.new_group = None  # set by profile_tables: the executor's factory
        self._n = 0

    def profile_of(self, table: str) -> Profile:
        """The profile of a table whose attributes are aggregated."""
        return self.profiles[table]

    def new_col(self) -> str:
        """A fresh value column name."""
        self._n += 1
        return f"v{self._n}"


def walk(ex, schema, check: bool = True, max_features: int | None = None) -> tuple:
    """Generate the features of ``schema`` over the executor ``ex`` (see the module's sketch).

    Parameters
    ----------
    ex : executor
        The tables and the operations (see the module's notes): :class:`spark_fr.relational.local.LocalExecutor`
        or :class:`spark_fr.relational.spark_executor.SparkExecutor`.
    schema : RelationalSchema
    check : bool
        Check keys (present, unique) and measure dangling foreign keys (warnings).
    max_features : int or None
        Refuse, before any aggregate is computed, a schema that would generate more features than this.

    Returns
    -------
    tuple
        (the executor's result table: id, target, features; the lineage, one per feature in column order; the
        paths).

    Raises
    ------
    InputError
        A missing column, a bad key, an infinite value, too many features (one line).
    """
    kinds = column_kinds(schema, ex.column_types())
    target = schema.target
    target_kind = kinds[target.table].get(target.column)
    kinds[target.table] = {c: k for c, k in kinds[target.table].items() if c != target.column}
    check_width(schema, kinds, max_features)
    plan = key_plan(schema, ex.key_types())
    ex.check_declared()
    prepared = {name: prepare(ex, schema.tables[name], kinds[name], plan) for name in schema.tables}
    paths = enumerate_paths(schema)
    ctx = Context(schema, prepared)
    profile_tables(ex, ctx, paths, plan, check)
    result, lineage = assemble(ex, ctx, paths, target_kind, plan)
    return result, lineage, paths


# --- preparing and profiling ------------------------------------------------------------------------------


def prepare(ex, spec, kinds: dict, plan: dict) -> Prepared:
    """Table ``spec`` prepared by ``ex``: its key as ``__k``, foreign key ``i`` as ``__f{i}`` (compared as
    ``plan`` says), attribute ``j`` of ``kinds`` as ``a{j}``."""
    keys = {"__k": (spec.key, plan.get((spec.name, spec.key)))}
    fks = {}
    for i, fk in enumerate(spec.foreign_keys):
        fks[fk.column] = f"__f{i}"
        keys[f"__f{i}"] = (fk.column, plan.get((spec.name, fk.column)))
    attrs = {attr: (f"a{j}", kind) for j, (attr, kind) in enumerate(kinds.items())}
    values = {col: (attr, kind) for attr, (col, kind) in attrs.items()}
    return Prepared(ex.prepare(spec.name, keys, values), attrs, fks)


def measured_tables(schema, prepared: dict, paths, check: bool) -> tuple:
    """(the tables whose attributes are aggregated, those measured (aggregated, or read as they are with a
    numeric or date attribute), the tables a pass reads: measured or, with ``check``, keys or links to check)."""
    aggregated = sorted({p.table for p in paths if any(h.direction == MANY for h in p.hops)})
    plain = sorted(t for t in {p.table for p in paths} - set(aggregated)  # attributes as they are (to-one hops)
                   if any(kind != "nominal" for _, kind in prepared[t].attrs.values()))
    measure = set(aggregated) | set(plain)
    passes = [n for n, spec in schema.tables.items()
              if n in measure or (check and (key_checks(schema, n) or spec.foreign_keys))]
    return aggregated, measure, passes


def profile_tables(ex, ctx: Context, paths, plan: dict, check: bool) -> None:
    """Measure the tables (one pass each, side by side, and the nominal values of the aggregated ones), report
    bad keys (with ``check``) and infinite values, and set the profiles and the group factory of ``ctx``."""
    schema, prepared = ctx.schema, ctx.prepared
    aggregated, measure, names = measured_tables(schema, prepared, paths, check)

    def one_pass(t):
        values = [(a, kind) for a, (_, kind) in prepared[t].attrs.items()
                  if kind != "nominal"] if t in measure else []
        return ex.table_pass(t, prepared[t], plan, key_checks(schema, t) if check else (),
                             schema.tables[t].foreign_keys if check else (), values)

    with ThreadPoolExecutor(max_workers=ex.small_jobs) as pool:
        passes = {t: pool.submit(one_pass, t) for t in names}
        nominal = {t: pool.submit(ex.nominal_values, prepared[t], schema.frequent_values) for t in aggregated}
        done = {t: job.result() for t, job in passes.items()}
        if check:
            report_passes(schema, done, plan)  # a data error first
        for t in sorted(measure):
            check_finite(schema, t, done[t].largest)
        for t in aggregated:
            ctx.profiles[t] = profile(done[t].rows, done[t].largest, *nominal[t].result())
    ctx.new_group = ex.groups({t: done[t].largest for t in aggregated})


def profile(rows: int, largest: dict, frequent: dict, domains: dict) -> Profile:
    """The profile of a table from its pass (rows, the largest ``|x|`` of its numeric attributes, None without
    values) and its nominal values; a bound is None when it is not finite (then the sorted path of
    ``aggregates.py``)."""
    bounds = {a: b if b is not None and X.grid_exponent(b) is not None else None for a, b in largest.items()}
    return Profile(rows, bounds, frequent, domains)


def check_finite(schema, table: str, largest: dict) -> None:
    """Refuse an infinite value in a table's numeric attribute (``largest``: its pass's measures), naming
    the table, its source and the column: a generated feature's name would point at what the user cannot fix."""
    for attr, b in largest.items():
        if b is not None and math.isinf(b):
            raise InputError(f"{schema.origin}: table '{table}' ({source_of(schema.tables[table])}): column "
                             f"'{attr}' holds an infinite value; write it as a missing value or drop the row")


# --- one path -----------------------------------------------------------------------------------------------


def link_col(table: Prepared, hop) -> str:
    """The column of a table that a hop *into* it joins on (its foreign key, or its key)."""
    if hop is not None and hop.direction == MANY:
        return table.fks[hop.link.column]
    return "__k"


def path_frame(ex, ctx: Context, path) -> tuple:
    """(the executor's frame: the target key as link and one column per value, the values) of one path; no
    values when an aggregation has none to give."""
    hops = path.hops
    last = ctx.prepared[path.table]
    values = [Value(ctx.new_col(), out_kind(kind), attr) for attr, (_, kind) in last.attrs.items()]
    raw = {v.attribute: v for v in values}
    kinds = {attr: kind for attr, (_, kind) in last.attrs.items()}
    frame = ex.start(last, link_col(last, hops[-1]), {v.col: last.attrs[v.attribute][0] for v in values})
    aggregated = False
    for i in range(len(hops), 0, -1):
        hop, into_parent = hops[i - 1], hops[i - 2] if i >= 2 else None
        parent = ctx.prepared[path.tables()[i - 1]]
        if hop.direction == MANY:
            if aggregated:
                group, values = outer(values, ctx)
            else:
                group, values = innermost(values, raw, kinds, path, i == len(hops), ctx)
                aggregated = True
            if not values:
                return frame, []
            frame = ex.aggregate(frame, group)  # keyed by T_{i-1}'s key
            if into_parent is None or into_parent.direction != MANY:
                continue  # what the next hop (to-one) or the target joins on
            on = "__k"
        else:
            on = parent.fks[hop.link.column]
        frame = ex.fill(ex.join(frame, parent, on, link_col(parent, into_parent)), values)
    return frame, values


# --- the result -----------------------------------------------------------------------------------------------


def assemble(ex, ctx: Context, paths, target_kind, plan: dict) -> tuple:
    """(the executor's result table, the lineage): the target's id, class and own attributes, then every path's
    values, named in path order (unique, also without case)."""
    schema, target = ctx.schema, ctx.schema.target
    table = ctx.prepared[target.table]
    names = Names([target.id, target.column])
    lineage, own = [], []
    for attr, (col, kind) in table.attrs.items():
        name = names.unique(feature_name([], attr, []))
        own.append((name, col))
        lineage.append(FeatureLineage(name, (), target.table, attr, (), None,
                                      relations_of((), target.table, attr, None), out_kind(kind)))
    key = schema.tables[target.table].key
    result = ex.target(target.table, table, (key, plan.get((target.table, key))), target_kind, own)
    for path in (p for p in paths if p.hops):
        frame, values = path_frame(ex, ctx, path)
        if not values:
            continue
        labels = [h.label for h in path.hops]
        features = []
        for v in values:
            suffix = None if v.condition is None else f"{v.condition[0]}_{v.condition[1]}"
            aggs = list(v.aggregates)
            if v.level is not None:
                aggs[0] = f"share_{v.level}"
            name = names.unique(feature_name(labels, v.attribute, aggs, suffix))
            features.append((name, v))
            lineage.append(FeatureLineage(name, path.hops, path.table, v.attribute, tuple(reversed(v.aggregates)),
                                          v.condition, relations_of(path.hops, path.table, v.attribute, v.condition),
                                          v.kind, v.level))
        result = ex.attach(result, frame, features)
    return ex.finish(result), lineage
