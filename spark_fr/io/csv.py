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
* **Modules.** The values' tests (missing, number, date, infinite) in Python and as Spark columns are
  :mod:`spark_fr.io.csv_values`; the driver-side scanner and finding a line are :mod:`spark_fr.io.csv_scan`;
  the typing rule is :mod:`spark_fr.io.csv_types`. This module reads with Spark; the files and headers of a
  read (:func:`plan_files`) are shared with the driver's reader, :mod:`spark_fr.io.csv_driver`, which reads
  small local input without Spark into the same table (``spark_fr.io.readers`` chooses).
* **scikit-learn's bundled CSVs** (first line ``n_samples,n_features,class names...``) are recognised: the
  features are named ``x1..xD`` and the last column becomes ``target``, holding the class names (a value
  that is not a class index is an error with its line).
"""
from __future__ import annotations

import logging
import os
from functools import reduce
from typing import NamedTuple
from urllib.parse import unquote, urlparse

from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..data.columns import qcol
from ..data.names import deduplicate
from ..data.schema import Dataset, columns_of_dataframe
from ..errors import InputError
from . import csv_types as CT
from .csv_scan import FIELD_LIMIT, Record, field_count_message, file_records, find_bad_record, find_value, scan_records
from .csv_values import (MISSING_MARKERS, class_index_ok, counts, date_value, infinite_message, infinite_value,
                         is_date, is_infinite, is_missing, is_number, known_value, numeric_value, text_stats,
                         to_number, type_text_columns, typed_value)
from .files import DataFile, data_files, is_uri

log = logging.getLogger(__name__)

#: the names of the CSV reader's parts that callers find here (spark_fr.io.csv is the CSV reader)
__all__ = ["CORRUPT", "FIELD_LIMIT", "MISSING_MARKERS", "Header", "Record", "check_same_columns", "csv_files",
           "field_count_message", "find_bad_record", "find_value", "headerless_numeric", "infinite_message", "is_date",
           "is_infinite", "is_missing", "is_number", "read_csv", "read_header", "scan_records", "separator_of",
           "sklearn_header", "to_number", "type_text_columns"]

CORRUPT = "_corrupt"


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
    rec = next(file_records(spark, file, sep, values=True), None)
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
    for rec in file_records(spark, file, ",", values=True):
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
    rec = next(file_records(spark, file, sep, values=True), None)
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



class _Rows(NamedTuple):
    """The rows of one read, as the finders of a bad value's file and line need them."""

    spark: object
    groups: list
    names: list
    corrupt: str
    files: list
    by_path: dict

    def raise_value_error(self, column, condition, predicate, what, fallback_value):
        """Raise ``what(value)`` for the first value of ``column`` with ``predicate``, at its file and line."""
        suspects = _files_where(self.groups, self.names, self.corrupt, self.files, condition)
        found = find_value(self.spark, suspects, self.by_path, column, predicate)
        if found is not None:
            path, line, value = found
            raise InputError(f"{path} line {line}: column '{column}'{what(value.strip())}")
        where = ", ".join(f.path for f in suspects)
        raise InputError(f"{where}: column '{column}'{what(fallback_value.strip())}")


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
        ``extra['renamed']`` lists the renamings; a headerless or scikit-learn layout names its class column
        'target' (``default_target`` and ``class_column``).

    Raises
    ------
    InputError
        One line naming the file, line, column or value.
    """
    case_sensitive = str(spark.conf.get("spark.sql.caseSensitive", "false")).lower() == "true"
    plan = plan_files(spark, path, sep, columns, duplicate_names, case_sensitive)
    headers, names = plan.headers, plan.headers[0].names
    rows = _Rows(spark, [], names, _free_name(CORRUPT, names), [h.file for h in headers],
                 {h.file.path: h for h in headers})
    class_names = plan.sklearn[1] if plan.sklearn else []
    rows, df, stats = _read_records(rows, headers, class_names, typed)
    declared = dict(declared or {})
    typed_df = df.select(*[_typed_column(rows, c, i, stats, typed, declared.get(c)) for i, c in enumerate(names)])
    if plan.sklearn is not None:
        typed_df = _sklearn_classes(rows, typed_df, class_names, stats)
    layout_note(plan)
    return Dataset(typed_df, columns_of_dataframe(typed_df, quiet=typed), plan.source,
                   default_target=plan.default_target, class_column=plan.default_target,
                   extra={"renamed": [r for h in headers for r in h.renamed]})


class Plan(NamedTuple):
    """What both CSV readers (Spark's, :func:`read_csv`, and the driver's, :mod:`spark_fr.io.csv_driver`) read:
    ``source`` (the paths as one string), ``files``, the scikit-learn layout ``sklearn`` ((n_features, class
    names) or None), ``headerless`` (the field count of a headerless line of numbers, or None), every file's
    :class:`Header` (files of blank lines left out) and the ``default_target`` the layout names."""

    source: str
    files: list
    sklearn: tuple | None
    headerless: int | None
    headers: list
    default_target: str | None


def plan_files(spark, path, sep, columns, duplicate_names: str, case_sensitive: bool, check_files=None) -> Plan:
    """The files of CSV input and their checked header lines (:class:`Plan`), read on the driver.

    Parameters
    ----------
    spark : SparkSession or None
        Needed only for URIs.
    path, sep, columns, duplicate_names
        As :func:`read_csv`.
    case_sensitive : bool
        Spark's ``spark.sql.caseSensitive``.
    check_files : callable, optional
        Called with the files before any is opened (the driver reader's size limit).

    Raises
    ------
    InputError
        A missing or empty file, a bad header, files with other column names.
    """
    source = path if isinstance(path, str) else ", ".join(path)
    files = csv_files(spark, path, allow_empty=columns is not None)
    if check_files is not None:
        check_files(files)
    sk, headerless = _layout(spark, files, sep, columns)
    headers = _headers(spark, files, sep, columns, sk, headerless, duplicate_names, source, case_sensitive)
    check_same_columns(headers)
    return Plan(source, files, sk, headerless, headers, "target" if sk is not None or headerless else None)


def layout_note(plan: Plan) -> None:
    """Log the layout a reader recognised by the first line (a headerless line of numbers, scikit-learn's CSV)."""
    if plan.headerless:
        log.info("%s: no header line (the first line is numbers, some equal): columns x1..x%d and the class "
                 "column 'target' (the last one, as in scikit-learn's headerless CSVs)", plan.source,
                 plan.headerless - 1)
    if plan.sklearn is not None:
        log.info("%s: scikit-learn CSV layout: %d features x1..x%d, class column 'target'", plan.source,
                 plan.sklearn[0], plan.sklearn[0])


def _layout(spark, files: list, sep, columns) -> tuple:
    """(scikit-learn header, headerless column count): how a single comma-separated file without given column names
    is laid out (each None when it is not laid out so)."""
    single_comma = columns is None and len(files) == 1 and (sep or separator_of(files[0].path)) == ","
    sk = sklearn_header(spark, files[0]) if single_comma else None
    headerless = headerless_numeric(spark, files[0], ",") if single_comma and sk is None else None
    return sk, headerless


def _headers(spark, files: list, sep, columns, sk, headerless, duplicate_names: str, source: str,
             case_sensitive: bool) -> list:
    """The :class:`Header` of every file that has one (a file of blank lines only: an error when it is the only
    file, else skipped)."""
    headers = []
    for f in files:
        if columns is not None:
            h = Header(f, list(columns), 0, sep or separator_of(f.path), False)
        elif sk is not None:
            h = Header(f, [f"x{i + 1}" for i in range(sk[0])] + ["target"], 1, ",")
        elif headerless:
            h = Header(f, [f"x{i + 1}" for i in range(headerless - 1)] + ["target"], 0, ",", False)
        else:
            h = read_header(spark, f, sep or separator_of(f.path), case_sensitive, duplicate_names)
        if h is None:
            if len(files) == 1:
                raise InputError(f"{f.path}: no header line (the file holds only blank lines)")
            continue
        headers.append(h)
    if not headers:
        raise InputError(f"{source}: no header line in any file")
    return headers


def _read_records(rows: _Rows, headers: list, class_names: list, typed: bool) -> tuple:
    """(rows with their groups, the all-string DataFrame, its statistics): the files read by Spark; files in which
    Spark rejects records are scanned for the first bad one (one line naming its file and line), else read again as
    RFC 4180 CSV (quoted line breaks, doubled quotes)."""
    spark, names, corrupt = rows.spark, rows.names, rows.corrupt
    groups = _groups(spark, headers, names, corrupt)
    df = _union([g.read() for g in groups])
    stats = _column_stats(df, names, corrupt, class_names, typed)
    if stats["__corrupt"]:
        suspects = _files_where(groups, names, corrupt, rows.files, qcol(corrupt).isNotNull())
        bad = find_bad_record(spark, suspects, rows.by_path, len(names))
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
    return rows._replace(groups=groups), df, stats


def _typed_column(rows: _Rows, c: str, i: int, stats, typed: bool, declared: str | None):
    """Text column ``c`` (the ``i``-th) typed by :func:`spark_fr.io.csv_types.column_type` from its statistics; a value
    that does not fit, or an infinite number, is an error at its file and line."""
    kind, problem = CT.column_type(counts(stats.asDict(), i), typed, declared)
    if problem is not None:
        number = problem == CT.NOT_A_NUMBER
        rows.raise_value_error(c, known_value(c) & ~(numeric_value(c) if number else date_value(c)),
                               lambda v: not is_missing(v) and not (is_number(v) if number else is_date(v)),
                               lambda v: CT.problem_text(problem, declared, v), stats[f"b{i}" if number else f"e{i}"])
    if kind == CT.DOUBLE and stats[f"f{i}"] is not None:
        rows.raise_value_error(c, infinite_value(c), is_infinite, infinite_message, stats[f"f{i}"])
    return typed_value(c, kind).alias(c)


def _column_stats(df, names: list, corrupt: str, class_names: list, typed: bool = False):
    """One aggregation: corrupt records; per column :func:`spark_fr.io.csv_values.text_stats`."""
    aggs = [F.count(F.when(qcol(corrupt).isNotNull(), 1)).alias("__corrupt")]
    if class_names:
        c = names[-1]
        aggs += [F.count(F.when(~class_index_ok(c, len(class_names)), 1)).alias("__bad_class"),
                 F.min(F.when(~class_index_ok(c, len(class_names)), qcol(c))).alias("__bad_class_value")]
    return text_stats(df, names, typed, aggs)


def _sklearn_classes(rows: _Rows, typed, class_names, stats):
    """Map the class indices of a scikit-learn CSV's last column to the class names of its first line."""
    if not class_names:
        return typed
    k = len(class_names)
    if stats["__bad_class"]:
        c = rows.names[-1]
        rows.raise_value_error(c, ~class_index_ok(c, k), lambda v: not_class_index(v, k),
                               lambda v: f": '{v}' is not a class index 0..{k - 1} (the first line names {k} classes)",
                               stats["__bad_class_value"])
    arr = F.array(*[F.lit(c) for c in class_names])
    # Decision: the null test is explicit: Spark 4.2's generated code gives element_at with a null index (a missing
    # class index) the previous row's class (tests/io/test_csv_driver.py, sk.csv)
    target = F.col("target")
    return typed.withColumn("target", F.when(target.isNotNull(), F.element_at(arr, target.cast("int") + 1)))


def not_class_index(value: str, k: int) -> bool:
    """Whether a known value of a scikit-learn CSV's last column is no class index 0..k-1 (Spark side:
    :func:`spark_fr.io.csv_values.class_index_ok`)."""
    x = to_number(value)
    return not is_missing(value) and (x is None or not (abs(x) < float("inf") and x == int(x) and 0 <= x < k))
