"""The result of an evaluation: its tables, their summaries and statistics, a plot, and the files written.

Tables (pandas, one row per ...)
--------------------------------
* ``table``: dataset x ranking x split x measure (``value``), with the task, protocol, k, training and test rows,
  the labelled rows (SSL) and the ranking's seconds. Cross-validations add the split ``pooled``.
* ``curves``: dataset x ranking x split x top-f (``value`` and ``relative`` to all features), with ``--curves``.
* ``similarity``: dataset x split x pair of rankings: the area under their Fuzzy Jaccard curve (``aufji``).
* ``importances``: dataset x split x ranking x feature: the importance and rank each ranking gave.

Summaries
---------
* :meth:`Evaluation.summary`: per dataset, measure and ranking, the value (the pooled one of a cross-validation,
  else the mean over the splits) and its spread, the wins, ties and losses against the baseline over the splits
  (values rounded to 3 significant digits first), the paired Wilcoxon p-value over the splits and its
  Benjamini-Hochberg correction over the rankings of the dataset and measure (``significant``: rejected at
  ``alpha``; ``better``: the ranking's value beats the baseline's).
* :meth:`Evaluation.comparison`: over datasets (a suite), per measure: the average ranks of the rankings and the
  baseline, Friedman's test, the Nemenyi critical difference, and every ranking's Wilcoxon test against the
  baseline over the datasets with the Benjamini-Hochberg correction (the thesis's "relevant" rankings); when Relief
  is among the rankings, also every other ranking's against Relief, corrected over those rankings (the papers'
  second baseline: the HMLC paper's "the ensemble scores outperform HMLC-Relief").

Files (:meth:`Evaluation.write`): ``evaluation.csv``, ``summary.csv``, ``comparison.csv`` (two or more datasets),
``curves.csv``, ``similarity.csv``, ``importances.csv`` and ``run.json`` (the runs' settings, timings, versions),
written to a temporary sibling and renamed into place; an existing output is replaced only when it holds nothing
but these files.
"""
from __future__ import annotations

import json
import os
import uuid
from datetime import datetime, timezone

import numpy as np
import pandas as pd

from ..errors import InputError
from ..tasks import get as get_task
from . import metrics as M
from . import statistics as S

#: the ranking that the comparison over datasets also tests every other ranking against (the papers' second
#: baseline)
RELIEF = "relief"
#: the files an evaluation writes (an output directory holding anything else is refused)
EVALUATION_FILES = frozenset({"evaluation.csv", "summary.csv", "comparison.csv", "curves.csv", "similarity.csv",
                              "importances.csv", "run.json"})


class Evaluation:
    """Tables of one or more evaluations (module sketch).

    Parameters
    ----------
    table, curves, similarity, importances : pandas.DataFrame
    runs : list of dict
        One record per dataset evaluated (settings, timings).
    """

    def __init__(self, table, curves, similarity, importances, runs: list, alpha: float = 0.05):
        self.table = table
        self.curves = curves
        self.similarity = similarity
        self.importances = importances
        self.runs = list(runs)
        self.alpha = alpha
        self.metadata = {"runs": self.runs}

    @classmethod
    def combine(cls, evaluations: list) -> "Evaluation":
        """One evaluation of several datasets (a suite)."""
        def cat(name):
            frames = [getattr(e, name) for e in evaluations if len(getattr(e, name))]
            return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

        return cls(cat("table"), cat("curves"), cat("similarity"), cat("importances"),
                   [r for e in evaluations for r in e.runs])

    @property
    def datasets(self) -> list:
        return list(dict.fromkeys(self.table["dataset"])) if len(self.table) else []

    @property
    def baseline(self) -> str:
        return self.runs[0].get("baseline", "uniform") if self.runs else "uniform"

    def main_measure(self) -> str:
        tasks = list(dict.fromkeys(self.table["task"]))
        return get_task(tasks[0]).evaluation.measure if tasks else ""

    # ----- per dataset --------------------------------------------------------------------------------------
    def summary(self, measures=None) -> pd.DataFrame:
        """Per dataset, measure and ranking: value, spread, wins / ties / losses, Wilcoxon and BH (module sketch)."""
        t = self.table
        if not len(t):
            return pd.DataFrame()
        if measures is not None:
            t = t[t.measure.isin([measures] if isinstance(measures, str) else list(measures))]
        out = []
        keys = ["dataset", "labelled", "measure"]
        for key, g in t.groupby(keys, sort=False, dropna=False):
            dataset, labelled, measure = key
            run = next((r for r in self.runs if r["dataset"] == dataset), {})
            baseline = run.get("baseline", "uniform")
            gib = M.greater_is_better(measure)
            per = g[g.split != "pooled"]
            wide = per.pivot_table(index="split", columns="ranking", values="value", aggfunc="first", sort=False)
            pooled = g[g.split == "pooled"].set_index("ranking")["value"]
            rows = []
            for name in dict.fromkeys(g.ranking):
                vals = wide[name].to_numpy(dtype=float) if name in wide else np.array([])
                if name in pooled.index:
                    value = float(pooled[name])
                else:
                    value = float(np.nanmean(vals)) if np.any(~np.isnan(vals)) else np.nan
                row = {"dataset": dataset, "labelled": labelled, "measure": measure, "ranking": name,
                       "value": value, "std": float(np.nanstd(vals, ddof=1)) if np.sum(~np.isnan(vals)) > 1 else np.nan,
                       "splits": int(np.sum(~np.isnan(vals))), "baseline": baseline}
                if name != baseline and baseline in wide:
                    b = wide[baseline].to_numpy(dtype=float)
                    a3, b3 = S.round_significant(vals), S.round_significant(b)
                    better = (a3 > b3) if gib else (a3 < b3)
                    worse = (a3 < b3) if gib else (a3 > b3)
                    base_value = float(pooled[baseline]) if baseline in pooled.index else float(np.nanmean(b))
                    row.update({"wins": int(better.sum()), "ties": int((a3 == b3).sum()), "losses": int(worse.sum()),
                                "p": S.wilcoxon(vals, b) if vals.size > 1 else np.nan,
                                "better": bool((value > base_value) if gib else (value < base_value))})
                rows.append(row)
            ps = [r.get("p", np.nan) for r in rows]
            reject, adjusted = S.benjamini_hochberg(ps, self.alpha)
            for r, rej, adj in zip(rows, reject, adjusted):
                if r["ranking"] != baseline and not np.isnan(r.get("p", np.nan)):
                    r["p_adjusted"] = adj
                    r["significant"] = bool(rej)
            out.extend(rows)
        cols = ["dataset", "labelled", "measure", "ranking", "value", "std", "splits", "baseline", "wins", "ties",
                "losses", "better", "p", "p_adjusted", "significant"]
        df = pd.DataFrame.from_records(out)
        return df.reindex(columns=cols)

    # ----- over datasets ------------------------------------------------------------------------------------
    def comparison(self, measure: str | None = None) -> dict:
        """Friedman, Nemenyi and Wilcoxon + BH over the datasets for ``measure`` (default: the main one).

        Returns
        -------
        dict
            ``measure``, ``datasets``, ``methods``, ``values`` (datasets x methods), ``ranks``, ``friedman``,
            ``cd``, ``wilcoxon`` (per ranking against the baseline: p, p_adjusted, significant, better),
            ``against`` ({reference: such tests}: the baseline, and Relief when evaluated: every ranking but the
            baseline against it), or ``{'skipped': reason}``.
        """
        measure = measure or self.main_measure()
        s = self.summary(measure)
        if not len(s):
            return {"measure": measure, "skipped": "no values"}
        wide = s.pivot_table(index=["dataset", "labelled"], columns="ranking", values="value", aggfunc="first",
                             sort=False, dropna=False)
        wide = wide.dropna(axis=1, how="all").dropna(axis=0, how="any")
        if wide.shape[0] < 2:
            return {"measure": measure, "skipped": f"{wide.shape[0]} dataset(s) with every ranking; the comparison "
                                                   f"over datasets needs at least 2"}
        methods = list(wide.columns)
        gib = M.greater_is_better(measure)
        values = wide.to_numpy(dtype=float)
        fr = S.friedman(values, gib)
        cd = S.nemenyi_cd(len(methods), values.shape[0], self.alpha)
        baseline = self.baseline
        against = {}
        for ref in (baseline, RELIEF):
            if ref in methods and ref not in against:
                names = [m for m in methods if m not in (ref, baseline)] if ref != baseline else \
                    [m for m in methods if m != ref]
                against[ref] = self._paired_tests(values, methods, ref, names, gib)
        return {"measure": measure, "datasets": [f"{d}" if pd.isna(l) else f"{d} (L={int(l)})" for d, l in wide.index],
                "methods": methods, "values": values, "ranks": fr["ranks"], "friedman": fr, "cd": cd,
                "friedman_rejects": fr["p"] < self.alpha, "wilcoxon": against.get(baseline, {}), "against": against,
                "baseline": baseline}

    def _paired_tests(self, values: np.ndarray, methods: list, ref: str, names: list, gib: bool) -> dict:
        """{name: p, p_adjusted, significant, better}: Wilcoxon of each name against ``ref`` over the datasets
        (values rounded to 3 significant digits, as the summary's), Benjamini-Hochberg over ``names``."""
        b = values[:, methods.index(ref)]
        ps = [S.wilcoxon(S.round_significant(values[:, methods.index(m)]), S.round_significant(b)) for m in names]
        reject, adjusted = S.benjamini_hochberg(ps, self.alpha)
        tests = {}
        for m, p, rej, adj in zip(names, ps, reject, adjusted):
            a = values[:, methods.index(m)]
            tests[m] = {"p": p, "p_adjusted": float(adj), "significant": bool(rej),
                        "better": bool(np.mean(a) > np.mean(b)) if gib else bool(np.mean(a) < np.mean(b))}
        return tests

    def comparison_table(self) -> pd.DataFrame:
        """:meth:`comparison` of every measure as one table (measure x method): average rank, mean value, Friedman,
        CD, the tests against the baseline (``p``, ``p_adjusted``, ``significant``, ``better``) and against Relief
        (the same columns suffixed ``_vs_relief``)."""
        rows = []
        for measure in dict.fromkeys(self.table.measure):
            c = self.comparison(measure)
            if "skipped" in c:
                continue
            for m, r in zip(c["methods"], c["ranks"]):
                w = c["wilcoxon"].get(m, {})
                row = {"measure": measure, "ranking": m, "average_rank": float(r),
                       "mean_value": float(np.mean(c["values"][:, c["methods"].index(m)])),
                       "datasets": len(c["datasets"]), "friedman_p": c["friedman"]["p"],
                       "nemenyi_cd": c["cd"], "p": w.get("p"), "p_adjusted": w.get("p_adjusted"),
                       "significant": w.get("significant"), "better": w.get("better")}
                if RELIEF in c["against"] and RELIEF != c["baseline"]:
                    v = c["against"][RELIEF].get(m, {})
                    row.update({f"{k}_vs_relief": v.get(k) for k in ("p", "p_adjusted", "significant", "better")})
                rows.append(row)
        return pd.DataFrame.from_records(rows)

    # ----- text ---------------------------------------------------------------------------------------------
    def to_text(self, measures=None) -> str:
        """The summary of the main measure(s) as printable text."""
        if not len(self.table):
            return "no results"
        measures = measures or [self.main_measure()]
        s = self.summary(measures)
        lines = []
        for (ds, L, measure), g in s.groupby(["dataset", "labelled", "measure"], sort=False, dropna=False):
            run = next((r for r in self.runs if r["dataset"] == ds), {})
            head = f"{ds}: {measure} ({'higher' if M.greater_is_better(measure) else 'lower'} is better), " \
                   f"{run.get('protocol', '')}, k = {run.get('k', '')}"
            lines.append(head + (f", L = {int(L)}" if not pd.isna(L) else ""))
            for _, r in g.iterrows():
                extra = ""
                if r["ranking"] != r["baseline"] and not pd.isna(r.get("wins")):
                    sig = ("significantly " + ("better" if r["better"] else "worse")) if r["significant"] \
                        else "not significant"
                    p = "" if pd.isna(r["p_adjusted"]) else f", BH p = {r['p_adjusted']:.3g} ({sig})"
                    wtl = f"{int(r['wins'])}/{int(r['ties'])}/{int(r['losses'])}"
                    extra = f"  wins/ties/losses vs {r['baseline']} {wtl}{p}"
                spread = "" if pd.isna(r["std"]) else f" +- {r['std']:.3f}"
                lines.append(f"  {r['ranking']:<22} {r['value']:.4f}{spread}{extra}")
        if len(self.datasets) > 1:
            c = self.comparison()
            if "skipped" not in c:
                lines.append(f"over {len(c['datasets'])} datasets ({c['measure']}): Friedman p = "
                             f"{c['friedman']['p']:.3g}, Nemenyi CD = {c['cd']:.3f}; average ranks: " +
                             ", ".join(f"{m} {r:.2f}" for m, r in sorted(zip(c["methods"], c["ranks"]),
                                                                          key=lambda x: x[1])))
                for ref, tests in c["against"].items():
                    if tests:
                        lines.append(f"  against {ref} (Wilcoxon over the datasets, BH over {len(tests)}): " +
                                     ", ".join(f"{m} {'+' if t['better'] else '-'} p = {t['p']:.3g}"
                                               f"{' (significant)' if t['significant'] else ''}"
                                               for m, t in sorted(tests.items(), key=lambda x: x[1]["p"])))
        return "\n".join(lines)

    # ----- plot ---------------------------------------------------------------------------------------------
    def plot(self, path: str | None = None, kind: str = "auto"):
        """A figure: ``'cd'`` (critical-difference diagram over datasets), ``'curves'`` (top-f curves),
        ``'splits'`` (the main measure per split); ``'auto'``: cd for two or more datasets, else curves when
        computed, else splits. Saved as PNG at ``path`` when given; the (closed) figure is returned."""
        from . import plots

        if kind == "auto":
            kind = "cd" if len(self.datasets) > 1 else ("curves" if len(self.curves) else "splits")
        measure = self.main_measure()
        if kind == "cd":
            c = self.comparison(measure)
            if "skipped" in c:
                raise InputError(f"no critical-difference diagram: {c['skipped']}")
            title = (f"{measure}: {len(c['datasets'])} datasets, Friedman p = {c['friedman']['p']:.3g}"
                     + ("" if c["friedman_rejects"] else " (not rejected: all joined)"))
            fig = plots.cd_diagram(c["methods"], c["ranks"], c["cd"], title, rejected=c["friedman_rejects"])
        elif kind == "curves":
            if not len(self.curves):
                raise InputError("no curves were computed (add --curves)")
            fig = plots.curves_figure(self.curves, self.baseline, "top-f curves")
        elif kind == "splits":
            fig = plots.splits_figure(self.table, measure, self.baseline, f"{measure} per split")
        else:
            raise InputError(f"plot kind must be auto, cd, curves or splits, not '{kind}'")
        if path:
            plots.save_png(fig, path, ",".join(self.datasets))
        return fig

    # ----- files --------------------------------------------------------------------------------------------
    def record(self) -> dict:
        """``run.json``: the runs' settings and timings, the main comparison, versions, when."""
        from ..api import versions

        rec = {"run_id": uuid.uuid4().hex, "created_at": datetime.now(timezone.utc).isoformat(),
               "kind": "evaluation", "runs": self.runs, "versions": versions(), "alpha": self.alpha}
        if len(self.datasets) > 1:
            c = self.comparison()
            rec["comparison"] = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in c.items()
                                 if k not in ("friedman",)}
            if "friedman" in c:
                rec["comparison"]["friedman"] = {k: (v.tolist() if isinstance(v, np.ndarray) else v)
                                                 for k, v in c["friedman"].items()}
        return rec

    def write(self, directory: str) -> str:
        """Write the tables and ``run.json`` to ``directory`` (a local path or a URI, :mod:`spark_fr.io.locations`)
        through a hidden sibling renamed into place; an earlier evaluation there is replaced. Returns the path."""
        from ..io.ownership import at, commit_directory, make_parents, remove_created, sibling, stage_directory
        from ..runtime.signals import deferred

        out, files = at(directory, None, "--output")
        check_output(directory)
        made: list = []
        make_parents(out, files, made)
        tmp = sibling(out, "tmp")
        done = False
        try:
            stage_directory(tmp, files, self._write_files)
            with deferred():
                commit_directory(tmp, out, files, foreign=_foreign, ours=EVALUATION_FILES)
                done = True
        finally:
            if not done:
                files.rmtree(tmp)
                remove_created(made, files)
        return out.path

    def _write_files(self, tmp: str) -> None:
        self.table.to_csv(os.path.join(tmp, "evaluation.csv"), index=False)
        self.summary().to_csv(os.path.join(tmp, "summary.csv"), index=False)
        if len(self.datasets) > 1:
            self.comparison_table().to_csv(os.path.join(tmp, "comparison.csv"), index=False)
        for name in ("curves", "similarity", "importances"):
            frame = getattr(self, name)
            if len(frame):
                frame.to_csv(os.path.join(tmp, f"{name}.csv"), index=False)
        with open(os.path.join(tmp, "run.json"), "w", encoding="utf-8") as fh:
            json.dump(self.record(), fh, indent=2, default=_json_default)


def _json_default(v):
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (np.bool_,)):
        return bool(v)
    return str(v)


def _foreign(directory, files) -> list:
    """Entries of a directory an evaluation of ours did not write (all of them without its ``run.json``)."""
    from ..io.ownership import foreign_entries

    return foreign_entries(directory, files, ours=EVALUATION_FILES)


def check_output(directory: str) -> None:
    """Refuse, before any work, an output that is a file, holds files an evaluation did not write, or cannot be
    created (a local path or a URI)."""
    from ..io.ownership import at, check_creatable, shown

    loc, files = at(directory, None, "--output")
    if files.exists(loc) and not files.isdir(loc):
        raise InputError(f"--output {directory} exists and is not a directory; choose a new path")
    if files.isdir(loc):
        foreign = _foreign(loc, files)
        if foreign:
            raise InputError(f"--output {directory} holds files an evaluation did not write ({shown(foreign)}); "
                             f"choose a new or empty directory")
    check_creatable(loc, "--output", files)
