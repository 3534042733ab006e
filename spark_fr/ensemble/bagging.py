"""Which rows each tree uses: bootstrap counts and the out-of-bag sample, as functions of the row key only.

Sketch
------
For tree t of a run with seed s and a row with (distinct) key r:

    count_t(r)  = Poisson(rate) drawn from hash(derive_seed(s, t, BOOTSTRAP), r)      (1 without bootstrap)
    oob_t(r)    = count_t(r) == 0  and  hash(derive_seed(s, t, OOB_SAMPLE), r) < p   (the RF score's rows)

* ``rate`` is 1 (the classical bootstrap, in its Poisson form) or, with ``--max-samples m``, ``m / n``
  (subbagging: about m draws per tree, with replacement; the tree sees about ``n (1 - e^-rate)`` distinct
  rows, the rest is out of bag).
* ``p`` caps the rows the RF score of one tree evaluates at about ``--max-oob-rows`` (``p = 1``, every
  out-of-bag row, when the expected out-of-bag count ``n e^-rate`` is below the cap).

Both are functions of (seed, tree, row key) only, so broadcast mode (all rows on every task) and partitioned
mode (each tree group receives the rows its trees use, :func:`Bagging.used_by`) see the same rows, whatever
the partitioning.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..runtime.rng import Stream, derive_seed, hash_uniform, poisson_counts


@dataclass(frozen=True)
class Bagging:
    """The row sampling of an ensemble run (see the module sketch).

    Attributes
    ----------
    seed : int
    bootstrap : bool
    rate : float
        Poisson rate of the counts.
    oob_p : float
        Probability that an out-of-bag row is evaluated by the RF score.
    """

    seed: int
    bootstrap: bool
    rate: float = 1.0
    oob_p: float = 1.0

    @classmethod
    def of(cls, params, n_rows: int) -> "Bagging":
        """The sampling of ``params`` (an EnsembleParams) for ``n_rows`` training rows."""
        rate = 1.0
        if params.max_samples is not None:
            m = params.max_samples * n_rows if isinstance(params.max_samples, float) else params.max_samples
            rate = min(1.0, m / max(n_rows, 1))
        p = 1.0
        if params.bootstrap and params.max_oob_rows is not None:
            expected = n_rows * math.exp(-rate)
            p = min(1.0, params.max_oob_rows / expected) if expected > 0 else 1.0
        return cls(int(params.seed), bool(params.bootstrap), rate, p)

    def counts(self, tree: int, keys: np.ndarray) -> np.ndarray:
        """Bootstrap counts of tree ``tree`` for the rows ``keys`` (ones without bootstrapping)."""
        if not self.bootstrap:
            return np.ones(keys.shape[0])
        return poisson_counts(derive_seed(self.seed, tree, Stream.BOOTSTRAP), keys, self.rate)

    def evaluated(self, tree: int, keys: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Mask of the out-of-bag rows the RF score of tree ``tree`` evaluates."""
        oob = counts == 0
        if self.oob_p >= 1.0:
            return oob
        return oob & (hash_uniform(derive_seed(self.seed, tree, Stream.OOB_SAMPLE), keys) < self.oob_p)

    def used_by(self, trees, keys: np.ndarray, evaluate: bool) -> np.ndarray:
        """Mask of the rows that some tree of ``trees`` grows on or (with ``evaluate``) evaluates."""
        used = np.zeros(keys.shape[0], bool)
        for t in trees:
            c = self.counts(int(t), keys)
            used |= c > 0
            if evaluate:
                used |= self.evaluated(int(t), keys, c)
        return used
