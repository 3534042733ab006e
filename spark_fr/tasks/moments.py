"""Moments of target columns, exact and the same for any partitioning of the rows (no Spark).

Sketch
------
A target type fits its clustering columns from their moments (:class:`ColumnMoments`): the rows are summed in two
passes of exact (double-double) sums, :func:`partial_sums` per block of rows, merged in any order: the mean of each
column, then the sum of squared deviations from it. The ensemble's partitioned mode sums the blocks on Spark's
executors; :func:`column_moments` is the same in this process. :func:`value_ranges` gives the range of each column.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..runtime.exact import ExactSum, column_sums, exact_sum


@dataclass
class PartialSums:
    """Exact sums and counts of known values per column, for some rows (merges in any order)."""

    sums: ExactSum
    counts: np.ndarray

    def merge(self, other: "PartialSums") -> "PartialSums":
        self.sums.merge(other.sums)
        self.counts = self.counts + other.counts
        return self


def partial_sums(C: np.ndarray, scale: np.ndarray, center: np.ndarray | None = None) -> PartialSums:
    """Sums of ``C * scale`` (first pass) or of ``(C * scale - center)^2`` (second pass) per column."""
    C = np.ascontiguousarray(C, dtype=np.float64)
    K = C.shape[1]
    hi, lo, counts = column_sums(C, np.zeros(K) if center is None else np.asarray(center, np.float64),
                                 np.asarray(scale, np.float64), center is not None)
    return PartialSums(exact_sum(hi, lo), counts)


@dataclass
class ColumnMoments:
    """Moments of the clustering columns over the training rows, the same for any partitioning.

    Computed in two passes of exact (double-double) sums: the mean of each column, then the sum of squared
    deviations from it (``m2``); both are correctly rounded whatever the order of the rows.

    Attributes
    ----------
    count, mean, m2 : ndarray (K,)
    scale : ndarray (K,)
        Powers of two the columns were multiplied by first (see :meth:`TargetType.column_scale`).
    """

    count: np.ndarray
    mean: np.ndarray
    m2: np.ndarray
    scale: np.ndarray

    @property
    def var(self) -> np.ndarray:
        """Biased variance per column (0 for a column without known values)."""
        return np.where(self.count > 0, self.m2 / np.where(self.count > 0, self.count, 1.0), 0.0)

    @classmethod
    def from_passes(cls, first: PartialSums, second: PartialSums, scale: np.ndarray) -> "ColumnMoments":
        return cls(first.counts, first_mean(first), second.sums.value(), scale)

    def part(self, columns: slice) -> "ColumnMoments":
        """The moments of some of the columns."""
        return ColumnMoments(self.count[columns], self.mean[columns], self.m2[columns], self.scale[columns])


def first_mean(first: PartialSums) -> np.ndarray:
    c = first.counts
    return np.where(c > 0, first.sums.value() / np.where(c > 0, c, 1.0), np.nan)


def column_moments(C: np.ndarray, scale: np.ndarray) -> ColumnMoments:
    """The :class:`ColumnMoments` of ``C`` in this process (two passes over the rows)."""
    first = partial_sums(C, scale)
    return ColumnMoments.from_passes(first, partial_sums(C, scale, np.nan_to_num(first_mean(first))), scale)


def value_ranges(Y: np.ndarray) -> tuple:
    """(lo, hi) of the known values of each column (inf / -inf for a column without any)."""
    T = Y.shape[1]
    with np.errstate(all="ignore"):
        known = ~np.isnan(Y)
        lo = np.where(known.any(axis=0), np.nanmin(np.where(known, Y, np.inf), axis=0), np.inf) if Y.size else \
            np.full(T, np.inf)
        hi = np.where(known.any(axis=0), np.nanmax(np.where(known, Y, -np.inf), axis=0), -np.inf) if Y.size else \
            np.full(T, -np.inf)
    return lo, hi
