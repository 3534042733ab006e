"""Delta Lake in a session spark_fr starts itself: the ``delta`` extra (``pip install 'spark_fr[delta]'``).

Sketch
------
A session that exists (a notebook, Databricks, ``spark-submit --packages io.delta:...``) is used as it is:
whether it reads Delta is found out by asking it (:func:`spark_fr.io.delta_reader.spark_has_delta`). A session
spark_fr starts (``python jobs/rank.py``, :func:`spark_fr.runtime.session.get_spark`) gets Delta Lake when the
``delta-spark`` package is installed: its jars come from Maven Central through Spark's own resolver
(``spark.jars.packages``, the artifact ``io.delta:delta-spark_<spark major.minor>_2.13:<delta-spark version>``
as ``delta.configure_spark_with_delta_pip`` names it; 33 jars, about 45 s the first time, then from the Ivy
cache in ``~/.ivy2*``), with Delta's SQL extension and catalog. ``SPARK_FR_DELTA=0`` leaves it out (a run
without network access to Maven; ``deltalake`` then reads and writes Delta tables).

Measured versions: ``delta-spark==4.4.0`` with pyspark 4.2.0 (``io.delta:delta-spark_4.2_2.13:4.4.0``);
4.4.1's jar is not published (the session dies at start), 4.3.x needs pyspark 4.1.
"""
from __future__ import annotations

import os

EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"


def delta_package(delta_version: str, spark_version: str | None = None) -> str:
    """The Maven coordinate of Delta's Spark jar for a delta-spark version and a Spark version."""
    if spark_version is None:
        import pyspark

        spark_version = pyspark.__version__
    minor = ".".join(spark_version.split(".")[:2])
    return f"io.delta:delta-spark_{minor}_2.13:{delta_version}"


def installed_delta_version() -> str | None:
    """The installed ``delta-spark`` version (None: not installed, or ``SPARK_FR_DELTA=0``)."""
    if os.environ.get("SPARK_FR_DELTA", "1").strip() == "0":
        return None
    from importlib import metadata

    try:
        return metadata.version("delta-spark")
    except metadata.PackageNotFoundError:
        return None


def delta_conf(delta_version: str | None = None, conf: dict | None = None) -> dict:
    """The Spark configuration that adds Delta Lake to a new session ({} without a delta-spark version).

    Parameters
    ----------
    delta_version : str, optional
        Default: the installed ``delta-spark`` (:func:`installed_delta_version`).
    conf : dict, optional
        The session's other configuration: its ``spark.jars.packages`` and ``spark.sql.extensions`` are kept.
    """
    delta_version = delta_version or installed_delta_version()
    if not delta_version:
        return {}
    conf = conf or {}
    packages = [p for p in str(conf.get("spark.jars.packages", "")).split(",") if p.strip()]
    extensions = [e for e in str(conf.get("spark.sql.extensions", "")).split(",") if e.strip()]
    return {"spark.jars.packages": ",".join(dict.fromkeys(packages + [delta_package(delta_version)])),
            "spark.sql.extensions": ",".join(dict.fromkeys(extensions + [EXTENSION])),
            "spark.sql.catalog.spark_catalog": CATALOG}


#: for a local session: a table's snapshot state in a few tasks (Delta's default, 50, costs 50 tasks per first read)
LOCAL_CONF = {"spark.databricks.delta.snapshotPartitions": "4"}
