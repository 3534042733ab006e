"""The relational suite of jobs/benchmark.py: spark_fr's feature generation against featuretools' deep feature
synthesis.

In every run: the two peers' code (``jobs/peers/featuretools_dfs.py``, ``jobs/peers/spark_fr_relational.py``)
called in this process on a synthetic schema with a 20,000-row fact table computes the same values for the
aggregates they share, so the benchmark compares like with like; the generator's planted label is what it says
(recomputed with pandas, and found again in featuretools' own ``MEAN(transactions.amount WHERE merchant_type =
grocery)``); the featuretools peer types financial's tables as spark_fr does, from every format.

Under the marker ``peers`` (``python jobs/benchmark.py --check``): the suite as a user runs it
(``jobs/benchmark.py``'s ``main``, each peer a separate, measured process), what it reports (JSON keys, both
peers finished, feature counts, the matrices) and, from the processes' tables, both engines' tables bit for bit
and the same table from every input format. Wall times are recorded by the suite and never asserted here.
"""
import importlib.util
import json
import os
import sys

import numpy as np
import pandas as pd
import pytest

from tests.paths import ROOT

if str(ROOT / "jobs") not in sys.path:
    sys.path.insert(0, str(ROOT / "jobs"))

from benchmarks import relational  # noqa: E402
from benchmarks.relational_data import PLANTED_TYPE, THRESHOLD, make_formats, make_relational  # noqa: E402

ROWS = 20_000
needs_featuretools = pytest.mark.skipif(importlib.util.find_spec("featuretools") is None,
                                        reason="featuretools is not installed (pip install featuretools==1.31.0)")


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("spark_fr_benchmark_relational", ROOT / "jobs" / "benchmark.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def suite(bench, tmp_path_factory):
    """The suite at 20,000 fact rows with spark_fr (auto: the local engine), spark_fr_spark (the Spark engine)
    and featuretools: (report, workdir)."""
    work = tmp_path_factory.mktemp("relational")
    out = work / "report.json"
    code = bench.main(["--suite", "relational", "--relational-sets", "synthetic", "--rows", str(ROWS),
                       "--relational-formats", "parquet", "--relational-link", "without",
                       "--peers", "spark_fr,spark_fr_spark,featuretools", "--workdir", str(work), "--json", str(out)])
    assert code == 0
    return json.loads(out.read_text()), work


def test_options(bench):
    args = bench.parse_args(["--suite", "relational"])
    assert (args.rows, args.repeats) == (10_000_000, 1)
    assert args.peers == ["spark_fr", "spark_fr_spark", "featuretools"]
    assert args.relational_sets == ["financial", "synthetic"] and args.relational_financial_depths == [3]
    assert args.relational_formats == ["csv", "tsv", "parquet", "delta", "dataframe"]
    assert args.relational_rows == [10_000_000] and args.relational_link == ["without", "with"]
    assert args.relational_timeout == 1800 and args.relational_max_memory_gb > 0
    args = bench.parse_args(["--suite", "relational", "--relational-financial-depths", "3,2", "--peers",
                             "spark_fr_local1,featuretools"])
    assert args.relational_financial_depths == [3, 2] and args.peers == ["spark_fr_local1", "featuretools"]
    args = bench.parse_args(["--suite", "relational", "--relational-rows", "1000000,10000000",
                             "--relational-formats", "csv,delta", "--relational-link", "with"])
    assert args.relational_rows == [1_000_000, 10_000_000] and args.relational_formats == ["csv", "delta"]
    for bad in (["--relational-sets", "imdb"], ["--peers", "clus"], ["--rows", "10"],
                ["--relational-financial-depths", "x"], ["--relational-formats", "xlsx"],
                ["--relational-link", "maybe"], ["--relational-rows", "50"]):
        with pytest.raises(SystemExit):
            bench.parse_args(["--suite", "relational", *bad])


def test_not_finishing_is_reported_not_raised():
    ok = {"returncode": 0, "killed": None}
    assert relational.classify(ok, 10, 4) == "ok"
    assert relational.classify({"returncode": -9, "killed": "timeout"}, 10, 4) == "did not finish: timeout (10 s)"
    assert relational.classify({"returncode": -9, "killed": "memory"}, 10, 4) \
        .startswith("did not finish: out of memory")
    assert relational.classify({"returncode": 1, "killed": None, "stderr_tail": "numpy MemoryError"}, 10, 4) \
        .startswith("did not finish: out of memory")
    assert relational.classify({"returncode": 2, "killed": None, "stderr_tail": "bad"}, 10, 4) == "failed (exit 2)"
    summary = relational.summarise({
        "spark_fr": [dict(wall_s=10.0, peak_rss_mb=100.0, load_avg_1_before=1.0, load_avg_1_after=2.0, status="ok",
                          features=5, rows=3)],
        "featuretools": [dict(wall_s=60.0, peak_rss_mb=900.0, load_avg_1_before=1.0, load_avg_1_after=1.5,
                              status="did not finish: timeout (60 s)")]})
    assert summary["featuretools"]["status"].startswith("did not finish") and summary["featuretools"]["runs_ok"] == 0
    (r,) = relational.ratios(summary)
    assert r["wall"] is None and r["wall_at_least"] == 6.0
    assert "did not finish" in relational.format_table(summary) and "> 6.00x" in relational.format_ratios([r])
    case = {"set": "synthetic", "max_depth": 2, "data": {"rows": 100, "format": "csv", "link": "with"},
            "summary": summary, "ratios": [r]}
    (row,) = relational.matrix([case])
    assert row["label"] == "synthetic 100 rows, keyless link table (max_depth 2)" and row["load"]["csv"] == [1.0, 2.0]
    assert row["cells"]["csv"]["ratio"] is None and row["cells"]["csv"]["at_least"] == 6.0
    assert ">6.00x" in relational.format_matrix([case]) and relational.matrix([case], "spark_fr_spark") == []


def test_measure_kills_a_run_over_its_memory_limit(tmp_path):
    from benchmarks.measure import run_measured

    grow = "import time; x = bytearray(400 * 2**20); x[::4096] = b'1' * len(x[::4096]); time.sleep(30)"
    res = run_measured([sys.executable, "-c", grow], tmp_path / "run", timeout=60, max_rss_mb=200)
    assert res["killed"] == "memory" and res["returncode"] != 0 and res["wall_s"] < 30


def test_planted_label(tmp_path):
    schema, truth = make_relational(tmp_path, ROWS)
    folder = schema.parent
    tx = pd.read_parquet(folder / "transactions.parquet")
    accounts = pd.read_parquet(folder / "accounts.parquet")
    customers = pd.read_parquet(folder / "customers.parquet").set_index("customer_id")
    assert len(tx) == ROWS and tx.transaction_id.is_unique and len(customers) == truth["sizes"]["customers"]
    assert set(accounts.customer_id) == set(customers.index)  # every customer has an account
    tx = tx.merge(accounts[["account_id", "customer_id"]], on="account_id")
    mean = tx[tx.merchant_type == PLANTED_TYPE].groupby("customer_id").amount.mean()
    want = np.where(mean.reindex(customers.index).fillna(-np.inf) > THRESHOLD, "high", "low")
    assert (customers.label.to_numpy() == want).all()
    assert 0.3 < (want == "high").mean() < 0.7
    assert tx.merchant_type.value_counts().index[0] == PLANTED_TYPE  # a frequent value: conditions cover it
    again, _ = make_relational(tmp_path, ROWS)  # reused, not rewritten
    assert again == schema and "write_s" not in _


@pytest.mark.peers
@needs_featuretools
def test_suite_end_to_end(suite):
    report, _ = suite
    assert report["suite"] == "relational" and {"config", "environment", "cases"} <= set(report)
    (case,) = report["cases"]
    assert case["set"] == "synthetic" and case["max_depth"] == 2 and case["data"]["sizes"]["transactions"] == ROWS
    assert case["data"]["format"] == "parquet" and case["data"]["link"] == "without"
    for name in ("spark_fr", "spark_fr_spark", "featuretools"):
        s = case["summary"][name]
        assert s["status"] == "ok" and s["runs_ok"] == 1 and s["rows"] == case["data"]["sizes"]["customers"]
        assert s["features"] > 40 and s["median_wall_s"] > 0 and s["median_peak_rss_mb"] > 0
        assert 0 < s["median_cpu_s"] <= (os.cpu_count() or 1) * s["median_wall_s"] + 1  # the process tree's CPU
        assert len(s["load_avg_1"]) == 2
    pairs = [(r["peer"], r["reference"]) for r in case["ratios"]]
    assert pairs == [("spark_fr_spark", "spark_fr"), ("featuretools", "spark_fr"), ("featuretools", "spark_fr_spark")]
    r = case["ratios"][1]
    assert r["wall"] > 0 and r["peak_rss"] > 0
    assert report["finished"] and list(report["matrices"]) == [f"{p} / {q}" for p, q in relational.MATRICES]
    for (p, q), rows in zip(relational.MATRICES, report["matrices"].values()):
        (row,) = rows
        cell = row["cells"]["parquet"]
        assert cell["ratio"] == next(x["wall"] for x in case["ratios"] if (x["peer"], x["reference"]) == (p, q))
        assert cell["engine"] == ("spark" if q == "spark_fr_spark" else "local") and cell["status"] == "ok"
        assert f"{cell['ratio']:.2f}x {cell['engine'][0].upper()}" in relational.format_matrix([case], p, q)
        assert cell["cpu_ratio"] > 0 and f"{cell['cpu_ratio']:.2f}x" in relational.format_matrix([case], p, q, cpu=True)
    assert r["features"] == {"featuretools": case["summary"]["featuretools"]["features"],
                             "spark_fr": case["summary"]["spark_fr"]["features"]}
    run = case["runs"]["featuretools"][0]
    assert run["where_primitives"] and "nominal.share" in run["no_counterpart"]
    assert PLANTED_TYPE in run["interesting_values"]["transactions"]["merchant_type"]


@pytest.mark.peers
@needs_featuretools
def test_both_engines_write_the_same_feature_table(suite):
    """auto takes the local engine for the Parquet set; the Spark engine's table is the same, bit for bit."""
    report, _ = suite
    (case,) = report["cases"]
    runs = {n: case["runs"][n][0] for n in ("spark_fr", "spark_fr_spark")}
    assert runs["spark_fr"]["engine"] == "local" and runs["spark_fr_spark"]["engine"] == "spark"
    a, b = (pd.read_parquet(case["summary"][n]["matrix"]).set_index("customer_id").sort_index() for n in runs)
    assert list(a.columns) == list(b.columns) and list(a.index) == list(b.index)
    for c in a.columns:
        if a[c].dtype == object or b[c].dtype == object:
            assert (a[c].fillna("<null>") == b[c].fillna("<null>")).all(), c
        else:
            x, y = a[c].to_numpy(np.float64), b[c].to_numpy(np.float64)
            assert np.array_equal(np.isnan(x), np.isnan(y)), c
            assert np.array_equal(x[~np.isnan(x)].view(np.int64), y[~np.isnan(y)].view(np.int64)), c


@pytest.mark.peers
@needs_featuretools
def test_peers_compute_the_same_shared_aggregates(suite):
    """The same comparison as :func:`test_featuretools_computes_the_same_shared_aggregates`, on the tables the
    suite's peer processes wrote."""
    report, _ = suite
    (case,) = report["cases"]
    same_shared_aggregates(case["summary"]["spark_fr"]["matrix"], case["summary"]["featuretools"]["matrix"])


@needs_featuretools
def test_featuretools_computes_the_same_shared_aggregates(tmp_path):
    """featuretools' DFS and spark_fr's generation (auto: the local engine), as the suite's two peers run them
    (their ``run`` functions, called here: no process, no JVM), on the synthetic set at 20,000 fact rows: the
    aggregates they share have the same values, and featuretools' aggregate over both hops is the planted label."""
    schema, _ = make_relational(tmp_path, ROWS)
    ft = _featuretools_peer().run(str(schema), str(tmp_path / "ft.json"), str(tmp_path / "ft.parquet"), None, False)
    sfr = _spark_fr_peer().run(str(schema), str(tmp_path / "sfr.json"), str(tmp_path / "sfr.parquet"), None,
                               "local[2]", True)
    assert sfr["engine"] == "local" and sfr["rows"] == ft["rows"] == 200 and ft["features"] > 40
    same_shared_aggregates(sfr["matrix"], ft["matrix"])


def same_shared_aggregates(sfr_matrix: str, ft_matrix: str) -> None:
    """Assert that spark_fr's and featuretools' feature tables (Parquet) hold the same labels and the same values
    of the aggregates both compute, and that featuretools' planted quantity gives the label."""
    sfr = pd.read_parquet(sfr_matrix).set_index("customer_id").sort_index()
    ft = pd.read_parquet(ft_matrix).set_index("customer_id").sort_index()
    assert list(sfr.index) == list(ft.index)
    assert (sfr.label.astype(str) == ft.label.astype(str)).all()
    numeric = {"COUNT(accounts)": "accounts__count",
               "MEAN(accounts.MEAN(transactions.amount))": "accounts__transactions__amount__mean__mean",
               "MAX(accounts.SUM(transactions.amount))": "accounts__transactions__amount__sum__max",
               "MIN(accounts.STD(transactions.amount))": "accounts__transactions__amount__std__min",
               "MEAN(accounts.COUNT(transactions))": "accounts__transactions__count__mean",
               "NUM_UNIQUE(accounts.account_type)": "accounts__account_type__count_distinct",
               "MEAN(accounts.opened_year WHERE account_type = credit)":
                   "accounts__opened_year__mean__account_type_credit",
               "SUM(accounts.opened_year WHERE account_type = savings)":
                   "accounts__opened_year__sum__account_type_savings",
               "districts.avg_salary": "districts__avg_salary", "age": "age"}
    for f, s in numeric.items():
        a, b = ft[f].astype(float).to_numpy(), sfr[s].astype(float).to_numpy()
        both = ~np.isnan(a) & ~np.isnan(b)
        assert (np.isnan(a) == np.isnan(b)).all() or f.startswith("SUM("), f  # SUM of nothing: featuretools 0
        np.testing.assert_allclose(a[both], b[both], rtol=1e-9, err_msg=f)
    nominal = {"MODE(accounts.MODE(transactions.merchant_type))": "accounts__transactions__merchant_type__mode__mode",
               "MODE(accounts.account_type)": "accounts__account_type__mode", "districts.region": "districts__region"}
    for f, s in nominal.items():
        assert (ft[f].astype(str).to_numpy() == sfr[s].astype(str).to_numpy()).all(), f
    # featuretools' aggregation over both hops at once is exactly the planted quantity
    planted = ft[f"MEAN(transactions.amount WHERE merchant_type = {PLANTED_TYPE})"].astype(float).fillna(-np.inf)
    assert (np.where(planted > THRESHOLD, "high", "low") == ft.label.astype(str).to_numpy()).all()


def _featuretools_peer():
    import spark_fr.relational.schema  # noqa: F401  (else the peer loads schema.py alone, as its process does)

    spec = importlib.util.spec_from_file_location("featuretools_dfs_peer",
                                                  ROOT / "jobs" / "peers" / "featuretools_dfs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_featuretools_peer_reads_financial_as_spark_fr_does(datasets):
    """Same tables, same attribute kinds, same missing markers: the peers start from the same data. spark_fr's
    kinds as its local engine reads the files (the engine auto takes for financial; the Spark engine's give the same
    table bit for bit: tests/relational/test_relational_local.py's test_financial_identical)."""
    from spark_fr.io.csv import MISSING_MARKERS
    from spark_fr.relational.checks import column_kinds
    from spark_fr.relational.local import LocalExecutor
    from spark_fr.relational.schema import load_schema

    peer = _featuretools_peer()
    assert peer.MISSING_MARKERS == MISSING_MARKERS
    schema = load_schema(str(relational.FINANCIAL))
    assert peer.load_schema_module().load_schema(str(relational.FINANCIAL)) == schema
    want = column_kinds(schema, LocalExecutor(schema).column_types())
    want[schema.target.table].pop(schema.target.column)
    for name, spec in schema.tables.items():
        df = peer.read_table(spec)
        assert peer.column_kinds(schema, name, df) == want[name], name
    aggs, where, missing = peer.primitives(schema)
    assert set(aggs) == {"count", "num_unique", "mean", "min", "max", "sum", "std", "mode"}
    assert where == ["count", "mean", "sum"] and "nominal.share" in missing


def test_featuretools_peer_types_every_format_as_the_csv(datasets, tmp_path):
    """financial as Parquet and Delta (the suite's conversions): the featuretools peer gives each table the
    same attribute kinds as from the TSV files. Arrow's dates used to reach pandas as datetime.date objects,
    typed as nominal, so DFS built 352 features from Parquet against 292 from CSV."""
    from spark_fr.relational.schema import load_schema

    peer = _featuretools_peer()
    schema = load_schema(str(relational.FINANCIAL))
    want = {name: peer.column_kinds(schema, name, peer.read_table(spec)) for name, spec in schema.tables.items()}
    assert "date" in want["card"].values()
    for fmt, path in make_formats(relational.FINANCIAL, ("parquet", "delta"), tmp_path).items():
        other = load_schema(str(path))
        for name, spec in other.tables.items():
            assert peer.column_kinds(other, name, peer.read_table(spec)) == want[name], (fmt, name)


def _spark_fr_peer():
    import spark_fr.relational  # noqa: F401  (the package itself, before the peer's path insertion)

    spec = importlib.util.spec_from_file_location("spark_fr_relational_peer",
                                                  ROOT / "jobs" / "peers" / "spark_fr_relational.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_spark_fr_common_aggregates_are_those_featuretools_has():
    from spark_fr.relational.schema import AggregateSpec

    common = _spark_fr_peer().common_aggregates(AggregateSpec())
    ft = _featuretools_peer().PRIMITIVES
    for kind in ("numeric", "nominal", "date", "outer", "outer_nominal", "conditional"):
        for name in getattr(AggregateSpec(), kind):
            assert (name in getattr(common, kind)) == (ft[kind].get(name) is not None), (kind, name)


def test_spark_fr_peer_runs_financial_in_the_driver(datasets, tmp_path):
    """Financial (small headerless CSV) goes to the local engine (a separate process, as the suite runs it; its
    lazy session is then never touched, so no JVM starts): the same JSON keys plus engine, the matrix a Parquet
    directory of id, target, features."""
    import subprocess

    out = tmp_path / "result.json"
    done = subprocess.run([sys.executable, str(ROOT / "jobs" / "peers" / "spark_fr_relational.py"),
                           str(relational.FINANCIAL), str(out), "--max-depth", "1"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(out.read_text())
    assert result["engine"] == "local" and result["spark_version"] is None
    assert {"rows", "features", "feature_names", "matrix", "spark_start_s", "generate_s", "write_s", "max_depth",
            "master", "aggregates"} <= set(result)
    frame = pd.read_parquet(result["matrix"])
    assert frame.shape == (result["rows"], result["features"] + 2) and result["rows"] == 682


@pytest.mark.peers
@needs_featuretools
def test_every_format_with_a_keyless_link_table(bench, tmp_path):
    """The suite on every input format of the synthetic set with its keyless link table: both peers finish
    everywhere, spark_fr's local engine takes every format and writes the same table from each, bit for bit."""
    out = tmp_path / "report.json"
    code = bench.main(["--suite", "relational", "--relational-sets", "synthetic", "--rows", str(ROWS),
                       "--relational-link", "with", "--peers", "spark_fr,featuretools", "--workdir", str(tmp_path),
                       "--json", str(out)])
    assert code == 0
    report = json.loads(out.read_text())
    assert [c["data"]["format"] for c in report["cases"]] == ["csv", "tsv", "parquet", "delta", "dataframe"]
    tables = []
    for case in report["cases"]:
        assert case["data"]["link"] == "with" and "customer_branch" in case["data"]["sizes"]
        for name in ("spark_fr", "featuretools"):
            assert case["summary"][name]["status"] == "ok", (case["data"]["format"], name)
        assert case["summary"]["spark_fr"]["engine"] == "local"
        tables.append(pd.read_parquet(case["summary"]["spark_fr"]["matrix"]).set_index("customer_id").sort_index())
    assert any(c.startswith("customer_branch__") for c in tables[0].columns)
    for other in tables[1:]:
        pd.testing.assert_frame_equal(tables[0], other, check_exact=True)
    dataframe = report["cases"][-1]
    assert dataframe["runs"]["spark_fr"][0]["dataframes"] and dataframe["summary"]["spark_fr"]["median_session_s"] > 0
    # from the frames in memory: spark_fr's generation and write, featuretools' EntitySet, DFS and write
    spark_fr, ft = dataframe["summary"]["spark_fr"], dataframe["summary"]["featuretools"]
    assert 0 < spark_fr["median_frames_s"] < spark_fr["median_wall_s"] - spark_fr["median_session_s"]
    assert 0 < ft["median_frames_s"] < ft["median_wall_s"] - ft["median_read_s"]
    cells = [row["cells"] for row in relational.matrix(report["cases"])]
    assert cells[0]["dataframe"]["frames"] == round(ft["median_frames_s"] / spark_fr["median_frames_s"], 2)
    assert all(cells[0][f]["frames"] is None for f in ("csv", "tsv", "parquet", "delta"))  # files: whole processes
    assert "keyless link table" in relational.format_matrix(report["cases"])


def test_growth_per_added_fact_row():
    """What the Spark engine costs per added fact row: the growth of its medians between consecutive sizes over the
    local engine's, per format and link table; None when a growth is not positive or a run did not finish."""
    def case(rows, fmt, spark_s, local_s, spark_cpu, local_cpu, link="without"):
        summary = {"spark_fr_spark": {"median_wall_s": spark_s, "median_cpu_s": spark_cpu},
                   "spark_fr": {"median_wall_s": local_s, "median_cpu_s": local_cpu}}
        return {"set": "synthetic", "data": {"rows": rows, "format": fmt, "link": link}, "summary": summary}

    cases = [case(10**6, "parquet", 24.0, 1.5, 42.0, 1.4), case(10**7, "parquet", 41.0, 10.0, 76.0, 10.4),
             case(10**8, "parquet", 200.0, 90.0, 300.0, None), case(10**6, "csv", 30.0, 2.0, 50.0, 2.0),
             case(10**7, "csv", 29.0, 12.0, 60.0, 12.0), case(10**7, "parquet", 50.0, 12.0, 90.0, 12.0, "with"),
             {"set": "financial", "data": {"format": "tsv"}, "summary": {}}]
    rows = {(r["format"], tuple(r["rows"])): r for r in relational.growth(cases)}
    assert set(rows) == {("parquet", (10**6, 10**7)), ("parquet", (10**7, 10**8)), ("csv", (10**6, 10**7))}
    first = rows[("parquet", (10**6, 10**7))]
    assert first["wall"] == 2.0 and first["cpu"] == round(34.0 / 9.0, 2) and first["peer_s"] == [24.0, 41.0]
    assert rows[("parquet", (10**7, 10**8))]["wall"] == round(159.0 / 80.0, 2)
    assert rows[("parquet", (10**7, 10**8))]["cpu"] is None  # the local engine's CPU not measured
    assert rows[("csv", (10**6, 10**7))]["wall"] is None  # the Spark engine did not grow: no ratio
    text = relational.format_growth(relational.growth(cases))
    assert "parquet, 1,000,000 -> 10,000,000 fact rows: wall 2.00x (+17.0 s against +8.5 s), CPU 3.78x" in text
    assert "csv, 1,000,000 -> 10,000,000 fact rows: wall n/a" in text
