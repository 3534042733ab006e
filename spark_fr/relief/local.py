"""Relief in this process: one shard's accumulators, a block's candidates, and a whole run without Spark.

Broadcast mode runs :func:`run_shard` inside its tasks; tall mode runs :func:`candidates_for_block` in its
tasks and :func:`shard_sums` on the merged candidates: the same shard kernel
(:func:`spark_fr.relief.shard.relief_shard`) over two backends, so :func:`relief_local` gives exactly their
results.
"""
from __future__ import annotations

import numpy as np

from .accumulators import ReliefSums, combine_shards
from .candidates import Candidates, CandidateSpace, DenseSearch, block_candidates
from .dense import DenseSpace, features_of, rows_of, target_spec
from .sampling import micro_blocks, sampled_shards
from .setup import ReliefData
from .shard import relief_shard
from .update import DenseRule


def dense_rule(target, sigma: float) -> DenseRule:
    """The dense update rule of a run (sigma, and the class priors of ReliefF)."""
    return DenseRule(float(sigma), np.asarray(target.priors, np.float64))


def run_shard(data: ReliefData, instances: np.ndarray, k: int, sigma: float, per_target: bool) -> ReliefSums:
    """The accumulators of one shard of instances (micro-block by micro-block, merged exactly)."""
    t = data.target
    rows = rows_of(data.block())
    features, spec = features_of(data.nominal, data.n_values), target_spec(t, per_target)
    rule = dense_rule(t, sigma)
    instances = np.asarray(instances, np.int64)
    total = ReliefSums.zeros(data.n_features, spec.per_target_kinds.shape[0])
    for a, b in micro_blocks(instances.size):
        space = DenseSpace(rows, features, spec, instances[a:b], int(t.n_classes), int(k))
        total.merge(ReliefSums.from_accumulators(relief_shard(space, rule)))
    return total


def candidates_for_block(block: dict, inst: dict, k: int, target, nominal, n_values, per_target: bool) -> Candidates:
    """The k + 1 best candidates of each instance (``inst``: a block of the sampled rows) among a block's rows."""
    search = DenseSearch(int(k) + 1, int(target.n_classes), features_of(nominal, n_values),
                         target_spec(target, per_target))
    return block_candidates(rows_of(block), rows_of(inst), search)


def shard_sums(inst: dict, cands: Candidates, k: int, sigma: float, target) -> ReliefSums:
    """Accumulators of the instances of ``inst`` from their merged candidates, by the shard kernel.

    ``inst`` must start at a micro-block boundary of its shard (see :data:`spark_fr.relief.sampling.INSTANCE_BLOCK`).
    """
    total = ReliefSums.zeros(cands.dmat.shape[3], cands.pt.shape[3])
    rule = dense_rule(target, sigma)
    for a, b in micro_blocks(inst["keys"].size):
        space = CandidateSpace(Candidates(*(f[a:b] for f in cands)), inst["keys"][a:b], inst["influence"][a:b],
                               inst["classes"][a:b], int(target.n_classes), int(k))
        total.merge(ReliefSums.from_accumulators(relief_shard(space, rule)))
    return total


def relief_local(data: ReliefData, params) -> list:
    """Relief computed in this process (tests, small data); the same results as the Spark modes."""
    sums = [run_shard(data, shard, params.neighbours, params.sigma, params.per_target)
            for shard in sampled_shards(data.keys, params)]
    return combine_shards(sums, data.target.n_classes > 0)
