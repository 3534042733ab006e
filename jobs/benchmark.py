"""Benchmark spark_fr against scikit-learn and CLUS on a synthetic multi-target regression (MTR) set.

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
def make_data(workdir: Path, rows: int, features: int, targets: int) -> tuple:
    """Write the synthetic MTR set once (reused when its side-car matches); return (arff path, truth dict).

    Parameters
    ----------
    workdir : Path
    rows, features, targets : int
        n, p and k of ``make_synthetic.py --task mtr``.

    Returns
    -------
    tuple of (Path, dict)
        The ARFF file and its ``.truth.json`` side-car (``relevant``, ``target_names``, ...).
    """
    name = f"mtr_{rows}x{features}x{targets}"
    arff, truth_path = workdir / f"{name}.arff", workdir / f"{name}.truth.json"
    if arff.exists() and truth_path.exists():
        truth = json.loads(truth_path.read_text())
        if (truth.get("n"), truth.get("p"), len(truth.get("target_names", []))) == (rows, features, targets):
            return arff, truth
    sys.path.insert(0, str(CLUS_TOOLS))
    from make_synthetic import make

    workdir.mkdir(parents=True, exist_ok=True)
    path, truth = make(str(workdir), "mtr", name=name, n=rows, p=features, k=targets)
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
            "stderr_tail": tail if proc.returncode else ""}


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
                  f"{status}", flush=True)
    return results


def summarise(results: dict, planted: list, reference: str = "spark_fr") -> dict:
    """Per-peer summary with the wall-time ratio to ``reference`` (peer / reference)."""
    summary = {name: r.summary(set(planted)) for name, r in results.items()}
    ref = summary.get(reference, {}).get("median_wall_s")
    for s in summary.values():
        if ref and "median_wall_s" in s:
            s["ratio_to_spark_fr"] = round(s["median_wall_s"] / ref, 2)
    return summary


def format_table(summary: dict, k: int) -> str:
    """A plain-text table of the summary."""
    head = (f"{'peer':<13}{'runs':>5}{'median wall s':>15}{'(min-max)':>17}{'ratio vs spark_fr':>19}"
            f"{'peak RSS GB':>13}{f'top-{k} = planted':>18}")
    lines = [head, "-" * len(head)]
    for name, s in summary.items():
        if not s.get("runs_ok"):
            lines.append(f"{name:<13}{0:>5}  (every run failed)")
            continue
        rng = f"({s['min_wall_s']:.1f}-{s['max_wall_s']:.1f})"
        ratio = f"{s['ratio_to_spark_fr']:.2f}" if "ratio_to_spark_fr" in s else "n/a"
        lines.append(f"{name:<13}{s['runs_ok']:>5}{s['median_wall_s']:>15.1f}{rng:>17}{ratio:>19}"
                     f"{s['median_peak_rss_mb'] / 1024:>13.2f}{'yes' if s['top_planted_every_run'] else 'NO':>18}")
    return "\n".join(lines)


def environment() -> dict:
    """Machine facts that matter for reading the timings."""
    return {"cpus": os.cpu_count(), "load_avg_1_5_15": [round(x, 2) for x in os.getloadavg()],
            "python": platform.python_version(), "platform": platform.platform(), "java": shutil.which("java")}


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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
    args = ap.parse_args(argv)
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


if __name__ == "__main__":
    sys.exit(main())
