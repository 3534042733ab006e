"""Compile (or load from numba's cache) every Relief kernel in this process, on a tiny problem.

Called on the driver before a Spark job, so that the Python workers find the kernels in numba's cache
instead of compiling them concurrently.
"""
from __future__ import annotations

import numpy as np

from ..tasks import get as target_type
from . import tall_kernels as tall
from .local import run_shard
from .distances import nearest_labelled_distance
from .params import ReliefParams
from .setup import ReliefData


def warm_up_kernels() -> None:
    """Run every kernel once (broadcast and tall mode, per-target, missing and nominal values)."""
    rng = np.random.default_rng(0)
    X = rng.random((12, 3))
    X[0, 0] = np.nan
    Y = rng.random((12, 2))
    target = target_type("mtr").relief_target(Y, ReliefParams())
    data = ReliefData(X, np.arange(12, dtype=np.uint64), target, np.array([False, False, True]),
                      np.array([1.0, 1.0, 3.0]), np.ones(12, bool), np.ones(12))
    run_shard(data, np.arange(3), 2, 0.0, True)
    block = data.block()
    inst = data.block(np.arange(2))
    c = tall.candidates_for_block(block, inst, 2, data.target, data.nominal, data.n_values, True)
    tall.shard_sums(inst, tall.merge(c, c), 2, 0.0, data.target)
    nearest_labelled_distance(X, np.arange(2), np.arange(2, 4), data.nominal, data.n_values)
