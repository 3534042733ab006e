"""A class-data-sharing archive of Spark's classes for the suite's JVMs: each starts in half the CPU.

Sketch
------
The suite starts dozens of Spark JVMs (its sessions, every job, notebook and cluster it runs as a process), and
each loads and verifies some 15,000 classes from the JDK and Spark's jars. HotSpot can map the classes a JVM
loaded from an archive instead (JDK 13+'s dynamic AppCDS: ``-XX:ArchiveClassesAtExit`` writes one as a JVM
exits, ``-XX:SharedArchiveFile`` maps it). Measured here (JDK 17, 2 cores, load 1): a local session's start and
first small jobs 10.6 -> 5.3 s of JVM CPU, 9.4 -> 4.6 s wall; three modules of job processes 74 -> 54 s.

A whole run of a checkout without the archive makes it, started by the controlling process before the numba
warm-ups (tests/prewarm.py; one JVM running a few representative jobs, then writing the archive as it exits:
about 40 s of one core) and not waited for; every process of the run finds it through ``SPARK_SUBMIT_OPTS``
(which spark-submit adds to the driver JVM's options; processes inherit the environment). The archive lives in
the checkout's ``.cache/jvm`` (:func:`folder`), named by the Java and pyspark it was made with. A JVM started
before it is in place, whose class path differs (Spark Connect's server adds its own entries) or whose archive
does not match maps nothing and runs as before: HotSpot checks the archive and says nothing (``-Xshare:auto``,
the default). The code's results do not depend on it. ``SPARK_FR_TEST_JVM_ARCHIVE=0`` turns it off.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ENV = "SPARK_FR_TEST_JVM_ARCHIVE"
DIR_ENV = "SPARK_FR_TEST_JVM_ARCHIVE_DIR"
OPTION = "-XX:SharedArchiveFile="
#: what the archiving JVM runs: the kinds of work the suite's JVMs do (a session's start, Arrow both ways, Python
#: workers, Parquet and CSV, joins, windows, SQL), so that their classes are in the archive
WORKLOAD = r"""
import sys, tempfile
import pandas as pd
from pyspark.sql import SparkSession, Window, functions as F
tmp = tempfile.mkdtemp(prefix="spark_fr_jvm_archive_")
spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
         .config("spark.sql.shuffle.partitions", "2").config("spark.sql.execution.arrow.pyspark.enabled", "true")
         .config("spark.local.dir", tmp + "/local").config("spark.sql.warehouse.dir", tmp + "/warehouse")
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
df = spark.createDataFrame(pd.DataFrame({"k": [1, 2, 3, 1] * 50, "x": [0.5, None, 2.0, 3.0] * 50,
                                         "s": ["a", "b", None, "c"] * 50}))
df.write.mode("overwrite").parquet(tmp + "/p")
df.write.mode("overwrite").option("header", True).csv(tmp + "/c")
p = spark.read.parquet(tmp + "/p")
c = spark.read.option("header", True).option("inferSchema", True).csv(tmp + "/c")
g = p.groupBy("k").agg(F.sum("x").alias("sx"), F.count("*").alias("n"), F.collect_set("s").alias("ss"))
j = c.join(g, "k", "left").withColumn("r", F.row_number().over(Window.partitionBy("k").orderBy("x")))
j.toPandas()
p.mapInArrow(lambda batches: batches, p.schema).toArrow()
p.createOrReplaceTempView("t")
spark.sql("SELECT k, percentile_approx(x, 0.5) AS m FROM t WHERE x IS NOT NULL GROUP BY k ORDER BY k").collect()
p.rdd.map(lambda r: r.k).distinct().collect()
print("JVM", spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid(), flush=True)
spark.stop()
"""


def archive(root: Path) -> Path:
    """The archive's path for the Java and pyspark this process would run: ``<folder>/spark-<key>.jsa``
    (:func:`folder`)."""
    import pyspark

    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else \
        shutil.which("java") or "java"
    made_with = f"{os.path.realpath(java)}|{pyspark.__version__}|{os.path.dirname(pyspark.__file__)}"
    return folder(root) / f"spark-{hashlib.sha256(made_with.encode()).hexdigest()[:16]}.jsa"


def folder(root: Path) -> Path:
    """Where the archives live: ``$SPARK_FR_TEST_JVM_ARCHIVE_DIR``, else the checkout's ``.cache/jvm`` (ignored by
    git).

    Decision: with the checkout, not in a machine's cache: HotSpot maps an archive only for the class path it was
    made with (the very jar files of this virtualenv's pyspark, which a new clone's ``.venv`` does not share), so
    it would serve no other checkout; it goes when the checkout goes."""
    if os.environ.get(DIR_ENV):
        return Path(os.environ[DIR_ENV])
    return root / ".cache" / "jvm"


def use(root: Path, coming: bool = False) -> bool:
    """Point ``SPARK_SUBMIT_OPTS`` at the archive when there is one, or when it is being made (``coming``: a JVM
    started before it is in place runs without it); once. Returns whether the option is set."""
    path = archive(root)
    opts = os.environ.get("SPARK_SUBMIT_OPTS", "")
    if os.environ.get(ENV, "1") == "0" or not (coming or path.is_file()):
        return False
    if OPTION not in opts:
        os.environ["SPARK_SUBMIT_OPTS"] = f"{opts} {OPTION}{path}".strip()
    return True


def wanted(root: Path) -> bool:
    """Not turned off by :data:`ENV`, and no archive yet."""
    return os.environ.get(ENV, "1") != "0" and not archive(root).is_file()


def start(root: Path) -> tuple:
    """Start the archiving JVM (a Python process running :data:`WORKLOAD`); returns what :func:`finish` takes.
    Decision: the run does not wait for it (it would add its 20-40 s to the numba warm-ups'): the JVMs started
    before it is in place (the workers' first sessions) run without it, the later ones (most) map it."""
    path = archive(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_suffix(f".{os.getpid()}.part")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_SUBMIT_OPTS":
           f"{os.environ.get('SPARK_SUBMIT_OPTS', '')} -XX:ArchiveClassesAtExit={part}".strip()}
    proc = subprocess.Popen([sys.executable, "-c", WORKLOAD], cwd=str(root), env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    return proc, part, path, time.perf_counter()


def finish(started: tuple) -> str:
    """Wait for the archiving JVM, put its archive in place (whole, or not at all: one rename); returns a one-line
    summary."""
    proc, part, path, t0 = started
    out, err = proc.communicate()
    jvm = [int(line.split()[1]) for line in out.splitlines() if line.startswith("JVM ")]
    if jvm:
        _wait_for_exit(jvm[0], timeout=120)  # the JVM writes the archive as it exits, after the Python process
    seconds = time.perf_counter() - t0
    if proc.returncode != 0 or not part.is_file():
        part.unlink(missing_ok=True)
        last = (err.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        return f"the JVMs' class archive: not made in {seconds:.0f} s ({last}): the JVMs load their classes"
    os.replace(part, path)
    return f"the JVMs' class archive ({path.stat().st_size >> 20} MB) made in {seconds:.0f} s"


def _wait_for_exit(pid: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:  # gone, or a zombie nobody reaps (a container's first process may not)
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return
        except (OSError, IndexError):
            return
        time.sleep(0.1)
