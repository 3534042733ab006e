"""Growing one predictive clustering tree (PCT) on binned data: the node loop (numba kernels, no Spark).

Algorithm sketch
----------------
Input: feature :data:`~spark_fr.pct.histogram.Codes` (``X`` D x n, uint8; code 255 = missing), the
clustering targets built by :mod:`spark_fr.tasks` (a dense matrix ``Z``, n x K, NaN = missing, or label-sparse
:data:`~spark_fr.pct.sparse_targets.SparseTargets`: the *target backend*, :mod:`spark_fr.pct.targets`), per-row
weights ``w`` (bootstrap counts; 0 = not in the bag) and the tree's options, a
:data:`~spark_fr.pct.config.GrowConfig`. The impurity |E| impu(E) of a set of rows E is a weighted sum of
per-column variances (:mod:`spark_fr.pct.impurity`).

Depth-first, with an explicit stack of ranges of a buffer of (row, weight in the node) pairs
(:mod:`spark_fr.pct.node_rows`; rows are partitioned in place, as in scikit-learn):

    node(E):
        W, P <- node_totals(E)                                              the backend's, P = |E| impu(E)
        leaf if W < 2 * min_leaf, depth == max_depth, or P / W < 1e-13 * (root impurity per example)
        best <- best_split(E)                                               spark_fr.pct.search: per candidate
            feature the backend's best test (numeric: thresholds "code <= t"; nominal: subsets "code in A";
            learned: missing values as a block to the better side; fractional (CLUS): h on the known rows,
            valid if the known rows of both sides weigh >= min_leaf, less 1e-9 of it for rounding:
            leaf_weight_floor)
        leaf if best h <= 1e-12 * P, else record the test and split E:
            learned: partition E in place, rows going left first (by goes_left, the routing test prediction
            uses too)
            fractional: the rows with a known value go to their side; those without go to both children,
            their weight times s_L = W(known, left) / W(known) on the left and 1 - s_L on the right (s_L is
            recorded: prediction sends a row with a missing value down both branches and mixes the leaves'
            prototypes with these shares); the node's gain becomes the reduction of |E| impu over the weighted
            rows of the node and of its children (the backend's children_gain), as CLUS's Genie3 computes it
            from the nodes' statistics; without missing values in the node the split is the learned one, to
            the bit
        push the children (the right one first, so the left subtree grows first)

The tree records, per node, the feature, the test, the weight |E(N)|, the depth and h*(N) (fractional: the
weighted reduction above, and the share s_L): everything the Symbolic and Genie3 scores need. Per-column
reductions can be accumulated for per-target Genie3 (the backend's add_column_gain).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from .config import MISSING_FRACTIONAL, GrowConfig
from .jit import BORROWING, INLINE, KERNEL
from .node_rows import (Children, TreeTests, add_members, free_start, new_members, node_rows, partition,
                        split_fractional, trimmed)
from .search import Split, best_split, new_search
from .targets import add_column_gain, children_gain, end_node, moved_targets, n_columns, new_state, node_totals

#: the node arrays of a tree (capacity :func:`node_capacity`; feature -1 = leaf, children -1): each internal
#: node's test (``feature``, ``threshold`` for numeric, ``mask`` (4 x uint64) for nominal features,
#: ``missing_left``), its children, ``weight`` |E(N)|, ``depth``, ``gain`` h*(N) and ``left_share`` (fractional
#: splits: the share of the node's known weight that went left)
TreeArrays = namedtuple("TreeArrays", ["feature", "threshold", "missing_left", "mask", "left", "right", "weight",
                                       "depth", "gain", "left_share"])
#: what :func:`grow_tree` returns: the first ``n_nodes`` of ``nodes`` are used; ``leaf_of_row`` (n,) the leaf of
#: each in-bag row (-1 out of bag; learned trees); ``column_gain`` (D, K) per-feature, per-column reductions
#: (1 x 1 zeros unless tracked); ``members`` the (row, leaf, weight) memberships of a fractional tree's leaves
GrowResult = namedtuple("GrowResult", ["n_nodes", "nodes", "leaf_of_row", "column_gain", "members"])


@njit(**BORROWING)
def leaf_weight_floor(min_leaf, fractional):
    """The weight a side must reach: ``min_leaf``, less 1e-9 of it for fractional trees, whose weights (sums of
    products of shares) carry rounding: a side of whole rows weighing min_leaf stays valid."""
    return min_leaf * (1.0 - 1e-9) if fractional else min_leaf


@njit(**BORROWING)
def node_capacity(m, total_weight, min_leaf, fractional):
    """Nodes a tree of m rows can have: 2m - 1 when a row is in one leaf; with fractional splits a row may be
    in several, but every leaf but the root weighs at least ``min_leaf`` and the leaves' weights add up to the
    total weight W, so at most 2 W / min_leaf - 1 (plus one leaf of slack for rounding)."""
    cap = 2 * m + 1
    if fractional and min_leaf > 0.0:
        cap = max(cap, 2 * int(total_weight / min_leaf) + 3)
    return cap


@njit(**KERNEL)
def _tree_arrays(cap):
    """The :data:`TreeArrays` of a tree of at most ``cap`` nodes (feature -1 = leaf, children -1)."""
    return TreeArrays(np.full(cap, -1, np.int32), np.zeros(cap, np.int32), np.zeros(cap, np.bool_),
                      np.zeros((cap, 4), np.uint64), np.full(cap, -1, np.int32), np.full(cap, -1, np.int32),
                      np.zeros(cap, np.float64), np.zeros(cap, np.int32), np.zeros(cap, np.float64),
                      np.zeros(cap, np.float64))


@njit(**INLINE)
def _can_split(node, depth, root_impurity, config):
    """Whether a node of totals ``node`` at this depth may be split (a node whose impurity per example is below
    1e-13 of the root's is pure: rounding noise only)."""
    return (node.W >= 2.0 * config.min_leaf and (config.max_depth < 0 or depth < config.max_depth)
            and node.P > 1e-13 * node.W * root_impurity and node.P > 0.0)


@njit(**INLINE)
def _record_split(nodes, node, best, missing_left, nominal_f, best_mask):
    """Record the node's test: ``best`` (its mask ``best_mask`` if nominal), missing values to the left if
    ``missing_left``."""
    nodes.feature[node] = best.feature
    nodes.threshold[node] = best.threshold
    nodes.missing_left[node] = missing_left
    nodes.gain[node] = best.h
    if nominal_f:
        for j in range(4):
            nodes.mask[node, j] = best_mask[j]


@njit(**KERNEL)
def _split_rows(X, tests, node, nr, start, end, fractional, top):
    """The children's rows of the node ``[start, end)`` split on its recorded test: learned, the in-place
    partition; fractional, :func:`~spark_fr.pct.node_rows.split_fractional` (the share going left is
    recorded in ``tests.left_share``; copies go above ``top``). Returns (nr, :data:`Children`)."""
    if not fractional:
        mid = partition(X, tests, node, nr, start, end)
        return nr, Children(0, start, mid, mid, end)
    nr, share, children = split_fractional(X, tests, node, nr, start, end, top)
    tests.left_share[node] = share
    return nr, children


@njit(**INLINE)
def _push_children(nodes, node, children, n_nodes, stack, sp):
    """Create the children of ``node`` and push them, the right one first so the left subtree is grown first.
    Returns (n_nodes, sp)."""
    lc = n_nodes
    rc = n_nodes + 1
    nodes.left[node] = lc
    nodes.right[node] = rc
    nodes.depth[lc] = nodes.depth[node] + 1
    nodes.depth[rc] = nodes.depth[node] + 1
    stack[sp, 0] = rc
    stack[sp, 1] = children.right_start
    stack[sp, 2] = children.right_end
    stack[sp + 1, 0] = lc
    stack[sp + 1, 1] = children.left_start
    stack[sp + 1, 2] = children.left_end
    return n_nodes + 2, sp + 2


@njit(**INLINE)
def _make_leaf(node, nr, start, end, fractional, leaf_of_row, members, n_members):
    """Record the rows of leaf ``node``: ``leaf_of_row`` (learned), or (row, node, weight) memberships
    (fractional). Returns (members, n_members)."""
    if fractional:
        return add_members(members, n_members, nr, start, end, node)
    for i in range(start, end):
        leaf_of_row[nr.rows[i]] = node
    return members, n_members


@njit(**KERNEL)
def grow_tree(codes, targets, w, rows, config):
    """Grow one PCT.

    Parameters
    ----------
    codes : Codes
        The feature codes (X, nominal, lower, upper).
    targets : float64[n, K] or SparseTargets
        The clustering targets: the dense matrix (centred, scaled; NaN = missing), or label-sparse complete
        columns (uncentred).
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
    D, n = codes.X.shape
    m = rows.shape[0]
    fractional = config.missing == MISSING_FRACTIONAL
    total_weight = 0.0
    for i in range(m):
        total_weight += w[rows[i]]
    cap = node_capacity(m, total_weight, config.min_leaf, fractional)
    config = GrowConfig(leaf_weight_floor(config.min_leaf, fractional), config.max_depth, config.max_features,
                        config.splitter, config.missing, config.resample_constant, config.track_columns, config.seed)
    tb = new_state(targets, rows, codes.nominal, config)
    nodes = _tree_arrays(cap)
    tests = TreeTests(nodes.feature, nodes.threshold, nodes.missing_left, nodes.mask, nodes.left, nodes.right,
                      codes.nominal, nodes.left_share)
    leaf_of_row = np.full(n, -1, np.int32)
    gains = np.zeros((D, n_columns(tb)) if config.track_columns else (1, 1), np.float64)
    nr = node_rows(rows, w, m + m // 2 + 16 if fractional else m, codes.X, moved_targets(tb))
    members = new_members(m if fractional else 0)
    n_members = 0
    search = new_search(config.seed, D)
    stack = np.zeros((cap, 3), np.int64)                      # (node, start, end) of the nodes to grow
    stack[0, 2] = m
    sp = 1
    n_nodes = 1
    root_impurity = 0.0
    while sp > 0:
        sp -= 1
        node, start, end = stack[sp, 0], stack[sp, 1], stack[sp, 2]
        totals = node_totals(tb, nr, start, end)
        nodes.weight[node] = totals.W
        if node == 0:
            root_impurity = totals.P / totals.W if totals.W > 0.0 else 0.0
        best = Split(0.0, -1, 0, False)
        if _can_split(totals, nodes.depth[node], root_impurity, config):
            best = best_split(codes, tb, search, nr, start, end, totals, config)
        if best.feature < 0 or best.h <= 1e-12 * totals.P:
            members, n_members = _make_leaf(node, nr, start, end, fractional, leaf_of_row, members, n_members)
            end_node(tb)
            continue
        _record_split(nodes, node, best, best.missing_left and not fractional, codes.nominal[best.feature],
                      search.best_mask)
        top = free_start(end, stack, sp) if fractional else end
        nr, children = _split_rows(codes.X, tests, node, nr, start, end, fractional, top)
        if children.n_missing > 0:
            nodes.gain[node] = children_gain(tb, gains, best.feature, config.track_columns, nr, children, totals)
        elif config.track_columns:
            add_column_gain(tb, gains, best.feature, nr, children, totals)
        end_node(tb)
        n_nodes, sp = _push_children(nodes, node, children, n_nodes, stack, sp)
    return GrowResult(n_nodes, nodes, leaf_of_row, gains, trimmed(members, n_members))
