"""The result of a ranking run: a long table (one row per feature, score and target) and its metadata.

Columns (the output contract of DESIGN.md): ``feature``, ``score``, ``target`` (``__all__`` for the joint
ranking), ``importance``, ``rank`` (1 = most important, per score and target), ``importance_std``
(spread over trees or shards; null where undefined), ``run_id``, ``created_at``, ``params`` (JSON).

Ranks are ordinal (no shared ranks): higher importance first, then features that can be used before
features that cannot (constant or all missing: they get importance 0 and the last ranks), then file order.
"""
from __future__ import annotations

import json
import os
import uuid
from datetime import datetime, timezone

import numpy as np
import pandas as pd

from .errors import InputError
from .io.writers import PNG_MARK, check_creatable, write_ranking

ALL_TARGETS = "__all__"
COLUMNS = ["feature", "score", "target", "importance", "rank", "importance_std", "run_id", "created_at",
           "params"]


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
        run_id = metadata.get("run_id") or uuid.uuid4().hex
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
            for _, r in top.iterrows():
                std = "" if pd.isna(r["importance_std"]) else f" ± {r['importance_std']:.4g}"
                lines.append(f"  {int(r['rank']):>3}  {r['feature']:<32} {r['importance']:.6g}{std}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        n_feat = self._table["feature"].nunique()
        return f"Ranking(run_id={self.run_id!r}, features={n_feat}, scores={self.scores})"

    def write(self, path: str, format: str = "csv", mode: str | None = None) -> str:
        """Write the ranking (see :func:`spark_fr.io.writers.write_ranking`: an existing path is replaced only
        if it holds a ranking spark_fr wrote); returns the path."""
        return write_ranking(self, path, format=format, mode=mode)

    def plot(self, path: str | None = None, top: int = 20, target: str = ALL_TARGETS):
        """Bar charts of the ``top`` features per score (one panel per score), with spread as error bars; for a
        boosting run (metadata ``boosting.curve``), the importance of the top features against the tree index
        instead (:meth:`plot_curves`).

        Parameters
        ----------
        path : str, optional
            Save the figure as PNG here.
        top : int
        target : str
            Which target's ranking ('__all__' = joint).

        Returns
        -------
        matplotlib.figure.Figure
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
        """Save ``fig`` as PNG at ``path`` (atomically, marked with the run id) and close it; returns it."""
        import matplotlib.pyplot as plt

        if path:
            if os.path.isdir(path):
                plt.close(fig)
                raise InputError(f"plot path {path} is a directory; give a .png file name")
            try:
                check_creatable(path, "plot path")
            except InputError:
                plt.close(fig)
                raise
            parent = os.path.dirname(os.path.abspath(path))
            os.makedirs(parent, exist_ok=True)
            tmp = os.path.join(parent, f".{os.path.basename(path)}.tmp-{uuid.uuid4().hex[:8]}.png")
            try:
                fig.savefig(tmp, dpi=110, format="png", metadata={PNG_MARK: self.run_id})
                os.replace(tmp, path)
            finally:
                if os.path.exists(tmp):
                    os.remove(tmp)
            plt.close(fig)
        return fig


def positive_int(value, name: str) -> int:
    """``value`` as an int, if it is a positive integer (bools and floats are not); else a one-line InputError."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{name} must be a positive integer, not {value!r}")
    return int(value)


def _pyplot():
    """matplotlib's pyplot on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt
