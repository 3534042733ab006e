"""Reading Arrow-backed sources in the driver for the local engine: Parquet files, Delta tables, Spark DataFrames.

Sketch
------
Each source becomes one Arrow table whose columns carry the Spark type the Spark engine reads them as; one
conversion (:func:`arrow_table`) turns it into a :class:`~spark_fr.relational.local_table.LocalTable`:
integers of at most 2^53 in magnitude (exact as doubles), float and double without NaN, strings
(dictionary-encoded ones decoded through their dictionary, without a Python string per row), booleans and
dates are read; an infinite number is the Spark engine's error; anything else (timestamps, decimals, binary,
nested types, NaN) is :class:`Unsupported` and the Spark engine runs.

* **Parquet** (a file, or a directory of files without partition subdirectories, all with the same Spark
  types): pyarrow reads the files in path order; each column's Spark type is
  :func:`spark_fr.io.parquet.spark_type`'s.
* **Delta** (by path, through the ``deltalake`` package, with :mod:`spark_fr.io.delta_read`'s checks): the
  latest snapshot. A table without reader features has its data files (the snapshot's add actions, never the
  directory) read by pyarrow in path order, conformed to the table's logical schema (a column added later is
  missing in older files), partition values from the log; a table with column mapping or deletion vectors is
  read by ``deltalake``'s query engine (row order unknown: no generated key there). A reader feature
  ``deltalake`` cannot read, or the package missing, is :class:`Unsupported` (Spark's Delta reader may read it).
* **DataFrames** (given by the caller, classic or Spark Connect): collected as Arrow (``toArrow``), in the
  frame's order (partition by partition), typed by the frame's schema. A DataFrame that is exactly
  ``spark.read.parquet(path)`` of a local path (:func:`parquet_scan_path`: a classic session's plan is the bare
  file relation, no option, no schema of the caller's, no projection or filter) is read from its files as that
  path in a schema is (the same values: Spark would read the same files), without a Spark job; when its table
  needs a generated key, only if it is one file (Spark orders a directory's file splits by size, not by path).

Rows come in the order :mod:`spark_fr.relational.row_keys` numbers them for a generated key: files sorted by
path, each file's rows in order; a DataFrame's rows in its partitions' order.
"""
from __future__ import annotations

import os
from urllib.parse import unquote

import numpy as np
import pandas as pd

from ..data.names import REFUSE, deduplicate
from ..errors import InputError, one_line
from .local_table import EXACT_INTEGER, LocalTable, Unsupported

#: Spark types the local engine reads from Arrow
READABLE = ("tinyint", "smallint", "int", "bigint", "float", "double", "string", "boolean", "date")


# --- one conversion -----------------------------------------------------------------------------------------


def arrow_table(table, types: dict, label: str, where: str) -> LocalTable:
    """A :class:`LocalTable` of an Arrow table whose columns read in Spark as ``types`` ({column: Spark type}).

    Parameters
    ----------
    table : pyarrow.Table
    types : dict
    label : str
        How an infinite value's message names the table (the Spark engine's words).
    where : str
        How :class:`Unsupported` names the source.
    """
    columns, out_types, dictionaries = {}, {}, {}
    for name, st in types.items():
        col = table.column(name)
        if st in ("float", "double") and _has_infinity(col):
            raise InputError(f"{label}: column '{name}' holds an infinite value; write it as a missing "
                             f"value or drop the row")
        if st == "string":
            dictionaries[name] = string_dictionary(col)
            columns[name], out_types[name] = dictionaries[name][1][dictionaries[name][0]], "string"
        else:
            columns[name], out_types[name] = arrow_column(col, st, f"{where}: column '{name}'")
    return LocalTable(columns, out_types, table.num_rows, dictionaries)


def _has_infinity(col) -> bool:
    import pyarrow.compute as pc

    return bool(pc.any(pc.is_inf(col)).as_py())


def arrow_column(col, st: str, where: str):
    """(numpy array, local type) of one Arrow column whose Spark type is ``st``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if st in ("tinyint", "smallint", "int", "bigint"):
        wide = col.cast(pa.int64())
        top = pc.max(pc.abs(wide)).as_py() if col.null_count < len(col) else 0
        if top is not None and top > EXACT_INTEGER:
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
        return strings(col), "string"
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


def strings(col) -> np.ndarray:
    """An Arrow string column as an object array (None for null), through its dictionary (rows share their
    values' Python strings)."""
    indices, dictionary = string_dictionary(col)
    return dictionary[indices]


def string_dictionary(col) -> tuple:
    """(indices, dictionary) of an Arrow string column: ``dictionary`` an object array of its distinct values
    and a last entry None, ``indices`` int64 with the null rows at that entry; a dictionary column's own
    dictionary, else pyarrow's dictionary encoding (no Python string per row)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(col, pa.Array):
        col = pa.chunked_array([col])
    if not pa.types.is_dictionary(col.type):
        col = pc.dictionary_encode(col.cast(pa.string()))
    col = col.unify_dictionaries() if hasattr(col, "unify_dictionaries") else col
    chunks = col.chunks
    if not chunks:
        return np.zeros(0, np.int64), np.array([None], dtype=object)
    values = chunks[0].dictionary.cast(pa.string()).to_numpy(zero_copy_only=False)
    dictionary = np.append(np.asarray(values, dtype=object), None).astype(object)
    indices = pa.chunked_array([c.indices for c in chunks]).cast(pa.int64())
    idx = indices.fill_null(len(values)).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    return idx, dictionary


# --- Parquet ------------------------------------------------------------------------------------------------


def parquet_files(path: str) -> list | None:
    """The Parquet files Spark reads at ``path`` (a file, or a directory's non-hidden files, sorted by path), or
    None when the directory has subdirectories (partitions: the Spark engine) or no file."""
    from ..io.files import data_files

    files, subdirs = data_files(None, path)
    if subdirs or not files:
        return None
    return [f.path for f in files]


def parquet_shape(files: list):
    """(rows, column names) of Parquet files from their footers, or None when they are not ones the local engine
    reads (unreadable footers, files with different columns)."""
    import pyarrow.parquet as pq

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

    files = parquet_files(path)
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
    return arrow_table(table, dict(types0), table_label or path, path)


# --- Delta --------------------------------------------------------------------------------------------------


class DeltaSnapshot:
    """The latest snapshot of a local Delta table as the local engine reads it: its data files (absolute paths,
    sorted), their partition values and rows, the logical Arrow schema, and whether the files can be read
    directly (no reader feature that needs ``deltalake``'s query engine)."""

    def __init__(self, path: str):
        try:
            import deltalake  # noqa: F401
        except ImportError:
            raise Unsupported(f"{path}: the deltalake package is not installed") from None
        import pyarrow as pa

        from ..io import delta_read as D
        from ..io.parquet import spark_type

        try:
            self.table = D.open_deltalake(path)
            features = D.reader_features(self.table, path)
        except InputError as e:  # Spark's Delta reader may read it
            raise Unsupported(str(e)) from None
        self.path = path
        self.schema = D._arrow_schema(self.table)
        self.types = {f.name: spark_type(f.type) for f in self.schema}
        self.partitions = list(self.table.metadata().partition_columns or [])
        actions = pa.table(self.table.get_add_actions(flatten=True))
        rel = actions.column("path").to_pylist()
        self.direct = not (features & D.ENGINE_FEATURES) and D._key_value_layout(rel, self.partitions)
        rows = actions.column("num_records").to_pylist() if "num_records" in actions.column_names else [None] * len(rel)
        values = {p: actions.column(f"partition.{p}").to_pylist() if f"partition.{p}" in actions.column_names
                  else [None] * len(rel) for p in self.partitions}
        files = [(os.path.normpath(os.path.join(path, unquote(r))), n, {p: values[p][i] for p in self.partitions})
                 for i, (r, n) in enumerate(zip(rel, rows))]
        self.files = sorted(files, key=lambda f: f[0])

    def rows(self) -> int:
        """Rows of the snapshot (from the log's statistics, else the files' footers; deleted rows included)."""
        import pyarrow.parquet as pq

        return sum(n if n is not None else pq.read_metadata(f).num_rows for f, n, _ in self.files)

    def read(self, ordered: bool):
        """The snapshot as one Arrow table (``ordered``: in the order generated keys number it, else
        :class:`Unsupported` when only the query engine reads it)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        from ..io import delta_read as D

        if not self.direct:
            if ordered:
                raise Unsupported(f"{self.path}: a generated key on a Delta table read by deltalake's query engine")
            return D.query_on_driver(self.table, self.path, "SELECT * FROM t")
        parts = []
        for f, _, values in self.files:
            try:
                data = pq.read_table(f)
            except (pa.ArrowException, OSError) as e:
                raise Unsupported(f"{f}: {one_line(str(e))}") from None
            cols = []
            for field in self.schema:
                if field.name in values:
                    cols.append(pa.array([values[field.name]] * data.num_rows).cast(field.type))
                elif field.name in data.column_names:
                    cols.append(data.column(field.name).cast(field.type))
                else:  # written before the column was added
                    cols.append(pa.nulls(data.num_rows, field.type))
            parts.append(pa.Table.from_arrays(cols, schema=self.schema))
        return pa.concat_tables(parts) if parts else self.schema.empty_table()


def read_delta_local(path: str, label: str, generated_key: str | None = None) -> LocalTable:
    """A local Delta table as :func:`spark_fr.io.delta_read.read_delta` reads it (see the notes);
    ``generated_key``: the key column a generated key will add when the table has no such column (its rows are
    then read in the order it numbers them).

    Raises
    ------
    Unsupported
        No ``deltalake``, reader features it cannot read, column types or values the local engine does not
        reproduce exactly.
    InputError
        A table without rows (the Spark engine's message).
    """
    snap = DeltaSnapshot(path)
    if not snap.files:
        raise InputError(f"{path}: the Delta table has no rows")
    bad = [f"{c} ({t})" for c, t in snap.types.items() if t not in READABLE]
    if bad:
        raise Unsupported(f"{path}: column {bad[0]}")
    ordered = generated_key is not None and generated_key not in snap.types
    return arrow_table(snap.read(ordered), snap.types, label, path)


# --- DataFrames ---------------------------------------------------------------------------------------------


def frame_types(df) -> dict:
    """{column: Spark type} of a DataFrame (no job)."""
    return {f.name: f.dataType.simpleString() for f in df.schema.fields}


def parquet_scan_path(df, numbered: bool = False) -> str | None:
    """The local path a DataFrame reads when it is exactly ``spark.read.parquet(path)`` on a classic session,
    else None.

    The analyzed plan must be one file relation (``LogicalRelation`` of a ``HadoopFsRelation``) in Parquet
    format, without partition columns, without any option but the path, over one ``file:`` root path, and its
    columns must be the files' own (name and Spark type of the first file: a caller's ``.schema(...)`` is not
    taken). Spark Connect frames are never taken: their server may see another file system than the driver.
    ``numbered`` (the table gets a generated key: its rows are numbered in the frame's order): only one file,
    whose rows Spark gives in file order; a directory's file splits come largest first, not in path order.
    """
    if type(df).__module__.startswith("pyspark.sql.connect"):
        return None
    try:
        plan = df._jdf.queryExecution().analyzed()
        if plan.getClass().getSimpleName() != "LogicalRelation":
            return None
        rel = plan.relation()
        if (rel.getClass().getSimpleName() != "HadoopFsRelation"
                or rel.fileFormat().getClass().getSimpleName() != "ParquetFileFormat"
                or not rel.partitionSchema().isEmpty()):
            return None
        options = rel.options()
        if options.size() != 1 or not options.contains("path"):
            return None
        roots = rel.location().rootPaths()
        if roots.size() != 1:
            return None
        root = roots.head().toString()
    except Exception:  # another plan shape, or a pyspark without these internals: collect it
        return None
    if not root.startswith("file:"):
        return None
    path = unquote(root[len("file:"):])
    path = "/" + path.lstrip("/")
    files = parquet_files(path) if os.path.exists(path) else None
    if not files or (numbered and len(files) > 1):
        return None
    import pyarrow.parquet as pq

    from ..io.parquet import spark_type

    try:
        own = {f.name: spark_type(f.type) for f in pq.read_schema(files[0])}
    except Exception:  # Spark's reader names the file if it cannot read it either
        return None
    return path if own == frame_types(df) and list(own) == df.columns else None


def read_frame_local(df, label: str) -> LocalTable:
    """A DataFrame collected as Arrow (one job), in its partitions' order.

    Raises
    ------
    Unsupported
        A column type the local engine does not read (checked before collecting), a repeated column name,
        values it does not reproduce exactly.
    """
    import pyarrow as pa

    from ..data.source import FrameSource

    types = frame_types(df)
    if len(types) < len(df.schema.fields):
        raise Unsupported(f"{label}: a column name given twice")
    bad = [f"{c} ({t})" for c, t in types.items() if t not in READABLE]
    if bad:
        raise Unsupported(f"{label}: column {bad[0]}")
    batches = FrameSource(df).driver_batches()
    table = pa.Table.from_batches(batches) if batches else None
    if table is None:
        return LocalTable({c: np.array([], dtype=object) if t in ("string", "boolean") else
                           np.array([], dtype="datetime64[D]") if t == "date" else np.array([], dtype=np.float64)
                           for c, t in types.items()},
                          {c: {"string": "string", "boolean": "boolean", "date": "date", "float": "double",
                               "double": "double"}.get(t, "long") for c, t in types.items()}, 0)
    return arrow_table(table, types, label, label)
