"""Adaptive k of ReliefE (paper Alg. 4; spec 3.6 and Sec. 5 C4), numba, no Spark.

Sketch
------
For one sampled row and one candidate set (a class, or all rows for MLC; the row itself excluded)::

    d_(1) <= d_(2) <= ... <= d_(c)         distances of the c candidates, in (distance, key) order
    g_i   = d_(i+1) - d_(i),  i = 1..c-1
    k     = argmax_i g_i                   (1-based: the neighbours are the rows before the largest gap)

Decisions:
* the **gap** rule of the paper's Alg. 4, which is also what [R] 0.18's kernels compute
  (``np.argmax(np.diff(sorted)) + 1``); the gap-*ratio* rule the spec attributes to [R] is not used;
* ties between equal largest gaps: the first (smallest k);
* c = 1: k = 1; c = 0: k = 0 (no neighbours);
* the row itself is excluded before the gaps are taken ([R] keeps the sample's 0 distance to itself in
  its own class's list, so its first gap is to the nearest hit);
* optional cap ``k_max`` (0 = none): the gaps are looked for among the first k_max + 1 candidates only.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def gap_k(sorted_d, c, k_max):
    """k by the largest-gap rule on the first ``c`` sorted distances (``k_max`` > 0 caps the search)."""
    if c <= 1:
        return c
    last = c - 1
    if k_max > 0 and k_max < last:
        last = k_max
    best = -1.0
    k = 1
    for i in range(last):
        g = sorted_d[i + 1] - sorted_d[i]
        if g > best:
            best = g
            k = i + 1
    return k
