"""Relief on Spark, tall mode: the data stays in partitions, the sampled instances are broadcast.

Algorithm sketch
----------------
Both modes sample the same m instances, cut them into the same shards and run the same per-instance
update on the same neighbours, so their weights are identical (and identical for any partitioning); only
where the neighbours are searched differs::

    blocks  <- the encoding pass's blocks, rows selected (spark_fr.relief.setup), persisted
               (Parts of spark_fr.runtime.engine: RDDs in a classic session, DataFrames under Spark Connect)
    summary <- treeReduce of per-block summaries (rows, labelled rows, target ranges / classes / HMLC finals)
    blocks  <- each block's Relief target matrix, encoded against the summary
    [semi-supervised: labelled rows broadcast; each unlabelled row's distance to them; influence]
    sample  <- treeReduce of per-block bottom-m (hash, key) rows                 the same m instances
    for each chunk of instances (bounded memory):
        cands <- blocks.map(k+1 best candidates per instance).treeReduce(merge)   (spark_fr.relief.candidates)
        accumulators per shard from the merged candidates, on the driver         (spark_fr.relief.shard)
"""
from __future__ import annotations

import logging
import time

import numpy as np

from ..runtime.engine import engine_for
from ..runtime.progress import Progress
from . import setup as S
from .accumulators import combine_shards
from .candidates import merge
from .local import candidates_for_block, shard_sums
from .sampling import INSTANCE_BLOCK, bottom, sample_hashes, shard_bounds

log = logging.getLogger(__name__)

#: bound on the candidate arrays of one job (instances x classes x (k+1) x features)
CANDIDATE_VALUES = 2e7

_SAMPLE_FIELDS = ("X", "keys", "Yt", "labelled", "influence", "classes")


def merge_bottom(a: dict, b: dict, m: int) -> dict:
    """The m smallest (hash, key) rows of two :func:`block_bottom` results (every field kept)."""
    u = np.concatenate([a["u"], b["u"]])
    keys = np.concatenate([a["keys"], b["keys"]])
    pos = bottom(u, keys, m)
    return {name: np.concatenate([a[name], b[name]])[pos] for name in a}


def block_bottom(b: dict, seed: int, m: int, fields=_SAMPLE_FIELDS) -> dict:
    """A block's m smallest (sampling hash 'u', key) rows, with the given fields of the block (ReliefE's tall
    mode keeps the keys only)."""
    u = sample_hashes(b["keys"], seed)
    pos = bottom(u, b["keys"], m)
    return {"u": u[pos], **{name: b[name][pos] for name in fields}}


def _semi_supervised_influence(engine, rblocks, setup: S.ReliefSetup):
    """Blocks with the influence of their unlabelled rows (step 4 of :mod:`spark_fr.relief.setup`)."""
    lab_X = np.concatenate(rblocks.map(lambda b: b["X"][b["labelled"]]).collect())
    bl = engine.broadcast(lab_X)
    nominal, n_values = setup.nominal, setup.n_values
    with_d = rblocks.map(lambda b: (b, S.labelled_distances(b, bl.value, nominal, n_values))).persist()
    ranges = with_d.map(lambda bd: S.distance_range(bd[1])).collect()
    lo, hi = min(r[0] for r in ranges), max(r[1] for r in ranges)
    influence = setup.params.influence
    return with_d.map(lambda bd: S.with_influence(bd[0], bd[1], lo, hi, influence)), [with_d], bl


def instances_per_job(values_per_instance: float) -> int:
    """Instances per candidate job: a multiple of the micro-block size with at most about
    :data:`CANDIDATE_VALUES` candidate values (bounded memory)."""
    return max(1, int(CANDIDATE_VALUES // max(values_per_instance, 1)) // INSTANCE_BLOCK) * INSTANCE_BLOCK


def relief_tall(spark, blocks, setup: S.ReliefSetup) -> tuple:
    """Relief weights with the data left in partitions and the sampled instances broadcast.

    Parameters
    ----------
    spark : SparkSession
    blocks : Parts of dict
        Encoded blocks with 'scaled' features (rows x D), targets 'Y' and content 'keys'.
    setup : ReliefSetup

    Returns
    -------
    (list of ScoreResult, info dict)
    """
    from .warmup import warm_up_kernels

    engine = engine_for(spark)
    params = setup.params
    warm_up_kernels()
    t0 = time.perf_counter()
    base = blocks.map(setup.select).filter(lambda b: b["keys"].size > 0).persist()
    cached = [base]
    broadcasts = []
    try:
        summary = base.map(setup.summarize).reduce(lambda a, b: a.merge(b))
        S.check_rows(summary, setup)
        T = summary.targets.lo.shape[0] if summary.targets is not None else 0
        target0 = setup.target(np.zeros((0, T)), summary)
        rblocks = base.map(lambda b: S.encode_targets(b, setup.target(b["Y"], summary)))
        if setup.uses_influence(summary):
            rblocks, more, bl = _semi_supervised_influence(engine, rblocks, setup)
            cached += more
            broadcasts.append(bl)
        rblocks = rblocks.persist()
        cached.append(rblocks)

        # the sample: the m smallest (hash, key), as in broadcast mode
        m = params.n_iterations(summary.n_rows)
        seed = params.seed
        sample = rblocks.map(lambda b: block_bottom(b, seed, m)).reduce(lambda a, b: merge_bottom(a, b, m))
        shards = shard_bounds(m, params.shards)
        k = params.neighbours
        C = max(setup.n_classes if target0.n_classes > 0 else 1, 1)
        D = setup.nominal.size
        per_chunk = instances_per_job(C * (k + 1) * max(D, 1))
        sums = []
        log.info("Relief (tall mode): %d instances, k = %d, %d rows x %d features, %d shards", m, k,
                 summary.n_rows, D, len(shards))
        nominal, n_values, per_target = setup.nominal, setup.n_values, params.per_target
        with Progress(m, "Relief instances") as progress, \
                engine.describe(f"spark_fr: Relief, {m} instances (tall mode)"):
            for a, b in shards:
                acc = None
                for c0 in range(a, b, per_chunk):
                    c1 = min(b, c0 + per_chunk)
                    inst = {name: np.ascontiguousarray(sample[name][c0:c1]) for name in _SAMPLE_FIELDS}
                    bi = engine.broadcast(inst)
                    try:
                        with engine.tracked(progress, c1 - c0):
                            cands = rblocks.map(lambda blk: candidates_for_block(
                                blk, bi.value, k, target0, nominal, n_values, per_target)).reduce(merge)
                    finally:
                        bi.destroy()
                    part = shard_sums(inst, cands, k, params.sigma, target0)
                    acc = part if acc is None else acc.merge(part)
                sums.append(acc)
    finally:
        for parts in cached:
            parts.unpersist()
        for bc in broadcasts:
            bc.destroy()
    info = {"relief_mode": "tall", "relief_shards": len(shards), "relief_instances": m,
            "relief_s": time.perf_counter() - t0}
    return combine_shards(sums, target0.n_classes > 0), info
