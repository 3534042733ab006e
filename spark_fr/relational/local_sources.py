"""The local engine's sources: which engine ``engine='auto'`` picks (and why), and reading every table in the driver.

Sketch
------
**Engine choice** (:func:`choose_engine`, for ``engine='auto'``; its reason goes into the run's record). The local
engine takes a schema when every table comes from a source it reads and all of them together fit the driver:

* sources: a DataFrame given by the caller (classic or Spark Connect; collected as Arrow, or read from its
  files when it is a plain Parquet scan), or a local path holding CSV/TSV files (with a header line, or
  headerless with ``columns:``), Parquet files (a file or a directory without partition subdirectories) or a
  Delta table (read through ``deltalake``). Catalog tables, JSON, nested children (``explode``) and remote
  paths (``s3://``, ``dbfs:/``) go to Spark;
* size: the cells (rows x columns) of the sources, from Parquet footers, the Delta log, a CSV file's size over
  the length of its first lines, a DataFrame's size estimate from its plan's statistics (no job:
  :data:`CELLS_PER_PLAN_BYTE`; its count, one small job, only when the plan has no estimate), below
  :data:`LOCAL_MAX_CELLS` (beyond it a cluster's executors beat one driver process), and the memory they need
  within half of the memory available to the driver now (``MemAvailable``): :data:`BYTES_PER_CELL` per cell, plus
  :data:`BYTES_PER_CSV_BYTE` per byte of CSV text (the text is held while it is typed). Measured peaks of the
  whole process are in the constants' notes.

The choice reads no data: a source that turns out to hold what the local engine cannot reproduce exactly
(:class:`~spark_fr.relational.local_table.Unsupported`: a timestamp, NaN, an escaped quote, ...) sends the run to
Spark when it is read (:func:`spark_fr.relational.local.try_local`).

**Reading** (:func:`load_local_tables`): CSV/TSV by :mod:`spark_fr.relational.local_csv`, Parquet, Delta and
DataFrames by :mod:`spark_fr.relational.local_arrow`; a generated key (a table without one) numbers the rows in
the order read (:mod:`spark_fr.relational.row_keys`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from ..errors import InputError
from ..io.locations import is_local
from .local_table import LocalTable, Unsupported

#: total cells (rows x columns) of the sources above which ``engine='auto'`` leaves the work to Spark
LOCAL_MAX_CELLS = 300_000_000
#: driver memory the local engine needs per source cell (measured peaks of the whole process: 58 bytes at
#: 4 x 10^7 cells, 50 at 1.2 x 10^8, Parquet sources)
BYTES_PER_CELL = 64
#: and per byte of CSV/TSV text besides (the file's bytes and pyarrow's text columns while they are typed).
#: Measured at 10^7 fact rows (whole process): 2.36 GB for headered CSV (285 MB of text, 5.6 x 10^7 estimated
#: cells: 4.1 GB by this rule), 2.60 GB for the same tables as Delta (3.1 GB by the rule)
BYTES_PER_CSV_BYTE = 3
#: tables read side by side
READ_THREADS = 4
#: bytes of a CSV file read to estimate its rows
SAMPLE_BYTES = 1 << 20
#: cells per byte of a DataFrame plan's size estimate: a Parquet scan's estimate is its files' size, about an
#: eighth of a cell per byte of 8-byte values, times the files' compression (about 4x here): half a cell per byte
CELLS_PER_PLAN_BYTE = 0.5


@dataclass(frozen=True)
class EngineChoice:
    """Which engine generates the features, and why (one line, recorded in the run's record)."""

    engine: str
    reason: str


@dataclass
class _Estimate:
    cells: float = 0.0
    text_bytes: float = 0.0


def choose_engine(schema, tables: dict | None = None, *, max_cells: int = LOCAL_MAX_CELLS,
                  memory: float | None = None) -> EngineChoice:
    """The engine ``engine='auto'`` runs (see the module's notes).

    Parameters
    ----------
    schema : RelationalSchema
    tables : dict, optional
        {table: DataFrame} given by the caller (their rows are counted: one small job each).
    max_cells : int
        The cell budget.
    memory : float, optional
        Bytes of memory available (default: the machine's ``MemAvailable``).

    Returns
    -------
    EngineChoice
    """
    tables = tables or {}
    est = _Estimate()
    for name, spec in schema.tables.items():
        why = _add_table(est, spec, tables.get(name))
        if why is not None:
            return EngineChoice("spark", f"table '{name}': {why}")
    if est.cells >= max_cells:
        return EngineChoice("spark", f"{est.cells:.3g} cells, above the local engine's {max_cells:.3g} (Spark scales "
                                     f"with executors)")
    need = est.cells * BYTES_PER_CELL + est.text_bytes * BYTES_PER_CSV_BYTE
    available = _available_memory() if memory is None else memory
    if need > available / 2:
        return EngineChoice("spark", f"about {need / 2 ** 30:.1f} GB needed, more than half of the "
                                     f"{available / 2 ** 30:.1f} GB available")
    return EngineChoice("local", f"{est.cells:.3g} cells, about {need / 2 ** 30:.2f} GB of the "
                                 f"{available / 2 ** 30:.1f} GB available: the driver")


def local_possible(schema, tables: dict | None = None, **kw) -> bool:
    """Whether ``engine='auto'`` generates in the driver (:func:`choose_engine`)."""
    return choose_engine(schema, tables, **kw).engine == "local"


def _add_table(est: _Estimate, spec, frame) -> str | None:
    """Add one table's size to ``est``; the reason it goes to Spark, or None."""
    if frame is not None:
        return _add_frame(est, frame)
    src = spec.source
    if src.kind != "path":
        return {"catalog": "a catalog table", "explode": "nested elements (explode)"}.get(src.kind, "no source")
    if not is_local(src.path):
        return f"a remote path ({src.path})"
    if not os.path.exists(src.path):
        return f"input not found: {src.path}"
    fmt = _format(src)
    if fmt in ("csv", "tsv"):
        return _add_csv(est, src, fmt)
    if fmt == "parquet":
        from .local_arrow import parquet_files, parquet_shape

        files = parquet_files(src.path)
        shape = parquet_shape(files) if files else None
        if shape is None:
            return "Parquet partition directories, or unreadable or differing files"
        est.cells += shape[0] * (len(shape[1]) + (spec.generated_key and spec.key not in shape[1]))
        return None
    if fmt == "delta":
        from .local_arrow import DeltaSnapshot

        try:
            snap = DeltaSnapshot(src.path)
        except Unsupported as e:
            return str(e)
        if spec.generated_key and spec.key not in snap.types and not snap.direct:
            return "a generated key on a Delta table with column mapping or deletion vectors"
        est.cells += snap.rows() * (len(snap.types) + 1)
        return None
    return f"format {fmt}"


def _add_frame(est: _Estimate, df) -> str | None:
    from ..data.source import FrameSource
    from .local_arrow import READABLE, frame_types

    types = frame_types(df)
    bad = [f"{c} ({t})" for c, t in types.items() if t not in READABLE]
    if bad:
        return f"DataFrame column {bad[0]}"
    size = FrameSource(df).size_estimate()
    est.cells += size * CELLS_PER_PLAN_BYTE if size is not None else df.count() * (len(types) + 1)
    return None


def _add_csv(est: _Estimate, src, fmt: str) -> str | None:
    from ..io.csv import csv_files

    try:
        files = csv_files(None, src.path, allow_empty=src.columns is not None)
    except InputError as e:  # the Spark engine's reader says it
        return str(e)
    sep = src.separator or ("\t" if fmt == "tsv" else ",")
    for f in files:
        low = f.path.lower()
        with open(f.path, "rb") as fh:
            head = fh.read(SAMPLE_BYTES)
        if low.endswith((".gz", ".bz2")):
            size = f.size * 5  # what text compresses by, about
            import bz2
            import gzip

            try:
                head = (gzip if low.endswith(".gz") else bz2).open(f.path).read(SAMPLE_BYTES)
            except (OSError, EOFError):
                return f"{f.path}: cannot be decompressed"
        else:
            size = f.size
        lines = max(head.count(b"\n") + head.count(b"\r") - head.count(b"\r\n"), 1)
        width = len(src.columns) if src.columns else head.split(b"\n", 1)[0].count(sep.encode()) + 1
        est.cells += size / max(len(head), 1) * lines * (width + 1)
        est.text_bytes += size
    return None


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


# --- all tables -------------------------------------------------------------------------------------------


def _frame_table(df, label: str, numbered: bool) -> LocalTable:
    """A caller's DataFrame as a local table: read from its Parquet files when it is a plain scan of them
    (:func:`~spark_fr.relational.local_arrow.parquet_scan_path`: no Spark job), else collected as Arrow."""
    from .local_arrow import parquet_scan_path, read_frame_local, read_parquet_local

    scan = parquet_scan_path(df, numbered=numbered)
    if scan is not None:
        try:
            return read_parquet_local(scan, f"{label} (a DataFrame reading {scan})")
        except Unsupported:
            pass  # the frame decides, collected
    return read_frame_local(df, f"{label} (a DataFrame)")


def load_local_tables(schema, tables: dict | None = None) -> dict:
    """{table: LocalTable} of every table of ``schema`` (DataFrames in ``tables`` replace their sources), a
    generated key numbering the rows as read (else :class:`Unsupported`)."""
    from .local_arrow import read_delta_local, read_parquet_local
    from .local_csv import read_csv_local
    from .sources import declared_types, format_of

    from concurrent.futures import ThreadPoolExecutor

    from .row_keys import local_positions

    tables = tables or {}

    def load(name):
        spec = schema.tables[name]
        src = spec.source
        label = f"{schema.origin}: table '{name}'"
        if name in tables:
            table = _frame_table(tables[name], label, spec.generated_key)
        elif src.kind != "path" or not is_local(src.path):
            raise Unsupported(f"table '{name}': source not supported locally")
        elif not os.path.exists(src.path):
            raise InputError(f"{label}: input not found: {src.path}")
        else:
            fmt = format_of(src.path, src.format)
            label = f"{label} ({src.path})"
            if fmt in ("csv", "tsv"):
                sep = src.separator or ("\t" if fmt == "tsv" else ",")
                table = read_csv_local(src.path, sep, list(src.columns) if src.columns else None,
                                       declared_types(schema, name))
            elif fmt == "parquet":
                table = read_parquet_local(src.path, label)
            elif fmt == "delta":
                table = read_delta_local(src.path, label, spec.key if spec.generated_key else None)
            else:
                raise Unsupported(f"table '{name}': format {fmt}")
        if spec.generated_key and spec.key not in table.columns:
            table.columns[spec.key], table.types[spec.key] = local_positions(table.rows), "long"
        return table

    # side by side: pyarrow's reading and casting, and a DataFrame's collection, leave the interpreter free
    with ThreadPoolExecutor(max_workers=READ_THREADS) as pool:
        jobs = {name: pool.submit(load, name) for name in schema.tables}
        return {name: job.result() for name, job in jobs.items()}  # the first failure in schema order


def spark_types(types: dict):
    """A stand-in with ``.schema.fields`` for :func:`spark_fr.relational.checks.column_kinds` (pure Python
    type objects: no JVM)."""
    from pyspark.sql import types as T

    by = {"double": T.DoubleType(), "long": T.LongType(), "date": T.DateType(), "string": T.StringType(),
          "boolean": T.BooleanType()}

    class _Frame:
        schema = T.StructType([T.StructField(c, by[t]) for c, t in types.items()])

    return _Frame()


__all__ = ["BYTES_PER_CELL", "BYTES_PER_CSV_BYTE", "EngineChoice", "LOCAL_MAX_CELLS", "choose_engine",
           "load_local_tables", "local_possible", "spark_types"]
