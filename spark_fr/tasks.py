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


# ----------------------------------------------------------------------------------------------------------
# Relief: target distances
# ----------------------------------------------------------------------------------------------------------
HMLC_NORMALISERS = ("data", "hierarchy", "sum")
MLC_DISTANCES = ("hamming", "jaccard", "f1", "subset")


@dataclass
class ReliefTarget:
    """How Relief measures the distance between the targets of two rows (one definition per task).

    Attributes
    ----------
    kind : int
        Target distance code of :mod:`spark_fr.relief.kernels` (``T_*``).
    values : ndarray (n, T')
        Target matrix the distance reads: targets scaled to [0, 1] by their training range (regression,
        MTR), the class index (classification), 0/1 labels (MLC, HMLC; NaN = missing).
    weights : ndarray (T',)
        Label weights (HMLC), ones otherwise.
    norm : float
        HMLC: the normaliser of the hierarchical distance (``hmlc_normaliser`` of :func:`relief_target`); classification: the number of classes (for a missing class, d = 1 - 1/C); else 1.
    n_classes : int
        > 0 selects the ReliefF form (supervised classification); 0 the RReliefF form.
    classes : ndarray (n,) or None
        Class index per row (ReliefF).
    priors : ndarray (C,)
        Class frequencies among rows with a known class (ReliefF).
    per_target_kinds : ndarray (T,)
        Distance code of each single target, for per-target rankings (MTR: numeric, MLC: label mismatch).
    """

    kind: int
    values: np.ndarray
    weights: np.ndarray
    norm: float = 1.0
    n_classes: int = 0
    classes: np.ndarray | None = None
    priors: np.ndarray = field(default_factory=lambda: np.ones(1))
    per_target_kinds: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))


@dataclass
class TargetSummary:
    """What a Relief target distance needs from the whole training set; merges exactly, in any order.

    Attributes
    ----------
    lo, hi : ndarray (T,)
        Smallest and largest known value of each target column (regression, MTR scaling).
    class_counts : ndarray (C,)
        Rows per class (classification priors).
    finals : set of int
        Labels that are the most specific label of some row (HMLC normaliser).
    """

    lo: np.ndarray
    hi: np.ndarray
    class_counts: np.ndarray
    finals: set

    def merge(self, other: "TargetSummary") -> "TargetSummary":
        self.lo = np.fmin(self.lo, other.lo)
        self.hi = np.fmax(self.hi, other.hi)
        self.class_counts = self.class_counts + other.class_counts
        self.finals = self.finals | other.finals
        return self


def summarize_targets(task: str, Y: np.ndarray, hierarchy=None, n_classes: int = 0) -> TargetSummary:
    """The :class:`TargetSummary` of some rows (a block, or all of them)."""
    Y = np.asarray(Y, dtype=np.float64)
    T = Y.shape[1]
    with np.errstate(all="ignore"):
        known = ~np.isnan(Y)
        lo = np.where(known.any(axis=0), np.nanmin(np.where(known, Y, np.inf), axis=0), np.inf) if Y.size else \
            np.full(T, np.inf)
        hi = np.where(known.any(axis=0), np.nanmax(np.where(known, Y, -np.inf), axis=0), -np.inf) if Y.size else \
            np.full(T, -np.inf)
    counts = np.zeros(max(n_classes, 0))
    if task == "classification" and n_classes and Y.size:
        y = Y[:, 0]
        counts = np.bincount(y[~np.isnan(y)].astype(np.int64), minlength=n_classes).astype(np.float64)
    finals = set()
    if task == "hmlc" and hierarchy is not None and Y.size:
        rows = ~np.isnan(Y).any(axis=1)
        if rows.any():
            finals = set(int(i) for i in hierarchy.final_labels(Y[rows]))
    return TargetSummary(lo, hi, counts, finals)


def relief_target(task: str, Y: np.ndarray, *, mlc_distance: str = "f1", hierarchy=None, w0: float = 0.75,
                  hmlc_squared: bool = False, hmlc_normaliser: str = "data", semi_supervised: bool = False,
                  n_classes: int | None = None, summary: TargetSummary | None = None) -> ReliefTarget:
    """The Relief target distance of a task.

    * classification: ReliefF with class priors and k hits and k misses per class (Kononenko); in
      semi-supervised runs the RReliefF form with the class mismatch as d_Y (the thesis' SSL-Relief);
    * regression and MTR: the mean over targets of |y1 - y2| / range (RReliefF; MTR-Relief);
    * MLC: ``mlc_distance`` in hamming (|S1 ^ S2| / L), jaccard (1 - |S1 & S2| / |S1 | S2|, 0 for two
      empty sets), f1 (1 - 2 |S1 & S2| / (|S1| + |S2|), the thesis' recommendation and the default) or
      subset (1[S1 != S2]); a missing label counts as present with probability 1/2, as in CLUS;
    * HMLC: the weighted Euclidean distance ``sqrt(sum_j w_j (s1_j - s2_j)^2)`` with the hierarchy weights
      ``w(l) = w0 * mean(w(parents))``, divided by a normaliser: ``hmlc_normaliser='data'`` (default) its
      largest value between the closures of two labels that are the most specific label of some training
      row, 'hierarchy' the same over all labels of the hierarchy (the thesis), 'sum' the distance between
      all labels and none (``sqrt(sum_j w_j)``, a bound that holds for any two rows). Trees take one O(L)
      pass, DAGs a blockwise pairwise computation. ``hmlc_squared`` drops the square root, as CLUS does;
    * unsupervised: d_Y = d_X, the descriptive distance (URelief).

    Parameters
    ----------
    task : str
    Y : ndarray (n, T)
        Raw targets (class index, numbers, 0/1 labels; the HMLC label matrix) of the rows to encode.
    mlc_distance : str
    hierarchy : spark_fr.hierarchy.Hierarchy, optional
    w0 : float
    hmlc_squared : bool
    hmlc_normaliser : {'data', 'hierarchy', 'sum'}
    semi_supervised : bool
    n_classes : int, optional
        Number of classes (classification).
    summary : TargetSummary, optional
        Statistics of the whole training set (default: computed from ``Y``); given when ``Y`` is one block
        of a larger data set (tall mode), so every block is encoded the same way.

    Returns
    -------
    ReliefTarget
    """
    from .relief import kernels as K

    Y = np.asarray(Y, dtype=np.float64)
    T = Y.shape[1] if Y.ndim == 2 else 0
    if task == "unsupervised":
        return ReliefTarget(K.T_DESCRIPTIVE, np.zeros((Y.shape[0], 1)), np.ones(1))
    if task == "classification":
        C = int(n_classes if n_classes is not None else np.nanmax(Y[:, 0]) + 1)
        summary = summary or summarize_targets(task, Y, n_classes=C)
        priors = summary.class_counts / max(summary.class_counts.sum(), 1)
        return ReliefTarget(K.T_CLASS, Y[:, :1].copy(), np.ones(1), float(C), 0 if semi_supervised else C,
                            Y[:, 0].copy(), priors, np.array([K.T_CLASS], np.int64))
    summary = summary or summarize_targets(task, Y, hierarchy)
    if task in ("regression", "mtr"):
        rng = summary.hi - summary.lo
        scaled = (Y - summary.lo) / np.where(rng > 0, rng, 1.0)
        return ReliefTarget(K.T_NUMERIC, scaled, np.ones(T), 1.0,
                            per_target_kinds=np.full(T, K.T_NUMERIC, np.int64))
    if task == "mlc":
        if mlc_distance not in MLC_DISTANCES:
            raise TaskError(f"--relief-target-distance must be one of {', '.join(MLC_DISTANCES)}, "
                            f"not '{mlc_distance}'")
        kind = {"hamming": K.T_HAMMING, "jaccard": K.T_JACCARD, "f1": K.T_F1, "subset": K.T_SUBSET}[mlc_distance]
        return ReliefTarget(kind, Y.copy(), np.ones(T), 1.0, per_target_kinds=np.full(T, K.T_HAMMING, np.int64))
    if task == "hmlc":
        if hierarchy is None:
            raise TaskError("HMLC needs a label hierarchy")
        w = np.asarray(hierarchy.weights(w0), np.float64)
        if hmlc_normaliser not in HMLC_NORMALISERS:
            raise TaskError(f"--relief-hmlc-normaliser must be one of {', '.join(HMLC_NORMALISERS)}, "
                            f"not '{hmlc_normaliser}'")
        if hmlc_normaliser == "sum":
            norm = float(w.sum()) if hmlc_squared else float(np.sqrt(w.sum()))
        else:
            labels = sorted(summary.finals) if hmlc_normaliser == "data" else range(len(hierarchy.labels))
            norm = hierarchy.max_pair_distance(labels, w, squared=hmlc_squared)
        kind = K.T_HMLC_SQUARED if hmlc_squared else K.T_HMLC
        return ReliefTarget(kind, Y.copy(), w, float(norm) if norm > 0 else 1.0)
    raise TaskError(f"unknown task '{task}' for Relief")


def relief_target_distance_reference(target: ReliefTarget, a: int, b: int) -> float:
    """Slow reference of d_Y between rows a and b (plain Python; used by the tests)."""
    from .relief import kernels as K

    ya, yb = target.values[a], target.values[b]

    def num(u, v):
        if np.isnan(u) and np.isnan(v):
            return 1.0
        if np.isnan(u) or np.isnan(v):
            t = v if np.isnan(u) else u
            return max(t, 1 - t)
        return abs(u - v)

    if target.kind == K.T_NUMERIC:
        return float(np.mean([num(u, v) for u, v in zip(ya, yb)]))
    if target.kind == K.T_CLASS:
        if np.isnan(ya[0]) or np.isnan(yb[0]):
            return 1 - 1 / target.norm
        return float(ya[0] != yb[0])
    if target.kind == K.T_HAMMING:
        return float(np.mean([0.5 if np.isnan(u) or np.isnan(v) else float(u != v) for u, v in zip(ya, yb)]))
    if target.kind in (K.T_JACCARD, K.T_F1):
        pa = np.where(np.isnan(ya), 0.5, ya)
        pb = np.where(np.isnan(yb), 0.5, yb)
        inter = float(np.sum(pa * pb))
        if target.kind == K.T_JACCARD:
            union = float(np.sum(pa + pb - pa * pb))
            return 1 - inter / union if union > 1e-9 else 0.0
        tot = float(np.sum(pa + pb))
        return 1 - 2 * inter / tot if tot > 1e-9 else 0.0
    if target.kind == K.T_SUBSET:
        if any((not np.isnan(u)) and (not np.isnan(v)) and u != v for u, v in zip(ya, yb)):
            return 1.0
        return 1 - 0.5 ** int(np.sum(np.isnan(ya) | np.isnan(yb)))
    if target.kind in (K.T_HMLC, K.T_HMLC_SQUARED):
        s = float(np.sum(target.weights * (ya - yb) ** 2))
        return (np.sqrt(s) if target.kind == K.T_HMLC else s) / target.norm
    raise ValueError(target.kind)
