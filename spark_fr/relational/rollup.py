"""Roll-up of feature importances to attributes and relations, and the relational ranking table.

Sketch
------
A relational run ranks the generated features (:mod:`spark_fr.relational.generate`); its table then has
three levels (column ``level``):

* ``feature``: the generated features, as any ranking (``lineage``: the feature's path, attribute,
  aggregates, condition and relations, as JSON).
* ``attribute``: ``table.column``; its importance is the sum of the importances of the features that read it.
  A conditional aggregate (``mean of order.amount where order.category = HH``) reads two attributes and
  gives each half; a row count (``count of orders``) reads no attribute and counts for ``order.*``, the
  table's rows. So the attribute importances sum to the feature importances.
* ``relation``: the links (``child.column->parent``) and attributes (``table.column``) of the thesis's
  relational atoms. Symbolic and Genie3 use the node rule by default (``relation_rollup='node'``: a
  node's reward is shared equally among the relations its test adds to its parent's, computed in the
  trees, :mod:`spark_fr.pct.relation_scores`); ``relation_rollup='feature'`` shares each feature's
  importance equally among its relations instead (the ISMIS form). The RF and Relief scores have no node
  rewards: they always use the feature form.

Ranks are per (level, score, target); ``importance_std`` of the attribute and relation levels is null (the
spread over trees is tracked per feature only).
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ..errors import InputError
from ..pct.relation_scores import ROLLUPS, FeatureRelations, share_by_feature
from ..ranking import ALL_TARGETS, COLUMNS, Ranking, build_table, positive_int, rank_order, top_lines
from ..results import ScoreResult

LEVELS = ("feature", "attribute", "relation")
RELATIONAL_COLUMNS = COLUMNS + ["level", "lineage"]


def attributes_of(lineage) -> dict:
    """{attribute name ``table.column`` (``table.*`` for a row count): share} of one feature (shares sum to 1)."""
    names = [f"{lineage.table}.{lineage.attribute}" if lineage.attribute is not None else f"{lineage.table}.*"]
    if lineage.condition is not None:
        names.append(f"{lineage.table}.{lineage.condition[0]}")
    return {n: 1.0 / len(names) for n in names}


def lineage_json(lineage) -> str:
    """A feature's lineage as one line of JSON (the ``lineage`` column of the feature level)."""
    return json.dumps({
        "path": [{"link": h.link.name, "direction": h.direction, "table": h.table} for h in lineage.path],
        "table": lineage.table, "attribute": lineage.attribute, "aggregates": list(lineage.aggregates),
        "condition": list(lineage.condition) if lineage.condition is not None else None, "value": lineage.value,
        "relations": sorted(lineage.relations)}, sort_keys=True)


def feature_relations(lineage: list) -> FeatureRelations:
    """The relations of every generated feature, in column order."""
    return FeatureRelations.from_sets([f.relations for f in lineage], features=[f.feature for f in lineage])


def attribute_matrix(lineage: list) -> tuple:
    """(attribute names, matrix (D, A) of the shares of :func:`attributes_of`)."""
    shares = [attributes_of(f) for f in lineage]
    names = sorted({a for s in shares for a in s})
    index = {a: i for i, a in enumerate(names)}
    matrix = np.zeros((len(lineage), len(names)))
    for d, s in enumerate(shares):
        for a, w in s.items():
            matrix[d, index[a]] += w
    return names, matrix


def _level_rows(level: str, names: list, results: list, usable: np.ndarray, target_names, lineage_of) -> list:
    """The long-table rows of one roll-up level (importance_std null)."""
    frames = []
    for r in results:
        targets = list(target_names) if r.per_target else [ALL_TARGETS]
        values = np.atleast_2d(r.importance)
        for t, tname in enumerate(targets):
            imp = np.where(usable, values[t], 0.0)
            frames.append(pd.DataFrame({"feature": names, "score": r.name, "target": tname, "importance": imp,
                                        "rank": rank_order(imp, usable).astype(np.int32),
                                        "importance_std": np.nan, "level": level,
                                        "lineage": [lineage_of(n) for n in names]}))
    return frames


def build_relational_table(lineage: list, usable, results: list, target_names, run_id: str, created_at,
                           params: dict, rollup: str = "node") -> pd.DataFrame:
    """The relational ranking table (module sketch): the feature level of :func:`spark_fr.ranking.build_table`
    plus the attribute and relation levels.

    Parameters
    ----------
    lineage : list of FeatureLineage
        One per feature, in the order of the results' importances.
    usable : ndarray of bool (D,)
    results : list of ScoreResult
        Feature-level results, and (trees) relation-level Symbolic / Genie3 results by the node rule.
    rollup : {'node', 'feature'}
    """
    if rollup not in ROLLUPS:
        raise ValueError(f"relation_rollup must be one of {', '.join(ROLLUPS)}")
    usable = np.asarray(usable, bool)
    names = [f.feature for f in lineage]
    feature_results = [r for r in results if r.key.level == "feature"]
    node = {(r.name, r.per_target): r for r in results if r.key.level == "relation"}
    table = build_table(names, usable, feature_results, target_names, run_id, created_at, params)
    by_name = {f.feature: lineage_json(f) for f in lineage}
    table["level"] = "feature"
    table["lineage"] = table["feature"].map(by_name)

    attr_names, attr_matrix = attribute_matrix(lineage)
    attr_usable = (usable.astype(float) @ attr_matrix) > 0
    attr_results = [ScoreResult(r.key, np.where(usable, r.importance, 0.0) @ attr_matrix) for r in feature_results]
    n_features = np.count_nonzero(attr_matrix, axis=0)
    attr_lineage = {a: json.dumps({"table": a.rsplit(".", 1)[0], "attribute": a.rsplit(".", 1)[1],
                                   "features": int(n)}, sort_keys=True) for a, n in zip(attr_names, n_features)}

    relations = feature_relations(lineage)
    rel_usable = np.zeros(relations.n_relations, bool)
    for d in np.flatnonzero(usable):
        rel_usable[relations.of(int(d))] = True
    rel_results = []
    for r in feature_results:
        from_nodes = node.get((r.name, r.per_target)) if rollup == "node" else None
        value = from_nodes.importance if from_nodes is not None else \
            share_by_feature(np.where(usable, r.importance, 0.0), relations)
        rel_results.append(ScoreResult(r.key, value))
    uses = np.bincount(relations.indices, minlength=relations.n_relations)
    rel_lineage = {n: json.dumps({"kind": "link" if "->" in n else "attribute", "features": int(k),
                                  "rollup": rollup}, sort_keys=True) for n, k in zip(relations.names, uses)}

    extra = _level_rows("attribute", attr_names, attr_results, attr_usable, target_names, attr_lineage.get)
    extra += _level_rows("relation", list(relations.names), rel_results, rel_usable, target_names, rel_lineage.get)
    if extra:
        more = pd.concat(extra, ignore_index=True)
        stamp = pd.Timestamp(created_at)
        more["run_id"] = run_id
        more["created_at"] = stamp.tz_convert("UTC") if stamp.tzinfo else stamp.tz_localize("UTC")
        more["params"] = json.dumps(params, sort_keys=True, default=str)
        table = pd.concat([table, more[RELATIONAL_COLUMNS]], ignore_index=True)
    order = {lvl: i for i, lvl in enumerate(LEVELS)}
    targets = {ALL_TARGETS: -1, **{t: i for i, t in enumerate(target_names)}}
    table = table.sort_values(["level", "score", "target", "rank"], kind="stable",
                              key=lambda s: s.map(order) if s.name == "level" else
                              (s.map(targets) if s.name == "target" else s)).reset_index(drop=True)
    return table[RELATIONAL_COLUMNS]


class RelationalRanking(Ranking):
    """A relational run's rankings: features, attributes and relations (column ``level``, see the module
    sketch), with each row's ``lineage``. Otherwise a :class:`spark_fr.ranking.Ranking`."""

    @classmethod
    def from_relational(cls, lineage: list, usable, results: list, target_names, params: dict, metadata: dict,
                        rollup: str = "node") -> "RelationalRanking":
        """Build the ranking of a relational run (see :func:`build_relational_table`)."""
        plain = Ranking.from_scores([f.feature for f in lineage], usable, [], target_names, params, metadata)
        table = build_relational_table(lineage, usable, results, target_names, plain.run_id,
                                       plain.metadata["created_at"], params, rollup)
        return cls(table, plain.metadata)

    @property
    def levels(self) -> list:
        return [lvl for lvl in LEVELS if (self._table["level"] == lvl).any()]

    def top(self, score: str | None = None, n: int = 10, target: str = ALL_TARGETS,
            level: str = "feature") -> pd.DataFrame:
        """The ``n`` best rows of one score, target and level ('feature', 'attribute' or 'relation')."""
        score, n = self._selection(score, n, target)
        if level not in self.levels:
            raise InputError(f"level {level!r} is not in this ranking; its levels: {', '.join(self.levels)}")
        t = self._table
        sel = t[(t["score"] == score) & (t["target"] == target) & (t["level"] == level)].sort_values("rank")
        return sel.head(n)[["rank", "feature", "importance", "importance_std"]].reset_index(drop=True)

    def summary(self, n: int = 10) -> str:
        """The top rows per level and score (joint rankings)."""
        lines = []
        for level in self.levels:
            for score in self.scores:
                top = self.top(score, n, level=level)
                if top.empty:
                    continue
                lines.append(f"{score}, {level}s (top {len(top)}):")
                lines += top_lines(top, 40)
        accuracy = (self.metadata.get("cross_validation") or {})
        if accuracy.get("mean") is not None:
            lines.append(f"cross-validated {accuracy.get('metric', 'accuracy')} ({accuracy.get('folds')} folds): "
                         f"{accuracy['mean']:.4f} (baseline {accuracy.get('baseline', float('nan')):.4f})")
        return "\n".join(lines)

    def facts(self) -> list:
        """The key facts of :meth:`Ranking.facts`, with the relational generation's (tables, features)."""
        info = self.metadata.get("relational") or {}
        extra = [f"{info['features']:,} features generated from {len(info['tables'])} tables"] \
            if info.get("features") is not None and info.get("tables") else []
        return extra + super().facts()

    def _html_sections(self, n: int) -> list:
        """One table per level (relations, attributes, features), the top ``n`` rows per score."""
        return [(f"{level}s", {score: self.top(score, n, level=level) for score in self.scores})
                for level in reversed(self.levels)]

    def _spark_fields(self) -> list:
        """The contract's columns, then ``level`` and ``lineage``."""
        from pyspark.sql import types as T

        return super()._spark_fields() + [T.StructField("level", T.StringType(), False),
                                          T.StructField("lineage", T.StringType(), True)]

    def plot(self, path: str | None = None, top: int = 15, target: str = ALL_TARGETS):
        """Bar charts of the ``top`` rows per level (rows of panels) and score (columns); for a boosting run, the
        features' importance against the tree index (:meth:`plot_curves`).

        Parameters
        ----------
        path : str, optional
            Save the figure as PNG here; without it the figure is only returned (it shows as a notebook cell's
            value, or with ``display(fig)``: :mod:`spark_fr.ranking`).
        top : int
        target : str

        Returns
        -------
        matplotlib.figure.Figure
            Closed (not in pyplot's open figures), as :meth:`spark_fr.ranking.Ranking.plot`.
        """
        from ..ranking import _pyplot

        top = positive_int(top, "top")
        self._selection(None, 1, target)
        if (self.metadata.get("boosting") or {}).get("curve") and target == ALL_TARGETS:
            return self.plot_curves(path, top=10)

        plt = _pyplot()
        levels, scores = self.levels, self.scores
        fig, axes = plt.subplots(len(levels), len(scores), figsize=(5.0 * len(scores) + 2.5, 0.3 * top * len(levels)
                                                                    + 1.2 * len(levels)), squeeze=False)
        for i, level in enumerate(levels):
            for j, score in enumerate(scores):
                ax = axes[i][j]
                sel = self.top(score, top, target, level)
                y = np.arange(len(sel))[::-1]
                ax.barh(y, sel["importance"], color=("#3b75af", "#d1812f", "#4f9a4f")[i % 3])
                ax.set_yticks(y)
                ax.set_yticklabels(sel["feature"], fontsize=7)
                ax.set_title(f"{score}: {level}s", fontsize=9)
                ax.axvline(0, color="black", lw=0.6)
        fig.suptitle(f"Relational ranking: {self.metadata.get('title') or self.metadata.get('input', '')}",
                     fontsize=10)
        fig.tight_layout()
        return self._save(fig, path)
