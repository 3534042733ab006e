"""Wide suite (``--suite wide``): spark_fr on a wide classification table (Parquet and ARFF) against CLUS,
scikit-learn, XGBoost and LightGBM.

What is measured
----------------
A seeded synthetic classification table (``wide_data.py``: ``--rows`` (2,000) x ``--features`` (20,000)
features uniform on [-1, 1], three classes decided by the sum of ``--wide-planted`` (10) features spread
over the columns, 5 % label noise) is written once into ``--workdir`` twice: as a plain Parquet table, one
float64 column per feature, and as a dense ARFF file with the same values (spark_fr's ARFF reader keeps
more than 1,000 features in one vector column). Each peer ranks the features with ``--trees`` (100)
random-forest trees (sqrt features per node, at least 2 rows per leaf), as a separate command:

``spark_fr``
    ``python jobs/rank.py --input wide.parquet --targets class --trees N --scores genie3,symbolic`` (the two
    scores CLUS computes; Genie3 gives the order).
``spark_fr_arff``
    The same on the ARFF file.
``spark_fr_dataframe``
    The same ranking of the table given as a Spark DataFrame made in Spark, as a notebook user calls it
    (``jobs/peers/spark_fr_dataframe.py``: a local session, the Parquet file read by Spark and filtered on a
    non-null class, ``spark_fr.rank(df, ...)``): its rows come through Spark's pipeline, where ``spark_fr``
    reads the file with pyarrow.
``spark_fr_patches``
    The same as ``spark_fr`` in wide mode: ``--max-features-per-tree 0.1`` (random patches: each tree uses
    a seeded 10 % of the features, its nodes draw sqrt(all features) candidates within them).
``clus``
    ``jobs/peers/clus_forest.py --task cls``: CLUS RForest through ``run_clus.py`` (ARFF), N trees,
    ``SelectRandomSubspaces = SQRT``, Genie3 + Symbolic, ``NumberOfThreads = 2``.
``sklearn``
    ``jobs/peers/sklearn_forest.py --classifier``: the Parquet table read with pyarrow,
    ``RandomForestClassifier(n_estimators=N, max_features="sqrt", min_samples_leaf=2, n_jobs=2)``, impurity
    (Gini) importance.
``xgboost``
    ``jobs/peers/xgboost_forest.py --classifier``: XGBoost's histogram random forest, one round of N parallel
    multi-output trees over the three classes (``multi:softprob``, ``multi_strategy="multi_output_tree"``),
    sqrt features per node, ``subsample`` 0.632, full depth (``max_depth=0``); total-gain importance.
``lightgbm``
    ``jobs/peers/lightgbm_forest.py --classifier``: LightGBM's ``boosting="rf"``, ``multiclass`` (one tree
    per class and round), the same sampling, ``num_leaves`` 131072; gain importance.

Per run: wall time of the whole command (start-up, reading, writing included), peak RSS of its process
tree, and the planted features among the top-k (k = planted) of every score. With 20,000 features and
sqrt(20,000) = 142 candidates per node, a node sees a planted feature only about once in fifteen times:
recovery is a count out of k, not a yes/no. The table has medians over ``--repeats`` rounds (1), the
ratio to ``spark_fr``, the seconds per tree (``s / tree``: spark_fr's trees phase, the peers' fit, over the
trees), and below it the ratios of chosen pairs and, for every spark_fr peer, the seconds of its statistics and
encoding passes and their share of its run (``statistics_s + encoding_s`` over ``total_s`` of its ``run.json``,
medians over the rounds); a run past ``--max-memory-gb`` is a line saying so. Reported,
never asserted. Examples::

    python jobs/benchmark.py --suite wide --json out/wide.json                        # 2,000 x 20,000
    python jobs/benchmark.py --suite wide --features 5000 --peers spark_fr,sklearn
"""
from __future__ import annotations

import statistics
import sys
from pathlib import Path

from .measure import environment, machine_line, total_memory_gb
from .options import fill_defaults, parse_peers
from .paths import PEER_SCRIPTS
from .peers import (FOREST_SCRIPTS, Peer, announce, check_available, json_top, rank_command, script_command,
                    spark_fr_reader)
from .rounds import add_per_tree, exit_code, planted_by_score, run_rounds, summarise
from .tables import format_pair_ratios, pair_ratios, peer_table, per_tree_column, write_json
from .wide_data import make_wide

SUMMARY = "wide classification table (Parquet and ARFF): spark_fr vs CLUS, scikit-learn, XGBoost and LightGBM"
PEERS = ("spark_fr", "spark_fr_arff", "spark_fr_dataframe", "spark_fr_patches", "clus", "sklearn", "xgboost",
         "lightgbm")
SCORES = ("genie3", "symbolic")
PAIRS = (("spark_fr_arff", "spark_fr"), ("spark_fr_patches", "spark_fr"), ("clus", "spark_fr"), ("sklearn", "spark_fr"),
         ("clus", "spark_fr_arff"), ("clus", "spark_fr_patches"), ("xgboost", "spark_fr"), ("lightgbm", "spark_fr"),
         ("spark_fr_dataframe", "spark_fr"))


def add_arguments(parser) -> None:
    """The ``wide suite`` option group.

    Parameters
    ----------
    parser : argparse.ArgumentParser
    """
    g = parser.add_argument_group("wide suite (--suite wide; defaults --rows 2000 --features 20000 --trees 100 "
                                  "--repeats 1, peers " + ",".join(PEERS) + ")")
    g.add_argument("--wide-planted", type=int, default=10, help="planted relevant features (default 10)")


def check_arguments(args, error) -> None:
    """Fill in the suite's defaults, parse ``--peers``, check the shape.

    Parameters
    ----------
    args : argparse.Namespace
        Changed in place (``--targets`` is not used: one class column).
    error : callable
        ``error(message)`` exits with a usage error.
    """
    fill_defaults(args, rows=2000, features=20000, trees=100, repeats=1,
                  max_memory_gb=round(0.75 * total_memory_gb(), 1))
    parse_peers(args, PEERS, ",".join(PEERS), error)
    if min(args.rows, args.trees, args.repeats, args.wide_planted) < 1:
        error("--rows, --trees, --repeats and --wide-planted must be positive")
    if args.wide_planted > args.features:
        error(f"--wide-planted ({args.wide_planted}) must be at most --features ({args.features})")
    if args.max_memory_gb <= 0:
        error("--max-memory-gb must be positive")


def clus_reader(k: int):
    """A ``Peer.top`` for the CLUS forest: its Genie3 order, and the top-k of Genie3 and Symbolic.

    Parameters
    ----------
    k : int

    Returns
    -------
    callable
        ``run_dir -> (order, {"tops": {"genie3": ..., "symbolic": ...}, "clus_wall_s", "clus_peak_rss_kb"})``.
    """
    def top(run_dir: Path) -> tuple:
        order, extra = json_top(run_dir)
        symbolic = extra.pop("symbolic_order")
        return order, dict(extra, tops={"genie3": order[:k], "symbolic": symbolic[:k]})

    return top


def dataframe_command(parquet: Path, *options: str):
    """``jobs/peers/spark_fr_dataframe.py``: the Parquet table ranked as a Spark DataFrame, its ranking written
    into ``RUN_DIR/out`` as :func:`peers.rank_command`'s is (read by :func:`peers.spark_fr_reader`).

    Parameters
    ----------
    parquet : Path
    *options : str
        ``rank``'s options (``--trees N --scores ...``).

    Returns
    -------
    callable
        ``run_dir -> command line``; the seed is 1.
    """
    def command(run_dir: Path) -> list:
        return [sys.executable, str(PEER_SCRIPTS / "spark_fr_dataframe.py"), str(parquet), str(run_dir / "out"),
                "--targets", "class", *options, "--seed", "1"]

    return command


def pass_shares(results: dict) -> list:
    """One line per spark_fr peer: the median seconds of its statistics and encoding passes and their share of
    its run (``statistics_s + encoding_s`` over ``total_s``, from the runs' ``spark_fr_timings``).

    Parameters
    ----------
    results : dict
        ``{name: rounds.PeerResult}``.

    Returns
    -------
    list of str
    """
    lines = []
    for name, res in results.items():
        timings = [t for t in (r.get("spark_fr_timings") or {} for r in res.ok_runs()) if t.get("total_s")]
        if not timings:
            continue
        stats = statistics.median(t.get("statistics_s", 0.0) for t in timings)
        enc = statistics.median(t.get("encoding_s", 0.0) for t in timings)
        share = statistics.median((t.get("statistics_s", 0.0) + t.get("encoding_s", 0.0)) / t["total_s"]
                                  for t in timings)
        total = statistics.median(t["total_s"] for t in timings)
        lines.append(f"{name}: statistics {stats:.1f} s + encoding {enc:.1f} s = {share:.0%} of its run "
                     f"({total:.1f} s in spark_fr)")
    return lines


def make_peers(names: list, parquet: Path, arff: Path, truth: dict, trees: int) -> list:
    """Build the suite's peers.

    Parameters
    ----------
    names : list of str
        Peer names from :data:`PEERS`, in the order they run.
    parquet, arff : Path
        The two copies of the table.
    truth : dict
        The side-car (``p``, ``relevant``).
    trees : int

    Returns
    -------
    list of peers.Peer
    """
    k, n = len(truth["relevant"]), str(trees)
    options = ("--trees", n, "--scores", ",".join(SCORES))
    shape = ("--features", str(truth["p"]), "--targets", "1", "--trees", n, "--seed", "1")
    reader = spark_fr_reader(SCORES, k)
    makers = {
        "spark_fr": lambda: Peer("spark_fr", rank_command(parquet, "class", *options), reader),
        "spark_fr_arff": lambda: Peer("spark_fr_arff", rank_command(arff, "class", *options), reader),
        "spark_fr_dataframe": lambda: Peer("spark_fr_dataframe", dataframe_command(parquet, *options), reader),
        "spark_fr_patches": lambda: Peer("spark_fr_patches", rank_command(parquet, "class", *options,
                                                                          "--max-features-per-tree", "0.1"), reader),
        "clus": lambda: Peer("clus", script_command("clus_forest.py", arff, *shape, "--task", "cls"), clus_reader(k)),
        "sklearn": lambda: Peer("sklearn", script_command("sklearn_forest.py", parquet, *shape, "--classifier",
                                                          "--min-samples-leaf", "2"), json_top),
        **{name: (lambda name=name: Peer(name, script_command(FOREST_SCRIPTS[name], parquet, *shape, "--classifier",
                                                              "--min-samples-leaf", "2"), json_top))
           for name in ("xgboost", "lightgbm")},
    }
    return [makers[name]() for name in names]


def format_wide_table(summary: dict, k: int) -> str:
    """The suite's table: :func:`tables.peer_table` with the ratio to spark_fr, the seconds per tree and the
    planted features in the top-k of every score (``G``enie3, ``S``ymbolic, ``I``mpurity).

    Parameters
    ----------
    summary : dict
        With ``planted_by_score`` per peer.
    k : int

    Returns
    -------
    str
    """
    def ratio(s):
        return f"{s['ratio_to_spark_fr']:.2f}" if "ratio_to_spark_fr" in s else "n/a"

    def hits(s):
        return " ".join(f"{score[0].upper()}{n}/{k}" for score, n in s.get("planted_by_score", {}).items())

    return peer_table(summary, k, 19, [("ratio vs spark_fr", 19, ratio), ("s / tree", 10, per_tree_column),
                                       (f"planted in top-{k}", 18, hits)])


def run(args) -> int:
    """Run the suite: the data, alternating rounds, the table, the ratios and ``--json``.

    Parameters
    ----------
    args : argparse.Namespace
        From ``jobs/benchmark.py``.

    Returns
    -------
    int
        0, or 1 if some peer failed in every round or a spark_fr peer never finished (or none can run here).
    """
    workdir = Path(args.workdir).resolve()
    names, notes = check_available(args.peers)
    if not announce(names, notes):
        return 1
    parquet, arff, truth = make_wide(workdir, args.rows, args.features, args.wide_planted)
    planted = truth["relevant"]
    written = f"written in {truth['write_s']:.1f} s" if "write_s" in truth else "reused"
    print(f"data: {parquet} and {arff.name} ({args.rows} rows x {args.features} features, 3 classes, planted "
          f"{','.join(planted)}; {written})")
    env_before = environment()
    print(machine_line(env_before, f"{args.repeats} rounds of {', '.join(names)} with {args.trees} trees"))
    results = run_rounds(make_peers(names, parquet, arff, truth, args.trees), args.repeats, workdir / "wide",
                         planted, args.timeout, max_gb=args.max_memory_gb)
    add_per_tree(results, args.trees)
    summary = summarise(results, planted, reference="spark_fr", medians=("per_tree_s",))
    for name, res in results.items():
        summary[name]["planted_by_score"] = planted_by_score(res, planted)
    ratios = pair_ratios(summary, PAIRS)
    print()
    print(format_wide_table(summary, len(planted)))
    print(format_pair_ratios(ratios))
    shares = pass_shares(results)
    for line in shares:
        print(line)
    env_after = environment()
    print(f"load average after: {env_after['load_avg_1_5_15']}")
    if args.json:
        write_json(args.json, {"suite": "wide", "config": dict(vars(args)),
                               "data": {"parquet": str(parquet), "arff": str(arff), "planted": planted,
                                        "truth": truth},
                               "environment": {"before": env_before, "after": env_after}, "skipped": notes,
                               "summary": summary, "ratios": ratios, "pass_shares": shares, "runs": {n: r.runs for n, r in results.items()}})
    return exit_code(summary)
