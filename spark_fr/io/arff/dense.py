"""Dense data rows: ``v1,v2,...,vm``, one value per attribute.

Sketch
------
* Runs of dense lines without quote characters go to pyarrow's CSV reader (C++; no quoting, ``?``
  read as null, numeric columns as float64, other columns as strings checked against their
  nominal domain). When pyarrow refuses (e.g. a ``?`` with spaces around it, a wrong value
  count, a bad number) the run is re-parsed in Python: ``line.split(',')`` and
  :meth:`CellConverter.cell_columns`, which define the semantics (and the caller re-checks line by
  line for the exact error).
* A line with a quote character is tokenized by :func:`dense_cells` with the quoting tokenizer.
* :func:`dense_to_csr` turns parsed dense columns into a CSR piece (blocks of at most
  ``CSR_BLOCK_CELLS`` cells; zeros omitted, NaN kept).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ...data.columns import float_matrix
from .cells import CellConverter
from .errors import Problem
from .header import NOMINAL
from .parsed import ParsedRows, csr_piece
from .tokens import has_quote, split_quoted_values

CSR_BLOCK_CELLS = 4_000_000  # dense cells per block when sparsifying dense rows
FAST_PATH_FAILURES = (pa.ArrowException, Problem)  # a fast path gave up: use the Python path


def dense_cells(conv: CellConverter, s: str) -> tuple[list[str], bool]:
    """Tokenize one stripped dense line.

    Returns
    -------
    cells : list of str
        One cell per attribute (:class:`Quoted` for quoted values).
    quoted : bool
        True if the line has a quote character.

    Raises
    ------
    Problem
        Wrong number of values, or a quoting error (``cell`` = value position).
    """
    quoted = has_quote(s)
    cells = split_quoted_values(s) if quoted else s.split(",")
    conv.check_count(len(cells))
    return cells, quoted


def csv_columns(conv: CellConverter, lines: list[str], attrs: list[int]) -> ParsedRows:
    """Columns of stripped dense lines without quotes: pyarrow first, Python on failure.

    Raises
    ------
    Problem or ValueError
        Some line is invalid (the caller re-checks line by line for the exact error).
    """
    try:
        return arrow_columns(conv, lines)
    except FAST_PATH_FAILURES:
        return python_columns(conv, lines, attrs)  # defines the semantics and the errors


def python_columns(conv: CellConverter, lines: list[str], attrs: list[int]) -> ParsedRows:
    """Columns of stripped dense lines without quotes, split in Python (the reference path).

    Raises
    ------
    Problem or ValueError
        Some line is invalid (the caller re-checks line by line for the exact error).
    """
    m = conv.m
    rows = []
    for s in lines:
        cells = s.split(",")
        if len(cells) != m:
            conv.check_count(len(cells))
        rows.append(cells)
    return conv.cell_columns(attrs, rows, False)


def arrow_columns(conv: CellConverter, lines: list[str]) -> ParsedRows:
    """All columns of stripped dense lines without quotes, read by pyarrow's CSV reader.

    Raises
    ------
    pyarrow.ArrowException or Problem
        On anything unusual (the caller then uses the Python path).
    """
    return arrow_text_columns(conv, "\n".join(lines).encode("utf-8"), len(lines), max(map(len, lines)))


def arrow_text_columns(conv: CellConverter, data: bytes, n_rows: int, longest: int) -> ParsedRows:
    """All columns of ``n_rows`` dense lines without quotes, stripped and joined by newlines (``data``; its longest
    line ``longest`` characters), read by pyarrow's CSV reader.

    Raises
    ------
    pyarrow.ArrowException or Problem
        On anything unusual (the caller then uses the Python path).
    """
    names = [f"c{i}" for i in range(conv.m)]
    types = {name: (pa.float64() if conv.is_numeric(a) else pa.string()) for a, name in enumerate(names)}
    table = pacsv.read_csv(
        pa.py_buffer(data),
        read_options=pacsv.ReadOptions(
            column_names=names,
            use_threads=False,  # Spark already runs one parser per core
            # ~1 MB blocks are fastest; a block must hold the longest row
            block_size=max(1 << 20, 4 * (longest + 1)),
        ),
        parse_options=pacsv.ParseOptions(
            quote_char=False, double_quote=False, escape_char=False, newlines_in_values=False
        ),
        convert_options=pacsv.ConvertOptions(column_types=types, null_values=["?"], strings_can_be_null=False),
    )
    if table.num_rows != n_rows:
        raise Problem("row count mismatch")
    out = ParsedRows(n_rows)
    numeric = [a for a in range(conv.m) if conv.is_numeric(a)]
    table = table.combine_chunks()  # one chunk per column: the batch's arrays
    M = float_matrix(table, numeric)  # one Arrow call: no GIL handover per column
    nans = np.isnan(M).sum(axis=0)
    for j, a in enumerate(numeric):
        out.numeric[a] = M[:, j]
        column = table.column(a)
        if column.num_chunks == 1 and column.null_count == nans[j]:  # nulls are the "?"s; no "NaN" read
            out.arrow[a] = column.chunk(0)
    for a in range(conv.m):
        if not conv.is_numeric(a):
            out.nominal[a] = _arrow_text(conv, a, table.column(a))
    return out


def _arrow_text(conv: CellConverter, a: int, column: pa.ChunkedArray) -> list[str | None]:
    values = pc.utf8_trim_whitespace(column)
    if conv.attrs[a].kind == NOMINAL:
        allowed = pa.array(sorted(conv.domains[a]), type=pa.string())
        if not pc.all(pc.is_in(values, value_set=allowed)).as_py():
            raise Problem("value outside domain")
    missing = pc.equal(values, "?")
    if pc.any(missing).as_py():
        values = pc.if_else(missing, pa.scalar(None, pa.string()), values)
    return values.to_pylist()


def dense_to_csr(conv: CellConverter, columns: ParsedRows, features: list[int]):
    """CSR piece ``(counts, indices, values)`` of the ``features`` columns of parsed dense rows."""
    n = columns.n_rows
    width = len(features)
    counts_parts, index_parts, value_parts = [], [], []
    step = max(1, CSR_BLOCK_CELLS // max(width, 1))
    for start in range(0, n, step):
        stop = min(n, start + step)
        block = np.empty((stop - start, width), dtype=np.float64)
        for p, a in enumerate(features):
            block[:, p] = _feature_column(conv, a, columns, start, stop)
        nonzero = block != 0  # NaN != 0: missing values are kept
        rows, cols = np.nonzero(nonzero)
        counts_parts.append(nonzero.sum(axis=1))
        index_parts.append(cols.astype(np.int32))
        value_parts.append(block[rows, cols])
    return csr_piece(n, counts_parts, index_parts, value_parts)


def _feature_column(conv: CellConverter, a: int, columns: ParsedRows, start: int, stop: int) -> np.ndarray:
    if conv.is_numeric(a):
        return columns.numeric[a][start:stop]
    codes = conv.codes[a]
    return np.array([np.nan if v is None else codes[v] for v in columns.nominal[a][start:stop]], dtype=np.float64)
