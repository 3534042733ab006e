"""Growing one PCT on label-sparse clustering columns: numba kernels, no Spark.

Algorithm sketch
----------------
The same tree as :func:`spark_fr.pct.grow.grow_tree` (same node loop, feature draws, tests, tie rules and
leaf rules), for complete clustering columns given row by row in CSR form (``indptr``, ``indices``,
``values``: :class:`spark_fr.tasks.sparse_columns.SparseColumns`), uncentred. With complete columns the
gain of a split of E into L and R is

    h = |S_L|^2 / W_L + |S_R|^2 / W_R - |S|^2 / W                                     (**)

(S: the weighted column sums of a side, W its weight), which does not change when a column is shifted, so
absent labels are zeros and cost nothing. Per node:

    S, W, Q = weighted sums over the node's rows, touching only their stored values; the labels with a
        stored value are the node's "present" labels (the only non-zero entries of S); P = Q - |S|^2 / W
    numeric f, best splitter: the node's rows bucketed by code (counting sort), then swept in code order;
        adding a row with value a = w_r v_rl to S_L[l] changes |S_L|^2 by a (2 S_L[l] + a) and |S - S_L|^2
        by a (a - 2 (S[l] - S_L[l])), so a threshold's gain costs O(stored values of the rows it moves).
        The missing-value block M goes left through |S_L + M|^2 = |S_L|^2 + 2 S_L.M + |M|^2, with S_L.M
        updated alongside.
    numeric f, extra trees: one random threshold; S_L summed over the rows below it.
    nominal f: a dense histogram over the node's present labels only, searched by the dense kernels.
    per-column gains (per-target Genie3): (**) per present label.
    ``--missing fractional``: a test is scored with (**) on the node's rows whose value is known (S minus
        the missing bucket's sums, W minus its weight); the rows are split as in the dense grower
        (:mod:`spark_fr.pct.node_rows`), and the node's gain is Q - |S|^2 / W of the node minus that of its
        weighted children.

Cost per feature and node: O(rows + stored values of the rows) instead of O(rows x columns), and scratch
space O(columns), never rows x columns. The sums are mathematically those of the dense grower; they are
rounded differently, so the two agree to rounding, not bit for bit (tests/test_grow_sparse.py).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .config import MISSING_FRACTIONAL, SPLITTER_RANDOM
from .grow import (MISSING, GrowResult, _best_subset, _clear_histogram, _column_gains, _draw_feature, _keep_better,
                   _make_leaf, _push_children, _random_threshold, _record_split, _split_rows, _tree_arrays,
                   leaf_weight_floor, node_capacity)
from .node_rows import free_start, new_members, node_rows, trimmed


# ---- node totals ---------------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _sparse_totals(nr, start, end, indptr, indices, values, TS, present, is_present, pos):
    """Weighted sums of the node rows ``[start, end)``: returns (W, Q, number of present labels).

    ``TS[l]`` is set for the present labels ``present[:n]`` (marked in ``is_present``; ``pos[l]`` is l's
    place in ``present``); other entries of TS are stale and never read. Q = sum of w * v^2.
    """
    W = 0.0
    Q = 0.0
    npres = 0
    for i in range(start, end):
        r = nr.rows[i]
        wr = nr.weights[i]
        W += wr
        for p in range(indptr[r], indptr[r + 1]):
            lab = indices[p]
            v = values[p]
            if not is_present[lab]:
                is_present[lab] = True
                pos[lab] = npres
                present[npres] = lab
                npres += 1
                TS[lab] = 0.0
            TS[lab] += wr * v
            Q += wr * v * v
    return W, Q, npres


@njit(cache=True, nogil=True)
def _sum_of_squares(TS, present, npres):
    t = 0.0
    for j in range(npres):
        s = TS[present[j]]
        t += s * s
    return t


@njit(cache=True, nogil=True)
def _clear_present(is_present, present, npres):
    for j in range(npres):
        is_present[present[j]] = False


# ---- rows by code ----------------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _bucket_rows(X, f, nr, start, end, hw, cnt, off, order, order_w, touched):
    """Counting sort of the node's rows by their code of feature f.

    Fills ``hw`` (weight per code; reset by :func:`spark_fr.pct.grow._clear_histogram`), ``cnt`` and ``off``
    (rows per code and their first position in ``order``, their weights in ``order_w``) and the present codes
    ``touched[:nt]`` in increasing order (the missing code last). Returns (nt, n_known, MW) as the dense
    histogram does.
    """
    nt = 0
    for i in range(start, end):
        b = X[f, nr.rows[i]]
        if cnt[b] == 0:
            touched[nt] = b
            nt += 1
            hw[b] = 0.0
        cnt[b] += 1
        hw[b] += nr.weights[i]
    if nt > 24:
        nt = 0
        for b in range(256):
            if cnt[b] != 0:
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
    o = 0
    for t in range(nt):
        b = touched[t]
        off[b] = o
        o += cnt[b]
    for i in range(start, end):
        r = nr.rows[i]
        b = X[f, r]
        order[off[b]] = r
        order_w[off[b]] = nr.weights[i]
        off[b] += 1
    for t in range(nt):  # back to the first position of each code
        b = touched[t]
        off[b] -= cnt[b]
    if touched[nt - 1] == MISSING:
        return nt, nt - 1, hw[MISSING]
    return nt, nt, 0.0


@njit(cache=True, nogil=True, inline="always")
def _clear_buckets(cnt, touched, nt):
    for t in range(nt):
        cnt[touched[t]] = 0


# ---- the gain of a partition (**) ------------------------------------------------------------------------

@njit(cache=True, nogil=True, inline="always")
def _two_sided(sl2, sr2, cross, crossT, sM2, LW, TW, MW, base, min_leaf):
    """Best of (missing right, missing left) for a left part of weight LW without the missing block.

    sl2 = |S_L|^2, sr2 = |S - S_L|^2, cross = S_L.M, crossT = S.M, sM2 = |M|^2. Returns (h, missing_left),
    h = -inf when neither is valid; as in the dense grower, a node without missing values sends them to
    the heavier child.
    """
    best_h = -np.inf
    best_ml = False
    RW = TW - LW
    if LW >= min_leaf and RW >= min_leaf and LW > 0.0 and RW > 0.0:
        best_h = sl2 / LW + sr2 / RW - base
        best_ml = MW == 0.0 and LW > RW
    if MW > 0.0:
        LW2 = LW + MW
        RW2 = TW - LW2
        if LW2 >= min_leaf and RW2 >= min_leaf and RW2 > 0.0:
            h = (sl2 + 2.0 * cross + sM2) / LW2 + (sr2 - 2.0 * (crossT - cross) + sM2) / RW2 - base
            if h > best_h:
                best_h = h
                best_ml = True
    return best_h, best_ml


@njit(cache=True, nogil=True, inline="always")
def _add_bucket(order, order_w, o, count, indptr, indices, values, S):
    """Add the weighted values of the rows ``order[o:o + count]`` (one code's bucket) to the sums S."""
    for i in range(o, o + count):
        r = order[i]
        wr = order_w[i]
        for p in range(indptr[r], indptr[r + 1]):
            S[indices[p]] += wr * values[p]


@njit(cache=True, nogil=True)
def _missing_block(order, order_w, off, cnt, indptr, indices, values, TS, MS, present, npres):
    """Sums M of the rows with a missing code (bucket MISSING of ``order``) into MS; returns (|M|^2, S.M)."""
    for j in range(npres):
        MS[present[j]] = 0.0
    _add_bucket(order, order_w, off[MISSING], cnt[MISSING], indptr, indices, values, MS)
    sM2 = 0.0
    crossT = 0.0
    for j in range(npres):
        lab = present[j]
        sM2 += MS[lab] * MS[lab]
        crossT += TS[lab] * MS[lab]
    return sM2, crossT


# ---- numeric features ------------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _sweep_numeric(order, order_w, off, cnt, touched, n_known, hw, indptr, indices, values, TS, sT2, TW, MW,
                   min_leaf, LS, MS, present, npres):
    """Best threshold "code <= t" of a numeric feature (best splitter): (h, t, missing_left), h = -inf if
    no threshold is valid. The rows are added to the left side in code order, updating (**) incrementally."""
    for j in range(npres):
        LS[present[j]] = 0.0
    sM2 = 0.0
    crossT = 0.0
    if MW > 0.0:
        sM2, crossT = _missing_block(order, order_w, off, cnt, indptr, indices, values, TS, MS, present, npres)
    base = sT2 / TW
    sl2 = 0.0
    sr2 = sT2
    cross = 0.0
    LW = 0.0
    best_h = -np.inf
    best_b = -1
    best_ml = False
    for t in range(n_known):
        b = touched[t]
        o = off[b]
        for i in range(o, o + cnt[b]):
            r = order[i]
            wr = order_w[i]
            for p in range(indptr[r], indptr[r + 1]):
                lab = indices[p]
                a = wr * values[p]
                old = LS[lab]
                sl2 += a * (2.0 * old + a)
                sr2 += a * (a - 2.0 * (TS[lab] - old))
                if MW > 0.0:
                    cross += a * MS[lab]
                LS[lab] = old + a
        LW += hw[b]
        h, ml = _two_sided(sl2, sr2, cross, crossT, sM2, LW, TW, MW, base, min_leaf)
        if h > best_h:
            best_h = h
            best_b = b
            best_ml = ml
    return best_h, best_b, best_ml


@njit(cache=True, nogil=True)
def _random_numeric(state, f, lower, upper, order, order_w, off, cnt, touched, n_known, hw, indptr, indices,
                    values, TS, sT2, TW, MW, min_leaf, LS, MS, present, npres):
    """The extra-trees test of a numeric feature (threshold drawn as in the dense grower):
    (h, threshold code, missing_left), h = -inf if invalid."""
    t_bin = _random_threshold(state, f, touched, n_known, lower, upper)
    for j in range(npres):
        LS[present[j]] = 0.0
    sM2 = 0.0
    crossT = 0.0
    if MW > 0.0:
        sM2, crossT = _missing_block(order, order_w, off, cnt, indptr, indices, values, TS, MS, present, npres)
    LW = 0.0
    for t in range(n_known):
        b = touched[t]
        if b > t_bin:
            break
        LW += hw[b]
        _add_bucket(order, order_w, off[b], cnt[b], indptr, indices, values, LS)
    sl2 = 0.0
    sr2 = 0.0
    cross = 0.0
    for j in range(npres):
        lab = present[j]
        a = LS[lab]
        c = TS[lab] - a
        sl2 += a * a
        sr2 += c * c
        if MW > 0.0:
            cross += a * MS[lab]
    h, ml = _two_sided(sl2, sr2, cross, crossT, sM2, LW, TW, MW, sT2 / TW, min_leaf)
    return h, t_bin, ml


# ---- nominal features: a dense histogram over the node's present labels ----------------------------------

@njit(cache=True, nogil=True)
def _compact_histogram(order, order_w, off, cnt, touched, nt, indptr, indices, values, pos, hs):
    """``hs[b, pos[l]]``: the weighted sum of label l over the node's rows with code b (present codes only)."""
    P = hs.shape[1]
    for t in range(nt):
        b = touched[t]
        for j in range(P):
            hs[b, j] = 0.0
        o = off[b]
        for i in range(o, o + cnt[b]):
            r = order[i]
            wr = order_w[i]
            for p in range(indptr[r], indptr[r + 1]):
                hs[b, pos[indices[p]]] += wr * values[p]


# ---- per-column reductions (per-target Genie3) -----------------------------------------------------------

@njit(cache=True, nogil=True)
def _sparse_column_gain(column_gain, f, nr, start, mid, indptr, indices, values, TW, TS, LS, present, npres):
    """Per-column reductions (**) of the split of the node at ``mid``, added to ``column_gain[f]``."""
    for j in range(npres):
        LS[present[j]] = 0.0
    LW = 0.0
    for i in range(start, mid):
        r = nr.rows[i]
        wr = nr.weights[i]
        LW += wr
        for p in range(indptr[r], indptr[r + 1]):
            LS[indices[p]] += wr * values[p]
    RW = TW - LW
    if LW <= 0.0 or RW <= 0.0:
        return
    for j in range(npres):
        lab = present[j]
        s = TS[lab]
        a = LS[lab]
        c = s - a
        column_gain[f, lab] += a * a / LW + c * c / RW - s * s / TW


# ---- fractional splits (--missing fractional) ------------------------------------------------------------

@njit(cache=True, nogil=True)
def _known_sums(order, order_w, off, cnt, indptr, indices, values, TS, MS, KS, present, npres):
    """The sums KS of the node's rows whose value of the feature is known (TS minus the missing bucket's
    sums, MS), over the present labels; returns |KS|^2."""
    for j in range(npres):
        MS[present[j]] = 0.0
    _add_bucket(order, order_w, off[MISSING], cnt[MISSING], indptr, indices, values, MS)
    s2 = 0.0
    for j in range(npres):
        lab = present[j]
        a = TS[lab] - MS[lab]
        KS[lab] = a
        s2 += a * a
    return s2


@njit(cache=True, nogil=True)
def _known_compact(TSc, hs_c, KSc):
    """:func:`_known_sums` for the compact histogram of a nominal feature: KSc = TSc - hs_c[MISSING]."""
    for j in range(TSc.shape[0]):
        KSc[j] = TSc[j] - hs_c[MISSING, j]


@njit(cache=True, nogil=True)
def _side_sums(nr, start, end, indptr, indices, values, S, present, npres):
    """Weighted sums S (present labels) of the pairs ``[start, end)``: returns (W, Q)."""
    for j in range(npres):
        S[present[j]] = 0.0
    W = 0.0
    Q = 0.0
    for i in range(start, end):
        r = nr.rows[i]
        wr = nr.weights[i]
        W += wr
        for p in range(indptr[r], indptr[r + 1]):
            a = wr * values[p]
            S[indices[p]] += a
            Q += a * values[p]
    return W, Q


@njit(cache=True, nogil=True)
def _sparse_children_reduction(column_gain, f, track_columns, nr, ls, le, rs, re, indptr, indices, values, TW, P,
                               TS, LS, RS, present, npres):
    """P - P_L - P_R over the weighted rows of the node and of its children (a fractional split, the missing
    rows in both with their shares), P_side = Q - |S|^2 / W; the per-label reductions (**) are added to
    ``column_gain[f]`` when tracked."""
    LW, LQ = _side_sums(nr, ls, le, indptr, indices, values, LS, present, npres)
    RW, RQ = _side_sums(nr, rs, re, indptr, indices, values, RS, present, npres)
    sl2 = 0.0
    sr2 = 0.0
    for j in range(npres):
        lab = present[j]
        a = LS[lab]
        c = RS[lab]
        sl2 += a * a
        sr2 += c * c
        if track_columns:
            s = TS[lab]
            column_gain[f, lab] += a * a / LW + c * c / RW - s * s / TW
    PL = max(LQ - sl2 / LW, 0.0)
    PR = max(RQ - sr2 / RW, 0.0)
    return P - PL - PR


# ---- the tree ------------------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def grow_tree_sparse(codes, indptr, indices, values, K, w, rows, config):
    """Grow one PCT on sparse, complete clustering columns: :func:`spark_fr.pct.grow.grow_tree` with the
    clustering matrix given as CSR arrays (``indptr`` (n + 1,), ``indices``, ``values``) of K columns."""
    X, nominal, lower, upper = codes
    min_leaf, max_depth, splitter = config.min_leaf, config.max_depth, config.splitter
    track_columns, resample_constant = config.track_columns, config.resample_constant
    D, n = X.shape
    m = rows.shape[0]
    max_features = config.max_features if config.max_features > 0 else D
    fractional = config.missing == MISSING_FRACTIONAL

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
    TS, LS, MS, KS = np.zeros(K), np.zeros(K), np.zeros(K), np.zeros(K)
    is_present = np.zeros(K, np.bool_)
    present = np.zeros(K, np.int64)
    pos = np.zeros(K, np.int64)
    hw = np.zeros(256)
    cnt = np.zeros(256, np.int64)
    off = np.zeros(256, np.int64)
    order = np.zeros(max(m, 1), np.int64)
    order_w = np.zeros(max(m, 1), np.float64)
    touched = np.zeros(256, np.int64)
    in_a = np.zeros(256, np.bool_)
    best_mask = np.zeros(4, np.uint64)
    cand_mask = np.zeros(4, np.uint64)
    unused = np.zeros((1, 1))
    stack = np.zeros((cap, 3), np.int64)
    stack[0, 2] = m
    sp = 1
    n_nodes = 1
    root_impurity = 0.0

    while sp > 0:
        sp -= 1
        node, start, end = stack[sp, 0], stack[sp, 1], stack[sp, 2]
        TW, Q, npres = _sparse_totals(nr, start, end, indptr, indices, values, TS, present, is_present, pos)
        sT2 = _sum_of_squares(TS, present, npres)
        P = Q - sT2 / TW if TW > 0.0 else 0.0
        if P < 0.0:
            P = 0.0
        weight[node] = TW
        if node == 0:
            root_impurity = P / TW if TW > 0.0 else 0.0
        best_h, best_f, best_thr, best_ml = 0.0, -1, 0, False
        can_split = (TW >= 2.0 * min_leaf and (max_depth < 0 or depth[node] < max_depth)
                     and P > 1e-13 * TW * root_impurity and P > 0.0)
        if can_split:
            # the node's totals over its present labels, for the dense nominal search
            TSc = np.empty(npres)
            KSc = np.empty(npres if fractional else 0)
            for j in range(npres):
                TSc[j] = TS[present[j]]
            hs_c = np.zeros((0, 0))
            LSc, LQc, LNc = np.zeros(0), np.zeros(0), np.zeros(0)
            n_eval = 0
            for visited in range(D):
                f = _draw_feature(state, feats, visited)
                nt, n_known, MW = _bucket_rows(X, f, nr, start, end, hw, cnt, off, order, order_w, touched)
                varies = n_known >= 2 if fractional else nt >= 2
                if varies or not resample_constant:
                    n_eval += 1
                if varies:
                    # the sums a test of f is scored against: the node's, or (fractional) its known rows'
                    known = fractional and MW > 0.0
                    cW, cT2, cS, cMW = TW, sT2, TS, MW
                    if known:
                        cT2 = _known_sums(order, order_w, off, cnt, indptr, indices, values, TS, MS, KS, present,
                                          npres)
                        cW, cS, cMW = TW - MW, KS, 0.0
                    if nominal[f]:
                        if hs_c.shape[0] == 0:
                            hs_c = np.zeros((256, npres))
                            LSc, LQc, LNc = np.zeros(npres), np.zeros(npres), np.zeros(npres)
                        _compact_histogram(order, order_w, off, cnt, touched, nt, indptr, indices, values, pos,
                                           hs_c)
                        cSc = TSc
                        if known:
                            _known_compact(TSc, hs_c, KSc)
                            cSc = KSc
                        h, ml = _best_subset(splitter, state, touched, n_known, in_a, hw, hs_c, unused, unused,
                                             False, P, cT2, cW, cSc, cSc, cSc, cMW, min_leaf, LSc, LQc, LNc,
                                             cand_mask)
                        thr = -1
                    elif splitter == SPLITTER_RANDOM:
                        h, thr, ml = _random_numeric(state, f, lower, upper, order, order_w, off, cnt, touched,
                                                     n_known, hw, indptr, indices, values, cS, cT2, cW, cMW,
                                                     min_leaf, LS, MS, present, npres)
                    else:
                        h, thr, ml = _sweep_numeric(order, order_w, off, cnt, touched, n_known, hw, indptr, indices,
                                                    values, cS, cT2, cW, cMW, min_leaf, LS, MS, present, npres)
                    best_h, best_f, best_thr, best_ml = _keep_better(best_h, best_f, best_thr, best_ml, best_mask,
                                                                     h, f, thr, ml, nominal[f], cand_mask)
                _clear_histogram(hw, touched, nt)
                _clear_buckets(cnt, touched, nt)
                if n_eval >= max_features:
                    break
        if best_f < 0 or best_h <= 1e-12 * P:
            members, n_members = _make_leaf(node, nr, start, end, fractional, leaf_of_row, members, n_members)
            _clear_present(is_present, present, npres)
            continue
        _record_split(node, best_f, best_thr, best_ml and not fractional, best_h, nominal[best_f], best_mask,
                      feature, threshold, missing_left, gain, mask)
        top = free_start(end, stack, sp) if fractional else end
        nr, n_missing, ls, le, rs, re = _split_rows(X, best_f, nominal[best_f], node, threshold, missing_left, mask,
                                                    nr, start, end, fractional, top, left_share)
        if n_missing > 0:
            gain[node] = _sparse_children_reduction(column_gain, best_f, track_columns, nr, ls, le, rs, re, indptr,
                                                    indices, values, TW, P, TS, LS, MS, present, npres)
        elif track_columns:
            _sparse_column_gain(column_gain, best_f, nr, ls, le, indptr, indices, values, TW, TS, LS, present, npres)
        _clear_present(is_present, present, npres)
        n_nodes, sp = _push_children(node, ls, le, rs, re, n_nodes, left, right, depth, stack, sp)

    return GrowResult(n_nodes, nodes, leaf_of_row, column_gain, trimmed(members, n_members))
