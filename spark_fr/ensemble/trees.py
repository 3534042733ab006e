"""Growing and scoring a group of trees: the unit of work of one Spark task (no Spark in here).

Sketch
------
``TreeData`` is what every task needs and what the driver broadcasts once: the feature codes, the bin
ranges, the task's clustering and prototype columns, the raw targets and the stable row keys. For tree
``t`` of a run with seed ``s``:

    seed_t  = derive_seed(s, t, GROW)                           # independent of task / executor / retry
    weights = Poisson(1) counts of (derive_seed(s, t, BOOTSTRAP), row key)  if bootstrap, else 1
    tree    = grow(...)                                         # spark_fr.pct
    scores  = Symbolic / Genie3 / RF score of the tree          # spark_fr.pct.scores

and the group's scores are summed into a :class:`ScoreAccumulator`. Trees depend only on (seed, t) and on
the data, so a group may be split, merged or retried in any way.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..pct import scores as pct_scores
from ..pct.tree import grow
from ..runtime.rng import Stream, derive_seed, poisson1_counts
from ..results import ScoreKey
from .aggregate import ScoreAccumulator
from .params import EnsembleParams


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
    Z : float64 (n, K)
        The task's clustering matrix.
    Y : float64 (n, T)
        Raw targets.
    proto : float64 (n, P)
        The task's prototype columns.
    row_keys : uint64 (n,)
    task : FittedTask
    """

    codes: np.ndarray
    nominal: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    Z: np.ndarray
    Y: np.ndarray
    proto: np.ndarray
    row_keys: np.ndarray
    task: object
    codes_rows: np.ndarray | None = None

    def with_row_major(self) -> "TreeData":
        """Add the row-major code matrix (for the RF score) if it is missing."""
        if self.codes_rows is None:
            self.codes_rows = np.ascontiguousarray(self.codes.T)
        return self

    @property
    def n_features(self) -> int:
        return self.codes.shape[0]

    @property
    def n_rows(self) -> int:
        return self.codes.shape[1]


def tree_weights(data: TreeData, params: EnsembleParams, index: int) -> np.ndarray:
    """Bootstrap counts of tree ``index`` (ones without bootstrapping)."""
    if not params.bootstrap:
        return np.ones(data.n_rows)
    return poisson1_counts(derive_seed(params.seed, index, Stream.BOOTSTRAP), data.row_keys)


def score_tree(data: TreeData, params: EnsembleParams, index: int) -> dict:
    """Grow tree ``index`` and return its score arrays ``{ScoreKey: array}``.

    Joint scores 'symbolic', 'genie3', 'rf' have shape (D,); with ``per_target``, the per-target Genie3 and
    RF scores have shape (T, D).
    """
    seed = derive_seed(params.seed, index, Stream.GROW)
    weights = tree_weights(data, params, index)
    D = data.n_features
    scores = params.effective_scores()
    track = params.per_target and "genie3" in scores and data.Y.shape[1] > 1
    tree = grow(data.codes, data.nominal, data.lower, data.upper, data.Z, weights,
                min_leaf=params.min_samples_leaf,
                max_depth=-1 if params.max_depth is None else params.max_depth,
                max_features=params.features_per_node(D), splitter=params.splitter,
                track_columns=track, seed=seed, resample_constant=params.resample_constant)
    out = {}
    if "symbolic" in scores:
        out[ScoreKey("symbolic")] = pct_scores.symbolic(tree, D, data.n_rows, params.symbolic_weight)
    if "genie3" in scores:
        out[ScoreKey("genie3")] = pct_scores.genie3(tree, D)
        if track:
            out[ScoreKey("genie3", per_target=True)] = pct_scores.genie3_per_target(tree, data.task.column_target,
                                                                 data.task.per_target_scale)
    if "rf" in scores:
        per_target = params.per_target and data.Y.shape[1] > 1
        joint, per_t = pct_scores.permutation_scores(tree, data.with_row_major().codes_rows, data.Y, data.proto, weights,
                                                     data.task, seed, per_target)
        out[ScoreKey("rf")] = joint
        if per_target:
            out[ScoreKey("rf", per_target=True)] = per_t
    return out


def score_tree_group(data: TreeData, params: EnsembleParams, indices) -> ScoreAccumulator:
    """Grow and score the trees ``indices``; return their summed scores."""
    acc = ScoreAccumulator()
    for index in indices:
        acc.add_tree(score_tree(data, params, int(index)))
    return acc
