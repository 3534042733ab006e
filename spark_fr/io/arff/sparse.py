"""Sparse data rows: ``{index value, index value, ...}`` with 0-based attribute indices.

Sketch
------
* Semantics (Weka's): entries may come in any order, an index may appear once; an absent
  attribute takes its sparse default (numeric 0, nominal the first domain value, others missing).
  Instance weights (``{w}`` after a row) are not supported.
* Python path, one line at a time: :func:`sparse_cells` splits the body into ``(index text,
  value)`` pairs and checks each index (an integer, within ``0..m-1``, not repeated) before any
  value is converted; :func:`full_row` fills in the defaults.
* Fast path for runs of lines without quote characters: :func:`arrow_entries` splits all rows at
  once with pyarrow string kernels into flat ``(row, attribute, value)`` entries and converts each
  distinct value (numeric) or distinct (attribute, value) pair (nominal) once. On anything
  unusual it raises, and the caller re-parses the run on the Python path, which produces the
  exact, located error. :func:`entry_columns` and :func:`entry_csr` turn the entries into full
  columns or a CSR piece.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .cells import CellConverter
from .errors import Problem
from .header import NOMINAL, NUMERIC
from .layout import Layout
from .parsed import ParsedRows, row_sorted
from .tokens import has_quote, split_plain_sparse, split_sparse_quoted


@dataclass
class Entries:
    """Sparse-row entries of a run, flattened (row-major)."""

    n_rows: int
    row: np.ndarray  # int64 row of each entry
    attr: np.ndarray  # int64 attribute of each entry
    code: np.ndarray  # float64: number / nominal domain index / NaN (missing or text)
    text: dict[int, str | None]  # entry -> value, for string/date/hierarchical entries


# ----------------------------------------------------------------------------- Python path


def sparse_cells(conv: CellConverter, s: str) -> tuple[dict[int, str], bool]:
    """Tokenize one stripped sparse line into ``{attribute index: cell}``.

    Returns
    -------
    cells : dict of int to str
    quoted : bool
        True if the exact (quoted) conversion is needed.

    Raises
    ------
    Problem
        No closing brace, a malformed entry, or a bad index (see :func:`check_index`).
    """
    if not s.endswith("}"):
        raise Problem("sparse row does not end with '}'")
    body = s[1:-1]
    quoted = has_quote(body)
    pairs = split_sparse_quoted(body) if quoted else split_plain_sparse(body)
    return index_entries(conv, pairs), quoted or conv.quoted_default


def index_entries(conv: CellConverter, pairs: list[tuple[str, str]]) -> dict[int, str]:
    """``{attribute index: cell}`` of ``(index text, cell)`` pairs, every index checked."""
    entries: dict[int, str] = {}
    for k, (index_text, value) in enumerate(pairs):
        index = check_index(conv, index_text, k)
        if index in entries:
            raise Problem(f"attribute {conv.attrs[index].name!r}: sparse index {index} given twice")
        entries[index] = value
    return entries


def check_index(conv: CellConverter, index_text: str, entry: int) -> int:
    """The attribute index written as ``index_text`` in entry ``entry`` (0-based) of a row.

    Raises
    ------
    Problem
        Not an integer, or not the index of a declared attribute (negative, or >= m); the reason
        names the entry and the declared attributes.
    """
    try:
        index = int(index_text)
    except ValueError:
        raise Problem(f"sparse index {index_text!r} is not an integer ({_where(conv, entry)})") from None
    if not 0 <= index < conv.m:
        raise Problem(f"sparse index {index} out of range ({_where(conv, entry)})")
    return index


def _where(conv: CellConverter, entry: int) -> str:
    first, last = conv.attrs[0].name, conv.attrs[-1].name
    return f"entry {entry + 1} of the row; attributes are 0 {first!r} .. {conv.m - 1} {last!r}"


def full_row(conv: CellConverter, row: list[str] | dict[int, str]) -> list[str]:
    """One cell per attribute: a dense row as it is, a sparse row with its defaults filled in."""
    if isinstance(row, list):
        return row
    full = conv.defaults.copy()
    for index, value in row.items():
        full[index] = value
    return full


# ----------------------------------------------------------------------------- vectorized path


def arrow_entries(conv: CellConverter, stripped: list[str]) -> Entries:
    """Entries of plain (unquoted) sparse rows, split and converted with pyarrow/numpy.

    Raises
    ------
    Problem or pyarrow.ArrowException
        On anything unusual; the caller then uses the Python path, which reports the exact error.
    """
    n = len(stripped)
    if any(s[-1] != "}" for s in stripped):
        raise Problem("unterminated sparse row")
    parts = pc.split_pattern(pa.array([s[1:-1] for s in stripped], type=pa.string()), ",")
    counts = parts.value_lengths().to_numpy().astype(np.int64)
    items = pc.utf8_trim_whitespace(parts.flatten())
    row = np.repeat(np.arange(n, dtype=np.int64), counts)
    empty = pc.equal(items, "").to_numpy(zero_copy_only=False)
    if empty.any():  # only "{}" rows may have an (empty) item
        if (counts[row[empty]] != 1).any():
            raise Problem("empty sparse entry")
        items = items.filter(pa.array(~empty))
        row = row[~empty]
    pairs = pc.utf8_split_whitespace(items, max_splits=1)
    if (pairs.value_lengths().to_numpy() != 2).any():
        raise Problem("sparse entry without value")
    attr = pc.cast(pc.list_element(pairs, 0), pa.int64()).to_numpy()
    if attr.size:
        if attr.min() < 0 or attr.max() >= conv.m:
            raise Problem("sparse index out of range")
        if not row_sorted(row, attr):
            order = np.lexsort((attr, row))
            if ((np.diff(attr[order]) == 0) & (np.diff(row[order]) == 0)).any():
                raise Problem("repeated sparse index")
    code, text = _entry_codes(conv, attr, pc.list_element(pairs, 1))
    return Entries(n, row, attr, code, text)


def _entry_codes(conv: CellConverter, attr: np.ndarray, values: pa.Array):
    """Convert entry values: numbers, nominal domain indices (NaN = missing), text values.

    Work is done once per distinct value (numeric) or distinct
    (attribute, value) pair (nominal), not once per entry.
    """
    encoded = pc.dictionary_encode(values)
    distinct = encoded.dictionary.to_pylist()
    which = encoded.indices.to_numpy().astype(np.int64)
    kinds = conv.kind_ids[attr]
    code = np.full(attr.size, np.nan)
    numeric = kinds == 0
    if numeric.any():
        table = np.full(len(distinct), np.nan)
        for d in np.unique(which[numeric]).tolist():
            if distinct[d] != "?":
                try:
                    table[d] = float(distinct[d])
                except ValueError:
                    raise Problem("not a number") from None
        code[numeric] = table[which[numeric]]
    nominal = kinds == 1
    if nominal.any():
        width = len(distinct)
        pairs, inverse = _unique_inverse(attr[nominal] * width + which[nominal])
        table = np.empty(len(pairs))
        for k, pair in enumerate(pairs):
            a, d = divmod(pair, width)
            value = np.nan if distinct[d] == "?" else conv.codes[a].get(distinct[d])
            if value is None:
                raise Problem("value outside domain")
            table[k] = value
        code[nominal] = table[inverse]
    text = {
        e: (None if distinct[d] == "?" else distinct[d])
        for e, d in zip(np.flatnonzero(kinds == 2).tolist(), which[kinds == 2].tolist())
    }
    return code, text


def _unique_inverse(keys: np.ndarray) -> tuple[list[int], np.ndarray]:
    """Distinct keys (first-seen order) and, per key, its position among them (hash based)."""
    encoded = pc.dictionary_encode(pa.array(keys, type=pa.int64()))
    return encoded.dictionary.to_pylist(), encoded.indices.to_numpy().astype(np.int64)


def entry_columns(conv: CellConverter, entries: Entries, attrs: Sequence[int]) -> ParsedRows:
    """Full columns (sparse defaults filled in) of ``attrs`` from sparse entries."""
    n = entries.n_rows
    wanted = np.zeros(conv.m, dtype=bool)
    wanted[np.asarray(attrs, dtype=np.int64)] = True
    subset = np.flatnonzero(wanted[entries.attr])
    order = subset[np.argsort(entries.attr[subset], kind="stable")]
    sorted_attr = entries.attr[order]
    bounds = np.searchsorted(sorted_attr, np.asarray(attrs, dtype=np.int64))
    ends = np.searchsorted(sorted_attr, np.asarray(attrs, dtype=np.int64), side="right")
    out = ParsedRows(n)
    for a, lo, hi in zip(attrs, bounds.tolist(), ends.tolist()):
        chosen = order[lo:hi]
        rows = entries.row[chosen]
        attribute = conv.attrs[a]
        if attribute.kind == NUMERIC:
            column = np.zeros(n)
            column[rows] = entries.code[chosen]
            out.numeric[a] = column
        elif attribute.kind == NOMINAL:
            if lo == hi:
                out.nominal[a] = [attribute.values[0]] * n
                continue
            codes = np.zeros(n, dtype=np.int64)
            values = entries.code[chosen]
            codes[rows] = np.where(np.isnan(values), len(attribute.values), values)
            lookup = np.array([*attribute.values, None], dtype=object)
            out.nominal[a] = lookup[codes].tolist()
        else:
            column = [None] * n
            for r, e in zip(rows.tolist(), chosen.tolist()):
                column[r] = entries.text[e]
            out.nominal[a] = column
    return out


def entry_csr(entries: Entries, layout: Layout):
    """CSR piece ``(counts, indices, values)`` of the feature entries."""
    position = layout.position_arr[entries.attr]
    keep = (position >= 0) & (entries.code != 0)
    rows, cols, values = entries.row[keep], position[keep], entries.code[keep]
    if not row_sorted(rows, cols):
        order = np.lexsort((cols, rows))
        cols, values = cols[order], values[order]
    counts = np.bincount(rows, minlength=entries.n_rows)
    return counts, cols.astype(np.int32), values
