"""A grown PCT as plain arrays, with leaf prototypes and prediction (NumPy around the numba kernels).

Sketch
------
:func:`grow` calls the numba grower (:func:`spark_fr.pct.grow.grow_tree`, on the dense clustering matrix or
on label-sparse clustering columns) on the in-bag rows and wraps the node arrays in a :class:`Tree`. :func:`leaf_prototypes` averages the task's prototype columns over the
in-bag rows of every leaf (weighted by the bootstrap counts, and with ``--missing fractional`` by the shares
of the splits that sent a row down both branches: :meth:`Tree.memberships`; a leaf without a known value in
a column takes its nearest ancestor's value). :meth:`Tree.routes` sends rows down the tree: to one leaf each
(learned), or to several leaves with proportions where a tested value is missing (fractional,
:mod:`spark_fr.pct.route`); :meth:`Routes.take` gives each row its leaf's values or the mixture
of its leaves' values, and predictions are the task's prediction from these prototypes.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np
from numba import njit

from ..tasks.sparse_columns import SparseColumns
from .config import MISSING_FRACTIONAL, GrowConfig
from .grow import grow_tree
from .histogram import Codes
from .jit import KERNEL
from .node_rows import TreeTests
from .route import mix_sparse, mix_values, node_records, route_fractional, rows_by_path_feature, walk_rows
from .sparse_targets import SparseTargets


@dataclass
class Routes:
    """Where rows end in a tree: one leaf each (``props`` None), or (fractional trees) (leaf, proportion)
    pairs per row in CSR form: row i reaches ``leaves[indptr[i]:indptr[i + 1]]`` with proportions
    ``props[indptr[i]:indptr[i + 1]]`` (they add up to 1)."""

    leaves: np.ndarray
    indptr: np.ndarray | None = None
    props: np.ndarray | None = None

    @property
    def single(self) -> bool:
        """Whether every row reaches exactly one leaf (the learned form)."""
        return self.props is None

    def __len__(self) -> int:
        return int(self.leaves.shape[0] if self.single else self.indptr.shape[0] - 1)

    def take(self, node_values: np.ndarray) -> np.ndarray:
        """Per row, its leaf's row of ``node_values`` (n_nodes, P), or the proportions' mixture of its leaves'
        rows (a row reaching one leaf gets that leaf's row exactly)."""
        if self.single:
            return node_values[self.leaves]
        return mix_values(self.indptr, self.leaves, self.props, np.ascontiguousarray(node_values, np.float64))

    def take_sparse(self, node_values: SparseColumns) -> SparseColumns:
        """:meth:`take` for node values in CSR form (rows = nodes); a row per route."""
        if self.single:
            indptr, leaves, props = np.arange(len(self) + 1, dtype=np.int64), self.leaves, np.ones(len(self))
        else:
            indptr, leaves, props = self.indptr, self.leaves, self.props
        out = mix_sparse(indptr, leaves, props, node_values.indptr, node_values.indices, node_values.values,
                         node_values.n_columns)
        return SparseColumns(*out, node_values.n_columns)

    def subset(self, positions: np.ndarray) -> "Routes":
        """The routes of the rows at ``positions``."""
        positions = np.asarray(positions, np.int64)
        if self.single:
            return Routes(self.leaves[positions])
        counts = self.indptr[positions + 1] - self.indptr[positions]
        indptr = np.zeros(positions.shape[0] + 1, np.int64)
        np.cumsum(counts, out=indptr[1:])
        take = np.repeat(self.indptr[positions] - indptr[:-1], counts) + np.arange(indptr[-1])
        return Routes(self.leaves[take], indptr, self.props[take])

    def differs(self, other: "Routes") -> np.ndarray:
        """Per row, whether its leaves or proportions differ from its route in ``other`` (the same rows)."""
        if self.single:
            return self.leaves != other.leaves
        out = np.diff(self.indptr) != np.diff(other.indptr)
        same = np.flatnonzero(~out)
        if same.size:
            a, b = self.subset(same), other.subset(same)
            pair_differs = (a.leaves != b.leaves) | (a.props != b.props)
            out[same] = np.add.reduceat(pair_differs.astype(np.int64), a.indptr[:-1]) > 0
        return out


class PathPairs(NamedTuple):
    """The (feature, row) pairs of :meth:`Tree.rows_by_path_feature`, grouped by feature (CSR over ``indptr``).

    Attributes
    ----------
    indptr : ndarray (D + 1,)
    positions : ndarray
        The positions (in the rows given) of the rows whose path tests each feature.
    first_nodes : ndarray
        The first node of each such path testing the feature (the root for a fractional tree's row that goes
        down both branches somewhere).
    routes : Routes
        Where every row ends.
    lo, hi : ndarray
        The known codes of the feature that keep the row on its path: ``lo <= code <= hi`` (empty, ``lo > hi``,
        when that is not known: a nominal feature, a missing code of it on a learned path, a fractional tree's
        row that goes down both branches somewhere).
    """

    indptr: np.ndarray
    positions: np.ndarray
    first_nodes: np.ndarray
    routes: Routes
    lo: np.ndarray
    hi: np.ndarray


@dataclass
class Tree:
    """Node arrays of one tree (index 0 is the root; ``feature < 0`` marks a leaf).

    Attributes
    ----------
    feature, threshold, missing_left, mask, left, right : ndarray
        The test of each internal node: numeric ``code <= threshold``, nominal ``code in mask``; missing
        values go left when ``missing_left`` (learned trees).
    weight : ndarray
        |E(N)|: total (bootstrap-weighted, for fractional trees with the shares of the rows sent down both
        branches) number of training rows reaching the node.
    depth : ndarray
        Node depth (root = 0).
    gain : ndarray
        h*(N), the impurity reduction of the node's test (0 for leaves); fractional trees: the reduction of
        |E| impu(E) over the weighted rows of the node and of its children (what Genie3 sums, as CLUS).
    leaf_of_row : ndarray
        Leaf of every in-bag training row (-1 for the others); learned trees.
    column_gain : ndarray
        (D, K) summed reductions per feature and clustering column (if tracked).
    left_share : ndarray or None
        Fractional trees (``--missing fractional``): the share of each node's known training weight that went
        left; a row with a missing value goes down both branches with these shares. None: a learned tree.
    members : tuple or None
        Fractional trees: the leaves' training rows as (rows, leaves, weights) arrays, the weight being the
        row's bootstrap count times the shares of the splits that sent it down both branches.
    """

    feature: np.ndarray
    threshold: np.ndarray
    missing_left: np.ndarray
    mask: np.ndarray
    left: np.ndarray
    right: np.ndarray
    weight: np.ndarray
    depth: np.ndarray
    gain: np.ndarray
    leaf_of_row: np.ndarray
    column_gain: np.ndarray
    nominal: np.ndarray
    left_share: np.ndarray | None = None
    members: tuple | None = None

    @property
    def n_nodes(self) -> int:
        return int(self.feature.shape[0])

    @property
    def fractional(self) -> bool:
        """Whether the tree was grown with ``--missing fractional``."""
        return self.left_share is not None

    @property
    def tests(self) -> TreeTests:
        """The node tests as the routing kernels read them (:data:`~spark_fr.pct.node_rows.TreeTests`)."""
        share = self.left_share if self.left_share is not None else np.zeros(0)
        return TreeTests(self.feature, self.threshold, self.missing_left, self.mask, self.left, self.right,
                         self.nominal, share)

    @cached_property
    def records(self) -> np.ndarray:
        """The nodes' routing fields packed one record a node (:func:`~spark_fr.pct.route.node_records`), made once:
        the walks of the RF score read them for every feature."""
        return node_records(self.tests)

    @property
    def internal(self) -> np.ndarray:
        """Indices of the internal (split) nodes."""
        return np.flatnonzero(self.feature >= 0)

    def on_columns(self, columns: np.ndarray, n_columns: int, nominal: np.ndarray) -> "Tree":
        """This tree, grown on the feature columns ``columns`` of a wider matrix, with its tests referring to
        the wider matrix's ``n_columns`` columns (``nominal`` per column); the tree itself is unchanged."""
        feature = np.where(self.feature >= 0, columns[np.maximum(self.feature, 0)], self.feature)
        column_gain = self.column_gain
        if column_gain.shape[0] == columns.shape[0]:
            column_gain = np.zeros((n_columns, column_gain.shape[1]))
            column_gain[columns] = self.column_gain
        return Tree(feature.astype(self.feature.dtype), self.threshold, self.missing_left, self.mask, self.left,
                    self.right, self.weight, self.depth, self.gain, self.leaf_of_row, column_gain, nominal,
                    self.left_share, self.members)

    def memberships(self, weights: np.ndarray) -> tuple:
        """The leaves' training rows: (rows, leaves, weights), grouped by leaf, rows increasing within one.

        Learned trees: each in-bag row once, with its bootstrap count ``weights[row]``; fractional trees: the
        grower's memberships (a row whose value was missing at a test is in several leaves, with fractional
        weights; ``weights`` is not needed).
        """
        if self.fractional:
            rows, leaves, w = self.members
        else:
            rows = np.flatnonzero(self.leaf_of_row >= 0)
            leaves, w = self.leaf_of_row[rows], weights[rows]
        return group_by_leaf(np.asarray(rows, np.int64), leaves, np.asarray(w, np.float64), self.n_nodes)

    def routes(self, XR: np.ndarray, rows: np.ndarray, perm_rows: np.ndarray | None = None, feature: int = -1,
               starts: np.ndarray | None = None) -> Routes:
        """Where each of ``rows`` ends (:class:`Routes`); ``XR`` is the row-major code matrix (n, D). With
        ``feature`` >= 0, where it ends when that feature takes the value of the row ``perm_rows[i]`` instead
        (row i routed from node ``starts[i]``, default the root, see :meth:`rows_by_path_feature`)."""
        rows = np.asarray(rows, dtype=np.int64)
        if not self.fractional:
            if feature < 0:
                return Routes(self.apply(XR, rows))
            return Routes(self.apply_permuted(XR, rows, perm_rows, feature, starts))
        perm = rows if perm_rows is None else np.asarray(perm_rows, dtype=np.int64)
        starts = np.zeros(rows.shape[0], np.int64) if starts is None else np.asarray(starts, np.int64)
        indptr, leaves, props = route_fractional(XR, rows, perm, int(feature), starts, self.tests, self.records)
        return Routes(leaves, indptr, props)

    def apply(self, XR: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Leaf index of each of ``rows``; ``XR`` is the row-major code matrix (n, D). Learned trees (a
        fractional tree sends a row with a missing value to several leaves: :meth:`routes`)."""
        if self.fractional:
            raise ValueError("a tree grown with --missing fractional sends rows to several leaves: use routes()")
        rows = np.asarray(rows, dtype=np.int64)
        return walk_rows(XR, rows, rows, -1, np.zeros(rows.shape[0], np.int64), self.tests, self.records)

    def predict_values(self, XR: np.ndarray, node_values: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """The value of the leaf each row reaches (boosting: a tree's contribution to the raw scores).

        Parameters
        ----------
        XR : ndarray of uint8 (n, D)
            Row-major codes.
        node_values : ndarray (n_nodes,)
            A value per node (only the leaves' are read).
        rows : ndarray of int, optional
            The rows to route (default: all of them).

        Returns
        -------
        ndarray (len(rows),)
        """
        rows = np.arange(XR.shape[0], dtype=np.int64) if rows is None else rows
        return np.asarray(node_values, dtype=np.float64)[self.apply(XR, rows)]

    def apply_permuted(self, XR: np.ndarray, rows: np.ndarray, perm_rows: np.ndarray, feature: int,
                       starts: np.ndarray | None = None):
        """Leaf of each row when feature ``feature`` takes the value of the row ``perm_rows[i]``; row i is
        routed from node ``starts[i]`` (default: the root; see :meth:`rows_by_path_feature`). Learned trees."""
        rows = np.asarray(rows, dtype=np.int64)
        starts = np.zeros(rows.shape[0], np.int64) if starts is None else np.asarray(starts, np.int64)
        return walk_rows(XR, rows, np.asarray(perm_rows, dtype=np.int64), int(feature), starts, self.tests,
                         self.records)

    def rows_by_path_feature(self, XR: np.ndarray, rows: np.ndarray) -> "PathPairs":
        """For each feature, the rows whose path tests it, the first node of that path testing it and the range of
        its codes that keeps the row on its path (:class:`PathPairs`, CSR), and the :class:`Routes` of every row.
        Fractional trees: the rows that reach a node testing it (down both branches at a missing value); a row
        that goes down both branches somewhere has the root as first node and an empty range."""
        rows = np.asarray(rows, dtype=np.int64)
        indptr, positions, first_nodes, leaves, lo, hi = rows_by_path_feature(XR, rows, self.tests, self.records, XR.shape[1])
        if not self.fractional:
            routes = Routes(leaves)
        elif (leaves >= 0).all():  # every row went down one path: its leaf with proportion 1.0, as routes() gives
            routes = Routes(leaves, np.arange(rows.shape[0] + 1, dtype=np.int64), np.ones(rows.shape[0]))
        else:
            routes = self.routes(XR, rows)
        return PathPairs(indptr, positions, first_nodes, routes, lo, hi)


def grow(X, nominal, lower, upper, Z, weights, config: GrowConfig, by_row=None) -> Tree:
    """Grow one PCT on the rows with positive weight.

    Parameters
    ----------
    X : ndarray of uint8, shape (D, n)
        Feature codes (255 = missing).
    nominal : ndarray of bool, shape (D,)
    lower, upper : ndarray of float64, shape (D, 255)
        Value range of each numeric bin (extra-trees thresholds).
    Z : ndarray of float64, shape (n, K), or SparseColumns
        Clustering matrix from the task (dense: centred and scaled, NaN = missing), or its label-sparse
        form (complete, uncentred): the grower's dense or label-sparse target backend
        (:mod:`spark_fr.pct.targets`).
    weights : ndarray of float64, shape (n,)
        Row weights (bootstrap counts).
    config : GrowConfig
        The tree's options (:func:`spark_fr.pct.config.grow_config`).
    by_row : ndarray of uint8, shape (n, D), optional
        The same codes row-major: small nodes read their rows' codes from it
        (:func:`spark_fr.pct.histogram.small_node_code`); the same tree either way.

    Returns
    -------
    Tree
    """
    w = np.ascontiguousarray(weights, dtype=np.float64)
    rows = np.flatnonzero(w > 0).astype(np.int64)
    # Decision: the grower is compiled for C-ordered arrays only (the warm-ups' and every run's layout); a caller's
    # Fortran-ordered or sliced matrix is copied (no copy for a C-ordered one) rather than compiling a second
    # specialisation of the grow loop (about 9 s of CPU on 2 cores)
    if isinstance(Z, SparseColumns):
        targets = SparseTargets(Z.indptr, Z.indices, Z.values, Z.n_columns)
    else:
        targets = np.ascontiguousarray(Z, dtype=np.float64)
    codes = Codes(np.ascontiguousarray(X, dtype=np.uint8), np.ascontiguousarray(nominal, dtype=np.bool_),
                  np.ascontiguousarray(lower, dtype=np.float64), np.ascontiguousarray(upper, dtype=np.float64),
                  np.zeros((0, 0), np.uint8) if by_row is None else np.ascontiguousarray(by_row, dtype=np.uint8))
    out = grow_tree(codes, targets, w, rows, config)
    nodes = out.nodes
    n = out.n_nodes
    arrays = (nodes.feature[:n], nodes.threshold[:n], nodes.missing_left[:n], nodes.mask[:n], nodes.left[:n],
              nodes.right[:n], nodes.weight[:n], nodes.depth[:n], nodes.gain[:n], out.leaf_of_row, out.column_gain,
              nominal)
    if config.missing != MISSING_FRACTIONAL:
        return Tree(*arrays)
    return Tree(*arrays, nodes.left_share[:n], tuple(out.members))


@njit(**KERNEL)
def _pairwise_sum(a, lo, n, p):
    """NumPy's pairwise summation (``np.add.reduce`` over a run of n values) of ``a[lo:lo + n, p]``, to the bit:
    up to 8 values in order, up to 128 in 8 interleaved partial sums, more in two halves (a multiple of 8
    first)."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i, p]
        return res
    if n <= 128:
        r0, r1, r2, r3 = a[lo, p], a[lo + 1, p], a[lo + 2, p], a[lo + 3, p]
        r4, r5, r6, r7 = a[lo + 4, p], a[lo + 5, p], a[lo + 6, p], a[lo + 7, p]
        i = 8
        while i < n - n % 8:
            r0 += a[lo + i, p]
            r1 += a[lo + i + 1, p]
            r2 += a[lo + i + 2, p]
            r3 += a[lo + i + 3, p]
            r4 += a[lo + i + 4, p]
            r5 += a[lo + i + 5, p]
            r6 += a[lo + i + 6, p]
            r7 += a[lo + i + 7, p]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        for j in range(lo + i, lo + n):
            res += a[j, p]
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _pairwise_sum(a, lo, n2, p) + _pairwise_sum(a, lo + n2, n - n2, p)


@njit(**KERNEL)
def segment_sums(values, bounds, targets, out):
    """``out[targets[s]] = values[bounds[s]:bounds[s + 1]].sum(axis=0)`` for every segment s, as NumPy sums a
    C-ordered (L, P) block over its rows, to the bit: for P > 1 row after row from 0.0, for P == 1 0.0 plus
    NumPy's pairwise sum (:func:`_pairwise_sum`).

    Decision: a kernel instead of a NumPy sum per leaf (a Python loop over some 10^5 leaves of a tree on 10^6
    rows cost seconds per tree); the same arithmetic, so the same prototypes, to the bit
    (tests/pct/test_tree.py checks it against NumPy)."""
    P = values.shape[1]
    for s in range(bounds.shape[0] - 1):
        a, b, o = bounds[s], bounds[s + 1], targets[s]
        if P == 1:
            out[o, 0] = 0.0 + _pairwise_sum(values, a, b - a, 0)
            continue
        for p in range(P):
            out[o, p] = 0.0
        for i in range(a, b):
            for p in range(P):
                out[o, p] += values[i, p]


def leaf_prototypes(tree: Tree, columns: np.ndarray, weights: np.ndarray, default: np.ndarray) -> np.ndarray:
    """Weighted mean of the prototype columns over the in-bag rows of each node (rows = nodes).

    Where a node has no known value of a column (a leaf of unlabelled rows in a semi-supervised tree, or of
    rows whose target is missing), it takes the value of its nearest ancestor that has one: the prediction
    a tree would make had it stopped growing there. The root falls back to ``default``.

    Parameters
    ----------
    tree : Tree
    columns : ndarray (n, P)
        Prototype columns of all rows (NaN = missing).
    weights : ndarray (n,)
        Bootstrap counts used to grow the tree (a fractional tree's leaves hold their rows' weights).
    default : ndarray (P,)
        Prototype used where not even the root has a known value.

    Returns
    -------
    ndarray (n_nodes, P)
    """
    rows, leaf, w = tree.memberships(weights)  # grouped by leaf, in row order within one
    vals = columns[rows]
    complete = not np.isnan(vals).any()
    # without missing values a node's weight is the same for every column: one column of weights
    wk = w[:, None] if complete else np.where(np.isnan(vals), 0.0, w[:, None])
    terms = vals * wk if complete else np.where(wk > 0, vals, 0.0) * wk
    num = np.zeros((tree.n_nodes, columns.shape[1]))
    den = np.zeros((tree.n_nodes, wk.shape[1]))
    if rows.size:
        # per leaf, the sum over its rows (segment_sums: as NumPy's sum(axis=0) of the leaf's block, to the bit)
        bounds = np.flatnonzero(np.r_[True, leaf[1:] != leaf[:-1], True])
        first = leaf[bounds[:-1]].astype(np.int64)
        segment_sums(terms, bounds, first, num)
        segment_sums(wk, bounds, first, den)
    inner = tree.internal
    if not ((tree.left[inner] > inner).all() and (tree.right[inner] > inner).all()):
        raise ValueError("a tree whose children are not numbered after their parent (the grower's order)")
    _sum_up(tree.feature, tree.left, tree.right, num, den)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = num / np.where(den > 0, den, 1.0)
    proto = np.empty_like(num)
    proto[0] = np.where(den[0] > 0, mean[0], default)
    _fill_down(tree.feature, tree.left, tree.right, den, mean, proto)
    return proto


@njit(**KERNEL)
def group_by_leaf(rows, leaves, weights, n_nodes):
    """The (row, leaf, weight) triples ordered by leaf, rows increasing within a leaf (a row is in a leaf at most
    once): a counting sort by leaf, then each leaf's rows sorted (the order ``np.lexsort((rows, leaves))`` gives,
    in linear time for a tree's small leaves)."""
    m = rows.shape[0]
    start = np.zeros(n_nodes + 1, np.int64)
    for i in range(m):
        start[leaves[i] + 1] += 1
    for node in range(n_nodes):
        start[node + 1] += start[node]
    fill = start[:-1].copy()
    out_rows = np.empty(m, np.int64)
    out_leaves = np.empty(m, leaves.dtype)
    out_w = np.empty(m, np.float64)
    for i in range(m):
        j = fill[leaves[i]]
        fill[leaves[i]] += 1
        out_rows[j] = rows[i]
        out_leaves[j] = leaves[i]
        out_w[j] = weights[i]
    for node in range(n_nodes):
        a, b = start[node], start[node + 1]
        if b - a > 32:
            order = np.argsort(out_rows[a:b]) + a
            out_rows[a:b] = out_rows[order]
            out_w[a:b] = out_w[order]
            continue
        for i in range(a + 1, b):  # insertion sort of a small leaf
            r, v = out_rows[i], out_w[i]
            j = i - 1
            while j >= a and out_rows[j] > r:
                out_rows[j + 1] = out_rows[j]
                out_w[j + 1] = out_w[j]
                j -= 1
            out_rows[j + 1] = r
            out_w[j + 1] = v
    return out_rows, out_leaves, out_w


@njit(**KERNEL)
def _sum_up(feature, left, right, num, den):
    """Sums up the tree: each internal node's ``num`` and ``den`` rows are its two children's, added. A child's
    index is above its parent's (the grower numbers the children when it splits a node), so going down the
    indices every child is complete before its parent; each sum is the one addition of the two children."""
    for node in range(feature.shape[0] - 1, -1, -1):
        if feature[node] < 0:
            continue
        a, b = left[node], right[node]
        for p in range(num.shape[1]):
            num[node, p] = num[a, p] + num[b, p]
        for p in range(den.shape[1]):
            den[node, p] = den[a, p] + den[b, p]


@njit(**KERNEL)
def _fill_down(feature, left, right, den, mean, proto):
    """Then down (parents before children, by index): a child's prototype is its mean where it has a known
    value of the column (``den`` > 0), else its parent's (``proto[0]``, the root's, is set by the caller)."""
    one_den = den.shape[1] == 1
    for node in range(feature.shape[0]):
        if feature[node] < 0:
            continue
        for child in (left[node], right[node]):
            for p in range(proto.shape[1]):
                known = den[child, 0] > 0 if one_den else den[child, p] > 0
                proto[child, p] = mean[child, p] if known else proto[node, p]


def leaf_label_frequencies(tree: Tree, columns: SparseColumns, weights: np.ndarray) -> SparseColumns:
    """:func:`leaf_prototypes` for complete label-sparse prototype columns (0/1 labels as ones): per leaf, the
    weighted frequency of each label present among its in-bag rows (rows = nodes; internal nodes are empty).

    With integer weights the sums are exact, so the frequencies are those of the dense computation, bit for
    bit; labels absent from a leaf have frequency 0 and are not stored.
    """
    rows, row_leaf, w = tree.memberships(weights)
    counts = columns.indptr[rows + 1] - columns.indptr[rows]
    starts = np.repeat(columns.indptr[rows], counts)
    take = starts + (np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts))
    leaf = np.repeat(row_leaf.astype(np.int64), counts)
    label = columns.indices[take]
    terms = columns.values[take] * np.repeat(w, counts)
    den = np.bincount(row_leaf, weights=w, minlength=tree.n_nodes)
    key = leaf * columns.n_columns + label
    order = np.argsort(key, kind="stable")
    key, terms = key[order], terms[order]
    first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if key.size else np.zeros(0, np.int64)
    sums = np.add.reduceat(terms, first) if key.size else np.zeros(0)
    node, lab = key[first] // columns.n_columns, key[first] % columns.n_columns
    indptr = np.zeros(tree.n_nodes + 1, np.int64)
    np.cumsum(np.bincount(node, minlength=tree.n_nodes), out=indptr[1:])
    return SparseColumns(indptr, lab, sums / den[node], columns.n_columns)
