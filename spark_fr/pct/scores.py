"""Per-tree feature-importance scores: Symbolic, Genie3 and the Random-Forest (OOB permutation) score.

Sketch
------
For one tree T grown on a bag with weights w (|E_train| = n rows):

* Symbolic: ``sum_{N in T(x_i)} |E(N)| / n`` (default), or ``sum w_s^depth(N)`` with a weight w_s.
* Genie3: ``sum_{N in T(x_i)} h*(N)`` (canonical form: h* already scales with |E(N)|). Per target, the
  reductions of the target's clustering columns, scaled by the task's ``per_target_scale``.
* RF score (thesis Sec. 4.3): on the out-of-bag rows (weight 0), ``(Err(OOB with x_i permuted) - Err(OOB)) /
  ref``, one permutation per tree and feature (:func:`oob_permutation`); features the tree does not use score 0
  (permuting them changes nothing). ``ref`` is the task's :meth:`~spark_fr.tasks.FittedTask.increase_reference`:
  ``Err(OOB)`` itself, except for classification, scored by the relative *decrease of the accuracy* (the thesis'
  x(-1) convention for a higher-is-better measure, as CLUS computes it), so there ``ref`` is the accuracy.
  A tree grown with ``--missing fractional`` predicts a row with a missing value by mixing the prototypes
  (label-sparse: the label frequencies) of the leaves it reaches down both branches
  (:class:`spark_fr.pct.tree.Routes`). Per target, the same with the target's own error. A zero ``ref`` is replaced by the task's error floor (one
  unit mistake), so the score stays finite. With label-sparse prototype columns (HMLC) the
  leaves' predicted label sets are compared with the rows' label sets directly (per-label error counts in
  O(positive and predicted labels) per row); the counts are those of the dense form.

The ensemble score is the mean of the per-tree scores over all trees (see :mod:`spark_fr.ensemble`).
"""
from __future__ import annotations

import numpy as np

from ..tasks.sparse_columns import SparseColumns, label_errors
from .permute import PairArrays, rows_to_walk, walk_buffers
from .route import permutation
from .tree import Tree, leaf_label_frequencies, leaf_prototypes
from ..runtime.rng import Stream, derive_seed


def symbolic(tree: Tree, n_features: int, n_rows: int, weight: float | None = None) -> np.ndarray:
    """Symbolic score of every feature in one tree.

    Parameters
    ----------
    tree : Tree
    n_features : int
    n_rows : int
        |E_train|.
    weight : float, optional
        If given, use ``weight ** depth`` per node instead of ``|E(N)| / |E_train|``.

    Returns
    -------
    ndarray (n_features,)
    """
    nodes = tree.internal
    if weight is None:
        vals = tree.weight[nodes] / float(n_rows)
    else:
        vals = float(weight) ** tree.depth[nodes].astype(np.float64)
    return np.bincount(tree.feature[nodes], weights=vals, minlength=n_features).astype(np.float64)


def genie3(tree: Tree, n_features: int) -> np.ndarray:
    """Genie3 score (sum of h*(N) over the nodes testing each feature) of one tree."""
    nodes = tree.internal
    return np.bincount(tree.feature[nodes], weights=tree.gain[nodes], minlength=n_features).astype(np.float64)


def genie3_per_target(tree: Tree, column_target: np.ndarray, per_target_scale: np.ndarray) -> np.ndarray:
    """Per-target Genie3 (T, D) from the per-column reductions tracked while growing."""
    T = per_target_scale.shape[0]
    D = tree.column_gain.shape[0]
    out = np.zeros((T, D))
    for k, t in enumerate(column_target):
        if t >= 0:  # -1: a clustering column that is no target (the features of SSL trees)
            out[t] += tree.column_gain[:, k]
    return out * per_target_scale[:, None]


def permutation_seed(tree_seed: int, feature_id: int) -> np.uint64:
    """The seed of the permutation of the input's feature ``feature_id`` in the tree of seed ``tree_seed``."""
    return np.uint64(derive_seed(tree_seed, int(feature_id), Stream.PERMUTATION))


def oob_permutation(tree_seed: int, feature_id: int, n_oob: int) -> np.ndarray:
    """The permutation the RF score of the tree of seed ``tree_seed`` applies to the input's feature ``feature_id``
    on its ``n_oob`` out-of-bag rows: out-of-bag row ``i`` takes the value of out-of-bag row ``p[i]``
    (:func:`permutation_scores` draws the same one, into a buffer: :func:`~spark_fr.pct.permute.rows_to_walk`)."""
    return permutation(permutation_seed(tree_seed, feature_id), int(n_oob))


def permutation_scores(tree: Tree, XR: np.ndarray, Y: np.ndarray, proto_columns: np.ndarray,
                       weights: np.ndarray, task, seed: int, per_target: bool = False, oob: np.ndarray | None = None,
                       feature_ids: np.ndarray | None = None):
    """Random-Forest score of one tree: relative error increase on the OOB rows when a feature is permuted.

    Only the OOB rows whose path tests f and whose new code leaves the range their path lets through
    (:class:`~spark_fr.pct.tree.PathPairs`) can change leaf: those alone are re-routed, and the permuted error is
    the baseline plus their change (sums of per-row terms: :meth:`~spark_fr.tasks.FittedTask.elementwise_errors`).

    Parameters
    ----------
    tree : Tree
    XR : ndarray of uint8 (n, D)
        Row-major feature codes.
    Y : ndarray (n, T)
        Raw targets.
    proto_columns : ndarray (n, P)
        The task's prototype columns for all rows.
    weights : ndarray (n,)
        Bootstrap counts used for the tree (0 = out of bag).
    task : FittedTask
    seed : int
        Tree seed; the permutation of feature f is ``oob_permutation(seed, feature_ids[f], len(oob))``.
    per_target : bool
        Also return per-target scores.
    oob : ndarray of int, optional
        The out-of-bag rows to evaluate (default: every row with weight 0), in row order.
    feature_ids : ndarray of int, optional
        The input's index of each column of ``XR`` (default: the column itself), so that a feature's permutation
        does not depend on which columns a task holds.

    Returns
    -------
    joint : ndarray (D,)
    per_target : ndarray (T, D) or None
    """
    D = XR.shape[1]
    T = task.n_targets  # the first T columns of Y are the reported targets (SSL appends descriptive ones)
    joint = np.zeros(D)
    per_t = np.zeros((T, D)) if per_target else None
    oob = np.flatnonzero(weights == 0) if oob is None else np.ascontiguousarray(oob, np.int64)
    if oob.size < 2:
        return joint, per_t
    y_oob = Y[oob]
    pairs = tree.rows_by_path_feature(XR, oob)
    indptr, routes = pairs.indptr, pairs.routes
    if isinstance(proto_columns, SparseColumns):  # label-sparse (HMLC): label sets, error counts per label
        frequencies = leaf_label_frequencies(tree, proto_columns, weights)
        predicted = task.predicted_sets(frequencies)
        counts = np.full(Y.shape[1], float(oob.size))

        def error_sums(pos, r):
            if r.single:
                return label_errors(y_oob[pos], predicted, r.leaves)
            # a fractional tree: the label frequencies of a row's leaves mixed, then thresholded
            return label_errors(y_oob[pos], task.predicted_sets(r.take_sparse(frequencies)), np.arange(len(pos)))

        def base_part(pos):
            return error_sums(pos, routes.subset(pos))

        base_sum = error_sums(np.arange(oob.size), routes)
    else:
        proto = leaf_prototypes(tree, proto_columns, weights, task.default_prototype())
        counts = (~np.isnan(y_oob)).sum(axis=0)
        e_base = task.elementwise_errors(y_oob, task.predict(routes.take(proto)))

        def error_sums(pos, r):
            return task.elementwise_errors(y_oob[pos], task.predict(r.take(proto))).sum(axis=0)

        def base_part(pos):
            return e_base[pos].sum(axis=0)

        base_sum = e_base.sum(axis=0)
    base_t = task.errors_from_sums(base_sum, counts)
    base = task.combine(base_t)
    if np.isnan(base):
        return joint, per_t
    ref = max(task.increase_reference(base), task.error_floor(oob.size, Y.shape[1]))
    with np.errstate(invalid="ignore"):
        ref_t = np.maximum(task.increase_reference(base_t[:T]), task.error_floor(oob.size, 1))
    arrays = PairArrays(indptr, pairs.positions, pairs.first_nodes, pairs.lo, pairs.hi)
    buffers = walk_buffers(oob.size, indptr)
    for f in np.flatnonzero(np.diff(indptr)):
        feature_id = int(f) if feature_ids is None else int(feature_ids[f])
        k = rows_to_walk(XR, oob, arrays, int(f), permutation_seed(seed, feature_id), buffers)
        pos = buffers.positions[:k]
        new_routes = tree.routes(XR, buffers.rows[:k], buffers.donors[:k], int(f), buffers.starts[:k])
        changed = new_routes.differs(routes.subset(pos))
        if not changed.any():
            continue
        pos = pos[changed]
        err_t = task.errors_from_sums(base_sum - base_part(pos) + error_sums(pos, new_routes.subset(
            np.flatnonzero(changed))), counts)
        joint[f] = (task.combine(err_t) - base) / ref
        if per_target:
            with np.errstate(invalid="ignore"):
                per_t[:, f] = np.nan_to_num((err_t[:T] - base_t[:T]) / ref_t)
    return joint, per_t

