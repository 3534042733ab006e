"""What the suites print and write: plain-text tables, ratios between peers, the JSON report.

Sketch
------
:func:`peer_table` is the one table of peers (runs, median wall time and range, the suite's own columns,
peak memory, planted features on top); :func:`format_table` (ensemble) and :func:`format_relief_table`
choose its extra columns. Ratios are ``peer / spark_fr`` of medians (> 1: spark_fr is faster), reported
and never asserted; :func:`pair_ratios` gives them for any pairs of peers (wall time and peak memory; "> x"
with the reason when the peer did not finish, :func:`not_finished_note`).
:func:`memory_rows` and :func:`format_memory_table` show how peak memory grows with the
rows. :func:`write_json` writes a suite's report.
"""
from __future__ import annotations

import json
from pathlib import Path


def peer_table(summary: dict, k: int, name_width: int, extra: list) -> str:
    """Plain-text table: peer, runs, median wall time (range), the ``extra`` columns, peak RSS, planted.

    Parameters
    ----------
    summary : dict
        ``{peer name: summary dict}`` (:func:`rounds.summarise`).
    k : int
        The number of planted features (the header says ``top-k = planted``); 0: no such column (data without
        a known truth).
    name_width : int
        Width of the peer column.
    extra : list of tuple
        ``(header, width, summary -> text)`` for the suite's own columns.

    Returns
    -------
    str
    """
    head = (f"{'peer':<{name_width}}{'runs':>5}{'median wall s':>15}{'(min-max)':>17}"
            + "".join(f"{h:>{w}}" for h, w, _ in extra) + f"{'peak RSS GB':>13}"
            + (f"{f'top-{k} = planted':>18}" if k else ""))
    lines = [head, "-" * len(head)]
    for name, s in summary.items():
        if not s.get("runs_ok"):
            lines.append(f"{name:<{name_width}}{0:>5}  {not_finished_note(s)}")
            continue
        rng = f"({s['min_wall_s']:.1f}-{s['max_wall_s']:.1f})"
        lines.append(f"{name:<{name_width}}{s['runs_ok']:>5}{s['median_wall_s']:>15.1f}{rng:>17}"
                     + "".join(f"{fn(s):>{w}}" for _, w, fn in extra)
                     + f"{s['median_peak_rss_mb'] / 1024:>13.2f}"
                     + (f"{'yes' if s['top_planted_every_run'] else 'NO':>18}" if k else ""))
    return "\n".join(lines)


def not_finished_note(s: dict) -> str:
    """Why a peer has no successful run, with the time and memory it had reached.

    Parameters
    ----------
    s : dict
        A peer's summary without a successful run (:func:`rounds.PeerResult.summary`).

    Returns
    -------
    str
        ``did not finish: out of memory (over 18.0 GB) after 212 s, at 18.03 GB``, or ``failed (exit 1)``
        (``(every run failed)`` for a summary without a status).
    """
    status = s.get("status") or "(every run failed)"
    if not status.startswith("did not finish") or s.get("reached_wall_s") is None:
        return status
    return f"{status} after {s['reached_wall_s']:.0f} s, at {(s.get('reached_peak_rss_mb') or 0) / 1024:.2f} GB"


def per_tree_column(s: dict) -> str:
    """The ``s / tree`` column of a peer's summary: its median seconds per tree (``rounds.add_per_tree``), or -."""
    value = s.get("median_per_tree_s")
    return f"{value:.3f}" if value is not None else "-"


def format_table(summary: dict, k: int) -> str:
    """The ensemble suite's table: :func:`peer_table` with the wall-time ratio to spark_fr.

    Parameters
    ----------
    summary : dict
    k : int

    Returns
    -------
    str
    """
    ratio = ("ratio vs spark_fr", 19, lambda s: f"{s['ratio_to_spark_fr']:.2f}" if "ratio_to_spark_fr" in s else "n/a")
    return peer_table(summary, k, 13, [ratio])


def format_relief_table(summary: dict, k: int) -> str:
    """A Relief group's table: :func:`peer_table` with spark_fr's ``rank()`` time and the algorithm time.

    Parameters
    ----------
    summary : dict
    k : int

    Returns
    -------
    str
    """
    def seconds(key):
        return lambda s: f"{s[key]:.2f}" if s.get(key) is not None else "-"

    return peer_table(summary, k, 24, [("rank() s", 10, seconds("median_call_s")),
                                       ("algo s", 9, seconds("median_algo_s"))])


def _ratio(a, b):
    return round(a / b, 2) if a and b else None


def relief_ratios(summary: dict, peer: str, spark_fr: str, warm: str | None) -> dict:
    """Ratios of a peer to spark_fr (> 1: spark_fr is faster).

    Parameters
    ----------
    summary : dict
        A Relief group's summary (with ``median_algo_s`` and ``median_call_s`` where known).
    peer, spark_fr : str
        The names of the peer and of the cold spark_fr command in ``summary``.
    warm : str or None
        The name of the warm spark_fr process, if it ran.

    Returns
    -------
    dict
        ``peer``, ``spark_fr``, ``wall`` and ``algorithm`` (peer / spark_fr of the median wall and algorithm
        times), ``peer_algorithm_over_warm_call`` and ``peer_wall_over_warm_call`` (over the median warm
        ``rank()`` call); None where a time is missing.
    """
    s, ref, w = summary.get(peer, {}), summary.get(spark_fr, {}), summary.get(warm, {}) if warm else {}
    return {"peer": peer, "spark_fr": spark_fr, "wall": _ratio(s.get("median_wall_s"), ref.get("median_wall_s")),
            "algorithm": _ratio(s.get("median_algo_s"), ref.get("median_algo_s")),
            "peer_algorithm_over_warm_call": _ratio(s.get("median_algo_s"), w.get("median_call_s")),
            "peer_wall_over_warm_call": _ratio(s.get("median_wall_s"), w.get("median_call_s"))}


def pair_ratios(summary: dict, pairs: list) -> list:
    """Ratios ``peer / reference`` of the median wall times and peak memory, for the pairs that both ran.

    Parameters
    ----------
    summary : dict
        ``{peer name: summary dict}`` (:func:`rounds.summarise`).
    pairs : list of tuple of (str, str)
        ``(peer, reference)`` names; pairs with a peer that is absent or never succeeded are left out.

    Returns
    -------
    list of dict
        ``peer``, ``reference``, ``wall`` and ``peak_rss`` (> 1: the reference is faster / smaller); a peer that
        did not finish (:func:`measure.classify`) beside a reference that did gives ``wall`` and ``peak_rss``
        None, ``wall_at_least`` (the time it had reached over the reference's median), ``status``, and the
        reference's ``reference_wall_s`` and ``reference_peak_rss_mb``.
    """
    out = []
    for peer, ref in pairs:
        s, r = summary.get(peer, {}), summary.get(ref, {})
        if s.get("runs_ok") and r.get("runs_ok"):
            out.append({"peer": peer, "reference": ref, "wall": _ratio(s["median_wall_s"], r["median_wall_s"]),
                        "peak_rss": _ratio(s["median_peak_rss_mb"], r["median_peak_rss_mb"])})
        elif r.get("runs_ok") and s.get("status", "").startswith("did not finish"):
            out.append({"peer": peer, "reference": ref, "wall": None, "peak_rss": None,
                        "wall_at_least": _ratio(s.get("reached_wall_s"), r["median_wall_s"]),
                        "status": not_finished_note(s), "reference_wall_s": r["median_wall_s"],
                        "reference_peak_rss_mb": r["median_peak_rss_mb"]})
    return out


#: the ratios a pair may have, in print order, and their labels
RATIO_LABELS = (("wall", "wall"), ("algorithm", "algorithm"), ("call", "over rank() call"), ("peak_rss", "peak RSS"))


def format_pair_ratios(ratios: list) -> str:
    """One line per :func:`pair_ratios` entry: ``peer / reference: wall 2.10x, peak RSS 0.50x`` (with
    ``algorithm`` and ``over rank() call`` between them for entries that have those keys); a peer that did not
    finish: ``peer / reference: wall > 1.40x (peer did not finish: out of memory (over 8.0 GB) after 95 s, at
    8.01 GB; reference 68.2 s, 1.10 GB)``.

    Parameters
    ----------
    ratios : list of dict

    Returns
    -------
    str
    """
    def x(v):
        return f"{v:.2f}x" if v is not None else "n/a"

    def line(r):
        if "status" in r:                                   # the peer did not finish, the reference did
            return (f"{r['peer']} / {r['reference']}: wall > {x(r['wall_at_least'])} ({r['peer']} {r['status']}; "
                    f"{r['reference']} {r['reference_wall_s']:.1f} s, {r['reference_peak_rss_mb'] / 1024:.2f} GB)")
        return f"{r['peer']} / {r['reference']}: " + ", ".join(f"{label} {x(r[key])}" for key, label in RATIO_LABELS
                                                               if key in r)

    return "\n".join(line(r) for r in ratios)


def format_ratio(r: dict) -> str:
    """One line for :func:`relief_ratios`.

    Parameters
    ----------
    r : dict

    Returns
    -------
    str
    """
    def x(v):
        return f"{v:.2f}x" if v is not None else "n/a"

    return (f"{r['peer']} / {r['spark_fr']}: wall {x(r['wall'])}, algorithm {x(r['algorithm'])}; "
            f"{r['peer']} algorithm / spark_fr warm rank() call {x(r['peer_algorithm_over_warm_call'])}, "
            f"{r['peer']} wall / warm rank() call {x(r['peer_wall_over_warm_call'])}")


def memory_rows(summary: dict, sizes: dict) -> list:
    """Peak RSS per (program, mode, rows), with the increase per 1,000 rows from the previous size.

    Parameters
    ----------
    summary : dict
        ``{peer name: summary dict}``.
    sizes : dict
        ``{peer name: (program, mode, rows)}``, sizes increasing within each (program, mode).

    Returns
    -------
    list of dict
        One row per entry of ``sizes``: ``peer``, ``program``, ``mode``, ``rows``, ``median_peak_rss_mb``,
        ``median_wall_s``, ``median_algo_s`` and, after the first size, ``mb_per_1000_rows_since_previous``
        and ``peak_ratio_to_previous``.
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
    """Plain-text table of :func:`memory_rows`, with the size of the data as 8-byte values.

    Parameters
    ----------
    rows : list of dict
    features : int

    Returns
    -------
    str
    """
    def f(v, fmt):
        return format(v, fmt) if v is not None else "-"

    head = (f"{'program':<10}{'mode':<11}{'rows':>7}{'data MB':>9}{'peak RSS MB':>13}{'x previous':>12}"
            f"{'MB / 1k rows':>14}{'wall s':>9}{'algo s':>9}")
    lines = [head, "-" * len(head)]
    for r in rows:
        data_mb = r["rows"] * features * 8 / 2 ** 20
        lines.append(f"{r['program']:<10}{r['mode']:<11}{r['rows']:>7}{data_mb:>9.1f}{f(r['median_peak_rss_mb'], '.0f'):>13}"
                     f"{f(r.get('peak_ratio_to_previous'), '.2f'):>12}{f(r.get('mb_per_1000_rows_since_previous'), '.1f'):>14}"
                     f"{f(r['median_wall_s'], '.1f'):>9}{f(r['median_algo_s'], '.2f'):>9}")
    return "\n".join(lines)


def write_json(path: str, report: dict, announce: bool = True) -> None:
    """Write a suite's report as indented JSON (values JSON cannot hold are written as text).

    Parameters
    ----------
    path : str
        Its folder is created if needed.
    report : dict
    announce : bool
        Print ``results written to PATH``.
    """
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(report, indent=1, default=str))
    if announce:
        print(f"results written to {path}")
