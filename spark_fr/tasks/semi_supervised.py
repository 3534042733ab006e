"""Targets and features together as clustering attributes: semi-supervised PCTs (SSL-PCT) for every
supervised type, and clustering trees (unsupervised ranking) when there is no target (no Spark).

Sketch
------
The training matrix of such a task is ``Y = [targets | features]``: the target type's own columns (NaN for
an unlabelled row) followed by the D feature values (:mod:`spark_fr.tasks.descriptive`). With the SSL
weight ``w`` (thesis Eq. 2.13; SSL paper Eq. 1)

    impu(E) = w * impu_T(E) + (1 - w) * impu_D(E)

where ``impu_T`` is the type's impurity in its normalised form (each single-target impurity relative to its
value on the labelled training rows, times the hierarchy weight for HMLC) and ``impu_D`` the descriptive
one; each single-variable impurity is computed over the rows where the variable is known, which the
grower does for any clustering column with NaN. ``w = 1`` is supervised ranking (unlabelled rows then
only change the bootstrap), ``w = 0`` clustering. Unsupervised ranking is this task without targets.

* Clustering matrix: ``[sqrt(w * s) * Z_T | sqrt(1 - w) * Z_D]``, ``s`` the type's
  :meth:`~spark_fr.tasks.base.FittedTask.normalised_scale`.
* Prototypes and predictions: the type's, and the descriptive part's.
* Error (RF score, thesis Sec. 4.3): ``w * Err_T + (1 - w) * Err_D`` where ``Err_T`` combines the type's
  per-target errors, each divided by the error of the default model (the training prototype) on that target
  (the thesis' alpha_j), over the rows with a known target, and ``Err_D`` is the unsupervised error; a part
  without any known value is left out (the other one then counts alone).
* Per-target scores (``--per-target``) cover the targets only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import FittedTask, TargetType, TaskError
from .descriptive import DescriptiveLayout, FittedDescriptive
from .measures import NotComputed, TargetPart


def _nanmean(e: np.ndarray) -> float:
    e = e[~np.isnan(e)]
    return float(e.mean()) if e.size else float("nan")


@dataclass
class FittedClustering(FittedTask):
    """A target type (or none) plus the descriptive part, mixed with the SSL weight (module docstring).

    Attributes (besides :class:`FittedTask`'s)
    ----------
    inner : FittedTask or None
        The fitted target type (None: unsupervised).
    desc : FittedDescriptive
    weight : float
        The SSL weight w of the target part.
    """

    inner: FittedTask | None = None
    desc: FittedDescriptive | None = None
    weight: float = 0.0

    @classmethod
    def compose(cls, inner: FittedTask | None, desc: FittedDescriptive, weight: float) -> "FittedClustering":
        """The fitted mixture of ``inner`` and ``desc`` with target weight ``weight``."""
        weight = 0.0 if inner is None else float(weight)
        if inner is None:
            names, center_t, alpha_t, col_t, scale_t = [], np.zeros(0), np.zeros(0), np.zeros(0, np.int64), np.zeros(0)
            name, var_t, classes, constant = "unsupervised", np.zeros(0), None, []
        else:
            s = inner.normalised_scale()
            names, center_t, col_t = list(inner.target_names), inner.center, inner.column_target
            alpha_t = inner.alpha * weight * s
            scale_t = inner.per_target_scale / (weight * s) if weight * s > 0 else np.zeros_like(inner.per_target_scale)
            name, var_t, classes, constant = inner.name, inner.train_variance, inner.classes, inner.constant_targets
        K_d = desc.layout.n_columns
        return cls(name, names, np.concatenate([center_t, desc.center]),
                   np.concatenate([alpha_t, desc.alpha * (1.0 - weight)]),
                   np.concatenate([np.asarray(col_t, np.int64), np.full(K_d, -1, np.int64)]), scale_t, var_t,
                   classes, constant, None, inner, desc, weight)

    def with_weight(self, weight: float) -> "FittedClustering":
        """The same fit with another SSL weight (the ``--ssl-weight auto`` search)."""
        return FittedClustering.compose(self.inner, self.desc, weight)

    # ----- the two parts of Y -----------------------------------------------------------------------------
    @property
    def n_target_columns(self) -> int:
        """Columns of ``Y`` that are targets (the rest are the D features)."""
        return 0 if self.inner is None else len(self.inner.target_names)

    def _split(self, Y):
        Y = np.asarray(Y, dtype=np.float64)
        t = self.n_target_columns
        return Y[:, :t], Y[:, t:]

    @property
    def _proto_width(self) -> int:
        return 0 if self.inner is None else int(np.shape(self.inner.default_prototype())[0])

    def targets(self, Y):
        Yt, Yd = self._split(Y)
        return Yd.copy() if self.inner is None else np.hstack([self.inner.targets(Yt), Yd])

    def part_matrices(self, Y) -> tuple:
        """(sqrt(s) * Z_T, Z_D): the two parts of the clustering matrix before the SSL weight."""
        Yt, Yd = self._split(Y)
        zd = self.desc.clustering_matrix(Yd)
        if self.inner is None:
            return np.empty((zd.shape[0], 0)), zd
        return self.inner.clustering_matrix(Yt) * np.sqrt(self.inner.normalised_scale()), zd

    def clustering_matrix(self, Y):
        zt, zd = self.part_matrices(Y)
        return np.hstack([zt * np.sqrt(self.weight), zd * np.sqrt(1.0 - self.weight)])

    def impurity(self, Y, weights=None):
        Yt, Yd = self._split(Y)
        total = (1.0 - self.weight) * self.desc.impurity(Yd, weights)
        if self.inner is not None and self.weight > 0:
            total += self.weight * self.inner.normalised_scale() * self.inner.impurity(Yt, weights)
        return float(total)

    # ----- prototypes, predictions, errors -------------------------------------------------------------
    def prototype_columns(self, Y):
        Yt, Yd = self._split(Y)
        pd = self.desc.prototype_columns(Yd)
        return pd if self.inner is None else np.hstack([self.inner.prototype_columns(Yt), pd])

    def default_prototype(self):
        pd = self.desc.default_prototype()
        return pd if self.inner is None else np.concatenate([self.inner.default_prototype(), pd])

    def predict(self, prototypes):
        P = np.asarray(prototypes, dtype=np.float64)
        w = self._proto_width
        pd = self.desc.predict(P[:, w:])
        return pd if self.inner is None else np.hstack([self.inner.predict(P[:, :w]), pd])

    def elementwise_errors(self, Y, pred):
        Yt, Yd = self._split(Y)
        t = self.n_target_columns
        ed = self.desc.elementwise_errors(Yd, np.asarray(pred)[:, t:])
        return ed if self.inner is None else np.hstack([self.inner.elementwise_errors(Yt, pred[:, :t]), ed])

    def errors_from_sums(self, sums, counts):
        t = self.n_target_columns
        ed = self.desc.errors_from_sums(sums[t:], counts[t:])
        if self.inner is None:
            return ed
        et = self.inner.errors_from_sums(sums[:t], counts[:t])
        base = self.inner.default_errors()
        with np.errstate(invalid="ignore", divide="ignore"):
            et = np.where(base > 0, et / np.where(base > 0, base, 1.0), np.nan)
        return np.concatenate([et, ed])

    def combine(self, errors):
        e = np.asarray(errors, dtype=np.float64)
        t = self.n_target_columns
        parts = []
        if self.inner is not None and self.weight > 0:
            parts.append((self.weight, self.inner.combine(e[:t])))
        if self.weight < 1:
            parts.append((1.0 - self.weight, _nanmean(e[t:])))
        parts = [(w, v) for w, v in parts if not np.isnan(v)]
        if not parts:
            return float("nan")
        return float(sum(w * v for w, v in parts) / sum(w for w, _ in parts))

    @property
    def n_targets(self) -> int:
        return self.n_target_columns

    def labelled_rows(self, Y) -> np.ndarray:
        """Mask of the rows with at least one known target."""
        Yt, _ = self._split(Y)
        return ~np.all(np.isnan(Yt), axis=1) if Yt.shape[1] else np.zeros(Yt.shape[0], bool)

    def predictive_measure(self):
        """The target type's measure of the target columns (held-out unlabelled rows are not scored); not
        computed without targets (unsupervised ranking)."""
        if self.inner is None:
            return NotComputed("unsupervised ranking has no target to predict")
        measure = self.inner.predictive_measure()
        return TargetPart(measure, self.n_target_columns) if measure.computed else measure

    def row_target_errors(self, Y, pred) -> np.ndarray:
        """The target part's error of each row alone (a row's own per-target errors combined as the type
        combines them), NaN for a row without a known target or without targets; over rows whose targets are all
        known, their mean is :meth:`target_error`."""
        Y = np.asarray(Y, dtype=np.float64)
        if self.inner is None:
            return np.full(Y.shape[0], np.nan)
        Yt, _ = self._split(Y)
        e = self.inner.elementwise_errors(Yt, np.asarray(pred)[:, :self.n_target_columns])
        known = (~np.isnan(Yt)).astype(np.float64)
        return np.array([self.inner.combine(self.inner.errors_from_sums(e[i], known[i])) for i in range(e.shape[0])])

    def target_error(self, Y, pred) -> float:
        """The target part's error alone (``--ssl-weight auto`` compares weights by it), NaN without targets."""
        if self.inner is None:
            return float("nan")
        Yt, _ = self._split(Y)
        return self.inner.error(Yt, np.asarray(pred)[:, :self.n_target_columns])


class WithDescriptive(TargetType):
    """A target type (or none) whose trees cluster on the features too (see the module docstring).

    Made per run by :func:`with_features`; its ``Y`` is
    ``[the type's Y | the D feature values]``.
    """

    def __init__(self, inner: TargetType | None, layout: DescriptiveLayout, weight: float):
        self.inner = inner
        self.layout = layout
        self.weight = float(weight)
        self.name = inner.name if inner is not None else "unsupervised"
        self.supervised = inner is not None

    def _inner_width(self, n_columns: int) -> int:
        return n_columns - self.layout.n_columns

    def _split(self, Y):
        Y = np.asarray(Y, dtype=np.float64)
        t = Y.shape[1] - self.layout.n_features
        return Y[:, :t], Y[:, t:]

    def moment_columns(self, Y, classes=None):
        Yt, Yd = self._split(Y)
        cd = self.layout.columns(Yd)
        return cd if self.inner is None else np.hstack([self.inner.moment_columns(Yt, classes), cd])

    def column_scale(self, maxabs):
        maxabs = np.asarray(maxabs, np.float64)
        k = self._inner_width(maxabs.shape[0])
        inner = self.inner.column_scale(maxabs[:k]) if self.inner is not None else np.zeros(0)
        return np.concatenate([inner, np.ones(maxabs.shape[0] - k)])

    def fit_from_moments(self, moments, target_names, classes=None, label_weights=None):
        k = self._inner_width(moments.count.shape[0])
        desc = FittedDescriptive.from_moments(self.layout, moments.part(slice(k, None)))
        if not np.any(desc.norm > 0) and (self.inner is None or self.weight < 1):
            raise TaskError("every feature is constant: there is nothing to cluster on")
        inner = None
        if self.inner is not None:
            inner = self.inner.fit_from_moments(moments.part(slice(0, k)), target_names, classes, label_weights)
        return FittedClustering.compose(inner, desc, self.weight)


def with_features(target_type: TargetType, layout: DescriptiveLayout, weight: float) -> WithDescriptive:
    """``target_type`` with the features as clustering attributes too: SSL-PCTs with SSL weight ``weight``
    for a supervised type, clustering trees (no target, w = 0) for the unsupervised one."""
    if target_type.supervised:
        return WithDescriptive(target_type, layout, weight)
    return WithDescriptive(None, layout, 0.0)
