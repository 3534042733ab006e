"""Shipping spark_fr to a cluster: ``jobs/package.py`` builds the ``--py-files`` archive (sources + numba cache),
and ``spark-submit --master local-cluster[2,1,2048]`` with that archive and an executor Python that has numpy,
numba, pandas, pyarrow and scipy but not spark_fr ranks ENB exactly as a local run does, and its executors
compile no kernel (they load the shipped cache). Real processes, real archive, no mocks.

The bare executor Python is a venv (``--without-pip``) whose site-packages links the installed files of those
five distributions and what they require, nothing else; pyspark reaches the executors as on a cluster, from
the Spark installation (``$SPARK_HOME/python/lib/pyspark.zip``). Cost: ~60 s with a cold numba cache for the
archive (the checkout's cache is reused when the suite compiled it first), ~40 s for the local-cluster run.

The wheel (issue 35): built once per session (``pip wheel --no-deps``), it holds the package, its shipped configs
and three console scripts; installed with ``pyspark-client`` into a new venv it runs the Databricks job of
``jobs/databricks/scheduled_job.json`` task by task, as the job runs them (against the suite's Spark Connect
server); with ``SPARK_FR_CHECK_ENVIRONMENTS=1`` also in venvs whose every package pip installs (a pyspark 4.1
runtime, a ``pyspark-client``-only environment). Costs: in the test functions' docstrings.
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


def link_distributions(site: Path, names) -> None:
    """Link into ``site`` the installed files (and dist-info) of ``names`` and of what they require, from this
    Python's site-packages; a top-level name ``site`` has already is left as it is."""
    here = Path(metadata.distribution("numpy").locate_file(""))
    for dist in closure(names):
        tops = {Path(f).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for top in sorted(tops - {"__pycache__"}):
            if (here / top).exists() and not (site / top).exists():
                (site / top).symlink_to(here / top)


def bare_python(where: Path) -> Path:
    """A venv whose site-packages links exactly the executor distributions' installed files."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    link_distributions(next(where.glob("lib/python3.*/site-packages")), EXECUTOR_DISTRIBUTIONS)
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
    # --cpu host: the suite's own cache (this machine's CPU) seeds the build, as before issue 36; the portable
    # target (the default) is tests/runtime/test_numba_cache.py's and, built in full, test_cold_start.py's
    run = subprocess.run([sys.executable, str(ROOT / "jobs" / "package.py"), "--output", str(out), "--methods",
                          "ensemble", "--cpu", "host"],
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


# ----- the wheel, its entry points and the Databricks job (issue 35, 1) ----------------------------------------------
JOB_JSON = ROOT / "jobs" / "databricks" / "scheduled_job.json"
SCRIPTS = {"spark-fr-rank": "spark_fr.cli:console", "spark-fr-evaluate": "spark_fr.evaluation.job:console",
           "spark-fr-drift": "spark_fr.evaluation.drift_job:console"}


def build_wheel(out: Path) -> Path:
    """``pip wheel --no-deps`` (docs/install.md) of a copy of the package's files (building in place would leave
    build/ and *.egg-info in the checkout); the wheel's path."""
    src = out / "src"
    shutil.copytree(ROOT / "spark_fr", src / "spark_fr", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    run = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out / "dist"), str(src)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return next((out / "dist").glob("spark_fr-*.whl"))


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built once per session (~10 s; pip fetches setuptools and wheel for the isolated build)."""
    return build_wheel(tmp_path_factory.mktemp("wheel"))


def wheel_metadata(wheel: Path, name: str) -> str:
    with zipfile.ZipFile(wheel) as zf:
        return zf.read(next(n for n in zf.namelist() if n.endswith(".dist-info/" + name))).decode()


def requirements_of(metadata_text: str) -> list:
    """The distributions a METADATA file requires (its Requires-Dist without an ``extra`` marker)."""
    reqs = [line.split(":", 1)[1].strip() for line in metadata_text.splitlines() if line.startswith("Requires-Dist:")]
    return [re.match(r"[A-Za-z0-9_.\-]+", r).group(0) for r in reqs if "extra ==" not in r]


def seed_numba_cache(site: Path) -> int:
    """Copy this checkout's numba cache of spark_fr's kernels (spark_fr.runtime.checkout_cache: a folder named by the
    hash of the sources) into the folder the installed package's commands use (numba's user cache: :func:`venv_env`
    sets no NUMBA_CACHE_DIR; nothing to copy when that is the suite's folder already), never over a file: the
    installed commands load the kernels the suite compiled instead of compiling them (60-140 s here). Returns the
    files copied."""
    from numba.misc.appdirs import AppDirs

    from spark_fr.runtime.numba_cache import FolderSources, cache_root, sources_hash

    mine = Path(cache_root(FolderSources(str(ROOT))))
    user_cache = Path(AppDirs(appname="numba", appauthor=False).user_cache_dir)
    theirs = user_cache / f"spark_fr-{sources_hash(FolderSources(str(site)))}"
    if theirs.resolve() == mine.resolve():
        return 0
    copied = 0
    for path in mine.rglob("*"):
        target = theirs / path.relative_to(mine)
        if path.suffix in (".nbi", ".nbc") and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
            copied += 1
    return copied


def venv_env(**extra) -> dict:
    """A user's environment for the venv's commands: none of the suite's Python, Spark or spark_fr settings."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "PYSPARK", "SPARK_", "NUMBA", "VIRTUAL_ENV"))}
    env.update(SPARK_LOCAL_IP="127.0.0.1", **extra)
    return env


@pytest.fixture(scope="session")
def client_env(wheel, tmp_path_factory) -> Path:
    """A new venv with ``pyspark-client`` (the Spark Connect client, no JVM, no jars) and the wheel, installed by
    pip without their dependencies; those (the wheel's and the client's declared requirements, read from their
    METADATA, and what they require) are linked from this Python's site-packages, nothing else: a requirement
    missing from the wheel's metadata is an ImportError there. Cost: ~10 s (a venv with every dependency
    installed by pip from a warm cache took 3-5 minutes at load 15: the marked test below does that)."""
    import pyspark

    where = tmp_path_factory.mktemp("client") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                              "--no-compile", f"pyspark-client=={pyspark.__version__}", str(wheel)],
                             capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stderr[-3000:]
    site = next(where.glob("lib/python3.*/site-packages"))
    client = next(site.glob("pyspark_client-*.dist-info")) / "METADATA"
    link_distributions(site, requirements_of(wheel_metadata(wheel, "METADATA")) + requirements_of(client.read_text()))
    seed_numba_cache(site)
    return where


def test_the_wheel_holds_the_package_its_shipped_configs_and_three_entry_points(wheel):
    from spark_fr.version import __version__

    assert wheel.name == f"spark_fr-{__version__}-py3-none-any.whl"
    names = zipfile.ZipFile(wheel).namelist()
    shipped = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "spark_fr" / "configs").glob("*.yaml"))
    assert shipped and sorted(n for n in names if n.startswith("spark_fr/configs/")) == shipped
    assert not [n for n in names if not n.startswith(("spark_fr/", f"spark_fr-{__version__}.dist-info/"))]
    points = wheel_metadata(wheel, "entry_points.txt")
    assert dict(re.findall(r"^(\S+) = (\S+)$", points, re.M)) == SCRIPTS
    assert "pyspark" not in requirements_of(wheel_metadata(wheel, "METADATA"))  # the runtime's own (docs/install.md)


def _connect_address(spark) -> tuple:
    """(port, token) of the suite's local Spark Connect server, asked in its worker process."""
    from pyspark.sql.connect.client.core import DefaultChannelBuilder

    return DefaultChannelBuilder.default_port(), os.environ.get("SPARK_CONNECT_AUTHENTICATE_TOKEN")


def days(folder: Path) -> tuple:
    """Two days of a feature table (CSV, 300 rows): y follows x1 and x2 on day 1, x5 and x6 on day 2 (planted
    drift)."""
    import numpy as np

    rng = np.random.default_rng(35)
    X = pd.DataFrame(rng.normal(size=(300, 8)), columns=[f"x{i}" for i in range(1, 9)])
    paths = []
    for day, (a, b) in enumerate((("x1", "x2"), ("x5", "x6")), start=1):
        path = folder / f"day{day}.csv"
        X.assign(y=3 * X[a] + X[b] + rng.normal(scale=0.1, size=300)).to_csv(path, index=False)
        paths.append(path)
    return tuple(paths)


def job_tasks(values: dict) -> list:
    """The tasks of the Databricks job's definition, in the order its depends_on gives, each as (task_key,
    entry point, parameters with the job's parameters replaced by ``values``)."""
    job = json.loads(JOB_JSON.read_text())
    defaults = {p["name"]: p["default"] for p in job["parameters"]}
    assert set(values) == set(defaults)
    done, order = set(), []
    while len(order) < len(job["tasks"]):
        ready = [t for t in job["tasks"] if t["task_key"] not in done
                 and {d["task_key"] for d in t.get("depends_on", [])} <= done]
        assert ready, "a cycle in depends_on"
        for t in ready:
            done.add(t["task_key"])
            task = t["python_wheel_task"]
            params = [re.sub(r"\{\{job\.parameters\.(\w+)\}\}", lambda m: str(values[m.group(1)]), p)
                      for p in task["parameters"]]
            order.append((t["task_key"], task["entry_point"], params))
    return order


def test_the_databricks_job_definition_is_a_two_task_wheel_job():
    from spark_fr.version import __version__

    job = json.loads(JOB_JSON.read_text())
    tasks = {t["task_key"]: t for t in job["tasks"]}
    assert list(tasks) == ["rank", "drift"] and tasks["drift"]["depends_on"] == [{"task_key": "rank"}]
    for t in tasks.values():
        assert t["python_wheel_task"]["package_name"] == "spark_fr"
        assert t["python_wheel_task"]["entry_point"] in SCRIPTS
        assert t["libraries"] == [{"whl": f"/Volumes/main/ml/wheels/spark_fr-{__version__}-py3-none-any.whl"}]
    assert tasks["rank"]["python_wheel_task"]["parameters"][:2] == ["--config", "scheduled"]
    assert "--fail-above" in tasks["drift"]["python_wheel_task"]["parameters"]


def run_tasks(venv: Path, folder: Path, env: dict) -> list:
    """Two job runs, as Databricks runs the job's tasks: day 1 (rank; drift: one run only, exit code 2) and
    day 2 (rank; drift: exit code 3 on the planted drift). Returns [(task, exit code, stderr)]."""
    day1, day2 = days(folder)
    out = []
    for day in (day1, day2):
        values = {"input": day, "targets": "y", "rankings": folder / "rankings", "fail_above": "0.1"}
        for key, entry_point, params in job_tasks(values):
            run = subprocess.run([str(venv / "bin" / entry_point), *params, "--log-level", "warning"],
                                 capture_output=True, text=True, env=env, cwd=folder, timeout=900)
            out.append((key, run.returncode, run.stderr.strip()))
    return out


def check_job_runs(runs: list, folder: Path) -> None:
    from deltalake import DeltaTable

    assert [(key, code) for key, code, _ in runs] == [("rank", 0), ("drift", 2), ("rank", 0), ("drift", 3)], runs
    assert runs[1][2].endswith("drift needs at least 2"), runs[1][2]
    assert re.fullmatch(r"drift \d\.\d{3} is above 0\.1 \(genie3 \[__all__\], run \S+ -> \S+\)",
                        runs[3][2].splitlines()[-1]), runs[3][2]
    rows = DeltaTable(str(folder / "rankings")).to_pandas()
    assert rows.run_id.nunique() == 2 and set(rows.score) == {"genie3", "rf"}
    firsts = rows[(rows.score == "genie3") & (rows["rank"] == 1)].sort_values("created_at").feature.tolist()
    assert firsts == ["x1", "x5"]


def test_the_wheel_with_pyspark_client_only_runs_the_databricks_job(client_env, connect, tmp_path):
    """Acceptance (issue 35): a new environment with ``pyspark-client`` only and the built wheel, its commands
    pointed at the suite's Spark Connect server (SPARK_REMOTE): ``spark-fr-rank --version``, ``--help`` named as
    invoked, and the Databricks job's tasks run as the job runs them (``--config scheduled``, shipped in the
    wheel; drift exit code 3 on planted drift)."""
    from spark_fr.version import __version__

    port, token = connect.run(_connect_address)
    env = venv_env(SPARK_REMOTE=f"sc://localhost:{port}", SPARK_CONNECT_AUTHENTICATE_TOKEN=token or "")
    bin_ = client_env / "bin"
    version = subprocess.run([str(bin_ / "spark-fr-rank"), "--version"], capture_output=True, text=True, env=env)
    assert (version.returncode, version.stdout) == (0, f"spark_fr {__version__}\n"), version.stderr
    usage = subprocess.run([str(bin_ / "spark-fr-drift"), "--help"], capture_output=True, text=True, env=env)
    assert usage.returncode == 0 and usage.stdout.startswith("usage: spark-fr-drift "), usage.stdout[:200]
    site = next(client_env.glob("lib/python3.*/site-packages"))
    assert list(site.glob("pyspark_client-*.dist-info")) and not list(site.glob("pyspark-*.dist-info"))
    check_job_runs(run_tasks(client_env, tmp_path, env), tmp_path)


# the environments of a Databricks user (issue 35's acceptance), each a new venv whose packages pip installs from the
# registry: the runtime's own first, then the wheel, which must change none of them
RUNTIMES = {
    # a Databricks 18-like runtime: Python 3.12 with its own pyspark 4.1 (classic; a local session here)
    "py312-pyspark41": ("python3.12", ["pyspark==4.1.4", "numpy==2.1.3", "pandas==2.2.3", "pyarrow==19.0.1"], False),
    # a Spark Connect client only (serverless, Databricks Connect), against the suite's Connect server
    "py312-client": ("python3.12", ["pyspark-client==4.2.0"], True),
}


def check_needs_spark_remote(venv: Path, folder: Path, env: dict) -> None:
    """``pyspark-client`` only and no ``SPARK_REMOTE``: a run that needs Spark (its trees in Spark tasks) is one line
    saying to set it (spark_fr.runtime.client_only), exit code 2, nothing written."""
    from spark_fr.runtime.client_only import CLIENT_ONLY

    folder.mkdir()
    day1, _ = days(folder)
    run = subprocess.run([str(venv / "bin" / "spark-fr-rank"), "--input", str(day1), "--targets", "y", "--output",
                          str(folder / "out")], capture_output=True, text=True, timeout=900,
                         env={**env, "SPARK_FR_DRIVER_MAX_SECONDS": "0"})
    assert run.returncode == 2 and run.stderr.splitlines()[-1] == f"error: {CLIENT_ONLY}", run.stderr[-3000:]
    assert "Traceback" not in run.stderr and not (folder / "out").exists()


def freeze(python: Path) -> dict:
    lines = subprocess.run([str(python), "-m", "pip", "freeze", "--all"], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    return dict(line.split("==", 1) for line in lines if "==" in line)


@pytest.mark.environment
@pytest.mark.skipif(os.environ.get("SPARK_FR_CHECK_ENVIRONMENTS") != "1",
                    reason="builds a virtualenv from the registry: SPARK_FR_CHECK_ENVIRONMENTS=1 runs it")
@pytest.mark.parametrize("name", sorted(RUNTIMES))
def test_the_wheel_in_a_runtime_runs_the_databricks_job(name, wheel, request, tmp_path):
    """Acceptance (issue 35), with every package installed by pip: the runtime's packages, then the wheel (plain
    ``pip install``), which changes none of them; then ``--version`` and the job's tasks as in the cheap test
    above. Cost: 7-8 minutes each at load 15 (pip's cache warm: the installs; the job's tasks then compile the
    kernels in a new Python); see docs/testing.md."""
    import runpy

    find_python = runpy.run_path(str(ROOT / "jobs" / "check_environment.py"))["find_python"]
    python, preinstall, remote = RUNTIMES[name]
    venv = tmp_path / "venv"
    subprocess.run([find_python(python), "-m", "venv", str(venv)], check=True)
    vpy = venv / "bin" / "python"
    subprocess.run([str(vpy), "-m", "pip", "install", "-q", *preinstall], check=True, timeout=1800)
    before = freeze(vpy)
    subprocess.run([str(vpy), "-m", "pip", "install", "-q", str(wheel)], check=True, timeout=1800)
    after = freeze(vpy)
    assert {k: v for k, v in before.items() if after.get(k) != v} == {}, "the wheel changed the runtime's packages"
    assert subprocess.run([str(vpy), "-m", "pip", "check"], capture_output=True).returncode == 0
    env = venv_env()
    if remote:
        check_needs_spark_remote(venv, tmp_path / "no_remote", env)
        port, token = request.getfixturevalue("connect").run(_connect_address)
        env.update(SPARK_REMOTE=f"sc://localhost:{port}", SPARK_CONNECT_AUTHENTICATE_TOKEN=token or "")
    version = subprocess.run([str(venv / "bin" / "spark-fr-rank"), "--version"], capture_output=True, text=True,
                             env=env)
    from spark_fr.version import __version__

    assert version.stdout == f"spark_fr {__version__}\n", version.stderr
    check_job_runs(run_tasks(venv, tmp_path, env), tmp_path)
