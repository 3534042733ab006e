"""Tests of a numeric feature on the dense target matrix: numba kernels, no Spark.

Sketch
------
A numeric test is "code <= t" between present codes of the feature's :data:`~spark_fr.pct.histogram.Histogram`
over the node, the block of rows with a missing value going to the better side
(:func:`~spark_fr.pct.impurity.evaluate_partition`):

* best splitter: every threshold, the left side's sums grown code by code (:func:`scan_numeric_complete`, the
  hot path, when every target column is complete: the gain (**) unrolled; :func:`scan_numeric_missing`
  otherwise, with per-column counts);
* extra trees: one threshold uniform in the node's value range (:func:`random_threshold`), scored by
  :func:`split_at_threshold`.

Each returns the test's gain h (-inf when no test is valid: both sides must weigh at least ``min_leaf``), and
whether the missing values go left.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..runtime.rng import rand_uniform
from .impurity import add_bin, evaluate_partition, gain_complete, zero
from .jit import BORROWING, INLINE
from .node_rows import MISSING


@njit(**INLINE)
def better(best, h, b, ml):
    """The better of the best test so far ``best`` = (h, threshold code, missing_left) and the test (h, b, ml):
    the new one if its h is strictly greater (the first of equal ones is kept)."""
    if h > best[0]:
        return h, b, ml
    return best


@njit(**INLINE)
def scan_numeric_complete(hist, pc, parent, min_leaf, left):
    """Best threshold of a numeric feature when every target column is complete (the hot path).

    The gain of :func:`~spark_fr.pct.impurity.evaluate_partition` for complete targets, unrolled over the
    thresholds; only ``left.S`` is used. Returns (h, threshold code, missing_left); h = -inf when no threshold
    is valid. Over a small histogram (:func:`~spark_fr.pct.histogram.fill_small_histogram`) the threshold is a
    cell, the caller translates it to a code. Inlined (numba IR) into its callers: called once per node and
    feature, the call's by-value arguments cost a tenth of the grower at the small nodes.
    """
    touched, hw, hs = hist.touched, hist.w, hist.s
    TW, TS, MW = parent.W, parent.sums.S, parent.MW
    LS = left.S
    K = TS.shape[0]
    for k in range(K):
        LS[k] = 0.0
    best = (-np.inf, -1, False)
    LW = 0.0
    base = parent.sT2 / TW
    for t in range(pc.n_known):
        b = touched[t]
        LW += hw[b]
        sl2 = 0.0
        sr2 = 0.0
        for k in range(K):
            a = LS[k] + hs[b, k]
            LS[k] = a
            c = TS[k] - a
            sl2 += a * a
            sr2 += c * c
        RW = TW - LW
        if LW >= min_leaf and RW >= min_leaf:  # missing values (weight MW) go right
            best = better(best, sl2 / LW + sr2 / RW - base, b, MW == 0.0 and LW > RW)
        if MW > 0.0:  # or left
            LW2 = LW + MW
            RW2 = TW - LW2
            if LW2 >= min_leaf and RW2 >= min_leaf and RW2 > 0.0:
                best = better(best, gain_complete(TW, TS, parent.sT2, LW2, LS, hs[MISSING], True), b, True)
    return best


@njit(**BORROWING)
def scan_numeric_missing(hist, pc, parent, min_leaf, left):
    """Best threshold of a numeric feature when target values are missing (per-column counts N_k).

    Returns (h, threshold code, missing_left); h = -inf when no threshold is valid.
    """
    zero(left)
    LW = 0.0
    best = (-np.inf, -1, False)
    for t in range(pc.n_known):
        b = hist.touched[t]
        LW = add_bin(b, hist, True, LW, left, 1.0)
        h, ml = evaluate_partition(parent, LW, left, hist, True, min_leaf)
        best = better(best, h, b, ml)
    return best


@njit(**BORROWING)
def random_threshold(state, f, touched, n_known, lower, upper):
    """Extra-trees threshold code of numeric feature f: u is drawn uniformly in the node's value range
    [lower edge of the first present bin, upper edge of the last], and the test is "code <= t" with t the
    last present code (but the last one) whose upper edge is <= u, or the first present code."""
    lo_b = touched[0]
    if n_known == 1:
        return lo_b
    hi_b = touched[n_known - 1]
    u = lower[f, lo_b] + rand_uniform(state) * (upper[f, hi_b] - lower[f, lo_b])
    t_bin = lo_b
    for t in range(n_known - 1):
        if upper[f, touched[t]] <= u:
            t_bin = touched[t]
    return t_bin


@njit(**BORROWING)
def split_at_threshold(t_bin, hist, pc, parent, has_missing, min_leaf, left):
    """The test "code <= t_bin" of a numeric feature (the extra-trees one): (h, missing_left), h = -inf if
    invalid."""
    zero(left)
    LW = 0.0
    for t in range(pc.n_known):
        b = hist.touched[t]
        if b > t_bin:
            break
        LW = add_bin(b, hist, has_missing, LW, left, 1.0)
    return evaluate_partition(parent, LW, left, hist, has_missing, min_leaf)
