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
        return F.avg(v)
    if name == "min":
        return F.min(v)
    if name == "max":
        return F.max(v)
    if name == "sum":
        return F.sum(v)
    if name == "std":
        return F.stddev_samp(v)
    if name == "mode":
        return F.mode(v, True)
    raise ValueError(f"unknown aggregate {name!r}")


def share(value, level: str):
    """Share of ``level`` among the non-missing values of ``value`` (null when there are none)."""
    return F.avg(F.when(value.isNotNull(), (value == F.lit(level)).cast("double")))
