"""Streaming ARFF reader: header parsing and fast parsing of data lines.

Format sketch
-------------
::

    % comment                                  (also blank lines, anywhere)
    @relation name
    @attribute x1 numeric                      (also real, integer)
    @attribute 'a name' {v1, 'v 2', v3}        (nominal: domain in braces)
    @attribute s string
    @attribute d date "yyyy-MM-dd"             (format accepted, not used)
    @attribute class hierarchical 01,01/02     (Clus: tree paths or DAG edges)
    @data
    1.5,v1,abc,2020-01-01,01/02@01/03          (dense row)
    {0 1.5, 2 'x y'}                           (sparse row: 0-based index, value)

Keywords are case-insensitive. Names and values may be quoted with ``'`` or
``"``; inside quotes the escapes ``\\'``, ``\\"``, ``\\\\``, ``\\t``, ``\\n``,
``\\r`` and ``\\%`` are resolved (any other backslash is kept literally).
Spaces and tabs separate header tokens. ``?`` is a missing value.

Decisions
---------
* The header is streamed line by line (``read_header`` never reads the whole
  file). The first data row is peeked to tell dense from sparse data.
* Data lines are parsed by :class:`ArffRowParser`, which receives lines
  without line numbers (they come from Spark splits). Lines whose first
  non-blank character is ``%`` and blank lines are skipped; a ``%`` elsewhere is
  an ordinary character.
* Dense rows are split on ``,`` only (not on whitespace, unlike Weka's
  tokenizer); unquoted values are stripped of surrounding whitespace, quoted
  values are kept exactly. A quote character only opens a quoted value at the
  start of a value; elsewhere it is literal. A quoted ``'?'`` is the literal
  string ``?``, not a missing value. Nominal domains are also comma
  separated, so ``{low value, high}`` has the two values ``low value`` and
  ``high``.
* Fast paths: lines are grouped into runs of dense unquoted, sparse
  unquoted and quoted lines. Dense runs are parsed by pyarrow's CSV reader
  (C++); sparse runs are split with pyarrow string kernels and converted
  once per distinct value (numeric) or distinct (attribute, value) pair
  (nominal) with numpy. When a fast path fails (e.g. a ``?`` with spaces
  around it, or a malformed row) the run is re-parsed in Python, which
  defines the semantics and produces the exact error. Quoted lines always
  use the Python character tokenizer. Numbers follow Python's ``float``
  (``nan``, ``inf`` accepted).
* Sparse rows follow Weka: absent numeric -> 0.0, absent nominal -> the
  first value of the domain; absent string/date/hierarchical -> missing.
  Indices need not be sorted, but may not repeat. Instance weights
  (``{w}`` after a row) and relational attributes are not supported.
* Errors are :class:`ArffError` (a ``ValueError``) with one line:
  ``FILE line N: attribute 'x': reason``. Row errors raised by the parser are
  :class:`ArffLineError` carrying ``line_text`` and ``reason``; the caller
  turns them into a located message with :func:`find_line_number` and
  :func:`format_line_error`. When a chunk of lines has several errors, the
  one in the earliest line is reported.
"""

from __future__ import annotations

import os
from itertools import chain
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

__all__ = [
    "ArffError",
    "ArffLineError",
    "ArffAttribute",
    "ArffHeader",
    "ParsedRows",
    "SparseParsedRows",
    "ArffRowParser",
    "read_header",
    "find_line_number",
    "format_line_error",
]

NUMERIC = "numeric"
NOMINAL = "nominal"
STRING = "string"
DATE = "date"
HIERARCHICAL = "hierarchical"

_NUMERIC_KEYWORDS = frozenset({"numeric", "real", "integer"})
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "'": "'", '"': '"', "\\": "\\", "%": "%"}
_WHITESPACE = " \t\r\n\f\v"
_QUOTES = "'\""
_EOL = "\r\n"
_SEGMENT_ROWS = 65536  # lines per parsing segment (bounds temporary memory)
_SEGMENT_CHARS = 1 << 26  # characters per dense segment handed to pyarrow
_CSR_BLOCK_CELLS = 4_000_000  # dense cells per block when sparsifying dense rows
_CSV, _SPARSE, _QUOTED = "csv", "sparse", "quoted"  # kinds of runs of data lines
_KIND_IDS = {"numeric": 0, "nominal": 1}  # everything else: 2 (text)


# --------------------------------------------------------------------------- errors


class ArffError(ValueError):
    """An ARFF header or data error; the message is one line naming the file."""


class ArffLineError(ArffError):
    """A data line that cannot be parsed (its line number is not known here).

    Attributes
    ----------
    line_text : str
        The raw line as given to the parser.
    reason : str
        What is wrong, without file or line number, e.g.
        ``"attribute 'x3': 'abc' is not a number"``.
    """

    def __init__(self, reason: str, line_text: str):
        self.reason = reason
        self.line_text = line_text
        super().__init__(f"{reason} (row: {_shorten(line_text.rstrip(_EOL))})")

    def __reduce__(self):
        return (type(self), (self.reason, self.line_text))


class _Problem(ValueError):
    """Internal: a tokenizer/conversion failure carrying only the reason.

    ``cell`` locates the failure when the attribute is not named yet: the
    value position (dense row) or the index text (sparse row).
    """

    def __init__(self, reason: str, cell: int | str | None = None):
        super().__init__(reason)
        self.cell = cell


_FAST_PATH_FAILURES = (pa.ArrowException, _Problem)


def _shorten(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _file_label(path: str) -> str:
    return os.path.basename(path) or path


# --------------------------------------------------------------------------- header model


@dataclass(frozen=True)
class ArffAttribute:
    """One ``@attribute`` declaration.

    Attributes
    ----------
    name : str
        Attribute name, unquoted, escapes resolved.
    kind : str
        ``'numeric'``, ``'nominal'``, ``'string'``, ``'date'`` or ``'hierarchical'``.
    values : tuple of str or None
        Nominal domain in declaration order (None for other kinds).
    hierarchy : str or None
        For ``'hierarchical'``: the raw class specification after the keyword,
        whitespace-stripped (None for other kinds).
    """

    name: str
    kind: str
    values: tuple[str, ...] | None = None
    hierarchy: str | None = None


@dataclass(frozen=True)
class ArffHeader:
    """Parsed ARFF header.

    Attributes
    ----------
    path : str
        The file the header was read from.
    relation : str
        The ``@relation`` name ('' when absent).
    attributes : tuple of ArffAttribute
        Declared attributes, in order.
    data_line : int
        1-based line number of the ``@data`` line.
    sparse : bool or None
        True if the first data row is sparse (``{...}``), False if dense,
        None if the file has no data rows.
    """

    path: str
    relation: str
    attributes: tuple[ArffAttribute, ...]
    data_line: int
    sparse: bool | None


# --------------------------------------------------------------------------- tokenizing


class _Quoted(str):
    """A value that was quoted in the source: never stripped, never missing."""

    __slots__ = ()


def _read_quoted(text: str, start: int) -> tuple[str, int]:
    """Read the quoted token opening at ``text[start]``; return (value, index after it)."""
    quote = text[start]
    out: list[str] = []
    i = start + 1
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == quote:
            return "".join(out), i + 1
        if ch == "\\" and i + 1 < n:
            nxt = text[i + 1]
            out.append(_ESCAPES.get(nxt, "\\" + nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    raise _Problem(f"unterminated quote {quote} in {_shorten(text[start:], 40)}")


def _skip_ws(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in _WHITESPACE:
        i += 1
    return i


def _until_comma(text: str, start: int) -> str:
    end = text.find(",", start)
    return text[start:] if end < 0 else text[start:end]


def _split_quoted_values(text: str) -> list[str]:
    """Split comma-separated values honouring quotes.

    Unquoted values are returned stripped (plain ``str``); quoted values are
    returned unquoted as :class:`_Quoted`.
    """
    cells: list[str] = []
    n = len(text)
    i = 0
    while True:
        j = _skip_ws(text, i)
        if j < n and text[j] in _QUOTES:
            try:
                value, j = _read_quoted(text, j)
            except _Problem as exc:
                raise _Problem(str(exc), len(cells)) from None
            j = _skip_ws(text, j)
            if j < n and text[j] != ",":
                raise _Problem(
                    f"unexpected text after quoted value {value!r}: {_shorten(_until_comma(text, j), 30)}",
                    len(cells),
                )
            cells.append(_Quoted(value))
        else:
            k = text.find(",", j)
            k = n if k < 0 else k
            cells.append(text[j:k].strip())
            j = k
        if j >= n:
            return cells
        i = j + 1  # skip the comma


def _split_sparse_quoted(body: str) -> list[tuple[str, str]]:
    """Split the body of a sparse row containing quotes into (index text, value) pairs."""
    items: list[tuple[str, str]] = []
    n = len(body)
    i = 0
    while True:
        j = _skip_ws(body, i)
        k = j
        while k < n and body[k] not in _WHITESPACE and body[k] != ",":
            k += 1
        index_text = body[j:k]
        j = _skip_ws(body, k)
        if not index_text or j >= n or body[j] == ",":
            raise _Problem(_entry_problem(body[i:j].strip()), index_text or None)
        if body[j] in _QUOTES:
            try:
                value, j = _read_quoted(body, j)
            except _Problem as exc:
                raise _Problem(str(exc), index_text) from None
            value = _Quoted(value)
            j = _skip_ws(body, j)
            if j < n and body[j] != ",":
                raise _Problem(
                    f"unexpected text after quoted value {value!r}: {_shorten(_until_comma(body, j), 30)}",
                    index_text,
                )
        else:
            k = body.find(",", j)
            k = n if k < 0 else k
            value = body[j:k].strip()
            j = k
        items.append((index_text, value))
        if j >= n:
            return items
        i = j + 1


def _split_plain_sparse(body: str) -> list[tuple[str, str]]:
    """Split the body of a sparse row without quotes into (index text, value) pairs."""
    if not body or body.isspace():
        return []
    items = []
    for part in body.split(","):
        pair = part.split(None, 1)
        if len(pair) != 2:
            raise _Problem(_entry_problem(part.strip()), pair[0] if pair else None)
        items.append((pair[0], pair[1].rstrip()))
    return items


def _entry_problem(entry: str) -> str:
    if not entry:
        return "empty sparse entry"
    if len(entry.split()) == 1:
        return f"sparse entry {_shorten(entry, 30)} has no value"
    return f"sparse entry {_shorten(entry, 30)} is not '<index> <value>'"


def _header_word(text: str, i: int) -> tuple[str, int]:
    """Read one header token (quoted, or bare up to whitespace or '{') from ``text[i:]``."""
    i = _skip_ws(text, i)
    if i < len(text) and text[i] in _QUOTES:
        return _read_quoted(text, i)
    j = i
    while j < len(text) and text[j] not in _WHITESPACE and text[j] != "{":
        j += 1
    return text[i:j], j


def _is_blank_or_comment(text: str) -> bool:
    s = text.strip()
    return not s or s[0] == "%"


def _keyword(stripped: str) -> str | None:
    """Lower-cased ``@keyword`` opening a header line, or None."""
    if not stripped.startswith("@"):
        return None
    end = 1
    while end < len(stripped) and stripped[end] not in _WHITESPACE and stripped[end] != "{":
        end += 1
    return stripped[:end].lower()


# --------------------------------------------------------------------------- header


def _parse_domain(type_text: str) -> tuple[str, ...]:
    """Parse ``{v1, v2, ...}`` (possibly followed by a comment) into a domain."""
    i = 1
    n = len(type_text)
    while i < n and type_text[i] != "}":
        if type_text[i] in _QUOTES:
            _, i = _read_quoted(type_text, i)
        else:
            i += 1
    if i >= n:
        raise _Problem("nominal domain has no closing '}'")
    tail = type_text[i + 1 :].strip()
    if tail and not tail.startswith("%"):
        raise _Problem(f"unexpected text after nominal domain: {_shorten(tail, 30)}")
    body = type_text[1:i]
    if not body.strip():
        raise _Problem("empty nominal domain {}")
    values = _split_quoted_values(body)
    seen: set[str] = set()
    for value in values:
        if value == "" and not isinstance(value, _Quoted):
            raise _Problem(f"empty value in nominal domain {{{body}}}")
        if value in seen:
            raise _Problem(f"nominal value {str(value)!r} declared twice")
        seen.add(value)
    return tuple(str(v) for v in values)


def _expect_end(rest: str, kind: str) -> None:
    rest = rest.strip()
    if rest and not rest.startswith("%"):
        raise _Problem(f"unexpected text after type {kind}: {_shorten(rest, 30)}")


def _parse_attribute(rest: str) -> ArffAttribute:
    """Parse the text after ``@attribute``."""
    name, i = _header_word(rest, 0)
    if name == "":
        raise _Problem("missing attribute name")
    type_text = rest[i:].strip()
    if not type_text or type_text.startswith("%"):
        raise _Problem(f"attribute {name!r}: missing type")
    try:
        if type_text.startswith("{"):
            return ArffAttribute(name, NOMINAL, _parse_domain(type_text), None)
        word, j = _header_word(type_text, 0)
        keyword = word.lower()
        tail = type_text[j:]
        if keyword in _NUMERIC_KEYWORDS:
            _expect_end(tail, word)
            return ArffAttribute(name, NUMERIC, None, None)
        if keyword == STRING:
            _expect_end(tail, word)
            return ArffAttribute(name, STRING, None, None)
        if keyword == DATE:
            return ArffAttribute(name, DATE, None, None)
        if keyword == HIERARCHICAL:
            spec = tail.strip()
            if not spec:
                raise _Problem("hierarchical type without a class specification")
            return ArffAttribute(name, HIERARCHICAL, None, spec)
        if keyword == "relational":
            raise _Problem("relational attributes are not supported")
        raise _Problem(f"unknown type {word!r}")
    except _Problem as exc:
        if str(exc).startswith("attribute "):
            raise
        raise _Problem(f"attribute {name!r}: {exc}") from None


def _open_text(path: str):
    try:
        return open(path, encoding="utf-8-sig", errors="replace", newline=None)
    except OSError as exc:
        raise ArffError(f"{_file_label(path)}: cannot open: {exc.strerror or exc}") from None


def read_header(path: str) -> ArffHeader:
    """Read the header of an ARFF file, streaming it up to ``@data``.

    Parameters
    ----------
    path : str
        ARFF file (UTF-8; undecodable bytes are replaced).

    Returns
    -------
    ArffHeader
        Relation, attributes, the line number of ``@data`` and whether the
        first data row is sparse.

    Raises
    ------
    ArffError
        Missing file, no ``@data``, no attributes, duplicate attribute name,
        malformed ``@attribute``/``@relation``, unknown type or unexpected
        header line; the message names the file and the 1-based line.
    """
    label = _file_label(path)
    relation = ""
    attributes: list[ArffAttribute] = []
    first_line: dict[str, int] = {}
    with _open_text(path) as handle:
        line_no = 0
        for line_no, line in enumerate(handle, start=1):
            stripped = line.strip()
            if not stripped or stripped[0] == "%":
                continue
            keyword = _keyword(stripped)
            rest = stripped[len(keyword) :] if keyword else ""
            try:
                if keyword == "@relation":
                    relation = _parse_relation(rest)
                elif keyword == "@attribute":
                    attribute = _parse_attribute(rest)
                    if attribute.name in first_line:
                        raise _Problem(
                            f"attribute {attribute.name!r}: duplicate attribute name "
                            f"(first declared on line {first_line[attribute.name]})"
                        )
                    first_line[attribute.name] = line_no
                    attributes.append(attribute)
                elif keyword == "@data":
                    _expect_end(rest, "@data")
                    if not attributes:
                        raise _Problem("no @attribute declared before @data")
                    sparse = _peek_sparse(handle)
                    return ArffHeader(path, relation, tuple(attributes), line_no, sparse)
                else:
                    raise _Problem(f"unexpected header line {_shorten(stripped, 60)}")
            except _Problem as exc:
                raise ArffError(f"{label} line {line_no}: {exc}") from None
    raise ArffError(f"{label} line {line_no}: no @data line found")


def _parse_relation(rest: str) -> str:
    rest = rest.strip()
    if rest[:1] in ("'", '"'):
        name, _ = _read_quoted(rest, 0)
        return name
    return rest


def _peek_sparse(lines: Iterator[str]) -> bool | None:
    for line in lines:
        if not _is_blank_or_comment(line):
            return line.lstrip().startswith("{")
    return None


# --------------------------------------------------------------------------- parsed rows


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
    """

    n_rows: int
    numeric: dict[int, np.ndarray] = field(default_factory=dict)
    nominal: dict[int, list[str | None]] = field(default_factory=dict)


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


@dataclass
class _Layout:
    """Where each attribute goes in ``parse_lines_sparse``."""

    features: list[int]
    position: list[int]  # attribute -> CSR column, -1 for others
    position_arr: np.ndarray
    others: list[int]
    slot: dict[int, int]  # other attribute -> position in a row of others
    luts: list[dict[str, float]]


@dataclass
class _Entries:
    """Sparse-row entries of a run, flattened (row-major)."""

    n_rows: int
    row: np.ndarray  # int64 row of each entry
    attr: np.ndarray  # int64 attribute of each entry
    code: np.ndarray  # float64: number / nominal domain index / NaN (missing or text)
    text: dict[int, str | None]  # entry -> value, for string/date/hierarchical entries


class _NumLut(dict):
    """Value text -> float for a numeric feature; unknown keys go through ``float``."""

    def __missing__(self, key: str) -> float:
        return float(key)


# --------------------------------------------------------------------------- row parser


class ArffRowParser:
    """Parse ARFF data lines against a header.

    Parameters
    ----------
    header : ArffHeader
        The header of the file the lines come from.

    Notes
    -----
    Instances are picklable (they are shipped to Spark executors).
    """

    def __init__(self, header: ArffHeader):
        self.header = header
        self._attrs = header.attributes
        self._m = len(self._attrs)
        self._domains = [
            frozenset(a.values) | {"?"} if a.kind == NOMINAL else None for a in self._attrs
        ]
        self._codes = [
            {v: float(k) for k, v in enumerate(a.values)} if a.kind == NOMINAL else None
            for a in self._attrs
        ]
        self._defaults = [self._sparse_default(a) for a in self._attrs]
        # a default that must not be stripped forces the exact (quoted) conversion path
        self._quoted_default = any(isinstance(d, _Quoted) for d in self._defaults)
        self._kind_ids = np.array([_KIND_IDS.get(a.kind, 2) for a in self._attrs], dtype=np.int8)

    # ----------------------------------------------------------------- public API

    def parse_lines(self, lines: Iterable[str]) -> ParsedRows:
        """Parse data lines (dense and/or sparse) into columns.

        Parameters
        ----------
        lines : iterable of str
            Data lines, with or without line terminators. Blank lines and
            lines starting with ``%`` are skipped.

        Returns
        -------
        ParsedRows
            Every attribute, column-wise.

        Raises
        ------
        ArffLineError
            For the earliest malformed line: wrong number of values, bad
            number, nominal value outside the domain, unterminated quote,
            bad sparse entry or index.
        """
        attrs = list(range(self._m))
        pieces: list[ParsedRows] = []
        for kind, stripped, raw in self._runs(lines):
            try:
                pieces.append(self._run_columns(kind, stripped, attrs))
            except ValueError as exc:
                self._raise_first_error(raw, exc)
        return _concat_parsed(pieces, self._empty(attrs))

    def parse_lines_sparse(self, lines: Iterable[str], feature_indices: Sequence[int]) -> SparseParsedRows:
        """Parse data lines, returning the given features as CSR arrays.

        Parameters
        ----------
        lines : iterable of str
            Data lines (dense and/or sparse rows).
        feature_indices : sequence of int
            Numeric or nominal attribute indices; position p in this list is
            CSR column p. Nominal values are stored as their domain index.

        Returns
        -------
        SparseParsedRows
            CSR arrays for the features (zeros omitted, NaN = missing) and a
            :class:`ParsedRows` for every other attribute.

        Raises
        ------
        ArffError
            If ``feature_indices`` is invalid (out of range, repeated, or a
            string/date/hierarchical attribute).
        ArffLineError
            For the earliest malformed line (as :meth:`parse_lines`).
        """
        layout = self._layout(self._check_features(feature_indices))
        csr_pieces: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        other_pieces: list[ParsedRows] = []
        for kind, stripped, raw in self._runs(lines):
            try:
                csr, other = self._run_csr(kind, stripped, layout)
            except ValueError as exc:
                self._raise_first_error(raw, exc)
            csr_pieces.append(csr)
            other_pieces.append(other)
        other = _concat_parsed(other_pieces, self._empty(layout.others))
        indptr, indices, values = _concat_csr(csr_pieces)
        return SparseParsedRows(other.n_rows, tuple(layout.features), indptr, indices, values, other)

    # ----------------------------------------------------------------- runs of lines

    @staticmethod
    def _runs(lines: Iterable[str]) -> Iterator[tuple[str, list[str], list[str]]]:
        """Group data lines into runs of one kind: (kind, stripped lines, raw lines).

        Kinds: ``_CSV`` (dense, no quote character), ``_SPARSE`` (sparse, no
        quote character) and ``_QUOTED`` (anything with a quote character).
        Blank and comment lines are dropped; runs are bounded in size.
        """
        kind = None
        stripped: list[str] = []
        raw: list[str] = []
        chars = 0
        for line in lines:
            s = line.strip()
            if not s or s[0] == "%":
                continue
            if "'" in s or '"' in s:
                this = _QUOTED
            elif s[0] == "{":
                this = _SPARSE
            else:
                this = _CSV
            if this != kind or len(stripped) >= _SEGMENT_ROWS or chars >= _SEGMENT_CHARS:
                if stripped:
                    yield kind, stripped, raw
                kind, stripped, raw, chars = this, [], [], 0
            stripped.append(s)
            raw.append(line)
            chars += len(s)
        if stripped:
            yield kind, stripped, raw

    def _run_columns(self, kind: str, stripped: list[str], attrs: list[int]) -> ParsedRows:
        """Columns of one run (all attributes)."""
        if kind == _CSV:
            return self._csv_columns(stripped, attrs)
        if kind == _SPARSE:
            try:
                return self._entry_columns(self._arrow_entries(stripped), attrs)
            except _FAST_PATH_FAILURES:
                pass  # the Python path below defines the semantics and the errors
        rows, quoted = self._python_rows(stripped)
        return self._cell_columns(attrs, [self._full_row(row) for row in rows], quoted)

    def _run_csr(self, kind: str, stripped: list[str], layout: _Layout):
        """CSR piece of the features and columns of the other attributes for one run."""
        if kind == _CSV:
            columns = self._csv_columns(stripped, list(range(self._m)))
            return self._dense_to_csr(columns, layout.features), _select(columns, layout.others)
        if kind == _SPARSE:
            try:
                entries = self._arrow_entries(stripped)
                return self._entry_csr(entries, layout), self._entry_columns(entries, layout.others)
            except _FAST_PATH_FAILURES:
                pass
        rows, quoted = self._python_rows(stripped)
        other_rows, items = [], []
        for row in rows:
            other_row, feature_items = self._split_row(row, layout.position, layout.others, layout.slot)
            other_rows.append(other_row)
            items.append(feature_items)
        csr = self._items_to_csr(items, layout.luts, layout.features, quoted)
        return csr, self._cell_columns(layout.others, other_rows, quoted)

    def _python_rows(self, stripped: list[str]) -> tuple[list, bool]:
        """Tokenize lines one by one: (rows as cell lists or {index: cell} dicts, any quoted)."""
        rows = []
        quoted = False
        for s in stripped:
            row, row_quoted = self._row_cells(s)
            rows.append(row)
            quoted = quoted or row_quoted
        return rows, quoted

    def _row_cells(self, s: str) -> tuple[list[str] | dict[int, str], bool]:
        """Tokenize one stripped line: a list of m cells (dense) or {index: cell} (sparse)."""
        try:
            if s[0] == "{":
                if not s.endswith("}"):
                    raise _Problem("sparse row does not end with '}'")
                body = s[1:-1]
                quoted = "'" in body or '"' in body
                pairs = _split_sparse_quoted(body) if quoted else _split_plain_sparse(body)
                return self._sparse_entries(pairs), quoted or self._quoted_default
            quoted = "'" in s or '"' in s
            cells = _split_quoted_values(s) if quoted else s.split(",")
            self._check_count(len(cells))
            return cells, quoted
        except _Problem as exc:
            raise self._locate(exc) from None

    def _check_count(self, found: int) -> None:
        if found != self._m:
            reason = f"expected {self._m} values, found {found}"
            if found < self._m:
                reason += f" (no value for attribute {self._attrs[found].name!r})"
            raise _Problem(reason)

    def _locate(self, exc: _Problem) -> _Problem:
        """Prefix a tokenizer problem with the attribute it concerns, when known."""
        cell = exc.cell
        if isinstance(cell, str):
            try:
                cell = int(cell)
            except ValueError:
                cell = None
        if isinstance(cell, int) and 0 <= cell < self._m:
            return _Problem(f"attribute {self._attrs[cell].name!r}: {exc}")
        return exc

    def _sparse_entries(self, pairs: list[tuple[str, str]]) -> dict[int, str]:
        entries: dict[int, str] = {}
        m = self._m
        for index_text, value in pairs:
            try:
                index = int(index_text)
            except ValueError:
                raise _Problem(f"sparse index {index_text!r} is not an integer") from None
            if not 0 <= index < m:
                raise _Problem(f"sparse index {index} out of range (0..{m - 1})")
            if index in entries:
                raise _Problem(f"attribute {self._attrs[index].name!r}: sparse index {index} given twice")
            entries[index] = value
        return entries

    def _full_row(self, row: list[str] | dict[int, str]) -> list[str]:
        if isinstance(row, list):
            return row
        full = self._defaults.copy()
        for index, value in row.items():
            full[index] = value
        return full

    def _split_row(self, row, position, others, slot):
        """Split a tokenized row into the cells of ``others`` and feature (position, cell) items."""
        if isinstance(row, list):
            items = [(p, row[a]) for a, p in enumerate(position) if p >= 0]
            return [row[a] for a in others], items
        other_row = [self._defaults[a] for a in others]
        items = []
        for index, value in row.items():
            p = position[index]
            if p >= 0:
                items.append((p, value))
            else:
                other_row[slot[index]] = value
        return other_row, items

    @staticmethod
    def _sparse_default(attr: ArffAttribute) -> str:
        if attr.kind == NUMERIC:
            return "0"
        if attr.kind == NOMINAL:
            first = attr.values[0]
            needs_quote = first != first.strip() or first == "?"
            return _Quoted(first) if needs_quote else first
        return "?"

    # ----------------------------------------------------------------- column conversion

    def _empty(self, attrs: Sequence[int]) -> ParsedRows:
        out = ParsedRows(0)
        for a in attrs:
            if self._attrs[a].kind == NUMERIC:
                out.numeric[a] = np.empty(0, dtype=np.float64)
            else:
                out.nominal[a] = []
        return out

    def _csv_columns(self, lines: list[str], attrs: list[int]) -> ParsedRows:
        """Columns of dense unquoted lines: pyarrow first, Python on failure."""
        try:
            return self._arrow_columns(lines)
        except _FAST_PATH_FAILURES:
            pass  # the Python path below defines the semantics and the errors
        m = self._m
        rows = []
        for s in lines:
            cells = s.split(",")
            if len(cells) != m:
                self._check_count(len(cells))
            rows.append(cells)
        return self._cell_columns(attrs, rows, False)

    def _arrow_columns(self, lines: list[str]) -> ParsedRows:
        names = [f"c{i}" for i in range(self._m)]
        types = {
            name: (pa.float64() if a.kind == NUMERIC else pa.string())
            for name, a in zip(names, self._attrs)
        }
        data = "\n".join(lines).encode("utf-8")
        table = pacsv.read_csv(
            pa.py_buffer(data),
            read_options=pacsv.ReadOptions(
                column_names=names,
                use_threads=False,  # Spark already runs one parser per core
                # ~1 MB blocks are fastest; a block must hold the longest row
                block_size=max(1 << 20, 4 * (max(map(len, lines)) + 1)),
            ),
            parse_options=pacsv.ParseOptions(
                quote_char=False, double_quote=False, escape_char=False, newlines_in_values=False
            ),
            convert_options=pacsv.ConvertOptions(
                column_types=types, null_values=["?"], strings_can_be_null=False
            ),
        )
        if table.num_rows != len(lines):
            raise _Problem("row count mismatch")
        out = ParsedRows(len(lines))
        for a, attr in enumerate(self._attrs):
            column = table.column(a)
            if attr.kind == NUMERIC:
                out.numeric[a] = column.to_numpy().astype(np.float64, copy=False)
            else:
                out.nominal[a] = self._arrow_text(a, column)
        return out

    def _arrow_text(self, a: int, column: pa.ChunkedArray) -> list[str | None]:
        values = pc.utf8_trim_whitespace(column)
        if self._attrs[a].kind == NOMINAL:
            allowed = pa.array(sorted(self._domains[a]), type=pa.string())
            if not pc.all(pc.is_in(values, value_set=allowed)).as_py():
                raise _Problem("value outside domain")
        missing = pc.equal(values, "?")
        if pc.any(missing).as_py():
            values = pc.if_else(missing, pa.scalar(None, pa.string()), values)
        return values.to_pylist()

    def _cell_columns(self, attrs: Sequence[int], rows: list[list[str]], quoted: bool) -> ParsedRows:
        """Columns of tokenized rows (cells aligned with ``attrs``)."""
        if not rows:
            return self._empty(attrs)
        out = ParsedRows(len(rows))
        for a, column in zip(attrs, zip(*rows)):
            if self._attrs[a].kind == NUMERIC:
                out.numeric[a] = self._numeric_column(a, column, quoted)
            else:
                out.nominal[a] = self._text_column(a, column, quoted)
        return out

    def _numeric_column(self, a: int, column: tuple[str, ...], quoted: bool) -> np.ndarray:
        if not quoted:
            try:
                return np.array(column, dtype=np.float64)
            except ValueError:
                filled = ["nan" if v.strip() == "?" else v for v in column]
                return np.array(filled, dtype=np.float64)
        return np.array([self._convert(a, v) for v in column], dtype=np.float64)

    def _text_column(self, a: int, column: tuple[str, ...], quoted: bool) -> list[str | None]:
        if quoted:
            return [self._convert(a, v) for v in column]
        values = list(map(str.strip, column))
        present = set(values)
        domain = self._domains[a]
        if domain is not None and not present <= domain:
            raise _Problem("value outside domain")
        if "?" in present:
            values = [None if v == "?" else v for v in values]
        return values

    def _convert(self, a: int, cell: str):
        """Strict conversion of one cell: float for numeric, str/None otherwise."""
        attr = self._attrs[a]
        if isinstance(cell, _Quoted):
            text, missing = str(cell), False
        else:
            text = cell.strip()
            missing = text == "?"
        if attr.kind == NUMERIC:
            if missing:
                return float("nan")
            try:
                return float(text)
            except ValueError:
                raise _Problem(f"attribute {attr.name!r}: {text!r} is not a number") from None
        if missing:
            return None
        if attr.kind == NOMINAL and text not in self._codes[a]:
            raise _Problem(
                f"attribute {attr.name!r}: {text!r} is not in the domain {_domain_text(attr.values)}"
            )
        return text

    # ----------------------------------------------------------------- CSR

    def _check_features(self, feature_indices: Sequence[int]) -> list[int]:
        features = [int(a) for a in feature_indices]
        label = _file_label(self.header.path)
        if len(set(features)) != len(features):
            raise ArffError(f"{label}: feature_indices contains repeated attributes")
        for a in features:
            if not 0 <= a < self._m:
                raise ArffError(f"{label}: feature index {a} out of range (0..{self._m - 1})")
            if self._attrs[a].kind not in (NUMERIC, NOMINAL):
                raise ArffError(
                    f"{label}: attribute {self._attrs[a].name!r} is {self._attrs[a].kind}; "
                    "only numeric and nominal attributes can be CSR features"
                )
        return features

    def _layout(self, features: list[int]) -> _Layout:
        position = [-1] * self._m
        for p, a in enumerate(features):
            position[a] = p
        others = [a for a in range(self._m) if position[a] < 0]
        return _Layout(
            features=features,
            position=position,
            position_arr=np.array(position, dtype=np.int64),
            others=others,
            slot={a: k for k, a in enumerate(others)},
            luts=[self._feature_lut(a) for a in features],
        )

    def _feature_lut(self, a: int) -> dict[str, float]:
        if self._attrs[a].kind == NUMERIC:
            return _NumLut({"?": float("nan")})
        lut = dict(self._codes[a])
        lut["?"] = float("nan")
        return lut

    def _dense_to_csr(self, columns: ParsedRows, features: list[int]):
        n = columns.n_rows
        width = len(features)
        counts_parts, index_parts, value_parts = [], [], []
        step = max(1, _CSR_BLOCK_CELLS // max(width, 1))
        for start in range(0, n, step):
            stop = min(n, start + step)
            block = np.empty((stop - start, width), dtype=np.float64)
            for p, a in enumerate(features):
                block[:, p] = self._feature_column(a, columns, start, stop)
            nonzero = block != 0  # NaN != 0: missing values are kept
            rows, cols = np.nonzero(nonzero)
            counts_parts.append(nonzero.sum(axis=1))
            index_parts.append(cols.astype(np.int32))
            value_parts.append(block[rows, cols])
        return _csr_piece(n, counts_parts, index_parts, value_parts)

    def _feature_column(self, a: int, columns: ParsedRows, start: int, stop: int) -> np.ndarray:
        if self._attrs[a].kind == NUMERIC:
            return columns.numeric[a][start:stop]
        codes = self._codes[a]
        return np.array(
            [np.nan if v is None else codes[v] for v in columns.nominal[a][start:stop]],
            dtype=np.float64,
        )

    def _items_to_csr(self, items, luts, features, quoted: bool):
        n = len(items)
        counts = np.fromiter((len(r) for r in items), dtype=np.int64, count=n)
        positions = [p for row in items for p, _ in row]
        cells = [v for row in items for _, v in row]
        if quoted:
            raw = [self._convert(features[p], v) for p, v in zip(positions, cells)]
            values = np.array(
                [r if isinstance(r, float) else np.nan if r is None else self._codes[features[p]][r]
                 for p, r in zip(positions, raw)],
                dtype=np.float64,
            )
        else:
            try:
                values = np.array([luts[p][v] for p, v in zip(positions, cells)], dtype=np.float64)
            except (KeyError, ValueError):
                raise _Problem("bad feature value") from None
        indices = np.array(positions, dtype=np.int32)
        keep = values != 0
        row_of = np.repeat(np.arange(n), counts)
        counts = np.bincount(row_of[keep], minlength=n)
        indices, values, row_of = indices[keep], values[keep], row_of[keep]
        if not _row_sorted(row_of, indices):
            order = np.lexsort((indices, row_of))
            indices, values = indices[order], values[order]
        return counts, indices, values

    # ----------------------------------------------------------------- sparse rows, vectorized

    def _arrow_entries(self, stripped: list[str]) -> _Entries:
        """Entries of plain (unquoted) sparse rows, split and converted with pyarrow/numpy.

        Raises ``_Problem`` or a pyarrow error on anything unusual; the caller
        then uses the Python path, which reports the exact error.
        """
        n = len(stripped)
        if any(s[-1] != "}" for s in stripped):
            raise _Problem("unterminated sparse row")
        parts = pc.split_pattern(pa.array([s[1:-1] for s in stripped], type=pa.string()), ",")
        counts = parts.value_lengths().to_numpy().astype(np.int64)
        items = pc.utf8_trim_whitespace(parts.flatten())
        row = np.repeat(np.arange(n, dtype=np.int64), counts)
        empty = pc.equal(items, "").to_numpy(zero_copy_only=False)
        if empty.any():  # only "{}" rows may have an (empty) item
            if (counts[row[empty]] != 1).any():
                raise _Problem("empty sparse entry")
            items = items.filter(pa.array(~empty))
            row = row[~empty]
        pairs = pc.utf8_split_whitespace(items, max_splits=1)
        if (pairs.value_lengths().to_numpy() != 2).any():
            raise _Problem("sparse entry without value")
        attr = pc.cast(pc.list_element(pairs, 0), pa.int64()).to_numpy()
        if attr.size:
            if attr.min() < 0 or attr.max() >= self._m:
                raise _Problem("sparse index out of range")
            if not _row_sorted(row, attr):
                order = np.lexsort((attr, row))
                if ((np.diff(attr[order]) == 0) & (np.diff(row[order]) == 0)).any():
                    raise _Problem("repeated sparse index")
        code, text = self._entry_codes(attr, pc.list_element(pairs, 1))
        return _Entries(n, row, attr, code, text)

    def _entry_codes(self, attr: np.ndarray, values: pa.Array):
        """Convert entry values: numbers, nominal domain indices (NaN = missing), text values.

        Work is done once per distinct value (numeric) or distinct
        (attribute, value) pair (nominal), not once per entry.
        """
        encoded = pc.dictionary_encode(values)
        distinct = encoded.dictionary.to_pylist()
        which = encoded.indices.to_numpy().astype(np.int64)
        kinds = self._kind_ids[attr]
        code = np.full(attr.size, np.nan)
        numeric = kinds == 0
        if numeric.any():
            table = np.full(len(distinct), np.nan)
            for d in np.unique(which[numeric]).tolist():
                if distinct[d] != "?":
                    try:
                        table[d] = float(distinct[d])
                    except ValueError:
                        raise _Problem("not a number") from None
            code[numeric] = table[which[numeric]]
        nominal = kinds == 1
        if nominal.any():
            width = len(distinct)
            pairs, inverse = _unique_inverse(attr[nominal] * width + which[nominal])
            table = np.empty(len(pairs))
            for k, pair in enumerate(pairs):
                a, d = divmod(pair, width)
                value = np.nan if distinct[d] == "?" else self._codes[a].get(distinct[d])
                if value is None:
                    raise _Problem("value outside domain")
                table[k] = value
            code[nominal] = table[inverse]
        text = {
            e: (None if distinct[d] == "?" else distinct[d])
            for e, d in zip(np.flatnonzero(kinds == 2).tolist(), which[kinds == 2].tolist())
        }
        return code, text

    def _entry_columns(self, entries: _Entries, attrs: Sequence[int]) -> ParsedRows:
        """Full columns (sparse defaults filled in) of ``attrs`` from sparse entries."""
        n = entries.n_rows
        wanted = np.zeros(self._m, dtype=bool)
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
            attribute = self._attrs[a]
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

    def _entry_csr(self, entries: _Entries, layout: _Layout):
        """CSR piece (counts, indices, values) of the feature entries."""
        position = layout.position_arr[entries.attr]
        keep = (position >= 0) & (entries.code != 0)
        rows, cols, values = entries.row[keep], position[keep], entries.code[keep]
        if not _row_sorted(rows, cols):
            order = np.lexsort((cols, rows))
            cols, values = cols[order], values[order]
        counts = np.bincount(rows, minlength=entries.n_rows)
        return counts, cols.astype(np.int32), values

    # ----------------------------------------------------------------- errors

    def _raise_first_error(self, raw: list[str], original: ValueError):
        """Re-check the raw lines of a run one by one and raise the earliest ArffLineError."""
        for line in raw:
            problem = self._check_line(line)
            if problem is not None:
                raise ArffLineError(problem, line) from None
        if isinstance(original, ArffLineError):
            raise original
        raise ArffLineError(str(original), raw[-1] if raw else "") from None

    def _check_line(self, line: str) -> str | None:
        """Reason why one line is invalid, or None."""
        try:
            row, _ = self._row_cells(line.strip())
            cells = row.items() if isinstance(row, dict) else enumerate(row)
            for a, cell in cells:
                self._convert(a, cell)
        except _Problem as exc:
            return str(exc)
        return None


# --------------------------------------------------------------------------- helpers


def _row_sorted(rows: np.ndarray, cols: np.ndarray) -> bool:
    """True if ``cols`` strictly increase within each run of equal (non-decreasing) ``rows``."""
    if rows.size < 2:
        return True
    same_row = rows[1:] == rows[:-1]
    return bool((rows[1:] >= rows[:-1]).all() and (cols[1:][same_row] > cols[:-1][same_row]).all())


def _unique_inverse(keys: np.ndarray) -> tuple[list[int], np.ndarray]:
    """Distinct keys (first-seen order) and, per key, its position among them (hash based)."""
    encoded = pc.dictionary_encode(pa.array(keys, type=pa.int64()))
    return encoded.dictionary.to_pylist(), encoded.indices.to_numpy().astype(np.int64)


def _domain_text(values: tuple[str, ...], limit: int = 8) -> str:
    shown = ", ".join(values[:limit])
    return "{" + shown + (", ...}" if len(values) > limit else "}")


def _select(columns: ParsedRows, attrs: Sequence[int]) -> ParsedRows:
    out = ParsedRows(columns.n_rows)
    for a in attrs:
        if a in columns.numeric:
            out.numeric[a] = columns.numeric[a]
        else:
            out.nominal[a] = columns.nominal[a]
    return out


def _concat_parsed(pieces: list[ParsedRows], empty: ParsedRows) -> ParsedRows:
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


def _csr_piece(n, counts_parts, index_parts, value_parts):
    counts = np.concatenate(counts_parts) if counts_parts else np.zeros(n, dtype=np.int64)
    indices = np.concatenate(index_parts) if index_parts else np.empty(0, dtype=np.int32)
    values = np.concatenate(value_parts) if value_parts else np.empty(0, dtype=np.float64)
    return counts, indices, values


def _concat_csr(pieces):
    counts, indices, values = _csr_piece(0, *zip(*pieces)) if pieces else _csr_piece(0, [], [], [])
    indptr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return indptr, indices.astype(np.int32, copy=False), values.astype(np.float64, copy=False)


# --------------------------------------------------------------------------- error location


def find_line_number(path: str, line_text: str, start_line: int) -> int | None:
    """Find the 1-based number of the first line from ``start_line`` equal to ``line_text``.

    Parameters
    ----------
    path : str
        The ARFF file.
    line_text : str
        The line content (a trailing ``\\n``/``\\r\\n`` is ignored).
    start_line : int
        First line number (1-based) to consider, e.g. ``header.data_line + 1``.

    Returns
    -------
    int or None
        The line number, or None if no line matches.
    """
    target = line_text.rstrip("\r\n")
    with _open_text(path) as handle:
        for line_no, line in enumerate(handle, start=1):
            if line_no >= start_line and line.rstrip("\r\n") == target:
                return line_no
    return None


def format_line_error(path: str, line_no: int | None, err: ArffLineError) -> str:
    """Format a row error as ``"FILE line N: reason"``.

    Parameters
    ----------
    path : str
        The ARFF file (only its base name is shown).
    line_no : int or None
        1-based line number (from :func:`find_line_number`); None if unknown.
    err : ArffLineError
        The parser error.

    Returns
    -------
    str
        One line; with an unknown line number the row text is shown instead.
    """
    label = _file_label(path)
    if line_no is None:
        return f"{label} (line unknown): {err.reason}; row {_shorten(err.line_text.rstrip(_EOL))}"
    return f"{label} line {line_no}: {err.reason}"
