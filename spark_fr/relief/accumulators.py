"""Relief's accumulators, summed exactly, and the weights computed from them (no Spark).

Sketch
------
The shard kernel (:mod:`spark_fr.relief.shard`) adds into one :class:`Accumulators` (numba named tuple):
``W`` (ReliefF), ``P_dA`` (P_diffFeature), ``P_dAdC`` (P_diffFeature&Target), their per-target forms, and
``totals`` = (S, P_dC (P_diffTarget), iterations); :class:`ReliefSums` holds them as exact sums
(:mod:`spark_fr.runtime.exact`), so shards and micro-blocks can be merged in any order. :func:`combine_shards` sums the shards, computes the weights and their spread
over the shards (``importance_std``).
"""
from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..runtime.exact import ExactSum
from ..results import ScoreKey, ScoreResult


#: one kernel call's accumulators: W (D,) ReliefF's weights; P_dA (D,) P_diffFeature; P_dAdC (D,)
#: P_diffFeature&Target; P_dC_t (T,) and P_dAdC_t (T, D) per target; totals (3,) = S, P_dC (P_diffTarget),
#: iterations (positions S_TOTAL, P_DC, ITERATIONS); ks (m, C) the neighbours used per instance and class (-1: none)
Accumulators = namedtuple("Accumulators", "W P_dA P_dAdC P_dC_t P_dAdC_t totals ks")
S_TOTAL, P_DC, ITERATIONS = 0, 1, 2


@njit(cache=True, nogil=True)
def zero_accumulators(m, C, D, T):
    """Accumulators of m instances, C classes (or 1), D features and T per-target rankings, all zero."""
    return Accumulators(np.zeros(D), np.zeros(D), np.zeros(D), np.zeros(T), np.zeros((T, D)), np.zeros(3),
                        np.full((m, C), -1, np.int64))


@dataclass
class ReliefSums:
    """Summed accumulators (exact sums, so any merge order gives the same result)."""

    W: ExactSum
    S: ExactSum
    PdC: ExactSum
    PdA: ExactSum
    PdAdC: ExactSum
    PdC_t: ExactSum
    PdAdC_t: ExactSum
    iterations: ExactSum

    @classmethod
    def zeros(cls, D: int, T: int) -> "ReliefSums":
        return cls(ExactSum(D), ExactSum(1), ExactSum(1), ExactSum(D), ExactSum(D), ExactSum(T), ExactSum((T, D)),
                   ExactSum(1))

    @classmethod
    def from_kernel(cls, out) -> "ReliefSums":
        """From a kernel's tuple (W, S, P_dC, P_dA, P_dAdC, P_dC_t, P_dAdC_t, iterations)."""
        W, S, PdC, PdA, PdAdC, PdC_t, PdAdC_t, iters = out
        r = cls.zeros(W.shape[0], PdC_t.shape[0])
        for acc, val in zip(r._all(), (W, [S], [PdC], PdA, PdAdC, PdC_t, PdAdC_t, [iters])):
            acc.add(np.asarray(val, dtype=np.float64))
        return r

    @classmethod
    def from_accumulators(cls, acc: Accumulators) -> "ReliefSums":
        """From one kernel call's :data:`Accumulators`."""
        t = acc.totals
        return cls.from_kernel((acc.W, t[S_TOTAL], t[P_DC], acc.P_dA, acc.P_dAdC, acc.P_dC_t, acc.P_dAdC_t,
                                t[ITERATIONS]))

    def merge(self, other: "ReliefSums") -> "ReliefSums":
        for a, b in zip(self._all(), other._all()):
            a.merge(b)
        return self

    def _all(self):
        return (self.W, self.S, self.PdC, self.PdA, self.PdAdC, self.PdC_t, self.PdAdC_t, self.iterations)

    def weights(self, relieff: bool) -> tuple:
        """(joint weights (D,), per-target weights (T, D))."""
        return weights_from_sums(relieff, self.W.value(), float(self.S.value()[0]), float(self.PdC.value()[0]),
                                 self.PdA.value(), self.PdAdC.value(), self.PdC_t.value(), self.PdAdC_t.value(),
                                 float(self.iterations.value()[0]))


def _div(a, b):
    b = np.asarray(b, dtype=np.float64)
    return np.where(b != 0, np.asarray(a, dtype=np.float64) / np.where(b != 0, b, 1.0), 0.0)


def weights_from_sums(relieff, W, S, PdC, PdA, PdAdC, PdC_t, PdAdC_t, iterations):
    """Relief weights from accumulators.

    ReliefF: ``W / m``. RReliefF form: ``P_dAdC / P_dC - (P_dA - P_dAdC) / (S - P_dC)`` (a term whose
    denominator is 0 counts as 0: e.g. all neighbours share the target). Per target t the same with
    ``P_dC_t`` and ``P_dAdC_t`` (and the same S, P_dA).
    """
    if relieff:
        return _div(W, iterations), np.zeros((0, W.shape[0]))
    joint = _div(PdAdC, PdC) - _div(PdA - PdAdC, S - PdC)
    per = np.zeros((PdC_t.shape[0], PdA.shape[0]))
    for t in range(PdC_t.shape[0]):
        per[t] = _div(PdAdC_t[t], PdC_t[t]) - _div(PdA - PdAdC_t[t], S - PdC_t[t])
    return joint, per


def combine_shards(sums: list, relieff: bool) -> list:
    """Total weights and the spread of the per-shard weights.

    Returns
    -------
    list of ScoreResult
        The joint 'relief' score and, with per-target accumulators, the per-target one.
    """
    total = ReliefSums.zeros(sums[0].PdA.hi.shape[0], sums[0].PdC_t.hi.shape[0])
    for s in sums:
        total.merge(s)
    joint, per = total.weights(relieff)
    shard_w = [s.weights(relieff) for s in sums]
    if len(sums) > 1:
        std = np.std(np.stack([w[0] for w in shard_w]), axis=0, ddof=1)
        std_t = np.std(np.stack([w[1] for w in shard_w]), axis=0, ddof=1) if per.size else None
    else:
        std = np.full(joint.shape, np.nan)
        std_t = np.full(per.shape, np.nan) if per.size else None
    out = [ScoreResult(ScoreKey("relief"), joint, std)]
    if per.size:
        out.append(ScoreResult(ScoreKey("relief", per_target=True), per, std_t))
    return out
