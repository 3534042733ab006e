"""Prediction by a tree grown with ``--missing fractional``: numba kernels, no Spark.

Sketch
------
A row goes down the tree as in learned prediction, except at a node whose feature it has no value of: it
goes down both branches, with the shares the node recorded while growing (``left_share``: the share of the
node's known training weight that went left; the right branch gets 1 - left_share). A row thus reaches a set
of leaves, each with a proportion (the product of the shares along the path; they add up to 1), as CLUS's
``ClusNode.predictWeighted`` does. :func:`route_fractional` gives these (leaf, proportion) pairs of every row
in CSR form (``indptr`` over the rows); the row's prediction mixes the leaves' values with the proportions
(:func:`mix_values` for dense prototypes, :func:`mix_sparse` for label-sparse ones). A row with every tested
value present reaches one leaf with proportion 1.0, so its prediction is the leaf's value, to the bit.

This is CLUS's mixture for regression, MTR and HMLC (``RegressionStatBase.addPrediction``: the leaves' means
times the shares). For classes (and MLC labels) CLUS adds the leaves' class *counts* times the shares
(``ClassificationStat.addPrediction``), which also weighs a leaf by its training weight; here every task mixes
its leaves' prototypes (class distributions, label frequencies), so a leaf counts by its share alone, the
prediction a row would get from the leaves' distributions in the proportions it reaches them.

The RF score permutes feature f on the out-of-bag rows: only rows that reach a node testing f can change
(:func:`rows_reaching_feature`), and they are routed again from the root with the permuted value of f.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .node_rows import MISSING, goes_left


@njit(cache=True, nogil=True)
def route_fractional(XR, rows, perm_rows, pf, feature, threshold, mask, left, right, nominal, left_share):
    """The leaves each row of ``rows`` reaches and their proportions.

    Parameters
    ----------
    XR : uint8 (n, D)
        Row-major codes.
    rows : int64 (m,)
    perm_rows : int64 (m,)
        Row whose value of feature ``pf`` row i takes (ignored when ``pf`` < 0).
    pf : int
        The permuted feature, or -1.
    feature, threshold, mask, left, right, nominal, left_share : ndarray
        The tree.

    Returns
    -------
    indptr : int64 (m + 1,)
    leaves : int32
    props : float64
        Row i reaches ``leaves[indptr[i]:indptr[i + 1]]`` (left branches first) with these proportions.
    """
    m = rows.shape[0]
    n_nodes = feature.shape[0]
    no_left = np.zeros(n_nodes, np.bool_)
    indptr = np.zeros(m + 1, np.int64)
    cap = m + 16
    leaves = np.empty(cap, np.int32)
    props = np.empty(cap, np.float64)
    stack_node = np.empty(n_nodes + 1, np.int64)
    stack_prop = np.empty(n_nodes + 1, np.float64)
    k = 0
    for i in range(m):
        r = rows[i]
        sp = 1
        stack_node[0] = 0
        stack_prop[0] = 1.0
        while sp > 0:
            sp -= 1
            node = stack_node[sp]
            p = stack_prop[sp]
            while feature[node] >= 0:
                f = feature[node]
                code = XR[perm_rows[i], f] if f == pf else XR[r, f]
                if code == MISSING:  # both ways: the right branch waits on the stack
                    stack_node[sp] = right[node]
                    stack_prop[sp] = p * (1.0 - left_share[node])
                    sp += 1
                    p = p * left_share[node]
                    node = left[node]
                elif goes_left(node, code, nominal[f], threshold, no_left, mask):
                    node = left[node]
                else:
                    node = right[node]
            if k == cap:
                cap *= 2
                grown_l = np.empty(cap, np.int32)
                grown_p = np.empty(cap, np.float64)
                grown_l[:k] = leaves[:k]
                grown_p[:k] = props[:k]
                leaves = grown_l
                props = grown_p
            leaves[k] = node
            props[k] = p
            k += 1
        indptr[i + 1] = k
    return indptr, leaves[:k], props[:k]


@njit(cache=True, nogil=True)
def rows_reaching_feature(XR, rows, feature, threshold, mask, left, right, nominal, n_features):
    """For every feature, the positions (in ``rows``) of the rows that reach a node testing it (going down
    both branches at a missing value): CSR arrays (indptr (D + 1,), positions)."""
    m = rows.shape[0]
    n_nodes = feature.shape[0]
    no_left = np.zeros(n_nodes, np.bool_)
    seen = np.full(n_features, -1, np.int64)
    counts = np.zeros(n_features + 1, np.int64)
    pair_f = np.empty(16 * m + 16, np.int64)
    pair_i = np.empty(16 * m + 16, np.int64)
    n_pairs = 0
    stack = np.empty(n_nodes + 1, np.int64)
    for i in range(m):
        r = rows[i]
        sp = 1
        stack[0] = 0
        while sp > 0:
            sp -= 1
            node = stack[sp]
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
                code = XR[r, f]
                if code == MISSING:
                    stack[sp] = right[node]
                    sp += 1
                    node = left[node]
                elif goes_left(node, code, nominal[f], threshold, no_left, mask):
                    node = left[node]
                else:
                    node = right[node]
    indptr = np.cumsum(counts)
    fill = indptr[:-1].copy()
    positions = np.empty(n_pairs, np.int64)
    for p in range(n_pairs):
        f = pair_f[p]
        positions[fill[f]] = pair_i[p]
        fill[f] += 1
    return indptr, positions


@njit(cache=True, nogil=True)
def mix_values(indptr, leaves, props, values):
    """Per row, ``sum_j props[j] * values[leaves[j]]`` over its (leaf, proportion) pairs; a row reaching one
    leaf with proportion 1.0 gets the leaf's values exactly."""
    m = indptr.shape[0] - 1
    P = values.shape[1]
    out = np.empty((m, P), np.float64)
    for i in range(m):
        a = indptr[i]
        b = indptr[i + 1]
        if b - a == 1 and props[a] == 1.0:
            for c in range(P):
                out[i, c] = values[leaves[a], c]
            continue
        for c in range(P):
            out[i, c] = 0.0
        for j in range(a, b):
            for c in range(P):
                out[i, c] += props[j] * values[leaves[j], c]
    return out


@njit(cache=True, nogil=True)
def mix_sparse(indptr, leaves, props, v_indptr, v_indices, v_values, n_columns):
    """:func:`mix_values` for node values in CSR form (rows = nodes, increasing column indices); returns the
    rows' mixtures in CSR form (indptr, indices, values), columns increasing, zeros not stored."""
    m = indptr.shape[0] - 1
    acc = np.zeros(n_columns, np.float64)
    mark = np.zeros(n_columns, np.bool_)
    cols = np.empty(n_columns, np.int64)
    out_indptr = np.zeros(m + 1, np.int64)
    cap = 16
    for i in range(m):
        for j in range(indptr[i], indptr[i + 1]):
            node = leaves[j]
            cap += v_indptr[node + 1] - v_indptr[node]
    out_indices = np.empty(cap, np.int64)
    out_values = np.empty(cap, np.float64)
    k = 0
    for i in range(m):
        nc = 0
        for j in range(indptr[i], indptr[i + 1]):
            node = leaves[j]
            p = props[j]
            for q in range(v_indptr[node], v_indptr[node + 1]):
                c = v_indices[q]
                if not mark[c]:
                    mark[c] = True
                    acc[c] = 0.0
                    cols[nc] = c
                    nc += 1
                acc[c] += p * v_values[q]
        sorted_cols = np.sort(cols[:nc])
        for t in range(nc):
            c = sorted_cols[t]
            mark[c] = False
            if acc[c] != 0.0:
                out_indices[k] = c
                out_values[k] = acc[c]
                k += 1
        out_indptr[i + 1] = k
    return out_indptr, out_indices[:k], out_values[:k]
