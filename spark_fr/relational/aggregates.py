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


def aggregate(name: str, value, condition=None):
    """The Spark aggregate ``name`` of the column ``value``, over rows where ``condition`` holds (if given).

    Parameters
    ----------
    name : str
        One of count, count_distinct, mean, min, max, sum, std, mode.
    value : pyspark.sql.Column
    condition : pyspark.sql.Column, optional
        Boolean column; rows where it is not true are left out.
    """
    if name == "count":
        one = F.lit(1)
        return F.count(one if condition is None else F.when(condition, one))
    v = value if condition is None else F.when(condition, value)
    if name == "count_distinct":
        return F.count_distinct(v)
    if name == "mean":
        return _sorted_mean(v)
    if name == "min":
        return F.min(v)
    if name == "max":
        return F.max(v)
    if name == "sum":
        return _sorted_sum(F.array_sort(F.collect_list(v)))
    if name == "std":
        return _sorted_std(v)
    if name == "mode":
        return F.mode(v, True)
    raise ValueError(f"unknown aggregate {name!r}")


def _sorted_sum(values):
    """The sum of an array of doubles, added in array order; null for an empty array."""
    total = F.aggregate(values, F.lit(0.0).cast("double"), lambda acc, x: acc + x)
    return F.when(F.size(values) > 0, total)


def _sorted_mean(v):
    values = F.array_sort(F.collect_list(v))
    return _sorted_sum(values) / F.size(values)


def _sorted_std(v):
    """Sample standard deviation (null below two values), in two passes over the sorted values."""
    values = F.array_sort(F.collect_list(v))
    mean = _sorted_sum(values) / F.size(values)
    squares = F.aggregate(values, F.lit(0.0).cast("double"), lambda acc, x: acc + (x - mean) * (x - mean))
    return F.when(F.size(values) > 1, F.sqrt(squares / (F.size(values) - 1)))


def share(value, level: str):
    """Share of ``level`` among the non-missing values of ``value`` (null when there are none)."""
    return F.avg(F.when(value.isNotNull(), (value == F.lit(level)).cast("double")))
