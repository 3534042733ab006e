"""PCT-ensemble ranking on Spark, broadcast mode.

Algorithm sketch
----------------
    data   <- TreeData (codes, clustering / prototype columns, targets, row keys)   on the driver
    groups <- trees 0..N-1 cut into G contiguous groups (G from the estimated work: a task should be
              >= ~1 s, and there should be a few tasks per core when there is enough work)
    sums   <- run_grouped(data, groups, work = grow and score the trees of a group,   (spark_fr.runtime.spark:
                          merge = exact sums)                                           broadcast + treeAggregate)
    scores <- sums / N,  std from the sums of squares

Trees depend only on (seed, tree index) and on the canonical row order of the encoded data, and the
accumulators sum exactly (:mod:`spark_fr.runtime.exact`), so the ranking is the same for any number of
partitions, executors or groups.
"""
from __future__ import annotations

import logging
import math
from dataclasses import replace

import numpy as np

from ..runtime import warmups
from ..runtime.groups import contiguous_groups
from ..runtime.spark import run_units
from ..tasks.sparse_columns import SparseColumns
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
    cols = getattr(data.Z, "mean_row_nnz", data.Z.shape[1])  # label-sparse columns cost their stored values
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
    by_work = max(1, int(n_trees * seconds_per_tree // min_task_seconds))
    return contiguous_groups(n_trees, min(by_work, parallelism * tasks_per_core))


def fold_runner(spark, description: str = "spark_fr: cross-validation (--cv-folds)"):
    """A ``runner`` for :func:`spark_fr.ensemble.validation.cross_validate`: each fold one unit of
    :func:`~spark_fr.runtime.spark.run_units` (in the driver when small, else one Spark task per fold, the data
    broadcast once); the folds' results are merged by fold, so the record does not depend on where they ran."""

    def run(payload, units, work, estimated_seconds=None):
        result, _, _ = run_units(spark, payload, list(units), work, _merge_folds, {},
                                 lambda left, parallelism: [left[i:i + 1] for i in range(len(left))],
                                 estimated_seconds=estimated_seconds, label="cross-validation folds",
                                 description=description)
        return result

    return run


def _merge_folds(a: dict, b: dict) -> dict:
    a.update(b)
    return a


#: the scores a tree warm-up computes when the run names none (all of them: what a shipped cache holds)
ALL_SCORES = ("symbolic", "genie3", "rf")


def warm_up_kernels(missing: str = "learned", scores=ALL_SCORES) -> None:
    """Compile (or load from numba's cache) the tree kernels in this process on a tiny problem (grown with
    ``--missing missing``: fractional trees predict with their own kernels), scored with the run's ``--scores``
    (a name or names).

    Decision: the run's scores only: the permutation scores' kernels (``rf``) are loaded (about 0.3 s of the GIL on
    the driver, beside the run's passes that need it) only for a run that computes them."""
    from ..data.binning import warm_up_encoding
    from .local import rank_arrays

    warm_up_encoding()  # the encoding pass's kernel (Spark tasks)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    X[0, 0] = np.nan
    X[:, 2] = rng.integers(0, 3, 40)
    Y = X[:, :1] + rng.normal(size=(40, 1))
    rank_arrays(X, Y, "mtr", EnsembleParams(trees=1, scores=score_names(scores), per_target=True, missing=missing),
                nominal=np.array([False, False, True]))


def score_names(scores) -> list:
    """The score names of a warm-up's ``scores``: names, or one comma list of them (as ``--scores`` takes)."""
    return [s.strip() for s in scores.split(",")] if isinstance(scores, str) else list(scores)


def warm_up_label_sets(missing: str = "learned", scores=ALL_SCORES) -> None:
    """Compile (or load from numba's cache) the kernels of trees on label-sparse clustering columns (HMLC with at
    least ``SPARSE_MIN_COLUMNS`` labels: the grow loop's label-sparse backend, the leaves' label sets, their scores)
    on a tiny problem, with ``--missing missing`` and the run's ``--scores``. Decision: a warm-up of its own, run when a run's clustering
    columns are label-sparse (:func:`warm_trees`), not inside the ensemble's: about 20 s of CPU that a run on dense
    targets would not use."""
    from ..data.rowkeys import content_keys
    from ..tasks.sparse_columns import SparseLabels
    from .local import tree_data_from_arrays

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    X[0, 0] = np.nan
    X[:, 2] = rng.integers(0, 3, 40)
    Y = np.zeros((40, 6))
    Y[np.arange(40), rng.integers(0, 6, 40)] = 1.0
    data, _ = tree_data_from_arrays(X, Y, "hmlc", nominal=np.array([False, False, True]), label_weights=np.ones(6))
    labels = SparseLabels.from_dense(Y)
    content_keys([data.codes], labels)  # the encoding pass's row keys of label sets (Spark tasks)
    data = replace(data, Z=data.task.clustering_input(labels), Y=labels, proto=data.task.prototype_columns(labels))
    score_tree_group(data.with_row_major(), EnsembleParams(trees=1, scores=score_names(scores), missing=missing),
                     range(1))


def warm_trees(params: EnsembleParams, label_sets: bool) -> None:
    """The tree warm-ups a run with ``params`` needs: the ensemble's, and the label-sparse one when its clustering
    columns are label sets (``label_sets``)."""
    warmups.warm("ensemble", missing=params.missing, scores=params.scores)
    if label_sets:
        warmups.warm("label_sets", missing=params.missing, scores=params.scores)


def _score_group(data: TreeData, group, params: EnsembleParams) -> ScoreAccumulator:
    return score_tree_group(data, params, group)


def rank_trees_on_spark(spark, data: TreeData, params: EnsembleParams) -> tuple:
    """Grow and score ``params.trees`` trees on Spark (broadcast mode).

    Returns
    -------
    results : list of ScoreResult
    info : dict
        Number of groups and wall time of the trees.
    """
    data.with_row_major_for(params)
    warm_trees(params, isinstance(data.Z, SparseColumns))
    per_tree = estimate_tree_seconds(data, params)

    def work(payload, group):
        return _score_group(payload, group, params)

    tasks = []

    def plan(trees, parallelism):
        tasks[:] = [trees[g.start:g.stop] for g in plan_groups(len(trees), per_tree, parallelism)]
        return tasks

    log.info("growing %d trees (%s)", params.trees, params.ensemble)
    total, seconds, early = run_units(spark, data, list(range(params.trees)), work, lambda a, b: a.merge(b),
                                      ScoreAccumulator(), plan, estimated_seconds=per_tree * params.trees,
                                      label="trees", description=f"spark_fr: {params.trees} trees ({params.ensemble})")
    return total.results(), {"tree_groups": len(tasks), "trees_s": seconds,
                             "executed_on": "driver" if early == params.trees else "spark", "trees_on_driver": early}
