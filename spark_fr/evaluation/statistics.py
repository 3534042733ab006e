"""Statistical comparison of rankings (Demsar 2006, as the thesis and papers use it); no Spark.

Sketch
------
* :func:`round_significant`: performances are rounded to 3 significant digits before they are compared (HMLC
  paper section 3.4; the MTR chapter says 3 decimals, which is the same for its errors below 1), so that
  differences below the measure's precision are ties.
* :func:`wilcoxon`: the paired Wilcoxon signed-rank test of two methods (over the splits of one dataset, or over
  datasets), with Demsar's treatment of zero differences (ranked and split evenly between the two sides:
  scipy's ``zero_method='zsplit'``); two-sided; the exact distribution for up to 50 pairs without zeros or ties,
  else the normal approximation (Demsar's). All differences zero: p = 1.
* :func:`benjamini_hochberg`: the step-up procedure over the t tests of one hypothesis: reject p_(1..i0), with
  i0 the largest i such that p_(i) <= i alpha / t; also the adjusted p-values (the smallest alpha at which each
  test is rejected).
* :func:`average_ranks`, :func:`friedman`: ranks of the methods on every dataset (1 = best, ties share the mean
  rank), their averages, and Friedman's chi-square ``12 N / (k (k+1)) (sum_j R_j^2 - k (k+1)^2 / 4)`` with the
  Iman-Davenport F ``(N-1) chi^2 / (N (k-1) - chi^2)`` (Demsar's equations). Demsar's statistic has no correction
  for ties (the papers use it); ``tie_correction=True`` divides by ``1 - sum(t^3 - t) / (N k (k^2 - 1))``, which is
  scipy's ``friedmanchisquare``.
* :func:`nemenyi_cd`: the critical difference ``q_alpha sqrt(k (k+1) / (6 N))``, with ``q_alpha`` the
  studentized range quantile over sqrt(2) (Demsar's Table 5a: 1.960, 2.343, 2.569, 2.728 for k = 2..5).
* :func:`cd_groups`: the groups of methods whose average ranks are within the critical difference (the bars
  of a critical-difference diagram, :mod:`spark_fr.evaluation.plots`).
"""
from __future__ import annotations

import numpy as np


def round_significant(values, digits: int = 3) -> np.ndarray:
    """``values`` rounded to ``digits`` significant digits (NaN and 0 unchanged)."""
    v = np.asarray(values, dtype=np.float64)
    out = v.copy()
    ok = np.isfinite(v) & (v != 0)
    mag = np.floor(np.log10(np.abs(v[ok])))
    scale = 10.0 ** (digits - 1 - mag)
    out[ok] = np.round(v[ok] * scale) / scale
    return out


def wilcoxon(a, b) -> float:
    """Two-sided p-value of the paired Wilcoxon signed-rank test of ``a`` against ``b`` (module sketch).

    Pairs with a NaN are left out; fewer than two pairs, or all differences zero: p = 1.
    """
    from scipy.stats import wilcoxon as _wilcoxon

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    keep = ~(np.isnan(a) | np.isnan(b))
    d = a[keep] - b[keep]
    if d.size < 2 or np.all(d == 0):
        return 1.0
    ad = np.abs(d)
    exact = d.size <= 50 and np.all(d != 0) and np.unique(ad).size == ad.size
    # the exact distribution without zeros and ties; the normal approximation with scipy's tie correction otherwise
    # (scipy's 'auto' would run a permutation test there: seconds per test)
    method = "exact" if exact else "asymptotic"
    return float(_wilcoxon(a[keep], b[keep], zero_method="zsplit", method=method).pvalue)


def benjamini_hochberg(pvalues, alpha: float = 0.05) -> tuple:
    """The Benjamini-Hochberg procedure (module sketch).

    Parameters
    ----------
    pvalues : array-like of float
        One p-value per test (NaN: not tested; never rejected, adjusted NaN).
    alpha : float

    Returns
    -------
    (reject, adjusted) : (ndarray of bool, ndarray of float)
        Whether each hypothesis is rejected, and the adjusted p-value ``min_{j >= i} t p_(j) / j`` (capped at 1).
    """
    p = np.asarray(pvalues, dtype=np.float64)
    reject = np.zeros(p.size, bool)
    adjusted = np.full(p.size, np.nan)
    idx = np.flatnonzero(~np.isnan(p))
    t = idx.size
    if t == 0:
        return reject, adjusted
    order = idx[np.argsort(p[idx], kind="stable")]
    ranked = p[order]
    passing = np.flatnonzero(ranked <= np.arange(1, t + 1) * alpha / t)
    if passing.size:
        reject[order[:passing[-1] + 1]] = True
    scaled = ranked * t / np.arange(1, t + 1)
    adjusted[order] = np.minimum(np.minimum.accumulate(scaled[::-1])[::-1], 1.0)
    return reject, adjusted


def average_ranks(scores, greater_is_better: bool = True, digits: int | None = 3) -> np.ndarray:
    """The average rank of each method over the datasets (1 = best; ties share the mean rank).

    Parameters
    ----------
    scores : array-like (N datasets, k methods)
    greater_is_better : bool
    digits : int or None
        Round to this many significant digits first (None: compare the values as they are).

    Returns
    -------
    ndarray (k,)
    """
    return rank_matrix(scores, greater_is_better, digits).mean(axis=0)


def rank_matrix(scores, greater_is_better: bool = True, digits: int | None = 3) -> np.ndarray:
    """Per dataset (row), the rank of each method (column): 1 = best, ties share the mean rank."""
    from scipy.stats import rankdata

    S = np.asarray(scores, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] == 0:
        raise ValueError("scores must be a non-empty (datasets x methods) matrix")
    if np.isnan(S).any():
        raise ValueError("scores hold NaN: every method needs a value on every dataset")
    if digits is not None:
        S = round_significant(S, digits)
    return np.vstack([rankdata(-row if greater_is_better else row) for row in S])


def friedman(scores, greater_is_better: bool = True, digits: int | None = 3, tie_correction: bool = False) -> dict:
    """Friedman's test over datasets (module sketch).

    Returns
    -------
    dict
        ``ranks`` (average rank per method), ``chi2``, ``p`` (chi-square, k - 1 degrees of freedom), ``f``,
        ``p_f`` (Iman-Davenport, (k - 1, (k - 1)(N - 1)) degrees of freedom), ``n_datasets``, ``n_methods``.
    """
    from scipy.stats import chi2 as _chi2, f as _f

    R = rank_matrix(scores, greater_is_better, digits)
    N, k = R.shape
    Rj = R.mean(axis=0)
    stat = 12.0 * N / (k * (k + 1)) * (np.sum(Rj ** 2) - k * (k + 1) ** 2 / 4.0)
    if tie_correction:
        ties = 0.0
        for row in R:
            _, counts = np.unique(row, return_counts=True)
            ties += float(np.sum(counts ** 3 - counts))
        c = 1.0 - ties / (N * k * (k * k - 1))
        stat = stat / c if c > 0 else 0.0
    p = float(_chi2.sf(stat, k - 1)) if k > 1 else 1.0
    den = N * (k - 1) - stat
    fstat = (N - 1) * stat / den if den > 0 else np.inf
    p_f = float(_f.sf(fstat, k - 1, (k - 1) * (N - 1))) if k > 1 and N > 1 and np.isfinite(fstat) else (
        0.0 if k > 1 and N > 1 else 1.0)
    return {"ranks": Rj, "chi2": float(stat), "p": p, "f": float(fstat), "p_f": p_f, "n_datasets": N,
            "n_methods": k}


def nemenyi_q(k: int, alpha: float = 0.05) -> float:
    """``q_alpha`` of the Nemenyi test for k methods: the studentized range quantile divided by sqrt(2)."""
    from scipy.stats import studentized_range

    if k < 2:
        return 0.0
    return float(studentized_range.ppf(1.0 - alpha, k, np.inf) / np.sqrt(2.0))


def nemenyi_cd(k: int, n_datasets: int, alpha: float = 0.05) -> float:
    """The Nemenyi critical difference of average ranks for k methods over N datasets."""
    return nemenyi_q(k, alpha) * float(np.sqrt(k * (k + 1) / (6.0 * n_datasets)))


def cd_groups(ranks, cd: float) -> list:
    """Maximal groups (index lists, sorted by rank) of methods whose average ranks differ by less than ``cd``.

    A group is a run of consecutive methods in rank order whose spread is below ``cd`` and that is not contained
    in another such run; groups of one method are left out (they draw no bar).
    """
    r = np.asarray(ranks, dtype=np.float64)
    order = np.argsort(r, kind="stable")
    groups = []
    last_end = -1
    for i in range(order.size):
        j = i
        while j + 1 < order.size and r[order[j + 1]] - r[order[i]] < cd:
            j += 1
        if j > last_end and j > i:
            groups.append([int(x) for x in order[i:j + 1]])
            last_end = j
    return groups
