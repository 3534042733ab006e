"""Benchmark spark_fr against its peers: PCT ensembles (``--suite ensemble``, the default) and Relief
(``--suite relief``, described at the end); ``--suite arff`` times the ARFF row parser against scipy.

Ensemble suite: spark_fr against scikit-learn and CLUS on a synthetic multi-target regression (MTR) set.

What is measured
----------------
One synthetic MTR data set (``make_synthetic.py`` from ``../shared/tools/clus``: ``--rows`` x ``--features``
numeric features uniform on [-1, 1] and ``--targets`` k targets ``t_j = 3 x_j + x_{j+1} + N(0, 0.1)``, so
the planted relevant features are x1 .. x{k+1}) is written once as ARFF into ``--workdir``. Each peer then
ranks its features with ``--trees`` trees, as a separate command, the way a user would start it:

``spark_fr``
    ``python jobs/rank.py --input data.arff --targets t1,..,tk --trees T --scores genie3,symbolic --seed 1
    --output DIR --output-format csv`` (a local Spark session on all cores; the same two scores CLUS computes).
``spark_fr_rf`` (opt-in)
    The same with ``--scores symbolic,genie3,rf`` (adds the out-of-bag permutation score).
``sklearn``
    A small Python script: read the ARFF with pandas, fit ``RandomForestRegressor(n_estimators=T,
    max_features='sqrt', n_jobs=2, random_state=1)`` on all targets at once (multi-output trees; other
    parameters at scikit-learn's defaults, e.g. ``min_samples_leaf=1``), read ``feature_importances_``.
``clus``
    CLUS (``pyclus`` jar) through ``run_clus.py``: RForest, T trees, SelectRandomSubspaces = SQRT,
    Genie3 + Symbolic, ``NumberOfThreads = 2``. Needs Java and pyclus; skipped with a message otherwise.

The commands alternate (spark_fr, sklearn, clus, spark_fr, sklearn, clus, ...) for ``--repeats`` rounds,
so a slow phase of the machine hits every peer alike. For every run we record:

* wall time, from process start to exit (interpreter / JVM start-up, reading the ARFF and writing the
  result included);
* peak memory: every ~0.2 s, the resident set sizes (``VmRSS``) of the command and all its descendants
  (Spark's JVM and its Python workers, CLUS' JVM) are read from ``/proc`` and summed; the peak of that sum
  is reported. Pages shared between processes (forked Python workers) are counted once per process, so
  the sum over-states a little; a process living less than 0.2 s may be missed;
* the top-(k+1) features of the peer's ranking (Genie3 for spark_fr and CLUS, impurity importance for
  scikit-learn, which is the same quantity for variance-reduction trees) against the planted x1..x{k+1}.

How to read the output
----------------------
The table has one row per peer: the median wall time over the rounds (with the range), the ratio
``peer / spark_fr`` of the median wall times (> 1: spark_fr is faster), the median of the per-run peak
memory, and whether the top-(k+1) features equal the planted ones in every round. ``--json PATH`` writes
everything, including each run and spark_fr's own timing breakdown (``run.json``), for later comparison.
The machine's core count and load average are printed too: on a shared machine they matter.

Example::

    python jobs/benchmark.py --rows 20000 --features 200 --targets 5 --trees 100 --repeats 3 \\
        --peers spark_fr,sklearn,clus --json out/benchmark.json

Relief suite (``--suite relief``)
--------------------------------
Three parts (``--relief-parts clus,skrebate,memory``), each with its own data from ``make_synthetic.py``,
its commands alternating for ``--repeats`` rounds and measured as above (wall time, process-tree peak RSS,
top-3 against the planted x1, x2, x3; a miss is reported, not an error):

``clus``
    Regression (``y = 4 x1 + 2 sin(3 x2) + x3 + noise``), ``--relief-rows`` (5,000) x ``--features`` (200),
    k = ``--relief-neighbours`` (10), m = ``--relief-iterations`` (1000 sampled instances). Peers:
    ``spark_fr`` = ``python jobs/rank.py --method relief --relief-neighbours k --relief-iterations m``, a
    fresh process with its own local Spark session; ``spark_fr_warm`` = one Python process that starts
    Spark, calls ``spark_fr.rank(path, method="relief", ...)`` twice and reports the second call (what a
    notebook user waits for); ``clus`` = ``clus.jar -relief`` through ``run_clus.py`` with Neighbours = k,
    Iterations = m, NumberOfThreads = 2 (only its neighbour search is threaded).
``skrebate``
    Classification (3 classes, 5 % label noise) at ``--relief-rows-skrebate`` (2,000 and 4,000) rows x 200
    features; every row is an instance: spark_fr ``--relief-iterations 1.0`` (cold and warm, as above)
    against skrebate ``ReliefF(n_neighbors=k, n_features_to_select=all, n_jobs=2)``, which builds the n x n
    distance matrix and uses every row (so only sizes it can hold are compared).
``memory``
    spark_fr Relief (k, m as in ``clus``) on the regression data at ``--relief-rows-memory`` (5,000, 10,000,
    20,000) rows for each ``--relief-memory-modes`` (broadcast, tall), ``--relief-memory-repeats`` (1)
    rounds; the peak RSS per size, its ratio to the previous size and the MB per 1,000 extra rows are
    tabulated next to skrebate's (from the ``skrebate`` part), whose n x n matrix grows quadratically.

Besides the wall time (which for spark_fr includes the JVM and Spark start-up, several seconds), each
table has ``rank() s``, spark_fr's in-process ``rank`` time (``total_s`` of its ``run.json``; for the warm
process, the second call), and ``algo s``, the algorithm alone: spark_fr's ``relief_s`` from ``run.json``
(neighbour search and updates on Spark, after reading and encoding), CLUS' "Induction Time" from its
``.out`` file, skrebate's ``fit`` time. Below each table the ratios ``peer / spark_fr`` of the median wall
and algorithm times, and of the peer's algorithm time over the warm ``rank()`` call, are printed (> 1:
spark_fr is faster). They are reported, never asserted. Example::

    python jobs/benchmark.py --suite relief --repeats 3 --json out/benchmark_relief.json
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLUS_TOOLS = ROOT.parent / "shared" / "tools" / "clus"
PEERS = ("spark_fr", "spark_fr_rf", "sklearn", "clus")
SAMPLE_EVERY_S = 0.2
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024

SKLEARN_SCRIPT = r'''
import json, sys
import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestRegressor

arff, n_features, n_targets, trees, seed, out = sys.argv[1:7]
n_features, n_targets, trees, seed = int(n_features), int(n_targets), int(trees), int(seed)
names, skip = [], 0
with open(arff) as fh:
    for skip, line in enumerate(fh, start=1):
        low = line.strip().lower()
        if low.startswith("@attribute"):
            names.append(line.split()[1])
        elif low == "@data":
            break
data = pd.read_csv(arff, skiprows=skip, header=None, dtype=np.float64).to_numpy()
X, Y = data[:, :n_features], data[:, n_features:n_features + n_targets]
model = RandomForestRegressor(n_estimators=trees, max_features="sqrt", n_jobs=2, random_state=seed).fit(X, Y)
imp = model.feature_importances_
order = np.argsort(-imp, kind="stable")
json.dump({"order": [names[i] for i in order], "importance": {names[i]: float(imp[i]) for i in order}},
          open(out, "w"))
'''

CLUS_SCRIPT = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
from run_clus import run_clus

arff, n_features, n_targets, trees, seed, workdir, out = sys.argv[2:9]
n_features, n_targets = int(n_features), int(n_targets)
task = {"task": "mtr", "descriptive": f"1-{n_features}", "target": f"{n_features + 1}-{n_features + n_targets}",
        "ensemble": "RForest", "rankings": ["Genie3", "Symbolic"], "trees": int(trees), "threads": 2,
        "seed": int(seed), "symbolic_weight": 0.5}
res = run_clus(arff, task, workdir=workdir)
if res["returncode"] != 0 or "Genie3" not in res["rankings"]:
    sys.stderr.write(res["stdout_tail"])
    sys.exit(1)
json.dump({"order": res["rankings"]["Genie3"]["order"], "symbolic_order": res["rankings"]["Symbolic"]["order"],
           "clus_wall_s": res["wall_s"], "clus_peak_rss_kb": res["peak_rss_kb"]}, open(out, "w"))
'''


# ----- data --------------------------------------------------------------------------------------------
def make_data(workdir: Path, rows: int, features: int, targets: int, task: str = "mtr") -> tuple:
    """Write a synthetic set once (reused when its side-car matches); return (arff path, truth dict).

    Parameters
    ----------
    workdir : Path
    rows, features, targets : int
        n, p and k of ``make_synthetic.py --task TASK`` (k is used by ``mtr`` only).
    task : str
        ``mtr`` (the ensemble suite), ``reg`` or ``cls`` (the Relief suite).

    Returns
    -------
    tuple of (Path, dict)
        The ARFF file and its ``.truth.json`` side-car (``relevant``, ``target_names``, ...).
    """
    name = f"mtr_{rows}x{features}x{targets}" if task == "mtr" else f"{task}_{rows}x{features}"
    arff, truth_path = workdir / f"{name}.arff", workdir / f"{name}.truth.json"
    if arff.exists() and truth_path.exists():
        truth = json.loads(truth_path.read_text())
        if truth.get("task") == task and (truth.get("n"), truth.get("p")) == (rows, features) and \
                (task != "mtr" or len(truth.get("target_names", [])) == targets):
            return arff, truth
    sys.path.insert(0, str(CLUS_TOOLS))
    from make_synthetic import make

    workdir.mkdir(parents=True, exist_ok=True)
    path, truth = make(str(workdir), task, name=name, n=rows, p=features, k=targets if task == "mtr" else None)
    return Path(path), truth


# ----- peers -------------------------------------------------------------------------------------------
@dataclass
class Peer:
    """One benchmarked program: how to start it and how to read its ranking.

    Attributes
    ----------
    name : str
    command : callable
        ``command(run_dir) -> list of str``: the command line of one run writing into ``run_dir``.
    top : callable
        ``top(run_dir) -> (list of feature names, best first; dict of extra facts)``.
    """

    name: str
    command: object
    top: object


def _spark_fr_top(run_dir: Path) -> tuple:
    import csv

    with open(run_dir / "out" / "ranking.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["score"] == "genie3" and r["target"] == "__all__"]
    order = [r["feature"] for r in sorted(rows, key=lambda r: int(r["rank"]))]
    run = json.loads((run_dir / "out" / "run.json").read_text())
    return order, {"spark_fr_timings": run.get("timings", {})}


def _json_top(run_dir: Path) -> tuple:
    res = json.loads((run_dir / "result.json").read_text())
    order = res.pop("order")
    res.pop("importance", None)
    return order, res


def make_peers(names: list, arff: Path, truth: dict, trees: int) -> list:
    """Build the :class:`Peer` objects for the requested peer names (in that order)."""
    py = sys.executable
    p, k = truth["p"], len(truth["target_names"])
    targets = ",".join(truth["target_names"])

    def spark_fr_cmd(scores):
        return lambda d: [py, str(ROOT / "jobs" / "rank.py"), "--input", str(arff), "--targets", targets,
                          "--trees", str(trees), "--scores", scores, "--seed", "1", "--output", str(d / "out"),
                          "--output-format", "csv", "--log-level", "warning"]

    makers = {
        "spark_fr": lambda: Peer("spark_fr", spark_fr_cmd("genie3,symbolic"), _spark_fr_top),
        "spark_fr_rf": lambda: Peer("spark_fr_rf", spark_fr_cmd("symbolic,genie3,rf"), _spark_fr_top),
        "sklearn": lambda: Peer("sklearn", lambda d: [py, "-c", SKLEARN_SCRIPT, str(arff), str(p), str(k), str(trees),
                                                      "1", str(d / "result.json")], _json_top),
        "clus": lambda: Peer("clus", lambda d: [py, "-c", CLUS_SCRIPT, str(CLUS_TOOLS), str(arff), str(p), str(k),
                                                str(trees), "1", str(d / "clus"), str(d / "result.json")],
                             _json_top),
    }
    return [makers[n]() for n in names]


def check_available(names: list) -> tuple:
    """Drop peers that cannot run here; return (kept names, list of messages)."""
    kept, notes = [], []
    for name in names:
        if name == "clus":
            if shutil.which("java") is None:
                notes.append("clus skipped: java is not on PATH")
                continue
            try:
                import importlib.metadata as md

                md.distribution("pyclus")
            except md.PackageNotFoundError:
                notes.append("clus skipped: pyclus is not installed (pip install pyclus==1.0.2)")
                continue
            if not (CLUS_TOOLS / "run_clus.py").exists():
                notes.append(f"clus skipped: {CLUS_TOOLS / 'run_clus.py'} not found")
                continue
        if name == "sklearn":
            try:
                import sklearn  # noqa: F401
            except ImportError:
                notes.append("sklearn skipped: scikit-learn is not installed")
                continue
        if name == "skrebate":
            try:
                import skrebate  # noqa: F401
            except ImportError:
                notes.append("skrebate skipped: skrebate is not installed (pip install skrebate==0.8.4)")
                continue
        kept.append(name)
    return kept, notes


# ----- measuring one command ---------------------------------------------------------------------------
def _children_map() -> dict:
    """``{parent pid: [child pids]}`` for every process visible in /proc."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])  # the command name may contain spaces and ')'
        children.setdefault(ppid, []).append(int(entry))
    return children


def tree_rss_kb(root: int) -> int:
    """Sum of the resident set sizes (kB) of ``root`` and all its descendants (0 for vanished ones)."""
    children = _children_map()
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        stack.extend(children.get(pid, []))
        try:
            with open(f"/proc/{pid}/statm") as fh:
                total += int(fh.read().split()[1]) * PAGE_KB
        except (OSError, IndexError, ValueError):
            pass
    return total


def run_measured(command: list, run_dir: Path, timeout: float) -> dict:
    """Run ``command`` in ``run_dir``; return wall time, peak process-tree RSS, exit code and output tails."""
    run_dir.mkdir(parents=True, exist_ok=True)
    load_before = round(os.getloadavg()[0], 2)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    with open(run_dir / "stdout.txt", "w") as out, open(run_dir / "stderr.txt", "w") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(command, cwd=run_dir, stdout=out, stderr=err, env=env)
        peak = 0
        while proc.poll() is None:
            peak = max(peak, tree_rss_kb(proc.pid))
            if time.perf_counter() - t0 > timeout:
                proc.kill()
                break
            time.sleep(SAMPLE_EVERY_S)
        proc.wait()
        wall = time.perf_counter() - t0
    tail = (run_dir / "stderr.txt").read_text()[-2000:]
    return {"wall_s": round(wall, 3), "peak_rss_mb": round(peak / 1024, 1), "returncode": proc.returncode,
            "stderr_tail": tail if proc.returncode else "", "load_avg_1_before": load_before,
            "load_avg_1_after": round(os.getloadavg()[0], 2)}


# ----- the benchmark -----------------------------------------------------------------------------------
@dataclass
class PeerResult:
    """The runs of one peer and their summary."""

    name: str
    runs: list = field(default_factory=list)

    def ok_runs(self) -> list:
        return [r for r in self.runs if r["returncode"] == 0]

    def summary(self, planted: set) -> dict:
        ok = self.ok_runs()
        if not ok:
            return {"runs_ok": 0}
        walls = [r["wall_s"] for r in ok]
        return {"runs_ok": len(ok), "median_wall_s": statistics.median(walls), "min_wall_s": min(walls),
                "max_wall_s": max(walls), "median_peak_rss_mb": statistics.median(r["peak_rss_mb"] for r in ok),
                "top_planted_every_run": all(set(r["top"]) == planted for r in ok)}


def run_rounds(peers: list, repeats: int, workdir: Path, planted: list, timeout: float) -> dict:
    """Alternate the peers' commands for ``repeats`` rounds; return ``{name: PeerResult}``."""
    results = {p.name: PeerResult(p.name) for p in peers}
    k = len(planted)
    for rnd in range(1, repeats + 1):
        for peer in peers:
            run_dir = workdir / "runs" / f"{peer.name}_r{rnd}"
            if run_dir.exists():
                shutil.rmtree(run_dir)
            res = run_measured(peer.command(run_dir), run_dir, timeout)
            res["round"] = rnd
            if res["returncode"] == 0:
                order, extra = peer.top(run_dir)
                res["top"] = order[:k]
                res.update(extra)
            results[peer.name].runs.append(res)
            status = f"top-{k} {'= planted' if set(res.get('top', [])) == set(planted) else res.get('top')}" \
                if res["returncode"] == 0 else f"FAILED (exit {res['returncode']}): {res['stderr_tail'][-300:]}"
            print(f"  round {rnd} {peer.name:<12} {res['wall_s']:8.1f} s  peak {res['peak_rss_mb'] / 1024:5.2f} GB  "
                  f"load {res['load_avg_1_before']:.1f}-{res['load_avg_1_after']:.1f}  {status}", flush=True)
    return results


def summarise(results: dict, planted: list, reference: str = "spark_fr") -> dict:
    """Per-peer summary with the wall-time ratio to ``reference`` (peer / reference)."""
    summary = {name: r.summary(set(planted)) for name, r in results.items()}
    ref = summary.get(reference, {}).get("median_wall_s")
    for s in summary.values():
        if ref and "median_wall_s" in s:
            s["ratio_to_spark_fr"] = round(s["median_wall_s"] / ref, 2)
    return summary


def peer_table(summary: dict, k: int, name_width: int, extra: list) -> str:
    """Plain-text table: peer, runs, median wall time (range), the ``extra`` columns, peak RSS, planted.

    ``extra`` lists (header, width, summary -> text) for the suite's own columns.
    """
    head = (f"{'peer':<{name_width}}{'runs':>5}{'median wall s':>15}{'(min-max)':>17}"
            + "".join(f"{h:>{w}}" for h, w, _ in extra) + f"{'peak RSS GB':>13}{f'top-{k} = planted':>18}")
    lines = [head, "-" * len(head)]
    for name, s in summary.items():
        if not s.get("runs_ok"):
            lines.append(f"{name:<{name_width}}{0:>5}  (every run failed)")
            continue
        rng = f"({s['min_wall_s']:.1f}-{s['max_wall_s']:.1f})"
        lines.append(f"{name:<{name_width}}{s['runs_ok']:>5}{s['median_wall_s']:>15.1f}{rng:>17}"
                     + "".join(f"{fn(s):>{w}}" for _, w, fn in extra)
                     + f"{s['median_peak_rss_mb'] / 1024:>13.2f}{'yes' if s['top_planted_every_run'] else 'NO':>18}")
    return "\n".join(lines)


def format_table(summary: dict, k: int) -> str:
    """A plain-text table of the ensemble suite's summary."""
    ratio = ("ratio vs spark_fr", 19, lambda s: f"{s['ratio_to_spark_fr']:.2f}" if "ratio_to_spark_fr" in s else "n/a")
    return peer_table(summary, k, 13, [ratio])


# ----- the Relief suite --------------------------------------------------------------------------------
RELIEF_PARTS = ("clus", "skrebate", "memory")

SKREBATE_SCRIPT = r'''
import json, sys, time
import numpy as np
import pandas as pd
from skrebate import ReliefF

arff, n_features, k, n_jobs, out = sys.argv[1:6]
n_features, k, n_jobs = int(n_features), int(k), int(n_jobs)
t0 = time.perf_counter()
names, skip = [], 0
with open(arff) as fh:
    for skip, line in enumerate(fh, start=1):
        low = line.strip().lower()
        if low.startswith("@attribute"):
            names.append(line.split()[1])
        elif low == "@data":
            break
data = pd.read_csv(arff, skiprows=skip, header=None)
X = data.iloc[:, :n_features].to_numpy(np.float64)
y = pd.factorize(data.iloc[:, n_features])[0].astype(np.float64)
t1 = time.perf_counter()
model = ReliefF(n_features_to_select=n_features, n_neighbors=k, n_jobs=n_jobs).fit(X, y)
t2 = time.perf_counter()
imp = model.feature_importances_
order = np.argsort(-imp, kind="stable")
json.dump({"order": [names[i] for i in order], "read_s": t1 - t0, "algo_s": t2 - t1}, open(out, "w"))
'''

CLUS_RELIEF_SCRIPT = r'''
import json, os, re, sys
sys.path.insert(0, sys.argv[1])
from run_clus import run_clus

arff, truth_path, k, m, workdir, out = sys.argv[2:8]
truth = json.load(open(truth_path))
m = float(m) if "." in m else int(m)
task = {"task": truth["task"], "descriptive": truth["descriptive"], "target": truth["target"], "method": "relief",
        "neighbours": int(k), "iterations": m, "threads": 2, "seed": 1}
res = run_clus(arff, task, workdir=workdir)
if res["returncode"] != 0 or "Relief" not in res["rankings"]:
    sys.stderr.write(res["stdout_tail"])
    sys.exit(1)
induction = None
try:
    found = re.search(r"Induction Time: ([-+\d.Ee]+) sec", open(os.path.join(workdir, "run.out")).read())
    induction = float(found.group(1)) if found else None
except OSError:
    pass
json.dump({"order": res["rankings"]["Relief"]["order"], "algo_s": induction, "clus_wall_s": res["wall_s"],
           "clus_peak_rss_kb": res["peak_rss_kb"], "clus_cpu_percent": res["cpu_percent"]}, open(out, "w"))
'''

WARM_SCRIPT = r'''
import json, logging, sys, time
t0 = time.perf_counter()
root, arff, targets, params, out = sys.argv[1:6]
sys.path.insert(0, root)
logging.basicConfig(level=logging.WARNING)
import spark_fr
from spark_fr.runtime.session import get_spark

spark = get_spark()
spark.sparkContext.setLogLevel("ERROR")
started = time.perf_counter() - t0
params = json.loads(params)
calls = []
for _ in range(2):
    t = time.perf_counter()
    ranking = spark_fr.rank(arff, targets=targets, method="relief", spark=spark, **params)
    calls.append(time.perf_counter() - t)
df = ranking.to_pandas()
df = df[(df["score"] == "relief") & (df["target"] == "__all__")].sort_values("rank")
timings = ranking.metadata.get("timings", {})
json.dump({"order": list(df["feature"]), "spark_start_s": started, "first_call_s": calls[0], "call_s": calls[1],
           "algo_s": timings.get("relief_s"), "spark_fr_timings": timings}, open(out, "w"))
spark.stop()
'''


def _iterations(text: str):
    """``--relief-iterations`` as the CLI reads it: an int count, or a float fraction."""
    return float(text) if any(c in str(text) for c in ".eE") else int(text)


def _spark_fr_relief_top(run_dir: Path) -> tuple:
    import csv

    with open(run_dir / "out" / "ranking.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["score"] == "relief" and r["target"] == "__all__"]
    order = [r["feature"] for r in sorted(rows, key=lambda r: int(r["rank"]))]
    run = json.loads((run_dir / "out" / "run.json").read_text())
    timings = run.get("timings", {})
    return order, {"algo_s": timings.get("relief_s"), "call_s": timings.get("total_s"), "spark_fr_timings": timings,
                   "relief_mode": run.get("relief_mode")}


def relief_peer(kind: str, name: str, arff: Path, truth: dict, k: int, m: str, mode: str | None = None) -> Peer:
    """One peer of the Relief suite.

    Parameters
    ----------
    kind : str
        ``spark_fr`` (``jobs/rank.py --method relief``, a fresh process), ``spark_fr_warm`` (one process,
        two ``spark_fr.rank`` calls, the second timed), ``clus`` (``clus.jar -relief`` through
        ``run_clus.py``, 2 threads) or ``skrebate`` (``ReliefF(n_neighbors=k, n_jobs=2)`` on all rows).
    name : str
        The peer's label (unique in its group).
    arff, truth : the data set and its side-car
    k : int
        Neighbours.
    m : str
        Iterations as given on the command line (``1000`` = a count, ``1.0`` = every row).
    mode : str, optional
        ``--relief-mode`` for spark_fr (default: auto).
    """
    py = sys.executable
    p = truth["p"]
    targets = ",".join(truth["target_names"])
    if kind == "spark_fr":
        def cmd(d):
            extra = ["--relief-mode", mode] if mode else []
            return [py, str(ROOT / "jobs" / "rank.py"), "--input", str(arff), "--targets", targets, "--method",
                    "relief", "--relief-neighbours", str(k), "--relief-iterations", str(m), *extra, "--seed", "1",
                    "--output", str(d / "out"), "--output-format", "csv", "--log-level", "warning"]
        return Peer(name, cmd, _spark_fr_relief_top)
    if kind == "spark_fr_warm":
        params = {"relief_neighbours": k, "relief_iterations": _iterations(m), "seed": 1}
        if mode:
            params["relief_mode"] = mode
        return Peer(name, lambda d: [py, "-c", WARM_SCRIPT, str(ROOT), str(arff), targets, json.dumps(params),
                                     str(d / "result.json")], _json_top)
    if kind == "clus":
        truth_path = arff.with_suffix(".truth.json")
        return Peer(name, lambda d: [py, "-c", CLUS_RELIEF_SCRIPT, str(CLUS_TOOLS), str(arff), str(truth_path),
                                     str(k), str(m), str(d / "clus"), str(d / "result.json")], _json_top)
    if kind == "skrebate":
        return Peer(name, lambda d: [py, "-c", SKREBATE_SCRIPT, str(arff), str(p), str(k), "2",
                                     str(d / "result.json")], _json_top)
    raise ValueError(kind)


def _median(runs: list, key: str):
    values = [r[key] for r in runs if isinstance(r.get(key), (int, float))]
    return round(statistics.median(values), 3) if values else None


def relief_summary(results: dict, planted: list) -> dict:
    """:meth:`PeerResult.summary` plus the medians of the algorithm time (``algo_s``: spark_fr's
    ``relief_s``, CLUS' induction time, skrebate's ``fit``) and of spark_fr's in-process ``rank()`` time
    (``call_s``: ``total_s`` of run.json for the command, the second call for the warm process)."""
    summary = {}
    for name, res in results.items():
        s = res.summary(set(planted))
        ok = res.ok_runs()
        for key in ("algo_s", "call_s"):
            value = _median(ok, key)
            if value is not None:
                s[f"median_{key}"] = value
        summary[name] = s
    return summary


def _ratio(a, b):
    return round(a / b, 2) if a and b else None


def relief_ratios(summary: dict, peer: str, spark_fr: str, warm: str | None) -> dict:
    """``peer / spark_fr`` of the median wall times, of the algorithm times and of the peer's algorithm time
    over the warm second ``rank()`` call (> 1: spark_fr is faster)."""
    s, ref, w = summary.get(peer, {}), summary.get(spark_fr, {}), summary.get(warm, {}) if warm else {}
    return {"peer": peer, "spark_fr": spark_fr, "wall": _ratio(s.get("median_wall_s"), ref.get("median_wall_s")),
            "algorithm": _ratio(s.get("median_algo_s"), ref.get("median_algo_s")),
            "peer_algorithm_over_warm_call": _ratio(s.get("median_algo_s"), w.get("median_call_s")),
            "peer_wall_over_warm_call": _ratio(s.get("median_wall_s"), w.get("median_call_s"))}


def format_relief_table(summary: dict, k: int) -> str:
    """Plain-text table of a Relief group: wall, spark_fr's rank() time, algorithm time, peak RSS, planted."""
    def seconds(key):
        return lambda s: f"{s[key]:.2f}" if s.get(key) is not None else "-"

    return peer_table(summary, k, 24, [("rank() s", 10, seconds("median_call_s")),
                                       ("algo s", 9, seconds("median_algo_s"))])


def format_ratio(r: dict) -> str:
    def x(v):
        return f"{v:.2f}x" if v is not None else "n/a"

    return (f"{r['peer']} / {r['spark_fr']}: wall {x(r['wall'])}, algorithm {x(r['algorithm'])}; "
            f"{r['peer']} algorithm / spark_fr warm rank() call {x(r['peer_algorithm_over_warm_call'])}, "
            f"{r['peer']} wall / warm rank() call {x(r['peer_wall_over_warm_call'])}")


def memory_rows(summary: dict, sizes: dict) -> list:
    """Peak RSS per (program, mode, rows), with the increase per 1,000 rows from the previous size.

    ``sizes`` maps a peer name to ``(program, mode, rows)``.
    """
    table, last = [], {}
    for name, (program, mode, rows) in sizes.items():
        s = summary.get(name, {})
        peak = s.get("median_peak_rss_mb")
        row = {"peer": name, "program": program, "mode": mode, "rows": rows, "median_peak_rss_mb": peak,
               "median_wall_s": s.get("median_wall_s"), "median_algo_s": s.get("median_algo_s")}
        prev = last.get((program, mode))
        if peak is not None and prev is not None:
            row["mb_per_1000_rows_since_previous"] = round((peak - prev[1]) / ((rows - prev[0]) / 1000), 1)
            row["peak_ratio_to_previous"] = round(peak / prev[1], 2)
        if peak is not None:
            last[(program, mode)] = (rows, peak)
        table.append(row)
    return table


def format_memory_table(rows: list, features: int) -> str:
    head = (f"{'program':<10}{'mode':<11}{'rows':>7}{'data MB':>9}{'peak RSS MB':>13}{'x previous':>12}"
            f"{'MB / 1k rows':>14}{'wall s':>9}{'algo s':>9}")
    lines = [head, "-" * len(head)]
    for r in rows:
        def f(v, fmt):
            return format(v, fmt) if v is not None else "-"

        data_mb = r["rows"] * features * 8 / 2 ** 20
        lines.append(f"{r['program']:<10}{r['mode']:<11}{r['rows']:>7}{data_mb:>9.1f}{f(r['median_peak_rss_mb'], '.0f'):>13}"
                     f"{f(r.get('peak_ratio_to_previous'), '.2f'):>12}{f(r.get('mb_per_1000_rows_since_previous'), '.1f'):>14}"
                     f"{f(r['median_wall_s'], '.1f'):>9}{f(r['median_algo_s'], '.2f'):>9}")
    return "\n".join(lines)


def run_relief_suite(args, workdir: Path) -> tuple:
    """Run the requested parts of the Relief suite; return (report dict, exit code)."""
    k, m, p = args.relief_neighbours, args.relief_iterations, args.features
    report, failed = {}, []
    avail, notes = check_available(["clus", "skrebate"])
    for note in notes:
        print(note)

    def group(label, peers, planted, repeats):
        print(f"\n== {label}: {repeats} rounds of {', '.join(pe.name for pe in peers)}", flush=True)
        results = run_rounds(peers, repeats, workdir / "relief" / label, planted, args.timeout)
        summary = relief_summary(results, planted)
        failed.extend(n for n, s in summary.items() if not s.get("runs_ok"))
        return results, summary

    if "clus" in args.relief_parts:
        arff, truth = make_data(workdir, args.relief_rows, p, 1, task="reg")
        planted = truth["relevant"]
        print(f"data: {arff} ({args.relief_rows} rows x {p} features, regression, planted {','.join(planted)}); "
              f"k = {k}, m = {m}")
        peers = [relief_peer("spark_fr", "spark_fr", arff, truth, k, m)]
        if args.relief_warm:
            peers.append(relief_peer("spark_fr_warm", "spark_fr_warm", arff, truth, k, m))
        if "clus" in avail:
            peers.append(relief_peer("clus", "clus", arff, truth, k, m))
        results, summary = group("clus", peers, planted, args.repeats)
        ratios = [relief_ratios(summary, "clus", "spark_fr", "spark_fr_warm" if args.relief_warm else None)] \
            if "clus" in summary else []
        print()
        print(format_relief_table(summary, len(planted)))
        for r in ratios:
            print(format_ratio(r))
        report["clus"] = {"data": {"arff": str(arff), "rows": args.relief_rows, "features": p, "task": "regression",
                                   "planted": planted}, "neighbours": k, "iterations": m, "summary": summary,
                          "ratios": ratios, "runs": {n: r.runs for n, r in results.items()}}

    sizes = {}
    skrebate_summary = {}
    if "skrebate" in args.relief_parts:
        peers, planted, data = [], None, {}
        for rows in args.relief_rows_skrebate:
            arff, truth = make_data(workdir, rows, p, 1, task="cls")
            planted = truth["relevant"]
            data[rows] = str(arff)
            peers.append(relief_peer("spark_fr", f"spark_fr_{rows}", arff, truth, k, "1.0"))
            if args.relief_warm:
                peers.append(relief_peer("spark_fr_warm", f"spark_fr_warm_{rows}", arff, truth, k, "1.0"))
            if "skrebate" in avail:
                peers.append(relief_peer("skrebate", f"skrebate_{rows}", arff, truth, k, "1.0"))
                sizes[f"skrebate_{rows}"] = ("skrebate", "n x n", rows)
        print(f"data: classification, {','.join(map(str, args.relief_rows_skrebate))} rows x {p} features, "
              f"planted {','.join(planted)}; k = {k}, every row an instance")
        results, summary = group("skrebate", peers, planted, args.repeats)
        skrebate_summary = summary
        ratios = [relief_ratios(summary, f"skrebate_{n}", f"spark_fr_{n}",
                                f"spark_fr_warm_{n}" if args.relief_warm else None)
                  for n in args.relief_rows_skrebate if f"skrebate_{n}" in summary]
        print()
        print(format_relief_table(summary, len(planted)))
        for r in ratios:
            print(format_ratio(r))
        report["skrebate"] = {"data": {"arff": data, "features": p, "task": "classification", "planted": planted},
                              "neighbours": k, "iterations": 1.0, "summary": summary, "ratios": ratios,
                              "runs": {n: r.runs for n, r in results.items()}}

    if "memory" in args.relief_parts:
        peers, planted = [], None
        for rows in args.relief_rows_memory:
            arff, truth = make_data(workdir, rows, p, 1, task="reg")
            planted = truth["relevant"]
            for mode in args.relief_memory_modes:
                name = f"spark_fr_{mode}_{rows}"
                peers.append(relief_peer("spark_fr", name, arff, truth, k, m, mode=mode))
        mem_sizes = {f"spark_fr_{mode}_{rows}": ("spark_fr", mode, rows)
                     for mode in args.relief_memory_modes for rows in args.relief_rows_memory}
        results, summary = group("memory", peers, planted, args.relief_memory_repeats)
        table = memory_rows(summary, mem_sizes) + memory_rows(skrebate_summary, sizes)
        print()
        print(f"peak RSS of the process tree by rows (regression x {p} features, k = {k}, m = {m} for spark_fr; "
              f"skrebate: classification, every row; 'data MB' = rows x features x 8 bytes)")
        print(format_memory_table(table, p))
        report["memory"] = {"rows": args.relief_rows_memory, "modes": args.relief_memory_modes, "table": table,
                            "summary": summary, "runs": {n: r.runs for n, r in results.items()}}
    return report, (1 if failed else 0)


def environment() -> dict:
    """Machine facts that matter for reading the timings."""
    return {"cpus": os.cpu_count(), "load_avg_1_5_15": [round(x, 2) for x in os.getloadavg()],
            "python": platform.python_version(), "platform": platform.platform(), "java": shutil.which("java")}


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", choices=("ensemble", "relief", "arff"), default="ensemble",
                    help="ensemble: PCT ensembles vs scikit-learn and CLUS (default); relief: Relief vs CLUS and "
                         "skrebate, and peak memory by rows; arff: ARFF row parsing speed vs scipy")
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--features", type=int, default=200)
    ap.add_argument("--targets", type=int, default=5)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3, help="rounds of alternating commands (default 3)")
    ap.add_argument("--peers", default="spark_fr,sklearn,clus",
                    help=f"comma list of {', '.join(PEERS)} (default spark_fr,sklearn,clus)")
    ap.add_argument("--workdir", default="/tmp/spark_fr_benchmark", help="data and per-run outputs")
    ap.add_argument("--json", help="write the results as JSON to this path")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per run before it is killed")
    rel = ap.add_argument_group("relief suite (--suite relief)")
    rel.add_argument("--relief-parts", default=",".join(RELIEF_PARTS),
                     help="comma list of clus (spark_fr vs CLUS), skrebate (spark_fr vs skrebate ReliefF), memory "
                          "(peak RSS by rows); default all")
    rel.add_argument("--relief-rows", type=int, default=5000, help="rows of the CLUS comparison (default 5000)")
    rel.add_argument("--relief-neighbours", type=int, default=10, help="k (default 10)")
    rel.add_argument("--relief-iterations", default="1000",
                     help="m for the CLUS comparison and the memory runs: a count or a fraction (default 1000); "
                          "the skrebate comparison always uses every row")
    rel.add_argument("--relief-rows-skrebate", default="2000,4000", help="rows of the skrebate comparison")
    rel.add_argument("--relief-rows-memory", default="5000,10000,20000", help="rows of the memory runs")
    rel.add_argument("--relief-memory-modes", default="broadcast,tall", help="spark_fr --relief-mode values")
    rel.add_argument("--relief-memory-repeats", type=int, default=1, help="rounds of the memory runs (default 1)")
    rel.add_argument("--no-relief-warm", dest="relief_warm", action="store_false",
                     help="skip the warm in-process spark_fr measurement")
    args = ap.parse_args(argv)
    args.relief_parts = [x.strip() for x in args.relief_parts.split(",") if x.strip()]
    bad = [x for x in args.relief_parts if x not in RELIEF_PARTS]
    if bad or not args.relief_parts:
        ap.error(f"--relief-parts: unknown {','.join(bad) or '(empty)'}; choose from {', '.join(RELIEF_PARTS)}")
    try:
        args.relief_rows_skrebate = [int(x) for x in args.relief_rows_skrebate.split(",") if x.strip()]
        args.relief_rows_memory = [int(x) for x in args.relief_rows_memory.split(",") if x.strip()]
        m = _iterations(args.relief_iterations)
    except ValueError:
        ap.error("--relief-rows-skrebate and --relief-rows-memory take comma lists of integers, "
                 "--relief-iterations a count or a fraction")
    if m <= 0 or args.relief_neighbours < 1:
        ap.error("--relief-iterations and --relief-neighbours must be positive")
    args.relief_memory_modes = [x.strip() for x in args.relief_memory_modes.split(",") if x.strip()]
    if any(x not in ("auto", "broadcast", "tall") for x in args.relief_memory_modes):
        ap.error("--relief-memory-modes: choose from auto, broadcast, tall")
    args.peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    bad = [p for p in args.peers if p not in PEERS]
    if bad or not args.peers:
        ap.error(f"--peers: unknown {','.join(bad) or '(empty)'}; choose from {', '.join(PEERS)}")
    if args.targets < 1 or args.features < args.targets + 1:
        ap.error("--features must be at least --targets + 1 (t_j uses x_j and x_{j+1})")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    workdir = Path(args.workdir).resolve()
    if args.suite == "relief":
        return main_relief(args, workdir)
    if args.suite == "arff":
        return main_arff(args)
    names, notes = check_available(args.peers)
    for note in notes:
        print(note)
    if not names:
        print("no peer can run here", file=sys.stderr)
        return 1
    t0 = time.perf_counter()
    arff, truth = make_data(workdir, args.rows, args.features, args.targets)
    planted = truth["relevant"]
    print(f"data: {arff} ({args.rows} rows x {args.features} features x {args.targets} targets, "
          f"planted {','.join(planted)}; ready in {time.perf_counter() - t0:.1f} s)")
    env_before = environment()
    print(f"machine: {env_before['cpus']} cpus, load average {env_before['load_avg_1_5_15']}; "
          f"{args.repeats} rounds of {', '.join(names)} with {args.trees} trees")
    peers = make_peers(names, arff, truth, args.trees)
    results = run_rounds(peers, args.repeats, workdir, planted, args.timeout)
    summary = summarise(results, planted)
    print()
    print(format_table(summary, len(planted)))
    env_after = environment()
    print(f"load average after: {env_after['load_avg_1_5_15']}")
    if args.json:
        report = {"config": {k: v for k, v in vars(args).items()}, "data": {"arff": str(arff), "planted": planted},
                  "environment": {"before": env_before, "after": env_after}, "skipped": notes,
                  "summary": summary, "runs": {n: r.runs for n, r in results.items()}}
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=1, default=str))
        print(f"results written to {args.json}")
    failed = [n for n, s in summary.items() if not s.get("runs_ok")]
    return 1 if failed else 0


ARFF_FILES = ("mlc_yeast/yeast.arff", "mlc_scene/scene-train.arff", "mlc_medical/medical.arff",
              "hmlc_derisi_GO/derisi_GO.train.arff")


def _best_of(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main_arff(args) -> int:
    """``--suite arff``: in-process ARFF row parsing (spark_fr's parser, one core) against scipy's loadarff.

    The parser runs once per Spark partition on the executors, so its speed bounds the reading of large
    files. Best of ``--repeats`` per file; scipy reads dense files of numeric/nominal attributes only.
    """
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from scipy.io import arff as scipy_arff

    from spark_fr.io.arff import ArffRowParser, read_header

    datasets = Path(__file__).resolve().parents[2] / "shared" / "datasets"
    print(f"{'file':<40}{'rows':>7}{'MB':>7}{'spark_fr s':>12}{'rows/s':>10}{'scipy s':>9}{'scipy / ours':>14}")
    report = []
    for name in ARFF_FILES:
        path = datasets / name
        if not path.exists():
            print(f"{name:<40}  (not found)")
            continue
        header = read_header(str(path))
        lines = path.read_text(encoding="utf-8").splitlines()[header.data_line:]
        parser = ArffRowParser(header)
        n = parser.parse_lines(lines).n_rows
        ours = _best_of(lambda: parser.parse_lines(lines), args.repeats)
        try:
            theirs = _best_of(lambda: scipy_arff.loadarff(str(path)), args.repeats)
        except Exception as err:  # sparse rows, string or hierarchical attributes: scipy cannot read them
            theirs, why = None, type(err).__name__
        mb = path.stat().st_size / 2 ** 20
        ratio = f"{theirs / ours:.2f}x" if theirs else f"  n/a: {why}"
        print(f"{name:<40}{n:>7}{mb:>7.1f}{ours:>12.3f}{n / ours:>10.0f}"
              f"{(f'{theirs:.3f}' if theirs else '-'):>9}{ratio:>14}")
        report.append({"file": name, "rows": n, "mb": mb, "spark_fr_s": ours, "scipy_s": theirs})
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"suite": "arff", "environment": environment(), "files": report},
                                              indent=1))
    return 0


def main_relief(args, workdir: Path) -> int:
    """``--suite relief``: the Relief comparisons and the memory runs, a table each, and ``--json``."""
    env_before = environment()
    print(f"machine: {env_before['cpus']} cpus, load average {env_before['load_avg_1_5_15']}; Relief suite "
          f"({', '.join(args.relief_parts)}), {args.repeats} rounds")
    report, code = run_relief_suite(args, workdir)
    env_after = environment()
    print(f"load average after: {env_after['load_avg_1_5_15']}")
    if args.json:
        out = {"suite": "relief", "config": dict(vars(args)),
               "environment": {"before": env_before, "after": env_after}, **report}
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=1, default=str))
        print(f"results written to {args.json}")
    return code


if __name__ == "__main__":
    sys.exit(main())
