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

Depth-first, with an explicit stack of row ranges (rows are partitioned in place, as in scikit-learn):

    node(E):
        W, S, Q, N <- one pass over E;  P <- (*)
        leaf if W < 2 * min_leaf, depth == max_depth, or P / W < 1e-13 * (root impurity per example)
        for each candidate feature f (max_features features drawn at random without replacement: the
        random-forest subset, all features for bagging; as in the thesis and CLUS a sampled feature that is
        constant in the node counts, so the node can become a leaf; optionally, as in scikit-learn,
        constant features are skipped and more are drawn):
            histogram of (w, w*z, w*z^2 [, w*known]) per code of f over E
            numeric f: scan the thresholds "code <= t" between present codes      (best splitter)
                       or draw one threshold uniformly in the node's value range  (extra-trees splitter)
            nominal f: subsets A of the present categories, test "code in A": exhaustive for <= 8
                       categories, greedy forward selection (add the category that helps most, stop when
                       nothing helps, as CLUS does) above that; one random subset for extra trees
            missing values go, as a block, to the side that gives the larger reduction (learned default
            direction, as in XGBoost / LightGBM / scikit-learn >= 1.3); if the node had no missing values
            they go to the heavier child at prediction time
            h = P - |E_L| impu(E_L) - |E_R| impu(E_R); keep the best valid split (both sides >= min_leaf)
        leaf if best h <= 1e-12 * P, else partition E and push both children

The tree records, per node, the feature, the test, the weight |E(N)|, the depth and h*(N): everything the
Symbolic and Genie3 scores need. Per-column reductions can be accumulated for per-target Genie3.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..runtime.rng import next_u64, rand_below, rand_uniform

MISSING = 255
MAX_EXHAUSTIVE_CATEGORIES = 8

SPLITTER_BEST = 0
SPLITTER_RANDOM = 1


@njit(cache=True)
def _totals(rows, start, end, Z, w, has_missing, S, Q, N):
    """Weighted totals of the rows ``rows[start:end]``; returns the total weight."""
    K = Z.shape[1]
    for k in range(K):
        S[k] = 0.0
        Q[k] = 0.0
        N[k] = 0.0
    W = 0.0
    for i in range(start, end):
        r = rows[i]
        wr = w[r]
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


@njit(cache=True, inline="always")
def _ss(W, s, q, n):
    """|E| * Var of one column over its known rows, see (*) in the module docstring."""
    if n <= 0.0:
        return 0.0
    v = q - s * s / n
    if v < 0.0:
        v = 0.0
    return v * (W / n)


@njit(cache=True)
def _impurity_sum(W, S, Q, N):
    K = S.shape[0]
    t = 0.0
    for k in range(K):
        t += _ss(W, S[k], Q[k], N[k])
    return t


@njit(cache=True)
def _split_value(P, TW, TS, TQ, TN, LW, LS, LQ, LN):
    """h = P - ss(left) - ss(total - left)."""
    K = TS.shape[0]
    RW = TW - LW
    h = P
    for k in range(K):
        h -= _ss(LW, LS[k], LQ[k], LN[k])
        h -= _ss(RW, TS[k] - LS[k], TQ[k] - LQ[k], TN[k] - LN[k])
    return h


@njit(cache=True)
def _histogram(X, f, rows, start, end, Z, w, has_missing, hw, hs, hq, hn, touched):
    """Per-code histogram of feature f over rows[start:end]; returns the number of touched codes.

    Only touched codes are zeroed and later reset (``hw[code] = 0``) by the caller, so a small node costs
    O(rows * K), not O(256 * K).
    """
    K = Z.shape[1]
    nt = 0
    for i in range(start, end):
        r = rows[i]
        b = X[f, r]
        wr = w[r]
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
        return nt
    # insertion sort of the few touched codes (deep nodes)
    for i in range(1, nt):
        v = touched[i]
        j = i - 1
        while j >= 0 and touched[j] > v:
            touched[j + 1] = touched[j]
            j -= 1
        touched[j + 1] = v
    return nt


@njit(cache=True)
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


@njit(cache=True, inline="always")
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


@njit(cache=True)
def _zero(LS, LQ, LN):
    for k in range(LS.shape[0]):
        LS[k] = 0.0
        LQ[k] = 0.0
        LN[k] = 0.0


@njit(cache=True)
def _evaluate_partition(P, TW, TS, TQ, TN, LW, LS, LQ, LN, MW, hw, hs, hq, hn, has_missing, min_leaf):
    """Best of (missing right, missing left) for a left part L (without the missing block).

    Returns (h, missing_left, valid). When the node has no missing values the default direction is the
    heavier child. LS/LQ/LN are restored before returning.
    """
    best_h = -np.inf
    best_ml = False
    valid = False
    RW_known = TW - LW - MW
    if not has_missing:
        # complete targets: P is not needed, TQ holds |S|^2 in TQ[0] (see grow_tree)
        sT2 = TQ[0]
        if LW >= min_leaf and TW - LW >= min_leaf and LW > 0.0 and RW_known + MW > 0.0:
            best_h = _gain_complete(TW, TS, sT2, LW, LS, LS, False)
            best_ml = MW == 0.0 and LW > TW - LW
            valid = True
        if MW > 0.0:
            LW2 = LW + MW
            if LW2 >= min_leaf and TW - LW2 >= min_leaf and RW_known > 0.0:
                h = _gain_complete(TW, TS, sT2, LW2, LS, hs[MISSING], True)
                if h > best_h:
                    best_h = h
                    best_ml = True
                    valid = True
        return best_h, best_ml, valid
    # missing right
    if LW >= min_leaf and TW - LW >= min_leaf and LW > 0.0 and RW_known + MW > 0.0:
        h = _split_value(P, TW, TS, TQ, TN, LW, LS, LQ, LN)
        best_h = h
        best_ml = MW == 0.0 and LW > TW - LW
        valid = True
    if MW > 0.0:
        LW2 = _add_bin(MISSING, hw, hs, hq, hn, has_missing, LW, LS, LQ, LN, 1.0)
        if LW2 >= min_leaf and TW - LW2 >= min_leaf and RW_known > 0.0:
            h = _split_value(P, TW, TS, TQ, TN, LW2, LS, LQ, LN)
            if h > best_h:
                best_h = h
                best_ml = True
                valid = True
        _add_bin(MISSING, hw, hs, hq, hn, has_missing, LW2, LS, LQ, LN, -1.0)
    return best_h, best_ml, valid


@njit(cache=True)
def _scan_numeric_complete(touched, n_known, hw, hs, TW, TS, sT2, MW, min_leaf, LS):
    """Best threshold of a numeric feature when every target column is complete (the hot path).

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


@njit(cache=True)
def _set_mask_from_bins(mask, bins, count):
    for j in range(4):
        mask[j] = np.uint64(0)
    for i in range(count):
        c = bins[i]
        mask[c >> 6] |= np.uint64(1) << np.uint64(c & 63)


@njit(cache=True)
def _goes_left(code, feat_nominal, thr, mask_row, missing_left):
    if code == MISSING:
        return missing_left
    if feat_nominal:
        return (mask_row[code >> 6] >> np.uint64(code & 63)) & np.uint64(1) == np.uint64(1)
    return code <= thr


@njit(cache=True)
def grow_tree(X, nominal, lower, upper, Z, w, rows, min_leaf, max_depth, max_features, splitter,
              track_columns, seed, resample_constant=False):
    """Grow one PCT.

    Parameters
    ----------
    X : uint8[D, n]
        Feature codes; 255 = missing. Numeric codes are ordered bins, nominal codes category indices.
    nominal : bool[D]
        Whether a feature is nominal.
    lower, upper : float64[D, 255]
        Smallest and largest raw value of each numeric bin (used by the extra-trees splitter only).
    Z : float64[n, K]
        Clustering matrix (centred, scaled; NaN = missing).
    w : float64[n]
        Row weights (bootstrap counts); rows with weight 0 are not used.
    rows : int64[m]
        Indices of the rows with positive weight (modified in place: partitioned by node).
    min_leaf : float
        Minimal total weight of a leaf.
    max_depth : int
        Maximal depth (root = 0); negative = unlimited.
    max_features : int
        Number of features evaluated per node, drawn at random without replacement (>= D: all of them,
        in a random order).
    splitter : int
        SPLITTER_BEST or SPLITTER_RANDOM (extra trees).
    track_columns : bool
        Accumulate per-feature, per-column impurity reductions.
    seed : uint64
        Tree seed.
    resample_constant : bool
        False (the thesis, CLUS): the ``max_features`` sampled features are the candidates, and the node
        is a leaf when none of them can split it. True (scikit-learn): a feature that is constant in the
        node does not count, and more are drawn until ``max_features`` non-constant ones were evaluated.

    Returns
    -------
    tuple
        (n_nodes, feature, threshold, missing_left, mask, left, right, weight, depth, gain, leaf_of_row,
        column_gain) with node arrays of capacity 2m+1 (the first n_nodes entries are used), ``leaf_of_row``
        (n,) giving the leaf of each in-bag row (-1 for out-of-bag rows) and ``column_gain`` (D, K) (zeros
        unless ``track_columns``).
    """
    D, n = X.shape
    K = Z.shape[1]
    m = rows.shape[0]
    has_missing = False
    for i in range(m):
        r = rows[i]
        for k in range(K):
            if Z[r, k] != Z[r, k]:
                has_missing = True
                break
        if has_missing:
            break

    cap = 2 * m + 1
    feature = np.full(cap, -1, np.int32)
    threshold = np.zeros(cap, np.int32)
    missing_left = np.zeros(cap, np.bool_)
    mask = np.zeros((cap, 4), np.uint64)
    left = np.full(cap, -1, np.int32)
    right = np.full(cap, -1, np.int32)
    weight = np.zeros(cap, np.float64)
    depth_arr = np.zeros(cap, np.int32)
    gain = np.zeros(cap, np.float64)
    leaf_of_row = np.full(n, -1, np.int32)
    column_gain = np.zeros((D if track_columns else 1, K if track_columns else 1), np.float64)

    state = np.empty(1, np.uint64)
    state[0] = seed
    feats = np.arange(D)

    TS = np.empty(K)
    TQ = np.empty(K)
    TQ2 = np.empty(K)
    TN = np.empty(K)
    LS = np.empty(K)
    LQ = np.empty(K)
    LN = np.empty(K)
    hw = np.zeros(256)
    hs = np.zeros((256, K))
    hq = np.zeros((256, K))
    hn = np.zeros((256, K) if has_missing else (1, 1))
    touched = np.zeros(256, np.int64)
    cats = np.zeros(256, np.int64)
    subset = np.zeros(256, np.int64)
    in_a = np.zeros(256, np.bool_)
    best_mask = np.zeros(4, np.uint64)
    cand_mask = np.zeros(4, np.uint64)

    stack_node = np.zeros(cap, np.int64)
    stack_start = np.zeros(cap, np.int64)
    stack_end = np.zeros(cap, np.int64)
    root_impurity = 0.0
    n_nodes = 1
    stack_node[0] = 0
    stack_start[0] = 0
    stack_end[0] = m
    sp = 1

    while sp > 0:
        sp -= 1
        node = stack_node[sp]
        start = stack_start[sp]
        end = stack_end[sp]
        d = depth_arr[node]
        TW = _totals(rows, start, end, Z, w, has_missing, TS, TQ, TN)
        weight[node] = TW
        P = _impurity_sum(TW, TS, TQ, TN)
        if not has_missing:
            # the complete-target gain needs |S|^2 only; pass it in TQ2[0]
            s2 = 0.0
            for k in range(K):
                s2 += TS[k] * TS[k]
            TQ2[0] = s2
        else:
            TQ2[:] = TQ
        if node == 0:
            root_impurity = P / TW if TW > 0.0 else 0.0

        best_h = 0.0
        best_f = -1
        best_thr = 0
        best_ml = False
        # a node whose impurity per example is below 1e-13 of the root's is pure (rounding noise only)
        can_split = (TW >= 2.0 * min_leaf and (max_depth < 0 or d < max_depth)
                     and P > 1e-13 * TW * root_impurity and P > 0.0)
        if can_split:
            visited = 0
            n_eval = 0
            while visited < D:
                # features in a random order (Fisher-Yates): exact ties between features are broken at
                # random, not by column order
                j = visited + rand_below(state, D - visited)
                tmp = feats[visited]
                feats[visited] = feats[j]
                feats[j] = tmp
                f = feats[visited]
                visited += 1
                nt = _histogram(X, f, rows, start, end, Z, w, has_missing, hw, hs, hq, hn, touched)
                MW = 0.0
                n_known = nt
                if touched[nt - 1] == MISSING:
                    MW = hw[MISSING]
                    n_known = nt - 1
                if nt >= 2 or not resample_constant:
                    n_eval += 1
                if nt >= 2:
                    if not nominal[f]:
                        _zero(LS, LQ, LN)
                        LW = 0.0
                        if splitter == SPLITTER_BEST and not has_missing:
                            h, b, ml = _scan_numeric_complete(touched, n_known, hw, hs, TW, TS, TQ2[0], MW,
                                                              min_leaf, LS)
                            if b >= 0 and h > best_h:
                                best_h = h
                                best_f = f
                                best_thr = b
                                best_ml = ml
                        elif splitter == SPLITTER_BEST:
                            for t in range(n_known):
                                b = touched[t]
                                LW = _add_bin(b, hw, hs, hq, hn, has_missing, LW, LS, LQ, LN, 1.0)
                                h, ml, ok = _evaluate_partition(P, TW, TS, TQ2, TN, LW, LS, LQ, LN, MW,
                                                                hw, hs, hq, hn, has_missing, min_leaf)
                                if ok and h > best_h:
                                    best_h = h
                                    best_f = f
                                    best_thr = b
                                    best_ml = ml
                        else:
                            lo_b = touched[0]
                            hi_b = touched[n_known - 1]
                            if n_known == 1:
                                t_bin = lo_b
                            else:
                                u = lower[f, lo_b] + rand_uniform(state) * (upper[f, hi_b] - lower[f, lo_b])
                                t_bin = lo_b
                                for t in range(n_known - 1):
                                    if upper[f, touched[t]] <= u:
                                        t_bin = touched[t]
                            for t in range(n_known):
                                b = touched[t]
                                if b > t_bin:
                                    break
                                LW = _add_bin(b, hw, hs, hq, hn, has_missing, LW, LS, LQ, LN, 1.0)
                            h, ml, ok = _evaluate_partition(P, TW, TS, TQ2, TN, LW, LS, LQ, LN, MW,
                                                            hw, hs, hq, hn, has_missing, min_leaf)
                            if ok and h > best_h:
                                best_h = h
                                best_f = f
                                best_thr = t_bin
                                best_ml = ml
                    else:
                        # nominal: subsets A of the present categories
                        mcat = n_known
                        for t in range(mcat):
                            cats[t] = touched[t]
                        if splitter == SPLITTER_RANDOM or mcat <= 1:
                            # one random proper subset (or {the only category} vs missing)
                            _zero(LS, LQ, LN)
                            LW = 0.0
                            cnt = 0
                            if mcat == 1:
                                in_a[0] = True
                            else:
                                while cnt == 0 or cnt == mcat:
                                    cnt = 0
                                    for t in range(mcat):
                                        in_a[t] = rand_uniform(state) < 0.5
                                        if in_a[t]:
                                            cnt += 1
                            k2 = 0
                            for t in range(mcat):
                                if in_a[t]:
                                    LW = _add_bin(cats[t], hw, hs, hq, hn, has_missing, LW, LS, LQ, LN, 1.0)
                                    subset[k2] = cats[t]
                                    k2 += 1
                            h, ml, ok = _evaluate_partition(P, TW, TS, TQ2, TN, LW, LS, LQ, LN, MW,
                                                            hw, hs, hq, hn, has_missing, min_leaf)
                            if ok and h > best_h:
                                best_h = h
                                best_f = f
                                best_ml = ml
                                _set_mask_from_bins(best_mask, subset, k2)
                        elif mcat <= MAX_EXHAUSTIVE_CATEGORIES:
                            for s in range(1, 1 << (mcat - 1)):
                                _zero(LS, LQ, LN)
                                LW = 0.0
                                k2 = 0
                                for t in range(mcat - 1):
                                    if (s >> t) & 1:
                                        c = cats[t + 1]
                                        LW = _add_bin(c, hw, hs, hq, hn, has_missing, LW, LS, LQ, LN, 1.0)
                                        subset[k2] = c
                                        k2 += 1
                                h, ml, ok = _evaluate_partition(P, TW, TS, TQ2, TN, LW, LS, LQ, LN, MW,
                                                                hw, hs, hq, hn, has_missing, min_leaf)
                                if ok and h > best_h:
                                    best_h = h
                                    best_f = f
                                    best_ml = ml
                                    _set_mask_from_bins(best_mask, subset, k2)
                        else:
                            # greedy forward selection of A
                            for t in range(mcat):
                                in_a[t] = False
                            _zero(LS, LQ, LN)
                            LW = 0.0
                            size_a = 0
                            cur_best = -np.inf
                            while size_a < mcat - 1:
                                round_h = -np.inf
                                round_c = -1
                                round_ml = False
                                for t in range(mcat):
                                    if in_a[t]:
                                        continue
                                    LW2 = _add_bin(cats[t], hw, hs, hq, hn, has_missing, LW, LS, LQ, LN, 1.0)
                                    h, ml, ok = _evaluate_partition(P, TW, TS, TQ2, TN, LW2, LS, LQ, LN, MW,
                                                                    hw, hs, hq, hn, has_missing, min_leaf)
                                    _add_bin(cats[t], hw, hs, hq, hn, has_missing, LW2, LS, LQ, LN, -1.0)
                                    if ok and h > round_h:
                                        round_h = h
                                        round_c = t
                                        round_ml = ml
                                if round_c < 0 or round_h <= cur_best:
                                    break
                                in_a[round_c] = True
                                size_a += 1
                                LW = _add_bin(cats[round_c], hw, hs, hq, hn, has_missing, LW, LS, LQ, LN, 1.0)
                                cur_best = round_h
                                if round_h > best_h:
                                    best_h = round_h
                                    best_f = f
                                    best_ml = round_ml
                                    k2 = 0
                                    for t in range(mcat):
                                        if in_a[t]:
                                            subset[k2] = cats[t]
                                            k2 += 1
                                    _set_mask_from_bins(best_mask, subset, k2)
                # reset the histogram weights of the touched codes
                for t in range(nt):
                    hw[touched[t]] = 0.0
                if n_eval >= max_features:
                    break

        if best_f < 0 or best_h <= 1e-12 * P:
            # leaf
            for i in range(start, end):
                leaf_of_row[rows[i]] = node
            continue

        # split: partition rows[start:end] so that the left rows come first
        feature[node] = best_f
        threshold[node] = best_thr
        missing_left[node] = best_ml
        gain[node] = best_h
        is_nom = nominal[best_f]
        if is_nom:
            for j in range(4):
                mask[node, j] = best_mask[j]
        i = start
        j = end - 1
        while i <= j:
            if _goes_left(X[best_f, rows[i]], is_nom, best_thr, mask[node], best_ml):
                i += 1
            else:
                tmp = rows[i]
                rows[i] = rows[j]
                rows[j] = tmp
                j -= 1
        mid = i
        if track_columns:
            LWc = _totals(rows, start, mid, Z, w, has_missing, LS, LQ, LN)
            RWc = TW - LWc
            for k in range(K):
                column_gain[best_f, k] += (_ss(TW, TS[k], TQ[k], TN[k]) - _ss(LWc, LS[k], LQ[k], LN[k])
                                           - _ss(RWc, TS[k] - LS[k], TQ[k] - LQ[k], TN[k] - LN[k]))
        lc = n_nodes
        rc = n_nodes + 1
        n_nodes += 2
        left[node] = lc
        right[node] = rc
        depth_arr[lc] = d + 1
        depth_arr[rc] = d + 1
        # push right first so the left subtree is grown first
        stack_node[sp] = rc
        stack_start[sp] = mid
        stack_end[sp] = end
        sp += 1
        stack_node[sp] = lc
        stack_start[sp] = start
        stack_end[sp] = mid
        sp += 1

    return (n_nodes, feature, threshold, missing_left, mask, left, right, weight, depth_arr, gain,
            leaf_of_row, column_gain)


@njit(cache=True, inline="always")
def _next_node(node, code, nominal_f, threshold, missing_left, mask, left, right):
    if code == MISSING:
        go_left = missing_left[node]
    elif nominal_f:
        go_left = (mask[node, code >> 6] >> np.uint64(code & 63)) & np.uint64(1) == np.uint64(1)
    else:
        go_left = code <= threshold[node]
    return left[node] if go_left else right[node]


@njit(cache=True)
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


@njit(cache=True)
def apply_tree_permuted(XR, rows, perm_rows, pf, feature, threshold, missing_left, mask, left, right, nominal):
    """Leaf reached by each row when feature ``pf`` takes the value of row ``perm_rows[i]`` instead."""
    out = np.empty(rows.shape[0], np.int32)
    for i in range(rows.shape[0]):
        r = rows[i]
        node = 0
        while feature[node] >= 0:
            f = feature[node]
            code = XR[perm_rows[i], f] if f == pf else XR[r, f]
            node = _next_node(node, code, nominal[f], threshold, missing_left, mask, left, right)
        out[i] = node
    return out


@njit(cache=True)
def rows_by_path_feature(XR, rows, feature, threshold, missing_left, mask, left, right, nominal, n_features):
    """For every feature, the positions (in ``rows``) of the rows whose path tests that feature.

    Permuting feature f can only change the leaf of these rows, so the permutation score re-routes them
    alone. Returns CSR arrays (indptr (D+1,), positions) and the unpermuted leaf of every row.
    """
    m = rows.shape[0]
    seen = np.full(n_features, -1, np.int64)
    counts = np.zeros(n_features + 1, np.int64)
    pair_f = np.empty(16 * m + 16, np.int64)
    pair_i = np.empty(16 * m + 16, np.int64)
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
                    pf2[:n_pairs] = pair_f
                    pi2[:n_pairs] = pair_i
                    pair_f = pf2
                    pair_i = pi2
                pair_f[n_pairs] = f
                pair_i[n_pairs] = i
                n_pairs += 1
                counts[f + 1] += 1
            node = _next_node(node, XR[r, f], nominal[f], threshold, missing_left, mask, left, right)
        leaves[i] = node
    indptr = np.cumsum(counts)
    fill = indptr[:-1].copy()
    positions = np.empty(n_pairs, np.int64)
    for p in range(n_pairs):
        f = pair_f[p]
        positions[fill[f]] = pair_i[p]
        fill[f] += 1
    return indptr, positions, leaves


@njit(cache=True)
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
