"""Relief's descriptive distances: d_X between rows, the per-feature distances of neighbours (numba, no Spark).

Sketch
------
Features arrive scaled (numeric ones to [0, 1] by the training range, nominal ones as category indices,
NaN = missing); the distance of two values is :func:`spark_fr.tasks.distances.variable_distance`, and
``d_X(r, j) = mean_i d_i(r, j)``. :func:`block_distances` computes d_X from a group of instances to every
row of a block in one pass over the block (each data row is read once per group); rows without missing
values and with numeric features only go through one vectorised L1 loop (:func:`_l1_sums`). Every mode
computes every distance with these functions, so every mode gets the same bits.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..tasks.distances import variable_distance

#: instances whose distances are computed in one pass over the data (each data row is read once per group)
INSTANCE_GROUP = 8


@njit(cache=True, nogil=True, fastmath={"reassoc", "nsz"})
def _l1_sums(X, R, simple, out):
    """out[g, j] = sum_i |R[g, i] - X[j, i]| for the rows g with ``simple[g]`` (NaN if X[j] has a NaN).

    The only kernel allowed to reassociate its sum (so it vectorises); every distance of every mode is
    computed by this same compiled loop, so every mode gets the same bits.
    """
    n, D = X.shape
    G = R.shape[0]
    for j in range(n):
        for g in range(G):
            if simple[g]:
                s = 0.0
                for i in range(D):
                    s += abs(R[g, i] - X[j, i])
                out[g, j] = s


@njit(cache=True, nogil=True)
def block_distances(X, R, nominal, n_values, out):
    """d_X from each row of R to every row of X (``out[g, j]``).

    Rows of R without missing values, when every feature is numeric, go through the vectorised
    :func:`_l1_sums`; a NaN in ``X[j]`` makes that sum NaN, and such pairs (and all pairs of other rows of
    R) are computed with the general per-feature distance of Weka/CLUS.
    """
    n, D = X.shape
    G = R.shape[0]
    simple = np.ones(G, np.bool_)
    for g in range(G):
        for i in range(D):
            if nominal[i] or R[g, i] != R[g, i]:
                simple[g] = False
                break
    _l1_sums(X, R, simple, out)
    for g in range(G):
        for j in range(n):
            if simple[g]:
                s = out[g, j]
                if s == s:
                    out[g, j] = s / D
                    continue
            s = 0.0
            for i in range(D):
                s += variable_distance(R[g, i], X[j, i], nominal[i], n_values[i])
            out[g, j] = s / D


@njit(cache=True, nogil=True)
def fill_dmat(X, r_row, rows, nk, nominal, n_values, dmat):
    """dmat[l, i] = d_i(r, rows[l]) for l < nk."""
    D = X.shape[1]
    for l in range(nk):
        j = rows[l]
        for i in range(D):
            dmat[l, i] = variable_distance(r_row[i], X[j, i], nominal[i], n_values[i])


@njit(cache=True, nogil=True)
def nearest_labelled_distance(X, rows, labelled_rows, nominal, n_values):
    """d_X from each row of ``rows`` to its nearest row in ``labelled_rows``."""
    out = np.empty(rows.shape[0])
    D = X.shape[1]
    for q in range(rows.shape[0]):
        r = rows[q]
        best = np.inf
        for p in range(labelled_rows.shape[0]):
            j = labelled_rows[p]
            s = 0.0
            for i in range(D):
                s += variable_distance(X[r, i], X[j, i], nominal[i], n_values[i])
                if s >= best * D:
                    break
            d = s / D
            if d < best:
                best = d
        out[q] = best
    return out
