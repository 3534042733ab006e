"""Cross-validated predictive performance of the ranking model (``--cv-folds K``), no Spark in here.

A ranking is worth reading when the model it comes from predicts the targets (the thesis' test of a
ranking): this module estimates how well, by K-fold cross-validation of the ranking's own model.

Algorithm sketch
----------------
    measure <- the task's (spark_fr.tasks.measures): accuracy (classification), RRMSE (regression, MTR),
               micro-F1 (MLC); or "not computed" (HMLC, unsupervised), then the record says why
    folds   <- fold_of(row keys, the measure's strata (the class, or none), K, seed): rows sorted by
               (class, hash_uniform(derive_seed(seed, 0, CV), key), key) and dealt to folds 0, 1, ..., K-1,
               0, 1, ... in that order
    for fold f = 0 .. K-1 (one unit of work each: in the driver, or one Spark task each):
        train, test <- the rows outside f, the rows in f
        pred        <- the model fitted on train predicts test:
            ensemble: trees t = 0 .. N-1 grown as the ranking grows them (grow_tree_of: the tree's seed,
                      random patch and per-node subsets), with the ranking's bootstrap counts of the training
                      rows (a function of (seed, t, row key); held-out rows weigh 0); the held-out rows' leaf
                      prototypes (leaf_prototypes over the tree's training rows) averaged over the trees, then
                      the task's prediction (arg-max class, mean vector, labels p >= 0.5)
            boosting: boost() on the training rows (spark_fr.ensemble.boosting.cross_validate_boosting),
                      decision_function of the held-out rows, then the loss's class or value
        score[f]    <- measure(Y[test], pred);  baseline[f] <- the same measure of the training fold's majority
                       class / mean / per-label majority on the same held-out rows
    record  <- {"folds", "metric", "mean", "std", "per_fold", "baseline", "baseline_per_fold",
                "baseline_name", "rows", "scored_rows", "stratified", "greater_is_better", "seconds"}

Decisions
---------
* **Folds are a pure function of the seed and of the set of (row key, class) pairs**, never of the row order
  or the partitioning, so the record is the same bit for bit for any number of partitions (the rows' keys and
  canonical order come from the encoding, :mod:`spark_fr.data.rowkeys`). Dealing the sorted rows round robin
  stratifies by the class: a class's counts in two folds differ by at most 1, and so do the fold sizes.
  Regression and multi-label folds are the same deal without the class (a seeded shuffle).
* **K larger than the rows is an error** (:class:`~spark_fr.errors.InputError`, raised before any tree is
  grown by :func:`check_folds`): every fold needs a held-out row. K = 1 is refused by the option itself.
* **What is fitted on all the run's rows, not per fold**: the features' bins (unsupervised: quantiles of
  the feature values, the targets are never looked at), and the task's fit: the classes, the centre and
  weights of the clustering columns (each target's 1 / variance: a scale per target, which changes no split
  of a single-target tree, where it is a constant factor, and weighs the targets of an MTR tree against each
  other) and boosting's loss (the classes it has a column for: a class missing from a training fold, one
  with fewer than K rows, keeps a column whose trees only push its probability down). The trees are thus
  exactly those of the ranking's parameters. Everything that predicts a held-out row comes from the
  training rows alone: the splits, the leaf prototypes, boosting's initial model, residuals and leaf
  values, and the baseline.
* **The spread** ``std`` is the sample standard deviation of the per-fold values (ddof = 1); ``mean`` is the
  unweighted mean of the folds (stratified folds have sizes within one row of each other). A fold without
  a scorable held-out row (a semi-supervised fold of unlabelled rows only) is left out of both (``null``).
* **Semi-supervised runs** train on every row outside the fold, labelled or not, and score the held-out rows
  with a known target; ``scored_rows`` counts them.
* **Cost**: K times the ranking's trees (each on (K - 1) / K of the rows). Folds are independent units: the
  run computes them as Spark tasks (or in the driver when small), through ``runner``.
"""
from __future__ import annotations

import dataclasses
import logging
import time
from functools import partial

import numpy as np

from ..errors import InputError
from ..pct.tree import leaf_prototypes
from ..runtime.rng import Stream, derive_seed, hash_uniform
from .bagging import Bagging
from .params import EnsembleParams
from .trees import TreeData, grow_tree_of

log = logging.getLogger(__name__)


def check_folds(k: int, n_rows: int) -> None:
    """Raise :class:`InputError` unless ``k`` folds (k >= 2) can be made of ``n_rows`` rows."""
    if k < 2:
        raise InputError(f"--cv-folds must be at least 2, not {k}")
    if k > n_rows:
        raise InputError(f"--cv-folds {k} needs at least {k} rows to learn from; there are {n_rows}")


def fold_of(row_keys: np.ndarray, y: np.ndarray | None, k: int, seed: int) -> np.ndarray:
    """The cross-validation fold (0 .. k-1) of every row.

    Rows are sorted by (class, ``hash_uniform(derive_seed(seed, 0, Stream.CV), key)``, key) and dealt round
    robin to folds 0, 1, ..., k-1, 0, 1, ...: a function of the seed and the set of (key, class) pairs only.

    Parameters
    ----------
    row_keys : ndarray of uint64 (n,)
        Stable, distinct row keys.
    y : ndarray (n,) or None
        The class of every row (any numbers; NaN is a stratum of its own), or None: no stratification.
    k : int
        Number of folds, 2 <= k <= n.
    seed : int

    Returns
    -------
    ndarray of int64 (n,)

    Raises
    ------
    InputError
        k < 2, or more folds than rows.
    """
    keys = np.asarray(row_keys, dtype=np.uint64)
    n = keys.shape[0]
    check_folds(k, n)
    u = hash_uniform(derive_seed(seed, 0, Stream.CV), keys)
    if y is None:
        stratum = np.zeros(n)
    else:
        y = np.asarray(y, dtype=np.float64)
        stratum = np.where(np.isnan(y), np.inf, y)
    order = np.lexsort((keys, u, stratum))
    folds = np.empty(n, np.int64)
    folds[order] = np.arange(n, dtype=np.int64) % k
    return folds


# ----------------------------------------------------------------------------------------------------------
# the fold loop, shared by the methods
# ----------------------------------------------------------------------------------------------------------
def run_in_process(payload, units: list, work, estimated_seconds: float | None = None) -> dict:
    """The default ``runner``: ``work(payload, [unit])`` for every unit here, in order; the merged dict."""
    out = {}
    for unit in units:
        out.update(work(payload, [unit]))
    return out


def _score_folds(payload, chunk, predict, measure, k: int) -> dict:
    """``{fold: (score, baseline, scored held-out rows)}`` of the folds ``chunk`` (one unit of work)."""
    data, folds = payload
    out = {}
    for f in chunk:
        t0 = time.perf_counter()
        test, train = np.flatnonzero(folds == f), np.flatnonzero(folds != f)
        pred = predict(data, folds=folds, fold=f)
        Y_test, Y_train = data.Y[test], data.Y[train]
        score, baseline = measure.score(Y_test, pred, Y_train), measure.baseline(Y_test, Y_train)
        scored = measure.known_rows(Y_test)
        log.info("cross-validation fold %d/%d: %s %.4g (%s %.4g) on %d held-out rows, trained on %d (%.1f s)",
                 f + 1, k, measure.name, score, measure.baseline_name, baseline, scored, train.size,
                 time.perf_counter() - t0)
        out[int(f)] = (float(score), float(baseline), scored)
    return out


def _value(x: float):
    return None if x is None or not np.isfinite(x) else float(x)


def _summary(values: list) -> tuple:
    v = np.array([x for x in values if x is not None and np.isfinite(x)], dtype=np.float64)
    mean = float(v.mean()) if v.size else None
    std = float(v.std(ddof=1)) if v.size > 1 else None
    return mean, std


def cross_validate(data, k: int, seed: int, predict, *, runner=None, estimated_seconds: float | None = None) -> dict:
    """K-fold cross-validation of a model: the shared fold loop of the methods (see the module sketch).

    Parameters
    ----------
    data : TreeData or BoostingData
        Anything with ``row_keys``, ``Y`` (the task's targets) and ``task`` (a FittedTask).
    k : int
        Folds (2 <= k <= rows).
    seed : int
    predict : callable
        ``predict(data, folds=folds, fold=f)``: the predictions (m, T), in the task's units, of the held-out rows
        of fold f (``np.flatnonzero(folds == f)``, in that order), from a model fitted on the others. Must be
        picklable when ``runner`` ships it to Spark tasks.
    runner : callable, optional
        ``runner(payload, units, work, estimated_seconds) -> dict``: computes ``work(payload, chunk)`` over the
        folds and merges the dicts it returns (default :func:`run_in_process`).
    estimated_seconds : float, optional
        The whole work's estimated time on one core (for the runner).

    Returns
    -------
    dict
        The record (module sketch), or ``{"folds": k, "skipped": reason}`` when the task has no measure.
    """
    t0 = time.perf_counter()
    measure = data.task.predictive_measure()
    if not measure.computed:
        log.info("cross-validation not computed: %s", measure.reason)
        return {"folds": k, "skipped": measure.reason}
    strata = measure.strata(data.Y)
    folds = fold_of(data.row_keys, strata, k, seed)
    work = partial(_score_folds, predict=predict, measure=measure, k=k)
    results = (runner or run_in_process)((data, folds), list(range(k)), work, estimated_seconds)
    scores = [_value(results[f][0]) for f in range(k)]
    baselines = [_value(results[f][1]) for f in range(k)]
    mean, std = _summary(scores)
    base, _ = _summary(baselines)
    return {"folds": k, "metric": measure.name, "greater_is_better": measure.greater_is_better, "mean": mean,
            "std": std, "per_fold": scores, "baseline": base, "baseline_per_fold": baselines,
            "baseline_name": measure.baseline_name, "rows": int(folds.shape[0]),
            "scored_rows": int(sum(results[f][2] for f in range(k))), "stratified": strata is not None,
            "seed": int(seed), "seconds": time.perf_counter() - t0}


def describe(record: dict) -> str:
    """One line on a cross-validation record (for the run's log)."""
    if "skipped" in record:
        return f"{record['folds']}-fold cross-validation skipped: {record['skipped']}"
    fmt = (lambda x: "n/a" if x is None else f"{x:.4g}")
    return (f"{record['folds']}-fold cross-validated {record['metric']} {fmt(record['mean'])} "
            f"+- {fmt(record['std'])} ({record['baseline_name']}: {fmt(record['baseline'])}; "
            f"{record['scored_rows']} rows, {record['seconds']:.1f} s)")


# ----------------------------------------------------------------------------------------------------------
# PCT ensembles
# ----------------------------------------------------------------------------------------------------------
def ensemble_fold_predictions(data: TreeData, params: EnsembleParams, folds: np.ndarray, fold: int) -> np.ndarray:
    """Predictions of the held-out rows of ``fold`` by the ensemble grown on the other rows.

    Tree t is the ranking's tree t (same seed, patch, per-node subsets, bootstrap counts of the training
    rows) grown on the training rows; the held-out rows' leaf prototypes are averaged over the trees (in
    tree order) and turned into the task's prediction.

    Returns
    -------
    ndarray (m, T)
        For the rows ``np.flatnonzero(folds == fold)``, in that order.
    """
    test = np.flatnonzero(folds == fold)
    held_out = folds == fold
    bagging = Bagging.of(params, int(folds.shape[0] - test.size))  # --max-samples counts the training rows
    fold_data = dataclasses.replace(data, bagging=bagging)
    default = data.task.default_prototype()
    XR = np.ascontiguousarray(data.codes[:, test].T)
    local = np.arange(test.size, dtype=np.int64)
    total = np.zeros((test.size, default.shape[0]))
    for t in range(params.trees):
        weights = bagging.counts(t, data.row_keys)
        weights[held_out] = 0.0
        tree = grow_tree_of(fold_data, params, t, weights, False)
        total += tree.routes(XR, local).take(leaf_prototypes(tree, data.proto, weights, default))
    return data.task.predict(total / params.trees)


def cross_validate_ensemble(data: TreeData, params: EnsembleParams, k: int, seed: int, *, runner=None,
                            estimated_seconds: float | None = None) -> dict:
    """K-fold cross-validated predictive performance of the ranking's PCT ensemble.

    Parameters
    ----------
    data : TreeData
        The run's data (broadcast mode: every row, every feature).
    params : EnsembleParams
        The ranking's parameters (every fold grows ``params.trees`` trees as the ranking does).
    k : int
        Folds, 2 <= k <= rows.
    seed : int
        The folds' seed (the run uses ``params.seed``).
    runner, estimated_seconds
        As in :func:`cross_validate` (default: every fold here, in order).

    Returns
    -------
    dict
        ``{"folds", "metric", "mean", "std", "per_fold", "baseline", "baseline_name", "rows", "seconds", ...}``
        (the module sketch), or ``{"folds", "skipped"}`` for a task without a measure.
    """
    return cross_validate(data, k, seed, partial(ensemble_fold_predictions, params=params), runner=runner,
                          estimated_seconds=estimated_seconds)
