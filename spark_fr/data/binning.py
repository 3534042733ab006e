"""Feature binning: raw values to uint8 codes (pure NumPy; used inside Spark tasks and in tests).

Sketch
------
Trees see every feature as codes 0..254 plus 255 for missing:

* numeric, at most 255 distinct values: lossless, one code per distinct value (sorted); the split
  "code <= b" is reported with the threshold halfway between the b-th and (b+1)-th value, as
  scikit-learn does;
* numeric, more distinct values: the cut points are up to 254 quantiles of the column (exact quantiles of
  a hash-selected sample, see :mod:`spark_fr.data.plan`); code b holds ``cut[b-1] < x <= cut[b]`` and
  the threshold of "code <= b" is ``cut[b]``;
* nominal: code = index of the category in the feature's domain (at most 255 categories; the rarest
  ones beyond 254 share the last code, named ``__other__``).

:class:`FeatureBins` holds, per feature, the cut points, the value range of each bin (``lower``/``upper``,
used by the extra-trees splitter) and the reporting thresholds.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

MISSING_CODE = 255
MAX_BINS = 255
OTHER_CATEGORY = "__other__"


@dataclass
class FeatureBins:
    """Binning of one feature.

    Attributes
    ----------
    name : str
    nominal : bool
    cuts : ndarray
        Numeric: sorted cut points (length = number of bins - 1). Nominal: empty.
    categories : list of str or None
        Nominal: the category of each code.
    lower, upper : ndarray
        Smallest / largest value of each numeric bin.
    thresholds : ndarray
        Raw threshold reported for the test "code <= b".
    lossless : bool
        Numeric: one code per distinct value.
    """

    name: str
    nominal: bool
    cuts: np.ndarray
    categories: list | None
    lower: np.ndarray
    upper: np.ndarray
    thresholds: np.ndarray
    lossless: bool

    @property
    def n_bins(self) -> int:
        return len(self.categories) if self.nominal else len(self.cuts) + 1

    def encode(self, values) -> np.ndarray:
        """Codes (uint8) of raw values: floats (NaN = missing) for numeric, category indices for nominal.

        Parameters
        ----------
        values : ndarray
            Numeric features: float64 values. Nominal features: float64 category indices (NaN missing).
        """
        v = np.asarray(values, dtype=np.float64)
        missing = np.isnan(v)
        if self.nominal:
            codes = np.where(missing, MISSING_CODE, np.minimum(np.nan_to_num(v), MAX_BINS - 1))
            return codes.astype(np.uint8)
        codes = np.searchsorted(self.cuts, v, side="left")
        codes[missing] = MISSING_CODE
        return codes.astype(np.uint8)


def numeric_bins(name: str, distinct: np.ndarray | None, quantile_cuts: np.ndarray | None,
                 vmin: float, vmax: float) -> FeatureBins:
    """Binning of a numeric feature from its distinct values (if few) or its quantile cut points.

    Parameters
    ----------
    name : str
    distinct : ndarray or None
        All distinct non-missing values, when there are at most 255 of them.
    quantile_cuts : ndarray or None
        Candidate cut points (quantiles) otherwise.
    vmin, vmax : float
        Minimum and maximum of the known values (NaN when the column is all missing).

    Returns
    -------
    FeatureBins
    """
    if distinct is not None:
        v = np.unique(np.asarray(distinct, dtype=np.float64))
        if v.size == 0:
            v = np.zeros(1)
        cuts = v[:-1]
        thresholds = np.r_[(v[:-1] + v[1:]) / 2.0, np.inf]
        return FeatureBins(name, False, cuts, None, v.copy(), v.copy(), thresholds, True)
    column = np.asarray(quantile_cuts, dtype=np.float64).reshape(-1, 1)
    return quantile_bins([name], column, np.array([vmin], np.float64), np.array([vmax], np.float64))[0]


def quantile_bins(names: list, cuts: np.ndarray, vmin: np.ndarray, vmax: np.ndarray) -> list:
    """The bins of numeric features from their candidate cut points (:func:`numeric_bins` without distinct values),
    every feature at once.

    Parameters
    ----------
    names : list of str
    cuts : ndarray (q, k)
        Column j: the candidate cuts (quantiles) of feature j, in any order; NaN entries are no cut.
    vmin, vmax : ndarray (k,)
        Minimum and maximum of the known values (NaN when a column is all missing).

    Returns
    -------
    list of FeatureBins
        Per feature: the distinct candidates below ``vmax``, sorted (at most 254, evenly thinned beyond), as cuts.

    Decision: the sort, the distinct values and the bounds are computed on the whole matrix, and the arrays of all
    features are cut out of three flat ones (a wide table's 20,000 features cost 0.6 s feature by feature, in
    ``np.unique`` and ``np.r_``); the same values as feature by feature.
    """
    S = np.sort(np.asarray(cuts, dtype=np.float64), axis=0)  # NaN last
    k = S.shape[1]
    keep = S < np.asarray(vmax, np.float64)[None, :]  # NaN is never below
    keep[1:] &= S[1:] != S[:-1]  # the first of equal values, as np.unique keeps it
    count = keep.sum(axis=0)
    flat = S.T[keep.T]  # column after column
    # lower = [vmin, cuts], upper = [cuts, vmax], thresholds = [cuts, inf] of every feature, one after another
    at = np.r_[0, np.cumsum(count + 1)[:-1]].astype(np.int64) if k else np.zeros(0, np.int64)  # a feature's first
    first, last = np.zeros(flat.size + k, bool), np.zeros(flat.size + k, bool)
    first[at], last[at + count] = True, True
    lower, upper = np.empty(flat.size + k), np.empty(flat.size + k)
    lower[first], lower[~first] = np.asarray(vmin, np.float64), flat
    upper[last], upper[~last] = np.asarray(vmax, np.float64), flat
    thresholds = np.where(last, np.inf, upper)
    out = []
    for j, name in enumerate(names):
        c = flat[at[j] - j:at[j] - j + count[j]]
        if c.size > MAX_BINS - 1:
            idx = np.linspace(0, c.size - 1, MAX_BINS - 1).round().astype(int)
            c = np.unique(c[idx])
            out.append(FeatureBins(name, False, c, None, np.r_[vmin[j], c], np.r_[c, vmax[j]], np.r_[c, np.inf], False))
            continue
        a, b = at[j], at[j] + count[j] + 1
        out.append(FeatureBins(name, False, c, None, lower[a:b], upper[a:b], thresholds[a:b], False))
    return out


def nominal_bins(name: str, categories: list) -> FeatureBins:
    """Binning of a nominal feature with the given categories (code = position; at most 255)."""
    cats = list(categories)[:MAX_BINS]
    nan = np.full(max(len(cats), 1), np.nan)
    return FeatureBins(name, True, np.empty(0), cats, nan, nan, nan, True)


def fit_bins(values: np.ndarray, name: str = "x", nominal: bool = False, categories=None,
             max_bins: int = MAX_BINS) -> FeatureBins:
    """Binning of one column held in memory (tests and small local data).

    Parameters
    ----------
    values : ndarray
        Numeric values (NaN = missing), or category indices for a nominal feature.
    name : str
    nominal : bool
    categories : list of str, optional
        Nominal domain (default: the observed indices as strings).
    max_bins : int
        At most this many numeric bins.

    Returns
    -------
    FeatureBins
    """
    v = np.asarray(values, dtype=np.float64)
    if nominal:
        if categories is None:
            k = int(np.nanmax(v)) + 1 if np.any(~np.isnan(v)) else 1
            categories = [str(i) for i in range(k)]
        return nominal_bins(name, categories)
    known = v[~np.isnan(v)]
    distinct = np.unique(known)
    if distinct.size <= max_bins:
        return numeric_bins(name, distinct, None, np.nan, np.nan)
    q = np.quantile(known, np.arange(1, max_bins) / max_bins, method="inverted_cdf")
    return numeric_bins(name, None, q, float(known.min()), float(known.max()))


def stack_bins(bins: list) -> tuple:
    """(lower, upper, thresholds) as (D, 255) float64 arrays, NaN-padded, for the kernels."""
    D = len(bins)
    lower = np.full((D, MAX_BINS), np.nan)
    upper = np.full((D, MAX_BINS), np.nan)
    thr = np.full((D, MAX_BINS), np.nan)
    for f, b in enumerate(bins):
        if not b.nominal:
            k = min(len(b.lower), MAX_BINS)
            lower[f, :k] = b.lower[:k]
            upper[f, :k] = b.upper[:k]
            thr[f, :k] = b.thresholds[:k]
    return lower, upper, thr


@njit(cache=True, nogil=True)
def _codes_of_matrix(M, cuts, out):
    """out[j, r] = number of cuts of column j below M[r, j] (``searchsorted(..., side='left')``); NaN -> 255.

    ``cuts`` rows are padded with +inf to 255 entries: a branch-free binary search of 8 fixed steps.
    """
    m, k = M.shape
    for j in range(k):
        c = cuts[j]
        for r in range(m):
            v = M[r, j]
            pos = 128 * (c[127] < v)  # comparisons as numbers: no branch to mispredict
            pos += 64 * (c[pos + 63] < v)
            pos += 32 * (c[pos + 31] < v)
            pos += 16 * (c[pos + 15] < v)
            pos += 8 * (c[pos + 7] < v)
            pos += 4 * (c[pos + 3] < v)
            pos += 2 * (c[pos + 1] < v)
            pos += c[pos] < v
            out[j, r] = pos if v == v else MISSING_CODE


def cut_matrix(bins: list) -> np.ndarray:
    """The cuts of numeric bins as rows of 255 entries padded with +inf, for :func:`encode_matrix`."""
    cuts = np.full((len(bins), MAX_BINS), np.inf)
    for j, b in enumerate(bins):
        cuts[j, :b.cuts.size] = b.cuts
    return cuts


def warm_up_encoding() -> None:
    """Compile (or load from numba's cache) :func:`encode_matrix`'s kernel for the encoding pass's arrays (a
    column-major matrix, as :func:`spark_fr.data.blocks.encode_features` fills it): the methods' warm-ups call it, so
    that a shipped cache holds it and the pass's Spark tasks do not compile it; and the statistics pass's row
    hashes (:func:`spark_fr.data.rowkeys.warm_up_row_hashes`) and distinct counts
    (:func:`spark_fr.data.distinct.warm_up_many_distinct`)."""
    from .distinct import warm_up_many_distinct
    from .rowkeys import warm_up_row_hashes

    warm_up_row_hashes()
    warm_up_many_distinct()
    for k in (2, 1):  # numba types a one-column matrix as C-contiguous, a wider one as Fortran
        encode_matrix(np.zeros((2, k), order="F"), np.full((k, MAX_BINS), np.inf))


def encode_matrix(M: np.ndarray, cuts: np.ndarray) -> np.ndarray:
    """Codes (k, m) uint8 of the columns of ``M`` (m, k) by their numeric bins: :meth:`FeatureBins.encode`
    of every column at once (``cuts`` from :func:`cut_matrix`)."""
    out = np.empty((M.shape[1], M.shape[0]), np.uint8)
    _codes_of_matrix(np.asarray(M, dtype=np.float64), cuts, out)
    return out
