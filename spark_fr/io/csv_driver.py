"""Reading CSV files in the driver (pyarrow, no Spark): exactly the table Spark's read makes, or :class:`NotPlain`.

Sketch
------
Two readers share this module: the flat reader of ``spark_fr.rank`` (:func:`read_csv_driver`, the driver twin of
:func:`spark_fr.io.csv.read_csv`) and the relational local engine (:mod:`spark_fr.relational.local_csv`, typed
tables). Both take the files and header lines from :func:`spark_fr.io.csv.plan_files` (the Spark reader's own
functions), the records of each file from :func:`text_table`, and the type of a column from the one rule,
:func:`spark_fr.io.csv_types.column_type`, applied to counts of the Python twins of Spark's value tests
(:mod:`spark_fr.io.csv_values`).

* **When the driver reads** (:func:`read_csv_driver`): every input is a local path (no URI) and the files
  (``.gz`` / ``.bz2`` counted 5 times their size) hold at most :data:`DRIVER_LIMIT` bytes, the limit up to which
  ``prepare`` collects any input on the driver (``local_limit``). Directories are listed as the Spark reader lists
  them (:func:`spark_fr.io.csv.csv_files`).
* **Bytes** (:func:`text_table`). Each file is read whole (``.gz`` and ``.bz2`` decompressed). :class:`NotPlain`
  (the caller then lets Spark read) wherever Spark's line-by-line parse may read otherwise than pyarrow: a
  backslash (Spark's escape character), a NUL, bytes that are not UTF-8, a quote that does not enclose a whole
  field on one line (``"a"b``, ``"a""b"``, ``x, "a"``, a quoted line break: :func:`plain_quotes`), a byte-order
  mark anywhere but before a header on the first line, a separator of several characters, more columns than
  Spark's parser takes (:data:`MAX_COLUMNS`), a compression codec other than gzip and bzip2.
* **Records**: pyarrow, every field as text; lines that trim to nothing skipped as Spark skips them (Java's
  ``trim``: characters up to ``' '``); a record with another number of fields than the header is the Spark
  reader's error, found by :func:`spark_fr.io.csv.find_bad_record` (file and line).
* **Flat types** (:func:`flat_column`): a column that pyarrow casts whole to finite doubles is numeric at once
  (every such text is a number to Spark's cast and none is a missing marker); any other is dictionary-encoded,
  each distinct value tested once by :func:`spark_fr.io.csv_values.is_missing` and
  :func:`spark_fr.io.csv_values.to_number` (Spark's cast, hex and ``1d`` included) and counted with its
  frequency; :func:`spark_fr.io.csv_types.column_type` decides. Values as Spark's ``typed_value`` makes them:
  numbers as ``to_number`` reads them, text trimmed of spaces, missing markers null. A value that does not fit
  its column or an infinite number is located by :func:`spark_fr.io.csv.find_value` and reported as the Spark
  reader reports it.
"""
from __future__ import annotations

import bz2
import gzip
import logging
import re

import numpy as np

from ..errors import InputError, one_line
from . import csv_types as CT
from .csv_values import infinite_message, is_infinite, is_missing, to_number

log = logging.getLogger(__name__)

#: bytes of CSV (compressed files counted at 5 times their size) up to which the driver reads: prepare's
#: ``local_limit`` (tests/io/test_csv_driver.py checks they agree)
DRIVER_LIMIT = 512_000_000
#: Spark's CSV option ``maxColumns`` (univocity's limit): a wider file is Spark's error
MAX_COLUMNS = 20480
#: pyarrow's block: a line must fit in one (a wide table's lines are long)
BLOCK_BYTES = 1 << 24
#: what Spark's string-to-number cast trims besides spaces, and what Java's ``trim`` removes (NUL is refused earlier)
TRIM = "".join(chr(i) for i in range(1, 33))
_LINE_END = re.compile(rb"\r\n|\n|\r")
_COMPRESSED = (".deflate", ".snappy", ".lz4", ".zst", ".zstd", ".br")
_BOM = b"\xef\xbb\xbf"


class NotPlain(Exception):
    """The driver cannot be sure to read this input as Spark does (the message says why): Spark reads it."""


# --- bytes and records -----------------------------------------------------------------------------------------


def raw_bytes(path: str) -> bytes:
    """A file's bytes, ``.gz`` and ``.bz2`` decompressed (other codecs, or a stream that does not decompress:
    :class:`NotPlain`, Spark's reader says what is wrong)."""
    low = path.lower()
    if low.endswith(_COMPRESSED):
        raise NotPlain(f"{path}: a compression codec read through Hadoop")
    with open(path, "rb") as fh:
        raw = fh.read()
    try:
        if low.endswith(".gz"):
            raw = gzip.decompress(raw)
        elif low.endswith(".bz2"):
            raw = bz2.decompress(raw)
    except (OSError, EOFError, ValueError) as err:
        raise NotPlain(f"{path}: {err}") from None
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


def _checked_body(header) -> tuple:
    """(the file's bytes, where its records start, whether a quote occurs in them), or :class:`NotPlain`."""
    path, sep = header.file.path, header.sep
    if len(sep) != 1:
        raise NotPlain(f"{path}: a separator of {len(sep)} characters")
    if len(header.names) > MAX_COLUMNS:
        raise NotPlain(f"{path}: more than {MAX_COLUMNS} columns (Spark's CSV parser refuses them)")
    raw = raw_bytes(path)
    if b"\\" in raw or b"\x00" in raw:
        raise NotPlain(f"{path}: backslashes or NUL bytes")
    # a byte-order mark before a header on the first line goes with the line Spark skips; anywhere else it is text
    if raw.startswith(_BOM) and not (header.present and header.line == 1):
        raise NotPlain(f"{path}: byte-order mark")
    start = _body_start(raw, header.line if header.present else 0)
    if raw.find(_BOM, start) >= 0:
        raise NotPlain(f"{path}: byte-order mark inside the data")
    quoted = raw.find(b'"', start) >= 0
    if quoted and not plain_quotes(np.frombuffer(memoryview(raw)[start:], dtype=np.uint8), ord(sep)):
        raise NotPlain(f"{path}: quotes inside values")
    return raw, start, quoted


def text_table(header, names: list, by_path: dict):
    """One file's records as a pyarrow table of text columns named ``names`` (in that order; an empty field is
    ``''``), as Spark's line-by-line parse reads them.

    Parameters
    ----------
    header : spark_fr.io.csv.Header
        The file, its separator, its header line (or none: ``present`` False) and its column names.
    names : list of str
        The columns of the table (the first file's order).
    by_path : dict
        Every file's Header by path (for :func:`spark_fr.io.csv.find_bad_record`).

    Raises
    ------
    NotPlain
        What Spark may parse otherwise (module sketch).
    InputError
        A record with another number of fields than the header (file and line).
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    from .csv import find_bad_record

    path, sep = header.file.path, header.sep
    raw, start, quoted = _checked_body(header)
    if _blank(raw, start):
        return pa.table({c: pa.array([], pa.string()) for c in names})
    bad = []

    def invalid(row):
        if row.text.strip(TRIM):  # a line that trims to nothing is skipped, as Spark skips it
            bad.append(row)
        return "skip"

    try:
        table = pacsv.read_csv(
            pa.py_buffer(memoryview(raw)[start:]),
            read_options=pacsv.ReadOptions(column_names=header.names, use_threads=True, block_size=BLOCK_BYTES),
            parse_options=pacsv.ParseOptions(delimiter=sep, quote_char='"' if quoted else False, double_quote=False,
                                             escape_char=False, newlines_in_values=False, ignore_empty_lines=True,
                                             invalid_row_handler=invalid),
            convert_options=pacsv.ConvertOptions(column_types={c: pa.string() for c in header.names},
                                                 strings_can_be_null=False, quoted_strings_can_be_null=False,
                                                 null_values=[], check_utf8=True))
    except (pa.ArrowInvalid, UnicodeDecodeError) as e:
        raise NotPlain(f"{path}: {one_line(str(e))}") from None
    if bad:
        found = find_bad_record(None, [header.file], by_path, len(header.names))
        if found is None:
            raise NotPlain(f"{path}: pyarrow finds records with another number of fields; Spark may not")
        raise InputError(f"{found[0]} line {found[1]}: {found[2]}")
    if len(header.names) == 1 or ord(sep) <= 32:  # a line of only separators and spaces trims to nothing: skipped
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
        raise NotPlain(f"{path}: quoted values and lines of only separators")
    return table.filter(pc.invert(blank))


class ValueLocator:
    """Raises the Spark reader's one-line error for a column's first bad value (a value that does not fit its
    type, an infinite number, a bad class index), found in the files by :func:`spark_fr.io.csv.find_value`;
    :attr:`unsupported` when the files hold no such value (the driver's table and Spark's would differ)."""

    unsupported = NotPlain

    def __init__(self, files, by_path, column, declared=None):
        self.files, self.by_path, self.column, self.declared = files, by_path, column, declared

    def problem(self, problem: str):
        from .csv_values import is_date, is_number

        number = problem == CT.NOT_A_NUMBER

        def bad(v):
            return not is_missing(v) and not (is_number(v) if number else is_date(v))

        self.fail(bad, lambda v: CT.problem_text(problem, self.declared, v))

    def infinite(self):
        self.fail(is_infinite, infinite_message)

    def fail(self, predicate, what):
        """Raise ``what(value)`` for the first value with ``predicate``, at its file and line."""
        from .csv import find_value

        found = find_value(None, self.files, self.by_path, self.column, predicate)
        if found is None:
            raise self.unsupported(f"column '{self.column}': a value Spark's reader may type otherwise")
        path, line, value = found
        raise InputError(f"{path} line {line}: column '{self.column}'{what(value.strip())}")


# --- flat tables (spark_fr.rank) -------------------------------------------------------------------------------


def flat_column(s, locate: ValueLocator):
    """(pyarrow array, Spark type) of a text column ``s`` (a ChunkedArray) typed as :func:`spark_fr.io.csv.read_csv`
    types a flat table's column: ``double`` or ``string`` by :func:`spark_fr.io.csv_types.column_type`."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(s):
        try:
            x = pc.cast(s, pa.float64())
        except pa.ArrowInvalid:
            x = None
        if x is not None and pc.all(pc.is_finite(x)).as_py():
            kind, problem = CT.column_type(CT.Counts(len(s), len(s)))
            assert kind == CT.DOUBLE and problem is None
            return x.combine_chunks(), CT.DOUBLE
    enc = pc.dictionary_encode(s.combine_chunks() if isinstance(s, pa.ChunkedArray) else s)
    values, idx = enc.dictionary.to_pylist(), enc.indices
    freq = np.bincount(np.asarray(idx), minlength=len(values))
    known = np.array([not is_missing(v) for v in values], dtype=bool)
    number = [to_number(v) if k else None for v, k in zip(values, known)]
    is_num = np.array([v is not None for v in number], dtype=bool)
    kind, problem = CT.column_type(CT.Counts(int(freq[known].sum()), int(freq[is_num].sum())))
    if problem is not None:
        locate.problem(problem)
    if kind == CT.DOUBLE:
        if any(abs(v) == float("inf") for v in number if v is not None):
            locate.infinite()
        mapped = pa.array(number, pa.float64())
    else:
        mapped = pa.array([v.strip(" ") if k else None for v, k in zip(values, known)], pa.string())
    return (mapped.take(idx) if len(values) else pa.nulls(len(s), pa.float64() if kind == CT.DOUBLE
                                                           else pa.string())), kind


def class_names_column(values, class_names: list, locate: ValueLocator):
    """A scikit-learn CSV's last column: the class indices of ``values`` (typed, :func:`flat_column`) as the class
    names of its first line; a known value that is not an index 0..k-1 is the Spark reader's error."""
    import pyarrow as pa

    from .csv import not_class_index

    k = len(class_names)
    if pa.types.is_floating(values.type):
        bad = any(not (x == int(x) and 0 <= x < k) for x in values.drop_null().to_pylist())
    else:
        bad = values.null_count < len(values)
    if bad:
        locate.fail(lambda v: not_class_index(v, k),
                    lambda v: f": '{v}' is not a class index 0..{k - 1} (the first line names {k} classes)")
    return pa.array([None if x is None else class_names[int(x)] for x in values.to_pylist()], pa.string())


def driver_reads(paths: list) -> str | None:
    """Why the driver does not read the CSV input ``paths`` (None: it does; the module sketch's rule)."""
    from .files import is_uri

    uri = next((p for p in paths if is_uri(p)), None)
    return f"{uri} is a URI" if uri is not None else None


def read_csv_driver(path, sep: str | None = None, *, duplicate_names: str = "error", case_sensitive: bool = False):
    """Read local CSV input as :func:`spark_fr.io.csv.read_csv` reads it, in the driver (module sketch).

    Parameters
    ----------
    path : str or list of str
        Local files or directories of CSV files.
    sep : str, optional
        Field separator for every file (default: a tab for ``.tsv`` files, else a comma).
    duplicate_names : {'error', 'rename'}
    case_sensitive : bool
        Spark's ``spark.sql.caseSensitive``: how column names are compared.

    Returns
    -------
    Dataset
        No Spark DataFrame: ``batches`` is an :class:`spark_fr.io.frames.ArrowSource` of the typed columns; the
        columns, their order, names, types, values, ``default_target``, ``class_column`` and ``extra['renamed']``
        are those of :func:`spark_fr.io.csv.read_csv`.

    Raises
    ------
    NotPlain
        An input the driver does not read (a URI, more than :data:`DRIVER_LIMIT` bytes, what Spark may parse
        otherwise); nothing is logged or decided yet.
    InputError
        The Spark reader's one-line errors, naming the file, line, column or value.
    """
    import pyarrow as pa

    from ..data.schema import ColumnInfo, Dataset, pandas_index_columns
    from .csv import layout_note, plan_files
    from .frames import ArrowSource

    paths = [path] if isinstance(path, str) else list(path)
    why = driver_reads(paths)
    if why is not None:
        raise NotPlain(why)
    plan = plan_files(None, path, sep, None, duplicate_names, case_sensitive, _check_size)
    headers, names = plan.headers, plan.headers[0].names
    by_path = {h.file.path: h for h in headers}
    parts = [text_table(h, names, by_path) for h in headers]
    text = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
    files = [h.file for h in headers]
    typed = {}
    for name in names:
        typed[name] = flat_column(text.column(name), ValueLocator(files, by_path, name))
    if plan.sklearn is not None and plan.sklearn[1]:
        values = class_names_column(typed["target"][0], plan.sklearn[1], ValueLocator(files, by_path, "target"))
        typed["target"] = (values, CT.STRING)
    table = pa.table({n: typed[n][0] for n in names})
    layout_note(plan)
    index = set(pandas_index_columns(names))
    columns = [ColumnInfo(n, "numeric" if typed[n][1] == CT.DOUBLE else "nominal", None, n)
               for n in names if n not in index]
    return Dataset(None, columns, plan.source, default_target=plan.default_target,
                   class_column=plan.default_target, batches=ArrowSource(table),
                   extra={"renamed": [r for h in headers for r in h.renamed]})


def _check_size(files: list) -> None:
    """:class:`NotPlain` for files above :data:`DRIVER_LIMIT` bytes (compressed ones counted 5 times)."""
    size = sum(f.size * (5 if f.path.lower().endswith((".gz", ".bz2")) else 1) for f in files)
    if size > DRIVER_LIMIT:
        raise NotPlain(f"{size} bytes of CSV, more than the driver reads ({DRIVER_LIMIT})")
