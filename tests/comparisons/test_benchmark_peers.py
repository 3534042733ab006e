"""The peers of jobs/benchmark.py run for real on tiny planted sets, and the benchmark reads what they write.

Every peer is built exactly as its suite builds it (``ensemble.make_peers``, ``relief.relief_peer``), its
command is run and measured by ``measure.run_measured`` as in a benchmark round, and its result is read
back by the peer's own reader. The data are ``make_synthetic.py`` sets (seeded) through the benchmark's
``data.make_data``: 300 rows x 10 features, so that each run takes seconds; the planted features are easy
to find, and every peer must put exactly them on top. spark_fr's own command (``jobs/rank.py``) is covered
by the end-to-end tests; here its output, written by the test session, is parsed by the benchmark's reader.
Nothing here asserts on time.
"""
import json
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT

if str(ROOT / "jobs") not in sys.path:
    sys.path.insert(0, str(ROOT / "jobs"))

from benchmarks import ensemble, relief  # noqa: E402
from benchmarks.data import make_data  # noqa: E402
from benchmarks.measure import run_measured  # noqa: E402
from benchmarks.peers import check_available  # noqa: E402

ROWS, FEATURES, TREES, K = 300, 10, 20, 10


def _needs(peer: str):
    """Skip (with the benchmark's own message) when the peer's software is missing."""
    _, notes = check_available([peer])
    return pytest.mark.skipif(bool(notes), reason="; ".join(notes))


@pytest.fixture(scope="module")
def sets(tmp_path_factory):
    """The three planted sets: MTR (2 targets: x1, x2, x3), regression and classification (x1, x2, x3)."""
    work = tmp_path_factory.mktemp("bench_data")
    return {"mtr": make_data(work, ROWS, FEATURES, 2, task="mtr"),
            "reg": make_data(work, ROWS, FEATURES, 1, task="reg"),
            "cls": make_data(work, ROWS, FEATURES, 1, task="cls")}


def run_peer(peer, run_dir: Path) -> tuple:
    """One measured run of ``peer`` as in a benchmark round; returns (its run facts, order, extra facts)."""
    res = run_measured(peer.command(run_dir), run_dir, timeout=900)
    assert res["returncode"] == 0, res["stderr_tail"]
    order, extra = peer.top(run_dir)
    assert sorted(order) == sorted(f"x{i}" for i in range(1, FEATURES + 1))  # every feature, once
    return res, order, extra


def test_data_sets_have_the_planted_features(sets):
    arff, truth = sets["mtr"]
    assert truth["relevant"] == ["x1", "x2", "x3"] and truth["target_names"] == ["t1", "t2"]
    lines = arff.read_text().splitlines()
    assert sum(line.startswith("@ATTRIBUTE") for line in lines) == FEATURES + 2
    assert len(lines) - lines.index("@DATA") - 1 == ROWS
    written = arff.stat().st_mtime_ns
    again, _ = make_data(arff.parent, ROWS, FEATURES, 2, task="mtr")
    assert again == arff and arff.stat().st_mtime_ns == written  # reused, not rewritten


@pytest.mark.peers
@_needs("sklearn")
def test_sklearn_forest(sets, tmp_path):
    arff, truth = sets["mtr"]
    (peer,) = ensemble.make_peers(["sklearn"], arff, truth, TREES)
    res, order, extra = run_peer(peer, tmp_path)
    assert set(order[:3]) == set(truth["relevant"])
    importance = json.loads((tmp_path / "result.json").read_text())["importance"]
    assert list(importance) == order and sum(importance.values()) == pytest.approx(1.0)
    assert list(importance.values()) == sorted(importance.values(), reverse=True)
    assert set(extra) == {"read_s", "fit_s"} and extra["fit_s"] > 0 and res["peak_rss_mb"] > 0


@pytest.mark.peers
@_needs("clus")
def test_clus_forest(sets, tmp_path):
    arff, truth = sets["mtr"]
    (peer,) = ensemble.make_peers(["clus"], arff, truth, TREES)
    _, order, extra = run_peer(peer, tmp_path)
    assert set(order[:3]) == set(truth["relevant"])  # Genie3
    assert set(extra["symbolic_order"][:3]) == set(truth["relevant"])
    assert extra["clus_wall_s"] > 0 and extra["clus_peak_rss_kb"] > 0
    settings = (tmp_path / "clus" / "run.s").read_text()  # CLUS worked next to the result
    assert "Iterations = 20" in settings and "Target = 11-12" in settings and "NumberOfThreads = 2" in settings


@pytest.mark.peers
@_needs("skrebate")
def test_skrebate_relief(sets, tmp_path):
    arff, truth = sets["cls"]
    peer = relief.relief_peer("skrebate", "skrebate", arff, truth, K, "1.0")
    _, order, extra = run_peer(peer, tmp_path)
    assert set(order[:3]) == set(truth["relevant"])
    assert extra["algo_s"] > 0 and extra["read_s"] > 0


@pytest.mark.peers
@_needs("clus")
def test_clus_relief(sets, tmp_path):
    arff, truth = sets["reg"]
    peer = relief.relief_peer("clus", "clus", arff, truth, K, "1.0")
    _, order, extra = run_peer(peer, tmp_path)
    assert order[:3] == ["x1", "x2", "x3"]  # y = 4 x1 + 2 sin(3 x2) + x3: in this order
    assert isinstance(extra["algo_s"], float)  # CLUS' induction time, read from its .out file
    assert "Neighbours = 10" in (tmp_path / "clus" / "run.s").read_text()


@pytest.mark.peers
def test_spark_fr_warm(sets, tmp_path):
    arff, truth = sets["reg"]
    peer = relief.relief_peer("spark_fr_warm", "spark_fr_warm", arff, truth, K, "1.0")
    _, order, extra = run_peer(peer, tmp_path)
    assert order[:3] == ["x1", "x2", "x3"]
    assert extra["algo_s"] == extra["spark_fr_timings"]["relief_s"]
    assert extra["call_s"] > 0 and extra["first_call_s"] > 0 and extra["spark_start_s"] > 0


def test_the_benchmark_reads_spark_fr_output(spark, sets, tmp_path):
    """spark_fr's ranking.csv and run.json, as jobs/rank.py writes them, through the suites' readers."""
    import spark_fr

    arff, truth = sets["mtr"]
    ranking = spark_fr.rank(str(arff), targets="t1,t2", trees=TREES, scores="genie3,symbolic", per_target=True,
                            seed=1, spark=spark)
    ranking.write(str(tmp_path / "ens" / "out"), format="csv")
    (peer,) = ensemble.make_peers(["spark_fr"], arff, truth, TREES)
    order, extra = peer.top(tmp_path / "ens")
    table = ranking.to_pandas()
    joint = table[(table["score"] == "genie3") & (table["target"] == "__all__")].sort_values("rank")
    assert order == list(joint["feature"]) and set(order[:3]) == set(truth["relevant"])
    assert extra["spark_fr_timings"]["total_s"] > 0

    arff, truth = sets["reg"]
    ranking = spark_fr.rank(str(arff), targets="y", method="relief", relief_neighbours=K, seed=1, spark=spark)
    ranking.write(str(tmp_path / "rel" / "out"), format="csv")
    order, extra = relief.relief_peer("spark_fr", "spark_fr", arff, truth, K, "1.0").top(tmp_path / "rel")
    assert order[:3] == ["x1", "x2", "x3"]
    assert extra["algo_s"] == ranking.metadata["timings"]["relief_s"] > 0
    assert extra["call_s"] == ranking.metadata["timings"]["total_s"]


@pytest.mark.peers
@_needs("clus")
@_needs("sklearn")
def test_ensemble_suite_without_spark(tmp_path, capsys):
    """The whole ensemble suite (data, rounds, table, JSON) with its two outside peers."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("spark_fr_benchmark_peers", ROOT / "jobs" / "benchmark.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = tmp_path / "report.json"
    code = bench.main(["--peers", "sklearn,clus", "--rows", str(ROWS), "--features", str(FEATURES), "--targets", "2",
                       "--trees", str(TREES), "--repeats", "1", "--workdir", str(tmp_path), "--json", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    report = json.loads(out.read_text())
    assert list(report) == ["config", "data", "environment", "skipped", "summary", "runs"]
    assert list(report["summary"]) == ["sklearn", "clus"]
    assert all(s["runs_ok"] == 1 and s["top_planted_every_run"] for s in report["summary"].values())
    assert report["data"]["planted"] == ["x1", "x2", "x3"]
    assert "top-3 = planted" in printed and "ratio vs spark_fr" in printed
