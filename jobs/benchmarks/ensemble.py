"""Ensemble suite (``--suite ensemble``, the default): spark_fr against scikit-learn and CLUS on a
synthetic multi-target regression (MTR) set.

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
    ``jobs/peers/sklearn_forest.py``: read the ARFF with pandas, fit ``RandomForestRegressor(n_estimators=T,
    max_features='sqrt', n_jobs=2, random_state=1)`` on all targets at once (multi-output trees; other
    parameters at scikit-learn's defaults, e.g. ``min_samples_leaf=1``), read ``feature_importances_``.
``clus``
    ``jobs/peers/clus_forest.py``: CLUS (``pyclus`` jar) through ``run_clus.py``: RForest, T trees,
    SelectRandomSubspaces = SQRT, Genie3 + Symbolic, ``NumberOfThreads = 2``. Needs Java and pyclus;
    skipped with a message otherwise.

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

import time
from pathlib import Path

from .data import make_data
from .measure import environment, machine_line
from .options import fill_defaults, parse_peers
from .peers import Peer, announce, check_available, json_top, rank_command, script_command, spark_fr_top
from .rounds import run_rounds, summarise
from .tables import format_table, write_json

SUMMARY = "PCT ensembles vs scikit-learn and CLUS"
PEERS = ("spark_fr", "spark_fr_rf", "sklearn", "clus")


def add_arguments(parser) -> None:
    """The suite's options are the shared ones (``--rows``, ``--features``, ``--targets``, ``--trees``,
    ``--peers``, ...) of ``jobs/benchmark.py``; nothing to add."""


def check_arguments(args, error) -> None:
    """Fill in the suite's defaults, parse ``--peers`` into a list and check the data shape.

    Parameters
    ----------
    args : argparse.Namespace
        Changed in place (defaults: 20,000 rows x 200 features x 5 targets, 100 trees, 3 rounds, peers
        spark_fr,sklearn,clus; ``args.peers`` becomes a list of names).
    error : callable
        ``error(message)`` exits with a usage error.
    """
    fill_defaults(args, rows=20000, features=200, targets=5, trees=100, repeats=3)
    parse_peers(args, PEERS, "spark_fr,sklearn,clus", error)
    if args.targets < 1 or args.features < args.targets + 1:
        error("--features must be at least --targets + 1 (t_j uses x_j and x_{j+1})")


def _spark_fr_genie3(run_dir: Path) -> tuple:
    order, run = spark_fr_top(run_dir, "genie3")
    return order, {"spark_fr_timings": run.get("timings", {})}


def make_peers(names: list, arff: Path, truth: dict, trees: int) -> list:
    """Build the peers of the suite.

    Parameters
    ----------
    names : list of str
        Peer names from :data:`PEERS`, in the order they are run.
    arff : Path
    truth : dict
        The data set's side-car (``p``, ``target_names``).
    trees : int

    Returns
    -------
    list of peers.Peer
    """
    p, k = str(truth["p"]), str(len(truth["target_names"]))
    targets = ",".join(truth["target_names"])
    shape = ("--features", p, "--targets", k, "--trees", str(trees), "--seed", "1")
    makers = {
        "spark_fr": lambda: Peer("spark_fr", rank_command(arff, targets, "--trees", str(trees), "--scores",
                                                          "genie3,symbolic"), _spark_fr_genie3),
        "spark_fr_rf": lambda: Peer("spark_fr_rf", rank_command(arff, targets, "--trees", str(trees), "--scores",
                                                                "symbolic,genie3,rf"), _spark_fr_genie3),
        "sklearn": lambda: Peer("sklearn", script_command("sklearn_forest.py", arff, *shape), json_top),
        "clus": lambda: Peer("clus", script_command("clus_forest.py", arff, *shape), json_top),
    }
    return [makers[n]() for n in names]


def run(args) -> int:
    """Run the suite: the data, alternating rounds, the table and ``--json``.

    Parameters
    ----------
    args : argparse.Namespace
        From ``jobs/benchmark.py``.

    Returns
    -------
    int
        0, or 1 if some peer failed in every round (or none can run here).
    """
    workdir = Path(args.workdir).resolve()
    names, notes = check_available(args.peers)
    if not announce(names, notes):
        return 1
    t0 = time.perf_counter()
    arff, truth = make_data(workdir, args.rows, args.features, args.targets)
    planted = truth["relevant"]
    print(f"data: {arff} ({args.rows} rows x {args.features} features x {args.targets} targets, "
          f"planted {','.join(planted)}; ready in {time.perf_counter() - t0:.1f} s)")
    env_before = environment()
    print(machine_line(env_before, f"{args.repeats} rounds of {', '.join(names)} with {args.trees} trees"))
    peers = make_peers(names, arff, truth, args.trees)
    results = run_rounds(peers, args.repeats, workdir, planted, args.timeout)
    summary = summarise(results, planted, reference="spark_fr")
    print()
    print(format_table(summary, len(planted)))
    env_after = environment()
    print(f"load average after: {env_after['load_avg_1_5_15']}")
    if args.json:
        write_json(args.json, {"config": dict(vars(args)), "data": {"arff": str(arff), "planted": planted},
                               "environment": {"before": env_before, "after": env_after}, "skipped": notes,
                               "summary": summary, "runs": {n: r.runs for n, r in results.items()}})
    failed = [n for n, s in summary.items() if not s.get("runs_ok")]
    return 1 if failed else 0
