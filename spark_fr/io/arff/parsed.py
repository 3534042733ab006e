"""Containers for parsed rows, and joining the pieces that runs of lines produce.

Sketch
------
* :class:`ParsedRows` holds every requested attribute column-wise: float64 arrays (NaN = missing)
  for numeric attributes, lists of strings (None = missing) for the others.
* :class:`SparseParsedRows` holds the feature attributes as CSR arrays (zeros omitted, columns
  sorted within a row) and the other attributes as a :class:`ParsedRows`.
* The row parser converts a file chunk run by run; :func:`concat_parsed` and :func:`concat_csr`
  join the per-run pieces in order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain

import numpy as np


@dataclass
class ParsedRows:
    """Column-wise values of parsed data rows.

    Attributes
    ----------
    n_rows : int
        Number of parsed rows.
    numeric : dict of int to ndarray
        Attribute index -> float64 array of length ``n_rows`` (NaN = missing).
    nominal : dict of int to list
        Attribute index (nominal, string, date, hierarchical) -> list of
        unquoted values (None = missing).
    arrow : dict of int to pyarrow.Array
        Numeric attribute index -> the same values as an Arrow float64 array whose nulls are exactly the
        missing values, when the parser has one already (pyarrow's CSV reader; see :func:`numeric_arrow`).
    """

    n_rows: int
    numeric: dict[int, np.ndarray] = field(default_factory=dict)
    nominal: dict[int, list[str | None]] = field(default_factory=dict)
    arrow: dict = field(default_factory=dict)

    def numeric_arrow(self, a: int):
        """Numeric attribute ``a`` as an Arrow float64 array, null where missing: the parser's own array when it
        kept one, else made from :attr:`numeric` (a copy, and pyarrow's first such conversion imports pandas)."""
        import pyarrow as pa

        if a in self.arrow:
            return self.arrow[a]
        v = self.numeric[a]
        return pa.array(v, type=pa.float64(), mask=np.isnan(v))


@dataclass
class SparseParsedRows:
    """Feature attributes as CSR arrays plus the remaining attributes column-wise.

    Attributes
    ----------
    n_rows : int
        Number of parsed rows.
    feature_indices : tuple of int
        Attribute indices of the CSR columns (CSR column p = attribute
        ``feature_indices[p]``).
    indptr : ndarray of int64, shape (n_rows + 1,)
    indices : ndarray of int32
        Column positions (0..F-1), sorted within each row.
    values : ndarray of float64
        Numeric values or nominal domain indices; NaN = missing; zeros omitted.
    other : ParsedRows
        All attributes not in ``feature_indices`` (e.g. the targets).
    """

    n_rows: int
    feature_indices: tuple[int, ...]
    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    other: ParsedRows


def select(columns: ParsedRows, attrs: Sequence[int]) -> ParsedRows:
    """The columns ``attrs`` of ``columns`` (no copy)."""
    out = ParsedRows(columns.n_rows)
    for a in attrs:
        if a in columns.numeric:
            out.numeric[a] = columns.numeric[a]
        else:
            out.nominal[a] = columns.nominal[a]
    return out


def concat_parsed(pieces: list[ParsedRows], empty: ParsedRows) -> ParsedRows:
    """Rows of ``pieces`` one after the other (``empty`` gives the columns when there is no piece)."""
    if not pieces:
        return empty
    if len(pieces) == 1:
        return pieces[0]
    out = ParsedRows(sum(p.n_rows for p in pieces))
    for a in empty.numeric:
        out.numeric[a] = np.concatenate([p.numeric[a] for p in pieces])
    for a in empty.nominal:
        out.nominal[a] = list(chain.from_iterable(p.nominal[a] for p in pieces))
    return out


def csr_piece(n, counts_parts, index_parts, value_parts):
    """One CSR piece ``(counts per row, column indices, values)`` from its parts (or ``n`` empty rows)."""
    counts = np.concatenate(counts_parts) if counts_parts else np.zeros(n, dtype=np.int64)
    indices = np.concatenate(index_parts) if index_parts else np.empty(0, dtype=np.int32)
    values = np.concatenate(value_parts) if value_parts else np.empty(0, dtype=np.float64)
    return counts, indices, values


def concat_csr(pieces):
    """CSR arrays ``(indptr int64, indices int32, values float64)`` of the pieces, in order."""
    counts, indices, values = csr_piece(0, *zip(*pieces)) if pieces else csr_piece(0, [], [], [])
    indptr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return indptr, indices.astype(np.int32, copy=False), values.astype(np.float64, copy=False)


def row_sorted(rows: np.ndarray, cols: np.ndarray) -> bool:
    """True if ``cols`` strictly increase within each run of equal (non-decreasing) ``rows``."""
    if rows.size < 2:
        return True
    same_row = rows[1:] == rows[:-1]
    return bool((rows[1:] >= rows[:-1]).all() and (cols[1:][same_row] > cols[:-1][same_row]).all())
