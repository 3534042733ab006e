"""Rankings recover planted relevant features, per task type, for every score and ensemble type.

Synthetic data: D = 12 features, uniform noise except the planted ones. Locally (no Spark) for the grid of
tasks x ensembles, and once per task through ``spark_fr.rank`` on a Spark DataFrame.
"""
import numpy as np
import pandas as pd
import pytest

import spark_fr
from tests.conftest import as_dict
from spark_fr.ensemble.local import rank_arrays
from spark_fr.ensemble.params import EnsembleParams


def planted(task, n=600, D=12, seed=0):
    """(X, Y, relevant feature indices) with the relevance planted in the first features."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, D))
    if task == "classification":
        y = np.where(X[:, 0] > 0.3, 0, np.where(X[:, 1] + 0.5 * X[:, 2] > 0, 1, 2)).astype(float)
        flip = rng.random(n) < 0.05
        y[flip] = rng.integers(0, 3, flip.sum())
        return X, y[:, None], [0, 1, 2]
    if task == "regression":
        return X, (4 * X[:, 0] + 2 * np.sin(3 * X[:, 1]) + X[:, 2] + rng.normal(0, 0.1, n))[:, None], [0, 1, 2]
    if task == "mtr":
        Y = np.stack([3 * X[:, j] + X[:, j + 1] + rng.normal(0, 0.1, n) for j in range(3)], axis=1)
        return X, Y, [0, 1, 2, 3]
    Y = np.stack([(X[:, j] > 0) ^ (rng.random(n) < 0.05) for j in range(4)], axis=1).astype(float)
    return X, Y, [0, 1, 2, 3]


@pytest.mark.parametrize("task", ["classification", "regression", "mtr", "mlc"])
@pytest.mark.parametrize("ensemble", ["rf", "bagging", "extra_trees"])
def test_planted_features_rank_first_locally(task, ensemble):
    X, Y, relevant = planted(task)
    params = EnsembleParams(ensemble=ensemble, trees=30, seed=1, bootstrap=True)
    results = as_dict(rank_arrays(X, Y, task, params))
    for score in ("symbolic", "genie3", "rf"):
        mean, std = results[score]
        top = set(np.argsort(-mean)[:len(relevant)])
        assert top == set(relevant), (score, np.round(mean, 3))
        assert np.all(np.isfinite(std)) and np.all(std[relevant] > 0)  # the trees differ


def test_a_noisy_high_cardinality_feature_is_not_ranked_high_by_the_rf_score():
    """scikit-learn's classic MDI caveat: an ID-like random column attracts splits (Symbolic, Genie3), the
    permutation score must still put it below the relevant features and near zero."""
    rng = np.random.default_rng(2)
    n = 800
    X = np.column_stack([rng.uniform(-1, 1, n), rng.integers(0, 2, n), rng.permutation(n) / n])
    y = (2 * X[:, 0] + X[:, 1] + rng.normal(0, 0.3, n))[:, None]
    mean, _ = as_dict(rank_arrays(X, y, "regression", EnsembleParams(trees=40, seed=3)))["rf"]
    assert mean[2] < mean[0] and mean[2] < mean[1]
    assert abs(mean[2]) < 0.2 * mean[0]


@pytest.mark.parametrize("task", ["classification", "regression", "mtr", "mlc"])
def test_planted_features_rank_first_on_spark(spark, task):
    X, Y, relevant = planted(task, n=500)
    pdf = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
    targets = [f"t{j}" for j in range(Y.shape[1])]
    for j, t in enumerate(targets):
        pdf[t] = Y[:, j] if task != "classification" else np.array(["a", "b", "c"])[Y[:, j].astype(int)]
    df = spark.createDataFrame(pdf)
    ranking = spark_fr.rank(df, targets=targets, trees=40, seed=5, spark=spark, per_target=True)
    table = ranking.to_pandas()
    expected_task = task
    assert ranking.metadata["params"]["task"] == expected_task
    for score in ("symbolic", "genie3", "rf"):
        top = table[(table.score == score) & (table.target == "__all__")].nsmallest(len(relevant), "rank")
        assert set(top.feature) == {f"x{i}" for i in relevant}, (score, top)
    if task == "mtr":
        # per target: t_j depends on x_j and x_{j+1}
        for j, t in enumerate(targets):
            top2 = table[(table.score == "genie3") & (table.target == t)].nsmallest(2, "rank")
            assert set(top2.feature) == {f"x{j}", f"x{j + 1}"}
