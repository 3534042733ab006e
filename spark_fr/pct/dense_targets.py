"""The dense target backend of the grower: the clustering matrix Z (n x K, NaN = missing); numba, no Spark.

Sketch
------
The backend's state (:data:`DenseState`) holds Z, whether the tree's rows have a missing target value, the
node's :data:`~spark_fr.pct.impurity.Sums` ``T``, two scratch sums ``L`` and ``R`` and the histogram of the
feature being searched: over 256 codes, or over a small node's present codes (numeric feature, complete
targets, best splitter: :func:`~spark_fr.pct.histogram.fill_small_histogram`). The rows' targets travel with
the rows (:data:`~spark_fr.pct.node_rows.NodeRows`' ``targets``, in node order). Its operations, as
:mod:`spark_fr.pct.targets` names them:

    moved_targets    Z, whose rows the node rows keep and move (node_rows)
    node_totals      T <- sums of the node's rows; (W, P = |E| impu(E) by (*), |S|^2)
    search_feature   the feature's histogram over the node (spark_fr.pct.histogram, reading the node's
                     targets in node order; the small one at a node of at most SMALL_NODE_ROWS rows), its
                     best test against the node's totals, or (fractional) its known rows' (T minus the
                     missing code's cell): numeric by spark_fr.pct.numeric, nominal by spark_fr.pct.subsets;
                     the 256-code histogram's touched cells reset after; at a node of at most MEMO_ROWS rows,
                     the result of the node's earlier feature with the same order of codes
                     (spark_fr.pct.order_memo)
    add_column_gain  per-column reductions of a learned split (per-target Genie3)
    children_gain    |E| impu(E) - |E_L| impu(E_L) - |E_R| impu(E_R) over the weighted rows of a fractional
                     split, and its per-column reductions

The arithmetic is (*) and (**) of :mod:`spark_fr.pct.impurity`, summed row by row in the node's order.

Decision: the rows' targets are kept in node order beside the rows (moved by every partition and copy, as
the node codes are), and the node's totals and every candidate feature's histogram read them in order. A
node's rows are scattered over Z: reading Z itself cost one cache miss per row and candidate feature on tall
data, and the gather of a node's rows into a buffer (once per node, the previous design) one per row and node,
the sixth of a tall tree's time (10^6 x 50 x 3). The same values are summed in the same order: the trees are the
same to the bit. The targets cost m x K floats (m: the tree's rows, more with fractional copies), at most
about the size of Z.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from .config import MISSING_FRACTIONAL, SPLITTER_BEST, SPLITTER_RANDOM
from .histogram import (SMALL_NODE_ROWS, Histogram, PresentCodes, clear_histogram, feature_varies, fill_histogram,
                        fill_small_histogram)
from .impurity import (NodeTotals, Totals, has_missing_targets, impurity_sum, known_totals, new_sums, node_totals,
                       ss, totals)
from .jit import BORROWING, INLINE, KERNEL
from .numeric import random_threshold, scan_numeric_complete, scan_numeric_missing, split_at_threshold
from .order_memo import known, new_order_memo, next_node, pattern, remember, threshold_code
from .subsets import best_subset

#: the dense backend's state: ``Z`` (n, K), ``has_missing`` (any missing value in the tree's rows), the node's
#: sums ``T``, scratch sums ``L`` (a left side) and ``R`` (known rows, a right side), the feature's ``hist`` (256
#: codes) or ``small`` histogram (its ``codes``: each cell's code) and the latter's sort ``keys``; ``small_rows``:
#: the most rows of a node whose numeric features are searched on the small one (0: none, with missing targets or
#: the random splitter); ``memo`` the tiny nodes' best tests by their codes' order (:mod:`spark_fr.pct.order_memo`)
DenseState = namedtuple("DenseState", ["Z", "has_missing", "T", "L", "R", "hist", "small", "keys", "small_rows",
                                       "memo"])


@njit(**KERNEL)
def new_dense_state(targets, rows, nominal, config):
    """The state of a tree grown on ``rows`` of the clustering matrix ``targets`` (Z; ``nominal``: unused) with the
    tree's GrowConfig ``config``."""
    Z = targets
    K = Z.shape[1]
    has_missing = has_missing_targets(Z, rows)
    hist = Histogram(np.zeros(256), np.zeros((256, K)), np.zeros((256, K)),
                     np.zeros((256, K) if has_missing else (1, 1)), np.zeros(256, np.int64),
                     np.empty(rows.shape[0], np.uint8))
    small = Histogram(np.zeros(256), np.zeros((256, K)), np.zeros((1, 1)), np.zeros((1, 1)), np.arange(256),
                      np.zeros(256, np.uint8))
    small_rows = SMALL_NODE_ROWS if not has_missing and config.splitter == SPLITTER_BEST else 0
    return DenseState(Z, has_missing, new_sums(K), new_sums(K), new_sums(K), hist, small,
                      np.zeros(2 * SMALL_NODE_ROWS, np.int32), small_rows, new_order_memo())


@njit(**BORROWING)
def dense_node_totals(tb, nr, start, end):
    """The :data:`~spark_fr.pct.impurity.NodeTotals` of the node rows ``[start, end)``; their sums into ``tb.T``."""
    W, P, sT2 = node_totals(nr, start, end, tb.has_missing, tb.T)
    next_node(tb.memo)
    return NodeTotals(W, P, sT2)


@njit(**INLINE)
def small_search(tb, codes, f, nr, start, end, node, config):
    """Feature f's present codes and best test (h, threshold code, missing_left) at a node of at most
    ``tb.small_rows`` rows (totals ``node``; a numeric feature, complete targets, the best splitter): its small
    histogram (:func:`~spark_fr.pct.histogram.fill_small_histogram` into ``tb.small``) scanned as the 256-code one,
    the best cell translated to its code. At a node of at most :data:`~spark_fr.pct.order_memo.MEMO_ROWS` rows,
    a feature whose codes' order pattern an earlier feature of the node had takes that one's result."""
    key = pattern(tb.memo, codes, f, nr, start, end - start)
    if key >= 0 and known(tb.memo, key):
        nt = tb.memo.nt[key]
        return (PresentCodes(nt, nt, 0.0), tb.memo.h[key], threshold_code(tb.memo, tb.memo.row[key]),
                tb.memo.missing_left[key])
    pc = fill_small_histogram(codes, f, nr, start, end, nr.targets[start:], tb.keys, tb.small)
    fractional = config.missing == MISSING_FRACTIONAL
    if not feature_varies(pc, fractional):
        if key >= 0:
            remember(tb.memo, key, end - start, pc.nt, -np.inf, -1, False)
        return pc, -np.inf, -1, False
    parent = Totals(node.W, node.P, node.sT2, tb.T, pc.MW)
    if fractional and pc.MW > 0.0:
        W, P, sT2 = known_totals(parent, tb.small, False, tb.R)
        parent = Totals(W, P, sT2, tb.R, 0.0)
    h, b, ml = scan_numeric_complete(tb.small, pc, parent, config.min_leaf, tb.L)
    code = np.int64(tb.small.codes[b]) if b >= 0 else np.int64(-1)
    if key >= 0:
        remember(tb.memo, key, end - start, pc.nt, h, code, ml)
    return pc, h, code, ml


@njit(**BORROWING)
def dense_search_feature(tb, search, codes, f, nr, span, node, config):
    """Feature f at the node rows ``span`` = (start, end) (totals ``node``): its present codes and, if it
    varies, its best test (h, threshold code or -1 for a nominal test, missing_left; h = -inf if none); the
    histogram is reset after. A numeric feature at a node of at most ``tb.small_rows`` rows: :func:`small_search`."""
    start, end = span
    if end - start <= tb.small_rows and not codes.nominal[f]:
        return small_search(tb, codes, f, nr, start, end, node, config)
    pc = fill_histogram(codes.X, f, nr, start, end, nr.targets[start:], tb.has_missing, tb.hist)
    h, thr, ml = -np.inf, -1, False
    if feature_varies(pc, config.missing == MISSING_FRACTIONAL):
        h, thr, ml = dense_best_test(tb, search, codes, f, pc, node, config)
    clear_histogram(tb.hist, pc.nt)
    return pc, h, thr, ml


@njit(**KERNEL)
def dense_moved_targets(tb):
    """Z: the node rows keep their rows' targets in node order (:func:`~spark_fr.pct.node_rows.node_rows`)."""
    return tb.Z


@njit(**BORROWING)
def dense_n_columns(tb):
    """K, the number of clustering columns."""
    return tb.Z.shape[1]


@njit(**BORROWING)
def dense_end_node(tb):
    """Nothing to forget: the dense state keeps no per-node marks."""


@njit(**INLINE)
def dense_best_test(tb, search, codes, f, pc, node, config):
    """The best test of feature f (present codes ``pc``, its histogram in ``tb.hist``) at a node of totals
    ``node``: (h, threshold code or -1 for a nominal test, missing_left); h = -inf if none is
    valid; a nominal test's mask is written into ``search.mask``."""
    parent = Totals(node.W, node.P, node.sT2, tb.T, pc.MW)
    if config.missing == MISSING_FRACTIONAL and pc.MW > 0.0:
        W, P, sT2 = known_totals(parent, tb.hist, tb.has_missing, tb.R)
        parent = Totals(W, P, sT2, tb.R, 0.0)
    if codes.nominal[f]:
        h, ml = best_subset(config.splitter, search, tb.hist, pc, parent, tb.has_missing, config.min_leaf, tb.L)
        return h, -1, ml
    if config.splitter == SPLITTER_RANDOM:
        t_bin = random_threshold(search.state, f, tb.hist.touched, pc.n_known, codes.lower, codes.upper)
        h, ml = split_at_threshold(t_bin, tb.hist, pc, parent, tb.has_missing, config.min_leaf, tb.L)
        return h, t_bin, ml
    if tb.has_missing:
        return scan_numeric_missing(tb.hist, pc, parent, config.min_leaf, tb.L)
    return scan_numeric_complete(tb.hist, pc, parent, config.min_leaf, tb.L)


@njit(**BORROWING)
def dense_column_gain(tb, gains, f, nr, children, node):
    """Per-column reductions of a learned split of the node (totals ``node``) into ``children`` (the left one
    ``[left_start, left_end)``), added to ``gains[f]``."""
    TW = node.W
    TS, TQ, TN = tb.T
    LWc = totals(nr, children.left_start, children.left_end, tb.has_missing, tb.L)
    LS, LQ, LN = tb.L
    RWc = TW - LWc
    for k in range(TS.shape[0]):
        gains[f, k] += (ss(TW, TS[k], TQ[k], TN[k]) - ss(LWc, LS[k], LQ[k], LN[k])
                              - ss(RWc, TS[k] - LS[k], TQ[k] - LQ[k], TN[k] - LN[k]))


@njit(**BORROWING)
def dense_children_gain(tb, gains, f, track, nr, children, node):
    """|E| impu(E) - |E_L| impu(E_L) - |E_R| impu(E_R) over the weighted rows of the node (totals ``node``) and
    of its ``children`` (a fractional split: the missing rows are in both, with their shares); the
    per-column reductions are added to ``gains[f]`` when ``track``."""
    TW, P = node.W, node.P
    TS, TQ, TN = tb.T
    LW = totals(nr, children.left_start, children.left_end, tb.has_missing, tb.L)
    RW = totals(nr, children.right_start, children.right_end, tb.has_missing, tb.R)
    if track:
        LS, LQ, LN = tb.L
        RS, RQ, RN = tb.R
        for k in range(TS.shape[0]):
            gains[f, k] += (ss(TW, TS[k], TQ[k], TN[k]) - ss(LW, LS[k], LQ[k], LN[k])
                                  - ss(RW, RS[k], RQ[k], RN[k]))
    return P - impurity_sum(LW, tb.L) - impurity_sum(RW, tb.R)
