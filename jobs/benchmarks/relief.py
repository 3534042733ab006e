"""Relief suite (``--suite relief``): spark_fr Relief against CLUS and skrebate, and peak memory by rows.

Three parts (``--relief-parts clus,skrebate,memory``), each with its own data from ``make_synthetic.py``,
its commands alternating for ``--repeats`` rounds and measured as in the ensemble suite (wall time,
process-tree peak RSS, top-3 against the planted x1, x2, x3; a miss is reported, not an error):

``clus``
    Regression (``y = 4 x1 + 2 sin(3 x2) + x3 + noise``), ``--relief-rows`` (5,000) x ``--features`` (200),
    k = ``--relief-neighbours`` (10), m = ``--relief-iterations`` (1000 sampled instances). Peers:
    ``spark_fr`` = ``python jobs/rank.py --method relief --relief-neighbours k --relief-iterations m``, a
    fresh process with its own local Spark session; ``spark_fr_warm`` = ``jobs/peers/spark_fr_warm.py``,
    one Python process that starts Spark, calls ``spark_fr.rank(path, method="relief", ...)`` twice and
    reports the second call (what a notebook user waits for); ``clus`` = ``jobs/peers/clus_relief.py``,
    ``clus.jar -relief`` through ``run_clus.py`` with Neighbours = k, Iterations = m, NumberOfThreads = 2
    (only its neighbour search is threaded).
``skrebate``
    Classification (3 classes, 5 % label noise) at ``--relief-rows-skrebate`` (2,000 and 4,000) rows x 200
    features; every row is an instance: spark_fr ``--relief-iterations 1.0`` (cold and warm, as above)
    against ``jobs/peers/skrebate_relief.py``, skrebate ``ReliefF(n_neighbors=k, n_features_to_select=all,
    n_jobs=2)``, which builds the n x n distance matrix and uses every row (so only sizes it can hold are
    compared).
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

import json
from pathlib import Path

from .data import make_data
from .measure import environment, machine_line
from .options import fill_defaults
from .peers import Peer, check_available, json_top, rank_command, script_command, spark_fr_top
from .rounds import run_rounds, summarise
from .tables import format_memory_table, format_ratio, format_relief_table, memory_rows, relief_ratios, write_json

SUMMARY = "Relief vs CLUS and skrebate, and peak memory by rows"
RELIEF_PARTS = ("clus", "skrebate", "memory")
MODES = ("auto", "broadcast", "tall")


def add_arguments(parser) -> None:
    """The ``relief suite`` option group.

    Parameters
    ----------
    parser : argparse.ArgumentParser
    """
    rel = parser.add_argument_group("relief suite (--suite relief)")
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


def _comma_list(text: str) -> list:
    return [x.strip() for x in text.split(",") if x.strip()]


def check_arguments(args, error) -> None:
    """Parse the comma lists of the group in place and check them.

    Parameters
    ----------
    args : argparse.Namespace
        ``features`` (200) and ``repeats`` (3) get the suite's defaults; ``relief_parts``,
        ``relief_rows_skrebate``, ``relief_rows_memory`` and ``relief_memory_modes``
        become lists; ``relief_iterations`` stays the text given (checked here).
    error : callable
        ``error(message)`` exits with a usage error.
    """
    fill_defaults(args, features=200, repeats=3)
    args.relief_parts = _comma_list(args.relief_parts)
    bad = [x for x in args.relief_parts if x not in RELIEF_PARTS]
    if bad or not args.relief_parts:
        error(f"--relief-parts: unknown {','.join(bad) or '(empty)'}; choose from {', '.join(RELIEF_PARTS)}")
    try:
        args.relief_rows_skrebate = [int(x) for x in _comma_list(args.relief_rows_skrebate)]
        args.relief_rows_memory = [int(x) for x in _comma_list(args.relief_rows_memory)]
        m = _iterations(args.relief_iterations)
    except ValueError:
        error("--relief-rows-skrebate and --relief-rows-memory take comma lists of integers, "
              "--relief-iterations a count or a fraction")
    if m <= 0 or args.relief_neighbours < 1:
        error("--relief-iterations and --relief-neighbours must be positive")
    args.relief_memory_modes = _comma_list(args.relief_memory_modes)
    if any(x not in MODES for x in args.relief_memory_modes):
        error(f"--relief-memory-modes: choose from {', '.join(MODES)}")


def _iterations(text: str):
    """``--relief-iterations`` as the CLI reads it: an int count, or a float fraction."""
    return float(text) if any(c in str(text) for c in ".eE") else int(text)


def _spark_fr_relief(run_dir: Path) -> tuple:
    order, run = spark_fr_top(run_dir, "relief")
    timings = run.get("timings", {})
    return order, {"algo_s": timings.get("relief_s"), "call_s": timings.get("total_s"), "spark_fr_timings": timings,
                   "relief_mode": run.get("relief_mode")}


def relief_peer(kind: str, name: str, arff: Path, truth: dict, k: int, m: str, mode: str | None = None) -> Peer:
    """One peer of the Relief suite.

    Parameters
    ----------
    kind : str
        ``spark_fr`` (``jobs/rank.py --method relief``, a fresh process), ``spark_fr_warm``
        (``jobs/peers/spark_fr_warm.py``: one process, two ``spark_fr.rank`` calls, the second timed),
        ``clus`` (``jobs/peers/clus_relief.py``: ``clus.jar -relief`` through ``run_clus.py``, 2 threads) or
        ``skrebate`` (``jobs/peers/skrebate_relief.py``: ``ReliefF(n_neighbors=k, n_jobs=2)`` on all rows).
    name : str
        The peer's label (unique in its group).
    arff : Path
    truth : dict
        The data set's side-car (``p``, ``target_names``; the file itself is read by the CLUS peer).
    k : int
        Neighbours.
    m : str
        Iterations as given on the command line (``1000`` = a count, ``1.0`` = every row).
    mode : str, optional
        ``--relief-mode`` for spark_fr (default: auto).

    Returns
    -------
    peers.Peer
    """
    targets = ",".join(truth["target_names"])
    if kind == "spark_fr":
        extra = ("--relief-mode", mode) if mode else ()
        return Peer(name, rank_command(arff, targets, "--method", "relief", "--relief-neighbours", str(k),
                                       "--relief-iterations", str(m), *extra), _spark_fr_relief)
    if kind == "spark_fr_warm":
        params = {"relief_neighbours": k, "relief_iterations": _iterations(m), "seed": 1}
        if mode:
            params["relief_mode"] = mode
        return Peer(name, script_command("spark_fr_warm.py", arff, "--targets", targets, "--params",
                                         json.dumps(params)), json_top)
    if kind == "clus":
        return Peer(name, script_command("clus_relief.py", arff, "--truth", str(arff.with_suffix(".truth.json")),
                                         "--neighbours", str(k), "--iterations", str(m)), json_top)
    if kind == "skrebate":
        return Peer(name, script_command("skrebate_relief.py", arff, "--features", str(truth["p"]),
                                         "--neighbours", str(k)), json_top)
    raise ValueError(kind)


def relief_summary(results: dict, planted: list) -> dict:
    """Per-peer summaries with the medians of the algorithm time and of spark_fr's ``rank()`` time.

    Parameters
    ----------
    results : dict
        ``{name: rounds.PeerResult}``.
    planted : list of str

    Returns
    -------
    dict
        :func:`rounds.summarise` with ``median_algo_s`` (spark_fr's ``relief_s``, CLUS' induction time,
        skrebate's ``fit``) and ``median_call_s`` (``total_s`` of run.json for the command, the second call
        for the warm process) where the runs have them.
    """
    return summarise(results, planted, medians=("algo_s", "call_s"))


class _Suite:
    """The state of one Relief run: options, work folder, report, and the groups that failed."""

    def __init__(self, args):
        self.args = args
        self.workdir = Path(args.workdir).resolve()
        self.k, self.m, self.p = args.relief_neighbours, args.relief_iterations, args.features
        self.report, self.failed = {}, []
        self.available, notes = check_available(["clus", "skrebate"])
        for note in notes:
            print(note)

    def kinds(self, peer: str) -> list:
        """The peer kinds of a comparison: spark_fr, its warm process if asked for, ``peer`` if it can run."""
        return ["spark_fr"] + (["spark_fr_warm"] if self.args.relief_warm else []) + \
            ([peer] if peer in self.available else [])

    def group(self, label: str, peers: list, planted: list, repeats: int) -> tuple:
        """Run one group of peers in alternating rounds; return (results, summary)."""
        print(f"\n== {label}: {repeats} rounds of {', '.join(pe.name for pe in peers)}", flush=True)
        results = run_rounds(peers, repeats, self.workdir / "relief" / label, planted, self.args.timeout)
        summary = relief_summary(results, planted)
        self.failed.extend(n for n, s in summary.items() if not s.get("runs_ok"))
        return results, summary

    def print_group(self, summary: dict, planted: list, pairs: list) -> list:
        """Print a group's table and its ratios; ``pairs`` lists (peer, spark_fr, warm) names."""
        ratios = [relief_ratios(summary, peer, ref, warm if self.args.relief_warm else None)
                  for peer, ref, warm in pairs if peer in summary]
        print()
        print(format_relief_table(summary, len(planted)))
        for r in ratios:
            print(format_ratio(r))
        return ratios

    def part_clus(self) -> None:
        """spark_fr (cold and warm) against CLUS on the regression data."""
        args, k, m, p = self.args, self.k, self.m, self.p
        arff, truth = make_data(self.workdir, args.relief_rows, p, 1, task="reg")
        planted = truth["relevant"]
        print(f"data: {arff} ({args.relief_rows} rows x {p} features, regression, planted {','.join(planted)}); "
              f"k = {k}, m = {m}")
        peers = [relief_peer(kind, kind, arff, truth, k, m) for kind in self.kinds("clus")]
        results, summary = self.group("clus", peers, planted, args.repeats)
        ratios = self.print_group(summary, planted, [("clus", "spark_fr", "spark_fr_warm")])
        self.report["clus"] = {"data": {"arff": str(arff), "rows": args.relief_rows, "features": p,
                                        "task": "regression", "planted": planted}, "neighbours": k,
                               "iterations": m, "summary": summary, "ratios": ratios,
                               "runs": {n: r.runs for n, r in results.items()}}

    def part_skrebate(self) -> tuple:
        """spark_fr (cold and warm) against skrebate on classification data, every row an instance.

        Returns the summary and ``{peer: (program, mode, rows)}`` of skrebate's runs for the memory table.
        """
        args, k, p = self.args, self.k, self.p
        peers, planted, data, sizes = [], None, {}, {}
        for rows in args.relief_rows_skrebate:
            arff, truth = make_data(self.workdir, rows, p, 1, task="cls")
            planted = truth["relevant"]
            data[rows] = str(arff)
            peers += [relief_peer(kind, f"{kind}_{rows}", arff, truth, k, "1.0") for kind in self.kinds("skrebate")]
            if "skrebate" in self.available:
                sizes[f"skrebate_{rows}"] = ("skrebate", "n x n", rows)
        print(f"data: classification, {','.join(map(str, args.relief_rows_skrebate))} rows x {p} features, "
              f"planted {','.join(planted)}; k = {k}, every row an instance")
        results, summary = self.group("skrebate", peers, planted, args.repeats)
        ratios = self.print_group(summary, planted, [(f"skrebate_{n}", f"spark_fr_{n}", f"spark_fr_warm_{n}")
                                                     for n in args.relief_rows_skrebate])
        self.report["skrebate"] = {"data": {"arff": data, "features": p, "task": "classification",
                                            "planted": planted}, "neighbours": k, "iterations": 1.0,
                                   "summary": summary, "ratios": ratios,
                                   "runs": {n: r.runs for n, r in results.items()}}
        return summary, sizes

    def part_memory(self, skrebate_summary: dict, skrebate_sizes: dict) -> None:
        """spark_fr's peak memory by rows and mode, next to skrebate's."""
        args, k, m, p = self.args, self.k, self.m, self.p
        peers, planted = [], None
        for rows in args.relief_rows_memory:
            arff, truth = make_data(self.workdir, rows, p, 1, task="reg")
            planted = truth["relevant"]
            peers += [relief_peer("spark_fr", f"spark_fr_{mode}_{rows}", arff, truth, k, m, mode=mode)
                      for mode in args.relief_memory_modes]
        sizes = {f"spark_fr_{mode}_{rows}": ("spark_fr", mode, rows)
                 for mode in args.relief_memory_modes for rows in args.relief_rows_memory}
        results, summary = self.group("memory", peers, planted, args.relief_memory_repeats)
        table = memory_rows(summary, sizes) + memory_rows(skrebate_summary, skrebate_sizes)
        print()
        print(f"peak RSS of the process tree by rows (regression x {p} features, k = {k}, m = {m} for spark_fr; "
              f"skrebate: classification, every row; 'data MB' = rows x features x 8 bytes)")
        print(format_memory_table(table, p))
        self.report["memory"] = {"rows": args.relief_rows_memory, "modes": args.relief_memory_modes, "table": table,
                                 "summary": summary, "runs": {n: r.runs for n, r in results.items()}}


def run_relief_suite(args) -> tuple:
    """Run the requested parts of the Relief suite.

    Parameters
    ----------
    args : argparse.Namespace

    Returns
    -------
    tuple of (dict, int)
        The report (one entry per part) and the exit code (1 if a peer failed in every round).
    """
    suite = _Suite(args)
    if "clus" in args.relief_parts:
        suite.part_clus()
    skrebate = ({}, {})
    if "skrebate" in args.relief_parts:
        skrebate = suite.part_skrebate()
    if "memory" in args.relief_parts:
        suite.part_memory(*skrebate)
    return suite.report, (1 if suite.failed else 0)


def run(args) -> int:
    """Run the suite: the machine line, the parts, and ``--json``.

    Parameters
    ----------
    args : argparse.Namespace
        From ``jobs/benchmark.py``.

    Returns
    -------
    int
        0, or 1 if some peer failed in every round.
    """
    env_before = environment()
    print(machine_line(env_before, f"Relief suite ({', '.join(args.relief_parts)}), {args.repeats} rounds"))
    report, code = run_relief_suite(args)
    env_after = environment()
    print(f"load average after: {env_after['load_avg_1_5_15']}")
    if args.json:
        write_json(args.json, {"suite": "relief", "config": dict(vars(args)),
                               "environment": {"before": env_before, "after": env_after}, **report})
    return code
