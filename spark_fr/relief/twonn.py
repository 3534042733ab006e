"""The latent dimension of ReliefE's embedding: TwoNN (Facco et al. 2017) as the paper modifies it (Alg. 2).

Sketch
------
On the cyclic sample (rows x features, dense or CSR)::

    r1, r2 <- the two smallest POSITIVE Euclidean distances of each row to the others
              (zeros skipped: repeated rows would give r1 = 0); rows with fewer than two are left out
    mu     <- r2 / r1, sorted ascending: mu_(1) <= ... <= mu_(N)
    F(mu_(i)) = i / N; the point with F = 1 (the largest mu) is dropped
    d      <- -(sum x y) / (sum x^2),  x = log mu_(i), y = log(1 - F(mu_(i)))   (least squares through 0)
    d      <- round(d), clamped to [1, max_dim]

Decisions (spec Sec. 5, C7 and 3.4):
* the empirical cdf is Facco's i/N (the paper's strict-inequality EMP would put the smallest mu at 0, and
  log(1 - 0) adds nothing; [R] uses (rank + 1)/N too);
* no clamp to d >= 16 or 128 as [R] (not paper behaviour): d is clamped to at least 1 and at most the
  caller's ``max_dim`` (the features, and the sample rows - 2 that an embedding can hold);
* fewer than 3 usable rows, or every mu = 1: d = 1 (nothing to fit), said by the caller's record.
"""
from __future__ import annotations

import numpy as np


def identical_rows(X) -> np.ndarray:
    """An id per row, equal for identical rows (dense or scipy sparse X)."""
    from scipy import sparse

    if sparse.issparse(X):
        X = sparse.csr_matrix(X)
        X.sum_duplicates()
        X.eliminate_zeros()
        X.sort_indices()
        rows = [X.indices[a:b].tobytes() + b"|" + X.data[a:b].tobytes() for a, b in zip(X.indptr[:-1], X.indptr[1:])]
    else:
        rows = [r.tobytes() for r in np.ascontiguousarray(X, dtype=np.float64)]
    ids: dict = {}
    return np.array([ids.setdefault(r, len(ids)) for r in rows], np.int64)


def pairwise_euclidean(X) -> np.ndarray:
    """Euclidean distances between the rows of X (dense or scipy sparse); exactly 0 between identical rows
    (the fast dot-product formula leaves rounding noise there, which would make r1 tiny)."""
    from scipy import sparse

    from .embedders import dense_if_small

    X = dense_if_small(X)
    G = (X @ X.T).toarray() if sparse.issparse(X) else np.asarray(X, np.float64) @ np.asarray(X, np.float64).T
    sq = np.diag(G).copy()
    D = np.sqrt(np.maximum(sq[:, None] + sq[None, :] - 2.0 * G, 0.0))
    ids = identical_rows(X)
    D[ids[:, None] == ids[None, :]] = 0.0
    return D


def two_smallest_positive(D: np.ndarray) -> tuple:
    """(r1, r2, ok) per row of a distance matrix: its two smallest positive entries (ok: both exist)."""
    P = np.where(D > 0, D, np.inf)
    part = np.partition(P, 1, axis=1)[:, :2] if P.shape[1] >= 2 else np.full((P.shape[0], 2), np.inf)
    r1, r2 = part[:, 0], part[:, 1]
    return r1, r2, np.isfinite(r1) & np.isfinite(r2)


def twonn_fit(mu: np.ndarray) -> float:
    """The unrounded slope estimate d from the ratios mu (steps 2-3 of the sketch)."""
    mu = np.sort(np.asarray(mu, np.float64))
    N = mu.size
    if N < 3:
        return 1.0
    F = np.arange(1, N + 1) / N
    x = np.log(mu[:-1])
    y = np.log(1.0 - F[:-1])
    sxx = float(x @ x)
    if sxx <= 0:
        return 1.0
    return -float(x @ y) / sxx


def twonn_dimension(X, max_dim: int | None = None) -> int:
    """The latent dimension of the rows of X by (modified) TwoNN.

    Parameters
    ----------
    X : ndarray or scipy sparse matrix (m, F)
    max_dim : int, optional
        Upper bound of the result.

    Returns
    -------
    int
        d >= 1.
    """
    r1, r2, ok = two_smallest_positive(pairwise_euclidean(X))
    d = int(round(twonn_fit(r2[ok] / r1[ok])))
    d = max(1, d)
    return min(d, max_dim) if max_dim is not None else d
