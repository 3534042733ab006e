"""Target types: the one place where a task's impurity, prototype, error and distance are defined.

Sketch
------
Every task turns its raw target matrix ``Y`` (n x T, float64; NaN = missing; a nominal target holds its
category index, a label its 0/1 value) into:

* a **clustering matrix** ``Z`` (n x K) and column weights ``alpha`` such that the task impurity is the
  weighted sum of per-column variances, ``impu(E) = sum_k alpha_k Var(E, z_k)`` (variances over the rows
  where z_k is known). ``Z`` is handed to the tree grower already centred and multiplied by
  ``sqrt(alpha_k)``, so the grower only sums squares (see :mod:`spark_fr.pct.grow`):

  - classification: one 0/1 column per class, alpha = 1: sum_c Var(1[y = c]) = 1 - sum_c p_c^2 = Gini;
  - regression and MTR: alpha_j = 1 / (T * Var(E_train, y_j)), the scale-free MTR impurity;
  - MLC: the 0/1 label columns with alpha_j = 1 / (L * Var(E_train, l_j)) (per-label Gini / 2, normalised).

  A target (column) that is constant on the training set has Var = 0; its weight is set to 0 (it can't be
  improved) and the run logs it.
* **prototypes** (the values a leaf stores, averaged over its training rows) and **predictions** from
  them: the mean vector (regression, MTR), the class distribution and its arg-max (classification; ties
  go to the lower class index), the label probabilities thresholded at ``p >= 0.5`` (MLC).
* **per-target errors** of predictions; the task error (used by the Random-Forest permutation score) is
  their mean: relative MSE ``MSE_j / Var(E_train, y_j)`` averaged over targets (no square root: the
  thesis leaves it open, MSE keeps the link with the variance heuristic), the misclassification rate, the
  Hamming loss (mean over labels of the per-label error rate). Errors use only rows whose target is known.
* ``per_target_scale``: per-target Genie3 = scale_j * (sum of the reductions of the columns of target j).
  With it the joint Genie3 is the mean of the per-target ones (MTR, MLC).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

log = logging.getLogger(__name__)

TASK_NAMES = ("classification", "regression", "mtr", "mlc")


class TaskError(ValueError):
    """A target that cannot be used for the requested task (one-line message naming the column)."""


@dataclass
class FittedTask:
    """A task fitted to the training targets (training variances, classes), ready for the kernels.

    Attributes
    ----------
    name : str
        Task name (one of :data:`TASK_NAMES`).
    target_names : list of str
        One name per target (label, for MLC).
    center : ndarray (K,)
        Training mean of each clustering column.
    alpha : ndarray (K,)
        Impurity weight of each clustering column.
    column_target : ndarray of int (K,)
        Target index of each clustering column.
    per_target_scale : ndarray (T,)
        Scale that turns the summed column reductions of a target into its per-target Genie3 score.
    classes : list of str or None
        Class names (classification).
    train_variance : ndarray (T,)
        Training variance of each numeric target / label (ones for classification).
    """

    name: str
    target_names: list
    center: np.ndarray
    alpha: np.ndarray
    column_target: np.ndarray
    per_target_scale: np.ndarray
    train_variance: np.ndarray
    classes: list | None = None
    constant_targets: list = field(default_factory=list)

    # ----- impurity ---------------------------------------------------------------------------------
    def raw_columns(self, Y: np.ndarray) -> np.ndarray:
        """Unscaled clustering columns (one-hot classes, or the targets themselves), NaN = missing."""
        Y = np.asarray(Y, dtype=np.float64)
        if self.name == "classification":
            y = Y[:, 0]
            known = ~np.isnan(y)
            onehot = np.full((Y.shape[0], len(self.classes)), np.nan)
            onehot[known] = 0.0
            idx = np.flatnonzero(known)
            onehot[idx, y[known].astype(np.int64)] = 1.0
            return onehot
        return Y.copy()

    def clustering_matrix(self, Y: np.ndarray) -> np.ndarray:
        """``Z = (columns - center) * sqrt(alpha)``: the grower's input (NaN = missing)."""
        return (self.raw_columns(Y) - self.center) * np.sqrt(self.alpha)

    def impurity(self, Y: np.ndarray, weights: np.ndarray | None = None) -> float:
        """Task impurity ``sum_k alpha_k Var_w(E, z_k)`` of a set of rows (reference definition).

        Parameters
        ----------
        Y : ndarray (m, T)
            Raw targets of the rows.
        weights : ndarray (m,), optional
            Row weights (bootstrap counts); default 1.

        Returns
        -------
        float
        """
        C = self.raw_columns(Y)
        w = np.ones(C.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
        total = 0.0
        for k in range(C.shape[1]):
            known = ~np.isnan(C[:, k])
            wk = w[known]
            if wk.sum() <= 0:
                continue
            mean = np.average(C[known, k], weights=wk)
            total += self.alpha[k] * np.average((C[known, k] - mean) ** 2, weights=wk)
        return float(total)

    # ----- prototypes, predictions, errors -------------------------------------------------------------
    def prototype_columns(self, Y: np.ndarray) -> np.ndarray:
        """Columns averaged in a leaf: class indicators, targets or labels (NaN = missing)."""
        return self.raw_columns(Y)

    def default_prototype(self) -> np.ndarray:
        """Prototype of the training set (used for leaves without known values in a column)."""
        return self.center.copy()

    def predict(self, prototypes: np.ndarray) -> np.ndarray:
        """Predictions (m, T) from prototypes (m, P): class index, target values or 0/1 labels."""
        if self.name == "classification":
            return np.argmax(prototypes, axis=1).astype(np.float64)[:, None]
        if self.name == "mlc":
            return (prototypes >= 0.5).astype(np.float64)
        return prototypes

    def elementwise_errors(self, Y: np.ndarray, pred: np.ndarray) -> np.ndarray:
        """Error of every (row, target) pair: squared error (regression, MTR) or 0/1 mistake; 0 if unknown."""
        Y = np.asarray(Y, dtype=np.float64)
        known = ~np.isnan(Y)
        if self.name in ("regression", "mtr"):
            return np.where(known, (Y - pred) ** 2, 0.0)
        return np.where(known, Y != pred, False).astype(np.float64)

    def errors_from_sums(self, sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Per-target errors from summed elementwise errors and counts of known values (NaN if none)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(counts > 0, sums / np.where(counts > 0, counts, 1), np.nan)
        if self.name in ("regression", "mtr"):
            var = self.train_variance
            return np.where(var > 0, mean / np.where(var > 0, var, 1.0), 0.0)
        return mean

    def target_errors(self, Y: np.ndarray, pred: np.ndarray) -> np.ndarray:
        """Per-target errors (T,) of predictions on rows with known targets (NaN when none is known).

        Relative MSE ``MSE_j / Var(E_train, y_j)`` for regression and MTR, the error rate of the class or
        of each label otherwise.
        """
        e = self.elementwise_errors(Y, pred)
        counts = (~np.isnan(np.asarray(Y, dtype=np.float64))).sum(axis=0)
        return self.errors_from_sums(e.sum(axis=0), counts)

    def error(self, Y: np.ndarray, pred: np.ndarray) -> float:
        """Task error: the mean of the per-target errors over targets with known values."""
        e = self.target_errors(Y, pred)
        e = e[~np.isnan(e)]
        return float(e.mean()) if e.size else float("nan")

    @staticmethod
    def error_floor(n_rows: int, n_targets: int = 1) -> float:
        """Smallest error a relative increase is divided by: one unit mistake among ``n_rows`` rows.

        A tree whose out-of-bag error is exactly 0 would make the relative increase undefined; dividing
        by this floor instead keeps the score finite and of the right sign.
        """
        return 1.0 / (max(n_rows, 1) * max(n_targets, 1))


def fit_task(name: str, Y: np.ndarray, target_names: list, classes: list | None = None) -> FittedTask:
    """Fit a task to its training targets.

    Parameters
    ----------
    name : str
        One of :data:`TASK_NAMES`.
    Y : ndarray (n, T)
        Raw targets (NaN = missing; class index for classification; 0/1 for MLC).
    target_names : list of str
        Target (label) names.
    classes : list of str, optional
        Class names (classification).

    Returns
    -------
    FittedTask

    Raises
    ------
    TaskError
        If a target has no known value, a classification target has a single class, or every target
        is constant.
    """
    if name not in TASK_NAMES:
        raise TaskError(f"unknown task '{name}'; expected one of {', '.join(TASK_NAMES)}")
    Y = np.asarray(Y, dtype=np.float64)
    T = Y.shape[1]
    for j, tname in enumerate(target_names):
        if not np.any(~np.isnan(Y[:, j])):
            raise TaskError(f"target column '{tname}' has no known values")
    if name == "classification":
        if T != 1:
            raise TaskError("classification takes exactly one nominal target")
        y = Y[:, 0]
        present = np.unique(y[~np.isnan(y)]).astype(np.int64)
        if present.size < 2:
            only = classes[present[0]] if classes else str(present[0])
            raise TaskError(f"target column '{target_names[0]}' has a single class '{only}'; "
                            f"classification needs at least two")
        ft = FittedTask(name, list(target_names), np.zeros(len(classes)), np.ones(len(classes)),
                        np.zeros(len(classes), dtype=np.int64), np.ones(1), np.ones(1), list(classes))
        cols = ft.raw_columns(Y)
        ft.center = np.nanmean(cols, axis=0)
        return ft
    if name == "regression" and T != 1:
        raise TaskError("regression takes exactly one numeric target; use --task mtr for several")
    center = np.nanmean(Y, axis=0)
    var = np.nanvar(Y, axis=0)
    constant = [target_names[j] for j in range(T) if not var[j] > 0]
    if len(constant) == T:
        what = f"target column '{constant[0]}' is constant" if T == 1 else "every target column is constant"
        raise TaskError(f"{what}; there is nothing to rank features against")
    if constant:
        log.warning("constant target(s) get weight 0 and cannot influence the ranking: %s",
                    ", ".join(constant))
    alpha = np.where(var > 0, 1.0 / (T * np.where(var > 0, var, 1.0)), 0.0)
    return FittedTask(name, list(target_names), center, alpha, np.arange(T), np.full(T, float(T)), var,
                      None, constant)


def infer_task(target_kinds: list, target_domains: list, labels_xml: bool = False) -> str:
    """Infer the task from the targets (``--task auto``).

    One nominal target = classification; one numeric = regression; several numeric = MTR;
    a Mulan label file or several {0,1} targets = MLC.

    Parameters
    ----------
    target_kinds : list of str
        'numeric' or 'nominal' per target.
    target_domains : list
        For nominal targets the category names; for numeric targets the set of observed values if it
        has at most two elements, else None.
    labels_xml : bool
        Whether the targets came from a Mulan label file.

    Returns
    -------
    str
    """
    if labels_xml:
        return "mlc"
    T = len(target_kinds)
    if T == 0:
        raise TaskError("no target column: pass --targets (or --task unsupervised)")

    def binary(kind, dom):
        if dom is None:
            return False
        try:
            return set(float(v) for v in dom) <= {0.0, 1.0}
        except (TypeError, ValueError):
            return False

    if T == 1:
        return "classification" if target_kinds[0] == "nominal" else "regression"
    if all(binary(k, d) for k, d in zip(target_kinds, target_domains)):
        return "mlc"
    if all(k == "numeric" for k in target_kinds):
        return "mtr"
    raise TaskError("several targets that are not all numeric or all {0,1} labels: choose --task "
                    "explicitly (multi-target classification is not supported)")
