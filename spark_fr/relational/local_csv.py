"""Reading CSV/TSV sources in the driver for the local engine: pyarrow's multi-threaded CSV reader, typed by the
one rule of :mod:`spark_fr.io.csv_types` as the Spark engine's reader (:func:`spark_fr.io.csv.read_csv`,
``typed=True``) types them, with the same one-line errors.

Sketch
------
1. **Files and header lines**, as the Spark engine's reader has them (:func:`spark_fr.io.csv.plan_files`):
   ``csv_files`` (a file, or a directory's files sorted by path; the same errors),
   each file's header parsed and checked by ``read_header`` (a header line), or the schema's ``columns:``
   (headerless); every file must have the first one's names (``check_same_columns``); a file with another
   order is read by name.
2. **Bytes and records**: :func:`spark_fr.io.csv_driver.text_table`, the driver reader ``spark_fr.rank`` uses
   too: pyarrow, every field as text, refused as :class:`Unsupported` (the Spark engine then reads it) where
   Spark's line-by-line parse may read otherwise (a backslash, a NUL, a byte-order mark inside the data, bytes
   that are not UTF-8, a quote that does not enclose a whole field on one line, a separator of several
   characters); also the layouts ``read_csv`` recognises by their first line (scikit-learn's CSVs, a
   headerless line of numbers), which name the columns otherwise. A record with another number of fields is
   the Spark engine's error (file and line).
3. **Types** (:func:`typed_column`): a column that casts whole to int64, or to finite float64 with some
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

import numpy as np

from ..data.names import REFUSE
from ..io import csv as C
from ..io import csv_types as CT
from ..io.csv_driver import TRIM, NotPlain, ValueLocator, text_table
from .local_table import EXACT_INTEGER, LocalTable, Unsupported

NUMBER_RE = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
#: values Spark's cast may read as numbers that :data:`NUMBER_RE` does not
LOOSE_RE = r"(?i)^[+-]?(inf|infinity|nan|0x.*|.*[0-9.][dfDF])$"
_LONG_MAX, _LONG_MIN = "9223372036854775807", "9223372036854775808"


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
    headers = _headers(path, sep, columns)
    names = headers[0].names
    by_path = {h.file.path: h for h in headers}
    try:
        parts = [text_table(h, names, by_path) for h in headers]
    except NotPlain as e:
        raise Unsupported(str(e)) from None
    table = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
    data, types, dictionaries = {}, {}, {}
    for name in names:
        locate = _Locator([h.file for h in headers], by_path, name, declared.get(name))
        data[name], types[name], *dictionary = typed_column(table.column(name), declared.get(name), locate)
        if dictionary:
            dictionaries[name] = dictionary[0]
    return LocalTable(data, types, table.num_rows, dictionaries)


def _headers(path: str, sep: str, columns: list | None) -> list:
    """Every file's :class:`spark_fr.io.csv.Header`, as the Spark engine's reader plans them (names repeated: an
    error); a layout ``read_csv`` recognises by its first line is :class:`Unsupported` (it names the columns
    otherwise)."""
    plan = C.plan_files(None, path, sep, columns, REFUSE, False)
    if plan.sklearn is not None or plan.headerless:
        raise Unsupported(f"{plan.files[0].path}: a layout read_csv recognises by its first line")
    return plan.headers


# --- types ----------------------------------------------------------------------------------------------------


class _Locator(ValueLocator):
    """:class:`spark_fr.io.csv_driver.ValueLocator` raising :class:`Unsupported` (the engine choice keeps Spark)."""

    unsupported = Unsupported


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
