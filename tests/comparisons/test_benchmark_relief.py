"""The Relief suite of jobs/benchmark.py: option parsing and the summaries (no Spark, no peers started).

Performance itself is reported by the benchmark as ratios, never asserted here.
"""
import importlib.util
import json
import sys

import pytest

from tests.paths import ROOT


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("spark_fr_benchmark", ROOT / "jobs" / "benchmark.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)  # puts jobs/ on sys.path: its suites are the package ``benchmarks``
    return mod


@pytest.fixture(scope="module")
def relief(bench):
    from benchmarks import relief

    return relief


@pytest.fixture(scope="module")
def tables(bench):
    from benchmarks import tables

    return tables


def test_default_suite_is_ensemble(bench):
    args = bench.parse_args([])
    assert args.suite == "ensemble" and args.peers == ["spark_fr", "sklearn", "clus"]


def test_relief_options(bench, relief):
    args = bench.parse_args(["--suite", "relief", "--relief-rows-skrebate", "2000,4000", "--relief-parts", "clus,memory"])
    assert args.relief_rows_skrebate == [2000, 4000] and args.relief_rows_memory == [5000, 10000, 20000]
    assert args.relief_parts == ["clus", "memory"] and args.relief_memory_modes == ["broadcast", "tall"]
    assert args.relief_iterations == "1000" and args.relief_neighbours == 10 and args.relief_warm
    assert relief._iterations("1000") == 1000 and relief._iterations("1.0") == 1.0
    for bad in (["--relief-parts", "nope"], ["--relief-rows-memory", "5k"], ["--relief-memory-modes", "wide"]):
        with pytest.raises(SystemExit):
            bench.parse_args(["--suite", "relief", *bad])


def test_relief_commands(relief, tmp_path):
    truth = {"p": 200, "target_names": ["y"], "task": "reg", "descriptive": "1-200", "target": "201"}
    arff = tmp_path / "reg.arff"
    cmd = relief.relief_peer("spark_fr", "spark_fr", arff, truth, 10, "1000", mode="tall").command(tmp_path)
    text = " ".join(cmd)
    assert "--method relief --relief-neighbours 10 --relief-iterations 1000 --relief-mode tall" in text
    warm = relief.relief_peer("spark_fr_warm", "w", arff, truth, 10, "1.0").command(tmp_path)
    assert json.loads(warm[-2]) == {"relief_neighbours": 10, "relief_iterations": 1.0, "seed": 1}


def test_summaries_and_ratios(relief, tables, tmp_path):
    from benchmarks.rounds import PeerResult

    results = {}
    for name, wall, algo, peak in (("spark_fr", 10.0, 1.0, 1000.0), ("clus", 60.0, 58.0, 250.0)):
        r = PeerResult(name)
        r.runs = [{"returncode": 0, "wall_s": wall, "algo_s": algo, "peak_rss_mb": peak, "top": ["x1", "x2", "x3"]}]
        results[name] = r
    warm = PeerResult("spark_fr_warm")
    warm.runs = [{"returncode": 0, "wall_s": 20.0, "algo_s": 0.5, "call_s": 2.0, "peak_rss_mb": 1000.0,
                  "top": ["x1", "x3", "x2"]}]
    results["spark_fr_warm"] = warm
    summary = relief.relief_summary(results, ["x1", "x2", "x3"])
    assert summary["clus"]["median_algo_s"] == 58.0 and summary["spark_fr_warm"]["median_call_s"] == 2.0
    ratio = tables.relief_ratios(summary, "clus", "spark_fr", "spark_fr_warm")
    assert ratio["wall"] == 6.0 and ratio["algorithm"] == 58.0 and ratio["peer_algorithm_over_warm_call"] == 29.0
    assert "clus / spark_fr: wall 6.00x" in tables.format_ratio(ratio)
    assert "yes" in tables.format_relief_table(summary, 3)
    rows = tables.memory_rows({"a": {"median_peak_rss_mb": 1000.0}, "b": {"median_peak_rss_mb": 1100.0}},
                             {"a": ("spark_fr", "broadcast", 5000), "b": ("spark_fr", "broadcast", 10000)})
    assert rows[1]["mb_per_1000_rows_since_previous"] == 20.0 and rows[1]["peak_ratio_to_previous"] == 1.1
    assert "broadcast" in tables.format_memory_table(rows, 200)
