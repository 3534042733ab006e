"""Predictive performance measures of a target type, for ``--cv-folds`` (no Spark).

Sketch
------
A fitted task names the measure its held-out predictions are scored with
(:meth:`~spark_fr.tasks.base.FittedTask.predictive_measure`); the cross-validation
(:mod:`spark_fr.ensemble.validation`) asks the measure for

* ``strata(Y)``: what the folds are stratified by (the class; None: plain seeded shuffling),
* ``score(Y_test, pred, Y_train)``: the measure of predictions ``pred`` of the held-out rows,
* ``baseline_prediction(Y_train, m)``: what a model that ignores the features predicts for m rows, learnt on
  the training fold alone (its score on the same held-out rows is the run's baseline).

``Y`` and ``pred`` are n x T float arrays in the task's units (class indices, numbers, 0/1 labels;
NaN = unknown); every measure ignores the unknown cells of ``Y``.

Decisions
---------
* **Classification: accuracy**, baseline the training fold's majority class (ties to the lower class index,
  as the trees' arg-max). Folds are stratified by the class.
* **Regression and MTR: RRMSE**, ``sqrt(sum (y - pred)^2 / sum (y - mean_train)^2)`` over the held-out rows
  with a known value, per target, averaged over the targets: the RMSE relative to predicting the training
  fold's mean, so the baseline is 1.0 by construction and lower is better (CLUS's RRMSE).
* **MLC: micro-averaged F1** of the predicted label sets (the task's prediction ``p >= 0.5``): ``2 TP / (2 TP +
  FP + FN)`` pooled over all held-out (row, label) cells with a known value; 1.0 when there is no positive
  cell and none is predicted. Baseline: every label predicted as its training fold majority (its frequency
  >= 0.5), which for rare labels is the empty set and scores 0.
* **HMLC, unsupervised: not computed.** The hierarchy's measure of choice (the area under the pooled
  precision-recall curve) needs per-label scores over thresholds, which is more than a short first version;
  F1 at 0.5 says little for deep hierarchies. Unsupervised ranking has no target to predict.
"""
from __future__ import annotations

import numpy as np


class Measure:
    """How the held-out predictions of a task are scored (see the module sketch).

    Attributes
    ----------
    name : str
        The measure, as recorded (``accuracy``, ``rrmse``, ``micro_f1``).
    baseline_name : str
        What the baseline predicts.
    greater_is_better : bool
    computed : bool
        False for :class:`NotComputed`.
    """

    name = ""
    baseline_name = ""
    greater_is_better = True
    computed = True

    def strata(self, Y: np.ndarray) -> np.ndarray | None:
        """What the folds are stratified by, one value per row (NaN: its own stratum), or None."""
        return None

    def score(self, Y: np.ndarray, pred: np.ndarray, Y_train: np.ndarray) -> float:
        """The measure of ``pred`` (m, T) on the held-out targets ``Y`` (m, T); NaN when nothing is known."""
        raise NotImplementedError

    def baseline_prediction(self, Y_train: np.ndarray, m: int) -> np.ndarray:
        """The prediction (m, T) of the model that ignores the features, learnt on ``Y_train``."""
        raise NotImplementedError

    def baseline(self, Y: np.ndarray, Y_train: np.ndarray) -> float:
        """The baseline's score on the held-out targets ``Y``."""
        return self.score(Y, self.baseline_prediction(Y_train, np.shape(Y)[0]), Y_train)

    def known_rows(self, Y: np.ndarray) -> int:
        """Rows of ``Y`` with some known value (the rows a score counts)."""
        Y = np.asarray(Y, np.float64)
        return int((~np.isnan(Y)).any(axis=1).sum()) if Y.shape[1] else 0


class NotComputed(Measure):
    """No measure for the task; ``reason`` says why (recorded as the cross-validation's ``skipped``)."""

    computed = False

    def __init__(self, reason: str):
        self.reason = reason


def _column(Y) -> np.ndarray:
    return np.asarray(Y, dtype=np.float64)[:, 0]


class Accuracy(Measure):
    """The share of held-out rows whose class is predicted; baseline the training fold's majority class."""

    name = "accuracy"
    baseline_name = "majority class"

    def strata(self, Y):
        return _column(Y)

    def score(self, Y, pred, Y_train):
        y, p = _column(Y), _column(pred)
        known = ~np.isnan(y)
        return float(np.mean(p[known] == y[known])) if known.any() else float("nan")

    def baseline_prediction(self, Y_train, m):
        y = _column(Y_train)
        y = y[~np.isnan(y)].astype(np.int64)
        majority = float(np.argmax(np.bincount(y))) if y.size else np.nan
        return np.full((m, 1), majority)


class RRMSE(Measure):
    """RMSE relative to predicting the training fold's mean, per target, averaged over the targets."""

    name = "rrmse"
    baseline_name = "training mean"
    greater_is_better = False

    def score(self, Y, pred, Y_train):
        Y, pred = np.asarray(Y, np.float64), np.asarray(pred, np.float64)
        mean = self.baseline_prediction(Y_train, 1)[0]
        known = ~np.isnan(Y)
        with np.errstate(invalid="ignore"):
            num = np.where(known, (Y - pred) ** 2, 0.0).sum(axis=0)
            den = np.where(known, (Y - mean) ** 2, 0.0).sum(axis=0)
        ok = known.any(axis=0) & (den > 0) & np.isfinite(den)
        return float(np.mean(np.sqrt(num[ok] / den[ok]))) if ok.any() else float("nan")

    def baseline_prediction(self, Y_train, m):
        Y_train = np.asarray(Y_train, np.float64)
        known = ~np.isnan(Y_train)
        counts = known.sum(axis=0)
        sums = np.where(known, Y_train, 0.0).sum(axis=0)
        mean = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
        return np.repeat(mean[None, :], m, axis=0)


class MicroF1(Measure):
    """F1 of the predicted labels pooled over all held-out (row, label) cells; baseline per-label majority."""

    name = "micro_f1"
    baseline_name = "per-label majority"

    def score(self, Y, pred, Y_train):
        Y, pred = np.asarray(Y, np.float64), np.asarray(pred, np.float64)
        known = ~np.isnan(Y)
        if not known.any():
            return float("nan")
        y, p = Y[known] == 1.0, pred[known] == 1.0
        tp, fp, fn = int(np.sum(y & p)), int(np.sum(~y & p)), int(np.sum(y & ~p))
        return 1.0 if tp + fp + fn == 0 else 2.0 * tp / (2.0 * tp + fp + fn)

    def baseline_prediction(self, Y_train, m):
        freq = RRMSE().baseline_prediction(Y_train, 1)[0]
        return np.repeat((freq >= 0.5).astype(np.float64)[None, :], m, axis=0)


class TargetPart(Measure):
    """A measure of the first ``n`` columns of ``Y`` and of the predictions (the targets of a semi-supervised
    run, whose other columns are the features it also clusters on)."""

    def __init__(self, inner: Measure, n: int):
        self.inner, self.n = inner, int(n)
        self.name, self.baseline_name = inner.name, inner.baseline_name
        self.greater_is_better = inner.greater_is_better

    def _part(self, Y):
        return np.asarray(Y, np.float64)[:, :self.n]

    def strata(self, Y):
        return self.inner.strata(self._part(Y))

    def score(self, Y, pred, Y_train):
        return self.inner.score(self._part(Y), self._part(pred), self._part(Y_train))

    def baseline_prediction(self, Y_train, m):
        return self.inner.baseline_prediction(self._part(Y_train), m)

    def baseline(self, Y, Y_train):
        return self.inner.baseline(self._part(Y), self._part(Y_train))

    def known_rows(self, Y):
        return self.inner.known_rows(self._part(Y))
