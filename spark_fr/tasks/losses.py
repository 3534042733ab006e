"""Losses of gradient boosting (``--method boosting``): what a target type boosts, in NumPy (no Spark, no numba).

Algorithm sketch
----------------
A boosted model keeps a raw score matrix ``F`` (n x K): K = 1 for regression and binary classification, one
column per class for multi-class classification. A round fits one regression tree per column to the
negative gradient (the pseudo-residuals) of the loss and adds its leaf values, shrunk, to ``F``:

    F      <- initial(T)                       log class priors (centred), the log-odds, or the mean of y
    r, h   <- residuals(T, F), hessians(T, F)  r = -dL/dF; h = the diagonal of the Hessian
    value  <- leaf_values(leaf, r, h, w)       per leaf: Newton step  c * sum w r / sum w h   (default)
                                               or the PCT prototype  sum w r / sum w          ('mean')
    F[:,k] <- F[:,k] + shrinkage * value[leaf of each row]

* :class:`MultinomialLogLoss` (K >= 3 classes): ``p = softmax(F)``, ``r_k = y_k - p_k`` (y one-hot),
  ``h_k = p_k (1 - p_k)``, loss ``-mean log p_y``; the Newton step carries Friedman's factor (K - 1) / K
  (Friedman 2001, Algorithm 6; scikit-learn's ``GradientBoostingClassifier`` keeps it too).
* :class:`BinomialLogLoss` (2 classes): one column, ``p = sigmoid(F)`` of the second class, ``r = y - p``,
  ``h = p (1 - p)``, loss ``mean log(1 + e^F) - y F``.
* :class:`SquaredLoss` (one numeric target): ``r = y - F``, ``h = 1``, so both leaf rules give the mean
  residual; the reported loss is the mean squared error.

Decisions (documented here, see spec methods-papers.md Sec. 2.3, which leaves them open):

* **Initial model**: the log class priors, centred (``log p_k - mean_j log p_j``; softmax ignores the
  shift), the prior log-odds for two classes, the mean for regression: the constant model with the least
  loss, as in Friedman (2001) and scikit-learn. Starting at 0 would spend the first trees on learning the
  class frequencies, crediting whatever features happen to correlate with them.
* **Classes** are those present among the training rows (a declared class without rows has no gradient).
* **Leaf values**: Friedman's one-step Newton approximation by default: it is the line search of gradient
  boosting for the log-loss, it makes ``--shrinkage`` mean what it means in scikit-learn and XGBoost, and
  it makes the model (and therefore the residuals the later trees and their importances see) equal to
  scikit-learn's for the same trees. ``--boosting-leaf mean`` uses the PCT prototype (the mean residual)
  instead, which for the log-loss is a smaller step (about ``p (1 - p)`` times the Newton one).
  A Newton denominator below 1e-150 (every row already fitted with certainty) gives the value 0.
"""
from __future__ import annotations

import numpy as np

#: Newton denominators below this give a leaf value of 0 (scikit-learn's ``_safe_divide``)
TINY_HESSIAN = 1e-150


def softmax(F: np.ndarray) -> np.ndarray:
    """Row-wise softmax of raw scores (n, K), computed stably (the row maximum is subtracted first)."""
    F = np.asarray(F, dtype=np.float64)
    E = np.exp(F - F.max(axis=1, keepdims=True))
    return E / E.sum(axis=1, keepdims=True)


def sigmoid(F: np.ndarray) -> np.ndarray:
    """The logistic function ``1 / (1 + e^-F)``, without overflow for large |F|."""
    F = np.asarray(F, dtype=np.float64)
    out = np.empty_like(F)
    pos = F >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-F[pos]))
    e = np.exp(F[~pos])
    out[~pos] = e / (1.0 + e)
    return out


def leaf_sums(leaf: np.ndarray, values: np.ndarray, weights: np.ndarray, n_nodes: int) -> np.ndarray:
    """``sum w * values`` over the rows of each node (rows with weight 0 or leaf -1 are left out).

    Sums run in row order (``np.bincount``), so they are the same bits for the same rows.
    """
    use = (weights > 0) & (leaf >= 0)
    return np.bincount(leaf[use], weights=weights[use] * values[use], minlength=n_nodes)


class BoostingLoss:
    """A differentiable loss on raw scores ``F`` (n, K) for targets ``T`` (n, K); see the module sketch.

    Attributes
    ----------
    columns : list of str
        What each column of ``F`` is for (a class, or the target), for the run's report.
    newton_factor : float
        Factor of the Newton leaf value (Friedman's (K - 1) / K for the multinomial loss, else 1).
    """

    columns: list = []
    newton_factor = 1.0

    @property
    def n_columns(self) -> int:
        """Trees per boosting round (one per column of ``F``)."""
        return len(self.columns)

    def encode(self, Y: np.ndarray) -> np.ndarray:
        """The loss's target matrix ``T`` (n, K) from the task's raw targets ``Y`` (n, 1)."""
        raise NotImplementedError

    def initial(self, T: np.ndarray) -> np.ndarray:
        """The constant raw score (K,) of least loss on the rows ``T``."""
        raise NotImplementedError

    def predict(self, F: np.ndarray) -> np.ndarray:
        """The model's prediction from raw scores: probabilities of the columns, or the values."""
        return F

    def predict_targets(self, F: np.ndarray) -> np.ndarray:
        """The model's prediction (n, 1) in the task's units from raw scores: the value (regression), or the
        index among the task's classes of the most probable class (ties to the lower index)."""
        return np.asarray(F, dtype=np.float64)[:, :1].copy()

    def residuals(self, T: np.ndarray, F: np.ndarray) -> np.ndarray:
        """The negative gradient ``-dL/dF`` (n, K) per row."""
        return T - self.predict(F)

    def hessians(self, T: np.ndarray, F: np.ndarray) -> np.ndarray:
        """The diagonal of the Hessian of the loss in ``F`` (n, K) per row."""
        return np.ones_like(np.asarray(F, dtype=np.float64))

    def loss(self, T: np.ndarray, F: np.ndarray) -> float:
        """The mean loss over the rows."""
        raise NotImplementedError

    def leaf_values(self, leaf: np.ndarray, r: np.ndarray, h: np.ndarray, weights: np.ndarray, n_nodes: int,
                    rule: str = "newton") -> np.ndarray:
        """The value of every node from the rows in it (internal nodes: unused, 0 where empty).

        Parameters
        ----------
        leaf : ndarray of int (n,)
            Node of every row (-1: not in the tree's sample).
        r, h : ndarray (n,)
            Residuals and Hessians of the tree's column.
        weights : ndarray (n,)
            The rows' weights in the tree (0 = not sampled).
        n_nodes : int
        rule : {'newton', 'mean'}
            One Newton step ``factor * sum w r / sum w h``, or the mean residual ``sum w r / sum w``.

        Returns
        -------
        ndarray (n_nodes,)
        """
        num = leaf_sums(leaf, r, weights, n_nodes)
        if rule == "mean":
            den = leaf_sums(leaf, np.ones_like(r), weights, n_nodes)
            factor = 1.0
        else:
            den = leaf_sums(leaf, h, weights, n_nodes)
            factor = self.newton_factor
        ok = np.abs(den) >= TINY_HESSIAN
        return np.where(ok, factor * num / np.where(ok, den, 1.0), 0.0)


class SquaredLoss(BoostingLoss):
    """Squared error on one numeric target (regression)."""

    def __init__(self, target: str):
        self.columns = [target]

    def encode(self, Y):
        return np.asarray(Y, dtype=np.float64)[:, :1].copy()

    def initial(self, T):
        return np.array([float(np.mean(T[:, 0]))])

    def loss(self, T, F):
        return float(np.mean((T - F) ** 2))


class MultinomialLogLoss(BoostingLoss):
    """Multinomial log-loss (cross-entropy of the softmax) over K >= 3 classes.

    Parameters
    ----------
    present : ndarray of int
        Class indices (of the task's classes) that occur among the training rows; column k of ``F`` is
        class ``present[k]``.
    names : list of str
        Their names.
    """

    def __init__(self, present: np.ndarray, names: list):
        self.present = np.asarray(present, np.int64)
        self.columns = list(names)
        K = len(self.columns)
        self.newton_factor = (K - 1) / K

    def encode(self, Y):
        y = np.asarray(Y, dtype=np.float64)[:, 0].astype(np.int64)
        return (y[:, None] == self.present[None, :]).astype(np.float64)

    def initial(self, T):
        logp = np.log(np.clip(T.mean(axis=0), np.finfo(np.float64).eps, 1.0))
        return logp - logp.mean()

    def predict(self, F):
        return softmax(F)

    def predict_targets(self, F):
        return self.present[np.argmax(np.asarray(F, dtype=np.float64), axis=1)].astype(np.float64)[:, None]

    def hessians(self, T, F):
        P = softmax(F)
        return P * (1.0 - P)

    def loss(self, T, F):
        F = np.asarray(F, dtype=np.float64)
        top = F.max(axis=1)
        lse = top + np.log(np.exp(F - top[:, None]).sum(axis=1))
        return float(np.mean(lse - (T * F).sum(axis=1)))


class BinomialLogLoss(BoostingLoss):
    """Log-loss of two classes: one column, the log-odds of the second present class."""

    def __init__(self, present: np.ndarray, names: list):
        self.present = np.asarray(present, np.int64)
        self.columns = [names[1]]

    def encode(self, Y):
        y = np.asarray(Y, dtype=np.float64)[:, 0]
        return (y == self.present[1]).astype(np.float64)[:, None]

    def initial(self, T):
        eps = np.finfo(np.float64).eps
        p = float(np.clip(T[:, 0].mean(), eps, 1 - eps))
        return np.array([np.log(p / (1 - p))])

    def predict(self, F):
        return sigmoid(F)

    def predict_targets(self, F):
        """The second class where its probability is above 1/2 (log-odds > 0), else the first."""
        second = np.asarray(F, dtype=np.float64)[:, 0] > 0
        return np.where(second, self.present[1], self.present[0]).astype(np.float64)[:, None]

    def hessians(self, T, F):
        P = sigmoid(F)
        return P * (1.0 - P)

    def loss(self, T, F):
        F = np.asarray(F, dtype=np.float64)
        return float(np.mean(np.logaddexp(0.0, F) - T * F))


def log_loss(present: np.ndarray, names: list) -> BoostingLoss:
    """The log-loss of the classes ``present`` (their indices) named ``names``: binomial for two classes,
    multinomial for more."""
    return BinomialLogLoss(present, names) if len(present) == 2 else MultinomialLogLoss(present, names)
