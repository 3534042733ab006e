"""Delta tables of rankings: how spark_fr proves a table is its own, creates one, and commits to one.

A run may append to or overwrite a Delta table only when the table is **proven** to hold spark_fr's rankings:

* its columns are the ranking table's, by name **and type** (:data:`spark_fr.io.writers.SCHEMA`, or with a
  relational ranking's ``level`` and ``lineage``), in order; and
* it carries spark_fr's **mark**, the table property ``spark_fr.rankings = true`` (:data:`MARK`), which spark_fr
  sets when it creates the table. A table property is kept by every later commit (appends, overwrites) and any
  Delta writer can set it: Spark SQL (``ALTER TABLE delta.`PATH` SET TBLPROPERTIES ('spark_fr.rankings' =
  'true')``, or ``DeltaTableBuilder.property``) as well as the ``deltalake`` package.

Every commit spark_fr makes also records the **run record** in its commit information: ``userMetadata`` (the
field Spark's ``DESCRIBE HISTORY`` shows, set by both writers) holds ``{"spark_fr": {"run_id", "version",
"run"}}`` as JSON, ``run`` being what ``run.json`` holds (parameters, timings, versions, the input fingerprint:
files and sizes, or the Delta version read); ``deltalake`` commits also carry ``spark_fr.run_id`` and
``spark_fr.version`` as keys of their own. :func:`run_records` reads them back (oldest first).

**Two writers.** A session with Delta Lake writes with Spark's Delta writer (``DataFrameWriterV2`` on
``delta.`PATH``` or a catalog table: ``create`` is one ``CREATE TABLE AS SELECT`` commit holding the rows and
the table properties; ``append``; ``overwrite(run_id = X)``, Delta's replaceWhere, for a rerun); otherwise
``deltalake`` writes (a rerun: ``write_deltalake(mode="overwrite", predicate="run_id = 'X'")``). Both give the
same table. Tables spark_fr creates carry :data:`CREATE_PROPERTIES`: the mark, no deletion vectors (a
Databricks default that ``deltalake`` cannot write: the table stays writable by both writers), and a log kept
for ten years (``delta.logRetentionDuration``; the run records live in the log, whose default retention is
30 days).

**One schema for every kind of run.** A Delta table of rankings has the contract's columns and then a
relational ranking's ``level`` and ``lineage`` (:data:`spark_fr.io.writers.TABLE_SCHEMA`; null for a plain
run), so plain and relational runs share a table. A table of ours with only the contract's columns (written
before) is accepted and gains the two columns, nullable, at its next commit (schema merge, the only evolution:
columns are only ever added at the end).

Decisions
---------
* **Tables without the mark are refused**, also when their columns and types are the ranking's. That covers a
  foreign table that merely looks like ours and the tables written by spark_fr before the mark existed:
  they cannot be told apart, so the one-line error says how to adopt such a table
  (:func:`adopt_hint`: the exact property to set), after which spark_fr appends to it as to its own.
* **Creating a table takes two commits**: ``deltalake`` 1.6.6 refuses a table property it does not know in a
  data commit (``write_deltalake(configuration=...)`` fails for ``spark_fr.*`` keys), so version 0 creates the
  table with the mark (:meth:`deltalake.DeltaTable.create` with ``raise_if_key_not_exists=False``) and version
  1 holds the ranking. For a local path both are made in a hidden sibling directory that is then renamed into
  place (an empty directory is filled: the data files first, the ``_delta_log`` last), so a reader never sees
  the table without its first ranking, and a failed or interrupted run leaves nothing. A remote table
  (``s3://`` ...) is created in place: a run that fails between the two commits leaves an empty table of
  ours, to which the next run appends.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import uuid

import pyarrow as pa

from ..errors import one_line
from ..version import __version__
from .locations import is_local, local_path

#: the table property that marks a Delta table of spark_fr's rankings, and its value
MARK = "spark_fr.rankings"
MARK_VALUE = "true"
#: the properties of a table spark_fr creates (module sketch)
CREATE_PROPERTIES = {MARK: MARK_VALUE, "delta.enableDeletionVectors": "false",
                     "delta.logRetentionDuration": "interval 3650 days"}
#: the largest run record kept whole in a commit (bytes of JSON); above it the boosting curve is left out
RECORD_MAX_BYTES = 512 * 1024


def delta_types(schema: pa.Schema) -> list:
    """``[(column, Delta type name)]`` of an Arrow schema, as Delta stores it ('string', 'integer', ...)."""
    from deltalake import Schema

    return [(f.name, _type_name(f.type)) for f in Schema.from_arrow(schema).fields]


def _type_name(delta_type) -> str:
    return str(getattr(delta_type, "type", delta_type))


def adopt_hint(path: str) -> str:
    """How a user makes an existing table of rankings spark_fr's (one line)."""
    return (f"if it holds rankings of an earlier spark_fr, adopt it by setting its table property {MARK}={MARK_VALUE} "
            f"(Spark SQL: ALTER TABLE delta.`{path}` SET TBLPROPERTIES ('{MARK}' = '{MARK_VALUE}'); deltalake: "
            f"DeltaTable('{path}').alter.set_table_properties({{'{MARK}': '{MARK_VALUE}'}}, raise_if_not_exists=False))")


def exists(path: str) -> bool:
    """Whether a Delta table is at ``path`` (a local ``_delta_log``, or one ``deltalake`` opens)."""
    if is_local(path):
        return os.path.isdir(os.path.join(local_path(path), "_delta_log"))
    from deltalake import DeltaTable

    try:
        DeltaTable(path)
        return True
    except Exception:  # deltalake's own error types: no table there
        return False


def problem(path: str, schemas: list, writer: str = "deltalake", spark=None) -> str | None:
    """Why the Delta table at ``path`` is not proven to be spark_fr's, or cannot be written (None: it is ours).

    Parameters
    ----------
    path : str
    schemas : list of pyarrow.Schema
        The schemas a table of rankings may have (the contract's; the table's with ``level`` and ``lineage``).
    writer : {'deltalake', 'spark'}
        Who will write: ``deltalake`` writes only tables without writer features it lacks.
    spark : SparkSession, optional
        The session of Spark's writer: it checks a path ``deltalake`` cannot open (a percent-escape in it:
        :func:`spark_fr.io.delta_reader.deltalake_refuses`), which ``deltalake`` would read at another path.

    Returns
    -------
    str or None
        The reason, to follow "--output PATH " in a one-line message.
    """
    from deltalake import DeltaTable

    from .delta_reader import deltalake_refuses

    refused = deltalake_refuses(path)
    if refused:
        if writer == "spark" and spark is not None:
            return spark_table_problem(spark, spark_identifier(path=path), schemas)
        return refused
    try:
        table = DeltaTable(path)
        got = [(f.name, _type_name(f.type)) for f in table.schema().fields]
        configuration = dict(table.metadata().configuration or {})
        protocol = table.protocol()
    except Exception as err:  # deltalake raises its own error types
        return f"is not a readable Delta table ({one_line(err)})"
    why = schema_problem(got, configuration, schemas, adopt_hint(path))
    if why is None and writer == "deltalake":
        from deltalake.table import SUPPORTED_WRITER_FEATURES

        missing = sorted(set(getattr(protocol, "writer_features", None) or []) - set(SUPPORTED_WRITER_FEATURES))
        if missing or protocol.min_writer_version > 7 or protocol.min_writer_version in (3, 4, 5, 6):
            from .delta_reader import INSTALL_DELTA

            shown = ", ".join(missing) or f"writer version {protocol.min_writer_version}"
            return (f"is a table of ours that uses Delta writer feature(s) {shown}, which only Spark's Delta writer "
                    f"writes; {INSTALL_DELTA}")
    return why


def schema_problem(got: list, configuration: dict, schemas: list, hint: str) -> str | None:
    """Why a table with columns ``got`` ([(name, Delta type)]) and properties ``configuration`` is not a table of
    rankings of ours (None: it is); ``hint`` says how to adopt it (:func:`adopt_hint`)."""
    expected = [delta_types(s) for s in schemas]
    if got not in expected:
        names = [n for n, _ in got]
        same_names = next((e for e in expected if [n for n, _ in e] == names), None)
        if same_names is None:
            shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
            return f"is a Delta table that does not hold rankings (columns {shown}); choose another table"
        column, theirs, ours = next((n, t, o) for (n, t), (_, o) in zip(got, same_names) if t != o)
        return (f"is a Delta table that does not hold rankings: it has the ranking's column names, but column "
                f"'{column}' is {theirs}, a ranking's is {ours}; choose another table")
    if configuration.get(MARK) != MARK_VALUE:
        return (f"is a Delta table with the ranking's columns but without spark_fr's mark (the table property "
                f"{MARK}), so spark_fr does not write to it; choose another table, or, {hint}")
    return None


# ----- the run record in the commit ------------------------------------------------------------------------
def _finite(value):
    """JSON-safe: non-finite floats as None, containers walked, other objects as text."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    if value is None or isinstance(value, (str, int, bool)):
        return value
    if hasattr(value, "item"):  # numpy scalars
        return _finite(value.item())
    return str(value)


def user_metadata(run_id: str, record: dict | None = None) -> str:
    """The commit's ``userMetadata``: ``{"spark_fr": {"run_id", "version", "run"}}`` as compact JSON.

    A record over :data:`RECORD_MAX_BYTES` leaves out its boosting curve (``run.omitted`` says so), then keeps
    only the parameters, timings, versions and input fingerprint.
    """
    run = _finite(dict(record or {}))
    text = _user_json(run_id, run)
    if len(text) > RECORD_MAX_BYTES and (run.get("boosting") or {}).get("curve") is not None:
        run = {**run, "boosting": {k: v for k, v in run["boosting"].items() if k != "curve"},
               "omitted": ["boosting.curve"]}
        text = _user_json(run_id, run)
    if len(text) > RECORD_MAX_BYTES:
        keep = ("run_id", "created_at", "params", "timings", "versions", "input_fingerprint", "input")
        run = {**{k: run.get(k) for k in keep}, "omitted": sorted(k for k in run if k not in keep)}
        text = _user_json(run_id, run)
    return text


def _user_json(run_id, run) -> str:
    return json.dumps({"spark_fr": {"run_id": str(run_id), "version": __version__, "run": run}}, sort_keys=True,
                      separators=(",", ":"), default=str)


def commit_properties(run_id: str, record: dict | None = None, data: bool = True):
    """The commit information spark_fr adds to each of its ``deltalake`` commits (``data=False``: the commit that
    creates a table, which holds no run's rows, has no run record)."""
    from deltalake import CommitProperties

    metadata = {"spark_fr.run_id": str(run_id), "spark_fr.version": __version__}
    if data:
        metadata["userMetadata"] = user_metadata(run_id, record)
    return CommitProperties(custom_metadata=metadata)


def parse_user_metadata(text) -> dict | None:
    """The ``spark_fr`` part of a commit's ``userMetadata`` (None: not a commit of spark_fr's)."""
    if not text:
        return None
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return None
    inner = value.get("spark_fr") if isinstance(value, dict) else None
    return inner if isinstance(inner, dict) and "run_id" in inner else None


def run_records(path: str | None = None, *, table: str | None = None, spark=None) -> list:
    """The run records of a table of rankings, oldest first: ``[{version, timestamp, operation, run_id, run}]``.

    Parameters
    ----------
    path : str, optional
        A Delta table by path (read with ``deltalake``; with ``spark`` and no ``deltalake`` access, by Spark).
    table : str, optional
        A catalog table (``[catalog.]db.table``): ``DESCRIBE HISTORY`` in ``spark``.
    spark : SparkSession, optional
    """
    from .delta_reader import deltalake_refuses

    rows = []
    refused = path is not None and deltalake_refuses(path)
    if refused and spark is None and table is None:
        from ..errors import InputError

        raise InputError(f"{path}: the path {refused}")
    if table is not None or (path is not None and spark is not None and (refused or not exists(path))):
        from . import tables

        ident = (tables.quoted_name(tables.parse_table_name(table, "table")) if table is not None
                 else f"delta.{tables.quote_identifier(path)}")
        for r in spark.sql(f"DESCRIBE HISTORY {ident}").select("version", "timestamp", "operation",
                                                                "userMetadata").collect():
            rows.append((int(r[0]), r[1], r[2], r[3]))
    else:
        from deltalake import DeltaTable

        for c in DeltaTable(path).history():
            rows.append((int(c.get("version", -1)), c.get("timestamp"), c.get("operation"), c.get("userMetadata")))
    out = []
    for version, timestamp, operation, text in sorted(rows, key=lambda r: r[0]):
        inner = parse_user_metadata(text)
        if inner is not None:
            out.append({"version": version, "timestamp": timestamp, "operation": operation,
                        "run_id": inner["run_id"], "spark_fr": inner.get("version"), "run": inner.get("run")})
    return out


def create(path: str, table: pa.Table | None, run_id: str, record: dict | None = None, maker=None) -> bool:
    """Create a marked table of rankings at ``path`` holding ``table`` (see the module's decisions).

    ``maker(where) -> bool``, when given, creates the table at ``where`` instead of ``deltalake`` (Spark's
    writer: one ``CREATE TABLE AS SELECT``); a local table is made in a hidden sibling and renamed into place
    either way.

    Returns
    -------
    bool
        True if this call created it; False if a table appeared there meanwhile (another run's: the caller
        then appends to it after checking it).
    """
    make = maker or (lambda where: _create_in_place(where, table, run_id, record))
    if not is_local(path):
        return make(path)
    path = local_path(path)
    parent = os.path.dirname(path)
    os.makedirs(parent, exist_ok=True)
    staging = os.path.join(parent, f".{os.path.basename(path)}.tmp-{uuid.uuid4().hex[:8]}")
    try:
        make(staging)
        if not os.path.lexists(path):
            try:
                os.rename(staging, path)
                return True
            except OSError:  # another run created it at the same moment
                return False
        if os.path.isdir(path) and not os.listdir(path):
            return _fill_empty_directory(staging, path)
        return False
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _create_in_place(path: str, table: pa.Table, run_id: str, record: dict | None = None) -> bool:
    from deltalake import DeltaTable, write_deltalake

    try:
        DeltaTable.create(path, table.schema, mode="error", configuration=dict(CREATE_PROPERTIES),
                          commit_properties=commit_properties(run_id, data=False),
                          raise_if_key_not_exists=False)
    except Exception as err:  # deltalake's error types: a table is there already
        if "exist" in str(err).lower():
            return False
        raise
    write_deltalake(path, table, mode="append", commit_properties=commit_properties(run_id, record))
    return True


def _fill_empty_directory(staging: str, path: str) -> bool:
    """Move a staged table into an empty directory (kept: it may be a mount point): its data files, then its log.
    False (and the moved files taken back out) if another table appeared there first."""
    moved = []
    for name in sorted(os.listdir(staging)):
        if name != "_delta_log":
            os.rename(os.path.join(staging, name), os.path.join(path, name))
            moved.append(name)
    try:
        os.rename(os.path.join(staging, "_delta_log"), os.path.join(path, "_delta_log"))
        return True
    except OSError:
        for name in moved:  # our own data files, referenced by no log: take them away again
            target = os.path.join(path, name)
            shutil.rmtree(target, ignore_errors=True) if os.path.isdir(target) else os.remove(target)
        return False


def write(path: str, table: pa.Table, mode: str, run_id: str, record: dict | None = None,
          replace_run: bool = False) -> None:
    """Append ``table`` to (or overwrite with it) the table of ours at ``path`` in one commit; the table's
    properties, its mark among them, are kept. ``replace_run``: the rows of run ``run_id`` are replaced (a rerun)
    in the same commit. A table with only the contract's columns gains ``level`` and ``lineage`` (schema merge)."""
    from deltalake import DeltaTable, write_deltalake

    merge = len(DeltaTable(path).schema().fields) < len(table.schema)
    kwargs = {"schema_mode": "merge"} if merge else {}
    if replace_run and mode == "append":
        write_deltalake(path, table, mode="overwrite", predicate=f"run_id = '{checked_run_id(run_id)}'",
                        commit_properties=commit_properties(run_id, record), **kwargs)
        return
    write_deltalake(path, table, mode=mode, commit_properties=commit_properties(run_id, record), **kwargs)


def checked_run_id(run_id: str) -> str:
    """``run_id`` if it is a run id a predicate may quote (the ``--run-id`` option's pattern), else ValueError."""
    import re

    from ..options import Word

    if not re.fullmatch(Word.pattern, str(run_id)):
        raise ValueError(f"not a run id: {run_id!r}")
    return str(run_id)


# ----- Spark's Delta writer ----------------------------------------------------------------------------------
def spark_identifier(path: str | None = None, table_parts: list | None = None) -> str:
    """The identifier ``DataFrameWriterV2`` and SQL take: ``delta.`PATH``` or the backquoted catalog name."""
    from . import tables

    if table_parts is not None:
        return tables.quoted_name(table_parts)
    return f"delta.{tables.quote_identifier(path)}"


def spark_table_problem(spark, ident: str, schemas: list) -> str | None:
    """Like :func:`problem`, asked of Spark's catalog for a catalog table (which exists)."""
    from pyspark.sql import types as T  # noqa: F401 (a session is there)

    from .delta_read import table_provider

    provider = table_provider(spark, ident)
    if provider is not None and provider != "delta":
        return f"is a {provider} table, not a Delta table; choose another table"
    try:
        fields = spark.table(ident).schema.fields
        properties = {r[0]: r[1] for r in spark.sql(f"SHOW TBLPROPERTIES {ident}").collect()}
    except Exception as err:
        return f"cannot be read ({one_line(err)})"
    got = [(f.name, _spark_delta_type(f.dataType.simpleString())) for f in fields]
    hint = (f"if it holds rankings of an earlier spark_fr, adopt it by setting its table property {MARK}={MARK_VALUE} "
            f"(Spark SQL: ALTER TABLE {ident} SET TBLPROPERTIES ('{MARK}' = '{MARK_VALUE}'))")
    return schema_problem(got, properties, schemas, hint)


def _spark_delta_type(simple: str) -> str:
    """A Spark type's name as Delta's schema names it (``int`` -> ``integer``, ``bigint`` -> ``long``)."""
    return {"int": "integer", "bigint": "long", "smallint": "short", "tinyint": "byte"}.get(simple, simple)


def spark_exists(spark, ident: str) -> bool:
    try:
        spark.table(ident).schema
        return True
    except Exception:  # TABLE_OR_VIEW_NOT_FOUND, DELTA_PATH_DOES_NOT_EXIST, ...
        return False


def spark_create(spark, ident: str, df, run_id: str, record: dict | None = None) -> bool:
    """Create the marked table ``ident`` holding ``df`` in one commit (``CREATE TABLE AS SELECT``); False if a
    table appeared there meanwhile (the caller then appends after checking it)."""
    writer = df.writeTo(ident).using("delta")
    for key, value in CREATE_PROPERTIES.items():
        writer = writer.tableProperty(key, value)
    try:
        with _commit_user_metadata(spark, user_metadata(run_id, record)):
            writer.create()
        return True
    except Exception as err:
        if "ALREADY_EXISTS" in str(err) or "already exists" in str(err):
            return False
        raise


class _commit_user_metadata:
    """``CREATE TABLE AS SELECT`` ignores the writer's ``userMetadata`` option: the session's Delta setting for it,
    set for the one commit and put back."""

    KEY = "spark.databricks.delta.commitInfo.userMetadata"

    def __init__(self, spark, text):
        self.spark, self.text = spark, text

    def __enter__(self):
        self.before = self.spark.conf.get(self.KEY, None)
        self.spark.conf.set(self.KEY, self.text)

    def __exit__(self, *exc):
        if self.before is None:
            self.spark.conf.unset(self.KEY)
        else:
            self.spark.conf.set(self.KEY, self.before)
        return False


def spark_write(spark, ident: str, df, mode: str, run_id: str, record: dict | None = None,
                replace_run: bool = False) -> None:
    """Append ``df`` to the table of ours ``ident`` (or overwrite it; ``replace_run``: replace the rows of
    ``run_id``) in one commit, with the run record as the commit's ``userMetadata``."""
    from pyspark.sql import functions as F

    writer = df.writeTo(ident).option("userMetadata", user_metadata(run_id, record))
    if len(spark.table(ident).schema.fields) < len(df.schema.fields):
        writer = writer.option("mergeSchema", "true")
    if mode == "overwrite":
        writer.overwrite(F.lit(True))
    elif replace_run:
        writer.overwrite(F.col("run_id") == F.lit(checked_run_id(run_id)))
    else:
        writer.append()
