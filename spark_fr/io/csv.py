"""Reading CSV files: typed columns from an all-string read, with one-line errors naming file and line.

Sketch
------
* **Files.** The input is a file, a directory (its files, as Spark lists them: names starting with ``_``
  or ``.`` are skipped; a subdirectory holding files is an error: Spark reads it as a partition or not
  at all) or several of these (a comma-separated ``--input``, a list from Python). ``.tsv`` files are
  tab-separated; ``.gz`` and ``.bz2`` files are decompressed. A 0-byte file is an error when named alone
  and skipped in a directory.
* **Headers are matched by name.** Every file's header (its first non-blank line) is parsed on the driver,
  as RFC 4180 CSV, with a UTF-8 byte-order mark dropped and any line end (LF, CRLF, CR). A column without
  a name, a name given twice (compared without case, as Spark compares names; ``--duplicate-names rename``
  renames the repeat instead, :mod:`spark_fr.data.names`), or a name holding a line break is an error
  naming the file and column. Every file must have the same column names as the first
  one: a renamed, missing or extra column is an error naming the file and the column. Decision: a file
  whose header lists the same names **in another order** is the same table (as ``pandas.concat`` would
  make it): files are read in groups of equal header order, each with its own schema, and every group's
  columns are selected by name, so no value ever lands under another column's name.
* **Spark reads every column as a string** (each file's header line is skipped), plus a corrupt-record
  column (under a name no user column has) that Spark fills for records with the wrong number of fields.
* **Types.** One aggregation counts, per column, the known values (not empty and not a missing marker:
  ``?``, ``NA``, ``NaN``, ``null``, ``None``, ``n/a``, case-insensitive) and how many of them parse as
  numbers (Spark's cast rules; :func:`is_number` is the same rule in Python). All numbers: a numeric column
  (double); an infinite value there is an error (ranking cannot measure distances to it). No numbers: a
  nominal column. Mostly numbers with some text: an error that names the file, line, column and value,
  since a typo in a numeric column would otherwise silently turn it into categories. Mostly text with a
  few numbers: nominal.
* **Malformed records.** Spark parses line by line with backslash escapes. When it rejects records, the
  files it rejected them in are scanned on the driver as RFC 4180 CSV (:func:`scan_records`): the first
  record with another number of fields than the header is reported at the line where it starts (and, if a
  quoted value carries it over several lines, where that quote opens); a quote that never closes is
  reported at the line where it opens. If the scan finds no fault, those files are valid RFC 4180 CSV that
  Spark's default parse cannot read (line breaks inside quoted values, quotes doubled as ``""``), and they
  are read again in that dialect (``multiLine``, ``escape='"'``).
* **scikit-learn's bundled CSVs** (first line ``n_samples,n_features,class names...``) are recognised: the
  features are named ``x1..xD`` and the last column becomes ``target``, holding the class names (a value
  that is not a class index is an error with its line).
"""
from __future__ import annotations

import logging
import os
import re
import zlib
from functools import reduce
from typing import NamedTuple
from urllib.parse import unquote, urlparse

from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..data.columns import qcol, try_cast, try_date
from ..data.names import deduplicate
from ..data.schema import Dataset, columns_of_dataframe
from ..errors import InputError, one_line
from . import csv_types as CT
from .files import DataFile, data_files, is_uri, open_text

log = logging.getLogger(__name__)

MISSING_MARKERS = ("", "?", "na", "nan", "+nan", "-nan", "null", "none", "n/a")
CORRUPT = "_corrupt"
FIELD_LIMIT = 1 << 20  # characters kept of one value by the driver-side scanner (values are only inspected)
_SPARK_TRIM = "".join(chr(i) for i in range(33))  # what Spark's string-to-number cast trims
_NUMBER = re.compile(
    r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    r"|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?")
_SPECIAL_NUMBERS = {"inf", "+inf", "-inf", "infinity", "+infinity", "-infinity", "nan"}  # Spark's, any case
_JAVA_SPECIAL = re.compile(r"[+-]?(?:NaN|Infinity)")  # Java's, this case only


# --- values -------------------------------------------------------------------------------------------------


def is_missing(text: str) -> bool:
    """Whether a CSV value is a missing marker (Spark side: ``lower(trim(v)) in MISSING_MARKERS``)."""
    return text.strip(" ").lower() in MISSING_MARKERS


def to_number(text: str) -> float | None:
    """The double Spark's ``try_cast(trim(v) as double)`` makes of a CSV value, or None.

    Spark's cast follows Java's ``Double.parseDouble`` (after trimming whitespace and control characters)
    plus the literals ``inf``, ``infinity`` (any case, signed) and ``nan`` (any case): ``1``, ``-2.5e3``, ``.5``, ``1d``
    and ``1f`` (Java suffixes), ``0x1p3`` are numbers; ``1_000``, ``0x10``, ``1,5`` are not.
    """
    t = text.strip(_SPARK_TRIM)
    low = t.lower()
    if low in _SPECIAL_NUMBERS or _JAVA_SPECIAL.fullmatch(t):
        return float(low)
    if _NUMBER.fullmatch(t) is None:
        return None
    if t[-1] in "fFdD":
        t = t[:-1]
    return float.fromhex(t) if "x" in low else float(t)


def is_number(text: str) -> bool:
    """Whether Spark's cast makes a number of a CSV value (see :func:`to_number`)."""
    return to_number(text) is not None


def is_date(text: str) -> bool:
    """Whether a CSV value is an existing ``yyyy-MM-dd`` date (Spark side: :func:`_is_date`)."""
    import datetime as dt

    t = text.strip(" ")
    if not re.fullmatch(CT.DATE_RE, t):
        return False
    try:
        dt.date.fromisoformat(t)
    except ValueError:
        return False
    return True


def is_infinite(text: str) -> bool:
    """Whether a CSV value parses (as Spark does) to +-infinity, e.g. ``inf``, ``-Infinity`` or ``1e999``."""
    v = to_number(text)
    return v is not None and abs(v) == float("inf")


# --- the RFC 4180 scanner -----------------------------------------------------------------------------------


class Record(NamedTuple):
    """One CSV record as :func:`scan_records` sees it.

    Attributes
    ----------
    line, end : int
        1-based physical lines where the record starts and ends (``end > line`` when a quoted value
        holds a line break).
    n_fields : int
    fields : list of str or None
        The values (only when asked for).
    quote_line : int or None
        Where the quoted value that carried the record over a line end (or that never closed) opens.
    closed : bool
        False when the file ends inside a quoted value.
    doubled : bool
        Whether a quote doubled as ``""`` occurs inside a quoted value.
    """

    line: int
    end: int
    n_fields: int
    fields: list | None
    quote_line: int | None = None
    closed: bool = True
    doubled: bool = False


def scan_records(lines, sep: str = ",", values: bool = False):
    """The RFC 4180 records of CSV text, with the physical lines they start and end on.

    A quote opens a quoted value only at the start of a field; inside it a doubled quote ``""`` is a quote,
    and separators and line breaks are part of the value; text after the closing quote is kept (as Python's
    ``csv`` module does). Blank lines (only whitespace) outside quotes are skipped, as Spark skips them.
    Lines without a quote take a fast path (split at the separator).

    Parameters
    ----------
    lines : iterable of str
        Physical lines with their line ends (a file opened with ``newline=''``).
    sep : str
        The one-character separator.
    values : bool
        Also return the values (each value is cut at ``FIELD_LIMIT`` characters).

    Yields
    ------
    Record
    """
    it = iter(lines)
    n_line = 0
    for raw in it:
        n_line += 1
        if '"' not in raw:
            body = raw.rstrip("\r\n")
            if body.strip():
                yield Record(n_line, n_line, body.count(sep) + 1, body.split(sep) if values else None)
            continue
        start, fields, cur = n_line, [], []
        n, state, quote_open, quote_line, doubled = 1, 0, 0, None, False  # 0 start, 1 plain, 2 quoted, 3 quote seen
        text = raw
        while True:
            for ch in text:
                if state == 2:
                    if ch == '"':
                        state = 3
                    elif values and len(cur) < FIELD_LIMIT:
                        cur.append(ch)
                    continue
                if ch == '"' and state == 3:
                    state, doubled = 2, True
                    if values:
                        cur.append(ch)
                elif ch == '"' and state == 0:
                    state, quote_open = 2, n_line
                elif ch == sep:
                    n += 1
                    state = 0
                    if values:
                        fields.append("".join(cur))
                        cur = []
                elif ch in "\r\n":
                    break
                else:
                    state = 1
                    if values and len(cur) < FIELD_LIMIT:
                        cur.append(ch)
            if state != 2:
                break
            if quote_line is None:
                quote_line = quote_open
            text = next(it, None)
            if text is None:
                if values:
                    fields.append("".join(cur))
                yield Record(start, n_line, n, fields if values else None, quote_open, False, doubled)
                return
            n_line += 1
        if values:
            fields.append("".join(cur))
        yield Record(start, n_line, n, fields if values else None, quote_line, True, doubled)


# --- files and headers --------------------------------------------------------------------------------------


class Header(NamedTuple):
    """A file's header: its column names and the line they are on (``sep`` is the file's separator);
    ``present`` is False for a headerless file (names made up, every line is data); ``renamed``: the repeated
    names renamed (:mod:`spark_fr.data.names`)."""

    file: DataFile
    names: list
    line: int
    sep: str
    present: bool = True
    renamed: tuple = ()


def separator_of(path: str) -> str:
    """The separator of a file by its name: a tab for ``.tsv`` (also compressed), else a comma."""
    low = path.lower()
    for ext in (".gz", ".bz2", ".deflate", ".snappy", ".lz4", ".zst", ".zstd", ".br"):
        if low.endswith(ext):
            low = low[: -len(ext)]
    return "\t" if low.endswith(".tsv") else ","


def csv_files(spark, source, allow_empty: bool = False) -> list:
    """The CSV files of one path or several: a file, or a directory's data files (no subdirectories).

    Parameters
    ----------
    spark : SparkSession
    source : str or list of str
    allow_empty : bool
        Take a 0-byte file named alone as a table without rows (headerless files: no header is missing).

    Returns
    -------
    list of DataFile
        In the order given, each directory's files sorted by name; empty files inside a directory are left out.
    """
    out = []
    for path in [source] if isinstance(source, str) else list(source):
        files, subdirs = data_files(spark, path)
        nested = [d for d in subdirs if any(f.path.startswith(d.rstrip("/") + "/") for f in files)]
        if nested:
            raise InputError(f"{nested[0]}: a CSV input directory must hold only CSV files, not subdirectories "
                             f"with files (Spark would read them as partitions or not at all); name the files "
                             f"instead")
        named_alone = len(files) == 1 and files[0].path == path
        if named_alone and files[0].size == 0:
            if allow_empty:
                out.extend(files)
                continue
            raise InputError(f"{path}: the file is empty")
        files = [f for f in files if f.size > 0]
        if not files:
            raise InputError(f"{path}: the directory holds no CSV files")
        out.extend(files)
    return out


def _records(spark, file: DataFile, sep: str, values: bool):
    """The records of a file; a stream that cannot be decompressed is an error naming the file."""
    try:
        with open_text(spark, file.path) as fh:
            yield from scan_records(fh, sep, values)
    except (OSError, EOFError, zlib.error) as err:
        raise InputError(f"{file.path}: cannot read the file ({one_line(err)})") from None


def read_header(spark, file: DataFile, sep: str, case_sensitive: bool = False,
                duplicate_names: str = "error") -> Header | None:
    """Parse and check a file's header line; None for a file with no non-blank line.

    A name given twice (compared without case unless ``case_sensitive``) is an error, or with
    ``duplicate_names='rename'`` the repeat is renamed (:mod:`spark_fr.data.names`; ``Header.renamed``).

    Raises
    ------
    InputError
        A name that is empty, given twice (``duplicate_names='error'``), or holds a line break (or a quote
        that never closes).
    """
    rec = next(_records(spark, file, sep, values=True), None)
    if rec is None:
        return None
    where = f"{file.path} line {rec.line}"
    if not rec.closed:
        raise InputError(f"{where}: a quoted column name opens here and is never closed (unterminated '\"')")
    if rec.end > rec.line:
        raise InputError(f"{where}: a quoted column name holds a line break (the header runs to line {rec.end})")
    names = rec.fields
    if any("\x00" in n or "\ufffd" in n for n in names):
        raise InputError(f"{where}: the header is not UTF-8 text (UTF-16, another encoding, or not a CSV file); "
                         f"save the file as UTF-8 CSV")
    for j, name in enumerate(names):
        if not name.strip():
            hint = (" (an index written by pandas' to_csv?)" if j == 0 else
                    " (a separator at the end of the line?)" if j == len(names) - 1 else "")
            raise InputError(f"{where}: column {j + 1} of the header has no name{hint}; name it or drop it")
    names, renamed = deduplicate(names, duplicate_names, source=where, case_sensitive=case_sensitive)
    return Header(file, names, rec.line, sep, renamed=tuple(renamed))


def check_same_columns(headers: list) -> None:
    """Every header must have the names of the first one (in any order); else name the file and column."""
    ref = headers[0]
    for h in headers[1:]:
        if h.names == ref.names:
            continue
        missing = [c for c in ref.names if c not in h.names]
        extra = [c for c in h.names if c not in ref.names]
        if missing and extra:
            what = f"column '{extra[0]}' stands where {ref.file.path} has '{missing[0]}'"
        elif extra:
            what = f"column '{extra[0]}' is not in {ref.file.path}"
        elif missing:
            what = f"column '{missing[0]}' of {ref.file.path} is missing"
        else:
            continue  # the same names in another order: read by name
        raise InputError(f"{h.file.path} line {h.line}: the header differs from the first file's: {what} "
                         f"(every file must have the same column names)")


def sklearn_header(spark, file: DataFile):
    """(n_features, class names) if ``file`` is one of scikit-learn's bundled CSVs, else None."""
    rows = []
    for rec in _records(spark, file, ",", values=True):
        rows.append(rec.fields)
        if len(rows) == 2:
            break
    if len(rows) < 2 or len(rows[0]) < 2:
        return None
    head, first = rows
    if not (_is_int(head[0]) and _is_int(head[1])):
        return None
    n_features = int(head[1])
    if len(first) != n_features + 1:
        return None
    return n_features, [c.strip() for c in head[2:]]


def headerless_numeric(spark, file: DataFile, sep: str) -> int | None:
    """The number of fields if ``file``'s first line cannot be a header because it is data: only numbers,
    some of them equal (as in scikit-learn's ``digits.csv.gz``); else None."""
    rec = next(_records(spark, file, sep, values=True), None)
    if rec is None or len(rec.fields) < 2:
        return None
    fields = [f.strip() for f in rec.fields]
    if all(is_number(f) for f in fields) and len(set(fields)) < len(fields):
        return len(fields)
    return None


def _is_int(text: str) -> bool:
    try:
        int(text)
        return True
    except ValueError:
        return False


# --- finding the line behind an error -----------------------------------------------------------------------


def find_bad_record(spark, files: list, headers: dict, n_columns: int):
    """The first malformed record of ``files`` read as RFC 4180 CSV.

    Parameters
    ----------
    files : list of DataFile
    headers : dict
        :class:`Header` by file path (gives each file's separator; its first record is skipped).
    n_columns : int

    Returns
    -------
    tuple (path, line, message) or None
        ``line`` is where the bad record starts, or where its unterminated quote opens.
    """
    for f in files:
        records = _records(spark, f, headers[f.path].sep, values=False)
        if headers[f.path].present:
            next(records, None)
        for r in records:
            if not r.closed:
                return f.path, r.quote_line, ("a quoted value opens here and is never closed (unterminated '\"'; "
                                              f"the file ends on line {r.end} inside it)")
            if r.n_fields != n_columns:
                msg = field_count_message(n_columns, r.n_fields, headers[f.path].present)
                if r.end > r.line:
                    msg += (f"; this record runs to line {r.end} inside a quoted value that opens on line "
                            f"{r.quote_line}")
                return f.path, r.line, msg
    return None


def field_count_message(expected: int, found: int, header: bool) -> str:
    """The message for a record with ``found`` fields where the header (or a headerless file's given column
    names) has ``expected``."""
    return f"expected {expected} fields (as in the {'header' if header else 'column names given'}), found {found}"


def find_value(spark, files: list, headers: dict, column: str, predicate):
    """(path, line, value) of the first value of ``column`` for which ``predicate`` holds, or None."""
    for f in files:
        h = headers[f.path]
        j = h.names.index(column)
        records = _records(spark, f, h.sep, values=True)
        if h.present:
            next(records, None)
        for r in records:
            if j < len(r.fields) and predicate(r.fields[j]):
                return f.path, r.line, r.fields[j]
    return None


def _files_where(groups, names, corrupt, files: list, condition) -> list:
    """The files (in order) that hold a row satisfying ``condition`` (all of them when this cannot tell)."""
    if len(files) == 1:
        return files
    tag = _free_name("_file", names + [corrupt])
    df = _union([g.read(tag) for g in groups])
    # a condition on every column: Spark then parses whole records as in the statistics pass (with fewer
    # columns it prunes the parse, and it refuses a query on the corrupt-record column alone)
    every_column = F.length(F.concat_ws(",", *[qcol(c) for c in names])) >= 0
    hits = {_normalise(r[0]) for r in
            df.where(condition & every_column).select(qcol(tag)).distinct().limit(1000).collect()}
    chosen = [f for f in files if _normalise(f.path) in hits]
    return chosen or files


def _normalise(path: str) -> str:
    if path.startswith("file:"):
        return os.path.normpath(unquote(urlparse(path).path))
    return unquote(path) if is_uri(path) else os.path.normpath(os.path.abspath(path))


# --- reading ------------------------------------------------------------------------------------------------


class _Group:
    """Files with one header order, separator and dialect, read by Spark with one schema."""

    def __init__(self, spark, order, sep, rfc, names, corrupt, header=True):
        self.spark, self.order, self.sep, self.rfc = spark, list(order), sep, rfc
        self.names, self.corrupt, self.files, self.header = names, corrupt, [], header

    def read(self, file_column: str | None = None):
        schema = T.StructType([T.StructField(c, T.StringType()) for c in self.order] +
                              [T.StructField(self.corrupt, T.StringType())])
        reader = (self.spark.read.option("header", self.header).option("sep", self.sep).option("mode", "PERMISSIVE")
                  .option("columnNameOfCorruptRecord", self.corrupt))
        if self.rfc:
            reader = reader.option("multiLine", True).option("escape", '"')
        df = reader.schema(schema).csv([f.path for f in self.files])
        if self.order == self.names and file_column is None:
            return df
        cols = [qcol(c) for c in self.names] + [qcol(self.corrupt)]
        if file_column:
            cols.append(F.input_file_name().alias(file_column))
        return df.select(*cols)


def _groups(spark, headers: list, names: list, corrupt: str, rfc_files=frozenset()) -> list:
    groups = {}
    for h in headers:
        rfc = h.file.path in rfc_files
        key = (tuple(h.names), h.sep, rfc, h.present)
        if key not in groups:
            groups[key] = _Group(spark, h.names, h.sep, rfc, names, corrupt, h.present)
        groups[key].files.append(h.file)
    return list(groups.values())


def _union(frames: list):
    return reduce(lambda a, b: a.unionByName(b), frames)


def _free_name(base: str, names: list) -> str:
    """``base`` with underscores appended until no name in ``names`` equals it (without case)."""
    taken = {n.lower() for n in names}
    while base.lower() in taken:
        base += "_"
    return base


def read_csv(spark, path, sep: str | None = None, *, columns: list | None = None, typed: bool = False,
             declared: dict | None = None, duplicate_names: str = "error") -> Dataset:
    """Read CSV input with header lines (or a scikit-learn bundled CSV) as a :class:`Dataset`.

    Parameters
    ----------
    spark : SparkSession
    path : str or list of str
        A file, a directory of CSV files, or several of these; all must have the same column names.
    sep : str, optional
        Field separator for every file (default: a tab for ``.tsv`` files, else a comma).
    columns : list of str, optional
        The column names of headerless files (every line is data).
    typed : bool
        Type the columns as relational tables need (:mod:`spark_fr.io.csv_types`: exact integers, dates);
        default: numbers are doubles, everything else strings.
    declared : dict, optional
        {column: 'numeric' | 'nominal' | 'date' | 'id'}: declared types, which win over inference
        (:func:`spark_fr.io.csv_types.column_type`).
    duplicate_names : {'error', 'rename'}
        A header naming a column twice: an error, or the repeat renamed in every file by the rule of
        :mod:`spark_fr.data.names` (``extra['renamed']`` lists the renamings); Spark reads the columns by
        position, under the renamed names.

    Returns
    -------
    Dataset

    Raises
    ------
    InputError
        One line naming the file, line, column or value.
    """
    source = path if isinstance(path, str) else ", ".join(path)
    files = csv_files(spark, path, allow_empty=columns is not None)
    declared = dict(declared or {})
    case_sensitive = str(spark.conf.get("spark.sql.caseSensitive", "false")).lower() == "true"
    single_comma = columns is None and len(files) == 1 and (sep or separator_of(files[0].path)) == ","
    sk = sklearn_header(spark, files[0]) if single_comma else None
    headerless = headerless_numeric(spark, files[0], ",") if single_comma and sk is None else None
    headers = []
    for f in files:
        h = read_header(spark, f, sep or separator_of(f.path), case_sensitive, duplicate_names) \
            if sk is None and not headerless and columns is None else None
        if columns is not None:
            h = Header(f, list(columns), 0, sep or separator_of(f.path), False)
        elif sk is not None:
            n_features = sk[0]
            h = Header(f, [f"x{i + 1}" for i in range(n_features)] + ["target"], 1, ",")
        elif headerless:
            h = Header(f, [f"x{i + 1}" for i in range(headerless - 1)] + ["target"], 0, ",", False)
        if h is None:
            if len(files) == 1:
                raise InputError(f"{f.path}: no header line (the file holds only blank lines)")
            continue
        headers.append(h)
    if not headers:
        raise InputError(f"{source}: no header line in any file")
    check_same_columns(headers)
    names = headers[0].names
    by_path = {h.file.path: h for h in headers}
    files = [h.file for h in headers]
    corrupt = _free_name(CORRUPT, names)
    class_names = sk[1] if sk else []

    rfc_files = frozenset()
    groups = _groups(spark, headers, names, corrupt)
    df = _union([g.read() for g in groups])
    stats = _column_stats(df, names, corrupt, class_names, typed)
    if stats["__corrupt"]:
        is_bad = qcol(corrupt).isNotNull()
        suspects = _files_where(groups, names, corrupt, files, is_bad)
        bad = find_bad_record(spark, suspects, by_path, len(names))
        if bad is not None:
            raise InputError(f"{bad[0]} line {bad[1]}: {bad[2]}")
        # valid RFC 4180 CSV that Spark's line-by-line parse cannot read: read those files in that dialect
        rfc_files = frozenset(f.path for f in suspects)
        log.info("%s: quoted line breaks or doubled quotes: read as RFC 4180 CSV (multiLine)",
                 ", ".join(sorted(rfc_files)))
        groups = _groups(spark, headers, names, corrupt, rfc_files)
        df = _union([g.read() for g in groups])
        stats = _column_stats(df, names, corrupt, class_names, typed)
        if stats["__corrupt"]:
            raise InputError(f"{', '.join(sorted(rfc_files))}: Spark finds rows with another number of fields "
                             f"than the header ({len(names)}), but no such line was located")

    exprs = []
    found = stats.asDict()
    for i, c in enumerate(names):
        kind, problem = CT.column_type(_counts(found, i), typed, declared.get(c))
        if problem is not None:
            number = problem == CT.NOT_A_NUMBER
            _raise_value_error(spark, groups, names, corrupt, files, by_path, c,
                               _known(c) & ~(_numeric(c) if number else _is_date(c)),
                               lambda v, number=number: not is_missing(v) and not (is_number(v) if number else
                                                                                   is_date(v)),
                               lambda v, p=problem, d=declared.get(c): CT.problem_text(p, d, v),
                               stats[f"b{i}" if number else f"e{i}"])
        if kind == CT.DOUBLE and stats[f"f{i}"] is not None:
            _raise_value_error(spark, groups, names, corrupt, files, by_path, c, _infinite(c), is_infinite,
                               infinite_message, stats[f"f{i}"])
        exprs.append(_typed_value(c, kind).alias(c))
    typed_df = df.select(*exprs)
    default_target = None
    if headerless:
        default_target = "target"
        log.info("%s: no header line (the first line is numbers, some equal): columns x1..x%d and the class "
                 "column 'target' (the last one, as in scikit-learn's headerless CSVs)", source, headerless - 1)
    if sk is not None:
        typed_df = _sklearn_classes(spark, groups, names, corrupt, files, by_path, typed_df, class_names, stats)
        default_target = "target"
        log.info("%s: scikit-learn CSV layout: %d features x1..x%d, class column 'target'", source, sk[0], sk[0])
    return Dataset(typed_df, columns_of_dataframe(typed_df, quiet=typed), source, default_target=default_target,
                   class_column=default_target, extra={"renamed": [r for h in headers for r in h.renamed]})


class _ValueTests:
    """The tests of a text value, defined once: for the typing aggregation (over row columns computed once per row,
    :func:`_text_stats`) and for finding a bad value's line (straight from the column, :meth:`of`).

    Parameters
    ----------
    text : Column
        The value trimmed.
    known : Column
        Whether the value is present and not a missing-value marker.
    cast : callable
        ``cast(sql_type)``: the trimmed value cast to ``sql_type``, null where it does not convert.
    """

    def __init__(self, text, known, cast):
        self.text, self.known, self.cast = text, known, cast
        self.number = cast("double")

    @classmethod
    def of(cls, c: str) -> "_ValueTests":
        """The tests of column ``c`` itself."""
        return cls(F.trim(qcol(c)), _known(c), lambda to: try_cast(c, to, trim=True))

    def numeric(self):
        return self.known & self.number.isNotNull()

    def infinite(self):
        return self.numeric() & (F.abs(self.number) == F.lit(float("inf")))

    def integer(self):
        return self.known & self.text.rlike(CT.INTEGER_RLIKE)

    def long(self):
        return self.integer() & self.cast("bigint").isNotNull()

    def decimal(self):
        return self.integer() & self.cast(CT.DECIMAL).isNotNull()

    def date(self):
        return self.known & self.text.rlike(CT.DATE_RLIKE) & try_date(self.text, "yyyy-MM-dd").isNotNull()


def _known(c):
    markers = F.array(*[F.lit(m) for m in MISSING_MARKERS])
    return qcol(c).isNotNull() & ~F.array_contains(markers, F.lower(F.trim(qcol(c))))


def _numeric(c):
    return _ValueTests.of(c).numeric()


def _infinite(c):
    return _ValueTests.of(c).infinite()


def _is_date(c):
    return _ValueTests.of(c).date()


def _class_index_ok(c, n_classes: int):
    v = _ValueTests.of(c).number
    return ~_known(c) | (v.isNotNull() & (v == F.floor(v)) & (v >= 0) & (v < n_classes))


def _text_stats(df, names: list, typed: bool, extra=()):
    """One aggregation of ``df`` with, per text column ``names[i]``, the counts of
    :class:`spark_fr.io.csv_types.Counts` (known ``k<i>``, numbers ``n<i>``; typed: integers ``i<i>``, longs
    ``l<i>``, 38-digit integers ``y<i>``, dates ``d<i>``), a text ``b<i>``, a non-date ``e<i>`` and an infinite
    value ``f<i>``; then the aggregates ``extra`` (over ``df``'s columns). The first row.

    The tests of a value (trimmed, known, parsed as a number, an integer, a date) are row columns computed once
    per row in two projections before the aggregation: written inside each aggregate, Spark evaluated them once
    per aggregate (9 per column), which took twice as long on a 10^6-line file."""
    p = "__t"  # the row columns' prefix: no column of df starts with it (without case)
    while any(c.lower().startswith(p) for c in df.columns):
        p += "_"
    rows = df.select("*", *[F.trim(qcol(c)).alias(f"{p}t{i}") for i, c in enumerate(names)],
                     *[_known(c).alias(f"{p}k{i}") for i, c in enumerate(names)])
    second = []
    for i, _ in enumerate(names):
        tests = _ValueTests(F.col(f"{p}t{i}"), F.col(f"{p}k{i}"), lambda to, t=f"{p}t{i}": try_cast(t, to))
        second += [tests.numeric().alias(f"{p}n{i}"), tests.infinite().alias(f"{p}f{i}")]
        if typed:
            second += [tests.integer().alias(f"{p}i{i}"), tests.long().alias(f"{p}l{i}"),
                       tests.decimal().alias(f"{p}y{i}"), tests.date().alias(f"{p}d{i}")]
    rows = rows.select("*", *second)
    aggs = []
    for i, c in enumerate(names):
        flag = {x: F.col(f"{p}{x}{i}") for x in ("kndfily" if typed else "knf")}
        aggs += [F.count(F.when(flag["k"], 1)).alias(f"k{i}"), F.count(F.when(flag["n"], 1)).alias(f"n{i}"),
                 F.min(F.when(flag["k"] & ~flag["n"], qcol(c))).alias(f"b{i}"),
                 F.min(F.when(flag["f"], qcol(c))).alias(f"f{i}")]
        if typed:
            aggs += [F.count(F.when(flag[x], 1)).alias(f"{x}{i}") for x in "ilyd"]
            aggs.append(F.min(F.when(flag["k"] & ~flag["d"], qcol(c))).alias(f"e{i}"))
    return rows.agg(*aggs, *extra).first()


def _counts(found: dict, i: int) -> CT.Counts:
    return CT.Counts(*(found.get(f"{x}{i}", 0) for x in "knilyd"))


def _typed_value(c: str, kind: str):
    """Text column ``c`` as a column of ``kind`` (a type of :func:`spark_fr.io.csv_types.column_type`)."""
    value = F.trim(qcol(c))
    if kind == CT.DATE:
        value = F.to_date(value, "yyyy-MM-dd")
    elif kind != CT.STRING:
        value = value.cast(kind)
    return F.when(_known(c), value)


def type_text_columns(df, names: list, declared: dict, where: str):
    """Type the string columns ``names`` of a table read from text without lines (JSON) by the relational rule of
    :mod:`spark_fr.io.csv_types` (one aggregation); the other columns stay as they are.

    Raises
    ------
    InputError
        A value that does not fit its column (named with ``where`` and the column), an infinite number.
    """
    if not names:
        return df
    found = _text_stats(df, names, True).asDict()
    typed = {}
    for i, c in enumerate(names):
        kind, problem = CT.column_type(_counts(found, i), True, declared.get(c))
        if problem is not None:
            value = found[f"b{i}" if problem == CT.NOT_A_NUMBER else f"e{i}"]
            raise InputError(f"{where}: column '{c}'{CT.problem_text(problem, declared.get(c), value.strip())}")
        if kind == CT.DOUBLE and found[f"f{i}"] is not None:
            raise InputError(f"{where}: column '{c}'{infinite_message(found[f'f{i}'].strip())}")
        typed[c] = _typed_value(c, kind)
    return df.select(*[typed[f.name].alias(f.name) if f.name in typed else qcol(f.name) for f in df.schema.fields])


def _column_stats(df, names: list, corrupt: str, class_names: list, typed: bool = False):
    """One aggregation: corrupt records; per column :func:`_text_stats`."""
    aggs = [F.count(F.when(qcol(corrupt).isNotNull(), 1)).alias("__corrupt")]
    if class_names:
        c = names[-1]
        aggs += [F.count(F.when(~_class_index_ok(c, len(class_names)), 1)).alias("__bad_class"),
                 F.min(F.when(~_class_index_ok(c, len(class_names)), qcol(c))).alias("__bad_class_value")]
    return _text_stats(df, names, typed, aggs)


def _raise_value_error(spark, groups, names, corrupt, files, by_path, column, condition, predicate, what,
                       fallback_value):
    """Raise ``what(value)`` for the first value of ``column`` with ``predicate``, at its file and line."""
    suspects = _files_where(groups, names, corrupt, files, condition)
    found = find_value(spark, suspects, by_path, column, predicate)
    if found is not None:
        path, line, value = found
        raise InputError(f"{path} line {line}: column '{column}'{what(value.strip())}")
    where = ", ".join(f.path for f in suspects)
    raise InputError(f"{where}: column '{column}'{what(fallback_value.strip())}")


def infinite_message(value: str) -> str:
    sign = "-inf" if (to_number(value) or 0) < 0 else "inf"
    return f" holds an infinite value ({sign}), written '{value}'; write it as a missing value or drop the row"


def _sklearn_classes(spark, groups, names, corrupt, files, by_path, typed, class_names, stats):
    """Map the class indices of a scikit-learn CSV's last column to the class names of its first line."""
    if not class_names:
        return typed
    k = len(class_names)
    if stats["__bad_class"]:
        c = names[-1]

        def not_index(v):
            x = to_number(v)
            return not is_missing(v) and (x is None or not (abs(x) < float("inf") and x == int(x) and 0 <= x < k))

        _raise_value_error(spark, groups, names, corrupt, files, by_path, c, ~_class_index_ok(c, k), not_index,
                           lambda v: f": '{v}' is not a class index 0..{k - 1} (the first line names {k} classes)",
                           stats["__bad_class_value"])
    arr = F.array(*[F.lit(c) for c in class_names])
    return typed.withColumn("target", F.element_at(arr, F.col("target").cast("int") + 1))
