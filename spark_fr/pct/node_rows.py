"""The rows of the nodes being grown, with their weights in the node: numba kernels, no Spark.

Sketch
------
A :data:`NodeRows` is a buffer of (row, weight) pairs; a node being grown is a range ``[start, end)`` of it.
The weight of a pair is the row's weight in that node: its bootstrap count, times the shares of the splits
that sent it down both branches (``--missing fractional``). Every kernel of the growers reads a node's rows
and weights by position, so the two ways of handling a missing feature value share them:

* ``learned`` (:func:`partition`): a row goes to one child, so a node's range is partitioned in place,
  rows going left first (as scikit-learn does); the children are ``[start, mid)`` and ``[mid, end)``.
* ``fractional`` (:func:`split_fractional`, CLUS's rule): the range is partitioned in place into
  ``[known left | missing | known right]``; a row whose value is missing goes to both children, its weight
  multiplied by the share of the node's known weight going to each. The larger child keeps its part of the
  parent's range (the missing rows' weights scaled in place), the smaller one is copied to the top of the
  buffer, above every range still to be grown (:func:`free_start`), which grows by doubling when needed.
  Without missing values in the node the split is the learned partition, to the bit.

Memory: ``learned`` never copies. ``fractional`` holds, besides the n rows, the copied smaller children of
the nodes on the current path: at most about n more pairs, plus the duplicated missing rows.

Node codes: a tree on at most :data:`NODE_CODES_MAX_FEATURES` features also keeps, at every position, the codes
of its row (``codes``, positions x D, row-major, each row padded to whole 8-byte words), moved with the row (a
word at a time) by every partition and copy, and every
kernel reads a row's code at a position through :func:`code_at`. Decision: a node's rows are scattered over
the n rows of the code matrix, so on tall data (10^6 rows x 50 features: 50 MB of codes) a deep node's
histograms missed the cache once per row and candidate feature; in node order a node's codes are one
contiguous block, read in order, and a partition moves D more bytes per row that changes side. The codes
are the same, so the trees are the same to the bit. Wide data (a row's codes longer than a few cache lines)
keep reading the feature-major matrix, where one feature's codes are contiguous.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from .jit import BORROWING, INLINE, KERNEL

MISSING = 255
#: the most features for which a tree keeps its rows' codes in node order (module sketch)
NODE_CODES_MAX_FEATURES = 64

#: rows (int64) and their weights in the node holding each position (float64); ``codes`` (uint8, positions x
#: D rounded up to a multiple of 8): the codes of the row at each position, or (0, 0) when the tree reads them from
#: the feature-major matrix (the default when built in Python); ``targets`` (float64, positions x K): the dense
#: clustering targets of the row at each position (the dense target backend's, moved with the rows), or (0, 0)
NodeRows = namedtuple("NodeRows", ["rows", "weights", "codes", "targets"],
                      defaults=(np.zeros((0, 0), np.uint8), np.zeros((0, 0), np.float64)))
#: the tests of a tree's nodes, all that routing a row needs: per node the tested ``feature`` (-1: a leaf), the
#: numeric ``threshold`` ("code <= threshold" goes left), ``missing_left`` (where a learned test sends a missing
#: value), the nominal subset ``mask`` (4 x uint64: 256 bits), the children ``left`` and ``right``, and
#: ``left_share`` (fractional trees: the share of the node's known weight that went left; empty otherwise);
#: per feature, ``nominal``
TreeTests = namedtuple("TreeTests", ["feature", "threshold", "missing_left", "mask", "left", "right", "nominal",
                                     "left_share"])
#: the children of a split node: their ranges of the buffer (left ``[left_start, left_end)``, right
#: ``[right_start, right_end)``) and how many of the node's rows, missing the tested value, went to both
Children = namedtuple("Children", ["n_missing", "left_start", "left_end", "right_start", "right_end"])


@njit(**KERNEL)
def node_rows(rows, w, capacity, X=None, Z=None):
    """The buffer of a tree's root: ``rows`` (used in place when ``capacity`` is its length) and ``w[rows]``; with
    the feature codes ``X`` (D, n) of at most :data:`NODE_CODES_MAX_FEATURES` features, the rows' codes too; with a
    dense target matrix ``Z`` (n, K), the rows' targets."""
    m = rows.shape[0]
    buf = rows if capacity <= m else np.empty(capacity, np.int64)
    weights = np.empty(max(capacity, m), np.float64)
    for i in range(m):
        buf[i] = rows[i]
        weights[i] = w[rows[i]]
    codes = np.zeros((0, 0), np.uint8)
    if X is not None and X.shape[0] <= NODE_CODES_MAX_FEATURES:
        codes = _codes_of(X, buf, m, max(capacity, m))
    if Z is None:
        return NodeRows(buf, weights, codes, np.zeros((0, 0), np.float64))
    return NodeRows(buf, weights, codes, _targets_of(Z, buf, m, max(capacity, m)))


@njit(**KERNEL)
def _targets_of(Z, rows, m, capacity):
    """The targets of ``rows[:m]``: (n, K) -> (capacity, K)."""
    targets = np.empty((capacity, Z.shape[1]), np.float64)
    for i in range(m):
        targets[i] = Z[rows[i]]
    return targets


@njit(**KERNEL)
def _codes_of(X, rows, m, capacity):
    """The codes of ``rows[:m]``: (D, n) -> (capacity, D'), a block of rows at a time (reads in row order); D' is D
    rounded up to whole 8-byte words (zero padding), so that a row's codes move as words (:func:`_swap`)."""
    D = X.shape[0]
    codes = np.zeros((capacity, (D + 7) // 8 * 8), np.uint8)
    for i0 in range(0, m, 256):
        i1 = min(i0 + 256, m)
        for f in range(D):
            for i in range(i0, i1):
                codes[i, f] = X[f, rows[i]]
    return codes


@njit(**INLINE)
def code_at(X, f, nr, i):
    """The code of feature f of the row at position i: from the node codes when the tree keeps them, else from
    the feature-major matrix ``X``."""
    if nr.codes.shape[1] > 0:
        return nr.codes[i, f]
    return X[f, nr.rows[i]]


@njit(**KERNEL)
def reserve(nr, size):
    """``nr``, or a copy with at least ``size`` positions (capacity doubled) when it has fewer."""
    cap = nr.rows.shape[0]
    if size <= cap:
        return nr
    new_cap = max(size, 2 * cap)
    rows = np.empty(new_cap, np.int64)
    weights = np.empty(new_cap, np.float64)
    rows[:cap] = nr.rows
    weights[:cap] = nr.weights
    return NodeRows(rows, weights, _grown(nr.codes, cap, new_cap), _grown(nr.targets, cap, new_cap))


@njit(**KERNEL)
def _grown(a, cap, new_cap):
    """A per-position matrix ``a`` with room for ``new_cap`` positions (its first ``cap`` kept), or ``a`` itself
    when it is kept for no position ((0, 0))."""
    if a.shape[1] == 0:
        return a
    out = np.empty((new_cap, a.shape[1]), a.dtype)
    out[:cap] = a
    return out


@njit(**INLINE)
def _swap(nr, i, j):
    """Swap the pairs at positions i and j, with their node codes and targets (the codes 8 bytes at a time: a row's
    codes are whole words, :func:`_codes_of`; byte by byte, a tall tree's partitions took 13-15 % longer)."""
    r = nr.rows[i]
    nr.rows[i] = nr.rows[j]
    nr.rows[j] = r
    v = nr.weights[i]
    nr.weights[i] = nr.weights[j]
    nr.weights[j] = v
    c = nr.codes.view(np.uint64)
    for f in range(c.shape[1]):
        b = c[i, f]
        c[i, f] = c[j, f]
        c[j, f] = b
    t = nr.targets
    for k in range(t.shape[1]):
        z = t[i, k]
        t[i, k] = t[j, k]
        t[j, k] = z


@njit(**INLINE)
def goes_left(tests, node, code, nominal_f):
    """Whether a row with this code of the node's feature (nominal or not) goes left: a missing code as the
    node learned, a nominal code if it is in the node's subset mask, a numeric code if ``code <= threshold``."""
    if code == MISSING:
        return tests.missing_left[node]
    if nominal_f:
        return (tests.mask[node, code >> 6] >> np.uint64(code & 63)) & np.uint64(1) == np.uint64(1)
    return code <= tests.threshold[node]


@njit(**INLINE)
def _two_way(X, tests, node, nr, start, end, by_missing):
    """Reorder the node's pairs ``[start, end)`` in place so that those of the first kind come first: the rows
    going left by the node's test, or (``by_missing``) those missing the value of its feature; a pair of the
    other kind is swapped with the last unchecked one. Returns the position of the first pair of the other
    kind."""
    f = tests.feature[node]
    nominal_f = tests.nominal[f]
    i = start
    j = end - 1
    while i <= j:
        code = code_at(X, f, nr, i)
        if (code == MISSING) if by_missing else goes_left(tests, node, code, nominal_f):
            i += 1
        else:
            _swap(nr, i, j)
            j -= 1
    return i


@njit(**BORROWING)
def partition(X, tests, node, nr, start, end):
    """Reorder the node's pairs ``[start, end)`` in place so that the rows going left by the node's test come
    first; returns the position of the first right-going row."""
    return _two_way(X, tests, node, nr, start, end, False)


@njit(**BORROWING)
def _missing_first(X, tests, node, nr, start, end):
    """Reorder ``[start, end)`` so that the rows missing the value of the node's feature come first; returns
    where they end. Nothing moves when none is missing."""
    f = tests.feature[node]
    for i in range(start, end):
        if code_at(X, f, nr, i) == MISSING:
            return _two_way(X, tests, node, nr, start, end, True)
    return start


@njit(**BORROWING)
def _weight_sum(nr, start, end):
    s = 0.0
    for i in range(start, end):
        s += nr.weights[i]
    return s


@njit(**BORROWING)
def _copy_scaled(nr, src, end, dst, m_start, m_end, share):
    """Copy the pairs ``[src, end)`` (and their codes and targets) to ``dst``; the weights of those in
    ``[m_start, m_end)`` times ``share``."""
    for i in range(src, end):
        k = dst + i - src
        nr.rows[k] = nr.rows[i]
        v = nr.weights[i]
        nr.weights[k] = v * share if m_start <= i < m_end else v
        c = nr.codes.view(np.uint64)
        for f in range(c.shape[1]):
            c[k, f] = c[i, f]
        t = nr.targets
        for j in range(t.shape[1]):
            t[k, j] = t[i, j]


@njit(**BORROWING)
def free_start(end, stack, sp):
    """The first buffer position no range still to be grown uses: after the popped node's ``end`` and every
    range on the stack ``stack[:sp]`` of (node, start, end)."""
    top = end
    for s in range(sp):
        if stack[s, 2] > top:
            top = stack[s, 2]
    return top


@njit(**KERNEL)
def split_fractional(X, tests, node, nr, start, end, top):
    """Split the node ``[start, end)`` by CLUS's rule for missing values (module sketch); the node's
    ``missing_left`` must be False (the missing rows are first partitioned to the right).

    The share of the node's known weight going left, ``share``, is the weight of the rows going left over
    that of the rows with a known value; the missing rows go left with weight ``w * share`` and right with
    ``w * (1 - share)``.

    Returns
    -------
    tuple
        ``(nr, share, children)``: the buffer (reallocated if it had to grow), the share, and the
        :data:`Children` (their ranges, and the number of rows with a missing value).
    """
    mid = partition(X, tests, node, nr, start, end)
    b = _missing_first(X, tests, node, nr, mid, end)
    wl = _weight_sum(nr, start, mid)
    wr = _weight_sum(nr, b, end)
    share = wl / (wl + wr) if wl + wr > 0.0 else 0.5
    n_missing = b - mid
    if n_missing == 0:
        return nr, share, Children(0, start, mid, mid, end)
    n_left = b - start
    n_right = end - mid
    if n_left <= n_right:  # the left child is copied, the right one keeps [mid, end)
        nr = reserve(nr, top + n_left)
        _copy_scaled(nr, start, b, top, mid, b, share)
        for i in range(mid, b):
            nr.weights[i] *= 1.0 - share
        return nr, share, Children(n_missing, top, top + n_left, mid, end)
    nr = reserve(nr, top + n_right)
    _copy_scaled(nr, mid, end, top, mid, b, 1.0 - share)
    for i in range(mid, b):
        nr.weights[i] *= share
    return nr, share, Children(n_missing, start, b, top, top + n_right)


#: the (row, node, weight) memberships of the leaves of a fractional tree
Members = namedtuple("Members", ["rows", "nodes", "weights"])


@njit(**KERNEL)
def new_members(capacity):
    """Room for ``capacity`` leaf memberships (0: a learned tree, whose leaves are ``leaf_of_row``)."""
    return Members(np.empty(capacity, np.int64), np.empty(capacity, np.int32), np.empty(capacity, np.float64))


@njit(**KERNEL)
def add_members(mb, count, nr, start, end, node):
    """Append the pairs ``[start, end)`` of leaf ``node`` to the memberships; returns (mb, count)."""
    need = count + end - start
    cap = mb.rows.shape[0]
    if need > cap:
        new_cap = max(need, 2 * cap)
        grown = new_members(new_cap)
        grown.rows[:count] = mb.rows[:count]
        grown.nodes[:count] = mb.nodes[:count]
        grown.weights[:count] = mb.weights[:count]
        mb = grown
    for i in range(start, end):
        mb.rows[count] = nr.rows[i]
        mb.nodes[count] = node
        mb.weights[count] = nr.weights[i]
        count += 1
    return mb, count


@njit(**KERNEL)
def trimmed(mb, count):
    """The first ``count`` memberships (views)."""
    return Members(mb.rows[:count], mb.nodes[:count], mb.weights[:count])
