"""The Relief update: one instance's neighbours added to the accumulators (numba, no Spark).

Sketch
------
    delta_l    = exp(-(sigma * l)^2), l = 0..k-1, normalised to sum 1 per instance (sigma = 0: 1/k)

RReliefF form (regression, MTR, MLC, HMLC, semi-supervised, unsupervised), per neighbour l:

    omega_l = delta_l * influence(r) * influence(n_l)          (influences are 1 unless semi-supervised)
    d_C     = d_Y(r, n_l) if both are labelled, else d_X(r, n_l)   (unsupervised: always d_X)
    S += omega_l;  P_dC += omega_l d_C;  P_dA[i] += omega_l d_i;  P_dAdC[i] += omega_l d_i d_C
    w_i = P_dAdC[i] / P_dC - (P_dA[i] - P_dAdC[i]) / (S - P_dC)          (on the driver, after summing)

ReliefF form (classification, Kononenko): for every class c with neighbours,
    W[i] += sum_l delta_l d_i(r, n_cl) * (-1 if c == class(r) else P(c) / (1 - P(class(r))))
    w_i = W[i] / m.

The update takes the neighbours' distance matrix (k x D) and target distances, so broadcast mode
(neighbours found in one pass) and tall mode (candidates found per data partition, then merged) run the
very same arithmetic and give identical weights.
"""
from __future__ import annotations

import numpy as np
from numba import njit

@njit(cache=True, nogil=True)
def neighbour_weights(k, sigma):
    """delta_l = exp(-(sigma * l)^2), l = 0..k-1 (not normalised)."""
    w = np.empty(k)
    for l in range(k):
        w[l] = np.exp(-(sigma * l) * (sigma * l))
    return w


@njit(cache=True, nogil=True)
def update_rrelieff(dmat, dC, omega, nk, delta, accF, accFT, per_target_dY, accT_t, accFT_t):
    """Add one instance's neighbours (RReliefF form) to the accumulators.

    Parameters
    ----------
    dmat : float64[k, D]
        d_i(r, n_l) for the first ``nk`` rows.
    dC : float64[k]
        d_C(r, n_l).
    omega : float64[k]
        influence(r) * influence(n_l) (ones when not semi-supervised).
    nk : int
        Number of neighbours found (<= k).
    delta : float64[k]
        Neighbour weights by rank.
    accF, accFT : float64[D]
        P_dA and P_dAdC.
    per_target_dY : float64[k, T] or empty
        Per-target distances (for per-target rankings), T = 0 if unused.
    accT_t, accFT_t : float64[T], float64[T, D]
        Per-target P_dC and P_dAdC.

    Returns
    -------
    (dS, dP_dC): the instance's contributions to S and P_dC.
    """
    D = dmat.shape[1]
    T = accT_t.shape[0]
    sw = 0.0
    for l in range(nk):
        sw += delta[l]
    if sw <= 0.0:
        return 0.0, 0.0
    dS = 0.0
    dT = 0.0
    for l in range(nk):
        om = omega[l] * delta[l] / sw
        dS += om
        dT += om * dC[l]
        for i in range(D):
            di = dmat[l, i] * om
            accF[i] += di
            accFT[i] += di * dC[l]
        for t in range(T):
            accT_t[t] += om * per_target_dY[l, t]
            for i in range(D):
                accFT_t[t, i] += dmat[l, i] * om * per_target_dY[l, t]
    return dS, dT


@njit(cache=True, nogil=True)
def update_relieff(dmat, nk, cls, own_class, priors, delta, W):
    """Add one instance's neighbours of one class (ReliefF form, Kononenko) to W."""
    D = dmat.shape[1]
    sw = 0.0
    for l in range(nk):
        sw += delta[l]
    if sw <= 0.0:
        return
    if cls == own_class:
        factor = -1.0
    else:
        factor = priors[cls] / (1.0 - priors[own_class])
    for l in range(nk):
        f = factor * delta[l] / sw
        for i in range(D):
            W[i] += f * dmat[l, i]
