"""Shipping spark_fr to a cluster: ``jobs/package.py`` builds the ``--py-files`` archive (sources + numba cache),
and ``spark-submit --master local-cluster[2,1,2048]`` with that archive and an executor Python that has numpy,
numba, pandas, pyarrow and scipy but not spark_fr ranks ENB exactly as a local run does, and its executors
compile no kernel (they load the shipped cache). Real processes, real archive, no mocks.

The bare executor Python is a venv (``--without-pip``) whose site-packages links the installed files of those
five distributions and what they require, nothing else; pyspark reaches the executors as on a cluster, from
the Spark installation (``$SPARK_HOME/python/lib/pyspark.zip``). Cost: ~60 s with a cold numba cache for the
archive (the checkout's cache is reused when the suite compiled it first), ~40 s for the local-cluster run.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pandas as pd
import pytest

from tests.paths import ROOT, SHARED

ENB = SHARED / "datasets" / "mtr_enb" / "enb.arff"
EXECUTOR_DISTRIBUTIONS = ("numpy", "numba", "pandas", "pyarrow", "scipy")
TREES = 10


def _requirements(dist) -> list:
    names = []
    for req in dist.requires or []:
        if "extra ==" in req.replace('"', "'").replace("extra=='", "extra =='"):
            continue
        names.append(re.match(r"[A-Za-z0-9_.\-]+", req).group(0))
    return names


def closure(names) -> list:
    """The installed distributions ``names`` need (their non-optional requirements, recursively)."""
    seen, todo = {}, list(names)
    while todo:
        name = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        seen[key] = dist
        todo += _requirements(dist)
    return list(seen.values())


def bare_python(where: Path) -> Path:
    """A venv whose site-packages links exactly the executor distributions' installed files."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    site = next(where.glob("lib/python3.*/site-packages"))
    here = Path(metadata.distribution("numpy").locate_file(""))
    for dist in closure(EXECUTOR_DISTRIBUTIONS):
        tops = {Path(f).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for top in sorted(tops - {"__pycache__"}):
            if (here / top).exists() and not (site / top).exists():
                (site / top).symlink_to(here / top)
    return where / "bin" / "python"


def spark_submit() -> Path:
    path = Path(sys.executable).parent / "spark-submit"
    assert path.exists(), f"spark-submit not found beside {sys.executable}"
    return path


def ranking(out: Path) -> pd.DataFrame:
    table = pd.read_csv(out / "ranking.csv")
    return table[["feature", "score", "target", "importance", "rank", "importance_std"]].sort_values(
        ["score", "target", "rank"]).reset_index(drop=True)


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    out = tmp_path_factory.mktemp("package") / "spark_fr.zip"
    run = subprocess.run([sys.executable, str(ROOT / "jobs" / "package.py"), "--output", str(out), "--methods",
                          "ensemble"],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    return out


def test_archive_holds_sources_and_a_numba_cache(archive):
    names = zipfile.ZipFile(archive).namelist()
    sources = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "spark_fr").rglob("*.py")
                     if "__pycache__" not in p.parts)
    assert sorted(n for n in names if n.endswith(".py")) == sources
    cache = [n for n in names if n.startswith("spark_fr/_numba_cache/")]
    assert any(n.startswith("spark_fr/_numba_cache/pct/grow.") and n.endswith(".nbc") for n in cache)
    assert all(n.endswith((".nbi", ".nbc")) and f".py{sys.version_info[0]}{sys.version_info[1]}" in n
               for n in cache)


def test_zipped_spark_fr_loads_the_shipped_cache_and_never_overwrites(archive, tmp_path):
    probe = ("import json, spark_fr\nfrom spark_fr.runtime import numba_cache\nfrom spark_fr.ensemble.spark import "
             "warm_up_kernels\nwarm_up_kernels()\nprint(json.dumps(numba_cache.install()))")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "NUMBA"))}
    env.update(PYTHONPATH=str(archive), NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    shipped = {n[len("spark_fr/_numba_cache/"):]: zipfile.ZipFile(archive).read(n)
               for n in zipfile.ZipFile(archive).namelist() if n.startswith("spark_fr/_numba_cache/")}
    first, second = (json.loads(subprocess.run([sys.executable, "-c", probe], env=env, cwd=tmp_path, check=True,
                                               capture_output=True, text=True).stdout.splitlines()[-1])
                     for _ in range(2))
    assert first["zip"] == str(archive) and first["unpacked"] == len(shipped) and second["unpacked"] == 0
    root = Path(first["root"])
    assert root.parent == tmp_path / "cache" and root.name.startswith("spark_fr-")
    found = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    assert found == shipped  # the tree kernels were loaded, none compiled (numba would rewrite an index)


def test_package_refuses_a_name_python_cannot_import(tmp_path):
    run = subprocess.run([sys.executable, str(ROOT / "jobs" / "package.py"), "--output", str(tmp_path / "a.whl")],
                         capture_output=True, text=True)
    assert run.returncode != 0
    assert run.stderr.strip().startswith("error: --output") and len(run.stderr.strip().splitlines()) == 1


def _package(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "jobs" / "package.py"), *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def _tree(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() else None) for p in folder.rglob("*")}


@pytest.mark.parametrize("output, options, message", [
    ("a_file/spark_fr.zip", ["--no-numba-cache"],
     "error: --output a_file/spark_fr.zip: {tmp}/a_file is a file, not a folder"),
    ("a_folder.zip", ["--no-numba-cache"], "error: --output a_folder.zip: {tmp}/a_folder.zip is a directory"),
    ("someone_elses.zip", ["--no-numba-cache"],
     "error: --output someone_elses.zip: {tmp}/someone_elses.zip exists and is not an archive of spark_fr's"),
    ("dbfs:/ml/spark_fr.zip", ["--no-numba-cache"],
     "error: --output dbfs:/ml/spark_fr.zip: the archive is written on this machine: give a local path"),
    ("new/spark_fr.zip", ["--python", "no/such/python"], "error: --python no/such/python: no such executable"),
    ("new/deeper/spark_fr.zip", ["--python", "{tmp}/a_file"], "error: --python {tmp}/a_file: no such executable"),
])
def test_bad_paths_are_one_line_before_any_work_and_leave_everything_as_it_was(tmp_path, output, options, message):
    """Issue 37 (10): bad paths gave tracebacks, a temporary archive left behind, a local folder named 'dbfs:'
    and a replaced file that was not ours; now one line, exit code 2, and the folder as it was."""
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "a_folder.zip").mkdir()
    (tmp_path / "someone_elses.zip").write_bytes(b"PK not ours")
    before = _tree(tmp_path)
    run = _package("--output", output, *[o.format(tmp=tmp_path) for o in options], "--methods", "ensemble",
                   cwd=tmp_path)
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2 and len(lines) == 1 and lines[0].startswith(message.format(tmp=tmp_path)), run.stderr
    assert run.stdout == "" and _tree(tmp_path) == before


def test_a_failed_build_removes_its_temporary_archive_and_the_folders_it_made(tmp_path):
    """A --python that runs but cannot compile the kernels (no numba): one line, exit code 1, nothing left."""
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    before = _tree(tmp_path)
    run = _package("--output", "new/deeper/spark_fr.zip", "--python", bare / "bin" / "python", "--methods",
                   "ensemble", cwd=tmp_path)
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 1 and len(lines) == 1, run.stderr
    assert lines[0].startswith(f"error: compiling the kernels with {bare / 'bin' / 'python'} failed: ") and \
        "numba" in lines[0]
    assert _tree(tmp_path) == before


def test_an_archive_of_ours_is_replaced_and_a_file_uri_is_a_local_path(tmp_path):
    first = _package("--output", (tmp_path / "dist" / "spark_fr.zip").as_uri(), "--no-numba-cache", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    again = _package("--output", "dist/spark_fr.zip", "--no-numba-cache", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert sorted(p.name for p in (tmp_path / "dist").iterdir()) == ["spark_fr.zip"]
    names = zipfile.ZipFile(tmp_path / "dist" / "spark_fr.zip").namelist()
    assert "spark_fr/__init__.py" in names and all(n.startswith("spark_fr/") for n in names)


@pytest.mark.cluster
def test_local_cluster_with_the_archive_and_a_bare_executor_python(archive, tmp_path):
    python = bare_python(tmp_path / "bare")
    probe = subprocess.run([str(python), "-c", "import numba, numpy, pandas, pyarrow, scipy\n"
                            "try:\n import spark_fr\nexcept ImportError:\n print('no spark_fr')"],
                           capture_output=True, text=True, cwd=tmp_path, env={"PATH": os.environ["PATH"]})
    assert probe.stdout.strip() == "no spark_fr", probe.stderr

    job = tmp_path / "job" / "rank.py"  # beside no spark_fr: the driver imports it from the archive too
    job.parent.mkdir()
    shutil.copy(ROOT / "jobs" / "rank.py", job)
    executor_cache = tmp_path / "executor-numba"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK", "SPARK_", "PYTHON", "NUMBA"))}
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", SPARK_LOCAL_IP="127.0.0.1",
               SPARK_WORKER_DIR=str(tmp_path / "work"), NUMBA_CACHE_DIR=str(tmp_path / "driver-numba"),
               SPARK_FR_DRIVER_MAX_SECONDS="0")  # every tree in a Spark task on the executors
    cmd = [str(spark_submit()), "--master", "local-cluster[2,1,2048]", "--py-files", str(archive),
           "--conf", f"spark.pyspark.python={python}", "--conf", f"spark.pyspark.driver.python={sys.executable}",
           "--conf", f"spark.executorEnv.NUMBA_CACHE_DIR={executor_cache}",
           "--conf", "spark.ui.enabled=false", "--conf", "spark.ui.showConsoleProgress=false",
           "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.driver.bindAddress=127.0.0.1",
           "--conf", f"spark.local.dir={tmp_path / 'local'}",
           "--driver-java-options", f"-Djava.io.tmpdir={tmp_path}",
           str(job), "--input", str(ENB), "--targets", "Y1,Y2", "--trees", str(TREES), "--seed", "1",
           "--output", str(tmp_path / "cluster"), "--output-format", "csv"]
    run = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    run_info = json.loads((tmp_path / "cluster" / "run.json").read_text())
    assert run_info["spark_master"] == "local-cluster[2,1,2048]" and run_info["trees_on_driver"] == 0

    # the local run as a user makes it: python jobs/rank.py, small work on the driver's threads (same bits)
    local_env = {k: v for k, v in os.environ.items() if k != "SPARK_FR_DRIVER_MAX_SECONDS"}
    local = subprocess.run([sys.executable, str(ROOT / "jobs" / "rank.py"), "--input", str(ENB), "--targets",
                            "Y1,Y2", "--trees", str(TREES), "--seed", "1", "--output", str(tmp_path / "local"),
                            "--output-format", "csv"], capture_output=True, text=True, env=local_env, cwd=tmp_path)
    assert local.returncode == 0, local.stderr[-3000:]
    pd.testing.assert_frame_equal(ranking(tmp_path / "cluster"), ranking(tmp_path / "local"), check_exact=True)

    shipped = {n[len("spark_fr/_numba_cache/"):]: zipfile.ZipFile(archive).read(n)
               for n in zipfile.ZipFile(archive).namelist() if n.startswith("spark_fr/_numba_cache/")}
    roots = list(executor_cache.glob("spark_fr-*"))
    assert len(roots) == 1, roots
    found = {p.relative_to(roots[0]).as_posix(): p.read_bytes() for p in roots[0].rglob("*") if p.is_file()}
    assert found == shipped, "the executors compiled: " + ", ".join(sorted(
        n for n in found if found[n] != shipped.get(n)))
