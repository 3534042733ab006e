"""The protocol of a target type, and what every type shares (no Spark).

Sketch
------
A target type (one module each under :mod:`spark_fr.tasks`, listed in :mod:`spark_fr.tasks.registry`)
answers every question the rest of the library asks about targets:

* **schema**: does it claim a set of target columns when the task is inferred (``claims``), and can the
  columns be its targets at all (``check``: a one-line :class:`TaskError` naming the column otherwise);
* **encoding**: how the raw values of the target columns of a batch become the target matrix ``Y``
  (``encoder``: numbers, class indices, 0/1 labels, the ancestor-closed label matrix);
* **ensembles**: ``fit`` returns a :class:`FittedTask`: a clustering matrix ``Z`` (n x K) such that the
  task impurity is the sum of per-column variances of ``Z``; prototypes, predictions and errors (the RF
  score), with the error floor;
* **Relief**: the target summary of the training rows (``summarize``: mergeable, so tall mode can build it
  block by block) and the :class:`ReliefTarget`, i.e. which target distance (:mod:`spark_fr.tasks.distances`)
  on which matrix;
* which methods support the type (``methods``), and whether it has targets at all (``supervised``).

``Y`` is always n x T float64 with NaN for a missing value: a class index for classification, a number for
regression, 0/1 for a label. Nothing outside :mod:`spark_fr.tasks` branches on the task's name.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from ..runtime.exact import exact_sum
from .measures import RRMSE, Measure
from .moments import ColumnMoments, PartialSums, first_mean, partial_sums, value_ranges
from .moments import column_moments  # noqa: F401 (callers and tests find it here, as before the split)
from .sparse_columns import SparseLabels

#: label-sparse targets are fitted a block of columns at a time, about this many values per block
MOMENT_BLOCK_VALUES = 1 << 22

log = logging.getLogger(__name__)


class TaskError(ValueError):
    """A target that cannot be used for the requested task (one-line message naming the column)."""


@dataclass
class TargetColumn:
    """What is known about one target column before encoding (from its type and the statistics pass).

    Attributes
    ----------
    name : str
    kind : {'numeric', 'nominal', 'hierarchical'}
    categories : list of str or None
        Nominal columns: the declared categories (ARFF), else the observed ones, sorted.
    distinct : ndarray or None
        Numeric columns: the distinct known values when there are at most 255, else None.
    n_known : int
        Rows with a known value.
    vmin, vmax : float
        Smallest and largest known numeric value.
    counts : dict
        Nominal columns: rows per observed category.
    """

    name: str
    kind: str
    categories: list | None = None
    distinct: np.ndarray | None = None
    n_known: int = 0
    vmin: float = np.inf
    vmax: float = -np.inf
    counts: dict = field(default_factory=dict)

    @property
    def values(self) -> list | None:
        """The column's domain as far as it is known: categories, or distinct numbers (None if too many)."""
        if self.kind == "nominal":
            return list(self.categories or [])
        return None if self.distinct is None else list(self.distinct)

    def is_binary(self) -> bool:
        """Whether every value is 0 or 1 (a label column)."""
        vals = self.values
        if vals is None:
            return False
        try:
            return set(float(v) for v in vals) <= {0.0, 1.0}
        except (TypeError, ValueError):
            return False

    def shown_values(self, limit: int = 4) -> str:
        """A few of the values, for messages."""
        vals = self.values
        if vals is None:
            return f"more than 255 distinct values between {self.vmin:g} and {self.vmax:g}"
        shown = ", ".join(f"'{v}'" if isinstance(v, str) else f"{v:g}" for v in vals[:limit])
        return shown + (", ..." if len(vals) > limit else "")


class TargetEncoder:
    """Turns the raw target columns of a batch into ``Y`` (shipped to Spark tasks; NumPy only).

    The data layer extracts each target column by its kind: a float array for numeric columns, a float
    array of indices into ``categories[j]`` for nominal ones, a list of strings for hierarchical ones.

    Attributes
    ----------
    names : list of str
        Target names of the columns of ``Y`` (the labels of a hierarchy for HMLC).
    categories : list
        Per target column, the category list used to index a nominal column (None otherwise).
    classes : list of str or None
        Class names (classification).
    """

    def __init__(self, names: list, categories: list, classes: list | None = None):
        self.names = list(names)
        self.categories = list(categories)
        self.classes = classes

    def encode(self, columns: list, n_rows: int) -> np.ndarray:
        """``Y`` (n_rows x T) from the extracted columns (default: each column as it is)."""
        if not columns:
            return np.empty((n_rows, 0))
        return np.hstack([np.asarray(c, dtype=np.float64)[:, None] for c in columns])

    def stored_columns(self) -> float:
        """About how many dense float64 columns a row's targets cost in the ensembles' data (for the choice
        between broadcast and partitioned mode): every column here."""
        return float(len(self.names))

    @property
    def compact_form(self) -> str:
        """What :meth:`encode_compact` returns: 'dense' here (HMLC: 'label_sets' for many labels)."""
        return "dense"

    def encode_compact(self, columns: list, n_rows: int):
        """:meth:`encode` in the form the ensembles keep (default: the same; HMLC: :class:`SparseLabels`
        when the hierarchy has many labels, never dense). Row keys hash both forms alike."""
        return self.encode(columns, n_rows)

    def label_weights(self, w0: float) -> np.ndarray | None:
        """Weights of the columns of ``Y`` in the task's impurity and error (HMLC: the hierarchy weights
        ``w(l) = w0 * mean(w(parents))``); None: all columns weigh the same."""
        return None


@dataclass
class ReliefTarget:
    """How Relief measures the distance between the targets of two rows (built by a target type).

    Attributes
    ----------
    kind : int
        Target distance code of :mod:`spark_fr.tasks.distances` (``T_*``).
    values : ndarray (n, T')
        Target matrix the distance reads: targets scaled to [0, 1] by their training range (regression,
        MTR), the class index (classification), 0/1 labels (MLC, HMLC; NaN = missing).
    weights : ndarray (T',)
        Label weights (HMLC), ones otherwise.
    norm : float
        HMLC: the normaliser of the hierarchical distance; classification: the number of classes (for a
        missing class, d = 1 - 1/C); else 1.
    n_classes : int
        > 0 selects the ReliefF form (supervised classification); 0 the RReliefF form.
    classes : ndarray (n,) or None
        Class index per row (ReliefF).
    priors : ndarray (C,)
        Class frequencies among rows with a known class (ReliefF).
    per_target_kinds : ndarray (T,)
        Distance code of each single target, for per-target rankings (empty: no per-target ranking).
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


@dataclass
class FittedTask:
    """A task fitted to the training targets (training variances, classes), ready for the tree kernels.

    The base class is the numeric form (regression, MTR, labels); target types override what differs.

    Attributes
    ----------
    name : str
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
    train_variance : ndarray (T,)
        Training variance of each numeric target / label (ones for classification).
    classes : list of str or None
        Class names (classification).
    constant_targets : list of str
    scale : ndarray (T,) or None
        Power-of-two factors applied to the raw targets (:meth:`targets`) so that their squares cannot
        overflow; None when no column needs one.
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
    scale: np.ndarray | None = None

    # ----- the targets the kernels see ---------------------------------------------------------------
    def targets(self, Y: np.ndarray) -> np.ndarray:
        """The raw targets in the units of the fitted task (scaled by :attr:`scale` when it is set)."""
        if isinstance(Y, SparseLabels):  # labels: never scaled
            return Y
        Y = np.asarray(Y, dtype=np.float64)
        return Y if self.scale is None else Y * self.scale

    # ----- impurity ---------------------------------------------------------------------------------
    def raw_columns(self, Y: np.ndarray) -> np.ndarray:
        """Unscaled clustering columns (the targets themselves here), NaN = missing."""
        return np.asarray(Y, dtype=np.float64).copy()

    def clustering_matrix(self, Y: np.ndarray) -> np.ndarray:
        """``Z = (columns - center) * sqrt(alpha)``: the grower's input (NaN = missing)."""
        return (self.raw_columns(Y) - self.center) * np.sqrt(self.alpha)

    def clustering_input(self, Y: np.ndarray):
        """What the grower clusters on: the clustering matrix, C-contiguous (a task with wide, label-sparse
        columns returns :class:`~spark_fr.tasks.sparse_columns.SparseColumns` instead)."""
        return np.ascontiguousarray(self.clustering_matrix(Y))

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
        """Predictions (m, T) from prototypes (m, P): the prototype itself (the mean vector) here."""
        return prototypes

    def elementwise_errors(self, Y: np.ndarray, pred: np.ndarray) -> np.ndarray:
        """Error of every (row, target) pair: the squared error here; 0 where the target is unknown."""
        Y = np.asarray(Y, dtype=np.float64)
        known = ~np.isnan(Y)
        return np.where(known, (Y - pred) ** 2, 0.0)

    def errors_from_sums(self, sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Per-target errors from summed elementwise errors and counts of known values (NaN if none).

        Here the relative MSE ``MSE_j / Var(E_train, y_j)`` (0 for a constant target).
        """
        mean = mean_known(sums, counts)
        var = self.train_variance
        return np.where(var > 0, mean / np.where(var > 0, var, 1.0), 0.0)

    def target_errors(self, Y: np.ndarray, pred: np.ndarray) -> np.ndarray:
        """Per-target errors (T,) of predictions on rows with known targets (NaN when none is known)."""
        e = self.elementwise_errors(Y, pred)
        counts = (~np.isnan(np.asarray(Y, dtype=np.float64))).sum(axis=0)
        return self.errors_from_sums(e.sum(axis=0), counts)

    def combine(self, errors: np.ndarray) -> float:
        """The task error from the per-target errors of :meth:`errors_from_sums`: here their mean over the
        targets with known values (NaN when none is known)."""
        e = np.asarray(errors, dtype=np.float64)
        e = e[~np.isnan(e)]
        return float(e.mean()) if e.size else float("nan")

    def error(self, Y: np.ndarray, pred: np.ndarray) -> float:
        """Task error (:meth:`combine` of the per-target errors)."""
        return self.combine(self.target_errors(Y, pred))

    @property
    def n_targets(self) -> int:
        """Targets reported per target (the first columns of ``Y`` and of the per-target errors)."""
        return len(self.target_names)

    def default_errors(self) -> np.ndarray:
        """Per-target error of the default model (the training prototype for every row) on the training set:
        1 for the relative MSE of the mean here (0 for a constant target). Semi-supervised errors are relative
        to it (the thesis' alpha_j of the SSL error)."""
        return np.where(self.train_variance > 0, 1.0, 0.0)

    def normalised_scale(self) -> float:
        """Factor that makes the task impurity the thesis' normalised one (each single-target impurity divided
        by its training value; SSL mixes it with the descriptive part): 1 here, the impurity already is."""
        return 1.0

    def predictive_measure(self) -> Measure:
        """The measure ``--cv-folds`` scores held-out predictions with (:mod:`spark_fr.tasks.measures`): RRMSE
        (the RMSE relative to the training mean, averaged over the targets) here."""
        return RRMSE()

    def boosting_loss(self):
        """The loss gradient boosting minimises for this task (:mod:`spark_fr.tasks.losses`): the squared
        error of the single numeric target here."""
        from .losses import SquaredLoss

        if self.n_targets != 1:
            raise TaskError("--method boosting takes one target (a class or a number)")
        return SquaredLoss(self.target_names[0])

    def increase_reference(self, errors):
        """What the RF score divides an out-of-bag error increase by (thesis Sec. 4.3, ``Err(OOB)``): the error
        itself here (the relative increase of a lower-is-better error); a float or an array of per-target errors."""
        return errors

    @staticmethod
    def error_floor(n_rows: int, n_targets: int = 1) -> float:
        """Smallest error a relative increase is divided by: one unit mistake among ``n_rows`` rows.

        A tree whose out-of-bag error is exactly 0 would make the relative increase undefined; dividing
        by this floor instead keeps the score finite and of the right sign.
        """
        return 1.0 / (max(n_rows, 1) * max(n_targets, 1))


def mean_known(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``sums / counts`` where ``counts > 0``, NaN elsewhere."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.where(counts > 0, counts, 1), np.nan)


@dataclass(frozen=True)
class EvaluationDefaults:
    """How :mod:`spark_fr.evaluation` judges a ranking of a target type by weighted kNN (thesis section 8).

    Attributes
    ----------
    neighbours : int
        k of the kNN (MTR 5, MLC 15, HMLC 10; classification 20, the SSL conference paper's; unsupervised 1).
    prediction : str
        What the neighbours predict: 'mean' (numbers), 'vote' (a class), 'labels' (each label's share of the
        neighbours), 'features' (every feature: the unsupervised protocol).
    measure : str
        The main measure (:mod:`spark_fr.evaluation.metrics`): 'arrmse', 'macro_f1', 'pooled_auprc', 'mse'.
    protocol : str
        The protocol without a test file: 'splits' (random 2/3-1/3), 'cv' (stratified folds), 'unsupervised'.
    curve_learner : str
        The top-f curves' learner by default: 'knn', or 'sklearn' (the ReliefE paper's, classification and MLC).
    """

    neighbours: int
    prediction: str
    measure: str
    protocol: str
    curve_learner: str = "knn"


class TargetType:
    """One kind of target (see the module docstring). Subclasses are stateless; one instance each.

    Attributes
    ----------
    name : str
        The ``--task`` value.
    methods : frozenset of str
        Ranking methods that support the type ('ensemble', 'relief'; 'boosting' where the fitted task has a
        :meth:`FittedTask.boosting_loss`; 'reliefe' for classification and MLC, the ReliefE paper's tasks).
    supervised : bool
        False for the type without targets (unsupervised ranking).
    inference_priority : int
        Order in which ``--task auto`` asks the types whether they claim the targets.
    """

    name = ""
    methods = frozenset({"ensemble", "relief"})
    supervised = True
    #: ensemble options the thesis recommends for the type, used where the user sets none (conf/defaults.yaml)
    ensemble_defaults: dict = {}
    #: ``--task auto`` asks the types with a lower value first (a hierarchy before labels before classes)
    inference_priority = 50
    #: how spark_fr.evaluation judges rankings of the type (numbers, by default)
    evaluation = EvaluationDefaults(neighbours=5, prediction="mean", measure="arrmse", protocol="splits")

    def for_params(self, params) -> "TargetType":
        """This type as the method's parameters configure it (HMLC: ``--hmlc-impurity``); itself here."""
        return self

    # ----- schema -------------------------------------------------------------------------------------
    def claims(self, columns: list, labels_xml: bool) -> bool:
        """Whether ``--task auto`` picks this type for these target columns (asked in registry order)."""
        return False

    def check(self, columns: list) -> None:
        """Raise :class:`TaskError` if the columns (with their statistics) cannot be this type's targets."""

    # ----- encoding -----------------------------------------------------------------------------------
    def encoder(self, columns: list, hierarchy=None) -> TargetEncoder:
        """The :class:`TargetEncoder` of these target columns."""
        return TargetEncoder([c.name for c in columns], [c.categories if c.kind == "nominal" else None
                                                         for c in columns])

    # ----- ensembles ------------------------------------------------------------------------------------
    def moment_columns(self, Y: np.ndarray, classes: list | None = None) -> np.ndarray:
        """The columns whose moments fit the task (the targets; classes one-hot for classification)."""
        return np.asarray(Y, dtype=np.float64)

    def column_scale(self, maxabs: np.ndarray) -> np.ndarray:
        """Powers of two the moment columns are multiplied by, from their largest magnitudes (ones here)."""
        return np.ones(np.shape(maxabs))

    def fit_from_moments(self, moments: ColumnMoments, target_names: list, classes: list | None = None,
                         label_weights: np.ndarray | None = None) -> FittedTask:
        """Fit the task from the moments of its columns over the training rows (see :class:`FittedTask`).

        ``label_weights`` are the encoder's :meth:`TargetEncoder.label_weights` (HMLC), None otherwise.
        """
        raise TaskError(f"--method ensemble does not support the task '{self.name}'")

    def fit(self, Y: np.ndarray, target_names: list, classes: list | None = None,
            label_weights: np.ndarray | None = None) -> FittedTask:
        """Fit the task to its training targets in this process (the same as from distributed moments)."""
        top, _ = self.column_maxabs(Y, classes)
        scale = self.column_scale(top)
        first = self.column_partial_sums(Y, classes, scale)
        second = self.column_partial_sums(Y, classes, scale, np.nan_to_num(first_mean(first)))
        return self.fit_from_moments(ColumnMoments.from_passes(first, second, scale), target_names, classes,
                                     label_weights)

    def column_maxabs(self, Y, classes: list | None = None) -> tuple:
        """(largest magnitude of each moment column, number of rows) of some rows (a block, or all)."""
        if isinstance(Y, SparseLabels):  # 0/1 labels: 1 where a row has the label
            top = np.zeros(Y.n_columns)
            top[Y.indices] = 1.0
            return top, Y.shape[0]
        C = self.moment_columns(Y, classes)
        with np.errstate(invalid="ignore"):
            top = np.nanmax(np.abs(C), axis=0, initial=0.0) if C.size else np.zeros(C.shape[1])
        return np.nan_to_num(top), C.shape[0]

    def column_partial_sums(self, Y, classes: list | None, scale: np.ndarray,
                            center: np.ndarray | None = None) -> PartialSums:
        """:func:`partial_sums` of the moment columns of some rows; label-sparse rows a block of labels at a
        time (every column's sums are its own, so the result is the same bit for bit), never all dense."""
        if not isinstance(Y, SparseLabels):
            return partial_sums(self.moment_columns(Y, classes), scale, center)
        width = max(1, MOMENT_BLOCK_VALUES // max(Y.shape[0], 1))
        parts = []
        for a in range(0, Y.n_columns, width):
            b = min(a + width, Y.n_columns)
            parts.append(partial_sums(Y.dense_columns(a, b), scale[a:b], None if center is None else center[a:b]))
        return PartialSums(exact_sum(np.concatenate([p.sums.hi for p in parts]),
                                     np.concatenate([p.sums.lo for p in parts])),
                           np.concatenate([p.counts for p in parts]))

    # ----- Relief ---------------------------------------------------------------------------------------
    def summarize(self, Y: np.ndarray, hierarchy=None, n_classes: int = 0) -> TargetSummary:
        """The :class:`TargetSummary` of some rows (a block, or all of them)."""
        Y = np.asarray(Y, dtype=np.float64)
        lo, hi = value_ranges(Y)
        return TargetSummary(lo, hi, np.zeros(max(n_classes, 0)), set())

    def relief_target(self, Y: np.ndarray, params, *, summary: TargetSummary | None = None,
                      semi_supervised: bool = False, n_classes: int | None = None, hierarchy=None) -> ReliefTarget:
        """The Relief target distance of this type for the rows ``Y``.

        Parameters
        ----------
        Y : ndarray (n, T)
            Targets of the rows to encode.
        params : object
            Relief parameters (attributes ``target_distance``, ``hmlc_w0``, ``hmlc_squared``,
            ``hmlc_normaliser``; each type reads what it needs).
        summary : TargetSummary, optional
            Statistics of the whole training set (default: computed from ``Y``); given when ``Y`` is one
            block of a larger data set (tall mode), so every block is encoded the same way.
        semi_supervised : bool
            Whether some rows are unlabelled.
        n_classes : int, optional
        hierarchy : Hierarchy, optional

        Returns
        -------
        ReliefTarget
        """
        raise TaskError(f"--method relief does not support the task '{self.name}'")
