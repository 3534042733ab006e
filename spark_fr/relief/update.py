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

The update reads the neighbours' distance matrix (k x D), target distances and influences from
:data:`DenseNeighbours`, which the dense backends fill (every scaled row, :mod:`spark_fr.relief.dense`; tall
mode's merged candidates, :mod:`spark_fr.relief.candidates`), so both modes run the very same arithmetic and
give identical weights. :data:`DenseRule` is the rule of :func:`spark_fr.relief.shard.relief_shard`.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from .accumulators import P_DC, S_TOTAL
from .neighbourhood import register

#: the dense update rule's settings: sigma (neighbour weights by rank), priors (C,) class frequencies (ReliefF)
DenseRule = namedtuple("DenseRule", "sigma priors")

#: what the dense update reads of one instance's neighbours of one class (first nk rows): dmat (k, D) d_i,
#: dC (k) d_C, omega (k) influence(r) * influence(n_l), pt (k, T) per-target d_Y; delta (k) the rank weights;
#: keep (k) positions (tall mode's kept candidates)
DenseNeighbours = namedtuple("DenseNeighbours", "dmat dC omega pt delta keep")


@njit(cache=True, nogil=True)
def neighbour_weights(k, sigma):
    """delta_l = exp(-(sigma * l)^2), l = 0..k-1 (not normalised)."""
    w = np.empty(k)
    for l in range(k):
        w[l] = np.exp(-(sigma * l) * (sigma * l))
    return w


@njit(cache=True, nogil=True)
def weight_sum(delta, nk):
    """sum of the first nk rank weights (in rank order)."""
    sw = 0.0
    for l in range(nk):
        sw += delta[l]
    return sw


@njit(cache=True, nogil=True)
def new_dense_neighbours(k, D, T, sigma):
    """Empty :data:`DenseNeighbours` for k neighbours, D features and T per-target distances."""
    return DenseNeighbours(np.empty((k, D)), np.empty(k), np.empty(k), np.empty((k, T)), neighbour_weights(k, sigma),
                           np.empty(k, np.int64))


@njit(cache=True, nogil=True)
def update_rrelieff(nb, nk, acc):
    """Add one instance's neighbours (RReliefF form) to the accumulators.

    Parameters
    ----------
    nb : DenseNeighbours
        The first ``nk`` rows: d_i(r, n_l), d_C(r, n_l), influence(r) * influence(n_l) (ones when not
        semi-supervised), per-target distances (T = 0 if unused), and the rank weights delta.
    nk : int
        Number of neighbours found (<= k).
    acc : Accumulators
        P_dA, P_dAdC, per-target P_dC and P_dAdC; S and P_dC in ``totals``.
    """
    dmat, dC, omega, per_target_dY, delta = nb.dmat, nb.dC, nb.omega, nb.pt, nb.delta
    accF, accFT, accT_t, accFT_t = acc.P_dA, acc.P_dAdC, acc.P_dC_t, acc.P_dAdC_t
    D = dmat.shape[1]
    T = accT_t.shape[0]
    sw = weight_sum(delta, nk)
    if sw <= 0.0:
        return
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
    acc.totals[S_TOTAL] += dS
    acc.totals[P_DC] += dT


@njit(cache=True, nogil=True)
def update_relieff(nb, nk, cls, own_class, priors, W):
    """Add one instance's neighbours of one class (ReliefF form, Kononenko) to W."""
    dmat, delta = nb.dmat, nb.delta
    D = dmat.shape[1]
    sw = weight_sum(delta, nk)
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


@njit(cache=True, nogil=True)
def dense_update(rule, space, s, q, c, own, nk, acc):
    """The dense rule's update of instance q by its ``nk`` neighbours of class c (in ``s.nb``): ReliefF when
    the space has classes, else RReliefF. Returns nk."""
    if space.n_classes > 0:
        if nk > 0:
            update_relieff(s.nb, nk, c, int(own), rule.priors, acc.W)
    else:
        update_rrelieff(s.nb, nk, acc)
    return nk


register(DenseRule, update=dense_update)
