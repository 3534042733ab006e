"""Order-independent (exact) sums of float arrays, so any merge order gives the same bits (no Spark).

Sketch
------
Spark's ``treeAggregate`` merges partial results in an order that depends on the partitioning and on which
task finishes first. Plain floating-point sums would then differ in the last bits between ``local[1]`` and
``local[8]``, and exact ties in a ranking could flip. :class:`ExactSum` keeps a double-double sum per entry:
``hi`` holds the rounded sum and ``lo`` the rounding errors, collected with Knuth's error-free TwoSum. The
final value ``hi + lo`` is the correctly rounded exact sum unless the exact sum lies within about
``N^2 * 2^-106`` (relative) of a rounding midpoint, so in practice every merge order gives bit-identical
results.
"""
from __future__ import annotations

import numpy as np
from numba import njit


def _two_sum(a: np.ndarray, b: np.ndarray):
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    return s, err


class ExactSum:
    """A double-double accumulator for arrays of one shape.

    Parameters
    ----------
    shape : int or tuple of int
    """

    __slots__ = ("hi", "lo")

    def __init__(self, shape):
        self.hi = np.zeros(shape)
        self.lo = np.zeros(shape)

    def add(self, x: np.ndarray) -> None:
        """Add an array (in place)."""
        self.hi, err = _two_sum(self.hi, np.asarray(x, dtype=np.float64))
        self.lo += err

    def merge(self, other: "ExactSum") -> None:
        """Add another accumulator (in place)."""
        self.hi, err = _two_sum(self.hi, other.hi)
        self.lo += err + other.lo

    def value(self) -> np.ndarray:
        """The (correctly rounded) sum."""
        return self.hi + self.lo


def exact_sum(hi: np.ndarray, lo: np.ndarray) -> ExactSum:
    """An :class:`ExactSum` holding a double-double value (``hi``, ``lo``) computed elsewhere."""
    s = ExactSum(np.shape(hi))
    s.hi = np.array(hi, dtype=np.float64)
    s.lo = np.array(lo, dtype=np.float64)
    return s


@njit(cache=True, nogil=True)
def column_sums(C, center, scale, squares):
    """Double-double sums per column of ``(C * scale - center)`` (or of its squares), over known values.

    Parameters
    ----------
    C : float64[n, K]
        Values (NaN = missing).
    center : float64[K]
        Subtracted after scaling (zeros for plain sums).
    scale : float64[K]
        Multiplied first (powers of two: exact).
    squares : bool
        Sum the squares instead of the values.

    Returns
    -------
    (hi, lo, counts): float64[K] each; ``hi + lo`` is the sum, ``counts`` the known values.
    """
    n, K = C.shape
    hi = np.zeros(K)
    lo = np.zeros(K)
    counts = np.zeros(K)
    for i in range(n):
        for k in range(K):
            c = C[i, k]
            if c != c:
                continue
            v = c * scale[k] - center[k]
            if squares:
                v = v * v
            s = hi[k] + v
            bb = s - hi[k]
            lo[k] += (hi[k] - (s - bb)) + (v - bb)
            hi[k] = s
            counts[k] += 1.0
    return hi, lo, counts
