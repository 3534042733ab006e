"""Alternating the peers' commands for several rounds, and the per-peer summaries.

Sketch
------
:func:`run_rounds` runs peer 1, peer 2, ..., peer 1, peer 2, ... for the requested rounds, so that a slow
phase of the (shared) machine hits every peer alike. Each run gets a fresh folder, is measured by
:func:`measure.run_measured`, and, if it succeeded, its ranking is read back: its top-k against the k
planted features. One line per run is printed as it ends. :func:`summarise` reduces the runs of each
peer to medians (wall time, peak memory, optionally other timings) and whether the planted features
came out on top in every run; :func:`planted_by_score` counts them per score where a peer has several.
"""
from __future__ import annotations

import shutil
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from .measure import run_measured


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
            features among a run's top-k, k = the number planted).
        """
        ok = self.ok_runs()
        if not ok:
            return {"runs_ok": 0}
        walls = [r["wall_s"] for r in ok]
        return {"runs_ok": len(ok), "median_wall_s": statistics.median(walls), "min_wall_s": min(walls),
                "max_wall_s": max(walls), "median_peak_rss_mb": statistics.median(r["peak_rss_mb"] for r in ok),
                "top_planted_every_run": all(set(r["top"]) == planted for r in ok),
                "planted_in_top_min": min(len(set(r["top"]) & planted) for r in ok)}


def run_rounds(peers: list, repeats: int, workdir: Path, planted: list, timeout: float,
               skip_timed_out: bool = False) -> dict:
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

    Returns
    -------
    dict
        ``{peer name: PeerResult}``, in the order of ``peers``.
    """
    results = {p.name: PeerResult(p.name) for p in peers}
    k = len(planted)
    for rnd in range(1, repeats + 1):
        for peer in peers:
            if skip_timed_out and any(r.get("killed") == "timeout" for r in results[peer.name].runs):
                continue
            run_dir = workdir / "runs" / f"{peer.name}_r{rnd}"
            if run_dir.exists():
                shutil.rmtree(run_dir)
            res = run_measured(peer.command(run_dir), run_dir, timeout)
            res["round"] = rnd
            if res["returncode"] == 0:
                order, extra = peer.top(run_dir)
                res["top"] = order[:k]
                res.update(extra)
            results[peer.name].runs.append(res)
            status = f"top-{k} {'= planted' if set(res.get('top', [])) == set(planted) else res.get('top')}" \
                if res["returncode"] == 0 else f"FAILED (exit {res['returncode']}): {res['stderr_tail'][-300:]}"
            if res["returncode"] == 0 and not k:
                status = "ok"                                   # no planted features (real data)
            print(f"  round {rnd} {peer.name:<20} {res['wall_s']:8.1f} s  peak {res['peak_rss_mb'] / 1024:5.2f} GB  "
                  f"load {res['load_avg_1_before']:.1f}-{res['load_avg_1_after']:.1f}  {status}", flush=True)
    return results


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
