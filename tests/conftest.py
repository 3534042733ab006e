"""Shared fixtures and helpers: one local Spark session for the whole run, the shared datasets, running the
job in this process or as a real process, checking the output contract, slow references shared by tests."""
import json
import os
import runpy
import sys
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from spark_fr.runtime.session import with_jvm_options  # the tests' JVM runs as a launched one does
from tests.paths import DATASETS, JOB, ROOT, SHARED  # noqa: F401 (ROOT, SHARED: shared with the test modules)
from tests import delta_jars, jvm_archive, prewarm
from tests.scheduling import RECORD_ENV, DurationRecorder, longest_first, read_record

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
# small work runs in the driver process by default (spark_fr.runtime.spark.on_driver); the suite's small data
# would never reach Spark's tasks, so the tests run them on Spark unless a test asks for the driver
os.environ["SPARK_FR_DRIVER_MAX_SECONDS"] = "0"
# The suite's Spark JVMs compile with C1 only (-XX:TieredStopAtLevel=1): its own sessions and every JVM of a job,
# notebook or benchmark peer it starts as a process (spark-submit, which pyspark runs, adds SPARK_SUBMIT_OPTS to
# the driver JVM's options; processes inherit the environment). The JVMs of the tests are short-lived and run
# little Java, so most of their CPU went to the C2 compiler: measured (2 cores, load 11-20) a session's start
# 16 -> 9 s of JVM CPU and its first small jobs 24 -> 13 s; tests/comparisons/test_benchmark_suites.py 295 -> 191 s
# of CPU.
# The code's results do not depend on the JIT. A value already set that chooses the tier is kept (=4: C2 again).
if "TieredStopAtLevel" not in os.environ.get("SPARK_SUBMIT_OPTS", ""):
    os.environ["SPARK_SUBMIT_OPTS"] = f"{os.environ.get('SPARK_SUBMIT_OPTS', '')} -XX:TieredStopAtLevel=1".strip()
# With C1 only, HotSpot reserves 48 MB of code cache instead of 240 MB; the suite's one long-lived session JVM ran
# out of it ("VirtualMachineError: Out of space in CodeCache for adapters", a relational test after ~600 others,
# load 9-16): the suite's JVMs reserve 256 MB.
if "ReservedCodeCacheSize" not in os.environ.get("SPARK_SUBMIT_OPTS", ""):
    os.environ["SPARK_SUBMIT_OPTS"] = f"{os.environ['SPARK_SUBMIT_OPTS']} -XX:ReservedCodeCacheSize=256m"
# Every Spark JVM of the run maps Spark's classes from one class-data-sharing archive when the checkout has one
# (tests/jvm_archive.py: a whole run makes it first; half the CPU of a JVM's start).
jvm_archive.use(ROOT)

# ----- the benchmark harness's own tests: a marker left out of the default run ---------------------------------
# Decision: the tests marked ``peers`` run jobs/benchmark.py's suites and peers as the benchmark does (each peer a
# separate, measured process: minutes in all), so they check the harness, not spark_fr's results; the default run
# leaves them out (deselected, counted in pytest's "N deselected") and ``python jobs/benchmark.py --check`` runs them
# (``python -m pytest -m peers``). They also run when a ``-m`` expression names the marker, or when the command line
# names the test itself (``tests/...py::test_name``). The comparisons with outside implementations are not marked.
PEERS = "peers"


def _named_on_command_line(item, args) -> bool:
    """Whether one of the command line's node ids (``path::name``) names this test or its class."""
    for arg in args:
        path, sep, rest = str(arg).partition("::")
        if sep and Path(path).resolve() == Path(item.path).resolve() \
                and item.nodeid.split("::", 1)[1].startswith(rest):
            return True
    return False


def pytest_collection_modifyitems(config, items):
    """Deselect the ``peers`` tests unless ``-m`` names the marker or the command line names the test; in a
    pytest-xdist worker, note the modules that use a session process (:func:`_note_session_modules`)."""
    _deselect_peers(config, items)
    _note_session_modules(config, items)


# ----- two workers (pytest-xdist: ``-n 2 --dist loadfile`` in pyproject.toml's addopts) ----------------------
# Decision: the suite runs in two pytest-xdist worker processes: much of it waits (JVM and process starts, py4j
# round trips, Spark's scheduling), so two workers on two cores finish sooner. Each worker has its own ``spark``
# session, its own temporary directory (tmp_path_factory's basetemp is per worker) and ports Spark picks free.
# ``--dist loadfile`` runs a module's tests on one worker (its module fixtures built once); the scheduler below
# also keeps every module that uses the Delta or the Connect session process on one worker, so the suite starts
# one Delta and one Connect JVM, not one per worker. (xdist's own ``--dist loadgroup`` cannot do it under pytest 9:
# it renames the items' ``_nodeid``, which pytest 9 no longer reads.) ``-n 0`` runs everything in one process
# (--pdb, debugging a fixture); the modules are then run in their usual order.
SESSION_FIXTURES = ("delta", "connect")  # fixtures holding a spawned session process: one worker holds them all
_SESSION_MODULES = "session_modules_{}.json"  # written by each worker into the run's base temporary directory


def _note_session_modules(config, items) -> None:
    """In a worker: write the modules whose tests use a fixture of :data:`SESSION_FIXTURES` (by argument, or by
    ``request.getfixturevalue``) for the scheduler (:func:`pytest_xdist_make_scheduler`)."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None or not config.option.basetemp:
        return
    import inspect
    import re

    dynamic = re.compile(r"getfixturevalue\(\s*[\"'](%s)[\"']" % "|".join(SESSION_FIXTURES))
    modules, sources = set(), {}
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        if module not in sources:
            try:
                sources[module] = bool(dynamic.search(inspect.getsource(item.module)))
            except (AttributeError, OSError, TypeError):
                sources[module] = False
        if sources[module] or any(name in getattr(item, "fixturenames", ()) for name in SESSION_FIXTURES):
            modules.add(module)
    path = Path(config.option.basetemp).parent / _SESSION_MODULES.format(workerinput["workerid"])
    path.write_text(json.dumps(sorted(modules)))


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # before xdist's own (optional: pytest runs without xdist)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile``, with the modules that use a session process as one unit of work, the units given out
    longest first by their recorded time (tests/scheduling.py)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    base = config._tmp_path_factory.getbasetemp()  # the workers' basetemps are below it (xdist's workermanage)

    class ModuleScheduling(LoadScopeScheduling):
        sessions: set | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.sessions is None:  # first called once every worker has collected (and written its file)
                self.sessions = set()
                for path in base.glob(_SESSION_MODULES.format("*")):
                    self.sessions.update(json.loads(path.read_text()))
            module = nodeid.split("::", 1)[0]
            return "sessions" if module in self.sessions else module

        ordered = False

        def _assign_work_unit(self, node):
            if not self.ordered:  # the queue is complete at the first call: longest unit first (tests/scheduling.py)
                longest_first(self.workqueue, read_record())
                self.ordered = True
            super()._assign_work_unit(node)

    return ModuleScheduling(config, log)


_RECORDER: DurationRecorder | None = None
_PREWARMED: list = []
_ARCHIVING: list = []  # the thread waiting for the JVMs' class archive (tests/jvm_archive.py)


def pytest_configure(config):
    """With ``SPARK_FR_TEST_DURATIONS=record``, the controlling process records each module's time
    (tests/scheduling.py); a whole run of a checkout without a numba cache compiles the kernels once before the
    workers start (tests/prewarm.py), and one without the JVMs' class archive makes it meanwhile
    (tests/jvm_archive.py)."""
    global _RECORDER
    if os.environ.get(RECORD_ENV) == "record" and not hasattr(config, "workerinput"):
        _RECORDER = DurationRecorder()
    if prewarm.whole_run(config) and jvm_archive.wanted(ROOT):
        archiving = jvm_archive.start(ROOT)
        jvm_archive.use(ROOT, coming=True)  # the workers inherit it
        _ARCHIVING.append(threading.Thread(target=lambda: _PREWARMED.append(jvm_archive.finish(archiving)),
                                           daemon=True))
        _ARCHIVING[0].start()
    if prewarm.wanted(config, ROOT):
        sys.stderr.write("compiling spark_fr's numba kernels once before the two workers start (no cache yet: about "
                         "1-2 minutes; SPARK_FR_TEST_PREWARM=0 skips it)\n")
        from spark_fr.runtime.delta import delta_package

        fetching = delta_jars.start(delta_package(DELTA_VERSION))  # meanwhile (tests/delta_jars.py)
        _PREWARMED.append(prewarm.prewarm(ROOT))
        _PREWARMED.append(delta_jars.finish(fetching))


def pytest_runtest_logreport(report):
    if _RECORDER is not None:
        _RECORDER.add(report)


def pytest_sessionfinish(session, exitstatus):
    """Write the record after a whole run (no paths, ``-k`` or ``-m`` given): a part would shrink it."""
    config = session.config
    whole = config.args_source == pytest.Config.ArgsSource.TESTPATHS
    if _RECORDER is not None and whole and not config.option.keyword and not config.option.markexpr:
        _RECORDER.write()


def _deselect_peers(config, items) -> None:
    """Deselect the ``peers`` tests (the default run) unless ``-m`` names the marker or the command line names the
    test."""
    if PEERS in (config.getoption("markexpr") or ""):
        return
    keep, dropped = [], []
    for item in items:
        marked = item.get_closest_marker(PEERS) is not None
        (dropped if marked and not _named_on_command_line(item, config.args) else keep).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


def pytest_terminal_summary(terminalreporter):
    """The numba warm-ups run before the workers (tests/prewarm.py), and the CLUS runs that were not recorded
    (tests/comparisons/clus_cache.py): CLUS ran them, slowly."""
    for thread in _ARCHIVING:
        thread.join(timeout=180)
    for line in filter(None, _PREWARMED):
        terminalreporter.write_line(line)
    cache = sys.modules.get("tests.comparisons.clus_cache")
    if cache is not None and cache.MISSED:
        names = ", ".join(sorted({name for name, _ in cache.MISSED}))
        terminalreporter.write_line(
            f"CLUS ran {len(cache.MISSED)} run(s) that tests/comparisons/clus_reference_runs/ does not hold ({names}); "
            "SPARK_FR_CLUS_RUNS=record python -m pytest -q tests/comparisons records them")


@pytest.fixture(scope="session")
def datasets() -> Path:
    """The shared benchmark datasets (read in place, never copied)."""
    assert DATASETS.is_dir(), f"shared datasets not found at {DATASETS}"
    return DATASETS


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    from pyspark.sql import SparkSession

    tmp = tmp_path_factory.mktemp("spark")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("spark_fr-tests")
        .config("spark.driver.memory", "3g")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.local.dir", str(tmp / "local"))
        .config("spark.sql.warehouse.dir", str(tmp / "warehouse"))
        .config("spark.driver.extraJavaOptions", with_jvm_options(f"-Djava.io.tmpdir={tmp}"))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


# ----- a Spark Connect session, in a process of its own ------------------------------------------------------
# One process cannot hold a classic session and a Spark Connect session: pyspark refuses a second kind
# ([SESSION_ALREADY_EXIST]), and once a Connect session exists every pyspark.sql function of the process builds
# Connect columns. So the suite's Connect session lives in one spawned worker process for the whole run
# (pyspark's own local server: ``SparkSession.builder.remote("local[2]")``, a real gRPC server and JVM), and a test
# sends it module-level functions: ``connect.run(fn, *args)`` calls ``fn(connect_session, *args)`` there and
# returns the (picklable) result, which the test compares with ``fn(spark, *args)`` run here, classic.
_WORKER: dict = {}  # this worker process's session (one kind per process): spark, error, start_s


def _start_connect(tmp: str) -> None:
    import logging
    import warnings

    warnings.filterwarnings("ignore")  # configs the client cannot set again after the local server took them
    logging.basicConfig(level=logging.WARNING)
    # an ephemeral port for the local server, found by the client (as in pyspark's own tests, SPARK-42272): another
    # Connect server on this machine (a second test run, a user's job on 15002) does not stop this one
    os.environ["SPARK_TESTING"] = "1"
    try:
        _WORKER["spark"] = _connect_session(tmp)
    except Exception as err:  # a worker that dies here would be started again by the pool, forever: keep the error
        _WORKER["error"] = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
        return
    from pyspark import SparkContext

    if SparkContext._active_spark_context is not None:  # the local server's own context, in this process
        SparkContext._active_spark_context.setLogLevel("ERROR")


def _connect_session(tmp: str):
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.remote("local[2]")
        .appName("spark_fr-tests-connect")
        .config("spark.driver.memory", "2g")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.connect.progress.reportInterval", "200ms")  # task counts for the progress test
        .config("spark.local.dir", f"{tmp}/local")
        .config("spark.sql.warehouse.dir", f"{tmp}/warehouse")
        .config("spark.driver.extraJavaOptions", with_jvm_options(f"-Djava.io.tmpdir={tmp}"))
        .getOrCreate()
    )


def _call_in_worker(fn, args, kwargs):
    if "error" in _WORKER:
        raise RuntimeError(f"no session in the worker: {_WORKER['error']}")
    return fn(_WORKER["spark"], *args, **kwargs)


def _stop_worker():
    spark = _WORKER.pop("spark", None)
    if spark is not None:
        spark.stop()


class SessionWorker:
    """A spawned process holding one Spark session, made by ``start(tmp)`` (Connect or Delta, see above)."""

    def __init__(self, start, tmp):
        import multiprocessing

        self.pool = multiprocessing.get_context("spawn").Pool(1, initializer=start, initargs=(str(tmp),))

    def run(self, fn, *args, **kwargs):
        """``fn(session, *args, **kwargs)`` in the worker, under its session."""
        return self.pool.apply(_call_in_worker, (fn, args, kwargs))

    def start(self, fn, *args, **kwargs):
        """:meth:`run` without waiting: the worker calls ``fn`` after the calls given to it before; ``.get()`` on
        the result waits for its value (or raises its error). A module's fixture starts work its tests need
        later, so that the worker's JVM works while this process runs other tests."""
        return self.pool.apply_async(_call_in_worker, (fn, args, kwargs))

    def close(self):
        try:
            self.pool.apply(_stop_worker, ())
        finally:
            self.pool.terminate()
            self.pool.join()


def collected(request, test: str | None = None, fixture: str | None = None) -> bool:
    """Whether this run holds a test of the requesting module named ``test``, or one that uses ``fixture``: a
    module fixture starts work ahead (:meth:`SessionWorker.start`) only for tests that will take it."""
    return any(item.module is request.module and (item.name == test or fixture in getattr(item, "fixturenames", ()))
               for item in request.session.items)


@pytest.fixture(scope="session")
def connect(tmp_path_factory):
    """The suite's Spark Connect session, in its worker process (:class:`SessionWorker`)."""
    pytest.importorskip("grpc", reason="pyspark[connect] (grpcio, grpcio-status, googleapis-common-protos, zstandard)")
    worker = SessionWorker(_start_connect, tmp_path_factory.mktemp("connect"))
    yield worker
    worker.close()


# ----- a Spark session with Delta Lake, in a process of its own ------------------------------------------------
# A classic session's jars are fixed when its JVM starts, so the suite's Delta session (Delta Lake's jars from Maven
# Central through Spark's resolver, as spark_fr.runtime.delta configures a session it starts; cached in ~/.ivy2*
# after the first run) lives in one spawned worker process, as the Connect session does: ``delta.run(fn, *args)``
# calls ``fn(delta_session, *args)`` there. Its catalog is a Hive metastore (spark_catalog, Delta's catalog over
# Spark's Hive catalog; the metastore a Derby database), its warehouse under the test run's temporary directory.
DELTA_VERSION = "4.4.0"  # delta-spark for pyspark 4.2 (4.4.1's jar is not published)


def _start_delta(tmp: str) -> None:
    import logging
    import time

    logging.basicConfig(level=logging.WARNING)
    os.environ.pop("SPARK_FR_DRIVER_MAX_SECONDS", None)  # small work on the driver here, as users run it
    t0 = time.perf_counter()
    try:
        from pyspark.sql import SparkSession

        from spark_fr.runtime.delta import LOCAL_CONF, delta_conf

        builder = (SparkSession.builder.master("local[2]").appName("spark_fr-tests-delta")
                   .config("spark.driver.memory", "2g")
                   .config("spark.driver.bindAddress", "127.0.0.1")
                   .config("spark.driver.host", "127.0.0.1")
                   .config("spark.ui.enabled", "false")
                   .config("spark.ui.showConsoleProgress", "false")
                   .config("spark.sql.shuffle.partitions", "2")
                   .config("spark.default.parallelism", "2")
                   .config("spark.sql.session.timeZone", "UTC")
                   .config("spark.local.dir", f"{tmp}/local")
                   .config("spark.sql.warehouse.dir", f"{tmp}/warehouse")
                   # a Hive-enabled session, as a cluster's: its metastore a Derby database under tmp
                   .config("spark.sql.catalogImplementation", "hive")
                   .config("spark.hadoop.javax.jdo.option.ConnectionURL",
                           f"jdbc:derby:;databaseName={tmp}/metastore_db;create=true")
                   # C1 only: a short-lived JVM running many small Delta commands spends most of its CPU in the
                   # C2 compiler otherwise (measured: the tables' Spark work 95 s -> 43 s, start 36 s -> 25 s, under load)
                   .config("spark.driver.extraJavaOptions",
                           with_jvm_options(f"-Djava.io.tmpdir={tmp} -Dderby.system.home={tmp} -XX:TieredStopAtLevel=1")))
        for key, value in {**LOCAL_CONF, **delta_conf(DELTA_VERSION)}.items():
            builder = builder.config(key, value)
        session = builder.getOrCreate()
        session.sparkContext.setLogLevel("ERROR")
        session.range(1).count()
        _WORKER["spark"], _WORKER["start_s"] = session, time.perf_counter() - t0
    except Exception as err:  # no Maven Central and no Ivy cache: the tests that need it are skipped
        _WORKER["error"] = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"


def _delta_started(_spark):
    return _WORKER.get("start_s")


@pytest.fixture(scope="session")
def delta(tmp_path_factory):
    """The suite's session with Delta Lake, in its worker process (:class:`SessionWorker`). Delta's jars come from
    Maven Central (or the Ivy cache); when they cannot be had the Delta tests fail, saying so, rather than skip."""
    worker = SessionWorker(_start_delta, tmp_path_factory.mktemp("delta"))
    try:
        seconds = worker.run(_delta_started)
    except RuntimeError as err:
        worker.close()
        pytest.fail(f"the Delta session did not start (Delta's jars come from Maven Central): {err}")
    print(f"\nDelta session started in {seconds:.1f} s")
    yield worker
    worker.close()


# ----- running the job and checking its output ------------------------------------------------------------
CONTRACT = ["feature", "score", "target", "importance", "rank", "importance_std", "run_id", "created_at",
            "params"]
# Madelon's 20 relevant features by construction (5 informative + 15 linear combinations), 1-based
MADELON_RELEVANT = {29, 49, 65, 106, 129, 154, 242, 282, 319, 337, 339, 379, 434, 443, 452, 454, 456, 473, 476,
                    494}


def run_job(args, capsys=None, job=JOB):
    """Run ``job`` (jobs/rank.py by default) in this process; returns (exit code, stdout, stderr), read from
    ``capsys`` when given, else captured here (e.g. in a worker process, where there is no capsys)."""
    import contextlib
    import io

    argv = sys.argv
    sys.argv = [str(job)] + [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.ExitStack() as stack:
            if capsys is None:
                stack.enter_context(contextlib.redirect_stdout(out))
                stack.enter_context(contextlib.redirect_stderr(err))
            try:
                runpy.run_path(str(job), run_name="__main__")
                code = 0
            except SystemExit as exc:
                code = exc.code
    finally:
        sys.argv = argv
    if capsys is not None:
        return (code, *capsys.readouterr())
    return code, out.getvalue(), err.getvalue()


def check_contract(out_dir: Path, features, targets=("__all__",), scores=("symbolic", "genie3", "rf")):
    table = pd.read_csv(out_dir / "ranking.csv")
    unusable = set(json.loads((out_dir / "run.json").read_text()).get("unusable_features", []))
    assert list(table.columns) == CONTRACT
    assert set(table.score) == set(scores)
    assert set(table.target) == set(targets)
    for (score, target), group in table.groupby(["score", "target"]):
        assert sorted(group.feature) == sorted(features), (score, target)
        assert sorted(group["rank"]) == list(range(1, len(features) + 1))
        ordered = group.sort_values("rank")
        ordered = ordered[~ordered.feature.isin(unusable)]  # last, with importance 0 (Relief weights can be < 0)
        assert np.all(np.diff(ordered.importance.to_numpy()) <= 1e-12), "ranks follow importance"
        assert np.isfinite(group.importance).all()
    assert table.run_id.nunique() == 1
    params = json.loads(table.params.iloc[0])
    run = json.loads((out_dir / "run.json").read_text())
    assert run["run_id"] == table.run_id.iloc[0]
    assert {"timings", "versions", "params", "n_rows", "n_features"} <= set(run)
    assert params == run["params"]
    pd.to_datetime(table.created_at)  # parses
    return table


def top(table, score="genie3", target="__all__", k=5):
    sel = table[(table.score == score) & (table.target == target)].sort_values("rank")
    return list(sel.feature[:k])


def arff_features(path, targets):
    from spark_fr.io.arff import read_header

    return [a.name for a in read_header(str(path)).attributes if a.name not in set(targets)]



def _subprocess_env():
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    env["PYSPARK_PYTHON"] = sys.executable
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    return env




# ----- Relief: data set-up as the job does it, and the slow reference of the target distances ---------------
def relief_data(X, keys, Y, task, nominal, n_values, params, semi_supervised=False, classes=None, hierarchy=None):
    """(ReliefData, rows kept) for scaled features X and targets Y, set up as both Relief modes do it."""
    from spark_fr import tasks
    from spark_fr.relief.setup import ReliefSetup, build_relief_data, labelled_rows

    target_type = tasks.get(task)
    setup = ReliefSetup(target_type, params, semi_supervised, np.asarray(nominal, bool),
                        np.asarray(n_values, np.float64), len(classes) if classes else 0, hierarchy)
    Y = np.asarray(Y, np.float64)
    data, _, _ = build_relief_data({"scaled": np.asarray(X, np.float64), "Y": Y, "keys": np.asarray(keys, np.uint64)},
                                   setup)
    kept = labelled_rows(Y) if target_type.supervised and not semi_supervised else np.ones(Y.shape[0], bool)
    return data, kept


def as_dict(results) -> dict:
    """Score results as {'name' or 'name/targets': (importance, std)} (short to index in tests)."""
    return {r.name + ("/targets" if r.per_target else ""): (r.importance, r.std) for r in results}


def target_distance_reference(target, a: int, b: int) -> float:
    """Slow reference of d_Y between rows a and b of a ReliefTarget (plain Python)."""
    from spark_fr.tasks import distances as K

    ya, yb = target.values[a], target.values[b]

    def num(u, v):
        if np.isnan(u) and np.isnan(v):
            return 1.0
        if np.isnan(u) or np.isnan(v):
            t = v if np.isnan(u) else u
            return max(t, 1 - t)
        return abs(u - v)

    if target.kind == K.T_NUMERIC:
        return float(np.mean([num(u, v) for u, v in zip(ya, yb)]))
    if target.kind == K.T_CLASS:
        if np.isnan(ya[0]) or np.isnan(yb[0]):
            return 1 - 1 / target.norm
        return float(ya[0] != yb[0])
    if target.kind == K.T_HAMMING:
        return float(np.mean([0.5 if np.isnan(u) or np.isnan(v) else float(u != v) for u, v in zip(ya, yb)]))
    if target.kind in (K.T_JACCARD, K.T_F1):
        pa = np.where(np.isnan(ya), 0.5, ya)
        pb = np.where(np.isnan(yb), 0.5, yb)
        inter = float(np.sum(pa * pb))
        if target.kind == K.T_JACCARD:
            union = float(np.sum(pa + pb - pa * pb))
            return 1 - inter / union if union > 1e-9 else 0.0
        tot = float(np.sum(pa + pb))
        return 1 - 2 * inter / tot if tot > 1e-9 else 0.0
    if target.kind == K.T_SUBSET:
        if any((not np.isnan(u)) and (not np.isnan(v)) and u != v for u, v in zip(ya, yb)):
            return 1.0
        return 1 - 0.5 ** int(np.sum(np.isnan(ya) | np.isnan(yb)))
    if target.kind in (K.T_HMLC, K.T_HMLC_SQUARED):
        s = float(np.sum(target.weights * (ya - yb) ** 2))
        return (np.sqrt(s) if target.kind == K.T_HMLC else s) / target.norm
    raise ValueError(target.kind)


def check_png(path, figure=None, best: str | None = None) -> None:
    """A plot written by spark_fr: a PNG that decodes to a picture that is not blank; with ``figure`` and
    ``best``: the figure's size and the best feature's bar at the top of the first panel."""
    import matplotlib.image

    from spark_fr.io.writers import is_our_png

    img = matplotlib.image.imread(str(path))
    assert img.ndim == 3 and min(img.shape[:2]) > 100 and img[..., :3].std() > 0.05
    assert is_our_png(str(path))
    if figure is not None:
        width, height = figure.get_size_inches() * figure.dpi
        assert abs(img.shape[0] - height) <= 1 and abs(img.shape[1] - width) <= 1
    if best is not None:
        ticks = {t.get_position()[1]: t.get_text() for t in figure.axes[0].get_yticklabels()}
        assert ticks[max(ticks)] == best


def slow_fractional_route(tree, codes_row):
    """{leaf: proportion} of one row in a tree grown with ``--missing fractional``, by walking its node arrays
    in Python: down both branches at a missing code (255), with the node's ``left_share`` and its complement:
    the slow, obvious reference of Tree.routes."""
    out = {}

    def walk(node, p):
        if tree.feature[node] < 0:
            out[int(node)] = out.get(int(node), 0.0) + p
            return
        f = int(tree.feature[node])
        code = int(codes_row[f])
        if code == 255:
            walk(tree.left[node], p * tree.left_share[node])
            walk(tree.right[node], p * (1.0 - tree.left_share[node]))
            return
        if tree.nominal[f]:
            left = bool((int(tree.mask[node, code // 64]) >> (code % 64)) & 1)
        else:
            left = code <= tree.threshold[node]
        walk(tree.left[node] if left else tree.right[node], p)

    walk(0, 1.0)
    return out


def slow_route(tree, codes_row):
    """Leaf of one row by walking a tree's node arrays in Python (missing code 255, nominal masks, thresholds):
    the slow, obvious reference of Tree.apply."""
    node = 0
    while tree.feature[node] >= 0:
        f = int(tree.feature[node])
        code = int(codes_row[f])
        if code == 255:
            left = bool(tree.missing_left[node])
        elif tree.nominal[f]:
            left = bool((int(tree.mask[node, code // 64]) >> (code % 64)) & 1)
        else:
            left = code <= tree.threshold[node]
        node = int(tree.left[node] if left else tree.right[node])
    return node
