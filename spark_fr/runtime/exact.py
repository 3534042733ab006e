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
