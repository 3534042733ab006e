"""The evaluation protocols: rank the training part, judge the ranking by weighted kNN on the test part.

Algorithm sketch (thesis section 8; HMLC paper 3.3; SSL and unsupervised chapters)
---------------------------------------------------------------------------------
    data      <- read, checked and encoded once (spark_fr.evaluation.data)
    protocol  <- 'splits'       10 random 2/3-1/3 splits (MTR, regression; MLC/HMLC without a test file)
                 'train-test'   the given training and test files (MLC, HMLC: --test)
                 'cv'           10-fold cross-validation, stratified by the class (classification)
                 'ssl'          cross-validation (or the given split) where the training part keeps L labels
                 'unsupervised' 10-fold cross-validation; 1NN on the top 16 features predicts every feature
    for every split:
        rankings  <- spark_fr.rank on the training rows only, one call per ensemble (configs.rank_calls); SSL:
                     each configuration twice, supervised on the L labelled rows (name) and semi-supervised on all
                     training rows with the others' labels hidden (name-ssl); the Laplacian Score (an outside
                     baseline, spark_fr.evaluation.laplace) and scikit-rebate's MultiSURF (an outside peer,
                     spark_fr.evaluation.multisurf) are computed here from the same rows
        X         <- features rescaled by the training rows' ranges
        for the uniform baseline (all weights 1) and every ranking (weights max(importance, 0)):
            neighbours of the test rows among the (labelled) training rows   spark_fr.evaluation.knn
            predictions (equal-weight mean / vote) -> measures               spark_fr.evaluation.metrics
        [curves]  the protocol's learner on the top 1, 2, 4, ..., D features  spark_fr.evaluation.curves
                  (every ranking's and a random ranking's: the curves' baseline in every protocol)
        [FJI]     the area under the Fuzzy Jaccard curve of every pair of rankings
    cross-validation adds a 'pooled' split: classification measures from the summed confusion matrix (the papers:
    the measures are not additive), the others the folds' values weighted by their test rows

Decisions (where the texts are silent; each also in docs/decisions.md, "The evaluation")
----------------------------------------------------------------------------------------
* k and the protocol without a test file are the target type's (:class:`spark_fr.tasks.base.EvaluationDefaults`):
  5 (MTR, regression; random splits), 15 (MLC), 10 (HMLC), 20 (classification: the SSL conference paper's;
  stratified cross-validation), 1 (unsupervised); 40 for the semi-supervised protocol (the SSL journal's main
  comparison); ``neighbours=`` overrides.
* The unsupervised protocol's non-informed baseline is a random ranking (its top 16 a random subset, one per
  fold): 'uniform' there is 1NN on every feature, which the chapter notes is the MSE-optimal reference, not a
  ranking. Every other protocol's baseline is 'uniform'.
* Every ranking is computed with the same seed on every split (the split changes the data); the random splits,
  folds, labelled rows and random rankings come from their own seeded streams (:mod:`.splits`).
"""
from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd

from .. import options as O
from .. import tasks
from ..errors import InputError
from . import configs as C
from . import metrics as M
from .knn import NeighbourSearch, feature_weights, nearest, neighbour_mean, neighbour_mode, neighbour_vote
from .splits import Split, cv_splits, given_split, random_ranking, random_splits, ssl_labelled

log = logging.getLogger(__name__)

#: the protocols (``UNSUPERVISED``: the protocol of rankings without targets, named after them)
SPLITS, TRAIN_TEST, CV, SSL, UNSUPERVISED = "splits", "train-test", "cv", "ssl", "unsupervised"
PROTOCOLS = ("auto", SPLITS, TRAIN_TEST, CV, SSL, UNSUPERVISED)
#: k of the semi-supervised protocol (the SSL journal's main comparison); the others take their target type's
#: (:class:`spark_fr.tasks.base.EvaluationDefaults`)
SSL_NEIGHBOURS = 40
#: options of spark_fr.rank that the rankings' names set, so they cannot be given on top
SET_BY_RANKINGS = ("method", "ensemble", "scores", "targets", "task", "semi_supervised", "input", "input_table")


def choose_protocol(protocol: str, task: str, has_test: bool, labelled) -> str:
    """The protocol of ``'auto'`` (module sketch), or ``protocol`` checked against the data."""
    if protocol not in PROTOCOLS:
        raise InputError(f"--protocol must be one of {', '.join(PROTOCOLS)}, not '{protocol}'")
    target_type = tasks.get(task)
    default = target_type.evaluation.protocol
    if labelled and not target_type.supervised:
        raise InputError(f"--labelled: the semi-supervised protocol needs targets; the task is {task}")
    if labelled and protocol not in ("auto", SSL):
        raise InputError(f"--labelled applies to --protocol ssl, not {protocol}")
    if protocol == "auto":
        if labelled and target_type.supervised:
            return SSL
        if has_test and target_type.supervised:
            return TRAIN_TEST
        return default
    if protocol == TRAIN_TEST and not has_test:
        raise InputError("--protocol train-test needs --test (the test rows)")
    if (protocol == UNSUPERVISED) != (default == UNSUPERVISED):
        raise InputError(f"--protocol {protocol} does not judge rankings of the task {task}: the unsupervised "
                         f"protocol (1NN predicting every feature) is the one for rankings without targets")
    if protocol == SSL and not labelled:
        raise InputError("--protocol ssl needs --labelled L (the labelled training rows)")
    return protocol


def check_rank_params(params: dict) -> dict:
    """The extra :func:`spark_fr.rank` keywords, checked (one-line errors) before any data is read."""
    clash = sorted(k for k in params if k in SET_BY_RANKINGS)
    if clash:
        raise InputError(f"{', '.join(O.option(k).flag if k in O.BY_NAME else k for k in clash)}: set by the "
                         f"evaluation's rankings (--rankings) and task; leave them out")
    return O.check_keywords(params)


def _for_method(params: dict, method: str) -> dict:
    """The extra keywords that apply to ``method`` (the others are left out, not warned about per call)."""
    return {k: v for k, v in params.items() if not O.option(k).methods or method in O.option(k).methods}


class SplitRankings:
    """The importances of every ranking on one split: {name: importances (D,)} and {name: feature order}."""

    def __init__(self):
        self.importances: dict = {}
        self.order: dict = {}
        self.seconds: dict = {}


def rank_split(data, rows: np.ndarray, calls: list, params: dict, seed: int, spark, *, task: str, hide=None,
               semi: bool = False, suffix: str = "", label: str = "") -> SplitRankings:
    """Run the rankings of ``calls`` on the rows ``rows`` of ``data`` (targets of ``rows[hide]`` hidden)."""
    from ..api import rank

    out = SplitRankings()
    subset = None
    names = data.feature_names
    for kw, naming in calls:
        method = kw.get("method", "ensemble")
        if method in C.LOCAL_METHODS:
            _rank_locally(data, rows, kw, naming[None] + suffix, out)
            continue
        if subset is None:
            subset = data.subset(rows, hide, label)
        keywords = {**_for_method(params, method), **kw, "seed": seed}
        if semi:
            keywords["semi_supervised"] = True
        else:  # --ssl-weight is for the semi-supervised rankings only (the SSL protocol's supervised ones too)
            keywords.pop("ssl_weight", None)
        t0 = time.perf_counter()
        targets = data.target_columns if tasks.get(task).supervised else None
        ranking = rank(subset, targets=targets, task=task, spark=spark, **keywords)
        seconds = time.perf_counter() - t0
        table = ranking.to_pandas()
        joint = table[table.target == "__all__"]
        for score, name in naming.items():
            if score is None:
                score = joint.score.iloc[0]
            t = joint[joint.score == score].set_index("feature")
            if t.empty:
                raise InputError(f"ranking '{name}' gave no '{score}' score")
            key = name + suffix
            out.importances[key] = t.importance.reindex(names).to_numpy(np.float64)
            ranks = t["rank"].reindex(names).to_numpy()
            out.order[key] = np.argsort(ranks, kind="stable")
            out.seconds[key] = seconds / len(naming)
    return out


def _rank_locally(data, rows: np.ndarray, kw: dict, name: str, out: SplitRankings) -> None:
    """A ranking the evaluation computes itself from the features of ``rows`` scaled to [0, 1] by their range (the
    judge's scaling): the Laplacian Score (targets unseen) or MultiSURF (with the rows' classes); ties in the order
    of the features."""
    t0 = time.perf_counter()
    params = C.local_keywords(kw)
    X = data.scaled_by(rows)[rows]
    if kw["method"] == "multisurf":
        from .multisurf import multisurf_importances

        if tasks.get(data.task).evaluation.prediction != "vote":
            raise InputError(f"ranking '{name}': MultiSURF ranks features for one class; the task is {data.task}")
        imp = multisurf_importances(X, data.Y[rows, 0], data.nominal, max_rows=int(params["max_rows"]))
    else:
        from .laplace import laplace_importances

        imp = laplace_importances(X, data.nominal, data.n_values, k=int(params["neighbours"]),
                                  t=float(params["width"]))
    out.importances[name] = imp
    out.order[name] = np.argsort(-imp, kind="stable")
    out.seconds[name] = time.perf_counter() - t0


class Judge:
    """Predictions and measures of one split's test rows for a task (the protocol's kNN)."""

    def __init__(self, data, X: np.ndarray, ref: np.ndarray, test: np.ndarray, k: int, spark, knn_mode: str):
        self.data, self.X, self.ref, self.test, self.k = data, X, ref, test, k
        self.prediction = tasks.get(data.task).evaluation.prediction
        self.spark, self.knn_mode = spark, knn_mode
        self.Y_ref = data.Y[ref]
        self.Y_test = data.Y[test]

    def neighbours(self, weights: np.ndarray):
        search = NeighbourSearch.build(self.X[self.ref], self.data.keys[self.ref], weights, self.data.nominal,
                                       self.data.n_values, self.k)
        idx, _ = nearest(search, self.X[self.test], self.spark, self.knn_mode)
        return idx

    def measures(self, weights: np.ndarray) -> tuple:
        """(measures dict, confusion matrix or None) of the kNN with these weights."""
        idx = self.neighbours(weights)
        prediction = self.prediction
        if prediction == "features":
            Xr = self.X[self.ref]
            fallback = _column_fallback(Xr, self.data.nominal)
            P = neighbour_mode(Xr, idx, self.data.nominal, fallback)
            return {"mse": M.feature_mse(self.X[self.test], P, self.data.nominal)}, None
        if prediction == "vote":
            n_classes = len(self.data.classes or []) or int(np.nanmax(self.data.Y)) + 1
            y_ref = self.Y_ref[:, 0]
            counts = np.bincount(y_ref[~np.isnan(y_ref)].astype(np.int64), minlength=n_classes)
            pred, _ = neighbour_vote(y_ref, idx, n_classes, int(np.argmax(counts)))
            Cm = M.confusion(self.Y_test[:, 0], pred, n_classes)
            return M.classification_measures(Cm), Cm
        P = neighbour_mean(self.Y_ref, idx, _known_mean(self.Y_ref))
        if prediction == "mean":
            return {"arrmse": M.arrmse(self.Y_test, P, M.train_variance(self.Y_ref))}, None
        return M.multilabel_measures(self.Y_test, P), None


def _known_mean(Y: np.ndarray) -> np.ndarray:
    """Per column, the mean of the known values (0 when none is known)."""
    known = ~np.isnan(Y)
    n = known.sum(axis=0)
    return np.where(n > 0, np.where(known, Y, 0.0).sum(axis=0) / np.maximum(n, 1), 0.0)


def _column_fallback(X: np.ndarray, nominal: np.ndarray) -> np.ndarray:
    """Per feature, the training mean (numeric) or most frequent category (nominal): the prediction of a feature no
    neighbour knows."""
    out = np.zeros(X.shape[1])
    for f in range(X.shape[1]):
        col = X[:, f]
        col = col[~np.isnan(col)]
        if col.size == 0:
            continue
        out[f] = np.bincount(col.astype(np.int64)).argmax() if nominal[f] else col.mean()
    return out


def _top_weights(order: np.ndarray, top: int, n: int) -> np.ndarray:
    w = np.zeros(n)
    w[order[:min(top, n)]] = 1.0
    return w


def evaluate_data(data, *, rankings=None, protocol: str = "auto", splits: int | None = None,
                  neighbours: int | None = None, labelled=None, top_features: int = 16, curves: bool = False,
                  curve_learner: str = "auto", curve_features=None, similarity: bool = True, seed: int = 0,
                  spark=None, knn_mode: str = "auto", rank_params: dict | None = None):
    """Run a protocol on read data (:func:`spark_fr.evaluation.evaluate` reads it; the suite reads each set once).

    Returns
    -------
    spark_fr.evaluation.results.Evaluation
    """
    from .curves import curve_records
    from .results import Evaluation

    t_start = time.perf_counter()
    configs = C.resolve_rankings(rankings)
    params = check_rank_params(dict(rank_params or {}))
    labelled_list = _labelled_list(labelled)
    curve_grid = _positive_integers(curve_features, "--curve-features")
    proto = choose_protocol(protocol, data.task, data.test is not None, labelled_list)
    task = data.task
    k = int(neighbours) if neighbours else (SSL_NEIGHBOURS if proto == SSL else tasks.get(task).evaluation.neighbours)
    if k < 1:
        raise InputError(f"--neighbours must be at least 1, not {k}")
    n_splits = int(splits) if splits else 10
    split_list, folds = _splits(data, proto, n_splits, seed)
    calls = C.rank_calls(configs)
    baseline = "random" if proto == UNSUPERVISED else "uniform"
    records, curve_rows, sim_rows, imp_rows = [], [], [], []
    log.info("evaluation of %s (%s, %d rows x %d features): protocol %s, %d split(s), k = %d, rankings %s",
             data.name, task, data.n_rows, data.n_features, proto, len(split_list), k, ", ".join(configs))
    for L in (labelled_list or [None]):
        masks = ssl_labelled(data.keys, split_list, L, seed, folds) if L else [None] * len(split_list)
        confusions: dict = {}
        for si, (split, mask) in enumerate(zip(split_list, masks)):
            t0 = time.perf_counter()
            ref = split.train if mask is None else split.train[mask]
            if ref.size == 0:
                raise InputError(f"{split.name} of {data.name} has no labelled training row")
            ranked = _rank_split(data, split, mask, L, calls, params, seed, spark)
            if proto == UNSUPERVISED:
                rnd = random_ranking(data.n_features, seed, si)
                ranked.order["random"] = np.argsort(-rnd, kind="stable")
                ranked.importances["random"] = rnd
            X = data.scaled_by(split.train)
            judge = Judge(data, X, ref, split.test, k, spark, knn_mode)
            base = {"dataset": data.name, "task": task, "protocol": proto, "split": split.name, "k": k,
                    "n_train": int(ref.size), "n_test": int(split.test.size), "labelled": L}
            for name, w in _weights(ranked, data.n_features, top_features if proto == UNSUPERVISED else None).items():
                values, Cm = judge.measures(w)
                if Cm is not None:
                    confusions.setdefault(name, []).append(Cm)
                records.extend({**base, "ranking": name, "measure": measure, "value": value,
                                "ranking_s": ranked.seconds.get(name)} for measure, value in values.items())
            imp_rows.extend(_importance_rows(data, split.name, L, ranked))
            if curves:
                rows_c, areas = curve_records(data, X, ref, split.test, _with_random(ranked, data.n_features, seed,
                                                                                     si),
                                              judge, curve_learner, seed, base, curve_grid)
                curve_rows.extend(rows_c)
                records.extend(areas)
            if similarity:
                sim_rows.extend(_similarity_rows(data, split.name, L, ranked))
            log.info("evaluation %s: %s%s done in %.1f s (%d of %d)", data.name, split.name,
                     f", L = {L}" if L else "", time.perf_counter() - t0, si + 1, len(split_list))
        if folds is not None:
            records.extend(_pooled(records, confusions, data.name, L))
    table = pd.DataFrame.from_records(records)
    meta = {"dataset": data.name, "input": data.source, "task": task, "protocol": proto, "k": k,
            "splits": [s.name for s in split_list], "rankings": configs, "baseline": baseline,
            "rank_params": params, "seed": seed, "labelled": labelled_list, "top_features": top_features,
            "n_rows": data.n_rows, "n_features": data.n_features, "targets": data.target_columns,
            "seconds": time.perf_counter() - t_start}
    return Evaluation(table, pd.DataFrame.from_records(curve_rows), pd.DataFrame.from_records(sim_rows),
                      pd.DataFrame.from_records(imp_rows), [meta])


def _rank_split(data, split, mask, L, calls, params: dict, seed: int, spark) -> SplitRankings:
    """The rankings of one split: on its training rows; SSL (``mask``: the labelled training rows), supervised on
    the labelled rows (the configuration's name) and semi-supervised on all with the others' labels hidden
    (name-ssl)."""
    task = data.task
    if mask is None:
        return rank_split(data, split.train, calls, params, seed, spark, task=task,
                          label=f"training part of {split.name}")
    ranked = rank_split(data, split.train[mask], calls, params, seed, spark, task=task,
                        label=f"labelled training rows of {split.name}, L={L}")
    semi = rank_split(data, split.train, calls, params, seed, spark, task=task, hide=~mask, semi=True,
                      suffix="-ssl", label=f"training part of {split.name}, L={L} labelled")
    ranked.importances.update(semi.importances)
    ranked.order.update(semi.order)
    ranked.seconds.update(semi.seconds)
    return ranked


def _weights(ranked: SplitRankings, n_features: int, top: int | None) -> dict:
    """{name: kNN weights}: the uniform baseline, then every ranking's ``max(importance, 0)``, or (the unsupervised
    protocol, ``top`` given) weight 1 on its top features."""
    out = {"uniform": np.ones(n_features)}
    if top is None:
        out.update({name: feature_weights(imp) for name, imp in ranked.importances.items()})
    else:
        out.update({name: _top_weights(order, top, n_features) for name, order in ranked.order.items()})
    return out


def _importance_rows(data, split: str, L, ranked: SplitRankings) -> list:
    names = data.feature_names
    rows = []
    for name, imp in ranked.importances.items():
        rank = np.empty(len(names), np.int64)
        rank[ranked.order[name]] = np.arange(1, len(names) + 1)
        rows.extend({"dataset": data.name, "split": split, "labelled": L, "ranking": name, "feature": feat,
                     "importance": float(imp[f]), "rank": int(rank[f])} for f, feat in enumerate(names))
    return rows


def _similarity_rows(data, split: str, L, ranked: SplitRankings) -> list:
    """The area under the Fuzzy Jaccard curve of every pair of rankings (baselines left out)."""
    from .similarity import fji_area, fuzzy_jaccard_curve

    feats = np.asarray(data.feature_names, dtype=object)
    names = [n for n in ranked.importances if n not in C.BASELINES]
    rows = []
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            oa, ob = ranked.order[names[a]], ranked.order[names[b]]
            curve = fuzzy_jaccard_curve(feats[oa], ranked.importances[names[a]][oa], feats[ob],
                                        ranked.importances[names[b]][ob])
            rows.append({"dataset": data.name, "split": split, "labelled": L, "ranking_1": names[a],
                         "ranking_2": names[b], "aufji": fji_area(curve), "fji_1": float(curve[0])})
    return rows


def _labelled_list(labelled) -> list:
    if labelled is None or labelled == [] or labelled == 0:
        return []
    return _positive_integers(labelled, "--labelled", "labelled training rows")


def _positive_integers(values, flag: str, what: str = "feature counts"):
    """Sorted distinct positive integers (one-line error otherwise); None stays None."""
    if values is None:
        return None
    items = [values] if isinstance(values, (int, np.integer)) else list(values)
    out = []
    for v in items:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise InputError(f"{flag} takes positive integers ({what}), not {v!r}")
        out.append(int(v))
    if not out:
        raise InputError(f"{flag} needs at least one positive integer ({what})")
    return sorted(set(out))


def _with_random(ranked: SplitRankings, n_features: int, seed: int, index: int) -> SplitRankings:
    """``ranked`` with the split's random ranking (the curves' baseline) when it has none (supervised protocols)."""
    if "random" in ranked.order:
        return ranked
    out = SplitRankings()
    out.importances, out.order, out.seconds = dict(ranked.importances), dict(ranked.order), dict(ranked.seconds)
    rnd = random_ranking(n_features, seed, index)
    out.importances["random"] = rnd
    out.order["random"] = np.argsort(-rnd, kind="stable")
    return out


def _splits(data, proto: str, n: int, seed: int) -> tuple:
    """(list of Split, fold of every row or None) of the protocol."""
    if proto == TRAIN_TEST or (proto == SSL and data.test is not None):
        return given_split(data.test), None
    rows = np.arange(data.n_rows)
    if data.test is not None:  # a cross-validation or random splits of the training file's rows only
        rows = np.flatnonzero(~data.test)
    keys = data.keys[rows]
    if proto == SPLITS:
        out = random_splits(keys, n, seed)
        return [Split(s.name, rows[s.train], rows[s.test]) for s in out], None
    if n < 2:
        raise InputError(f"--splits {n}: cross-validation needs at least 2 folds")
    y = data.Y[rows, 0] if tasks.get(data.task).evaluation.prediction == "vote" else None  # stratified by class
    out, folds_local = cv_splits(keys, n, seed, y)
    folds = np.full(data.n_rows, -1)
    folds[rows] = folds_local
    return [Split(s.name, rows[s.train], rows[s.test]) for s in out], folds


def _pooled(records: list, confusions: dict, dataset: str, L) -> list:
    """The 'pooled' split of a cross-validation: summed confusion matrices (classification), else the folds'
    values weighted by their test rows."""
    rows = [r for r in records if r["dataset"] == dataset and r["labelled"] == L and r["split"] != "pooled"]
    if not rows:
        return []
    df = pd.DataFrame.from_records(rows)
    out = []
    first = rows[0]
    for (name, measure), g in df.groupby(["ranking", "measure"], sort=False):
        base = {k: first[k] for k in ("dataset", "task", "protocol", "k")}
        base.update({"split": "pooled", "n_train": int(g.n_train.sum()), "n_test": int(g.n_test.sum()),
                     "labelled": L, "ranking": name, "ranking_s": float(g.ranking_s.sum()) if g.ranking_s.notna().any()
                     else None})
        if name in confusions and measure in ("accuracy", "kappa", "macro_f1", "mcc", "macro_mcc"):
            value = M.classification_measures(np.sum(confusions[name], axis=0))[measure]
        else:
            ok = g.value.notna()
            value = float(np.average(g.value[ok], weights=g.n_test[ok])) if ok.any() else float("nan")
        out.append({**base, "measure": measure, "value": value})
    return out
