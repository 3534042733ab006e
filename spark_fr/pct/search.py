"""The split search at one node: candidate features, each one's best test, the best of them (numba, no Spark).

Sketch
------
    best_split(node):
        for each candidate feature f <- draw_feature (max_features features drawn at random without
        replacement: the random-forest subset, all features for bagging; as in the thesis and CLUS a sampled
        feature that is constant in the node counts, so the node can become a leaf; optionally, as in
        scikit-learn, constant features are skipped and more are drawn):
            pc, h, test <- search_feature(f)               the codes of f present in the node and, if f
                                                           varies, its best test: the target backend's
                                                           (spark_fr.pct.targets)
            best <- keep_better(best, (h, f, test))        strictly greater wins (the first of equal ones)

A feature's histogram and best test are the target backend's operation; the loop over features, the random
draws and the tie rule are written here once.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from ..runtime.rng import rand_below
from .config import MISSING_FRACTIONAL
from .histogram import feature_varies
from .jit import BORROWING, INLINE, KERNEL
from .targets import search_feature

#: a split: its gain ``h``, the tested ``feature`` (-1: none), the numeric ``threshold`` code and
#: ``missing_left`` (a nominal split's mask is kept in the :data:`Search`)
Split = namedtuple("Split", ["h", "feature", "threshold", "missing_left"])
#: the search's scratch, for one tree: the random ``state`` (uint64[1]), the features' shuffle ``feats``, the
#: categories in a subset ``in_a`` (256), the mask of the feature's test ``mask`` and of the node's best one
#: ``best_mask`` (4 x uint64 each)
Search = namedtuple("Search", ["state", "feats", "in_a", "mask", "best_mask"])


@njit(**KERNEL)
def new_search(seed, D):
    """The scratch of the searches of a tree with this seed and D features."""
    state = np.empty(1, np.uint64)
    state[0] = seed
    return Search(state, np.arange(D), np.zeros(256, np.bool_), np.zeros(4, np.uint64), np.zeros(4, np.uint64))


@njit(**INLINE)
def draw_feature(state, feats, visited):
    """The next candidate feature: step ``visited`` of a Fisher-Yates shuffle of ``feats``, so exact ties
    between features are broken at random, not by column order."""
    j = visited + rand_below(state, feats.shape[0] - visited)
    tmp = feats[visited]
    feats[visited] = feats[j]
    feats[j] = tmp
    return feats[visited]


@njit(**BORROWING)
def keep_better(best, candidate, is_nominal, search):
    """The node's best split after a feature's best one: the candidate if its h is strictly greater.

    A nominal candidate's mask (``search.mask``) is copied into ``search.best_mask``, and it keeps the
    threshold of ``best`` (unused for nominal nodes).

    Decision: called, not inlined by numba (``INLINE``): inlined into the split search together with the dense
    backend's best test (:mod:`spark_fr.pct.targets`), numba's IR inliners lost the nominal mask's copy (the
    trees recorded empty masks; tests/pct/test_pct_kernels.py's brute-force check failed). The compiled call
    is small enough for LLVM to inline.
    """
    if not candidate.h > best.h:
        return Split(best.h, best.feature, best.threshold, best.missing_left)
    if is_nominal:
        for j in range(4):
            search.best_mask[j] = search.mask[j]
        return Split(candidate.h, candidate.feature, best.threshold, candidate.missing_left)
    return Split(candidate.h, candidate.feature, candidate.threshold, candidate.missing_left)


@njit(**BORROWING)
def best_split(codes, tb, search, nr, start, end, node, config):
    """The best split of the node rows ``[start, end)`` (totals ``node``) over the candidate features: a
    :data:`Split` whose feature is -1 when no test beats a gain of 0."""
    D = codes.X.shape[0]
    max_features = config.max_features if config.max_features > 0 else D
    fractional = config.missing == MISSING_FRACTIONAL
    best = Split(0.0, -1, 0, False)
    n_eval = 0
    for visited in range(D):
        f = draw_feature(search.state, search.feats, visited)
        pc, h, thr, ml = search_feature(tb, search, codes, f, nr, (start, end), node, config)
        varies = feature_varies(pc, fractional)
        if varies or not config.resample_constant:  # a feature constant in the node counts, unless resampled
            n_eval += 1
        if varies:
            best = keep_better(best, Split(h, f, thr, ml), codes.nominal[f], search)
        if n_eval >= max_features:
            break
    return best
