"""From encoded data to :class:`spark_fr.relief.data.ReliefData`, and the mode-independent local run."""
from __future__ import annotations

import logging

import numpy as np

from ..errors import InputError
from ..tasks import TaskError, relief_target
from .data import (ReliefData, ReliefSums, influence_from_distances, nearest_labelled_distance, run_shard,
                   sample_order, shard_bounds)
from .params import ReliefParams

log = logging.getLogger(__name__)


def labelled_rows(Y: np.ndarray) -> np.ndarray:
    """Rows with at least one known target value."""
    if Y.shape[1] == 0:
        return np.ones(Y.shape[0], bool)
    return ~np.all(np.isnan(Y), axis=1)


def relief_target_for(task, Y, params: ReliefParams, semi_supervised: bool, classes=None, hierarchy=None):
    """The task's Relief target for these rows (a TaskError becomes a one-line InputError)."""
    try:
        return relief_target(task, Y, mlc_distance=params.target_distance, hierarchy=hierarchy,
                             w0=params.hmlc_w0, hmlc_squared=params.hmlc_squared,
                             hmlc_normaliser=params.hmlc_normaliser, semi_supervised=semi_supervised,
                             n_classes=len(classes) if classes else None)
    except TaskError as err:
        raise InputError(str(err)) from None


def build_relief_data(X, keys, Y, task: str, nominal, n_values, params: ReliefParams, *,
                      semi_supervised: bool = False, classes=None, hierarchy=None) -> tuple:
    """ReliefData for scaled features X and targets Y (rows in canonical order).

    Supervised runs drop rows without any known target; semi-supervised runs keep them as unlabelled
    rows and compute their influence; unsupervised runs use every row.

    Returns
    -------
    (ReliefData, kept rows mask)
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    if task == "unsupervised":
        keep = np.ones(X.shape[0], bool)
        labelled = keep.copy()
    else:
        labelled = labelled_rows(Y)
        keep = np.ones(X.shape[0], bool) if semi_supervised else labelled
        labelled = labelled[keep]
    Xk, Yk, kk = X[keep], Y[keep], np.asarray(keys, np.uint64)[keep]
    if Xk.shape[0] < 2:
        raise InputError("Relief needs at least two rows with known targets")
    target = relief_target_for(task, Yk, params, semi_supervised and not labelled.all(), classes, hierarchy)
    influence = np.ones(Xk.shape[0])
    if semi_supervised and task != "unsupervised" and not labelled.all():
        if not labelled.any():
            raise InputError("--semi-supervised needs some rows with known targets (use --task unsupervised)")
        unl = np.flatnonzero(~labelled)
        d = nearest_labelled_distance(Xk, unl, np.flatnonzero(labelled), nominal, np.asarray(n_values, np.float64))
        influence[unl] = influence_from_distances(d, *params.influence)
        log.info("semi-supervised Relief: %d labelled and %d unlabelled rows (influence %.2f..%.2f)",
                 int(labelled.sum()), unl.size, float(influence[unl].min()), float(influence[unl].max()))
    data = ReliefData(Xk, kk, target, np.asarray(nominal, bool), np.asarray(n_values, np.float64), labelled,
                      influence)
    return data, keep


def sampled_shards(data: ReliefData, params: ReliefParams) -> list:
    """The sampled instances (row positions) cut into shards."""
    m = params.n_iterations(data.n_rows)
    order = sample_order(data.keys, params.seed)[:m]
    return [order[a:b] for a, b in shard_bounds(m, params.shards)]


def combine_shards(sums: list, relieff: bool) -> dict:
    """Total weights and the spread of the per-shard weights.

    Returns
    -------
    dict
        ``{'relief': (mean, std)}`` and, with per-target accumulators, ``{'relief/targets': (mean, std)}``.
    """
    total = ReliefSums.zeros(sums[0].PdA.hi.shape[0], sums[0].PdC_t.hi.shape[0])
    for s in sums:
        total.merge(s)
    joint, per = total.weights(relieff)
    shard_w = [s.weights(relieff) for s in sums]
    if len(sums) > 1:
        std = np.std(np.stack([w[0] for w in shard_w]), axis=0, ddof=1)
        std_t = np.std(np.stack([w[1] for w in shard_w]), axis=0, ddof=1) if per.size else None
    else:
        std = np.full(joint.shape, np.nan)
        std_t = np.full(per.shape, np.nan) if per.size else None
    out = {"relief": (joint, std)}
    if per.size:
        out["relief/targets"] = (per, std_t)
    return out


def relief_local(data: ReliefData, params: ReliefParams) -> dict:
    """Relief weights computed in this process (tests, small data); same results as the Spark modes."""
    sums = [run_shard(data, shard, params.neighbours, params.sigma, params.per_target)
            for shard in sampled_shards(data, params)]
    return combine_shards(sums, data.target.n_classes > 0)
