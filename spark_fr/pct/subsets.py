"""Tests of a nominal feature: subsets of its present categories, on a histogram (numba kernels, no Spark).

Sketch
------
A nominal test is "code in A" for a subset A of the categories present in the node (``touched[:n_known]`` of
the feature's :data:`~spark_fr.pct.histogram.PresentCodes`), scored on the feature's
:data:`~spark_fr.pct.histogram.Histogram` against the node's :data:`~spark_fr.pct.impurity.Totals` by
:func:`~spark_fr.pct.impurity.evaluate_partition` (the missing values to the better side):

* best splitter: CLUS's greedy search (:func:`subset_greedy`), for any number of categories;
* extra trees, or a single category present: one random subset (:func:`subset_random`).

The chosen subset is written as a 256-bit mask (4 x uint64) into the search's ``mask``. Both backends use
these searches: the label-sparse one on a histogram over the node's present labels.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..runtime.rng import rand_uniform
from .config import SPLITTER_RANDOM
from .impurity import add_bin, evaluate_partition, zero
from .jit import BORROWING


@njit(**BORROWING)
def mask_of(mask, cats, in_a, mcat):
    """The 256-bit mask (4 x uint64) of the categories ``cats[t]`` with ``in_a[t]``."""
    for j in range(4):
        mask[j] = np.uint64(0)
    for t in range(mcat):
        if in_a[t]:
            c = cats[t]
            mask[c >> 6] |= np.uint64(1) << np.uint64(c & 63)


@njit(**BORROWING)
def _score_subset(search, hist, pc, parent, has_missing, min_leaf, left):
    """The test "code in A" for the subset A of the present categories marked in ``search.in_a``: (h,
    missing_left) by :func:`~spark_fr.pct.impurity.evaluate_partition`, h = -inf if invalid; ``left`` holds A's
    sums."""
    cats, in_a = hist.touched, search.in_a
    zero(left)
    LW = 0.0
    for t in range(pc.n_known):
        if in_a[t]:
            LW = add_bin(cats[t], hist, has_missing, LW, left, 1.0)
    return evaluate_partition(parent, LW, left, hist, has_missing, min_leaf)


@njit(**BORROWING)
def subset_random(search, hist, pc, parent, has_missing, min_leaf, left):
    """One random proper subset A (each category in A with probability 1/2, drawn again while A is empty or
    full); with a single category, A = {it} (the test then separates the missing values).

    Returns (h, missing_left), h = -inf if invalid, and writes the mask of A into ``search.mask``.
    """
    cats, mcat, in_a = hist.touched, pc.n_known, search.in_a
    if mcat == 1:
        in_a[0] = True
    else:
        cnt = 0
        while cnt == 0 or cnt == mcat:
            cnt = 0
            for t in range(mcat):
                in_a[t] = rand_uniform(search.state) < 0.5
                if in_a[t]:
                    cnt += 1
    h, ml = _score_subset(search, hist, pc, parent, has_missing, min_leaf, left)
    mask_of(search.mask, cats, in_a, mcat)
    return h, ml


@njit(**BORROWING)
def subset_greedy(search, hist, pc, parent, has_missing, min_leaf, left):
    """Greedy forward selection of A (CLUS's ``SubsetSplit``): start empty, add the category whose addition
    gives the best valid split (the first of equal ones), stop when that does not beat the previous round or
    A would hold every category. Each accepted round is better than the one before, so the last one is the
    best.

    Why greedy even for a few categories, where all 2^(m-1) - 1 subsets could be tried: the search is the
    test's chance to fit noise. An exhaustive search for up to 8 categories (this module's rule before issue
    23) made random features with 6 and 8 categories rank 21st and 2nd of 82 by HMLC Genie3 on cellcycle,
    where CLUS ranks them 78th and 40th; with the greedy search they rank 74th and 42nd (leaves of 10).
    Nominal features with many categories still get more chances than numeric ones (a random 16-category
    feature ranks 1st by Genie3 in CLUS too): see docs/decisions.md ("Nominal tests").

    A and its complement are one test; the mask written is the side without the first present category (so
    the orientation does not depend on which of two equal gains rounds higher, e.g. {a} or {b} of two).

    Returns (h, missing_left), h = -inf if no round was valid, and writes the mask of A into ``search.mask``.
    """
    cats, mcat, in_a = hist.touched, pc.n_known, search.in_a
    for t in range(mcat):
        in_a[t] = False
    zero(left)
    LW = 0.0
    size_a = 0
    cur_h = -np.inf
    cur_ml = False
    while size_a < mcat - 1:
        round_h = -np.inf
        round_c = -1
        round_ml = False
        for t in range(mcat):
            if in_a[t]:
                continue
            LW2 = add_bin(cats[t], hist, has_missing, LW, left, 1.0)
            h, ml = evaluate_partition(parent, LW2, left, hist, has_missing, min_leaf)
            add_bin(cats[t], hist, has_missing, LW2, left, -1.0)
            if h > round_h:
                round_h = h
                round_c = t
                round_ml = ml
        if round_c < 0 or round_h <= cur_h:
            break
        in_a[round_c] = True
        size_a += 1
        LW = add_bin(cats[round_c], hist, has_missing, LW, left, 1.0)
        cur_h = round_h
        cur_ml = round_ml
    if in_a[0]:  # the same test seen from the other side (its missing-value side evaluated again)
        for t in range(mcat):
            in_a[t] = not in_a[t]
        cur_h, cur_ml = _score_subset(search, hist, pc, parent, has_missing, min_leaf, left)
    mask_of(search.mask, cats, in_a, mcat)
    return cur_h, cur_ml


@njit(**BORROWING)
def best_subset(splitter, search, hist, pc, parent, has_missing, min_leaf, left):
    """The subset test of a nominal feature chosen by the splitter: one random subset for extra trees (and
    when a single category is present), else greedy selection (:func:`subset_greedy`). Returns
    (h, missing_left), h = -inf if invalid, and writes the mask into ``search.mask``."""
    if splitter == SPLITTER_RANDOM or pc.n_known <= 1:
        return subset_random(search, hist, pc, parent, has_missing, min_leaf, left)
    return subset_greedy(search, hist, pc, parent, has_missing, min_leaf, left)
