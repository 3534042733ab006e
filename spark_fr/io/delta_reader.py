"""Who reads a Delta table: Spark's Delta reader or the ``deltalake`` package. One rule for every Delta read.

Sketch
------
:func:`delta_reader` decides, for every reader of Delta tables in spark_fr (a table by path to rank, a relational
schema's Delta source read with Spark, the runs of a rankings table for drift):

* **Spark's Delta reader** when a session is at hand (the run's, else the active one) and it has Delta Lake
  (Databricks; ``spark-submit --packages io.delta:...``; a session spark_fr starts when ``delta-spark`` is
  installed: :mod:`spark_fr.runtime.delta`). :func:`spark_has_delta` finds out by asking Spark to resolve the
  ``delta`` data source (one analysis, no job; the same under Spark Connect), once per session. It applies
  everything a table's protocol asks for and reads on the executors.
* **``deltalake``** otherwise (or with ``SPARK_FR_DELTA_READER=deltalake``), on the driver: it reads the tables it
  reads correctly (:func:`reader_features`: no reader feature, or column mapping by name, deletion vectors and
  ``timestampNtz`` through its query engine) and refuses the others in one line naming what to install, as it
  refuses a local path holding a percent-escape (:func:`deltalake_refuses`), which it would read at another path.

The relational engine that generates features in the driver (:mod:`spark_fr.relational.local_arrow`) has no
session by design: it reads Delta sources with ``deltalake`` under the same checks, and leaves a table they refuse
to the Spark engine.
"""
from __future__ import annotations

import logging
import os
import re

from ..errors import InputError

log = logging.getLogger(__name__)

#: reader features ``deltalake``'s query engine reads correctly (checked against Spark's reader in the tests)
DELTALAKE_FEATURES = frozenset({"columnMapping", "deletionVectors", "timestampNtz"})
ENGINE_FEATURES = frozenset({"columnMapping", "deletionVectors"})  # read by deltalake's query engine only
INSTALL_DELTA = ("install delta-spark (pip install 'spark_fr[delta]', or spark-submit --packages "
                 "io.delta:delta-spark_<spark>_2.13:<version>), or run on Databricks")
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")

_HAS_DELTA: dict = {}


def delta_reader(spark=None) -> str:
    """Who reads a Delta table: ``'spark'`` (Spark's Delta reader) or ``'deltalake'`` (module sketch).

    Parameters
    ----------
    spark : SparkSession or SessionStart, optional
        The run's session (a session still starting is started: it is asked); default: the active one, if any.

    Returns
    -------
    str
        ``'spark'`` when that session has Delta Lake, else ``'deltalake'``.
    """
    session = spark if spark is not None else active_session()
    return "spark" if session is not None and spark_has_delta(session) else "deltalake"


def active_session():
    """The active SparkSession of this thread, or None (pyspark not started)."""
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


def session_of(spark):
    """The SparkSession of a session still starting (:class:`spark_fr.runtime.session.SessionStart`: waits for it),
    or ``spark`` itself."""
    return spark.result() if hasattr(type(spark), "when_ready") else spark


def spark_has_delta(spark) -> bool:
    """Whether the session resolves the ``delta`` data source (its answer is kept for the session).

    Spark is asked for the schema of a path that does not exist: with Delta it answers that there is no table
    there; without, ``DATA_SOURCE_NOT_FOUND``. No job runs; it works the same under Spark Connect.
    ``SPARK_FR_DELTA_READER=deltalake`` makes a session with Delta read (and write) through ``deltalake``.
    """
    if os.environ.get("SPARK_FR_DELTA_READER", "").lower() == "deltalake":
        return False
    spark = session_of(spark)
    key = id(spark)
    if key not in _HAS_DELTA:
        probe = f"/spark_fr-delta-probe-{os.getpid()}-does-not-exist"
        try:
            spark.read.format("delta").load(probe).schema
            _HAS_DELTA[key] = True
        except Exception as err:  # AnalysisException, classic or Connect
            text = str(err)
            _HAS_DELTA[key] = not ("DATA_SOURCE_NOT_FOUND" in text or "Failed to find the data source" in text)
        log.debug("session %s Spark's Delta reader", "has" if _HAS_DELTA[key] else "has no")
    return _HAS_DELTA[key]


def deltalake_refuses(path: str) -> str | None:
    """Why the ``deltalake`` package cannot serve the table at ``path`` (a reason to follow the path in a one-line
    message), or None: a path holding a percent-escape such as ``%41`` (:mod:`spark_fr.io.delta_read`'s sketch)."""
    m = _PERCENT_ESCAPE.search(str(path))
    if m is None:
        return None
    return (f"holds a percent-escape ('{m.group(0)}'), which the deltalake package reads as an escaped character "
            f"(it would read or write another path); read and write it with Spark's Delta reader and writer "
            f"({INSTALL_DELTA}), or choose a path without '%XX'")


def reader_features(dt, path: str) -> set:
    """The reader features of the ``deltalake`` table ``dt`` (column mapping included, which Spark records as reader
    version 2 without listing it); a one-line :class:`InputError` naming what to install for those ``deltalake``
    cannot read correctly. Those in :data:`ENGINE_FEATURES` need its query engine (never ``to_pyarrow_*``, which
    reads mapped columns as nulls)."""
    protocol = dt.protocol()
    configuration = dict(dt.metadata().configuration or {})
    features = set(getattr(protocol, "reader_features", None) or [])
    mapping = configuration.get("delta.columnMapping.mode", "none").lower()
    if mapping not in ("none", ""):
        features.add("columnMapping")
    if protocol.min_reader_version > 3:
        raise InputError(f"{path}: Delta reader version {protocol.min_reader_version} cannot be read without "
                         f"Spark's Delta reader; {INSTALL_DELTA}")
    unsupported = sorted(features - DELTALAKE_FEATURES)
    if mapping == "id":
        unsupported.append("columnMapping (mode id)")
    if unsupported:
        raise InputError(f"{path}: the Delta table uses reader feature(s) {', '.join(unsupported)}, which spark_fr "
                         f"reads only through Spark's Delta reader; {INSTALL_DELTA}")
    return features
