"""ReliefE's update rule: the update of one instance by its neighbours on the ORIGINAL rows, kept sparse (numba,
no Spark).

Sketch
------
The features are a CSR matrix (:data:`spark_fr.relief.embedded.SparseRows`: ``indptr``, ``indices`` sorted per
row, ``data``) of the range-scaled values (numeric features in [0, 1], nominal ones as category index; an absent
entry is 0). For instance r and its neighbours NN (of class c, or among all rows for MLC)::

    classification (ReliefF form):
        prior <- -1 if c == class(r) else P(c) / (1 - P(class(r)))
        W_j  += prior * diff_j(r, NN)
    MLC: tau_l = d_T(t_r, t_l)  (on raw labels or on E_T)
        t = mean tau; skip r unless 0 < t < 1
        W_j  += td_j / t - (d_j - td_j) / (1 - t)      (Alg. 3, spec C1)

    diff_j = mean_l d_j(x_r, x_l)                 standard (ReliefF)
           = | x_rj - mean_l x_lj |               absMean (numeric features; nominal ones keep the standard
                                                  mismatch share, a mean of categories means nothing)
    td_j   = mean_l tau_l d_j(x_r, x_l)

Only the features where r or one of its neighbours is non-zero are touched (a merge walk per neighbour), so
an update costs O(k (nnz(r) + nnz(neighbour))) whatever the width. :data:`SparseRule` is the rule of
:func:`spark_fr.relief.shard.relief_shard`; the weights are W / s on the driver (s = the sampled rows, spec
C10), summed exactly per micro-block by the caller.

Why not :mod:`spark_fr.relief.update`: its rule reads the neighbours' dense k x D distance matrix, which would
make every sparse row dense.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from ..tasks.distances import target_distance
from .neighbourhood import register

#: target distance code of the cosine distance on the embedded target space (beside tasks.distances' codes)
T_COSINE = 100

#: the sparse update rule's settings: priors (C,) class frequencies, tkind the MLC target distance (a code of
#: spark_fr.tasks.distances or T_COSINE), abs_mean (absMean diff of numeric features)
SparseRule = namedtuple("SparseRule", "priors tkind abs_mean")

#: per-feature sums over one instance's neighbours (D,): acc d_j, acc_t tau_l d_j, msum x_lj; mark (D,) and
#: touched (D,) the features touched; tau (cap,) the neighbours' target distances
SparseBuffers = namedtuple("SparseBuffers", "acc acc_t msum mark touched tau")


@njit(cache=True, nogil=True)
def new_buffers(D, cap):
    """:data:`SparseBuffers` for D features and up to ``cap`` neighbours."""
    return SparseBuffers(np.zeros(D), np.zeros(D), np.zeros(D), np.zeros(D, np.bool_), np.empty(D, np.int64),
                         np.zeros(cap))


@njit(cache=True, nogil=True, inline="always")
def feature_distance(a, b, nom):
    """d_j of two values: mismatch (nominal) or |a - b|."""
    if nom:
        return 0.0 if a == b else 1.0
    return abs(a - b)


@njit(cache=True, nogil=True)
def neighbour_diffs(rows, r, nbrs, nk, buf):
    """Per-feature sums over the neighbours nbrs[:nk] of d_j(x_r, x_l), tau_l d_j(x_r, x_l) and x_lj.

    Adds into ``buf.acc``, ``buf.acc_t``, ``buf.msum`` at the features where r or a neighbour is non-zero, lists
    them in ``buf.touched`` (``buf.mark`` flags them) and returns how many there are.
    """
    indptr, indices, data, nominal = rows.indptr, rows.indices, rows.data, rows.nominal
    acc, acc_t, msum, mark, touched, tau = buf
    nt = 0
    for l in range(nk):
        j = nbrs[l]
        tl = tau[l]
        p, pe = indptr[r], indptr[r + 1]
        q, qe = indptr[j], indptr[j + 1]
        while p < pe or q < qe:
            if q >= qe or (p < pe and indices[p] < indices[q]):
                f = indices[p]
                dv = feature_distance(data[p], 0.0, nominal[f])
                p += 1
            elif p >= pe or indices[q] < indices[p]:
                f = indices[q]
                dv = feature_distance(0.0, data[q], nominal[f])
                msum[f] += data[q]
                q += 1
            else:
                f = indices[p]
                dv = feature_distance(data[p], data[q], nominal[f])
                msum[f] += data[q]
                p += 1
                q += 1
            acc[f] += dv
            acc_t[f] += tl * dv
            if not mark[f]:
                mark[f] = True
                touched[nt] = f
                nt += 1
    return nt


@njit(cache=True, nogil=True)
def row_value(indptr, indices, data, r, f):
    """x_rf of a CSR row (0 when absent). Decision: the CSR's arrays, not its named tuple, are passed to this
    per-feature helper (a named tuple of 8 arrays passed by value per call made ReliefE's updates ~20 % slower)."""
    lo, hi = indptr[r], indptr[r + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        if indices[mid] < f:
            lo = mid + 1
        else:
            hi = mid
    if lo < indptr[r + 1] and indices[lo] == f:
        return data[lo]
    return 0.0


@njit(cache=True, nogil=True)
def feature_diff(acc, msum, xr, nk, nom, abs_mean):
    """diff_j from the sums: standard mean_l d_j, or absMean |x_rj - mean_l x_lj| (numeric features)."""
    if abs_mean and not nom:
        return abs(xr - msum / nk)
    return acc / nk


@njit(cache=True, nogil=True)
def _reset(nt, buf):
    acc, acc_t, msum, mark, touched, _ = buf
    for q in range(nt):
        f = touched[q]
        acc[f] = 0.0
        acc_t[f] = 0.0
        msum[f] = 0.0
        mark[f] = False


@njit(cache=True, nogil=True)
def update_mcc(rows, r, nbrs, nk, factor, abs_mean, W, buf):
    """W_j += factor * diff_j(r, nbrs[:nk]) (classification)."""
    indptr, indices, data, nominal = rows.indptr, rows.indices, rows.data, rows.nominal
    acc, _, msum, _, touched, tau = buf
    for l in range(nk):
        tau[l] = 0.0
    nt = neighbour_diffs(rows, r, nbrs, nk, buf)
    for q in range(nt):
        f = touched[q]
        xr = row_value(indptr, indices, data, r, f)
        W[f] += factor * feature_diff(acc[f], msum[f], xr, nk, nominal[f], abs_mean)
    _reset(nt, buf)


@njit(cache=True, nogil=True)
def update_mlc(rows, r, nbrs, nk, abs_mean, W, buf):
    """W_j += td_j / t - (d_j - td_j) / (1 - t) with t = mean tau (``buf.tau``, MLC); False (no update) unless
    0 < t < 1."""
    indptr, indices, data, nominal = rows.indptr, rows.indices, rows.data, rows.nominal
    acc, acc_t, msum, _, touched, tau = buf
    t = 0.0
    for l in range(nk):
        t += tau[l]
    t /= max(nk, 1)
    if not (0.0 < t < 1.0):
        return False
    nt = neighbour_diffs(rows, r, nbrs, nk, buf)
    for q in range(nt):
        f = touched[q]
        xr = row_value(indptr, indices, data, r, f)
        d = feature_diff(acc[f], msum[f], xr, nk, nominal[f], abs_mean)
        td = acc_t[f] / nk
        W[f] += td / t - (d - td) / (1.0 - t)
    _reset(nt, buf)
    return True


@njit(cache=True, nogil=True)
def mlc_target_distance(kind, Yt, r, j, tw):
    """d_T of rows r and j: cosine on (L2-normalised) E_T rows, or a label distance of tasks.distances."""
    if kind == T_COSINE:
        s = 0.0
        for c in range(Yt.shape[1]):
            s += Yt[r, c] * Yt[j, c]
        return 1.0 - s
    return target_distance(kind, Yt[r], Yt[j], tw, 1.0)


@njit(cache=True, nogil=True)
def sparse_update(rule, space, s, q, c, own, found, acc):
    """The sparse rule's update of instance q by its neighbours ``found`` = (rows, nk) of class c (MLC: c = 0),
    the same in every mode.

    Returns the neighbours used: nk, or -1 when there are none (classification), 0 when t is outside (0, 1)
    (MLC, no update).
    """
    nbrs, nk = found
    rows = space.rows
    r = space.instances[q]
    if space.n_classes > 0:
        if nk == 0:
            return -1
        o = int(own)
        if c == o:
            factor = -1.0
        else:
            factor = rule.priors[c] / (1.0 - rule.priors[o])
        update_mcc(rows, r, nbrs, nk, factor, rule.abs_mean, acc.W, s.buf)
        return nk
    tau, Yt, tw, kind = s.buf.tau, rows.Yt, s.tw, rule.tkind
    for l in range(nk):
        tau[l] = mlc_target_distance(kind, Yt, r, nbrs[l], tw)
    ok = update_mlc(rows, r, nbrs, nk, rule.abs_mean, acc.W, s.buf)
    return nk if ok else 0


register(SparseRule, update=sparse_update)
