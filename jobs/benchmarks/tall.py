"""Tall suite (``--suite tall``): spark_fr on a tall multi-target table against scikit-learn, XGBoost, LightGBM and
Spark MLlib.

What is measured
----------------
A seeded synthetic MTR table (``tall_data.py``: ``--rows`` (1,000,000) x ``--features`` (50) float32 features
uniform on [-1, 1], ``--targets`` (3) targets that are weighted sums of the same ``--tall-planted`` (5)
features plus noise) is written once into ``--workdir`` as one Parquet file, row group by row group (10^7
rows need about 200 MB while they are written). Each peer then ranks its features as a separate command:

``spark_fr``
    ``python jobs/rank.py --input tall.parquet --targets t1,..,tT --trees N --scores genie3,symbolic,rf``:
    all three scores, fully grown trees (``--min-samples-leaf`` 2, sqrt features per node), mode ``auto``
    (broadcast up to 1024 MB of encoded data, partitioned above: 10^7 rows x 50 features are partitioned).
``spark_fr_d5``, ``spark_fr_d12``, any ``spark_fr_d<D>``
    The same with ``--max-depth D`` (5: MLlib's depth; 12: the depth XGBoost is compared at).
``spark_fr_partitioned``
    The same as ``spark_fr`` with ``--ensemble-mode partitioned``: rows shuffled to their tree groups. Its
    ranking is bit-identical to broadcast mode's; only time and memory differ. (``--max-broadcast-mb 256``
    alone would not do it at 10^6 rows: the encoded data with the RF score's copy is about 180 MB.)
``spark_fr_connect``, ``spark_fr_connect_partitioned`` (not run unless named in ``--peers``)
    ``spark_fr`` and ``spark_fr_partitioned`` under a Spark Connect session: the same command with
    ``SPARK_REMOTE=local[*]`` (pyspark's local Connect server in the job's process; DataFrame APIs only, see
    ``spark_fr/runtime/engine.py``). Same ranking bit for bit; the ratios to the classic runs are the cost of
    Connect.
``sklearn``
    ``jobs/peers/sklearn_forest.py``: the Parquet file read with pyarrow, ``RandomForestRegressor(
    n_estimators=N, max_features="sqrt", min_samples_leaf=2, n_jobs=2, random_state=1)`` on all targets at
    once (multi-output trees); impurity importance. Skipped, with a note, when the fitted forest would not
    fit in memory (fully grown trees hold about 0.55 nodes per training row, ``64 + 8 T`` bytes each: about
    5 GB at 10^6 rows and 100 trees, 50 GB at 10^7); ``--no-memory-check`` runs it anyway.
``xgboost``, ``xgboost_d12``, any ``xgboost_d<D>``
    ``jobs/peers/xgboost_forest.py``: XGBoost's histogram random forest, one boosting round of N parallel
    multi-output trees (``multi_strategy="multi_output_tree"``, all targets in every tree, as spark_fr and
    scikit-learn), sqrt features per node, ``subsample`` 0.632 (the distinct rows of a bootstrap), at least 2
    rows per leaf, ``nthread=2``; total-gain importance. ``xgboost`` grows fully (``max_depth=0``, no
    limit), ``xgboost_d<D>`` to depth D. Deep trees are where XGBoost's time and memory go: a run past ``--max-memory-gb`` is killed and reported as out of
    memory, with the time and memory it had reached (``xgboost_d20 / spark_fr_d20: wall > 1.40x (xgboost_d20
    did not finish: out of memory ...; spark_fr_d20 68.2 s, 1.10 GB)``).
``lightgbm``, ``lightgbm_d12``, any ``lightgbm_d<D>``
    ``jobs/peers/lightgbm_forest.py``: LightGBM's ``boosting="rf"``, the same sampling, ``num_leaves`` 2^D
    (131072, LightGBM's largest, at full depth); it has no multi-output trees, so one forest per target,
    timed together, the gain importances averaged over the targets.
``mllib``
    ``jobs/peers/mllib_forest.py``: Spark MLlib ``RandomForestRegressor`` on ``--tall-mllib-target`` (t1:
    MLlib's trees take one label), ``maxDepth=5``, ``numTrees=N``, ``featureSubsetStrategy="sqrt"``,
    ``minInstancesPerNode=2``, from the same Parquet file through ``VectorAssembler``, in a local session
    set up as spark_fr's; its ``featureImportances`` order. Every target depends on every planted
    feature, so its top-5 is compared with the same planted set.

``--tall-max-samples`` (a count or a fraction of the rows) turns on subbagging for every peer: spark_fr's
``--max-samples``, scikit-learn's ``max_samples``, MLlib's ``subsamplingRate`` (as a fraction). For each
run: wall time of the whole command, peak RSS of its process tree (driver, executors, Python workers),
spark_fr's ensemble mode and timings, and the top-k (k = planted) of every score against the planted
features. The table gives medians over ``--repeats`` rounds (1), the ratio to ``spark_fr``, and below it
the ratios of chosen pairs (scikit-learn, XGBoost and LightGBM / spark_fr at the same depth, MLlib / spark_fr
at depth 5, partitioned / broadcast). The column ``s / tree`` is the forest's time over its trees: spark_fr's
trees phase (``run.json``), the peers' fit (the libraries time no single tree). Reported, never asserted.
Examples::

    python jobs/benchmark.py --suite tall --json out/tall.json                       # 10^6 x 50 x 3, 100 trees
    python jobs/benchmark.py --suite tall --rows 10000000 --tall-max-samples 0.1 --json out/tall_1e7.json
    python jobs/benchmark.py --suite tall --rows 100000 --trees 20 --peers spark_fr,mllib
    python jobs/benchmark.py --suite tall --trees 20 --peers spark_fr_d12,xgboost_d12,lightgbm_d12,spark_fr_d20,xgboost_d20
"""
from __future__ import annotations

from pathlib import Path

from .measure import environment, machine_line, total_memory_gb
from .options import comma_list, fill_defaults, parse_peers
from .peers import (FOREST_SCRIPTS, Peer, announce, check_available, depth_peer, json_top, rank_command, script_command,
                    spark_fr_reader)
from .rounds import add_per_tree, exit_code, planted_by_score, run_rounds, summarise
from .tables import format_pair_ratios, pair_ratios, peer_table, per_tree_column, write_json
from .tall_data import make_tall

SUMMARY = ("tall MTR table (Parquet): spark_fr vs scikit-learn, XGBoost, LightGBM and Spark MLlib, broadcast vs "
           "partitioned")
PEERS = ("spark_fr", "spark_fr_d5", "sklearn", "mllib", "spark_fr_partitioned", "xgboost", "lightgbm", "spark_fr_d12",
         "xgboost_d12", "lightgbm_d12", "spark_fr_connect", "spark_fr_connect_partitioned")
#: the peers run when --peers is not given (any <program>_d<D> of peers.DEPTH_PEER may be named too)
DEFAULT_PEERS = PEERS[:10]
SCORES = ("genie3", "symbolic", "rf")
PAIRS = (("sklearn", "spark_fr"), ("xgboost", "spark_fr"), ("lightgbm", "spark_fr"), ("mllib", "spark_fr_d5"),
         ("spark_fr_partitioned", "spark_fr"), ("spark_fr_d5", "spark_fr"), ("spark_fr_connect", "spark_fr"),
         ("spark_fr_connect_partitioned", "spark_fr_partitioned"))
#: bytes per node of a fitted scikit-learn regression tree: the node record, plus 8 per output
SKLEARN_NODE_BYTES, SKLEARN_NODES_PER_ROW = 64, 0.55


def add_arguments(parser) -> None:
    """The ``tall suite`` option group.

    Parameters
    ----------
    parser : argparse.ArgumentParser
    """
    g = parser.add_argument_group("tall suite (--suite tall; defaults --rows 1000000 --features 50 --targets 3 "
                                  "--trees 100 --repeats 1, peers " + ",".join(DEFAULT_PEERS) + "; also "
                                  + ",".join(PEERS[len(DEFAULT_PEERS):]) + ")")
    g.add_argument("--tall-planted", type=int, default=5, help="planted relevant features (default 5)")
    g.add_argument("--tall-max-samples", help="subbagging for every peer: rows per tree, a count or a fraction")
    g.add_argument("--tall-mllib-target", default="t1", help="MLlib's single label column (default t1)")
    g.add_argument("--no-memory-check", dest="memory_check", action="store_false",
                   help="run scikit-learn even when its forest is estimated not to fit in memory")


def _count_or_fraction(text: str):
    value = float(text) if any(c in text for c in ".eE") else int(text)
    if value <= 0 or (isinstance(value, float) and value > 1):
        raise ValueError(text)
    return value


def check_arguments(args, error) -> None:
    """Fill in the suite's defaults, parse ``--peers`` and ``--tall-max-samples``, check the shape.

    Parameters
    ----------
    args : argparse.Namespace
        Changed in place.
    error : callable
        ``error(message)`` exits with a usage error.
    """
    fill_defaults(args, rows=1_000_000, features=50, targets=3, trees=100, repeats=1,
                  max_memory_gb=round(0.75 * total_memory_gb(), 1))
    at_depth = tuple(n for n in comma_list(args.peers or "") if depth_peer(n))
    parse_peers(args, PEERS + at_depth, ",".join(DEFAULT_PEERS), error)
    if args.max_memory_gb <= 0:
        error("--max-memory-gb must be positive")
    if min(args.rows, args.targets, args.trees, args.repeats, args.tall_planted) < 1:
        error("--rows, --targets, --trees, --repeats and --tall-planted must be positive")
    if args.tall_planted > args.features:
        error(f"--tall-planted ({args.tall_planted}) must be at most --features ({args.features})")
    if args.tall_mllib_target not in {f"t{j + 1}" for j in range(args.targets)}:
        error(f"--tall-mllib-target must be one of t1..t{args.targets}")
    if args.tall_max_samples is not None:
        try:
            args.tall_max_samples = _count_or_fraction(args.tall_max_samples)
        except ValueError:
            error("--tall-max-samples takes a positive count of rows or a fraction in (0, 1]")


def sklearn_forest_gb(rows: int, features: int, targets: int, trees: int, max_samples=None) -> float:
    """Estimated memory (GB) of scikit-learn fitting fully grown trees: the data plus the fitted forest.

    Parameters
    ----------
    rows, features, targets, trees : int
    max_samples : int, float or None
        Rows per tree (a fraction of ``rows`` if a float).

    Returns
    -------
    float
        ``rows * (4 features + 8 targets) + trees * 0.55 * rows per tree * (64 + 8 targets)`` bytes, in GB
        (0.55 nodes per row and 64-byte nodes measured on this data with min_samples_leaf=2).
    """
    per_tree = rows if max_samples is None else (max_samples * rows if isinstance(max_samples, float) else max_samples)
    forest = trees * SKLEARN_NODES_PER_ROW * min(per_tree, rows) * (SKLEARN_NODE_BYTES + 8 * targets)
    return (rows * (4 * features + 8 * targets) + forest) / 2 ** 30


def available_gb() -> float:
    """``MemAvailable`` of ``/proc/meminfo`` in GB (inf where it cannot be read)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 2 ** 20
    except OSError:
        pass
    return float("inf")


def make_peers(names: list, data: Path, truth: dict, args) -> list:
    """Build the suite's peers.

    Parameters
    ----------
    names : list of str
        Peer names from :data:`PEERS` or ``<program>_d<D>`` (:func:`peers.depth_peer`), in the order they run.
    data : Path
        The Parquet table.
    truth : dict
        Its side-car (``p``, ``target_names``, ``relevant``).
    args : argparse.Namespace
        ``trees``, ``tall_max_samples``, ``tall_mllib_target``.

    Returns
    -------
    list of peers.Peer
    """
    targets, k = truth["target_names"], len(truth["relevant"])
    trees, m = str(args.trees), args.tall_max_samples
    sub = ("--max-samples", str(m)) if m is not None else ()
    spark_fr = ("--trees", trees, "--scores", ",".join(SCORES), *sub)
    reader = spark_fr_reader(SCORES, k)
    shape = ("--features", str(truth["p"]), "--targets", str(len(targets)), "--trees", trees, "--seed", "1")
    rate = None if m is None else (m if isinstance(m, float) else min(1.0, m / truth["n"]))
    leaf = ("--min-samples-leaf", "2")

    def forest(name, program, *depth):
        if program == "spark_fr":
            return Peer(name, rank_command(data, ",".join(targets), *spark_fr, *depth), reader)
        return Peer(name, script_command(FOREST_SCRIPTS[program], data, *shape, *leaf, *depth, *sub), json_top)

    makers = {
        "spark_fr": lambda: forest("spark_fr", "spark_fr"),
        "xgboost": lambda: forest("xgboost", "xgboost"),
        "lightgbm": lambda: forest("lightgbm", "lightgbm"),
        "spark_fr_partitioned": lambda: Peer("spark_fr_partitioned", rank_command(
            data, ",".join(targets), *spark_fr, "--ensemble-mode", "partitioned"), reader),
        "spark_fr_connect": lambda: Peer("spark_fr_connect", under_connect(rank_command(
            data, ",".join(targets), *spark_fr)), reader),
        "spark_fr_connect_partitioned": lambda: Peer("spark_fr_connect_partitioned", under_connect(rank_command(
            data, ",".join(targets), *spark_fr, "--ensemble-mode", "partitioned")), reader),
        "sklearn": lambda: forest("sklearn", "sklearn"),
        "mllib": lambda: Peer("mllib", script_command("mllib_forest.py", data, *shape, "--max-depth", "5",
                                                      "--target", args.tall_mllib_target,
                                                      *(("--subsampling-rate", str(rate)) if rate else ())), json_top),
    }

    def make(name):
        if name in makers:
            return makers[name]()
        program, depth = depth_peer(name)
        return forest(name, program, "--max-depth", str(depth))

    return [make(n) for n in names]


def pairs(names: list) -> list:
    """The ratios the suite prints: :data:`PAIRS`, then every XGBoost and LightGBM forest at a depth over spark_fr's
    at the same depth (``xgboost_d12 / spark_fr_d12``).

    Parameters
    ----------
    names : list of str
        The peers run.

    Returns
    -------
    list of tuple of (str, str)
    """
    at_depth = [(n, f"spark_fr_d{depth_peer(n)[1]}") for n in names
                if depth_peer(n) and depth_peer(n)[0] != "spark_fr"]
    return list(PAIRS) + at_depth


def under_connect(command):
    """A command line run with ``SPARK_REMOTE=local[*]``: jobs/rank.py then ranks under a Spark Connect session
    (pyspark's local Connect server)."""
    def connect(run_dir):
        return ["env", "SPARK_REMOTE=local[*]", *command(run_dir)]

    return connect


def format_tall_table(summary: dict, k: int) -> str:
    """The suite's table: :func:`tables.peer_table` with the ratio to spark_fr, the seconds per tree, the ensemble
    mode and the planted features found by every score (``G``enie3, ``S``ymbolic, ``R``F, ``I``mpurity).

    Parameters
    ----------
    summary : dict
        With ``planted_by_score`` and ``ensemble_mode`` per peer.
    k : int

    Returns
    -------
    str
    """
    def ratio(s):
        return f"{s['ratio_to_spark_fr']:.2f}" if "ratio_to_spark_fr" in s else "n/a"

    def hits(s):
        return " ".join(f"{score[0].upper()}{n}" for score, n in s.get("planted_by_score", {}).items())

    return peer_table(summary, k, 22, [("ratio vs spark_fr", 19, ratio), ("s / tree", 10, per_tree_column),
                                       ("mode", 13, lambda s: s.get("ensemble_mode") or "-"),
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
        0, or 1 if some peer failed in every round or a spark_fr peer never finished (or none can run here); a
        peer that did not finish (out of memory, timeout) is a line of the table, not a failure.
    """
    workdir = Path(args.workdir).resolve()
    names, notes = check_available(args.peers)
    need = sklearn_forest_gb(args.rows, args.features, args.targets, args.trees, args.tall_max_samples)
    if "sklearn" in names and args.memory_check and need > 0.7 * available_gb():
        names.remove("sklearn")
        notes.append(f"sklearn skipped: its data and {args.trees} fully grown trees need about {need:.0f} GB, "
                     f"{available_gb():.0f} GB available (--tall-max-samples, or --no-memory-check to try)")
    if not announce(names, notes):
        return 1
    data, truth = make_tall(workdir, args.rows, args.features, args.targets, args.tall_planted)
    planted = truth["relevant"]
    written = f"written in {truth['write_s']:.1f} s" if "write_s" in truth else "reused"
    print(f"data: {data} ({args.rows} rows x {args.features} features x {args.targets} targets, planted "
          f"{','.join(planted)}; {written})")
    env_before = environment()
    print(machine_line(env_before, f"{args.repeats} rounds of {', '.join(names)} with {args.trees} trees"))
    results = run_rounds(make_peers(names, data, truth, args), args.repeats, workdir / "tall", planted, args.timeout,
                         max_gb=args.max_memory_gb)
    add_per_tree(results, args.trees)
    summary = summarise(results, planted, reference="spark_fr", medians=("per_tree_s",))
    for name, res in results.items():
        summary[name]["planted_by_score"] = planted_by_score(res, planted)
        modes = sorted({r["ensemble_mode"] for r in res.ok_runs() if r.get("ensemble_mode")})
        summary[name]["ensemble_mode"] = ",".join(modes) or None
    ratios = pair_ratios(summary, pairs(names))
    print()
    print(format_tall_table(summary, len(planted)))
    print(format_pair_ratios(ratios))
    env_after = environment()
    print(f"load average after: {env_after['load_avg_1_5_15']}")
    if args.json:
        write_json(args.json, {"suite": "tall", "config": dict(vars(args)),
                               "data": {"path": str(data), "planted": planted, "truth": truth},
                               "environment": {"before": env_before, "after": env_after}, "skipped": notes,
                               "summary": summary, "ratios": ratios, "runs": {n: r.runs for n, r in results.items()}})
    return exit_code(summary)
