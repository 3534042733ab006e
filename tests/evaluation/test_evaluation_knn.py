"""The evaluation's weighted kNN (spark_fr.evaluation.knn) against a brute-force search, on the driver and in
Spark tasks."""
import math

import numpy as np
import pytest

from spark_fr.evaluation import knn as K


def slow_neighbours(X, keys, Q, w, nominal, n_values, k):
    """Brute force: every distance written out (Weka/CLUS missing-value rules), sorted by (distance, key)."""
    out = []
    for q in Q:
        cand = []
        for j in range(X.shape[0]):
            s = 0.0
            for i in range(X.shape[1]):
                if w[i] <= 0:
                    continue
                a, b = q[i], X[j, i]
                if math.isnan(a) or math.isnan(b):
                    if nominal[i]:
                        d = 1.0 - 1.0 / n_values[i]
                    elif math.isnan(a) and math.isnan(b):
                        d = 1.0
                    else:
                        t = b if math.isnan(a) else a
                        d = max(t, 1.0 - t)
                elif nominal[i]:
                    d = 0.0 if a == b else 1.0
                else:
                    d = abs(a - b)
                s = s + w[i] * d * d
            cand.append((s, int(keys[j]), j))
        cand.sort()
        out.append([c[2] for c in cand[:k]] + [-1] * max(0, k - len(cand)))
    return np.array(out)


def random_case(seed, n=60, m=25, D=6, missing=0.1):
    rng = np.random.default_rng(seed)
    nominal = rng.random(D) < 0.35
    n_values = np.where(nominal, rng.integers(2, 5, D), 1).astype(float)
    X = np.empty((n + m, D))
    for i in range(D):
        if nominal[i]:
            X[:, i] = rng.integers(0, int(n_values[i]), n + m)
        else:  # coarse values: many exact ties between rows
            X[:, i] = rng.integers(0, 5, n + m) / 4.0
    X[rng.random(X.shape) < missing] = np.nan
    keys = rng.choice(2 ** 40, n, replace=False).astype(np.uint64)
    w = np.where(rng.random(D) < 0.25, 0.0, rng.integers(1, 4, D) / 2.0)
    if not np.any(w > 0):
        w[0] = 1.0
    return X[:n], keys, X[n:], w, nominal, n_values


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("k", [1, 5, 70])
def test_weighted_knn_equals_brute_force(seed, k):
    X, keys, Q, w, nominal, n_values = random_case(seed)
    search = K.NeighbourSearch.build(X, keys, w, nominal, n_values, k)
    idx, dist = K.nearest(search, Q, mode="driver")
    assert np.array_equal(idx, slow_neighbours(X, keys, Q, w, nominal, n_values, k))
    assert np.all(np.diff(np.where(np.isinf(dist), np.finfo(float).max, dist), axis=1) >= 0)
    assert np.all(idx[np.isinf(dist)] == -1)


def test_neighbours_do_not_depend_on_the_row_order():
    X, keys, Q, w, nominal, n_values = random_case(3, missing=0.0)
    perm = np.random.default_rng(0).permutation(X.shape[0])
    a, _ = K.nearest(K.NeighbourSearch.build(X, keys, w, nominal, n_values, 7), Q, mode="driver")
    b, _ = K.nearest(K.NeighbourSearch.build(X[perm], keys[perm], w, nominal, n_values, 7), Q, mode="driver")
    assert np.array_equal(a, perm[b])


def test_spark_tasks_give_the_driver_s_neighbours_bit_for_bit(spark, monkeypatch):
    X, keys, Q, w, nominal, n_values = random_case(11, n=400, m=300, D=9)
    monkeypatch.setattr(K, "BLOCK_PAIRS", 400 * 37)  # several blocks, several tasks
    search = K.NeighbourSearch.build(X, keys, w, nominal, n_values, 10)
    idx_d, dist_d = K.nearest(search, Q, mode="driver")
    idx_s, dist_s = K.nearest(search, Q, spark, mode="spark")
    assert np.array_equal(idx_d, idx_s)
    assert np.array_equal(dist_d.view(np.uint64), dist_s.view(np.uint64))
    idx_a, _ = K.nearest(search, Q, spark, mode="auto")  # the suite forces Spark tasks (SPARK_FR_DRIVER_MAX_SECONDS=0)
    assert np.array_equal(idx_d, idx_a)


def test_feature_weights_follow_the_thesis():
    assert K.feature_weights([0.5, -1.0, np.nan, 2.0]).tolist() == [0.5, 0.0, 0.0, 2.0]
    assert K.feature_weights([0.0, -3.0, np.nan]).tolist() == [1.0, 1.0, 1.0]  # all zero: all one


def test_predictions_average_and_vote_with_equal_weights():
    Y = np.array([[1.0, 0.0], [3.0, np.nan], [5.0, 1.0], [np.nan, np.nan]])
    idx = np.array([[0, 1, 2], [3, 3, -1], [1, 3, 2]])
    P = K.neighbour_mean(Y, idx, np.array([9.0, 0.5]))
    assert P.tolist() == [[3.0, 0.5], [9.0, 0.5], [4.0, 1.0]]
    y = np.array([2.0, 0.0, 2.0, 0.0, np.nan])
    pred, shares = K.neighbour_vote(y, np.array([[0, 1, 2], [0, 1, 4], [4, 4, -1]]), 3, 1)
    assert pred.tolist() == [2.0, 0.0, 1.0]  # majority; a tie goes to the lowest class; no known class: fallback
    assert shares[0].tolist() == pytest.approx([1 / 3, 0.0, 2 / 3])


def connect_neighbours(spark, seed):
    """In the Connect worker: the neighbours of random_case(seed) searched by Spark tasks."""
    K.BLOCK_PAIRS = 400 * 37  # several blocks, several tasks
    X, keys, Q, w, nominal, n_values = random_case(seed, n=400, m=300, D=9)
    return K.nearest(K.NeighbourSearch.build(X, keys, w, nominal, n_values, 10), Q, spark, mode="spark")


def test_spark_connect_gives_the_driver_s_neighbours_bit_for_bit(connect):
    idx_r, dist_r = connect.run(connect_neighbours, 12)
    X, keys, Q, w, nominal, n_values = random_case(12, n=400, m=300, D=9)
    idx_d, dist_d = K.nearest(K.NeighbourSearch.build(X, keys, w, nominal, n_values, 10), Q, mode="driver")
    assert np.array_equal(idx_d, idx_r)
    assert np.array_equal(dist_d.view(np.uint64), dist_r.view(np.uint64))
