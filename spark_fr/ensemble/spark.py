"""PCT-ensemble ranking on Spark, broadcast mode.

Algorithm sketch
----------------
    data   <- TreeData (codes, clustering / prototype columns, targets, row keys)   on the driver
    bc     <- sc.broadcast(data)                                                     once per run
    groups <- trees 0..N-1 cut into G groups (G from the estimated work: a task should be >= ~1 s,
              and there should be a few tasks per core when there is enough work)
    sums   <- sc.parallelize(groups, G).treeAggregate(ScoreAccumulator(),
                  seqOp  = grow and score the trees of a group  (spark_fr.ensemble.trees),
                  combOp = merge accumulators)
    scores <- sums / N,  std from the sums of squares

Trees depend only on (seed, tree index) and on the canonical row order of the encoded data, and the
accumulators sum exactly (:mod:`spark_fr.ensemble.aggregate`), so the ranking is the same for any number
of partitions, executors or groups. Progress (trees done / total) is logged from an accumulator that every
finished group updates.
"""
from __future__ import annotations

import logging
import math
import time

import numpy as np

from ..progress import Progress
from .aggregate import ScoreAccumulator
from .params import EnsembleParams
from .trees import TreeData, score_tree_group

log = logging.getLogger(__name__)

# rough cost model of one tree, calibrated on the 2-core development machines (seconds)
_SECONDS_PER_UNIT = 2.5e-9


def estimate_tree_seconds(data: TreeData, params: EnsembleParams) -> float:
    """A rough estimate of the time to grow and score one tree (for grouping trees into tasks)."""
    n = max(data.n_rows, 2)
    k = params.features_per_node(data.n_features)
    cols = data.Z.shape[1]
    grow = n * math.log2(n) * k * (cols + 4)
    perm = n * math.log2(n) * 30 if "rf" in params.effective_scores() else 0.0
    return _SECONDS_PER_UNIT * (grow + perm)


def plan_groups(n_trees: int, seconds_per_tree: float, parallelism: int, min_task_seconds: float = 1.0,
                tasks_per_core: int = 3) -> list:
    """Cut tree indices 0..n_trees-1 into contiguous groups (one Spark task each).

    Parameters
    ----------
    n_trees : int
    seconds_per_tree : float
        Estimated cost of one tree.
    parallelism : int
        Task slots of the cluster.
    min_task_seconds : float
        Smallest worthwhile task (a Python task costs ~25 ms of overhead, plus data loading).
    tasks_per_core : int
        Upper bound on tasks per slot, for load balance and progress reporting.

    Returns
    -------
    list of range
    """
    total = n_trees * seconds_per_tree
    by_work = max(1, int(total // min_task_seconds))
    n_groups = max(1, min(n_trees, by_work, parallelism * tasks_per_core))
    bounds = np.linspace(0, n_trees, n_groups + 1).round().astype(int)
    return [range(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def warm_up_kernels() -> None:
    """Compile (or load from numba's cache) the tree kernels in this process on a tiny problem."""
    from .local import rank_arrays

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    X[0, 0] = np.nan
    X[:, 2] = rng.integers(0, 3, 40)
    Y = X[:, :1] + rng.normal(size=(40, 1))
    rank_arrays(X, Y, "mtr", EnsembleParams(trees=1, scores=["symbolic", "genie3", "rf"], per_target=True),
                nominal=np.array([False, False, True]))


def rank_trees_on_spark(spark, data: TreeData, params: EnsembleParams) -> tuple:
    """Grow and score ``params.trees`` trees on Spark (broadcast mode).

    Parameters
    ----------
    spark : pyspark.sql.SparkSession
    data : TreeData
    params : EnsembleParams

    Returns
    -------
    scores : dict
        ``{key: (mean, std)}`` as in :func:`spark_fr.ensemble.trees.score_tree`.
    info : dict
        Number of groups, seconds per tree estimate, wall time.
    """
    sc = spark.sparkContext
    if "rf" in params.effective_scores():
        data.with_row_major()
    warm_up_kernels()
    groups = plan_groups(params.trees, estimate_tree_seconds(data, params), sc.defaultParallelism)
    t0 = time.perf_counter()
    bc = sc.broadcast(data)
    done = sc.accumulator(0)
    try:
        def seq(acc: ScoreAccumulator, group) -> ScoreAccumulator:
            part = score_tree_group(bc.value, params, group)
            done.add(len(group))
            return acc.merge(part)

        def comb(a: ScoreAccumulator, b: ScoreAccumulator) -> ScoreAccumulator:
            return a.merge(b)

        sc.setJobDescription(f"spark_fr: {params.trees} trees ({params.ensemble}) in {len(groups)} tasks")
        log.info("growing %d trees (%s) in %d Spark tasks", params.trees, params.ensemble, len(groups))
        with Progress(done, params.trees, label="trees"):
            total = sc.parallelize(groups, len(groups)).treeAggregate(ScoreAccumulator(), seq, comb, depth=2)
        log.info("trees %d / %d done (%.1f s)", total.n_trees, params.trees, time.perf_counter() - t0)
    finally:
        sc.setJobDescription(None)
        bc.destroy()
    return total.mean_std(), {"tree_groups": len(groups), "trees_s": time.perf_counter() - t0}
