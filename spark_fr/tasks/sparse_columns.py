"""Label-sparse clustering columns: the grower's input when a task's columns are mostly zero.

Sketch
------
A GO hierarchy has thousands of labels and a row a few dozen positive ones, so the dense clustering matrix
``Z`` (rows x labels, centred and scaled) costs rows x labels in memory and in every node's statistics.
The grower's gain for complete columns is shift-invariant,

    h = |S_L|^2 / W_L + |S_R|^2 / W_R - |S|^2 / W        (S: weighted column sums of a side, W its weight)

so the columns need not be centred: ``z_rk = sqrt(alpha_k) * y_rk`` is zero wherever the label is absent.
:class:`SparseColumns` keeps these values row by row (CSR: ``indptr``, ``indices``, ``values``), and the
grower's label-sparse backend (:mod:`spark_fr.pct.sparse_targets`) updates the node and split statistics in
O(positive labels of the row) per row. Only complete columns (no missing value) are represented this way:
missing values need per-column counts, so partially labelled targets stay dense.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

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


@dataclass
class SparseLabels:
    """An encoded 0/1 label matrix (n x L) kept as the positions of its ones, row by row (CSR).

    What HMLC's encoder produces for ensembles (``EncodingPlan.outputs`` with 'sparse_targets'): memory
    O(positive labels), not O(rows x labels). A row is either labelled (every label 0 or 1) or unlabelled (every
    label missing: NaN in the dense form), as an HMLC row is.

    Attributes
    ----------
    indptr : int64 (n + 1,)
    indices : int32 (nnz,)
        The labels of each row that are 1, increasing.
    labelled : bool (n,)
    n_columns : int
        L, the number of labels.
    """

    indptr: np.ndarray
    indices: np.ndarray
    labelled: np.ndarray
    n_columns: int

    @classmethod
    def from_dense(cls, Y: np.ndarray) -> "SparseLabels":
        """From a 0/1 matrix whose unlabelled rows are all NaN."""
        Y = np.asarray(Y, dtype=np.float64)
        missing = np.isnan(Y)
        labelled = ~missing.all(axis=1) if Y.shape[1] else np.ones(Y.shape[0], bool)
        if missing[labelled].any():
            raise ValueError("a label row is either complete or unlabelled")
        ones = np.where(missing, 0.0, Y)
        if not np.isin(ones, (0.0, 1.0)).all():
            raise ValueError("labels are 0 or 1")
        rows, cols = np.nonzero(ones)
        indptr = np.zeros(Y.shape[0] + 1, np.int64)
        np.cumsum(np.bincount(rows, minlength=Y.shape[0]), out=indptr[1:])
        return cls(indptr, cols.astype(np.int32), labelled, int(Y.shape[1]))

    @classmethod
    def vstack(cls, parts: list) -> "SparseLabels":
        """The rows of ``parts``, one after the other."""
        counts = np.concatenate([np.diff(p.indptr) for p in parts])
        indptr = np.zeros(counts.size + 1, np.int64)
        np.cumsum(counts, out=indptr[1:])
        return cls(indptr, np.concatenate([p.indices for p in parts]).astype(np.int32),
                   np.concatenate([p.labelled for p in parts]), parts[0].n_columns)

    @property
    def shape(self) -> tuple:
        return (self.labelled.shape[0], self.n_columns)

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1])

    @property
    def nbytes(self) -> int:
        return self.indptr.nbytes + self.indices.nbytes + self.labelled.nbytes

    def __getitem__(self, rows) -> "SparseLabels":
        """The rows ``rows`` (a boolean mask or integer positions, in that order)."""
        rows = np.asarray(rows)
        rows = np.flatnonzero(rows) if rows.dtype == bool else rows.astype(np.int64)
        starts = self.indptr[rows]
        counts = self.indptr[rows + 1] - starts
        indptr = np.zeros(rows.size + 1, np.int64)
        np.cumsum(counts, out=indptr[1:])
        take = np.arange(indptr[-1]) - np.repeat(indptr[:-1] - starts, counts)
        return SparseLabels(indptr, self.indices[take], self.labelled[rows], self.n_columns)

    def dense_columns(self, start: int = 0, stop: int | None = None) -> np.ndarray:
        """Labels ``start:stop`` as a dense float64 block (NaN rows for the unlabelled ones)."""
        stop = self.n_columns if stop is None else stop
        out = np.zeros((self.shape[0], stop - start))
        rows = np.repeat(np.arange(self.shape[0]), np.diff(self.indptr))
        inside = (self.indices >= start) & (self.indices < stop)
        out[rows[inside], self.indices[inside] - start] = 1.0
        out[~self.labelled] = np.nan
        return out

    def to_dense(self) -> np.ndarray:
        return self.dense_columns()

    def select(self, columns: np.ndarray, scale: np.ndarray | None = None) -> SparseColumns:
        """Labels ``columns`` (increasing) as :class:`SparseColumns` numbered 0..K-1, with the values ``scale[k]``
        (default 1). Every row must be labelled."""
        if not self.labelled.all():
            raise ValueError("sparse clustering columns cannot hold unlabelled rows")
        columns = np.asarray(columns, np.int64)
        new = np.full(self.n_columns, -1, np.int64)
        new[columns] = np.arange(columns.size)
        mapped = new[self.indices]
        kept = mapped >= 0
        rows = np.repeat(np.arange(self.shape[0]), np.diff(self.indptr))
        indptr = np.zeros(self.shape[0] + 1, np.int64)
        np.cumsum(np.bincount(rows[kept], minlength=self.shape[0]), out=indptr[1:])
        idx = mapped[kept]
        values = np.ones(idx.size) if scale is None else np.asarray(scale, np.float64)[idx]
        return SparseColumns(indptr, idx, np.ascontiguousarray(values), int(columns.size))


def stack_rows(parts: list):
    """The rows of equally typed target blocks, one after the other (dense arrays or :class:`SparseLabels`)."""
    if parts and isinstance(parts[0], SparseLabels):
        return SparseLabels.vstack(parts)
    return np.vstack(parts)


@njit(cache=True, nogil=True)
def _set_differences(y_indptr, y_indices, pred_indptr, pred_indices, nodes, out):
    """Per label, the rows whose label set and predicted set (that of ``nodes[i]``) differ on it (merge of
    the two increasing lists of each row)."""
    for i in range(nodes.shape[0]):
        a, a_end = y_indptr[i], y_indptr[i + 1]
        b, b_end = pred_indptr[nodes[i]], pred_indptr[nodes[i] + 1]
        while a < a_end and b < b_end:
            ya = y_indices[a]
            pb = pred_indices[b]
            if ya == pb:
                a += 1
                b += 1
            elif ya < pb:
                out[ya] += 1.0
                a += 1
            else:
                out[pb] += 1.0
                b += 1
        while a < a_end:
            out[y_indices[a]] += 1.0
            a += 1
        while b < b_end:
            out[pred_indices[b]] += 1.0
            b += 1


def label_errors(Y: SparseLabels, predicted: SparseColumns, nodes: np.ndarray) -> np.ndarray:
    """Per label, the number of rows of ``Y`` (all labelled) whose label differs from the prediction: row i is
    predicted the label set ``predicted`` holds for ``nodes[i]`` (its stored columns; increasing). The sum over
    the rows of the 0/1 elementwise errors of the dense form, in O(positive and predicted labels)."""
    out = np.zeros(Y.n_columns)
    _set_differences(Y.indptr, Y.indices, predicted.indptr, predicted.indices, np.asarray(nodes, np.int64), out)
    return out
