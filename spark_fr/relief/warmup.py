"""Compile (or load from numba's cache) the Relief or the ReliefE kernels in this process, on tiny problems.

Called on the driver before a Spark job, so that the Python workers find the kernels in numba's cache
instead of compiling them concurrently. The shard kernel (:mod:`spark_fr.relief.shard`) compiles once per
neighbourhood backend and update rule, so each warm-up runs the pairs its method uses: Relief's
(:func:`warm_up_relief`) dense rows and merged candidates with the dense rule (broadcast and tall) and the
candidate search of dense blocks; ReliefE's (:func:`warm_up_reliefe`) the embedded space and known neighbours
with the sparse rule (broadcast and tall) and the candidate search of sparse blocks. Decision: one warm-up per
method (a Relief run loading ReliefE's kernels too cost its process 0.2 s of CPU, measured in
docs/benchmarks/2026-11-29.md); ``jobs/package.py`` ships both.
"""
from __future__ import annotations

import numpy as np

from ..tasks import get as target_type
from .candidates import block_candidates, chosen_neighbours, merge
from .distances import nearest_labelled_distance
from .embedded import EmbeddedSpace, KnownNeighbours, SparseSearch, sparse_rows
from .local import candidates_for_block, run_shard, shard_sums
from .params import ReliefParams
from .setup import ReliefData
from .shard import relief_shard
from .sparse_update import T_COSINE, SparseRule


def warm_up_relief() -> None:
    """Run Relief's kernels once (broadcast and tall, per-target, missing and nominal values) and the encoding's."""
    from ..data.binning import warm_up_encoding

    warm_up_encoding()  # the encoding pass's kernel (Spark tasks)
    _warm_up_relief()


def warm_up_reliefe() -> None:
    """Run ReliefE's kernels once (classification and MLC, embedded or not, fixed and adaptive k, broadcast and
    tall) and the encoding's."""
    from ..data.binning import warm_up_encoding

    warm_up_encoding()
    _warm_up_reliefe()


def _warm_up_relief() -> None:
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
    c = candidates_for_block(block, inst, 2, data.target, data.nominal, data.n_values, True)
    shard_sums(inst, merge(c, c), 2, 0.0, data.target)
    nearest_labelled_distance(X, np.arange(2), np.arange(2, 4), data.nominal, data.n_values)


def _warm_up_reliefe() -> None:
    from scipy import sparse

    X = sparse.csr_matrix(np.array([[0.0, 1.0], [0.5, 0.0], [1.0, 1.0], [0.0, 0.2]]))
    nominal, keys = np.zeros(2, bool), np.arange(4, dtype=np.uint64)
    inst = np.arange(2, dtype=np.int64)
    classes = np.array([0.0, 1.0, 0.0, 1.0])
    for E in (np.zeros((4, 0)), np.full((4, 2), 0.5 ** 0.5)):
        cls = sparse_rows(X, nominal, E, keys, classes, np.zeros((4, 0)))
        mlc = sparse_rows(X, nominal, E, keys, np.zeros(4), np.eye(4)[:, :2])
        cls_rule, mlc_rule = SparseRule(np.array([0.5, 0.5]), 0, False), SparseRule(np.zeros(0), T_COSINE, True)
        relief_shard(EmbeddedSpace(cls, inst, 2, 1, False, 0), cls_rule)
        relief_shard(EmbeddedSpace(mlc, inst, 0, 1, True, 0), mlc_rule)
        for rows, n_classes, rule in ((cls, 2, cls_rule), (mlc, 0, mlc_rule)):
            c = block_candidates(rows, rows, SparseSearch(2, n_classes))
            nkeys, counts = chosen_neighbours(rows.keys, merge(c, c), 1, False, 0)
            nbrs = np.searchsorted(rows.keys, nkeys).astype(np.int64)
            relief_shard(KnownNeighbours(rows, np.arange(4, dtype=np.int64), classes.astype(np.int64), nbrs, counts,
                                         n_classes), rule)
