"""Error curves over the top 1, 2, 4, ... features of a ranking, and their areas (thesis Ch. 7; ReliefE 3.10).

Sketch
------
For every ranking of a split, a learner is trained on the training rows' top f features and scored on the test
rows, for f in :func:`feature_grid` (1, 2, 4, ..., 2^floor(log2 D), D: the thesis's grid; ``curve_features`` gives
counts of one's own, e.g. the ReliefE paper's top 50 and 100: those up to D are used, and D always). A random
ranking (one per split, :func:`spark_fr.evaluation.splits.random_ranking`) is drawn as the curves' baseline in
every protocol (its expected curve is the non-informed one). Each value is also
divided by the same learner's value with all D features, the ReliefE paper's relative score (``rF1(f) = F1_f /
F1_{f = D}``), and the relative curve's area is a measure of its own in the evaluation table, ``au_r<measure>``
(``au_rmacro_f1`` is the paper's AUrF1 for multi-class data, ``au_rmicro_f1`` for MLC).

Learners (``curve_learner``):

* ``'knn'``: the protocol's kNN on the top f features with equal weights (what the unsupervised chapter draws);
  the measure is the target type's main one (``evaluation.measure``, :class:`spark_fr.tasks.base.EvaluationDefaults`).
* ``'sklearn'``: the ReliefE paper's: scikit-learn's ``LogisticRegression()`` with its defaults (C = 1) for
  classification, scored by macro F1, and ``RandomForestClassifier()`` with its defaults (seeded) for MLC, scored
  by micro F1 (and for HMLC's labels when asked for). Their inputs are the training-range-scaled features, nominal
  ones one-hot; a missing value becomes the training mean (numeric; all-zero one-hot for nominal), since neither
  learner takes NaN. Numeric targets and the unsupervised protocol have no scikit-learn learner in the papers: an
  error.
* ``'auto'``: the target type's (``evaluation.curve_learner``): ``'sklearn'`` for classification and MLC (the
  paper's protocol), ``'knn'`` otherwise.

Area (decision): Simpson's rule over the points taken as equally spaced (the grid's index: each doubling of f
weighs the same), divided by the number of intervals, so that a constant curve c has area c. The paper divides by
the number of points; on one grid that is the same ordering of the rankings, scaled by (n - 1) / n.
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import tasks
from ..errors import InputError
from . import metrics as M


def feature_grid(n_features: int, features=None) -> list:
    """1, 2, 4, ..., 2^floor(log2 D), and D itself; or the given ``features`` counts up to D, and D."""
    if features is not None:
        return sorted({int(f) for f in features if 1 <= int(f) <= n_features} | {n_features})
    out = []
    f = 1
    while f <= n_features:
        out.append(f)
        f *= 2
    if out[-1] != n_features:
        out.append(n_features)
    return out


def curve_area(values) -> float:
    """Simpson's rule over equally spaced points divided by the number of intervals (module sketch)."""
    from scipy.integrate import simpson

    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return float("nan")
    if v.size == 1:
        return float(v[0])
    return float(simpson(v, dx=1.0) / (v.size - 1))


def learner_for(curve_learner: str, task: str) -> str:
    """The learner of ``'auto'``, or ``curve_learner`` checked against the task."""
    defaults = tasks.get(task).evaluation
    if curve_learner == "auto":
        return defaults.curve_learner
    if curve_learner not in ("knn", "sklearn"):
        raise InputError(f"--curve-learner must be auto, knn or sklearn, not '{curve_learner}'")
    if curve_learner == "sklearn" and defaults.prediction not in ("vote", "labels"):
        raise InputError(f"--curve-learner sklearn is the ReliefE paper's learner for classes and labels; the "
                         f"task is {task}: use --curve-learner knn")
    return curve_learner


def _design(X: np.ndarray, nominal: np.ndarray, n_values: np.ndarray, features, ref: np.ndarray) -> np.ndarray:
    """The learner's inputs of all rows on ``features``: numeric as they are (NaN: the training mean), nominal
    one-hot (NaN: all zero)."""
    cols = []
    for f in features:
        v = X[:, f]
        if nominal[f]:
            cats = np.arange(int(n_values[f]))
            cols.append((v[:, None] == cats[None, :]).astype(np.float64))
        else:
            known = v[ref][~np.isnan(v[ref])]
            fill = known.mean() if known.size else 0.0
            cols.append(np.where(np.isnan(v), fill, v)[:, None])
    return np.hstack(cols)


def _sklearn_value(data, X, ref, test, features, seed: int) -> tuple:
    """(measure, value) of the ReliefE paper's learner on ``features``."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression

    Z = _design(X, data.nominal, data.n_values, features, ref)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence warnings of the default LogisticRegression
        if tasks.get(data.task).evaluation.prediction == "vote":
            y = data.Y[:, 0]
            r = ref[~np.isnan(y[ref])]
            n_classes = len(data.classes or []) or int(np.nanmax(y)) + 1
            if np.unique(y[r]).size < 2:
                pred = np.full(test.size, y[r][0] if r.size else 0.0)
            else:
                pred = LogisticRegression().fit(Z[r], y[r].astype(np.int64)).predict(Z[test])
            return "macro_f1", M.classification_measures(M.confusion(y[test], pred, n_classes))["macro_f1"]
        Y = np.nan_to_num(data.Y[ref])
        rf = RandomForestClassifier(random_state=seed).fit(Z[ref], Y.astype(np.int64))
        P = np.asarray(rf.predict(Z[test]), np.float64).reshape(test.size, -1)
        return "micro_f1", M.multilabel_measures(data.Y[test], P)["micro_f1"]


def curve_records(data, X, ref, test, ranked, judge, curve_learner: str, seed: int, base: dict,
                  features=None) -> tuple:
    """(curve rows, area records) of one split: every ranking's curve (and the random baseline's, if any), at the
    counts ``features`` (default: :func:`feature_grid`'s powers of two)."""
    task = data.task
    learner = learner_for(curve_learner, task)
    D = data.n_features
    grid = feature_grid(D, features)
    measure = tasks.get(task).evaluation.measure

    def value(features):
        if learner == "sklearn":
            return _sklearn_value(data, X, ref, test, features, seed)
        w = np.zeros(D)
        w[features] = 1.0
        return measure, judge.measures(w)[0][measure]

    m_all, v_all = value(np.arange(D))
    rows, areas = [], []
    for name, order in ranked.order.items():
        rel = []
        for f in grid:
            m, v = value(np.sort(order[:f])) if f < D else (m_all, v_all)
            r = v / v_all if v_all not in (0.0,) and np.isfinite(v_all) else float("nan")
            rel.append(r)
            rows.append({**base, "ranking": name, "learner": learner, "n_features": f, "measure": m, "value": v,
                         "relative": r})
        areas.append({**base, "ranking": name, "measure": f"au_r{m_all}", "value": curve_area(rel),
                      "ranking_s": None})
    return rows, areas
