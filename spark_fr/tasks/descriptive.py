"""The descriptive attributes as clustering attributes: the part of the impurity and of the error that
semi-supervised (SSL-PCT) and unsupervised (clustering) trees take from the features (no Spark).

Sketch
------
* Values: the encoding's ``scaled`` features (numeric ones scaled to [0, 1] by their range, nominal ones as
  category indices; NaN = missing). Scaling does not matter: every quantity is relative to the column's own
  training variance.
* Clustering columns: a numeric feature is one column, a nominal feature with C categories C one-hot
  columns (a missing value is a row of NaN). The Gini index of a nominal feature is the sum of the
  variances of its one-hot columns, so its impurity is again a sum of column variances, and the grower needs
  nothing new.
* Impurity (thesis Eq. 2.13, Ch. 7 Sec. 3.1): ``(1/D) sum_i impu(E, x_i) / impu(E_train, x_i)`` with the
  variance (numeric) or the Gini index (nominal), each over the rows where ``x_i`` is known; so a column of
  feature i weighs ``alpha = 1 / (D * impu(E_train, x_i))`` (0 for a feature constant on the training set).
* Prototype: per column the mean (for a nominal feature the category frequencies); prediction: the mean of
  a numeric feature, the most frequent category of a nominal one (ties to the lower index).
* Error (the RF score, thesis Eq. 3.3): ``(1/D) sum_i beta_i (1/|S|) sum_S e(x_i, x^_i)`` with
  ``e = (x - x^)^2`` and ``beta_i = 1 / Var(E_train, x_i)`` (numeric), ``e = 1[x != x^]`` and
  ``beta_i = 1 / Gini(E_train, x_i)`` (nominal), over the rows where ``x_i`` is known; a constant feature
  has no error (NaN, left out of the mean).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import ColumnMoments, mean_known


@dataclass
class DescriptiveLayout:
    """How the D features become clustering columns.

    Attributes
    ----------
    n_categories : ndarray of int (D,)
        Categories of each nominal feature; 0 for a numeric one.
    """

    n_categories: np.ndarray

    def __post_init__(self):
        self.n_categories = np.asarray(self.n_categories, np.int64)
        width = np.where(self.n_categories > 0, self.n_categories, 1)
        #: first clustering column of each feature, and the feature of each column
        self.start = np.concatenate([[0], np.cumsum(width)[:-1]]).astype(np.int64)
        self.column_feature = np.repeat(np.arange(self.n_features), width)

    @classmethod
    def of_bins(cls, bins) -> "DescriptiveLayout":
        """The layout of the encoding's features (``FeatureBins`` list)."""
        return cls(np.array([len(b.categories) if b.nominal else 0 for b in bins], np.int64))

    @property
    def n_features(self) -> int:
        return int(self.n_categories.shape[0])

    @property
    def n_columns(self) -> int:
        return int(self.column_feature.shape[0])

    @property
    def nominal(self) -> np.ndarray:
        return self.n_categories > 0

    def columns(self, X: np.ndarray) -> np.ndarray:
        """Clustering columns (m, K) of the feature values ``X`` (m, D): one-hot for nominal features."""
        X = np.asarray(X, dtype=np.float64)
        m = X.shape[0]
        out = np.empty((m, self.n_columns))
        for f in range(self.n_features):
            s, c = self.start[f], self.n_categories[f]
            v = X[:, f]
            if c == 0:
                out[:, s] = v
                continue
            known = ~np.isnan(v)
            block = np.full((m, c), np.nan)
            block[known] = 0.0
            idx = v[known].astype(np.int64)
            ok = (idx >= 0) & (idx < c)
            rows = np.flatnonzero(known)
            block[rows[ok], idx[ok]] = 1.0
            out[:, s:s + c] = block
        return out


@dataclass
class FittedDescriptive:
    """The descriptive part fitted to the training rows (see the module docstring).

    Attributes
    ----------
    layout : DescriptiveLayout
    center : ndarray (K,)
        Training mean of each clustering column.
    alpha : ndarray (K,)
        Impurity weight of each clustering column.
    norm : ndarray (D,)
        Training variance (numeric) or Gini index (nominal) of each feature; 0 for a constant one.
    """

    layout: DescriptiveLayout
    center: np.ndarray
    alpha: np.ndarray
    norm: np.ndarray

    @classmethod
    def from_moments(cls, layout: DescriptiveLayout, moments: ColumnMoments) -> "FittedDescriptive":
        """Fit from the moments of the clustering columns over all training rows (labelled or not)."""
        var = moments.var
        norm = np.bincount(layout.column_feature, weights=var, minlength=layout.n_features)
        norm = np.where(norm > 1e-300, norm, 0.0)
        D = max(layout.n_features, 1)
        per_feature = np.where(norm > 0, 1.0 / (D * np.where(norm > 0, norm, 1.0)), 0.0)
        center = np.nan_to_num(moments.mean)
        return cls(layout, center, per_feature[layout.column_feature], norm)

    # ----- impurity ---------------------------------------------------------------------------------
    def clustering_matrix(self, X: np.ndarray) -> np.ndarray:
        return (self.layout.columns(X) - self.center) * np.sqrt(self.alpha)

    def impurity(self, X: np.ndarray, weights: np.ndarray | None = None) -> float:
        """``sum_k alpha_k Var_w(E, column k)`` over each column's known rows (reference definition)."""
        C = self.layout.columns(X)
        w = np.ones(C.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
        total = 0.0
        for k in range(C.shape[1]):
            known = ~np.isnan(C[:, k])
            if w[known].sum() <= 0:
                continue
            mean = np.average(C[known, k], weights=w[known])
            total += self.alpha[k] * np.average((C[known, k] - mean) ** 2, weights=w[known])
        return float(total)

    # ----- prototypes, predictions, errors -------------------------------------------------------------
    def prototype_columns(self, X: np.ndarray) -> np.ndarray:
        return self.layout.columns(X)

    def default_prototype(self) -> np.ndarray:
        return self.center.copy()

    def predict(self, prototypes: np.ndarray) -> np.ndarray:
        """Predicted feature values (m, D): column means, the most frequent category of a nominal feature."""
        P = np.asarray(prototypes, dtype=np.float64)
        out = np.empty((P.shape[0], self.layout.n_features))
        for f in range(self.layout.n_features):
            s, c = self.layout.start[f], self.layout.n_categories[f]
            out[:, f] = P[:, s] if c == 0 else np.argmax(P[:, s:s + c], axis=1)
        return out

    def elementwise_errors(self, X: np.ndarray, pred: np.ndarray) -> np.ndarray:
        """Squared error (numeric) or mismatch (nominal) per (row, feature); 0 where the value is missing."""
        X = np.asarray(X, dtype=np.float64)
        known = ~np.isnan(X)
        nominal = self.layout.nominal[None, :]
        err = np.where(nominal, (X != pred).astype(np.float64), (X - pred) ** 2)
        return np.where(known, err, 0.0)

    def errors_from_sums(self, sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Per-feature errors ``mean error / norm`` (NaN for a constant feature or one without known values)."""
        mean = mean_known(sums, counts)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.norm > 0, mean / np.where(self.norm > 0, self.norm, 1.0), np.nan)
