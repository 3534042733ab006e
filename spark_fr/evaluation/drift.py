"""Drift of feature rankings between runs of a rankings table (scheduled rankings in a data lake).

Sketch
------
    runs      <- the runs of the table (spark_fr.io.ranking_runs), oldest first; the chosen ones: --runs, or
                 the last N
    rows      <- only the chosen runs' rows (level 'feature' of a relational ranking)
    rankings  <- per run, score and target: the features ordered by rank
    pairs     <- each run against the one before it (baseline 'previous') or against the first ('first')
    per pair and ranking (score, target):
        FJI curve over the top-k sets, k = 1..K, and its area (spark_fr.evaluation.similarity)
        drift = 1 - area
        features entering / leaving the top K; rank changes of the features in either top K
    heat map  <- ranks over the chosen runs of the features in any run's top K

Decisions
---------
* **Which rankings are compared**: each (score, target) that every chosen run has. By default every common
  score and the joint ranking (target ``__all__``) only, when every run has it (else every common target): a
  table with per-target rankings of hundreds of labels compares its joint rankings unless targets are named.
  A score or target named that a run lacks is an error, as are runs without a score in common.
* **The drift number** (what ``--fail-above`` compares): ``drift = 1 - AUFJI``, the area under the FJI curve of
  the top-k sets for k = 1..K (normalised to [0, 1]). 0: the same top K with proportional importances; 1: no
  top-K feature in common, and none of either top K has any importance in the other ranking. Scale-free (a
  rerun whose importances all doubled has drift 0) and weighted towards the top (the best features belong to
  every top-k set of the curve, the K-th only to the last). The report's :attr:`DriftReport.max_drift` is the
  largest drift over the compared pairs of runs and rankings.
* **K** is ``top``, or the longer ranking's length when that is shorter.
* **Runs** are ordered by ``created_at``, then ``run_id``; ``last`` = N takes the N newest (all of them when
  fewer exist, at least 2); ``runs`` takes the named ones in the order given (the first is the oldest).
* **Rank changes** are listed for the features in the top K of either run of a pair; ``change`` is
  ``rank_before - rank_after`` (positive: moved up). A feature a run does not have has no rank there.
* **A run id in several sources** must have the same rows in each (then it is read once); different rows are an
  error naming the run and two sources, before any comparison (:class:`spark_fr.io.ranking_runs.UnionRuns`).
* **Outputs** (:meth:`DriftReport.publish`, ``write``, ``plot``): the tables, ``drift.json`` and the heat map are
  written together, by renames, and replace only a drift output spark_fr wrote, proven by content (the mark
  and hashes ``drift.json`` carries, the PNG mark): :mod:`spark_fr.io.drift_outputs`.
"""
from __future__ import annotations

import io
import platform
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import InputError
from ..io import drift_outputs
from ..io.locations import locate
from ..io.ranking_runs import open_runs
from ..io.writers import PNG_MARK
from ..version import __version__
from .similarity import fji_area, fuzzy_jaccard_curve

ALL_TARGETS = "__all__"
BASELINES = ("previous", "first")
LEVELS = ("feature", "attribute", "relation")
#: the files :meth:`DriftReport.write` puts in its folder (it replaces them only where its drift.json proves
#: them its own: spark_fr.io.drift_outputs)
DRIFT_FILES = drift_outputs.FILES
#: rows of a heat map panel at most (features), panels at most
MAX_HEAT_ROWS, MAX_PANELS = 40, 12


def _positive(value, name: str, least: int = 1) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < least:
        raise InputError(f"{name} must be an integer >= {least}, not {value!r}")
    return int(value)


def _names(value, what: str) -> list | None:
    if value is None:
        return None
    items = [v.strip() for v in value.split(",")] if isinstance(value, str) else [str(v).strip() for v in value]
    items = [v for v in items if v]
    if not items:
        raise InputError(f"{what}: an empty list")
    return list(dict.fromkeys(items))


def _shown(names, limit: int = 6) -> str:
    names = list(names)
    return ", ".join(names[:limit]) + (f", ... ({len(names)} in all)" if len(names) > limit else "")


@dataclass
class DriftReport:
    """The drift between runs of a rankings table (see the module sketch).

    Attributes
    ----------
    runs : pandas.DataFrame
        The compared runs in order: ``run_id``, ``created_at``.
    top : int
        K, the length of the FJI curves and of the top sets.
    summary : pandas.DataFrame
        One row per pair of runs and ranking: ``run_before``, ``run_after``, ``score``, ``target``, ``k``,
        ``fji_area``, ``drift`` (= 1 - fji_area), ``fji_top`` (FJI of the top-K sets), ``entered``, ``left``
        (the features entering and leaving the top K, comma-separated, best first), ``n_entered``, ``n_left``.
    curves : pandas.DataFrame
        The FJI curves: ``run_before``, ``run_after``, ``score``, ``target``, ``k``, ``fji``.
    changes : pandas.DataFrame
        Per pair and ranking, the features in either top K: ``feature``, ``rank_before``, ``rank_after``,
        ``change`` (rank_before - rank_after; positive = moved up), ``importance_before``, ``importance_after``,
        ``top_before``, ``top_after``.
    ranks : pandas.DataFrame
        The ranks of the features in any run's top K, per ranking and run: ``score``, ``target``, ``feature``,
        ``run_id``, ``rank``, ``importance`` (the heat map's data).
    source : str
    """

    runs: pd.DataFrame
    top: int
    summary: pd.DataFrame
    curves: pd.DataFrame
    changes: pd.DataFrame
    ranks: pd.DataFrame
    source: str = ""
    notes: list = field(default_factory=list)

    # ----- the number a scheduler checks -----------------------------------------------------------------
    @property
    def max_drift(self) -> float:
        """The largest ``drift`` (1 - area under the FJI curve) over the compared pairs and rankings."""
        return float(self.summary["drift"].max())

    def worst(self) -> pd.Series:
        """The summary row of the largest drift (the latest pair first among equals)."""
        s = self.summary.iloc[::-1]
        return s.loc[s["drift"].idxmax()]

    def exceeds(self, threshold: float) -> bool:
        """Whether :attr:`max_drift` is above ``threshold`` (strictly)."""
        return self.max_drift > float(threshold)

    # ----- text ------------------------------------------------------------------------------------------
    def to_text(self, moves: int = 5) -> str:
        """A readable report: per pair and ranking, the FJI area and drift, what entered and left the top K,
        and the largest rank changes among the top-K features."""
        lines = [f"drift of {len(self.runs)} runs of {self.source} (top {self.top}; drift = 1 - area under the "
                 f"Fuzzy Jaccard curve of the top-k sets, k = 1..{self.top}):"]
        for _, r in self.runs.iterrows():
            lines.append(f"  run {r['run_id']}  {pd.Timestamp(r['created_at']).isoformat()}")
        for (before, after), group in self.summary.groupby(["run_before", "run_after"], sort=False):
            lines.append(f"{before} -> {after}")
            for _, r in group.iterrows():
                lines.append(f"  {r['score']} [{r['target']}]: FJI area {r['fji_area']:.3f}, drift {r['drift']:.3f}, "
                             f"FJI of the top {r['k']} {r['fji_top']:.3f}")
                if r["n_entered"] or r["n_left"]:
                    lines.append(f"    entered the top {r['k']}: {r['entered'] or '-'}")
                    lines.append(f"    left the top {r['k']}: {r['left'] or '-'}")
                c = self.changes
                c = c[(c["run_before"] == before) & (c["run_after"] == after) & (c["score"] == r["score"])
                      & (c["target"] == r["target"]) & c["change"].notna() & (c["change"] != 0)]
                if len(c) and moves:
                    c = c.reindex(c["change"].abs().sort_values(ascending=False, kind="stable").index).head(moves)
                    shown = ", ".join(f"{f} {int(b)}->{int(a)}" for f, b, a in
                                      zip(c["feature"], c["rank_before"], c["rank_after"]))
                    lines.append(f"    largest moves: {shown}")
        lines.extend(f"note: {n}" for n in self.notes)
        w = self.worst()
        lines.append(f"max drift {self.max_drift:.3f} ({w['score']} [{w['target']}], {w['run_before']} -> "
                     f"{w['run_after']})")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"DriftReport(runs={list(self.runs['run_id'])}, top={self.top}, rankings={len(self.summary)}, "
                f"max_drift={self.max_drift:.3f})")

    def __str__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(self.to_text())}</pre>"

    # ----- heat map --------------------------------------------------------------------------------------
    def plot(self, path: str | None = None, rows: int = MAX_HEAT_ROWS):
        """A heat map per ranking (score, target) of the ranks of the top features over the runs.

        Rows: the features in the top K of any run, ordered by their rank in the newest run (features it lacks
        last), at most ``rows``; columns: the runs, oldest first; colour: the rank (log scale; grey: the run
        lacks the feature), written in the cell when the grid is small.

        Parameters
        ----------
        path : str, optional
            Save the figure as PNG here (atomically; an existing file is replaced only if it carries spark_fr's
            PNG mark: :mod:`spark_fr.io.drift_outputs`).
        rows : int
            Features per panel at most.

        Returns
        -------
        matplotlib.figure.Figure
            Closed (not in pyplot's list of open figures), as :meth:`spark_fr.ranking.Ranking.plot`'s.
        """
        if path:
            drift_outputs.check(None, path)  # before drawing
        fig = self._figure(_positive(rows, "rows"))
        if path:
            drift_outputs.publish(None, path, png=_png(fig, self.runs))
        return fig

    def _figure(self, rows: int):
        """The heat map of :meth:`plot`."""
        from matplotlib.colors import LogNorm

        from ..ranking import _pyplot

        plt = _pyplot()
        keys = list(dict.fromkeys(zip(self.summary["score"], self.summary["target"])))[:MAX_PANELS]
        run_ids = list(self.runs["run_id"])
        labels = [_run_label(r, t) for r, t in zip(self.runs["run_id"], self.runs["created_at"])]
        grids = [self._grid(score, target, run_ids, rows) for score, target in keys]
        height = max(g.shape[0] for g in grids)
        ncols = min(len(keys), 3)
        nrows = -(-len(keys) // ncols)
        width = max(6.0, ncols * (2.6 + 0.8 * len(run_ids)) + 1.0)
        fig, axes = plt.subplots(nrows, ncols, squeeze=False, layout="constrained",
                                 figsize=(width, nrows * (1.6 + 0.24 * height)))
        vmax = max(2.0, max(float(np.nanmax(g.to_numpy(dtype=float))) if g.size else 2.0 for g in grids))
        cmap = plt.get_cmap("viridis").with_extremes(bad="#dddddd")
        image = None
        for ax, (score, target), grid in zip(axes.ravel(), keys, grids):
            values = np.ma.masked_invalid(grid.to_numpy(dtype=float))
            image = ax.imshow(values, aspect="auto", cmap=cmap, norm=LogNorm(vmin=1, vmax=vmax))
            ax.set_xticks(range(len(run_ids)))
            ax.set_xticklabels(labels, fontsize=7, rotation=30, ha="right")
            ax.set_yticks(range(grid.shape[0]))
            ax.set_yticklabels(grid.index, fontsize=7)
            ax.set_title(f"{score}" + ("" if target == ALL_TARGETS else f" [{target}]"), fontsize=9)
            if grid.size <= 600:
                for (i, j), v in np.ndenumerate(grid.to_numpy(dtype=float)):
                    text = "–" if np.isnan(v) else str(int(v))
                    dark = not np.isnan(v) and v > vmax ** 0.5
                    ax.text(j, i, text, ha="center", va="center", fontsize=6, color="black" if dark else "white")
            inside = int((grid[run_ids[-1]] <= self.top).sum())
            if 0 < inside < grid.shape[0]:  # the newest run's top K above the line
                ax.axhline(inside - 0.5, color="white", lw=1.2, ls="--")
        for ax in axes.ravel()[len(keys):]:
            ax.axis("off")
        if image is not None:
            ticks = [t for t in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 100000) if t <= vmax]
            bar = fig.colorbar(image, ax=axes, shrink=0.8, label="rank (1 = best)", ticks=ticks)
            bar.ax.set_yticklabels([str(t) for t in ticks])
            bar.ax.minorticks_off()
        fig.suptitle(f"Ranks of the top {self.top} features over {len(run_ids)} runs\nmax drift "
                     f"{self.max_drift:.3f} (1 - area under the FJI curve)", fontsize=10)
        plt.close(fig)
        return fig

    def _grid(self, score: str, target: str, run_ids: list, rows: int) -> pd.DataFrame:
        """features x runs of ranks (NaN: absent) for one ranking."""
        r = self.ranks[(self.ranks["score"] == score) & (self.ranks["target"] == target)]
        grid = r.pivot_table(index="feature", columns="run_id", values="rank", aggfunc="min")
        grid = grid.reindex(columns=run_ids)
        newest = grid[run_ids[-1]].fillna(np.inf)
        best = grid.min(axis=1)
        order = pd.DataFrame({"newest": newest, "best": best, "name": grid.index}).sort_values(["newest", "best",
                                                                                                "name"])
        return grid.loc[order.index[:rows]]

    # ----- files -----------------------------------------------------------------------------------------
    def tables(self) -> dict:
        """The CSV tables of :meth:`write`: ``{file name: bytes}``."""
        frames = {"summary.csv": self.summary, "fji.csv": self.curves, "changes.csv": self.changes,
                  "ranks.csv": self.ranks}
        return {name: frame.to_csv(index=False).encode("utf-8") for name, frame in frames.items()}

    def record(self) -> dict:
        """What ``drift.json`` says: the source, K, the max drift and its pair, the runs, the notes, versions
        (spark_fr's mark and the tables' hashes are added when it is written, :mod:`spark_fr.io.drift_outputs`)."""
        w = self.worst()
        return {"source": self.source, "top": self.top, "max_drift": self.max_drift,
                "worst": {k: (v.item() if hasattr(v, "item") else v) for k, v in w.items()},
                "runs": [{"run_id": r, "created_at": pd.Timestamp(t).isoformat()}
                         for r, t in zip(self.runs["run_id"], self.runs["created_at"])],
                "drift": "1 - area under the Fuzzy Jaccard curve of the top-k sets, k = 1..top",
                "notes": self.notes, "created_at": pd.Timestamp.now(tz="UTC").isoformat(),
                "versions": {"spark_fr": __version__, "pandas": pd.__version__, "numpy": np.__version__,
                             "python": platform.python_version()}}

    def publish(self, output: str | None = None, plot: str | None = None, rows: int = MAX_HEAT_ROWS) -> None:
        """Write the tables and ``drift.json`` to the folder ``output`` and the heat map to ``plot``, together: each
        absent, empty or written by spark_fr before (proven by its mark), else nothing is written
        (:mod:`spark_fr.io.drift_outputs`).

        Parameters
        ----------
        output : str, optional
            The folder of ``summary.csv``, ``fji.csv``, ``changes.csv``, ``ranks.csv`` and ``drift.json``.
        plot : str, optional
            The heat map's PNG file (:meth:`plot`).
        rows : int
            Features per heat map panel at most.

        Raises
        ------
        spark_fr.errors.InputError
            An output that cannot be written or holds what spark_fr did not write (one line naming it).
        """
        output, plot = output or None, plot or None
        drift_outputs.check(output, plot)
        drift_outputs.publish(output, plot, self.tables() if output else None, self.record() if output else None,
                              _png(self._figure(_positive(rows, "rows")), self.runs) if plot else None)

    def write(self, directory: str) -> str:
        """Write ``summary.csv``, ``fji.csv``, ``changes.csv``, ``ranks.csv`` and ``drift.json`` (the runs, K,
        the max drift, spark_fr's mark) to ``directory``: absent, empty, or a drift output spark_fr wrote (it is
        replaced), else nothing is written (:meth:`publish`).

        Returns
        -------
        str
            The directory written.
        """
        self.publish(output=directory)
        return locate(directory, "--output").path


def _png(fig, runs: pd.DataFrame) -> bytes:
    """``fig`` as PNG, carrying spark_fr's mark (so that a later run may replace the file)."""
    buf = io.BytesIO()
    mark = ",".join(runs["run_id"].astype(str).tolist()[-2:])
    fig.savefig(buf, dpi=110, format="png", metadata={PNG_MARK: f"drift {mark}"})
    return buf.getvalue()


def _run_label(run_id: str, created_at) -> str:
    rid = str(run_id)
    short = rid if len(rid) <= 14 else rid[:12] + "…"
    return f"{short}\n{pd.Timestamp(created_at).strftime('%Y-%m-%d %H:%M')}"


# ----------------------------------------------------------------------------------------------------------
# the comparison
# ----------------------------------------------------------------------------------------------------------
def compare_runs(source, runs=None, last: int = 2, top: int = 20, scores=None, targets=None,
                 baseline: str = "previous", level: str = "feature", spark=None) -> DriftReport:
    """Compare runs of a rankings table: rank changes, top-K entries and exits, Fuzzy Jaccard curves and drift.

    Parameters
    ----------
    source : str, list, pandas.DataFrame, pyspark.sql.DataFrame or spark_fr.ranking.Ranking
        The rankings: a Delta table path, a catalog table (``main.ml.feature_rankings``), a run folder, a folder
        of outputs, a CSV or Parquet file, DataFrames or Rankings, or a list of these
        (:func:`spark_fr.io.ranking_runs.open_runs`).
    runs : str or list of str, optional
        The run ids to compare, oldest first (comma-separated or a list); default: the ``last`` newest runs.
    last : int
        How many of the newest runs to compare when ``runs`` is not given (at least 2).
    top : int
        K: the FJI curve is computed for the top-k sets, k = 1..K; entries, exits and rank changes concern the
        top K.
    scores : str or list of str, optional
        Scores to compare (default: every score all the runs have).
    targets : str or list of str, optional
        Targets to compare; ``'all'`` for every target all the runs have (default: the joint ranking
        ``__all__``, see the module's decisions).
    baseline : {'previous', 'first'}
        Compare each run with the run before it, or with the first (oldest) compared run.
    level : {'feature', 'attribute', 'relation'}
        A relational ranking's level (tables without the ``level`` column have features only).
    spark : pyspark.sql.SparkSession, optional
        For catalog tables (default: the active session, or a new one).

    Returns
    -------
    DriftReport

    Raises
    ------
    spark_fr.errors.InputError
        Fewer than 2 runs, an unknown run, score or target, bad parameters, a source without rankings.
    """
    top = _positive(top, "top")
    if baseline not in BASELINES:
        raise InputError(f"baseline must be one of {', '.join(BASELINES)}, not {baseline!r}")
    if level not in LEVELS:
        raise InputError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
    runs = _names(runs, "runs")
    scores, targets = _names(scores, "scores"), _names(targets, "targets")
    if runs is None:
        last = _positive(last, "last", least=2)
    source_runs = open_runs(source, spark)
    where = source_runs.where
    listing = source_runs.runs()
    notes: list = []
    chosen = _choose_runs(listing, runs, last, where, notes)
    rows = source_runs.rows(list(chosen["run_id"]))
    if "level" in rows.columns:
        rows = rows[rows["level"].isna() | (rows["level"] == level)] if level == "feature" else \
            rows[rows["level"] == level]
    rankings = _rankings(rows, list(chosen["run_id"]))
    keys = _keys(rankings, list(chosen["run_id"]), scores, targets, where)
    ids = list(chosen["run_id"])
    pairs = [(ids[0] if baseline == "first" else ids[i - 1], ids[i]) for i in range(1, len(ids))]
    summary, curves, changes = [], [], []
    for before, after in pairs:
        for score, target in keys:
            s, c, ch = _compare_pair(rankings[before][score, target], rankings[after][score, target], top)
            ident = {"run_before": before, "run_after": after, "score": score, "target": target}
            summary.append({**ident, **s})
            curves.append(c.assign(**ident))
            changes.append(ch.assign(**ident))
    ident_cols = ["run_before", "run_after", "score", "target"]
    summary = pd.DataFrame(summary)
    curves = pd.concat(curves, ignore_index=True)[ident_cols + ["k", "fji"]]
    changes = pd.concat(changes, ignore_index=True)
    changes = changes[ident_cols + [c for c in changes.columns if c not in ident_cols]]
    ranks = _heat_rows(rankings, ids, keys, top)
    return DriftReport(chosen.reset_index(drop=True), top, summary, curves, changes, ranks, where, notes)


def _choose_runs(listing: pd.DataFrame, runs, last, where: str, notes: list) -> pd.DataFrame:
    known = list(listing["run_id"])
    if len(known) < 2:
        raise InputError(f"{where} holds {len(known)} run{'s' if len(known) != 1 else ''}"
                         f"{' (' + known[0] + ')' if known else ''}; drift needs at least 2")
    if runs is not None:
        unknown = [r for r in runs if r not in set(known)]
        if unknown:
            raise InputError(f"run {unknown[0]!r} is not in {where}; its newest runs: {_shown(known[::-1])}")
        if len(runs) < 2:
            raise InputError(f"--runs names {len(runs)} run; drift needs at least 2")
        return listing.set_index("run_id").loc[runs].reset_index()
    if last > len(known):
        notes.append(f"{last} runs asked for, {where} holds {len(known)}: all of them compared")
    return listing.tail(last).reset_index(drop=True)


def _rankings(rows: pd.DataFrame, run_ids: list) -> dict:
    """{run_id: {(score, target): DataFrame of feature, importance, rank in rank order}}."""
    out = {r: {} for r in run_ids}
    rows = rows.sort_values(["run_id", "score", "target", "rank", "feature"], kind="stable")
    for (run, score, target), g in rows.groupby(["run_id", "score", "target"], sort=False):
        g = g.drop_duplicates("feature", keep="first")
        out[run][score, target] = g[["feature", "importance", "rank"]].reset_index(drop=True)
    return out


def _keys(rankings: dict, run_ids: list, scores, targets, where: str) -> list:
    """The (score, target) pairs every run has, as selected (module decisions)."""
    per_run = [set(rankings[r]) for r in run_ids]
    if not all(per_run):
        empty = next(r for r, k in zip(run_ids, per_run) if not k)
        raise InputError(f"run {empty!r} of {where} has no rows at this level")
    common = set.intersection(*per_run)
    common_scores = sorted({s for s, _ in common})
    if scores is not None:
        for s in scores:
            for r, k in zip(run_ids, per_run):
                have = sorted({x for x, _ in k})
                if s not in have:
                    raise InputError(f"score {s!r} is not in run {r!r} of {where}; its scores: {', '.join(have)}")
        chosen_scores = scores
    elif not common_scores:
        raise InputError(f"the runs of {where} have no score in common: "
                         + "; ".join(f"{r}: {', '.join(sorted({s for s, _ in k}))}" for r, k in zip(run_ids, per_run)))
    else:
        chosen_scores = common_scores
    common_targets = sorted({t for s, t in common if s in chosen_scores}, key=lambda t: (t != ALL_TARGETS, t))
    if targets is None:
        chosen_targets = [ALL_TARGETS] if ALL_TARGETS in common_targets else common_targets
    elif targets == ["all"]:
        chosen_targets = common_targets
    else:
        for t in targets:
            for r, k in zip(run_ids, per_run):
                have = sorted({x for _, x in k}, key=lambda x: (x != ALL_TARGETS, x))
                if t not in have:
                    raise InputError(f"target {t!r} is not in run {r!r} of {where}; its targets: {_shown(have)}")
        chosen_targets = targets
    keys = [(s, t) for s in chosen_scores for t in chosen_targets if (s, t) in common]
    if not keys:
        raise InputError(f"the runs of {where} have no ranking (score and target) in common among "
                         f"{', '.join(chosen_scores)} x {_shown(chosen_targets)}")
    return keys


def _compare_pair(before: pd.DataFrame, after: pd.DataFrame, top: int) -> tuple:
    """(summary fields, FJI curve, rank changes) of two rankings of one score and target."""
    k = min(top, max(len(before), len(after)))
    curve = fuzzy_jaccard_curve(before["feature"], before["importance"], after["feature"], after["importance"], k)
    area = fji_area(curve)
    top_b, top_a = list(before["feature"][:k]), list(after["feature"][:k])
    entered = [f for f in top_a if f not in set(top_b)]
    left = [f for f in top_b if f not in set(top_a)]
    summary = {"k": k, "fji_area": area, "drift": 1.0 - area, "fji_top": float(curve[-1]),
               "entered": ",".join(entered), "left": ",".join(left), "n_entered": len(entered), "n_left": len(left)}
    feats = list(dict.fromkeys(top_a + top_b))
    b = before.set_index("feature").reindex(feats)
    a = after.set_index("feature").reindex(feats)
    changes = pd.DataFrame({
        "feature": feats,
        "rank_before": b["rank"].astype("Int64").to_numpy(), "rank_after": a["rank"].astype("Int64").to_numpy(),
        "importance_before": b["importance"].to_numpy(float), "importance_after": a["importance"].to_numpy(float),
        "top_before": [f in set(top_b) for f in feats], "top_after": [f in set(top_a) for f in feats]})
    changes.insert(3, "change", changes["rank_before"] - changes["rank_after"])
    curve_frame = pd.DataFrame({"k": np.arange(1, k + 1), "fji": curve})
    return summary, curve_frame, changes


def _heat_rows(rankings: dict, run_ids: list, keys: list, top: int) -> pd.DataFrame:
    """Ranks over the runs of the features in any run's top K, per ranking."""
    frames = []
    for score, target in keys:
        feats = list(dict.fromkeys(f for r in run_ids for f in rankings[r][score, target]["feature"][:top]))
        for r in run_ids:
            g = rankings[r][score, target]
            g = g[g["feature"].isin(set(feats))]
            frames.append(pd.DataFrame({"score": score, "target": target, "feature": g["feature"], "run_id": r,
                                        "rank": g["rank"].to_numpy(), "importance": g["importance"].to_numpy()}))
    return pd.concat(frames, ignore_index=True)
