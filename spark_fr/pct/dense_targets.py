"""The dense target backend of the grower: the clustering matrix Z (n x K, NaN = missing); numba, no Spark.

Sketch
------
The backend's state (:data:`DenseState`) holds Z, whether the tree's rows have a missing target value, the
node's :data:`~spark_fr.pct.impurity.Sums` ``T``, two scratch sums ``L`` and ``R``, the histogram of the
feature being searched and ``G``, the node's rows of Z in node order. Its operations, as
:mod:`spark_fr.pct.targets` names them:

    node_totals      T <- sums of the node's rows; (W, P = |E| impu(E) by (*), |S|^2); their rows of Z
                     gathered into G
    histogram        the feature's histogram over the node (spark_fr.pct.histogram), reading G
    best_test        the feature's best test against the node's totals, or (fractional) its known rows'
                     (T minus the missing code's cell): numeric by spark_fr.pct.numeric, nominal by
                     spark_fr.pct.subsets
    clear            reset the histogram's marks
    add_column_gain  per-column reductions of a learned split (per-target Genie3)
    children_gain    |E| impu(E) - |E_L| impu(E_L) - |E_R| impu(E_R) over the weighted rows of a fractional
                     split, and its per-column reductions

The arithmetic is (*) and (**) of :mod:`spark_fr.pct.impurity`, summed row by row in the node's order.

Decision: the node's target rows are gathered once per node (by node_totals, which reads them anyway) into
G, and every candidate feature's histogram reads them from there, in order: a node's rows are scattered over
Z (the partition moves row indices, not rows), so reading Z itself cost one cache miss per row and candidate
feature on tall data. The same values are summed in the same order: the trees are the same to the bit. G
costs m x K floats (m: the tree's rows), at most the size of Z.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from .config import MISSING_FRACTIONAL, SPLITTER_RANDOM
from .histogram import Histogram, clear_histogram, fill_histogram
from .impurity import (NodeTotals, Totals, has_missing_targets, impurity_sum, known_totals, new_sums, node_totals,
                       ss, totals)
from .jit import BORROWING, KERNEL
from .numeric import random_threshold, scan_numeric_complete, scan_numeric_missing, split_at_threshold
from .subsets import best_subset

#: the dense backend's state: ``Z`` (n, K), ``has_missing`` (any missing value in the tree's rows), the node's
#: sums ``T``, scratch sums ``L`` (a left side) and ``R`` (known rows, a right side), the feature's ``hist``,
#: and ``G`` (m, K): the node's rows of Z in node order (``G[i - start]`` the row of position i)
DenseState = namedtuple("DenseState", ["Z", "has_missing", "T", "L", "R", "hist", "G"])


@njit(**KERNEL)
def new_dense_state(targets, rows, nominal):
    """The state of a tree grown on ``rows`` of the clustering matrix ``targets`` (Z; ``nominal``: unused)."""
    Z = targets
    K = Z.shape[1]
    has_missing = has_missing_targets(Z, rows)
    hist = Histogram(np.zeros(256), np.zeros((256, K)), np.zeros((256, K)),
                     np.zeros((256, K) if has_missing else (1, 1)), np.zeros(256, np.int64),
                     np.empty(rows.shape[0], np.uint8))
    return DenseState(Z, has_missing, new_sums(K), new_sums(K), new_sums(K), hist, np.empty((rows.shape[0], K)))


@njit(**BORROWING)
def dense_node_totals(tb, nr, start, end):
    """The :data:`~spark_fr.pct.impurity.NodeTotals` of the node rows ``[start, end)``; their sums into ``tb.T``,
    their rows of Z into ``tb.G``."""
    W, P, sT2 = node_totals(nr, start, end, tb.Z, tb.has_missing, tb.T, tb.G)
    return NodeTotals(W, P, sT2)


@njit(**BORROWING)
def dense_histogram(tb, X, f, nr, start, end):
    """The histogram of feature f over the node into ``tb.hist`` (the node's rows of Z read from ``tb.G``, where
    :func:`dense_node_totals` of the same node put them); its present codes."""
    return fill_histogram(X, f, nr, start, end, tb.G, tb.has_missing, tb.hist)


@njit(**BORROWING)
def dense_n_columns(tb):
    """K, the number of clustering columns."""
    return tb.Z.shape[1]


@njit(**BORROWING)
def dense_end_node(tb):
    """Nothing to forget: the dense state keeps no per-node marks."""


@njit(**BORROWING)
def dense_clear(tb, nt):
    """Reset the feature's histogram to zeros (its ``nt`` touched codes' cells)."""
    clear_histogram(tb.hist, nt)


@njit(**BORROWING)
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
    LWc = totals(nr, children.left_start, children.left_end, tb.Z, tb.has_missing, tb.L)
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
    LW = totals(nr, children.left_start, children.left_end, tb.Z, tb.has_missing, tb.L)
    RW = totals(nr, children.right_start, children.right_end, tb.Z, tb.has_missing, tb.R)
    if track:
        LS, LQ, LN = tb.L
        RS, RQ, RN = tb.R
        for k in range(TS.shape[0]):
            gains[f, k] += (ss(TW, TS[k], TQ[k], TN[k]) - ss(LW, LS[k], LQ[k], LN[k])
                                  - ss(RW, RS[k], RQ[k], RN[k]))
    return P - impurity_sum(LW, tb.L) - impurity_sum(RW, tb.R)
