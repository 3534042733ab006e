"""The Fuzzy Jaccard Index (FJI, "FuJI") of two feature rankings, over their top-j sets (thesis section 8).

Definition (spec/methods-thesis.md section 8; the Mars gyroless paper and the MLC-ensemble paper)
------------------------------------------------------------------------------------------------
Ranking ``r_i`` (i = 1, 2) orders its features best first, ``x^i_(1), x^i_(2), ...``, with importances ``f^i``.
Its top-j set is ``F^i_j = {x^i_(1), ..., x^i_(j)}`` and ``f^i_j`` is the importance of its j-th feature. The
fuzzy membership of a feature ``x`` in ``F^i_j`` is::

    mu(F^i_j, x) = 1                    if x in F^i_j
                 = f^i(x) / f^i_j       otherwise      (= min{1, f^i(x) / f^i_j}, as the MLC paper writes it)

and::

    FJI(F^1_j, F^2_j) = sum_{x in F^1_j | F^2_j} min_i mu(F^i_j, x) / sum_{x in F^1_j | F^2_j} max_i mu(F^i_j, x)

The curve is ``j -> FJI(F^1_j, F^2_j)`` for j = 1..K; the similarity of the rankings is the area under it
(:func:`fji_area`). Each ranking's importances are only compared with its own ``f^i_j``: the index is scale-free
(a run whose importances are all twice another's has FJI 1 with it).

Decisions (where the definition is silent)
------------------------------------------
* **Negative importances** (the RF score, Relief weights) are taken as 0: the memberships are ratios of
  importances and mean "how close to the j-th feature", which a negative value (worse than a random feature)
  is not. Missing values (NaN) are 0 too.
* **f^i_j = 0** (the j-th feature and all after it have importance <= 0): ``f^i(x) / 0`` is read as
  ``min{1, .} = 1``: every feature is then tied with the j-th one, and tied features are interchangeable (their
  ratio is 1 when ``f^i_j > 0`` too). The authors' published code does the same.
* **Features that a ranking does not have** (a column added or dropped between two runs) have membership 0 in
  that ranking's sets.
* **j beyond a ranking's length**: its top-j set is the whole ranking.
* **Area**: the trapezoid rule over the points ``(j, FJI_j)``, j = 1..K, divided by K - 1, so that it lies in
  [0, 1] (1: the same top-K sets with proportional importances); for K = 1 it is FJI_1.

Computation
-----------
Walking j = 1..K, the two top-j sets grow by one feature each. Features in both sets count 1 in numerator and
denominator; a feature in only ``F^1_j`` counts ``mu(F^2_j, x)`` and 1, and symmetrically. When each ranking's
clipped importances do not increase along its order (always so for spark_fr's tables, whose ranks follow the
importance), ``mu(F^2_j, x) = f^2(x) / f^2_j`` for every x outside ``F^2_j``, so the numerator only needs the
running sums of ``f^2`` over ``F^1_j \\ F^2_j`` (and of ``f^1`` over ``F^2_j \\ F^1_j``): O(K) in all. Otherwise
(ranks that do not follow the importances) every step recomputes the memberships with the ``min{1, .}``: O(K^2).
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError


def _clean(features, importances, which: str) -> tuple:
    names = [str(f) for f in features]
    values = np.asarray(importances, dtype=float).ravel()
    if len(names) != values.size:
        raise InputError(f"ranking {which}: {len(names)} features but {values.size} importances")
    if len(set(names)) != len(names):
        seen: set = set()
        dup = next(n for n in names if n in seen or seen.add(n))
        raise InputError(f"ranking {which}: feature {dup!r} appears twice")
    values = np.where(np.isnan(values), 0.0, np.maximum(values, 0.0))
    return names, values


def fuzzy_jaccard_curve(features_1, importances_1, features_2, importances_2, k: int | None = None) -> np.ndarray:
    """The Fuzzy Jaccard Index of the top-j sets of two rankings, for j = 1..k.

    Parameters
    ----------
    features_1, features_2 : sequence of str
        The features of each ranking, best first (each feature once).
    importances_1, importances_2 : array-like of float
        Their importances, in the same order.
    k : int, optional
        Length of the curve (default: the longer ranking's length).

    Returns
    -------
    numpy.ndarray
        ``(k,)``: entry ``j - 1`` is ``FJI(F^1_j, F^2_j)``, in [0, 1].

    Raises
    ------
    spark_fr.errors.InputError
        A ranking lists a feature twice, lengths differ, both rankings are empty, or ``k`` < 1.

    Examples
    --------
    >>> fuzzy_jaccard_curve(["a", "b"], [2.0, 1.0], ["b", "a"], [2.0, 1.0])
    array([0.5, 1. ])
    """
    n1, f1 = _clean(features_1, importances_1, "1")
    n2, f2 = _clean(features_2, importances_2, "2")
    if not n1 and not n2:
        raise InputError("both rankings are empty")
    k = max(len(n1), len(n2)) if k is None else int(k)
    if k < 1:
        raise InputError(f"the curve needs k >= 1, not {k}")
    # one index over the union of the features; importance of a feature in a ranking that lacks it: absent
    index = {name: i for i, name in enumerate(dict.fromkeys(n1 + n2))}
    o1 = np.array([index[n] for n in n1], dtype=np.int64)
    o2 = np.array([index[n] for n in n2], dtype=np.int64)
    m = len(index)
    v1, v2 = np.zeros(m), np.zeros(m)
    has1, has2 = np.zeros(m, bool), np.zeros(m, bool)
    v1[o1], v2[o2] = f1, f2
    has1[o1], has2[o2] = True, True
    monotone = bool(np.all(np.diff(f1) <= 0) and np.all(np.diff(f2) <= 0))
    walk = _walk_monotone if monotone else _walk_general
    return walk(o1, o2, v1, v2, has1, has2, k)


def _threshold(order: np.ndarray, values: np.ndarray, j: int) -> float:
    """``f^i_j``: the importance of the j-th feature (the last one when j is beyond the ranking)."""
    if order.size == 0:
        return 0.0
    return float(values[order[min(j, order.size) - 1]])


class _TopSet:
    """One ranking's top-j set as :func:`_walk_monotone` grows it: which features it holds, how many, and the
    running sum and count of this ranking's importances over the features of the other set that it does not hold
    and does rank (``F^other_j \\ F^i_j``: their membership in this ranking's set is ``f^i / f^i_j``)."""

    __slots__ = ("order", "values", "has", "inside", "size", "outside_sum", "outside_count")

    def __init__(self, order, values, has):
        self.order, self.values, self.has = order, values, has
        self.inside = np.zeros(values.size, bool)
        self.size = self.outside_count = 0
        self.outside_sum = 0.0

    def fuzzy(self, j: int) -> float:
        """The summed memberships in this set of the other set's features outside it."""
        if not self.outside_count:
            return 0.0
        t = _threshold(self.order, self.values, j)
        return max(self.outside_sum, 0.0) / t if t > 0 else float(self.outside_count)


def _enter(j: int, mine: _TopSet, other: _TopSet) -> int:
    """The j-th feature of ranking ``mine`` joins its top set (when it ranks that many); returns 1 when that feature
    is now in both sets."""
    if j > mine.order.size:
        return 0
    a = mine.order[j - 1]
    mine.inside[a] = True
    mine.size += 1
    if other.inside[a]:  # from F^other \ F^mine to both
        mine.outside_sum -= mine.values[a]
        mine.outside_count -= 1
        return 1
    if other.has[a]:  # into F^mine \ F^other
        other.outside_sum += other.values[a]
        other.outside_count += 1
    return 0


def _walk_monotone(o1, o2, v1, v2, has1, has2, k) -> np.ndarray:
    """The curve by running sums (each ranking's importances non-increasing along its order)."""
    r1, r2 = _TopSet(o1, v1, has1), _TopSet(o2, v2, has2)
    both = 0
    out = np.empty(k)
    for j in range(1, k + 1):
        both += _enter(j, r1, r2)
        both += _enter(j, r2, r1)
        out[j - 1] = (both + r1.fuzzy(j) + r2.fuzzy(j)) / (r1.size + r2.size - both)
    return np.clip(out, 0.0, 1.0)


def _walk_general(o1, o2, v1, v2, has1, has2, k) -> np.ndarray:
    """The curve computed afresh at every j, with ``min{1, f / f_j}`` (any order of the importances)."""
    m = v1.size
    out = np.empty(k)
    for j in range(1, k + 1):
        in1, in2 = np.zeros(m, bool), np.zeros(m, bool)
        in1[o1[:j]] = True
        in2[o2[:j]] = True
        union = np.flatnonzero(in1 | in2)
        mu1 = _membership(in1[union], has1[union], v1[union], _threshold(o1, v1, j))
        mu2 = _membership(in2[union], has2[union], v2[union], _threshold(o2, v2, j))
        out[j - 1] = np.minimum(mu1, mu2).sum() / np.maximum(mu1, mu2).sum()
    return out


def _membership(inside, has, values, threshold) -> np.ndarray:
    ratio = np.minimum(1.0, values / threshold) if threshold > 0 else np.ones(values.size)
    return np.where(inside, 1.0, np.where(has, ratio, 0.0))


def fji_area(curve) -> float:
    """The area under an FJI curve, normalised to [0, 1] (trapezoids over j = 1..K, divided by K - 1).

    Parameters
    ----------
    curve : array-like of float
        ``FJI_j`` for j = 1..K (:func:`fuzzy_jaccard_curve`).

    Returns
    -------
    float
        The area; ``curve[0]`` when K = 1.
    """
    c = np.asarray(curve, dtype=float).ravel()
    if c.size == 0:
        raise InputError("an FJI curve needs at least one point")
    if c.size == 1:
        return float(c[0])
    return float(np.sum((c[1:] + c[:-1]) / 2.0) / (c.size - 1))
