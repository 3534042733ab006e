"""The rows the RF score re-routes when it permutes one feature: a numba kernel, no Spark.

Sketch
------
For feature f of a tree, the RF score (:func:`spark_fr.pct.scores.permutation_scores`) draws the permutation of the
out-of-bag rows (:func:`spark_fr.pct.route.permutation`, the same draw to the bit), gives every row whose path tests
f (its (feature, row) pairs, :func:`spark_fr.pct.route.rows_by_path_feature`) the code of f of the row the
permutation sends it, and keeps the pairs whose new code leaves the range of codes their path lets through: those
rows alone are walked again. :func:`rows_to_walk` does all of it in one call per feature, into
buffers (:data:`WalkBuffers`) made once per tree and reused for every feature.

Decision: one kernel per feature instead of NumPy's per-feature steps (a permutation of every out-of-bag row
allocated, then five gathers, a mask and four compactions, each allocating an array). On the tall benchmark's
trees (10^6 rows x 50 features, 200,000 out-of-bag rows evaluated, some 3 million pairs over the features) these
steps took 0.16 s CPU of a tree's 1.5 s of RF score, the kernel 0.09 s. It reads in passes, each a loop of few
independent reads (the donors, then their codes, then the test), and tests branch-free: written as one loop
with a branch on the new code (a cache miss, the branch mispredicted about every other pair) it took 0.21 s.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from .jit import KERNEL
from .route import draw_permutation

#: a tree's (feature, row) pairs as the kernel reads them, CSR over the features (:class:`~spark_fr.pct.tree.PathPairs`):
#: ``positions`` (in the out-of-bag rows), ``first_nodes``, and the range ``[lo, hi]`` of codes keeping the path
PairArrays = namedtuple("PairArrays", ["indptr", "positions", "first_nodes", "lo", "hi"])
#: reused per tree: ``perm`` (n_oob,) the permutation being drawn; ``positions``, ``rows``, ``donors``, ``starts``
#: (the most pairs of one feature): the pairs to walk, their rows, the rows whose code they take, their first nodes;
#: ``codes`` the new codes of the feature's pairs
WalkBuffers = namedtuple("WalkBuffers", ["perm", "positions", "rows", "donors", "starts", "codes"])


def walk_buffers(n_oob: int, indptr: np.ndarray) -> WalkBuffers:
    """Buffers for :func:`rows_to_walk` over ``n_oob`` out-of-bag rows and pairs grouped by ``indptr`` (CSR).

    Parameters
    ----------
    n_oob : int
    indptr : ndarray of int64 (D + 1,)

    Returns
    -------
    WalkBuffers
    """
    m = int(np.diff(indptr).max()) if indptr.shape[0] > 1 else 0
    return WalkBuffers(np.empty(n_oob, np.int64), *(np.empty(m, np.int64) for _ in range(5)))


@njit(**KERNEL)
def rows_to_walk(XR, oob, pairs, f, state_seed, out):
    """The pairs of feature ``f`` whose row leaves its path when f is permuted; returns how many (``k``).

    Parameters
    ----------
    XR : uint8 (n, D)
        Row-major codes.
    oob : int64 (n_oob,)
        The out-of-bag rows evaluated.
    pairs : PairArrays
    f : int
        The column of ``XR`` permuted.
    state_seed : uint64
        The permutation's seed (:func:`~spark_fr.pct.scores.oob_permutation`'s).
    out : WalkBuffers
        Written: ``perm`` the permutation; the first ``k`` of ``positions``, ``rows`` (``oob[position]``),
        ``donors`` (``oob[perm[position]]``, the row whose code of f it takes) and ``starts`` (the first node of
        its path testing f), in the order of the pairs, of the pairs whose new code is outside ``[lo, hi]``.
    """
    draw_permutation(state_seed, out.perm)
    perm = out.perm
    a = pairs.indptr[f]
    m = pairs.indptr[f + 1] - a
    for j in range(m):  # in passes, each a loop of few independent reads: many cache misses in flight at once
        out.donors[j] = oob[perm[pairs.positions[a + j]]]
    for j in range(m):
        out.codes[j] = XR[out.donors[j], f]
    k = 0
    for j in range(m):  # branch-free: the next pair's reads do not wait for this one's test
        i = pairs.positions[a + j]
        code = out.codes[j]
        out.positions[k] = i
        out.rows[k] = oob[i]
        out.donors[k] = out.donors[j]  # k <= j: in place
        out.starts[k] = pairs.first_nodes[a + j]
        k += (code < pairs.lo[a + j]) | (code > pairs.hi[a + j])  # a missing code (255) too: hi is below it
    return k
