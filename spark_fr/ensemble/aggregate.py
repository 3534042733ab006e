"""Sums of per-tree score arrays over an ensemble, exact so that any merge order gives the same bits."""
from __future__ import annotations

import numpy as np

from ..runtime.exact import ExactSum
from ..results import ScoreResult


class ScoreAccumulator:
    """Sums and sums of squares of per-tree score arrays, keyed by :class:`spark_fr.results.ScoreKey`."""

    def __init__(self):
        self.sums: dict = {}
        self.squares: dict = {}
        self.n_trees = 0

    def add_tree(self, scores: dict) -> "ScoreAccumulator":
        """Add the score arrays ``{ScoreKey: array}`` of one tree."""
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
        """Merge another accumulator into this one (order-independent, see :mod:`spark_fr.runtime.exact`)."""
        for key in other.sums:
            if key not in self.sums:
                self.sums[key] = ExactSum(other.sums[key].hi.shape)
                self.squares[key] = ExactSum(other.sums[key].hi.shape)
            self.sums[key].merge(other.sums[key])
            self.squares[key].merge(other.squares[key])
        self.n_trees += other.n_trees
        return self

    def results(self) -> list:
        """One :class:`spark_fr.results.ScoreResult` per score: the mean over trees and the sample standard
        deviation (NaN for one tree)."""
        out = []
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
            out.append(ScoreResult(key, mean, std))
        return out
