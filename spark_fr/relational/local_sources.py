"""Reading a relational schema's sources in the driver for the local engine, and the engine choice.

Sketch
------
A :class:`LocalTable` holds one numpy array per column and the Spark type each column would read as
(``'double'``, ``'long'``, ``'date'``, ``'string'``, ``'boolean'``): numbers as float64 with NaN for null
(integer columns without nulls stay int64), dates as ``datetime64[D]`` with NaT, strings and booleans
(``'true'`` / ``'false'``, Spark's cast) as object arrays with None.

* **Headerless CSV/TSV** (``columns:``): a driver-side scanner that types the columns as the Spark engine's
  reader (:func:`spark_fr.io.csv.read_csv`, relational typing) does, by the same rule
  (:func:`spark_fr.io.csv_types.column_type`: missing markers, space trim, exact integers, doubles, dates,
  declared types) and with the same one-line errors (a record with another number of fields, a typo in a
  numeric or date column, an infinite number), each with its file, line and column.
* **Parquet** (a file, or a directory of files without partition subdirectories, all with the same Spark
  types): pyarrow reads the columns; each column's Spark type is :func:`spark_fr.io.parquet.spark_type`'s.
  Integers of at most 2^53 in magnitude (exact as doubles), float and double without NaN,
  strings (dictionary-encoded ones decoded through their dictionary, without a Python string per row),
  booleans and dates are read; an infinite number is the Spark engine's error; anything else (timestamps,
  decimals, binary, nested types, NaN) is :class:`Unsupported` and the Spark engine runs.

**Engine choice** (:func:`local_possible`, for ``engine='auto'``): no DataFrame from the caller, every source a
local headerless CSV/TSV file or a local Parquet file or directory, no generated key, the CSV/TSV files
below :data:`LOCAL_MAX_BYTES` together (the scanner is Python), and the Parquet tables below
:data:`LOCAL_MAX_CELLS` cells (rows x columns, from the footers) together and within the memory the machine has
available (:data:`BYTES_PER_CELL` per cell; measured peaks of the whole process: 2.3 GB for the 4 x 10^7
cells of the 10^7-row benchmark set, 6.0 GB for the 1.2 x 10^8 of the 3 x 10^7-row one).
"""
from __future__ import annotations

import datetime as _dt
import os
import re

import numpy as np
import pandas as pd

from ..data.names import REFUSE, deduplicate
from ..errors import InputError, one_line
from ..io import csv_types as CT
from ..io.csv import field_count_message, infinite_message

#: total size on disk (bytes) of CSV/TSV sources below which ``engine='auto'`` generates locally
LOCAL_MAX_BYTES = 64 << 20
#: total cells (rows x columns) of Parquet sources below which ``engine='auto'`` generates locally
LOCAL_MAX_CELLS = 300_000_000
#: driver memory the local engine needs per source cell (measured peaks: 58 bytes at 4 x 10^7 cells, 50 at
#: 1.2 x 10^8, whole process); ``auto`` also wants the sources' cells times this below half the memory available
BYTES_PER_CELL = 64

_NUMBER = re.compile(r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$")
_LOOSE = re.compile(r"(?i)^[+-]?(inf|infinity|nan|0x.*|.*[0-9.][dfDF])$")
_INTEGER = re.compile(CT.INTEGER_RE)
_DATE = re.compile(CT.DATE_RE)
_SPARK_TRIM = "".join(chr(i) for i in range(33))
_EXACT_INTEGER = 2 ** 53


class Unsupported(Exception):
    """The local engine cannot reproduce the Spark result exactly for this input."""


class LocalTable:
    """A table read in the driver: ``columns`` {name: numpy array} (see the module's notes), ``types``
    {name: Spark type}, ``rows``."""

    def __init__(self, columns: dict, types: dict, rows: int):
        self.columns = columns
        self.types = types
        self.rows = rows


def missing(a: np.ndarray) -> np.ndarray:
    """The null mask of a column of a :class:`LocalTable`."""
    if a.dtype.kind == "f":
        return np.isnan(a)
    if a.dtype.kind == "M":
        return np.isnat(a)
    if a.dtype == object:
        return pd.isna(a)
    return np.zeros(len(a), bool)


# --- engine choice ----------------------------------------------------------------------------------------


def local_possible(schema, tables=None, max_bytes: int = LOCAL_MAX_BYTES, max_cells: int = LOCAL_MAX_CELLS,
                   memory: float | None = None) -> bool:
    """Whether ``engine='auto'`` generates in the driver (see the module's notes).

    Parameters
    ----------
    schema : RelationalSchema
    tables : dict, optional
        DataFrames given by the caller (then Spark).
    max_bytes, max_cells : int
        The CSV/TSV and Parquet budgets.
    memory : float, optional
        Bytes of memory available (default: the machine's ``MemAvailable``).
    """
    if tables:
        return False
    total_bytes = total_cells = 0
    for spec in schema.tables.values():
        src = spec.source
        if src.kind != "path" or "://" in src.path or not os.path.exists(src.path):
            return False
        fmt = _format(src)
        if fmt in ("csv", "tsv"):
            if not src.columns or not os.path.isfile(src.path) or src.path.lower().endswith(".gz"):
                return False
            if spec.generated_key and spec.key not in src.columns:
                return False
            total_bytes += os.path.getsize(src.path)
        elif fmt == "parquet":
            shape = _parquet_shape(src.path)
            if shape is None or (spec.generated_key and spec.key not in shape[1]):
                return False
            total_cells += shape[0] * len(shape[1])
        else:
            return False
    if total_bytes >= max_bytes or total_cells >= max_cells:
        return False
    return total_cells * BYTES_PER_CELL <= (_available_memory() if memory is None else memory) / 2


def _available_memory() -> float:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        pass
    return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


def _format(src) -> str:
    from .sources import format_of

    try:
        return format_of(src.path, src.format)
    except InputError:
        return "?"


def _parquet_files(path: str) -> list | None:
    """The Parquet files Spark reads at ``path`` (a file, or a directory's non-hidden files), or None when the
    directory has subdirectories (partitions: the Spark engine) or no file."""
    from ..io.files import data_files

    files, subdirs = data_files(None, path)
    if subdirs or not files:
        return None
    return [f.path for f in files]


def _parquet_shape(path: str):
    """(rows, column names) of a local Parquet source from its footers, or None when it is not one the local
    engine reads (partitioned, unreadable footers, files with different columns)."""
    import pyarrow.parquet as pq

    files = _parquet_files(path)
    if files is None:
        return None
    rows, names = 0, None
    try:
        for f in files:
            meta = pq.read_metadata(f)
            cols = list(meta.schema.to_arrow_schema().names)
            if names is not None and cols != names:
                return None
            names = cols
            rows += meta.num_rows
    except Exception:  # a damaged file: the Spark engine's reader names it
        return None
    return rows, names


# --- headerless CSV/TSV -----------------------------------------------------------------------------------


def read_headerless_local(path: str, columns: list, sep: str, declared: dict | None = None) -> LocalTable:
    """:func:`spark_fr.io.csv.read_csv` of a headerless file as the relational sources call it (``typed``, the
    ``declared`` types), in the driver: the same types (:func:`spark_fr.io.csv_types.column_type`), the same
    values and the same one-line errors (a record with another number of fields, a value that does not fit its
    column, an infinite number), each naming the file, line and column.

    Raises
    ------
    Unsupported
        What the scanner does not reproduce exactly (quotes, escapes, a byte-order mark, numbers Spark parses in
        forms other than plain decimals, decimals beyond a long, integers beyond 2^53 with missing values, year 0).
    """
    from ..io.csv import MISSING_MARKERS

    declared = declared or {}
    with open(path, "rb") as fh:
        raw = fh.read()
    if b'"' in raw or b"\\" in raw or b"\x00" in raw:
        raise Unsupported(f"{path}: quotes or escapes")
    text = raw.decode("utf-8")
    if text.startswith("\ufeff"):
        raise Unsupported(f"{path}: byte-order mark")
    n = len(columns)
    markers = set(MISSING_MARKERS)
    cols = [[] for _ in range(n)]
    lines = []
    for no, line in enumerate(re.split(r"\r\n|\n|\r", text), 1):
        if not line.strip():
            continue
        fields = line.split(sep)
        if len(fields) != n:
            raise InputError(f"{path} line {no}: {field_count_message(n, len(fields), False)}")
        lines.append(no)
        for i, v in enumerate(fields):
            v = v.strip(" ")
            cols[i].append(None if v.lower() in markers else v)
    data, types = {}, {}
    for name, values in zip(columns, cols):
        known = [(no, v) for no, v in zip(lines, values) if v is not None]
        stripped = [v.strip(_SPARK_TRIM) for _, v in known]
        if any(_LOOSE.match(v) for v in stripped):
            raise Unsupported(f"{path}: column '{name}': numbers Spark may parse differently")
        number = [bool(_NUMBER.match(v)) for v in stripped]
        ints, date = [], []
        if all(number):  # integers matter only then, and no number is a date
            integer = _INTEGER.fullmatch
            ints = [int(v) for _, v in known if integer(v)]
        else:
            date = [_iso_date(v) is not None for _, v in known]
        counts = CT.Counts(len(known), sum(number), len(ints), sum(-2 ** 63 <= x < 2 ** 63 for x in ints),
                           sum(len(str(abs(x))) <= CT.DECIMAL_DIGITS for x in ints), sum(date))
        kind, problem = CT.column_type(counts, True, declared.get(name))
        if problem is not None:
            ok = number if problem == CT.NOT_A_NUMBER else date
            no, v = next(kv for kv, good in zip(known, ok) if not good)
            raise InputError(f"{path} line {no}: column '{name}'{CT.problem_text(problem, declared.get(name), v)}")
        if kind in (CT.DOUBLE, CT.BIGINT):
            arr = np.array([np.nan if v is None else float(v.strip(_SPARK_TRIM)) for v in values], dtype=np.float64)
            if kind == CT.DOUBLE and np.isinf(arr).any():
                no, v = next((no, v) for no, v in known if np.isinf(float(v.strip(_SPARK_TRIM))))
                raise InputError(f"{path} line {no}: column '{name}'{infinite_message(v)}")
            if kind == CT.BIGINT:
                if any(abs(x) > _EXACT_INTEGER for x in ints):
                    raise Unsupported(f"{path}: column '{name}': integers beyond 2^53")
                if len(known) == len(values):
                    arr = np.array(ints, dtype=np.int64)
            data[name], types[name] = arr, "long" if kind == CT.BIGINT else "double"
        elif kind == CT.DATE:
            if any(v.startswith("0000") for _, v in known):
                raise Unsupported(f"{path}: column '{name}': year 0")
            data[name] = np.array([None if v is None else _iso_date(v) for v in values], dtype="datetime64[D]")
            types[name] = "date"
        elif kind == CT.STRING:
            data[name], types[name] = np.array(values, dtype=object), "string"
        else:
            raise Unsupported(f"{path}: column '{name}': {kind}")
    return LocalTable(data, types, len(lines))


def _iso_date(v: str):
    if not _DATE.fullmatch(v):
        return None
    try:
        return _dt.date.fromisoformat(v)
    except ValueError:
        return None


# --- Parquet ----------------------------------------------------------------------------------------------


def read_parquet_local(path: str, table_label: str | None = None) -> LocalTable:
    """A local Parquet source as :func:`spark_fr.relational.sources.read_path` reads it (see the notes).

    Parameters
    ----------
    path : str
    table_label : str, optional
        How messages name the table (e.g. ``"schema.yaml: table 'loan' (path)"``; default: the path).

    Raises
    ------
    Unsupported
        Partitioned directories, files with different types, and column types or values the local engine
        does not reproduce exactly.
    InputError
        An unreadable file; an infinite number (named as the Spark engine names it).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..io.parquet import spark_type

    files = _parquet_files(path)
    if files is None:
        raise Unsupported(f"{path}: partitioned or empty Parquet directory")
    schemas = []
    for f in files:
        try:
            schemas.append(pq.read_schema(f))
        except (pa.ArrowException, OSError) as e:
            raise InputError(f"{f}: not a readable Parquet file ({one_line(str(e))})") from None
    deduplicate(schemas[0].names, REFUSE, source=files[0], case_sensitive=False)  # as the Spark engine's reader
    types0 = [(f.name, spark_type(f.type)) for f in schemas[0]]
    for f, s in zip(files, schemas):
        if [(x.name, spark_type(x.type)) for x in s] != types0:
            raise Unsupported(f"{f}: Parquet files with different columns or types")
    try:
        table = pq.read_table(files[0]) if len(files) == 1 else pa.concat_tables(
            [pq.read_table(f, schema=schemas[0]) for f in files])
    except (pa.ArrowException, OSError) as e:  # Spark's reader decides (and names the file if it fails too)
        raise Unsupported(f"{path}: {one_line(str(e))}") from None
    columns, types = {}, {}
    for name, st in types0:
        col = table.column(name)
        if st in ("float", "double") and _has_infinity(col):
            raise InputError(f"{table_label or path}: column '{name}' holds an infinite value; write it as a missing "
                             f"value or drop the row")
        columns[name], types[name] = _arrow_column(col, st, f"{path}: column '{name}'")
    return LocalTable(columns, types, table.num_rows)


def _has_infinity(col) -> bool:
    import pyarrow.compute as pc

    return bool(pc.any(pc.is_inf(col)).as_py())


def _arrow_column(col, st: str, where: str):
    """(numpy array, local type) of one Arrow column whose Spark type is ``st``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if st in ("tinyint", "smallint", "int", "bigint"):
        wide = col.cast(pa.int64())
        top = pc.max(pc.abs(wide)).as_py() if col.null_count < len(col) else 0
        if top is not None and top > _EXACT_INTEGER:
            raise Unsupported(f"{where}: integers beyond 2^53")
        if col.null_count == 0:
            return wide.to_numpy(), "long"
        return wide.cast(pa.float64()).to_numpy(zero_copy_only=False), "long"
    if st in ("float", "double"):
        x = col.cast(pa.float64()).to_numpy(zero_copy_only=False)
        valid = ~np.asarray(col.is_null().to_numpy(zero_copy_only=False), bool)
        if not np.isfinite(x[valid]).all():
            raise Unsupported(f"{where}: NaN or infinite numbers")
        return x, "double"
    if st == "string":
        return _strings(col), "string"
    if st == "boolean":
        b = col.to_numpy(zero_copy_only=False)
        out = np.full(len(b), None, dtype=object)
        known = ~pd.isna(b)
        out[known] = np.where(b[known].astype(bool), "true", "false")
        return out, "boolean"
    if st == "date":
        days = col.cast(pa.date32()).cast(pa.int32()).to_numpy(zero_copy_only=False)
        out = np.full(len(col), np.datetime64("NaT"), dtype="datetime64[D]")
        valid = ~np.asarray(col.is_null().to_numpy(zero_copy_only=False), bool)
        out[valid] = np.asarray(days, dtype=np.float64)[valid].astype(np.int64).astype("datetime64[D]")
        return out, "date"
    raise Unsupported(f"{where}: type {st}")


def _strings(col) -> np.ndarray:
    """An Arrow string column as an object array (None for null); a dictionary column through its
    dictionary, so that rows share their values' Python strings."""
    import pyarrow as pa

    if pa.types.is_dictionary(col.type):
        col = col.unify_dictionaries() if hasattr(col, "unify_dictionaries") else col
        chunks = col.chunks
        if not chunks:
            return np.array([], dtype=object)
        values = chunks[0].dictionary.cast(pa.string()).to_numpy(zero_copy_only=False)
        indices = pa.chunked_array([c.indices for c in chunks]).cast(pa.int64())
        idx = indices.to_numpy(zero_copy_only=False)
        valid = ~np.asarray(indices.is_null().to_numpy(zero_copy_only=False), bool)
        out = np.full(len(idx), None, dtype=object)
        out[valid] = values[np.asarray(idx[valid], dtype=np.int64)]
        return out
    return np.asarray(col.cast(pa.string()).to_numpy(zero_copy_only=False), dtype=object)


# --- all tables -------------------------------------------------------------------------------------------


def load_local_tables(schema) -> dict:
    """{table: LocalTable} for a schema whose sources the local engine reads (else :class:`Unsupported`)."""
    from .sources import declared_types, format_of

    out = {}
    for name, spec in schema.tables.items():
        src = spec.source
        if src.kind != "path" or "://" in src.path:
            raise Unsupported(f"table '{name}': source not supported locally")
        if not os.path.exists(src.path):
            raise InputError(f"{schema.origin}: table '{name}': input not found: {src.path}")
        fmt = format_of(src.path, src.format)
        if fmt in ("csv", "tsv") and src.columns:
            sep = src.separator or ("\t" if fmt == "tsv" else ",")
            out[name] = read_headerless_local(src.path, list(src.columns), sep, declared_types(schema, name))
        elif fmt == "parquet":
            out[name] = read_parquet_local(src.path, f"{schema.origin}: table '{name}' ({src.path})")
        else:
            raise Unsupported(f"table '{name}': format {fmt}")
        if spec.generated_key and spec.key not in out[name].columns:
            raise Unsupported(f"table '{name}': generated key")
    return out


def spark_types(types: dict):
    """A stand-in with ``.schema.fields`` for :func:`spark_fr.relational.checks.column_kinds` (pure Python
    type objects: no JVM)."""
    from pyspark.sql import types as T

    by = {"double": T.DoubleType(), "long": T.LongType(), "date": T.DateType(), "string": T.StringType(),
          "boolean": T.BooleanType()}

    class _Frame:
        schema = T.StructType([T.StructField(c, by[t]) for c, t in types.items()])

    return _Frame()
