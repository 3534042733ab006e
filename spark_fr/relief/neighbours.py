"""Nearest neighbours in (distance, row key) order: the candidate list of one instance (numba, no Spark).

Ties between equally distant rows are broken by the row's content key, which identical rows share, so the
choice between them never matters and the neighbours do not depend on the row order.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

#: the k nearest rows of one instance per class (C, k): distances, row keys, row positions, and counts (C,)
NeighbourLists = namedtuple("NeighbourLists", "dist keys rows counts")


@njit(cache=True, nogil=True)
def new_lists(C, k):
    """Empty :data:`NeighbourLists` for C classes (or 1) and k neighbours."""
    return NeighbourLists(np.empty((C, k)), np.empty((C, k), np.uint64), np.empty((C, k), np.int64),
                          np.zeros(C, np.int64))


@njit(cache=True, nogil=True, inline="always")
def _before(d1, k1, d2, k2):
    """Order of neighbour candidates: by distance, then by row key."""
    return d1 < d2 or (d1 == d2 and k1 < k2)


@njit(cache=True, nogil=True)
def insert_candidate(best_d, best_k, best_j, count, cap, d, key, j):
    """Insert (d, key, j) into the sorted candidate list (length ``count`` <= ``cap``); returns the count."""
    if count == cap:
        if not _before(d, key, best_d[cap - 1], best_k[cap - 1]):
            return count
        pos = cap - 1
    else:
        pos = count
        count += 1
    while pos > 0 and _before(d, key, best_d[pos - 1], best_k[pos - 1]):
        best_d[pos] = best_d[pos - 1]
        best_k[pos] = best_k[pos - 1]
        best_j[pos] = best_j[pos - 1]
        pos -= 1
    best_d[pos] = d
    best_k[pos] = key
    best_j[pos] = j
    return count


@njit(cache=True, nogil=True)
def neighbour_rows(dist, keys, r, k, classes, n_classes):
    """The k nearest rows of r (all rows, or per class when n_classes > 0), in (distance, key) order.

    ``dist`` holds d_X from r to every row. Returns (idx (C, k), counts (C,)) with C = max(n_classes, 1);
    rows with a missing class are skipped in the per-class search.
    """
    lists = new_lists(n_classes if n_classes > 0 else 1, k)
    nearest_rows(dist, keys, r, classes, n_classes, lists)
    return lists.rows, lists.counts


@njit(cache=True, nogil=True)
def nearest_rows(dist, keys, r, classes, n_classes, lists):
    """:func:`neighbour_rows` into ``lists`` (k = its width): no allocation per instance."""
    n = dist.shape[0]
    k = lists.rows.shape[1]
    best_d, best_k, best_j, counts = lists
    counts[:] = 0
    for j in range(n):
        if j == r:
            continue
        c = 0
        if n_classes > 0:
            cv = classes[j]
            if cv != cv:
                continue
            c = int(cv)
        counts[c] = insert_candidate(best_d[c], best_k[c], best_j[c], counts[c], k, dist[j], keys[j], j)


@njit(cache=True, nogil=True)
def kept_candidates(cand_k, n, own_key, limit, keep):
    """Positions of the neighbours among ``n`` merged candidates (keys ``cand_k``, in neighbour order): one
    candidate carrying the instance's own key (itself, or an identical copy: the same distance) is dropped,
    then the first ``limit`` are kept. Writes them into ``keep`` and returns their count (tall modes of Relief
    and ReliefE)."""
    nk = 0
    dropped = False
    for l in range(n):
        if not dropped and cand_k[l] == own_key:
            dropped = True
            continue
        if nk == limit:
            break
        keep[nk] = l
        nk += 1
    return nk


@njit(cache=True, nogil=True)
def sorted_candidates(dist, r, classes, cls):
    """Rows of class ``cls`` (all rows when cls < 0) other than r, in (distance, row) order (ReliefE's adaptive k:
    rows in canonical key order, so ties by row are ties by key)."""
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
