"""The progress reporter: its arithmetic on a fake clock (one total, percent, ETA, never going back), and a real
Spark run whose progress lines keep one total and appear while the Spark job runs."""
import logging
import threading

import numpy as np
import pandas as pd
import pytest

from spark_fr.runtime.engine import work_fraction
from spark_fr.runtime.progress import Progress, report_every


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_percent_elapsed_and_eta_on_a_fake_clock(caplog):
    clock = Clock()
    p = Progress(200, "trees", every=3600, clock=clock)
    with caplog.at_level(logging.INFO, logger="spark_fr.progress"):
        p.start()
        first = p.report()
        assert (first["done"], first["total"], first["percent"], first["eta_s"]) == (0, 200, 0.0, None)
        clock.now += 10
        p.advance(50)
        state = p.report()
        assert state["done"] == 50 and state["total"] == 200 and state["percent"] == 25.0
        assert state["elapsed_s"] == 10 and state["eta_s"] == pytest.approx(30.0)  # 10 s for 50: 30 s for 150
        clock.now += 20
        p.advance(150)
        p.stop()
    lines = [r for r in caplog.records if r.name == "spark_fr.progress"]
    assert [r.progress["total"] for r in lines] == [200] * len(lines)
    assert lines[-1].progress["final"] and lines[-1].progress["done"] == 200
    assert lines[1].getMessage() == "trees 50 / 200 (25 %), 10 s elapsed, ETA 30 s"
    assert lines[-1].getMessage() == "trees 200 / 200 (100 %), 30 s elapsed, done"
    assert Progress.format({**state, "elapsed_s": 3725, "eta_s": 65}).endswith("1 h 02 min elapsed, ETA 1 min 05 s")


def test_a_running_job_counts_and_done_never_goes_back_nor_past_the_total():
    clock = Clock()
    p = Progress(100, "trees", every=3600, clock=clock)
    p.advance(10)  # ten units in the driver
    seen = {"units": 0}
    with p.tracking(lambda: seen["units"]):
        seen["units"] = 30
        assert p.done == 40
        seen["units"] = 20  # a poll that lags behind (stage counts arrive late) is not a step back
        assert p.done == 40
        seen["units"] = 500
        assert p.done == 100  # never past the total
    p.advance(0)
    assert p.done == 100  # the largest value shown stays
    broken = Progress(10, "x", every=3600, clock=clock)
    with broken.tracking(lambda: 1 / 0):  # a failing poll never breaks the run it reports on
        assert broken.done == 0


def test_the_reporting_thread_logs_steadily_even_without_new_units(caplog):
    """Every `every` seconds a line, whether or not a unit finished (a long Spark task is not silence)."""
    p = Progress(5, "Relief instances", every=0.05)
    with caplog.at_level(logging.INFO, logger="spark_fr.progress"):
        with p:
            threading.Event().wait(0.4)
            p.advance(5)
    lines = [r.progress for r in caplog.records if r.name == "spark_fr.progress"]
    assert len(lines) >= 4 and all(s["total"] == 5 for s in lines)
    assert [s["done"] for s in lines[:3]] == [0, 0, 0] and lines[-1]["done"] == 5 and lines[-1]["final"]


def test_the_interval_reads_the_environment(monkeypatch):
    monkeypatch.setenv("SPARK_FR_PROGRESS_SECONDS", "0.5")
    assert report_every() == 0.5
    for bad in ("x", "0", "-1"):
        monkeypatch.setenv("SPARK_FR_PROGRESS_SECONDS", bad)
        assert report_every() == 5.0


def test_the_work_fraction_of_a_job_follows_its_work_stage():
    stages = {3: (1, 1), 4: (8, 2), 5: (3, 0)}  # a broadcast's stage, the work (8 tasks), a reduction
    assert work_fraction(stages, 8) == 0.25
    assert work_fraction(stages, None) == 0.25  # the stage with the most tasks
    assert work_fraction(stages, 6) == 0.0 and work_fraction({}, None) == 0.0
    assert work_fraction(stages, 1) == 0.0  # one task: nothing to tell before it ends


def test_progress_lines_keep_one_total_and_appear_while_the_spark_job_runs(spark, monkeypatch, caplog):
    """A real ranking forced to Spark tasks (6 tasks of 4 trees): the 'trees' lines all say '/ 24', and some come
    while the job runs, with trees done and still to do; the ranking is unchanged by the reporting."""
    import spark_fr
    from spark_fr.ensemble import spark as ensemble_spark

    monkeypatch.setenv("SPARK_FR_PROGRESS_SECONDS", "0.1")
    monkeypatch.setattr(ensemble_spark, "_SECONDS_PER_UNIT", 1e-3)  # the cost model asks for 6 tasks
    rng = np.random.default_rng(3)
    n = 12000  # the job lasts a few report intervals even on a quiet machine (3,000 rows took 0.5 s: no line between)
    X = rng.normal(size=(n, 12))
    pdf = pd.DataFrame(X, columns=[f"x{i}" for i in range(12)])
    pdf["y"] = X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.1, size=n)
    df = spark.createDataFrame(pdf)
    with caplog.at_level(logging.INFO, logger="spark_fr"):
        ranking = spark_fr.rank(df, targets="y", trees=24, seed=1, scores="symbolic,genie3,rf", spark=spark)
    lines = [r.progress for r in caplog.records if r.name == "spark_fr.progress" and r.progress["label"] == "trees"]
    assert lines and {s["total"] for s in lines} == {24}
    assert [s["done"] for s in lines] == sorted(s["done"] for s in lines)
    assert any(not s["final"] and 0 < s["done"] < 24 and s["eta_s"] > 0 for s in lines)  # while trees grew
    assert lines[-1]["final"] and lines[-1]["done"] == 24
    assert ranking.metadata["executed_on"] == "spark" and ranking.metadata["session"] == "classic"
    assert ranking.metadata["tree_groups"] == 6
    assert ranking.top("genie3").feature.iloc[0] == "x0"


def test_before_the_first_unit_the_eta_says_when_it_will_be_known_and_units_read_as_a_count(caplog):
    clock = Clock()
    with caplog.at_level(logging.INFO, logger="spark_fr.progress"):
        trees = Progress(100, "trees", every=3600, clock=clock).start()
        clock.now += 61
        assert Progress.format(trees.state()) == "trees 0 / 100 (0 %), 1 min 01 s elapsed, ETA after the first trees"
        columns = Progress(5000, "statistics", every=3600, clock=clock, unit="columns").start()
        clock.now += 40
        columns.advance(1200)
        assert Progress.format(columns.state()) == ("statistics: 1,200 / 5,000 columns (24 %), 40 s elapsed, "
                                                    "ETA 2 min 07 s")
        # brief: a loop that ended before its first periodic line logs nothing; one that reported logs its end
        quick = Progress(10, "statistics", every=3600, clock=clock, unit="columns", brief=True).start()
        quick.advance(10)
        quick.stop()
        assert not caplog.records
        slow = Progress(10, "statistics", every=3600, clock=clock, unit="columns", brief=True).start()
        slow.report()
        slow.advance(10)
        slow.stop()
    assert [r.getMessage() for r in caplog.records] == [
        "statistics: 0 / 10 columns (0 %), 0 s elapsed, ETA after the first columns",
        "statistics: 10 / 10 columns (100 %), 0 s elapsed, done"]
