"""Where the rows of an input come from: Arrow record batches, collected on the driver or read in Spark tasks.

Sketch
------
The statistics and encoding passes (:mod:`spark_fr.data.prepare`, :mod:`spark_fr.data.blocks`) only ever
see Arrow record batches of the columns they need. A :class:`BatchSource` provides them in two ways:

* ``driver_batches(names)``: every batch on the driver (small inputs: one read, no further job; a Spark
  DataFrame's collection reports progress against the columns, as the statistics pass and the encoding do);
* ``map(spark, fn, names)``: an RDD of what ``fn`` (an iterator of batches -> an iterator of Python
  objects) makes of each partition of the input, computed in Spark tasks (large inputs).

:class:`FrameSource` reads a Spark DataFrame (``toArrow`` / ``mapInArrow``; the columns under safe
internal names, see :func:`spark_fr.data.columns.safe_select`). Readers can provide their own source when
Spark's row pipeline is the slow part: local Parquet files read with pyarrow, row group by row group (a table
of 20,000 columns goes through Spark's planner and its Arrow conversion in minutes, through pyarrow in
seconds; :mod:`spark_fr.io.parquet`), local ARFF files parsed on the driver (no Spark job for a small file;
:mod:`spark_fr.io.arff`). Every source gives the same batches for the same rows, so the results never depend
on which one was used.
"""
from __future__ import annotations

import contextlib
import logging
import re
from abc import ABC, abstractmethod

import pyarrow as pa

from ..errors import one_line
from ..runtime.engine import engine_for
from ..runtime.progress import Progress
from .columns import qcol, safe_columns, safe_names

log = logging.getLogger(__name__)


_UNITS = {"B": 1, "KiB": 2 ** 10, "MiB": 2 ** 20, "GiB": 2 ** 30, "TiB": 2 ** 40, "PiB": 2 ** 50, "EiB": 2 ** 60}


def plan_size(explained: str) -> int | None:
    """The optimizer's size estimate of a plan (bytes, as Spark prints it: ``sizeInBytes=1.5 KiB``) from its
    ``explain(mode='cost')`` text: what a classic session reads from the plan's statistics directly, for a Spark
    Connect DataFrame (no JVM object here)."""
    text = explained.split("== Optimized Logical Plan ==", 1)[-1]
    match = re.search(r"sizeInBytes=([0-9.Ee+]+)\s*(B|KiB|MiB|GiB|TiB|PiB|EiB)", text)
    return int(float(match.group(1)) * _UNITS[match.group(2)]) if match else None


class BatchSource(ABC):
    """The protocol (see the module sketch); ``columns`` are :class:`ColumnInfo` of the needed columns.
    Every source implements :meth:`narrow`, :meth:`driver_batches` and :meth:`map`."""

    @abstractmethod
    def narrow(self, columns: list) -> tuple:
        """(a source of just these columns, the ColumnInfo copies naming them as the batches do)."""

    def size_estimate(self) -> int | None:
        """Estimated bytes of the input (None: unknown)."""
        return None

    @abstractmethod
    def driver_batches(self) -> list:
        """Every batch, on the driver."""

    @abstractmethod
    def map(self, spark, fn):
        """The :class:`~spark_fr.runtime.engine.Parts` of the objects ``fn`` yields from each partition's batches
        (computed by Spark tasks)."""

    def cache(self) -> None:
        """Keep the input for several passes (no-op when reading it again is cheap)."""

    def release(self) -> None:
        """Undo :meth:`cache`."""


class FrameSource(BatchSource):
    """A Spark DataFrame as a batch source.

    Parameters
    ----------
    df : DataFrame
        As given.
    extra : tuple of str
        Columns kept under their own names by a narrowing (the reader's error column).
    alias : dict, optional
        {column of ``df``: internal name} of a narrowing (:meth:`narrow`), applied only when Spark must see it.
    units : int, optional
        The logical columns it holds (the total of the collection's progress; default: the DataFrame's columns).

    Decision: a narrowing becomes a Spark projection (``df.select`` of aliased columns,
    :func:`spark_fr.data.columns.safe_select`) only for the Spark passes (:meth:`map`, :meth:`cache`). When the
    driver collects a narrowing that keeps every column of the DataFrame (the usual ranking of a table on all
    its columns), it collects the DataFrame as given and renames the Arrow columns (no copy): the same batches,
    without building a second plan of thousands of aliased columns (5,000 columns: 12 s of py4j calls and
    analysis at load 12, before any row is read).
    """

    def __init__(self, df, extra=(), alias: dict | None = None, units: int | None = None):
        self.given = df
        self.extra = tuple(extra)
        self.alias = alias
        self.units = units
        self._df = df if alias is None else None
        self._cached = None

    @property
    def df(self):
        """The DataFrame of this source's columns (a narrowing's projection, built on first use)."""
        if self._df is None:
            self._df = self.given.select(*[qcol(n).alias(a) for n, a in self.alias.items()],
                                         *[qcol(e) for e in self.extra])
        return self._df

    def narrow(self, columns):
        alias = safe_names(columns)
        cols = safe_columns(columns, alias)
        return FrameSource(self.df, self.extra, alias, units=len(cols)), cols

    def _whole(self) -> bool:
        """Whether this narrowing keeps every column of the given DataFrame (collected as given, renamed)."""
        return (self.alias is not None and self._cached is None
                and set(self.given.columns) <= set(self.alias) | set(self.extra))

    def size_estimate(self):
        df = self.given if self._whole() else self.df
        try:
            if type(df).__module__.startswith("pyspark.sql.connect"):
                size = plan_size(df._explain_string(mode="cost"))
            else:
                size = int(df._jdf.queryExecution().optimizedPlan().stats().sizeInBytes())
        except Exception:  # no statistics
            return None
        return size if size is not None and 0 <= size < 2 ** 62 else None

    def driver_batches(self):
        """Every batch, collected on the driver by one Spark job (``toArrow``), which reports its progress against
        the columns as the passes after it do: ``collecting: 60 / 121 columns (50 %), ...`` (the columns x the
        fraction of its tasks done; a collection shorter than the reporting interval logs nothing)."""
        whole = self._whole()
        frame = self.given if whole else self.df
        units = self.units if self.units is not None else len(frame.columns)
        with Progress(units, "collecting", unit="columns", brief=True) as progress, \
                engine_for(frame.sparkSession).tracked(progress, units), \
                collection_settings(frame.sparkSession, len(frame.columns)):
            batches = collect_arrow(frame)
        if not whole or not batches:
            return batches
        table = pa.Table.from_batches(batches)
        return table.rename_columns([self.alias.get(n, n) for n in table.column_names]).to_batches()

    def map(self, spark, fn):
        return engine_for(spark).from_frame(self.df, fn)

    def cache(self):
        from pyspark import StorageLevel

        try:
            self._cached = self.df.persist(StorageLevel.MEMORY_AND_DISK)
        except Exception as err:  # a session that caches nothing (serverless compute): read it again instead
            log.info("input not persisted (%s): read again for each pass", one_line(err)[:120])
            return
        self._df = self._cached

    def release(self):
        if self._cached is not None:
            self._cached.unpersist()
            self._cached = None


#: Spark's setting of how its projections are made (internal: ``CodegenObjectFactoryMode``) and the value that makes
#: them interpreted
FACTORY_MODE, INTERPRETED = "spark.sql.codegen.factoryMode", "NO_CODEGEN"
#: Spark's rows per column batch of its vectorized Parquet reader (Delta's files too; default 4,096)
PARQUET_BATCH = "spark.sql.parquet.columnarReaderBatchSize"
#: the values (rows x columns) a wide frame's Parquet column batch holds at most, and its fewest and most rows
BATCH_VALUES, BATCH_ROWS_MIN, BATCH_ROWS_MAX = 1 << 20, 128, 4096


def parquet_batch_rows(n_columns: int) -> int:
    """Rows per Parquet column batch for a frame of ``n_columns`` columns: the largest power of two whose batch
    holds at most :data:`BATCH_VALUES` values, within [:data:`BATCH_ROWS_MIN`, :data:`BATCH_ROWS_MAX`] (Spark's
    default, 4,096, up to 256 columns)."""
    rows = 1 << max(0, (BATCH_VALUES // max(1, n_columns)).bit_length() - 1)
    return min(BATCH_ROWS_MAX, max(BATCH_ROWS_MIN, rows))


def wide_frame_settings(n_columns: int) -> dict:
    """{Spark setting: value} made while a frame of ``n_columns`` columns, more than whole-stage code generation
    takes, is collected (see :func:`collection_settings`)."""
    return {FACTORY_MODE: INTERPRETED, PARQUET_BATCH: str(parquet_batch_rows(n_columns))}


@contextlib.contextmanager
def collection_settings(spark, n_columns: int):
    """Context manager: while a DataFrame of ``n_columns`` columns, more than whole-stage code generation takes
    (``spark.sql.codegen.maxFields``), is collected, Spark's projections run interpreted
    (``spark.sql.codegen.factoryMode=NO_CODEGEN``) and its Parquet reader makes column batches of fewer rows
    (:func:`parquet_batch_rows`); each setting the session had not set is unset afterwards. The rows are the same.

    Decisions. A row of such a frame goes through a projection Spark generates and compiles for its columns (the
    scan's ``UnsafeProjection``): for 5,000 columns, hundreds of generated methods that Janino compiles and the JVM
    runs cold. The interpreted projection computes the same rows. Measured on the wide suite's 5,000 x 5,000 frame
    (``toArrow`` in a fresh session, 2 cores, load 2-3.6): 16.7, 24.5, 19.0 s generated against 11.9, 12.9, 12.7 s
    interpreted. The row projection reads every row across all the batch's column vectors: 4,096 rows of 5,000
    doubles are 164 MB a batch, 128 rows 5 MB. Measured (``toArrow`` of the suite's frames, three alternated pairs
    of fresh sessions, load 2.4-2.9; docs/benchmarks/2026-12-01.md): 5,000 x 5,000 first collection 8.07 s (6.9-8.3)
    at 4,096 rows against 5.93 s (5.4-6.5) at 128, again in the session 4.85 against 3.84 s; 2,000 x 20,000 first
    17.1 against 16.1 s, again 16.4 against 11.2 s. A session that refuses a setting (serverless compute), or a
    user's own value of it, is left as it is; a narrow frame (whole-stage code) is not touched.
    """
    changed = []
    try:
        wide = n_columns > int(spark.conf.get("spark.sql.codegen.maxFields", "100"))
        for key, value in (wide_frame_settings(n_columns) if wide else {}).items():
            if spark.conf.get(key, None) is None:
                spark.conf.set(key, value)
                changed.append(key)
    except Exception as err:  # a session without the setting: collected as it is
        log.debug("collection settings not made (%s)", one_line(err)[:120])
    try:
        yield
    finally:
        for key in changed:
            try:
                spark.conf.unset(key)
            except Exception as err:  # the session is gone (stopped meanwhile)
                log.debug("%s not restored (%s)", key, one_line(err)[:120])


def collect_arrow(df) -> list:
    """Every record batch of ``df``, on the driver (one Spark job)."""
    if hasattr(df, "toArrow"):
        return df.toArrow().to_batches()
    return df._collect_as_arrow()  # pyspark 3.5 (no toArrow): the same record batches
