"""The Laplacian Score (spark_fr.evaluation.laplace) against the paper's formula computed the slow, obvious way and
against scikit-feature's ``construct_W`` + ``lap_score`` (the implementation the thesis's baselines came from)."""
import numpy as np
import pytest

from spark_fr.evaluation.laplace import knn_graph, laplace_importances, laplacian_scores


def paper_scores(Z, k, t):
    """He, Cai and Niyogi (2005), literally: the full distance matrix, every row's k nearest other rows (ties: lower
    index) plus itself, S_ij = exp(-d2 / (2 t^2)) if i and j are connected either way, D = diag(S1), L = D - S,
    f~ = f - (f'D1 / 1'D1) 1, L_r = f~'Lf~ / f~'Df~."""
    n, p = Z.shape
    d2 = np.array([[float(np.sum((Z[a] - Z[b]) ** 2)) for b in range(n)] for a in range(n)])
    linked = np.eye(n, dtype=bool)
    for a in range(n):
        others = sorted((d2[a, b], b) for b in range(n) if b != a)
        for _, b in others[:k]:
            linked[a, b] = linked[b, a] = True
    S = np.where(linked, np.exp(-d2 / (2 * t * t)), 0.0)
    Dm = np.diag(S.sum(axis=1))
    L = Dm - S
    one = np.ones(n)
    out = np.empty(p)
    for r in range(p):
        f = Z[:, r]
        ft = f - (f @ Dm @ one) / (one @ Dm @ one) * one
        out[r] = (ft @ L @ ft) / (ft @ Dm @ ft)
    return out, S


@pytest.mark.parametrize("seed, n, p, k, t", [(0, 40, 5, 5, 1.0), (1, 57, 8, 3, 0.5), (2, 30, 3, 10, 2.0)])
def test_scores_are_the_papers_formula(seed, n, p, k, t):
    rng = np.random.default_rng(seed)
    Z = rng.random((n, p)) * rng.uniform(0.2, 1.0, p)
    Z[5] = Z[3]  # a duplicate row: a tie at distance 0
    expect, S = paper_scores(Z, k, t)
    got = laplacian_scores(Z, k, t)
    assert np.allclose(got, expect, rtol=1e-10, atol=1e-12)
    i, j, s = knn_graph(Z, k, t)
    dense = np.eye(n)
    dense[i, j] = dense[j, i] = s
    assert np.allclose(dense, S, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_graph_and_order_are_scikit_features(seed):
    from skfeature.function.similarity_based.lap_score import lap_score
    from skfeature.utility.construct_W import construct_W

    rng = np.random.default_rng(seed)
    Z = rng.random((80, 12)) * rng.uniform(0.1, 1.0, 12)
    W = construct_W(Z.copy(), metric="euclidean", neighbor_mode="knn", weight_mode="heat_kernel", k=5, t=1)
    i, j, s = knn_graph(Z)  # the defaults are scikit-feature's heat-kernel settings: k = 5, t = 1
    dense = np.eye(80)
    dense[i, j] = dense[j, i] = s
    assert np.allclose(W.toarray(), dense, rtol=1e-9, atol=1e-12)
    theirs = np.asarray(lap_score(Z.copy(), mode="index", W=W)).ravel()  # feature indices, lowest score first
    assert np.array_equal(np.argsort(laplacian_scores(Z), kind="stable"), theirs)
    imp = laplace_importances(Z)
    assert np.array_equal(np.argsort(-imp, kind="stable"), theirs)


def test_importances_invert_the_scores_and_rank_a_cluster_feature_first():
    rng = np.random.default_rng(4)
    n = 150
    cluster = rng.integers(0, 3, n)
    X = np.column_stack([rng.random(n), cluster / 2 + 0.05 * rng.normal(size=n), rng.random(n), np.full(n, 0.3),
                         rng.random(n)])
    X[rng.random(n) < 0.1, 2] = np.nan  # missing: the column's mean
    imp = laplace_importances(X)
    Z = X.copy()
    Z[np.isnan(Z[:, 2]), 2] = np.nanmean(X[:, 2])
    s = laplacian_scores(Z)
    assert np.isnan(s[3]) and imp[3] == 0.0  # constant: no score, importance 0, ranked last
    known = ~np.isnan(s)
    assert np.allclose(imp[known], s[known].max() + s[known].min() - s[known])  # the thesis's S + s - s_i
    assert np.argmax(imp) == 1 and np.argsort(-imp, kind="stable")[-1] == 3


def test_a_nominal_feature_is_the_sum_of_its_one_hot_columns():
    rng = np.random.default_rng(5)
    n = 90
    X = np.column_stack([rng.random(n), rng.integers(0, 3, n).astype(float), rng.random(n)])
    X[7, 1] = np.nan
    imp = laplace_importances(X, nominal=np.array([False, True, False]), n_values=np.array([1, 3, 1]))
    onehot = (X[:, [1]] == np.arange(3)).astype(float)
    onehot[7] = onehot[np.arange(n) != 7].mean(axis=0)
    s = laplacian_scores(np.column_stack([X[:, 0], onehot, X[:, 2]]))
    scores = np.array([s[0], s[1:4].sum(), s[4]])
    assert np.allclose(imp, scores.max() + scores.min() - scores)
