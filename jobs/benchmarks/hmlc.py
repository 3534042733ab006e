"""HMLC suite (``--suite hmlc``): spark_fr against CLUS on hierarchical multi-label classification, with a
tree hierarchy, a DAG of Gene Ontology terms and a large synthetic DAG.

What is measured
----------------
``--hmlc-sets`` (all three by default) chooses the data sets:

``cellcycle_FUN``
    ``../shared/datasets/hmlc_cellcycle_FUN/cellcycle_FUN.train.arff``: 1,628 yeast genes x 77 numeric
    features (some missing), 499 FunCat labels in a tree (label paths ``01/01/03``).
``derisi_GO``
    ``../shared/datasets/hmlc_derisi_GO/derisi_GO.train.arff``: 1,605 genes x 63 features, 4,119 Gene
    Ontology terms in a DAG (``parent/child`` edges below ``root``).
``synthetic``
    ``hmlc_data.py``: ``--rows`` (50,000) x ``--features`` (100) uniform features and a ``--targets``
    (1,000) label DAG of 5 levels; ``--hmlc-planted`` (10) features, spread over the columns, choose which
    branches each row walks down (about 28 positive labels per row after closing under ancestors). Written
    once into ``--workdir`` as Clus HMC ARFF and reused.

Each peer ranks the features of a set with ``--trees`` (50) random-forest trees, as a separate command:

``spark_fr``
    ``python jobs/rank.py --input X.arff --targets class --trees T --scores symbolic,genie3 --hmlc-w0 W --seed 1
    --output DIR --output-format csv`` (the ARFF ``hierarchical`` attribute makes the task HMLC; the two
    scores CLUS computes; Genie3 gives the order).
``spark_fr_rf`` (opt-in)
    The same with ``--scores symbolic,genie3,rf`` (adds the out-of-bag permutation score, weighted Hamming
    loss).
``spark_fr_broadcast`` (opt-in)
    ``spark_fr`` with ``--ensemble-mode broadcast``: the synthetic set's encoded size (rows x 3 x 8 bytes
    per label: 1.1 GB) is above ``--max-broadcast-mb``, so ``auto`` grows its trees in partitioned mode.
``clus``
    ``jobs/peers/clus_hmlc.py``: CLUS RForest through ``run_clus.py``, T trees, ``SelectRandomSubspaces =
    SQRT``, Genie3 + Symbolic, ``NumberOfThreads = 2``, ``[Hierarchical] Type = Tree`` or ``DAG`` (from the
    file), ``HSeparator = /``, ``WType = ExpAvgParentWeight``, ``WParam = W`` (``--hmlc-w0``, 0.75, the
    weights ``w(l) = w0 * mean(w(parents))`` of spark_fr's ``--hmlc-w0``), ``[Output] TrainErrors = No``
    (CLUS would otherwise evaluate the forest on its training rows after ranking: precision-recall curves
    over every label, work a ranking does not need).
``clus_train_errors`` (opt-in)
    The same with CLUS' default ``TrainErrors = Yes``: what a user who leaves the settings alone waits for.

The commands alternate (spark_fr, clus, spark_fr, clus, ...) for ``--repeats`` (1) rounds per set, one set
after the other. Per run: wall time of the whole command (start-up, reading, writing included), peak RSS of
its process tree (Spark's JVM and Python workers; CLUS' JVM, whose heap ``--hmlc-xmx`` bounds: by default
half the RAM, as the JVM's own default, a quarter, is too small for derisi_GO and the synthetic set:
50 trees die with ``OutOfMemoryError``), the time of the algorithm itself (spark_fr's ``trees_s`` from ``run.json``,
CLUS' "Induction Time") and the load average before and after. The real sets have no known relevant
features: spark_fr's and CLUS' rankings are compared by the overlap of their top-k (``--hmlc-top``, 10)
features, Genie3 with Genie3 and Symbolic with Symbolic, within a round. On the synthetic set the planted
features among each score's top-(planted) are counted too.

How to read the output
----------------------
One table per set (peer, median wall time and range, ratio to spark_fr, algorithm seconds, peak RSS, top-k
overlap with CLUS, planted features found), then one summary line per set: ``clus / spark_fr`` of the
median wall times and of the peak memory (> 1: spark_fr is faster / smaller) and the Genie3 overlap. Ratios
are reported, never asserted; on a shared machine read them with the load averages printed beside them.
``--json PATH`` keeps everything (every run, its top-k per score, spark_fr's timing breakdown). Examples::

    python jobs/benchmark.py --suite hmlc --repeats 1 --json out/bench/hmlc.json
    python jobs/benchmark.py --suite hmlc --hmlc-sets synthetic --rows 5000 --targets 200 --trees 20
"""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from .hmlc_data import MIN_LABELS, make_hmlc, read_hmlc_header
from .measure import environment, machine_line, run_measured
from .options import comma_list, fill_defaults, parse_peers
from .paths import DATASETS
from .peers import Peer, announce, check_available, json_top, rank_command, script_command, spark_fr_reader
from .rounds import PeerResult, summarise
from .tables import format_pair_ratios, pair_ratios, write_json

SUMMARY = "hierarchical multi-label classification (tree, DAG, synthetic DAG): spark_fr vs CLUS"
PEERS = ("spark_fr", "spark_fr_rf", "spark_fr_broadcast", "clus", "clus_train_errors")
SETS = {"cellcycle_FUN": "hmlc_cellcycle_FUN/cellcycle_FUN.train.arff",
        "derisi_GO": "hmlc_derisi_GO/derisi_GO.train.arff",
        "synthetic": None}
SCORES = ("genie3", "symbolic")
SPARK_FR_PEERS = ("spark_fr", "spark_fr_rf", "spark_fr_broadcast")
CLUS_PEERS = ("clus", "clus_train_errors")


def add_arguments(parser) -> None:
    """The ``hmlc suite`` option group.

    Parameters
    ----------
    parser : argparse.ArgumentParser
    """
    g = parser.add_argument_group("hmlc suite (--suite hmlc; defaults --trees 50 --repeats 1, peers spark_fr,clus of "
                                  + ",".join(PEERS) + "; the synthetic set: --rows 50000 --features 100 "
                                  "--targets 1000 labels)")
    g.add_argument("--hmlc-sets", default=",".join(SETS),
                   help="comma list of the data sets to run, from " + ", ".join(SETS) + " (default all)")
    g.add_argument("--hmlc-top", type=int, default=10, help="top-k compared between spark_fr and CLUS (default 10)")
    g.add_argument("--hmlc-planted", type=int, default=10,
                   help="planted relevant features of the synthetic set (default 10)")
    g.add_argument("--hmlc-w0", type=float, default=0.75,
                   help="hierarchy weight w0: spark_fr's --hmlc-w0, CLUS' WParam (default 0.75)")
    g.add_argument("--hmlc-xmx", help="CLUS' maximum JVM heap, e.g. 8g (default: half the RAM)")


def check_arguments(args, error) -> None:
    """Fill in the suite's defaults, parse ``--peers`` and ``--hmlc-sets``, check the values.

    Parameters
    ----------
    args : argparse.Namespace
        Changed in place (``--targets`` is the synthetic set's number of labels; ``args.hmlc_sets`` becomes
        a list).
    error : callable
        ``error(message)`` exits with a usage error.
    """
    fill_defaults(args, rows=50000, features=100, targets=1000, trees=50, repeats=1)
    parse_peers(args, PEERS, "spark_fr,clus", error)
    args.hmlc_sets = comma_list(args.hmlc_sets)
    bad = [s for s in args.hmlc_sets if s not in SETS]
    if bad or not args.hmlc_sets:
        error(f"--hmlc-sets: unknown {','.join(bad) or '(empty)'}; choose from {', '.join(SETS)}")
    if min(args.rows, args.features, args.trees, args.repeats, args.hmlc_top, args.hmlc_planted) < 1:
        error("--rows, --features, --trees, --repeats, --hmlc-top and --hmlc-planted must be positive")
    if args.hmlc_planted > args.features:
        error(f"--hmlc-planted ({args.hmlc_planted}) must be at most --features ({args.features})")
    if args.targets < MIN_LABELS:
        error(f"--targets (labels of the synthetic DAG) must be at least {MIN_LABELS}")
    if not 0 < args.hmlc_w0 <= 1:
        error("--hmlc-w0 must be in (0, 1]")
    if args.hmlc_xmx is None:
        args.hmlc_xmx = half_the_ram()


def half_the_ram() -> str:
    """Half the machine's physical memory as a JVM heap size (``11g``; at least ``1g``)."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return f"{max(1, total // 2 ** 31)}g"


# ----- peers -------------------------------------------------------------------------------------------------
def _spark_fr_reader(scores: tuple, k: int):
    """:func:`peers.spark_fr_reader` plus ``algo_s``, spark_fr's ``trees_s``."""
    read = spark_fr_reader(scores, k)

    def top(run_dir: Path) -> tuple:
        order, extra = read(run_dir)
        return order, dict(extra, algo_s=extra["spark_fr_timings"].get("trees_s"))

    return top


def _clus_reader(k: int):
    """The CLUS peer's Genie3 order, the top-k of Genie3 and Symbolic, and ``algo_s`` (its induction time)."""
    def top(run_dir: Path) -> tuple:
        order, extra = json_top(run_dir)
        symbolic = extra.pop("symbolic_order")
        return order, dict(extra, tops={"genie3": order[:k], "symbolic": symbolic[:k]},
                           algo_s=extra.get("clus_induction_s"))

    return top


def make_peers(names: list, arff: Path, target: str, args, k: int) -> list:
    """Build the suite's peers for one data set.

    Parameters
    ----------
    names : list of str
        Peer names from :data:`PEERS`, in the order they run.
    arff : Path
    target : str
        The ``hierarchical`` attribute.
    args : argparse.Namespace
        ``trees``, ``hmlc_w0``, ``hmlc_xmx``.
    k : int
        The length of the tops kept per score.

    Returns
    -------
    list of peers.Peer
    """
    trees, w0 = str(args.trees), str(args.hmlc_w0)
    clus = ("--trees", trees, "--seed", "1", "--threads", "2", "--w0", w0,
            *(("--xmx", args.hmlc_xmx) if args.hmlc_xmx else ()))

    def spark_fr(name, scores, *options):
        return Peer(name, rank_command(arff, target, "--trees", trees, "--scores", ",".join(scores),
                                       "--hmlc-w0", w0, *options), _spark_fr_reader(scores, k))

    makers = {
        "spark_fr": lambda: spark_fr("spark_fr", SCORES),
        "spark_fr_rf": lambda: spark_fr("spark_fr_rf", (*SCORES, "rf")),
        "spark_fr_broadcast": lambda: spark_fr("spark_fr_broadcast", SCORES, "--ensemble-mode", "broadcast"),
        "clus": lambda: Peer("clus", script_command("clus_hmlc.py", arff, *clus), _clus_reader(k)),
        "clus_train_errors": lambda: Peer("clus_train_errors", script_command("clus_hmlc.py", arff, *clus,
                                                                                "--train-errors"), _clus_reader(k)),
    }
    return [makers[n]() for n in names]


# ----- runs --------------------------------------------------------------------------------------------------
def alternate(peers: list, repeats: int, workdir: Path, k: int, timeout: float) -> dict:
    """Alternate the peers' commands for ``repeats`` rounds (as :func:`rounds.run_rounds`, which checks a
    top against planted features: the real sets have none, so each run's line shows its Genie3 top-5).

    Parameters
    ----------
    peers : list of peers.Peer
    repeats : int
    workdir : Path
        Each run writes into ``workdir/runs/<peer>_r<round>`` (emptied first).
    k : int
        The length of the recorded ``top``.
    timeout : float
        Seconds per run.

    Returns
    -------
    dict
        ``{peer name: rounds.PeerResult}``, in the order of ``peers``.
    """
    results = {p.name: PeerResult(p.name) for p in peers}
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
                status = "top-5 " + ",".join(order[:5])
            else:
                status = f"FAILED (exit {res['returncode']}): {res['stderr_tail'][-300:]}"
            results[peer.name].runs.append(res)
            print(f"  round {rnd} {peer.name:<18} {res['wall_s']:8.1f} s  peak {res['peak_rss_mb'] / 1024:5.2f} GB  "
                  f"load {res['load_avg_1_before']:.1f}-{res['load_avg_1_after']:.1f}  {status}", flush=True)
    return results


def overlaps(results: dict, k: int) -> dict:
    """The top-k overlap of every spark_fr peer with CLUS, per score, within each round.

    Parameters
    ----------
    results : dict
        ``{peer name: rounds.PeerResult}``; runs with ``tops`` (``{score: features}``).
    k : int

    Returns
    -------
    dict
        ``{spark_fr peer: {score: fewest shared features over the rounds}}``, against the first CLUS peer
        that ran (empty without one).
    """
    clus = next((results[n] for n in CLUS_PEERS if n in results and results[n].ok_runs()), None)
    if clus is None:
        return {}
    by_round = {r["round"]: r["tops"] for r in clus.ok_runs()}
    out = {}
    for name in SPARK_FR_PEERS:
        if name not in results:
            continue
        for run in results[name].ok_runs():
            theirs = by_round.get(run["round"])
            if theirs is None:
                continue
            for score in SCORES:
                n = len(set(run["tops"][score][:k]) & set(theirs[score][:k]))
                out.setdefault(name, {})[score] = min(out.get(name, {}).get(score, n), n)
    return out


def planted_hits(result: PeerResult, planted: list) -> dict:
    """The fewest planted features among each score's top-(planted) over a peer's runs (synthetic set)."""
    hits = {}
    for run in result.ok_runs():
        for score, top in run.get("tops", {}).items():
            n = len(set(top[:len(planted)]) & set(planted))
            hits[score] = min(hits.get(score, n), n)
    return hits


# ----- output ------------------------------------------------------------------------------------------------
def format_set_table(summary: dict, k: int, planted: list) -> str:
    """One set's table: runs, median wall time (range), ratio to spark_fr, algorithm seconds, peak RSS, the
    top-k overlap with CLUS (``G``enie3, ``S``ymbolic) and, on the synthetic set, the planted features found.

    Parameters
    ----------
    summary : dict
        ``{peer: summary}`` with ``overlap_with_clus`` and ``planted_by_score`` where known.
    k : int
    planted : list of str
        Empty for the real sets.

    Returns
    -------
    str
    """
    p = len(planted)
    head = (f"{'peer':<19}{'runs':>5}{'median wall s':>15}{'(min-max)':>17}{'vs spark_fr':>13}{'algo s':>9}"
            f"{'peak RSS GB':>13}{f'top-{k} overlap w/ clus':>25}" + (f"{f'planted in top-{p}':>19}" if p else ""))
    lines = [head, "-" * len(head)]
    for name, s in summary.items():
        if not s.get("runs_ok"):
            lines.append(f"{name:<19}{0:>5}  (every run failed)")
            continue
        rng = f"({s['min_wall_s']:.1f}-{s['max_wall_s']:.1f})"
        ratio = f"{s['ratio_to_spark_fr']:.2f}" if "ratio_to_spark_fr" in s else "n/a"
        algo = f"{s['median_algo_s']:.1f}" if s.get("median_algo_s") is not None else "-"
        over = " ".join(f"{score[0].upper()}{n}/{k}" for score, n in s.get("overlap_with_clus", {}).items()) or "-"
        line = (f"{name:<19}{s['runs_ok']:>5}{s['median_wall_s']:>15.1f}{rng:>17}{ratio:>13}{algo:>9}"
                f"{s['median_peak_rss_mb'] / 1024:>13.2f}{over:>25}")
        if p:
            line += f"{' '.join(f'{sc[0].upper()}{n}/{p}' for sc, n in s.get('planted_by_score', {}).items()):>19}"
        lines.append(line)
    return "\n".join(lines)


def summary_rows(sets: dict) -> list:
    """One row per set: spark_fr against CLUS (``clus``, else ``clus_train_errors``).

    Parameters
    ----------
    sets : dict
        ``{set name: report of run_set}``.

    Returns
    -------
    list of dict
        ``set``, ``shape``, ``spark_fr_wall_s``, ``clus_wall_s``, ``wall_clus_over_spark_fr``,
        ``spark_fr_peak_gb``, ``clus_peak_gb``, ``peak_clus_over_spark_fr``, ``genie3_overlap``,
        ``symbolic_overlap``, ``load_before``, ``load_after``.
    """
    rows = []
    for name, rep in sets.items():
        s = rep["summary"]
        ours = s.get("spark_fr", {})
        clus_name = next((n for n in CLUS_PEERS if s.get(n, {}).get("runs_ok")), None)
        theirs = s.get(clus_name, {}) if clus_name else {}
        over = rep["overlap"].get("spark_fr", {})

        def get(d, key, scale=1.0):
            return round(d[key] / scale, 3) if d.get(key) is not None else None

        ratio = [r for r in rep["ratios"] if r["peer"] == clus_name and r["reference"] == "spark_fr"]
        rows.append({"set": name, "shape": rep["data"]["shape"], "clus_peer": clus_name,
                     "spark_fr_wall_s": get(ours, "median_wall_s"), "clus_wall_s": get(theirs, "median_wall_s"),
                     "wall_clus_over_spark_fr": ratio[0]["wall"] if ratio else None,
                     "spark_fr_peak_gb": get(ours, "median_peak_rss_mb", 1024),
                     "clus_peak_gb": get(theirs, "median_peak_rss_mb", 1024),
                     "peak_clus_over_spark_fr": ratio[0]["peak_rss"] if ratio else None,
                     "genie3_overlap": over.get("genie3"), "symbolic_overlap": over.get("symbolic"),
                     "load_before": rep["environment"]["before"]["load_avg_1_5_15"],
                     "load_after": rep["environment"]["after"]["load_avg_1_5_15"]})
    return rows


def format_summary(rows: list, k: int) -> str:
    """The plain-text table of :func:`summary_rows`."""
    def f(v, fmt):
        return format(v, fmt) if v is not None else "-"

    head = (f"{'set':<15}{'rows x features x labels':>27}{'spark_fr s':>12}{'clus s':>9}{'clus/sfr':>10}"
            f"{'sfr GB':>8}{'clus GB':>9}{'clus/sfr':>10}{f'G top-{k}':>10}{f'S top-{k}':>10}"
            "   load 1/5/15 before -> after")
    lines = [head, "-" * len(head)]
    for r in rows:
        load = " -> ".join("/".join(f"{x:.1f}" for x in r[key]) for key in ("load_before", "load_after"))
        lines.append(f"{r['set']:<15}{r['shape']:>27}{f(r['spark_fr_wall_s'], '.1f'):>12}"
                     f"{f(r['clus_wall_s'], '.1f'):>9}"
                     f"{f(r['wall_clus_over_spark_fr'], '.2f'):>10}{f(r['spark_fr_peak_gb'], '.2f'):>8}"
                     f"{f(r['clus_peak_gb'], '.2f'):>9}{f(r['peak_clus_over_spark_fr'], '.2f'):>10}"
                     f"{f(r['genie3_overlap'], 'd'):>10}{f(r['symbolic_overlap'], 'd'):>10}   {load}")
    return "\n".join(lines)


# ----- the suite ---------------------------------------------------------------------------------------------
def data_set(name: str, args, workdir: Path) -> tuple:
    """The ARFF file of a set, its header facts and (synthetic set) its side-car.

    Parameters
    ----------
    name : str
        A key of :data:`SETS`.
    args : argparse.Namespace
    workdir : Path

    Returns
    -------
    tuple of (Path, dict, dict or None)
        The file, :func:`hmlc_data.read_hmlc_header` without the feature names (plus ``n_features`` and
        ``shape``), and the synthetic set's side-car (None for the real sets).
    """
    truth = None
    if SETS[name] is None:
        arff, truth = make_hmlc(workdir, args.rows, args.features, args.targets, args.hmlc_planted)
        rows = truth["n"]
    else:
        arff = DATASETS / SETS[name]
        if not arff.exists():
            raise FileNotFoundError(f"{arff} not found")
        rows = None
    head = read_hmlc_header(arff)
    facts = {"arff": str(arff), "target": head["target"], "kind": head["kind"], "labels": head["labels"],
             "n_features": len(head.pop("features"))}
    if rows is None:
        with open(arff, encoding="utf-8") as fh:
            data = False
            rows = 0
            for line in fh:
                if data:
                    rows += bool(line.strip()) and not line.startswith("%")
                elif line.strip().lower() == "@data":
                    data = True
    facts["rows"] = rows
    facts["shape"] = f"{rows} x {facts['n_features']} x {facts['labels']} {head['kind']}"
    return arff, facts, truth


def run_set(name: str, names: list, args, workdir: Path) -> dict:
    """Run the peers on one set and summarise it.

    Parameters
    ----------
    name : str
    names : list of str
        The peers that can run here.
    args : argparse.Namespace
    workdir : Path

    Returns
    -------
    dict
        ``data``, ``environment`` (before, after), ``summary``, ``overlap``, ``ratios``, ``runs``.
    """
    t0 = time.perf_counter()
    arff, facts, truth = data_set(name, args, workdir)
    planted = truth["relevant"] if truth else []
    if truth:
        facts.update(planted=planted, positives_mean=truth["positives_mean"], generator=truth["generator"])
        written = f"written in {truth['write_s']:.1f} s" if "write_s" in truth else "reused"
        print(f"\n== {name}: {arff} ({facts['shape']}, about {truth['positives_mean']:.0f} positive labels per row, "
              f"planted {','.join(planted)}; {written}, ready in {time.perf_counter() - t0:.1f} s)")
    else:
        print(f"\n== {name}: {arff} ({facts['shape']})")
    k = args.hmlc_top
    env_before = environment()
    print(machine_line(env_before, f"{args.repeats} rounds of {', '.join(names)} with {args.trees} trees"))
    peers = make_peers(names, arff, facts["target"], args, max(k, len(planted)))
    results = alternate(peers, args.repeats, workdir / "hmlc" / name, len(planted) or k, args.timeout)
    summary = summarise(results, planted, reference="spark_fr", medians=("algo_s",))
    over = overlaps(results, k)
    for peer, s in summary.items():
        if not planted:
            s.pop("top_planted_every_run", None)
            s.pop("planted_in_top_min", None)
        else:
            s["planted_by_score"] = planted_hits(results[peer], planted)
        if peer in over:
            s["overlap_with_clus"] = over[peer]
    ratios = pair_ratios(summary, [(c, "spark_fr") for c in CLUS_PEERS]
                         + [(p, "spark_fr") for p in SPARK_FR_PEERS[1:]])
    print()
    print(format_set_table(summary, k, planted))
    if ratios:
        print(format_pair_ratios(ratios))
    tops = {n: r.ok_runs()[0]["tops"]["genie3"][:k] for n, r in results.items() if r.ok_runs()}
    for n, top in tops.items():
        print(f"  {n} Genie3 top-{k}: {', '.join(top)}")
    env_after = environment()
    print(f"load average after: {env_after['load_avg_1_5_15']}")
    return {"data": facts, "environment": {"before": env_before, "after": env_after}, "summary": summary,
            "overlap": over, "ratios": ratios, "runs": {n: r.runs for n, r in results.items()}}


def run(args) -> int:
    """Run the suite: every chosen set in turn, the tables, the summary and ``--json``.

    Parameters
    ----------
    args : argparse.Namespace
        From ``jobs/benchmark.py``.

    Returns
    -------
    int
        0, or 1 if some peer failed in every round of some set (or none can run here).
    """
    workdir = Path(args.workdir).resolve()
    names, notes = check_available(args.peers)
    if not announce(names, notes):
        return 1
    env_before = environment()
    sets = {name: run_set(name, names, args, workdir) for name in args.hmlc_sets}
    rows = summary_rows(sets)
    env_after = environment()
    print(f"\nspark_fr vs CLUS, {args.trees} trees, median of {args.repeats} round(s); ratios clus / spark_fr "
          f"(> 1: spark_fr is faster / smaller); top-{args.hmlc_top} overlap of the Genie3 (G) and Symbolic (S) "
          f"rankings")
    print(format_summary(rows, args.hmlc_top))
    print(f"machine: {env_before['cpus']} cpus; load average {env_before['load_avg_1_5_15']} before, "
          f"{env_after['load_avg_1_5_15']} after")
    if args.json:
        write_json(args.json, {"suite": "hmlc", "config": dict(vars(args)),
                               "environment": {"before": env_before, "after": env_after}, "skipped": notes,
                               "table": rows, "sets": sets})
    return 1 if any(not s.get("runs_ok") for rep in sets.values() for s in rep["summary"].values()) else 0
