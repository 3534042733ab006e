"""A tree's feature codes, and the histogram of one feature over a node: numba kernels, no Spark.

Sketch
------
A tree is grown on :data:`Codes`: one uint8 code per feature and row (255 = missing). Every split search of
a feature starts from the codes present in the node's rows (:data:`PresentCodes`: ``touched[:nt]`` in
increasing order, the missing code last, so ``touched[:n_known]`` are the known ones) and, for the dense
target matrix, from the :data:`Histogram` of the feature over the node: per code b, the weight ``w[b]`` and
the per-column sums of the rows with that code (:func:`fill_histogram`). Only the touched codes are zeroed and
reset (:func:`clear_histogram`), so a small node costs O(rows * K), not O(256 * K). The label-sparse backend
buckets the rows by code instead (:mod:`spark_fr.pct.sparse_targets`) and orders its codes the same way
(:func:`order_codes`).
"""
from __future__ import annotations

from collections import namedtuple

from numba import njit

from .jit import BORROWING, INLINE
from .node_rows import MISSING, code_at

#: the feature codes a tree is grown on: ``X`` uint8 (D, n), 255 = missing (numeric codes are ordered bins,
#: nominal codes category indices); ``nominal`` bool (D,); ``lower``, ``upper`` float64 (D, 255), the smallest
#: and largest raw value of each numeric bin (the extra-trees splitter's thresholds)
Codes = namedtuple("Codes", ["X", "nominal", "lower", "upper"])
#: per code b of one feature over a node: the weight ``w[b]`` (0 marks an untouched code), the per-column
#: weighted sums ``s[b, k]``, squares ``q[b, k]`` and known weights ``n[b, k]`` (``q`` and ``n`` only with
#: missing target values; ``n`` is 1 x 1 otherwise), and the ``touched`` codes
Histogram = namedtuple("Histogram", ["w", "s", "q", "n", "touched"])
#: the codes of a feature present in a node: ``touched[:nt]`` (the histogram's), of which the first
#: ``n_known`` are known (the missing code, if present, is last), and ``MW`` the weight of the missing block
PresentCodes = namedtuple("PresentCodes", ["nt", "n_known", "MW"])


@njit(**BORROWING)
def order_codes(touched, nt, marks):
    """Put the ``nt`` touched codes in increasing order; ``marks[b]`` is non-zero for a touched code b. Many
    codes: collected in order by a scan of the 256 marks (an insertion sort of random codes would be
    quadratic); few (deep nodes): an insertion sort. Returns (nt, n_known) of :data:`PresentCodes`."""
    if nt > 24:
        nt = 0
        for b in range(256):
            if marks[b] != 0:
                touched[nt] = b
                nt += 1
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
    targets ``q`` and ``n`` are not filled."""
    hw, hs, hq, hn, touched = hist
    K = G.shape[1]
    nt = 0
    for i in range(start, end):
        b = code_at(X, f, nr, i)
        wr = nr.weights[i]
        g = i - start
        if hw[b] == 0.0:
            touched[nt] = b
            nt += 1
            for k in range(K):
                hs[b, k] = 0.0
                hq[b, k] = 0.0
                if has_missing:
                    hn[b, k] = 0.0
        hw[b] += wr
        for k in range(K):
            z = G[g, k]
            if has_missing:
                if z == z:
                    hs[b, k] += wr * z
                    hq[b, k] += wr * z * z
                    hn[b, k] += wr
            else:
                hs[b, k] += wr * z
    nt, n_known = order_codes(touched, nt, hw)
    return PresentCodes(nt, n_known, hw[MISSING] if n_known < nt else 0.0)


@njit(**INLINE)
def clear_histogram(hw, touched, nt):
    """Reset the weights of the touched codes (the marks :func:`fill_histogram` relies on)."""
    for t in range(nt):
        hw[touched[t]] = 0.0
