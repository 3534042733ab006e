"""Where the rows of an input come from: Arrow record batches, collected on the driver or read in Spark tasks.

Sketch
------
The statistics and encoding passes (:mod:`spark_fr.data.prepare`, :mod:`spark_fr.data.blocks`) only ever
see Arrow record batches of the columns they need. A :class:`BatchSource` provides them in two ways:

* ``driver_batches(names)``: every batch on the driver (small inputs: one read, no further job);
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

import pickle
from abc import ABC, abstractmethod

import pyarrow as pa
from pyspark import StorageLevel

from .columns import safe_select

_PAYLOAD = "payload binary"


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
        """An RDD of the objects ``fn`` yields from each partition's batches (computed by Spark tasks)."""

    def cache(self) -> None:
        """Keep the input for several passes (no-op when reading it again is cheap)."""

    def release(self) -> None:
        """Undo :meth:`cache`."""


class FrameSource(BatchSource):
    """A Spark DataFrame as a batch source."""

    def __init__(self, df, extra=()):
        self.df = df
        self.extra = tuple(extra)
        self._cached = None

    def narrow(self, columns):
        narrow, cols = safe_select(self.df, columns, self.extra)
        return FrameSource(narrow), cols

    def size_estimate(self):
        try:
            size = int(self.df._jdf.queryExecution().optimizedPlan().stats().sizeInBytes())
        except Exception:  # not a JVM DataFrame (Spark Connect) or no statistics
            return None
        return size if 0 <= size < 2 ** 62 else None

    def driver_batches(self):
        if hasattr(self.df, "toArrow"):
            return self.df.toArrow().to_batches()
        return self.df._collect_as_arrow()  # pyspark 3.5 (no toArrow): the same record batches

    def map(self, spark, fn):
        def wrap(batches):
            for obj in fn(batches):
                yield pa.RecordBatch.from_arrays([pa.array([pickle.dumps(obj)], pa.binary())], names=["payload"])

        return self.df.mapInArrow(wrap, _PAYLOAD).rdd.map(lambda row: pickle.loads(row["payload"]))

    def cache(self):
        self._cached = self.df.persist(StorageLevel.MEMORY_AND_DISK)
        self.df = self._cached

    def release(self):
        if self._cached is not None:
            self._cached.unpersist()
            self._cached = None
