"""The weighted kNN search kernel (numba, no Spark): every test row's k nearest training rows.

Sketch
------
For each test row, one pass over the training rows: the squared weighted distance ``sum_i w_i d_i^2`` with Relief's
per-feature distance (:func:`spark_fr.tasks.distances.variable_distance`, its missing-value rules included), a sum
stopped as soon as it exceeds the current k-th distance (its terms are >= 0, and a floating-point sum of
non-negative terms never decreases: the same neighbours as the full sum), and the candidates kept in (distance,
row key) order by Relief's :func:`spark_fr.relief.neighbours.insert_candidate`. :mod:`spark_fr.evaluation.knn`
runs it on blocks of test rows, in the driver or in Spark tasks.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from ..relief.neighbours import insert_candidate
from ..tasks.distances import variable_distance

#: the training side of a search (the kernel's state, built by :meth:`spark_fr.evaluation.knn.NeighbourSearch.
#: training`): X float64 (n, A) the training rows, the weighted features only; keys uint64 (n,) their row keys
#: (ties); w float64 (A,) the weights (> 0); nominal bool (A,); n_values float64 (A,) category counts
Training = namedtuple("Training", "X keys w nominal n_values")


@njit(cache=True, nogil=True)
def nearest_rows(train, Q, k, idx, dist):
    """The k nearest training rows for every row of Q, in (distance, key) order.

    Parameters
    ----------
    train : Training
        The training rows, their keys and the features' weights, kinds and category counts.
    Q : float64 (m, A)
        Test rows, the same features.
    k : int
    idx : int64 (m, k)
        Out: row numbers of the neighbours (-1 when there are fewer than k training rows).
    dist : float64 (m, k)
        Out: their squared weighted distances (inf where idx is -1).
    """
    X, keys, w, nominal, n_values = train.X, train.keys, train.w, train.nominal, train.n_values
    n, A = X.shape
    best_d = np.empty(k)
    best_k = np.empty(k, np.uint64)
    best_j = np.empty(k, np.int64)
    for q in range(Q.shape[0]):
        count = 0
        for j in range(n):
            bound = best_d[k - 1] if count == k else np.inf
            s = 0.0
            for i in range(A):
                d = variable_distance(Q[q, i], X[j, i], nominal[i], n_values[i])
                s += w[i] * d * d
                if s > bound:
                    break
            if s > bound:
                continue
            count = insert_candidate(best_d, best_k, best_j, count, k, s, keys[j], j)
        for l in range(k):
            if l < count:
                idx[q, l] = best_j[l]
                dist[q, l] = best_d[l]
            else:
                idx[q, l] = -1
                dist[q, l] = np.inf
