"""Growing and scoring a group of trees: the unit of work of one Spark task (no Spark in here).

Sketch
------
``TreeData`` is what every task needs and what the driver broadcasts once: the feature codes, the bin
ranges, the task's clustering and prototype columns, the raw targets and the stable row keys. For tree
``t`` of a run with seed ``s``:

    seed_t  = derive_seed(s, t, GROW)                           # independent of task / executor / retry
    patch   = all features, or tree t's random patch            # spark_fr.ensemble.patches (wide mode)
    weights = Poisson(1) counts of (derive_seed(s, t, BOOTSTRAP), row key)  if bootstrap, else 1
    tree    = grow(codes of the patch, ...)                     # spark_fr.pct; per-node subsets within it
    scores  = Symbolic / Genie3 / RF score of the tree          # spark_fr.pct.scores

and the group's scores are summed into a :class:`ScoreAccumulator`. Trees depend only on (seed, t) and on
the data, so a group may be split, merged or retried in any way. A task may hold only some of the feature
columns (``feature_ids``: partitioned mode ships a tree group the union of its trees' patches); scores are
always returned over all the input's features.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..pct import scores as pct_scores
from ..pct.config import grow_config
from ..pct.node_rows import NODE_CODES_MAX_FEATURES
from ..pct.relation_scores import node_rewards, relation_scores
from ..pct.tree import Tree, grow
from ..runtime.rng import Stream, derive_seed
from ..results import ScoreKey
from .aggregate import ScoreAccumulator
from .bagging import Bagging
from .params import EnsembleParams
from .patches import tree_patch


#: the most bytes of a row-major copy of the codes made for the grower's small nodes alone (the RF score makes
#: one whatever its size)
ROW_MAJOR_GROW_BYTES = 256 << 20
#: the most features of a table whose small nodes read the row-major codes: a row's codes in at most 64 cache lines
ROW_MAJOR_MAX_FEATURES = 4096


@dataclass
class TreeData:
    """Everything a tree needs, as NumPy arrays (broadcast once per run).

    Attributes
    ----------
    codes : uint8 (D, n)
        Column-major codes (the grower scans one feature at a time).
    codes_rows : uint8 (n, D) or None
        Row-major copy (prediction walks one row at a time); needed by the RF score only.
    nominal : bool (D,)
    lower, upper : float64 (D, 255)
    Z : float64 (n, K) or SparseColumns
        What the task's trees cluster on (:meth:`FittedTask.clustering_input`): the dense clustering matrix,
        or label-sparse columns for HMLC.
    Y : float64 (n, T)
        Raw targets.
    proto : float64 (n, P)
        The task's prototype columns.
    row_keys : uint64 (n,)
    task : FittedTask
    feature_ids : int64 (D,) or None
        The input's index of each feature row of ``codes`` (None: all the input's features, in order).
    n_features_all : int or None
        The input's number of features (None: ``codes.shape[0]``).
    relations : FeatureRelations or None
        Relational input: the relations of each of the input's features; the Symbolic and Genie3 scores are
        then also rolled up to relations by the node rule (:mod:`spark_fr.pct.relation_scores`).
    """

    codes: np.ndarray
    nominal: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    Z: object
    Y: np.ndarray
    proto: np.ndarray
    row_keys: np.ndarray
    task: object
    codes_rows: np.ndarray | None = None
    bagging: Bagging | None = None
    n_total: int | None = None
    feature_ids: np.ndarray | None = None
    n_features_all: int | None = None
    relations: object = None

    def with_row_major(self) -> "TreeData":
        """Add the row-major code matrix (for the RF score) if it is missing."""
        if self.codes_rows is None:
            self.codes_rows = np.ascontiguousarray(self.codes.T)
        return self

    def with_row_major_for(self, params: EnsembleParams) -> "TreeData":
        """Add the row-major code matrix when the trees read it: the RF score walks rows, and the grower reads a
        small node's codes from it when its trees keep no node codes (:meth:`grows_on_rows`) and it is small.

        Decision: a copy made for the grower alone is made up to :data:`ROW_MAJOR_GROW_BYTES` (the codes
        doubled); past it the small nodes read the column-major codes, as before."""
        if "rf" in params.effective_scores() or (self.grows_on_rows(params)
                                                 and self.codes.size <= ROW_MAJOR_GROW_BYTES):
            self.with_row_major()
        return self

    def grows_on_rows(self, params: EnsembleParams) -> bool:
        """Whether the grower's small nodes read :attr:`codes_rows` (when given): the trees grow on all of this
        data's features (no patch of them), keep no node codes (more than
        :data:`~spark_fr.pct.node_rows.NODE_CODES_MAX_FEATURES` features), and a row's codes span at most
        :data:`ROW_MAJOR_MAX_FEATURES` bytes (a few cache lines that a node's candidate features share)."""
        whole = self.feature_ids is None and params.patch_size(self.n_input_features) is None
        return whole and NODE_CODES_MAX_FEATURES < self.n_features <= ROW_MAJOR_MAX_FEATURES

    @property
    def n_features(self) -> int:
        return self.codes.shape[0]

    @property
    def n_input_features(self) -> int:
        """The input's number of features (scores have this length)."""
        return self.n_features_all if self.n_features_all is not None else self.n_features

    def columns_of(self, features: np.ndarray) -> np.ndarray:
        """Positions in ``codes`` of the input's features ``features`` (sorted, all held by this data)."""
        if self.feature_ids is None:
            return np.asarray(features, np.int64)
        return np.searchsorted(self.feature_ids, features).astype(np.int64)

    def to_input_features(self, scores: np.ndarray) -> np.ndarray:
        """Scores over this data's features (last axis) -> over all the input's features (0 elsewhere)."""
        if self.feature_ids is None:
            return scores
        out = np.zeros(scores.shape[:-1] + (self.n_input_features,))
        out[..., self.feature_ids] = scores
        return out

    @property
    def n_rows(self) -> int:
        return self.codes.shape[1]

    @property
    def n_training_rows(self) -> int:
        """|E_train|: the rows of the whole training set (more than ``n_rows`` for a tree group's rows)."""
        return self.n_total if self.n_total is not None else self.n_rows

    def sampling(self, params: EnsembleParams) -> Bagging:
        return self.bagging if self.bagging is not None else Bagging.of(params, self.n_training_rows)


def grow_tree_of(data: TreeData, params: EnsembleParams, index: int, weights: np.ndarray, track: bool):
    """Grow tree ``index`` on its patch of ``data``'s features; its tests refer to ``data``'s feature rows."""
    D_all = data.n_input_features
    size = params.patch_size(D_all)
    cols = None if size is None and data.feature_ids is None else data.columns_of(
        tree_patch(params.seed, index, D_all, size))
    per_node = params.features_per_node(D_all)
    config = grow_config(min_leaf=params.min_samples_leaf, max_depth=params.max_depth,
                         max_features=per_node if cols is None else min(per_node, cols.size),
                         splitter=params.splitter, missing=params.missing,
                         resample_constant=params.resample_constant, track_columns=track,
                         seed=derive_seed(params.seed, index, Stream.GROW))
    if cols is None:
        by_row = data.codes_rows if data.grows_on_rows(params) else None
        return grow(data.codes, data.nominal, data.lower, data.upper, data.Z, weights, config, by_row)
    tree = grow(np.ascontiguousarray(data.codes[cols]), data.nominal[cols], data.lower[cols], data.upper[cols],
                data.Z, weights, config)
    return tree.on_columns(cols, data.n_features, data.nominal)


@dataclass
class GrownTree:
    """One tree of a run as its scores see it (what :func:`score_tree` scores; :func:`forest` gives all of them).

    Attributes
    ----------
    index : int
        The tree's index in the ensemble.
    tree : Tree
        Its tests refer to the rows of ``data.codes`` (the input's features when ``feature_ids`` is None).
    weights : ndarray (n,)
        Bootstrap counts of the rows (0: out of bag).
    oob : ndarray of int
        The out-of-bag rows the RF score evaluates, increasing (all of them up to ``--max-oob-rows``).
    seed : int
        The tree's seed (its growth and its RF score's permutations).
    """

    index: int
    tree: Tree
    weights: np.ndarray
    oob: np.ndarray
    seed: int

    def permutation(self, feature_id: int) -> np.ndarray:
        """The permutation the RF score applies to the input's feature ``feature_id`` on ``oob``: out-of-bag row
        ``oob[i]`` takes the value of row ``oob[p[i]]``."""
        return pct_scores.oob_permutation(self.seed, feature_id, self.oob.size)


def grow_scored_tree(data: TreeData, params: EnsembleParams, index: int, track: bool = False) -> GrownTree:
    """Grow tree ``index`` of a run with its bootstrap counts, and find the out-of-bag rows its RF score uses."""
    bagging = data.sampling(params)
    weights = bagging.counts(index, data.row_keys)
    tree = grow_tree_of(data, params, index, weights, track)
    oob = np.flatnonzero(bagging.evaluated(index, data.row_keys, weights))
    return GrownTree(index, tree, weights, oob, derive_seed(params.seed, index, Stream.GROW))


def forest(data: TreeData, params: EnsembleParams, indices=None):
    """The trees of a run (``range(params.trees)`` by default), one :class:`GrownTree` at a time, as the run grows
    and scores them (inspection, and checks of the scores against references written from their definitions)."""
    for index in range(params.trees) if indices is None else indices:
        yield grow_scored_tree(data, params, int(index))


def score_tree(data: TreeData, params: EnsembleParams, index: int) -> dict:
    """Grow tree ``index`` and return its score arrays ``{ScoreKey: array}``.

    Joint scores 'symbolic', 'genie3', 'rf' have shape (D,); with ``per_target``, the per-target Genie3 and
    RF scores have shape (T, D); D is the input's number of features.
    """
    D = data.n_features
    scores = params.effective_scores()
    per_target = params.per_target and data.task.n_targets > 1
    track = per_target and "genie3" in scores
    grown = grow_scored_tree(data, params, index, track)
    tree, weights = grown.tree, grown.weights
    out = {}
    if "symbolic" in scores:
        out[ScoreKey("symbolic")] = pct_scores.symbolic(tree, D, data.n_training_rows, params.symbolic_weight)
    if "genie3" in scores:
        out[ScoreKey("genie3")] = pct_scores.genie3(tree, D)
        if track:
            out[ScoreKey("genie3", per_target=True)] = pct_scores.genie3_per_target(tree, data.task.column_target,
                                                                 data.task.per_target_scale)
    if data.relations is not None:
        out.update(relation_scores_of(tree, data, params, [s for s in scores if s in ("symbolic", "genie3")]))
    if "rf" in scores:
        joint, per_t = pct_scores.permutation_scores(tree, data.with_row_major().codes_rows, data.Y, data.proto,
                                                     weights, data.task, grown.seed, per_target, oob=grown.oob,
                                                     feature_ids=data.feature_ids)
        out[ScoreKey("rf")] = joint
        if per_target:
            out[ScoreKey("rf", per_target=True)] = per_t
    return {k: v if k.level != "feature" else data.to_input_features(v) for k, v in out.items()}


def relation_scores_of(tree, data: TreeData, params, scores: list) -> dict:
    """The relation-level Symbolic and Genie3 scores of one tree (``{ScoreKey(level='relation'): (R,)}``)."""
    return {ScoreKey(s, level="relation"): relation_scores(
                tree, node_rewards(tree, s, data.n_training_rows, params.symbolic_weight), data.relations,
                data.feature_ids) for s in scores}


def score_tree_group(data: TreeData, params: EnsembleParams, indices) -> ScoreAccumulator:
    """Grow and score the trees ``indices``; return their summed scores."""
    acc = ScoreAccumulator()
    for index in indices:
        acc.add_tree(score_tree(data, params, int(index)))
    return acc
