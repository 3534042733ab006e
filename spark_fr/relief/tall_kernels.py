"""Tall-mode Relief kernels: candidate neighbours per data block, their merge, and the final update.

Sketch
------
When the data is too large to broadcast, the sampled instances are broadcast instead. Every data block
(a Spark partition's rows) keeps, for each instance (and each class, for ReliefF), its k + 1 nearest rows
in (distance, row key) order, with everything the update needs: the per-feature distances (k+1 x D),
d_C, the row's influence, the per-target distances. Merging two candidate sets keeps the k + 1 best;
the order is total, so any merge order gives the same lists. Finally one candidate with the instance's
own key (the instance itself, or an identical copy of it) is dropped, the first k are kept, and the update
of :mod:`spark_fr.relief.update` runs on them, instance by instance in sampling order: the same
arithmetic as broadcast mode, hence the same weights.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..tasks.distances import T_DESCRIPTIVE, target_distance
from .distances import INSTANCE_GROUP, block_distances, fill_dmat
from .neighbours import insert_candidate, kept_candidates
from .accumulators import ReliefSums
from .sampling import micro_blocks
from .update import neighbour_weights, update_relieff, update_rrelieff


@njit(cache=True, nogil=True)
def block_candidates(Xb, keys_b, Yt_b, labelled_b, infl_b, classes_b, IX, ikeys, iYt, ilabelled, k1, n_classes,
                     tkind, tw, tnorm, nominal, n_values, pt_kinds):
    """The k1 best candidate neighbours of each instance among the rows of one block.

    Returns
    -------
    tuple
        (dist (m, C, k1), keys (m, C, k1), counts (m, C), dmat (m, C, k1, D), dC (m, C, k1),
        influence (m, C, k1), per_target (m, C, k1, T))
    """
    m = IX.shape[0]
    nb, D = Xb.shape
    C = n_classes if n_classes > 0 else 1
    T = pt_kinds.shape[0]
    cd = np.full((m, C, k1), np.inf)
    ck = np.zeros((m, C, k1), np.uint64)
    cj = np.zeros((m, C, k1), np.int64)
    cnt = np.zeros((m, C), np.int64)
    G = INSTANCE_GROUP
    dists = np.empty((G, nb))
    for q in range(m):
        g = q % G
        if g == 0:
            block_distances(Xb, IX[q:q + G], nominal, n_values, dists[:min(G, m - q)])
        dist = dists[g]
        for j in range(nb):
            c = 0
            if n_classes > 0:
                cv = classes_b[j]
                if cv != cv:
                    continue
                c = int(cv)
            cnt[q, c] = insert_candidate(cd[q, c], ck[q, c], cj[q, c], cnt[q, c], k1, dist[j], keys_b[j], j)
    dmat = np.zeros((m, C, k1, D))
    dC = np.zeros((m, C, k1))
    om = np.zeros((m, C, k1))
    ptd = np.zeros((m, C, k1, T))
    for q in range(m):
        for c in range(C):
            fill_dmat(Xb, IX[q], cj[q, c], cnt[q, c], nominal, n_values, dmat[q, c])
            for l in range(cnt[q, c]):
                j = cj[q, c, l]
                if tkind == T_DESCRIPTIVE or not (ilabelled[q] and labelled_b[j]):
                    dC[q, c, l] = cd[q, c, l]
                else:
                    dC[q, c, l] = target_distance(tkind, iYt[q], Yt_b[j], tw, tnorm)
                om[q, c, l] = infl_b[j]
                for t in range(T):
                    ptd[q, c, l, t] = target_distance(pt_kinds[t], iYt[q, t:t + 1], Yt_b[j, t:t + 1],
                                                        tw[t:t + 1], tnorm)
    return cd, ck, cnt, dmat, dC, om, ptd


@njit(cache=True, nogil=True)
def merge_candidates(a_d, a_k, a_n, a_m, a_c, a_o, a_p, b_d, b_k, b_n, b_m, b_c, b_o, b_p):
    """Merge two candidate sets (outputs of :func:`block_candidates` or of this function)."""
    m, C, k1 = a_d.shape
    D = a_m.shape[3]
    T = a_p.shape[3]
    d = np.full((m, C, k1), np.inf)
    kk = np.zeros((m, C, k1), np.uint64)
    n = np.zeros((m, C), np.int64)
    mm = np.zeros((m, C, k1, D))
    cc = np.zeros((m, C, k1))
    oo = np.zeros((m, C, k1))
    pp = np.zeros((m, C, k1, T))
    for q in range(m):
        for c in range(C):
            i = 0
            j = 0
            out = 0
            while out < k1 and (i < a_n[q, c] or j < b_n[q, c]):
                take_a = j >= b_n[q, c] or (i < a_n[q, c] and (a_d[q, c, i] < b_d[q, c, j] or (
                    a_d[q, c, i] == b_d[q, c, j] and a_k[q, c, i] <= b_k[q, c, j])))
                if take_a:
                    d[q, c, out] = a_d[q, c, i]
                    kk[q, c, out] = a_k[q, c, i]
                    mm[q, c, out] = a_m[q, c, i]
                    cc[q, c, out] = a_c[q, c, i]
                    oo[q, c, out] = a_o[q, c, i]
                    pp[q, c, out] = a_p[q, c, i]
                    i += 1
                else:
                    d[q, c, out] = b_d[q, c, j]
                    kk[q, c, out] = b_k[q, c, j]
                    mm[q, c, out] = b_m[q, c, j]
                    cc[q, c, out] = b_c[q, c, j]
                    oo[q, c, out] = b_o[q, c, j]
                    pp[q, c, out] = b_p[q, c, j]
                    j += 1
                out += 1
            n[q, c] = out
    return d, kk, n, mm, cc, oo, pp


@njit(cache=True, nogil=True)
def updates_from_candidates(ikeys, iinfl, iclass, k, sigma, n_classes, priors, cand_k, cand_n, cand_m, cand_c,
                            cand_o, cand_p):
    """Accumulators of a sequence of instances from their merged candidates (same output as relief_shard)."""
    m, C, k1 = cand_k.shape
    D = cand_m.shape[3]
    T = cand_p.shape[3]
    delta = neighbour_weights(k, sigma)
    dmat = np.empty((k, D))
    dC = np.empty(k)
    omega = np.empty(k)
    pt = np.empty((k, T))
    keep = np.empty(k, np.int64)
    W = np.zeros(D)
    accF = np.zeros(D)
    accFT = np.zeros(D)
    accT_t = np.zeros(T)
    accFT_t = np.zeros((T, D))
    S = 0.0
    PdC = 0.0
    iters = 0.0
    for q in range(m):
        if n_classes > 0 and iclass[q] != iclass[q]:
            continue
        for c in range(C):
            # drop one candidate that is the instance itself (or an identical copy), keep the first k
            nk = kept_candidates(cand_k[q, c], cand_n[q, c], ikeys[q], k, keep)
            for j in range(nk):
                l = keep[j]
                dmat[j] = cand_m[q, c, l]
                dC[j] = cand_c[q, c, l]
                omega[j] = iinfl[q] * cand_o[q, c, l]
                pt[j] = cand_p[q, c, l]
            if n_classes > 0:
                if nk > 0:
                    update_relieff(dmat, nk, c, int(iclass[q]), priors, delta, W)
            else:
                dS, dT = update_rrelieff(dmat, dC, omega, nk, delta, accF, accFT, pt, accT_t, accFT_t)
                S += dS
                PdC += dT
        iters += 1.0
    return W, S, PdC, accF, accFT, accT_t, accFT_t, iters


def candidates_for_block(block: dict, inst: dict, k: int, target, nominal, n_values, per_target: bool) -> tuple:
    """:func:`block_candidates` for one block (dict of X, keys, Yt, labelled, influence, classes)."""
    pt = target.per_target_kinds if per_target else np.zeros(0, np.int64)
    return block_candidates(block["X"], block["keys"], block["Yt"], block["labelled"], block["influence"],
                            block["classes"], inst["X"], inst["keys"], inst["Yt"], inst["labelled"], k + 1,
                            int(target.n_classes), target.kind, target.weights, target.norm, nominal, n_values, pt)


def merge(a: tuple, b: tuple) -> tuple:
    """Merge two candidate sets (associative and commutative: the order is (distance, row key))."""
    return merge_candidates(*a, *b)


def shard_sums(inst: dict, cands: tuple, k: int, sigma: float, target):
    """Accumulators of the instances of ``inst`` from their merged candidates.

    ``inst`` must start at a micro-block boundary of its shard (see :data:`spark_fr.relief.sampling.INSTANCE_BLOCK`).
    """
    _, ck, cn, cm, cc, co, cp = cands
    total = ReliefSums.zeros(cm.shape[3], cp.shape[3])
    for a, b in micro_blocks(inst["keys"].size):
        out = updates_from_candidates(inst["keys"][a:b], inst["influence"][a:b], inst["classes"][a:b], k, sigma,
                                      int(target.n_classes), np.asarray(target.priors, np.float64), ck[a:b],
                                      cn[a:b], cm[a:b], cc[a:b], co[a:b], cp[a:b])
        total.merge(ReliefSums.from_kernel(out))
    return total
