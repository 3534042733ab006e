"""Times in Delta tables read without Spark's Delta reader: one time-zone rule, Spark's.

Sketch
------
**The rule.** A time without a zone is read in the Spark session's time zone (``spark.sql.session.timeZone``,
whose default is the JVM's zone: ``TZ``, else the machine's), as Spark's Delta reader reads it. Both Delta readers
follow it, for ``--where`` literals (:mod:`spark_fr.io.where`) and for timestamp partition values. The session
itself turns the text into an instant (:func:`spark_micros`: ``try_cast(text AS TIMESTAMP)`` on a local relation,
no job), so the zone, its DST gaps and overlaps and the calendar are Spark's; there is no second implementation
to drift. Decision: every Delta read has a session (``deltalake``'s rows become a Spark DataFrame), so there is
no "no session" case; the machine's zone matters only as the session's default.

**Timestamp partition values.** The Delta log keeps a partition value as text: naive (``2026-03-01 00:00:00``,
as ``deltalake`` and older Spark writers write it) or UTC (``2026-02-28T18:30:00.000000Z``, Spark's Delta writer
since Delta 3 by default). Spark's Delta reader reads a naive value in the session's zone. The two ways of the
``deltalake`` path did not:

* ``deltalake``'s query engine (delta-kernel) reads a naive value as UTC: :func:`partition_truth` maps each
  value the engine gives to the session's (``{kernel micros: true micros}``, per column), and
  :func:`remap_arrow` rewrites the engine's column;
* Spark reading the data files takes the value from the directory name (``ts=2026-03-01 00%3A00%3A00``), which is
  the *writer's* wall clock, parsed in the *reader's* zone (off by their difference, 5 h 30 min between UTC and
  Asia/Kolkata). There the column is read as the directory's text and joined with the log's value per
  directory (:func:`directory_truth`, :func:`with_times`: a broadcast join of one row per directory). A
  directory holding files of two different times (writers in two zones) is read by the engine instead.

Both fail only when the log holds a naive and a UTC value that the engine reads as the same time but the
session as two: one line (it cannot be told apart without Spark's Delta reader).
"""
from __future__ import annotations

import re
from urllib.parse import unquote

from ..errors import InputError
from .where import micros_of, parse_datetime

HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")


def spark_micros(spark, texts) -> dict:
    """``{text: microseconds since 1970-01-01 UTC}``: each text cast to ``timestamp`` by the session (its time
    zone for a text without an offset; None where Spark cannot read it as a time)."""
    from pyspark.sql import functions as F

    texts = sorted({str(t) for t in texts})
    if not texts:
        return {}
    df = spark.createDataFrame([(t,) for t in texts], "t string")
    rows = df.select("t", F.unix_micros(F.expr("try_cast(t AS TIMESTAMP)")).alias("m")).collect()
    return {r["t"]: (None if r["m"] is None else int(r["m"])) for r in rows}


def instants(spark, values: list) -> dict:
    """``{naive datetime: microseconds}`` in the session's zone (what :func:`spark_fr.io.where.bind` takes)."""
    texts = {v: v.isoformat(sep=" ") for v in values}
    micros = spark_micros(spark, texts.values())
    return {v: micros[t] for v, t in texts.items()}


def bound_filter(spark, tree, types: dict):
    """A checked ``--where`` tree bound by the one rule (:func:`spark_fr.io.where.bind`)."""
    from . import where

    naive = where.naive_instants(tree, types)
    return where.bind(tree, types, instants(spark, naive) if naive else {})


# ----- partition values ---------------------------------------------------------------------------------------
def instant_partitions(partitions: list, types: dict) -> list:
    """The partition columns of type ``timestamp`` (an instant; ``timestamp_ntz`` has no zone to apply)."""
    from .where import is_instant

    return [c for c in partitions if is_instant(types.get(c, ""))]


def partition_truth(spark, dt, columns: list, source: str) -> dict:
    """``{column: {kernel micros: session micros}}`` for the ``timestamp`` partition columns ``columns`` of the
    ``deltalake`` table ``dt``: the time delta-kernel reads from each value of the log, and the time Spark's reader
    reads (module sketch).

    Raises
    ------
    InputError
        A value that is not a time, or two values the engine reads as one time and the session as two.
    """
    raws = {c: set() for c in columns}
    for part in dt.partitions():
        for c in columns:
            if part.get(c) is not None:
                raws[c].add(part[c])
    session = spark_micros(spark, set().union(*raws.values())) if columns else {}
    truth = {}
    for c in columns:
        seen, truth[c] = {}, {}
        for raw in sorted(raws[c]):
            try:
                kernel = micros_of(parse_datetime(raw))
            except ValueError:
                raise InputError(f"{source}: timestamp partition column '{c}' holds '{raw}', which is not a time") from None
            if session.get(raw) is None:
                raise InputError(f"{source}: timestamp partition column '{c}' holds '{raw}', which Spark does not read "
                                 f"as a time")
            if kernel in seen and truth[c][kernel] != session[raw]:
                raise InputError(f"{source}: timestamp partition column '{c}' holds '{seen[kernel]}' and '{raw}', "
                                 f"which deltalake reads as one time and Spark's reader (in the session's time zone) "
                                 f"as two; read it with Spark's Delta reader (install delta-spark, or run on "
                                 f"Databricks)")
            seen[kernel], truth[c][kernel] = raw, session[raw]
    return truth


def moved(truth: dict) -> list:
    """The columns whose values the session's zone moves away from the engine's."""
    return [c for c, m in truth.items() if any(k != v for k, v in m.items())]


def remap_arrow(table, truth: dict):
    """The engine's Arrow table with the moved timestamp columns rewritten to the session's times."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for c in moved(truth):
        if c not in table.column_names:
            continue
        i = table.column_names.index(c)
        original = table.column(i).type
        micros = pc.cast(pc.cast(table.column(i), pa.timestamp("us", tz="UTC")), pa.int64())
        keys = pa.array(list(truth[c]), pa.int64())
        values = pa.array(list(truth[c].values()), pa.int64())
        index = pc.index_in(micros, value_set=keys)
        mapped = pc.if_else(pc.is_null(index), micros, pc.take(values, index))
        table = table.set_column(i, table.field(i), pc.cast(pc.cast(mapped, pa.timestamp("us", tz="UTC")), original))
    return table


def _unescape(text: str) -> str:
    """A partition directory's value as Spark's partition discovery reads it (``%XX`` escapes decoded)."""
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)


def directory_value(rel_path: str, column: str):
    """The value of ``column`` in the ``column=value`` directory of a data file's path relative to the table (as the
    log keeps it, URI-encoded): the text Spark's partition discovery gives (None for Hive's null partition)."""
    for part in unquote(rel_path).replace("\\", "/").split("/")[:-1]:
        key, _, value = part.partition("=")
        if key == column:
            value = _unescape(value)
            return None if value == HIVE_NULL else value
    return None


def directory_truth(dt, rel_paths: list, columns: list, truth: dict):
    """``{column: {directory text: session micros}}`` for the ``timestamp`` partition columns of the snapshot's data
    files; None if a directory holds files of two times (the engine must read them)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    actions = pa.table(dt.get_add_actions(flatten=True))
    by_path = {}
    for c in columns:
        kernel = pc.cast(pc.cast(actions.column(f"partition.{c}"), pa.timestamp("us", tz="UTC")), pa.int64())
        by_path[c] = dict(zip(actions.column("path").to_pylist(), kernel.to_pylist()))
    out = {c: {} for c in columns}
    for rel in rel_paths:
        for c in columns:
            k = by_path[c].get(rel)
            value = None if k is None else truth[c].get(k, k)
            text = directory_value(rel, c)
            if text is None:
                if value is not None:
                    return None
                continue
            if out[c].setdefault(text, value) != value:
                return None
    return out


def with_times(spark, df, by_directory: dict):
    """``df`` (its ``timestamp`` partition columns read as the directories' text) with those columns replaced by
    the log's times in the session's zone: one broadcast join per column with its ``{text: micros}``."""
    from pyspark.sql import functions as F

    from ..data.columns import qcol

    for i, (column, mapping) in enumerate(by_directory.items()):
        key, value = f"__spark_fr_dir_{i}", f"__spark_fr_micros_{i}"
        rows = [(k, v) for k, v in mapping.items() if k is not None]
        if not rows:
            df = df.withColumn(column, F.lit(None).cast("timestamp"))
            continue
        table = spark.createDataFrame(rows, f"`{key}` string, `{value}` bigint")
        df = (df.join(F.broadcast(table), qcol(column) == F.col(key), "left")
              .withColumn(column, F.timestamp_micros(F.col(value))).drop(key, value))
    return df
