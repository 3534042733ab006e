"""Predictive performance measures of the evaluation protocols (NumPy; each checked against scikit-learn's).

Sketch
------
Every measure takes the true values of the test rows (``Y``, n x T, NaN = unknown) and the protocol's predictions
in the task's units, and ignores the unknown cells of ``Y``:

* **Regression, MTR**: ``aRRMSE = (1/T) sum_j sqrt( sum_test (y_j - p_j)^2 / (|test_j| Var_j(train)) )`` (thesis
  section 8, spec ``methods-thesis.md``), ``Var_j(train)`` the population variance (``ddof = 0``) of target j over
  the training rows where it is known. The error of predicting the training mean is about 1.
* **Classification**, from a confusion matrix (rows: true class, columns: predicted class), so that a
  cross-validation can sum the folds' matrices first, as the SSL papers do ("averaging the scores over the folds
  is wrong, as the measures are not additive"): accuracy, Cohen's kappa, macro F1 (one class against the rest,
  averaged over the classes that occur in the truth or the predictions: scikit-learn's default ``labels``), MCC
  (scikit-learn's multi-class generalisation, Gorodkin's R_K) and ``macro_mcc`` (the thesis's one-vs-rest MCC
  averaged over the classes).
* **MLC, HMLC**, from the predicted label probabilities ``P`` (the share of the neighbours that have the label) and
  the label sets ``P >= 0.5``: micro F1, macro F1 (per label, averaged over all labels; a label with no true and no
  predicted positive scores 0, scikit-learn's ``zero_division=0``), Hamming loss, example-based accuracy
  (``|S & S'| / |S | S'|``, two empty sets score 1), subset accuracy, and the area under the pooled precision-recall
  curve ``pooled_auprc`` (below) with its step-wise form ``pooled_ap``.
* **Unsupervised**: the mean squared error of the predicted feature values (numeric features in units of their
  training range, nominal ones 0/1 for a mismatch), over the known cells.

Pooled AUPRC (HMLC paper section 3.3; Vens et al. 2008)
-------------------------------------------------------
The (truth, probability) pairs of every known (row, label) cell are pooled; for every threshold ``theta`` the
counts ``tp``, ``fp`` of the cells with ``p >= theta`` give a point (recall, precision). The papers leave the
interpolation open. Decision: ``pooled_auprc`` is what CLUS computes (``ROCAndPRCurve``), the measure of the papers'
own runs: the points of consecutive thresholds are joined by Davis and Goadrich's interpolation (a point for every
integer tp in between, with fp interpolated linearly), the first point is extended at its precision to recall 0,
and the area is the trapezoid sum. Two scikit-learn readings are available too (``pr_area(..., method=)``):
``'step'`` is ``average_precision_score`` of the pooled cells (``sum (R_t - R_{t-1}) P_t``; reported as
``pooled_ap``) and ``'trapezoid'`` is ``auc(recall, precision)`` of ``precision_recall_curve`` (linear interpolation
in PR space, which over-rates a curve: the reason Davis and Goadrich interpolate the other way). With k neighbours
the probabilities take only k + 1 values, so the curve has at most k + 1 points and ties are whole groups of cells,
which every reading treats the same way (one point per distinct threshold). No positive cell: NaN.
"""
from __future__ import annotations

import numpy as np

#: every measure: whether greater is better, and the kinds of prediction it scores (a target type's
#: ``evaluation.prediction``, :class:`spark_fr.tasks.base.EvaluationDefaults`: numbers, a class, label shares, features)
MEASURES = {
    "arrmse": (False, ("mean",)),
    "accuracy": (True, ("vote",)),
    "kappa": (True, ("vote",)),
    "macro_f1": (True, ("vote", "labels")),
    "mcc": (True, ("vote",)),
    "macro_mcc": (True, ("vote",)),
    "micro_f1": (True, ("labels",)),
    "hamming": (False, ("labels",)),
    "ml_accuracy": (True, ("labels",)),
    "subset_accuracy": (True, ("labels",)),
    "pooled_auprc": (True, ("labels",)),
    "pooled_ap": (True, ("labels",)),
    "mse": (False, ("features",)),
}


def greater_is_better(measure: str) -> bool:
    """Whether a larger value of ``measure`` is better (``au_r<measure>``, a curve's area: as ``measure``)."""
    if measure.startswith("au_r") and measure[4:] in MEASURES:
        return MEASURES[measure[4:]][0]
    return MEASURES[measure][0]


def measures_of(prediction: str) -> list:
    """The measures of a kind of prediction, in :data:`MEASURES` order."""
    return [m for m, (_, kinds) in MEASURES.items() if prediction in kinds]


# ----- regression -------------------------------------------------------------------------------------------
def train_variance(Y_train: np.ndarray) -> np.ndarray:
    """Population variance (ddof = 0) of every target over its known training values (NaN when none)."""
    Y = np.asarray(Y_train, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        known = ~np.isnan(Y)
        n = known.sum(axis=0)
        mean = np.where(known, Y, 0.0).sum(axis=0) / n
        return np.where(known, (Y - mean) ** 2, 0.0).sum(axis=0) / n


def rrmse(Y: np.ndarray, P: np.ndarray, var_train: np.ndarray) -> np.ndarray:
    """Per target ``sqrt(sum (y - p)^2 / (n_known var_train))`` over the known test cells (NaN: none known, or a
    target constant on the training rows)."""
    Y = np.asarray(Y, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    known = ~np.isnan(Y)
    sse = np.where(known, (Y - P) ** 2, 0.0).sum(axis=0)
    n = known.sum(axis=0)
    var = np.asarray(var_train, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.sqrt(sse / (n * var))
    return np.where((n > 0) & (var > 0), out, np.nan)


def arrmse(Y: np.ndarray, P: np.ndarray, var_train: np.ndarray) -> float:
    """The average over the targets of :func:`rrmse` (targets without a value are left out)."""
    r = rrmse(Y, P, var_train)
    return float(np.nanmean(r)) if np.any(~np.isnan(r)) else float("nan")


# ----- classification ----------------------------------------------------------------------------------------
def confusion(y: np.ndarray, pred: np.ndarray, n_classes: int) -> np.ndarray:
    """Confusion matrix (``C[true, predicted]``, int64) of class indices; rows with an unknown class are left out."""
    y = np.asarray(y, dtype=np.float64).ravel()
    pred = np.asarray(pred, dtype=np.float64).ravel()
    keep = ~np.isnan(y)
    C = np.zeros((n_classes, n_classes), np.int64)
    np.add.at(C, (y[keep].astype(np.int64), pred[keep].astype(np.int64)), 1)
    return C


def classification_measures(C: np.ndarray) -> dict:
    """Accuracy, Cohen's kappa, macro F1, MCC and the one-vs-rest macro MCC of a confusion matrix.

    Parameters
    ----------
    C : ndarray (K, K)
        ``C[i, j]``: rows of true class i predicted as j (summed over folds where the protocol says so).

    Returns
    -------
    dict
        ``accuracy``, ``kappa``, ``macro_f1``, ``mcc``, ``macro_mcc`` (NaN for an empty matrix).
    """
    C = np.asarray(C, dtype=np.float64)
    n = C.sum()
    if n == 0:
        return {m: float("nan") for m in ("accuracy", "kappa", "macro_f1", "mcc", "macro_mcc")}
    t = C.sum(axis=1)  # true counts
    p = C.sum(axis=0)  # predicted counts
    tp = np.diag(C)
    acc = tp.sum() / n
    pe = float((t * p).sum()) / (n * n)
    kappa = (acc - pe) / (1.0 - pe) if pe != 1.0 else 0.0
    present = (t + p) > 0
    f1 = np.where(present, 2 * tp / np.where(present, t + p, 1.0), 0.0)
    macro_f1 = float(f1[present].mean())
    cov_yp = tp.sum() * n - (t * p).sum()
    cov_pp = n * n - (p * p).sum()
    cov_yy = n * n - (t * t).sum()
    mcc = cov_yp / np.sqrt(cov_pp * cov_yy) if cov_pp * cov_yy > 0 else 0.0
    fp, fn = p - tp, t - tp
    tn = n - tp - fp - fn
    den = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    per_class = np.where(den > 0, (tp * tn - fp * fn) / np.where(den > 0, den, 1.0), 0.0)
    return {"accuracy": float(acc), "kappa": float(kappa), "macro_f1": macro_f1, "mcc": float(mcc),
            "macro_mcc": float(per_class[present].mean())}


# ----- multi-label ---------------------------------------------------------------------------------------------
def multilabel_measures(Y: np.ndarray, P: np.ndarray, threshold: float = 0.5) -> dict:
    """The MLC/HMLC measures of the module sketch.

    Parameters
    ----------
    Y : ndarray (n, L)
        True labels, 0/1 (NaN = unknown).
    P : ndarray (n, L)
        Predicted probabilities in [0, 1]; the predicted label set is ``P >= threshold``.
    threshold : float

    Returns
    -------
    dict
        ``micro_f1``, ``macro_f1``, ``hamming``, ``ml_accuracy``, ``subset_accuracy``, ``pooled_auprc``,
        ``pooled_ap``.
    """
    Y = np.asarray(Y, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    known = ~np.isnan(Y)
    truth = np.where(known, Y, 0.0) > 0.5
    pred = (P >= threshold) & known
    tp_l = (truth & pred).sum(axis=0).astype(np.float64)
    fp_l = (~truth & pred).sum(axis=0).astype(np.float64)
    fn_l = (truth & ~pred & known).sum(axis=0).astype(np.float64)
    tp, fp, fn = tp_l.sum(), fp_l.sum(), fn_l.sum()
    micro = 2 * tp / (2 * tp + fp + fn) if (2 * tp + fp + fn) > 0 else 0.0
    den = 2 * tp_l + fp_l + fn_l
    macro = float(np.mean(np.where(den > 0, 2 * tp_l / np.where(den > 0, den, 1.0), 0.0))) if Y.shape[1] else 0.0
    n_known = known.sum()
    hamming = float((fp + fn) / n_known) if n_known else float("nan")
    rows = known.any(axis=1)
    inter = (truth & pred).sum(axis=1)
    union = (truth | pred).sum(axis=1)
    jacc = np.where(union > 0, inter / np.where(union > 0, union, 1), 1.0)
    exact = ((truth == pred) | ~known).all(axis=1)
    v = truth[known]
    s = P[known]
    return {"micro_f1": float(micro), "macro_f1": macro, "hamming": hamming,
            "ml_accuracy": float(jacc[rows].mean()) if rows.any() else float("nan"),
            "subset_accuracy": float(exact[rows].mean()) if rows.any() else float("nan"),
            "pooled_auprc": pr_area(v, s, "interpolated"), "pooled_ap": pr_area(v, s, "step")}


def pr_points(truth: np.ndarray, scores: np.ndarray) -> tuple:
    """Cumulative (tp, fp) at every distinct score, highest first (the points of the PR curve), and the positives.

    Returns
    -------
    (tp, fp, n_positive) : (ndarray int64, ndarray int64, int)
    """
    v = np.asarray(truth).ravel().astype(bool)
    s = np.asarray(scores, dtype=np.float64).ravel()
    order = np.argsort(-s, kind="stable")
    s, v = s[order], v[order]
    last = np.r_[np.flatnonzero(np.diff(s) != 0), s.size - 1] if s.size else np.empty(0, np.int64)
    tp = np.cumsum(v)[last]
    fp = np.cumsum(~v)[last]
    return tp.astype(np.int64), fp.astype(np.int64), int(v.sum())


def pr_area(truth: np.ndarray, scores: np.ndarray, method: str = "interpolated") -> float:
    """The area under the precision-recall curve of pooled (truth, score) pairs (module sketch).

    Parameters
    ----------
    truth : array-like of bool
    scores : array-like of float
    method : {'interpolated', 'step', 'trapezoid'}
        CLUS's (Davis and Goadrich interpolation), scikit-learn's ``average_precision_score``, or scikit-learn's
        ``auc(recall, precision)`` of ``precision_recall_curve``.

    Returns
    -------
    float
        NaN when there is no positive pair.
    """
    tp, fp, n_pos = pr_points(truth, scores)
    if n_pos == 0:
        return float("nan")
    prec = tp / (tp + fp)
    rec = tp / n_pos
    if method == "step":
        return float(np.sum(np.diff(np.r_[0.0, rec]) * prec))
    if method == "trapezoid":
        r = np.r_[0.0, rec]
        p = np.r_[1.0, prec]
        return float(np.sum(np.diff(r) * (p[1:] + p[:-1]) / 2.0))
    if method != "interpolated":
        raise ValueError(f"unknown PR area method {method!r}")
    return _interpolated_area(tp, fp, n_pos)


def _interpolated_area(tp: np.ndarray, fp: np.ndarray, n_pos: int) -> float:
    """CLUS's area: the first point extended to recall 0; between the points of consecutive thresholds, a point
    for every integer tp with fp interpolated linearly; trapezoids (``ROCAndPRCurve``)."""
    keep = (tp + fp) > 0
    tp, fp = tp[keep].astype(np.float64), fp[keep].astype(np.float64)
    if tp.size == 0:
        return 0.0
    area = 0.0
    prev_r, prev_p = 0.0, tp[0] / (tp[0] + fp[0])  # the extension to recall 0
    for i in range(tp.size):
        if i > 0 and tp[i] - tp[i - 1] > 1:
            x = np.arange(tp[i - 1] + 1, tp[i])
            f = fp[i - 1] + (fp[i] - fp[i - 1]) / (tp[i] - tp[i - 1]) * (x - tp[i - 1])
            r = np.r_[prev_r, x / n_pos]
            p = np.r_[prev_p, x / (x + f)]
            area += float(np.sum(np.diff(r) * (p[1:] + p[:-1]) / 2.0))
            prev_r, prev_p = r[-1], p[-1]
        r_i, p_i = tp[i] / n_pos, tp[i] / (tp[i] + fp[i])
        area += (r_i - prev_r) * (p_i + prev_p) / 2.0
        prev_r, prev_p = r_i, p_i
    return float(area)


# ----- unsupervised -------------------------------------------------------------------------------------------
def feature_mse(X: np.ndarray, P: np.ndarray, nominal: np.ndarray) -> float:
    """Mean squared error of predicted feature values over the known cells of ``X`` (nominal: 0/1 mismatch)."""
    X = np.asarray(X, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    known = ~np.isnan(X) & ~np.isnan(P)
    err = np.where(np.asarray(nominal, bool)[None, :], (X != P).astype(np.float64), (X - P) ** 2)
    n = known.sum()
    return float(np.where(known, err, 0.0).sum() / n) if n else float("nan")
