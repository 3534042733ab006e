"""Relief kernels against slow, obvious references on random data, per task type."""
import numpy as np
import pytest

from tests.conftest import as_dict, relief_data, target_distance_reference
from spark_fr.errors import InputError
from spark_fr.relief.candidates import merge
from spark_fr.relief.local import candidates_for_block, relief_local, run_shard, shard_sums
from spark_fr.relief.distances import block_distances
from spark_fr.relief.neighbours import neighbour_rows
from spark_fr.relief.params import ReliefParams
from spark_fr.relief.sampling import sample_order, sampled_shards, shard_bounds
from spark_fr.relief.setup import influence_from_distances
from spark_fr.tasks import distances as K


# ----- slow references ------------------------------------------------------------------------------------
def ref_fd(a, b, nominal, nv):
    if np.isnan(a) or np.isnan(b):
        if nominal:
            return 1 - 1 / nv
        if np.isnan(a) and np.isnan(b):
            return 1.0
        t = b if np.isnan(a) else a
        return max(t, 1 - t)
    return float(a != b) if nominal else abs(a - b)


def ref_di(data, r, j):
    return np.array([ref_fd(data.X[r, i], data.X[j, i], data.nominal[i], data.n_values[i])
                     for i in range(data.n_features)])


def ref_dx(data, r, j):
    return float(np.mean(ref_di(data, r, j)))


def ref_neighbours(data, r, k, rows):
    cand = sorted((ref_dx(data, r, j), int(data.keys[j]), j) for j in rows if j != r)
    return [j for _, _, j in cand[:k]]


def ref_relief(data, instances, k, sigma, per_target=False):
    """Relief weights from the thesis' algorithms, written out with plain loops."""
    t = data.target
    D = data.n_features
    delta = np.exp(-(sigma * np.arange(k)) ** 2)
    if t.n_classes > 0:
        W = np.zeros(D)
        iters = 0
        for r in instances:
            y = t.classes[r]
            if np.isnan(y):
                continue
            for c in range(t.n_classes):
                neigh = ref_neighbours(data, r, k, [j for j in range(data.n_rows) if t.classes[j] == c])
                if not neigh:
                    continue
                sw = delta[:len(neigh)].sum()
                factor = -1.0 if c == y else t.priors[c] / (1 - t.priors[int(y)])
                for l, j in enumerate(neigh):
                    W += factor * delta[l] / sw * ref_di(data, r, j)
            iters += 1
        return W / iters, None
    S = PdC = 0.0
    PdA = np.zeros(D)
    PdAdC = np.zeros(D)
    T = len(t.per_target_kinds) if per_target else 0
    PdC_t = np.zeros(T)
    PdAdC_t = np.zeros((T, D))
    for r in instances:
        neigh = ref_neighbours(data, r, k, range(data.n_rows))
        sw = delta[:len(neigh)].sum()
        for l, j in enumerate(neigh):
            om = data.influence[r] * data.influence[j] * delta[l] / sw
            di = ref_di(data, r, j)
            if t.kind == K.T_DESCRIPTIVE or not (data.labelled[r] and data.labelled[j]):
                dc = ref_dx(data, r, j)
            else:
                dc = target_distance_reference(t, r, j)
            S += om
            PdC += om * dc
            PdA += om * di
            PdAdC += om * di * dc
            for q in range(T):
                one = type(t)(t.per_target_kinds[q], t.values[:, q:q + 1], t.weights[q:q + 1], t.norm)
                dq = target_distance_reference(one, r, j)
                PdC_t[q] += om * dq
                PdAdC_t[q] += om * di * dq
    joint = PdAdC / PdC - (PdA - PdAdC) / (S - PdC)
    per = np.array([PdAdC_t[q] / PdC_t[q] - (PdA - PdAdC_t[q]) / (S - PdC_t[q]) for q in range(T)])
    return joint, per


# ----- data --------------------------------------------------------------------------------------------
def random_data(rng, n=45, missing=0.08):
    X = np.column_stack([rng.random(n), rng.random(n), rng.integers(0, 3, n).astype(float), rng.random(n),
                         rng.integers(0, 4, n).astype(float)])
    X[rng.random(X.shape) < missing] = np.nan
    nominal = np.array([False, False, True, False, True])
    n_values = np.array([1.0, 1.0, 3.0, 1.0, 4.0])
    keys = rng.integers(0, 2 ** 63, n).astype(np.uint64)
    return X, nominal, n_values, keys


def targets(task, rng, X, missing=0.0):
    n = X.shape[0]
    base = np.nan_to_num(X[:, 0])
    if task == "classification":
        Y = np.where(base > 0.5, 1.0, np.where(np.nan_to_num(X[:, 2]) == 1, 2.0, 0.0))[:, None]
    elif task == "regression":
        Y = (3 * base + rng.normal(size=n))[:, None]
    elif task == "mtr":
        Y = np.column_stack([3 * base + rng.normal(size=n), np.nan_to_num(X[:, 1]) * 10, rng.normal(size=n)])
    else:
        Y = (rng.random((n, 4)) < np.column_stack([base] * 2 + [np.full(n, 0.3)] * 2)).astype(float)
    if missing:
        Y[rng.random(Y.shape) < missing] = np.nan
    return Y


CASES = [("classification", "f1"), ("regression", "f1"), ("mtr", "f1"), ("mlc", "hamming"), ("mlc", "jaccard"),
         ("mlc", "f1"), ("mlc", "subset"), ("unsupervised", "f1")]


@pytest.mark.parametrize("task,dist", CASES)
@pytest.mark.parametrize("sigma", [0.0, 0.3])
def test_relief_equals_the_slow_reference(task, dist, sigma):
    rng = np.random.default_rng(hash((task, dist, sigma)) % 2 ** 32)
    X, nominal, n_values, keys = random_data(rng)
    Y = targets(task, rng, X, missing=0.1 if task in ("mtr", "mlc") else 0.0)
    params = ReliefParams(neighbours=4, iterations=0.6, sigma=sigma, target_distance=dist, shards=3,
                          per_target=task in ("mtr", "mlc"), seed=5)
    classes = ["a", "b", "c"] if task == "classification" else None
    data, _ = relief_data(X, keys, Y, task, nominal, n_values, params, classes=classes)
    got = as_dict(relief_local(data, params))
    instances = np.concatenate(sampled_shards(data.keys, params))
    joint, per = ref_relief(data, instances, 4, sigma, per_target=params.per_target)
    np.testing.assert_allclose(got["relief"][0], joint, rtol=1e-10, atol=1e-12)
    if params.per_target:
        np.testing.assert_allclose(got["relief/targets"][0], per, rtol=1e-10, atol=1e-12)
    assert np.all(np.abs(joint) <= 1 + 1e-9)


def test_semi_supervised_relief_equals_the_reference():
    rng = np.random.default_rng(7)
    X, nominal, n_values, keys = random_data(rng, n=50)
    Y = targets("mtr", rng, X)
    Y[rng.random(50) < 0.6] = np.nan  # unlabelled rows: every target missing
    params = ReliefParams(neighbours=5, iterations=1.0, influence=(0.2, 0.9), shards=2, seed=1)
    data, kept = relief_data(X, keys, Y, "mtr", nominal, n_values, params, semi_supervised=True)
    assert kept.all() and (~data.labelled).sum() == np.isnan(Y).all(axis=1).sum()
    # influence: labelled 1; unlabelled on the line through (max d, 0.2) and (min d, 0.9)
    lab = np.flatnonzero(data.labelled)
    d = np.array([min(ref_dx(data, r, j) for j in lab) for r in np.flatnonzero(~data.labelled)])
    np.testing.assert_allclose(data.influence[~data.labelled], influence_from_distances(d, 0.2, 0.9))
    assert data.influence[~data.labelled].min() == pytest.approx(0.2)
    assert data.influence[~data.labelled].max() == pytest.approx(0.9)
    assert np.all(data.influence[data.labelled] == 1)
    got = as_dict(relief_local(data, params))
    joint, _ = ref_relief(data, np.concatenate(sampled_shards(data.keys, params)), 5, 0.0)
    np.testing.assert_allclose(got["relief"][0], joint, rtol=1e-10, atol=1e-12)


def test_semi_supervised_relief_without_unlabelled_rows_is_supervised_relief():
    rng = np.random.default_rng(8)
    X, nominal, n_values, keys = random_data(rng, n=40)
    Y = targets("regression", rng, X)
    params = ReliefParams(neighbours=5, seed=2)
    a, _ = relief_data(X, keys, Y, "regression", nominal, n_values, params)
    b, _ = relief_data(X, keys, Y, "regression", nominal, n_values, params, semi_supervised=True)
    np.testing.assert_array_equal(as_dict(relief_local(a, params))["relief"][0],
                                  as_dict(relief_local(b, params))["relief"][0])


@pytest.mark.parametrize("kind", [K.T_NUMERIC, K.T_CLASS, K.T_HAMMING, K.T_JACCARD, K.T_F1, K.T_SUBSET, K.T_HMLC,
                                  K.T_HMLC_SQUARED])
def test_target_distance_kernel_equals_reference(kind):
    rng = np.random.default_rng(kind)
    n, T = 30, 6
    if kind == K.T_NUMERIC:
        vals = rng.random((n, T))
    elif kind == K.T_CLASS:
        vals = rng.integers(0, 3, (n, 1)).astype(float)
    else:
        vals = (rng.random((n, T)) < 0.4).astype(float)
    if kind not in (K.T_HMLC, K.T_HMLC_SQUARED):
        vals[rng.random(vals.shape) < 0.15] = np.nan
    vals[0] = 0.0 if kind != K.T_CLASS else vals[0]  # an empty label set
    vals[1] = 0.0 if kind != K.T_CLASS else vals[1]
    w = rng.random(vals.shape[1]) + 0.1
    from spark_fr.tasks import ReliefTarget

    t = ReliefTarget(kind, vals, w, 3.0 if kind == K.T_CLASS else 1.7)
    for a in range(n):
        for b in range(n):
            got = K.target_distance(kind, vals[a], vals[b], w, t.norm)
            assert got == pytest.approx(target_distance_reference(t, a, b), abs=1e-12)
            assert got >= -1e-12


def test_neighbour_ties_are_broken_by_row_key():
    """Equally distant candidates: the smaller key comes first, whatever the row order."""
    X = np.array([[0.0], [0.5], [0.5], [0.5], [1.0]])
    keys = np.array([9, 30, 10, 20, 5], np.uint64)
    dist = np.empty((1, 5))
    block_distances(X, X[:1], np.array([False]), np.ones(1), dist)
    idx, counts = neighbour_rows(dist[0], keys, 0, 2, np.zeros(5), 0)
    assert counts[0] == 2 and list(idx[0][:2]) == [2, 3]


@pytest.mark.parametrize("seed", range(4))
def test_block_distances_equal_the_reference(seed):
    """The grouped, vectorised d_X (with missing values and nominal features mixed in) = mean of d_i."""
    rng = np.random.default_rng(seed)
    n, D = 60, int(rng.integers(1, 23))
    X = rng.random((n, D))
    nominal = rng.random(D) < (0.3 if seed % 2 else 0.0)
    n_values = np.where(nominal, 3.0, 0.0)
    X[:, nominal] = rng.integers(0, 3, (n, nominal.sum()))
    X[rng.random((n, D)) < (0.1 if seed > 1 else 0.0)] = np.nan
    R = X[rng.choice(n, 11)]
    out = np.empty((11, n))
    block_distances(X, R, nominal, n_values, out)
    for g in range(11):
        for j in range(n):
            ref = np.mean([ref_fd(R[g, i], X[j, i], nominal[i], n_values[i]) for i in range(D)])
            assert out[g, j] == pytest.approx(ref, rel=1e-12, abs=1e-15)


def test_sampling_and_shards_do_not_depend_on_row_order():
    keys = np.random.default_rng(0).integers(0, 2 ** 63, 1000).astype(np.uint64)
    perm = np.random.default_rng(1).permutation(1000)
    a = keys[sample_order(keys, 3)]
    b = keys[perm][sample_order(keys[perm], 3)]
    np.testing.assert_array_equal(a, b)
    assert shard_bounds(10, 3) == [(0, 3), (3, 7), (7, 10)]
    assert shard_bounds(2, 16) == [(0, 1), (1, 2)]


def test_iterations_parameter():
    def parse(v):
        return ReliefParams(iterations=v).iterations

    assert parse("1.0") == 1.0 and parse("1") == 1 and parse("250") == 250
    assert parse(0.25) == 0.25 and parse(1000.0) == 1000
    assert ReliefParams(iterations=0.25).n_iterations(100) == 25
    assert ReliefParams(iterations=500).n_iterations(100) == 100
    for bad in ("0", "-3", "1.5x", 0.0, True, float("inf"), float("nan"), 1.5):
        with pytest.raises(InputError, match="--relief-iterations"):
            parse(bad)


@pytest.mark.parametrize("task,dist", [("classification", "f1"), ("mtr", "f1"), ("mlc", "jaccard"),
                                       ("unsupervised", "f1")])
def test_tall_kernels_give_exactly_the_broadcast_result(task, dist):
    """Candidates per block, merged in any order, then updated: bit-identical to the broadcast kernel."""
    rng = np.random.default_rng(11)
    X, nominal, n_values, keys = random_data(rng, n=60)
    X[5] = X[7]  # identical rows: ties and self-copies
    keys[5] = keys[7]
    Y = targets(task, rng, X, missing=0.1 if task == "mtr" else 0.0)
    Y[5] = Y[7]
    params = ReliefParams(neighbours=4, iterations=0.7, sigma=0.2, target_distance=dist, shards=3,
                          per_target=task == "mtr", seed=3)
    data, _ = relief_data(X, keys, Y, task, nominal, n_values, params,
                                classes=["a", "b", "c"] if task == "classification" else None)
    for shard in sampled_shards(data.keys, params):
        expected = run_shard(data, shard, 4, 0.2, params.per_target)
        inst = data.block(shard)
        for split_seed in range(3):
            perm = np.random.default_rng(split_seed).permutation(data.n_rows)
            parts = np.array_split(perm, 1 + split_seed * 3)
            cands = [candidates_for_block(data.block(np.sort(p)), inst, 4, data.target, nominal,
                                          n_values, params.per_target) for p in parts]
            while len(cands) > 1:  # merge in a random tree shape
                i, j = sorted(np.random.default_rng(split_seed + 10).choice(len(cands), 2, replace=False))
                cands[i] = merge(cands[i], cands.pop(j))
            got = shard_sums(inst, cands[0], 4, 0.2, data.target)
            for a, b in zip(got._all(), expected._all()):
                np.testing.assert_array_equal(a.value(), b.value())
