"""ReliefE suite (``--suite reliefe``): spark_fr ReliefE against the authors' ``reliefe`` 0.18 and spark_fr ReliefF.

Two data sets (``--reliefe-sets madelon,wide``), each with its peers' commands alternating for ``--repeats``
(2) rounds, measured as in the other suites (wall time, process-tree peak RSS, load average):

``madelon``
    ``../shared/datasets/reliefe_mat/madelon.mat`` (2,000 x 500, two classes, dense values in a sparse
    matrix; no known ground truth in this file, so no planted column).
``wide``
    ``--rows`` (2,000) x ``--features`` (20,000), sparse: 2 % of the noise values non-zero (a bag-of-words
    or tf-idf matrix, the data ReliefE is made for), ``--reliefe-planted`` (10) dense features deciding three
    classes (``reliefe_data.py``), written once as a ``.mat`` file under ``--workdir``; the top-10 is checked
    against the planted features (reported, not an error).

Peers (``--peers``; every peer reads the same ``.mat`` file, k = ``--reliefe-neighbours`` (15), every row an
instance):

``spark_fr``
    ``python jobs/rank.py --method reliefe`` with its defaults (the input embedded by UMAP, TwoNN's dimension),
    a fresh process with its own local Spark session (JVM start-up, UMAP's numba compilation included);
``spark_fr_warm``
    ``jobs/peers/spark_fr_warm.py --method reliefe``: one process, two ``spark_fr.rank`` calls, the second
    reported (what a notebook user waits for);
``spark_fr_pca``
    as ``spark_fr`` with ``--reliefe-embedder pca`` (no numba compilation of UMAP);
``spark_fr_relief``
    spark_fr's ReliefF, ``--method relief --relief-neighbours 15 --relief-iterations 1.0`` (cold);
    ``spark_fr_relief_warm`` (not by default) the same in a warm process;
``reliefe``
    the authors' package, ``jobs/peers/reliefe_peer.py --embedding input``: ``ReliefE(k=15, num_iter=1.0,
    embedding_based_distances=True)``, its UMAP embedding of the input. Note: [R] 0.18 then runs its update
    loop over the *embedded* matrix indexed by the original feature numbers (spec methods-papers.md Sec. 5, C2),
    so its ranking is not the paper's (its top-k misses the planted features); it is timed as a user runs it;
``reliefe_none`` (not by default)
    the same with ``--embedding none`` ([R]'s constructor default: ReliefF with Manhattan distance); its
    update loop densifies a row per distance, slow on wide data.

[R] runs in its own virtual environment, ``--reliefe-python`` (default: ``$SPARK_FR_RELIEFE_PYTHON``, else
``/work/reliefe-venv/bin/python``); when it is absent, its peers are skipped with one line that says how to
make it. A run past ``--reliefe-timeout`` (900 s) is killed, reported as "did not finish" and not started
again in later rounds.

Each table has ``rank() s`` (spark_fr's ``total_s``, the second call for the warm processes) and ``algo s``
(spark_fr's ``reliefe_s`` / ``relief_s`` from ``run.json``: embedding, neighbours and updates after reading
and encoding; [R]'s ``fit``). Below it, the ratios (> 1: the second peer is faster) of the median wall time,
algorithm time and peak RSS: ``reliefe / spark_fr`` (and over the warm call), ``spark_fr_relief /
spark_fr`` (ReliefF over ReliefE: the paper claims an order of magnitude), ``reliefe_none / reliefe`` ([R]'s
ReliefF over its ReliefE) and ``spark_fr_pca / spark_fr``. They are reported, never asserted. Example::

    nice -n 10 python jobs/benchmark.py --suite reliefe --repeats 2 --json out/benchmark_reliefe.json
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from .measure import environment, machine_line
from .options import comma_list, fill_defaults, parse_peers
from .paths import DATASETS, PEER_SCRIPTS
from .peers import RESULT, Peer, json_top, rank_command, script_command, spark_fr_top
from .reliefe_data import make_reliefe_wide
from .rounds import run_rounds, summarise
from .tables import format_pair_ratios, format_relief_table, write_json

SUMMARY = "ReliefE vs the authors' reliefe 0.18 and spark_fr's ReliefF (madelon, a wide sparse set)"
SETS = ("madelon", "wide")
PEERS = ("spark_fr", "spark_fr_warm", "spark_fr_pca", "spark_fr_relief", "spark_fr_relief_warm", "reliefe",
         "reliefe_none")
DEFAULT_PEERS = "spark_fr,spark_fr_warm,spark_fr_pca,spark_fr_relief,reliefe"
R_PEERS = ("reliefe", "reliefe_none")
MADELON = DATASETS / "reliefe_mat" / "madelon.mat"
DEFAULT_R_PYTHON = "/work/reliefe-venv/bin/python"
MAKE_R_VENV = ("python -m venv V && V/bin/pip install --no-deps reliefe==0.18 && "
               "V/bin/pip install umap-learn==0.5.12 scipy scikit-learn numba")
#: (peer, reference) pairs whose ratios are printed when both ran
PAIRS = (("reliefe", "spark_fr"), ("reliefe", "spark_fr_warm"), ("spark_fr_relief", "spark_fr"),
         ("spark_fr_relief_warm", "spark_fr_warm"), ("reliefe_none", "reliefe"), ("reliefe_none", "spark_fr_relief"),
         ("spark_fr_pca", "spark_fr"))


def add_arguments(parser) -> None:
    """The ``reliefe suite`` option group.

    Parameters
    ----------
    parser : argparse.ArgumentParser
    """
    g = parser.add_argument_group("reliefe suite (--suite reliefe)")
    g.add_argument("--reliefe-sets", default=",".join(SETS), help="comma list of madelon, wide (default both)")
    g.add_argument("--reliefe-neighbours", type=int, default=15, help="k of every peer (default 15)")
    g.add_argument("--reliefe-planted", type=int, default=10, help="planted features of the wide set (default 10)")
    g.add_argument("--reliefe-python", default=None,
                   help="the Python of the reliefe 0.18 environment (default: $SPARK_FR_RELIEFE_PYTHON, else "
                        f"{DEFAULT_R_PYTHON})")
    g.add_argument("--reliefe-timeout", type=float, default=900,
                   help="seconds per run of this suite before it is killed and reported as not finished (900)")


def check_arguments(args, error) -> None:
    """Fill in the suite's defaults and parse its lists, in place.

    Parameters
    ----------
    args : argparse.Namespace
        ``rows`` (2000), ``features`` (20000), ``repeats`` (2) and ``peers`` get the suite's defaults;
        ``reliefe_sets`` becomes a list; ``reliefe_python`` the path chosen.
    error : callable
        ``error(message)`` exits with a usage error.
    """
    fill_defaults(args, rows=2000, features=20000, repeats=2)
    parse_peers(args, PEERS, DEFAULT_PEERS, error)
    args.reliefe_sets = comma_list(args.reliefe_sets)
    bad = [s for s in args.reliefe_sets if s not in SETS]
    if bad or not args.reliefe_sets:
        error(f"--reliefe-sets: unknown {','.join(bad) or '(empty)'}; choose from {', '.join(SETS)}")
    if args.reliefe_neighbours < 1 or args.rows < 10 or args.features < 2:
        error("--reliefe-neighbours must be positive, --rows at least 10, --features at least 2")
    if not 1 <= args.reliefe_planted <= args.features:
        error(f"--reliefe-planted must be between 1 and --features ({args.features})")
    if args.reliefe_timeout <= 0:
        error("--reliefe-timeout must be positive")
    if args.reliefe_python is None:
        args.reliefe_python = os.environ.get("SPARK_FR_RELIEFE_PYTHON") or DEFAULT_R_PYTHON


def r_python_note(python: str) -> str | None:
    """Why [R]'s peers cannot run (its Python is missing), with how to make it; None if it exists.

    Parameters
    ----------
    python : str

    Returns
    -------
    str or None
    """
    if Path(python).is_file() and os.access(python, os.X_OK):
        return None
    return (f"reliefe skipped: {python} not found (make it with `{MAKE_R_VENV}`, then pass "
            f"--reliefe-python V/bin/python or set SPARK_FR_RELIEFE_PYTHON)")


def _spark_fr_reader(method: str):
    """``Peer.top`` for ``jobs/rank.py``: the method's ranking, ``<method>_s`` and ``total_s`` of run.json."""
    def top(run_dir: Path) -> tuple:
        order, run = spark_fr_top(run_dir, method)
        timings = run.get("timings", {})
        facts = {"algo_s": timings.get(f"{method}_s"), "call_s": timings.get("total_s"), "spark_fr_timings": timings}
        if method == "reliefe":
            facts.update({k: run.get(k) for k in ("reliefe_embedder", "reliefe_dimension_used", "reliefe_mode",
                                                  "reliefe_sparsified", "reliefe_density")})
        return order, facts

    return top


def reliefe_peer(kind: str, mat: Path, k: int, python: str) -> Peer:
    """One peer of the ReliefE suite (see the module docstring for the kinds).

    Parameters
    ----------
    kind : str
        A name of ``PEERS``.
    mat : Path
        The ``.mat`` file (class column ``class``).
    k : int
    python : str
        [R]'s Python (for ``reliefe`` and ``reliefe_none``).

    Returns
    -------
    peers.Peer
    """
    if kind in ("spark_fr", "spark_fr_pca"):
        extra = ("--reliefe-embedder", "pca") if kind == "spark_fr_pca" else ()
        return Peer(kind, rank_command(mat, "class", "--method", "reliefe", "--reliefe-k", str(k), *extra),
                    _spark_fr_reader("reliefe"))
    if kind == "spark_fr_relief":
        return Peer(kind, rank_command(mat, "class", "--method", "relief", "--relief-neighbours", str(k),
                                       "--relief-iterations", "1.0"), _spark_fr_reader("relief"))
    if kind in ("spark_fr_warm", "spark_fr_relief_warm"):
        method, params = (("reliefe", {"reliefe_k": k, "seed": 1}) if kind == "spark_fr_warm" else
                          ("relief", {"relief_neighbours": k, "relief_iterations": 1.0, "seed": 1}))
        return Peer(kind, script_command("spark_fr_warm.py", mat, "--targets", "class", "--method", method,
                                         "--params", json.dumps(params)), json_top)
    if kind in R_PEERS:
        embedding = "input" if kind == "reliefe" else "none"

        def command(run_dir: Path) -> list:
            return [python, str(PEER_SCRIPTS / "reliefe_peer.py"), str(mat), "--neighbours", str(k),
                    "--embedding", embedding, str(run_dir / RESULT)]

        return Peer(kind, command, json_top)
    raise ValueError(kind)


def ratio_lines(summary: dict) -> list:
    """The ratios of :data:`PAIRS` that both ran: wall, algorithm and (warm) ``rank()`` call, peak RSS.

    Parameters
    ----------
    summary : dict
        ``{peer: summary}`` with ``median_algo_s`` and ``median_call_s`` where known.

    Returns
    -------
    list of dict
        ``peer``, ``reference``, ``wall``, ``algorithm``, ``call`` (the reference's ``rank()`` call: the
        peer's algorithm time over it for [R], its call over it for spark_fr), ``peak_rss``; > 1: the
        reference is faster (smaller); None where a value is missing.
    """
    def ratio(a, b):
        return round(a / b, 2) if a and b else None

    out = []
    for peer, ref in PAIRS:
        s, r = summary.get(peer, {}), summary.get(ref, {})
        if not (s.get("runs_ok") and r.get("runs_ok")):
            continue
        mine = s.get("median_call_s") if peer.startswith("spark_fr") else s.get("median_algo_s")
        out.append({"peer": peer, "reference": ref, "wall": ratio(s["median_wall_s"], r["median_wall_s"]),
                    "algorithm": ratio(s.get("median_algo_s"), r.get("median_algo_s")),
                    "call": ratio(mine, r.get("median_call_s")),
                    "peak_rss": ratio(s["median_peak_rss_mb"], r["median_peak_rss_mb"])})
    return out


def not_finished(results: dict, timeout: float) -> list:
    """``peer: did not finish (timeout N s)`` / ``peer: failed (exit N): ...`` for peers without a good run.

    Parameters
    ----------
    results : dict
        ``{name: rounds.PeerResult}``.
    timeout : float

    Returns
    -------
    list of str
    """
    lines = []
    for name, res in results.items():
        if res.ok_runs() or not res.runs:
            continue
        last = res.runs[-1]
        if last.get("killed") == "timeout":
            lines.append(f"{name}: did not finish (killed after the {timeout:.0f} s timeout)")
        else:
            tail = " ".join(last.get("stderr_tail", "").strip().splitlines()[-1:])
            lines.append(f"{name}: failed (exit {last['returncode']}): {tail[-300:]}")
    return lines


def run_set(args, name: str, kinds: list) -> dict:
    """Run one data set's peers in alternating rounds; print and return its report.

    Parameters
    ----------
    args : argparse.Namespace
    name : str
        ``madelon`` or ``wide``.
    kinds : list of str
        The peers that can run.

    Returns
    -------
    dict
        ``data``, ``summary``, ``ratios``, ``not_finished``, ``runs``.
    """
    workdir = Path(args.workdir).resolve() / "reliefe"
    if name == "madelon":
        mat, planted = MADELON, []
        data = {"mat": str(mat), "rows": 2000, "features": 500, "kind": "dense values (sparse file), 2 classes"}
    else:
        mat, truth = make_reliefe_wide(workdir, args.rows, args.features, args.reliefe_planted)
        planted = truth["relevant"]
        data = {"mat": str(mat), "rows": args.rows, "features": args.features, "planted": planted,
                "kind": f"sparse ({truth['density']:.0%} of the noise values non-zero), 3 classes",
                "generator": truth["generator"]}
    print(f"\n== {name}: {mat} ({data['rows']} x {data['features']}, {data['kind']}); k = {args.reliefe_neighbours}, "
          f"every row an instance; {args.repeats} rounds of {', '.join(kinds)}", flush=True)
    peers = [reliefe_peer(kind, mat, args.reliefe_neighbours, args.reliefe_python) for kind in kinds]
    results = run_rounds(peers, args.repeats, workdir / name, planted, args.reliefe_timeout, skip_timed_out=True)
    summary = summarise(results, planted, medians=("algo_s", "call_s"))
    ratios = ratio_lines(summary)
    missing = not_finished(results, args.reliefe_timeout)
    print()
    print(format_relief_table(summary, len(planted)))
    for line in missing:
        print(line)
    print(format_pair_ratios(ratios))
    return {"data": data, "summary": summary, "ratios": ratios, "not_finished": missing,
            "runs": {n: r.runs for n, r in results.items()}}


def run(args) -> int:
    """Run the suite: the machine line, each data set, and ``--json``.

    Parameters
    ----------
    args : argparse.Namespace
        From ``jobs/benchmark.py``.

    Returns
    -------
    int
        0, or 1 if a spark_fr peer failed in every round of a set ([R] not finishing is a result, not a failure).
    """
    env_before = environment()
    print(machine_line(env_before, f"ReliefE suite ({', '.join(args.reliefe_sets)}), {args.repeats} rounds"))
    kinds = list(args.peers)
    note = r_python_note(args.reliefe_python) if any(k in R_PEERS for k in kinds) else None
    if note:
        print(note)
        kinds = [k for k in kinds if k not in R_PEERS]
    report, code = {}, 0
    for name in args.reliefe_sets:
        if name == "madelon" and not MADELON.exists():
            print(f"madelon skipped: {MADELON} not found")
            continue
        report[name] = run_set(args, name, kinds)
        if any(not s.get("runs_ok") for n, s in report[name]["summary"].items() if n.startswith("spark_fr")):
            code = 1
    env_after = environment()
    print(f"load average after: {env_after['load_avg_1_5_15']}")
    if args.json:
        write_json(args.json, {"suite": "reliefe", "config": dict(vars(args)), "reliefe_python": args.reliefe_python,
                               "environment": {"before": env_before, "after": env_after}, **report})
    sys.stdout.flush()
    return code
