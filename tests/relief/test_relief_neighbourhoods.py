"""The Relief shard kernel's neighbourhood backends, operation by operation, against each other on random inputs.

Dense rows (broadcast mode) against merged candidates of random blocks (tall mode): the neighbours the update
reads (per-feature distances, d_C, influences, per-target distances) are the same bits for every instance and
class. ReliefE's embedded space (broadcast) against known neighbours chosen from merged candidates (tall): the
same neighbour rows, and the same accumulators from the one shard kernel.
"""
import numpy as np
import pytest
from numba import njit
from scipy import sparse

from tests.conftest import relief_data
from spark_fr.relief.candidates import CandidateSpace, block_candidates, chosen_neighbours, merge
from spark_fr.relief.dense import DenseSpace, features_of, rows_of, target_spec
from spark_fr.relief.embedded import EmbeddedSpace, KnownNeighbours, SparseSearch, sparse_rows
from spark_fr.relief.local import candidates_for_block, dense_rule
from spark_fr.relief.neighbourhood import dims, neighbours, new_scratch, own_class, search, start_group
from spark_fr.relief.params import ReliefParams
from spark_fr.relief.shard import relief_shard
from spark_fr.relief.sparse_update import T_COSINE, SparseRule
from spark_fr.tasks.distances import T_JACCARD


@njit(cache=False)
def dense_neighbours_of(space, rule, q, c):
    """What the dense rule reads of instance q's neighbours of class c: (nk, own class, dmat, dC, omega, pt)
    (ReliefF reads dmat only)."""
    m, C, D, T, G = dims(space)
    s = new_scratch(space, rule)
    q0 = q - q % G
    start_group(space, s, q0, min(G, m - q0))
    search(space, s, q)
    nk = neighbours(space, s, q, c)
    nb = s.nb
    return nk, own_class(space, q), nb.dmat[:nk].copy(), nb.dC[:nk].copy(), nb.omega[:nk].copy(), nb.pt[:nk].copy()


@njit(cache=False)
def sparse_neighbours_of(space, rule, q, c):
    """The neighbour rows of instance q of class c (positions in the space's rows)."""
    s = new_scratch(space, rule)
    search(space, s, q)
    rows, nk = neighbours(space, s, q, c)
    return rows[:nk].copy()


def dense_rows(rng, n=70):
    X = np.column_stack([rng.random(n), rng.integers(0, 3, n).astype(float), rng.random(n), rng.random(n)])
    X[rng.random(X.shape) < 0.08] = np.nan
    X[9] = X[4]                                    # an identical copy: a tie and a self-copy
    keys = rng.integers(0, 2 ** 63, n).astype(np.uint64)
    keys[9] = keys[4]
    return X, keys, np.array([False, True, False, False]), np.array([1.0, 3.0, 1.0, 1.0])


def blocks_candidates(rng, data, inst, k, per_target, n_blocks=4):
    """Candidates of random blocks merged in a random order."""
    part = rng.integers(0, n_blocks, data.n_rows)
    cands = [candidates_for_block(data.block(np.flatnonzero(part == u)), inst, k, data.target, data.nominal,
                                  data.n_values, per_target) for u in rng.permutation(n_blocks)]
    merged = cands[0]
    for c in cands[1:]:
        merged = merge(merged, c)
    return merged


@pytest.mark.parametrize("task,dist", [("classification", "f1"), ("mtr", "f1"), ("mlc", "jaccard"),
                                       ("unsupervised", "f1")])
@pytest.mark.parametrize("seed", [0, 1])
def test_dense_rows_and_merged_candidates_give_the_same_neighbours(task, dist, seed):
    rng = np.random.default_rng(seed)
    X, keys, nominal, n_values = dense_rows(rng)
    n = X.shape[0]
    base = np.nan_to_num(X[:, 0])
    Y = {"classification": np.where(base > 0.6, 1.0, np.where(base > 0.3, 2.0, 0.0))[:, None],
         "mtr": np.column_stack([base * 3, rng.random(n)]), "mlc": (rng.random((n, 3)) < 0.4).astype(float),
         "unsupervised": np.zeros((n, 0))}[task]
    if task == "mtr":
        Y[rng.random(n) < 0.3] = np.nan             # unlabelled rows (semi-supervised): influence, d_X as d_C
    Y[9] = Y[4]
    params = ReliefParams(neighbours=5, target_distance=dist, per_target=task == "mtr", sigma=0.3)
    data, _ = relief_data(X, keys, Y, task, nominal, n_values, params, semi_supervised=task == "mtr",
                          classes=["a", "b", "c"] if task == "classification" else None)
    k, t = 5, data.target
    instances = rng.choice(data.n_rows, 20, replace=False).astype(np.int64)
    inst = data.block(instances)
    dense = DenseSpace(rows_of(data.block()), features_of(nominal, n_values), target_spec(t, params.per_target),
                       instances, int(t.n_classes), k)
    tall = CandidateSpace(blocks_candidates(rng, data, inst, k, params.per_target), inst["keys"], inst["influence"],
                          inst["classes"], int(t.n_classes), k)
    rule = dense_rule(t, params.sigma)
    C = max(int(t.n_classes), 1)
    for q in range(instances.size):
        for c in range(C):
            a = dense_neighbours_of(dense, rule, q, c)
            b = dense_neighbours_of(tall, rule, q, c)
            assert a[0] == b[0] and a[1] == b[1]
            read = a[2:3] if t.n_classes else a[2:]        # ReliefF's rule reads the d_i only
            for x, y in zip(read, b[2:]):
                np.testing.assert_array_equal(x, y)
    for x, y in zip(relief_shard(dense, rule)[:6], relief_shard(tall, rule)[:6]):
        np.testing.assert_array_equal(x, y)


def sparse_data(rng, n=80, D=30, embedded=True):
    """(X, keys, E, src): 70 random sparse rows and copies of the first 10 (copies share their key), in key
    order; ``src`` is each row's original row (0..69), so per-row values ``v[src]`` agree between copies."""
    X = sparse.random(70, D, density=0.2, format="csr", random_state=int(rng.integers(1 << 30)))
    X.data = np.round(X.data, 1)                                   # ties
    src = np.concatenate([np.arange(70), np.arange(10)])
    keys = rng.integers(0, 2 ** 63, 70).astype(np.uint64)[src]
    order = np.argsort(keys, kind="stable")
    src, keys = src[order], keys[order]
    X = X[src]
    X.sort_indices()
    E = np.zeros((n, 0))
    if embedded:
        E = np.asarray(X @ rng.normal(size=(D, 4)))
        E = np.round(E / np.maximum(np.linalg.norm(E, axis=1), 1e-12)[:, None], 2)   # coarse: tied distances
    return X, keys, E, src


@pytest.mark.parametrize("mlc", [False, True])
@pytest.mark.parametrize("adaptive,k_max,embedded", [(False, 0, True), (False, 0, False), (True, 0, True),
                                                       (True, 2, False)])
def test_embedded_space_and_known_neighbours_give_the_same_rows_and_sums(mlc, adaptive, k_max, embedded):
    rng = np.random.default_rng(int(mlc) * 8 + int(adaptive) * 4 + k_max + int(embedded))
    X, keys, E, src = sparse_data(rng, embedded=embedded)
    n, D = X.shape
    nominal = np.zeros(D, bool)
    nominal[0] = True
    classes = np.zeros(n) if mlc else rng.integers(0, 3, 70).astype(float)[src]
    Yt = (rng.random((70, 4)) < 0.4).astype(float)[src] if mlc else np.zeros((n, 0))
    rows = sparse_rows(X, nominal, E, keys, classes, Yt)
    C = 1 if mlc else 3
    n_classes = 0 if mlc else 3
    k = 4
    instances = rng.choice(n, 25, replace=False).astype(np.int64)
    rule = SparseRule(np.zeros(0) if mlc else np.bincount(classes.astype(int), minlength=3) / n,
                      T_JACCARD if mlc else 0, adaptive)
    broadcast = EmbeddedSpace(rows, instances, n_classes, 1 if adaptive else k, adaptive, k_max)
    k1 = (k_max + 2 if k_max else n) if adaptive else k + 1
    part = rng.integers(0, 3, n)
    inst_rows = sparse_rows(X[instances], nominal, E[instances], keys[instances], classes[instances], Yt[instances])
    cands = [block_candidates(sparse_rows(X[part == u], nominal, E[part == u], keys[part == u], classes[part == u],
                                          Yt[part == u]), inst_rows, SparseSearch(k1, n_classes))
             for u in rng.permutation(3)]
    merged = merge(merge(cands[0], cands[1]), cands[2])
    nkeys, counts = chosen_neighbours(keys[instances], merged, k, adaptive, k_max)
    nbrs = np.searchsorted(keys, nkeys)     # the first row of each key: the row tall mode gathers
    tall = KnownNeighbours(rows, instances, classes[instances].astype(np.int64), nbrs, counts, n_classes)
    for q in range(instances.size):
        for c in range(C):
            a = sparse_neighbours_of(broadcast, rule, q, c)
            b = sparse_neighbours_of(tall, rule, q, c)
            np.testing.assert_array_equal(keys[a], keys[b])
    x, y = relief_shard(broadcast, rule), relief_shard(tall, rule)
    np.testing.assert_array_equal(x.W, y.W)
    np.testing.assert_array_equal(x.ks, y.ks)
    np.testing.assert_array_equal(x.totals, y.totals)
    assert (x.W != 0).any()


def test_cosine_targets_and_an_unknown_backend():
    """The sparse rule's cosine target distance runs through the kernel; a type that is no backend is refused
    when the kernel is compiled for it."""
    rng = np.random.default_rng(3)
    X, keys, E, _ = sparse_data(rng)
    n = X.shape[0]
    T = np.asarray(rng.normal(size=(n, 3)))
    T /= np.linalg.norm(T, axis=1)[:, None]
    rows = sparse_rows(X, np.zeros(X.shape[1], bool), E, keys, np.zeros(n), T)
    acc = relief_shard(EmbeddedSpace(rows, np.arange(10, dtype=np.int64), 0, 3, False, 0),
                       SparseRule(np.zeros(0), T_COSINE, False))
    assert acc.totals[2] == 10 and (acc.ks[:, 0] >= 0).all()
    with pytest.raises(Exception):
        relief_shard((rows, 1), SparseRule(np.zeros(0), T_COSINE, False))
