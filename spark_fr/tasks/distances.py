"""Distances between the values of two rows: per variable, and between target rows (numba, no Spark).

Sketch
------
* ``variable_distance(a, b, nominal, n_values)``: the distance of two values of one variable, used for
  features (Relief's d_i) and for the targets built from them. Numeric values arrive scaled to [0, 1] by
  the training range, nominal ones as category indices; NaN = missing, counted as Weka and CLUS do:
  nominal ``1 - 1/|values|``; numeric, one value t known: ``max(t, 1 - t)``; both missing: 1.
* ``target_distance(kind, ya, yb, weights, norm)``: d_Y of two rows of a task's target matrix, selected by a
  distance code. Each target type (:mod:`spark_fr.tasks`) chooses its code; the Relief kernels only call
  this function, so a new target type reuses a code or adds one here.

Codes: mean of per-target numeric distances (regression, MTR), class mismatch (classification), the
multi-label set distances (Hamming, Jaccard, F1, subset; a missing label counts as present with
probability 1/2, as in CLUS), the HMLC weighted Euclidean distance divided by a normaliser (or its square,
as CLUS computes it), and the descriptive distance (unsupervised: d_Y = d_X, resolved by the caller).
"""
from __future__ import annotations

import numpy as np
from numba import njit

# target distance codes
T_NUMERIC = 0       # mean over targets of the numeric per-target distance (regression, MTR)
T_CLASS = 1         # class mismatch
T_HAMMING = 2       # MLC: Hamming loss
T_JACCARD = 3       # MLC: 1 - |S1 & S2| / |S1 | S2|
T_F1 = 4            # MLC: 1 - 2 |S1 & S2| / (|S1| + |S2|)
T_SUBSET = 5        # MLC: 1 - P(S1 == S2)
T_HMLC = 6          # HMLC: sqrt(sum_j w_j (s1_j - s2_j)^2) / max
T_HMLC_SQUARED = 7  # HMLC as CLUS computes it: sum_j w_j (s1_j - s2_j)^2 / max
T_DESCRIPTIVE = 8   # unsupervised: d_Y = d_X


@njit(cache=True, nogil=True, inline="always")
def variable_distance(a, b, is_nominal, n_values):
    """Distance of two scaled values of one variable (see the module docstring for missing values)."""
    if a != a or b != b:
        if is_nominal:
            return 1.0 - 1.0 / n_values
        if a != a and b != b:
            return 1.0
        t = b if a != a else a
        return t if t > 1.0 - t else 1.0 - t
    if is_nominal:
        return 0.0 if a == b else 1.0
    return abs(a - b)


@njit(cache=True, nogil=True)
def target_distance(kind, ya, yb, tw, tnorm):
    """d_Y of two target rows (one row of the task's target matrix each)."""
    T = ya.shape[0]
    if kind == T_NUMERIC:
        s = 0.0
        for j in range(T):
            s += variable_distance(ya[j], yb[j], False, 1.0)
        return s / T
    if kind == T_CLASS:
        return variable_distance(ya[0], yb[0], True, tnorm)
    if kind == T_HAMMING:
        s = 0.0
        for j in range(T):
            s += variable_distance(ya[j], yb[j], True, 2.0)
        return s / T
    if kind == T_JACCARD or kind == T_F1:
        cap = 0.0
        cup = 0.0
        tot = 0.0
        for j in range(T):
            a = ya[j] if ya[j] == ya[j] else 0.5
            b = yb[j] if yb[j] == yb[j] else 0.5
            cap += a * b
            cup += a + b - a * b
            tot += a + b
        if kind == T_JACCARD:
            return 1.0 - cap / cup if cup > 1e-9 else 0.0
        return 1.0 - 2.0 * cap / tot if tot > 1e-9 else 0.0
    if kind == T_SUBSET:
        p = 1.0
        for j in range(T):
            if ya[j] != ya[j] or yb[j] != yb[j]:
                p *= 0.5
            elif ya[j] != yb[j]:
                return 1.0
        return 1.0 - p
    if kind == T_HMLC or kind == T_HMLC_SQUARED:
        s = 0.0
        for j in range(T):
            d = ya[j] - yb[j]
            s += tw[j] * d * d
        if kind == T_HMLC:
            s = np.sqrt(s)
        return s / tnorm
    return 0.0
