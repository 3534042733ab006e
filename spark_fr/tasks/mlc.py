"""Multi-label classification (MLC): several 0/1 label columns.

Sketch
------
* Inference: the labels of a Mulan label file, or several targets whose values are all 0/1. Every label
  column must hold only 0 and 1 (numbers, or the categories '0' and '1' of an ARFF nominal attribute);
  anything else is refused with the column and its values.
* Encoding: a nominal label column's category index becomes the number its category stands for.
* Trees: the 0/1 label columns with ``alpha_j = 1 / (L * Var(E_train, l_j))`` (per-label Gini / 2,
  normalised); the prototype is the label frequencies, the prediction ``p >= 0.5``; the error (RF score)
  the Hamming loss (the mean over labels of the per-label error rate).
* Relief: ``--relief-target-distance`` hamming (``|S1 ^ S2| / L``), jaccard (``1 - |S1 & S2| / |S1 | S2|``,
  0 for two empty sets), f1 (``1 - 2 |S1 & S2| / (|S1| + |S2|)``, the thesis' recommendation and the
  default) or subset (``1[S1 != S2]``); per label, the label mismatch.
"""
from __future__ import annotations

import numpy as np

from .base import EvaluationDefaults, FittedTask, ReliefTarget, TargetEncoder, TargetType, TaskError, mean_known
from .distances import T_F1, T_HAMMING, T_JACCARD, T_SUBSET
from .measures import MicroF1
from .regression import fit_numeric_columns

#: the multi-label target distances of Relief, by option value
DISTANCES = {"hamming": T_HAMMING, "jaccard": T_JACCARD, "f1": T_F1, "subset": T_SUBSET}


class FittedMLC(FittedTask):
    """MLC fitted to its training labels (see the module docstring)."""

    def predict(self, prototypes):
        return (prototypes >= 0.5).astype(np.float64)

    def elementwise_errors(self, Y, pred):
        Y = np.asarray(Y, dtype=np.float64)
        return np.where(~np.isnan(Y), Y != pred, False).astype(np.float64)

    def errors_from_sums(self, sums, counts):
        return mean_known(sums, counts)

    def default_errors(self):
        """Per label, the error rate of predicting the training frequency thresholded at 0.5."""
        p = np.asarray(self.center, np.float64)
        return np.where(p >= 0.5, 1.0 - p, p)

    def predictive_measure(self):
        """Micro-averaged F1 of the predicted label sets, against every label's training majority."""
        return MicroF1()


class LabelEncoder(TargetEncoder):
    """Label columns as 0/1 numbers: nominal ones through the number each category stands for."""

    def __init__(self, names, categories):
        super().__init__(names, categories)
        self.numbers = [None if cats is None else np.array([float(x) for x in cats]) for cats in categories]

    def encode(self, columns, n_rows):
        out = []
        for col, numbers in zip(columns, self.numbers):
            v = np.asarray(col, dtype=np.float64)
            if numbers is not None:
                known = ~np.isnan(v)
                mapped = np.full(v.shape[0], np.nan)
                mapped[known] = numbers[v[known].astype(np.int64)]
                v = mapped
            out.append(v[:, None])
        return np.hstack(out) if out else np.empty((n_rows, 0))


class MLC(TargetType):
    """Several 0/1 labels (see the module docstring)."""

    name = "mlc"
    methods = frozenset({"ensemble", "relief", "reliefe"})
    inference_priority = 20
    #: thesis Ch. 5: random forests; 10 trees suffice for Genie3, Symbolic needs about 50
    ensemble_defaults = {"trees": 50}
    evaluation = EvaluationDefaults(neighbours=15, prediction="labels", measure="pooled_auprc", protocol="splits",
                                    curve_learner="sklearn")

    def claims(self, columns, labels_xml):
        return labels_xml or (len(columns) > 1 and all(c.is_binary() for c in columns))

    def check(self, columns):
        for c in columns:
            if not c.is_binary():
                raise TaskError(f"label column '{c.name}' has values {c.shown_values()}; multi-label targets "
                                f"must be 0/1")

    def encoder(self, columns, hierarchy=None):
        return LabelEncoder([c.name for c in columns], [c.categories if c.kind == "nominal" else None
                                                         for c in columns])

    def fit_from_moments(self, moments, target_names, classes=None, label_weights=None):
        return fit_numeric_columns(self.name, moments, target_names, FittedMLC)

    def relief_target(self, Y, params, *, summary=None, semi_supervised=False, n_classes=None, hierarchy=None):
        Y = np.asarray(Y, dtype=np.float64)
        T = Y.shape[1]
        kind = DISTANCES[params.target_distance]
        return ReliefTarget(kind, Y.copy(), np.ones(T), 1.0, per_target_kinds=np.full(T, T_HAMMING, np.int64))
