"""Order-independent sums of per-tree importance vectors.

Sketch
------
Spark's ``treeAggregate`` merges partial results in an order that depends on the partitioning and on which
task finishes first. Plain floating-point sums would then differ in the last bits between ``local[1]`` and
``local[8]``, and exact ties in the ranking could flip. Each accumulator therefore keeps a double-double
sum per entry: ``hi`` holds the rounded sum and ``lo`` the rounding errors, collected with Knuth's
error-free TwoSum. The final value ``hi + lo`` is the correctly rounded exact sum unless the exact sum lies
within about ``N^2 * 2^-106`` (relative) of a rounding midpoint, so in practice every merge order gives
bit-identical results.
"""
from __future__ import annotations

import numpy as np


def _two_sum(a: np.ndarray, b: np.ndarray):
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    return s, err


class ExactSum:
    """A double-double accumulator for arrays of one shape."""

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


class ScoreAccumulator:
    """Sums and sums of squares of per-tree score arrays, keyed by score name.

    Parameters
    ----------
    None: arrays are registered on first use.
    """

    def __init__(self):
        self.sums: dict = {}
        self.squares: dict = {}
        self.n_trees = 0

    def add_tree(self, scores: dict) -> "ScoreAccumulator":
        """Add the score arrays of one tree."""
        for key, arr in scores.items():
            arr = np.asarray(arr, dtype=np.float64)
            if key not in self.sums:
                self.sums[key] = ExactSum(arr.shape)
                self.squares[key] = ExactSum(arr.shape)
            self.sums[key].add(arr)
            self.squares[key].add(arr * arr)
        self.n_trees += 1
        return self

    def merge(self, other: "ScoreAccumulator") -> "ScoreAccumulator":
        """Merge another accumulator into this one (commutative up to the last bit, see module doc)."""
        for key in other.sums:
            if key not in self.sums:
                self.sums[key] = ExactSum(other.sums[key].hi.shape)
                self.squares[key] = ExactSum(other.sums[key].hi.shape)
            self.sums[key].merge(other.sums[key])
            self.squares[key].merge(other.squares[key])
        self.n_trees += other.n_trees
        return self

    def mean_std(self) -> dict:
        """``{key: (mean, std)}`` over trees; std is the sample standard deviation (NaN for one tree)."""
        out = {}
        n = self.n_trees
        for key in self.sums:
            s = self.sums[key].value()
            q = self.squares[key].value()
            mean = s / n
            if n > 1:
                var = np.maximum(q - s * s / n, 0.0) / (n - 1)
                std = np.sqrt(var)
            else:
                std = np.full_like(mean, np.nan)
            out[key] = (mean, std)
        return out
