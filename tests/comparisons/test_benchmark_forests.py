"""XGBoost's and LightGBM's random forests in jobs/benchmark.py, and a peer that runs out of memory.

The peers are built as the tall and wide suites build them (``tall.make_peers``, ``wide.make_peers``), run and
measured by ``measure.run_measured`` as in a benchmark round, on tiny planted sets of the suites' own data
makers, and read back by their reader: every feature once, the planted ones on top, the forest of the asked
size and depth. A peer past the memory limit is a real process killed at the limit, reported as a line of the
table. All marked ``peers`` (``python jobs/benchmark.py --check``); the peer tests skip, with the benchmark's
own one-line reason, where xgboost or lightgbm is not installed. Nothing here asserts on time.
"""
import importlib.util
import json
import sys

import pytest

from tests.paths import ROOT

if str(ROOT / "jobs") not in sys.path:
    sys.path.insert(0, str(ROOT / "jobs"))

from benchmarks.measure import run_measured  # noqa: E402
from benchmarks.peers import check_available  # noqa: E402

pytestmark = pytest.mark.peers
ROWS, FEATURES, TARGETS, TREES, DEPTH = 3000, 10, 2, 10, 6


def _needs(*peers):
    """Skip (with the benchmark's own message) when a peer's software is missing."""
    notes = check_available(list(peers))[1]
    return pytest.mark.skipif(bool(notes), reason="; ".join(notes))


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("spark_fr_benchmark_forests", ROOT / "jobs" / "benchmark.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def tall_set(tmp_path_factory):
    from benchmarks.tall_data import make_tall

    return make_tall(tmp_path_factory.mktemp("tall"), ROWS, FEATURES, TARGETS, planted=5)


def _run(peer, run_dir, features):
    res = run_measured(peer.command(run_dir), run_dir, timeout=600)
    assert res["returncode"] == 0, res["stderr_tail"]
    order, extra = peer.top(run_dir)
    assert sorted(order) == sorted(f"x{i}" for i in range(1, features + 1))  # every feature, once
    return res, order, extra


def _tall_peer(bench, name, data, truth):
    from benchmarks import tall

    args = bench.parse_args(["--suite", "tall", "--trees", str(TREES), "--targets", str(TARGETS)])
    (peer,) = tall.make_peers([name], data, truth, args)
    return peer


def test_depth_peers_are_named_by_program_and_depth(bench, tmp_path):
    from benchmarks import tall

    args = bench.parse_args(["--suite", "tall", "--trees", "7", "--peers", "spark_fr_d12,xgboost_d20,lightgbm_d12"])
    assert args.peers == ["spark_fr_d12", "xgboost_d20", "lightgbm_d12"] and args.max_memory_gb > 0
    for bad in ("xgboost_d0", "catboost_d12", "xgboost_d", "sklearn_d12"):
        with pytest.raises(SystemExit):
            bench.parse_args(["--suite", "tall", "--peers", bad])
    truth = {"n": 1000, "p": 10, "target_names": ["t1", "t2"], "relevant": ["x2"]}
    d12, x20, l12 = tall.make_peers(args.peers, tmp_path / "t.parquet", truth, args)
    assert " ".join(d12.command(tmp_path)).count("--max-depth 12") == 1
    x20_cmd, l12_cmd = " ".join(x20.command(tmp_path)), " ".join(l12.command(tmp_path))
    assert "xgboost_forest.py" in x20_cmd and "--min-samples-leaf 2 --max-depth 20" in x20_cmd
    assert "lightgbm_forest.py" in l12_cmd and "--targets 2 --trees 7" in l12_cmd and "--max-depth 12" in l12_cmd
    assert tall.pairs(args.peers)[-2:] == [("xgboost_d20", "spark_fr_d20"), ("lightgbm_d12", "spark_fr_d12")]
    assert bench.parse_args(["--suite", "tall", "--max-memory-gb", "3"]).max_memory_gb == 3
    with pytest.raises(SystemExit):
        bench.parse_args(["--suite", "wide", "--max-memory-gb", "0"])


@_needs("xgboost")
def test_xgboost_forest(bench, tall_set, tmp_path):
    data, truth = tall_set
    _, order, extra = _run(_tall_peer(bench, f"xgboost_d{DEPTH}", data, truth), tmp_path, FEATURES)
    assert set(order[:5]) == set(truth["relevant"])
    assert extra["trees_built"] == TREES and extra["multi_strategy"] == "multi_output_tree"  # one tree, all targets
    assert extra["max_depth"] == DEPTH and extra["subsample"] == pytest.approx(0.632, abs=1e-3)
    assert int(extra["colsample_bynode"] * FEATURES) == 3                                      # floor(sqrt(10))
    importance = json.loads((tmp_path / "result.json").read_text())["importance"]
    assert list(importance) == order and importance[order[0]] > 0 and extra["fit_s"] > 0


@_needs("lightgbm")
def test_lightgbm_forest(bench, tall_set, tmp_path):
    data, truth = tall_set
    _, order, extra = _run(_tall_peer(bench, f"lightgbm_d{DEPTH}", data, truth), tmp_path, FEATURES)
    assert set(order[:5]) == set(truth["relevant"])
    assert extra["forests"] == TARGETS and extra["trees_built"] == TARGETS * TREES      # one forest per target
    assert extra["max_depth"] == DEPTH and extra["num_leaves"] == 2 ** DEPTH
    importance = json.loads((tmp_path / "result.json").read_text())["importance"]
    assert sum(importance.values()) == pytest.approx(1.0) and extra["fit_s"] > 0       # mean of normalised gains


@_needs("xgboost", "lightgbm")
def test_forests_classify_the_wide_table(tmp_path):
    """The wide suite's classifiers: one forest over the three classes, at full depth."""
    from benchmarks import wide
    from benchmarks.wide_data import make_wide

    parquet, arff, truth = make_wide(tmp_path / "data", 600, 100, planted=4)
    xgb, lgb = wide.make_peers(["xgboost", "lightgbm"], parquet, arff, truth, TREES)
    for peer in (xgb, lgb):
        _, order, extra = _run(peer, tmp_path / peer.name, 100)
        assert len(set(order[:4]) & set(truth["relevant"])) >= 3, (peer.name, order[:10])
        assert "--classifier" in peer.command(tmp_path)
        if peer.name == "xgboost":
            assert extra["trees_built"] == TREES and extra["multi_strategy"] == "multi_output_tree"
            assert extra["max_depth"] == 0                                             # full depth: no limit
        else:
            assert extra["trees_built"] == 3 * TREES and extra["num_leaves"] == 131072  # a tree per class and round


@_needs("xgboost", "lightgbm")
def test_tall_suite_with_the_forests_at_one_depth(bench, tmp_path, capsys):
    names = [f"spark_fr_d{DEPTH}", f"xgboost_d{DEPTH}", f"lightgbm_d{DEPTH}"]
    out = tmp_path / "tall.json"
    code = bench.main(["--suite", "tall", "--rows", str(ROWS), "--features", str(FEATURES), "--targets", str(TARGETS),
                       "--trees", str(TREES), "--peers", ",".join(names), "--workdir", str(tmp_path), "--json", str(out)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    report = json.loads(out.read_text())
    summary = report["summary"]
    assert list(summary) == names and all(s["runs_ok"] == 1 and s["top_planted_every_run"] for s in summary.values())
    assert all(s["median_per_tree_s"] > 0 for s in summary.values())
    spark_fr = report["runs"][names[0]][0]
    assert spark_fr["per_tree_s"] == round(spark_fr["spark_fr_timings"]["trees_s"] / TREES, 4)
    assert [(r["peer"], r["reference"]) for r in report["ratios"]] == [(n, names[0]) for n in names[1:]]
    assert "s / tree" in printed and f"xgboost_d{DEPTH} / spark_fr_d{DEPTH}: wall" in printed


def test_a_peer_past_the_memory_limit_is_a_line_of_the_table(tmp_path):
    """A real process that grows past the limit is killed there, reported with the time and memory it had
    reached, not started again, and its ratio to the reference that finished is a lower bound."""
    from benchmarks.peers import Peer
    from benchmarks.rounds import exit_code, run_rounds, summarise
    from benchmarks.tables import format_pair_ratios, pair_ratios, peer_table

    grow = "import time\nkeep = []\nfor _ in range(200):\n    keep.append(b\"\\x01\" * 10 ** 7); time.sleep(0.02)\n"
    hog = Peer("hog", lambda run_dir: [sys.executable, "-c", grow], lambda d: ([], {}))
    small = Peer("spark_fr", lambda run_dir: [sys.executable, "-c", "pass"], lambda d: ([], {}))
    results = run_rounds([small, hog], 2, tmp_path, [], timeout=120, max_gb=0.2)
    (run,) = results["hog"].runs                                          # out of memory once: not started again
    assert run["killed"] == "memory" and run["status"] == "did not finish: out of memory (over 0.2 GB)"
    assert run["peak_rss_mb"] > 0.2 * 1024 and len(results["spark_fr"].runs) == 2
    summary = summarise(results, [], reference="spark_fr")
    assert summary["hog"]["runs_ok"] == 0 and summary["hog"]["reached_peak_rss_mb"] == run["peak_rss_mb"]
    table = peer_table(summary, 0, 10, [])
    assert f"hog           0  did not finish: out of memory (over 0.2 GB) after {run['wall_s']:.0f} s, at " in table
    (ratio,) = pair_ratios(summary, [("hog", "spark_fr")])
    assert ratio["wall"] is None and ratio["wall_at_least"] > 0
    assert format_pair_ratios([ratio]).startswith(f"hog / spark_fr: wall > {ratio['wall_at_least']:.2f}x (hog did "
                                                  "not finish: out of memory (over 0.2 GB) after ")
    assert exit_code(summary) == 0                                        # a peer's line, not a failed benchmark
    assert exit_code({"spark_fr_d20": summary["hog"]}) == 1               # spark_fr's own run must finish
