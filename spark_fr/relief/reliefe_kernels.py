"""ReliefE's per-instance work: neighbour distances, neighbours (fixed or adaptive k) and the updates on the
ORIGINAL rows, kept sparse (numba, no Spark).

Sketch
------
The features are a CSR matrix (``indptr``, ``indices`` sorted per row, ``data``) of the range-scaled values
(numeric features in [0, 1], nominal ones as category index; an absent entry is 0). For each sampled row r::

    dist  <- 1 - <e_r, e_j> for every row j          (input embedded: E's rows are L2-normalised, cosine)
             sum_i d_i(x_r, x_j)                       (not embedded: Manhattan / mismatch on the raw rows,
                                                        by a merge walk of the two sparse rows)
    classification (ReliefF form): for each class c with rows other than r,
        NN_c  <- the k nearest rows of class c (r excluded), in (distance, row) order; k fixed or adaptive
        prior <- -1 if c == class(r) else P(c) / (1 - P(class(r)))
        W_j  += prior * diff_j(r, NN_c)
    MLC: NN <- the k nearest rows (r excluded);  tau_l = d_T(t_r, t_l)  (on raw labels or on E_T)
        t = mean tau; skip r unless 0 < t < 1
        W_j  += td_j / t - (d_j - td_j) / (1 - t)      (Alg. 3, spec C1)

    diff_j = mean_l d_j(x_r, x_l)                 standard (ReliefF)
           = | x_rj - mean_l x_lj |               absMean (numeric features; nominal ones keep the standard
                                                  mismatch share, a mean of categories means nothing)
    td_j   = mean_l tau_l d_j(x_r, x_l)

Only the features where r or one of its neighbours is non-zero are touched (a merge walk per neighbour), so
an update costs O(k (nnz(r) + nnz(neighbour))) whatever the width. The weights are W / s on the driver
(s = the sampled rows, spec C10), summed exactly per micro-block by the caller.

Tall mode (:mod:`spark_fr.relief.reliefe_tall`) runs the same pieces apart: :func:`block_candidates` (the
k1 best (distance, key) rows of one block per instance, by :func:`distances_between`, the distance of both
modes), Relief's candidate merge, :func:`chosen_neighbours` (one own-key candidate dropped, first k or the
gap rule's k) and :func:`updates_from_neighbours` (the same :func:`update_instance` calls on the gathered rows).

Why not :mod:`spark_fr.relief.update`: its kernels take the neighbours' dense k x D distance matrix, which
would make every sparse row dense; the neighbour search itself is Relief's
(:func:`spark_fr.relief.neighbours.neighbour_rows`, the same (distance, key) order).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..tasks.distances import target_distance
from .adaptive_k import gap_k
from .neighbours import insert_candidate, kept_candidates, neighbour_rows

#: target distance code of the cosine distance on the embedded target space (beside tasks.distances' codes)
T_COSINE = 100


@njit(cache=True, nogil=True, inline="always")
def _d(a, b, nom):
    if nom:
        return 0.0 if a == b else 1.0
    return abs(a - b)


@njit(cache=True, nogil=True)
def sparse_l1_between(ip_a, ix_a, d_a, r, ip_b, ix_b, d_b, j, nominal):
    """sum_i d_i(a_r, b_j) by a merge walk of row r of CSR a and row j of CSR b (exact, in feature order)."""
    p, pe = ip_a[r], ip_a[r + 1]
    q, qe = ip_b[j], ip_b[j + 1]
    s = 0.0
    while p < pe or q < qe:
        if q >= qe or (p < pe and ix_a[p] < ix_b[q]):
            s += _d(d_a[p], 0.0, nominal[ix_a[p]])
            p += 1
        elif p >= pe or ix_b[q] < ix_a[p]:
            s += _d(0.0, d_b[q], nominal[ix_b[q]])
            q += 1
        else:
            s += _d(d_a[p], d_b[q], nominal[ix_a[p]])
            p += 1
            q += 1
    return s


@njit(cache=True, nogil=True)
def sparse_l1(indptr, indices, data, nominal, r, j):
    """sum_i d_i(x_r, x_j) of two rows of one CSR (:func:`sparse_l1_between`)."""
    return sparse_l1_between(indptr, indices, data, r, indptr, indices, data, j, nominal)


@njit(cache=True, nogil=True)
def distances_between(ip_a, ix_a, d_a, E_a, r, ip_b, ix_b, d_b, E_b, nominal, out):
    """out[j] = the neighbour distance of row r of a and every row j of b: cosine on the embeddings E (when
    they have columns), else sparse L1 on the CSR rows. The one distance of both modes (broadcast: a = b)."""
    n = out.shape[0]
    d = E_a.shape[1]
    if d > 0:
        for j in range(n):
            s = 0.0
            for c in range(d):
                s += E_a[r, c] * E_b[j, c]
            out[j] = 1.0 - s
    else:
        for j in range(n):
            out[j] = sparse_l1_between(ip_a, ix_a, d_a, r, ip_b, ix_b, d_b, j, nominal)


@njit(cache=True, nogil=True)
def distances_from(indptr, indices, data, nominal, E, r, out):
    """out[j] = the neighbour distance of rows r and j of one matrix (:func:`distances_between`)."""
    distances_between(indptr, indices, data, E, r, indptr, indices, data, E, nominal, out)


@njit(cache=True, nogil=True)
def sorted_candidates(dist, r, classes, cls):
    """Rows of class ``cls`` (all rows when cls < 0) other than r, in (distance, row) order."""
    n = dist.shape[0]
    cnt = 0
    for j in range(n):
        if j != r and (cls < 0 or classes[j] == cls):
            cnt += 1
    rows = np.empty(cnt, np.int64)
    vals = np.empty(cnt)
    q = 0
    for j in range(n):
        if j != r and (cls < 0 or classes[j] == cls):
            rows[q] = j
            vals[q] = dist[j]
            q += 1
    order = np.argsort(vals, kind="mergesort")  # stable: ties by row (rows are in canonical key order)
    return rows[order], vals[order]


@njit(cache=True, nogil=True)
def neighbour_diffs(indptr, indices, data, nominal, r, rows, nk, tau, acc, acc_t, msum, mark, touched):
    """Per-feature sums over the neighbours rows[:nk] of d_j(x_r, x_l), tau_l d_j(x_r, x_l) and x_lj.

    Adds into ``acc``, ``acc_t``, ``msum`` at the features where r or a neighbour is non-zero, lists them in
    ``touched`` (``mark`` flags them) and returns how many there are.
    """
    nt = 0
    for l in range(nk):
        j = rows[l]
        tl = tau[l]
        p, pe = indptr[r], indptr[r + 1]
        q, qe = indptr[j], indptr[j + 1]
        while p < pe or q < qe:
            if q >= qe or (p < pe and indices[p] < indices[q]):
                f = indices[p]
                dv = _d(data[p], 0.0, nominal[f])
                p += 1
            elif p >= pe or indices[q] < indices[p]:
                f = indices[q]
                dv = _d(0.0, data[q], nominal[f])
                msum[f] += data[q]
                q += 1
            else:
                f = indices[p]
                dv = _d(data[p], data[q], nominal[f])
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
def _value(indptr, indices, data, r, f):
    """x_rf of a CSR row (0 when absent)."""
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
def _reset(nt, touched, acc, acc_t, msum, mark):
    for q in range(nt):
        f = touched[q]
        acc[f] = 0.0
        acc_t[f] = 0.0
        msum[f] = 0.0
        mark[f] = False


@njit(cache=True, nogil=True)
def update_mcc(indptr, indices, data, nominal, r, rows, nk, factor, abs_mean, W, buf):
    """W_j += factor * diff_j(r, rows[:nk]) (classification; ``buf`` = (acc, acc_t, msum, mark, touched, tau))."""
    acc, acc_t, msum, mark, touched, tau = buf
    for l in range(nk):
        tau[l] = 0.0
    nt = neighbour_diffs(indptr, indices, data, nominal, r, rows, nk, tau, acc, acc_t, msum, mark, touched)
    for q in range(nt):
        f = touched[q]
        xr = _value(indptr, indices, data, r, f)
        W[f] += factor * feature_diff(acc[f], msum[f], xr, nk, nominal[f], abs_mean)
    _reset(nt, touched, acc, acc_t, msum, mark)


@njit(cache=True, nogil=True)
def update_mlc(indptr, indices, data, nominal, r, rows, nk, tau, abs_mean, W, buf):
    """W_j += td_j / t - (d_j - td_j) / (1 - t) with t = mean tau (MLC); False (no update) unless 0 < t < 1."""
    acc, acc_t, msum, mark, touched, _ = buf
    t = 0.0
    for l in range(nk):
        t += tau[l]
    t /= max(nk, 1)
    if not (0.0 < t < 1.0):
        return False
    nt = neighbour_diffs(indptr, indices, data, nominal, r, rows, nk, tau, acc, acc_t, msum, mark, touched)
    for q in range(nt):
        f = touched[q]
        xr = _value(indptr, indices, data, r, f)
        d = feature_diff(acc[f], msum[f], xr, nk, nominal[f], abs_mean)
        td = acc_t[f] / nk
        W[f] += td / t - (d - td) / (1.0 - t)
    _reset(nt, touched, acc, acc_t, msum, mark)
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
def _nearest(dist, keys, r, k, adaptive, k_max, classes, cls):
    """(rows, nk): r's neighbours among class ``cls`` with adaptive k, or among all rows (cls < 0) with
    either k (fixed-k neighbours per class come from one :func:`neighbour_rows` call in the caller)."""
    if adaptive:
        rows, vals = sorted_candidates(dist, r, classes, cls)
        return rows, gap_k(vals, rows.shape[0], k_max)
    idx, counts = neighbour_rows(dist, keys, r, k, classes, 0)
    return idx[0], counts[0]


@njit(cache=True, nogil=True)
def reliefe_shard(indptr, indices, data, nominal, E, keys, classes, n_classes, priors, Yt, tkind, instances,
                  k, adaptive, k_max, abs_mean):
    """The summed updates of a block of sampled rows.

    Parameters
    ----------
    indptr, indices, data : CSR of the range-scaled features (n rows, D = nominal.size columns)
    nominal : bool[D]
    E : float64[n, d]
        L2-normalised embedding of the rows (d = 0: neighbours by sparse L1 on the raw rows).
    keys : uint64[n]
        Row keys (tie-breaking of fixed-k neighbours).
    classes : float64[n]
        Class index per row (classification), ignored for MLC.
    n_classes : int
        > 0: classification (ReliefF form); 0: MLC.
    priors : float64[C]
    Yt : float64[n, T]
        MLC target rows: 0/1 labels, or the L2-normalised target embedding for ``tkind == T_COSINE``.
    tkind : int
    instances : int64[m]
    k : int
        Fixed k (ignored when ``adaptive``).
    adaptive : bool
    k_max : int
        Cap of the adaptive search (0: none).
    abs_mean : bool

    Returns
    -------
    (W float64[D], iterations float, ks int64[m, max(C, 1)])
        ``ks[q, c]``: neighbours used for instance q and class c (-1: none; MLC: column 0; a skipped MLC
        instance: 0).
    """
    n = keys.shape[0]
    D = nominal.shape[0]
    C = n_classes if n_classes > 0 else 1
    m = instances.shape[0]
    W = np.zeros(D)
    ks = np.full((m, C), -1, np.int64)
    dist = np.empty(n)
    cap = n
    buf = (np.zeros(D), np.zeros(D), np.zeros(D), np.zeros(D, np.bool_), np.empty(D, np.int64), np.zeros(cap))
    tw = np.ones(Yt.shape[1])
    tau = np.empty(cap)
    for q in range(m):
        r = instances[q]
        distances_from(indptr, indices, data, nominal, E, r, dist)
        own = int(classes[r]) if n_classes > 0 else 0
        if n_classes > 0 and not adaptive:
            idx, counts = neighbour_rows(dist, keys, r, k, classes, n_classes)
        for c in range(C):
            if adaptive or n_classes == 0:
                rows, nk = _nearest(dist, keys, r, k, adaptive, k_max, classes, c if n_classes > 0 else -1)
            else:
                rows = idx[c]
                nk = counts[c]
            ks[q, c] = update_instance(indptr, indices, data, nominal, r, rows, nk, c, own, n_classes, priors, Yt,
                                       tkind, tw, tau, abs_mean, W, buf)
    return W, float(m), ks


@njit(cache=True, nogil=True)
def update_instance(indptr, indices, data, nominal, r, rows, nk, c, own, n_classes, priors, Yt, tkind, tw, tau,
                    abs_mean, W, buf):
    """The update of row r by its neighbours rows[:nk] (of class c; MLC: c = 0), the same in every mode.

    Returns the neighbours used: nk, or -1 when there are none (classification), 0 when t is outside (0, 1)
    (MLC, no update).
    """
    if n_classes > 0:
        if nk == 0:
            return -1
        if c == own:
            factor = -1.0
        else:
            factor = priors[c] / (1.0 - priors[own])
        update_mcc(indptr, indices, data, nominal, r, rows, nk, factor, abs_mean, W, buf)
        return nk
    for l in range(nk):
        tau[l] = mlc_target_distance(tkind, Yt, r, rows[l], tw)
    ok = update_mlc(indptr, indices, data, nominal, r, rows, nk, tau, abs_mean, W, buf)
    return nk if ok else 0


# ----- tall mode: candidates per block, their merge (Relief's), the neighbours, the updates --------------------
@njit(cache=True, nogil=True)
def block_candidates(ip_b, ix_b, d_b, E_b, keys_b, classes_b, ip_i, ix_i, d_i, E_i, inst, nominal, n_classes, k1):
    """The k1 best candidate neighbours, in (distance, key) order, of each instance among the rows of one block.

    The instances are rows ``inst`` of their own CSR (``ip_i``, ``ix_i``, ``d_i``) and embedding ``E_i``; the
    block's rows are (``ip_b``, ``ix_b``, ``d_b``, ``E_b``). The candidates are per class (classification) or
    among all rows (``n_classes`` = 0); the instance itself is a candidate too (the caller drops it).

    Returns
    -------
    (dist (m, C, k1), keys (m, C, k1), counts (m, C))
    """
    m = inst.shape[0]
    nb = keys_b.shape[0]
    C = n_classes if n_classes > 0 else 1
    cd = np.full((m, C, k1), np.inf)
    ck = np.zeros((m, C, k1), np.uint64)
    cj = np.zeros((m, C, k1), np.int64)
    cnt = np.zeros((m, C), np.int64)
    dist = np.empty(nb)
    for q in range(m):
        distances_between(ip_i, ix_i, d_i, E_i, inst[q], ip_b, ix_b, d_b, E_b, nominal, dist)
        for j in range(nb):
            c = int(classes_b[j]) if n_classes > 0 else 0
            cnt[q, c] = insert_candidate(cd[q, c], ck[q, c], cj[q, c], cnt[q, c], k1, dist[j], keys_b[j], j)
    return cd, ck, cnt


@njit(cache=True, nogil=True)
def chosen_neighbours(ikeys, cand_d, cand_k, cand_n, k, adaptive, k_max):
    """The neighbours' keys of each instance and class from the merged candidates.

    One candidate with the instance's own key (itself, or an identical copy: the same distance) is dropped;
    then the first k are kept, or (adaptive) the first :func:`gap_k` of them. With k1 = k + 1 candidates
    (fixed k), k_max + 2 (adaptive, capped) or all rows (adaptive, ``k_max`` = 0) these are the neighbours
    broadcast mode finds, in the same order.

    Returns
    -------
    (keys (m, C, k1), counts (m, C))
    """
    m, C, k1 = cand_k.shape
    out = np.zeros((m, C, k1), np.uint64)
    counts = np.zeros((m, C), np.int64)
    vals = np.empty(k1)
    keep = np.empty(k1, np.int64)
    for q in range(m):
        for c in range(C):
            nk = kept_candidates(cand_k[q, c], cand_n[q, c], ikeys[q], k1, keep)
            for j in range(nk):
                out[q, c, j] = cand_k[q, c, keep[j]]
                vals[j] = cand_d[q, c, keep[j]]
            if adaptive:
                if k_max > 0 and nk > k_max + 1:
                    nk = k_max + 1
                counts[q, c] = gap_k(vals, nk, k_max)
            else:
                counts[q, c] = min(nk, k)
    return out, counts


@njit(cache=True, nogil=True)
def updates_from_neighbours(indptr, indices, data, nominal, inst, own, nbrs, counts, n_classes, priors, Yt, tkind,
                            abs_mean):
    """The summed updates of a block of instances whose neighbours are known (rows of one local CSR).

    ``inst[q]`` is instance q's row, ``own[q]`` its class, ``nbrs[q, c, :counts[q, c]]`` its neighbours' rows;
    the same :func:`update_instance` calls, in the same order, as :func:`reliefe_shard`. Returns as it does.
    """
    m, C, cap = nbrs.shape
    D = nominal.shape[0]
    W = np.zeros(D)
    ks = np.full((m, C), -1, np.int64)
    buf = (np.zeros(D), np.zeros(D), np.zeros(D), np.zeros(D, np.bool_), np.empty(D, np.int64), np.zeros(cap))
    tw = np.ones(Yt.shape[1])
    tau = np.empty(cap)
    for q in range(m):
        for c in range(C):
            ks[q, c] = update_instance(indptr, indices, data, nominal, inst[q], nbrs[q, c], counts[q, c], c, own[q],
                                       n_classes, priors, Yt, tkind, tw, tau, abs_mean, W, buf)
    return W, float(m), ks
