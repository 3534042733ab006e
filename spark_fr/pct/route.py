"""Routing rows down a grown tree: numba kernels, no Spark.

Sketch
------
Every kernel reads the tree's tests as one :data:`~spark_fr.pct.node_rows.TreeTests` and sends a row left or
right at a node by :func:`~spark_fr.pct.node_rows.goes_left`, the test the grower partitions by.

*Learned trees* (:func:`walk_rows`, on the nodes' packed :func:`node_records`, several rows in lockstep): a row
goes down one path to one leaf; a missing value goes where the node learned to send it. The RF score permutes
feature f on the out-of-bag rows (:func:`permutation`): only the rows whose path tests f can change
(:func:`rows_by_path_feature`), each re-routed from the first node of its path testing f, unless its new code of a numeric f lies in the range of codes its path
lets through (the same path, the same leaf: no walk).

*Fractional trees* (``--missing fractional``, :func:`route_fractional`): at a node whose feature it has no value
of, a row goes down both branches, with the shares the node recorded while growing (``left_share``: the share of
the node's known training weight that went left; the right branch gets 1 - left_share). A row thus reaches a set
of leaves, each with a proportion (the product of the shares along the path; they add up to 1), as CLUS's
``ClusNode.predictWeighted`` does (the rows that meet no missing code are walked by :func:`walk_rows` first); the (leaf, proportion) pairs of every row come in CSR form (``indptr`` over
the rows), and the row's prediction mixes the leaves' values with the proportions (:func:`mix_values` for dense
prototypes, :func:`mix_sparse` for label-sparse ones). A row with every tested value present reaches one leaf
with proportion 1.0, so its prediction is the leaf's value, to the bit.

This is CLUS's mixture for regression, MTR and HMLC (``RegressionStatBase.addPrediction``: the leaves' means
times the shares). For classes (and MLC labels) CLUS adds the leaves' class *counts* times the shares
(``ClassificationStat.addPrediction``), which also weighs a leaf by its training weight; here every task mixes
its leaves' prototypes (class distributions, label frequencies), so a leaf counts by its share alone, the
prediction a row would get from the leaves' distributions in the proportions it reaches them. The RF score of
a fractional tree re-routes the rows that reach a node testing the permuted feature (:func:`rows_by_path_feature`
too): from the first node testing it when the row goes down one path, else from the root.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..runtime.rng import rand_below
from .jit import INLINE, KERNEL
from .node_rows import MISSING, goes_left

#: rows walked together by :func:`walk_rows`
LANES = 16


# ---- learned trees ---------------------------------------------------------------------------------------

@njit(**INLINE)
def next_node(tests, node, code):
    """The child of ``node`` a row with this code of the node's feature goes to."""
    if goes_left(tests, node, code, tests.nominal[tests.feature[node]]):
        return tests.left[node]
    return tests.right[node]


@njit(**KERNEL)
def node_records(tests):
    """The routing fields of every node packed as one record: (feature, threshold, left, right), int32 (n_nodes, 4):
    16 bytes, so a step of a walk reads one cache line where the separate arrays cost one each."""
    n = tests.feature.shape[0]
    records = np.empty((n, 4), np.int32)
    for node in range(n):
        records[node, 0] = tests.feature[node]
        records[node, 1] = tests.threshold[node]
        records[node, 2] = tests.left[node]
        records[node, 3] = tests.right[node]
    return records


@njit(**KERNEL)
def walk_rows(XR, rows, perm_rows, pf, starts, tests, records):
    """The leaf each row of ``rows`` reaches from node ``starts[i]``, feature ``pf`` taking the value of row
    ``perm_rows[i]`` (``pf`` < 0: no feature permuted); ``XR`` the row-major codes (n, D), ``records`` the tree's
    :func:`node_records`. A missing code goes where the node learned to send it, or, in a fractional tree
    (``tests.left_share`` not empty), down both branches: such a row gets -1 here (:func:`route_fractional` walks it).

    Decision: :data:`LANES` rows walk in lockstep, a step of each in turn. A walk is a chain of dependent reads of
    nodes scattered over the tree's arrays (most of them cache misses on a tree of 10^6 rows); one row at a time
    waits for each read, several rows have theirs in flight together (measured, 368,051 rows from the root of a
    779,425-node tree: 0.37-0.46 s one row at a time, 0.12-0.17 s with packed records and 16 lanes). A lane whose
    row reaches its leaf takes the next row at once (walks differ in length: lanes waiting for the longest walk
    of their batch of 16 left fewer reads in flight; the RF score's 1.36 million walks of a tall tree, 10^6 rows x
    50 features, from the first node testing the permuted feature: 0.41-0.50 s CPU in batches, 0.37-0.44 s so;
    32 lanes were no faster).
    """
    both_ways = tests.left_share.shape[0] > 0
    nominal = tests.nominal
    m = rows.shape[0]
    out = np.empty(m, np.int32)
    node = np.empty(LANES, np.int64)
    lane_row = np.full(LANES, -1, np.int64)  # the position (in rows) each lane walks, -1: none left
    following = 0  # the next row to start
    for j in range(min(LANES, m)):
        lane_row[j] = j
        node[j] = starts[j]
        following += 1
    walking = min(LANES, m)
    while walking > 0:
        for j in range(LANES):
            i = lane_row[j]
            if i < 0:
                continue
            nd = node[j]
            f = records[nd, 0] if nd >= 0 else -1
            if f < 0:  # a leaf (or -1: both ways): the lane takes the next row
                out[i] = nd
                if following < m:
                    lane_row[j] = following
                    node[j] = starts[following]
                    following += 1
                else:
                    lane_row[j] = -1
                    walking -= 1
                continue
            code = XR[perm_rows[i], f] if f == pf else XR[rows[i], f]
            if code == MISSING:
                if both_ways:
                    node[j] = -1
                    continue
                nd = records[nd, 2] if tests.missing_left[nd] else records[nd, 3]
            elif nominal[f]:
                nd = records[nd, 2] if goes_left(tests, nd, code, True) else records[nd, 3]
            else:
                nd = records[nd, 2] if code <= records[nd, 1] else records[nd, 3]
            node[j] = nd
    return out


# ---- (feature, row) pairs, gathered as rows are routed, then grouped by feature --------------------------

@njit(**KERNEL)
def rows_by_path_feature(XR, rows, tests, records, n_features):
    """For every feature, the positions (in ``rows``) of the rows whose path tests it, the first node of the path
    that does, and the codes of it that keep the row on its path; a fractional tree's row goes down both branches
    at a missing value (``left_share`` not empty), a learned tree's where the node sends it.

    Permuting f can only change the leaves of these rows: the permutation score re-routes them alone, from the
    first node testing f (the root for a fractional row that goes both ways somewhere). A row going down one
    path keeps its leaf exactly when its new code of a numeric f lies in ``[lo, hi]`` (every test of f passed the
    same way; outside, it leaves the path, hence reaches another leaf): no walk. An empty range (``lo > hi``: a
    nominal f, f missing on a learned path, a fractional row that goes both ways) means "walk". Returns CSR arrays
    (indptr (D + 1,), positions, first_nodes, lo, hi) and the leaf of every row (-1: it reaches several).

    Decision: one kernel for both kinds of tree, its loop written out in full: noting a pair through a helper
    that takes or returns the arrays cost atomic reference counts at every step of every path (1.6-2.4x the
    kernel's time, 300,000 rows at full depth); the room for a row's pairs is made before its walk, not at every
    pair (with the thresholds from the records: 0.32-0.38 s -> 0.18-0.25 s CPU, a tall tree, 200,000 rows).
    """
    nominal = tests.nominal  # the nodes' fields from their packed records (node_records): one cache line a step
    both_ways = tests.left_share.shape[0] > 0
    m = rows.shape[0]
    seen = np.full(n_features, -1, np.int64)
    pair_of = np.zeros(n_features, np.int64)  # the pair of feature f of the current row
    counts = np.zeros(n_features + 1, np.int64)
    room = 16 * m + 16
    # (feature, position, node, lo, hi) of each pair found, narrow: some 20 pairs a row (returned as int64)
    pair_f = np.empty(room, np.int32)
    pair_i = np.empty(room, np.int32)
    pair_n = np.empty(room, np.int32)
    pair_lo = np.empty(room, np.int16)
    pair_hi = np.empty(room, np.int16)
    n_pairs = 0
    leaves = np.empty(m, np.int32)
    stack = np.empty(records.shape[0] + 1, np.int64)
    for i in range(m):
        r = rows[i]
        while n_pairs + min(n_features, records.shape[0]) > pair_f.shape[0]:  # a row's pairs: one a feature at most
            pair_f = np.concatenate((pair_f, np.empty_like(pair_f)))
            pair_i = np.concatenate((pair_i, np.empty_like(pair_i)))
            pair_n = np.concatenate((pair_n, np.empty_like(pair_n)))
            pair_lo = np.concatenate((pair_lo, np.empty_like(pair_lo)))
            pair_hi = np.concatenate((pair_hi, np.empty_like(pair_hi)))
        sp = 1
        stack[0] = 0
        row_start = n_pairs
        split = False  # a fractional row that went down both branches somewhere
        while sp > 0:
            sp -= 1
            node = stack[sp]
            while records[node, 0] >= 0:
                f = records[node, 0]
                if seen[f] != i:  # the first node of the path testing f
                    seen[f] = i
                    pair_f[n_pairs] = f
                    pair_i[n_pairs] = i
                    pair_n[n_pairs] = node
                    pair_lo[n_pairs] = 1 if nominal[f] else 0  # empty for a nominal f: always walk
                    pair_hi[n_pairs] = 0 if nominal[f] else MISSING - 1
                    pair_of[f] = n_pairs
                    n_pairs += 1
                    counts[f + 1] += 1
                code = XR[r, f]
                if both_ways and code == MISSING:  # the right branch waits on the stack
                    stack[sp] = records[node, 3]
                    sp += 1
                    node = records[node, 2]
                    split = True
                    continue
                p = pair_of[f]
                if code == MISSING:  # a learned direction: any known code may go another way
                    pair_lo[p] = 1
                    pair_hi[p] = 0
                    node = records[node, 2] if tests.missing_left[node] else records[node, 3]
                elif nominal[f]:
                    node = records[node, 2] if goes_left(tests, node, code, True) else records[node, 3]
                else:  # the threshold from the node's record: the cache line the step has read already
                    t = np.int64(records[node, 1])
                    if code <= t:
                        pair_hi[p] = min(t, pair_hi[p])
                        node = records[node, 2]
                    else:
                        pair_lo[p] = max(t + 1, pair_lo[p])
                        node = records[node, 3]
            leaves[i] = node
        if split:  # its paths are many: every permutation of a feature it meets is walked, from the root
            leaves[i] = -1  # and it reaches several leaves
            pair_lo[row_start:n_pairs] = 1
            pair_hi[row_start:n_pairs] = 0
            pair_n[row_start:n_pairs] = 0
    indptr, positions, first_nodes, lo, hi = group_by_feature(counts, pair_f[:n_pairs], pair_i, pair_n, pair_lo,
                                                              pair_hi)
    return indptr, positions, first_nodes, leaves, lo, hi


@njit(**KERNEL)
def group_by_feature(counts, pair_f, pair_i, pair_n, pair_lo, pair_hi):
    """The pairs of :func:`rows_by_path_feature` (feature ``pair_f[p]``, position, node, lo, hi; ``counts[f + 1]``
    of feature f) grouped by feature, in the order they were found: indptr (D + 1,), positions, first_nodes, lo,
    hi (int64)."""
    n_pairs = pair_f.shape[0]
    indptr = np.cumsum(counts)
    fill = indptr[:-1].copy()
    positions = np.empty(n_pairs, np.int64)
    first_nodes = np.empty(n_pairs, np.int64)
    lo = np.empty(n_pairs, np.int64)
    hi = np.empty(n_pairs, np.int64)
    for p in range(n_pairs):
        f = pair_f[p]
        positions[fill[f]] = pair_i[p]
        first_nodes[fill[f]] = pair_n[p]
        lo[fill[f]] = pair_lo[p]
        hi[fill[f]] = pair_hi[p]
        fill[f] += 1
    return indptr, positions, first_nodes, lo, hi


@njit(**KERNEL)
def draw_permutation(state_seed, perm):
    """Fill ``perm`` with a uniformly random permutation of range(len(perm)) (Fisher-Yates with the SplitMix64
    stream): :func:`permutation`'s draw into a buffer the caller reuses."""
    state = np.empty(1, np.uint64)
    state[0] = state_seed
    n = perm.shape[0]
    for i in range(n):
        perm[i] = i
    for i in range(n - 1, 0, -1):
        j = rand_below(state, i + 1)
        tmp = perm[i]
        perm[i] = perm[j]
        perm[j] = tmp


@njit(**KERNEL)
def permutation(state_seed, n):
    """A uniformly random permutation of range(n) (Fisher-Yates with the SplitMix64 stream)."""
    p = np.empty(n, np.int64)
    draw_permutation(state_seed, p)
    return p


# ---- fractional trees ------------------------------------------------------------------------------------

@njit(**KERNEL)
def route_fractional(XR, rows, perm_rows, pf, starts, tests, records):
    """The leaves each row of ``rows`` reaches and their proportions, walking from node ``starts[i]``.

    Parameters
    ----------
    XR : uint8 (n, D)
        Row-major codes.
    rows : int64 (m,)
    perm_rows : int64 (m,)
        Row whose value of feature ``pf`` row i takes (ignored when ``pf`` < 0).
    pf : int
        The permuted feature, or -1.
    starts : int64 (m,)
        The node row i starts from: the root, or (a row going down one path) a node of its path above which
        nothing changes (the first node testing ``pf``: the proportion there is exactly 1.0).
    tests : TreeTests
        The tree (with its ``left_share``).
    records : int32 (n_nodes, 4)
        Its :func:`node_records`: a row that meets no missing code goes down one path, walked by
        :func:`walk_rows`; the others here, down both branches where they do.

    Returns
    -------
    indptr : int64 (m + 1,)
    leaves : int32
    props : float64
        Row i reaches ``leaves[indptr[i]:indptr[i + 1]]`` (left branches first) with these proportions.
    """
    # the tree's arrays as locals, each row's step through goes_left: reading them through ``tests`` at every
    # step (and next_node's second missing-value check) made the kernel 1.5x slower (10^6 rows, full depth)
    feature, left, right, share, nominal = tests.feature, tests.left, tests.right, tests.left_share, tests.nominal
    m = rows.shape[0]
    n_nodes = feature.shape[0]
    indptr = np.zeros(m + 1, np.int64)
    cap = m + 16
    leaves = np.empty(cap, np.int32)
    props = np.empty(cap, np.float64)
    stack_node = np.empty(n_nodes + 1, np.int64)
    stack_prop = np.empty(n_nodes + 1, np.float64)
    single = walk_rows(XR, rows, perm_rows, pf, starts, tests, records)  # -1: a row going down both branches
    k = 0
    for i in range(m):
        r = rows[i]
        sp = 1
        stack_node[0] = starts[i] if single[i] < 0 else single[i]  # a leaf already, for a row on one path
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
                    stack_prop[sp] = p * (1.0 - share[node])
                    sp += 1
                    p = p * share[node]
                    node = left[node]
                elif goes_left(tests, node, code, nominal[f]):
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


@njit(**KERNEL)
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


@njit(**KERNEL)
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
