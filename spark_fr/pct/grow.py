"""Growing one predictive clustering tree (PCT) on binned data: numba kernels, no Spark.

Algorithm sketch
----------------
Input: feature codes ``X`` (D x n, uint8; code 255 = missing), the clustering matrix ``Z`` (n x K, float64,
NaN = missing) built by :mod:`spark_fr.tasks`, and per-row weights ``w`` (bootstrap counts; 0 = not in the
bag). The task's impurity is a weighted sum of per-column variances, and ``Z`` is already centred and scaled
by the square roots of those weights, so for any set of rows E

    |E| * impu(E) = sum_k (W / N_k) * (Q_k - S_k^2 / N_k)                      (*)

with W the total weight of E, and N_k, S_k, Q_k the weight, weighted sum and weighted sum of squares of the
rows whose column k is known (for complete columns N_k = W and the term is the plain sum of squares).

Depth-first, with an explicit stack of ranges of a buffer of (row, weight in the node) pairs
(:mod:`spark_fr.pct.node_rows`; rows are partitioned in place, as in scikit-learn). ``grow_tree`` is this
loop; each step is one helper below:

    node(E):
        W, S, Q, N, P <- _node_totals(E)                                     one pass over E; P by (*)
        leaf if W < 2 * min_leaf, depth == max_depth, or P / W < 1e-13 * (root impurity per example)
        for each candidate feature f <- _draw_feature (max_features features drawn at random without
        replacement: the random-forest subset, all features for bagging; as in the thesis and CLUS a
        sampled feature that is constant in the node counts, so the node can become a leaf; optionally,
        as in scikit-learn, constant features are skipped and more are drawn):
            _histogram: (w, w*z, w*z^2 [, w*known]) per code of f over E
            the totals a test is scored against: E's, or with ``--missing fractional`` those of E's rows
            whose value of f is known (E_known = E minus the missing code's cell, _known_totals)
            the best test on f (h = -inf if none is valid):
                numeric f: every threshold "code <= t" between present codes     (best splitter)
                           _scan_numeric_complete (complete targets, the hot path) / _scan_numeric_missing
                           or one threshold uniform in the node's value range     (extra-trees splitter)
                           _split_at_random_threshold
                nominal f: subsets A of the present categories, test "code in A" (_best_subset):
                           _subset_greedy (add the category that helps most, stop when nothing helps: CLUS's
                           search, for any number of categories); _subset_random for extra trees
                learned: missing values go, as a block, to the side that gives the larger reduction
                (learned default direction, as in XGBoost / LightGBM / scikit-learn >= 1.3;
                _evaluate_partition); if the node had no missing values they go to the heavier child at
                prediction time; h = P - |E_L| impu(E_L) - |E_R| impu(E_R), valid if both sides weigh
                >= min_leaf
                fractional (CLUS): h = |E_k| impu(E_k) - |E_k,L| impu(E_k,L) - |E_k,R| impu(E_k,R) on the
                known rows E_k, valid if the known rows of both sides weigh >= min_leaf (less 1e-9 of it
                for rounding, leaf_weight_floor: the weights are products of shares); as h is a sum over
                the known rows, not a mean, a feature known on a share s of the weight scores s times the
                mean reduction of its known rows
            _keep_better: the node's best split becomes f's if h is strictly greater (first one wins ties)
        leaf if best h <= 1e-12 * P, else _record_split and _split_rows:
            learned: partition E in place, rows going left first (by _goes_left, the routing test
            prediction uses too)
            fractional: the rows with a known value go to their side; those without go to both children,
            their weight times s_L = W(known, left) / W(known) on the left and 1 - s_L on the right
            (s_L is recorded: prediction sends a row with a missing value down both branches and mixes
            the leaves' prototypes with these shares); the node's gain becomes the reduction of |E| impu
            over the weighted rows of the node and of its children (_children_reduction), as CLUS's Genie3
            computes it from the nodes' statistics; without missing values in the node the split is the
            learned one, to the bit
        _push_children

The tree records, per node, the feature, the test, the weight |E(N)|, the depth and h*(N) (fractional: the
weighted reduction above, and the share s_L): everything the Symbolic and Genie3 scores need. Per-column reductions can be accumulated for per-target Genie3
(_add_column_gain).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from ..runtime.rng import rand_below, rand_uniform
from .config import MISSING_FRACTIONAL, SPLITTER_RANDOM
from .node_rows import (MISSING, add_members, free_start, goes_left, new_members, node_rows, partition,
                        split_fractional, trimmed)

#: the feature codes a tree is grown on: ``X`` uint8 (D, n), 255 = missing (numeric codes are ordered bins,
#: nominal codes category indices); ``nominal`` bool (D,); ``lower``, ``upper`` float64 (D, 255), the smallest
#: and largest raw value of each numeric bin (the extra-trees splitter's thresholds)
Codes = namedtuple("Codes", ["X", "nominal", "lower", "upper"])
#: the node arrays of a tree (capacity :func:`node_capacity`; feature -1 = leaf, children -1): each internal
#: node's test (``feature``, ``threshold`` for numeric, ``mask`` (4 x uint64) for nominal features,
#: ``missing_left``), its children, ``weight`` |E(N)|, ``depth``, ``gain`` h*(N) and ``left_share`` (fractional
#: splits: the share of the node's known weight that went left)
TreeArrays = namedtuple("TreeArrays", ["feature", "threshold", "missing_left", "mask", "left", "right", "weight",
                                       "depth", "gain", "left_share"])
#: what :func:`grow_tree` returns: the first ``n_nodes`` of ``nodes`` are used; ``leaf_of_row`` (n,) the leaf of
#: each in-bag row (-1 out of bag; learned trees); ``column_gain`` (D, K) per-feature, per-column reductions
#: (zeros unless tracked); ``members`` the (row, leaf, weight) memberships of a fractional tree's leaves
GrowResult = namedtuple("GrowResult", ["n_nodes", "nodes", "leaf_of_row", "column_gain", "members"])


# ---- node totals and the impurity (*) ----------------------------------------------------------------

@njit(cache=True, nogil=True)
def _has_missing_targets(Z, rows):
    """Whether any of ``rows`` has a missing (NaN) clustering value."""
    K = Z.shape[1]
    for i in range(rows.shape[0]):
        r = rows[i]
        for k in range(K):
            if Z[r, k] != Z[r, k]:
                return True
    return False


@njit(cache=True, nogil=True)
def _totals(nr, start, end, Z, has_missing, S, Q, N):
    """Weighted totals of the node rows ``[start, end)`` of ``nr``; returns the total weight."""
    K = Z.shape[1]
    for k in range(K):
        S[k] = 0.0
        Q[k] = 0.0
        N[k] = 0.0
    W = 0.0
    for i in range(start, end):
        r = nr.rows[i]
        wr = nr.weights[i]
        W += wr
        for k in range(K):
            z = Z[r, k]
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


@njit(cache=True, nogil=True, inline="always")
def _ss(W, s, q, n):
    """|E| * Var of one column over its known rows, see (*) in the module docstring."""
    if n <= 0.0:
        return 0.0
    v = q - s * s / n
    if v < 0.0:
        v = 0.0
    return v * (W / n)


@njit(cache=True, nogil=True)
def _impurity_sum(W, S, Q, N):
    K = S.shape[0]
    t = 0.0
    for k in range(K):
        t += _ss(W, S[k], Q[k], N[k])
    return t


@njit(cache=True, nogil=True)
def _node_totals(nr, start, end, Z, has_missing, TS, TQ, TN):
    """Totals of the node rows ``[start, end)`` into TS, TQ, TN; returns (W, P = |E| impu(E), |S|^2).

    |S|^2 = sum_k S_k^2 is all the complete-target gain needs besides S (0.0 when targets are missing).
    """
    TW = _totals(nr, start, end, Z, has_missing, TS, TQ, TN)
    P = _impurity_sum(TW, TS, TQ, TN)
    sT2 = 0.0
    if not has_missing:
        for k in range(TS.shape[0]):
            sT2 += TS[k] * TS[k]
    return TW, P, sT2


@njit(cache=True, nogil=True)
def _known_totals(TW, TS, TQ, TN, MW, hs, hq, hn, has_missing, KS, KQ, KN):
    """Totals of the node's rows whose value of the feature is known, into KS, KQ, KN: the node's totals
    minus the missing code's histogram cell (what CLUS's heuristic compares a test with). Returns
    (W_known, P_known, |S_known|^2) as :func:`_node_totals` does (P with missing targets, |S|^2 without)."""
    K = TS.shape[0]
    for k in range(K):
        KS[k] = TS[k] - hs[MISSING, k]
        if has_missing:
            KQ[k] = TQ[k] - hq[MISSING, k]
            KN[k] = TN[k] - hn[MISSING, k]
    Wk = TW - MW
    if has_missing:
        return Wk, _impurity_sum(Wk, KS, KQ, KN), 0.0
    s2 = 0.0
    for k in range(K):
        s2 += KS[k] * KS[k]
    return Wk, 0.0, s2


# ---- the histogram of a feature ----------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _histogram(X, f, nr, start, end, Z, has_missing, hw, hs, hq, hn, touched):
    """Per-code histogram of feature f over the node rows ``[start, end)``.

    Returns (nt, n_known, MW): the present codes are ``touched[:nt]`` in increasing order, the missing code
    (if present) last, so ``touched[:n_known]`` are the known ones; MW is the weight of the missing block.
    Only touched codes are zeroed here and reset by :func:`_clear_histogram`, so a small node costs
    O(rows * K), not O(256 * K). With complete targets ``hq`` and ``hn`` are not filled.
    """
    K = Z.shape[1]
    nt = 0
    for i in range(start, end):
        r = nr.rows[i]
        b = X[f, r]
        wr = nr.weights[i]
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
            z = Z[r, k]
            if has_missing:
                if z == z:
                    hs[b, k] += wr * z
                    hq[b, k] += wr * z * z
                    hn[b, k] += wr
            else:
                hs[b, k] += wr * z
    if nt > 24:
        # many codes: collect them in order by a scan of the 256 codes (an insertion sort of random
        # codes would be quadratic)
        nt = 0
        for b in range(256):
            if hw[b] != 0.0:
                touched[nt] = b
                nt += 1
    else:
        # insertion sort of the few touched codes (deep nodes)
        for i in range(1, nt):
            v = touched[i]
            j = i - 1
            while j >= 0 and touched[j] > v:
                touched[j + 1] = touched[j]
                j -= 1
            touched[j + 1] = v
    if touched[nt - 1] == MISSING:
        return nt, nt - 1, hw[MISSING]
    return nt, nt, 0.0


@njit(cache=True, nogil=True, inline="always")
def _clear_histogram(hw, touched, nt):
    """Reset the histogram weights of the touched codes (the marks :func:`_histogram` relies on)."""
    for t in range(nt):
        hw[touched[t]] = 0.0


@njit(cache=True, nogil=True)
def _add_bin(b, hw, hs, hq, hn, has_missing, LW, LS, LQ, LN, sign):
    """Add (sign=1) or remove (sign=-1) the histogram cell of code b to the left statistics.

    With complete target columns only the weights and sums are kept (the gain needs no squares then).
    """
    K = LS.shape[0]
    if has_missing:
        for k in range(K):
            LS[k] += sign * hs[b, k]
            LQ[k] += sign * hq[b, k]
            LN[k] += sign * hn[b, k]
    else:
        for k in range(K):
            LS[k] += sign * hs[b, k]
    return LW + sign * hw[b]


@njit(cache=True, nogil=True)
def _zero(LS, LQ, LN):
    for k in range(LS.shape[0]):
        LS[k] = 0.0
        LQ[k] = 0.0
        LN[k] = 0.0


# ---- the gain of one partition -----------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _split_value(P, TW, TS, TQ, TN, LW, LS, LQ, LN):
    """h = P - ss(left) - ss(total - left)."""
    K = TS.shape[0]
    RW = TW - LW
    h = P
    for k in range(K):
        h -= _ss(LW, LS[k], LQ[k], LN[k])
        h -= _ss(RW, TS[k] - LS[k], TQ[k] - LQ[k], TN[k] - LN[k])
    return h


@njit(cache=True, nogil=True, inline="always")
def _gain_complete(TW, TS, sT2, LW, LS, MS, add_missing):
    """h for complete target columns: |S_L|^2/W_L + |S_R|^2/W_R - |S|^2/W (squares cancel out)."""
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


@njit(cache=True, nogil=True)
def _evaluate_partition(P, sT2, TW, TS, TQ, TN, LW, LS, LQ, LN, MW, hw, hs, hq, hn, has_missing, min_leaf):
    """Best of (missing right, missing left) for a left part L (without the missing block).

    Returns (h, missing_left); h = -inf when neither is valid. When the node has no missing values the
    default direction is the heavier child. LS/LQ/LN are restored before returning. With complete targets
    the gain is computed from sums only (``sT2`` = |S|^2, ``P`` unused).
    """
    best_h = -np.inf
    best_ml = False
    RW_known = TW - LW - MW
    if not has_missing:
        if LW >= min_leaf and TW - LW >= min_leaf and LW > 0.0 and RW_known + MW > 0.0:
            best_h = _gain_complete(TW, TS, sT2, LW, LS, LS, False)
            best_ml = MW == 0.0 and LW > TW - LW
        if MW > 0.0:
            LW2 = LW + MW
            if LW2 >= min_leaf and TW - LW2 >= min_leaf and RW_known > 0.0:
                h = _gain_complete(TW, TS, sT2, LW2, LS, hs[MISSING], True)
                if h > best_h:
                    best_h = h
                    best_ml = True
        return best_h, best_ml
    # missing right
    if LW >= min_leaf and TW - LW >= min_leaf and LW > 0.0 and RW_known + MW > 0.0:
        best_h = _split_value(P, TW, TS, TQ, TN, LW, LS, LQ, LN)
        best_ml = MW == 0.0 and LW > TW - LW
    if MW > 0.0:
        LW2 = _add_bin(MISSING, hw, hs, hq, hn, has_missing, LW, LS, LQ, LN, 1.0)
        if LW2 >= min_leaf and TW - LW2 >= min_leaf and RW_known > 0.0:
            h = _split_value(P, TW, TS, TQ, TN, LW2, LS, LQ, LN)
            if h > best_h:
                best_h = h
                best_ml = True
        _add_bin(MISSING, hw, hs, hq, hn, has_missing, LW2, LS, LQ, LN, -1.0)
    return best_h, best_ml


# ---- numeric features --------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _scan_numeric_complete(touched, n_known, hw, hs, TW, TS, sT2, MW, min_leaf, LS):
    """Best threshold of a numeric feature when every target column is complete (the hot path).

    The gain of :func:`_evaluate_partition` for complete targets, unrolled over the thresholds.
    Returns (h, threshold code, missing_left); h = -inf when no threshold is valid.
    """
    K = TS.shape[0]
    for k in range(K):
        LS[k] = 0.0
    best_h = -np.inf
    best_b = -1
    best_ml = False
    LW = 0.0
    base = sT2 / TW
    for t in range(n_known):
        b = touched[t]
        LW += hw[b]
        sl2 = 0.0
        sr2 = 0.0
        for k in range(K):
            a = LS[k] + hs[b, k]
            LS[k] = a
            c = TS[k] - a
            sl2 += a * a
            sr2 += c * c
        RW = TW - LW
        # missing values (weight MW) go right
        if LW >= min_leaf and RW >= min_leaf:
            h = sl2 / LW + sr2 / RW - base
            if h > best_h:
                best_h = h
                best_b = b
                best_ml = MW == 0.0 and LW > RW
        if MW > 0.0:
            LW2 = LW + MW
            RW2 = TW - LW2
            if LW2 >= min_leaf and RW2 >= min_leaf and RW2 > 0.0:
                sl2 = 0.0
                sr2 = 0.0
                for k in range(K):
                    a = LS[k] + hs[MISSING, k]
                    c = TS[k] - a
                    sl2 += a * a
                    sr2 += c * c
                h = sl2 / LW2 + sr2 / RW2 - base
                if h > best_h:
                    best_h = h
                    best_b = b
                    best_ml = True
    return best_h, best_b, best_ml


@njit(cache=True, nogil=True)
def _scan_numeric_missing(touched, n_known, hw, hs, hq, hn, P, TW, TS, TQ, TN, MW, min_leaf, LS, LQ, LN):
    """Best threshold of a numeric feature when target values are missing (per-column counts N_k).

    Returns (h, threshold code, missing_left); h = -inf when no threshold is valid.
    """
    _zero(LS, LQ, LN)
    LW = 0.0
    best_h = -np.inf
    best_b = -1
    best_ml = False
    for t in range(n_known):
        b = touched[t]
        LW = _add_bin(b, hw, hs, hq, hn, True, LW, LS, LQ, LN, 1.0)
        h, ml = _evaluate_partition(P, 0.0, TW, TS, TQ, TN, LW, LS, LQ, LN, MW, hw, hs, hq, hn, True, min_leaf)
        if h > best_h:
            best_h = h
            best_b = b
            best_ml = ml
    return best_h, best_b, best_ml


@njit(cache=True, nogil=True)
def _random_threshold(state, f, touched, n_known, lower, upper):
    """Extra-trees threshold code of numeric feature f: u is drawn uniformly in the node's value range
    [lower edge of the first present bin, upper edge of the last], and the test is "code <= t" with t the
    last present code (but the last one) whose upper edge is <= u, or the first present code."""
    lo_b = touched[0]
    if n_known == 1:
        return lo_b
    hi_b = touched[n_known - 1]
    u = lower[f, lo_b] + rand_uniform(state) * (upper[f, hi_b] - lower[f, lo_b])
    t_bin = lo_b
    for t in range(n_known - 1):
        if upper[f, touched[t]] <= u:
            t_bin = touched[t]
    return t_bin


@njit(cache=True, nogil=True)
def _split_at_random_threshold(state, f, lower, upper, touched, n_known, hw, hs, hq, hn, has_missing, P, sT2,
                               TW, TS, TQ, TN, MW, min_leaf, LS, LQ, LN):
    """The extra-trees test of a numeric feature: (h, threshold code, missing_left), h = -inf if invalid."""
    t_bin = _random_threshold(state, f, touched, n_known, lower, upper)
    _zero(LS, LQ, LN)
    LW = 0.0
    for t in range(n_known):
        b = touched[t]
        if b > t_bin:
            break
        LW = _add_bin(b, hw, hs, hq, hn, has_missing, LW, LS, LQ, LN, 1.0)
    h, ml = _evaluate_partition(P, sT2, TW, TS, TQ, TN, LW, LS, LQ, LN, MW, hw, hs, hq, hn, has_missing,
                                min_leaf)
    return h, t_bin, ml


# ---- nominal features: subsets A of the present categories cats[:mcat] ----------------------------------

@njit(cache=True, nogil=True)
def _mask_of(mask, cats, in_a, mcat):
    """The 256-bit mask (4 x uint64) of the categories ``cats[t]`` with ``in_a[t]``."""
    for j in range(4):
        mask[j] = np.uint64(0)
    for t in range(mcat):
        if in_a[t]:
            c = cats[t]
            mask[c >> 6] |= np.uint64(1) << np.uint64(c & 63)


@njit(cache=True, nogil=True)
def _subset_random(state, cats, mcat, in_a, hw, hs, hq, hn, has_missing, P, sT2, TW, TS, TQ, TN, MW, min_leaf,
                   LS, LQ, LN, mask):
    """One random proper subset A (each category in A with probability 1/2, drawn again while A is empty or
    full); with a single category, A = {it} (the test then separates the missing values).

    Returns (h, missing_left), h = -inf if invalid, and writes the mask of A.
    """
    if mcat == 1:
        in_a[0] = True
    else:
        cnt = 0
        while cnt == 0 or cnt == mcat:
            cnt = 0
            for t in range(mcat):
                in_a[t] = rand_uniform(state) < 0.5
                if in_a[t]:
                    cnt += 1
    _zero(LS, LQ, LN)
    LW = 0.0
    for t in range(mcat):
        if in_a[t]:
            LW = _add_bin(cats[t], hw, hs, hq, hn, has_missing, LW, LS, LQ, LN, 1.0)
    h, ml = _evaluate_partition(P, sT2, TW, TS, TQ, TN, LW, LS, LQ, LN, MW, hw, hs, hq, hn, has_missing,
                                min_leaf)
    _mask_of(mask, cats, in_a, mcat)
    return h, ml


@njit(cache=True, nogil=True)
def _subset_greedy(cats, mcat, in_a, hw, hs, hq, hn, has_missing, P, sT2, TW, TS, TQ, TN, MW, min_leaf,
                   LS, LQ, LN, mask):
    """Greedy forward selection of A (CLUS's ``SubsetSplit``): start empty, add the category whose addition
    gives the best valid split (the first of equal ones), stop when that does not beat the previous round or
    A would hold every category. Each accepted round is better than the one before, so the last one is the
    best.

    Why greedy even for a few categories, where all 2^(m-1) - 1 subsets could be tried: the search is the
    test's chance to fit noise. An exhaustive search for up to 8 categories (this module's rule before issue
    23) made random features with 6 and 8 categories rank 21st and 2nd of 82 by HMLC Genie3 on cellcycle,
    where CLUS ranks them 78th and 40th; with the greedy search they rank 74th and 42nd (leaves of 10).
    Nominal features with many categories still get more chances than numeric ones (a random 16-category
    feature ranks 1st by Genie3 in CLUS too): see the note in the README ("Nominal tests").

    A and its complement are one test; the mask written is the side without the first present category (so
    the orientation does not depend on which of two equal gains rounds higher, e.g. {a} or {b} of two).

    Returns (h, missing_left), h = -inf if no round was valid, and writes the mask of A.
    """
    for t in range(mcat):
        in_a[t] = False
    _zero(LS, LQ, LN)
    LW = 0.0
    size_a = 0
    cur_h = -np.inf
    cur_ml = False
    while size_a < mcat - 1:
        round_h = -np.inf
        round_c = -1
        round_ml = False
        for t in range(mcat):
            if in_a[t]:
                continue
            LW2 = _add_bin(cats[t], hw, hs, hq, hn, has_missing, LW, LS, LQ, LN, 1.0)
            h, ml = _evaluate_partition(P, sT2, TW, TS, TQ, TN, LW2, LS, LQ, LN, MW, hw, hs, hq, hn,
                                        has_missing, min_leaf)
            _add_bin(cats[t], hw, hs, hq, hn, has_missing, LW2, LS, LQ, LN, -1.0)
            if h > round_h:
                round_h = h
                round_c = t
                round_ml = ml
        if round_c < 0 or round_h <= cur_h:
            break
        in_a[round_c] = True
        size_a += 1
        LW = _add_bin(cats[round_c], hw, hs, hq, hn, has_missing, LW, LS, LQ, LN, 1.0)
        cur_h = round_h
        cur_ml = round_ml
    if in_a[0]:  # the same test seen from the other side (its missing-value side evaluated again)
        _zero(LS, LQ, LN)
        LW = 0.0
        for t in range(mcat):
            in_a[t] = not in_a[t]
            if in_a[t]:
                LW = _add_bin(cats[t], hw, hs, hq, hn, has_missing, LW, LS, LQ, LN, 1.0)
        cur_h, cur_ml = _evaluate_partition(P, sT2, TW, TS, TQ, TN, LW, LS, LQ, LN, MW, hw, hs, hq, hn,
                                            has_missing, min_leaf)
    _mask_of(mask, cats, in_a, mcat)
    return cur_h, cur_ml


# ---- one feature, one node: the split search is dispatched in grow_tree's loop (an inlined dispatcher
# function made the hot path ~8% slower); the nominal searches share one entry point -----------------------

@njit(cache=True, nogil=True)
def _best_subset(splitter, state, cats, mcat, in_a, hw, hs, hq, hn, has_missing, P, sT2, TW, TS, TQ, TN, MW,
                 min_leaf, LS, LQ, LN, mask):
    """The subset test of a nominal feature chosen by the splitter: one random subset for extra trees (and
    when a single category is present), else greedy selection (:func:`_subset_greedy`). Returns
    (h, missing_left), h = -inf if invalid, and writes the mask."""
    if splitter == SPLITTER_RANDOM or mcat <= 1:
        return _subset_random(state, cats, mcat, in_a, hw, hs, hq, hn, has_missing, P, sT2, TW, TS, TQ, TN, MW,
                              min_leaf, LS, LQ, LN, mask)
    return _subset_greedy(cats, mcat, in_a, hw, hs, hq, hn, has_missing, P, sT2, TW, TS, TQ, TN, MW, min_leaf,
                          LS, LQ, LN, mask)


@njit(cache=True, nogil=True, inline="always")
def _keep_better(best_h, best_f, best_thr, best_ml, best_mask, h, f, thr, ml, is_nominal, mask):
    """The node's best split after feature f's best one (h, thr, ml, mask): f's if h is strictly greater.

    Returns (h, feature, threshold, missing_left); a nominal split's mask is copied into ``best_mask`` and
    it leaves the threshold as it was (unused for nominal nodes).
    """
    if not h > best_h:
        return best_h, best_f, best_thr, best_ml
    if is_nominal:
        for j in range(4):
            best_mask[j] = mask[j]
        return h, f, best_thr, ml
    return h, f, thr, ml


@njit(cache=True, nogil=True, inline="always")
def _draw_feature(state, feats, visited):
    """The next candidate feature: step ``visited`` of a Fisher-Yates shuffle of ``feats``, so exact ties
    between features are broken at random, not by column order."""
    j = visited + rand_below(state, feats.shape[0] - visited)
    tmp = feats[visited]
    feats[visited] = feats[j]
    feats[j] = tmp
    return feats[visited]


# ---- routing, splitting, children ------------------------------------------------------------------

_goes_left = goes_left


@njit(cache=True, nogil=True, inline="always")
def _next_node(node, code, nominal_f, threshold, missing_left, mask, left, right):
    return left[node] if _goes_left(node, code, nominal_f, threshold, missing_left, mask) else right[node]


@njit(cache=True, nogil=True, inline="always")
def _record_split(node, f, thr, ml, h, nominal_f, best_mask, feature, threshold, missing_left, gain, mask):
    feature[node] = f
    threshold[node] = thr
    missing_left[node] = ml
    gain[node] = h
    if nominal_f:
        for j in range(4):
            mask[node, j] = best_mask[j]


@njit(cache=True, nogil=True)
def _split_rows(X, f, nominal_f, node, threshold, missing_left, mask, nr, start, end, fractional, top, left_share):
    """The children's rows of the node ``[start, end)`` split on its recorded test: learned, the in-place
    partition; fractional, :func:`~spark_fr.pct.node_rows.split_fractional` (the share going left is
    recorded in ``left_share``). Returns (nr, rows with a missing value sent both ways, left start, left end,
    right start, right end)."""
    if not fractional:
        mid = partition(X, f, nominal_f, node, threshold, missing_left, mask, nr, start, end)
        return nr, 0, start, mid, mid, end
    nr, share, n_missing, ls, le, rs, re = split_fractional(X, f, nominal_f, node, threshold, missing_left, mask,
                                                            nr, start, end, top)
    left_share[node] = share
    return nr, n_missing, ls, le, rs, re


@njit(cache=True, nogil=True)
def _add_column_gain(column_gain, f, nr, start, mid, Z, has_missing, TW, TS, TQ, TN, LS, LQ, LN):
    """Per-column reductions of the split of the node ``[start, end)`` at ``mid`` (children ``[start, mid)`` and
    ``[mid, end)``) added to ``column_gain[f]``."""
    LWc = _totals(nr, start, mid, Z, has_missing, LS, LQ, LN)
    RWc = TW - LWc
    for k in range(TS.shape[0]):
        column_gain[f, k] += (_ss(TW, TS[k], TQ[k], TN[k]) - _ss(LWc, LS[k], LQ[k], LN[k])
                              - _ss(RWc, TS[k] - LS[k], TQ[k] - LQ[k], TN[k] - LN[k]))


@njit(cache=True, nogil=True)
def _children_reduction(column_gain, f, track_columns, nr, ls, le, rs, re, Z, has_missing, TW, P, TS, TQ, TN,
                        LS, LQ, LN, RS, RQ, RN):
    """|E| impu(E) - |E_L| impu(E_L) - |E_R| impu(E_R) over the weighted rows of the node and of its children
    ``[ls, le)``, ``[rs, re)`` (a fractional split: the missing rows are in both, with their shares); the
    per-column reductions are added to ``column_gain[f]`` when tracked."""
    LW = _totals(nr, ls, le, Z, has_missing, LS, LQ, LN)
    RW = _totals(nr, rs, re, Z, has_missing, RS, RQ, RN)
    if track_columns:
        for k in range(TS.shape[0]):
            column_gain[f, k] += (_ss(TW, TS[k], TQ[k], TN[k]) - _ss(LW, LS[k], LQ[k], LN[k])
                                  - _ss(RW, RS[k], RQ[k], RN[k]))
    return P - _impurity_sum(LW, LS, LQ, LN) - _impurity_sum(RW, RS, RQ, RN)


@njit(cache=True, nogil=True, inline="always")
def _push_children(node, ls, le, rs, re, n_nodes, left, right, depth, stack, sp):
    """Create the children of ``node`` (left: rows ``[ls, le)``, right: ``[rs, re)``) and push them, the
    right one first so the left subtree is grown first. Returns (n_nodes, sp)."""
    lc = n_nodes
    rc = n_nodes + 1
    left[node] = lc
    right[node] = rc
    depth[lc] = depth[node] + 1
    depth[rc] = depth[node] + 1
    stack[sp, 0] = rc
    stack[sp, 1] = rs
    stack[sp, 2] = re
    stack[sp + 1, 0] = lc
    stack[sp + 1, 1] = ls
    stack[sp + 1, 2] = le
    return n_nodes + 2, sp + 2


@njit(cache=True, nogil=True, inline="always")
def _make_leaf(node, nr, start, end, fractional, leaf_of_row, members, n_members):
    """Record the rows of leaf ``node``: ``leaf_of_row`` (learned), or (row, node, weight) memberships
    (fractional). Returns (members, n_members)."""
    if fractional:
        return add_members(members, n_members, nr, start, end, node)
    for i in range(start, end):
        leaf_of_row[nr.rows[i]] = node
    return members, n_members


# ---- the tree ----------------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _tree_arrays(cap):
    """The :data:`TreeArrays` of a tree of at most ``cap`` nodes (feature -1 = leaf, children -1)."""
    return TreeArrays(np.full(cap, -1, np.int32), np.zeros(cap, np.int32), np.zeros(cap, np.bool_),
                      np.zeros((cap, 4), np.uint64), np.full(cap, -1, np.int32), np.full(cap, -1, np.int32),
                      np.zeros(cap, np.float64), np.zeros(cap, np.int32), np.zeros(cap, np.float64),
                      np.zeros(cap, np.float64))


@njit(cache=True, nogil=True)
def _column_gains(D, K, track_columns):
    """The per-feature, per-column gains: (D, K) if tracked, else 1 x 1."""
    return np.zeros((D if track_columns else 1, K if track_columns else 1), np.float64)


@njit(cache=True, nogil=True)
def leaf_weight_floor(min_leaf, fractional):
    """The weight a side must reach: ``min_leaf``, less 1e-9 of it for fractional trees, whose weights (sums of
    products of shares) carry rounding: a side of whole rows weighing min_leaf stays valid."""
    return min_leaf * (1.0 - 1e-9) if fractional else min_leaf


@njit(cache=True, nogil=True)
def node_capacity(m, total_weight, min_leaf, fractional):
    """Nodes a tree of m rows can have: 2m - 1 when a row is in one leaf; with fractional splits a row may be
    in several, but every leaf but the root weighs at least ``min_leaf`` and the leaves' weights add up to the
    total weight W, so at most 2 W / min_leaf - 1 (plus one leaf of slack for rounding)."""
    cap = 2 * m + 1
    if fractional and min_leaf > 0.0:
        cap = max(cap, 2 * int(total_weight / min_leaf) + 3)
    return cap


@njit(cache=True, nogil=True)
def grow_tree(codes, Z, w, rows, config):
    """Grow one PCT.

    Parameters
    ----------
    codes : Codes
        The feature codes (X, nominal, lower, upper).
    Z : float64[n, K]
        Clustering matrix (centred, scaled; NaN = missing).
    w : float64[n]
        Row weights (bootstrap counts); rows with weight 0 are not used.
    rows : int64[m]
        Indices of the rows with positive weight (learned: modified in place, partitioned by node).
    config : GrowConfig
        The tree's options (:func:`spark_fr.pct.config.grow_config`).

    Returns
    -------
    GrowResult
        Node arrays of capacity :func:`node_capacity` (the first ``n_nodes`` are used). Fractional:
        ``left_share`` is the share of each internal node's known weight that went left, ``leaf_of_row`` is
        unused (-1) and the leaves' rows are the memberships (row, leaf, weight in the leaf); ``missing_left``
        is False everywhere (a missing value goes both ways), and ``gain`` is the reduction of |E| impu(E)
        over the weighted rows of the node and its children (the heuristic when no row of the node had a
        missing value of its test).
    """
    X, nominal, lower, upper = codes.X, codes.nominal, codes.lower, codes.upper
    min_leaf, max_depth, splitter = config.min_leaf, config.max_depth, config.splitter
    track_columns, resample_constant = config.track_columns, config.resample_constant
    D, n = X.shape
    K = Z.shape[1]
    m = rows.shape[0]
    max_features = config.max_features if config.max_features > 0 else D
    fractional = config.missing == MISSING_FRACTIONAL
    has_missing = _has_missing_targets(Z, rows)

    total_weight = 0.0
    for i in range(m):
        total_weight += w[rows[i]]
    cap = node_capacity(m, total_weight, min_leaf, fractional)
    min_leaf = leaf_weight_floor(min_leaf, fractional)
    nodes = _tree_arrays(cap)
    (feature, threshold, missing_left, mask, left, right, weight, depth, gain, left_share) = nodes
    leaf_of_row = np.full(n, -1, np.int32)
    column_gain = _column_gains(D, K, track_columns)
    nr = node_rows(rows, w, m + m // 2 + 16 if fractional else m)
    members = new_members(m if fractional else 0)
    n_members = 0

    state = np.empty(1, np.uint64)
    state[0] = config.seed
    feats = np.arange(D)
    TS, TQ, TN = np.empty(K), np.empty(K), np.empty(K)        # node totals
    LS, LQ, LN = np.empty(K), np.empty(K), np.empty(K)        # left-side totals (scratch)
    KS, KQ, KN = np.empty(K), np.empty(K), np.empty(K)        # fractional: totals of the known rows / right side
    hw = np.zeros(256)                                        # histogram of a feature over the node
    hs = np.zeros((256, K))
    hq = np.zeros((256, K))
    hn = np.zeros((256, K) if has_missing else (1, 1))
    touched = np.zeros(256, np.int64)
    in_a = np.zeros(256, np.bool_)
    best_mask = np.zeros(4, np.uint64)
    cand_mask = np.zeros(4, np.uint64)
    stack = np.zeros((cap, 3), np.int64)                      # (node, start, end) of the nodes to grow
    stack[0, 2] = m
    sp = 1
    n_nodes = 1
    root_impurity = 0.0

    while sp > 0:
        sp -= 1
        node, start, end = stack[sp, 0], stack[sp, 1], stack[sp, 2]
        TW, P, sT2 = _node_totals(nr, start, end, Z, has_missing, TS, TQ, TN)
        weight[node] = TW
        if node == 0:
            root_impurity = P / TW if TW > 0.0 else 0.0
        best_h, best_f, best_thr, best_ml = 0.0, -1, 0, False
        # a node whose impurity per example is below 1e-13 of the root's is pure (rounding noise only)
        can_split = (TW >= 2.0 * min_leaf and (max_depth < 0 or depth[node] < max_depth)
                     and P > 1e-13 * TW * root_impurity and P > 0.0)
        if can_split:
            n_eval = 0
            for visited in range(D):
                f = _draw_feature(state, feats, visited)
                nt, n_known, MW = _histogram(X, f, nr, start, end, Z, has_missing, hw, hs, hq, hn, touched)
                varies = n_known >= 2 if fractional else nt >= 2
                if varies or not resample_constant:  # a feature constant in the node counts, unless resampled
                    n_eval += 1
                if varies:
                    # the totals a test of f is scored against: the node's, or (fractional) its known rows'
                    cW, cP, cT2, cS, cQ, cN, cMW = TW, P, sT2, TS, TQ, TN, MW
                    if fractional and MW > 0.0:
                        cW, cP, cT2 = _known_totals(TW, TS, TQ, TN, MW, hs, hq, hn, has_missing, KS, KQ, KN)
                        cS, cQ, cN, cMW = KS, KQ, KN, 0.0
                    if nominal[f]:
                        h, ml = _best_subset(splitter, state, touched, n_known, in_a, hw, hs, hq, hn, has_missing,
                                             cP, cT2, cW, cS, cQ, cN, cMW, min_leaf, LS, LQ, LN, cand_mask)
                        thr = -1
                    elif splitter == SPLITTER_RANDOM:
                        h, thr, ml = _split_at_random_threshold(state, f, lower, upper, touched, n_known, hw, hs, hq,
                                                                hn, has_missing, cP, cT2, cW, cS, cQ, cN, cMW,
                                                                min_leaf, LS, LQ, LN)
                    elif has_missing:
                        h, thr, ml = _scan_numeric_missing(touched, n_known, hw, hs, hq, hn, cP, cW, cS, cQ, cN, cMW,
                                                           min_leaf, LS, LQ, LN)
                    else:
                        h, thr, ml = _scan_numeric_complete(touched, n_known, hw, hs, cW, cS, cT2, cMW, min_leaf, LS)
                    best_h, best_f, best_thr, best_ml = _keep_better(best_h, best_f, best_thr, best_ml, best_mask,
                                                                     h, f, thr, ml, nominal[f], cand_mask)
                _clear_histogram(hw, touched, nt)
                if n_eval >= max_features:
                    break
        if best_f < 0 or best_h <= 1e-12 * P:
            members, n_members = _make_leaf(node, nr, start, end, fractional, leaf_of_row, members, n_members)
            continue
        _record_split(node, best_f, best_thr, best_ml and not fractional, best_h, nominal[best_f], best_mask,
                      feature, threshold, missing_left, gain, mask)
        top = free_start(end, stack, sp) if fractional else end
        nr, n_missing, ls, le, rs, re = _split_rows(X, best_f, nominal[best_f], node, threshold, missing_left, mask,
                                                    nr, start, end, fractional, top, left_share)
        if n_missing > 0:
            gain[node] = _children_reduction(column_gain, best_f, track_columns, nr, ls, le, rs, re, Z, has_missing,
                                             TW, P, TS, TQ, TN, LS, LQ, LN, KS, KQ, KN)
        elif track_columns:
            _add_column_gain(column_gain, best_f, nr, ls, le, Z, has_missing, TW, TS, TQ, TN, LS, LQ, LN)
        n_nodes, sp = _push_children(node, ls, le, rs, re, n_nodes, left, right, depth, stack, sp)

    return GrowResult(n_nodes, nodes, leaf_of_row, column_gain, trimmed(members, n_members))


@njit(cache=True, nogil=True)
def apply_tree(XR, rows, feature, threshold, missing_left, mask, left, right, nominal):
    """Leaf reached by each row of ``rows``; ``XR`` is the row-major code matrix (n, D)."""
    out = np.empty(rows.shape[0], np.int32)
    for i in range(rows.shape[0]):
        r = rows[i]
        node = 0
        while feature[node] >= 0:
            f = feature[node]
            node = _next_node(node, XR[r, f], nominal[f], threshold, missing_left, mask, left, right)
        out[i] = node
    return out


@njit(cache=True, nogil=True)
def apply_tree_permuted(XR, rows, perm_rows, pf, starts, feature, threshold, missing_left, mask, left, right,
                        nominal):
    """Leaf reached by each row when feature ``pf`` takes the value of row ``perm_rows[i]`` instead.

    Row i is routed from node ``starts[i]``: the first node of its path that tests ``pf`` (above it the
    permuted path is the original one), or the root.
    """
    out = np.empty(rows.shape[0], np.int32)
    for i in range(rows.shape[0]):
        r = rows[i]
        node = starts[i]
        while feature[node] >= 0:
            f = feature[node]
            code = XR[perm_rows[i], f] if f == pf else XR[r, f]
            node = _next_node(node, code, nominal[f], threshold, missing_left, mask, left, right)
        out[i] = node
    return out


@njit(cache=True, nogil=True)
def rows_by_path_feature(XR, rows, feature, threshold, missing_left, mask, left, right, nominal, n_features):
    """For every feature, the positions (in ``rows``) of the rows whose path tests that feature.

    Permuting feature f can only change the leaf of these rows, so the permutation score re-routes them
    alone, each from the first node of its path that tests the feature. Returns CSR arrays (indptr (D+1,),
    positions, first_nodes) and the unpermuted leaf of every row.
    """
    m = rows.shape[0]
    seen = np.full(n_features, -1, np.int64)
    counts = np.zeros(n_features + 1, np.int64)
    pair_f = np.empty(16 * m + 16, np.int64)
    pair_i = np.empty(16 * m + 16, np.int64)
    pair_n = np.empty(16 * m + 16, np.int64)
    n_pairs = 0
    leaves = np.empty(m, np.int32)
    for i in range(m):
        r = rows[i]
        node = 0
        while feature[node] >= 0:
            f = feature[node]
            if seen[f] != i:
                seen[f] = i
                if n_pairs == pair_f.shape[0]:
                    pf2 = np.empty(2 * n_pairs, np.int64)
                    pi2 = np.empty(2 * n_pairs, np.int64)
                    pn2 = np.empty(2 * n_pairs, np.int64)
                    pf2[:n_pairs] = pair_f
                    pi2[:n_pairs] = pair_i
                    pn2[:n_pairs] = pair_n
                    pair_f = pf2
                    pair_i = pi2
                    pair_n = pn2
                pair_f[n_pairs] = f
                pair_i[n_pairs] = i
                pair_n[n_pairs] = node
                n_pairs += 1
                counts[f + 1] += 1
            node = _next_node(node, XR[r, f], nominal[f], threshold, missing_left, mask, left, right)
        leaves[i] = node
    indptr = np.cumsum(counts)
    fill = indptr[:-1].copy()
    positions = np.empty(n_pairs, np.int64)
    first_nodes = np.empty(n_pairs, np.int64)
    for p in range(n_pairs):
        f = pair_f[p]
        positions[fill[f]] = pair_i[p]
        first_nodes[fill[f]] = pair_n[p]
        fill[f] += 1
    return indptr, positions, first_nodes, leaves


@njit(cache=True, nogil=True)
def permutation(state_seed, n):
    """A uniformly random permutation of range(n) (Fisher-Yates with the SplitMix64 stream)."""
    state = np.empty(1, np.uint64)
    state[0] = state_seed
    p = np.arange(n)
    for i in range(n - 1, 0, -1):
        j = rand_below(state, i + 1)
        tmp = p[i]
        p[i] = p[j]
        p[j] = tmp
    return p
