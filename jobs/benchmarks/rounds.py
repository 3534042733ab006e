"""Alternating the peers' commands for several rounds, and the per-peer summaries.

Sketch
------
:func:`run_rounds` runs peer 1, peer 2, ..., peer 1, peer 2, ... for the requested rounds, so that a slow
phase of the (shared) machine hits every peer alike. Each run gets a fresh folder, is measured by
:func:`measure.run_measured`, and, if it succeeded, its ranking is read back: its top-k against the k
planted features. One line per run is printed as it ends. A run killed at the time or memory limit, or dead of
an out-of-memory error, "did not finish" (:func:`measure.classify`): it is reported with the time and memory it
had reached, and a peer that ran out of memory is not started again. :func:`summarise` reduces the runs of each
peer to medians (wall time, peak memory, optionally other timings) and whether the planted features
came out on top in every run; :func:`planted_by_score` counts them per score where a peer has several;
:func:`add_per_tree` gives each run its seconds per tree; :func:`exit_code` is the suites' exit code.
"""
from __future__ import annotations

import shutil
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from .measure import classify, run_measured


@dataclass
class PeerResult:
    """The runs of one peer and their summary.

    Attributes
    ----------
    name : str
    runs : list of dict
        One dict per run: :func:`measure.run_measured`'s facts, ``round``, and for a successful run ``top``
        and the peer's extra facts.
    """

    name: str
    runs: list = field(default_factory=list)

    def ok_runs(self) -> list:
        """The runs that exited with 0."""
        return [r for r in self.runs if r["returncode"] == 0]

    def summary(self, planted: set) -> dict:
        """Medians over the successful runs.

        Parameters
        ----------
        planted : set of str
            The planted relevant features.

        Returns
        -------
        dict
            ``runs_ok`` and, if any run succeeded, ``median_wall_s``, ``min_wall_s``, ``max_wall_s``,
            ``median_peak_rss_mb``, ``top_planted_every_run`` and ``planted_in_top_min`` (the fewest planted
            features among a run's top-k, k = the number planted); without a successful run, the last run's
            ``status`` (:func:`measure.classify`), ``reached_wall_s`` and ``reached_peak_rss_mb``.
        """
        ok = self.ok_runs()
        if not ok:
            last = self.runs[-1] if self.runs else {}
            status = last.get("status") or (f"failed (exit {last.get('returncode')})" if last else "not run")
            return {"runs_ok": 0, "status": status, "reached_wall_s": last.get("wall_s"),
                    "reached_peak_rss_mb": last.get("peak_rss_mb")}
        walls = [r["wall_s"] for r in ok]
        return {"runs_ok": len(ok), "median_wall_s": statistics.median(walls), "min_wall_s": min(walls),
                "max_wall_s": max(walls), "median_peak_rss_mb": statistics.median(r["peak_rss_mb"] for r in ok),
                "top_planted_every_run": all(set(r["top"]) == planted for r in ok),
                "planted_in_top_min": min(len(set(r["top"]) & planted) for r in ok)}


def run_rounds(peers: list, repeats: int, workdir: Path, planted: list, timeout: float,
               skip_timed_out: bool = False, max_gb: float | None = None) -> dict:
    """Alternate the peers' commands for ``repeats`` rounds.

    Parameters
    ----------
    peers : list of peers.Peer
    repeats : int
    workdir : Path
        Each run writes into ``workdir/runs/<peer>_r<round>`` (emptied first).
    planted : list of str
        The planted features; k = its length is the size of the recorded top.
    timeout : float
        Seconds per run.
    skip_timed_out : bool
        A peer killed for time is not started again in the later rounds (they would only repeat the timeout).
    max_gb : float, optional
        Peak RSS (GB) of a run's process tree above which it is killed (default: no limit).

    Returns
    -------
    dict
        ``{peer name: PeerResult}``, in the order of ``peers``.
    """
    results = {p.name: PeerResult(p.name) for p in peers}
    k = len(planted)
    for rnd in range(1, repeats + 1):
        for peer in peers:
            if _not_again(results[peer.name].runs, skip_timed_out):
                continue
            run_dir = workdir / "runs" / f"{peer.name}_r{rnd}"
            if run_dir.exists():
                shutil.rmtree(run_dir)
            res = run_measured(peer.command(run_dir), run_dir, timeout, None if max_gb is None else max_gb * 1024)
            res["round"] = rnd
            res["status"] = classify(res, timeout, max_gb)
            if res["returncode"] == 0:
                order, extra = peer.top(run_dir)
                res["top"] = order[:k]
                res.update(extra)
            results[peer.name].runs.append(res)
            print(f"  round {rnd} {peer.name:<20} {res['wall_s']:8.1f} s  peak {res['peak_rss_mb'] / 1024:5.2f} GB  "
                  f"load {res['load_avg_1_before']:.1f}-{res['load_avg_1_after']:.1f}  {_run_note(res, planted)}",
                  flush=True)
    return results


def _not_again(runs: list, skip_timed_out: bool) -> bool:
    """Whether a peer with these runs is not started again: it ran out of memory (or timed out, if asked)."""
    return any(r["status"].startswith("did not finish: out of memory")
               or (skip_timed_out and r.get("killed") == "timeout") for r in runs)


def _run_note(res: dict, planted: list) -> str:
    """The end of a run's printed line: its top against the planted features, or why it did not finish."""
    k = len(planted)
    if res["returncode"] != 0 or res.get("killed"):
        return res["status"] if res["status"].startswith("did not finish") else \
            f"FAILED (exit {res['returncode']}): {res['stderr_tail'][-300:]}"
    if not k:
        return "ok"                                             # no planted features (real data)
    return f"top-{k} {'= planted' if set(res.get('top', [])) == set(planted) else res.get('top')}"


def planted_by_score(result: PeerResult, planted: list) -> dict:
    """The fewest planted features among the top-k of each score, over a peer's successful runs.

    Parameters
    ----------
    result : PeerResult
    planted : list of str

    Returns
    -------
    dict
        ``{score: count}`` from the runs' ``tops`` (``{score: top-k}``, spark_fr and CLUS); a peer without
        them (scikit-learn, MLlib) gives ``{"impurity": count}`` from its ``top``.
    """
    hits = {}
    for run in result.ok_runs():
        for score, top in run.get("tops", {"impurity": run["top"]}).items():
            n = len(set(top) & set(planted))
            hits[score] = min(hits.get(score, n), n)
    return hits


def _median(runs: list, key: str):
    values = [r[key] for r in runs if isinstance(r.get(key), (int, float))]
    return round(statistics.median(values), 3) if values else None


def summarise(results: dict, planted: list, reference: str | None = None, medians: tuple = ()) -> dict:
    """Per-peer summaries.

    Parameters
    ----------
    results : dict
        ``{name: PeerResult}``.
    planted : list of str
    reference : str, optional
        A peer name: adds ``ratio_to_spark_fr``, the peer's median wall time over the reference's.
    medians : tuple of str
        Run keys whose median over the successful runs is added as ``median_<key>`` (when any run has it).

    Returns
    -------
    dict
        ``{name: PeerResult.summary(...) plus the medians and the ratio}``.
    """
    summary = {}
    for name, res in results.items():
        s = res.summary(set(planted))
        for key in medians:
            value = _median(res.ok_runs(), key)
            if value is not None:
                s[f"median_{key}"] = value
        summary[name] = s
    ref = summary.get(reference, {}).get("median_wall_s") if reference else None
    for s in summary.values():
        if ref and "median_wall_s" in s:
            s["ratio_to_spark_fr"] = round(s["median_wall_s"] / ref, 2)
    return summary


def per_tree_seconds(run: dict, trees: int) -> float | None:
    """The seconds one tree of a run cost: its forest's time over the trees, when the run reported one.

    Parameters
    ----------
    run : dict
        A successful run: spark_fr's carry ``spark_fr_timings`` (its ``trees_s``, the trees phase), a peer
        script's ``fit_s`` (fitting the whole forest; the libraries give no time per tree).
    trees : int
        Trees per forest.

    Returns
    -------
    float or None
    """
    seconds = run.get("spark_fr_timings", {}).get("trees_s", run.get("fit_s"))
    return round(seconds / trees, 4) if isinstance(seconds, (int, float)) and trees else None


def add_per_tree(results: dict, trees: int) -> None:
    """Give every successful run its ``per_tree_s`` (:func:`per_tree_seconds`), in place.

    Parameters
    ----------
    results : dict
        ``{name: PeerResult}``.
    trees : int
    """
    for res in results.values():
        for run in res.ok_runs():
            value = per_tree_seconds(run, trees)
            if value is not None:
                run["per_tree_s"] = value


def exit_code(summary: dict) -> int:
    """A suite's exit code: 1 if a peer failed in every round, or a spark_fr peer never finished; 0 otherwise.

    A peer that did not finish (killed at the memory or time limit, or out of memory) is a result, reported
    in the table, and does not fail the suite, unless it is spark_fr's own.

    Parameters
    ----------
    summary : dict
        From :func:`summarise`.

    Returns
    -------
    int
    """
    return int(any(not s.get("runs_ok") and (name.startswith("spark_fr")
                                             or not s.get("status", "").startswith("did not finish"))
                   for name, s in summary.items()))
