"""Reading Delta tables (by path) and catalog tables: the logical columns of one pinned snapshot, never a misread.

Sketch
------
* **Which reader**: the one rule of :func:`spark_fr.io.delta_reader.delta_reader`. A session with Delta Lake
  reads through Spark's own Delta reader, ``spark.read.format("delta")``, which applies everything a table's
  protocol asks for (column mapping, deletion vectors, ...).
* **Without Delta in the session**, the ``deltalake`` package reads the log in this process:

  - a table with **no reader feature** (and data files under ``key=value`` partition directories, as every
    writer without column mapping lays them out): Spark reads exactly the snapshot's data files
    (``DeltaTable.file_uris()``, never the directory, which also holds removed files), with the table's
    logical schema given to Spark, so files written before a column was added read it as missing;
  - **column mapping** (``delta.columnMapping.mode = name``: Databricks after a rename or a drop) and/or
    **deletion vectors**: read on the driver by ``deltalake``'s query engine (``QueryBuilder``: DataFusion over
    delta-kernel, which maps physical to logical names and drops deleted rows), then handed to Spark. Measured
    (deltalake 1.6.6): ``DeltaTable.to_pyarrow_dataset()`` is **not** usable here: on a column-mapped table of
    reader version 2 it returns the logical names with every value null, and it refuses deletion vectors.
    Tables larger than :data:`DRIVER_READ_MB` of data files are refused with a line saying to install
    ``delta-spark``;
  - any other reader feature, column mapping by id, or a reader version above 3: one line naming the
    features and what to install (``delta-spark``; or run on Databricks).
* **The snapshot is pinned.** The version is resolved first (``--version-as-of N``, ``--timestamp-as-of T``: the
  last version committed at or before T, else the latest), and that version is read, so the rows and the
  recorded version agree even while other jobs commit. The run record's ``input_fingerprint`` holds it.
* **Catalog tables** (``--input-table [catalog.]db.table``): ``spark.table`` on the backquoted parts
  (:mod:`spark_fr.io.tables`); Delta tables of the catalog pin their version the same way (``DESCRIBE
  HISTORY``); time travel on a table that is not Delta is an error.
* ``--where`` is parsed before anything is read, checked against the schema and bound to the session's time
  zone (:mod:`spark_fr.io.where`), and applied as a Spark Column, or as SQL generated from the checked tree for
  ``deltalake``'s engine (files of other partitions are then not read; a filter nesting deeper than
  :data:`ENGINE_SQL_DEPTH` is applied by Spark after the engine's read instead).
* **Time zones**: one rule for both readers, Spark's (:mod:`spark_fr.io.delta_times`): a time without a zone, in
  a literal or a timestamp partition value of the log, is read in the session's time zone.
* **Paths with a percent-escape** (``/data/p%41q``): ``deltalake`` 1.6.6 decodes ``%41`` as ``A`` when it reads the
  log but not when it writes, and canonicalizes symbolic links, so it can neither read nor write such a local
  table (it would read another path). Decision: ``deltalake`` refuses them (:func:`deltalake_refuses`, one line);
  Spark's Delta reader and writer take the path literally and serve them (the version pinned by ``DESCRIBE
  HISTORY``).
* ``--timestamp-as-of`` before the first commit of the log is one line naming the table and that commit's time,
  for a path as for a catalog table. Decision: ``--timestamp-as-of`` without an offset stays UTC (a commit time;
  documented so), unlike ``--where`` literals.
"""
from __future__ import annotations

import datetime as _dt
import logging
import re
from dataclasses import dataclass, field

from ..data.columns import qcol
from ..data.schema import Dataset, columns_of_dataframe
from ..errors import InputError, one_line
from . import delta_times, tables
from . import where as W
from .delta_reader import (ENGINE_FEATURES, INSTALL_DELTA, delta_reader, deltalake_refuses, reader_features,
                           session_of)

log = logging.getLogger(__name__)

#: largest table (MB of data files in the snapshot) read on the driver by ``deltalake``'s query engine
DRIVER_READ_MB = 2048
#: the deepest SQL (parentheses) a filter is handed to ``deltalake``'s engine with (DataFusion's parser stops at 50
#: and misreads deep NOT chains from about 25): deeper filters are applied by Spark after the engine's read
ENGINE_SQL_DEPTH = 16


@dataclass
class Snapshot:
    """What a Delta read pinned: the source, the version read, and how it was read."""

    source: str
    version: int | None
    reader: str
    features: list = field(default_factory=list)
    timestamp: str | None = None

    def record(self) -> dict:
        out = {"delta_version": self.version, "reader": self.reader}
        if self.features:
            out["reader_features"] = sorted(self.features)
        if self.timestamp:
            out["timestamp"] = self.timestamp
        return out


# ----- time travel ------------------------------------------------------------------------------------------
def parse_timestamp(text) -> _dt.datetime:
    """``--timestamp-as-of``: an ISO date or date-time (UTC unless it carries an offset)."""
    s = str(text).strip()
    try:
        value = _dt.datetime.fromisoformat(s.replace(" ", "T", 1) if len(s) > 10 else s)
    except ValueError:
        raise InputError(f"--timestamp-as-of must be an ISO date or date-time (2026-11-26 or "
                         f"2026-11-26T06:00:00Z), "
                         f"not '{text}'") from None
    return value if value.tzinfo else value.replace(tzinfo=_dt.timezone.utc)


def check_time_travel(version, timestamp) -> None:
    if version is not None and timestamp is not None:
        raise InputError("give --version-as-of or --timestamp-as-of, not both")


def shown_time(t) -> str:
    """A commit time as messages show it: UTC, to the millisecond (``2026-11-26T06:00:00.123Z``)."""
    if isinstance(t, (int, float)):  # deltalake's history: milliseconds since 1970
        t = _dt.datetime.fromtimestamp(t / 1000, _dt.timezone.utc)
    return _aware(t).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _before_first_commit(what: str, timestamp, first) -> InputError:
    return InputError(f"{what}: no version at --timestamp-as-of {timestamp} (the first commit is at "
                      f"{shown_time(first)})")


# ----- by path ----------------------------------------------------------------------------------------------
def open_deltalake(path: str, version=None, timestamp=None, what: str | None = None):
    """The ``deltalake`` table at ``path`` at ``version``, or the last version at or before ``timestamp``, or the
    latest; one-line errors naming ``what`` (default: the path): a path ``deltalake`` refuses, no readable table
    there, a version that does not exist, a time before the first commit."""
    from deltalake import DeltaTable

    what = what or path
    refused = deltalake_refuses(path)
    if refused:
        raise InputError(f"{what}: the path {refused}")
    try:
        dt = DeltaTable(path)
    except Exception as err:  # deltalake's own error types
        raise InputError(f"{what}: not a readable Delta table ({one_line(err)})") from None
    latest = dt.version()
    if version is not None:
        if version > latest:
            raise InputError(f"{what}: --version-as-of {version} does not exist (the latest version is {latest})")
        try:
            dt.load_as_version(version)
        except Exception as err:
            raise InputError(f"{what}: --version-as-of {version} cannot be read ({one_line(err)}; its log may have "
                             f"been cleaned up)") from None
    elif timestamp is not None:
        at = parse_timestamp(timestamp)
        first = _first_commit_ms(dt)
        if first is not None and at < _dt.datetime.fromtimestamp(first / 1000, _dt.timezone.utc):
            raise _before_first_commit(what, timestamp, first)
        try:
            dt.load_as_version(at)
        except Exception as err:
            raise InputError(f"{what}: no version at --timestamp-as-of {timestamp} ({one_line(err)})") from None
    return dt


def _first_commit_ms(dt):
    """The time of the oldest commit the table's log holds (milliseconds since 1970; None if unknown)."""
    try:
        commits = [c for c in dt.history() if c.get("timestamp") is not None]
    except Exception:  # deltalake's error types: a log it cannot list
        return None
    return min(commits, key=lambda c: int(c.get("version", 0)))["timestamp"] if commits else None


def read_delta(spark, path: str, features_col: str | None = None, *, version=None, timestamp=None,
               where=None) -> Dataset:
    """Read one snapshot of the Delta table at ``path`` (see the module sketch).

    Parameters
    ----------
    spark : SparkSession
    path : str
    features_col : str, optional
    version : int, optional
    timestamp : str, optional
        ISO date or date-time.
    where : str, optional
        A ``--where`` filter.

    Returns
    -------
    Dataset
        With ``extra['snapshot']`` (:class:`Snapshot`).
    """
    check_time_travel(version, timestamp)
    tree = W.parse_filter(where) if where is not None else None
    if delta_reader(spark) == "spark":
        return _read_with_spark(spark, path, features_col, version, timestamp, tree, where)
    return _read_with_deltalake(spark, path, features_col, version, timestamp, tree, where)


def _read_with_spark(spark, path, features_col, version, timestamp, tree, where) -> Dataset:
    spark = session_of(spark)
    pinned = version
    dt = None
    if deltalake_refuses(path):  # pinned by Spark (DESCRIBE HISTORY), never by deltalake at another path
        pinned = _history_version(spark, f"delta.{tables.quote_identifier(path)}", path, version, timestamp)
    else:
        try:  # the version to read, pinned before reading (deltalake reads the log here; Spark's answer otherwise)
            dt = open_deltalake(path, version, timestamp)
            pinned = dt.version()
        except InputError as err:
            if "does not exist" in str(err) or "no version at" in str(err):
                raise
    reader = spark.read.format("delta")
    if pinned is not None:
        reader = reader.option("versionAsOf", int(pinned))
    elif timestamp is not None:
        at = parse_timestamp(timestamp).astimezone(_dt.timezone.utc)  # with its zone: not read in the session's
        reader = reader.option("timestampAsOf", at.strftime("%Y-%m-%d %H:%M:%S.%fZ"))
    try:
        df = reader.load(path)
        df.schema  # analysis happens here: a missing table, a version that is gone
    except Exception as err:  # AnalysisException and Delta's own errors
        raise InputError(f"{path}: Spark's Delta reader cannot read it ({one_line(err)})") from None
    features = sorted(set(getattr(dt.protocol(), "reader_features", None) or [])) if dt is not None else []
    snap = Snapshot(path, pinned, "spark", features, str(timestamp) if timestamp is not None else None)
    return _finish(spark, df, snap, features_col, tree, where, path)


def apply_filter(spark, df, tree, source: str):
    """``df`` filtered by the parsed ``--where`` tree: checked against its columns, bound to the session's time
    zone (:func:`spark_fr.io.delta_times.bound_filter`), applied as a Spark Column."""
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    W.check_filter(tree, types, source)
    return df.filter(W.to_column(delta_times.bound_filter(session_of(spark), tree, types)))


def _finish(spark, df, snap: Snapshot, features_col, tree, where, source) -> Dataset:
    if tree is not None:
        df = apply_filter(spark, df, tree, source)
    return _dataset(df, snap, features_col, where, source)


def _dataset(df, snap: Snapshot, features_col, where, source) -> Dataset:
    ds = Dataset(df, columns_of_dataframe(df, features_col), source)
    ds.extra["snapshot"] = snap
    if where is not None:
        ds.extra["where"] = where
    return ds


def query_on_driver(dt, path: str, sql: str):
    """``sql`` over the table ``dt`` (registered as ``t``) by ``deltalake``'s query engine: a pyarrow Table."""
    import pyarrow as pa
    from deltalake import QueryBuilder

    try:
        return pa.table(QueryBuilder().register("t", dt).execute(sql).read_all())
    except Exception as err:  # DataFusion's and delta-kernel's errors
        raise InputError(f"{path}: deltalake cannot read the Delta table ({one_line(err)}); {INSTALL_DELTA}") from None


def _read_with_deltalake(spark, path, features_col, version, timestamp, tree, where) -> Dataset:
    dt = open_deltalake(path, version, timestamp)
    features = reader_features(dt, path)
    arrow_schema = _arrow_schema(dt)
    from .parquet import spark_type

    types = {f.name: spark_type(f.type) for f in arrow_schema}
    if tree is not None:
        W.check_filter(tree, types, path)
    snap = Snapshot(path, dt.version(), "deltalake", sorted(features),
                    str(timestamp) if timestamp is not None else None)
    actions = _add_actions(dt)
    if not actions["path"]:
        raise InputError(f"{path}: the Delta table has no rows" + (f" at version {snap.version}" if version is not None
                                                                      or timestamp is not None else ""))
    spark = session_of(spark)
    partitions = list(dt.metadata().partition_columns or [])
    times = delta_times.instant_partitions(partitions, types)
    truth = delta_times.partition_truth(spark, dt, times, path) if times else {}
    bound = delta_times.bound_filter(spark, tree, types) if tree is not None else None
    # partition values only in the log (no key=value directories): the engine reads them from there
    needs_engine = bool(features & ENGINE_FEATURES) or not _key_value_layout(actions["path"], partitions)
    by_directory = None
    if not needs_engine and times:
        by_directory = delta_times.directory_truth(dt, actions["path"], times, truth)
        needs_engine = by_directory is None  # a directory holding files of two times
    if needs_engine:
        snap.reader = "deltalake (driver)"
        df = _read_on_driver(spark, dt, path, sum(actions["size"]), bound, features, truth)
    else:
        df = _read_files(spark, dt, path, arrow_schema, types, partitions, actions["path"], by_directory)
        if bound is not None:
            df = df.filter(W.to_column(bound))
    return _dataset(_with_column_metadata(df, dt), snap, features_col, where, path)


def _with_column_metadata(df, dt):
    """The columns' metadata as Spark's Delta reader gives it (a ``StringIndexer`` label's ``ml_attr``, naming its
    classes): the table's schema keeps it, the data files do not. Delta's own keys (``delta.*``: column mapping)
    are left out, as Spark's reader leaves them out of the DataFrame's schema."""
    import json

    for field in dt.schema().fields:
        meta = {}
        for key, value in dict(field.metadata or {}).items():
            if key.startswith("delta."):
                continue
            if isinstance(value, str):
                try:
                    value = json.loads(value)
                except ValueError:
                    pass
            meta[key] = value
        if meta and field.name in df.columns:
            df = df.withMetadata(field.name, meta)
    return df


def _read_files(spark, dt, path, arrow_schema, types, partitions, rel_paths, by_directory):
    """The snapshot's data files read by Spark with the table's logical schema (files written before a column
    was added read it as missing); ``timestamp`` partition columns are read as the directories' text and given
    the log's times (:func:`spark_fr.io.delta_times.with_times`)."""
    ddl = _spark_schema(arrow_schema, {**types, **{c: "string" for c in by_directory or {}}})
    reader = spark.read.schema(ddl)
    if partitions:
        reader = reader.option("basePath", path)
    try:
        df = reader.parquet(*_data_file_paths(dt, path, rel_paths))
        df = df.select(*[qcol(n) for n in arrow_schema.names])  # the table's order (partition columns in place)
    except Exception as err:
        raise InputError(f"{path}: Spark cannot read the Delta table's data files ({one_line(err)})") from None
    return delta_times.with_times(spark, df, by_directory) if by_directory else df


def _data_file_paths(dt, path: str, rel_paths: list) -> list:
    """The snapshot's data files as Spark takes them. Under a local table: the table's path as given joined with
    each file's path relative to it, decoded (the log keeps it URI-encoded; ``DeltaTable.file_uris()``
    percent-encodes the table's own path, a space as ``%20``, which Spark would read literally). Elsewhere
    ``deltalake``'s URIs."""
    from urllib.parse import unquote

    if not str(dt.table_uri).startswith("file:"):
        return dt.file_uris()
    root = path.rstrip("/")
    return [p if re.match(r"^[A-Za-z][A-Za-z0-9+.\-]*:", p) else f"{root}/{unquote(p)}" for p in rel_paths]


def _arrow_schema(dt):
    import pyarrow as pa

    schema = dt.schema()
    arrow = schema.to_arrow() if hasattr(schema, "to_arrow") else schema.to_pyarrow()
    return pa.schema(arrow)


def _add_actions(dt) -> dict:
    """``{'path': [...], 'size': [...]}`` of the snapshot's data files (relative paths, bytes)."""
    import pyarrow as pa

    table = pa.table(dt.get_add_actions(flatten=True))
    return {"path": table.column("path").to_pylist(), "size": table.column("size_bytes").to_pylist()}


def _key_value_layout(paths: list, partitions: list) -> bool:
    """Whether every data file sits under ``col=value`` directories for exactly the partition columns, in order
    (how writers without column mapping lay out a partitioned table; Spark then reads the values from there)."""
    if not partitions:
        return True
    for p in paths:
        dirs = p.replace("\\", "/").split("/")[:-1]
        keys = [d.split("=", 1)[0] for d in dirs if "=" in d]
        if len(dirs) != len(partitions) or keys != list(partitions):
            return False
    return True


def _spark_schema(arrow_schema, types: dict):
    """The Spark schema of the table's logical columns (a DDL string, every name backquoted)."""
    cols = []
    for f in arrow_schema:
        t = types[f.name]
        cols.append(f"{tables.quote_identifier(f.name)} {t if _is_simple(t) else _nested(f.type)}")
    return ", ".join(cols)


def _is_simple(t: str) -> bool:
    return t in ("tinyint", "smallint", "int", "bigint", "float", "double", "boolean", "string", "binary",
                 "date", "timestamp", "timestamp_ntz") or t.startswith("decimal(")


def _nested(arrow_type) -> str:
    """The Spark DDL type of a nested Arrow type (struct, list, map)."""
    import pyarrow as pa

    from .parquet import spark_type

    if pa.types.is_struct(arrow_type):
        inner = ", ".join(f"{tables.quote_identifier(f.name)}: {_ddl(f.type)}" for f in arrow_type)
        return f"struct<{inner}>"
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return f"array<{_ddl(arrow_type.value_type)}>"
    if pa.types.is_map(arrow_type):
        return f"map<{_ddl(arrow_type.key_type)}, {_ddl(arrow_type.item_type)}>"
    return spark_type(arrow_type)


def _ddl(arrow_type) -> str:
    from .parquet import spark_type

    t = spark_type(arrow_type)
    return t if _is_simple(t) else _nested(arrow_type)


def _read_on_driver(spark, dt, path, size, bound, features, truth):
    """The snapshot through ``deltalake``'s query engine, on the driver, as a Spark DataFrame: filtered by the
    engine (a shallow filter on columns whose times the engine reads as the session does), else by Spark after;
    timestamp partition values moved to the session's zone (:func:`spark_fr.io.delta_times.remap_arrow`)."""
    if size > DRIVER_READ_MB * 2 ** 20:
        raise InputError(f"{path}: the Delta table uses {', '.join(sorted(features)) or 'a layout'}, which spark_fr "
                         f"reads without Spark's Delta reader only on the driver, up to {DRIVER_READ_MB} MB of data "
                         f"files (it has {size / 2 ** 20:.0f} MB); {INSTALL_DELTA}")
    moved = set(delta_times.moved(truth))
    push = bound is not None and W.sql_depth(bound) <= ENGINE_SQL_DEPTH and not moved & set(W.columns_of(bound))
    sql = "SELECT * FROM t" + (f" WHERE {W.to_sql(bound)}" if push else "")
    table = delta_times.remap_arrow(query_on_driver(dt, path, sql), truth)
    log.info("Delta table %s (%s) read on the driver by deltalake: %d rows", path, ", ".join(sorted(features)),
             table.num_rows)
    df = _arrow_to_frame(spark, table)
    return df.filter(W.to_column(bound)) if bound is not None and not push else df


def _plain_type(t):
    """An Arrow type with view and large variants replaced by the plain ones Spark converts (DataFusion gives
    ``string_view``)."""
    import pyarrow as pa

    if pa.types.is_string_view(t) or pa.types.is_large_string(t):
        return pa.string()
    if pa.types.is_binary_view(t) or pa.types.is_large_binary(t):
        return pa.binary()
    if pa.types.is_large_list(t) or pa.types.is_list_view(t) or pa.types.is_large_list_view(t) or pa.types.is_list(t):
        return pa.list_(_plain_type(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_plain_type(f.type)) for f in t])
    if pa.types.is_map(t):
        return pa.map_(_plain_type(t.key_type), _plain_type(t.item_type))
    return t


def _arrow_to_frame(spark, table):
    import pyarrow as pa
    import pyspark

    table = table.cast(pa.schema([f.with_type(_plain_type(f.type)) for f in table.schema]))

    if int(pyspark.__version__.split(".")[0]) >= 4:
        return spark.createDataFrame(table)
    return spark.createDataFrame(table.to_pandas())  # pyspark 3.5: no Arrow tables (types kept by Arrow)


# ----- catalog tables ---------------------------------------------------------------------------------------
def read_table(spark, name: str, features_col: str | None = None, *, version=None, timestamp=None,
               where=None) -> Dataset:
    """Read a catalog table (``[catalog.][db.]table``), optionally at a Delta version or timestamp.

    Returns
    -------
    Dataset
        With ``extra['snapshot']`` for a Delta table, ``extra['table']`` always.
    """
    check_time_travel(version, timestamp)
    parts = tables.parse_table_name(name, "--input-table")
    shown, quoted = tables.display_name(parts), tables.quoted_name(parts)
    tree = W.parse_filter(where) if where is not None else None
    spark = session_of(spark)
    try:
        df = spark.table(quoted)
        df.schema
    except Exception as err:
        text = one_line(err)
        if "TABLE_OR_VIEW_NOT_FOUND" in text or "not found" in text.lower():
            raise InputError(f"--input-table {shown}: no such table in the session's catalog") from None
        raise InputError(f"--input-table {shown}: cannot be read ({text})") from None
    provider = table_provider(spark, quoted)
    snap = None
    if provider == "delta":
        pinned = _history_version(spark, quoted, f"--input-table {shown}", version, timestamp)
        if pinned is not None:
            try:
                df = spark.read.option("versionAsOf", int(pinned)).table(quoted)
                df.schema
            except Exception as err:
                raise InputError(f"--input-table {shown}: version {pinned} cannot be read ({one_line(err)})") from None
        snap = Snapshot(shown, pinned, "spark", [], str(timestamp) if timestamp is not None else None)
    elif version is not None or timestamp is not None:
        raise InputError(f"--input-table {shown} is a {provider or 'non-Delta'} table: --version-as-of and "
                         f"--timestamp-as-of need a Delta table")
    if tree is not None:
        df = apply_filter(spark, df, tree, f"table {shown}")
    ds = Dataset(df, columns_of_dataframe(df, features_col), shown)
    ds.extra["table"] = {"table": shown, "provider": provider}
    if snap is not None:
        ds.extra["snapshot"] = snap
    if where is not None:
        ds.extra["where"] = where
    return ds


def table_provider(spark, quoted: str) -> str | None:
    """The provider of a catalog table ('delta', 'parquet', 'hive', ...; None for a view or when unknown)."""
    try:
        rows = spark.sql(f"DESCRIBE TABLE EXTENDED {quoted}").collect()
    except Exception:  # a view, a temporary view, a catalog without DESCRIBE
        return None
    for r in rows:
        if str(r[0]).strip().lower() == "provider":
            return str(r[1]).strip().lower()
    return None


def _history_version(spark, ident, what, version, timestamp):
    """The version of a Delta table (a catalog table, or ``delta.`PATH```) to read, from Spark's ``DESCRIBE
    HISTORY``: ``version``, the last one at ``timestamp``, or the latest; ``what`` names the table in messages."""
    try:
        history = spark.sql(f"DESCRIBE HISTORY {ident}").select("version", "timestamp").collect()
    except Exception as err:
        if version is None and timestamp is None:
            return None
        raise InputError(f"{what}: its history cannot be read ({one_line(err)})") from None
    versions = sorted((int(r[0]), r[1]) for r in history)
    if not versions:
        return None
    if version is not None:
        if version not in {v for v, _ in versions}:
            raise InputError(f"{what}: --version-as-of {version} does not exist (versions "
                             f"{versions[0][0]} to {versions[-1][0]})")
        return version
    if timestamp is not None:
        at = parse_timestamp(timestamp)
        before = [v for v, t in versions if _aware(t) <= at]
        if not before:
            raise _before_first_commit(what, timestamp, versions[0][1])
        return before[-1]
    return versions[-1][0]


def _aware(t) -> _dt.datetime:
    """A history timestamp as an aware datetime (pyspark gives naive local times: ``astimezone`` reads them so)."""
    return t.astimezone(_dt.timezone.utc)
