"""Getting a SparkSession that works here: the venv's Python on the workers, loopback in local mode."""
from __future__ import annotations

import os
import sys


def _under_spark_submit() -> bool:
    return "PYSPARK_GATEWAY_PORT" in os.environ


def get_spark(master: str | None = None, app_name: str = "spark_fr", conf: dict | None = None):
    """The active SparkSession, or a new one.

    Under ``spark-submit`` the submitted configuration is used as is. Started from plain Python, the
    session is local (``local[*]`` unless ``master`` says otherwise), binds to 127.0.0.1, and its Python
    workers run this interpreter (``PYSPARK_PYTHON = sys.executable``), so the packages of the virtual
    environment are found.

    Parameters
    ----------
    master : str, optional
        Spark master URL when not under spark-submit (default ``local[*]``).
    app_name : str
    conf : dict, optional
        Extra Spark configuration.

    Returns
    -------
    pyspark.sql.SparkSession
    """
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    builder = SparkSession.builder.appName(app_name)
    if _under_spark_submit():
        from pyspark import SparkConf

        submitted = SparkConf().get("spark.master", "")
        if submitted.startswith("local"):
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    else:
        master = master or "local[*]"
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        if master.startswith("local"):
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            builder = (builder.config("spark.driver.bindAddress", "127.0.0.1")
                       .config("spark.driver.host", "127.0.0.1"))
        builder = (builder.master(master)
                   .config("spark.ui.showConsoleProgress", "false")
                   .config("spark.sql.shuffle.partitions", "8")
                   .config("spark.driver.memory", os.environ.get("SPARK_FR_DRIVER_MEMORY", "4g")))
    builder = builder.config("spark.sql.execution.arrow.pyspark.enabled", "true")
    for k, v in (conf or {}).items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    return spark
