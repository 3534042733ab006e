"""Reading feature and target values out of Arrow record batches (inside Spark tasks; NumPy only).

Sketch
------
A batch holds ordinary columns and at most one Spark ML vector column (Arrow struct ``type, size,
indices, values``; type 0 = sparse, 1 = dense). :class:`BatchValues` gives, for every logical column,
either a dense float64 array (numeric value, or category index for nominal columns; NaN = missing) or,
for a vector element, the rows and values of its stored entries (the other rows hold an implicit 0).
Vector data is never densified as floats: that is what keeps sparse input sparse until encoding.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .batch_matrix import remembered_columns


def qcol(name: str):
    """A Spark column reference that survives dots, spaces and backticks in the name."""
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def try_cast(name: str, to: str, trim: bool = False):
    """Column ``name`` (trimmed first when ``trim``) cast to the SQL type ``to``, null where it does not convert.

    ``Column.try_cast`` (pyspark >= 4.0); on Spark 3.5, whose Python API lacks it, the same SQL expression
    (``try_cast(... AS to)``, in Spark SQL since 3.2).
    """
    from pyspark.sql import Column
    from pyspark.sql import functions as F

    if hasattr(Column, "try_cast"):
        return (F.trim(qcol(name)) if trim else qcol(name)).try_cast(to)
    quoted = "`" + name.replace("`", "``") + "`"
    return F.expr(f"try_cast({f'trim({quoted})' if trim else quoted} AS {to})")


def try_date(column, fmt: str | None = None):
    """``column`` parsed as a date (with the datetime pattern ``fmt``, else as a cast does), null where it is not one.

    ``F.try_to_date`` (pyspark >= 4.0); on Spark 3.5: ``try_to_timestamp`` (same parser, same failures) cast to
    a date.
    """
    from pyspark.sql import functions as F

    if hasattr(F, "try_to_date"):
        return F.try_to_date(column) if fmt is None else F.try_to_date(column, fmt)
    if fmt is None:
        return F.try_to_timestamp(column).cast("date")
    return F.try_to_timestamp(column, F.lit(fmt)).cast("date")


def safe_names(columns) -> dict:
    """{DataFrame column: internal name} of the columns behind ``columns``: ``__c0, __c1, ...`` in the order of
    the sorted names (see :func:`safe_select`)."""
    return {name: f"__c{i}" for i, name in enumerate(sorted({c.column for c in columns}))}


def safe_columns(columns, alias: dict) -> list:
    """Copies of the ColumnInfo objects ``columns`` pointing at their internal names ``alias``."""
    import dataclasses

    return [dataclasses.replace(c, column=alias[c.column]) for c in columns]


def safe_select(df, columns, extra=()):
    """Select the DataFrame columns behind ``columns`` under safe internal names (``__c0, __c1, ...``).

    Column names with dots, spaces or backticks trip up some PySpark APIs (``mapInArrow`` among them), so
    the kernels only ever see the internal names. Returns the narrowed DataFrame and copies of the
    ColumnInfo objects pointing at the new names; ``extra`` columns are kept under their own names.
    """
    alias = safe_names(columns)
    df2 = df.select(*[qcol(n).alias(a) for n, a in alias.items()], *[qcol(e) for e in extra])
    return df2, safe_columns(columns, alias)


def float_matrix(data: pa.RecordBatch | pa.Table, columns: list) -> np.ndarray:
    """The float64 (or float32) ``columns`` (positions) of a record batch or table as one column-major matrix (rows x
    columns, nulls as NaN), made by one Arrow call (``to_tensor``; a table's chunks combined first).

    Decision: one call, not one ``to_numpy`` per column: each column's call gives up the GIL and takes it back, and
    with another thread running Python beside it each take waits for the interpreter's switch interval (205 columns
    of an 8 MiB ARFF range: 1.2-1.6 s beside a thread spinning in Python, 4-14 ms alone; one call 21-30 ms either
    way), and a wide table's 20,000 columns cost 0.45 s a batch one by one, 0.09 s in one call."""
    part = data.select(columns)
    if not columns or part.num_rows == 0:
        return np.empty((part.num_rows, len(columns)), order="F")
    if isinstance(part, pa.Table):
        part = part.combine_chunks().to_batches()[0]
    return np.asarray(part.to_tensor(null_to_nan=True, row_major=False))


def numeric_array(arr) -> np.ndarray:
    """float64 values of a numeric or boolean Arrow array (null = NaN)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if not pa.types.is_float64(arr.type):
        arr = pc.cast(arr, pa.float64())
    return np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.float64)  # nulls become NaN


def string_array(arr) -> pa.Array:
    """Strings of a string or boolean Arrow array ('true'/'false' for booleans)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_boolean(arr.type):
        return pc.if_else(arr, "true", "false")
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return pc.cast(arr, pa.string())
    return arr


def category_indices(arr, categories: list) -> np.ndarray:
    """Index of each string in ``categories`` (float64; NaN for null or for a value not in the list)."""
    idx = pc.index_in(string_array(arr), value_set=pa.array(categories, type=pa.string()))
    return np.asarray(pc.fill_null(pc.cast(idx, pa.float64()), np.nan).to_numpy(zero_copy_only=False))


def value_counts(arr) -> dict:
    """{value: count} of the non-null strings of an array."""
    vc = pc.value_counts(string_array(arr))
    out = {}
    for v, c in zip(vc.field("values").to_pylist(), vc.field("counts").to_pylist()):
        if v is not None:
            out[v] = out.get(v, 0) + int(c)
    return out


def vector_csr(arr, size: int):
    """CSR arrays (indptr, indices, values) of a Spark ML vector column; dense rows are converted.

    A null vector is a row with every element missing (NaN stored explicitly).
    """
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    n = len(arr)
    vtype = arr.field("type")
    indices = arr.field("indices")
    values = arr.field("values")
    is_null = np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    dense = np.asarray(pc.fill_null(vtype, 0).to_numpy(zero_copy_only=False), dtype=np.int8) == 1
    val_len = np.asarray(pc.fill_null(pc.list_value_length(values), 0).to_numpy(zero_copy_only=False), np.int64)
    flat_vals = np.asarray(pc.list_flatten(values).to_numpy(zero_copy_only=False), dtype=np.float64)
    idx_len = np.asarray(pc.fill_null(pc.list_value_length(indices), 0).to_numpy(zero_copy_only=False), np.int64)
    flat_idx = np.asarray(pc.list_flatten(indices).to_numpy(zero_copy_only=False), dtype=np.int64)
    # per row: number of entries and their (index, value)
    counts = np.where(is_null, size, val_len)
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    out_idx = np.empty(indptr[-1], np.int64)
    out_val = np.empty(indptr[-1], np.float64)
    v_pos = np.zeros(n + 1, np.int64)
    np.cumsum(val_len, out=v_pos[1:])
    i_pos = np.zeros(n + 1, np.int64)
    np.cumsum(idx_len, out=i_pos[1:])
    for r in range(n):
        a, b = indptr[r], indptr[r + 1]
        if is_null[r]:
            out_idx[a:b] = np.arange(size)
            out_val[a:b] = np.nan
        elif dense[r]:
            out_idx[a:b] = np.arange(b - a)
            out_val[a:b] = flat_vals[v_pos[r]:v_pos[r + 1]]
        else:
            out_idx[a:b] = flat_idx[i_pos[r]:i_pos[r + 1]]
            out_val[a:b] = flat_vals[v_pos[r]:v_pos[r + 1]]
    return indptr, out_idx, out_val


class BatchValues:
    """Values of the logical columns of one Arrow batch.

    Parameters
    ----------
    batch : pyarrow.RecordBatch
    columns : list of ColumnInfo
        The logical columns to read (features or targets).
    categories : list
        Category list per logical column for nominal ones read from string columns (None otherwise).
    vector_size : int
        Number of elements of the vector column, if any.
    """

    def __init__(self, batch, columns, categories=None, vector_size: int = 0):
        self.batch = batch
        self.columns = columns
        self.categories = categories or [None] * len(columns)
        self.n_rows = batch.num_rows
        self._csr = None
        self._by_index = None
        self._dense = {}
        self.vector_size = vector_size

    def dense(self, i: int) -> np.ndarray:
        """float64 values of ordinary logical column i (category index for nominal; NaN = missing)."""
        if i in self._dense:
            return self._dense[i]
        c = self.columns[i]
        arr = self.batch.column(c.column)
        if c.kind == "nominal":
            if self.categories[i] is None:
                raise ValueError(f"no categories for nominal column '{c.name}'")
            out = category_indices(arr, self.categories[i])
        else:
            out = numeric_array(arr)
        self._dense[i] = out
        return out

    def dense_matrix(self, idx) -> np.ndarray:
        """The values of the ordinary logical columns ``idx`` as one float64 matrix (rows x len(idx), column-major):
        column j is :meth:`dense` of ``idx[j]``.

        Decision: the numeric columns stored as float64, and those stored as float32, are copied by one Arrow call
        each (``RecordBatch.to_tensor``, nulls as NaN: what :func:`numeric_array` gives; float32 widened exactly),
        the others column by column. A wide table's 20,000 columns cost 0.45 s a batch through
        :func:`numeric_array` (its per-call overhead), 0.09 s in one call; a tall table's 100 batches of 50 float32
        columns 0.6 s column by column.
        A driver batch whose matrix the statistics pass kept (:mod:`spark_fr.data.batch_matrix`) gives that
        matrix's columns, without a copy.
        """
        if all(self.columns[i].kind != "nominal" and self.columns[i].index is None for i in idx):
            kept = remembered_columns(self.batch, [self.columns[i].column for i in idx])
            if kept is not None:
                return kept
        M = np.empty((self.n_rows, len(idx)), order="F")
        schema = self.batch.schema
        at = {n: k for k, n in enumerate(schema.names)} if self.n_rows else {}
        types = schema.types
        groups = {pa.float64(): ([], []), pa.float32(): ([], [])}  # per type: (columns of M, of the batch)
        for j, i in enumerate(idx):
            c = self.columns[i]
            k = at.get(c.column) if c.kind != "nominal" and c.index is None and i not in self._dense else None
            if k is not None and types[k] in groups:
                groups[types[k]][0].append(j)
                groups[types[k]][1].append(k)
            else:
                M[:, j] = self.dense(i)
        for fast, arrow in groups.values():
            if not fast:
                continue
            T = float_matrix(self.batch, arrow)
            if len(fast) == len(idx):
                M = np.asfortranarray(T, dtype=np.float64)
            else:
                M[:, fast] = T
            for j in fast:
                self._dense[idx[j]] = M[:, j]
        return M

    def strings(self, i: int):
        """The raw strings of nominal logical column i."""
        return string_array(self.batch.column(self.columns[i].column))

    def sparse(self, i: int):
        """(rows, values) of the stored entries of vector element i; other rows hold 0."""
        c = self.columns[i]
        if self._csr is None:
            indptr, idx, val = vector_csr(self.batch.column(c.column), self.vector_size)
            rows = np.repeat(np.arange(self.n_rows), np.diff(indptr))
            order = np.argsort(idx, kind="stable")
            idx = idx[order]
            self._csr = (rows[order], val[order])
            self._by_index = np.searchsorted(idx, np.arange(self.vector_size + 1), side="left")
        rows, val = self._csr
        a, b = self._by_index[c.index], self._by_index[c.index + 1]
        return rows[a:b], val[a:b]

    def vector_row_hashes(self) -> np.ndarray:
        """Per row, an order-independent hash of the vector's non-zero entries (index and value bits)."""
        from ..runtime.rng import GOLDEN, mix64_array

        c = next(c for c in self.columns if c.index is not None)
        indptr, idx, val = vector_csr(self.batch.column(c.column), self.vector_size)
        keep = val != 0.0  # explicit and implicit zeros are one value; NaN is kept
        rows = np.repeat(np.arange(self.n_rows), np.diff(indptr))[keep]
        v = val[keep]
        bits = np.where(np.isnan(v), np.nan, v).view(np.uint64)
        with np.errstate(over="ignore"):
            entry = mix64_array(idx[keep].astype(np.uint64) * GOLDEN ^ bits)
        out = np.zeros(self.n_rows, np.uint64)
        np.add.at(out, rows, entry)
        return out

    def values(self, i: int) -> np.ndarray:
        """Dense float64 values of logical column i, vector elements included (implicit zeros filled)."""
        c = self.columns[i]
        if c.index is None:
            return self.dense(i)
        out = np.zeros(self.n_rows)
        rows, val = self.sparse(i)
        out[rows] = val
        return out
