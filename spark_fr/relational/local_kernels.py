"""Group aggregates over numpy arrays: the local engine's kernels (:mod:`spark_fr.relational.local`).

Every kernel gives, per group ``0 .. n_groups - 1``, what the Spark engine's aggregate gives
(:mod:`spark_fr.relational.aggregates`), bit for bit; ``tests/relational/test_relational_executors.py`` checks them against
the Spark engine hop by hop and ``tests/relational/test_relational_local_kernels.py`` against slow per-group references.

Algorithm sketch
----------------
Rows arrive as a group index per row (``g``) and value columns. Nothing is sorted on the common path:

* **Nominal values** are factorized once per column (:class:`NominalColumn`): codes in UTF-8 byte order of
  the values (Spark's string order; -1 = missing). A *count distinct* counts the distinct ``(group, code)``
  pairs (a ``bincount`` matrix ``groups x codes`` when it is small, else the sorted pairs); a *mode* takes per group the most frequent code, the smallest on ties
  (a ``bincount`` matrix ``groups x codes`` when it is small, else the sorted distinct pairs); a *share* is a
  ratio of two ``bincount``.
* **Numeric values** (:class:`NumericColumn`) keep what every selection of their rows (the unconditional
  aggregates and each condition's) shares: the known-value mask and the ranks of its values (``-0.0`` and
  ``0.0`` one value). Sums, means and stds on the value's grid add the fixed-point limbs of the selected rows
  per group (:func:`spark_fr.relational.exact.limb_sums_numpy`, a million rows at a time, so the 14 limbs of
  a std never exist for all rows at once). ``min`` / ``max`` are ``minimum.at`` / ``maximum.at``; where a group's extreme is a
  zero, the group's first zero in row order is taken (Spark keeps the first of equal values, and ``-0.0``
  equals ``0.0`` there).
* **Sorted values**: a distinct count, and the sum, mean and std of a value without a grid (Spark's sorted
  path: no finite bound, or a value whose distinct count sorts it anyway), sort the selection's
  ``group x rank`` keys (ranks of the values from one sorted factorization per column); the distinct count is
  the number of key changes, the sums fold each group's sorted values sequentially from 0.0
  (:func:`sequential_sums`, numpy only: position by position across the groups).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import exact as X

#: largest ``groups x codes`` matrix a mode or a distinct count counts in (else they sort the pairs)
MODE_MATRIX_CELLS = 1 << 25


class NominalColumn:
    """A nominal column factorized: ``codes`` (int64, -1 = missing) into ``values`` (object array, in UTF-8
    byte order, which for valid strings is Python's code-point order). Made once per column (from the readers'
    dictionaries when they have one: :meth:`from_dictionary`) and carried through row selections and joins as
    codes (:meth:`take`), never factorized again."""

    def __init__(self, x: np.ndarray | None = None, *, codes=None, values=None):
        if x is not None:
            codes, values = pd.factorize(np.asarray(x, dtype=object), sort=True, use_na_sentinel=True)
        self.codes = np.asarray(codes).astype(np.int64, copy=False)
        self.values = np.asarray(values, dtype=object)

    @classmethod
    def from_dictionary(cls, indices: np.ndarray, dictionary: np.ndarray) -> "NominalColumn":
        """The column whose row ``i`` holds ``dictionary[indices[i]]`` (a dictionary of strings, None or repeated
        entries allowed, in any order), factorized through its dictionary only."""
        ucodes, values = pd.factorize(np.asarray(dictionary, dtype=object), sort=True, use_na_sentinel=True)
        ucodes = np.append(ucodes.astype(np.int64, copy=False), -1)  # index -1: missing
        return cls(codes=ucodes[np.asarray(indices)], values=values)

    def take(self, rows) -> "NominalColumn":
        """The column at ``rows`` (a boolean mask, or positions with -1 for a missing row)."""
        if rows.dtype == bool:
            return NominalColumn(codes=self.codes[rows], values=self.values)
        if not len(self.codes):
            return NominalColumn(codes=np.full(len(rows), -1, np.int64), values=self.values)
        return NominalColumn(codes=np.where(rows >= 0, self.codes[rows], -1), values=self.values)

    def objects(self) -> np.ndarray:
        """The values as an object array (None = missing)."""
        return np.append(self.values, None).astype(object)[self.codes]

    def __len__(self) -> int:
        return len(self.codes)

    def code_of(self, value) -> int:
        """The code of ``value`` (-1 when the column does not hold it)."""
        i = int(np.searchsorted(self.values, value)) if len(self.values) else 0
        return i if i < len(self.values) and self.values[i] == value else -1

    def selected(self, mask) -> np.ndarray:
        """The codes with rows outside ``mask`` missing (``mask`` None: all rows)."""
        return self.codes if mask is None else np.where(mask, self.codes, -1)


def count_distinct_codes(g: np.ndarray, codes: np.ndarray, k: int, n_groups: int) -> np.ndarray:
    """Per group, the number of distinct non-missing codes (codes in ``0 .. k - 1``, -1 missing)."""
    ok = codes >= 0
    if not ok.any():
        return np.zeros(n_groups, np.int64)
    pairs = g[ok] * np.int64(k) + codes[ok]
    if n_groups * k <= MODE_MATRIX_CELLS:
        seen = np.bincount(pairs, minlength=n_groups * k).reshape(n_groups, k) > 0
        return seen.sum(axis=1).astype(np.int64)
    return distinct_per_group(np.sort(pairs), k, n_groups)


def distinct_per_group(pairs: np.ndarray, k: int, n_groups: int) -> np.ndarray:
    """Per group, the number of distinct codes among sorted keys ``pairs = group * k + code``."""
    new = np.ones(len(pairs), bool)
    new[1:] = pairs[1:] != pairs[:-1]
    return np.bincount(pairs[new] // np.int64(k), minlength=n_groups).astype(np.int64)


def mode_codes(g: np.ndarray, codes: np.ndarray, k: int, n_groups: int) -> np.ndarray:
    """Per group, its most frequent non-missing code, the smallest on ties; -1 for a group without one."""
    ok = codes >= 0
    out = np.full(n_groups, -1, np.int64)
    if not ok.any():
        return out
    pairs = g[ok] * np.int64(k) + codes[ok]
    if n_groups * k <= MODE_MATRIX_CELLS:
        counts = np.bincount(pairs, minlength=n_groups * k).reshape(n_groups, k)
        best = counts.argmax(axis=1)  # the first maximum: the smallest code
        has = counts[np.arange(n_groups), best] > 0
        out[has] = best[has]
        return out
    uniq, counts = np.unique(pairs, return_counts=True)  # sorted by (group, code)
    grp = uniq // np.int64(k)
    order = np.lexsort((-counts, grp))  # stable: on equal counts the smaller code stays first
    grp, uniq = grp[order], uniq[order]
    first = np.ones(len(grp), bool)
    first[1:] = grp[1:] != grp[:-1]
    out[grp[first]] = uniq[first] % np.int64(k)
    return out


def share_codes(g: np.ndarray, codes: np.ndarray, code: int, n_groups: int) -> np.ndarray:
    """Per group, the share of its non-missing codes equal to ``code`` (NaN without any)."""
    ok = codes >= 0
    cnt = np.bincount(g[ok], minlength=n_groups)
    hit = np.bincount(g[codes == code], minlength=n_groups) if code >= 0 else np.zeros(n_groups, np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(cnt > 0, hit / np.maximum(cnt, 1), np.nan)


class NumericColumn:
    """A numeric column (float64, NaN = missing) and what its selections share, computed when first needed."""

    def __init__(self, x: np.ndarray):
        self.x = np.asarray(x, dtype=np.float64)
        self.known = ~np.isnan(self.x)
        self._codes = None

    def codes(self):
        """(codes, values): the rank of every row's value among the column's distinct known values (ascending;
        ``-0.0`` and ``0.0`` are one value, 0.0), -1 for a missing one."""
        if self._codes is None:
            codes, values = pd.factorize(self.x + 0.0, sort=True, use_na_sentinel=True)
            self._codes = (codes.astype(np.int64, copy=False), np.asarray(values, dtype=np.float64))
        return self._codes

    def aggregates(self, names, g: np.ndarray, mask, n_groups: int, grid) -> dict:
        """{name: array over groups} of the rows in ``mask`` (None: all rows) grouped by ``g``; ``grid``: the
        value's grid exponent (sum, mean and std in fixed point) or None (the sorted path)."""
        names = set(names)
        sel = self.known if mask is None else self.known & mask
        gs = g[sel]
        cnt = np.bincount(gs, minlength=n_groups)
        folded = grid is None and bool(names & {"sum", "mean", "std"})
        pairs = None
        if folded or "count_distinct" in names:
            codes, values = self.codes()
            k = np.int64(max(len(values), 1))
            pairs = np.sort(gs * k + codes[sel])  # by group, then value
        out = {}
        if folded:
            out.update(sorted_folds(pairs // k, values[pairs % k], n_groups, "std" in names))
        elif names & {"sum", "mean"}:
            limbs = X.limb_sums_numpy(gs, self.x[sel], n_groups, grid, "sum")
            out["sum"] = X.sums_from_limb_sums_numpy(limbs, cnt, grid)
            out["mean"] = X.means_from_limb_sums_numpy(limbs, cnt, grid)
        if "std" in names and not folded:
            out["std"] = X.stds_from_limb_sums_numpy(X.limb_sums_numpy(gs, self.x[sel], n_groups, grid, "std"), cnt,
                                                     grid)
        if "mean" in names and "mean" not in out:
            with np.errstate(invalid="ignore", divide="ignore"):
                out["mean"] = np.where(cnt > 0, out["sum"] / np.maximum(cnt, 1), np.nan)
        for name in ("min", "max"):
            if name in names:
                out[name] = extreme(gs, self.x[sel], n_groups, name)
        if "count_distinct" in names:
            out["count_distinct"] = distinct_per_group(pairs, k, n_groups)
        if "mode" in names:
            codes, values = self.codes()
            best = mode_codes(gs, codes[sel], max(len(values), 1), n_groups)
            r = np.full(n_groups, np.nan)
            r[best >= 0] = values[best[best >= 0]]
            out["mode"] = r
        unknown = names - {"sum", "mean", "std", "min", "max", "count_distinct", "mode"}
        if unknown:
            raise ValueError(f"aggregate {sorted(unknown)[0]} of a numeric value")
        return {n: out[n] for n in names}


def extreme(g: np.ndarray, x: np.ndarray, n_groups: int, name: str) -> np.ndarray:
    """Per group, the min or max of known values ``x`` (NaN for an empty group); a zero extreme is the group's
    first zero in row order (its sign as Spark keeps it)."""
    init = np.inf if name == "min" else -np.inf
    r = np.full(n_groups, init)
    (np.minimum if name == "min" else np.maximum).at(r, g, x)
    r[np.bincount(g, minlength=n_groups) == 0] = np.nan
    zero = np.flatnonzero(x == 0)
    if len(zero):
        grp, first = np.unique(g[zero], return_index=True)
        at_zero = r[grp] == 0
        r[grp[at_zero]] = x[zero[first[at_zero]]]
    return r


#: groups longer than this are added one by one (np.add.accumulate), the others all at once, position by position
LONG_GROUP = 256


def sequential_sums(groups: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group, its values added sequentially from 0.0 in row order (NaN for an empty group): with values
    sorted within each group, the Spark engine's sorted-array fold.

    Numpy only (no compiled loop to load): the rows are put in group order (a stable sort, skipped when they are
    already), then the k-th value of every group of at most :data:`LONG_GROUP` rows is added at once, for
    k = 0, 1, ... (each group still adds its values one after the other, from 0.0), and each longer group is
    folded by ``np.add.accumulate``, which adds sequentially.
    """
    g = np.asarray(groups, dtype=np.int64)
    x = np.asarray(values, dtype=np.float64)
    if len(g) > 1 and (g[1:] < g[:-1]).any():
        order = np.argsort(g, kind="stable")
        g, x = g[order], x[order]
    cnt = np.bincount(g, minlength=n_groups)
    start = np.concatenate(([0], np.cumsum(cnt)[:-1])).astype(np.int64)
    out = np.zeros(n_groups)
    short = np.flatnonzero((cnt > 0) & (cnt <= LONG_GROUP))
    short = short[np.argsort(-cnt[short], kind="stable")]  # longest first: the groups still adding are a prefix
    desc = -cnt[short]
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is an inf the caller reports as such
        for k in range(int(cnt[short].max(initial=0))):
            live = short[:np.searchsorted(desc, -k, side="left")]  # the groups with more than k values
            out[live] += x[start[live] + k]
        for j in np.flatnonzero(cnt > LONG_GROUP):
            out[j] = np.add.accumulate(np.concatenate(([0.0], x[start[j]:start[j] + cnt[j]])))[-1]
    out[cnt == 0] = np.nan
    return out


def sorted_folds(g: np.ndarray, x: np.ndarray, n_groups: int, with_std: bool) -> dict:
    """{'sum', 'mean', and 'std' when asked} of known values ``x`` sorted by group then value (groups ``g``):
    each group's values added sequentially from 0.0 (the mean from that sum), the std from the squared
    deviations from that mean in the same order, as the Spark engine's array folds (with their rescue from
    overflow, :data:`spark_fr.relational.exact.RESCUE_BITS`). The order of equal values (``-0.0``
    and ``0.0`` among them) does not change these sums."""
    cnt = np.bincount(g, minlength=n_groups)
    sums = sequential_sums(g, x, n_groups)
    down, up = 2.0 ** -X.RESCUE_BITS, 2.0 ** X.RESCUE_BITS
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        mean = np.where(cnt > 0, sums / np.maximum(cnt, 1), np.nan)
        over = np.isinf(sums)
        if over.any():  # exact.RESCUE_BITS: the sum of the values scaled down
            mean = np.where(over, sequential_sums(g, x * down, n_groups) / np.maximum(cnt, 1) * up, mean)
        out = {"sum": sums, "mean": mean}
        if with_std:
            d = x - mean[g]
            sq = sequential_sums(g, d * d, n_groups)
            std = np.sqrt(sq / np.maximum(cnt - 1, 1))
            over = np.isinf(sq)
            if over.any():
                d = x * down - mean[g] * down
                std = np.where(over, np.sqrt(sequential_sums(g, d * d, n_groups) / np.maximum(cnt - 1, 1)) * up, std)
            out["std"] = np.where(cnt > 1, std, np.nan)
    return out
