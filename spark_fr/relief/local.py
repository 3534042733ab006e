"""Relief in this process: one shard's accumulators, and a whole run without Spark (tests, small data).

Both Spark modes run :func:`run_shard` (broadcast mode inside its tasks; tall mode's merged candidates go
through the same update), so :func:`relief_local` gives exactly their results.
"""
from __future__ import annotations

import numpy as np

from .accumulators import ReliefSums, combine_shards
from .broadcast_kernel import relief_shard
from .sampling import micro_blocks, sampled_shards
from .setup import ReliefData


def run_shard(data: ReliefData, instances: np.ndarray, k: int, sigma: float, per_target: bool) -> ReliefSums:
    """The accumulators of one shard of instances (micro-block by micro-block, merged exactly)."""
    t = data.target
    classes = np.asarray(t.classes if t.classes is not None else np.zeros(data.n_rows), np.float64)
    pt = t.per_target_kinds if per_target else np.zeros(0, np.int64)
    instances = np.asarray(instances, np.int64)
    total = ReliefSums.zeros(data.n_features, pt.shape[0])
    for a, b in micro_blocks(instances.size):
        out = relief_shard(data.X, data.keys, t.values, t.kind, t.weights, t.norm, data.nominal, data.n_values,
                           instances[a:b], int(k), float(sigma), classes, int(t.n_classes),
                           np.asarray(t.priors, np.float64), data.labelled, data.influence, pt)
        total.merge(ReliefSums.from_kernel(out))
    return total


def relief_local(data: ReliefData, params) -> list:
    """Relief computed in this process (tests, small data); the same results as the Spark modes."""
    sums = [run_shard(data, shard, params.neighbours, params.sigma, params.per_target)
            for shard in sampled_shards(data.keys, params)]
    return combine_shards(sums, data.target.n_classes > 0)
