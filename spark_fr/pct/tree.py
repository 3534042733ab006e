"""A grown PCT as plain arrays, with leaf prototypes and prediction (NumPy around the numba kernels).

Sketch
------
:func:`grow` calls the numba grower (:func:`spark_fr.pct.grow.grow_tree`, or
:func:`spark_fr.pct.grow_sparse.grow_tree_sparse` for label-sparse clustering columns) on the in-bag rows and
wraps the node arrays in a :class:`Tree`. :func:`leaf_prototypes` averages the task's prototype columns over the
in-bag rows of every leaf (weighted by the bootstrap counts; a leaf without a known value in a column
takes its nearest ancestor's value). :meth:`Tree.apply` sends rows down the tree; predictions are the task's
prediction from the leaf prototypes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..tasks.sparse_columns import SparseColumns
from .grow import (SPLITTER_BEST, SPLITTER_RANDOM, apply_tree, apply_tree_permuted, grow_tree,
                   rows_by_path_feature)
from .grow_sparse import grow_tree_sparse

SPLITTERS = {"best": SPLITTER_BEST, "random": SPLITTER_RANDOM}


@dataclass
class Tree:
    """Node arrays of one tree (index 0 is the root; ``feature < 0`` marks a leaf).

    Attributes
    ----------
    feature, threshold, missing_left, mask, left, right : ndarray
        The test of each internal node: numeric ``code <= threshold``, nominal ``code in mask``; missing
        values go left when ``missing_left``.
    weight : ndarray
        |E(N)|: total (bootstrap-weighted) number of training rows reaching the node.
    depth : ndarray
        Node depth (root = 0).
    gain : ndarray
        h*(N), the impurity reduction of the node's test (0 for leaves).
    leaf_of_row : ndarray
        Leaf of every in-bag training row (-1 for the others).
    column_gain : ndarray
        (D, K) summed reductions per feature and clustering column (if tracked).
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

    @property
    def n_nodes(self) -> int:
        return int(self.feature.shape[0])

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
                    self.right, self.weight, self.depth, self.gain, self.leaf_of_row, column_gain, nominal)

    def apply(self, XR: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Leaf index of each of ``rows``; ``XR`` is the row-major code matrix (n, D)."""
        return apply_tree(XR, np.asarray(rows, dtype=np.int64), self.feature, self.threshold,
                          self.missing_left, self.mask, self.left, self.right, self.nominal)

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
        routed from node ``starts[i]`` (default: the root; see :meth:`rows_by_path_feature`)."""
        rows = np.asarray(rows, dtype=np.int64)
        starts = np.zeros(rows.shape[0], np.int64) if starts is None else np.asarray(starts, np.int64)
        return apply_tree_permuted(XR, rows, np.asarray(perm_rows, dtype=np.int64), int(feature), starts,
                                   self.feature, self.threshold, self.missing_left, self.mask,
                                   self.left, self.right, self.nominal)

    def rows_by_path_feature(self, XR: np.ndarray, rows: np.ndarray):
        """(indptr, positions, first_nodes, leaves): for each feature, the rows whose path tests it and the
        first node of that path testing it (CSR), and the leaf of every row."""
        return rows_by_path_feature(XR, np.asarray(rows, dtype=np.int64), self.feature, self.threshold,
                                    self.missing_left, self.mask, self.left, self.right, self.nominal,
                                    XR.shape[1])


def grow(X, nominal, lower, upper, Z, weights, *, min_leaf=2.0, max_depth=-1, max_features=None,
         splitter="best", track_columns=False, seed=0, resample_constant=False) -> Tree:
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
        form (complete, uncentred; grown by :func:`spark_fr.pct.grow_sparse.grow_tree_sparse`).
    weights : ndarray of float64, shape (n,)
        Row weights (bootstrap counts).
    min_leaf : float
        Minimal (weighted) number of examples in a leaf.
    max_depth : int
        Maximal depth; negative for unlimited.
    max_features : int, optional
        Features evaluated per node (None = all).
    splitter : {'best', 'random'}
        Best threshold per feature, or one random threshold per feature (extra trees).
    track_columns : bool
        Keep per-feature, per-column reductions (for per-target Genie3).
    seed : int
        64-bit tree seed.
    resample_constant : bool
        Skip features that are constant in a node and draw others (scikit-learn's behaviour) instead of
        counting them as candidates (the thesis' and CLUS's).

    Returns
    -------
    Tree
    """
    D = X.shape[0]
    w = np.ascontiguousarray(weights, dtype=np.float64)
    rows = np.flatnonzero(w > 0).astype(np.int64)
    mf = D if max_features is None else int(max_features)
    settings = (float(min_leaf), int(max_depth), mf, SPLITTERS[splitter], bool(track_columns), np.uint64(seed),
                bool(resample_constant))
    if isinstance(Z, SparseColumns):
        out = grow_tree_sparse(X, nominal, lower, upper, Z.indptr, Z.indices, Z.values, Z.n_columns, w, rows,
                               *settings)
    else:
        out = grow_tree(X, nominal, lower, upper, Z, w, rows, *settings)
    n = out[0]
    (feature, threshold, missing_left, mask, left, right, weight, depth, gain) = (a[:n] for a in out[1:10])
    return Tree(feature, threshold, missing_left, mask, left, right, weight, depth, gain, out[10], out[11],
                nominal)


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
        Bootstrap counts used to grow the tree.
    default : ndarray (P,)
        Prototype used where not even the root has a known value.

    Returns
    -------
    ndarray (n_nodes, P)
    """
    rows = np.flatnonzero(tree.leaf_of_row >= 0)
    order = np.argsort(tree.leaf_of_row[rows], kind="stable")  # rows grouped by leaf, in row order within one
    rows = rows[order]
    leaf = tree.leaf_of_row[rows]
    w = weights[rows]
    vals = columns[rows]
    complete = not np.isnan(vals).any()
    # without missing values a node's weight is the same for every column: one column of weights
    wk = w[:, None] if complete else np.where(np.isnan(vals), 0.0, w[:, None])
    terms = vals * wk if complete else np.where(wk > 0, vals, 0.0) * wk
    num = np.zeros((tree.n_nodes, columns.shape[1]))
    den = np.zeros((tree.n_nodes, wk.shape[1]))
    if rows.size:
        # per leaf, the sum over its rows in row order: the order np.add.at adds in, so the same bits, without
        # np.add.at's per-element cost (np.add.reduceat would sum some segments pairwise)
        bounds = np.flatnonzero(np.r_[True, leaf[1:] != leaf[:-1], True])
        for a, b in zip(bounds[:-1], bounds[1:]):
            num[leaf[a]] = terms[a:b].sum(axis=0)
            den[leaf[a]] = wk[a:b].sum(axis=0)
    depth = tree.depth
    levels = [np.flatnonzero(depth == d) for d in range(int(depth.max(initial=0)) + 1)]
    for nodes in levels[::-1]:  # sums up the tree, deepest level first: a node's two children into it
        inner = nodes[tree.feature[nodes] >= 0]
        num[inner] = num[tree.left[inner]] + num[tree.right[inner]]
        den[inner] = den[tree.left[inner]] + den[tree.right[inner]]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = num / np.where(den > 0, den, 1.0)
    parent = np.full(tree.n_nodes, -1, np.int64)
    inner = tree.internal
    parent[tree.left[inner]] = inner
    parent[tree.right[inner]] = inner
    proto = np.empty_like(num)
    proto[0] = np.where(den[0] > 0, mean[0], default)
    for nodes in levels[1:]:  # then down: a node without known values takes its parent's
        proto[nodes] = np.where(den[nodes] > 0, mean[nodes], proto[parent[nodes]])
    return proto


def leaf_label_frequencies(tree: Tree, columns: SparseColumns, weights: np.ndarray) -> SparseColumns:
    """:func:`leaf_prototypes` for complete label-sparse prototype columns (0/1 labels as ones): per leaf, the
    weighted frequency of each label present among its in-bag rows (rows = nodes; internal nodes are empty).

    With integer weights the sums are exact, so the frequencies are those of the dense computation, bit for
    bit; labels absent from a leaf have frequency 0 and are not stored.
    """
    rows = np.flatnonzero(tree.leaf_of_row >= 0)
    counts = columns.indptr[rows + 1] - columns.indptr[rows]
    starts = np.repeat(columns.indptr[rows], counts)
    take = starts + (np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts))
    leaf = np.repeat(tree.leaf_of_row[rows].astype(np.int64), counts)
    label = columns.indices[take]
    terms = columns.values[take] * np.repeat(weights[rows], counts)
    den = np.bincount(tree.leaf_of_row[rows], weights=weights[rows], minlength=tree.n_nodes)
    key = leaf * columns.n_columns + label
    order = np.argsort(key, kind="stable")
    key, terms = key[order], terms[order]
    first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if key.size else np.zeros(0, np.int64)
    sums = np.add.reduceat(terms, first) if key.size else np.zeros(0)
    node, lab = key[first] // columns.n_columns, key[first] % columns.n_columns
    indptr = np.zeros(tree.n_nodes + 1, np.int64)
    np.cumsum(np.bincount(node, minlength=tree.n_nodes), out=indptr[1:])
    return SparseColumns(indptr, lab, sums / den[node], columns.n_columns)
