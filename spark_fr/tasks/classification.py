"""Classification: one nominal target (or a numeric one whose values are used as class labels).

Sketch
------
* Inference: one nominal target. Forced with ``--task classification``, a numeric target with at most 255
  distinct values is taken as class labels (as scikit-learn takes integer labels), its classes named by
  its values; a numeric target with more values is refused (it looks continuous).
* Trees: one 0/1 clustering column per class, weight 1: ``sum_c Var(1[y = c]) = 1 - sum_c p_c^2`` is the
  Gini index. The prototype is the class distribution; the prediction its arg-max (ties go to the lower
  class index); the error the misclassification rate; the RF score the relative decrease of the accuracy
  (thesis Sec. 4.3, CLUS), :meth:`FittedClassification.increase_reference`.
* Boosting: the multinomial log-loss over the classes present in the training rows (binomial for two), see
  :mod:`spark_fr.tasks.losses`.
* Relief: ReliefF (Kononenko: k hits and k misses per class, misses weighted by the class priors); in a
  semi-supervised run, the RReliefF form with the class mismatch as d_Y (the thesis' SSL-Relief).
"""
from __future__ import annotations

import numpy as np

from .base import EvaluationDefaults, FittedTask, ReliefTarget, TargetEncoder, TargetType, TaskError, mean_known
from .distances import T_CLASS
from .losses import log_loss
from .measures import Accuracy


def one_hot(y: np.ndarray, n_classes: int) -> np.ndarray:
    """One 0/1 column per class (a row of NaN where the class is missing)."""
    known = ~np.isnan(y)
    onehot = np.full((y.shape[0], n_classes), np.nan)
    onehot[known] = 0.0
    onehot[np.flatnonzero(known), y[known].astype(np.int64)] = 1.0
    return onehot


class FittedClassification(FittedTask):
    """Classification fitted to its training classes (see the module docstring)."""

    def raw_columns(self, Y):
        return one_hot(np.asarray(Y, dtype=np.float64)[:, 0], len(self.classes))

    def predict(self, prototypes):
        return np.argmax(prototypes, axis=1).astype(np.float64)[:, None]

    def elementwise_errors(self, Y, pred):
        Y = np.asarray(Y, dtype=np.float64)
        return np.where(~np.isnan(Y), Y != pred, False).astype(np.float64)

    def errors_from_sums(self, sums, counts):
        return mean_known(sums, counts)

    def increase_reference(self, errors):
        """The accuracy ``1 - error``: the thesis scores classification by the relative *decrease of the accuracy*
        (``-(acc_perm - acc) / acc``, its x(-1) convention for a higher-is-better measure), as CLUS does. The
        decrease of the accuracy is the increase of the misclassification rate, so only the divisor differs
        from the relative increase of the error (which divides by the error, often a few mistakes)."""
        return 1.0 - errors

    def default_errors(self):
        """The misclassification rate of the majority class."""
        return np.array([1.0 - float(np.max(self.center))])

    def predictive_measure(self):
        """Accuracy, against the training fold's majority class (folds stratified by the class)."""
        return Accuracy()

    def boosting_loss(self):
        """The log-loss of the classes present among the training rows (:func:`spark_fr.tasks.losses.log_loss`)."""
        present = np.flatnonzero(np.asarray(self.center) > 0)
        return log_loss(present, [self.classes[c] for c in present])

    def normalised_scale(self):
        """1 / Gini(E_train): the impurity (the Gini index) relative to its training value."""
        gini = float(np.sum(self.center * (1.0 - self.center)))
        return 1.0 / gini if gini > 0 else 0.0


class NumericClassEncoder(TargetEncoder):
    """Class index of each value of a numeric target among its distinct values (NaN = missing)."""

    def __init__(self, name: str, values: np.ndarray):
        self.values = np.asarray(values, dtype=np.float64)
        super().__init__([name], [None], [_class_name(v) for v in self.values])

    def encode(self, columns, n_rows):
        v = np.asarray(columns[0], dtype=np.float64)
        idx = np.searchsorted(self.values, v)
        ok = (idx < self.values.size) & (self.values[np.minimum(idx, self.values.size - 1)] == v)
        return np.where(ok, idx, np.nan).astype(np.float64)[:, None]


def _class_name(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


class Classification(TargetType):
    """One nominal target (see the module docstring)."""

    name = "classification"
    inference_priority = 30
    evaluation = EvaluationDefaults(neighbours=20, prediction="vote", measure="macro_f1", protocol="cv",
                                    curve_learner="sklearn")
    methods = frozenset({"ensemble", "relief", "reliefe", "boosting"})

    def claims(self, columns, labels_xml):
        return len(columns) == 1 and columns[0].kind == "nominal"

    def check(self, columns):
        if len(columns) != 1:
            raise TaskError("classification takes exactly one target (for several labels use --task mlc)")
        c = columns[0]
        if c.kind == "numeric" and c.distinct is None:
            raise TaskError(f"target column '{c.name}' is numeric with {c.shown_values()}; it looks continuous: "
                            f"use --task regression, or a nominal (string) column for classes")
        if c.kind not in ("numeric", "nominal"):
            raise TaskError(f"target column '{c.name}' is {c.kind}; classification needs one nominal target")
        present = [k for k, n in c.counts.items() if n > 0] if c.kind == "nominal" else \
            [_class_name(v) for v in (c.distinct if c.distinct is not None else [])]
        if len(present) < 2:
            only = present[0] if present else "?"
            raise TaskError(f"target column '{c.name}' has a single class '{only}'; classification needs at "
                            f"least two")

    def encoder(self, columns, hierarchy=None):
        c = columns[0]
        if c.kind == "numeric":
            return NumericClassEncoder(c.name, c.distinct)
        return TargetEncoder([c.name], [c.categories], list(c.categories))

    def moment_columns(self, Y, classes=None):
        Y = np.asarray(Y, dtype=np.float64)
        if classes is None:  # class indices without names: name them by their index
            classes = [str(c) for c in range(int(np.nanmax(Y[:, 0])) + 1)]
        return one_hot(Y[:, 0], len(classes))

    def fit(self, Y, target_names, classes=None, label_weights=None):
        Y = np.asarray(Y, dtype=np.float64)
        if Y.shape[1] != 1:
            raise TaskError("classification takes exactly one nominal target")
        if classes is None:
            classes = [str(c) for c in range(int(np.nanmax(Y[:, 0])) + 1)]
        return super().fit(Y, target_names, classes, label_weights)

    def fit_from_moments(self, moments, target_names, classes=None, label_weights=None):
        if not moments.count[0] > 0:
            raise TaskError(f"target column '{target_names[0]}' has no known values")
        present = np.flatnonzero(moments.mean > 0)
        if present.size < 2:
            only = classes[present[0]] if present.size else "?"
            raise TaskError(f"target column '{target_names[0]}' has a single class '{only}'; "
                            f"classification needs at least two")
        C = len(classes)
        return FittedClassification(self.name, list(target_names), moments.mean, np.ones(C),
                                    np.zeros(C, dtype=np.int64), np.ones(1), np.ones(1), list(classes))

    def summarize(self, Y, hierarchy=None, n_classes=0):
        summary = super().summarize(Y, hierarchy, n_classes)
        Y = np.asarray(Y, dtype=np.float64)
        if n_classes and Y.size:
            y = Y[:, 0]
            summary.class_counts = np.bincount(y[~np.isnan(y)].astype(np.int64),
                                               minlength=n_classes).astype(np.float64)
        return summary

    def relief_target(self, Y, params, *, summary=None, semi_supervised=False, n_classes=None, hierarchy=None):
        Y = np.asarray(Y, dtype=np.float64)
        C = int(n_classes if n_classes is not None else np.nanmax(Y[:, 0]) + 1)
        summary = summary or self.summarize(Y, n_classes=C)
        priors = summary.class_counts / max(summary.class_counts.sum(), 1)
        return ReliefTarget(T_CLASS, Y[:, :1].copy(), np.ones(1), float(C), 0 if semi_supervised else C,
                            Y[:, 0].copy(), priors, np.array([T_CLASS], np.int64))
