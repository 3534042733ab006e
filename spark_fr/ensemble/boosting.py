"""Gradient-boosted PCT ranking (``--method boosting``): Friedman's stochastic gradient boosting with PCTs as
regression trees on the pseudo-residuals, and the Symbolic and Genie3 scores of every tree summed.

Algorithm sketch
----------------
    encoded <- statistics, bins and mapInArrow column blocks collected on the driver in canonical row order,
               as the ensembles' broadcast mode (spark_fr.data)
    T, loss <- the fitted task's boosting loss and its targets             spark_fr.tasks.losses
    F       <- loss.initial(T) on every row (n x K; K = 1 but for 3+ classes)
    for round m = 0 .. M-1 (M = --trees):
        w    <- 1 on the floor(fraction * n) rows with the smallest hash(derive_seed(seed, m, SUBSAMPLE), row key),
                0 elsewhere (a sample without replacement, shared by the round's K trees)
        r, h <- loss.residuals(T, F), loss.hessians(T, F)
        for column k = 0 .. K-1 (a class), tree t = m K + k:
            tree <- grow(codes, Z = r_k - mean_w(r_k), weights w, --max-depth, --max-features per node,
                         --min-samples-leaf, seed derive_seed(seed, t, GROW))                spark_fr.pct
            v    <- loss.leaf_values(leaf of each sampled row, r_k, h_k, w)   (Newton step, or the mean)
            F[:, k] += shrinkage * v[leaf of each row]                       (Tree.predict_values, all rows)
            symbolic[t], genie3[t] <- the tree's scores                      spark_fr.pct.scores
        train_loss[m] <- loss(T, F)
    importance = the sum over the trees (the ranking is that of the mean); curve = the running sums
    cv      <- --cv-folds K: the same boosting on the rows outside each of K stratified folds, its held-out
               predictions scored (cross_validate_boosting; spark_fr.ensemble.validation), in run.json

Decisions
---------
* **Where it runs: on the driver**, on the encoded blocks collected once. Rounds are sequential (a round's
  residuals need every earlier tree), and one round's work is small: a depth-4 tree on 10^4 rows x 50 features
  takes milliseconds, against 0.1-0.5 s for a Spark job and ~25 ms per Python task, and each round would
  have to ship the n x K raw scores to the executors and back. Making the K class trees of a round K Spark
  tasks would cost more than it saves for the few classes boosting sees. Spark does what scales with the
  data: reading, statistics and encoding (mapInArrow); the encoded data must fit ``--max-broadcast-mb``
  (it is the limit of what a run holds in one process, the same as the ensembles' broadcast mode).
* **Determinism**: everything after the collection is a function of the canonical row order and the row
  keys, so the ranking is the same, bit for bit, for any number of partitions.
* **Scores**: Genie3 is the reduction of the residuals' sum of squares (``alpha = 1``: the units of the
  residuals, the same for every tree, which is all a sum needs; scikit-learn's unnormalised impurity
  importance of its trees times n); Symbolic is ``|E(N)| / n`` with n the training rows (or ``w^depth``).
  ``importance_std`` is null: boosted trees are not exchangeable draws (tree m fits what the trees before it
  left), so their spread describes no sampling distribution. The RF score is not defined (no out-of-bag
  model error to permute: spec Sec. 2.4).
* **Defaults** (spec methods-papers.md Sec. 2.3, the ISMIS paper's grid; it found small shrinkage better,
  depth > 2 enough, sqrt(D) features per node too few and an example fraction of 0.6 harmful): 50 rounds,
  depth 4, every feature per node, example fraction 0.8 (Friedman's stochastic boosting without the
  fraction the paper found harmful), shrinkage 0.05 (the grid's smallest, as the paper found small values
  better; measured on a planted 10,000 x 50, 3-class set, 50 rounds: the weakest relevant feature's Genie3
  over the best noise feature's is 123 at 0.05, 55 at 0.1, 22 at 0.2, Symbolic 24 / 15 / 5.4, while the
  training log-loss goes from 1.09 to 0.43 / 0.35 / 0.28: later trees of a larger step fit more noise),
  Newton leaf values (:mod:`spark_fr.tasks.losses`).
* **Sampling per round**, not per class tree: the K trees of a round are one step of the softmax model on
  one sample (Friedman 2001, Algorithm 6; scikit-learn's ``subsample``); for regression and two classes a
  round is one tree.
* **A round must be able to split** (:func:`check_round_sample`): a split leaves at least
  ``--min-samples-leaf`` sampled rows on each side, so it needs ``2 x ceil(--min-samples-leaf)`` rows. A round
  that gets fewer (``floor(--example-fraction x rows)``; with ``--cv-folds K``, of the smallest training set,
  ``rows - ceil(rows / K)``) grows single leaves: every importance would be 0 and the ranking the file order.
  Such settings are refused before boosting starts, with the fraction that would do.
"""
from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np

from ..data.blocks import codes_of_rows, collect_encoded
from ..data.prepare import prepare
from ..errors import InputError
from ..pct import scores as pct_scores
from ..pct.config import grow_config
from ..pct.tree import Tree, grow
from ..pct.relation_scores import node_rewards, relation_scores
from ..results import MethodRun, ScoreKey, ScoreResult
from ..runtime import warmups
from ..runtime.progress import Progress
from ..runtime.rng import Stream, derive_seed, hash_uniform
from ..tasks import TaskError
from .params import BoostingParams
from .run import feature_relations, training_rows
from .spark import fold_runner
from .validation import check_folds, cross_validate, describe

log = logging.getLogger(__name__)

#: run.json records the importance curve of at most this many features (the best of each score when there
#: are more; all of them below)
CURVE_MAX_FEATURES = 1000


@dataclass
class BoostingData:
    """What boosting needs, as NumPy arrays on the driver.

    Attributes
    ----------
    codes : uint8 (D, n)
        Column-major feature codes (the grower's input).
    nominal : bool (D,)
    lower, upper : float64 (D, 255)
        Bin ranges.
    Y : float64 (n, 1)
        The fitted task's targets (:meth:`FittedTask.targets`): class indices, or numbers.
    row_keys : uint64 (n,)
        Stable, distinct row keys (the example subsampling is a function of them).
    task : FittedTask
    """

    codes: np.ndarray
    nominal: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    Y: np.ndarray
    row_keys: np.ndarray
    task: object
    codes_rows: np.ndarray | None = None
    relations: object = None

    @property
    def n_rows(self) -> int:
        return self.codes.shape[1]

    @property
    def n_features(self) -> int:
        return self.codes.shape[0]

    def rows_major(self) -> np.ndarray:
        """The row-major code matrix (n, D) that routing reads (made once)."""
        if self.codes_rows is None:
            self.codes_rows = np.ascontiguousarray(self.codes.T)
        return self.codes_rows


@dataclass
class BoostedModel:
    """A boosted model and the importance of every feature after every tree.

    Attributes
    ----------
    loss : BoostingLoss
    initial : ndarray (K,)
        The initial raw score.
    trees : list of (Tree, ndarray)
        Each tree (without its training rows) and its node values (before shrinkage).
    tree_round, tree_column : ndarray of int (n_trees,)
        Round and column of F (class) of each tree.
    symbolic, genie3 : ndarray (n_trees, D)
        Per-tree scores.
    relation_scores : dict
        Relational input: {'symbolic' / 'genie3': (n_trees, R)} per-tree relation scores (node rule).
    train_loss : ndarray (M + 1,)
        Mean training loss of the initial model and after every round.
    F : ndarray (n, K)
        Final raw scores of the training rows.
    shrinkage : float
    """

    loss: object
    initial: np.ndarray
    trees: list = field(default_factory=list)
    tree_round: np.ndarray | None = None
    tree_column: np.ndarray | None = None
    symbolic: np.ndarray | None = None
    genie3: np.ndarray | None = None
    relation_scores: dict = field(default_factory=dict)
    train_loss: np.ndarray | None = None
    F: np.ndarray | None = None
    shrinkage: float = 0.1

    @property
    def n_trees(self) -> int:
        return len(self.trees)

    def per_tree(self, score: str) -> np.ndarray:
        """Per-tree scores (n_trees, D) of 'symbolic' or 'genie3'."""
        return {"symbolic": self.symbolic, "genie3": self.genie3}[score]

    def curve(self, score: str) -> np.ndarray:
        """Importance of every feature after every tree (n_trees, D): running sums in tree order."""
        return np.cumsum(self.per_tree(score), axis=0)

    def importance(self, score: str) -> np.ndarray:
        """The final importance: the sum over all trees (the last row of :meth:`curve`)."""
        curve = self.curve(score)
        return curve[-1] if curve.shape[0] else np.zeros(curve.shape[1])

    def decision_function(self, XR: np.ndarray) -> np.ndarray:
        """Raw scores (n, K) of rows given by their row-major codes (n, D)."""
        F = np.tile(self.initial, (XR.shape[0], 1))
        for (tree, values), k in zip(self.trees, self.tree_column):
            F[:, k] += self.shrinkage * tree.predict_values(XR, values)
        return F


# ----------------------------------------------------------------------------------------------------------
# the algorithm (driver, NumPy and the pct kernels)
# ----------------------------------------------------------------------------------------------------------
def round_size(n_rows: int, fraction: float) -> int:
    """Rows a round's trees grow on: ``floor(fraction * n_rows)``, at least 1 (all of them for a fraction of 1)."""
    if fraction >= 1.0 or n_rows == 0:
        return n_rows
    return max(1, int(fraction * n_rows))


def check_round_sample(n_rows: int, params: BoostingParams) -> None:
    """Refuse settings under which no tree of a round can split (see the module notes).

    Parameters
    ----------
    n_rows : int
        The training rows of the ranking.
    params : BoostingParams
        ``example_fraction``, ``min_samples_leaf`` and ``cv_folds`` are read.

    Raises
    ------
    InputError
        One line naming ``--example-fraction`` (or ``--min-samples-leaf`` when even every row is too few), the rows
        a round gets and the rows a split needs.
    """
    need = 2 * math.ceil(params.min_samples_leaf)
    rows, where = n_rows, f"the {n_rows} training rows"
    if params.cv_folds:
        rows = n_rows - -(-n_rows // params.cv_folds)
        where = f"the {rows} training rows of a --cv-folds {params.cv_folds} fold"
    got = round_size(rows, params.example_fraction)
    if got >= need:
        return
    split = f"a split needs {need} (--min-samples-leaf {params.min_samples_leaf:g} on each side)"
    if rows < need:
        raise InputError(f"--method boosting: {where} are fewer than {split}: every tree would be a single leaf and "
                         f"every importance 0; lower --min-samples-leaf or give more rows")
    least = math.ceil(need / rows * 1000) / 1000
    while round_size(rows, least) < need:  # the float product may fall just short
        least = round(least + 0.001, 3)
    raise InputError(f"--example-fraction {params.example_fraction:g} gives each boosting round {got} of {where}, "
                     f"and {split}: every tree would be a single leaf and every importance 0; use "
                     f"--example-fraction {least:g} or more")


def round_sample(seed: int, round_index: int, keys: np.ndarray, fraction: float) -> np.ndarray:
    """0/1 weights of the rows of round ``round_index``: :func:`round_size` rows drawn without replacement, those
    with the smallest ``hash_uniform(derive_seed(seed, round, SUBSAMPLE), key)`` (ties: the smaller key). A
    function of (seed, round, the set of keys) only, not of the rows' order or partitioning.
    """
    n = keys.shape[0]
    if fraction >= 1.0 or n == 0:
        return np.ones(n)
    m = round_size(n, fraction)
    u = hash_uniform(derive_seed(seed, round_index, Stream.SUBSAMPLE), keys)
    chosen = np.lexsort((keys, u))[:m]
    w = np.zeros(n)
    w[chosen] = 1.0
    return w


def _stripped(tree: Tree) -> Tree:
    """The tree without its per-row arrays (a model keeps many trees)."""
    return replace(tree, leaf_of_row=np.empty(0, tree.leaf_of_row.dtype), column_gain=np.zeros((0, 0)))


def boost(data: BoostingData, params: BoostingParams, loss=None, progress=None) -> BoostedModel:
    """Boost ``params.trees`` rounds on ``data`` (see the module sketch).

    Parameters
    ----------
    data : BoostingData
    params : BoostingParams
    loss : BoostingLoss, optional
        Default: the task's (:meth:`FittedTask.boosting_loss`).
    progress : Progress, optional
        Advanced by one per round (:mod:`spark_fr.runtime.progress`).

    Returns
    -------
    BoostedModel
    """
    loss = data.task.boosting_loss() if loss is None else loss
    T = loss.encode(data.Y)
    n, D, K = data.n_rows, data.n_features, loss.n_columns
    XR = data.rows_major()
    F = np.tile(loss.initial(T), (n, 1))
    model = BoostedModel(loss, F[0].copy() if n else loss.initial(T), shrinkage=params.shrinkage)
    per_node = params.features_per_node(D)
    n_trees = params.trees * K
    symbolic, genie3 = np.zeros((n_trees, D)), np.zeros((n_trees, D))
    if data.relations is not None:
        model.relation_scores = {s: np.zeros((n_trees, data.relations.n_relations)) for s in ("symbolic", "genie3")}
    losses = [loss.loss(T, F)]
    for m in range(params.trees):
        w = round_sample(params.seed, m, data.row_keys, params.example_fraction)
        sampled = w > 0
        R, H = loss.residuals(T, F), loss.hessians(T, F)
        for k in range(K):
            t = m * K + k
            r = R[:, k]
            Z = np.ascontiguousarray((r - r[sampled].mean())[:, None])
            config = grow_config(min_leaf=params.min_samples_leaf, max_depth=params.max_depth, max_features=per_node,
                                 resample_constant=params.resample_constant,
                                 seed=derive_seed(params.seed, t, Stream.GROW))
            tree = grow(data.codes, data.nominal, data.lower, data.upper, Z, w, config)
            values = loss.leaf_values(tree.leaf_of_row, r, H[:, k], w, tree.n_nodes, params.leaf_values)
            F[:, k] += params.shrinkage * tree.predict_values(XR, values)
            symbolic[t] = pct_scores.symbolic(tree, D, n, params.symbolic_weight)
            genie3[t] = pct_scores.genie3(tree, D)
            for s, per_tree in model.relation_scores.items():
                per_tree[t] = relation_scores(tree, node_rewards(tree, s, n, params.symbolic_weight), data.relations)
            model.trees.append((_stripped(tree), values))
        losses.append(loss.loss(T, F))
        if progress is not None:
            progress.advance(1)
    model.tree_round = np.repeat(np.arange(params.trees), K)
    model.tree_column = np.tile(np.arange(K), params.trees)
    model.symbolic, model.genie3 = symbolic, genie3
    model.train_loss = np.array(losses)
    model.F = F
    return model


def results_of(model: BoostedModel, scores: list) -> list:
    """The :class:`ScoreResult` of each score: the sum over the trees, no spread (see the module notes)."""
    out = [ScoreResult(ScoreKey(s), model.importance(s), None) for s in scores]
    return out + [ScoreResult(ScoreKey(s, level="relation"), model.relation_scores[s].sum(axis=0), None)
                  for s in scores if s in model.relation_scores]


def curve_report(model: BoostedModel, scores: list, feature_names: list,
                 max_features: int = CURVE_MAX_FEATURES) -> dict:
    """What run.json records of a boosted model: per tree its round and class, the importance of the features
    after it (one entry per tree; the last equals the final importances), the training loss per round."""
    D = len(feature_names)
    keep = np.arange(D)
    if D > max_features:
        best = set()
        for s in scores:
            best |= set(np.argsort(-model.importance(s), kind="stable")[:max_features // max(len(scores), 1)])
        keep = np.array(sorted(best), np.int64)
    columns = model.loss.columns
    return {"trees": model.n_trees, "rounds": int(model.train_loss.size - 1), "trees_per_round": len(columns),
            "columns": list(columns), "loss": type(model.loss).__name__, "initial": model.initial.tolist(),
            "train_loss": model.train_loss.tolist(),
            "curve": {"features": [feature_names[i] for i in keep], "tree_round": model.tree_round.tolist(),
                      "tree_class": [columns[k] for k in model.tree_column],
                      **{s: model.curve(s)[:, keep].tolist() for s in scores}}}


def boost_arrays(X, Y, task: str, params: BoostingParams | None = None, **kwargs) -> tuple:
    """Boost in-memory arrays locally, without Spark (tests, small data): (BoostedModel, BoostingData).

    ``X``, ``Y``, ``task`` and ``kwargs`` (``nominal``, ``target_names``, ``classes``, ``row_keys``) as in
    :func:`spark_fr.ensemble.local.tree_data_from_arrays`.
    """
    from .local import tree_data_from_arrays

    params = params or BoostingParams()
    td, _ = tree_data_from_arrays(X, Y, task, **kwargs)
    data = BoostingData(td.codes, td.nominal, td.lower, td.upper, td.Y, td.row_keys, td.task)
    return boost(data, params), data


def boosting_fold_predictions(data: BoostingData, params: BoostingParams, folds: np.ndarray,
                              fold: int) -> np.ndarray:
    """Predictions (m, 1) of the held-out rows of ``fold`` (``np.flatnonzero(folds == fold)``, in that order) by
    the model boosted on the other rows: the loss's class (index among the task's classes) or value."""
    test, train = np.flatnonzero(folds == fold), np.flatnonzero(folds != fold)
    train_data = BoostingData(np.ascontiguousarray(data.codes[:, train]), data.nominal, data.lower, data.upper,
                              data.Y[train], data.row_keys[train], data.task)
    model = boost(train_data, params)
    return model.loss.predict_targets(model.decision_function(np.ascontiguousarray(data.codes[:, test].T)))


def cross_validate_boosting(data: BoostingData, params: BoostingParams, k: int, seed: int, *, runner=None,
                            estimated_seconds: float | None = None) -> dict:
    """K-fold cross-validated predictive performance of the boosted model (``--cv-folds``).

    Every fold boosts ``params.trees`` rounds with the ranking's parameters on the rows outside it (the rounds'
    samples are functions of the training rows' keys, :func:`round_sample`) and predicts its rows with
    :meth:`BoostedModel.decision_function` and the loss's class or value; see
    :mod:`spark_fr.ensemble.validation` for the folds, the measures and the record. It lives here, not there,
    because :func:`rank_boosting` calls it and the package's imports have no cycles.

    Parameters
    ----------
    data : BoostingData
    params : BoostingParams
    k : int
        Folds, 2 <= k <= rows.
    seed : int
        The folds' seed (the run uses ``params.seed``).
    runner, estimated_seconds
        As in :func:`spark_fr.ensemble.validation.cross_validate` (default: every fold here, in order).

    Returns
    -------
    dict
        The cross-validation record (accuracy against the majority class, or RRMSE against the training mean).
    """
    return cross_validate(data, k, seed, partial(boosting_fold_predictions, params=params), runner=runner,
                          estimated_seconds=estimated_seconds)


def warm_up_kernels() -> None:
    """Compile (or load from numba's cache) the kernels boosting uses, on a tiny problem."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    X[0, 0] = np.nan
    X[:, 2] = rng.integers(0, 3, 40)
    boost_arrays(X, (X[:, 0] > 0).astype(float), "classification", BoostingParams(trees=2),
                 nominal=np.array([False, False, True]))


# ----------------------------------------------------------------------------------------------------------
# the run (Spark for reading and encoding)
# ----------------------------------------------------------------------------------------------------------
def driver_bytes(n_rows: int, n_features: int, n_columns: int) -> float:
    """Memory of a boosting run on the driver: codes in both layouts, and T, F, residuals, Hessians."""
    return n_rows * (2.0 * n_features + 8.0 * (4 * n_columns + 4))


def validate_boosting(spark, data: BoostingData, params: BoostingParams, boost_seconds: float) -> dict:
    """``--cv-folds``: the cross-validation record of the run's boosted model, each fold one unit of work (in
    the driver when small, else a Spark task; estimated from the ranking's own boosting time); logs one line."""
    k = params.cv_folds
    log.info("%d-fold cross-validation of the boosted model (%d rounds per fold)", k, params.trees)
    data = replace(data, codes_rows=None)  # the folds route their rows from the codes: ship them once
    record = cross_validate_boosting(data, params, k, params.seed, runner=fold_runner(spark),
                                     estimated_seconds=boost_seconds * (k - 1))
    log.info("%s", describe(record))
    return record


def rank_boosting(spark, dataset, spec, params: BoostingParams, semi_supervised: bool = False,
                  force_executors: bool = False) -> MethodRun:
    """Rank the features of ``dataset`` by gradient boosting (see the module sketch).

    ``force_executors`` encodes on Spark's executors even an input small enough for the driver (tests).
    """
    prep = prepare(dataset, spec, outputs=("codes",), method="boosting", spark=spark,
                   force_executors=force_executors)
    try:
        n_classes = max(1, len(prep.encoder.classes or []))
        size = driver_bytes(prep.n_rows, len(prep.plan.features), n_classes)
        if size > params.max_broadcast_mb * 2 ** 20:
            raise InputError(f"--method boosting runs on the driver and needs about {size / 2 ** 20:.0f} MB for "
                             f"this input, above --max-broadcast-mb {params.max_broadcast_mb:g}: raise it (and "
                             f"the driver's memory) or use --method ensemble")
        encoded = collect_encoded(prep, spec.feature_names, spark)
    finally:
        prep.release()
    rows = training_rows(encoded.Y, encoded.Y.shape[1], False)
    try:
        fitted = prep.target_type.fit(encoded.Y[rows], prep.encoder.names, prep.encoder.classes)
        loss = fitted.boosting_loss()
    except TaskError as err:
        raise InputError(str(err)) from None
    lower, upper, _ = encoded.bin_arrays()
    data = BoostingData(codes_of_rows(encoded.codes, rows), encoded.nominal, lower, upper,
                        fitted.targets(encoded.Y[rows]), encoded.row_keys[rows], fitted,
                        relations=feature_relations(dataset, encoded.feature_names))
    if params.cv_folds:
        check_folds(params.cv_folds, data.n_rows)  # before any tree is grown
    check_round_sample(data.n_rows, params)
    warmups.warm("boosting")
    t0 = time.perf_counter()
    log.info("boosting %d rounds x %d tree(s) (%s, shrinkage %g, example fraction %g)", params.trees,
             loss.n_columns, type(loss).__name__, params.shrinkage, params.example_fraction)
    with Progress(params.trees, "boosting rounds") as progress:
        model = boost(data, params, loss, progress)
    seconds = time.perf_counter() - t0
    log.info("boosted %d trees in %.1f s; training loss %.4g -> %.4g", model.n_trees, seconds,
             model.train_loss[0], model.train_loss[-1])
    timings = dict(encoded.timings)
    timings["trees_s"] = seconds
    info = {"encoded_on": encoded.encoded_on, "executed_on": "driver",
            "boosting": curve_report(model, params.scores, list(encoded.feature_names))}
    if params.cv_folds:
        info["cross_validation"] = validate_boosting(spark, data, params, seconds)
    derived = {k: getattr(params, k) for k in params.unset}
    derived.update(features_per_node=params.features_per_node(encoded.n_features), trees_per_round=loss.n_columns)
    return MethodRun(encoded.feature_names, encoded.usable, results_of(model, params.scores), prep.encoder.names,
                     prep.task, int(rows.sum()), encoded.n_rows, info, timings, derived)
