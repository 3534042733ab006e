"""Scaling suite (``--suite scaling``): spark_fr's time per tree by Spark master and ensemble mode, strong and
weak scaling, and a cost model fitted to them.

What is measured
----------------
spark_fr (``python jobs/rank.py --trees N --scores genie3,symbolic --ensemble-mode MODE --master MASTER``,
fully grown random-forest trees) on the tall suite's synthetic MTR tables (``tall_data.py``, Parquet),
for every master of ``--scaling-masters`` (``local[1]``, ``local[2]``, ``local-cluster[2,1,4096]``: two
executor JVMs of one core and 4 GB each, started by the driver as separate processes) and every mode of
``--scaling-modes`` (broadcast, partitioned). The parts (``--scaling-parts``):

``strong``
    fixed data: ``--rows`` (200,000) x ``--features`` (50) x ``--targets`` (3), ``--trees`` (40).
``weak``
    rows proportional to the cores: ``--scaling-rows-per-core`` (100,000) x E rows, E = the master's cores
    (``local[N]``: N; ``local-cluster[W,C,M]``: W x C). A run that the strong part already made (the same
    rows, master and mode) is not repeated.
``shape`` (opt-in)
    ``--rows`` x ``--scaling-shape-features`` (200) on the last ``local[N]`` master, so that k, the
    features per node, takes a second value.

The time per tree is spark_fr's own ``trees_s`` (``run.json``: growing and scoring the trees on Spark,
after reading and encoding; every tree is a Spark task: the suite sets ``SPARK_FR_DRIVER_MAX_SECONDS=0``, so
no tree is grown in the driver, neither as small work nor while the session starts) over the trees, the
median over ``--repeats`` rounds (1); the wall time and
peak RSS of the whole process tree (driver, executor JVMs, Python workers) are reported beside it. Then
``cost_model.py`` fits ``t = c0 + c1 * n log2(n) * k * (T + 4) / E`` per mode, prints the fit and its
residuals, and what it predicts for ``--scaling-predict`` (10^8 rows x 10^3 features, k = 32, on 100
executors, 100 trees). ``--plot [PNG]`` draws the curves (default ``WORKDIR/scaling.png``).

The machine matters: on 2 shared cores, E = 2 has no idle core for the driver, and other users' load
counts against every run; the load average is printed with each run. Reported, never asserted. Examples::

    python jobs/benchmark.py --suite scaling --plot --json out/scaling.json
    python jobs/benchmark.py --suite scaling --rows 20000 --trees 10 --scaling-masters 'local[1],local[2]' \\
        --scaling-modes broadcast --scaling-parts strong
"""
from __future__ import annotations

import os
import re
import statistics
from pathlib import Path

from . import cost_model
from .measure import environment, machine_line
from .options import comma_list, fill_defaults
from .peers import Peer, rank_command, spark_fr_reader
from .rounds import run_rounds
from .tables import write_json
from .tall_data import make_tall

SUMMARY = "spark_fr's strong and weak scaling by master and ensemble mode, and a fitted cost model"
PARTS = ("strong", "weak", "shape")
MODES = ("broadcast", "partitioned")
SCORES = "genie3,symbolic"
MASTER = re.compile(r"^local\[(\d+|\*)\]$|^local-cluster\[(\d+),(\d+),(\d+)\]$")


def add_arguments(parser) -> None:
    """The ``scaling suite`` option group.

    Parameters
    ----------
    parser : argparse.ArgumentParser
    """
    g = parser.add_argument_group("scaling suite (--suite scaling; defaults --rows 200000 --features 50 --targets 3 "
                                  "--trees 40 --repeats 1)")
    g.add_argument("--scaling-masters", default="local[1],local[2],local-cluster[2,1,4096]",
                   help="comma list of local[N] and local-cluster[W,C,MB] masters (default local[1],local[2],"
                        "local-cluster[2,1,4096])")
    g.add_argument("--scaling-modes", default=",".join(MODES),
                   help="comma list of broadcast, partitioned (default both)")
    g.add_argument("--scaling-parts", default="strong,weak",
                   help="comma list of strong, weak, shape (default strong,weak)")
    g.add_argument("--scaling-rows-per-core", type=int, help="rows per core of the weak part (default --rows / 2)")
    g.add_argument("--scaling-shape-features", type=int, default=200, help="features of the shape part (default 200)")
    g.add_argument("--scaling-predict", default="100000000,1000,100,100",
                   help="ROWS,FEATURES,EXECUTORS,TREES the fitted model predicts (default 100000000,1000,100,100)")
    g.add_argument("--plot", nargs="?", const="",
                   help="write the scaling curves as a PNG (default WORKDIR/scaling.png)")


def executors(master: str) -> int:
    """The cores a master gives to tasks: N of ``local[N]`` (``*``: this machine's), W x C of ``local-cluster``.

    Parameters
    ----------
    master : str

    Returns
    -------
    int
    """
    import os

    m = MASTER.match(master)
    if m is None:
        raise ValueError(master)
    if m.group(1):
        return (os.cpu_count() or 1) if m.group(1) == "*" else int(m.group(1))
    return int(m.group(2)) * int(m.group(3))


def split_masters(text: str) -> list:
    """A comma list of masters, whose brackets may hold commas (``local[1],local-cluster[2,1,4096]``).

    Parameters
    ----------
    text : str

    Returns
    -------
    list of str
    """
    return [m.strip() for m in re.findall(r"[^,\[]*\[[^\]]*\]|[^,]+", text) if m.strip()]


def check_arguments(args, error) -> None:
    """Fill in the suite's defaults and parse its comma lists in place.

    Parameters
    ----------
    args : argparse.Namespace
    error : callable
        ``error(message)`` exits with a usage error.
    """
    fill_defaults(args, rows=200_000, features=50, targets=3, trees=40, repeats=1)
    args.scaling_masters = split_masters(args.scaling_masters)
    bad = [m for m in args.scaling_masters if not MASTER.match(m)]
    if bad or not args.scaling_masters:
        error(f"--scaling-masters: {','.join(bad) or '(empty)'} is not local[N] or local-cluster[W,C,MB]")
    args.scaling_modes = comma_list(args.scaling_modes)
    args.scaling_parts = comma_list(args.scaling_parts)
    if not args.scaling_modes or any(m not in MODES for m in args.scaling_modes):
        error(f"--scaling-modes: choose from {', '.join(MODES)}")
    if not args.scaling_parts or any(p not in PARTS for p in args.scaling_parts):
        error(f"--scaling-parts: choose from {', '.join(PARTS)}")
    if args.scaling_rows_per_core is None:
        args.scaling_rows_per_core = max(1, args.rows // 2)
    try:
        rows, features, execs, trees = (float(x) for x in comma_list(args.scaling_predict))
    except ValueError:
        error("--scaling-predict takes ROWS,FEATURES,EXECUTORS,TREES")
    args.scaling_predict = {"rows": rows, "features": int(features), "executors": int(execs), "trees": int(trees)}
    if min(args.rows, args.features, args.targets, args.trees, args.repeats, args.scaling_rows_per_core) < 1:
        error("--rows, --features, --targets, --trees, --repeats and --scaling-rows-per-core must be positive")


def plan(args) -> list:
    """The runs of the suite, one per (master, mode, rows, features), with the parts each serves.

    Parameters
    ----------
    args : argparse.Namespace

    Returns
    -------
    list of dict
        ``name``, ``parts``, ``master``, ``executors``, ``mode``, ``rows``, ``features``, ``targets``, ``k``.
    """
    points = {}

    def add(part, master, rows, features):
        for mode in args.scaling_modes:
            key = (master, mode, rows, features)
            if key not in points:
                points[key] = {"name": f"{mode}_{master}_{rows}x{features}", "parts": [], "master": master,
                               "executors": executors(master), "mode": mode, "rows": rows, "features": features,
                               "targets": args.targets, "k": cost_model.features_per_node(features)}
            points[key]["parts"].append(part)

    for master in args.scaling_masters:
        if "strong" in args.scaling_parts:
            add("strong", master, args.rows, args.features)
        if "weak" in args.scaling_parts:
            add("weak", master, args.scaling_rows_per_core * executors(master), args.features)
    if "shape" in args.scaling_parts:
        local = [m for m in args.scaling_masters if m.startswith("local[")] or args.scaling_masters
        add("shape", local[-1], args.rows, args.scaling_shape_features)
    return list(points.values())


def measure_points(points: list, args, workdir: Path) -> dict:
    """Run every point (grouped by data set, alternating within a group for ``--repeats`` rounds).

    Parameters
    ----------
    points : list of dict
        From :func:`plan`; each gets ``wall_s``, ``trees_s``, ``seconds_per_tree``, ``peak_rss_mb``,
        ``ensemble_mode`` and ``runs_ok`` (medians over the successful runs).
    args : argparse.Namespace
    workdir : Path

    Returns
    -------
    dict
        ``{point name: rounds.PeerResult}``.
    """
    results = {}
    for features in sorted({p["features"] for p in points}):
        group = [p for p in points if p["features"] == features]
        data = {rows: make_tall(workdir, rows, features, args.targets, min(5, features))
                for rows in sorted({p["rows"] for p in group})}
        planted = next(iter(data.values()))[1]["relevant"]
        peers, reader = [], spark_fr_reader(("genie3",), len(planted))
        for p in group:
            path, truth = data[p["rows"]]
            command = rank_command(path, ",".join(truth["target_names"]), "--trees", str(args.trees), "--scores",
                                   SCORES, "--ensemble-mode", p["mode"], "--master", p["master"])
            peers.append(Peer(p["name"], command, reader))
        results.update(run_rounds(peers, args.repeats, workdir / "scaling", planted, args.timeout))
    for p in points:
        ok = results[p["name"]].ok_runs()
        p["runs_ok"] = len(ok)
        if ok:
            trees_s = statistics.median(r["spark_fr_timings"]["trees_s"] for r in ok)
            p.update(wall_s=statistics.median(r["wall_s"] for r in ok), trees_s=round(trees_s, 3),
                     seconds_per_tree=trees_s / args.trees, peak_rss_mb=statistics.median(r["peak_rss_mb"] for r in ok),
                     ensemble_mode=ok[0].get("ensemble_mode"), load_avg_1=ok[0]["load_avg_1_before"])
        else:
            p["error"] = results[p["name"]].runs[-1]["stderr_tail"][-500:]
    return results


def relative_speed(points: list, part: str) -> None:
    """Speed-up (strong: time per tree on the first master over this one's) or efficiency (weak), in place.

    Parameters
    ----------
    points : list of dict
        Measured points; those of ``part`` get ``speedup`` (strong) or ``efficiency`` (weak).
    part : str
    """
    key = "speedup" if part == "strong" else "efficiency"
    for mode in {p["mode"] for p in points}:
        mine = [p for p in points if part in p["parts"] and p["mode"] == mode and p.get("seconds_per_tree")]
        if mine:
            base = mine[0]["seconds_per_tree"]
            for p in mine:
                p[key] = round(base / p["seconds_per_tree"], 2)


def format_points(points: list) -> str:
    """The table of runs: parts, master, E, mode, shape, wall, trees, time per tree, speed-up, memory, load.

    Parameters
    ----------
    points : list of dict

    Returns
    -------
    str
    """
    head = (f"{'parts':<13}{'master':<25}{'E':>2}  {'mode':<12}{'rows':>9}{'feat':>5}{'k':>4}{'wall s':>8}"
            f"{'trees s':>9}{'s / tree':>10}{'speed-up':>9}{'weak eff':>9}{'peak GB':>8}{'load':>6}")
    lines = [head, "-" * len(head)]
    for p in points:
        start = (f"{','.join(p['parts']):<13}{p['master']:<25}{p['executors']:>2}  {p['mode']:<12}{p['rows']:>9}"
                 f"{p['features']:>5}{p['k']:>4}")
        if not p["runs_ok"]:
            lines.append(start + "  FAILED: " + " ".join(p.get("error", "").split())[-150:])
            continue
        lines.append(start + f"{p['wall_s']:>8.1f}{p['trees_s']:>9.1f}{p['seconds_per_tree']:>10.3f}"
                     f"{p.get('speedup', '-'):>9}{p.get('efficiency', '-'):>9}{p['peak_rss_mb'] / 1024:>8.2f}"
                     f"{p['load_avg_1']:>6.1f}")
    return "\n".join(lines)


def fit_models(points: list, args) -> tuple:
    """Fit the cost model per mode and predict ``--scaling-predict``; print both.

    Parameters
    ----------
    points : list of dict
    args : argparse.Namespace

    Returns
    -------
    tuple of (dict, dict, list)
        ``{mode: fit}``, ``{mode: prediction}`` and notes for the modes that could not be fitted.
    """
    models, predictions, notes = {}, {}, []
    for mode in args.scaling_modes:
        mine = [p for p in points if p["mode"] == mode and p.get("seconds_per_tree")]
        if len({cost_model.work(p["rows"], p["k"], p["targets"], p["executors"]) for p in mine}) < 2:
            notes.append(f"{mode}: fewer than two runs of different work, no cost model")
            continue
        models[mode] = cost_model.fit(mine)
        q = args.scaling_predict
        predictions[mode] = cost_model.predict(models[mode], q["rows"], q["features"], args.targets, q["executors"],
                                               q["trees"])
    return models, predictions, notes


def run(args) -> int:
    """Run the suite: the runs, their table, the cost model, the plot and ``--json``.

    Parameters
    ----------
    args : argparse.Namespace
        From ``jobs/benchmark.py``.

    Returns
    -------
    int
        0, or 1 if some run failed in every round.
    """
    workdir = Path(args.workdir).resolve()
    points = plan(args)
    os.environ["SPARK_FR_DRIVER_MAX_SECONDS"] = "0"  # every tree on Spark (the runs inherit the environment)
    env_before = environment()
    print(machine_line(env_before, f"{len(points)} spark_fr runs x {args.repeats} rounds, {args.trees} trees, "
                                   f"parts {','.join(args.scaling_parts)}"))
    results = measure_points(points, args, workdir)
    for part in ("strong", "weak"):
        relative_speed(points, part)
    print()
    print(format_points(points))
    models, predictions, notes = fit_models(points, args)
    print()
    for note in notes:
        print(note)
    for mode, model in models.items():
        print(cost_model.format_fit(mode, model))
        print(cost_model.format_prediction(f"  {mode} predicts", predictions[mode]))
    print("  (an extrapolation far beyond the measured sizes: a trend, not a promise. In partitioned mode a task "
          "holds all rows of its trees, so 10^8 rows need --max-samples; then n is the sample per tree)")
    plot = None
    if args.plot is not None:
        from .scaling_plot import write_plot

        plot = write_plot(Path(args.plot) if args.plot else workdir / "scaling.png", points, args.scaling_masters,
                          models, f"spark_fr scaling: {args.features} features x {args.targets} targets, "
                                  f"{args.trees} trees ({env_before['cpus']} cpus)")
        print(f"plot written to {plot}")
    env_after = environment()
    print(f"load average after: {env_after['load_avg_1_5_15']}")
    if args.json:
        write_json(args.json, {"suite": "scaling", "config": dict(vars(args)),
                               "environment": {"before": env_before, "after": env_after}, "points": points,
                               "cost_model": models, "predictions": predictions, "notes": notes,
                               "plot": str(plot) if plot else None, "runs": {n: r.runs for n, r in results.items()}})
    return 1 if any(not p["runs_ok"] for p in points) else 0
