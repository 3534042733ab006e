"""Saving and loading the Estimator and its model on any Hadoop file system path, with Spark's writers.

Layout of a saved model (``path`` may be ``file:///...``, ``dbfs:/...``, ``s3a://...``, ``abfss://...`` or a
plain path; nothing here touches the local file system)::

    path/metadata/   DefaultParamsWriter's JSON line: class, uid, Params, and ``run`` (the run metadata)
    path/ranking/    Parquet: the ranking table (the output contract's columns; ``created_at`` as ISO text) and
                     ``row`` (its order)
    path/features/   Parquet: ``position``, ``feature``, ``column``, ``index``: where each ranked feature lives
                     (:class:`~spark_fr.estimator.vectors.Slot`), in input order (empty, and ``slots: false`` in
                     the metadata, for a model that does not know them)

Models saved before the ``features`` table existed (a single pandas-written ``ranking/part-0.parquet``) load
too; their transform finds the selected features by column name.

Nothing uses ``sparkContext``: the writes are ``createDataFrame(...).write``, the reads ``spark.read``, and
``overwrite()`` goes through Spark Connect's ML helper on a Connect session (pyspark's own ``MLWriter`` calls
the JVM there, which a Connect client does not have).
"""
from __future__ import annotations

import json
import os

import pandas as pd
from pyspark.ml.util import DefaultParamsReader, DefaultParamsWriter, MLReader, MLWriter

from .vectors import Slot

#: format of a saved model (1: pandas-written ranking only; 2: Spark-written ranking and feature slots)
FORMAT = 2


def is_connect(spark) -> bool:
    """Whether ``spark`` is a Spark Connect session (no JVM in this process)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


class _ConnectOverwrite:
    """``overwrite()`` for a session of either kind: pyspark's MLWriter deletes the path through the JVM."""

    def _handleOverwrite(self, path: str) -> None:
        if is_connect(self.sparkSession):
            from pyspark.ml.connect.readwrite import RemoteMLWriter

            RemoteMLWriter.handleOverwrite(path, True)
        else:
            super()._handleOverwrite(path)


class ParamsWriter(_ConnectOverwrite, DefaultParamsWriter):
    """The Estimator's writer: its Params only (``DefaultParamsWriter``), on a session of either kind."""


def _jsonable(value):
    return json.loads(json.dumps(value, default=str))


class ModelWriter(_ConnectOverwrite, MLWriter):
    """Writes a :class:`~spark_fr.estimator.FeatureRankingModel` (module docstring)."""

    def __init__(self, instance):
        super().__init__()
        self.instance = instance

    def saveImpl(self, path: str) -> None:
        from pyspark.sql import types as T

        spark, model = self.sparkSession, self.instance
        _check_served(spark, path)
        table = model._table.copy()
        DefaultParamsWriter.saveMetadata(model, path, spark, extraMetadata={
            "run": _jsonable(model.metadata), "format": FORMAT, "dtypes": {c: str(t) for c, t in table.dtypes.items()},
            "slots": model._slots is not None})
        fields = [T.StructField(c, T.StringType()) for c in table.columns]
        if len(table.columns):
            from ..ranking import Ranking

            fields = [T.StructField(f.name, T.StringType(), f.nullable) if f.name == "created_at" else f
                      for f in Ranking(table, {})._spark_fields()]
            table["created_at"] = [pd.Timestamp(t).isoformat() for t in table["created_at"]]
            table["importance_std"] = table["importance_std"].astype(object).where(table["importance_std"].notna(),
                                                                                   None)
        table["row"] = range(len(table))
        schema = T.StructType([*fields, T.StructField("row", T.LongType(), False)])
        spark.createDataFrame(table[[f.name for f in schema.fields]], schema).write.parquet(os.path.join(path, "ranking"))
        slots = pd.DataFrame([(p, s.name, s.column, s.index) for p, s in enumerate(model._slots or ())],
                             columns=["position", "feature", "column", "index"]).astype({"index": object})
        slots["index"] = slots["index"].where(slots["index"].notna(), None)
        spark.createDataFrame(slots, T.StructType([
            T.StructField("position", T.LongType(), False), T.StructField("feature", T.StringType(), False),
            T.StructField("column", T.StringType(), False), T.StructField("index", T.LongType(), True)])
        ).write.parquet(os.path.join(path, "features"))


def _check_served(spark, path: str) -> None:
    """A model path at a URI must have a file system (:mod:`spark_fr.io.locations`): a one-line error before
    anything is written, never Spark's stack trace (on Spark Connect the server's file systems decide)."""
    from ..io.filesystems import files_for
    from ..io.locations import locate
    from ..runtime.engine import is_connect

    loc = locate(path, "model path")
    if not loc.local and not is_connect(spark):
        files_for(loc, spark, "model path")


class ModelReader(MLReader):
    """Reads what :class:`ModelWriter` wrote (and format 1)."""

    def __init__(self, cls):
        super().__init__()
        self.cls = cls

    def load(self, path: str):
        spark = self.sparkSession
        meta = DefaultParamsReader.loadMetadata(path, spark)
        table = spark.read.parquet(os.path.join(path, "ranking")).toPandas()
        slots = None
        if meta.get("format", 1) < 2 and "created_at" in table.columns:  # read back in the session's time zone
            zone = spark.conf.get("spark.sql.session.timeZone")
            table["created_at"] = table["created_at"].dt.tz_localize(zone).dt.tz_convert("UTC").astype(
                "datetime64[us, UTC]")
        if meta.get("format", 1) >= 2:
            table = table.sort_values("row").drop(columns="row").reset_index(drop=True)
            if "created_at" in table.columns:
                table["created_at"] = pd.to_datetime(table["created_at"], utc=True, format="ISO8601")
            table = table.astype(meta.get("dtypes", {}))
            if meta.get("slots", True):
                rows = spark.read.parquet(os.path.join(path, "features")).toPandas().sort_values("position")
                slots = [Slot(f, c, None if pd.isna(i) else int(i))
                         for f, c, i in zip(rows["feature"], rows["column"], rows["index"])]
        model = self.cls(table, meta.get("run", {}), slots)
        model._resetUid(meta["uid"])
        DefaultParamsReader.getAndSetParams(model, meta)
        return model
