"""The best tests of a tiny node's features, remembered by the order of their codes (numba kernels, no Spark).

Sketch
------
At a node of n <= :data:`MEMO_ROWS` rows searched on the small histogram
(:func:`~spark_fr.pct.histogram.fill_small_histogram`: numeric feature, complete targets, the best splitter),
a feature's cells, and so its best test's gain, depend only on the *order pattern* of its codes over the rows:
which rows share a code and which codes are smaller. Every cell is the sum of its rows in position order, and
the cells come in code order, so two features with the same pattern give the same cells to the bit and the same
scan. The pattern's key is sum_i c_i * n**i, c_i the number of rows whose code is smaller than row i's (equal
codes, equal counts; a smaller code, a smaller count), below n**n.

    pattern(f)            the key of f's codes over the node's rows, -1 if one is missing
    recall(key)           at this node, the key's (present codes, gain, a row of the best cell, missing_left)
    remember(key, ...)    after the small histogram's search of the first feature with the key

A node's number (:func:`next_node`, bumped by the backend's node totals) tags each remembered key, so nothing
is reset between nodes. The threshold is the code of the remembered row for the feature being searched.

Decision: at a node of 2 rows every feature that varies splits it into the same two leaves; most of the
random forest's feature searches are at nodes of 2-4 rows (about two thirds on 20,000 x 200 x 5). A feature's
search there costs a histogram fill and a scan (about 180-430 cycles); a remembered pattern costs reading its
n codes. The trees are the same to the bit.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from .jit import INLINE, KERNEL
from .histogram import small_node_code
from .node_rows import MISSING

#: the most rows of a node whose features' best tests are remembered by their codes' order pattern
MEMO_ROWS = 4

#: per pattern key (``MEMO_ROWS ** MEMO_ROWS`` of them): the node number ``tag`` it was found at, the feature's
#: number of present codes ``nt``, the best test's gain ``h`` (-inf: none), the position ``row`` (in the node) of a
#: row of its best cell (-1: none) and ``missing_left``; ``node`` (1,) the current node's number and ``codes`` the
#: codes of the feature being searched
OrderMemo = namedtuple("OrderMemo", ["tag", "nt", "h", "row", "missing_left", "node", "codes"])


@njit(**KERNEL)
def new_order_memo():
    """An empty :data:`OrderMemo` (no key is tagged with a node number)."""
    size = MEMO_ROWS ** MEMO_ROWS
    return OrderMemo(np.full(size, -1, np.int64), np.zeros(size, np.int64), np.zeros(size), np.zeros(size, np.int64),
                     np.zeros(size, np.bool_), np.zeros(1, np.int64), np.zeros(MEMO_ROWS, np.uint8))


@njit(**INLINE)
def next_node(memo):
    """Start a node: the keys remembered at the previous ones no longer hold."""
    memo.node[0] += 1


@njit(**INLINE)
def pattern(memo, feature_codes, f, nr, start, n):
    """The order pattern key of feature f's codes over the node rows ``[start, start + n)`` (read as
    :func:`~spark_fr.pct.histogram.fill_small_histogram` reads them, kept in ``memo.codes``); -1 if a code is
    missing (its cell is handled apart) or the node has more than :data:`MEMO_ROWS` rows."""
    if n > MEMO_ROWS:
        return -1
    codes = memo.codes
    for i in range(n):
        codes[i] = small_node_code(feature_codes, nr, start + i, f)
    key = 0
    scale = 1
    for i in range(n):
        ci = codes[i]
        if ci == MISSING:
            return -1
        smaller = 0
        for j in range(n):
            smaller += codes[j] < ci
        key += smaller * scale
        scale *= n
    return key


@njit(**INLINE)
def known(memo, key):
    """Whether ``key`` was remembered at this node."""
    return memo.tag[key] == memo.node[0]


@njit(**INLINE)
def threshold_code(memo, row):
    """The threshold code of a remembered best cell's ``row`` for the feature being searched (-1: none)."""
    return np.int64(memo.codes[row]) if row >= 0 else np.int64(-1)


@njit(**INLINE)
def remember(memo, key, n, nt, h, code, ml):
    """Keep the search's result for ``key`` at this node of ``n`` rows: ``nt`` present codes, gain ``h``, the best
    cell's ``code`` (-1: none; stored as the position of one of its rows) and ``ml``."""
    row = -1
    if code >= 0:
        for i in range(n):
            if memo.codes[i] == code:
                row = i
                break
    memo.tag[key] = memo.node[0]
    memo.nt[key] = nt
    memo.h[key] = h
    memo.row[key] = row
    memo.missing_left[key] = ml
