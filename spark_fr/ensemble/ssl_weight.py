"""``--ssl-weight auto``: the semi-supervised weight w chosen by internal cross-validation, as in the thesis
(Sec. 2.3: w from {0, 0.1, ..., 1}; 4 folds as in the SSL journal paper).

Sketch
------
    folds <- each labelled row in one of 4 folds, by a seeded hash of its row key (unlabelled rows always train)
    for every (fold k, weight w): one unit of work (in the driver or as Spark tasks, spark_fr.runtime.spark)
        Z_w   <- [sqrt(w) Z_T | sqrt(1 - w) Z_D]                   (the run's clustering matrix for weight w)
        trees <- min(--trees, CV_TREES) trees of the run's ensemble on the rows outside fold k (their bootstrap
                 counts as in the run; fold k's rows weigh 0)
        error <- the task's own target error (relative MSE, misclassification rate, Hamming loss, ...) of the
                 trees' mean prototype on each of fold k's labelled rows, and on the fold as a whole
    w     <- 1, unless a smaller weight is clearly better: over the labelled rows (each held out once), its mean
             paired difference to w = 1 is below minus two standard errors (best_weight); then the best such
             weight (lowest mean error; ties to the larger w)

A unit depends only on (seed, fold, weight) and the data, so the choice is the same wherever units run.
The search costs ``4 * 11 * min(--trees, CV_TREES)`` trees; its errors are recorded in ``run.json``.

Decisions
---------
* The thesis takes the weight of the lowest cross-validated error. Where the unlabelled rows do not help,
  the eleven mean errors differ by noise only, and that arg-min would be a weight below 1 nearly always; so
  a weight must beat w = 1 clearly. "Clearly" is judged on the labelled rows, paired (the same row, held out
  in the same fold, under w and under w = 1), not on the 4 fold means: with a few dozen labelled rows (the
  case semi-supervised ranking is for) four fold means are too few to see even a halved error (measured: on
  XOR-planted clusters with 40 labelled rows of 300, w = 0 had a mean error of 0.17 against 0.32 at w = 1,
  and the fold-level rule kept w = 1; tests/ensemble/test_ssl_weight.py).
"""
from __future__ import annotations

import dataclasses
import logging
import math

import numpy as np

from ..pct.tree import leaf_prototypes
from ..runtime.rng import Stream, derive_seed, hash_uniform
from ..runtime.spark import run_units
from .params import EnsembleParams
from .spark import estimate_tree_seconds
from .trees import TreeData, grow_tree_of

log = logging.getLogger(__name__)

#: the weights tried, the folds, and the trees of each cross-validation ensemble at most
WEIGHTS = tuple(round(0.1 * i, 1) for i in range(11))
FOLDS = 4
CV_TREES = 25


def fold_of(seed: int, keys: np.ndarray, folds: int = FOLDS) -> np.ndarray:
    """The cross-validation fold of each row key (a function of the seed and the key only)."""
    u = hash_uniform(derive_seed(seed, 0, Stream.SSL_FOLD), np.asarray(keys, np.uint64))
    return np.minimum((u * folds).astype(np.int64), folds - 1)


def fold_error(data: TreeData, zt: np.ndarray, zd: np.ndarray, params: EnsembleParams, fold: int,
               weight: float, n_trees: int) -> tuple:
    """Target errors on fold ``fold``'s labelled rows of ``n_trees`` trees grown with SSL weight ``weight`` on the
    other rows (see the module sketch).

    Returns
    -------
    error : float
        The fold's target error (NaN when the fold has no labelled row).
    rows : ndarray of int
        The fold's labelled rows.
    row_errors : ndarray
        The target error of each of them alone (:meth:`FittedClustering.row_target_errors`).
    """
    task = data.task.with_weight(weight)
    labelled = task.labelled_rows(data.Y)
    test = np.flatnonzero(labelled & (fold_of(params.seed, data.row_keys) == fold))
    if test.size == 0:
        return float("nan"), test, np.zeros(0)
    Z = np.ascontiguousarray(np.hstack([zt * math.sqrt(weight), zd * math.sqrt(1.0 - weight)]))
    fold_data = dataclasses.replace(data, Z=Z, task=task).with_row_major()
    bagging = fold_data.sampling(params)
    default = task.default_prototype()
    total = np.zeros((test.size, default.shape[0]))
    for t in range(n_trees):
        weights = bagging.counts(t, fold_data.row_keys)
        weights[test] = 0.0
        tree = grow_tree_of(fold_data, params, t, weights, False)
        protos = leaf_prototypes(tree, fold_data.proto, weights, default)
        total += tree.routes(fold_data.codes_rows, test).take(protos)
    pred = task.predict(total / n_trees)
    Y = fold_data.Y[test]
    return task.target_error(Y, pred), test, task.row_target_errors(Y, pred)


def choose_ssl_weight(spark, data: TreeData, params: EnsembleParams) -> tuple:
    """Choose w by cross-validation; return (the data with the chosen weight's task and Z, the search's record).

    Parameters
    ----------
    spark : SparkSession
    data : TreeData
        The run's data, its task a :class:`spark_fr.tasks.semi_supervised.FittedClustering`.
    params : EnsembleParams

    Returns
    -------
    data : TreeData
    record : dict
        ``{"weights": [...], "errors": [mean error per weight], "chosen": w, "trees": n, "folds": 4}``.
    """
    zt, zd = data.task.part_matrices(data.Y)
    n_trees = min(params.trees, CV_TREES)
    units = [(k, i) for k in range(FOLDS) for i in range(len(WEIGHTS))]

    def work(payload, chunk):
        d, a, b = payload
        return {(k, i): fold_error(d, a, b, params, k, WEIGHTS[i], n_trees) for k, i in chunk}

    def merge(x, y):
        return {**x, **y}

    def plan(left, parallelism):
        return [left[i:i + 1] for i in range(len(left))]

    seconds = estimate_tree_seconds(data, params) * n_trees * len(units)
    log.info("--ssl-weight auto: %d folds x %d weights, %d trees each", FOLDS, len(WEIGHTS), n_trees)
    found, _, _ = run_units(spark, (data, zt, zd), units, work, merge, {}, plan, estimated_seconds=seconds,
                            label="SSL weight folds", description="spark_fr: --ssl-weight auto (cross-validation)")
    errors, row_errors = _error_tables(found, data.task.labelled_rows(data.Y))
    with np.errstate(invalid="ignore"):
        mean = np.nanmean(errors, axis=0) if np.any(~np.isnan(errors)) else np.full(len(WEIGHTS), np.nan)
    chosen = best_weight(row_errors)
    log.info("--ssl-weight auto chose w = %.1f (mean cross-validated error %s)", chosen,
             ", ".join(f"{w:.1f}: {e:.4g}" for w, e in zip(WEIGHTS, mean)))
    task = data.task.with_weight(chosen)
    Z = np.ascontiguousarray(np.hstack([zt * math.sqrt(chosen), zd * math.sqrt(1.0 - chosen)]))
    record = {"weights": list(WEIGHTS), "errors": [None if np.isnan(e) else float(e) for e in mean],
              "fold_errors": [[None if np.isnan(e) else float(e) for e in row] for row in errors],
              "chosen": chosen, "trees": n_trees, "folds": FOLDS, "labelled_rows": int(row_errors.shape[0])}
    return dataclasses.replace(data, Z=Z, task=task), record


def _error_tables(found: dict, labelled: np.ndarray) -> tuple:
    """(folds x weights fold errors, labelled rows x weights row errors) from the units' results."""
    errors = np.full((FOLDS, len(WEIGHTS)), np.nan)
    position = np.cumsum(labelled) - 1  # a labelled row's place among the labelled rows
    rows = np.full((int(labelled.sum()), len(WEIGHTS)), np.nan)
    for (k, i), (error, test, row_errors) in found.items():
        errors[k, i] = error
        rows[position[test], i] = row_errors
    return errors, rows[~np.isnan(rows).any(axis=1)]  # a row whose targets give no error (weight 0) says nothing


def best_weight(errors: np.ndarray) -> float:
    """The chosen weight from cross-validated errors, (samples x weights): one row per held-out labelled row
    (or per fold), paired across the weights.

    The thesis takes the weight of the lowest mean error. The errors are noisy and that arg-min wanders among
    weights that are equally good, so we prefer supervised ranking unless semi-supervised learning clearly
    helps: a weight w < 1 is a candidate only if its mean paired difference to w = 1 (same samples) is below
    minus two standard errors of those differences; the chosen weight is the candidate of lowest mean error
    (ties to the larger w), or 1 when there is none.
    """
    E = np.asarray(errors, np.float64)
    ok = ~np.any(np.isnan(E), axis=0)
    if not ok[-1] or E.shape[0] < 2:
        mean = np.nanmean(E, axis=0) if np.any(~np.isnan(E)) else np.full(E.shape[1], np.nan)
        if np.all(np.isnan(mean)):
            return 1.0
        return float(WEIGHTS[int(np.flatnonzero(mean <= np.nanmin(mean) + 1e-12).max())])
    d = E - E[:, -1:]
    se = d.std(axis=0, ddof=1) / np.sqrt(E.shape[0])
    mean = E.mean(axis=0)
    candidates = np.flatnonzero(ok & (d.mean(axis=0) < -2.0 * se - 1e-12))
    if candidates.size == 0:
        return 1.0
    best = mean[candidates].min()
    return float(WEIGHTS[int(candidates[mean[candidates] <= best + 1e-12].max())])
