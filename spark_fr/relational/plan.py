"""The aggregates of one foreign-key path, planned once for both engines (Spark and local).

Sketch
------
A path's values are back-propagated from its last table to the target table (see :mod:`spark_fr.relational.walk`). At each
to-many hop this module decides *what* is aggregated, never *how*:

* :func:`innermost` (the first to-many hop from the end): the per-kind aggregates of every attribute, the row
  count, the shares of frequent nominal values and the conditional aggregates (numeric attributes within
  each frequent value of each nominal attribute of the same table);
* :func:`outer` (every later to-many hop): ``outer`` / ``outer_nominal`` of each value.

Each new :class:`Value` carries its lineage (attribute, aggregates innermost first, condition, share level),
whether it is count-like, and what the next aggregate needs to know: a bound on ``|value|`` (:func:`derived`;
its grid exponent picks the exact fixed-point sums of :mod:`exact`) or the nominal domain. The aggregates go
into ``ctx.new_group()``: the executor's group (:class:`~spark_fr.relational.hop_group.HopGroup`, its
partitioned form, or a Spark :class:`~spark_fr.relational.aggregates.GroupAggregates`). ``ctx`` also gives ``schema``, ``profile_of(table)`` (a :class:`Profile`) and
``new_col()``.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import aggregates as A
from . import exact as X


@dataclass
class Value:
    """One value column of a path's frame while it is being back-propagated."""

    col: str
    kind: str
    attribute: str | None
    aggregates: tuple = ()  # innermost first
    condition: tuple | None = None
    level: str | None = None  # the value of a share
    count_like: bool = False
    bound: float | None = None  # numeric: a bound on |value| (None: unknown or not finite)
    domain: tuple | None = None  # nominal: every value it can take, sorted (None: too many)

    @property
    def grid(self):
        return X.grid_exponent(self.bound) if self.kind == "numeric" else None


@dataclass
class Profile:
    """What the aggregates need to know of a table before they are planned (one or two small Spark jobs)."""

    rows: int
    bounds: dict  # numeric or date attribute -> max |value| (None: not finite, or no value)
    frequent: dict  # nominal attribute -> its most frequent values
    domains: dict  # nominal attribute -> its sorted distinct values (None: more than DOMAIN_LIMIT)


#: nominal attributes with at most this many distinct values get modes and distinct counts from one native
#: count per value (see ``aggregates.py``)
DOMAIN_LIMIT = 64


def out_kind(kind: str) -> str:
    """The kind of a feature made from an attribute of ``kind``: 'nominal' stays, numbers and dates are numeric."""
    return "nominal" if kind == "nominal" else "numeric"


def derived(name: str, source, rows: float) -> tuple:
    """(bound, domain) of aggregate ``name`` of value ``source`` over groups of at most ``rows`` rows."""
    if name in A.COUNT_LIKE:
        return float(rows), None
    if name == "share":
        return 1.0, None
    if name == "mode":
        return None, source.domain
    if source is None or source.bound is None:
        return None, None
    return {"mean": source.bound, "min": source.bound, "max": source.bound, "sum": source.bound * rows,
            "std": 2.0 * source.bound}[name], None


def sorted_anyway(names, kind: str) -> bool:
    """Whether a numeric value's group is sorted anyway (a count of distinct numbers): its sum, mean and std
    then come from that sorted list too (measured: limb sums beside a list cost more than the list's folds)."""
    return kind != "nominal" and "count_distinct" in names


def innermost(values, raw, kinds, path, last_hop: bool, ctx):
    """The aggregates and the new values at the innermost to-many hop of ``path``.

    Parameters
    ----------
    values : list of Value
        The raw attribute values of the path's last table (their bounds and domains are set here).
    raw : dict
        {attribute: its raw Value} (the columns conditions test).
    kinds : dict
        {attribute: 'numeric' | 'nominal' | 'date'}.
    path : Path
    last_hop : bool
        Whether this hop aggregates the path's last table itself (then its rows are counted).
    ctx
        ``schema``, ``profile_of(table)``, ``new_col()``, ``new_group()`` (see the module sketch).

    Returns
    -------
    tuple
        (the group of aggregates, filled by ``add`` / ``add_share``; the list of new Values, in column order).
    """
    aggs = ctx.schema.aggregates
    group, out = ctx.new_group(), []
    profile = ctx.profile_of(path.table)
    for v in values:
        v.bound, v.domain = profile.bounds.get(v.attribute), profile.domains.get(v.attribute)

    def add(name, source, value, condition=None, kind="numeric"):
        value.bound, value.domain = derived(name, source, profile.rows)
        from_list = (condition is None and source is not None
                     and sorted_anyway(aggs.for_kind(kinds[source.attribute]), kind))
        group.add(name, None if source is None else source.col, value.col, condition, kind,
                  grid=None if source is None or from_list else source.grid,
                  domain=None if source is None else source.domain)
        out.append(value)

    wants_count = any("count" in aggs.for_kind(k) for k in set(kinds.values())) or not kinds
    if last_hop and wants_count:
        add("count", None, Value(ctx.new_col(), "numeric", None, ("count",), count_like=True))
    need_frequent = (("share" in aggs.nominal and any(k == "nominal" for k in kinds.values()))
                     or (aggs.conditional and any(k == "nominal" for k in kinds.values())))
    frequent = profile.frequent if need_frequent else {}
    for v in values:
        kind = kinds[v.attribute]
        for name in aggs.for_kind(kind):
            if name == "count":
                continue
            if name == "share":
                for level in frequent.get(v.attribute, []):
                    nv = Value(ctx.new_col(), "numeric", v.attribute, ("share",), level=level, bound=1.0)
                    group.add_share(v.col, level, nv.col)
                    out.append(nv)
                continue
            add(name, v, Value(ctx.new_col(), A.output_kind(name), v.attribute, (name,),
                                count_like=name in A.COUNT_LIKE), kind="nominal" if kind == "nominal" else "numeric")
    for cattr, levels in frequent.items():
        for level in levels:
            cond = (raw[cattr].col, level)
            if "count" in aggs.conditional:
                add("count", None, Value(ctx.new_col(), "numeric", None, ("count",), (cattr, level), count_like=True),
                    cond)
            for v in values:
                if kinds[v.attribute] == "nominal":
                    continue
                for name in aggs.conditional:
                    if name == "count":
                        continue
                    add(name, v, Value(ctx.new_col(), "numeric", v.attribute, (name,), (cattr, level)), cond)
    return group, out


def outer(values, ctx):
    """The aggregates and the new values at an outer to-many hop (every value was aggregated before).

    Parameters
    ----------
    values : list of Value
    ctx
        As for :func:`innermost`.

    Returns
    -------
    tuple
        (the group of aggregates, the list of new Values: ``outer`` of each numeric value, ``outer_nominal``
        of each nominal one).
    """
    aggs = ctx.schema.aggregates
    group, out = ctx.new_group(), []
    for v in values:
        names = aggs.outer if v.kind == "numeric" else aggs.outer_nominal
        for name in names:
            nv = Value(ctx.new_col(), A.output_kind(name), v.attribute, v.aggregates + (name,), v.condition,
                        v.level, name in A.COUNT_LIKE)
            nv.bound, nv.domain = derived(name, v, X.MAX_GROUP_ROWS)
            group.add(name, v.col, nv.col, kind=v.kind, grid=None if sorted_anyway(names, v.kind) else v.grid,
                      domain=v.domain)
            out.append(nv)
    return group, out
