"""Neighbourhood backends of ReliefE: sparse rows and their embedded space (numba, no Spark).

Sketch
------
The rows are :data:`SparseRows`: a CSR of the range-scaled features (the update reads them, kept sparse: the
rule of :mod:`spark_fr.relief.sparse_update`), the L2-normalised embedding ``E`` of the rows (no columns: not
embedded), content keys, classes and the MLC target rows. The neighbour distance of two rows::

    dist(r, j) = 1 - <e_r, e_j>                  input embedded (cosine)
               = sum_i d_i(x_r, x_j)             not embedded: Manhattan / mismatch on the raw rows, by a
                                                 merge walk of the two sparse rows

:func:`distances_between` is the one distance of every mode. Two backends of the shard kernel:

* :data:`EmbeddedSpace` (broadcast mode): every row; per instance its distance to every row, then the k nearest
  rows per class (MLC: among all rows) in (distance, row) order, k fixed or adaptive (the gap rule,
  :mod:`spark_fr.relief.adaptive_k`);
* :data:`KnownNeighbours` (tall mode): the neighbours already chosen from the merged candidates
  (:func:`spark_fr.relief.candidates.chosen_neighbours`), as rows of the gathered rows.

:data:`SparseRows` is also a block backend of tall mode's candidate search
(:func:`spark_fr.relief.candidates.block_candidates`, with :data:`SparseSearch`).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from .adaptive_k import gap_k
from .candidates import Candidates
from .neighbourhood import nothing, nothing_yet, register, row_class
from .neighbours import nearest_rows, new_lists, sorted_candidates
from .sparse_update import feature_distance, new_buffers

#: rows as ReliefE reads them: CSR (indptr, indices, data) of the range-scaled features (D = nominal.size
#: columns), nominal (D,) the features' kinds, E (n, d) L2-normalised embedding (d = 0: none), keys (n,) content
#: keys, classes (n,) class index (zeros for MLC), Yt (n, T) MLC target rows (0/1 labels, or the target embedding)
SparseRows = namedtuple("SparseRows", "indptr indices data nominal E keys classes Yt")

#: broadcast mode's backend: rows, instances (m,) row positions, n_classes (> 0: per class), k, adaptive, k_max
EmbeddedSpace = namedtuple("EmbeddedSpace", "rows instances n_classes k adaptive k_max")

#: tall mode's backend: rows (the gathered rows), instances (m,) their positions, own (m,) their classes, nbrs
#: (m, C, cap) the neighbours' positions, counts (m, C), n_classes
KnownNeighbours = namedtuple("KnownNeighbours", "rows instances own nbrs counts n_classes")

#: the buffers of both: dist (n,) an instance's distances, lists its fixed-k neighbours, buf (SparseBuffers),
#: tw the label weights (ones)
SparseScratch = namedtuple("SparseScratch", "dist lists buf tw")

#: a sparse block's candidate search: k1 candidates, n_classes (> 0: per class)
SparseSearch = namedtuple("SparseSearch", "k1 n_classes")


@njit(cache=True, nogil=True)
def _l1_walk(ix_a, d_a, span_a, ix_b, d_b, span_b, nominal):
    """sum_i d_i of two CSR rows: entries ``span_a`` = (start, end) of (``ix_a``, ``d_a``) and ``span_b`` of
    (``ix_b``, ``d_b``), by a merge walk (exact, in feature order). Decision: raw arrays, not the named tuples,
    as it runs once per pair of rows (named tuples passed by value per call made the L1 search ~10 % slower)."""
    p, pe = span_a
    q, qe = span_b
    s = 0.0
    while p < pe or q < qe:
        if q >= qe or (p < pe and ix_a[p] < ix_b[q]):
            s += feature_distance(d_a[p], 0.0, nominal[ix_a[p]])
            p += 1
        elif p >= pe or ix_b[q] < ix_a[p]:
            s += feature_distance(0.0, d_b[q], nominal[ix_b[q]])
            q += 1
        else:
            s += feature_distance(d_a[p], d_b[q], nominal[ix_a[p]])
            p += 1
            q += 1
    return s


@njit(cache=True, nogil=True)
def sparse_l1_between(a, r, b, j):
    """sum_i d_i(a_r, b_j) of row r of ``a`` and row j of ``b`` (:func:`_l1_walk`)."""
    return _l1_walk(a.indices, a.data, (a.indptr[r], a.indptr[r + 1]), b.indices, b.data,
                    (b.indptr[j], b.indptr[j + 1]), a.nominal)


@njit(cache=True, nogil=True)
def sparse_l1(rows, r, j):
    """sum_i d_i(x_r, x_j) of two rows of one CSR (:func:`sparse_l1_between`)."""
    return sparse_l1_between(rows, r, rows, j)


@njit(cache=True, nogil=True)
def distances_between(a, r, b, out):
    """out[j] = the neighbour distance of row r of ``a`` and every row j of ``b``: cosine on the embeddings E
    (when they have columns), else sparse L1 on the CSR rows. The one distance of both modes."""
    n = out.shape[0]
    d = a.E.shape[1]
    if d > 0:
        E_a, E_b = a.E, b.E
        for j in range(n):
            s = 0.0
            for c in range(d):
                s += E_a[r, c] * E_b[j, c]
            out[j] = 1.0 - s
    else:
        ix_a, d_a, ix_b, d_b, ip_b, nominal = a.indices, a.data, b.indices, b.data, b.indptr, a.nominal
        span_a = (a.indptr[r], a.indptr[r + 1])
        for j in range(n):
            out[j] = _l1_walk(ix_a, d_a, span_a, ix_b, d_b, (ip_b[j], ip_b[j + 1]), nominal)


@njit(cache=True, nogil=True)
def distances_from(rows, r, out):
    """out[j] = the neighbour distance of rows r and j of one matrix (:func:`distances_between`)."""
    distances_between(rows, r, rows, out)


# ----- broadcast mode: every row ----------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _dims(space):
    return space.instances.shape[0], max(space.n_classes, 1), space.rows.nominal.shape[0], 0, 1


@njit(cache=True, nogil=True)
def _new_scratch(space, rule):
    n = space.rows.keys.shape[0]
    return SparseScratch(np.empty(n), new_lists(max(space.n_classes, 1), space.k),
                         new_buffers(space.rows.nominal.shape[0], n), np.ones(space.rows.Yt.shape[1]))


@njit(cache=True, nogil=True)
def _search(space, s, q):
    """The instance's distance to every row; with a fixed k its neighbours of every class at once."""
    rows = space.rows
    r = space.instances[q]
    distances_from(rows, r, s.dist)
    if not space.adaptive:
        nearest_rows(s.dist, rows.keys, r, rows.classes, space.n_classes, s.lists)


@njit(cache=True, nogil=True)
def _neighbours(space, s, q, c):
    """(rows, nk): the fixed-k neighbours of class c, or (adaptive) the gap rule's among its rows."""
    if space.adaptive:
        nbrs, vals = sorted_candidates(s.dist, space.instances[q], space.rows.classes,
                                       c if space.n_classes > 0 else -1)
        return nbrs, gap_k(vals, nbrs.shape[0], space.k_max)
    return s.lists.rows[c], s.lists.counts[c]


register(EmbeddedSpace, dims=_dims, new_scratch=_new_scratch, start_group=nothing_yet, own_class=row_class,
         search=_search, neighbours=_neighbours)


# ----- tall mode: neighbours known ---------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _known_dims(space):
    m, C, _ = space.nbrs.shape
    return m, C, space.rows.nominal.shape[0], 0, 1


@njit(cache=True, nogil=True)
def _known_scratch(space, rule):
    C, cap = space.nbrs.shape[1], space.nbrs.shape[2]
    return SparseScratch(np.empty(0), new_lists(C, 0), new_buffers(space.rows.nominal.shape[0], cap),
                         np.ones(space.rows.Yt.shape[1]))


@njit(cache=True, nogil=True)
def _known_class(space, q):
    if space.n_classes > 0:
        return float(space.own[q])
    return 0.0


@njit(cache=True, nogil=True)
def _known_neighbours(space, s, q, c):
    return space.nbrs[q, c], space.counts[q, c]


register(KnownNeighbours, dims=_known_dims, new_scratch=_known_scratch, start_group=nothing_yet,
         own_class=_known_class, search=nothing, neighbours=_known_neighbours)


# ----- tall mode: the block backend of the candidate search ------------------------------------------------
@njit(cache=True, nogil=True)
def _one(block):
    return 1


@njit(cache=True, nogil=True)
def _block_distances(block, inst, search, q0, g_n, dists):
    distances_between(inst, q0, block, dists[0])


@njit(cache=True, nogil=True)
def _no_payload(block, inst, search, found):
    cd, ck, _, cnt = found
    m, C, k1 = cd.shape
    return Candidates(cd, ck, cnt, np.zeros((m, C, k1, 0)), np.zeros((m, C, k1)), np.zeros((m, C, k1)),
                      np.zeros((m, C, k1, 0)))


register(SparseRows, candidate_group=_one, group_distances=_block_distances, with_payload=_no_payload)


# ----- building the named tuples (Python) ------------------------------------------------------------------
def sparse_rows(X, nominal, E, keys, classes, Yt) -> SparseRows:
    """:data:`SparseRows` with the kernels' dtypes (X: scipy CSR, indices sorted per row)."""
    return SparseRows(X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data.astype(np.float64),
                      np.ascontiguousarray(nominal, np.bool_), np.ascontiguousarray(E, np.float64),
                      np.ascontiguousarray(keys, np.uint64),
                      np.ascontiguousarray(classes, np.float64), np.ascontiguousarray(Yt, np.float64))
