"""The ReliefE suite of jobs/benchmark.py: its options, its wide sparse data, a peer past its timeout, and the
suite end to end at a tiny size (spark_fr's ReliefE with PCA and its ReliefF; the authors' reliefe 0.18 too when
its virtual environment exists).

Performance itself is reported by the benchmark as ratios, never asserted here.
"""
import importlib.util
import json
import os
import sys

import numpy as np
import pytest

from tests.paths import ROOT

if str(ROOT / "jobs") not in sys.path:
    sys.path.insert(0, str(ROOT / "jobs"))

from benchmarks import reliefe  # noqa: E402
from benchmarks.reliefe_data import make_reliefe_wide  # noqa: E402


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("spark_fr_benchmark_reliefe", ROOT / "jobs" / "benchmark.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _r_python():
    return os.environ.get("SPARK_FR_RELIEFE_PYTHON") or reliefe.DEFAULT_R_PYTHON


def test_options(bench, monkeypatch):
    monkeypatch.delenv("SPARK_FR_RELIEFE_PYTHON", raising=False)
    args = bench.parse_args(["--suite", "reliefe"])
    assert (args.rows, args.features, args.repeats, args.reliefe_neighbours) == (2000, 20000, 2, 15)
    assert args.peers == ["spark_fr", "spark_fr_warm", "spark_fr_pca", "spark_fr_relief", "reliefe"]
    assert args.reliefe_sets == ["madelon", "wide"] and args.reliefe_timeout == 900
    assert args.reliefe_python == reliefe.DEFAULT_R_PYTHON
    monkeypatch.setenv("SPARK_FR_RELIEFE_PYTHON", "/opt/r/bin/python")
    assert bench.parse_args(["--suite", "reliefe"]).reliefe_python == "/opt/r/bin/python"
    assert bench.parse_args(["--suite", "reliefe", "--reliefe-python", "/x"]).reliefe_python == "/x"
    for bad in (["--reliefe-sets", "chess"], ["--peers", "clus"], ["--reliefe-planted", "0"],
                ["--reliefe-timeout", "0"], ["--reliefe-neighbours", "0"]):
        with pytest.raises(SystemExit):
            bench.parse_args(["--suite", "reliefe", *bad])


def test_missing_reliefe_python_says_how_to_make_it(tmp_path):
    note = reliefe.r_python_note(str(tmp_path / "nope" / "python"))
    assert note.startswith("reliefe skipped:") and "pip install --no-deps reliefe==0.18" in note
    assert "\n" not in note and reliefe.r_python_note(sys.executable) is None


def test_commands(tmp_path):
    mat = tmp_path / "d.mat"
    cmd = " ".join(reliefe.reliefe_peer("spark_fr_pca", mat, 15, "/r/python").command(tmp_path))
    assert "--targets class --method reliefe --reliefe-k 15 --reliefe-embedder pca" in cmd
    cmd = " ".join(reliefe.reliefe_peer("spark_fr_relief", mat, 15, "/r/python").command(tmp_path))
    assert "--method relief --relief-neighbours 15 --relief-iterations 1.0" in cmd
    warm = reliefe.reliefe_peer("spark_fr_warm", mat, 15, "/r/python").command(tmp_path)
    assert warm[warm.index("--method") + 1] == "reliefe" and json.loads(warm[-2]) == {"reliefe_k": 15, "seed": 1}
    r = reliefe.reliefe_peer("reliefe", mat, 15, "/r/python").command(tmp_path)
    assert r[0] == "/r/python" and r[1].endswith("reliefe_peer.py") and r[r.index("--embedding") + 1] == "input"


def test_wide_data_is_sparse_with_its_classes_from_the_planted_features(tmp_path):
    import scipy.io
    import scipy.sparse as sp
    from benchmarks import reliefe_data

    mat, truth = make_reliefe_wide(tmp_path, 1200, 3000, planted=6, seed=3)
    data = scipy.io.loadmat(mat)
    X, y = data["input_space"], data["target_space"].ravel()
    assert sp.issparse(X) and X.shape == (1200, 3000) and y.shape == (1200,) and set(y) == {0, 1, 2}
    cols = [int(name[1:]) - 1 for name in truth["relevant"]]
    assert len(cols) == 6 and truth["nnz"] == X.nnz
    noise = np.setdiff1d(np.arange(3000), cols)
    density = X[:, noise].nnz / (1200 * noise.size)
    assert abs(density - reliefe_data.DENSITY) < 0.002
    P = X[:, cols].toarray()
    assert P.min() >= 0 and P.max() <= 1 and (P > 0).mean() > 0.99                   # planted: dense
    s = P.sum(axis=1) - 3.0
    a = 0.4307 * np.sqrt(6 / 12)
    want = np.where(s < -a, 0, np.where(s > a, 2, 1))
    agree = (want == y).mean()
    assert 0.93 < agree < 0.99                                                        # 5 % redrawn, 2/3 change
    assert all(0.25 < (y == c).mean() < 0.42 for c in range(3))
    again, side_car = make_reliefe_wide(tmp_path, 1200, 3000, planted=6, seed=3)
    assert again == mat and "write_s" not in side_car                                # reused, not rewritten


def test_a_peer_past_its_timeout_is_reported_and_not_started_again(tmp_path):
    from benchmarks.peers import Peer
    from benchmarks.rounds import run_rounds

    slow = Peer("slow", lambda run_dir: [sys.executable, "-c", "import time; time.sleep(60)"], lambda d: ([], {}))
    results = run_rounds([slow], 2, tmp_path, [], timeout=1.0, skip_timed_out=True)
    assert len(results["slow"].runs) == 1 and results["slow"].runs[0]["killed"] == "timeout"
    assert reliefe.not_finished(results, 1.0) == ["slow: did not finish (killed after the 1 s timeout)"]


@pytest.mark.peers
def test_suite_end_to_end(bench, tmp_path, capsys):
    """A tiny wide set, one round: the suite runs its peers as separate processes and prints its table."""
    peers = ["spark_fr", "spark_fr_relief"]
    if reliefe.r_python_note(_r_python()) is None:
        peers.append("reliefe")
    out = tmp_path / "report.json"
    code = bench.main(["--suite", "reliefe", "--reliefe-sets", "wide", "--rows", "90", "--features", "300",
                       "--reliefe-planted", "3", "--repeats", "1", "--peers", ",".join(peers),
                       "--workdir", str(tmp_path), "--json", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    report = json.loads(out.read_text())
    wide = report["wide"]
    assert wide["data"]["rows"] == 90 and wide["data"]["features"] == 300 and len(wide["data"]["planted"]) == 3
    assert list(wide["summary"]) == peers and not wide["not_finished"]
    for name in peers:
        s = wide["summary"][name]
        assert s["runs_ok"] == 1 and s["median_wall_s"] > 0 and s["median_peak_rss_mb"] > 0
        assert s["median_algo_s"] > 0
    run = wide["runs"]["spark_fr"][0]
    assert run["reliefe_embedder"] in ("umap", "pca") and run["spark_fr_timings"]["reliefe_s"] == run["algo_s"]
    assert "peer" in printed and "algo s" in printed and "top-3 = planted" in printed
    for name in peers:
        assert f"\n{name} " in printed
    pairs = {(r["peer"], r["reference"]): r for r in wide["ratios"]}
    assert set(pairs) == {(p, "spark_fr") for p in peers[1:]}
    r = pairs[("spark_fr_relief", "spark_fr")]
    assert r["wall"] > 0 and r["peak_rss"] > 0 and r["algorithm"] > 0
    assert f"spark_fr_relief / spark_fr: wall {r['wall']:.2f}x" in printed
    if "reliefe" in peers:
        assert wide["runs"]["reliefe"][0]["reliefe_timed"]["Feature weight updates"] > 0
