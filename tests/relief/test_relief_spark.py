"""Relief through Spark: agreement with skrebate, identical weights across modes and partitionings,
planted-feature recovery per task type (including interacting XOR features)."""
import numpy as np
import pandas as pd
import pytest

import spark_fr
from spark_fr.relief.params import ReliefParams
from tests.conftest import as_dict, relief_data
from spark_fr.relief.local import relief_local

COLS = ["feature", "score", "target", "importance", "rank", "importance_std"]


def relief(df, spark, **kw):
    return spark_fr.rank(df, method="relief", spark=spark, **kw).to_pandas()


def joint(table):
    t = table[table.target == "__all__"].set_index("feature")
    return t.importance


# ----- skrebate ------------------------------------------------------------------------------------------
def test_binary_classification_equals_skrebate_relieff(spark):
    """Binary class, continuous features, all instances, k hits and k misses: the same algorithm.

    skrebate scores each instance by -mean(d over the k hits) + mean(d over the k misses) and averages
    over instances; Kononenko's ReliefF with two classes weighs the misses by P(c) / (1 - P(y)) = 1, so
    the two coincide.
    """
    from skrebate import ReliefF

    rng = np.random.default_rng(0)
    n, D = 300, 8
    X = rng.random((n, D))
    y = ((X[:, 0] + X[:, 1] > 1.0) ^ (rng.random(n) < 0.1)).astype(int)
    sk = ReliefF(n_neighbors=10, n_features_to_select=D, n_jobs=1).fit(X, y).feature_importances_
    pdf = pd.DataFrame(X, columns=[f"x{i}" for i in range(D)])
    pdf["y"] = np.where(y == 1, "yes", "no")
    ours = joint(relief(spark.createDataFrame(pdf), spark, targets="y", relief_neighbours=10, relief_iterations=1.0))
    np.testing.assert_allclose(ours[[f"x{i}" for i in range(D)]].to_numpy(), sk, atol=1e-6, rtol=0)


def test_multiclass_wine_equals_skrebate_when_miss_classes_are_weighted_alike(spark, datasets):
    """Three classes (59/71/48 rows). The one definition that differs: ReliefF (thesis Alg. 2.3, CLUS)
    weighs the misses of class c by P(c) / (1 - P(y)); skrebate weighs every miss class alike, 1 / (C - 1).
    With the priors set to uniform the two are the same algorithm and agree to 1e-6; with the real priors
    they differ, by less than the weights' spread."""
    from skrebate import ReliefF

    raw = np.loadtxt(datasets / "sklearn_wine/wine_data.csv", delimiter=",", skiprows=1)
    X, y = raw[:, :-1], raw[:, -1].astype(int)
    sk = ReliefF(n_neighbors=10, n_features_to_select=13, n_jobs=1).fit(X, y).feature_importances_
    # through the job's own reading and encoding of the CSV
    table = relief(str(datasets / "sklearn_wine/wine_data.csv"), spark, relief_neighbours=10)
    ours = joint(table)[[f"x{i}" for i in range(1, 14)]].to_numpy()
    assert np.abs(ours - sk).max() < 0.02
    # the same data with the difference applied: uniform priors
    lo, hi = X.min(axis=0), X.max(axis=0)
    params = ReliefParams(neighbours=10)
    data, _ = relief_data((X - lo) / (hi - lo), np.arange(len(y), dtype=np.uint64), y[:, None].astype(float),
                                "classification", np.zeros(13, bool), np.ones(13), params,
                                classes=["0", "1", "2"])
    assert not np.allclose(data.target.priors, 1 / 3)
    data.target.priors = np.full(3, 1 / 3)
    np.testing.assert_allclose(as_dict(relief_local(data, params))["relief"][0], sk, atol=1e-6, rtol=0)


# ----- modes and partitionings ---------------------------------------------------------------------------
def mixed_frame(spark, n=400, seed=0):
    rng = np.random.default_rng(seed)
    pdf = pd.DataFrame(rng.random((n, 6)), columns=[f"f{i}" for i in range(6)])
    pdf.loc[rng.random(n) < 0.05, "f3"] = np.nan
    pdf["colour"] = np.array(["red", "green", "blue"])[rng.integers(0, 3, n)]
    pdf["y1"] = 3 * pdf.f0 + (pdf.colour == "red") + rng.normal(0, 0.1, n)
    pdf["y2"] = pdf.f1 * 2 + rng.normal(0, 0.1, n)
    pdf = pd.concat([pdf, pdf.iloc[:15]], ignore_index=True)  # repeated rows
    return spark.createDataFrame(pdf)


@pytest.mark.parametrize("targets,extra", [("y1,y2", {"per_target": True}),
                                           ("colour", {}),
                                           (None, {"task": "unsupervised"})])
def test_broadcast_and_tall_modes_and_any_partitioning_give_the_same_weights(spark, targets, extra):
    df = mixed_frame(spark)
    if targets == "colour":
        df = df.drop("y1", "y2")
    kw = dict(targets=targets, relief_neighbours=7, relief_iterations=0.5, seed=4, **extra)
    runs = [relief(df.repartition(1), spark, relief_mode="broadcast", **kw),
            relief(df.repartition(8), spark, relief_mode="broadcast", **kw),
            relief(df.repartition(1), spark, relief_mode="tall", **kw),
            relief(df.repartition(8), spark, relief_mode="tall", **kw)]
    for r in runs[1:]:
        pd.testing.assert_frame_equal(runs[0][COLS], r[COLS], check_exact=True)
    assert runs[0].importance_std.notna().all() and (runs[0].importance_std > 0).any()


def test_semi_supervised_tall_equals_broadcast(spark):
    rng = np.random.default_rng(3)
    n = 300
    pdf = pd.DataFrame(rng.random((n, 5)), columns=[f"f{i}" for i in range(5)])
    pdf["y"] = 2 * pdf.f0 + rng.normal(0, 0.05, n)
    pdf.loc[rng.random(n) < 0.7, "y"] = np.nan
    df = spark.createDataFrame(pdf)
    kw = dict(targets="y", semi_supervised=True, relief_neighbours=6, relief_influence="0.25,0.75", seed=2)
    a = relief(df.repartition(3), spark, relief_mode="broadcast", **kw)
    b = relief(df.repartition(5), spark, relief_mode="tall", **kw)
    pd.testing.assert_frame_equal(a[COLS], b[COLS], check_exact=True)
    assert joint(a).idxmax() == "f0"


# ----- planted features ------------------------------------------------------------------------------------
def planted(task, rng, n=500):
    X = rng.random((n, 10))
    pdf = pd.DataFrame(X, columns=[f"x{i}" for i in range(10)])
    if task == "classification":
        pdf["y"] = np.where(X[:, 0] > 0.6, "a", np.where(X[:, 1] > 0.5, "b", "c"))
        return pdf, ["y"], {"x0", "x1"}
    if task == "regression":
        pdf["y"] = 4 * X[:, 0] + 2 * X[:, 1] + rng.normal(0, 0.05, n)
        return pdf, ["y"], {"x0", "x1"}
    if task == "mtr":
        pdf["t1"] = 3 * X[:, 0] + rng.normal(0, 0.05, n)
        pdf["t2"] = 3 * X[:, 1] + rng.normal(0, 0.05, n)
        pdf["t3"] = 3 * X[:, 2] + rng.normal(0, 0.05, n)
        return pdf, ["t1", "t2", "t3"], {"x0", "x1", "x2"}
    labels = []
    for j in range(3):
        pdf[f"l{j}"] = (X[:, j] > 0.5).astype(float)
        labels.append(f"l{j}")
    return pdf, labels, {"x0", "x1", "x2"}


@pytest.mark.parametrize("task", ["classification", "regression", "mtr", "mlc"])
def test_planted_features_rank_first(spark, task):
    rng = np.random.default_rng(5)
    pdf, targets, relevant = planted(task, rng)
    table = relief(spark.createDataFrame(pdf), spark, targets=targets, task=task, relief_neighbours=10)
    top = table[table.target == "__all__"].nsmallest(len(relevant), "rank")
    assert set(top.feature) == relevant


def test_xor_interaction_is_found():
    """y = x0 XOR x1: neither feature alone says anything (a myopic score sees nothing), Relief finds both."""
    rng = np.random.default_rng(6)
    n = 400
    X = rng.integers(0, 2, (n, 8)).astype(float)
    y = (X[:, 0].astype(int) ^ X[:, 1].astype(int)).astype(float)
    # myopic check: each feature alone is independent of y
    for i in (0, 1):
        assert abs(np.corrcoef(X[:, i], y)[0, 1]) < 0.15
    params = ReliefParams(neighbours=10)
    data, _ = relief_data(X, np.arange(n, dtype=np.uint64), y[:, None], "classification", np.ones(8, bool),
                                np.full(8, 2.0), params, classes=["0", "1"])
    w = as_dict(relief_local(data, params))["relief"][0]
    assert set(np.argsort(-w)[:2]) == {0, 1}
    assert w[0] > 0.1 and w[1] > 0.1 and np.all(w[2:] < 0.05)


def test_unsupervised_relief_ranks_features_along_which_neighbours_differ(spark):
    """URelief (thesis Ch. 7, Alg. 3) estimates P(x_i differs | rows differ) - P(x_i differs | rows alike) over
    near neighbours, i.e. roughly cov(d_i, d_X) / E[d_X]: a feature ranks high when its differences make up
    the distances between neighbouring rows. Features that are almost constant (one outlier fixes their
    range) contribute nothing and must come last; spread-out features come first. (On the make_synthetic
    'unsup' design, where three features copy one bimodal latent variable, URelief ranks the independent
    uniform features above the copies, because neighbours share the latent value: a property of the
    estimator, which the tests of the kernels check against the thesis' algorithm.)"""
    rng = np.random.default_rng(7)
    n = 400
    pdf = pd.DataFrame(rng.random((n, 4)), columns=[f"x{i}" for i in range(4)])
    for i in range(4, 8):
        v = rng.normal(0, 0.01, n)
        v[rng.integers(n)] = 1.0
        pdf[f"x{i}"] = v
    pdf["flat"] = 2.0
    table = relief(spark.createDataFrame(pdf), spark, task="unsupervised", relief_neighbours=20)
    assert set(table.nsmallest(4, "rank").feature) == {"x0", "x1", "x2", "x3"}
    assert table.set_index("feature").loc["flat", "rank"] == 9


def test_semi_supervised_relief_keeps_unlabelled_rows(spark):
    """150 labelled rows out of 400: the unlabelled rows stay in (neighbours, influence) and the planted
    feature still ranks first. (With very few labels SSL-Relief is mostly URelief: pairs with an unlabelled
    row use d_X, see spark_fr.relief.kernels.)"""
    rng = np.random.default_rng(8)
    n = 400
    pdf = pd.DataFrame(rng.random((n, 6)), columns=[f"x{i}" for i in range(6)])
    pdf["y"] = np.where(pdf.x0 > 0.5, 1.0, 0.0) + rng.normal(0, 0.05, n)
    unlabelled = np.ones(n, bool)
    unlabelled[rng.choice(n, 150, replace=False)] = False
    pdf.loc[unlabelled, "y"] = np.nan
    df = spark.createDataFrame(pdf)
    r = spark_fr.rank(df, targets="y", method="relief", semi_supervised=True, spark=spark, relief_neighbours=10)
    assert r.top("relief", 1).feature[0] == "x0"
    assert r.metadata["n_rows"] == n
    supervised = spark_fr.rank(df, targets="y", method="relief", spark=spark, relief_neighbours=10)
    assert supervised.metadata["n_rows"] == 150


def test_grouping_shards_into_tasks_does_not_change_the_weights(spark, monkeypatch):
    """Small jobs run their 16 shards in one task per core, large ones one shard per task: same bits."""
    from spark_fr.relief import broadcast as relief_spark

    groups = relief_spark.shard_groups([[1], [2, 3], [4], [5]] * 4, 2, 100)
    assert len(groups) == 2 and [i for g in groups for i, _ in g] == list(range(16))
    assert len(relief_spark.shard_groups([[1]] * 16, 2, 10 ** 12)) == 16
    pdf, targets, _ = planted("mtr", np.random.default_rng(9), n=300)
    df = spark.createDataFrame(pdf)
    a = relief(df, spark, targets=targets, relief_neighbours=7, per_target=True)
    monkeypatch.setattr(relief_spark, "SMALL_WORK", -1.0)  # every shard its own task
    b = relief(df, spark, targets=targets, relief_neighbours=7, per_target=True)
    pd.testing.assert_frame_equal(a[COLS], b[COLS], check_exact=True)
