"""Relational suite (``--suite relational``): spark_fr's feature generation against featuretools' deep feature
synthesis (DFS), on the same schema and depth.

What is measured
----------------
Each peer reads the same spark_fr schema YAML, generates one row of features per target example and writes
the feature table as Parquet, as a separate, measured command (wall time of the whole process, interpreter
and JVM start-up, reading and writing included; peak RSS of its process tree; the load average before and
after). Two data sets (``--relational-sets``), each in every input format of ``--relational-formats``
(``csv``: headered CSV, ``tsv``: headerless TSV with the schema's ``columns:``, ``parquet``, ``delta``,
``dataframe``: the Parquet files loaded as Spark DataFrames by spark_fr, as pandas frames by featuretools;
converted once by ``relational_data.make_formats``, the same values in each):

``financial``
    ``conf/relational/financial.yaml``: PKDD'99 financial, 7 headerless TSV tables (682 loans, 6,471 orders,
    an n-n link ``disp`` between clients and accounts), at the config's ``max_depth`` (3) and any other
    depths of ``--relational-financial-depths`` (``3,2`` compares depth 2 too); ``--relational-financial-
    repeats`` rounds (3).
``synthetic``
    ``relational_data.py``: customers (target, planted label) -> accounts -> transactions, the fact table of
    ``--relational-rows`` rows (a comma list; default ``--rows``, 10,000,000), plus each customer's district;
    with (``--relational-link with``) and without (``without``) an n-n link table that has no key
    (customer_branch, and branches; default both); Parquet written once into ``--workdir`` (never committed) in
    bounded memory; ``max_depth`` 2 (every path of the schema; ``--relational-depth`` overrides it);
    ``--repeats`` rounds (1).

Peers (``--peers``, default ``spark_fr,spark_fr_spark,featuretools``; also ``spark_fr_common``,
``spark_fr_spark_common``, ``featuretools_like``, ``spark_fr_local1``):

``spark_fr``
    ``jobs/peers/spark_fr_relational.py``: ``generate_features`` with ``engine='auto'`` as a user calls it
    (the data checks on), the features written as Parquet: inputs that fit the driver go to the local engine
    (numpy in the driver; no JVM for files), others to a local Spark session (``local[*]``). For ``dataframe``
    it starts a session, reads the tables with ``spark.read.parquet``, runs one small warm-up job and passes the
    DataFrames. Besides the whole processes' ratio (the session's start counted: a Spark session takes longer
    to start than featuretools on the small sets takes in all), the ``dataframe`` cells give the ratio
    **from the frames in memory** (``frames_s``: spark_fr's generation and write from the DataFrames, the session
    running; featuretools' EntitySet, DFS and write from its pandas frames), what a notebook user waits for.
``spark_fr_common``
    The same with ``--common-aggregates``: only the aggregates featuretools also has (no count of distinct
    numbers or dates, no share of frequent values).
``spark_fr_spark``, ``spark_fr_spark_common``
    The same two with ``--engine spark``: the Spark engine in a local Spark session (``local[*]``), as it
    runs on data that does not fit the driver (the result is bit for bit the local engine's).
``spark_fr_local1``
    ``spark_fr_spark`` on ``local[1]``: one core, as featuretools (pandas) uses.
``featuretools``
    ``jobs/peers/featuretools_dfs.py``: the tables read with pandas, an EntitySet with the same keys and
    foreign keys, ``ft.dfs`` with the aggregation primitives mapped from the schema's aggregates (count,
    num_unique, mean, min, max, sum, std, mode; conditional aggregates as ``where_primitives`` over the
    same frequent values; spark_fr's share of frequent values and numeric count distinct have no
    counterpart), no transform primitives, the feature matrix written as Parquet. DFS as it is: it also
    generates shapes spark_fr does not (aggregations over two to-many hops at once, siblings through a
    parent, every primitive stacked on every other), so the feature counts differ and are reported.
``featuretools_like``
    The same with ``--like-spark-fr``: only the DFS definitions of shapes spark_fr generates (one to-many
    hop per aggregation, no walking straight back, the schema's outer aggregates when stacked).

A run past ``--relational-timeout`` seconds (1800) or whose process tree grows past
``--relational-max-memory-gb`` (3/4 of the machine's memory) is killed; it, and a run that dies of an
out-of-memory error, is reported as "did not finish: timeout / out of memory" (with the time or memory it
had reached) and is not repeated in later rounds; the suite goes on. The table per data set gives medians,
peak memory, feature and row counts, and the ratios ``peer / spark_fr`` (> 1: spark_fr is faster or
smaller; "> x" when the peer did not finish); the tightest pair is ``featuretools_like / spark_fr_common``
(the same shapes, the shared aggregates; the feature counts still differ, see the peers' docstrings). The
end of the report holds three matrices (:data:`MATRICES`), one line per data set, size and link table, one
column per format: ``featuretools / spark_fr`` (the engine ``auto`` chose), ``featuretools / spark_fr_spark``
(the Spark engine forced) and ``spark_fr_spark / spark_fr`` (what the Spark engine costs over the one ``auto``
picks); ``--json`` has them as ``matrices`` and is rewritten after every case (``finished``: false until the
end), so a long run stopped half-way keeps what it measured. With both engines and several sizes of the synthetic
set (``--relational-rows``), :func:`growth` adds what the Spark engine costs per added fact row: the growth of its
median between two sizes over the local engine's (``growth`` in the JSON), which leaves out what a run costs
whatever its data (the JVM's start and first compilations). Reported, never asserted. Examples::

    python jobs/benchmark.py --suite relational --json out/relational.json   # financial + 10^7 rows, 5 formats
    python jobs/benchmark.py --suite relational --relational-rows 1000000,10000000 --relational-formats csv,delta
    python jobs/benchmark.py --suite relational --relational-sets financial --relational-financial-depths 3,2
    python jobs/benchmark.py --suite relational --relational-sets synthetic --rows 1000000 --peers spark_fr,featuretools
"""
from __future__ import annotations

import json
import shutil
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .measure import classify, environment, machine_line, run_measured, total_memory_gb
from .options import comma_list, fill_defaults, parse_peers
from .paths import PEER_SCRIPTS, ROOT
from .relational_data import FORMATS, make_formats, make_relational
from .tables import write_json

SUMMARY = ("relational feature generation: spark_fr vs featuretools' deep feature synthesis "
           "(financial, 10^7-row fact table)")
PEERS = ("spark_fr", "spark_fr_common", "spark_fr_spark", "spark_fr_spark_common", "featuretools",
         "featuretools_like", "spark_fr_local1")
DEFAULT_PEERS = "spark_fr,spark_fr_spark,featuretools"
SETS = ("financial", "synthetic")
LINKS = ("without", "with")
FINANCIAL = ROOT / "conf" / "relational" / "financial.yaml"
RESULT = "result.json"
#: peer timings kept (medians) from the peers' result.json
TIMINGS = ("spark_start_s", "generate_s", "write_s", "import_s", "read_s", "entityset_s", "dfs_s", "session_s",
           "frames_s")


@dataclass
class RelPeer:
    """A peer of this suite: its name and ``command(schema, depth, run_dir, fmt) -> command line``."""

    name: str
    command: Callable[[Path, object, Path, str], list]


def _peer_command(script: str, *options: str) -> Callable:
    def command(schema: Path, depth, run_dir: Path, fmt: str = "parquet") -> list:
        cmd = [sys.executable, str(PEER_SCRIPTS / script), str(schema), str(run_dir / RESULT),
               "--matrix", str(run_dir / "features.parquet"), *options]
        if fmt == "dataframe" and script == "spark_fr_relational.py":
            cmd.append("--dataframes")
        return cmd + (["--max-depth", str(depth)] if depth is not None else [])

    return command


def make_peers(names: list) -> list:
    """The suite's peers, in the order they run.

    Parameters
    ----------
    names : list of str
        From :data:`PEERS`.

    Returns
    -------
    list of RelPeer
    """
    makers = {"spark_fr": ("spark_fr_relational.py",),
              "spark_fr_common": ("spark_fr_relational.py", "--common-aggregates"),
              "spark_fr_spark": ("spark_fr_relational.py", "--engine", "spark"),
              "spark_fr_spark_common": ("spark_fr_relational.py", "--engine", "spark", "--common-aggregates"),
              "spark_fr_local1": ("spark_fr_relational.py", "--engine", "spark", "--master", "local[1]"),
              "featuretools": ("featuretools_dfs.py",), "featuretools_like": ("featuretools_dfs.py", "--like-spark-fr")}
    return [RelPeer(n, _peer_command(*makers[n])) for n in names]


def add_arguments(parser) -> None:
    """The ``relational suite`` option group.

    Parameters
    ----------
    parser : argparse.ArgumentParser
    """
    g = parser.add_argument_group(f"relational suite (--suite relational; defaults --rows 10000000 (fact table of "
                                  f"the synthetic set) --repeats 1 (synthetic set), peers {DEFAULT_PEERS}; "
                                  f"also {','.join(p for p in PEERS if p not in DEFAULT_PEERS.split(','))})")
    g.add_argument("--relational-sets", default=",".join(SETS), help=f"comma list of {', '.join(SETS)} (default all)")
    g.add_argument("--relational-formats", default=",".join(FORMATS),
                   help=f"comma list of input formats, {', '.join(FORMATS)} (default all)")
    g.add_argument("--relational-rows", help="comma list of fact-table sizes of the synthetic set (default --rows)")
    g.add_argument("--relational-link", default=",".join(LINKS),
                   help="synthetic set without and/or with the keyless link table (default without,with)")
    g.add_argument("--relational-financial-depths", default="3",
                   help="comma list of max_depth values for financial (default 3, the config's)")
    g.add_argument("--relational-financial-repeats", type=int, default=3, help="rounds on financial (default 3)")
    g.add_argument("--relational-depth", type=int, help="max_depth of the synthetic set (default: its schema's, 2)")
    g.add_argument("--relational-timeout", type=float, default=1800,
                   help="seconds per peer run before it is killed and reported as not finished (default 1800)")
    g.add_argument("--relational-max-memory-gb", type=float,
                   help="peak RSS of a peer's process tree above which it is killed and reported as out of "
                        "memory (default 3/4 of the machine's memory)")


def check_arguments(args, error) -> None:
    """Fill in the suite's defaults and parse its lists, in place.

    Parameters
    ----------
    args : argparse.Namespace
    error : callable
        ``error(message)`` exits with a usage error.
    """
    fill_defaults(args, rows=10_000_000, repeats=1)
    parse_peers(args, PEERS, DEFAULT_PEERS, error)
    for option, choices in (("relational_sets", SETS), ("relational_formats", FORMATS), ("relational_link", LINKS)):
        setattr(args, option, comma_list(getattr(args, option)))
        bad = [s for s in getattr(args, option) if s not in choices]
        if bad or not getattr(args, option):
            error(f"--{option.replace('_', '-')}: unknown {','.join(bad) or '(empty)'}; choose from {', '.join(choices)}")
    try:
        args.relational_rows = [int(r) for r in comma_list(args.relational_rows or str(args.rows))]
    except ValueError:
        error("--relational-rows takes a comma list of integers")
    try:
        args.relational_financial_depths = [int(d) for d in comma_list(args.relational_financial_depths)]
    except ValueError:
        error("--relational-financial-depths takes a comma list of integers")
    if not args.relational_financial_depths or min(args.relational_financial_depths) < 0:
        error("--relational-financial-depths takes depths >= 0")
    if args.rows < 100 or not args.relational_rows or min(args.relational_rows) < 100:
        error("--rows and --relational-rows (the synthetic fact table) must be at least 100")
    if min(args.repeats, args.relational_financial_repeats) < 1:
        error("--repeats and --relational-financial-repeats must be positive")
    if args.relational_depth is not None and args.relational_depth < 0:
        error("--relational-depth must be >= 0")
    if args.relational_timeout <= 0:
        error("--relational-timeout must be positive")
    if args.relational_max_memory_gb is None:
        args.relational_max_memory_gb = round(0.75 * total_memory_gb(), 1)
    elif args.relational_max_memory_gb <= 0:
        error("--relational-max-memory-gb must be positive")


def run_case(peers: list, schema: Path, depth, repeats: int, workdir: Path, timeout: float, max_gb: float,
             fmt: str = "parquet") -> dict:
    """Alternate the peers on one schema and depth; a peer that did not finish is not run again.

    Parameters
    ----------
    peers : list of RelPeer
    schema : Path
    depth : int or None
        ``--max-depth`` for both peers (None: the schema's).
    repeats : int
    workdir : Path
        Runs go into ``workdir/<peer>_r<round>`` (emptied first).
    timeout, max_gb : float
        Per run.
    fmt : str
        The input format (``dataframe``: spark_fr loads the schema's Parquet files as DataFrames).

    Returns
    -------
    dict
        ``{peer name: list of run dicts}``: :func:`measure.run_measured`'s facts, ``round``, ``status`` and,
        for a finished run, the peer's ``result.json`` (rows, features, timings, matrix path).
    """
    runs = {p.name: [] for p in peers}
    for rnd in range(1, repeats + 1):
        for peer in peers:
            if any(r["status"].startswith("did not finish") for r in runs[peer.name]):
                continue
            run_dir = workdir / f"{peer.name}_r{rnd}"
            if run_dir.exists():
                shutil.rmtree(run_dir)
            res = run_measured(peer.command(schema, depth, run_dir, fmt), run_dir, timeout, max_gb * 1024)
            res["round"] = rnd
            res["status"] = classify(res, timeout, max_gb)
            if res["status"] == "ok":
                facts = json.loads((run_dir / RESULT).read_text())
                res.update({k: v for k, v in facts.items() if k != "feature_names"})
                note = f"{facts['rows']} rows x {facts['features']} features"
            else:
                note = res["status"] + (f": {res['stderr_tail'][-300:]}" if res["status"].startswith("failed") else "")
            runs[peer.name].append(res)
            engine = f" ({res['engine']} engine)" if res.get("engine") else ""
            print(f"  round {rnd} {peer.name:<22} {res['wall_s']:8.1f} s  cpu {res.get('cpu_s', 0):7.1f} s  "
                  f"peak {res['peak_rss_mb'] / 1024:6.2f} GB  "
                  f"load {res['load_avg_1_before']:.1f}-{res['load_avg_1_after']:.1f}  {note}{engine}", flush=True)
    return runs


def _median(runs: list, key: str):
    values = [r[key] for r in runs if isinstance(r.get(key), (int, float))]
    return round(statistics.median(values), 3) if values else None


def summarise(runs: dict) -> dict:
    """Per peer: status, medians over the finished runs, feature and row counts, the load averages.

    Parameters
    ----------
    runs : dict
        From :func:`run_case`.

    Returns
    -------
    dict
        ``{peer: {"status", "runs", "runs_ok", "median_wall_s", "min_wall_s", "max_wall_s", "median_cpu_s"
        (CPU seconds of the process tree), "median_peak_rss_mb", "features", "rows", "median_<timing>",
        "load_avg_1": [min, max]}}``; a peer that did not finish has ``status`` saying why and
        ``reached_wall_s`` / ``reached_peak_rss_mb``.
    """
    out = {}
    for name, rs in runs.items():
        ok = [r for r in rs if r["status"] == "ok"]
        loads = [r[k] for r in rs for k in ("load_avg_1_before", "load_avg_1_after")]
        s = {"status": "ok" if ok else (rs[-1]["status"] if rs else "not run"), "runs": len(rs), "runs_ok": len(ok),
             "load_avg_1": [min(loads), max(loads)] if loads else None}
        if ok:
            walls = [r["wall_s"] for r in ok]
            s.update({"median_wall_s": round(statistics.median(walls), 3), "min_wall_s": min(walls),
                      "max_wall_s": max(walls), "median_cpu_s": _median(ok, "cpu_s"),
                      "median_peak_rss_mb": _median(ok, "peak_rss_mb"),
                      "features": ok[-1]["features"], "rows": ok[-1]["rows"], "matrix": ok[-1].get("matrix"),
                      "engine": ok[-1].get("engine"), "engine_reason": ok[-1].get("engine_reason")})
            for key in TIMINGS:
                value = _median(ok, key)
                if value is not None:
                    s[f"median_{key}"] = value
        elif rs:
            s.update({"reached_wall_s": rs[-1]["wall_s"], "reached_peak_rss_mb": rs[-1]["peak_rss_mb"]})
        out[name] = s
    return out


def _ratio(a, b):
    return round(a / b, 2) if a and b else None


def default_pairs(names: list) -> list:
    """Every other peer over ``spark_fr``, then the featuretools peers over ``spark_fr_common``, over
    ``spark_fr_spark`` (featuretools only) and over ``spark_fr_spark_common``."""
    pairs = [(n, "spark_fr") for n in names if n != "spark_fr"] if "spark_fr" in names else []
    for reference, peers in (("spark_fr_common", ("featuretools", "featuretools_like")),
                             ("spark_fr_spark", ("featuretools",)),
                             ("spark_fr_spark_common", ("featuretools", "featuretools_like"))):
        if reference in names:
            pairs += [(n, reference) for n in peers if n in names]
    return pairs


def ratios(summary: dict, pairs: list | None = None) -> list:
    """``peer / reference`` of the median wall times and peak memory.

    Parameters
    ----------
    summary : dict
        From :func:`summarise`.
    pairs : list of tuple of (str, str), optional
        ``(peer, reference)``; default :func:`default_pairs` of the peers in ``summary``.

    Returns
    -------
    list of dict
        ``peer``, ``reference``, ``wall``, ``peak_rss``, ``cpu`` (CPU seconds; > 1: the reference is faster /
        smaller / does less work; None when one of them did not finish), ``wall_at_least`` (the peer did not
        finish: the time it had reached over the reference's median) or ``wall_at_most`` (the reference did not
        finish), ``features`` of both.
    """
    out = []
    for name, reference in (default_pairs(list(summary)) if pairs is None else pairs):
        s, ref = summary.get(name), summary.get(reference)
        if s is None or ref is None:
            continue
        r = {"peer": name, "reference": reference, "wall": _ratio(s.get("median_wall_s"), ref.get("median_wall_s")),
             "peak_rss": _ratio(s.get("median_peak_rss_mb"), ref.get("median_peak_rss_mb")),
             "cpu": _ratio(s.get("median_cpu_s"), ref.get("median_cpu_s")),
             "features": {name: s.get("features"), reference: ref.get("features")}}
        if s.get("reached_wall_s") and ref.get("median_wall_s"):
            r["wall_at_least"] = _ratio(s["reached_wall_s"], ref["median_wall_s"])
        if ref.get("reached_wall_s") and s.get("median_wall_s"):
            r["wall_at_most"] = _ratio(s["median_wall_s"], ref["reached_wall_s"])
        out.append(r)
    return out


def format_table(summary: dict) -> str:
    """Plain-text table of one data set and depth: one line per peer."""
    head = (f"{'peer':<23}{'runs':>5}{'median wall s':>15}{'(min-max)':>17}{'CPU s':>9}{'peak RSS GB':>13}"
            f"{'features':>10}{'rows':>9}{'load':>11}  status")
    lines = [head, "-" * len(head)]
    for name, s in summary.items():
        load = f"{s['load_avg_1'][0]:.1f}-{s['load_avg_1'][1]:.1f}" if s.get("load_avg_1") else "-"
        if s["runs_ok"]:
            rng = f"({s['min_wall_s']:.1f}-{s['max_wall_s']:.1f})"
            lines.append(f"{name:<23}{s['runs_ok']:>5}{s['median_wall_s']:>15.1f}{rng:>17}"
                         f"{s.get('median_cpu_s') or 0:>9.1f}{s['median_peak_rss_mb'] / 1024:>13.2f}{s['features']:>10}"
                         f"{s['rows']:>9}{load:>11}  ok")
        else:
            reached = s.get("reached_wall_s")
            rng = f"(>= {reached:.0f})" if reached else ""
            peak = s.get("reached_peak_rss_mb")
            lines.append(f"{name:<23}{0:>5}{'-':>15}{rng:>17}{'-':>9}{(peak or 0) / 1024:>13.2f}{'-':>10}{'-':>9}"
                         f"{load:>11}  {s['status']}")
    return "\n".join(lines)


def format_ratios(rs: list) -> str:
    """One line per ratio: ``featuretools / spark_fr: wall 2.10x, peak RSS 0.50x (features 253 / 111)``."""
    def x(v):
        return f"{v:.2f}x" if v is not None else "n/a"

    lines = []
    for r in rs:
        f = r["features"]
        wall = x(r["wall"]) if r["wall"] is not None else (
            f"> {r['wall_at_least']:.2f}x (did not finish)" if r.get("wall_at_least") else
            f"< {r['wall_at_most']:.2f}x ({r['reference']} did not finish)" if r.get("wall_at_most") else "n/a")
        lines.append(f"{r['peer']} / {r['reference']}: wall {wall}, CPU {x(r.get('cpu'))}, "
                     f"peak RSS {x(r['peak_rss'])} (features {f[r['peer']]} / {f[r['reference']]})")
    return "\n".join(lines)


def cases(args, workdir: Path) -> list:
    """The (data set, schema, depth, repeats, data facts) to run, in order: per data set and size (and link
    table), every format of ``--relational-formats``; ``data`` holds ``format``, ``link`` and ``schema``."""
    out = []
    for name in args.relational_sets:
        if name == "financial":
            schemas = make_formats(FINANCIAL, args.relational_formats, folder=workdir / "financial_formats")
            for depth in args.relational_financial_depths:
                for fmt in args.relational_formats:
                    out.append(("financial", schemas[fmt], depth, args.relational_financial_repeats,
                                {"schema": str(schemas[fmt]), "format": fmt, "link": "without"}))
            continue
        for rows in args.relational_rows:
            for link in args.relational_link:
                schema, truth = make_relational(workdir, rows, link=link == "with")
                written = f"written in {truth['write_s']:.1f} s" if "write_s" in truth else "reused"
                print(f"data: {schema.parent} ({truth['sizes']}; labels {truth['labels']}; {written})")
                schemas = make_formats(schema, args.relational_formats)
                depth = args.relational_depth if args.relational_depth is not None else truth["max_depth"]
                for fmt in args.relational_formats:
                    out.append(("synthetic", schemas[fmt], depth, args.repeats,
                                dict(truth, schema=str(schemas[fmt]), format=fmt, link=link)))
    return out


def case_label(result: dict) -> str:
    """``financial``, ``synthetic 10000000 rows, keyless link`` ... of a case's result."""
    data = result["data"]
    size = f" {data['rows']:,} rows" if "rows" in data else ""
    link = ", keyless link table" if data.get("link") == "with" else ""
    return f"{result['set']}{size}{link} (max_depth {result['max_depth']})"


def _frames_ratio(summary: dict, peer: str, reference: str):
    """``peer / reference`` of the seconds from the frames in memory to the written features (``frames_s``:
    DataFrames, as in a notebook whose session runs already and whose tables are loaded; featuretools from its
    pandas frames), or None when one of them has no such time (file inputs)."""
    s, ref = summary.get(peer, {}), summary.get(reference, {})
    if not (s.get("median_frames_s") and ref.get("median_frames_s")):
        return None
    return _ratio(s["median_frames_s"], ref["median_frames_s"])


#: the matrices at the end of the report: (peer, reference), each printed when both ran
MATRICES = (("featuretools", "spark_fr"), ("featuretools", "spark_fr_spark"), ("spark_fr_spark", "spark_fr"))


def matrix(results: list, peer: str = "featuretools", reference: str = "spark_fr") -> list:
    """``peer / reference`` wall-time ratios per data set, size and link table (a row) and format (a cell).

    Parameters
    ----------
    results : list of dict
        The cases of :func:`run`.
    peer, reference : str

    Returns
    -------
    list of dict
        One per row: ``label`` (:func:`case_label`), ``load`` (the runs' 1-minute load averages, per format)
        and ``cells``: {format: {"ratio" (None when one of them did not finish), "at_least" (the peer did not
        finish: the time it had reached over the reference's), "frames" (DataFrames: the ratio of the seconds from the
        frames in memory to the written features, the session running and warm, as in a notebook), "engine" (the reference's: local or spark),
        "peer_s", "reference_s" (median wall times), "cpu_ratio", "peer_cpu_s", "reference_cpu_s" (the same of
        the processes' CPU seconds), "status" (the peer's)}}.
    """
    rows = {}
    for r in results:
        ratio = next((x for x in r["ratios"] if x["peer"] == peer and x["reference"] == reference), None)
        if ratio is None:
            continue
        s, ref = r["summary"].get(peer, {}), r["summary"].get(reference, {})
        loads = [v for x in r["summary"].values() for v in (x.get("load_avg_1") or [])]
        row = rows.setdefault(case_label(r), {"label": case_label(r), "load": {}, "cells": {}})
        fmt = r["data"].get("format", "parquet")
        row["load"][fmt] = [min(loads), max(loads)] if loads else None
        row["cells"][fmt] = {"ratio": ratio["wall"], "at_least": ratio.get("wall_at_least"),
                             "frames": _frames_ratio(r["summary"], peer, reference), "engine": ref.get("engine"),
                             "peer_s": s.get("median_wall_s"), "reference_s": ref.get("median_wall_s"),
                             "cpu_ratio": ratio.get("cpu"), "peer_cpu_s": s.get("median_cpu_s"),
                             "reference_cpu_s": ref.get("median_cpu_s"),
                             "status": s.get("status")}
    return list(rows.values())


def format_matrix(results: list, peer: str = "featuretools", reference: str = "spark_fr", cpu: bool = False) -> str:
    """:func:`matrix` as text: ``peer / reference`` wall-time ratios (``cpu``: of the CPU seconds), one line per data
    set, size and link table, one column per format (with the engine ``reference`` ran: L local, S Spark), and the
    load averages."""
    formats = [f for f in FORMATS if any(r["data"].get("format") == f for r in results)]
    head = (f"{peer} / {reference} of the whole processes' CPU seconds (L: local engine, S: Spark engine)" if cpu else
            f"{peer} / {reference} of the whole processes' wall times (L: local engine, S: Spark engine; "
            f"dataframe: in brackets from the frames in memory, the session running)")
    rows = matrix(results, peer, reference)
    width = max([len(row["label"]) for row in rows] + [20])
    lines = [head, f"{'':<{width}}" + "".join(f"{f:>19}" for f in formats) + "   load"]
    for row in rows:
        texts = []
        for f in formats:
            c = row["cells"].get(f)
            if c is None:
                texts.append("-")
                continue
            if cpu:
                text = f"{c['cpu_ratio']:.2f}x" if c.get("cpu_ratio") is not None else "n/a"
            else:
                text = (f"{c['ratio']:.2f}x" if c["ratio"] is not None else
                        f">{c['at_least']:.2f}x" if c["at_least"] else "n/a")
            if c["frames"] is not None and not cpu:
                text += f" ({c['frames']:.2f}x)"
            texts.append(f"{text} {({'local': 'L', 'spark': 'S'}).get(c['engine'], '?')}")
        loads = dict.fromkeys(f"{lo:.1f}-{hi:.1f}" for lo, hi in (v for v in row["load"].values() if v))
        lines.append(f"{row['label']:<{width}}" + "".join(f"{t:>19}" for t in texts) + "   " + ", ".join(loads))
    return "\n".join(lines)


def growth(results: list, peer: str = "spark_fr_spark", reference: str = "spark_fr") -> list:
    """How much more ``peer`` than ``reference`` costs per added fact row: between each two consecutive sizes of the
    synthetic set (the same format and link table), the growth of ``peer``'s median wall time (and CPU seconds) over
    the growth of ``reference``'s. Unlike the ratio at one size, it leaves out what a run costs whatever its data
    (a JVM's start and first compilations, the small jobs' latency).

    Parameters
    ----------
    results : list of dict
        The cases of :func:`run`.
    peer, reference : str

    Returns
    -------
    list of dict
        One per format, link table and pair of sizes: ``format``, ``link``, ``rows`` ([smaller, larger]),
        ``peer_s``, ``reference_s``, ``peer_cpu_s``, ``reference_cpu_s`` (the medians at both sizes), ``wall`` and
        ``cpu`` (the ratio of the growths; None when a growth is not positive or a run did not finish).
    """
    sizes = {}
    for r in results:
        s, ref = r["summary"].get(peer, {}), r["summary"].get(reference, {})
        if r["set"] == "synthetic" and "rows" in r["data"] and s.get("median_wall_s") and ref.get("median_wall_s"):
            key = (r["data"].get("format", "parquet"), r["data"].get("link", "without"))
            sizes.setdefault(key, {})[r["data"]["rows"]] = (s, ref)
    out = []
    for (fmt, link), by_rows in sizes.items():
        rows = sorted(by_rows)
        for small, large in zip(rows, rows[1:]):
            (s0, r0), (s1, r1) = by_rows[small], by_rows[large]
            row = {"format": fmt, "link": link, "rows": [small, large]}
            for what, key in (("wall", "median_wall_s"), ("cpu", "median_cpu_s")):
                name = "" if what == "wall" else "_cpu"
                row[f"peer{name}_s"], row[f"reference{name}_s"] = [s0.get(key), s1.get(key)], [r0.get(key), r1.get(key)]
                if None in row[f"peer{name}_s"] + row[f"reference{name}_s"]:
                    row[what] = None
                    continue
                grow, grow_ref = s1[key] - s0[key], r1[key] - r0[key]
                row[what] = round(grow / grow_ref, 2) if grow > 0 and grow_ref > 0 else None
            out.append(row)
    return out


def format_growth(rows: list, peer: str = "spark_fr_spark", reference: str = "spark_fr") -> str:
    """:func:`growth` as text, one line per format, link table and pair of sizes."""
    def x(v):
        return f"{v:.2f}x" if v is not None else "n/a"

    lines = [f"{peer} / {reference} per added fact row (growth of the median whole-process times between two sizes)"]
    for r in rows:
        link = ", keyless link table" if r["link"] == "with" else ""
        lines.append(f"  {r['format']}{link}, {r['rows'][0]:,} -> {r['rows'][1]:,} fact rows: wall {x(r['wall'])} "
                     f"(+{r['peer_s'][1] - r['peer_s'][0]:.1f} s against +{r['reference_s'][1] - r['reference_s'][0]:.1f}"
                     f" s), CPU {x(r['cpu'])}")
    return "\n".join(lines)


def report_matrices(results: list, names: list) -> dict:
    """{"peer / reference": :func:`matrix`} of every pair of :data:`MATRICES` whose peers both ran."""
    return {f"{p} / {r}": matrix(results, p, r) for p, r in MATRICES if p in names and r in names}


def run(args) -> int:
    """Run the suite: every data set and depth, the tables, the ratios and ``--json``.

    Parameters
    ----------
    args : argparse.Namespace
        From ``jobs/benchmark.py``.

    Returns
    -------
    int
        0 when spark_fr finished everywhere (the peers may not have: that is a result), else 1.
    """
    workdir = Path(args.workdir).resolve()
    names = list(args.peers)
    if not FINANCIAL.exists() and "financial" in args.relational_sets:
        print(f"financial skipped: {FINANCIAL} not found")
        args.relational_sets = [s for s in args.relational_sets if s != "financial"]
    if any(n.startswith("featuretools") for n in names):
        import importlib.util

        if importlib.util.find_spec("featuretools") is None:
            print("featuretools skipped: not installed (pip install featuretools==1.31.0)")
            names = [n for n in names if not n.startswith("featuretools")]
    if not names or not args.relational_sets:
        print("nothing to run", file=sys.stderr)
        return 1
    peers = make_peers(names)
    env_before = environment()
    results, failed = [], False
    for name, schema, depth, repeats, data in cases(args, workdir):
        fmt = data.get("format", "parquet")
        size = f"_{data['rows']}" if "rows" in data else ""
        link = "_link" if data.get("link") == "with" else ""
        print(machine_line(environment(), f"{name}{size.replace('_', ' ')}{link.replace('_', ' ')} as {fmt} at "
                                          f"max_depth {depth}: {repeats} round(s) of {', '.join(names)}"))
        runs = run_case(peers, schema, depth, repeats, workdir / "relational" / f"{name}{size}{link}_{fmt}_d{depth}",
                        args.relational_timeout, args.relational_max_memory_gb, fmt)
        summary = summarise(runs)
        rs = ratios(summary)
        print()
        print(format_table(summary))
        print(format_ratios(rs))
        print()
        failed |= any(s["runs_ok"] == 0 for n, s in summary.items() if n.startswith("spark_fr"))
        results.append({"set": name, "max_depth": depth, "repeats": repeats, "data": data, "summary": summary,
                        "ratios": rs, "runs": runs})
        if args.json:  # after every case: a long run stopped half-way keeps what it measured
            write_json(args.json, report(args, env_before, None, results, names), announce=False)
    env_after = environment()
    for p, r in MATRICES:
        if p in names and r in names:
            print(format_matrix(results, p, r))
            print(format_matrix(results, p, r, cpu=True))
            print()
    grown = growth(results)  # empty unless both engines ran at two sizes or more
    if grown:
        print(format_growth(grown))
        print()
    print(f"load average after: {env_after['load_avg_1_5_15']}")
    if args.json:
        write_json(args.json, report(args, env_before, env_after, results, names))
    return 1 if failed else 0


def report(args, env_before: dict, env_after: dict | None, results: list, names: list) -> dict:
    """The suite's JSON report (``env_after`` None: written after a case, the run still going)."""
    return {"suite": "relational", "config": dict(vars(args)),
            "environment": {"before": env_before, "after": env_after},
            "cases": results, "matrices": report_matrices(results, names),
            "growth": growth(results),
            "finished": env_after is not None}
