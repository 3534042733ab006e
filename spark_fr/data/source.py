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

import logging
import re
from abc import ABC, abstractmethod

from ..runtime.engine import engine_for
from ..runtime.progress import Progress
from .columns import safe_select

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
    """A Spark DataFrame as a batch source; ``units``: the logical columns it holds (the total of the collection's
    progress; default: the DataFrame's columns)."""

    def __init__(self, df, extra=(), units: int | None = None):
        self.df = df
        self.extra = tuple(extra)
        self.units = units
        self._cached = None

    def narrow(self, columns):
        narrow, cols = safe_select(self.df, columns, self.extra)
        return FrameSource(narrow, units=len(cols)), cols

    def size_estimate(self):
        try:
            if type(self.df).__module__.startswith("pyspark.sql.connect"):
                size = plan_size(self.df._explain_string(mode="cost"))
            else:
                size = int(self.df._jdf.queryExecution().optimizedPlan().stats().sizeInBytes())
        except Exception:  # no statistics
            return None
        return size if size is not None and 0 <= size < 2 ** 62 else None

    def driver_batches(self):
        """Every batch, collected on the driver by one Spark job (``toArrow``), which reports its progress against
        the columns as the passes after it do: ``collecting: 60 / 121 columns (50 %), ...`` (the columns x the
        fraction of its tasks done; a collection shorter than the reporting interval logs nothing)."""
        units = self.units if self.units is not None else len(self.df.columns)
        with Progress(units, "collecting", unit="columns", brief=True) as progress, \
                engine_for(self.df.sparkSession).tracked(progress, units):
            if hasattr(self.df, "toArrow"):
                return self.df.toArrow().to_batches()
            return self.df._collect_as_arrow()  # pyspark 3.5 (no toArrow): the same record batches

    def map(self, spark, fn):
        return engine_for(spark).from_frame(self.df, fn)

    def cache(self):
        from pyspark import StorageLevel

        try:
            self._cached = self.df.persist(StorageLevel.MEMORY_AND_DISK)
        except Exception as err:  # a session that caches nothing (serverless compute): read it again instead
            log.info("input not persisted (%s): read again for each pass", str(err).splitlines()[0][:120])
            return
        self.df = self._cached

    def release(self):
        if self._cached is not None:
            self._cached.unpersist()
            self._cached = None
