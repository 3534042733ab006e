"""The impurity of a set of rows from its sums, for the dense target matrix: numba kernels, no Spark.

Sketch
------
The task's impurity is a weighted sum of per-column variances, and the clustering matrix ``Z`` (n x K, NaN =
missing) is already centred and scaled by the square roots of those weights, so for any set of rows E

    |E| * impu(E) = sum_k (W / N_k) * (Q_k - S_k^2 / N_k)                      (*)

with W the total weight of E, and N_k, S_k, Q_k the weight, weighted sum and weighted sum of squares of the
rows whose column k is known (for complete columns N_k = W and the term is the plain sum of squares). A set's
:data:`Sums` are (S, Q, N); with complete columns only S is kept up to date, and the gain of a split of E into
L and R needs no squares:

    h = |S_L|^2 / W_L + |S_R|^2 / W_R - |S|^2 / W                              (**)

A split is scored against :data:`Totals` (the node's, or with ``--missing fractional`` those of its rows
whose value of the feature is known: :func:`known_totals`); :func:`evaluate_partition` gives the better
side for the block of rows with a missing value of the feature (learned default direction).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from .jit import BORROWING, INLINE, KERNEL
from .node_rows import MISSING

#: per-column weighted sums ``S``, sums of squares ``Q`` and known weights ``N`` of a set of rows (float64 (K,))
Sums = namedtuple("Sums", ["S", "Q", "N"])
#: the node's weight ``W``, ``P`` = |E| impu(E) and ``sT2`` = |S|^2 (0 with missing target values), as every target
#: backend gives them
NodeTotals = namedtuple("NodeTotals", ["W", "P", "sT2"])
#: what a test is scored against: weight ``W``, ``P`` = |E| impu(E) (used with missing target values), ``sT2`` =
#: |S|^2 (used with complete ones), the per-column ``sums`` and ``MW``, the weight of the rows in it missing the
#: feature's value (0 for the known rows of a fractional split)
Totals = namedtuple("Totals", ["W", "P", "sT2", "sums", "MW"])


@njit(**KERNEL)
def new_sums(K):
    """Scratch :data:`Sums` of K columns."""
    return Sums(np.empty(K), np.empty(K), np.empty(K))


@njit(**BORROWING)
def has_missing_targets(Z, rows):
    """Whether any of ``rows`` has a missing (NaN) clustering value."""
    K = Z.shape[1]
    for i in range(rows.shape[0]):
        r = rows[i]
        for k in range(K):
            if Z[r, k] != Z[r, k]:
                return True
    return False


@njit(**BORROWING)
def totals(nr, start, end, has_missing, sums):
    """Weighted totals of the node rows ``[start, end)`` of ``nr`` into ``sums``, from the rows' targets that
    ``nr`` keeps in node order (``nr.targets``); returns the total weight."""
    S, Q, N = sums
    Z = nr.targets
    K = Z.shape[1]
    for k in range(K):
        S[k] = 0.0
        Q[k] = 0.0
        N[k] = 0.0
    W = 0.0
    for i in range(start, end):
        wr = nr.weights[i]
        W += wr
        for k in range(K):
            z = Z[i, k]
            if has_missing:
                if z == z:
                    S[k] += wr * z
                    Q[k] += wr * z * z
                    N[k] += wr
            else:
                S[k] += wr * z
                Q[k] += wr * z * z
    if not has_missing:
        for k in range(K):
            N[k] = W
    return W


@njit(**INLINE)
def ss(W, s, q, n):
    """|E| * Var of one column over its known rows, see (*) in the module docstring."""
    if n <= 0.0:
        return 0.0
    v = q - s * s / n
    if v < 0.0:
        v = 0.0
    return v * (W / n)


@njit(**BORROWING)
def impurity_sum(W, sums):
    """|E| impu(E) by (*) of a set of weight W with these sums."""
    S, Q, N = sums
    t = 0.0
    for k in range(S.shape[0]):
        t += ss(W, S[k], Q[k], N[k])
    return t


@njit(**BORROWING)
def node_totals(nr, start, end, has_missing, sums):
    """Totals of the node rows ``[start, end)`` into ``sums`` (:func:`totals`); returns (W, P = |E| impu(E), |S|^2).

    |S|^2 = sum_k S_k^2 is all the complete-target gain needs besides S (0.0 when targets are missing).
    """
    TW = totals(nr, start, end, has_missing, sums)
    P = impurity_sum(TW, sums)
    sT2 = 0.0
    if not has_missing:
        TS = sums.S
        for k in range(TS.shape[0]):
            sT2 += TS[k] * TS[k]
    return TW, P, sT2


@njit(**BORROWING)
def known_totals(parent, hist, has_missing, known):
    """The totals of the node's rows whose value of the feature is known, their sums written into ``known``:
    the node's totals ``parent`` minus the missing code's histogram cell (what CLUS's heuristic compares a test
    with). Returns (W, P, |S|^2) of :data:`Totals` (P with missing targets, |S|^2 without; MW is 0)."""
    TS, TQ, TN = parent.sums
    KS, KQ, KN = known
    K = TS.shape[0]
    for k in range(K):
        KS[k] = TS[k] - hist.s[MISSING, k]
        if has_missing:
            KQ[k] = TQ[k] - hist.q[MISSING, k]
            KN[k] = TN[k] - hist.n[MISSING, k]
    Wk = parent.W - parent.MW
    if has_missing:
        return Wk, impurity_sum(Wk, known), 0.0
    s2 = 0.0
    for k in range(K):
        s2 += KS[k] * KS[k]
    return Wk, 0.0, s2


@njit(**BORROWING)
def add_bin(b, hist, has_missing, LW, left, sign):
    """Add (sign=1) or remove (sign=-1) the histogram cell of code b to the left side's sums; returns the left
    weight. With complete target columns only the weights and sums are kept (the gain needs no squares then)."""
    LS, LQ, LN = left
    K = LS.shape[0]
    if has_missing:
        for k in range(K):
            LS[k] += sign * hist.s[b, k]
            LQ[k] += sign * hist.q[b, k]
            LN[k] += sign * hist.n[b, k]
    else:
        for k in range(K):
            LS[k] += sign * hist.s[b, k]
    return LW + sign * hist.w[b]


@njit(**BORROWING)
def zero(sums):
    """Set every sum to 0."""
    S, Q, N = sums
    for k in range(S.shape[0]):
        S[k] = 0.0
        Q[k] = 0.0
        N[k] = 0.0


# ---- the gain of one partition -----------------------------------------------------------------------

@njit(**BORROWING)
def split_value(P, TW, T, LW, left):
    """h = P - ss(left) - ss(total - left), by (*)."""
    TS, TQ, TN = T
    LS, LQ, LN = left
    RW = TW - LW
    h = P
    for k in range(TS.shape[0]):
        h -= ss(LW, LS[k], LQ[k], LN[k])
        h -= ss(RW, TS[k] - LS[k], TQ[k] - LQ[k], TN[k] - LN[k])
    return h


@njit(**INLINE)
def gain_complete(TW, TS, sT2, LW, LS, MS, add_missing):
    """h for complete target columns by (**): |S_L|^2/W_L + |S_R|^2/W_R - |S|^2/W (squares cancel out)."""
    K = TS.shape[0]
    sl2 = 0.0
    sr2 = 0.0
    if add_missing:
        for k in range(K):
            a = LS[k] + MS[k]
            c = TS[k] - a
            sl2 += a * a
            sr2 += c * c
    else:
        for k in range(K):
            a = LS[k]
            c = TS[k] - a
            sl2 += a * a
            sr2 += c * c
    return sl2 / LW + sr2 / (TW - LW) - sT2 / TW


@njit(**BORROWING)
def evaluate_partition(parent, LW, left, hist, has_missing, min_leaf):
    """Best of (missing right, missing left) for a left part of weight LW and sums ``left`` (without the
    missing block) of the rows scored against ``parent``.

    Returns (h, missing_left); h = -inf when neither is valid. When the node has no missing values the
    default direction is the heavier child. ``left`` is restored before returning. With complete targets the
    gain is computed from sums only (:func:`gain_complete`, ``parent.P`` unused).
    """
    TW, MW, T = parent.W, parent.MW, parent.sums
    best_h = -np.inf
    best_ml = False
    RW_known = TW - LW - MW
    if not has_missing:
        if LW >= min_leaf and TW - LW >= min_leaf and LW > 0.0 and RW_known + MW > 0.0:
            best_h = gain_complete(TW, T.S, parent.sT2, LW, left.S, left.S, False)
            best_ml = MW == 0.0 and LW > TW - LW
        if MW > 0.0:
            LW2 = LW + MW
            if LW2 >= min_leaf and TW - LW2 >= min_leaf and RW_known > 0.0:
                h = gain_complete(TW, T.S, parent.sT2, LW2, left.S, hist.s[MISSING], True)
                if h > best_h:
                    best_h = h
                    best_ml = True
        return best_h, best_ml
    # missing right
    if LW >= min_leaf and TW - LW >= min_leaf and LW > 0.0 and RW_known + MW > 0.0:
        best_h = split_value(parent.P, TW, T, LW, left)
        best_ml = MW == 0.0 and LW > TW - LW
    if MW > 0.0:
        LW2 = add_bin(MISSING, hist, has_missing, LW, left, 1.0)
        if LW2 >= min_leaf and TW - LW2 >= min_leaf and RW_known > 0.0:
            h = split_value(parent.P, TW, T, LW2, left)
            if h > best_h:
                best_h = h
                best_ml = True
        add_bin(MISSING, hist, has_missing, LW2, left, -1.0)
    return best_h, best_ml
