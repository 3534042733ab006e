"""Semi-supervised and unsupervised PCT-ensemble ranking end to end on Spark: planted features, fewer labels,
the per-task defaults, determinism for any partitioning and in partitioned mode (the automatic SSL weight:
tests/ensemble/test_ssl_weight.py)."""
import json

import numpy as np
import pandas as pd
import pytest

import spark_fr

COLS = ["feature", "score", "target", "importance", "rank", "importance_std"]


def clusters(n=400, seed=0, noise=8):
    """Three clusters, each with its own values of f0, f1 and the nominal 'shape' (10% of the shapes flipped):
    the features that define the clustering vary together; ``noise`` uniform features vary alone."""
    rng = np.random.default_rng(seed)
    c = rng.integers(0, 3, n)
    pdf = pd.DataFrame({"f0": np.array([0.0, 3.0, 6.0])[c] + rng.normal(0, 0.3, n),
                        "f1": np.array([2.0, 0.0, 5.0])[c] + rng.normal(0, 0.3, n)})
    shape = np.array(["round", "square", "star"])[c]
    flip = rng.random(n) < 0.1
    shape[flip] = rng.choice(["round", "square", "star"], flip.sum())
    pdf["shape"] = shape
    for j in range(noise):
        pdf[f"n{j}"] = rng.uniform(0, 1, n)
    pdf.loc[rng.random(n) < 0.03, "n0"] = np.nan
    return pdf


def top(r, score, k):
    g = r[(r.score == score) & (r.target == "__all__")].sort_values("rank")
    return list(g.feature[:k])


def test_unsupervised_ranking_puts_the_cluster_defining_features_first(spark):
    r = spark_fr.rank(spark.createDataFrame(clusters()), task="unsupervised", trees=30, seed=1, spark=spark)
    table = r.to_pandas()
    assert set(table.score) == {"genie3", "rf"}  # the thesis' scores for unsupervised ranking
    for score in ("genie3", "rf"):
        assert set(top(table, score, 3)) == {"f0", "f1", "shape"}, (score, top(table, score, 6))
    p = r.params
    assert (p["ensemble"], p["max_features"], p["bootstrap"], p["trees"]) == ("extra_trees", "log2", True, 30)
    assert p["features_per_node"] == 4  # ceil(log2 11)


def test_unsupervised_extra_trees_keep_their_bootstrap_for_the_rf_score():
    """Naming extra trees and the RF score leaves --bootstrap to the task: on for unsupervised (the thesis), off
    otherwise, where the RF score has no out-of-bag rows (checked before any data is read)."""
    from spark_fr.api import check_options
    from spark_fr.errors import InputError

    opts = {"ensemble": "extra_trees", "scores": ["genie3", "rf"]}
    p = check_options({**opts, "task": "unsupervised"}, "ensemble", set(opts))
    assert p.for_task(spark_fr.tasks.get("unsupervised")).bootstrap
    with pytest.raises(InputError, match="--scores rf needs out-of-bag rows"):
        check_options({**opts, "task": "regression"}, "ensemble", set(opts))


def test_unsupervised_is_bit_identical_for_any_partitioning_and_in_partitioned_mode(spark):
    df = spark.createDataFrame(clusters(n=250, seed=2, noise=4))
    kw = dict(task="unsupervised", trees=8, seed=3, scores="symbolic,genie3,rf", spark=spark)
    a = spark_fr.rank(df.repartition(1), **kw).to_pandas()[COLS]
    for parts, mode in ((3, "broadcast"), (2, "partitioned")):
        b = spark_fr.rank(df.repartition(parts), ensemble_mode=mode, **kw).to_pandas()[COLS]
        pd.testing.assert_frame_equal(a, b, check_exact=True)


def two_clusters(seed, n=600, labelled=8, D=60):
    """Two clusters along x0 and x1 (the class is the cluster), D - 2 noise features; ``labelled`` labels."""
    rng = np.random.default_rng(seed)
    c = rng.integers(0, 2, n)
    X = rng.normal(size=(n, D))
    X[:, 0] = np.where(c == 1, 1.0, -1.0) + rng.normal(0, 0.6, n)
    X[:, 1] = np.where(c == 1, 1.0, -1.0) + rng.normal(0, 0.6, n)
    pdf = pd.DataFrame(X, columns=[f"x{i}" for i in range(D)])
    y = np.where(c == 1, "b", "a").astype(object)
    y[labelled:] = None
    pdf["y"] = y
    return pdf


def test_semi_supervised_ranking_finds_the_relevant_features_from_fewer_labels(spark):
    """8 labelled rows among 600, 58 noise features: the unlabelled rows carry the cluster structure. SSL
    (w = 0.5) puts x0 and x1 on top in every seed; supervised ranking of the 8 labelled rows does not
    (measured: both on top in 1 of 6 seeds, mean rank of the two 7.8)."""
    ssl_hits, sup_ranks = [], []
    for seed in range(4):
        df = spark.createDataFrame(two_clusters(seed))
        kw = dict(targets="y", task="classification", trees=50, seed=seed, scores="genie3", spark=spark)
        ssl = spark_fr.rank(df, semi_supervised=True, **kw)
        sup = spark_fr.rank(df, **kw).to_pandas()
        ssl_hits.append(set(top(ssl.to_pandas(), "genie3", 2)) == {"x0", "x1"})
        g = sup[sup.score == "genie3"].set_index("feature")
        sup_ranks.append(float(g.loc[["x0", "x1"], "rank"].mean()))
        assert ssl.params["ssl_weight"] == 0.5 and ssl.metadata["n_rows"] == 600
    assert all(ssl_hits), ssl_hits
    assert np.mean(sup_ranks) > 3.0, sup_ranks


def test_semi_supervised_is_bit_identical_for_any_partitioning_and_mode(spark):
    pdf = two_clusters(5, n=300, labelled=60, D=8)
    pdf["colour"] = np.array(["red", "green", "blue"])[np.arange(300) % 3]
    df = spark.createDataFrame(pdf)
    kw = dict(targets="y", trees=8, seed=2, semi_supervised=True, ssl_weight=0.3, spark=spark)
    a = spark_fr.rank(df.repartition(1), **kw).to_pandas()[COLS]
    for parts, mode in ((3, "broadcast"), (2, "partitioned")):
        b = spark_fr.rank(df.repartition(parts), ensemble_mode=mode, **kw).to_pandas()[COLS]
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    sup = spark_fr.rank(df, targets="y", trees=8, seed=2, spark=spark).to_pandas()[COLS]
    assert not np.allclose(sup.importance, a.importance)  # the unlabelled rows and the features took part


def test_digits_unsupervised_end_to_end(datasets, tmp_path):
    """scikit-learn's headerless digits CSV through jobs/rank.py: 64 pixel features (the class column left
    out), the run's defaults in run.json, and pixels that are always blank at the bottom of both rankings."""
    from tests.conftest import run_job

    out = tmp_path / "digits"
    code, _, err = run_job(["--input", datasets / "sklearn_digits/digits.csv.gz", "--task", "unsupervised",
                            "--trees", 10, "--seed", 1, "--output", out, "--output-format", "csv"])
    assert code == 0, err[-2000:]
    table = pd.read_csv(out / "ranking.csv")
    assert set(table.score) == {"genie3", "rf"} and table.feature.nunique() == 64
    assert "target" not in set(table.feature)
    run = json.loads((out / "run.json").read_text())
    assert run["params"]["ensemble"] == "extra_trees" and run["params"]["features_per_node"] == 6
    g = table[table.score == "genie3"].set_index("feature")
    assert g.loc["x1", "importance"] == 0.0  # the top-left pixel is 0 in every image
    assert g.importance.max() > 0


def test_ssl_per_target_rankings_cover_the_targets_only(spark):
    rng = np.random.default_rng(0)
    n = 400
    X = rng.uniform(size=(n, 6))
    pdf = pd.DataFrame(X, columns=[f"x{i}" for i in range(6)])
    pdf["y1"] = 3 * X[:, 0] + rng.normal(0, 0.1, n)
    pdf["y2"] = 3 * X[:, 1] + rng.normal(0, 0.1, n)
    pdf.loc[pdf.index[100:], ["y1", "y2"]] = np.nan
    t = spark_fr.rank(spark.createDataFrame(pdf), targets="y1,y2", semi_supervised=True, per_target=True,
                      trees=20, seed=1, spark=spark).to_pandas()
    assert set(t[t.score == "genie3"].target) == {"__all__", "y1", "y2"}
    assert set(t[t.score == "rf"].target) == {"__all__", "y1", "y2"}
    for target, planted in (("y1", "x0"), ("y2", "x1")):
        for score in ("genie3", "rf"):
            g = t[(t.target == target) & (t.score == score)].sort_values("rank")
            assert g.feature.iloc[0] == planted, (target, score, list(g.feature))


def test_ssl_weight_auto_needs_broadcast_mode(spark):
    from spark_fr.errors import InputError

    df = spark.createDataFrame(two_clusters(0, n=100, labelled=30, D=4))
    with pytest.raises(InputError, match="--ssl-weight auto is not available in partitioned mode"):
        spark_fr.rank(df, targets="y", semi_supervised=True, ssl_weight="auto", ensemble_mode="partitioned",
                      trees=2, spark=spark)


def test_hmlc_semi_supervised_finds_the_branch_features_and_is_partition_free(spark):
    """HMLC with 80 % unlabelled rows (a tree hierarchy a/{a1,a2}, b/{b1}): x0 decides a vs b, x1 a1 vs a2."""
    rng = np.random.default_rng(3)
    n = 400
    X = rng.uniform(size=(n, 6))
    labels = np.where(X[:, 0] > 0.5, np.where(X[:, 1] > 0.5, "a/a1", "a/a2"), "b/b1").astype(object)
    labels[rng.random(n) < 0.8] = None
    pdf = pd.DataFrame(X, columns=[f"x{i}" for i in range(6)])
    pdf["labels"] = labels
    df = spark.createDataFrame(pdf)
    kw = dict(targets="labels", hierarchy="a,a/a1,a/a2,b,b/b1", semi_supervised=True, trees=10, seed=4,
              scores="genie3,symbolic,rf", spark=spark)
    r = spark_fr.rank(df.repartition(1), **kw)
    a = r.to_pandas()[COLS]
    assert r.params["task"] == "hmlc" and r.params["trees"] == 10 and r.metadata["n_rows"] == n
    assert top(a, "genie3", 2) == ["x0", "x1"]
    b = spark_fr.rank(df.repartition(3), **kw).to_pandas()[COLS]
    pd.testing.assert_frame_equal(a, b, check_exact=True)
