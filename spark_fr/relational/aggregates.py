"""Aggregates as Spark column expressions, for one ``groupBy`` over a hop.

Semantics (thesis 7.1, with the decisions of spark_fr):

* ``count``: the number of related rows (the value is not read); ``count_distinct``: distinct non-missing
  values. Both are *count-like*: over an empty group they are 0.
* ``mean``, ``min``, ``max``, ``sum``, ``std`` (sample standard deviation, missing for one value): over the
  non-missing values; missing (null) over an empty group or when every value is missing.
* ``mode``: the most frequent non-missing value, the smallest one on ties (deterministic); nominal output.
* ``share`` of a value ``w``: the fraction of the non-missing values equal to ``w``; missing over an empty
  group.
* A condition ``(C, w)`` keeps the rows whose ``C`` equals ``w``: ``count`` counts them, the others
  aggregate the attribute over them (missing when there are none).

Determinism: Spark's ``sum``, ``avg`` and ``stddev`` add doubles in the order the rows arrive, which depends
on the partitioning, so their last bits (and then the row keys hashed from the values, the bins and every
tree) would change with it. ``sum``, ``mean`` and ``std`` therefore add a group's values in sorted order
(``array_sort(collect_list(x))`` folded with ``aggregate``; ``std`` in two passes over the sorted values,
around the mean): the same bits for any partitioning. Spark evaluates the one ``collect_list`` per value
column once for all three.
"""
from __future__ import annotations

from pyspark.sql import functions as F

COUNT_LIKE = ("count", "count_distinct")
NOMINAL_OUTPUT = ("mode",)


def output_kind(name: str) -> str:
    """'nominal' for a mode, else 'numeric' (what the next aggregate may take)."""
    return "nominal" if name in NOMINAL_OUTPUT else "numeric"


#: aggregates computed from a group's sorted values (see the module's notes on determinism)
FROM_SORTED = ("sum", "mean", "std")


def aggregate(name: str, value, condition=None, kind: str = "numeric"):
    """The Spark aggregate ``name`` of the column ``value``, over rows where ``condition`` holds (if given), for
    the aggregates that need no sorted values (count, min, max, mode, a nominal count_distinct).

    Parameters
    ----------
    name : str
        One of count, count_distinct (of a nominal value), min, max, mode.
    value : pyspark.sql.Column
    condition : pyspark.sql.Column, optional
        Boolean column; rows where it is not true are left out.
    kind : {'numeric', 'nominal'}
        The value's kind.
    """
    if name == "count":
        one = F.lit(1)
        return F.count(one if condition is None else F.when(condition, one))
    v = value if condition is None else F.when(condition, value)
    if name == "count_distinct" and kind == "nominal":  # no DISTINCT aggregate: Spark would expand every row
        return F.size(F.collect_set(v))
    if name == "min":
        return F.min(v)
    if name == "max":
        return F.max(v)
    if name == "mode":
        return F.mode(v, True)
    raise ValueError(f"aggregate {name!r} of a {kind} value is computed from sorted values (GroupAggregates)")


class GroupAggregates:
    """The aggregates of one ``groupBy``, in three steps, so that sorted-value statistics are computed once.

    1. ``agg``: the plain aggregates, and one ``array_sort(collect_list(x))`` per (value, condition) whose sum,
       mean, std or (numeric) count_distinct is asked for;
    2. a projection: sums, means, counts of distinct values from the sorted arrays, and each array's mean
       (hidden) where a std needs it;
    3. a projection: the std, around that mean column (a column inside the fold's lambda, not an expression:
       Spark would evaluate an expression there once per element).

    Use :meth:`add` for every output column, then :meth:`apply`.
    """

    def __init__(self):
        self._plain = []
        self._lists = {}
        self._first = []
        self._means = {}
        self._second = []
        self.names = []

    def _sorted(self, value: str, condition) -> str:
        key = (value, condition)
        if key not in self._lists:
            v = F.col(value) if condition is None else F.when(F.col(condition[0]) == F.lit(condition[1]), F.col(value))
            self._lists[key] = (f"__s{len(self._lists)}", F.array_sort(F.collect_list(v)))
        return self._lists[key][0]

    def add(self, name: str, value: str | None, alias: str, condition: tuple | None = None,
            kind: str = "numeric") -> None:
        """Add output column ``alias``: aggregate ``name`` of column ``value`` (None for a row count), over the
        rows whose column ``condition[0]`` equals ``condition[1]`` (if given)."""
        self.names.append(alias)
        if name in FROM_SORTED or (name == "count_distinct" and kind != "nominal"):
            arr = self._sorted(value, condition)
            values = F.col(arr)
            if name == "sum":
                self._first.append(_sorted_sum(values).alias(alias))
            elif name == "mean":
                self._first.append((_sorted_sum(values) / F.size(values)).alias(alias))
            elif name == "count_distinct":
                self._first.append(F.size(F.array_distinct(values)).alias(alias))
            else:
                if arr not in self._means:
                    self._means[arr] = f"{arr}_m"
                    self._first.append((_sorted_sum(values) / F.size(values)).alias(self._means[arr]))
                self._second.append(_std_around(values, F.col(self._means[arr])).alias(alias))
            return
        cond = None if condition is None else F.col(condition[0]) == F.lit(condition[1])
        self._plain.append(aggregate(name, None if value is None else F.col(value), cond, kind).alias(alias))

    def add_expression(self, expr, alias: str) -> None:
        """Add a ready aggregate expression (e.g. :func:`share`) as output column ``alias``."""
        self.names.append(alias)
        self._plain.append(expr.alias(alias))

    def apply(self, frame, key):
        """``frame`` grouped by the column ``key`` (a Column, aliased): the key and the added columns."""
        out = frame.groupBy(key).agg(*self._plain, *[e.alias(n) for n, e in self._lists.values()])
        if self._first:
            out = out.select("*", *self._first)
        if self._second:
            out = out.select("*", *self._second)
        return out.drop(*[n for n, _ in self._lists.values()], *self._means.values())

    def __bool__(self) -> bool:
        return bool(self.names)


def _sorted_sum(values):
    """The sum of an array of doubles, added in array order; null for an empty array."""
    total = F.aggregate(values, F.lit(0.0).cast("double"), lambda acc, x: acc + x)
    return F.when(F.size(values) > 0, total)


def _std_around(values, mean):
    """Sample standard deviation of a sorted array around its mean (a column): null below two values."""
    squares = F.aggregate(values, F.lit(0.0).cast("double"), lambda acc, x: acc + (x - mean) * (x - mean))
    return F.when(F.size(values) > 1, F.sqrt(squares / (F.size(values) - 1)))


def share(value, level: str):
    """Share of ``level`` among the non-missing values of ``value`` (null when there are none)."""
    return F.avg(F.when(value.isNotNull(), (value == F.lit(level)).cast("double")))
