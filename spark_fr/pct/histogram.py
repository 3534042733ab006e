"""A tree's feature codes, and the histogram of one feature over a node: numba kernels, no Spark.

Sketch
------
A tree is grown on :data:`Codes`: one uint8 code per feature and row (255 = missing). Every split search of
a feature starts from the codes present in the node's rows (:data:`PresentCodes`: ``touched[:nt]`` in
increasing order, the missing code last, so ``touched[:n_known]`` are the known ones) and, for the dense
target matrix, from the :data:`Histogram` of the feature over the node: per code b, the weight ``w[b]`` and
the per-column sums of the rows with that code (:func:`fill_histogram`). The histogram is zero between
uses: only the touched codes' cells are reset after one (:func:`clear_histogram`), so a small node costs
O(rows * K), not O(256 * K). A node of at most :data:`SMALL_NODE_ROWS` rows is searched on a *small* histogram
instead (:func:`fill_small_histogram`): its rows sorted by code, one cell per present code in that order, nothing
to reset. The label-sparse backend
buckets the rows by code instead (:mod:`spark_fr.pct.sparse_targets`) and orders its codes the same way
(:func:`order_codes`).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from .jit import BORROWING, INLINE
from .node_rows import MISSING

#: the most columns of the clustering targets whose loops run a constant number of times (:func:`add_complete_rows`)
UNROLLED_COLUMNS = 8
#: the most rows of a node whose features the dense backend searches on a small histogram
#: (:func:`fill_small_histogram`; its sort packs a row's position into 8 bits)
SMALL_NODE_ROWS = 32

#: the feature codes a tree is grown on: ``X`` uint8 (D, n), 255 = missing (numeric codes are ordered bins,
#: nominal codes category indices); ``nominal`` bool (D,); ``lower``, ``upper`` float64 (D, 255), the smallest
#: and largest raw value of each numeric bin (the extra-trees splitter's thresholds); ``by_row`` the same codes
#: row-major (n, D), read at small nodes (:func:`small_node_code`), or (0, 0)
Codes = namedtuple("Codes", ["X", "nominal", "lower", "upper", "by_row"], defaults=(np.zeros((0, 0), np.uint8),))
#: per code b of one feature over a node: the weight ``w[b]`` (0 marks an untouched code), the per-column
#: weighted sums ``s[b, k]``, squares ``q[b, k]`` and known weights ``n[b, k]`` (``q`` and ``n`` only with
#: missing target values; ``n`` is 1 x 1 otherwise), and the ``touched`` codes
Histogram = namedtuple("Histogram", ["w", "s", "q", "n", "touched", "codes"])
#: the codes of a feature present in a node: ``touched[:nt]`` (the histogram's; a small histogram's cells), of
#: which the first ``n_known`` are known (the missing code, if present, is last), and ``MW`` the weight of the
#: missing block
PresentCodes = namedtuple("PresentCodes", ["nt", "n_known", "MW"])


@njit(**INLINE)
def feature_varies(pc, fractional):
    """Whether a feature takes two values in the node (with fractional missing values: two known values), the
    condition for searching a test of it."""
    return pc.n_known >= 2 if fractional else pc.nt >= 2


@njit(**BORROWING)
def order_codes(touched, nt, marks):
    """Put the ``nt`` touched codes in increasing order; ``marks[b]`` is non-zero for a touched code b. Many
    codes: collected in order by a scan of the 256 marks (an insertion sort of random codes would be
    quadratic); few (deep nodes): an insertion sort. Returns (nt, n_known) of :data:`PresentCodes`."""
    if nt > 24:
        nt = 0
        for b in range(256):  # no branch: b is kept by the next write only if it is marked
            touched[nt] = b
            nt += marks[b] != 0
    else:
        for i in range(1, nt):
            v = touched[i]
            j = i - 1
            while j >= 0 and touched[j] > v:
                touched[j + 1] = touched[j]
                j -= 1
            touched[j + 1] = v
    if touched[nt - 1] == MISSING:
        return nt, nt - 1
    return nt, nt


@njit(**BORROWING)
def fill_histogram(X, f, nr, start, end, G, has_missing, hist):
    """The :data:`Histogram` of feature f over the node rows ``[start, end)``, whose clustering rows are
    ``G[:end - start]`` in node order (``G[i - start]`` is the row of position i, as
    :func:`~spark_fr.pct.impurity.node_totals` gathers them); returns its :data:`PresentCodes`. With complete
    targets ``q`` and ``n`` are not filled.

    The histogram is all zeros on entry (:func:`clear_histogram` resets the touched codes' cells after use), so
    a row's cell is added to without a test: a code is new when its weight was 0 (every row weighs more), and is
    appended to ``touched`` without a branch (the append is kept only then). A branch per row on whether its
    code was new cost a misprediction at every other row of a node with as many rows as codes (2-3x the time
    per row on wide data). The sums are the same additions in the same order, from the same zeros."""
    hw, hs, hq, hn, touched, gathered = hist
    K = G.shape[1]
    if nr.codes.shape[1] == 0:  # the node's codes first: independent loads, many cache misses in flight
        xf = X[f]
        for i in range(start, end):
            gathered[i - start] = xf[nr.rows[i]]
    else:
        for i in range(start, end):
            gathered[i - start] = nr.codes[i, f]
    if not has_missing:
        nt = add_complete_rows(hist, nr.weights, start, end, G)
    else:
        nt = 0
        for i in range(start, end):
            b = gathered[i - start]
            wr = nr.weights[i]
            g = i - start
            nt = add_weight(hist, nt, b, wr)
            for k in range(K):
                z = G[g, k]
                if z == z:
                    hs[b, k] += wr * z
                    hq[b, k] += wr * z * z
                    hn[b, k] += wr
    nt, n_known = order_codes(touched, nt, hw)
    return PresentCodes(nt, n_known, hw[MISSING] if n_known < nt else 0.0)


@njit(**INLINE)
def add_weight(hist, nt, b, wr):
    """Add a row's weight ``wr`` to code b's cell; b is appended to the ``nt`` touched codes when it is new (the
    append is kept only then, without a branch). Returns the new ``nt``."""
    old = hist.w[b]
    hist.touched[nt] = b
    hist.w[b] = old + wr
    return nt + (old == 0.0)


@njit(**INLINE)
def add_complete_rows(hist, weights, start, end, G):
    """Add the rows ``[start, end)`` (codes ``hist.codes[:end - start]``, clustering rows ``G``, complete) to the
    cells of their codes; returns the number of codes touched (appended to ``hist.touched``).

    Decision: with at most :data:`UNROLLED_COLUMNS` columns the loop over a row's columns runs that many times, the
    columns past K skipped by a test (LLVM unrolls it; one copy of the loop serves every K): a loop of K trips read
    at run time cost a third more per row (20,000 x 200 x 5), as much as a copy per K (which cost compile time).
    The same additions in the same order."""
    if G.shape[1] <= UNROLLED_COLUMNS:
        return _add_rows(hist, weights, start, end, G, UNROLLED_COLUMNS)
    return _add_rows(hist, weights, start, end, G, G.shape[1])


@njit(**INLINE)
def _add_rows(hist, weights, start, end, G, trips):
    hs, gathered = hist.s, hist.codes
    K = G.shape[1]
    nt = 0
    for i in range(start, end):
        b = gathered[i - start]
        wr = weights[i]
        g = i - start
        nt = add_weight(hist, nt, b, wr)
        for k in range(trips):
            if k < K:
                hs[b, k] += wr * G[g, k]
    return nt


@njit(**INLINE)
def small_node_code(codes, nr, i, f):
    """Feature f's code of the row at position i of a small node: from the node codes when the tree keeps them,
    else from the row-major codes when given (a row's codes share a few cache lines, which the node's other
    candidate features and its ancestors' searches read too), else from X."""
    if nr.codes.shape[1] > 0:
        return nr.codes[i, f]
    if codes.by_row.shape[0] > 0:
        return codes.by_row[nr.rows[i], f]
    return codes.X[f, nr.rows[i]]


@njit(**INLINE)
def fill_small_histogram(codes, f, nr, start, end, G, keys, hist):
    """The histogram of feature f over a node of at most :data:`SMALL_NODE_ROWS` rows with complete targets
    (clustering rows ``G`` in node order, as :func:`fill_histogram` reads them), in cells of its own: the t-th
    smallest present code in cell t (the code in ``hist.codes[t]``; ``hist.touched`` is 0, 1, 2, ... and never
    written), the missing code's cell, when present, also copied into cell ``MISSING``. Returns its
    :data:`PresentCodes`.

    The rows are sorted by (code, position) without a branch (each key's rank is the number of smaller keys;
    ``keys`` holds 2 x :data:`SMALL_NODE_ROWS`), then each run of equal codes is summed into its cell. A cell
    starts from 0 and adds its rows in node order, as :func:`fill_histogram` does: the same sums to the bit, and
    a split scan over these cells gives the same gains. Nothing is left to reset.

    Decision: at the small nodes most candidate features are searched at, the 256-code histogram cost a sort of
    the touched codes that mispredicts and a reset of their cells; a cell written by assignment (not reset, then
    added to) and the codes read outside the sort were a tenth of the grower's time more (20,000 x 200 x 5)."""
    n = end - start
    K = G.shape[1]
    for i in range(n):
        keys[i] = (np.int32(small_node_code(codes, nr, start + i, f)) << 8) | i
    for i in range(n):
        ki = keys[i]
        r = 0
        for j in range(n):
            r += keys[j] < ki
        keys[n + r] = ki
    hw, hs, cell_code = hist.w, hist.s, hist.codes
    c = -1
    prev = -1
    for p in range(n):
        key = keys[n + p]
        b = key >> 8
        g = key & 255
        wr = nr.weights[start + g]
        if b != prev:
            c += 1
            cell_code[c] = b
            hw[c] = 0.0 + wr
            for k in range(K):
                hs[c, k] = 0.0 + wr * G[g, k]
            prev = b
        else:
            hw[c] += wr
            for k in range(K):
                hs[c, k] += wr * G[g, k]
    nt = c + 1
    if prev != MISSING:
        return PresentCodes(nt, nt, 0.0)
    hw[MISSING] = hw[c]
    for k in range(K):
        hs[MISSING, k] = hs[c, k]
    return PresentCodes(nt, c, hw[c])


@njit(**INLINE)
def clear_weights(hw, touched, nt):
    """Reset the weights of the touched codes (the marks :func:`order_codes` reads)."""
    for t in range(nt):
        hw[touched[t]] = 0.0


@njit(**INLINE)
def clear_histogram(hist, nt):
    """Reset every cell of the ``nt`` touched codes of a :data:`Histogram` (weights and sums) to zero, the state
    :func:`fill_histogram` starts from."""
    hw, hs, hq, hn = hist.w, hist.s, hist.q, hist.n
    K = hs.shape[1]
    with_counts = hn.shape[0] > 1
    for t in range(nt):
        b = hist.touched[t]
        hw[b] = 0.0
        for k in range(K):
            hs[b, k] = 0.0
        if with_counts:  # q and n are filled with missing target values only (n is 1 x 1 otherwise)
            for k in range(K):
                hq[b, k] = 0.0
                hn[b, k] = 0.0
