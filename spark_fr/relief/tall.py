"""Tall mode of Relief and ReliefE: the rows stay in partitions, the sampled instances are broadcast.

Algorithm sketch
----------------
Both methods sample the same m instances as broadcast mode, cut them into the same shards and micro-blocks and
run the same shard kernel (:mod:`spark_fr.relief.shard`) on the same neighbours, so their weights are
identical to broadcast mode's (and identical for any partitioning); only where the neighbours are searched
differs. One loop (:func:`tall_updates`) serves both::

    blocks  <- the encoding pass's blocks, set up by the method, persisted      (Parts of spark_fr.runtime.engine:
               Relief: rows selected, targets encoded, influence (spark_fr.relief.setup);  RDDs in a classic
               ReliefE: CSR rows, the embedded spaces (spark_fr.relief.reliefe_blocks))    session, DataFrames
    sample  <- treeReduce of per-block bottom-m (hash, key) rows               under Spark Connect)
    for each job: consecutive micro-blocks of the shards, up to a bounded number of instances
        inst    <- the instances' rows (Relief: the sample's; ReliefE: gathered by key)   broadcast
        cands   <- blocks.map(k1 best (distance, key) candidates per instance and class)
                         .treeReduce(merge)                                   (spark_fr.relief.candidates)
        per micro-block, on the driver: the shard kernel's accumulators, merged exactly into its shard's sums
               Relief: over the merged candidates (their payload: d_i, d_C, influence)
               ReliefE: neighbours chosen from the candidates, their rows gathered by key, over known neighbours

k1 = k + 1 (Relief; ReliefE with a fixed k); ReliefE's adaptive k: k_max + 2 (``--reliefe-k-max``, the capped
search), or every row of the class when k_max = 0 (the paper's rule looks at every gap: exact, but the merged
candidates of a job then hold a distance per row and instance, so a job holds few instances; a warning says so
on large data).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import InputError
from ..results import ScoreKey, ScoreResult
from ..runtime import warmups
from ..runtime.engine import engine_for
from ..runtime.progress import Progress
from ..tasks.mlc import DISTANCES as LABEL_DISTANCES
from . import reliefe as R
from . import reliefe_blocks as RB
from . import setup as S
from .accumulators import ReliefSums, combine_shards
from .candidates import Candidates, chosen_neighbours, merge
from .local import candidates_for_block, shard_sums
from .reliefe_data import check_missing, sparse_block
from .sampling import INSTANCE_BLOCK, bottom, micro_blocks, sample_hashes, shard_bounds
from .sparse_update import T_COSINE

log = logging.getLogger(__name__)

#: bound on the candidate arrays of one job (instances x classes x (k+1) x features)
CANDIDATE_VALUES = 2e7

_SAMPLE_FIELDS = ("X", "keys", "Yt", "labelled", "influence", "classes")


# ----- the sample, the jobs ------------------------------------------------------------------------------
def merge_bottom(a: dict, b: dict, m: int) -> dict:
    """The m smallest (hash, key) rows of two :func:`block_bottom` results (every field kept)."""
    u = np.concatenate([a["u"], b["u"]])
    keys = np.concatenate([a["keys"], b["keys"]])
    pos = bottom(u, keys, m)
    return {name: np.concatenate([a[name], b[name]])[pos] for name in a}


def block_bottom(b: dict, seed: int, m: int, fields=_SAMPLE_FIELDS) -> dict:
    """A block's m smallest (sampling hash 'u', key) rows, with the given fields of the block (ReliefE keeps
    the keys only)."""
    u = sample_hashes(b["keys"], seed)
    pos = bottom(u, b["keys"], m)
    return {"u": u[pos], **{name: b[name][pos] for name in fields}}


def instances_per_job(values_per_instance: float) -> int:
    """Instances per candidate job: a multiple of the micro-block size with at most about
    :data:`CANDIDATE_VALUES` candidate values (bounded memory)."""
    return max(1, int(CANDIDATE_VALUES // max(values_per_instance, 1)) // INSTANCE_BLOCK) * INSTANCE_BLOCK


def job_chunks(shards: list, per_chunk: int) -> list:
    """The candidate jobs: consecutive micro-blocks (of every shard, in instance order) up to ``per_chunk``
    instances each; a list of lists of (shard, start, end)."""
    chunks, cur, size = [], [], 0
    for s_, (a, b) in enumerate(shards):
        for a0, b0 in micro_blocks(b - a):
            if cur and size + (b0 - a0) > per_chunk:
                chunks.append(cur)
                cur, size = [], 0
            cur.append((s_, a + a0, a + b0))
            size += b0 - a0
    return chunks + ([cur] if cur else [])


# ----- the one loop ------------------------------------------------------------------------------------------
@dataclass
class ChunkWork:
    """What a method does with one job of sampled instances (:func:`tall_updates`).

    Attributes
    ----------
    label : str
        'Relief' or 'ReliefE' (progress, job descriptions, logs).
    instances : callable (c0, c1) -> (payload, state)
        The instances c0 .. c1 - 1: what every block's task gets (broadcast), and what the updates need.
    search : callable (block, payload) -> Candidates
        A block's candidates, in the Spark tasks (it captures small settings only).
    updates : callable (state, cands, pieces) -> list of ReliefSums
        The accumulators of each piece (a micro-block: (start, end) relative to c0), on the driver.
    sums : tuple
        (D, T) of the accumulators.
    """

    label: str
    instances: Callable
    search: Callable
    updates: Callable
    sums: tuple


def tall_updates(engine, blocks, work: ChunkWork, shards: list, per_chunk: int) -> list:
    """The exact sums of every shard: the sampled instances job by job (the module sketch)."""
    m = shards[-1][1]
    chunks = job_chunks(shards, per_chunk)
    log.info("%s (tall mode): %d instances in %d jobs of at most %d, %d shards", work.label, m, len(chunks),
             per_chunk, len(shards))
    sums = [ReliefSums.zeros(*work.sums) for _ in shards]
    search = work.search
    with Progress(m, f"{work.label} instances") as progress, \
            engine.describe(f"spark_fr: {work.label}, {m} instances (tall mode)"):
        for chunk in chunks:
            c0, c1 = chunk[0][1], chunk[-1][2]
            payload, state = work.instances(c0, c1)
            bi = engine.broadcast(payload)
            try:
                with engine.tracked(progress, c1 - c0):
                    cands = blocks.map(lambda blk: search(blk, bi.value)).reduce(merge)
            finally:
                bi.destroy()
            parts = work.updates(state, cands, [(a - c0, b - c0) for _, a, b in chunk])
            for (s_, _, _), part in zip(chunk, parts):
                sums[s_].merge(part)
    return sums


def _rows(arrays, a: int, b: int):
    """Rows a .. b - 1 of a dict of arrays or of Candidates."""
    if isinstance(arrays, dict):
        return {name: v[a:b] for name, v in arrays.items()}
    return Candidates(*(v[a:b] for v in arrays))


# ----- Relief ----------------------------------------------------------------------------------------------
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


def _relief_work(sample: dict, setup: S.ReliefSetup, target0) -> ChunkWork:
    """Relief's jobs: the sample's rows broadcast, candidates with their payload, the kernel over them."""
    k, sigma, per_target = setup.params.neighbours, setup.params.sigma, setup.params.per_target
    nominal, n_values = setup.nominal, setup.n_values

    def instances(c0, c1):
        inst = {name: np.ascontiguousarray(sample[name][c0:c1]) for name in _SAMPLE_FIELDS}
        return inst, inst

    def search(block, inst):
        return candidates_for_block(block, inst, k, target0, nominal, n_values, per_target)

    def updates(inst, cands, pieces):
        return [shard_sums(_rows(inst, a, b), _rows(cands, a, b), k, sigma, target0) for a, b in pieces]

    T = target0.per_target_kinds.size if per_target else 0
    return ChunkWork("Relief", instances, search, updates, (nominal.size, T))


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
    engine = engine_for(spark)
    params = setup.params
    warmups.warm("relief")
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
        m, seed = params.n_iterations(summary.n_rows), params.seed
        sample = rblocks.map(lambda b: block_bottom(b, seed, m)).reduce(lambda a, b: merge_bottom(a, b, m))
        shards = shard_bounds(m, params.shards)
        k, D = params.neighbours, setup.nominal.size
        C = max(setup.n_classes if target0.n_classes > 0 else 1, 1)
        log.info("Relief (tall mode): %d instances, k = %d, %d rows x %d features", m, k, summary.n_rows, D)
        sums = tall_updates(engine, rblocks, _relief_work(sample, setup, target0), shards,
                            instances_per_job(C * (k + 1) * max(D, 1)))
    finally:
        for parts in cached:
            parts.unpersist()
        for bc in broadcasts:
            bc.destroy()
    info = {"relief_mode": "tall", "relief_shards": len(shards), "relief_instances": m,
            "relief_s": time.perf_counter() - t0}
    return combine_shards(sums, target0.n_classes > 0), info


# ----- ReliefE ---------------------------------------------------------------------------------------------
def _reliefe_work(engine, sblocks, ikeys_all, nominal, n_classes: int, rule, p: dict, k1: int, ks_all: list):
    """ReliefE's jobs: the instances' rows gathered by key and broadcast, candidates without payload, the
    neighbours chosen and their rows gathered, the kernel over known neighbours (``ks_all`` collects the
    neighbours used)."""
    def instances(c0, c1):
        ikeys = np.ascontiguousarray(ikeys_all[c0:c1])
        rows = RB.gather(engine, sblocks, np.unique(ikeys))
        return RB.kernel_rows(RB.take(rows, np.searchsorted(rows["keys"], ikeys)), nominal), (ikeys, rows)

    def search(block, inst):
        return RB.candidates_of_block(block, inst, n_classes, k1, nominal)

    def updates(state, cands, pieces):
        ikeys, rows = state
        nkeys, counts = chosen_neighbours(ikeys, cands, p["k"], p["adaptive"], p["k_max"])
        used = np.arange(nkeys.shape[2])[None, None, :] < counts[:, :, None]
        more = np.setdiff1d(np.unique(nkeys[used]), rows["keys"])
        if more.size:
            rows = RB.union_rows(rows, RB.gather(engine, sblocks, more))
        local = RB.kernel_rows(rows, nominal)
        return [RB.micro_block_updates(local, rule, n_classes, (ikeys[a:b], nkeys[a:b], counts[a:b]), ks_all)
                for a, b in pieces]

    return ChunkWork("ReliefE", instances, search, updates, (nominal.size, 0))


def reliefe_updates(engine, sblocks, ikeys_all, summary, params, nominal, n_classes, rule, d_embed, n) -> tuple:
    """(ReliefSums per shard, ks): the updates of ReliefE's sampled instances, job by job (module sketch)."""
    p = R.kernel_settings(params)
    C = max(n_classes, 1)
    k1 = RB.candidate_count(params, summary, n_classes, n)
    k_used = k1 - 1 if params.adaptive else p["k"]
    per_row = max(d_embed, summary["nnz"] / max(n, 1), 1.0)
    # bounded memory: the candidates of a job, and the rows gathered for its updates
    per_chunk = min(instances_per_job(C * k1), instances_per_job(C * (k_used + 1) * per_row))
    if params.adaptive and not params.k_max and k1 > 10_000:
        log.warning("adaptive k with --reliefe-k-max 0 (the paper's rule, every gap) keeps all %d rows of a class as "
                    "candidates of each sampled row in tall mode: %d sampled rows per job; --reliefe-k-max 100 "
                    "bounds it", k1, per_chunk)
    log.info("ReliefE (tall mode): %d candidates per class, %d rows", k1, n)
    ks_all = []
    work = _reliefe_work(engine, sblocks, ikeys_all, nominal, n_classes, rule, p, k1, ks_all)
    sums = tall_updates(engine, sblocks, work, shard_bounds(ikeys_all.size, params.shards), per_chunk)
    return sums, np.vstack(ks_all) if ks_all else np.zeros((0, C), np.int64)


def reliefe_tall(spark, blocks, feature_names: list, nominal: np.ndarray, n_classes: int, params) -> tuple:
    """ReliefE weights with the rows left in partitions (the module sketch; the rows' steps:
    :mod:`spark_fr.relief.reliefe_blocks`).

    Parameters
    ----------
    spark : SparkSession
    blocks : Parts of dict
        The encoding pass's blocks (:func:`spark_fr.data.blocks.block_parts`).
    feature_names : list of str
    nominal : ndarray of bool (D,)
    n_classes : int
        > 0: classification; 0: MLC.
    params : ReliefEParams

    Returns
    -------
    (list of ScoreResult, info dict, timings dict, rows used, rows dropped, density)
    """
    engine = engine_for(spark)
    timings = {}
    mlc = n_classes == 0
    spaces = R.resolve_spaces(params, mlc)
    nominal = np.asarray(nominal, bool)
    size, seed = int(params.sample), params.seed
    t = time.perf_counter()
    kept = blocks.map(sparse_block).map(RB.labelled_block).persist()
    cached = [kept]
    try:
        summary = kept.map(lambda b: RB.block_summary(b, n_classes, size)) \
            .reduce(lambda a, b: RB.merge_summaries(a, b, size))
        check_missing(summary["missing"], feature_names)
        n = int(summary["rows"])
        if n < 2:
            raise InputError("ReliefE needs at least two rows with known targets")
        base = kept.filter(lambda b: b["keys"].size > 0).map(lambda b: {n_: b[n_] for n_ in ("X", "Y", "keys")})
        Xnu, Ynu = RB.cyclic_rows(base, summary, size, seed)
        timings["reliefe_sampling_s"] = time.perf_counter() - t
        info, embedder_name = R.start_info(params, spaces, mlc, Xnu.shape[0])
        f, g = R.fit_embedders(Xnu, Ynu if spaces[1] else None, params, spaces, embedder_name, info, timings)
        t = time.perf_counter()
        sblocks = RB.spaces_blocks(base, f, g, mlc, embedder_name, n, params.transform_rows).persist()
        cached.append(sblocks)
        dims = sblocks.map(lambda b: (b["keys"].size, b["E"].shape[1], b["Yt"].shape[1])).collect()
        if f is not None:
            timings["reliefe_embed_transform_s"] = time.perf_counter() - t
            info["reliefe_embedding_on"] = "spark"
            info["reliefe_dimension_used"] = int(max(d[1] for d in dims))
        if g is not None:
            timings["reliefe_target_embed_transform_s"] = time.perf_counter() - t
        kept.unpersist()
        cached.remove(kept)
        tkind = T_COSINE if g is not None else (LABEL_DISTANCES[spaces[2]] if mlc else 0)
        priors = R.class_priors(summary["classes"]) if not mlc else np.zeros(0)
        m = params.n_iterations(n)
        sample = sblocks.map(lambda b: block_bottom(b, seed, m, ("keys",))).reduce(lambda a, b: merge_bottom(a, b, m))
        t = time.perf_counter()
        rule = R.sparse_rule(priors, tkind, R.kernel_settings(params))
        sums, ks = reliefe_updates(engine, sblocks, sample["keys"], summary, params, nominal, n_classes, rule,
                                   max(d[1] for d in dims), n)
        timings["reliefe_updates_s"] = time.perf_counter() - t
    finally:
        for parts in cached:
            parts.unpersist()
    out = combine_shards(sums, True)[0]
    R.run_info(info, ks, mlc, m, len(sums), params, "tall", "spark")
    return ([ScoreResult(ScoreKey("reliefe"), out.importance, out.std)], info, timings, n, int(summary["dropped"]),
            float(summary["nnz"]) / max(1, len(feature_names) * n))
