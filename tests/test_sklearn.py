"""spark_fr.sklearn.FeatureRanker: scikit-learn's estimator checks, the task from y, importances aligned with X's
columns, SelectFromModel-style selection, Pipeline / clone / GridSearchCV / SelectFromModel, and a Spark DataFrame.

Fits rank in the driver (small data, 3-5 trees): no JVM for the pandas / NumPy tests (tests/end_to_end/
test_sklearn_no_jvm.py checks that in a fresh process); the last test ranks a Spark DataFrame in the suite's session.
"""
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris
from sklearn.feature_selection import SelectFromModel
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from spark_fr.sklearn import FeatureRanker, parse_threshold, task_of_target

#: checks that do not apply, and why (none today: every check scikit-learn 1.9 runs on a transformer passes;
#: check_array_api_input skips itself without SCIPY_ARRAY_API)
EXPECTED_FAILED_CHECKS: dict = {}


@pytest.fixture(autouse=True)
def on_the_driver(monkeypatch):
    """Small work in the driver, as users run it (the suite's conftest sends all work to Spark tasks): these fits
    start no JVM (a session started here would not be the suite's ``spark`` fixture's)."""
    monkeypatch.delenv("SPARK_FR_DRIVER_MAX_SECONDS", raising=False)


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True, as_frame=True)
    X = X.copy()
    X["noise"] = np.random.default_rng(0).normal(size=len(X))
    return X, y


@parametrize_with_checks([FeatureRanker(trees=3, random_state=0)],
                         expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS)
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("y,task", [
    (np.array([0, 1, 1, 0]), "classification"),
    (np.array(["a", "b", "c", "a"]), "classification"),
    (np.array([0.5, 1.25, 3.0, 2.0]), "regression"),
    (np.array([[0.5, 1.0], [1.25, 2.0], [3.0, 0.1], [2.0, 0.2]]), "mtr"),
    (np.array([[0, 1], [1, 1], [1, 0], [0, 0]]), "mlc"),
])
def test_the_task_is_the_kind_of_y_as_scikit_learn_names_it(y, task):
    assert task_of_target(y) == task


def test_a_target_spark_fr_does_not_rank_is_refused_in_one_line():
    with pytest.raises(ValueError, match="y is multiclass-multioutput") as info:
        task_of_target(np.array([[0, 2], [1, 1], [2, 0]]))
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("make_y,task,n_targets", [
    (lambda X: (X["x1"] > 0).astype(int).to_numpy(), "classification", 1),
    (lambda X: 2 * X["x1"].to_numpy() + 0.1 * X["x2"].to_numpy(), "regression", 1),
    (lambda X: np.c_[X["x1"], X["x0"] - X["x1"]], "mtr", 2),
    (lambda X: np.c_[X["x1"] > 0, X["x1"] > 0.5].astype(int), "mlc", 2),
    (lambda X: None, "unsupervised", 0),
])
def test_every_kind_of_y_is_ranked_as_its_task(make_y, task, n_targets):
    X = pd.DataFrame(np.random.default_rng(1).normal(size=(80, 4)), columns=[f"x{i}" for i in range(4)])
    ranker = FeatureRanker(trees=4, random_state=0).fit(X, make_y(X))
    assert ranker.task_ == task == ranker.ranking_.params["task"]
    assert len(ranker.ranking_.params["targets"]) == n_targets
    if task != "unsupervised":  # x1 drives every target
        assert ranker.feature_names_in_[np.argmax(ranker.feature_importances_)] == "x1"


def test_importances_are_the_joint_ranking_in_the_order_of_x(iris):
    X, y = iris
    X = X[list(reversed(X.columns))]  # not the order the ranking sorts them in
    ranker = FeatureRanker(trees=5, random_state=0, ranking_score="symbolic").fit(X, y)
    joint = ranker.ranking_.top("symbolic", n=X.shape[1]).set_index("feature")["importance"]
    assert list(ranker.feature_names_in_) == list(X.columns)
    np.testing.assert_array_equal(ranker.feature_importances_, joint.loc[list(X.columns)].to_numpy())
    assert ranker.ranking_.scores == ["symbolic"]  # only the score asked for is computed
    assert ranker.get_feature_names_out()[0] in ("petal length (cm)", "petal width (cm)")


@pytest.mark.parametrize("threshold", ["mean", "median", "1.25*mean", "0.5*median", 1.0])
def test_threshold_selects_as_select_from_model(iris, threshold):
    X, y = iris
    ranker = FeatureRanker(trees=5, random_state=0, threshold=threshold).fit(X, y)
    imp = ranker.feature_importances_
    expected = {"mean": imp.mean(), "median": np.median(imp), "1.25*mean": 1.25 * imp.mean(),
                "0.5*median": 0.5 * np.median(imp), 1.0: 1.0}[threshold]
    np.testing.assert_array_equal(ranker.get_support(), imp >= expected)
    assert ranker.transform(X).shape[1] == int((imp >= expected).sum())


def test_the_default_is_the_mean_and_n_features_to_select_takes_the_best(iris):
    X, y = iris
    fitted = FeatureRanker(trees=5, random_state=0).fit(X, y)
    imp = fitted.feature_importances_
    np.testing.assert_array_equal(fitted.get_support(), imp >= imp.mean())
    best2 = set(np.argsort(-imp)[:2])
    two = clone(fitted).set_params(n_features_to_select=2).fit(X, y)
    assert set(two.get_support(indices=True)) == best2
    half = clone(fitted).set_params(n_features_to_select=0.4).fit(X, y)  # 40 % of 5 features
    assert set(half.get_support(indices=True)) == best2
    capped = clone(fitted).set_params(n_features_to_select=4, threshold="median").fit(X, y)
    np.testing.assert_array_equal(capped.get_support(), imp >= np.median(imp))


@pytest.mark.parametrize("params,fragment", [
    ({"threshold": "1.5*max"}, "threshold must be 'mean', 'median', 'k*mean', 'k*median' or a number"),
    ({"threshold": "x*mean"}, "threshold 'x*mean': 'x' is not a number"),
    ({"n_features_to_select": 0}, "n_features_to_select must be an int >= 1 or a fraction in (0, 1], not 0"),
    ({"n_features_to_select": 1.5}, "n_features_to_select must be an int >= 1 or a fraction in (0, 1], not 1.5"),
    ({"options": {"treez": 3}}, "unknown parameter 'treez' (did you mean 'trees'?)"),
])
def test_bad_parameters_fail_in_one_line(iris, params, fragment):
    X, y = iris
    with pytest.raises(ValueError) as info:
        FeatureRanker(trees=3, **params).fit(X, y)
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_random_state_is_the_seed(iris):
    X, y = iris
    a = FeatureRanker(trees=4, random_state=3).fit(X, y).feature_importances_
    b = FeatureRanker(trees=4, random_state=3).fit(X, y).feature_importances_
    c = FeatureRanker(trees=4, random_state=4).fit(X, y).feature_importances_
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    ranker = FeatureRanker(trees=4, random_state=3).fit(X, y)
    assert ranker.ranking_.params["seed"] == 3


def test_nominal_columns_of_a_pandas_frame_are_features(iris):
    X, y = iris
    X = X.assign(colour=np.where(X["petal length (cm)"] > 2.5, "red", "blue"))
    ranker = FeatureRanker(trees=5, random_state=0, n_features_to_select=3).fit(X, y)
    assert ranker.feature_importances_[list(X.columns).index("colour")] > 0
    out = ranker.set_output(transform="pandas").transform(X)
    assert list(out.columns) == list(ranker.get_feature_names_out())


def test_select_from_model_takes_the_ranker(iris):
    X, y = iris
    selector = SelectFromModel(FeatureRanker(trees=5, random_state=0), threshold="median").fit(X, y)
    imp = selector.estimator_.feature_importances_
    np.testing.assert_array_equal(selector.get_support(), imp >= np.median(imp))


def test_grid_search_over_a_pipeline(iris):
    X, y = iris
    pipe = Pipeline([("rank", FeatureRanker(trees=3, random_state=0)), ("clf", LogisticRegression(max_iter=500))])
    search = GridSearchCV(pipe, {"rank__n_features_to_select": [1, 2]}, cv=2).fit(X, y)
    assert search.best_params_["rank__n_features_to_select"] in (1, 2)
    assert search.best_estimator_.named_steps["rank"].get_feature_names_out().size == \
        search.best_params_["rank__n_features_to_select"]
    assert search.score(X, y) > 0.8


def test_a_spark_dataframe_is_ranked_in_its_session(spark, iris):
    X, y = iris
    frame = X.set_axis([c.split(" ")[0] + "_" + c.split(" ")[1] if " " in c else c for c in X.columns], axis=1)
    df = spark.createDataFrame(frame.assign(species=[str(v) for v in y]))
    ranker = FeatureRanker(trees=3, random_state=0).fit(df, "species")
    local = FeatureRanker(trees=3, random_state=0).fit(frame, y)
    assert list(ranker.feature_names_in_) == list(frame.columns)
    np.testing.assert_allclose(ranker.feature_importances_, local.feature_importances_)
    assert ranker.transform(df).columns == list(ranker.get_feature_names_out())
    with pytest.raises(ValueError, match="with a Spark DataFrame X, y names its target column"):
        FeatureRanker(trees=3).fit(df, np.zeros(len(frame)))


def test_parse_threshold_reads_select_from_model_strings():
    imp = np.array([1.0, 2.0, 6.0])
    assert parse_threshold("mean", imp) == 3.0
    assert parse_threshold("2*median", imp) == 4.0
    assert parse_threshold(" 0.5 * mean", imp) == 1.5


def test_sparse_input_is_ranked_as_its_dense_matrix(monkeypatch):
    import scipy.sparse as sp

    from spark_fr import sklearn as sk

    rng = np.random.default_rng(2)
    dense = np.where(rng.random((60, 5)) < 0.5, 0.0, rng.normal(size=(60, 5)))
    y = (dense[:, 2] > 0).astype(int)
    a = FeatureRanker(trees=3, random_state=0).fit(sp.csr_matrix(dense), y).feature_importances_
    b = FeatureRanker(trees=3, random_state=0).fit(dense, y).feature_importances_
    np.testing.assert_array_equal(a, b)
    monkeypatch.setattr(sk, "DENSE_LIMIT", 1000)
    with pytest.raises(ValueError, match=r"X is a sparse matrix of shape \(60, 5\), 0 MB dense; .* up to 0 MB"):
        FeatureRanker(trees=3).fit(sp.csr_matrix(dense), y)
