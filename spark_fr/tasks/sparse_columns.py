"""Label-sparse clustering columns: the grower's input when a task's columns are mostly zero.

Sketch
------
A GO hierarchy has thousands of labels and a row a few dozen positive ones, so the dense clustering matrix
``Z`` (rows x labels, centred and scaled) costs rows x labels in memory and in every node's statistics.
The grower's gain for complete columns is shift-invariant,

    h = |S_L|^2 / W_L + |S_R|^2 / W_R - |S|^2 / W        (S: weighted column sums of a side, W its weight)

so the columns need not be centred: ``z_rk = sqrt(alpha_k) * y_rk`` is zero wherever the label is absent.
:class:`SparseColumns` keeps these values row by row (CSR: ``indptr``, ``indices``, ``values``), and the
sparse grower (:mod:`spark_fr.pct.grow_sparse`) updates the node and split statistics in
O(positive labels of the row) per row. Only complete columns (no missing value) are represented this way:
missing values need per-column counts, so partially labelled targets stay dense.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: a task's clustering columns become sparse when at least this many of them ...
SPARSE_MIN_COLUMNS = 32
#: ... and at most this share of their values is non-zero
SPARSE_MAX_DENSITY = 0.10


@dataclass
class SparseColumns:
    """Uncentred clustering columns of n rows in compressed sparse row (CSR) form.

    Attributes
    ----------
    indptr : int64 (n + 1,)
        Row r's entries are ``indices[indptr[r]:indptr[r + 1]]`` (increasing) and the same slice of
        ``values``.
    indices : int64 (nnz,)
        Column of each stored value.
    values : float64 (nnz,)
        The non-zero values.
    n_columns : int
        K, the number of columns.
    """

    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    n_columns: int

    @classmethod
    def from_dense(cls, C: np.ndarray, scale: np.ndarray | None = None) -> "SparseColumns":
        """The non-zero entries of ``C * scale`` (n x K, no NaN), row by row in column order."""
        C = np.asarray(C, dtype=np.float64)
        if np.isnan(C).any():
            raise ValueError("sparse clustering columns cannot hold missing values")
        rows, cols = np.nonzero(C)
        vals = C[rows, cols] if scale is None else C[rows, cols] * np.asarray(scale, np.float64)[cols]
        indptr = np.zeros(C.shape[0] + 1, np.int64)
        np.cumsum(np.bincount(rows, minlength=C.shape[0]), out=indptr[1:])
        return cls(indptr, cols.astype(np.int64), np.ascontiguousarray(vals, dtype=np.float64), int(C.shape[1]))

    @property
    def shape(self) -> tuple:
        return (self.indptr.shape[0] - 1, self.n_columns)

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1])

    @property
    def mean_row_nnz(self) -> float:
        """Average number of stored values per row (what a row costs the sparse grower)."""
        n = self.shape[0]
        return self.nnz / n if n else 0.0

    def to_dense(self) -> np.ndarray:
        """The n x K matrix (zeros where nothing is stored)."""
        out = np.zeros(self.shape)
        rows = np.repeat(np.arange(self.shape[0]), np.diff(self.indptr))
        out[rows, self.indices] = self.values
        return out


def worth_sparse(C: np.ndarray) -> bool:
    """Whether complete columns ``C`` (n x K) are wide and sparse enough for :class:`SparseColumns`."""
    C = np.asarray(C)
    if C.ndim != 2 or C.shape[1] < SPARSE_MIN_COLUMNS or C.size == 0 or np.isnan(C).any():
        return False
    return np.count_nonzero(C) <= SPARSE_MAX_DENSITY * C.size
