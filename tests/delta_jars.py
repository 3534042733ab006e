"""Fetch Delta Lake's jars into Ivy's cache while the numba warm-ups run, before the suite's workers start.

Sketch
------
The suite's Delta session (``tests/conftest.py``'s ``delta`` fixture) names Delta's package
(``spark.jars.packages``); Spark's launcher resolves it with Ivy, from Maven Central into Ivy's cache
(``~/.ivy2.5.2``) when the cache does not hold it: 33 jars, 174 MB. On a fresh machine (CI's) that download was
most of the fixture's setup (measured, 2 cores: the session's start 11 s with the cache, 33 s without it; 90 s in
a loaded CI run), time the worker holding the Delta modules spends waiting on the network. Here the controlling
process of a whole run whose numba cache is cold (``tests/prewarm.py``: a fresh clone) resolves the package with
``spark-submit`` of an empty script, beside the warm-ups (which keep both cores busy for a minute or more; the
download mostly waits), and waits for it before the workers start, so no worker's Ivy resolves the same package
at the same time. Nothing happens when the cache already holds Delta's jar; a failed fetch is reported and
ignored (the fixture then resolves it, or fails saying why).
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: Ivy's default cache of Spark 4's launcher (``spark.jars.ivy`` unset)
IVY_HOME = Path.home() / ".ivy2.5.2"


def cached(package: str, ivy_home: Path = IVY_HOME) -> bool:
    """Whether Ivy's cache holds the jar of ``package`` (``group:artifact:version``)."""
    group, artifact, version = package.split(":")
    return (ivy_home / "jars" / f"{group}_{artifact}-{version}.jar").is_file()


def start(package: str):
    """Start resolving ``package`` (``spark-submit --packages`` of an empty script); None when the cache holds it.
    Returns ``(process, started, script)``."""
    if cached(package):
        return None
    spark_submit = Path(sys.executable).parent / "spark-submit"
    if not spark_submit.exists():
        return None
    script = tempfile.NamedTemporaryFile("w", suffix=".py", prefix="spark_fr_delta_fetch_", delete=False)
    script.close()
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    proc = subprocess.Popen([str(spark_submit), "--packages", package, "--master", "local[1]", script.name],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    return proc, time.perf_counter(), script.name


def finish(started, timeout: float = 600.0) -> str | None:
    """Wait for the fetch :func:`start` began; a one-line summary (None when nothing was started)."""
    if started is None:
        return None
    proc, t0, script = started
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        err = f"no answer in {timeout:.0f} s"
    finally:
        Path(script).unlink(missing_ok=True)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        last = (err or "").strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        return (f"Delta's jars not fetched before the workers ({seconds:.0f} s: {last[0]}): the Delta session "
                "fetches them")
    return f"Delta's jars fetched into Ivy's cache beside the warm-ups: {seconds:.0f} s"
