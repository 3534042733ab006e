"""How many features a relational schema generates, counted before anything is generated.

Sketch
------
The foreign-key paths of a schema with cycles, or with several links per table, multiply with every hop:
their number grows exponentially with ``max_depth`` (a schema at depth 30 held more paths than memory), and
each to-many hop multiplies a path's features by the ``outer`` aggregates. So the paths are *counted*, never
listed, by dynamic programming over the states a path can end in:

* a path's features depend only on its last hop (the table it reaches, whether that hop is to-many) and on how
  many to-many hops it has (``m``); the next hop allowed depends only on the last one (never straight back over
  the link just walked, as in :func:`spark_fr.relational.paths.enumerate_paths`). So the number of paths per
  state ``(last hop, m)`` after ``d`` hops follows from the states after ``d - 1`` hops;
* a state's features come from the planning itself (:func:`spark_fr.relational.plan.innermost` and
  :func:`~spark_fr.relational.plan.outer`) run once on placeholders: ``m = 0`` gives one feature per attribute
  of the last table; otherwise ``innermost`` gives the numeric and nominal values of the last table's
  aggregates, and each of the ``m - 1`` outer hops maps those two counts through a 2 x 2 matrix (the outer
  aggregates of one numeric and of one nominal value).

Decision: frequent values are not known before the data is read, so every nominal attribute is assumed to
have ``frequent_values`` of them: the count is exact when it has at least that many distinct values, and an
upper bound otherwise (shares and conditional aggregates per frequent value). Counting costs
O(max_depth x hops x max_depth) integer operations, however many paths there are.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

from .. import options as O
from ..errors import InputError
from .paths import MANY, Walk
from .plan import Profile, Value, innermost, outer, out_kind

#: generated features above which generation is refused unless the limit is raised (``--max-features-generated``)
DEFAULT_MAX_FEATURES = O.option("max_features_generated").default


@dataclass(frozen=True)
class WidthEstimate:
    """The features and paths a schema generates (see the module's notes).

    Attributes
    ----------
    features : int
        Generated features (an upper bound when nominal attributes have fewer distinct values than
        ``frequent_values``).
    paths : int
        Foreign-key paths from the target table, the empty path (the target's own attributes) included.
    """

    features: int
    paths: int


class _Placeholders:
    """The planning's context (``schema``, ``profile_of``, ``new_col``, ``new_group``) without data: every
    nominal attribute has ``frequent_values`` frequent values, numbers a finite bound, the aggregates go nowhere."""

    def __init__(self, schema, kinds: dict):
        self.schema = schema
        self.kinds = kinds
        self._n = 0

    def profile_of(self, table: str) -> Profile:
        k = self.schema.frequent_values
        attrs = self.kinds[table]
        return Profile(1, {a: 1.0 for a, kind in attrs.items() if kind != "nominal"},
                       {a: [f"v{i}" for i in range(k)] for a, kind in attrs.items() if kind == "nominal"},
                       {a: None for a, kind in attrs.items() if kind == "nominal"})

    def new_col(self) -> str:
        self._n += 1
        return f"v{self._n}"

    def new_group(self):
        return SimpleNamespace(add=lambda *a, **k: None, add_share=lambda *a, **k: None)


def _kind_counts(values) -> tuple:
    numeric = sum(v.kind == "numeric" for v in values)
    return numeric, len(values) - numeric


def estimate_width(schema, kinds: dict) -> WidthEstimate:
    """Count the features and paths of ``schema`` without listing the paths (see the module's notes).

    Parameters
    ----------
    schema : RelationalSchema
    kinds : dict
        {table: {attribute: 'numeric' | 'nominal' | 'date'}}, the target column left out of the target table's
        (what generation aggregates).

    Returns
    -------
    WidthEstimate
    """
    ctx = _Placeholders(schema, kinds)
    innermost_counts = {}

    def features(table: str, m: int, last_many: bool) -> int:
        attrs = kinds[table]
        if m == 0:
            return len(attrs)
        key = (table, last_many)
        if key not in innermost_counts:
            values = [Value(ctx.new_col(), out_kind(kind), a) for a, kind in attrs.items()]
            _, out = innermost(values, {v.attribute: v for v in values}, attrs, SimpleNamespace(table=table),
                               last_many, ctx)
            innermost_counts[key] = _kind_counts(out)
        numeric, nominal = innermost_counts[key]
        for _ in range(m - 1):
            numeric, nominal = (numeric * outer_numeric[0] + nominal * outer_nominal[0],
                                numeric * outer_numeric[1] + nominal * outer_nominal[1])
        return numeric + nominal

    outer_numeric = _kind_counts(outer([Value("n", "numeric", "a")], ctx)[1])
    outer_nominal = _kind_counts(outer([Value("c", "nominal", "a")], ctx)[1])
    walk = Walk(schema)
    total, paths = len(kinds[walk.start]), 1
    level = {(None, 0): 1}  # (last hop, to-many hops) -> number of paths ending so
    for _ in range(schema.max_depth):
        nxt: dict = {}
        for (last, m), count in level.items():
            for hop in walk.next_hops(last):
                state = (hop, m + (hop.direction == MANY))
                nxt[state] = nxt.get(state, 0) + count
        for (hop, m), count in nxt.items():
            total += count * features(hop.table, m, hop.direction == MANY)
            paths += count
        level = nxt
        if not level:
            break
    return WidthEstimate(total, paths)


def check_width(schema, kinds: dict, limit: int | None) -> WidthEstimate:
    """:func:`estimate_width`, refused with one line above ``limit`` (None: no limit).

    Raises
    ------
    InputError
        The estimate exceeds ``limit``; the message gives it and what to change.
    """
    est = estimate_width(schema, kinds)
    if limit is not None and est.features > limit:
        raise InputError(f"{schema.origin}: max_depth {schema.max_depth} would generate about {_shown(est.features)} "
                         f"features along {_shown(est.paths)} foreign-key paths, above the limit of {limit:,} "
                         f"(--max-features-generated); lower max_depth, list fewer aggregates, or raise the limit")
    return est


def _shown(n: int) -> str:
    return f"{n:,}" if n < 10 ** 15 else f"{float(n):.2e}"
