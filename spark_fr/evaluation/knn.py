"""Weighted k-nearest neighbours, the thesis's judge of a ranking (numba kernel; driver or Spark tasks).

Algorithm sketch
----------------
A ranking's importances become feature weights ``w_i = max(importance_i, 0)`` (NaN counts as 0; all zero: all 1,
the thesis's rule), and a test row's neighbours are the k training rows nearest in::

    d(x, z)^2 = sum_i w_i d_i(x_i, z_i)^2

with ``d_i`` Relief's per-feature distance (:func:`spark_fr.tasks.distances.variable_distance`: numeric values
scaled to [0, 1] by the training range, ``|a - b|``; nominal ``1[a != b]``; a missing value as Weka and CLUS count
it: nominal ``1 - 1/|values|``, numeric with one value t known ``max(t, 1 - t)``, both missing 1). The thesis takes
the square root for MTR, MLC and HMLC and leaves it out for SSL; neither changes which rows are nearest, so the
kernel ranks by the sum of squares. Features of weight 0 are never read (a top-16 ranking reads 16 columns).

Rows are ordered by (distance, row key) (:func:`spark_fr.evaluation.knn_kernel.nearest_rows` keeps its candidates
with :func:`spark_fr.relief.neighbours.insert_candidate`, the order Relief's neighbour searches use): ties between
equally distant rows are broken by the rows' content keys, so the neighbours, and every prediction, do not depend
on the order of the rows. Each test row scans the training rows once, stopping a sum as soon as it exceeds the
current k-th distance (the terms are >= 0 and a floating-point sum of non-negative terms never decreases, so the
result is exactly the full search's).

Where it runs (:func:`nearest`): the test rows are cut into blocks, one unit of work each, and
:func:`spark_fr.runtime.spark.run_units` runs them in the driver's threads when the work is small and as Spark
tasks otherwise (the training rows broadcast once: classic or Spark Connect session), or ``mode='driver'`` /
``'spark'`` says where. Every block is computed by the same kernel on the same arrays, so both paths give the same
neighbours bit for bit. Memory: a block's k neighbours per row; the distances are never stored.

Predictions (:func:`neighbour_mean`, :func:`neighbour_vote`, :func:`neighbour_mode`): the neighbours vote or
average with equal weights (the thesis's rule): the mean of each numeric target or 0/1 label over the neighbours
where it is known (a label's mean is its predicted probability), the training mean when none is; the most
frequent class (ties to the lowest class index, as scikit-learn's ``KNeighborsClassifier``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .knn_kernel import Training, nearest_rows

#: seconds per (test row x training row x weighted feature) of the kernel on one core (measured on ENB-sized
#: data on the development machine), for run_units' choice between the driver and Spark tasks
SECONDS_PER_EVALUATION = 2e-9
#: (test rows x training rows) per unit of work: a block of test rows
BLOCK_PAIRS = 2e7


def feature_weights(importances) -> np.ndarray:
    """The thesis's weights of a ranking: ``max(importance, 0)`` (NaN: 0); all zero: all 1."""
    w = np.asarray(importances, dtype=np.float64)
    w = np.where(np.isnan(w), 0.0, np.maximum(w, 0.0))
    return w if np.any(w > 0) else np.ones_like(w)


@dataclass
class NeighbourSearch:
    """What a neighbour search needs (the payload shipped to Spark tasks).

    Attributes
    ----------
    X : float64 (n, A)
        The training rows' weighted features (contiguous).
    keys : uint64 (n,)
    weights, n_values : float64 (A,)
    nominal : bool (A,)
    features : int64 (A,)
        Which features of the full rows these are.
    k : int
    """

    X: np.ndarray
    keys: np.ndarray
    weights: np.ndarray
    nominal: np.ndarray
    n_values: np.ndarray
    features: np.ndarray
    k: int

    @classmethod
    def build(cls, X, keys, weights, nominal, n_values, k: int) -> "NeighbourSearch":
        """The search over training rows ``X`` (n, D) with per-feature ``weights`` (only those > 0 are used)."""
        w = np.asarray(weights, dtype=np.float64)
        if k < 1:
            raise ValueError(f"k must be >= 1, not {k}")
        active = np.flatnonzero(w > 0)
        return cls(np.ascontiguousarray(np.asarray(X, np.float64)[:, active]), np.asarray(keys, np.uint64),
                   np.ascontiguousarray(w[active]), np.ascontiguousarray(np.asarray(nominal, bool)[active]),
                   np.ascontiguousarray(np.asarray(n_values, np.float64)[active]), active, int(k))

    def block(self, Q) -> tuple:
        """(idx, dist) of the rows of ``Q`` (m, D: full rows) on this process."""
        Qa = np.ascontiguousarray(np.asarray(Q, np.float64)[:, self.features])
        m = Qa.shape[0]
        idx = np.empty((m, self.k), np.int64)
        dist = np.empty((m, self.k))
        nearest_rows(self.training(), Qa, self.k, idx, dist)
        return idx, dist

    def training(self) -> Training:
        """The kernel's view of the training side (:data:`spark_fr.evaluation.knn_kernel.Training`)."""
        return Training(self.X, self.keys, self.weights, self.nominal, self.n_values)

    def work(self, n_test: int) -> float:
        """Distance evaluations (test rows x training rows x features) of ``n_test`` rows."""
        return float(n_test) * self.X.shape[0] * max(self.X.shape[1], 1)


#: blocks a test set is cut into at least (when it has the rows): work for the driver's threads and Spark's tasks
MIN_BLOCKS = 8


def _blocks(n_test: int, n_train: int) -> list:
    """(start, stop) of the blocks of test rows: at most :data:`BLOCK_PAIRS` pairs each, and at least
    :data:`MIN_BLOCKS` blocks when there are that many rows."""
    size = max(1, min(int(BLOCK_PAIRS // max(n_train, 1)), -(-n_test // MIN_BLOCKS)))
    return [(a, min(n_test, a + size)) for a in range(0, n_test, size)]


def _work(search: NeighbourSearch, group) -> dict:
    return {start: search.block(Q) for start, Q in group}


def _merge(a: dict, b: dict) -> dict:
    a.update(b)
    return a


def nearest(search: NeighbourSearch, Q, spark=None, mode: str = "auto") -> tuple:
    """The neighbours of every row of ``Q`` (module sketch).

    Parameters
    ----------
    search : NeighbourSearch
    Q : float64 (m, D)
        Test rows (all features; the search reads its own).
    spark : SparkSession, optional
        Needed for ``mode='spark'``; with ``'auto'`` and no session, the driver computes.
    mode : {'auto', 'driver', 'spark'}
        'auto': :func:`spark_fr.runtime.spark.run_units` decides from the estimated work.

    Returns
    -------
    (idx, dist) : (int64 (m, k), float64 (m, k))
    """
    from ..runtime.spark import _units_in_driver, run_grouped, run_units
    from ..relief.broadcast import group_numbered

    Q = np.asarray(Q, np.float64)
    m = Q.shape[0]
    units = [(a, Q[a:b]) for a, b in _blocks(m, search.X.shape[0])]
    if not units:
        return np.empty((0, search.k), np.int64), np.empty((0, search.k))

    def size(group):
        return sum(u[1].shape[0] for u in group)

    def plan(left, parallelism):
        return group_numbered(left, parallelism, search.X.shape[0] * max(search.X.shape[1], 1))

    estimate = search.work(m) * SECONDS_PER_EVALUATION
    if mode == "driver" or (mode == "auto" and (spark is None or _small(spark, estimate))):
        # small work: the driver's threads, without a Spark job or progress lines
        res, _ = _units_in_driver(search, units, _work, _merge, {}, lambda i: True)
    elif mode == "spark":
        if spark is None:
            raise ValueError("mode='spark' needs a Spark session")
        res, _ = run_grouped(spark, search, plan(units, _parallelism(spark)), _work, _merge, {}, size=size,
                             label="kNN test rows", description="spark_fr: weighted kNN")
    elif mode == "auto":
        res, _, _ = run_units(spark, search, units, _work, _merge, {}, plan, estimated_seconds=estimate, size=size,
                              label="kNN test rows", description="spark_fr: weighted kNN")
    else:
        raise ValueError(f"mode must be 'auto', 'driver' or 'spark', not {mode!r}")
    starts = sorted(res)
    return np.vstack([res[s][0] for s in starts]), np.vstack([res[s][1] for s in starts])


def _small(spark, estimated_seconds: float) -> bool:
    """run_units' rule for work it keeps in the driver (a lazy session not started yet allows more)."""
    from ..runtime.spark import DRIVER_MAX_SECONDS, SESSION_START_SECONDS, _not_started, on_driver

    scale = SESSION_START_SECONDS / DRIVER_MAX_SECONDS if _not_started(spark) else 1.0
    return on_driver(estimated_seconds / scale)


def _parallelism(spark) -> int:
    from ..runtime.engine import engine_for, session_of

    return engine_for(session_of(spark)).parallelism()


# ----- predictions ----------------------------------------------------------------------------------------
def neighbour_mean(Y_train: np.ndarray, idx: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """Per test row, the mean of each column of ``Y_train`` over its neighbours where the value is known
    (``fallback`` per column when none is)."""
    Y = np.asarray(Y_train, np.float64)
    m, k = idx.shape
    T = Y.shape[1]
    valid = idx >= 0
    rows = np.where(valid, idx, 0)
    total = np.zeros((m, T))
    count = np.zeros((m, T))
    for l in range(k):
        v = Y[rows[:, l]]
        ok = ~np.isnan(v) & valid[:, l:l + 1]
        total += np.where(ok, v, 0.0)
        count += ok
    with np.errstate(invalid="ignore", divide="ignore"):
        out = total / count
    return np.where(count > 0, out, np.asarray(fallback, np.float64)[None, :])


def neighbour_vote(y_train: np.ndarray, idx: np.ndarray, n_classes: int, fallback: int) -> tuple:
    """(predicted class, class shares) of every test row: the most frequent class among its neighbours with a
    known class (ties to the lowest class index); ``fallback`` when none has one."""
    y = np.asarray(y_train, np.float64).ravel()
    m, k = idx.shape
    counts = np.zeros((m, n_classes))
    for l in range(k):
        j = idx[:, l]
        c = np.where(j >= 0, y[np.where(j >= 0, j, 0)], np.nan)
        ok = ~np.isnan(c)
        np.add.at(counts, (np.flatnonzero(ok), c[ok].astype(np.int64)), 1.0)
    total = counts.sum(axis=1, keepdims=True)
    pred = np.where(total[:, 0] > 0, counts.argmax(axis=1), fallback)
    with np.errstate(invalid="ignore", divide="ignore"):
        shares = np.where(total > 0, counts / total, 0.0)
    return pred.astype(np.float64), shares


def neighbour_mode(X_train: np.ndarray, idx: np.ndarray, nominal: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """Predicted feature values (the unsupervised protocol): numeric features the neighbours' mean, nominal ones
    their most frequent category (ties to the lowest index); ``fallback`` (training mean or mode) where no
    neighbour has the value."""
    X = np.asarray(X_train, np.float64)
    out = neighbour_mean(X, idx, fallback)
    nominal = np.asarray(nominal, bool)
    if idx.shape[1] == 1 or not nominal.any():  # one neighbour: its value (or the fallback) is also the mode
        return out
    for f in np.flatnonzero(nominal):
        col = X[:, f]
        n_cat = int(np.nanmax(col)) + 1 if np.any(~np.isnan(col)) else 1
        pred, _ = neighbour_vote(col, idx, n_cat, -1)
        out[:, f] = np.where(pred >= 0, pred, fallback[f])
    return out
