"""Which features a fitted model selects: ``selectionMode`` and ``selectionThreshold``, as Spark's
``UnivariateFeatureSelector`` has them, over the joint ranking of the selection score.

Sketch
------
    numTopFeatures  the best ``numTopFeatures`` (or ``selectionThreshold``, a whole number, as Spark's)       top_k
    percentile      the best ``floor(fraction * D)`` of the D ranked features (Spark's rule; default 0.1)   top_k
    threshold       importance > ``selectionThreshold`` (default 0.0), or > a shadow feature's ('shadow')   above
    fwe             importance significantly above 0 over the trees, family-wise error rate alpha (0.05)   fwe

Decisions
---------
* **fwe**: a tree ensemble's importance is the mean of T per-tree values (``importance_std`` is their sample
  standard deviation, ddof 1). Feature j is selected when the one-sided t test of "mean per-tree importance > 0"
  rejects at level alpha / D (Bonferroni over the D ranked features): ``t_j = importance_j / (importance_std_j /
  sqrt(T))``, p_j = P(t(T - 1) > t_j), selected when p_j < alpha / D. A zero spread selects a positive importance
  (p = 0) and not a zero one. A score without a spread (boosting, Relief: ``importance_std`` null) or a fit of one
  tree cannot be tested: a one-line error says so.
* **shadow** (``selectionMode='threshold'``, ``selectionThreshold='shadow'``): the fit adds one feature of random
  numbers (:data:`SHADOW`, uniform in [0, 1)), ranked with the others: a feature that cannot beat noise is not
  selected (Boruta's idea, with one shadow rather than a copy of every feature: D + 1 features, about 1/D more
  work, where Boruta doubles it; a continuous shadow is the strongest noise for split-based scores, which favour
  many distinct values). The numbers are a hash of each row's values and ``seed`` (``xxhash64``), not Spark's
  ``rand``: the same rows give the same shadow whatever the partitioning, on classic and Connect sessions. The
  shadow is taken out of the model's ranking (the other ranks close up); its importance per score is
  ``metadata['shadow']``. A model fitted without it cannot select by it (a one-line error says to refit).
* **percentile** takes ``floor(fraction * D)`` features, as Spark does, so a small fraction of few features can
  select none.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..errors import InputError

#: the shadow feature's column (module docstring)
SHADOW = "__spark_fr_shadow__"
#: selectionThreshold when unset, by mode (numTopFeatures: the numTopFeatures Param)
DEFAULT_THRESHOLD = {"percentile": 0.1, "threshold": 0.0, "fwe": 0.05}


def check_threshold(mode: str, value) -> None:
    """A ``selectionThreshold`` that the mode cannot take is a one-line error (raised by fit before any work)."""
    if value is None:
        return
    if value == "shadow":
        if mode != "threshold":
            raise InputError(f"selectionThreshold 'shadow' is for selectionMode 'threshold', not '{mode}'")
        return
    ok = {"numTopFeatures": float(value).is_integer() and value >= 1, "percentile": 0 < value <= 1,
          "fwe": 0 < value < 1, "threshold": True}[mode]
    if not ok:
        need = {"numTopFeatures": "a whole number >= 1 (the number of features)", "percentile": "a fraction in (0, 1]",
                "fwe": "a family-wise error rate in (0, 1)"}[mode]
        raise InputError(f"selectionThreshold {value:g} is not {need} for selectionMode '{mode}'")


def joint(table: pd.DataFrame, score: str) -> pd.DataFrame:
    """The joint ranking of ``score``, best first; a one-line error when the fit did not compute it."""
    if "score" not in table.columns:
        raise InputError("FeatureRankingModel has no ranking: fit a FeatureRanker to get one")
    sel = table[(table["score"] == score) & (table["target"] == "__all__")].sort_values("rank", kind="stable")
    if sel.empty:
        raise InputError(f"selectionScore '{score}' was not computed by this fit; its scores: "
                         f"{', '.join(sorted(table['score'].unique())) if len(table) else 'none'}")
    return sel


def select(table: pd.DataFrame, metadata: dict, score: str, mode: str, value, num_top: int) -> list:
    """The selected features, best first (module docstring); ``value`` is ``selectionThreshold`` (None: unset)."""
    check_threshold(mode, value)
    sel = joint(table, score)
    if mode == "numTopFeatures":
        return list(sel["feature"][: int(value) if value is not None else num_top])
    value = DEFAULT_THRESHOLD[mode] if value is None else value
    if mode == "percentile":
        return list(sel["feature"][: int(value * len(sel))])
    if mode == "threshold":
        return list(sel["feature"][sel["importance"].to_numpy() > _threshold(metadata, score, value)])
    return list(sel["feature"][fwe_p_values(sel, metadata, score) < value / len(sel)])


def applied_rule(metadata: dict, score: str, mode: str, value, num_top: int) -> dict:
    """The rule a model selects by, as recorded with its selection (MLflow's ``selection.json``):
    ``selectionMode`` and ``selectionThreshold`` as applied (a mode's default when unset; numTopFeatures: the count
    taken), and for ``'shadow'`` the shadow feature's importance it compares with (``shadowImportance``).

    Decision: the record holds the applied value, not the Param's unset None, so that it alone says which rule
    selected the features."""
    check_threshold(mode, value)
    if mode == "numTopFeatures":
        applied = int(value) if value is not None else int(num_top)
    else:
        applied = DEFAULT_THRESHOLD[mode] if value is None else value
    rule = {"selectionMode": mode, "selectionThreshold": applied}
    if applied == "shadow":
        rule["shadowImportance"] = _threshold(metadata, score, "shadow")
    return rule


def _threshold(metadata: dict, score: str, value) -> float:
    if value != "shadow":
        return float(value)
    shadow = (metadata.get("shadow") or {}).get("importance") or {}
    if score not in shadow:
        raise InputError("selectionThreshold 'shadow': this model was fitted without a shadow feature; fit the "
                         "FeatureRanker with selectionMode='threshold', selectionThreshold='shadow'")
    return float(shadow[score])


def fwe_p_values(sel: pd.DataFrame, metadata: dict, score: str) -> np.ndarray:
    """One-sided p-values of "mean per-tree importance > 0" (module docstring), in ``sel``'s order."""
    from scipy.stats import t as student

    trees = (metadata.get("params") or {}).get("trees")
    std = sel["importance_std"].to_numpy(dtype=float)
    if np.isnan(std).all() or not trees or trees < 2:
        method = (metadata.get("params") or {}).get("method", "this")
        raise InputError(f"selectionMode 'fwe' tests the spread of score '{score}' over the trees, which the "
                         f"{method} fit does not give (importance_std is null); use selectionMode 'threshold', "
                         f"'percentile' or 'numTopFeatures'")
    mean = sel["importance"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = mean / (std / math.sqrt(trees))
    stat = np.where(std > 0, stat, np.where(mean > 0, np.inf, -np.inf))
    return np.where(np.isnan(stat), 1.0, student.sf(stat, trees - 1))


def shadow_column(frame, seed: int):
    """``frame`` with the shadow feature: uniform numbers in [0, 1) from a hash of each row and ``seed``."""
    from pyspark.sql import functions as F

    from ..data.columns import qcol

    h = F.xxhash64(*[qcol(c) for c in frame.columns], F.lit(int(seed)))
    return frame.withColumn(SHADOW, F.shiftright(h, 11).bitwiseAND(F.lit((1 << 53) - 1)).cast("double") / float(1 << 53))


def drop_shadow(table: pd.DataFrame, metadata: dict) -> tuple:
    """The ranking without the shadow feature (ranks closed up) and the metadata with ``shadow``: its importance
    per score (joint ranking) and its rank among the D + 1."""
    rows = table["feature"] == SHADOW
    shadow = table[rows & (table["target"] == "__all__")]
    out = table[~rows].copy()
    for (score, target), r in table[rows].groupby(["score", "target"]).first()["rank"].items():
        mine = (out["score"] == score) & (out["target"] == target) & (out["rank"] > r)
        out.loc[mine, "rank"] = out.loc[mine, "rank"] - 1
    info = {"feature": SHADOW, "importance": dict(zip(shadow["score"], shadow["importance"].astype(float))),
            "rank": dict(zip(shadow["score"], shadow["rank"].astype(int)))}
    return out.reset_index(drop=True), {**metadata, "shadow": info}
