"""The result of a ranking run: a long table (one row per feature, score and target) and its metadata.

Columns (the output contract of DESIGN.md): ``feature``, ``score``, ``target`` (``__all__`` for the joint
ranking), ``importance``, ``rank`` (1 = most important, per score and target), ``importance_std``
(spread over trees or shards; null where undefined), ``run_id``, ``created_at``, ``params`` (JSON).

Ranks are ordinal (no shared ranks): higher importance first, then features that can be used before
features that cannot (constant or all missing: they get importance 0 and the last ranks), then file order.

In notebooks (decisions)
------------------------
* ``display(ranking)``, or a ranking as a cell's last expression, shows :meth:`Ranking.to_html`
  (``_repr_html_``): the run's key facts (rows x features, task, targets, method, trees, seed, time,
  cross-validation, warnings) and a compact table of the top 10 features per score (joint ranking), one
  column pair per score. Jupyter calls ``_repr_html_`` through IPython's display; Databricks' ``display()``
  calls it too for any object that has it (its DataFrame grid is for ``display(ranking.to_spark())``). The
  HTML is self-contained (inline styles, escaped names): Databricks shows it in a frame.
* :meth:`Ranking.plot` returns a matplotlib figure that is closed (removed from pyplot's list of open
  figures) and shows once: as a cell's last expression, or with ``display(fig)``. An open figure would be
  shown twice in Jupyter (once by the inline backend at the end of the cell, once as the cell's value), and
  figures left open pile up in a long session. Outside IPython, figures are drawn with the Agg backend (no
  window, no display needed, as in Spark jobs); inside IPython the notebook's backend is left as it is.
"""
from __future__ import annotations

import html
import json
import os
import re
import sys
import uuid
from datetime import datetime, timezone
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # the annotations' pandas (imported where used: 0.3-0.4 s)
    import pandas as pd

from .errors import InputError
from .io.ownership import PNG_MARK, publish_file
from .io.writers import write_ranking

ALL_TARGETS = "__all__"
COLUMNS = ["feature", "score", "target", "importance", "rank", "importance_std", "run_id", "created_at",
           "params"]
_READS_AS_A_NUMBER = re.compile(r"[0-9]+(e|$)")  # a hex id a CSV reader's type inference takes for a number


def new_run_id() -> str:
    """A new run id: the 32 hex digits of a random UUID (``uuid.uuid4().hex``) that no CSV reader takes for a number.

    Decision: an id of decimal digits only, or of decimal digits followed by an ``e`` (``45e3417356314ba9...``:
    about 1 random id in 15), is drawn again. pandas' C parser (2.3.3, pandas issues 62617 and 63089) reads
    such a field of ``ranking.csv`` as a number with an exponent; ten or more exponent digits overflow its
    parser and crash the reading process (a segmentation fault: about 1 random id in 950 did, in our tests and
    in any user's ``pd.read_csv``). An id given by the user (``--run_id``) is kept as given.

    Returns
    -------
    str
    """
    while True:
        run_id = uuid.uuid4().hex
        if not _READS_AS_A_NUMBER.match(run_id):
            return run_id


def rank_order(importance: np.ndarray, usable: np.ndarray) -> np.ndarray:
    """Ranks 1..D: usable features by decreasing importance (ties: file order), unusable ones last."""
    importance = np.where(np.isnan(importance), -np.inf, importance)
    order = np.lexsort((np.arange(importance.size), -importance, ~usable))
    ranks = np.empty(importance.size, np.int64)
    ranks[order] = np.arange(1, importance.size + 1)
    return ranks


def build_table(feature_names, usable, results: list, target_names, run_id: str, created_at: datetime,
                params: dict) -> pd.DataFrame:
    """The long ranking table from score results.

    Parameters
    ----------
    feature_names : list of str
    usable : ndarray of bool
    results : list of ScoreResult
        Joint results (importance (D,)) and per-target ones (importance (T, D)).
    target_names : list of str
        The targets of per-target results, in order.
    run_id : str
    created_at : datetime
    params : dict

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    ValueError
        If an importance of a usable feature is not a finite number (it must never reach the output).
    """
    import pandas as pd

    usable = np.asarray(usable, bool)
    params_json = json.dumps(params, sort_keys=True, default=str)
    frames = []

    def add(score, target, mean, std):
        bad = usable & ~np.isfinite(mean)
        if bad.any():
            f = int(np.flatnonzero(bad)[0])
            raise ValueError(f"score '{score}' (target '{target}') is {mean[f]} for feature '{feature_names[f]}'; "
                             f"no ranking was written")
        mean = np.where(usable, mean, 0.0)
        std = np.where(usable, std, np.nan) if std is not None else np.full(mean.shape, np.nan)
        ranks = rank_order(mean, usable)
        frames.append(pd.DataFrame({
            "feature": list(feature_names), "score": score, "target": target, "importance": mean.astype(float),
            "rank": ranks.astype(np.int32), "importance_std": std.astype(float)}))

    for r in results:
        if r.key.level != "feature":  # relation-level scores: a relational ranking's (spark_fr.relational.rollup)
            continue
        if r.per_target:
            for t, tname in enumerate(target_names):
                add(r.name, tname, r.importance[t], r.std[t] if r.std is not None else None)
        else:
            add(r.name, ALL_TARGETS, r.importance, r.std)
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS[:6])
    table["run_id"] = run_id
    table["created_at"] = pd.Timestamp(created_at).tz_convert("UTC") if pd.Timestamp(created_at).tzinfo \
        else pd.Timestamp(created_at, tz="UTC")
    table["params"] = params_json
    order = {"__all__": -1, **{t: i for i, t in enumerate(target_names)}}
    table = table.sort_values(["score", "target", "rank"], key=lambda s: s.map(order) if s.name == "target" else s,
                              kind="stable").reset_index(drop=True)
    return table[COLUMNS]


class Ranking:
    """Feature rankings of one run.

    Parameters
    ----------
    table : pandas.DataFrame
        The long table (see module docstring).
    metadata : dict
        Run metadata: parameters, timings, versions, data summary (written to ``run.json``).
    """

    def __init__(self, table: pd.DataFrame, metadata: dict):
        self._table = table
        self.metadata = metadata

    @classmethod
    def from_scores(cls, feature_names, usable, results, target_names, params: dict, metadata: dict):
        """Build a ranking from score results (see :func:`build_table`)."""
        run_id = metadata.get("run_id") or new_run_id()
        created = metadata.get("created_at") or datetime.now(timezone.utc)
        if isinstance(created, str):
            created = datetime.fromisoformat(created)
        metadata = {**metadata, "run_id": run_id, "created_at": created.isoformat(), "params": params}
        return cls(build_table(feature_names, usable, results, target_names, run_id, created, params), metadata)

    @property
    def run_id(self) -> str:
        return self.metadata["run_id"]

    @property
    def params(self) -> dict:
        """The run's parameters as used: the options, and what they resolved to for this input and task."""
        return self.metadata["params"]

    @property
    def scores(self) -> list:
        return sorted(self._table["score"].unique())

    def to_pandas(self) -> pd.DataFrame:
        """The ranking table as a pandas DataFrame (a copy)."""
        return self._table.copy()

    def _spark_fields(self) -> list:
        """The Spark fields of the table's columns (the output contract's types)."""
        from pyspark.sql import types as T

        return [
            T.StructField("feature", T.StringType(), False), T.StructField("score", T.StringType(), False),
            T.StructField("target", T.StringType(), False), T.StructField("importance", T.DoubleType(), False),
            T.StructField("rank", T.IntegerType(), False), T.StructField("importance_std", T.DoubleType(), True),
            T.StructField("run_id", T.StringType(), False), T.StructField("created_at", T.TimestampType(), False),
            T.StructField("params", T.StringType(), False)]

    def to_spark(self, spark=None):
        """The ranking table as a Spark DataFrame."""
        if spark is None:
            from pyspark.sql import SparkSession

            spark = SparkSession.builder.getOrCreate()
        from pyspark.sql import types as T

        pdf = self._table.copy()
        pdf["importance_std"] = pdf["importance_std"].astype(object).where(pdf["importance_std"].notna(), None)
        return spark.createDataFrame(pdf, T.StructType(self._spark_fields()))

    @property
    def targets(self) -> list:
        """The targets of the rankings: ``'__all__'`` (joint), then per-target ones."""
        names = list(dict.fromkeys(self._table["target"]))
        return sorted(names, key=lambda t: t != ALL_TARGETS)

    def _selection(self, score, n, target) -> tuple:
        """``(score, n)`` after checking a selection's arguments (one-line :class:`InputError` naming what exists)."""
        score = self.scores[0] if score is None and self.scores else score
        if score not in self.scores:
            raise InputError(f"score {score!r} is not in this ranking; its scores: {', '.join(self.scores)}")
        if target not in self.targets:
            raise InputError(f"target {target!r} is not in this ranking; its targets: {', '.join(self.targets)}"
                             f"{'' if len(self.targets) > 1 else ' (per-target rankings need per_target=True)'}")
        return score, positive_int(n, "n")

    def top(self, score: str | None = None, n: int = 10, target: str = ALL_TARGETS) -> pd.DataFrame:
        """The ``n`` best features of one score (default: the first score) for one target.

        Raises
        ------
        spark_fr.errors.InputError
            An unknown score or target, or ``n`` not a positive integer.
        """
        score, n = self._selection(score, n, target)
        t = self._table
        sel = t[(t["score"] == score) & (t["target"] == target)].sort_values("rank")
        return sel.head(n)[["rank", "feature", "importance", "importance_std"]].reset_index(drop=True)

    def summary(self, n: int = 10) -> str:
        """A text table of the top features per score (joint rankings)."""
        n = positive_int(n, "n")
        lines = []
        for score in self.scores:
            top = self.top(score, n)
            if top.empty:
                continue
            lines.append(f"{score} (top {len(top)}):")
            lines += top_lines(top)
        return "\n".join(lines)

    def __repr__(self) -> str:
        n_feat = self._table["feature"].nunique()
        return f"Ranking(run_id={self.run_id!r}, features={n_feat}, scores={self.scores})"

    def facts(self) -> list:
        """The run's key facts as short phrases (rows x features, task and targets, method, seed, time, ...)."""
        m, p = self.metadata, self.metadata.get("params") or {}
        out = []
        if m.get("n_rows") is not None and m.get("n_features") is not None:
            out.append(f"{m['n_rows']:,} rows × {m['n_features']:,} features")
        targets = list(p.get("targets") or [])
        if p.get("task"):
            shown = ", ".join(targets[:4]) + (f", … ({len(targets)} targets)" if len(targets) > 4 else "")
            out.append(f"task {p['task']}" + (f" ({shown})" if targets else ""))
        method = p.get("method")
        if method == "ensemble":
            out.append(f"{p.get('ensemble', 'ensemble')} of {p.get('trees')} trees")
        elif method == "boosting":
            out.append(f"boosting, {p.get('trees')} rounds")
        elif method:
            out.append(method + (f", k = {p['relief_neighbours']}" if p.get("relief_neighbours") else ""))
        if p.get("seed") is not None:
            out.append(f"seed {p['seed']}")
        total = (m.get("timings") or {}).get("total_s")
        if total is not None:
            out.append(f"{total:.1f} s")
        cv = m.get("cross_validation") or {}
        if cv.get("mean") is not None:
            out.append(f"cross-validated {cv.get('metric', 'accuracy')} {cv['mean']:.3f} "
                       f"(baseline {cv.get('baseline', float('nan')):.3f})")
        return out

    def _html_sections(self, n: int) -> list:
        """``[(heading, {score: top rows})]`` for :meth:`to_html`: the joint ranking of every score."""
        return [("", {score: self.top(score, n) for score in self.scores})]

    def to_html(self, n: int = 10) -> str:
        """A compact HTML view: the run's key facts and the top ``n`` features per score (what ``display`` and
        a notebook cell show, see the module notes).

        Parameters
        ----------
        n : int
            Rows per score.

        Returns
        -------
        str
            Self-contained HTML (inline styles, escaped names).
        """
        n = positive_int(n, "n")
        e = html.escape
        kind = type(self).__name__
        parts = [f'<div style="font-family:sans-serif;font-size:13px">',
                 f'<div><b>spark_fr {e(kind)}</b> <code style="font-size:11px">{e(str(self.run_id))}</code>'
                 f'{" · " if self.facts() else ""}{e(" · ".join(self.facts()))}</div>']
        for warning in self.metadata.get("warnings") or []:
            parts.append(f'<div style="color:#a94400">⚠ {e(str(warning))}</div>')
        for heading, tops in self._html_sections(n):
            parts.append(_html_table(heading, tops))
        per_target = [t for t in self.targets if t != ALL_TARGETS]
        hint = (f"per-target rankings for {len(per_target)} targets: <code>ranking.top(score, target=…)</code>; "
                if per_target else "")
        parts.append(f'<div style="color:#666;font-size:11px">{hint}all {len(self._table):,} rows: '
                     f'<code>ranking.to_pandas()</code>, <code>ranking.to_spark()</code>; chart: '
                     f'<code>ranking.plot()</code></div></div>')
        return "".join(parts)

    def _repr_html_(self) -> str:
        return self.to_html()

    def write(self, path: str | None = None, format: str = "csv", mode: str | None = None, *,
              table: str | None = None) -> str:
        """Write the ranking to ``path``, or to the catalog Delta table ``table`` (see
        :func:`spark_fr.io.writers.write_ranking`: an existing output is replaced or appended to only if spark_fr
        wrote it); returns where it was written."""
        return write_ranking(self, path, format=format, mode=mode, table=table)

    def plot(self, path: str | None = None, top: int = 20, target: str = ALL_TARGETS):
        """Bar charts of the ``top`` features per score (one panel per score), with spread as error bars; for a
        boosting run (metadata ``boosting.curve``), the importance of the top features against the tree index
        instead (:meth:`plot_curves`).

        Parameters
        ----------
        path : str, optional
            Save the figure as PNG here; without it the figure is only returned (in a notebook it shows as the
            cell's value, or with ``display(fig)``; see the module notes).
        top : int
        target : str
            Which target's ranking ('__all__' = joint).

        Returns
        -------
        matplotlib.figure.Figure
            Closed (not in pyplot's open figures): it shows once in a notebook, and ``fig.savefig`` still works.
        """
        top = positive_int(top, "top")
        self._selection(None, 1, target)
        if (self.metadata.get("boosting") or {}).get("curve") and target == ALL_TARGETS:
            return self.plot_curves(path, top=min(top, 10))
        plt = _pyplot()
        scores = self.scores
        k = min(top, self._table["feature"].nunique())
        fig, axes = plt.subplots(1, len(scores), figsize=(4.2 * len(scores) + 1.5, 0.32 * k + 1.6), squeeze=False)
        for ax, score in zip(axes[0], scores):
            sel = self.top(score, k, target)
            y = np.arange(len(sel))[::-1]
            err = sel["importance_std"].to_numpy(dtype=float)
            ax.barh(y, sel["importance"], xerr=None if np.all(np.isnan(err)) else np.nan_to_num(err),
                    color="#3b75af", ecolor="#888888", capsize=2)
            ax.set_yticks(y)
            ax.set_yticklabels(sel["feature"], fontsize=8)
            ax.set_title(score)
            ax.set_xlabel("importance")
            ax.axvline(0, color="black", lw=0.6)
        title = self.metadata.get("title") or self.metadata.get("input", "")
        fig.suptitle(f"Top {k} features{' for ' + target if target != ALL_TARGETS else ''}: {os.path.basename(str(title))}",
                     fontsize=10)
        fig.tight_layout()
        return self._save(fig, path)

    def plot_curves(self, path: str | None = None, top: int = 10):
        """Boosting: the importance of the ``top`` features (final ranking) after every tree, one panel per score
        (the metadata's ``boosting.curve``: the running sums over the trees, as the ISMIS paper's Fig. 3).

        Returns
        -------
        matplotlib.figure.Figure
        """
        top = positive_int(top, "top")
        if not (self.metadata.get("boosting") or {}).get("curve"):
            raise InputError("plot_curves needs a boosting run (--method boosting): this ranking has no curve")
        plt = _pyplot()
        curve = self.metadata["boosting"]["curve"]
        names = curve["features"]
        scores = [s for s in self.scores if s in curve]
        fig, axes = plt.subplots(1, len(scores), figsize=(5.2 * len(scores) + 1.0, 4.2), squeeze=False)
        for ax, score in zip(axes[0], scores):
            values = np.asarray(curve[score], dtype=float)
            x = np.arange(1, values.shape[0] + 1)
            for name in self.top(score, top)["feature"]:
                if name in names:
                    ax.plot(x, values[:, names.index(name)], lw=1.3, label=name)
            ax.set_title(score)
            ax.set_xlabel("trees")
            ax.set_ylabel("importance (sum over the trees so far)")
            ax.legend(fontsize=7, loc="upper left")
        title = self.metadata.get("title") or self.metadata.get("input", "")
        fig.suptitle(f"Boosting: importance of the top {top} features by tree: {os.path.basename(str(title))}",
                     fontsize=10)
        fig.tight_layout()
        return self._save(fig, path)

    def _save(self, fig, path: str | None):
        """Save ``fig`` as PNG at ``path`` if given (atomically, marked with the run id); close it (pyplot's list
        of open figures forgets it, see the module notes) and return it."""
        import matplotlib.pyplot as plt

        plt.close(fig)
        if path:
            publish_file(path, lambda tmp: fig.savefig(tmp, dpi=110, format="png", metadata={PNG_MARK: self.run_id}),
                         "plot path")
        return fig


def top_lines(top: pd.DataFrame, width: int = 32) -> list:
    """The lines of a summary listing ``top`` (rank, feature, importance, importance_std): the rank, the feature
    padded to ``width``, the importance and its spread when there is one."""
    import pandas as pd

    lines = []
    for _, r in top.iterrows():
        std = "" if pd.isna(r["importance_std"]) else f" ± {r['importance_std']:.4g}"
        lines.append(f"  {int(r['rank']):>3}  {r['feature']:<{width}} {r['importance']:.6g}{std}")
    return lines


def positive_int(value, name: str) -> int:
    """``value`` as an int, if it is a positive integer (bools and floats are not); else a one-line InputError."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{name} must be a positive integer, not {value!r}")
    return int(value)


def _html_table(heading: str, tops: dict) -> str:
    """One HTML table: a rank column, then a (feature, importance) column pair per score."""
    import pandas as pd

    e = html.escape
    tops = {score: top for score, top in tops.items() if not top.empty}
    if not tops:
        return ""
    cell = 'style="padding:1px 8px;text-align:{}"'
    head = "".join(f'<th colspan="2" {cell.format("left")}>{e(score)}</th>' for score in tops)
    rows = []
    for i in range(max(len(top) for top in tops.values())):
        cells = [f'<td {cell.format("right")}>{i + 1}</td>']
        for top in tops.values():
            if i < len(top):
                r = top.iloc[i]
                std = "" if pd.isna(r["importance_std"]) else f' title="± {r["importance_std"]:.4g}"'
                cells.append(f'<td {cell.format("left")}>{e(str(r["feature"]))}</td>'
                             f'<td {cell.format("right")}{std}>{r["importance"]:.4g}</td>')
            else:
                cells.append("<td></td><td></td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    caption = f'<caption style="text-align:left;font-weight:bold">{e(heading)}</caption>' if heading else ""
    return (f'<table style="border-collapse:collapse;margin:4px 0;font-size:12px">{caption}'
            f'<thead><tr><th {cell.format("right")}>rank</th>{head}</tr></thead><tbody>{"".join(rows)}</tbody>'
            f"</table>")


def _in_ipython() -> bool:
    """Whether this process runs an IPython shell (Jupyter, Databricks, a terminal IPython)."""
    ipython = sys.modules.get("IPython")
    return bool(ipython is not None and getattr(ipython, "get_ipython", lambda: None)() is not None)


def _pyplot():
    """matplotlib's pyplot: on the Agg backend (no display needed) outside IPython; in IPython (a notebook) on
    the backend the notebook chose, so figures show inline."""
    import matplotlib

    if not _in_ipython():
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt
