"""What Relief works on, and the pieces shared by every execution mode (no Spark).

Sketch
------
* :class:`ReliefData`: scaled features (n x D), content keys (ties between equally distant neighbours
  are broken by the key, which identical rows share, so the choice between them never matters), the
  task's :class:`spark_fr.tasks.ReliefTarget`, and, for semi-supervised runs, which rows are labelled
  and each row's influence.
* Sampling: the m instances with the smallest ``hash_uniform(seed, content key)``, in that order, cut into
  ``shards`` contiguous shards. Identical rows get identical hashes, so the sample's content does not
  depend on the order or partitioning of the rows.
* Influence (semi-supervised Relief, thesis Alg. 3.2): 1 for labelled rows; for an unlabelled row at
  d_X-distance d from its nearest labelled row, the line through (max d, w0) and (min d, w1).
* Weights from the summed accumulators, per shard (for ``importance_std``) and overall.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..ensemble.aggregate import ExactSum
from ..pct.rng import hash_uniform, tree_seed
from . import kernels as K


@dataclass
class ReliefData:
    """Arrays for the Relief kernels.

    Attributes
    ----------
    X : float64 (n, D)
    keys : uint64 (n,)
    target : ReliefTarget
    nominal : bool (D,)
    n_values : float64 (D,)
    labelled : bool (n,)
    influence : float64 (n,)
    """

    X: np.ndarray
    keys: np.ndarray
    target: object
    nominal: np.ndarray
    n_values: np.ndarray
    labelled: np.ndarray
    influence: np.ndarray

    @property
    def n_rows(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]


def sample_order(keys: np.ndarray, seed: int) -> np.ndarray:
    """Row positions sorted by (hash_uniform(seed, key), key): the sampling order of Relief."""
    u = hash_uniform(tree_seed(seed, 0, stream=7), keys)
    return np.lexsort((keys, u))


def shard_bounds(m: int, shards: int) -> list:
    """(start, end) of each shard of m instances (contiguous, as equal as possible)."""
    s = max(1, min(shards, m))
    b = np.linspace(0, m, s + 1).round().astype(int)
    return [(int(b[i]), int(b[i + 1])) for i in range(s)]


@njit(cache=True)
def nearest_labelled_distance(X, rows, labelled_rows, nominal, n_values):
    """d_X from each row of ``rows`` to its nearest row in ``labelled_rows``."""
    out = np.empty(rows.shape[0])
    D = X.shape[1]
    for q in range(rows.shape[0]):
        r = rows[q]
        best = np.inf
        for p in range(labelled_rows.shape[0]):
            j = labelled_rows[p]
            s = 0.0
            for i in range(D):
                s += K.feature_distance(X[r, i], X[j, i], nominal[i], n_values[i])
                if s >= best * D:
                    break
            d = s / D
            if d < best:
                best = d
        out[q] = best
    return out


def influence_from_distances(d: np.ndarray, w0: float, w1: float, lo: float | None = None,
                             hi: float | None = None) -> np.ndarray:
    """Influence of unlabelled rows from their distance to the labelled data (farthest w0, closest w1).

    ``lo`` and ``hi`` are the smallest and largest such distance over all unlabelled rows (default: over
    ``d``; given when ``d`` holds one block of them).
    """
    if d.size == 0:
        return d
    lo = float(d.min()) if lo is None else float(lo)
    hi = float(d.max()) if hi is None else float(hi)
    if hi - lo <= 0:
        return np.full(d.size, w1)
    return w1 + (d - lo) * (w0 - w1) / (hi - lo)


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
        W, S, PdC, PdA, PdAdC, PdC_t, PdAdC_t, iters = out
        r = cls.zeros(W.shape[0], PdC_t.shape[0])
        for acc, val in zip((r.W, r.S, r.PdC, r.PdA, r.PdAdC, r.PdC_t, r.PdAdC_t, r.iterations),
                            (W, [S], [PdC], PdA, PdAdC, PdC_t, PdAdC_t, [iters])):
            acc.add(np.asarray(val, dtype=np.float64))
        return r

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


# Instances are accumulated by plain floating-point sums within micro-blocks of this many consecutive
# instances of a shard, and micro-blocks are combined exactly: every execution mode cuts the same
# micro-blocks, so every mode gets bit-identical sums.
INSTANCE_BLOCK = 64


def micro_blocks(n: int):
    """(start, end) of the micro-blocks of a shard of n instances."""
    return [(a, min(n, a + INSTANCE_BLOCK)) for a in range(0, n, INSTANCE_BLOCK)]


def run_shard(data: ReliefData, instances: np.ndarray, k: int, sigma: float, per_target: bool) -> ReliefSums:
    """Broadcast-mode work of one shard: neighbours and accumulators of its instances."""
    t = data.target
    classes = np.asarray(t.classes if t.classes is not None else np.zeros(data.n_rows), np.float64)
    pt = t.per_target_kinds if per_target else np.zeros(0, np.int64)
    instances = np.asarray(instances, np.int64)
    total = ReliefSums.zeros(data.n_features, pt.shape[0])
    for a, b in micro_blocks(instances.size):
        out = K.relief_shard(data.X, data.keys, t.values, t.kind, t.weights, t.norm, data.nominal, data.n_values,
                             instances[a:b], int(k), float(sigma), classes, int(t.n_classes),
                             np.asarray(t.priors, np.float64), data.labelled, data.influence, pt)
        total.merge(ReliefSums.from_kernel(out))
    return total
