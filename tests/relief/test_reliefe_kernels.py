"""ReliefE's building blocks against slow, obvious references (spark_fr.relief: reliefe_sampling, prms, twonn,
adaptive_k, embedders, reliefe_kernels)."""
import numpy as np
import pytest
from scipy import sparse

from spark_fr.relief.adaptive_k import gap_k
from spark_fr.relief.embedders import l2_rows, make_embedder
from spark_fr.relief.prms import density, prms, prms_epsilon
from spark_fr.relief.accumulators import ITERATIONS
from spark_fr.relief.embedded import EmbeddedSpace, sparse_l1, sparse_rows
from spark_fr.relief.shard import relief_shard
from spark_fr.relief.sparse_update import T_COSINE, SparseRule
from spark_fr.relief.reliefe_sampling import cyclic_sample, target_value_ids
from spark_fr.relief.twonn import twonn_dimension
from spark_fr.runtime.rng import Stream, derive_seed, hash_uniform
from spark_fr.tasks.distances import T_F1, T_HAMMING


# ---------------------------------------------------------------- cyclic sampling
def slow_cyclic(value_ids, keys, size, seed):
    """The paper's loop: cycle over the sorted values, one unused row (in hash order) of each per turn."""
    u = hash_uniform(derive_seed(seed, 0, Stream.RELIEFE_CYCLIC), keys)
    pools = {v: sorted(np.flatnonzero(value_ids == v), key=lambda i: (u[i], keys[i])) for v in sorted(set(value_ids))}
    out = []
    while len(out) < min(size, len(value_ids)):
        for v in sorted(pools):
            if pools[v] and len(out) < size:
                out.append(pools[v].pop(0))
    return np.array(out)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cyclic_sample_is_the_papers_loop_and_covers_every_label_set(seed):
    rng = np.random.default_rng(seed)
    Y = (rng.random((300, 4)) < np.array([0.05, 0.3, 0.5, 0.02])).astype(float)   # rare label sets too
    ids = target_value_ids(Y)
    keys = rng.integers(0, 2 ** 63, 300).astype(np.uint64)
    for size in (5, 40, 299, 300, 1000):
        got = cyclic_sample(ids, keys, size, seed)
        assert np.array_equal(got, slow_cyclic(ids, keys, size, seed))
        assert len(set(got)) == got.size == min(size, 300)
    n_sets = len(np.unique(Y, axis=0))
    first = cyclic_sample(ids, keys, n_sets, seed)
    assert len(np.unique(Y[first], axis=0)) == n_sets          # every label set, however rare


def test_cyclic_sample_covers_every_class_and_ignores_row_order():
    rng = np.random.default_rng(5)
    y = np.r_[np.zeros(500), np.ones(3), np.full(40, 2.0)][:, None]
    keys = rng.integers(0, 2 ** 63, y.shape[0]).astype(np.uint64)
    s = cyclic_sample(target_value_ids(y), keys, 20, 7)
    assert set(y[s, 0]) == {0.0, 1.0, 2.0} and (y[s, 0] == 1).sum() == 3
    perm = rng.permutation(y.shape[0])
    s2 = cyclic_sample(target_value_ids(y[perm]), keys[perm], 20, 7)
    assert np.array_equal(keys[perm][s2], keys[s])


# ---------------------------------------------------------------- PrMS
def slow_prms(B, coins):
    m, n = B.shape
    A = np.zeros((m + n, m + n))
    A[:m, m:] = B
    A[m:, :m] = B.T
    N = m + n
    eps = np.abs(A).mean(axis=0).max()                 # the largest column mean of |A|
    out = B.copy()
    q = 0
    for i in range(m):
        for j in range(n):
            a = B[i, j]
            if a == 0:
                continue                                      # zeros stay zero (probability 0): no coin
            c = coins[q]
            q += 1
            if abs(a) > eps / np.sqrt(N):
                continue
            out[i, j] = np.sign(a) * eps / np.sqrt(N) if c < np.sqrt(N) * abs(a) / eps else 0.0
    return out


def test_prms_against_its_definition():
    rng = np.random.default_rng(3)
    B = rng.normal(size=(30, 50)) * (rng.random((30, 50)) < 0.6)
    B[0, :5] = 4.0                                            # a few large entries are kept as they are
    got = prms(B, np.random.default_rng(11)).toarray()
    assert np.array_equal(got, prms(sparse.csr_matrix(B), np.random.default_rng(11)).toarray())
    coins = np.random.default_rng(11).random(np.count_nonzero(B))
    assert np.allclose(got, slow_prms(B, coins), rtol=0, atol=1e-15)
    assert np.all(got[B == 0] == 0) and np.all(got[0, :5] == 4.0)
    assert np.isclose(prms_epsilon(B), np.abs(np.block([[np.zeros((30, 30)), B], [B.T, np.zeros((50, 50))]])).mean(0).max())
    assert density(got) < density(B)
    # unbiased: the mean of many draws is B (negative entries too: the signed-value bug of [R] is not copied)
    mean = np.mean([prms(B, np.random.default_rng(s)).toarray() for s in range(3000)], axis=0)
    assert np.abs(mean - B).max() < 0.05 * np.abs(B).max()


# ---------------------------------------------------------------- TwoNN
def slow_twonn(X):
    n = X.shape[0]
    mus = []
    for i in range(n):
        ds = sorted(np.sqrt(((X[j] - X[i]) ** 2).sum()) for j in range(n) if j != i)
        pos = [d for d in ds if d > 0]
        if len(pos) >= 2:
            mus.append(pos[1] / pos[0])
    mus = np.sort(mus)
    N = len(mus)
    F = np.arange(1, N + 1) / N
    x, y = np.log(mus[:-1]), np.log(1 - F[:-1])
    return max(1, int(round(-(x * y).sum() / (x * x).sum())))


def test_twonn_against_brute_force_with_repeated_rows():
    rng = np.random.default_rng(1)
    X = rng.random((120, 6))
    X[60:70] = X[:10]                                         # repeated rows: zero distances are skipped
    assert twonn_dimension(X) == slow_twonn(X)
    assert twonn_dimension(sparse.csr_matrix(X)) == slow_twonn(X)


@pytest.mark.parametrize("d", [2, 4, 6])
def test_twonn_finds_the_intrinsic_dimension(d):
    rng = np.random.default_rng(d)
    Z = rng.random((1500, d))
    X = Z @ rng.normal(size=(d, 40))                           # a d-dimensional cube in 40 dimensions
    est = twonn_dimension(X)
    assert abs(est - d) <= max(1, d // 4), est
    assert twonn_dimension(X, max_dim=1) == 1


# ---------------------------------------------------------------- adaptive k
def test_adaptive_k_hand_example():
    # gaps .02 .03 .45 .05: the largest follows the third distance
    assert gap_k(np.array([0.10, 0.12, 0.15, 0.60, 0.65]), 5, 0) == 3
    # equal largest gaps: the first; one candidate: 1; none: 0; a cap limits the search
    assert gap_k(np.array([0.0, 1.0, 2.0]), 3, 0) == 1
    assert gap_k(np.array([0.3]), 1, 0) == 1 and gap_k(np.array([]), 0, 0) == 0
    assert gap_k(np.array([0.1, 0.2, 0.25, 0.3, 5.0]), 5, 2) == 1


# ---------------------------------------------------------------- updates: the slow reference
def dist_ref(X, E, nominal, r, j):
    if E.shape[1]:
        return 1.0 - E[r] @ E[j]
    return sum((X[r, i] != X[j, i]) * 1.0 if nominal[i] else abs(X[r, i] - X[j, i]) for i in range(X.shape[1]))


def neighbours_ref(X, E, nominal, r, cands, k, adaptive):
    cands = [j for j in cands if j != r]
    ds = [dist_ref(X, E, nominal, r, j) for j in cands]
    order = sorted(range(len(cands)), key=lambda q: (ds[q], cands[q]))
    rows = [cands[q] for q in order]
    if adaptive:
        srt = [ds[q] for q in order]
        gaps = np.diff(srt)
        k = int(np.argmax(gaps)) + 1 if len(gaps) else len(rows)
    return rows[:k]


def diff_ref(X, nominal, r, rows, abs_mean):
    D = X.shape[1]
    out = np.zeros(D)
    for i in range(D):
        per = [(X[r, i] != X[n, i]) * 1.0 if nominal[i] else abs(X[r, i] - X[n, i]) for n in rows]
        out[i] = abs(X[r, i] - np.mean([X[n, i] for n in rows])) if abs_mean and not nominal[i] else np.mean(per)
    return out


def reliefe_ref(X, E, nominal, y, priors, Y, tdist, instances, k, adaptive, abs_mean):
    W = np.zeros(X.shape[1])
    n = X.shape[0]
    for r in instances:
        if y is not None:
            for c in range(len(priors)):
                rows = neighbours_ref(X, E, nominal, r, [j for j in range(n) if y[j] == c], k, adaptive)
                if not rows:
                    continue
                f = -1.0 if c == y[r] else priors[c] / (1 - priors[int(y[r])])
                W += f * diff_ref(X, nominal, r, rows, abs_mean)
        else:
            rows = neighbours_ref(X, E, nominal, r, range(n), k, adaptive)
            tau = np.array([tdist(Y[r], Y[j]) for j in rows])
            t = tau.mean()
            if not 0 < t < 1:
                continue
            d = diff_ref(X, nominal, r, rows, abs_mean)
            td = np.array([np.mean([tau[q] * ((X[r, i] != X[j, i]) * 1.0 if nominal[i] else abs(X[r, i] - X[j, i]))
                                    for q, j in enumerate(rows)]) for i in range(X.shape[1])])
            W += td / t - (d - td) / (1 - t)
    return W


def random_rows(rng, n, D, dens=0.3):
    X = np.round(rng.random((n, D)) * (rng.random((n, D)) < dens), 2)    # sparse, some ties
    nominal = np.zeros(D, bool)
    nominal[:2] = True
    X[:, :2] = rng.integers(0, 3, (n, 2)) * (rng.random((n, 2)) < 0.5)   # nominal: category 0 is "absent"
    return X, nominal


def run_kernel(X, nominal, E, y, priors, Yt, tkind, instances, k, adaptive, abs_mean):
    A = sparse.csr_matrix(X)
    A.sort_indices()
    n = X.shape[0]
    classes = np.asarray(y if y is not None else np.zeros(n), np.float64)
    rows = sparse_rows(A, nominal, E, np.arange(n, dtype=np.uint64), classes, Yt)
    space = EmbeddedSpace(rows, np.asarray(instances, np.int64), len(priors) if y is not None else 0, k, adaptive, 0)
    acc = relief_shard(space, SparseRule(np.asarray(priors, np.float64), tkind, abs_mean))
    return acc.W, acc.totals[ITERATIONS], acc.ks


@pytest.mark.parametrize("embedded", [False, True])
@pytest.mark.parametrize("adaptive", [False, True])
@pytest.mark.parametrize("abs_mean", [False, True])
def test_classification_update_against_slow_reference(embedded, adaptive, abs_mean):
    rng = np.random.default_rng(int(embedded) * 4 + int(adaptive) * 2 + int(abs_mean))
    X, nominal = random_rows(rng, 40, 12)
    y = rng.integers(0, 3, 40)
    priors = np.bincount(y, minlength=3) / 40
    E = l2_rows(rng.normal(size=(40, 3))) if embedded else np.zeros((40, 0))
    inst = rng.permutation(40)[:15]
    W, iters, ks = run_kernel(X, nominal, E, y, priors, np.zeros((40, 0)), 0, inst, 4, adaptive, abs_mean)
    ref = reliefe_ref(X, E, nominal, y, priors, None, None, inst, 4, adaptive, abs_mean)
    assert np.allclose(W, ref, atol=1e-10) and iters == 15
    assert (ks >= 1).all() and (adaptive or (ks <= 4).all())


def f1_dist(a, b):
    s = a.sum() + b.sum()
    return 1 - 2 * (a * b).sum() / s if s > 0 else 0.0


@pytest.mark.parametrize("kind", ["f1", "hamming", "cosine"])
@pytest.mark.parametrize("adaptive", [False, True])
@pytest.mark.parametrize("abs_mean", [False, True])
def test_mlc_update_against_slow_reference(kind, adaptive, abs_mean):
    rng = np.random.default_rng(len(kind) + int(adaptive) * 2 + int(abs_mean))
    X, nominal = random_rows(rng, 45, 10)
    Y = (rng.random((45, 5)) < 0.4).astype(float)
    E = l2_rows(rng.normal(size=(45, 4)))
    if kind == "cosine":
        Yt, tk = l2_rows(Y @ rng.normal(size=(5, 3))), T_COSINE
        tdist = lambda a, b: 1 - a @ b  # noqa: E731
    elif kind == "f1":
        Yt, tk, tdist = Y, T_F1, f1_dist
    else:
        Yt, tk, tdist = Y, T_HAMMING, lambda a, b: np.abs(a - b).mean()  # noqa: E731
    inst = rng.permutation(45)[:20]
    W, _, ks = run_kernel(X, nominal, E, None, [], Yt, tk, inst, 5, adaptive, abs_mean)
    ref = reliefe_ref(X, E, nominal, None, [], Yt, tdist, inst, 5, adaptive, abs_mean)
    assert np.allclose(W, ref, atol=1e-9)
    assert (ks[:, 0] >= 0).all()


def test_sparse_l1_is_the_dense_distance():
    rng = np.random.default_rng(2)
    X, nominal = random_rows(rng, 20, 15)
    A = sparse.csr_matrix(X)
    for r, j in [(0, 1), (3, 3), (5, 19)]:
        rows = sparse_rows(A, nominal, np.zeros((20, 0)), np.arange(20), np.zeros(20), np.zeros((20, 0)))
        assert np.isclose(sparse_l1(rows, r, j),
                          dist_ref(X, np.zeros((20, 0)), nominal, r, j))


def test_embedders_fit_and_transform_row_by_row():
    rng = np.random.default_rng(0)
    X = sparse.random(200, 60, density=0.1, random_state=1, format="csr")
    for name in ("pca", "random_projection"):
        emb = make_embedder(name, 5, 3, 200).fit(X[:100])
        full = l2_rows(emb.transform(X))
        part = l2_rows(emb.transform(X[150:]))
        assert full.shape == (200, 5) and np.allclose(full[150:], part)
        assert np.allclose(np.linalg.norm(full, axis=1)[np.abs(full).sum(1) > 0], 1.0)


def test_pca_of_many_components_from_the_gram_matrix_is_scikit_learns_pca_up_to_signs():
    """A sparse sample asked for more than ARPACK_SHARE of its rows as components goes through the Gram matrix;
    a rank-deficient one gives as many components as its rank."""
    from sklearn.decomposition import PCA

    from spark_fr.relief import embedders

    rng = np.random.default_rng(5)
    X = sparse.random(150, 400, density=0.04, random_state=2, format="csr") * 3.0
    d = 40
    assert d > embedders.ARPACK_SHARE * 150 and embedders.dense_if_small(X) is X
    ours = make_embedder("pca", d, 1, 150).fit(X).transform(X)
    ref = PCA(n_components=d, svd_solver="full").fit(X.toarray()).transform(X.toarray())
    assert np.allclose(np.abs(ours), np.abs(ref), atol=1e-8)
    low = sparse.csr_matrix(rng.random((60, 3)) @ (rng.random((3, 300)) * (rng.random((3, 300)) < 0.05)))
    emb = make_embedder("pca", 20, 1, 60).fit(low)
    assert emb.components_.shape[0] == 3  # its centred rows span 3 dimensions
    assert np.allclose(np.abs(emb.transform(low)),
                       np.abs(PCA(n_components=3, svd_solver="full").fit_transform(low.toarray())), atol=1e-8)


@pytest.mark.parametrize("as_sparse", [False, True])
def test_pca_embedder_is_scikit_learns_pca_up_to_signs(as_sparse):
    from sklearn.decomposition import PCA

    rng = np.random.default_rng(4)
    X = rng.random((120, 40)) * (rng.random((120, 40)) < 0.2) @ np.diag(np.linspace(1, 3, 40))
    S = sparse.csr_matrix(X) if as_sparse else X
    ours = make_embedder("pca", 4, 1, 120).fit(S).transform(S)
    ref = PCA(n_components=4, svd_solver="full").fit(X).transform(X)
    assert np.allclose(np.abs(ours), np.abs(ref), atol=1e-8)
    assert np.allclose(np.abs((ours * ref).sum(0)), (ref * ref).sum(0))


@pytest.mark.parametrize("as_sparse", [False, True])
def test_pca_of_equal_rows_has_no_components_and_of_a_rank_one_sample_one(as_sparse, caplog):
    """Issue 37 (8): a sample whose rows are all equal (every feature constant) made ARPACK fail ('starting
    vector is zero'); it now gives an embedding of no columns, said in one log line. A rank-1 sample asked for
    3 components gives 1 (the null space's directions would be noise blown up by the L2 normalisation)."""
    from spark_fr.relief import embedders

    wrap = sparse.csr_matrix if as_sparse else np.asarray
    equal = np.tile([0.0, 0.3, 0.0, 0.1] + [0.0] * 36, (100, 1))
    with caplog.at_level("WARNING", logger="spark_fr.relief.embedders"):
        emb = make_embedder("pca", 3, 1, 100).fit(wrap(equal))
    assert emb.components_.shape == (0, 40) and emb.transform(wrap(equal[:7])).shape == (7, 0)
    assert "100 rows it is fitted on are all equal" in caplog.text
    v = np.zeros(40)
    v[:3] = [0.5, 0.2, 0.1]
    low = np.where(np.random.default_rng(0).random((400, 1)) < 0.1, v, 0.0)
    emb = make_embedder("pca", 3, 1, 400).fit(wrap(low))
    assert emb.components_.shape == (1, 40) and np.allclose(emb.components_[0], v / np.linalg.norm(v))
