"""A fresh installation's first run (issue 36, "Cold start"): the wheel ``jobs/package.py --wheel`` builds (the
kernels' numba cache inside, compiled for any x86-64) is installed into a new virtualenv, and the README's job run
there twice with an empty user cache costs at most 10 s of CPU more the first time than the second, compiles no
kernel (no "compiling spark_fr's numba kernels" line) and ranks as this checkout does, bit for bit; and a
``local-cluster`` whose executors start with an empty numba cache loads the wheel's kernels instead of compiling.

Builds a virtualenv from the package registry (pyspark and the rest, pinned by tests/constraints.txt; pip's cache
makes repeats faster) and compiles the ensemble's kernels once: minutes, so only with
``SPARK_FR_CHECK_ENVIRONMENTS=1`` (the ``environment`` marker; docs/testing.md):

    SPARK_FR_CHECK_ENVIRONMENTS=1 python -m pytest -q tests/end_to_end/test_cold_start.py
"""
import json
import os
import resource
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from tests.paths import ROOT, SHARED

pytestmark = [pytest.mark.environment,
              pytest.mark.skipif(os.environ.get("SPARK_FR_CHECK_ENVIRONMENTS") != "1",
                                 reason="builds a virtualenv from the registry: SPARK_FR_CHECK_ENVIRONMENTS=1 runs it")]

ENB = SHARED / "datasets" / "mtr_enb" / "enb.arff"
README_JOB = ["--input", str(ENB), "--targets", "Y1,Y2", "--trees", "100", "--seed", "1"]
SHIPPED = "spark_fr/_numba_cache/"
COMPILING = "compiling spark_fr's numba kernels"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(the new virtualenv's Python, the wheel's shipped cache files {name: bytes}, a folder for jobs)."""
    base = tmp_path_factory.mktemp("cold_start")
    build = subprocess.run([sys.executable, str(ROOT / "jobs" / "package.py"), "--wheel", "--output",
                            str(base / "dist"), "--methods", "ensemble"], capture_output=True, text=True, cwd=base)
    assert build.returncode == 0, build.stderr[-3000:]
    wheel = next((base / "dist").glob("spark_fr-*.whl"))
    subprocess.run([sys.executable, "-m", "venv", str(base / "venv")], check=True)
    python = base / "venv" / "bin" / "python"
    pip = subprocess.run([str(python), "-m", "pip", "install", "-q", "-c", str(ROOT / "tests" / "constraints.txt"),
                          str(wheel), "pyspark"], capture_output=True, text=True)
    assert pip.returncode == 0, pip.stderr[-3000:]
    with zipfile.ZipFile(wheel) as whl:
        shipped = {n[len(SHIPPED):]: whl.read(n) for n in whl.namelist() if n.startswith(SHIPPED)}
    job = base / "job" / "rank.py"  # beside no spark_fr: the installed one is imported
    job.parent.mkdir()
    shutil.copy(ROOT / "jobs" / "rank.py", job)
    return python, shipped, job


def fresh_env(home: Path, python: Path) -> dict:
    """The environment of a new machine's user: an empty home (numba's user cache ~/.cache/numba), no NUMBA_*."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYSPARK", "SPARK_", "PYTHON", "NUMBA", "VIRTUAL_ENV", "XDG_"))}
    home.mkdir(parents=True, exist_ok=True)
    env.update(HOME=str(home), SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=str(python),
               PATH=f"{python.parent}{os.pathsep}{env.get('PATH', '')}")
    return env


def timed(cmd, **kw) -> tuple:
    """Run ``cmd``; (the completed process, its CPU seconds and its children's, user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert run.returncode == 0, run.stderr[-3000:]
    return run, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def ranking(out: Path) -> pd.DataFrame:
    table = pd.read_csv(out / "ranking.csv")
    return table[["feature", "score", "target", "importance", "rank", "importance_std"]].sort_values(
        ["score", "target", "rank"]).reset_index(drop=True)


def test_the_first_run_of_a_fresh_wheel_costs_at_most_10_s_of_cpu_more_than_the_second(installed, tmp_path):
    python, shipped, job = installed
    env = fresh_env(tmp_path / "home", python)
    runs = []
    for i in (1, 2):
        runs.append(timed([python, job, *README_JOB, "--output", tmp_path / f"run{i}", "--output-format", "csv"],
                          env=env, cwd=tmp_path))
    (first, first_cpu), (second, second_cpu) = runs
    print(f"first run {first_cpu:.1f} s of CPU, second {second_cpu:.1f} s")
    assert COMPILING not in first.stderr + second.stderr, first.stderr[-2000:]
    assert first_cpu - second_cpu <= 10, (first_cpu, second_cpu)
    roots = list((tmp_path / "home" / ".cache" / "numba").glob("spark_fr-*"))
    assert len(roots) == 1, roots  # the shipped cache, copied into the user's cache
    assert {p.relative_to(roots[0]).as_posix() for p in roots[0].rglob("*") if p.is_file()} >= set(shipped)

    here = timed([sys.executable, ROOT / "jobs" / "rank.py", *README_JOB, "--output", tmp_path / "checkout",
                  "--output-format", "csv"], cwd=tmp_path)[0]  # this checkout, its kernels for this machine's CPU
    assert here.returncode == 0
    pd.testing.assert_frame_equal(ranking(tmp_path / "run1"), ranking(tmp_path / "checkout"), check_exact=True)


def test_local_cluster_executors_with_no_cache_load_the_wheels_kernels(installed, tmp_path):
    python, shipped, job = installed
    env = fresh_env(tmp_path / "home", python)
    env.update(SPARK_WORKER_DIR=str(tmp_path / "work"), SPARK_FR_DRIVER_MAX_SECONDS="0")  # every tree on executors
    executor_cache = tmp_path / "executor-numba"
    cmd = [python.parent / "spark-submit", "--master", "local-cluster[2,1,2048]",
           "--conf", f"spark.pyspark.python={python}", "--conf", f"spark.pyspark.driver.python={python}",
           "--conf", f"spark.executorEnv.NUMBA_CACHE_DIR={executor_cache}",
           "--conf", "spark.ui.enabled=false", "--conf", "spark.ui.showConsoleProgress=false",
           "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.driver.bindAddress=127.0.0.1",
           "--conf", f"spark.local.dir={tmp_path / 'local'}", "--driver-java-options", f"-Djava.io.tmpdir={tmp_path}",
           job, "--input", ENB, "--targets", "Y1,Y2", "--trees", "10", "--seed", "1",
           "--output", tmp_path / "cluster", "--output-format", "csv"]
    run, cpu = timed(cmd, env=env, cwd=tmp_path, timeout=900)
    info = json.loads((tmp_path / "cluster" / "run.json").read_text())
    assert info["spark_master"] == "local-cluster[2,1,2048]" and info["trees_on_driver"] == 0
    assert COMPILING not in run.stderr, run.stderr[-2000:]
    roots = list(executor_cache.glob("spark_fr-*"))
    assert len(roots) == 1, roots
    found = {p.relative_to(roots[0]).as_posix(): p.read_bytes() for p in roots[0].rglob("*") if p.is_file()}
    assert found == shipped, "the executors compiled: " + ", ".join(sorted(
        n for n in found if found[n] != shipped.get(n)))
