"""PrMS sparsification of ReliefE's cyclic sample (Arora, Hazan & Kale 2006; paper Sec. 3.3), no Spark.

Sketch
------
B (m x n) is the sample; A = [[0, B], [B^T, 0]] its symmetric dilation, N = m + n::

    eps   = max column mean of |A| = ||A||_inf / N             (the paper's automatic epsilon)
    thr   = eps / sqrt(N)
    A^_ij = A_ij                                   if |A_ij| > thr
          = sgn(A_ij) thr  with probability sqrt(N) |A_ij| / eps (= |A_ij| / thr), else 0

so E[A^] = A and zeros stay zero. Only the B block is drawn (the B^T block is its mirror; [R] draws both and
keeps B, the same distribution). Applied when the sample's density (non-zero share) exceeds the threshold
(0.15 by default).

Decisions (spec Sec. 5, C6 and 3.3):
* the test is on |A_ij| (the paper's); [R] tests the signed value, so every negative entry goes through the
  coin (a bug we do not copy);
* rows are L2-normalised first, as [R] does, since the sample is used in the cosine geometry of the
  embedding; :func:`prms` itself takes any matrix, the caller normalises;
* the coins come from a numpy Generator seeded by (seed, Stream.RELIEFE_PRMS): deterministic.
"""
from __future__ import annotations

import numpy as np


def density(B) -> float:
    """Share of non-zero entries of a dense array or a scipy sparse matrix."""
    m, n = B.shape
    if m * n == 0:
        return 0.0
    nnz = B.count_nonzero() if hasattr(B, "count_nonzero") and not isinstance(B, np.ndarray) else np.count_nonzero(B)
    return float(nnz) / (m * n)


def prms_epsilon(B: np.ndarray) -> float:
    """eps = ||A||_inf / (m + n) for the dilation A of B: the largest row (= column) sum of |B| over m + n."""
    B = np.abs(np.asarray(B, np.float64))
    m, n = B.shape
    return float(max(B.sum(axis=1).max(initial=0.0), B.sum(axis=0).max(initial=0.0))) / (m + n)


def prms(B: np.ndarray, rng: np.random.Generator, epsilon: float | None = None) -> np.ndarray:
    """The PrMS sparsification of B (dense, float64); a new array.

    Parameters
    ----------
    B : ndarray (m, n)
    rng : numpy.random.Generator
        One uniform draw per entry, in row-major order (entries kept or zero use theirs too).
    epsilon : float, optional
        Default :func:`prms_epsilon`.

    Returns
    -------
    ndarray (m, n)
    """
    B = np.asarray(B, np.float64)
    m, n = B.shape
    eps = prms_epsilon(B) if epsilon is None else float(epsilon)
    coins = rng.random((m, n))
    if eps <= 0:
        return np.zeros_like(B)
    thr = eps / np.sqrt(m + n)
    mag = np.abs(B)
    drawn = np.where(coins < mag / thr, np.sign(B) * thr, 0.0)
    return np.where(mag > thr, B, drawn)
