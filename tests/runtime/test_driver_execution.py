"""Small work runs in the driver process: the same ranking bit for bit as Spark's tasks, no Spark job, and a
cold job on a small local file that never waits for Spark."""
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import spark_fr
from tests.conftest import JOB, _subprocess_env
from spark_fr.runtime.spark import on_driver

COLS = ["feature", "score", "target", "importance", "rank", "importance_std"]


def test_the_limit_reads_the_environment(monkeypatch):
    monkeypatch.delenv("SPARK_FR_DRIVER_MAX_SECONDS")
    monkeypatch.setenv("SPARK_FR_DRIVER_THREADS", "1")
    assert on_driver(1.5) and not on_driver(2.5)
    monkeypatch.setenv("SPARK_FR_DRIVER_THREADS", "4")  # the limit is wall time on the driver's threads
    assert on_driver(7.9) and not on_driver(8.1)
    monkeypatch.setenv("SPARK_FR_DRIVER_MAX_SECONDS", "0")
    assert not on_driver(1e-3)
    monkeypatch.setenv("SPARK_FR_DRIVER_MAX_SECONDS", "10")
    monkeypatch.setenv("SPARK_FR_DRIVER_THREADS", "1")
    assert on_driver(9.0)


def test_driver_threads_give_the_units_result_in_unit_order(monkeypatch):
    """Units computed on several threads are merged in unit order: an order-sensitive merge (a list)
    shows it, and the threads did run at once (the kernels release the GIL)."""
    import threading
    import time

    from spark_fr.runtime.spark import _units_in_driver

    seen = set()

    def work(payload, chunk):
        seen.add(threading.get_ident())
        time.sleep(0.02 * (5 - chunk[0] % 5))  # later units finish first
        return [chunk[0] * payload]

    monkeypatch.setenv("SPARK_FR_DRIVER_THREADS", "3")
    result, done = _units_in_driver(10, list(range(12)), work, lambda a, b: a + b, [], lambda k: True)
    assert done == 12 and result == [10 * i for i in range(12)] and len(seen) == 3
    calls = iter(range(100))
    result, done = _units_in_driver(1, list(range(12)), work, lambda a, b: a + b, [], lambda k: next(calls) < 5)
    assert result == list(range(done)) and 0 < done < 12


def _frame(n=300, seed=0):
    rng = np.random.default_rng(seed)
    pdf = pd.DataFrame(rng.uniform(-1, 1, (n, 6)), columns=[f"x{i}" for i in range(6)])
    pdf["c"] = np.array(["a", "b", "c"])[rng.integers(0, 3, n)]
    pdf["y1"] = 2 * pdf.x0 + (pdf.c == "a") + rng.normal(0, 0.2, n)
    pdf["y2"] = pdf.x1 - pdf.x2 + rng.normal(0, 0.2, n)
    return pdf


@pytest.mark.parametrize("method", ["ensemble", "relief"])
def test_driver_and_spark_tasks_give_the_same_ranking(spark, monkeypatch, method):
    df = spark.createDataFrame(_frame()).repartition(3)
    kw = dict(targets="y1,y2", method=method, seed=3, per_target=True, spark=spark)
    if method == "ensemble":
        kw["trees"] = 15
    else:
        kw["relief_iterations"] = 100
    on_spark = spark_fr.rank(df, **kw)
    monkeypatch.setenv("SPARK_FR_DRIVER_MAX_SECONDS", "2")
    on_the_driver = spark_fr.rank(df, **kw)
    assert on_spark.metadata["executed_on"] == "spark" and on_the_driver.metadata["executed_on"] == "driver"
    pd.testing.assert_frame_equal(on_spark.to_pandas()[COLS], on_the_driver.to_pandas()[COLS], check_exact=True)


def test_a_cold_job_on_a_small_arff_file_runs_without_a_spark_job(tmp_path, datasets):
    out = tmp_path / "out"
    env = _subprocess_env()
    env.pop("SPARK_FR_DRIVER_MAX_SECONDS", None)
    proc = subprocess.run([sys.executable, str(JOB), "--input", str(datasets / "mtr_enb/enb.arff"), "--targets",
                           "Y1,Y2", "--method", "relief", "--seed", "1", "--output", str(out)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    run = json.loads((out / "run.json").read_text())
    assert run["executed_on"] == "driver" and run["spark_jobs"] == 0
    table = pd.read_csv(out / "ranking.csv")
    assert len(table) == 8 and not os.path.exists(out / "_temporary")


def test_units_start_in_the_driver_while_the_session_starts_and_the_rest_run_on_spark(spark, monkeypatch):
    """A session of ours still starting: unit 0 runs in the driver (and lets the start finish), the units left
    run as Spark tasks; the merged result is the one of computing every unit (one driver thread, so that unit
    0 holds the driver until the session is up)."""
    import threading

    monkeypatch.setenv("SPARK_FR_DRIVER_THREADS", "1")

    from spark_fr.runtime.session import SessionStart
    from spark_fr.runtime.spark import run_units

    gate = threading.Event()

    class GatedStart(SessionStart):  # a real start of the (already active) session, held until the gate opens
        def _run(self):
            gate.wait()
            super()._run()

    start = GatedStart()
    assert not start.started

    class Work:  # unit 0 (in the driver) opens the gate; Spark's tasks get the work without the gate
        def __init__(self, gate, start):
            self.gate, self.start = gate, start

        def __getstate__(self):
            return {}

        def __call__(self, payload, units):
            if 0 in units and hasattr(self, "gate"):  # in the driver only
                self.gate.set()
                self.start.result()  # the session is up before the driver looks for its next unit
            return {u: payload * u for u in units}

    work = Work(gate, start)

    def merge(a, b):
        a.update(b)
        return a

    plans = []

    def plan(left, parallelism):
        plans.append(list(left))
        return [left[i::2] for i in range(2)]

    monkeypatch.delenv("SPARK_FR_DRIVER_MAX_SECONDS")
    result, _, early = run_units(start, 3, list(range(10)), work, merge, {}, plan)
    assert early == 1 and plans == [list(range(1, 10))]
    assert result == {u: 3 * u for u in range(10)}
    # with the limit at 0 no unit runs in the driver, even while a session is starting
    gate.clear()
    plans.clear()
    monkeypatch.setenv("SPARK_FR_DRIVER_MAX_SECONDS", "0")
    again = GatedStart()
    threading.Timer(0.5, gate.set).start()
    result, _, early = run_units(again, 3, list(range(10)), Work(gate, again), merge, {}, plan)
    assert early == 0 and plans == [list(range(10))] and result == {u: 3 * u for u in range(10)}


def test_a_cold_job_started_on_spark_gives_the_driver_ranking(tmp_path, datasets):
    outs = {}
    for limit in ("0", "100"):
        env = {**_subprocess_env(), "SPARK_FR_DRIVER_MAX_SECONDS": limit}
        out = tmp_path / f"out{limit}"
        proc = subprocess.run([sys.executable, str(JOB), "--input", str(datasets / "mtr_enb/enb.arff"), "--targets",
                               "Y1,Y2", "--trees", "30", "--seed", "1", "--output", str(out)],
                              capture_output=True, text=True, env=env, timeout=600)
        assert proc.returncode == 0, proc.stderr
        outs[limit] = pd.read_csv(out / "ranking.csv")[COLS]
        run = json.loads((out / "run.json").read_text())
        assert run["executed_on"] == ("spark" if limit == "0" else "driver")
    pd.testing.assert_frame_equal(outs["0"], outs["100"], check_exact=True)


def _square_units(payload, units):
    return {u: payload * u * u for u in units}


def _merge_units(a, b):
    a.update(b)
    return a


def test_a_lazy_session_starts_only_for_work_too_large_for_the_driver(spark, monkeypatch):
    """A cold run's session is lazy: work the driver's threads finish within SESSION_START_SECONDS never
    starts the JVM; larger work starts it (and the result is the same either way)."""
    from spark_fr.runtime.session import SessionStart
    from spark_fr.runtime.spark import SESSION_START_SECONDS, run_units

    monkeypatch.setenv("SPARK_FR_DRIVER_MAX_SECONDS", "2")
    monkeypatch.setenv("SPARK_FR_DRIVER_THREADS", "2")
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    lazy = SessionStart(lazy=True, master="local[1]")  # fewer cores than the driver's threads: Spark may help
    expected = {u: 3 * u * u for u in range(6)}

    def plan(left, parallelism):
        return [left[i:i + 1] for i in range(len(left))]

    small = 2 * SESSION_START_SECONDS * 0.9  # 9 s on the driver's two threads
    got, _, here = run_units(lazy, 3, list(range(6)), _square_units, _merge_units, {}, plan, estimated_seconds=small)
    assert got == expected and here == 6 and not lazy.requested
    big = 2 * SESSION_START_SECONDS * 3
    got, _, here = run_units(lazy, 3, list(range(6)), _square_units, _merge_units, {}, plan, estimated_seconds=big)
    assert got == expected and lazy.requested
    assert lazy.result() is not None  # the (test's active) session, started for the large work


@pytest.mark.parametrize("master, cores", [("local", 1), ("local[1]", 1), ("local[3]", 3), ("local[2,4]", 2),
                                           ("local[*]", os.cpu_count()), ("local[*, 4]", os.cpu_count()),
                                           ("local[ 2 , 4 ]", 2), ("local-cluster[2,1,1024]", None),
                                           ("spark://host:7077", None), ("yarn", None)])
def test_the_cores_of_the_local_master_a_lazy_session_would_have(master, cores, monkeypatch):
    from spark_fr.runtime.session import SessionStart, local_master_cores

    assert local_master_cores(master) == cores  # a started session's master too (a single node's local[*, 4])
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    assert SessionStart(lazy=True, master=master).local_cores == cores
    monkeypatch.setenv("SPARK_REMOTE", "local[2]")  # Spark Connect: its server is not the driver's threads
    assert SessionStart(lazy=True, master=master).local_cores is None


def test_work_of_any_size_stays_in_the_driver_when_the_session_would_be_local(monkeypatch):
    """A lazy session of ours that would be local[*] would run its tasks on the driver's cores: work the
    estimate sends to Spark runs on the driver's threads instead and the JVM never starts; with the limit at 0
    (always Spark tasks) or a master with fewer cores than the driver's threads, the session is asked for."""
    from spark_fr.runtime.session import SessionStart
    from spark_fr.runtime.spark import run_units

    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    monkeypatch.setenv("SPARK_FR_DRIVER_MAX_SECONDS", "2")
    monkeypatch.setenv("SPARK_FR_DRIVER_THREADS", "2")
    expected = {u: 3 * u * u for u in range(6)}

    def plan(left, parallelism):
        return [left[i:i + 1] for i in range(len(left))]

    lazy = SessionStart(lazy=True, master="local[*]" if (os.cpu_count() or 1) >= 2 else "local[2]")
    got, _, here = run_units(lazy, 3, list(range(6)), _square_units, _merge_units, {}, plan,
                             estimated_seconds=10_000.0)
    assert got == expected and here == 6 and not lazy.requested

    class NoStart(SessionStart):  # the session asked for: seen, and not started (this test needs no JVM)
        def start(self):
            raise RuntimeError("the session was asked for")

    for master, limit in (("local[1]", "2"), ("local[*]", "0")):
        monkeypatch.setenv("SPARK_FR_DRIVER_MAX_SECONDS", limit)
        with pytest.raises(RuntimeError, match="asked for"):
            run_units(NoStart(lazy=True, master=master), 3, list(range(6)), _square_units, _merge_units, {}, plan,
                      estimated_seconds=10_000.0)


def test_a_users_started_local_session_leaves_the_work_on_the_driver(spark, monkeypatch):
    """A started classic session whose master is local with at least the driver's threads (the tests' local[2],
    a notebook's local[*]) would run its tasks on this machine's cores: every unit runs on the driver's threads
    whatever the estimate (no Spark task); with more driver threads than its cores, or the limit at 0, they run
    as Spark tasks (the same merged result)."""
    from spark_fr.runtime.session import local_master_cores
    from spark_fr.runtime.spark import run_units

    cores = local_master_cores(spark.sparkContext.master)
    assert cores == 2
    expected = {u: 3 * u * u for u in range(6)}

    def plan(left, parallelism):
        return [left[i:i + 1] for i in range(len(left))]

    for threads, limit, units_here in (("2", "2", 6), ("3", "2", 0), ("2", "0", 0)):
        monkeypatch.setenv("SPARK_FR_DRIVER_THREADS", threads)
        monkeypatch.setenv("SPARK_FR_DRIVER_MAX_SECONDS", limit)
        got, _, here = run_units(spark, 3, list(range(6)), _square_units, _merge_units, {}, plan,
                                 estimated_seconds=10_000.0)
        assert got == expected and here == units_here, (threads, limit, here)


@pytest.mark.parametrize("threads", ["1", "3"])
def test_driver_map_stream_reads_one_window_at_a_time(monkeypatch, threads):
    from spark_fr.runtime.spark import driver_map_stream

    monkeypatch.setenv("SPARK_FR_DRIVER_THREADS", threads)
    window, produced = int(threads), []

    def items():
        for i in range(10):
            produced.append(i)
            yield i

    def fn(i):  # the item's window is read, the next one not yet
        return i * i, len(produced)

    got = driver_map_stream(fn, items())
    assert [v for v, _ in got] == [i * i for i in range(10)]
    assert all(seen <= min(10, (i // window + 1) * window) for i, (_, seen) in enumerate(got))
    assert driver_map_stream(fn, iter([])) == []
