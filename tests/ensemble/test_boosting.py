"""Gradient-boosted PCT ranking (--method boosting): the loss pieces and tree application against slow references,
the boosting loop against scikit-learn's GradientBoosting*, planted features, determinism across partitions on
Spark, the importance curve in run.json, and the command line's checks."""
import json
import math

import numpy as np
import pandas as pd
import pytest

import spark_fr
from spark_fr import options as O
from spark_fr.ensemble.boosting import boost_arrays, round_sample
from spark_fr.ensemble.local import tree_data_from_arrays
from spark_fr.ensemble.params import BOOSTING_DEFAULTS, BoostingParams
from spark_fr.errors import InputError
from spark_fr.pct.config import grow_config
from spark_fr.pct.tree import grow
from spark_fr.tasks.losses import BinomialLogLoss, MultinomialLogLoss, SquaredLoss, leaf_sums

from tests.conftest import check_contract, check_png, run_job, slow_route, top


# ----- slow references -----------------------------------------------------------------------------------
def slow_softmax_row(f):
    top = max(f)
    e = [math.exp(v - top) for v in f]
    return [v / sum(e) for v in e]


def planted(n=1500, D=12, seed=0, classes=3):
    """Features 0-3 decide the class (through noisy scores), the others are noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D))
    s = np.stack([X[:, 0] + 0.8 * X[:, 1], 1.2 * X[:, 2], -X[:, 0] + 0.6 * X[:, 3]], 1)[:, :classes]
    s = s + rng.normal(0, 0.5, s.shape)
    y = s.argmax(1) if classes > 2 else (s[:, 0] > s[:, 1]).astype(int)
    return X, y.astype(float)


# ----- the loss pieces -----------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_multinomial_residuals_hessians_and_loss_match_a_slow_reference(seed):
    rng = np.random.default_rng(seed)
    n, K = 60, 4
    F = rng.normal(0, 3, (n, K))
    F[0] = [800.0, -800.0, 0.0, 1.0]  # no overflow
    y = rng.integers(0, K, n).astype(float)
    loss = MultinomialLogLoss(np.arange(K), list("abcd"))
    T = loss.encode(y[:, None])
    R, H = loss.residuals(T, F), loss.hessians(T, F)
    total = 0.0
    for i in range(n):
        p = slow_softmax_row(F[i])
        for k in range(K):
            assert R[i, k] == pytest.approx((1.0 if y[i] == k else 0.0) - p[k], abs=1e-14)
            assert H[i, k] == pytest.approx(p[k] * (1 - p[k]), abs=1e-14)
        top = max(F[i])
        total += top + math.log(sum(math.exp(v - top) for v in F[i])) - F[i, int(y[i])]
    assert loss.loss(T, F) == pytest.approx(total / n, rel=1e-12)
    np.testing.assert_allclose(R.sum(axis=1), 0.0, atol=1e-13)  # softmax residuals sum to 0 per row


def test_binomial_and_squared_losses_match_a_slow_reference():
    rng = np.random.default_rng(3)
    F = rng.normal(0, 4, (50, 1))
    F[0, 0], F[1, 0] = 750.0, -750.0
    y = rng.integers(0, 2, 50).astype(float)
    b = BinomialLogLoss(np.array([0, 1]), ["no", "yes"])
    T = b.encode(y[:, None])
    for i in range(50):
        p = 1 / (1 + math.exp(-F[i, 0])) if F[i, 0] > -700 else 0.0
        assert b.residuals(T, F)[i, 0] == pytest.approx(y[i] - p, abs=1e-14)
        assert b.hessians(T, F)[i, 0] == pytest.approx(p * (1 - p), abs=1e-14)
    ref = np.mean([math.log1p(math.exp(f)) - t * f if f < 700 else f - t * f for f, t in zip(F[:, 0], T[:, 0])])
    assert b.loss(T, F) == pytest.approx(ref, rel=1e-12)
    p = 0.3
    assert b.initial(np.r_[np.ones(3), np.zeros(7)][:, None])[0] == pytest.approx(math.log(p / (1 - p)))
    s = SquaredLoss("y")
    Ty = rng.normal(size=(50, 1))
    np.testing.assert_array_equal(s.residuals(Ty, F), Ty - F)
    assert s.loss(Ty, F) == pytest.approx(np.mean((Ty - F) ** 2))
    assert s.initial(Ty)[0] == pytest.approx(Ty.mean())


def test_initial_model_is_the_centred_log_priors_of_the_present_classes():
    y = np.array([0, 0, 0, 2, 2, 3], float)[:, None]  # class 1 declared but absent
    loss = MultinomialLogLoss(np.array([0, 2, 3]), ["a", "c", "d"])
    F0 = loss.initial(loss.encode(y))
    logp = np.log([3 / 6, 2 / 6, 1 / 6])
    np.testing.assert_allclose(F0, logp - logp.mean())
    np.testing.assert_allclose(loss.predict(F0[None, :])[0], [3 / 6, 2 / 6, 1 / 6])


@pytest.mark.parametrize("rule", ["newton", "mean"])
def test_leaf_values_match_a_slow_reference(rule):
    rng = np.random.default_rng(4)
    n, nodes = 80, 7
    leaf = rng.integers(-1, nodes, n)
    r, h = rng.normal(size=n), rng.uniform(0, 0.25, n)
    w = (rng.random(n) < 0.7).astype(float)
    h[leaf == 5] = 0.0  # a leaf fitted with certainty: value 0, not a division by 0
    loss = MultinomialLogLoss(np.arange(3), list("abc"))
    got = loss.leaf_values(leaf, r, h, w, nodes, rule)
    for j in range(nodes):
        rows = [i for i in range(n) if leaf[i] == j and w[i] > 0]
        num = sum(r[i] for i in rows)
        den = sum(h[i] for i in rows) if rule == "newton" else float(len(rows))
        want = 0.0 if abs(den) < 1e-150 else (2 / 3 if rule == "newton" else 1.0) * num / den
        assert got[j] == pytest.approx(want, rel=1e-12, abs=1e-15), j
    np.testing.assert_allclose(leaf_sums(leaf, r, w, nodes),
                               [sum(r[i] for i in range(n) if leaf[i] == j and w[i] > 0) for j in range(nodes)])


# ----- applying a tree -----------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1])
def test_tree_application_matches_a_slow_reference(seed):
    rng = np.random.default_rng(seed)
    n = 400
    X = rng.normal(size=(n, 4))
    X[:, 2] = rng.integers(0, 5, n)  # nominal
    X[rng.random(X.shape) < 0.1] = np.nan  # missing values on both sides
    y = X[:, 0] + (X[:, 2] == 3) + rng.normal(0, 0.3, n)
    td, _ = tree_data_from_arrays(X, y, "regression", nominal=np.array([False, False, True, False]))
    w = (rng.random(n) < 0.8).astype(float)
    tree = grow(td.codes, td.nominal, td.lower, td.upper, td.Z, w, grow_config(max_depth=5, seed=seed))
    assert (tree.feature >= 0).sum() > 5 and tree.nominal[tree.feature[tree.feature >= 0]].any()
    values = rng.normal(size=tree.n_nodes)
    XR = np.ascontiguousarray(td.codes.T)
    got = tree.predict_values(XR, values)
    leaves = [slow_route(tree, XR[i]) for i in range(n)]
    np.testing.assert_array_equal(got, values[leaves])
    inbag = w > 0
    np.testing.assert_array_equal(tree.leaf_of_row[inbag], np.array(leaves)[inbag])  # routing = growing
    rows = np.flatnonzero(~inbag)
    np.testing.assert_array_equal(tree.predict_values(XR, values, rows), values[np.array(leaves)[rows]])


# ----- example subsampling -----------------------------------------------------------------------------
def test_round_sample_is_without_replacement_of_the_right_size_and_a_function_of_the_keys():
    keys = np.random.default_rng(0).integers(0, 2 ** 63, 1000).astype(np.uint64)
    w = round_sample(5, 3, keys, 0.6)
    assert set(np.unique(w)) == {0.0, 1.0} and w.sum() == 600
    perm = np.random.default_rng(1).permutation(1000)
    np.testing.assert_array_equal(round_sample(5, 3, keys[perm], 0.6), w[perm])  # row order does not matter
    assert not np.array_equal(round_sample(5, 4, keys, 0.6), w)  # another round, another sample
    assert not np.array_equal(round_sample(6, 3, keys, 0.6), w)
    np.testing.assert_array_equal(round_sample(5, 3, keys, 1.0), np.ones(1000))
    # rounds sample every row about equally often
    counts = sum(round_sample(1, m, keys, 0.8) for m in range(200))
    assert abs(counts.mean() - 160) < 1e-9 and counts.std() < 12


# ----- the boosting loop ---------------------------------------------------------------------------------
@pytest.mark.parametrize("classes", [3, 2])
def test_training_log_loss_decreases_over_rounds(classes):
    X, y = planted(classes=classes)
    model, _ = boost_arrays(X, y, "classification", BoostingParams(trees=30, seed=2, shrinkage=0.1))
    loss = model.train_loss
    assert loss.size == 31
    assert np.all(np.diff(loss) < 0), loss
    assert loss[-1] < 0.6 * loss[0]
    assert model.n_trees == 30 * (classes if classes > 2 else 1)


def test_regression_training_error_decreases_and_finds_the_planted_features():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(1000, 10))
    y = 2 * X[:, 4] + np.sin(2 * X[:, 7]) + rng.normal(0, 0.2, 1000)
    model, _ = boost_arrays(X, y, "regression", BoostingParams(trees=40, seed=1))
    assert np.all(np.diff(model.train_loss) < 0)
    for s in ("genie3", "symbolic"):
        assert set(np.argsort(-model.importance(s))[:2]) == {4, 7}, s


def test_planted_relevant_features_rank_first():
    X, y = planted(n=2000, D=30, seed=1)
    model, _ = boost_arrays(X, y, "classification", BoostingParams(seed=3))
    for s in ("genie3", "symbolic"):
        imp = model.importance(s)
        assert set(np.argsort(-imp)[:4]) == {0, 1, 2, 3}, (s, imp)
        assert imp[[0, 1, 2, 3]].min() > 3 * imp[4:].max()


def test_curve_is_the_running_sum_and_ends_at_the_importances():
    X, y = planted(n=500)
    model, _ = boost_arrays(X, y, "classification", BoostingParams(trees=6, seed=0))
    for s in ("genie3", "symbolic"):
        curve = model.curve(s)
        assert curve.shape == (18, 12)
        np.testing.assert_array_equal(curve[-1], model.importance(s))
        assert np.all(np.diff(curve, axis=0) >= 0)
    np.testing.assert_array_equal(model.tree_round, np.repeat(np.arange(6), 3))
    np.testing.assert_array_equal(model.tree_column, np.tile(np.arange(3), 6))


def test_curve_report_of_wide_data_keeps_the_best_features_of_each_score():
    from spark_fr.ensemble.boosting import curve_report

    X, y = planted(n=400, D=12)
    model, _ = boost_arrays(X, y, "classification", BoostingParams(trees=3, seed=0))
    names = [f"x{i}" for i in range(12)]
    rep = curve_report(model, ["symbolic", "genie3"], names, max_features=4)
    best = {int(i) for s in ("symbolic", "genie3") for i in np.argsort(-model.importance(s), kind="stable")[:2]}
    assert rep["curve"]["features"] == [names[i] for i in sorted(best)]
    for s in ("symbolic", "genie3"):
        assert rep["curve"][s][-1] == model.importance(s)[sorted(best)].tolist()
    full = curve_report(model, ["genie3"], names)
    assert full["curve"]["features"] == names and "symbolic" not in full["curve"]
    assert len(full["curve"]["genie3"]) == model.n_trees == 9 and full["train_loss"] == model.train_loss.tolist()


@pytest.mark.parametrize("classes", [3, 2, 0])
def test_the_model_equals_scikit_learns_gradient_boosting(classes):
    """With the same trees (depth 3, all features, no subsampling, >= 5 rows per leaf, the same 10 rounds) the raw
    scores of every training row equal scikit-learn's ``decision_function`` (the initial model, every tree's
    splits on the same partitions, the Newton leaf values, the shrinkage), and Genie3 equals n times the sum of
    scikit-learn's unnormalised impurity importances over its trees. Features with < 255 distinct values, so
    our bins lose nothing. (With 1 row per leaf, two features can split a small node into the same rows; the
    model is then the same but the tie, and its credit, may go to the other feature.)"""
    from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor

    rng = np.random.default_rng(classes + 5)
    n = 300
    X = np.round(rng.uniform(size=(n, 6)), 2)
    z = X[:, 0] + X[:, 1] * X[:, 2]
    common = dict(n_estimators=10, learning_rate=0.1, max_depth=3, min_samples_leaf=5, random_state=0)
    if classes:
        y = np.digitize(z + rng.normal(0, 0.2, n), np.quantile(z, np.linspace(0, 1, classes + 1)[1:-1])).astype(float)
        sk = GradientBoostingClassifier(**common).fit(X, y)
        F_sk, task = sk.decision_function(X).reshape(n, -1), "classification"
    else:
        y = 3 * X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(0, 0.2, n)
        sk = GradientBoostingRegressor(**common).fit(X, y)
        F_sk, task = sk.predict(X).reshape(n, -1), "regression"
    params = BoostingParams(trees=10, max_depth=3, min_samples_leaf=5.0, example_fraction=1.0, shrinkage=0.1)
    model, data = boost_arrays(X, y, task, params)
    np.testing.assert_allclose(model.F, F_sk, rtol=0, atol=1e-10)
    np.testing.assert_allclose(model.decision_function(data.rows_major()), F_sk, rtol=0, atol=1e-10)
    assert model.n_trees == sk.estimators_.size
    sk_genie3 = n * sum(t.tree_.compute_feature_importances(normalize=False) for t in sk.estimators_.ravel())
    np.testing.assert_allclose(model.importance("genie3"), sk_genie3, rtol=1e-9)
    # the same split features, tree by tree
    for (tree, _), sk_tree in zip(model.trees, sk.estimators_.ravel()):
        assert sorted(tree.feature[tree.feature >= 0]) == sorted(sk_tree.tree_.feature[sk_tree.tree_.feature >= 0])


def test_planted_top_features_agree_with_scikit_learn_with_subsampling():
    from sklearn.ensemble import GradientBoostingClassifier

    X, y = planted(n=2000, D=20, seed=4)
    model, _ = boost_arrays(X, y, "classification", BoostingParams(seed=1))
    sk = GradientBoostingClassifier(n_estimators=50, max_depth=4, subsample=0.8, random_state=0).fit(X, y)
    ours = set(np.argsort(-model.importance("genie3"))[:4])
    theirs = set(np.argsort(-sk.feature_importances_)[:4])
    assert ours == theirs == {0, 1, 2, 3}


# ----- parameters ----------------------------------------------------------------------------------------
def test_boosting_parameters_come_from_the_option_table():
    p = BoostingParams()
    assert set(p.to_dict()) == {o.attribute for o in O.for_method("boosting")}
    assert {"shrinkage", "example_fraction", "leaf_values", "trees", "max_depth", "seed"} <= set(p.to_dict())
    assert (p.trees, p.max_depth, p.max_features, p.scores) == (50, 4, "all", ["symbolic", "genie3"])
    assert (p.shrinkage, p.example_fraction, p.leaf_values) == (0.05, 0.8, "newton")
    assert set(BOOSTING_DEFAULTS) <= set(p.unset)
    q = BoostingParams.from_options({"trees": 7, "max_features": 0.5, "shrinkage": 0.2})
    assert (q.trees, q.features_per_node(10), q.shrinkage) == (7, 5, 0.2)
    with pytest.raises(InputError, match="--shrinkage must be in \\(0, 1\\]"):
        BoostingParams(shrinkage=0)
    with pytest.raises(InputError, match="--example-fraction must be in \\(0, 1\\]"):
        BoostingParams(example_fraction=1.5)
    with pytest.raises(InputError, match="--scores rf is not available with --method boosting"):
        BoostingParams(scores=["genie3", "rf"]).check()


# ----- on Spark --------------------------------------------------------------------------------------------
def planted_frame(spark, n=1200, D=10, seed=0):
    X, y = planted(n=n, D=D, seed=seed)
    pdf = pd.DataFrame(X, columns=[f"f{i}" for i in range(D)])
    pdf["colour"] = np.array(["red", "green", "blue"])[np.random.default_rng(seed).integers(0, 3, n)]
    pdf["y"] = np.array(["a", "b", "c"])[y.astype(int)]
    pdf = pd.concat([pdf, pdf.iloc[:30]], ignore_index=True)  # duplicated rows: distinct keys all the same
    return spark.createDataFrame(pdf)


def test_same_ranking_for_1_and_2_partitions(spark):
    df = planted_frame(spark)
    cols = ["feature", "score", "target", "importance", "rank", "importance_std"]
    runs = [spark_fr.rank(df.repartition(p), targets="y", method="boosting", trees=15, seed=4, spark=spark)
            for p in (1, 2)]
    runs.append(spark_fr.rank(df.orderBy("f3").coalesce(2), targets="y", method="boosting", trees=15, seed=4,
                              spark=spark))
    tables = [r.to_pandas()[cols] for r in runs]
    for t in tables[1:]:
        pd.testing.assert_frame_equal(tables[0], t, check_exact=True)
    curves = [r.metadata["boosting"]["curve"] for r in runs]
    assert curves[0] == curves[1] == curves[2]
    assert runs[0].metadata["boosting"]["train_loss"] == runs[1].metadata["boosting"]["train_loss"]
    assert set(tables[0][tables[0]["rank"] <= 4].feature) == {"f0", "f1", "f2", "f3"}
    assert tables[0].importance_std.isna().all()
    other = spark_fr.rank(df, targets="y", method="boosting", trees=15, seed=5, spark=spark).to_pandas()[cols]
    assert not np.array_equal(other.importance.to_numpy(), tables[0].importance.to_numpy())


def test_encoding_on_the_executors_gives_the_same_model_for_1_and_2_partitions(spark):
    """The input encoded by Spark tasks (mapInArrow over the partitions) rather than on the driver."""
    from spark_fr.data.schema import resolve
    from spark_fr.ensemble.boosting import rank_boosting
    from spark_fr.io.readers import read_dataset

    df = planted_frame(spark, n=600, seed=3)
    runs = []
    for frame in (df.repartition(1), df.repartition(2), df.orderBy("f5").coalesce(2)):
        dataset = read_dataset(spark, frame, targets=["y"])
        spec = resolve(dataset, ["y"], "auto", False)
        runs.append(rank_boosting(spark, dataset, spec, BoostingParams(trees=8, seed=2), force_executors=True))
    assert {r.info["encoded_on"] for r in runs} == {"executors"}
    for r in runs[1:]:
        assert r.info["boosting"] == runs[0].info["boosting"]
        for a, b in zip(runs[0].results, r.results):
            assert a.key == b.key
            np.testing.assert_array_equal(a.importance, b.importance)


def test_job_writes_the_curve_into_run_json_and_plots_it(spark, tmp_path, capsys):
    X, y = planted(n=800, D=8, seed=2)
    pdf = pd.DataFrame(X, columns=[f"f{i}" for i in range(8)])
    pdf["y"] = np.array(["a", "b", "c"])[y.astype(int)]
    pdf.to_csv(tmp_path / "d.csv", index=False)
    out, png = tmp_path / "out", tmp_path / "curve.png"
    code, stdout, err = run_job(["--input", tmp_path / "d.csv", "--targets", "y", "--method", "boosting",
                                 "--trees", 12, "--output", out, "--output-format", "parquet", "--plot", png], capsys)
    assert code == 0, err[-3000:]
    run = json.loads((out / "run.json").read_text())
    table = pd.read_parquet(out / "ranking.parquet")  # exact doubles (CSV text rounds the last bit)
    b = run["boosting"]
    assert b["trees"] == 36 and b["rounds"] == 12 and b["trees_per_round"] == 3 and b["columns"] == ["a", "b", "c"]
    assert len(b["train_loss"]) == 13 and b["train_loss"][-1] < b["train_loss"][0]
    curve = b["curve"]
    assert len(curve["tree_round"]) == len(curve["tree_class"]) == 36
    assert curve["features"] == [f"f{i}" for i in range(8)]
    for s in ("symbolic", "genie3"):
        assert len(curve[s]) == 36 and all(len(row) == 8 for row in curve[s])
        final = table[table.score == s].set_index("feature").importance
        np.testing.assert_array_equal(np.array(curve[s][-1]), final[curve["features"]].to_numpy())
    assert set(table.score) == {"symbolic", "genie3"}
    assert run["params"]["method"] == "boosting" and run["params"]["trees_per_round"] == 3
    check_png(png)


def test_breast_cancer_end_to_end_agrees_with_scikit_learn(spark, datasets, tmp_path, capsys):
    from sklearn.ensemble import GradientBoostingClassifier

    path = datasets / "sklearn_breast_cancer/breast_cancer.csv"
    code, _, err = run_job(["--input", path, "--method", "boosting", "--seed", 1, "--output", tmp_path / "bc"], capsys)
    assert code == 0, err[-3000:]
    table = check_contract(tmp_path / "bc", [f"x{i}" for i in range(1, 31)], scores=("symbolic", "genie3"))
    data = pd.read_csv(path, header=None, skiprows=1).to_numpy()  # scikit-learn's layout: a count line first
    sk = GradientBoostingClassifier(n_estimators=50, max_depth=4, subsample=0.8, random_state=0)
    sk.fit(data[:, :30], data[:, 30])
    theirs = {f"x{i + 1}" for i in np.argsort(-sk.feature_importances_)[:5]}
    assert len(set(top(table, "genie3")) & theirs) >= 3, (top(table, "genie3"), theirs)
    assert len(set(top(table, "genie3")) & {"x8", "x21", "x23", "x24", "x28"}) >= 3


def test_scores_rf_with_boosting_is_a_one_line_error(tmp_path, capsys):
    out = tmp_path / "out"
    code, _, err = run_job(["--input", tmp_path / "absent.csv", "--targets", "y", "--method", "boosting",
                            "--scores", "rf", "--output", out], capsys)
    errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert code == 2 and len(errors) == 1 and len(err.strip().splitlines()) == 1, err
    assert "--scores rf is not available with --method boosting" in errors[0]
    assert not out.exists()


def test_boosting_refuses_tasks_without_a_loss(spark):
    df = spark.createDataFrame(pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "y1": [1.0, 2.0, 3.0, 5.0],
                                             "y2": [0.0, 1.0, 0.5, 2.0]}))
    with pytest.raises(InputError, match="--method boosting does not support the task 'mtr'"):
        spark_fr.rank(df, targets="y1,y2", method="boosting", spark=spark)
    with pytest.raises(InputError, match="--semi-supervised is available with"):
        spark_fr.rank(df, targets="y1", method="boosting", semi_supervised=True, spark=spark)


# ----- issue 20: a round that cannot split is refused; a ranking without information says so --------------
@pytest.mark.parametrize("leaf", [2.0, 1.5, 3.0])
def test_the_smallest_example_fraction_that_splits_is_accepted_and_the_one_below_refused(leaf):
    """The check is exact: at the fraction the message suggests every round's trees split (non-zero
    importances); at the largest fraction it refuses, the same boosting grows only single leaves."""
    import re

    from spark_fr.ensemble.boosting import check_round_sample, round_size

    X, y = planted(n=300, D=6, seed=1, classes=2)
    params = BoostingParams(trees=4, example_fraction=0.01, min_samples_leaf=leaf)
    with pytest.raises(InputError, match="--example-fraction 0.01 gives each boosting round 3 of the 300") as err:
        check_round_sample(300, params)
    suggested = float(re.search(r"use --example-fraction ([0-9.]+) or more", str(err.value)).group(1))
    need = 2 * math.ceil(leaf)
    assert round_size(300, suggested) >= need > round_size(300, suggested - 0.001)
    ok = BoostingParams(trees=4, example_fraction=suggested, min_samples_leaf=leaf)
    check_round_sample(300, ok)
    assert boost_arrays(X, y, "classification", ok)[0].importance("genie3").sum() > 0
    below = (need - 0.5) / 300  # one row short of a split
    refused = BoostingParams(trees=4, example_fraction=below, min_samples_leaf=leaf)
    with pytest.raises(InputError, match="--example-fraction"):
        check_round_sample(300, refused)
    model = boost_arrays(X, y, "classification", refused)[0]
    assert model.importance("genie3").sum() == 0 and model.importance("symbolic").sum() == 0


def test_round_check_covers_cross_validation_folds_and_min_samples_leaf():
    from spark_fr.ensemble.boosting import check_round_sample

    check_round_sample(300, BoostingParams(example_fraction=0.014))
    with pytest.raises(InputError, match="of the 200 training rows of a --cv-folds 3 fold"):
        check_round_sample(300, BoostingParams(example_fraction=0.014, cv_folds=3))
    with pytest.raises(InputError, match="fewer than a split needs 302 .--min-samples-leaf 150.5 on each side"):
        check_round_sample(300, BoostingParams(example_fraction=1.0, min_samples_leaf=150.5))
    check_round_sample(300, BoostingParams(example_fraction=1.0, min_samples_leaf=150.0))


def test_a_run_whose_features_are_all_constant_warns_once_and_records_it(spark, caplog):
    pdf = pd.DataFrame({"a": [1.0] * 40, "b": ["x"] * 40, "y": ["p", "q"] * 20})
    with caplog.at_level("WARNING", logger="spark_fr"):
        ranking = spark_fr.rank(spark.createDataFrame(pdf), targets="y", method="boosting", trees=3, seed=1,
                                spark=spark)
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "carries no information" in warnings[0], warnings
    assert "every feature is constant or missing on the 40 rows used" in warnings[0]
    assert ranking.metadata["warnings"] == warnings
    assert ranking.metadata["informative"] == {"genie3": {"__all__": False}, "symbolic": {"__all__": False}}
    planted_run = spark_fr.rank(planted_frame(spark, n=300), targets="y", method="boosting", trees=3, seed=1,
                                spark=spark)
    assert planted_run.metadata["warnings"] == []
    assert planted_run.metadata["informative"] == {"genie3": {"__all__": True}, "symbolic": {"__all__": True}}
