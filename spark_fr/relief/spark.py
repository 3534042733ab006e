"""Relief on Spark: broadcast mode and tall mode.

Algorithm sketch
----------------
Both modes sample the same m instances (smallest ``hash(seed, row key)``), cut them into the same shards,
and run the same per-instance update, so their weights are identical (and identical for any number of
partitions); only where the neighbours are searched differs.

Broadcast mode (the scaled data fits in memory)::

    bc   <- broadcast(ReliefData)                       scaled features, targets, keys, influence
    sums <- parallelize(shards).treeAggregate(          one task per shard: numba neighbour search +
               {shard: accumulators})                   update (spark_fr.relief.kernels)
    weights from the summed accumulators; importance_std from the per-shard weights

Tall mode (the data stays distributed)::

    blocks  <- the encoding pass's blocks (scaled features, targets), persisted
    summary <- treeReduce of per-block target summaries (ranges, class counts, HMLC final labels)
    [semi-supervised: labelled rows broadcast; each row's distance to them; influence]
    sample  <- treeReduce of per-block bottom-m (hash, key) rows           the same m instances
    for each chunk of instances (bounded memory):
        cands <- blocks.map(k+1 best candidates per instance).treeReduce(merge)   (spark_fr.relief.tall)
        accumulators per shard from the merged candidates, on the driver
"""
from __future__ import annotations

import logging
import time

import numpy as np

from ..pct.rng import hash_uniform, tree_seed
from ..progress import Progress
from ..tasks import TargetSummary, relief_target, summarize_targets
from . import tall
from .data import INSTANCE_BLOCK, ReliefSums, influence_from_distances, nearest_labelled_distance, shard_bounds
from .params import ReliefParams
from .prepare import combine_shards, labelled_rows, sampled_shards

log = logging.getLogger(__name__)


def warm_up_relief_kernels() -> None:
    """Compile (or load from numba's cache) the Relief kernels in this process."""
    from .data import ReliefData, run_shard
    from ..tasks import relief_target as rt

    rng = np.random.default_rng(0)
    X = rng.random((12, 3))
    X[0, 0] = np.nan
    Y = rng.random((12, 2))
    data = ReliefData(X, np.arange(12, dtype=np.uint64), rt("mtr", Y), np.array([False, False, True]),
                      np.array([1.0, 1.0, 3.0]), np.ones(12, bool), np.ones(12))
    run_shard(data, np.arange(3), 2, 0.0, True)
    block = tall.rows_block(data, np.arange(12))
    inst = tall.rows_block(data, np.arange(2))
    c = tall.candidates_for_block(block, inst, 2, data.target, data.nominal, data.n_values, True)
    tall.shard_sums(inst, tall.merge(c, c), 2, 0.0, data.target)
    nearest_labelled_distance(X, np.arange(2), np.arange(2, 4), data.nominal, data.n_values)


def relief_broadcast(spark, data, params: ReliefParams) -> tuple:
    """Relief weights with the data broadcast and the sampled instances sharded over tasks.

    Returns
    -------
    (results, info): results as :func:`spark_fr.relief.prepare.combine_shards`.
    """
    sc = spark.sparkContext
    warm_up_relief_kernels()
    shards = sampled_shards(data, params)
    t0 = time.perf_counter()
    bc = sc.broadcast(data)
    done = sc.accumulator(0)
    k, sigma, per_target = params.neighbours, params.sigma, params.per_target
    groups = shard_groups(shards, sc.defaultParallelism, data.n_rows * data.n_features)
    try:
        def seq(acc: dict, group) -> dict:
            for i, rows in group:
                acc[i] = _shard(bc.value, rows, k, sigma, per_target)
                done.add(len(rows))
            return acc

        def comb(a: dict, b: dict) -> dict:
            a.update(b)
            return a

        m = sum(len(s) for s in shards)
        sc.setJobDescription(f"spark_fr: Relief, {m} instances in {len(shards)} shards (broadcast)")
        log.info("Relief (broadcast mode): %d instances, k = %d, %d rows x %d features, %d shards in %d tasks", m, k,
                 data.n_rows, data.n_features, len(shards), len(groups))
        with Progress(done, m, label="Relief instances"):
            res = sc.parallelize(groups, len(groups)).treeAggregate({}, seq, comb, depth=2)
    finally:
        sc.setJobDescription(None)
        bc.destroy()
    sums = [res[i] for i in range(len(shards))]
    return combine_shards(sums, data.target.n_classes > 0), {"relief_mode": "broadcast", "relief_shards": len(shards),
                                                              "relief_instances": m,
                                                              "relief_s": time.perf_counter() - t0}


#: distance evaluations (instances x rows x features) below which the shards go to one task per core: a
#: Spark task costs ~0.1 s, more than such shards take, and progress is not needed for so short a job
SMALL_WORK = 2e10


def shard_groups(shards: list, cores: int, rows_x_features: int) -> list:
    """Shards, numbered, in groups of consecutive ones: one group per Spark task.

    Small jobs get one group per core (few tasks: Spark's per-task cost dominates them); large ones one
    shard per task (finer progress, better balance). Each shard is computed exactly as on its own, so the
    grouping never changes the result.
    """
    numbered = list(enumerate(shards))
    work = sum(len(s) for s in shards) * float(rows_x_features)
    n_groups = len(numbered) if work > SMALL_WORK else max(1, min(len(numbered), int(cores)))
    bounds = np.linspace(0, len(numbered), n_groups + 1).round().astype(int)
    return [numbered[bounds[g]:bounds[g + 1]] for g in range(n_groups)]


def _shard(data, rows, k, sigma, per_target):
    from .data import run_shard

    return run_shard(data, rows, k, sigma, per_target)


# ----- tall mode -----------------------------------------------------------------------------------------
def _bottom(u: np.ndarray, keys: np.ndarray, m: int) -> np.ndarray:
    """Positions of the m smallest (u, key), in that order."""
    order = np.lexsort((keys, u))
    return order[:m]


def relief_tall(spark, blocks, task: str, params: ReliefParams, *, nominal, n_values, semi_supervised=False,
                n_classes=0, hierarchy=None) -> tuple:
    """Relief weights with the data left in partitions and the sampled instances broadcast.

    Parameters
    ----------
    spark : SparkSession
    blocks : RDD of dict
        Encoded blocks with 'scaled' features (rows x D), raw targets 'Y' and content 'keys'.
    task : str
    params : ReliefParams
    nominal, n_values : feature types (D,)
    semi_supervised : bool
    n_classes : int
    hierarchy : Hierarchy, optional

    Returns
    -------
    (results, info)
    """
    sc = spark.sparkContext
    warm_up_relief_kernels()
    t0 = time.perf_counter()
    nominal = np.asarray(nominal, bool)
    n_values = np.asarray(n_values, np.float64)
    unsup = task == "unsupervised"

    def keep_rows(b):
        lab = labelled_rows(b["Y"]) if not unsup else np.ones(b["m"], bool)
        keep = lab if not (semi_supervised or unsup) else np.ones(b["m"], bool)
        return {"X": np.ascontiguousarray(b["scaled"][keep]), "Y": b["Y"][keep], "keys": b["keys"][keep],
                "labelled": lab[keep]}

    base = blocks.map(keep_rows).filter(lambda b: b["keys"].size > 0).persist()
    try:
        summary = base.map(lambda b: summarize_targets(task, b["Y"], hierarchy, n_classes)) \
            .treeReduce(lambda a, b: a.merge(b), depth=2) if not unsup else None
        counts = base.map(lambda b: (b["keys"].size, int(b["labelled"].sum()))).reduce(
            lambda a, b: (a[0] + b[0], a[1] + b[1]))
        n_rows, n_lab = counts
        ssl = semi_supervised and not unsup and n_lab < n_rows
        rt_kwargs = dict(mlc_distance=params.target_distance, hierarchy=hierarchy, w0=params.hmlc_w0,
                         hmlc_squared=params.hmlc_squared,
                         hmlc_normaliser=params.hmlc_normaliser, semi_supervised=ssl,
                         n_classes=n_classes or None, summary=summary)
        target0 = relief_target(task, np.zeros((0, 1 if unsup else _n_target_cols(base))), **rt_kwargs)

        def to_relief(b):
            t = relief_target(task, b["Y"], **rt_kwargs)
            classes = t.classes if t.classes is not None else np.zeros(b["keys"].size)
            return {"X": b["X"], "keys": b["keys"], "Yt": np.ascontiguousarray(t.values),
                    "labelled": b["labelled"], "influence": np.ones(b["keys"].size),
                    "classes": np.asarray(classes, np.float64)}

        rblocks = base.map(to_relief)
        if ssl:
            lab_X = np.concatenate(rblocks.map(lambda b: b["X"][b["labelled"]]).collect())
            bl = sc.broadcast(lab_X)

            def with_d(b):
                unl = np.flatnonzero(~b["labelled"])
                allx = np.vstack([b["X"], bl.value])
                lab_rows = np.arange(b["X"].shape[0], allx.shape[0])
                d = nearest_labelled_distance(allx, unl, lab_rows, nominal, n_values)
                b["d"] = np.full(b["keys"].size, np.nan)
                b["d"][unl] = d
                return b

            rblocks = rblocks.map(with_d).persist()
            lo, hi = rblocks.map(lambda b: (np.nanmin(b["d"], initial=np.inf), np.nanmax(b["d"], initial=-np.inf))) \
                .reduce(lambda a, b: (min(a[0], b[0]), max(a[1], b[1])))
            w0, w1 = params.influence

            def with_influence(b):
                unl = ~b["labelled"]
                b["influence"] = np.ones(b["keys"].size)
                b["influence"][unl] = influence_from_distances(b["d"][unl], w0, w1, lo=lo, hi=hi)
                return b

            rblocks = rblocks.map(with_influence)
        rblocks = rblocks.persist()

        # the sample: the m smallest (hash, key), as in broadcast mode
        m = params.n_iterations(n_rows)
        salt = tree_seed(params.seed, 0, stream=7)

        def bottom(b):
            u = hash_uniform(salt, b["keys"])
            pos = _bottom(u, b["keys"], m)
            return {"u": u[pos], **{name: b[name][pos] for name in ("X", "keys", "Yt", "labelled", "influence",
                                                                      "classes")}}

        def merge_bottom(a, b):
            u = np.concatenate([a["u"], b["u"]])
            keys = np.concatenate([a["keys"], b["keys"]])
            pos = _bottom(u, keys, m)
            return {name: np.concatenate([a[name], b[name]])[pos] for name in a}

        sample = rblocks.map(bottom).treeReduce(merge_bottom, depth=2)
        shards = shard_bounds(m, params.shards)
        k = params.neighbours
        C = max(n_classes if target0.n_classes > 0 else 1, 1)
        D = nominal.size
        # instances per candidate job (bounded memory), a multiple of the micro-block size
        per_chunk = max(1, int(2e7 // (C * (k + 1) * max(D, 1))) // INSTANCE_BLOCK) * INSTANCE_BLOCK
        done = sc.accumulator(0)
        sums = []
        log.info("Relief (tall mode): %d instances, k = %d, %d rows x %d features, %d shards", m, k, n_rows, D,
                 len(shards))
        sc.setJobDescription(f"spark_fr: Relief, {m} instances (tall mode)")
        with Progress(done, m, label="Relief instances"):
            for a, b in shards:
                acc = None
                for c0 in range(a, b, per_chunk):
                    c1 = min(b, c0 + per_chunk)
                    inst = {name: np.ascontiguousarray(sample[name][c0:c1]) for name in sample if name != "u"}
                    bi = sc.broadcast(inst)
                    try:
                        cands = rblocks.map(lambda blk: tall.candidates_for_block(
                            blk, bi.value, k, target0, nominal, n_values, params.per_target)) \
                            .treeReduce(tall.merge, depth=2)
                    finally:
                        bi.destroy()
                    part = tall.shard_sums(inst, cands, k, params.sigma, target0)
                    acc = part if acc is None else _append_instances(acc, part)
                    done.add(c1 - c0)
                sums.append(acc)
        rblocks.unpersist()
    finally:
        sc.setJobDescription(None)
        base.unpersist()
    info = {"relief_mode": "tall", "relief_shards": len(shards), "relief_instances": m,
            "relief_s": time.perf_counter() - t0}
    return combine_shards(sums, target0.n_classes > 0), info


def _append_instances(acc: ReliefSums, part: ReliefSums) -> ReliefSums:
    return acc.merge(part)


def _n_target_cols(base) -> int:
    first = base.first()
    return first["Y"].shape[1]
