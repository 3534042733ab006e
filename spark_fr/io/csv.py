"""Reading CSV files: typed columns from an all-string read, with row-level errors.

Sketch
------
* The file is read by Spark with a header and every column as a string, plus a ``_corrupt`` column that
  Spark fills for rows with the wrong number of fields.
* One aggregation counts, per column, the known values (not empty and not a missing marker: ``?``,
  ``NA``, ``NaN``, ``null``, ``None``, case-insensitive) and how many of them parse as numbers.
  All numbers: a numeric column (double). No numbers: a nominal column. Mostly numbers with some text:
  an error that names the column, the value and its line (found by streaming the file on the driver),
  since a typo in a numeric column would otherwise silently turn it into categories. Mostly text with a
  few numbers: nominal.
* scikit-learn's bundled CSVs (first line ``n_samples,n_features,class names...``) are recognised: the
  features are named ``x1..xD`` and the last column becomes ``target`` holding the class names.
"""
from __future__ import annotations

import csv
import gzip
import io
import logging
import os

from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..data.columns import qcol
from ..data.schema import Dataset, columns_of_dataframe
from ..errors import InputError

log = logging.getLogger(__name__)

MISSING_MARKERS = ("", "?", "na", "nan", "null", "none", "n/a")
CORRUPT = "_corrupt"


def _open(path: str):
    if path.endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


def _first_lines(path: str, n: int = 2) -> list:
    with _open(path) as fh:
        reader = csv.reader(fh)
        out = []
        for row in reader:
            out.append(row)
            if len(out) >= n:
                break
    return out


def _is_int(text: str) -> bool:
    try:
        int(text)
        return True
    except ValueError:
        return False


def sklearn_header(path: str):
    """(n_features, class names) if ``path`` is one of scikit-learn's bundled CSVs, else None."""
    rows = _first_lines(path, 2)
    if len(rows) < 2 or len(rows[0]) < 2:
        return None
    head, first = rows
    if not (_is_int(head[0]) and _is_int(head[1])):
        return None
    n_features = int(head[1])
    if len(first) != n_features + 1:
        return None
    return n_features, [c.strip() for c in head[2:]]


def find_first_non_numeric(path: str, column: str):
    """(line number, value) of the first row whose ``column`` is neither a number nor missing."""
    with _open(path) as fh:
        reader = csv.reader(fh)
        header = next(reader, [])
        if column not in header:
            return None, None
        j = header.index(column)
        for row in reader:
            if j >= len(row):
                continue
            v = row[j].strip()
            if v.lower() in MISSING_MARKERS:
                continue
            try:
                float(v)
            except ValueError:
                return reader.line_num, v
    return None, None


def find_corrupt_row(path: str, n_columns: int) -> int | None:
    """1-based line number of the first row whose field count differs from the header's."""
    with _open(path) as fh:
        reader = csv.reader(fh)
        next(reader, None)
        for row in reader:
            if row and len(row) != n_columns:
                return reader.line_num
    return None


def read_csv(spark, path: str, sep: str = ",") -> Dataset:
    """Read a CSV file with a header line (or a scikit-learn bundled CSV) as a :class:`Dataset`."""
    if os.path.isfile(path) and os.path.getsize(path) == 0:
        raise InputError(f"{path}: the file is empty")
    sk = sklearn_header(path) if os.path.isfile(path) else None
    if sk is not None:
        return _read_sklearn_csv(spark, path, *sk)
    raw = spark.read.option("header", True).option("sep", sep).csv(path)
    names = raw.columns
    if not names:
        raise InputError(f"{path}: no header line")
    dupes = sorted({c for c in names if names.count(c) > 1})
    if dupes:
        raise InputError(f"{path}: duplicate column name '{dupes[0]}' in the header")
    schema = T.StructType([T.StructField(c, T.StringType()) for c in names] +
                          [T.StructField(CORRUPT, T.StringType())])
    df = (spark.read.option("header", True).option("sep", sep).option("mode", "PERMISSIVE")
          .option("columnNameOfCorruptRecord", CORRUPT).schema(schema).csv(path))
    markers = F.array(*[F.lit(m) for m in MISSING_MARKERS])

    def known(c):
        return qcol(c).isNotNull() & ~F.array_contains(markers, F.lower(F.trim(qcol(c))))

    def numeric(c):
        return known(c) & F.trim(qcol(c)).try_cast("double").isNotNull()

    aggs = [F.count(F.when(qcol(CORRUPT).isNotNull(), 1)).alias("__corrupt")]
    for i, c in enumerate(names):
        aggs += [F.count(F.when(known(c), 1)).alias(f"k{i}"), F.count(F.when(numeric(c), 1)).alias(f"n{i}"),
                 F.min(F.when(known(c) & ~numeric(c), qcol(c))).alias(f"b{i}")]
    stats = df.agg(*aggs).first()
    if stats["__corrupt"]:
        line = find_corrupt_row(path, len(names)) if os.path.isfile(path) else None
        where = f"line {line}" if line else "a row"
        raise InputError(f"{path} {where}: expected {len(names)} fields (the header has {len(names)})")
    exprs = []
    for i, c in enumerate(names):
        k, n, bad = stats[f"k{i}"], stats[f"n{i}"], stats[f"b{i}"]
        if k > 0 and n == k:
            exprs.append(F.when(known(c), F.trim(qcol(c)).cast("double")).alias(c))
        elif n > 0 and n >= k - n:
            line, value = find_first_non_numeric(path, c) if os.path.isfile(path) else (None, None)
            bad = value if value is not None else bad
            where = f" line {line}" if line else ""
            raise InputError(f"{path}{where}: column '{c}': '{bad}' is not a number (the column is otherwise "
                             f"numeric); fix the value or write it as a missing value (empty or ?)")
        else:
            exprs.append(F.when(known(c), F.trim(qcol(c))).alias(c))
    typed = df.select(*exprs)
    return Dataset(typed, columns_of_dataframe(typed), path)


def _read_sklearn_csv(spark, path: str, n_features: int, class_names: list) -> Dataset:
    fields = [T.StructField(f"x{i + 1}", T.DoubleType()) for i in range(n_features)]
    fields.append(T.StructField("target", T.DoubleType()))
    df = spark.read.option("header", True).option("mode", "FAILFAST").schema(T.StructType(fields)).csv(path)
    if class_names:
        names = F.array(*[F.lit(c) for c in class_names])
        df = df.withColumn("target", F.element_at(names, F.col("target").cast("int") + 1))
    log.info("%s: scikit-learn CSV layout: %d features x1..x%d, class column 'target'", path, n_features,
             n_features)
    ds = Dataset(df, columns_of_dataframe(df), path, default_target="target")
    return ds
