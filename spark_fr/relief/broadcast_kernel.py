"""Broadcast mode's kernel: the accumulators of one shard of sampled instances over all rows (numba, no Spark).

For each group of instances, d_X to every row (:mod:`spark_fr.relief.distances`), the k nearest rows per
instance (per class for ReliefF, :mod:`spark_fr.relief.neighbours`), their per-feature and target
distances, and the update (:mod:`spark_fr.relief.update`).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..tasks.distances import T_DESCRIPTIVE, target_distance
from .distances import INSTANCE_GROUP, block_distances, fill_dmat
from .neighbours import neighbour_rows
from .update import neighbour_weights, update_relieff, update_rrelieff


@njit(cache=True, nogil=True)
def relief_shard(X, keys, Yt, tkind, tw, tnorm, nominal, n_values, instances, k, sigma,
                 classes, n_classes, priors, labelled, influence, per_target_kinds):
    """Accumulators of one shard of sampled instances (broadcast mode).

    Parameters
    ----------
    X : float64[n, D]
        Scaled features.
    keys : uint64[n]
        Row keys (tie-breaking between equally distant neighbours).
    Yt : float64[n, T']
        Target matrix for d_Y.
    tkind, tw, tnorm
        Target distance code, per-column weights (HMLC) and normaliser (HMLC maximum; class count for
        T_CLASS).
    nominal, n_values : feature types and category counts.
    instances : int64[m_s]
        Rows sampled for this shard.
    k : int
    sigma : float
    classes : float64[n]
        Class index per row for ReliefF (n_classes > 0), else ignored.
    n_classes : int
        > 0: ReliefF (classification); 0: RReliefF form.
    priors : float64[C]
    labelled : bool[n]
        Rows whose targets are known (semi-supervised); all True otherwise.
    influence : float64[n]
        Instance influence (1 for labelled rows).
    per_target_kinds : int64[T]
        For per-target rankings: d_Y of target t is ``target_distance(per_target_kinds[t], Yt[:, t:t+1])``;
        empty for none.

    Returns
    -------
    tuple
        (W_relieff (D,), S, P_dC, P_dA (D,), P_dAdC (D,), P_dC_t (T,), P_dAdC_t (T, D), iterations)
    """
    n, D = X.shape
    T = per_target_kinds.shape[0]
    G = INSTANCE_GROUP
    dists = np.empty((G, n))
    R = np.empty((G, D))
    delta = neighbour_weights(k, sigma)
    dmat = np.empty((k, D))
    dC = np.empty(k)
    omega = np.empty(k)
    pt = np.empty((k, T))
    W = np.zeros(D)
    accF = np.zeros(D)
    accFT = np.zeros(D)
    accT_t = np.zeros(T)
    accFT_t = np.zeros((T, D))
    S = 0.0
    PdC = 0.0
    iters = 0.0
    m = instances.shape[0]
    for q0 in range(0, m, G):
        g_n = min(G, m - q0)
        for g in range(g_n):
            R[g] = X[instances[q0 + g]]
        block_distances(X, R[:g_n], nominal, n_values, dists[:g_n])
        for g in range(g_n):
            r = instances[q0 + g]
            r_row = X[r]
            dist = dists[g]
            if n_classes > 0:
                own = classes[r]
                if own != own:
                    continue
                idx, counts = neighbour_rows(dist, keys, r, k, classes, n_classes)
                for c in range(n_classes):
                    if counts[c] == 0:
                        continue
                    fill_dmat(X, r_row, idx[c], counts[c], nominal, n_values, dmat)
                    update_relieff(dmat, counts[c], c, int(own), priors, delta, W)
                iters += 1.0
                continue
            idx, counts = neighbour_rows(dist, keys, r, k, classes, 0)
            nk = counts[0]
            rows = idx[0]
            fill_dmat(X, r_row, rows, nk, nominal, n_values, dmat)
            for l in range(nk):
                j = rows[l]
                omega[l] = influence[r] * influence[j]
                if tkind == T_DESCRIPTIVE or not (labelled[r] and labelled[j]):
                    dC[l] = dist[j]
                else:
                    dC[l] = target_distance(tkind, Yt[r], Yt[j], tw, tnorm)
                for t in range(T):
                    pt[l, t] = target_distance(per_target_kinds[t], Yt[r, t:t + 1], Yt[j, t:t + 1], tw[t:t + 1],
                                               tnorm)
            dS, dT = update_rrelieff(dmat, dC, omega, nk, delta, accF, accFT, pt, accT_t, accFT_t)
            S += dS
            PdC += dT
            iters += 1.0
    return W, S, PdC, accF, accFT, accT_t, accFT_t, iters
