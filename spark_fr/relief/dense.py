"""Neighbourhood backend: every scaled row in memory (Relief's broadcast mode; numba, no Spark).

Sketch
------
The instances come 8 at a time (:data:`spark_fr.relief.distances.INSTANCE_GROUP`): their d_X to every row in
one pass over the rows (:func:`~spark_fr.relief.distances.block_distances`); then, per instance, the k nearest
rows per class (ReliefF) or among all rows (:func:`~spark_fr.relief.neighbours.nearest_rows`), and for each
class the neighbours' per-feature distances, d_C, influences and per-target distances in
:data:`~spark_fr.relief.update.DenseNeighbours`, which the dense update rule reads.

The same named tuples describe a block of rows in tall mode (:mod:`spark_fr.relief.candidates`): :data:`Rows`,
:data:`Features`, :data:`TargetSpec`, and :func:`fill_targets` computes d_C the same way in both modes.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from ..tasks.distances import T_DESCRIPTIVE, target_distance
from .distances import INSTANCE_GROUP, block_distances, fill_dmat
from .neighbourhood import register, row_class
from .neighbours import nearest_rows, new_lists
from .update import new_dense_neighbours

#: rows of scaled data: X (n, D) features, keys (n,) content keys, classes (n,) class index (NaN: none; zeros
#: without classes), Yt (n, T') the target matrix of d_Y, labelled (n,) rows with a known target, influence (n,)
Rows = namedtuple("Rows", "X keys classes Yt labelled influence")

#: the features' kinds: nominal (D,) bool, n_values (D,) category counts
Features = namedtuple("Features", "nominal n_values")

#: d_Y of the run: kind (code of spark_fr.tasks.distances), weights (T',), norm, per_target_kinds (T,) (empty:
#: no per-target ranking)
TargetSpec = namedtuple("TargetSpec", "kind weights norm per_target_kinds")

#: the backend: rows, features, target, instances (m,) row positions, n_classes (> 0: ReliefF), k
DenseSpace = namedtuple("DenseSpace", "rows features target instances n_classes k")

#: its buffers: dists (G, n) d_X of a group of instances, R (G, D) their rows, lists their neighbours, nb
DenseScratch = namedtuple("DenseScratch", "dists R lists nb")


@njit(cache=True, nogil=True)
def fill_targets(dC, pt, nk, yr, rows, j_rows, target):
    """dC, pt of the first nk neighbours (RReliefF): d_C = d_Y of the instance's targets ``yr`` (Yt row and
    labelled flag) and of row ``j_rows[l]`` of ``rows`` when both are labelled, else d_X (``dC`` holds d_X on
    entry); ``pt[l, t]`` the distance of target t by :data:`TargetSpec`'s per_target_kinds."""
    y, labelled = yr
    Yt = rows.Yt
    T = target.per_target_kinds.shape[0]
    for l in range(nk):
        j = j_rows[l]
        if target.kind != T_DESCRIPTIVE and labelled and rows.labelled[j]:
            dC[l] = target_distance(target.kind, y, Yt[j], target.weights, target.norm)
        for t in range(T):
            pt[l, t] = target_distance(target.per_target_kinds[t], y[t:t + 1], Yt[j, t:t + 1],
                                          target.weights[t:t + 1], target.norm)


@njit(cache=True, nogil=True)
def _dims(space):
    return (space.instances.shape[0], max(space.n_classes, 1), space.rows.X.shape[1],
            space.target.per_target_kinds.shape[0], INSTANCE_GROUP)


@njit(cache=True, nogil=True)
def _new_scratch(space, rule):
    n, D = space.rows.X.shape
    T = space.target.per_target_kinds.shape[0]
    return DenseScratch(np.empty((INSTANCE_GROUP, n)), np.empty((INSTANCE_GROUP, D)),
                        new_lists(max(space.n_classes, 1), space.k), new_dense_neighbours(space.k, D, T, rule.sigma))


@njit(cache=True, nogil=True)
def _start_group(space, s, q0, g_n):
    X = space.rows.X
    for g in range(g_n):
        s.R[g] = X[space.instances[q0 + g]]
    block_distances(X, s.R[:g_n], space.features.nominal, space.features.n_values, s.dists[:g_n])


@njit(cache=True, nogil=True)
def _search(space, s, q):
    rows = space.rows
    nearest_rows(s.dists[q % INSTANCE_GROUP], rows.keys, space.instances[q], rows.classes, space.n_classes, s.lists)


@njit(cache=True, nogil=True)
def _neighbours(space, s, q, c):
    """Fills ``s.nb`` for the neighbours of class c; returns their count."""
    nk = s.lists.counts[c]
    if nk == 0:
        return nk
    rows, nb = space.rows, s.nb
    r = space.instances[q]
    j_rows = s.lists.rows[c]
    fill_dmat(rows.X, rows.X[r], j_rows, nk, space.features.nominal, space.features.n_values, nb.dmat)
    if space.n_classes == 0:
        dist = s.dists[q % INSTANCE_GROUP]
        for l in range(nk):
            j = j_rows[l]
            nb.omega[l] = rows.influence[r] * rows.influence[j]
            nb.dC[l] = dist[j]
        fill_targets(nb.dC, nb.pt, nk, (rows.Yt[r], rows.labelled[r]), rows, j_rows, space.target)
    return nk


register(DenseSpace, dims=_dims, new_scratch=_new_scratch, start_group=_start_group, own_class=row_class,
         search=_search, neighbours=_neighbours)


# ----- building the named tuples (Python) ------------------------------------------------------------------
def rows_of(block: dict) -> Rows:
    """:data:`Rows` of a block dict (X, keys, classes, Yt, labelled, influence: :meth:`ReliefData.block
    <spark_fr.relief.setup.ReliefData.block>` and tall mode's blocks)."""
    return Rows(block["X"], block["keys"], block["classes"], block["Yt"], block["labelled"], block["influence"])


def features_of(nominal, n_values) -> Features:
    """:data:`Features` with the kernels' dtypes."""
    return Features(np.asarray(nominal, np.bool_), np.asarray(n_values, np.float64))


def target_spec(target, per_target: bool) -> TargetSpec:
    """:data:`TargetSpec` of a :class:`~spark_fr.tasks.ReliefTarget` (per-target distances when ``per_target``)."""
    pt = target.per_target_kinds if per_target else np.zeros(0, np.int64)
    return TargetSpec(int(target.kind), np.asarray(target.weights, np.float64), float(target.norm),
                      np.asarray(pt, np.int64))
