"""Reading CSV/TSV sources in the driver for the local engine: pyarrow's multi-threaded CSV reader, typed by the
one rule of :mod:`spark_fr.io.csv_types` as the Spark engine's reader (:func:`spark_fr.io.csv.read_csv`,
``typed=True``) types them, with the same one-line errors.

Sketch
------
1. **Files and header lines**, as the Spark engine's reader has them (the same functions of
   :mod:`spark_fr.io.csv`): ``csv_files`` (a file, or a directory's files sorted by path; the same errors),
   each file's header parsed and checked by ``read_header`` (a header line), or the schema's ``columns:``
   (headerless); every file must have the first one's names (``check_same_columns``); a file with another
   order is read by name.
2. **Bytes.** Each file is read whole (``.gz`` and ``.bz2`` decompressed). Refused as :class:`Unsupported` (the
   Spark engine then reads it) where Spark's line-by-line parse may read it otherwise than pyarrow: a backslash
   (Spark's escape character), a NUL, a byte-order mark, bytes that are not UTF-8, a quote that does not
   enclose a whole field on one line (``"a"b``, ``"a""b"``, a quoted line break: :func:`plain_quotes`), a
   separator of several characters, the layouts ``read_csv`` recognises by their first line (scikit-learn's
   CSVs, a headerless line of numbers).
3. **Parse**: pyarrow, every field as text (an empty field is ``''``), lines that trim to nothing skipped as
   Spark skips them (Java's ``trim``: characters up to ``' '``); a record with another number of fields is the
   Spark engine's error, found by ``find_bad_record`` (file and line).
4. **Types** (:func:`typed_column`): a column that casts whole to int64, or to finite float64 with some
   non-integral value, is a ``bigint`` or ``double`` column at once (fast path: the keys, the amounts). Any
   other is dictionary-encoded and the counts of :class:`spark_fr.io.csv_types.Counts` (missing markers,
   numbers, integers, longs, 38-digit integers, dates) are taken on its distinct values, weighted by how
   often each occurs; :func:`spark_fr.io.csv_types.column_type` decides, and a problem (a typo in a numeric
   or date column) or an infinite number is located by ``find_value`` and reported as the Spark engine reports
   it. Values: trimmed of spaces (``F.trim``), missing markers null, numbers cast after Spark's wider trim.
   Integers beyond 2^53, ``decimal(38,0)`` columns, year 0 and the number forms Spark parses but a plain
   decimal pattern does not (``1d``, ``Infinity``, hex) are :class:`Unsupported`.
"""
from __future__ import annotations

import bz2
import gzip
import re

import numpy as np

from ..data.names import REFUSE
from ..errors import InputError, one_line
from ..io import csv as C
from ..io import csv_types as CT
from .local_table import EXACT_INTEGER, LocalTable, Unsupported

#: what Spark's string-to-number cast trims besides spaces (NUL is refused earlier)
TRIM = "".join(chr(i) for i in range(1, 33))
NUMBER_RE = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
#: values Spark's cast may read as numbers that :data:`NUMBER_RE` does not
LOOSE_RE = r"(?i)^[+-]?(inf|infinity|nan|0x.*|.*[0-9.][dfDF])$"
_LONG_MAX, _LONG_MIN = "9223372036854775807", "9223372036854775808"
_LINE_END = re.compile(rb"\r\n|\n|\r")
_COMPRESSED = (".deflate", ".snappy", ".lz4", ".zst", ".zstd", ".br")


def read_csv_local(path: str, sep: str, columns: list | None = None, declared: dict | None = None) -> LocalTable:
    """A CSV/TSV source as :func:`spark_fr.relational.sources.read_path` reads it (see the module's notes).

    Parameters
    ----------
    path : str
        A file or a directory of files.
    sep : str
        The separator of every file.
    columns : list of str, optional
        The names of a headerless file's columns; None: every file has a header line.
    declared : dict, optional
        {column: 'numeric' | 'nominal' | 'date' | 'id'} (:func:`spark_fr.relational.sources.declared_types`).

    Raises
    ------
    Unsupported
        What this reader does not reproduce exactly (see the notes).
    InputError
        The Spark engine's one-line errors (a header, a record with another number of fields, a value that does
        not fit its column, an infinite number), naming the file, line and column.
    """
    import pyarrow as pa

    if len(sep) != 1:
        raise Unsupported(f"{path}: a separator of {len(sep)} characters")
    declared = declared or {}
    files = C.csv_files(None, path, allow_empty=columns is not None)
    headers = _headers(files, sep, columns)
    names = headers[0].names
    by_path = {h.file.path: h for h in headers}
    parts = [_read_file(h, names, by_path) for h in headers]
    table = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
    data, types, dictionaries = {}, {}, {}
    for name in names:
        locate = _Locator([h.file for h in headers], by_path, name, declared.get(name))
        data[name], types[name], *dictionary = typed_column(table.column(name), declared.get(name), locate)
        if dictionary:
            dictionaries[name] = dictionary[0]
    return LocalTable(data, types, table.num_rows, dictionaries)


def _headers(files: list, sep: str, columns: list | None) -> list:
    if columns is not None:
        return [C.Header(f, list(columns), 0, sep, False) for f in files]
    if len(files) == 1 and sep == "," and (C.sklearn_header(None, files[0]) is not None
                                           or C.headerless_numeric(None, files[0], ",")):
        raise Unsupported(f"{files[0].path}: a layout read_csv recognises by its first line")
    headers = [h for h in (C.read_header(None, f, sep, duplicate_names=REFUSE) for f in files) if h is not None]
    if not headers:
        if len(files) == 1:
            raise InputError(f"{files[0].path}: no header line (the file holds only blank lines)")
        raise InputError(f"{files[0].path}: no header line in any file")
    C.check_same_columns(headers)
    return headers


def _raw(path: str) -> bytes:
    low = path.lower()
    if low.endswith(_COMPRESSED):
        raise Unsupported(f"{path}: a compression codec read through Hadoop")
    with open(path, "rb") as fh:
        raw = fh.read()
    try:
        if low.endswith(".gz"):
            raw = gzip.decompress(raw)
        elif low.endswith(".bz2"):
            raw = bz2.decompress(raw)
    except (OSError, EOFError, ValueError) as err:
        raise Unsupported(f"{path}: {err}") from None
    return raw


def _body_start(raw: bytes, header_line: int) -> int:
    """The offset of the line after the ``header_line``-th (0: the start)."""
    if header_line == 0:
        return 0
    for i, m in enumerate(_LINE_END.finditer(raw), 1):
        if i == header_line:
            return m.end()
    return len(raw)


def _blank(raw: bytes, start: int, chunk: int = 1 << 20) -> bool:
    """Whether ``raw[start:]`` holds only characters up to ``' '`` (no record)."""
    for i in range(start, len(raw), chunk):
        if raw[i:i + chunk].strip(bytes(range(33))):
            return False
    return True


def plain_quotes(buf: np.ndarray, sep: int) -> bool:
    """Whether every quote of ``buf`` (the bytes of CSV lines) opens or closes a field quoted whole on one line:
    quotes pair up, an opening one at the start of a line or after a separator, its closing one on the same
    line before a separator or a line end, nothing between them a quote. Then Spark's parse and pyarrow's agree."""
    q = np.flatnonzero(buf == 34)
    if len(q) == 0:
        return True
    if len(q) % 2:
        return False
    op, cl = q[0::2], q[1::2]
    ends = np.array([10, 13, sep], dtype=np.uint8)
    before = np.where(op > 0, buf[np.maximum(op - 1, 0)], 10)
    after = np.where(cl + 1 < len(buf), buf[np.minimum(cl + 1, len(buf) - 1)], 10)
    if not (np.isin(before, ends).all() and np.isin(after, ends).all()):
        return False
    lines = np.flatnonzero((buf == 10) | (buf == 13))
    return bool(np.array_equal(np.searchsorted(lines, op), np.searchsorted(lines, cl)))


def _read_file(header, names: list, by_path: dict):
    """One file's records as a pyarrow table of text columns named ``names`` (in that order)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    path, sep = header.file.path, header.sep
    raw = _raw(path)
    if b"\\" in raw or b"\x00" in raw:
        raise Unsupported(f"{path}: backslashes or NUL bytes")
    if raw.startswith(b"\xef\xbb\xbf"):
        raise Unsupported(f"{path}: byte-order mark")
    start = _body_start(raw, header.line if header.present else 0)
    body = memoryview(raw)[start:]
    quoted = raw.find(b'"', start) >= 0
    if quoted and not plain_quotes(np.frombuffer(body, dtype=np.uint8), ord(sep)):
        raise Unsupported(f"{path}: quotes inside values")
    n = len(header.names)
    if _blank(raw, start):
        return pa.table({c: pa.array([], pa.string()) for c in names})
    bad = []

    def invalid(row):
        if row.text.strip(TRIM):  # a line that trims to nothing is skipped, as Spark skips it
            bad.append(row)
        return "skip"

    try:
        table = pacsv.read_csv(
            pa.py_buffer(body),
            read_options=pacsv.ReadOptions(column_names=header.names, use_threads=True),
            parse_options=pacsv.ParseOptions(delimiter=sep, quote_char='"' if quoted else False, double_quote=False,
                                             escape_char=False, newlines_in_values=False, ignore_empty_lines=True,
                                             invalid_row_handler=invalid),
            convert_options=pacsv.ConvertOptions(column_types={c: pa.string() for c in header.names},
                                                 strings_can_be_null=False, quoted_strings_can_be_null=False,
                                                 null_values=[], check_utf8=True))
    except (pa.ArrowInvalid, UnicodeDecodeError) as e:
        raise Unsupported(f"{path}: {one_line(str(e))}") from None
    if bad:
        found = C.find_bad_record(None, [header.file], by_path, n)
        if found is None:
            raise Unsupported(f"{path}: pyarrow finds records with another number of fields; Spark may not")
        raise InputError(f"{found[0]} line {found[1]}: {found[2]}")
    if n == 1 or ord(sep) <= 32:  # a line of only separators and spaces trims to nothing: Spark skips it
        table = _drop_blank_rows(table, quoted, path)
    return table.select(names)


def _drop_blank_rows(table, quoted: bool, path: str):
    import pyarrow.compute as pc

    blank = None
    for c in table.column_names:
        b = pc.equal(pc.utf8_length(pc.utf8_trim(table.column(c), TRIM)), 0)
        blank = b if blank is None else pc.and_(blank, b)
        if not pc.any(blank).as_py():
            return table
    if blank is None:
        return table
    if quoted:  # '""' is not blank to Spark
        raise Unsupported(f"{path}: quoted values and lines of only separators")
    return table.filter(pc.invert(blank))


# --- types ----------------------------------------------------------------------------------------------------


class _Locator:
    """Raises the Spark engine's error for a column's first bad value (a value that does not fit its type, an
    infinite number), found in the files by :func:`spark_fr.io.csv.find_value`."""

    def __init__(self, files, by_path, column, declared):
        self.files, self.by_path, self.column, self.declared = files, by_path, column, declared

    def problem(self, problem: str):
        number = problem == CT.NOT_A_NUMBER

        def bad(v):
            return not C.is_missing(v) and not (C.is_number(v) if number else C.is_date(v))

        self._raise(bad, lambda v: CT.problem_text(problem, self.declared, v))

    def infinite(self):
        self._raise(C.is_infinite, C.infinite_message)

    def _raise(self, predicate, what):
        found = C.find_value(None, self.files, self.by_path, self.column, predicate)
        if found is None:
            raise Unsupported(f"column '{self.column}': a value Spark's reader may type otherwise")
        path, line, value = found
        raise InputError(f"{path} line {line}: column '{self.column}'{what(value.strip())}")


def typed_column(s, declared: str | None, locate: _Locator):
    """(numpy array, local type) of a text column ``s`` (a pyarrow ChunkedArray) typed as the Spark engine's
    reader types it (see the module's notes); a string column also gives its (indices, dictionary)
    (:class:`~spark_fr.relational.local_table.LocalTable`)."""
    if len(s) and declared in (None, "numeric", "id"):
        fast = _fast_numeric(s)
        if fast is not None:
            return fast
    return _by_values(s, declared, locate)


def _fast_numeric(s):
    """A column that casts whole to int64 (no missing value: all integer literals within a long), or to finite
    float64 with a non-integral value (all numbers, not all integer literals); else None."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        ints = pc.cast(s, pa.int64())
    except pa.ArrowInvalid:
        ints = None
    if ints is not None:
        lo, hi = pc.min(ints).as_py(), pc.max(ints).as_py()
        if max(abs(lo), abs(hi)) > EXACT_INTEGER:
            raise Unsupported("integers beyond 2^53")
        return ints.to_numpy(), "long"
    try:
        x = pc.cast(s, pa.float64()).to_numpy()
    except pa.ArrowInvalid:
        return None
    if not np.isfinite(x).all() or (x == np.floor(x)).all():  # special values; maybe all integer literals
        return None
    return x, "double"


def _numpy(a) -> np.ndarray:
    return np.asarray(a.to_numpy(zero_copy_only=False))


def _by_values(s, declared: str | None, locate: _Locator):
    """The general path: the counts and values of the column's distinct values, weighted by their counts."""
    import pyarrow as pa
    import pyarrow.compute as pc

    enc = pc.dictionary_encode(s)
    if enc.num_chunks == 0:
        vals, idx = pa.array([], pa.string()), np.zeros(0, np.int64)
    else:
        enc = enc.unify_dictionaries()
        vals = enc.chunk(0).dictionary
        idx = np.concatenate([_numpy(c.indices).astype(np.int64, copy=False) for c in enc.chunks])
    freq = np.bincount(idx, minlength=len(vals))
    t = pc.utf8_trim(vals, " ")  # F.trim
    known = ~_numpy(pc.is_in(pc.utf8_lower(t), pa.array(C.MISSING_MARKERS)))
    st = pc.utf8_trim(t, TRIM)  # what the cast to a number reads
    number = known & _numpy(pc.match_substring_regex(st, NUMBER_RE))
    integer = known & _numpy(pc.match_substring_regex(t, "^" + CT.INTEGER_RE + "$"))
    digits = pc.utf8_ltrim(pc.utf8_ltrim(t, "+-"), "0")
    length = _numpy(pc.utf8_length(digits))
    bound = pa.array(np.where(_numpy(pc.starts_with(t, "-")), _LONG_MIN, _LONG_MAX))
    longs = integer & ((length <= 18) | ((length == 19) & _numpy(pc.less_equal(digits, bound))))
    dates = known & _numpy(pc.match_substring_regex(t, "^" + CT.DATE_RE + "$"))
    text = _numpy(t).astype(object)
    if dates.any():
        days = np.array([C.is_date(v) for v in text[dates]], dtype=bool)
        if any(v.startswith("0000") for v in text[dates]):
            raise Unsupported("year 0")
        dates[dates] = days
    if declared != "nominal" and (known & _numpy(pc.match_substring_regex(st, LOOSE_RE))).any():
        raise Unsupported("numbers Spark may parse differently")

    def count(mask):
        return int(freq[mask].sum())

    counts = CT.Counts(count(known), count(number), count(integer), count(longs),
                       count(integer & (length <= CT.DECIMAL_DIGITS)), count(dates))
    kind, problem = CT.column_type(counts, True, declared)
    if problem is not None:
        locate.problem(problem)
    all_known = counts.known == len(idx)
    if kind == CT.BIGINT:
        u = np.zeros(len(vals), np.int64)
        plain = pc.replace_substring_regex(pc.filter(t, pa.array(known)), r"^\+", "")
        u[known] = _numpy(pc.cast(plain, pa.int64()))
        if np.abs(u).max(initial=0) > EXACT_INTEGER:
            raise Unsupported("integers beyond 2^53")
        if all_known:
            return u[idx], "long"
        x = u.astype(np.float64)
        x[~known] = np.nan
        return x[idx], "long"
    if kind == CT.DOUBLE:
        x = np.full(len(vals), np.nan)
        x[known] = _numpy(pc.cast(pc.filter(st, pa.array(known)), pa.float64()))
        if np.isinf(x[known]).any():
            locate.infinite()
        return x[idx], "double"
    if kind == CT.DATE:
        d = np.full(len(vals), np.datetime64("NaT"), dtype="datetime64[D]")
        d[known] = np.array(text[known], dtype="datetime64[D]")
        return d[idx], "date"
    if kind == CT.STRING:
        text[~known] = None
        return text[idx], "string", (idx, text)
    raise Unsupported(f"type {kind}")
