"""Stable row ids: a 64-bit hash of each row's content, made distinct for repeated rows (NumPy only).

Sketch
------
* ``content_keys``: FNV-1a over the row's encoded features (bin codes and/or scaled values) and the bits
  of its targets, finished by the SplitMix64 mix. Identical rows get identical keys, whatever file,
  partition or position they come from.
* ``distinct_keys``: in a sorted array of content keys, the k-th copy of a repeated row gets
  ``mix64(key + k * golden)``, so every row has its own id (for bootstrapping) and the ids still do not
  depend on the row order.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..runtime.rng import GOLDEN, mix64_array
from ..tasks.sparse_columns import SparseLabels

_FNV_PRIME = np.uint64(0x100000001B3)
_ONE_BITS = np.float64(1.0).view(np.uint64)
_NAN_BITS = np.float64(np.nan).view(np.uint64)
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)


def content_keys(parts, Y: np.ndarray) -> np.ndarray:
    """64-bit content hash of every row.

    Parameters
    ----------
    parts : list of ndarray
        The encoded features: codes (D, m) uint8 and/or scaled values (m, D) float64.
    Y : ndarray (m, T) or SparseLabels
        Targets (NaN = missing); label-sparse ones hash as their dense form.

    Returns
    -------
    ndarray of uint64 (m,)
    """
    m = Y.shape[0]
    h = np.full(m, _FNV_OFFSET, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for arr in parts:
            if arr.dtype == np.uint8:
                h = _mix_code_rows(h, np.ascontiguousarray(arr), _FNV_PRIME)
            else:
                vals = np.where(np.isnan(arr), np.nan, arr + 0.0)
                bits = np.ascontiguousarray(vals, dtype=np.float64).view(np.uint64)
                for f in range(bits.shape[1]):
                    h = (h ^ bits[:, f]) * _FNV_PRIME
                    h = h ^ (h >> np.uint64(29))
        if isinstance(Y, SparseLabels):
            h = _mix_label_sets(h, Y)
        else:
            yb = np.where(np.isnan(Y), np.nan, Y + 0.0).astype(np.float64)  # one NaN pattern, no -0.0
            bits = np.ascontiguousarray(yb).view(np.uint64)
            for j in range(Y.shape[1]):
                h = (h ^ bits[:, j]) * _FNV_PRIME
                h = h ^ (h >> np.uint64(29))
    return mix64_array(h)


@njit(cache=True, nogil=True)
def _mix_code_rows(h, codes, prime):
    """FNV-1a steps of :func:`content_keys` over the rows of bin codes (D, m), one feature after another."""
    for f in range(codes.shape[0]):
        for r in range(h.shape[0]):
            h[r] = (h[r] ^ np.uint64(codes[f, r])) * prime
    return h


def warm_up_row_hashes() -> None:
    """Compile (or load from numba's cache) :func:`_mix_float_columns` for the statistics pass's matrix
    (column-major; numba types a one-column matrix as C-contiguous, a wider one as Fortran), as
    :func:`spark_fr.data.binning.warm_up_encoding` does for the encoding pass."""
    for k in (2, 1):
        _mix_float_columns(np.full(2, _FNV_OFFSET, np.uint64), np.zeros((2, k), order="F"),
                           np.arange(k, dtype=np.int64), _NAN_BITS, _FNV_PRIME)


@njit(cache=True, nogil=True)
def _mix_float_columns(h, M, cols, nan_bits, prime):
    """The steps of :func:`raw_row_hashes` for the numeric columns ``cols`` of the matrix ``M`` (rows x columns),
    in that order: the bits of each value as :func:`_float_bits` gives them (one NaN, 0.0 for -0.0)."""
    shift = np.uint64(29)
    cell = np.zeros(1, np.float64)
    bits = cell.view(np.uint64)
    for q in range(cols.shape[0]):
        j = cols[q]
        for r in range(h.shape[0]):
            v = M[r, j]
            if v != v:
                b = nan_bits
            else:
                cell[0] = v + 0.0
                b = bits[0]
            x = (h[r] ^ b) * prime
            h[r] = x ^ (x >> shift)
    return h


def _mix_label_sets(h: np.ndarray, Y: SparseLabels) -> np.ndarray:
    """The target part of :func:`content_keys` for label-sparse targets: the same bits as for their dense
    form (1.0 for a label a row has, 0.0 for one it has not, NaN everywhere in an unlabelled row), column by
    column, with O(rows) memory."""
    order = np.argsort(Y.indices, kind="stable")  # the entries column by column
    rows = np.repeat(np.arange(Y.shape[0]), np.diff(Y.indptr))[order]
    col_ptr = np.zeros(Y.n_columns + 1, np.int64)
    np.cumsum(np.bincount(Y.indices, minlength=Y.n_columns), out=col_ptr[1:])
    return _mix_columns(h.copy(), Y.labelled, col_ptr, rows, _ONE_BITS, _NAN_BITS, _FNV_PRIME)


@njit(cache=True, nogil=True)
def _mix_columns(h, labelled, col_ptr, col_rows, one_bits, nan_bits, prime):
    m = h.shape[0]
    on = np.zeros(m, np.bool_)
    shift = np.uint64(29)
    zero = np.uint64(0)
    for j in range(col_ptr.shape[0] - 1):
        for p in range(col_ptr[j], col_ptr[j + 1]):
            on[col_rows[p]] = True
        for r in range(m):
            b = (one_bits if on[r] else zero) if labelled[r] else nan_bits
            x = (h[r] ^ b) * prime
            h[r] = x ^ (x >> shift)
        for p in range(col_ptr[j], col_ptr[j + 1]):
            on[col_rows[p]] = False
    return h


def distinct_keys(sorted_keys: np.ndarray) -> np.ndarray:
    """Make equal keys (identical rows) distinct: the k-th copy gets mix64(key + k * golden)."""
    n = sorted_keys.size
    if n < 2:
        return sorted_keys
    new_run = np.r_[True, sorted_keys[1:] != sorted_keys[:-1]]
    if new_run.all():
        return sorted_keys
    run_start = np.maximum.accumulate(np.where(new_run, np.arange(n), 0))
    occ = (np.arange(n) - run_start).astype(np.uint64)
    with np.errstate(over="ignore"):
        z = mix64_array(sorted_keys + occ * GOLDEN)
    return np.where(occ == 0, sorted_keys, z)


def occurrence_keys(keys: np.ndarray, occurrence: int) -> np.ndarray:
    """The distinct keys of the ``occurrence``-th copies of rows with content ``keys`` (0: the key itself)."""
    keys = np.asarray(keys, dtype=np.uint64)
    if occurrence == 0:
        return keys
    with np.errstate(over="ignore"):
        return mix64_array(keys + np.uint64(occurrence) * GOLDEN)


_NULL_STRING = np.uint64(0x5BD1E9955BD1E995)


def _float_bits(v: np.ndarray) -> np.ndarray:
    """The bits of float64 values, one pattern for NaN and for zero (0.0 and -0.0 are one value)."""
    v = np.where(np.isnan(v), np.nan, v + 0.0)
    return np.ascontiguousarray(v, dtype=np.float64).view(np.uint64)


def _string_hashes(strings) -> np.ndarray:
    """A 64-bit hash of every string of an Arrow array (null: a constant), computed once per distinct value."""
    import hashlib

    import pyarrow as pa

    enc = strings.dictionary_encode() if not pa.types.is_dictionary(strings.type) else strings
    if isinstance(enc, pa.ChunkedArray):
        enc = enc.combine_chunks()
    values = [hashlib.blake2b(s.encode("utf-8"), digest_size=8).digest() for s in enc.dictionary.to_pylist()]
    table = np.frombuffer(b"".join(values), dtype="<u8") if values else np.empty(0, np.uint64)
    idx = enc.indices.to_numpy(zero_copy_only=False)
    idx = np.asarray(idx, dtype=np.float64) if enc.indices.null_count else idx
    out = np.full(len(enc), _NULL_STRING, dtype=np.uint64)
    known = ~np.isnan(idx) if idx.dtype == np.float64 else np.ones(len(enc), bool)
    out[known] = table[idx[known].astype(np.int64)]
    return out


def raw_row_hashes(bv, n_columns: int, matrix: np.ndarray | None = None, at: dict | None = None) -> np.ndarray:
    """A 64-bit hash of the raw values of the first ``n_columns`` logical columns of a batch, per row.

    Computed from the values themselves (numbers, strings, the stored entries of a vector column), so the
    same rows hash the same whatever the source (a Spark DataFrame, Parquet files, an ARFF file) or the
    partitioning. Used to choose the quantile sample (the rows with the smallest hashes).

    Parameters
    ----------
    bv : spark_fr.data.columns.BatchValues
    n_columns : int
    matrix : ndarray (rows, k), optional
        The values of some numeric columns already gathered (the statistics pass's matrix): their steps run in
        one kernel (:func:`_mix_float_columns`, the same bits as column by column).
    at : dict, optional
        {logical column: its column in ``matrix``}.

    Returns
    -------
    ndarray of int64 (signed, so that the smallest can be taken with numpy)
    """
    m = bv.n_rows
    h = np.full(m, _FNV_OFFSET, dtype=np.uint64)
    at = at if matrix is not None and at is not None else {}
    vector_done = False
    run = []  # consecutive logical columns held in `matrix`, mixed in one kernel call
    with np.errstate(over="ignore"):
        for i in range(n_columns):
            c = bv.columns[i]
            if i in at:
                run.append(at[i])
                continue
            if run:
                h, run = _mix_float_columns(h, matrix, np.array(run, np.int64), _NAN_BITS, _FNV_PRIME), []
            if c.index is not None:
                if vector_done:
                    continue
                vector_done = True
                bits = bv.vector_row_hashes()
            elif c.kind == "numeric":
                bits = _float_bits(bv.dense(i))
            else:
                bits = _string_hashes(bv.strings(i))
            h = (h ^ bits) * _FNV_PRIME
            h = h ^ (h >> np.uint64(29))
        if run:
            h = _mix_float_columns(h, matrix, np.array(run, np.int64), _NAN_BITS, _FNV_PRIME)
    return mix64_array(h).view(np.int64)
