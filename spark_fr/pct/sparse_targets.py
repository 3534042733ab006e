"""The label-sparse target backend of the grower: complete clustering columns in CSR form; numba, no Spark.

Sketch
------
For complete clustering columns given row by row in CSR form (:data:`SparseTargets`: ``indptr``,
``indices``, ``values``, from :class:`spark_fr.tasks.sparse_columns.SparseColumns`), uncentred. With complete
columns the gain of a split of E into L and R is

    h = |S_L|^2 / W_L + |S_R|^2 / W_R - |S|^2 / W                                     (**)

(S: the weighted column sums of a side, W its weight), which does not change when a column is shifted, so
absent labels are zeros and cost nothing. The backend's operations, as :mod:`spark_fr.pct.targets` names them:

    node_totals      S, W, Q = weighted sums over the node's rows, touching only their stored values; the labels
                     with a stored value are the node's "present" labels (the only non-zero entries of S);
                     P = Q - |S|^2 / W
    histogram        the node's rows bucketed by code (counting sort), the codes ordered as the dense
                     histogram's (spark_fr.pct.histogram.order_codes)
    best_test        numeric f, best splitter: the buckets swept in code order; adding a row with value
                     a = w_r v_rl to S_L[l] changes |S_L|^2 by a (2 S_L[l] + a) and |S - S_L|^2 by
                     a (a - 2 (S[l] - S_L[l])), so a threshold's gain costs O(stored values of the rows it moves).
                     The missing-value block M goes left through |S_L + M|^2 = |S_L|^2 + 2 S_L.M + |M|^2, with
                     S_L.M updated alongside. Extra trees: one random threshold; S_L summed over the rows below
                     it. Nominal f: a dense histogram over the node's present labels only, searched by
                     spark_fr.pct.subsets. ``--missing fractional``: a test is scored with (**) on the node's
                     rows whose value is known (S minus the missing bucket's sums, W minus its weight)
    add_column_gain  (**) per present label (per-target Genie3)
    children_gain    Q - |S|^2 / W of the node minus that of its weighted children (a fractional split)
    end_node         forget the node's present labels

Cost per feature and node: O(rows + stored values of the rows) instead of O(rows x columns), and scratch space
O(columns), never rows x columns. The sums are mathematically those of the dense backend; they are rounded
differently, so the two agree to rounding, not bit for bit (tests/pct/test_grow_sparse.py).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from .config import MISSING_FRACTIONAL, SPLITTER_RANDOM
from .histogram import Histogram, PresentCodes, clear_weights, feature_varies, order_codes
from .impurity import NodeTotals, Sums, Totals
from .jit import BORROWING, INLINE, KERNEL
from .node_rows import MISSING, code_at
from .numeric import better, random_threshold
from .subsets import best_subset

#: complete clustering columns in CSR form: row r's values are ``values[indptr[r]:indptr[r + 1]]`` in the
#: columns ``indices[...]`` (increasing); ``n_columns`` = K
SparseTargets = namedtuple("SparseTargets", ["indptr", "indices", "values", "n_columns"])
#: the node's present labels ``labels[:count[0]]``, marked in ``is_present``; ``pos[l]`` is l's place in them
LabelSet = namedtuple("LabelSet", ["labels", "is_present", "pos", "count"])
#: the node's rows by code of a feature: per code b, its weight ``w[b]``, ``cnt[b]`` rows at ``order[off[b]:]``
#: (their weights in ``order_w``), and the ``touched`` codes
Buckets = namedtuple("Buckets", ["w", "cnt", "off", "order", "order_w", "touched"])
#: nominal searches' scratch over the node's present labels: a (256 x labels) histogram ``s``, the node's sums
#: ``T`` and its known rows' ``K`` by present label, the left side's ``L``, ``Q``, ``N``, an ``unused`` 1 x 1 and
#: ``no_codes`` (empty: the :data:`~spark_fr.pct.histogram.Histogram` the nominal search reads gathers no codes)
Compact = namedtuple("Compact", ["s", "T", "K", "L", "Q", "N", "unused", "no_codes"])
#: the backend's state: the ``targets``, label sums (K,) of the node ``T``, a left side ``L``, the missing block
#: or a right side ``M``, the known rows ``K``; the ``present`` labels, the ``buckets``, the ``compact`` scratch
SparseState = namedtuple("SparseState", ["targets", "T", "L", "M", "K", "present", "buckets", "compact"])
#: the constants of (**) while a feature's thresholds are swept: the weight ``W`` scored against, the missing
#: block's weight ``MW``, ``base`` = |S|^2 / W, ``sM2`` = |M|^2 and ``crossT`` = S.M
SweepTotals = namedtuple("SweepTotals", ["W", "MW", "base", "sM2", "crossT"])


@njit(**KERNEL)
def new_sparse_state(targets, rows, nominal, config):
    """The state of a tree grown on ``rows`` of ``targets`` (nominal features: the compact scratch too;
    ``config``: unused)."""
    K = targets.n_columns
    m = rows.shape[0]
    present = LabelSet(np.zeros(K, np.int64), np.zeros(K, np.bool_), np.zeros(K, np.int64), np.zeros(1, np.int64))
    buckets = Buckets(np.zeros(256), np.zeros(256, np.int64), np.zeros(256, np.int64), np.zeros(max(m, 1), np.int64),
                      np.zeros(max(m, 1), np.float64), np.zeros(256, np.int64))
    Kc = K if nominal.any() else 0
    compact = Compact(np.zeros(256 * Kc), np.zeros(Kc), np.zeros(Kc), np.zeros(Kc), np.zeros(Kc), np.zeros(Kc),
                      np.zeros((1, 1)), np.zeros(0, np.uint8))
    return SparseState(targets, np.zeros(K), np.zeros(K), np.zeros(K), np.zeros(K), present, buckets, compact)


# ---- node totals ---------------------------------------------------------------------------------------

@njit(**INLINE)
def _row_sums(tb, nr, start, end, S, mark):
    """Weighted sums S of the stored values of the pairs ``[start, end)``: returns (W, Q = sum of w v^2, the
    number of present labels).

    ``mark``: the node's own rows: the labels met are the node's present labels (marked, S zeroed when first
    met; other entries of S are stale and never read). Otherwise S is zeroed over the node's present labels.
    """
    indptr, indices, values = tb.targets.indptr, tb.targets.indices, tb.targets.values
    present, is_present, pos = tb.present.labels, tb.present.is_present, tb.present.pos
    npres = 0 if mark else tb.present.count[0]
    if not mark:
        for j in range(npres):
            S[present[j]] = 0.0
    W = 0.0
    Q = 0.0
    for i in range(start, end):
        r = nr.rows[i]
        wr = nr.weights[i]
        W += wr
        for p in range(indptr[r], indptr[r + 1]):
            lab = indices[p]
            if mark and not is_present[lab]:
                is_present[lab] = True
                pos[lab] = npres
                present[npres] = lab
                npres += 1
                S[lab] = 0.0
            a = wr * values[p]
            S[lab] += a
            Q += a * values[p]
    return W, Q, npres


@njit(**BORROWING)
def sparse_node_totals(tb, nr, start, end):
    """The :data:`~spark_fr.pct.impurity.NodeTotals` of the node rows ``[start, end)``; its sums in ``tb.T``
    (and by present label in ``tb.compact.T``), its present labels in ``tb.present``."""
    TW, Q, npres = _row_sums(tb, nr, start, end, tb.T, True)
    tb.present.count[0] = npres
    present = tb.present.labels
    sT2 = 0.0
    for j in range(npres):
        s = tb.T[present[j]]
        sT2 += s * s
    P = Q - sT2 / TW if TW > 0.0 else 0.0
    if P < 0.0:
        P = 0.0
    if tb.compact.T.shape[0] > 0:
        for j in range(npres):
            tb.compact.T[j] = tb.T[present[j]]
    return NodeTotals(TW, P, sT2)


@njit(**KERNEL)
def sparse_moved_targets(tb):
    """None: the label-sparse targets stay where they are (the node rows keep no targets)."""
    return None


@njit(**BORROWING)
def sparse_n_columns(tb):
    """K, the number of clustering columns."""
    return tb.targets.n_columns


@njit(**BORROWING)
def sparse_end_node(tb):
    """Forget the node's present labels."""
    for j in range(tb.present.count[0]):
        tb.present.is_present[tb.present.labels[j]] = False


# ---- rows by code ----------------------------------------------------------------------------------------

@njit(**BORROWING)
def sparse_histogram(tb, X, f, nr, start, end):
    """Counting sort of the node's rows by their code of feature f into ``tb.buckets``: the weight per code
    (reset by :func:`sparse_clear`), the rows per code and their first position in ``order`` (their weights
    in ``order_w``). Returns the :data:`~spark_fr.pct.histogram.PresentCodes`, as the dense histogram does."""
    hw, cnt, off, order, order_w, touched = tb.buckets
    nt = 0
    for i in range(start, end):
        b = code_at(X, f, nr, i)
        if cnt[b] == 0:
            touched[nt] = b
            nt += 1
            hw[b] = 0.0
        cnt[b] += 1
        hw[b] += nr.weights[i]
    nt, n_known = order_codes(touched, nt, cnt)
    o = 0
    for t in range(nt):
        b = touched[t]
        off[b] = o
        o += cnt[b]
    for i in range(start, end):
        r = nr.rows[i]
        b = code_at(X, f, nr, i)
        order[off[b]] = r
        order_w[off[b]] = nr.weights[i]
        off[b] += 1
    for t in range(nt):  # back to the first position of each code
        b = touched[t]
        off[b] -= cnt[b]
    return PresentCodes(nt, n_known, hw[MISSING] if n_known < nt else 0.0)


@njit(**BORROWING)
def sparse_clear(tb, nt):
    """Reset the buckets' weights and counts of the touched codes."""
    bk = tb.buckets
    clear_weights(bk.w, bk.touched, nt)
    for t in range(nt):
        bk.cnt[bk.touched[t]] = 0


# ---- the gain of a partition (**) ------------------------------------------------------------------------

@njit(**INLINE)
def _two_sided(sl2, sr2, cross, LW, st, min_leaf):
    """Best of (missing right, missing left) for a left part of weight LW without the missing block.

    sl2 = |S_L|^2, sr2 = |S - S_L|^2, cross = S_L.M; ``st`` the feature's :data:`SweepTotals`. Returns
    (h, missing_left), h = -inf when neither is valid; as in the dense backend, a node without missing values
    sends them to the heavier child.
    """
    best_h = -np.inf
    best_ml = False
    RW = st.W - LW
    if LW >= min_leaf and RW >= min_leaf and LW > 0.0 and RW > 0.0:
        best_h = sl2 / LW + sr2 / RW - st.base
        best_ml = st.MW == 0.0 and LW > RW
    if st.MW > 0.0:
        LW2 = LW + st.MW
        RW2 = st.W - LW2
        if LW2 >= min_leaf and RW2 >= min_leaf and RW2 > 0.0:
            h = (sl2 + 2.0 * cross + st.sM2) / LW2 + (sr2 - 2.0 * (st.crossT - cross) + st.sM2) / RW2 - st.base
            if h > best_h:
                best_h = h
                best_ml = True
    return best_h, best_ml


@njit(**INLINE)
def _add_bucket(tb, o, count, S):
    """Add the weighted values of the rows ``order[o:o + count]`` (one code's bucket) to the sums S."""
    indptr, indices, values = tb.targets.indptr, tb.targets.indices, tb.targets.values
    for i in range(o, o + count):
        r = tb.buckets.order[i]
        wr = tb.buckets.order_w[i]
        for p in range(indptr[r], indptr[r + 1]):
            S[indices[p]] += wr * values[p]


@njit(**BORROWING)
def _missing_block(tb, TS):
    """Sums M of the rows with a missing code (bucket MISSING) into ``tb.M``; returns (|M|^2, S.M) for the
    sums TS."""
    MS, present, npres = tb.M, tb.present.labels, tb.present.count[0]
    for j in range(npres):
        MS[present[j]] = 0.0
    _add_bucket(tb, tb.buckets.off[MISSING], tb.buckets.cnt[MISSING], MS)
    sM2 = 0.0
    crossT = 0.0
    for j in range(npres):
        lab = present[j]
        sM2 += MS[lab] * MS[lab]
        crossT += TS[lab] * MS[lab]
    return sM2, crossT


@njit(**BORROWING)
def _sweep_totals(tb, parent):
    """The :data:`SweepTotals` of a feature scored against ``parent``; zeroes the left side's sums."""
    present, npres = tb.present.labels, tb.present.count[0]
    for j in range(npres):
        tb.L[present[j]] = 0.0
    sM2 = 0.0
    crossT = 0.0
    if parent.MW > 0.0:
        sM2, crossT = _missing_block(tb, parent.sums)
    return SweepTotals(parent.W, parent.MW, parent.sT2 / parent.W, sM2, crossT)


# ---- numeric features ------------------------------------------------------------------------------------

@njit(**BORROWING)
def _sweep_numeric(tb, pc, parent, min_leaf):
    """Best threshold "code <= t" of a numeric feature (best splitter): (h, t, missing_left), h = -inf if
    no threshold is valid. The rows are added to the left side in code order, updating (**) incrementally."""
    indptr, indices, values = tb.targets.indptr, tb.targets.indices, tb.targets.values
    hw, cnt, off, order, order_w, touched = tb.buckets
    TS, LS, MS, MW = parent.sums, tb.L, tb.M, parent.MW
    st = _sweep_totals(tb, parent)
    sl2 = 0.0
    sr2 = parent.sT2
    cross = 0.0
    LW = 0.0
    best = (-np.inf, -1, False)
    for t in range(pc.n_known):
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
        h, ml = _two_sided(sl2, sr2, cross, LW, st, min_leaf)
        best = better(best, h, b, ml)
    return best


@njit(**BORROWING)
def _at_threshold(tb, t_bin, pc, parent, min_leaf):
    """The test "code <= t_bin" of a numeric feature (the extra-trees one): (h, missing_left), h = -inf if
    invalid."""
    hw, cnt, off, touched = tb.buckets.w, tb.buckets.cnt, tb.buckets.off, tb.buckets.touched
    TS, LS, MS, MW = parent.sums, tb.L, tb.M, parent.MW
    present, npres = tb.present.labels, tb.present.count[0]
    st = _sweep_totals(tb, parent)
    LW = 0.0
    for t in range(pc.n_known):
        b = touched[t]
        if b > t_bin:
            break
        LW += hw[b]
        _add_bucket(tb, off[b], cnt[b], LS)
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
    return _two_sided(sl2, sr2, cross, LW, st, min_leaf)


# ---- nominal features: a dense histogram over the node's present labels ----------------------------------

@njit(**BORROWING)
def _compact_histogram(tb, nt, hs):
    """``hs[b, pos[l]]``: the weighted sum of label l over the node's rows with code b (present codes only)."""
    indptr, indices, values = tb.targets.indptr, tb.targets.indices, tb.targets.values
    cnt, off, order, order_w, touched = (tb.buckets.cnt, tb.buckets.off, tb.buckets.order, tb.buckets.order_w,
                                         tb.buckets.touched)
    pos = tb.present.pos
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


@njit(**BORROWING)
def _compact_subset(tb, search, pc, parent, known, config):
    """The nominal test of a feature: its histogram over the node's present labels, searched by
    :func:`spark_fr.pct.subsets.best_subset` against ``parent`` (``known``: the node's known rows, their sums
    the node's minus the missing code's cell). Returns (h, -1, missing_left)."""
    npres = tb.present.count[0]
    c = tb.compact
    hs = c.s[:256 * npres].reshape((256, npres))
    _compact_histogram(tb, pc.nt, hs)
    S = c.T[:npres]
    if known:
        S = c.K[:npres]
        for j in range(npres):
            S[j] = c.T[j] - hs[MISSING, j]
    hist = Histogram(tb.buckets.w, hs, c.unused, c.unused, tb.buckets.touched, c.no_codes)
    compact = Totals(parent.W, parent.P, parent.sT2, Sums(S, S, S), parent.MW)
    left = Sums(c.L[:npres], c.Q[:npres], c.N[:npres])
    h, ml = best_subset(config.splitter, search, hist, pc, compact, False, config.min_leaf, left)
    return h, -1, ml


# ---- one feature's test ------------------------------------------------------------------------------------

@njit(**BORROWING)
def _known_sums(tb):
    """The sums ``tb.K`` of the node's rows whose value of the feature is known (``tb.T`` minus the missing
    bucket's sums, put in ``tb.M``), over the present labels; returns |K|^2."""
    TS, MS, KS, present, npres = tb.T, tb.M, tb.K, tb.present.labels, tb.present.count[0]
    for j in range(npres):
        MS[present[j]] = 0.0
    _add_bucket(tb, tb.buckets.off[MISSING], tb.buckets.cnt[MISSING], MS)
    s2 = 0.0
    for j in range(npres):
        lab = present[j]
        a = TS[lab] - MS[lab]
        KS[lab] = a
        s2 += a * a
    return s2


@njit(**BORROWING)
def sparse_best_test(tb, search, codes, f, pc, node, config):
    """The best test of feature f (present codes ``pc``, its rows in ``tb.buckets``) at a node of totals
    ``node``: (h, threshold code or -1 for a nominal test, missing_left); h = -inf if none is valid; a
    nominal test's mask is written into ``search.mask``."""
    known = config.missing == MISSING_FRACTIONAL and pc.MW > 0.0
    parent = Totals(node.W, node.P, node.sT2, tb.T, pc.MW)
    if known:
        parent = Totals(node.W - pc.MW, node.P, _known_sums(tb), tb.K, 0.0)
    if codes.nominal[f]:
        return _compact_subset(tb, search, pc, parent, known, config)
    if config.splitter == SPLITTER_RANDOM:
        t_bin = random_threshold(search.state, f, tb.buckets.touched, pc.n_known, codes.lower, codes.upper)
        h, ml = _at_threshold(tb, t_bin, pc, parent, config.min_leaf)
        return h, t_bin, ml
    return _sweep_numeric(tb, pc, parent, config.min_leaf)


# ---- per-column reductions (per-target Genie3) and fractional splits --------------------------------------

@njit(**BORROWING)
def sparse_column_gain(tb, gains, f, nr, children, node):
    """Per-column reductions (**) of a learned split of the node (totals ``node``) into ``children``, added to
    ``gains[f]``."""
    TS, LS, present, npres = tb.T, tb.L, tb.present.labels, tb.present.count[0]
    TW = node.W
    LW, _, _ = _row_sums(tb, nr, children.left_start, children.left_end, LS, False)
    RW = TW - LW
    if LW <= 0.0 or RW <= 0.0:
        return
    for j in range(npres):
        lab = present[j]
        s = TS[lab]
        a = LS[lab]
        c = s - a
        gains[f, lab] += a * a / LW + c * c / RW - s * s / TW


@njit(**BORROWING)
def sparse_children_gain(tb, gains, f, track, nr, children, node):
    """P - P_L - P_R over the weighted rows of the node (totals ``node``) and of its ``children`` (a fractional
    split, the missing rows in both with their shares), P_side = Q - |S|^2 / W; the per-label reductions (**)
    are added to ``gains[f]`` when ``track``."""
    TS, LS, RS, present, npres = tb.T, tb.L, tb.M, tb.present.labels, tb.present.count[0]
    TW = node.W
    LW, LQ, _ = _row_sums(tb, nr, children.left_start, children.left_end, LS, False)
    RW, RQ, _ = _row_sums(tb, nr, children.right_start, children.right_end, RS, False)
    sl2 = 0.0
    sr2 = 0.0
    for j in range(npres):
        lab = present[j]
        a = LS[lab]
        c = RS[lab]
        sl2 += a * a
        sr2 += c * c
        if track:
            s = TS[lab]
            gains[f, lab] += a * a / LW + c * c / RW - s * s / TW
    PL = max(LQ - sl2 / LW, 0.0)
    PR = max(RQ - sr2 / RW, 0.0)
    return node.P - PL - PR


@njit(**BORROWING)
def sparse_search_feature(tb, search, codes, f, nr, span, node, config):
    """Feature f at the node rows ``span`` = (start, end) (totals ``node``): its present codes (the rows
    bucketed by code, :func:`sparse_histogram`) and, if it varies, its best test (:func:`sparse_best_test`;
    h = -inf if none); the buckets are reset after."""
    start, end = span
    pc = sparse_histogram(tb, codes.X, f, nr, start, end)
    h, thr, ml = -np.inf, -1, False
    if feature_varies(pc, config.missing == MISSING_FRACTIONAL):
        h, thr, ml = sparse_best_test(tb, search, codes, f, pc, node, config)
    sparse_clear(tb, pc.nt)
    return pc, h, thr, ml
