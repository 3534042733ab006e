"""The tall, wide and scaling suites of jobs/benchmark.py: their data, their cost model, and each suite end to
end at a tiny size with its real peers (spark_fr's job, scikit-learn, Spark MLlib in its own Spark process,
CLUS).

The end-to-end tests run ``jobs/benchmark.py``'s ``main`` as a user would (each peer a separate, measured
process) and check what the suites report: the JSON keys, the planted-feature columns, the ensemble modes,
the cost-model fields and the plot. Times are recorded by the suites and never asserted here.
"""
import importlib.util
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.paths import ROOT

if str(ROOT / "jobs") not in sys.path:
    sys.path.insert(0, str(ROOT / "jobs"))

from benchmarks.peers import check_available  # noqa: E402


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("spark_fr_benchmark_suites", ROOT / "jobs" / "benchmark.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)  # puts jobs/ on sys.path: its suites are the package ``benchmarks``
    return mod


def _missing(*peers):
    """The benchmark's own messages for the peers that cannot run here (empty: all can)."""
    return check_available(list(peers))[1]


# ----- options ---------------------------------------------------------------------------------------------
def test_each_suite_has_its_own_defaults(bench):
    tall = bench.parse_args(["--suite", "tall"])
    assert (tall.rows, tall.features, tall.targets, tall.trees, tall.repeats) == (1_000_000, 50, 3, 100, 1)
    assert tall.peers == ["spark_fr", "spark_fr_d5", "sklearn", "mllib", "spark_fr_partitioned", "xgboost", "lightgbm",
                          "spark_fr_d12", "xgboost_d12", "lightgbm_d12"]
    wide = bench.parse_args(["--suite", "wide", "--peers", "spark_fr,clus"])
    assert (wide.rows, wide.features, wide.wide_planted, wide.peers) == (2000, 20000, 10, ["spark_fr", "clus"])
    scaling = bench.parse_args(["--suite", "scaling", "--plot"])
    assert scaling.scaling_masters == ["local[1]", "local[2]", "local-cluster[2,1,4096]"]
    assert (scaling.rows, scaling.trees, scaling.scaling_rows_per_core, scaling.plot) == (200_000, 40, 100_000, "")
    assert scaling.scaling_predict == {"rows": 1e8, "features": 1000, "executors": 100, "trees": 100}
    ensemble = bench.parse_args([])
    assert (ensemble.rows, ensemble.features, ensemble.peers) == (20000, 200, ["spark_fr", "sklearn", "clus"])


@pytest.mark.parametrize("argv", [["--suite", "tall", "--peers", "clus"], ["--suite", "wide", "--peers", "mllib"],
                                  ["--suite", "tall", "--features", "4"],
                                  ["--suite", "tall", "--tall-max-samples", "2.5"],
                                  ["--suite", "scaling", "--scaling-masters", "yarn"],
                                  ["--suite", "scaling", "--scaling-modes", "tall"]])
def test_bad_suite_options(bench, argv):
    with pytest.raises(SystemExit):
        bench.parse_args(argv)


def test_sklearn_is_skipped_where_its_forest_cannot_fit(bench):
    from benchmarks.tall import sklearn_forest_gb

    assert 4 < sklearn_forest_gb(1_000_000, 50, 3, 100) < 6      # ~0.55 nodes per row, 88 bytes a node
    assert sklearn_forest_gb(10_000_000, 50, 3, 100) > 40
    assert sklearn_forest_gb(10_000_000, 50, 3, 100, max_samples=0.01) < 5


#: collects each selection in one interpreter: [[exit code, [node ids]], ...]
COLLECT = """
import json, sys
import pytest

class Ids:
    def pytest_collection_finish(self, session):
        Ids.ids = [item.nodeid for item in session.items]

out = []
for args in json.loads(sys.argv[1]):
    Ids.ids = []
    code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", *args], plugins=[Ids()])
    out.append([int(code), Ids.ids])
print("COLLECTED " + json.dumps(out))
"""


def test_check_runs_the_peers_tests_the_default_run_leaves_out(bench):
    """``jobs/benchmark.py --check`` selects the tests marked ``peers``; the default run deselects exactly them,
    a ``-m`` expression naming the marker keeps them, and so does a node id naming one."""
    import re
    import subprocess

    from tests.conftest import _subprocess_env

    command = bench.check_command()
    assert command[1:6] == ["-m", "pytest", "-q", "-m", "peers"] and command[6] == str(ROOT / "tests")
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("test_benchmark_*.py"))
    here = Path(__file__).resolve().relative_to(ROOT)
    named = f"{here}::test_scaling_suite"
    selections = [files, ["-m", "peers", *files], ["-m", "peers or not peers", *files], ["-m", "not slow", *files],
                  [named]]
    done = subprocess.run([sys.executable, "-c", COLLECT, json.dumps(selections)], capture_output=True, text=True,
                          cwd=str(ROOT), env=_subprocess_env(), timeout=300)
    found = re.search(r"^COLLECTED (.*)$", done.stdout, re.M)
    assert found, done.stdout[-2000:] + done.stderr[-2000:]
    (c1, default), (c2, peers), (c3, every), (c4, not_slow), (c5, one) = json.loads(found.group(1))
    assert (c1, c2, c3, c4, c5) == (0, 0, 0, 0, 0)
    assert peers and default and not set(peers) & set(default) and sorted(peers + default) == sorted(every)
    assert f"{here}::test_tall_suite" in peers and set(not_slow) <= set(default)
    assert one == [named]


# ----- data ------------------------------------------------------------------------------------------------
def test_tall_data_is_written_by_row_group_and_reused(bench, tmp_path, monkeypatch):
    import pyarrow.parquet as pq
    from benchmarks import tall_data

    monkeypatch.setattr(tall_data, "ROW_GROUP", 1000)
    path, truth = tall_data.make_tall(tmp_path, 2500, 20, 3, planted=5, seed=7)
    meta = pq.ParquetFile(path).metadata
    assert (meta.num_rows, meta.num_row_groups, meta.num_columns) == (2500, 3, 23)
    assert truth["relevant"] == ["x3", "x7", "x11", "x15", "x19"] and truth["target_names"] == ["t1", "t2", "t3"]
    table = pq.read_table(path)
    X = np.column_stack([table[f"x{i + 1}"].to_numpy() for i in range(20)])
    Y = np.column_stack([table[t].to_numpy() for t in truth["target_names"]])
    assert X.dtype == np.float32 and X.min() >= -1 and X.max() <= 1
    planted = [int(name[1:]) - 1 for name in truth["relevant"]]
    noise = Y - X[:, planted].astype(np.float64) @ tall_data.target_weights(3, 5).T
    assert 0.09 < noise.std() < 0.11                                  # the targets are the planted sums + N(0, 0.1)
    again, side_car = tall_data.make_tall(tmp_path, 2500, 20, 3, planted=5, seed=7)
    assert again == path and "write_s" in truth and "write_s" not in side_car  # reused, not rewritten
    X2, _ = tall_data.chunk(7, 1, 1000, 20, 3, 5)
    assert np.array_equal(X2, X[1000:2000])                           # a row group depends on (seed, group) only


def test_wide_parquet_and_arff_hold_the_same_table(bench, tmp_path):
    import pyarrow.parquet as pq
    from benchmarks.wide_data import make_wide

    parquet, arff, truth = make_wide(tmp_path, 60, 1200, planted=10)
    assert truth["relevant"][:3] == ["x61", "x181", "x301"] and len(truth["relevant"]) == 10
    table = pq.read_table(parquet)
    assert table.num_columns == 1201 and table.column_names[-1] == "class"
    lines = arff.read_text().splitlines()
    assert sum(line.startswith("@ATTRIBUTE x") for line in lines) == 1200
    rows = [line.split(",") for line in lines[lines.index("@DATA") + 1:]]
    assert len(rows) == 60
    X = np.array([[float(v) for v in r[:-1]] for r in rows])
    assert np.array_equal(X, np.column_stack([table[f"x{i + 1}"].to_numpy() for i in range(1200)]))
    assert [r[-1] for r in rows] == table["class"].to_pylist()
    assert set(table["class"].to_pylist()) == {"c0", "c1", "c2"}


# ----- cost model ------------------------------------------------------------------------------------------
def test_cost_model_recovers_known_constants(bench):
    from benchmarks import cost_model

    points = [{"rows": n, "k": k, "targets": 3, "executors": e} for n, k, e in
              ((10_000, 8, 1), (20_000, 8, 2), (40_000, 8, 1), (40_000, 15, 2), (80_000, 8, 2))]
    for p in points:
        p["seconds_per_tree"] = 0.5 + 2e-9 * cost_model.work(p["rows"], p["k"], 3, p["executors"])
    model = cost_model.fit(points)
    assert model["c0"] == pytest.approx(0.5, rel=1e-6) and model["c1"] == pytest.approx(2e-9, rel=1e-6)
    assert model["rms_relative_residual"] < 1e-9 and not model["exact"]
    assert model["varied"] == ["rows", "k", "executors"] and len(model["residuals"]) == 5
    pred = cost_model.predict(model, 1e8, 1000, 3, 100, 100)
    assert pred["k"] == math.ceil(math.sqrt(1000)) == 32
    assert pred["seconds_per_tree"] == pytest.approx(0.5 + 2e-9 * 1e8 * math.log2(1e8) * 32 * 7 / 100)
    assert pred["seconds"] == pytest.approx(100 * pred["seconds_per_tree"])
    two = cost_model.fit(points[:2])
    assert two["exact"] and "exactly determined" in cost_model.format_fit("broadcast", two)
    falling = cost_model.fit([dict(p, seconds_per_tree=3.0 - i) for i, p in enumerate(points[:3])])
    assert falling["c1"] == 0 and falling["c0"] > 0                   # non-negative: never a negative slope
    assert "mostly fixed cost" in cost_model.format_fit("partitioned", falling)
    with pytest.raises(ValueError):
        cost_model.fit(points[:1])


# ----- the suites end to end -------------------------------------------------------------------------------
def _run(bench, argv, out):
    code = bench.main([*argv, "--json", str(out)])
    return code, json.loads(out.read_text())


def _ranking(run_dir: Path) -> list:
    text = (run_dir / "out" / "ranking.csv").read_text().splitlines()
    return [",".join(line.split(",")[:5]) for line in text]          # feature, score, target, importance, rank


def test_tall_depth_5_peers(bench, tmp_path):
    """spark_fr at MLlib's depth, and MLlib itself, as the suite starts them (run in full by jobs/benchmark.py)."""
    from benchmarks import tall

    args = bench.parse_args(["--suite", "tall", "--trees", "7", "--tall-max-samples", "0.25"])
    truth = {"n": 1000, "p": 10, "target_names": ["t1", "t2"], "relevant": ["x2", "x4"]}
    d5, mllib = tall.make_peers(["spark_fr_d5", "mllib"], tmp_path / "t.parquet", truth, args)
    d5_cmd, mllib_cmd = " ".join(d5.command(tmp_path)), " ".join(mllib.command(tmp_path))
    assert "--targets t1,t2 --trees 7 --scores genie3,symbolic,rf --max-samples 0.25 --max-depth 5" in d5_cmd
    assert "mllib_forest.py" in mllib_cmd and "--max-depth 5 --target t1 --subsampling-rate 0.25" in mllib_cmd


@pytest.mark.peers
@pytest.mark.skipif(bool(_missing("sklearn")), reason="scikit-learn is not installed")
def test_tall_suite(bench, tmp_path, capsys):
    code, report = _run(bench, ["--suite", "tall", "--rows", "3000", "--features", "10", "--targets", "2",
                                "--trees", "5", "--peers", "spark_fr,sklearn,mllib,spark_fr_partitioned",
                                "--workdir", str(tmp_path)], tmp_path / "tall.json")
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert list(report) == ["suite", "config", "data", "environment", "skipped", "summary", "ratios", "runs"]
    planted = report["data"]["planted"]
    assert planted == ["x2", "x4", "x6", "x8", "x10"]
    summary = report["summary"]
    assert list(summary) == ["spark_fr", "sklearn", "mllib", "spark_fr_partitioned"]
    for name in ("spark_fr", "spark_fr_partitioned"):
        assert summary[name]["planted_by_score"] == {"genie3": 5, "symbolic": 5, "rf": 5}, name
    for name in ("sklearn", "mllib"):
        assert summary[name]["planted_by_score"] == {"impurity": 5}, name
    assert all(s["runs_ok"] == 1 and s["top_planted_every_run"] and s["median_peak_rss_mb"] > 0
               for s in summary.values())
    assert summary["spark_fr"]["ensemble_mode"] == "broadcast"
    assert summary["spark_fr_partitioned"]["ensemble_mode"] == "partitioned"
    assert summary["spark_fr"]["ratio_to_spark_fr"] == 1.0 and "ratio_to_spark_fr" in summary["mllib"]
    assert [(r["peer"], r["reference"]) for r in report["ratios"]] == [  # pairs whose two peers ran
        ("sklearn", "spark_fr"), ("spark_fr_partitioned", "spark_fr")]
    (mllib,) = report["runs"]["mllib"]
    assert mllib["target"] == "t1" and mllib["rows"] == 3000 and mllib["fit_s"] > 0
    runs = tmp_path / "tall" / "runs"
    assert _ranking(runs / "spark_fr_partitioned_r1") == _ranking(runs / "spark_fr_r1")  # modes: same ranking
    assert "planted in top-5" in printed and "G5 S5 R5" in printed


@pytest.mark.peers
@pytest.mark.skipif(bool(_missing("sklearn", "clus")), reason="scikit-learn or CLUS is missing")
def test_wide_suite(bench, tmp_path, capsys):
    code, report = _run(bench, ["--suite", "wide", "--rows", "300", "--features", "1100", "--trees", "10",
                                "--workdir", str(tmp_path)], tmp_path / "wide.json")
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert list(report) == ["suite", "config", "data", "environment", "skipped", "summary", "ratios", "pass_shares",
                            "runs"]
    planted = report["data"]["planted"]
    assert len(planted) == 10 and planted[0] == "x56"
    summary = report["summary"]
    forests = [p for p in ("xgboost", "lightgbm") if not _missing(p)]  # where installed
    assert list(summary) == ["spark_fr", "spark_fr_arff", "spark_fr_dataframe", "spark_fr_patches", "clus", "sklearn",
                             *forests]
    for name, scores in (("spark_fr", {"genie3", "symbolic"}), ("spark_fr_arff", {"genie3", "symbolic"}),
                         ("spark_fr_dataframe", {"genie3", "symbolic"}), ("spark_fr_patches", {"genie3", "symbolic"}),
                         ("clus", {"genie3", "symbolic"}), ("sklearn", {"impurity"}),
                         *((f, {"impurity"}) for f in forests)):
        s = summary[name]
        assert s["runs_ok"] == 1 and set(s["planted_by_score"]) == scores, name
        assert all(0 <= n <= 10 for n in s["planted_by_score"].values())
        assert s["planted_in_top_min"] == s["planted_by_score"].get("genie3", s["planted_by_score"].get("impurity"))
    runs = report["runs"]
    assert all(len(r[0]["top"]) == 10 and set(r[0]["top"]) <= {f"x{i}" for i in range(1, 1101)} for r in runs.values())
    assert runs["spark_fr"][0]["tops"] == runs["spark_fr_arff"][0]["tops"]  # the same table, the same ranking
    runs_dir = tmp_path / "wide" / "runs"
    assert _ranking(runs_dir / "spark_fr_r1") == _ranking(runs_dir / "spark_fr_arff_r1")
    assert _ranking(runs_dir / "spark_fr_r1") == _ranking(runs_dir / "spark_fr_dataframe_r1")  # made in Spark
    assert [r["peer"] for r in report["ratios"]] == ["spark_fr_arff", "spark_fr_patches", "clus", "sklearn", "clus",
                                                     "clus", *forests, "spark_fr_dataframe"]
    shares = report["pass_shares"]
    assert [line.split(":")[0] for line in shares] == ["spark_fr", "spark_fr_arff", "spark_fr_dataframe",
                                                        "spark_fr_patches"]
    assert all(" s + encoding " in line and "% of its run" in line for line in shares) and shares[0] in printed
    assert all(summary[name].get("median_per_tree_s", 0) > 0 for name in ("spark_fr", "sklearn", *forests))
    assert runs["spark_fr_patches"][0]["tops"] != runs["spark_fr"][0]["tops"]  # patches change the ensemble
    assert "planted in top-10" in printed


@pytest.mark.peers
def test_scaling_suite(bench, tmp_path, capsys):
    plot = tmp_path / "curves.png"
    code, report = _run(bench, ["--suite", "scaling", "--rows", "4000", "--features", "10", "--targets", "2",
                                "--trees", "5", "--scaling-masters", "local[1],local[2]", "--scaling-modes",
                                "broadcast", "--scaling-parts", "strong", "--workdir", str(tmp_path),
                                "--plot", str(plot)], tmp_path / "scaling.json")
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert list(report) == ["suite", "config", "environment", "points", "cost_model", "predictions", "notes",
                            "plot", "runs"]
    points = report["points"]
    assert [(p["master"], p["executors"], p["mode"], p["parts"]) for p in points] == [
        ("local[1]", 1, "broadcast", ["strong"]), ("local[2]", 2, "broadcast", ["strong"])]
    for p in points:
        assert p["runs_ok"] == 1 and p["ensemble_mode"] == "broadcast" and p["k"] == 4 and p["rows"] == 4000
        assert p["seconds_per_tree"] == pytest.approx(p["trees_s"] / 5, rel=1e-3) and p["wall_s"] > p["trees_s"]
    assert points[0]["speedup"] == 1.0 and points[1]["speedup"] > 0
    model = report["cost_model"]["broadcast"]
    assert set(model) == {"form", "c0", "c1", "points", "exact", "varied", "rms_relative_residual", "residuals"}
    assert model["points"] == 2 and model["varied"] == ["executors"] and model["c0"] >= 0 and model["c1"] >= 0
    assert [r["executors"] for r in model["residuals"]] == [1, 2]
    pred = report["predictions"]["broadcast"]
    assert (pred["rows"], pred["features"], pred["k"], pred["executors"], pred["targets"]) == (1e8, 1000, 32, 100, 2)
    assert report["plot"] == str(plot) and plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "broadcast predicts: 1e+08 rows x 1000 features (k = 32)" in printed


# ----- the HMLC suite --------------------------------------------------------------------------------------
def test_hmlc_suite_options(bench):
    args = bench.parse_args(["--suite", "hmlc"])
    assert (args.rows, args.features, args.targets, args.trees, args.repeats) == (50000, 100, 1000, 50, 1)
    assert args.peers == ["spark_fr", "clus"] and args.hmlc_sets == ["cellcycle_FUN", "derisi_GO", "synthetic"]
    assert (args.hmlc_top, args.hmlc_planted, args.hmlc_w0) == (10, 10, 0.75) and args.hmlc_xmx.endswith("g")
    args = bench.parse_args(["--suite", "hmlc", "--hmlc-sets", "derisi_GO", "--peers", "spark_fr_rf,clus_train_errors"])
    assert args.hmlc_sets == ["derisi_GO"] and args.peers == ["spark_fr_rf", "clus_train_errors"]
    from benchmarks import hmlc

    peers = hmlc.make_peers(["spark_fr_rf", "clus_train_errors"], Path("go.arff"), "class", args, 10)
    rf_cmd, clus_cmd = (" ".join(p.command(Path("run"))) for p in peers)
    assert "--input go.arff --targets class --trees 50 --scores genie3,symbolic,rf --hmlc-w0 0.75 --seed 1" in rf_cmd
    assert f"clus_hmlc.py go.arff --trees 50 --seed 1 --threads 2 --w0 0.75 --xmx {args.hmlc_xmx} --train-errors" \
        in clus_cmd
    for bad in (["--hmlc-sets", "enron"], ["--peers", "sklearn"], ["--targets", "5"], ["--hmlc-w0", "0"],
                ["--features", "5", "--hmlc-planted", "6"]):
        with pytest.raises(SystemExit):
            bench.parse_args(["--suite", "hmlc", *bad])


def test_hmlc_synthetic_dag_reads_back_with_spark_fr(bench, tmp_path):
    """The generated Clus HMC file is a DAG to spark_fr's reader, its rows close to the side-car's label counts,
    and the planted features decide the labels."""
    from benchmarks.hmlc_data import make_hmlc, read_hmlc_header
    from spark_fr.hierarchy import Hierarchy

    arff, truth = make_hmlc(tmp_path, 3000, 30, 100, planted=5, seed=3)
    assert truth["relevant"] == ["x4", "x10", "x16", "x22", "x28"] and truth["spec"]["levels"] == [1, 4, 15, 30, 50]
    head = read_hmlc_header(arff)
    assert (head["target"], head["kind"], head["labels"], len(head["features"])) == ("class", "DAG", 100, 30)
    lines = arff.read_text().splitlines()
    spec = next(line for line in lines if line.startswith("@ATTRIBUTE class hierarchical ")).split(" ", 3)[3]
    hierarchy = Hierarchy.from_clus_spec(spec)
    assert len(hierarchy.labels) == 100 and not hierarchy.is_tree and len(spec.split(",")) == truth["edges"]
    rows = [line.rsplit(",", 1) for line in lines[lines.index("@DATA") + 1:]]
    assert len(rows) == 3000
    Y = hierarchy.label_matrix([r[1] for r in rows])
    assert Y.sum(axis=1).mean() == pytest.approx(truth["positives_mean"], abs=0.01)
    X = np.array([[float(v) for v in r[0].split(",")] for r in rows])
    top = [hierarchy.index[f"h2_{j:03d}"] for j in range(4)]   # level 2: the primary walk's first choice
    x4 = X[:, 3]
    for j, label in enumerate(top):                            # walk 1 picks h2_j from the quantile of x4
        inside = (x4 >= -1 + j / 2) & (x4 < -1 + (j + 1) / 2)
        assert Y[inside, label].mean() > 0.9
    again, side_car = make_hmlc(tmp_path, 3000, 30, 100, planted=5, seed=3)
    assert again == arff and "write_s" in truth and "write_s" not in side_car


@pytest.mark.peers
@pytest.mark.skipif(bool(_missing("clus")), reason="CLUS (java, pyclus) is missing")
def test_hmlc_suite(bench, tmp_path, capsys):
    code, report = _run(bench, ["--suite", "hmlc", "--hmlc-sets", "synthetic", "--rows", "1500", "--features", "12",
                                "--targets", "40", "--hmlc-planted", "3", "--trees", "8", "--workdir", str(tmp_path)],
                        tmp_path / "hmlc.json")
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert list(report) == ["suite", "config", "environment", "skipped", "table", "sets"]
    rep = report["sets"]["synthetic"]
    assert (rep["data"]["kind"], rep["data"]["labels"], rep["data"]["planted"]) == ("DAG", 40, ["x3", "x7", "x11"])
    summary = rep["summary"]
    assert list(summary) == ["spark_fr", "clus"]
    for name, s in summary.items():
        assert s["runs_ok"] == 1 and s["median_peak_rss_mb"] > 0 and s["median_algo_s"] > 0, name
        assert s["planted_by_score"] == {"genie3": 3, "symbolic": 3}, name
    assert 3 <= summary["spark_fr"]["overlap_with_clus"]["genie3"] <= 10
    (clus,) = rep["runs"]["clus"]
    assert clus["hier_type"] == "DAG" and clus["clus_peak_rss_kb"] > 0
    (row,) = report["table"]
    assert row["set"] == "synthetic" and row["clus_peer"] == "clus" and row["wall_clus_over_spark_fr"] > 0
    settings = (tmp_path / "hmlc" / "synthetic" / "runs" / "clus_r1" / "clus" / "run.s").read_text()
    for line in ("Type = DAG", "HSeparator = /", "WType = ExpAvgParentWeight", "WParam = 0.75", "TrainErrors = No",
                 "Iterations = 8", "NumberOfThreads = 2"):
        assert line in settings
    assert "G top-10" in printed and "clus / spark_fr: wall" in printed
