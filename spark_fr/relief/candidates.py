"""Tall mode's neighbourhood: candidate neighbours per data block, their merge, and the backend that reads
them (numba, no Spark).

Sketch
------
When the rows are too many to broadcast, the sampled instances are broadcast instead. Every data block keeps,
for each instance (and each class, for ReliefF), its k1 nearest rows in (distance, row key) order
(:func:`block_candidates`, one kernel over a block backend: dense scaled rows, or ReliefE's sparse rows and
embedded space), with what the update needs of them (dense: the per-feature distances (k1 x D), d_C, the row's
influence, the per-target distances; ReliefE reads the rows themselves later). Merging two candidate sets keeps
the k1 best (:func:`merge_candidates`); the order is total, so any merge order gives the same lists.

Relief (k1 = k + 1): :data:`CandidateSpace` is the shard kernel's backend; it drops one candidate with the
instance's own key (the instance itself, or an identical copy of it), keeps the first k and hands their
payload to the dense update, instance by instance in sampling order: the same arithmetic as broadcast mode,
hence the same weights. ReliefE: :func:`chosen_neighbours` picks the neighbours' keys the same way (first k,
or the gap rule's k) and tall mode gathers their rows.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from .adaptive_k import gap_k
from .dense import Rows, fill_targets
from .distances import INSTANCE_GROUP, block_distances, fill_dmat
from .neighbourhood import candidate_group, group_distances, nothing, nothing_yet, register, with_payload
from .neighbours import insert_candidate, kept_candidates
from .update import new_dense_neighbours

#: candidates per instance and class (m, C, k1), in (distance, key) order: dist, keys, counts (m, C), and
#: their payload: dmat (m, C, k1, D) d_i, dC (m, C, k1) d_C, omega (m, C, k1) the row's influence, pt
#: (m, C, k1, T) per-target d_Y (D = T = 0 for ReliefE)
Candidates = namedtuple("Candidates", "dist keys counts dmat dC omega pt")

#: a dense block's search: k1 candidates, n_classes (> 0: per class), features, target (TargetSpec)
DenseSearch = namedtuple("DenseSearch", "k1 n_classes features target")

#: the backend of the shard kernel: merged candidates, the instances' keys, influence, classes, n_classes, k
CandidateSpace = namedtuple("CandidateSpace", "cands keys influence classes n_classes k")

#: its buffers: nb (DenseNeighbours)
CandidateScratch = namedtuple("CandidateScratch", "nb")


@njit(cache=True, nogil=True)
def block_candidates(block, inst, search):
    """The k1 best candidate neighbours, in (distance, key) order, of each instance among the rows of one block.

    Parameters
    ----------
    block : Rows or SparseRows
        The block's rows (rows with a missing class are no candidates).
    inst : the same type
        The instances' rows (each instance is a candidate of itself too: the caller drops it).
    search : DenseSearch or SparseSearch
        k1, n_classes (> 0: candidates per class) and what the distances need.

    Returns
    -------
    Candidates
    """
    m = inst.keys.shape[0]
    nb = block.keys.shape[0]
    k1, n_classes = search.k1, search.n_classes
    C = max(n_classes, 1)
    cd = np.full((m, C, k1), np.inf)
    ck = np.zeros((m, C, k1), np.uint64)
    cj = np.zeros((m, C, k1), np.int64)
    cnt = np.zeros((m, C), np.int64)
    G = candidate_group(block)
    dists = np.empty((G, nb))
    for q0 in range(0, m, G):
        g_n = min(G, m - q0)
        group_distances(block, inst, search, q0, g_n, dists)
        for q in range(q0, q0 + g_n):
            dist = dists[q - q0]
            for j in range(nb):
                c = 0
                if n_classes > 0:
                    cv = block.classes[j]
                    if cv != cv:
                        continue
                    c = int(cv)
                cnt[q, c] = insert_candidate(cd[q, c], ck[q, c], cj[q, c], cnt[q, c], k1, dist[j], block.keys[j], j)
    return with_payload(block, inst, search, (cd, ck, cj, cnt))


@njit(cache=True, nogil=True)
def _take(dst, n, src, i, q, c):
    """Candidate i of ``src`` becomes candidate n of ``dst`` (instance q, class c)."""
    dst.dist[q, c, n] = src.dist[q, c, i]
    dst.keys[q, c, n] = src.keys[q, c, i]
    dst.dmat[q, c, n] = src.dmat[q, c, i]
    dst.dC[q, c, n] = src.dC[q, c, i]
    dst.omega[q, c, n] = src.omega[q, c, i]
    dst.pt[q, c, n] = src.pt[q, c, i]


@njit(cache=True, nogil=True)
def merge_candidates(a, b):
    """Merge two candidate sets (outputs of :func:`block_candidates` or of this function)."""
    m, C, k1 = a.dist.shape
    out = Candidates(np.full((m, C, k1), np.inf), np.zeros((m, C, k1), np.uint64), np.zeros((m, C), np.int64),
                     np.zeros((m, C, k1, a.dmat.shape[3])), np.zeros((m, C, k1)), np.zeros((m, C, k1)),
                     np.zeros((m, C, k1, a.pt.shape[3])))
    for q in range(m):
        for c in range(C):
            na, nb = a.counts[q, c], b.counts[q, c]
            i = 0
            j = 0
            n = 0
            while n < k1 and (i < na or j < nb):
                if j >= nb or (i < na and (a.dist[q, c, i] < b.dist[q, c, j] or (
                        a.dist[q, c, i] == b.dist[q, c, j] and a.keys[q, c, i] <= b.keys[q, c, j]))):
                    _take(out, n, a, i, q, c)
                    i += 1
                else:
                    _take(out, n, b, j, q, c)
                    j += 1
                n += 1
            out.counts[q, c] = n
    return out


def merge(a: Candidates, b: Candidates) -> Candidates:
    """Merge two candidate sets (associative and commutative: the order is (distance, row key))."""
    return merge_candidates(a, b)


@njit(cache=True, nogil=True)
def chosen_neighbours(ikeys, cands, k, adaptive, k_max):
    """The neighbours' keys of each instance and class from the merged candidates (ReliefE's tall mode).

    One candidate with the instance's own key (itself, or an identical copy: the same distance) is dropped;
    then the first k are kept, or (adaptive) the first :func:`gap_k` of them. With k1 = k + 1 candidates
    (fixed k), k_max + 2 (adaptive, capped) or all rows (adaptive, ``k_max`` = 0) these are the neighbours
    broadcast mode finds, in the same order.

    Returns
    -------
    (keys (m, C, k1), counts (m, C))
    """
    m, C, k1 = cands.keys.shape
    out = np.zeros((m, C, k1), np.uint64)
    counts = np.zeros((m, C), np.int64)
    vals = np.empty(k1)
    keep = np.empty(k1, np.int64)
    for q in range(m):
        for c in range(C):
            nk = kept_candidates(cands.keys[q, c], cands.counts[q, c], ikeys[q], k1, keep)
            for j in range(nk):
                out[q, c, j] = cands.keys[q, c, keep[j]]
                vals[j] = cands.dist[q, c, keep[j]]
            if adaptive:
                if k_max > 0 and nk > k_max + 1:
                    nk = k_max + 1
                counts[q, c] = gap_k(vals, nk, k_max)
            else:
                counts[q, c] = min(nk, k)
    return out, counts


# ----- the dense block backend of block_candidates ---------------------------------------------------------
@njit(cache=True, nogil=True)
def _dense_group(block):
    return INSTANCE_GROUP


@njit(cache=True, nogil=True)
def _dense_distances(block, inst, search, q0, g_n, dists):
    f = search.features
    block_distances(block.X, inst.X[q0:q0 + g_n], f.nominal, f.n_values, dists[:g_n])


@njit(cache=True, nogil=True)
def _dense_payload(block, inst, search, found):
    """Candidates with their d_i, d_C (d_Y when both rows are labelled, else d_X), influence and per-target d_Y."""
    cd, ck, cj, cnt = found
    m, C, k1 = cd.shape
    D = block.X.shape[1]
    T = search.target.per_target_kinds.shape[0]
    out = Candidates(cd, ck, cnt, np.zeros((m, C, k1, D)), np.zeros((m, C, k1)), np.zeros((m, C, k1)),
                     np.zeros((m, C, k1, T)))
    f = search.features
    for q in range(m):
        for c in range(C):
            nk = cnt[q, c]
            fill_dmat(block.X, inst.X[q], cj[q, c], nk, f.nominal, f.n_values, out.dmat[q, c])
            for l in range(nk):
                out.dC[q, c, l] = cd[q, c, l]
                out.omega[q, c, l] = block.influence[cj[q, c, l]]
            fill_targets(out.dC[q, c], out.pt[q, c], nk, (inst.Yt[q], inst.labelled[q]), block, cj[q, c],
                         search.target)
    return out


register(Rows, candidate_group=_dense_group, group_distances=_dense_distances, with_payload=_dense_payload)


# ----- the shard kernel's backend: merged candidates ---------------------------------------------------------
@njit(cache=True, nogil=True)
def _dims(space):
    m, C, _, D = space.cands.dmat.shape
    return m, C, D, space.cands.pt.shape[3], 1


@njit(cache=True, nogil=True)
def _new_scratch(space, rule):
    _, _, _, D = space.cands.dmat.shape
    return CandidateScratch(new_dense_neighbours(space.k, D, space.cands.pt.shape[3], rule.sigma))


@njit(cache=True, nogil=True)
def _own_class(space, q):
    if space.n_classes > 0:
        return space.classes[q]
    return 0.0


@njit(cache=True, nogil=True)
def _neighbours(space, s, q, c):
    """Drops one candidate with the instance's key, keeps the first k: their payload into ``s.nb``."""
    cands, nb = space.cands, s.nb
    nk = kept_candidates(cands.keys[q, c], cands.counts[q, c], space.keys[q], space.k, nb.keep)
    for j in range(nk):
        l = nb.keep[j]
        nb.dmat[j] = cands.dmat[q, c, l]
        nb.dC[j] = cands.dC[q, c, l]
        nb.omega[j] = space.influence[q] * cands.omega[q, c, l]
        nb.pt[j] = cands.pt[q, c, l]
    return nk


register(CandidateSpace, dims=_dims, new_scratch=_new_scratch, start_group=nothing_yet, own_class=_own_class,
         search=nothing, neighbours=_neighbours)
