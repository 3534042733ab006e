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
* the coins come from a numpy Generator seeded by (seed, Stream.RELIEFE_PRMS), one per stored non-zero in
  CSR order (zeros stay zero whatever the coin, so they are never visited): deterministic, and a wide sample
  is never made dense.
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


def prms_epsilon(B) -> float:
    """eps = ||A||_inf / (m + n) for the dilation A of B: the largest row (= column) sum of |B| over m + n."""
    from scipy import sparse

    m, n = B.shape
    A = abs(B) if sparse.issparse(B) else np.abs(np.asarray(B, np.float64))
    rows = np.asarray(A.sum(axis=1)).ravel()
    cols = np.asarray(A.sum(axis=0)).ravel()
    return float(max(rows.max(initial=0.0), cols.max(initial=0.0))) / (m + n)


def prms(B, rng: np.random.Generator, epsilon: float | None = None):
    """The PrMS sparsification of B, as a new CSR matrix (float64).

    Parameters
    ----------
    B : ndarray or scipy sparse matrix (m, n)
        Zeros stay zero (their probability is 0), so only the stored non-zeros are visited: a wide sample is
        never made dense.
    rng : numpy.random.Generator
        One uniform draw per stored non-zero, in CSR order (row by row, columns ascending).
    epsilon : float, optional
        Default :func:`prms_epsilon`.

    Returns
    -------
    scipy.sparse.csr_matrix (m, n)
    """
    from scipy import sparse

    C = sparse.csr_matrix(B, dtype=np.float64, copy=True)
    C.sum_duplicates()
    C.eliminate_zeros()
    C.sort_indices()
    m, n = C.shape
    eps = prms_epsilon(C) if epsilon is None else float(epsilon)
    coins = rng.random(C.data.size)
    if eps <= 0:
        return sparse.csr_matrix((m, n))
    thr = eps / np.sqrt(m + n)
    v = C.data
    mag = np.abs(v)
    C.data = np.where(mag > thr, v, np.where(coins < mag / thr, np.sign(v) * thr, 0.0))
    C.eliminate_zeros()
    return C
