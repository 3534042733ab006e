"""``--cv-folds``: the folds, the ensemble's and boosting's cross-validated performance against slow naive
references, planted and random data, and the option end to end (rank(), the job, run.json, partitions)."""
import json
import re

import numpy as np
import pandas as pd
import pytest

import spark_fr
from spark_fr import options as O
from spark_fr.ensemble.bagging import Bagging
from spark_fr.ensemble.boosting import BoostingData, boost, cross_validate_boosting
from spark_fr.ensemble.local import tree_data_from_arrays
from spark_fr.ensemble.params import BoostingParams, EnsembleParams
from spark_fr.ensemble.trees import TreeData, grow_tree_of
from spark_fr.ensemble.validation import cross_validate_ensemble, fold_of
from spark_fr.errors import InputError
from spark_fr.pct.tree import leaf_prototypes

from tests.conftest import run_job, slow_fractional_route, slow_route

RECORD_KEYS = {"folds", "metric", "mean", "std", "per_fold", "baseline", "baseline_name", "rows", "seconds"}


def random_keys(n, seed=0):
    return np.random.default_rng(seed).integers(0, 2 ** 63, n, dtype=np.int64).astype(np.uint64)


def planted_classes(n=240, D=6, seed=0, classes=3, noise=0.4):
    """Class from features 0 and 1 (noisy), the other features noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D))
    s = np.stack([X[:, 0], X[:, 1], -X[:, 0] - X[:, 1]], 1)[:, :classes] + rng.normal(0, noise, (n, classes))
    return X, s.argmax(1).astype(float)


# ----- slow, obvious references ------------------------------------------------------------------------------
def naive_ensemble_fold(data: TreeData, params, train, test):
    """Mean leaf prototype of the held-out rows over trees grown on a TreeData of the training rows alone."""
    sub = TreeData(np.ascontiguousarray(data.codes[:, train]), data.nominal, data.lower, data.upper, data.Z[train],
                   data.Y[train], data.proto[train], data.row_keys[train], data.task)
    default = data.task.default_prototype()
    protos = []
    for t in range(params.trees):
        w = sub.sampling(params).counts(t, sub.row_keys)  # Bagging of the training rows' count
        tree = grow_tree_of(sub, params, t, w, False)
        leaf = leaf_prototypes(tree, sub.proto, w, default)
        if tree.fractional:  # the leaves a row reaches, mixed in their proportions
            protos.append(np.array([sum(p * leaf[n] for n, p in slow_fractional_route(tree, data.codes[:, i]).items())
                                    for i in test]))
        else:
            protos.append(np.array([leaf[slow_route(tree, data.codes[:, i])] for i in test]))
    return sum(protos) / params.trees


def naive_folds(keys, y, k, seed):
    """Folds by the definition: sort by (class, hash, key), deal round robin (plain Python)."""
    from spark_fr.runtime.rng import Stream, derive_seed, hash_uniform

    u = hash_uniform(derive_seed(seed, 0, Stream.CV), keys)
    cls = [0.0] * len(keys) if y is None else list(y)
    order = sorted(range(len(keys)), key=lambda i: (cls[i], u[i], int(keys[i])))
    out = [0] * len(keys)
    for pos, i in enumerate(order):
        out[i] = pos % k
    return np.array(out)


def slow_rrmse(y, pred, y_train):
    return float(np.sqrt(np.sum((y - pred) ** 2) / np.sum((y - y_train.mean()) ** 2)))


# ----- folds -------------------------------------------------------------------------------------------------
def test_folds_are_stratified_balanced_and_follow_the_definition():
    keys = random_keys(203)
    y = np.random.default_rng(1).choice([0.0, 1.0, 2.0], 203, p=[0.6, 0.3, 0.1])
    folds = fold_of(keys, y, 5, seed=7)
    assert np.array_equal(folds, naive_folds(keys, y, 5, 7))
    sizes = np.bincount(folds, minlength=5)
    assert sizes.max() - sizes.min() <= 1
    for c in range(3):
        counts = np.bincount(folds[y == c], minlength=5)
        assert counts.max() - counts.min() <= 1, (c, counts)
    plain = fold_of(keys, None, 4, seed=7)
    assert np.array_equal(plain, naive_folds(keys, None, 4, 7))
    assert np.ptp(np.bincount(plain, minlength=4)) <= 1


def test_folds_depend_on_the_keys_and_classes_not_on_the_row_order():
    keys = random_keys(150, seed=3)
    y = np.random.default_rng(2).integers(0, 3, 150).astype(float)
    y[::17] = np.nan  # unlabelled rows (semi-supervised) are a stratum of their own
    folds = fold_of(keys, y, 4, seed=1)
    perm = np.random.default_rng(5).permutation(150)
    assert np.array_equal(fold_of(keys[perm], y[perm], 4, seed=1), folds[perm])
    nan_counts = np.bincount(folds[np.isnan(y)], minlength=4)
    assert nan_counts.max() - nan_counts.min() <= 1
    assert not np.array_equal(fold_of(keys, y, 4, seed=2), folds)


def test_too_many_or_too_few_folds_are_clear_errors():
    keys = random_keys(6)
    with pytest.raises(InputError, match="--cv-folds 7 needs at least 7 rows to learn from; there are 6"):
        fold_of(keys, None, 7, seed=0)
    with pytest.raises(InputError, match="at least 2"):
        fold_of(keys, None, 1, seed=0)
    assert sorted(fold_of(keys, None, 6, seed=0)) == list(range(6))  # k = n: leave one out


# ----- the ensemble against a naive reference -----------------------------------------------------------------
@pytest.mark.parametrize("settings", [dict(ensemble="rf"), dict(ensemble="extra_trees", bootstrap=True),
                                      dict(ensemble="bagging", max_samples=60, max_features_per_tree=0.5)],
                         ids=["rf", "extra_trees", "subbagging_patches"])
def test_ensemble_classification_equals_a_naive_fold_loop(settings):
    X, y = planted_classes(n=150, seed=4)
    X[::11, 2] = np.nan
    keys = random_keys(150, seed=4)
    data, _ = tree_data_from_arrays(X, y, "classification", row_keys=keys)
    params = EnsembleParams(trees=4, seed=9, **settings)
    record = cross_validate_ensemble(data, params, 4, seed=9)
    assert RECORD_KEYS <= set(record) and record["metric"] == "accuracy" and record["stratified"]
    folds = naive_folds(keys, y, 4, 9)
    expected, majority = [], []
    for f in range(4):
        train, test = np.flatnonzero(folds != f), np.flatnonzero(folds == f)
        mean = naive_ensemble_fold(data, params, train, test)
        expected.append(float(np.mean(np.argmax(mean, axis=1) == y[test])))
        top = np.argmax(np.bincount(y[train].astype(int)))
        majority.append(float(np.mean(y[test] == top)))
    assert record["per_fold"] == expected
    assert record["baseline_per_fold"] == majority
    assert record["mean"] == pytest.approx(np.mean(expected))
    assert record["std"] == pytest.approx(np.std(expected, ddof=1))
    assert record["rows"] == record["scored_rows"] == 150


@pytest.mark.parametrize("missing", ["learned", "fractional"])
def test_ensemble_regression_rrmse_equals_a_naive_fold_loop(missing):
    """Fractional trees (features with missing values): a held-out row mixes the leaves it reaches."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(140, 5))
    y = 2 * X[:, 0] + X[:, 1] ** 2 + rng.normal(0, 0.3, 140)
    if missing == "fractional":
        X[rng.random(X.shape) < 0.2] = np.nan
    keys = random_keys(140, seed=6)
    data, _ = tree_data_from_arrays(X, y, "regression", row_keys=keys)
    params = EnsembleParams(trees=5, seed=2, missing=missing)
    record = cross_validate_ensemble(data, params, 5, seed=3)
    assert record["metric"] == "rrmse" and not record["greater_is_better"] and not record["stratified"]
    folds = naive_folds(keys, None, 5, 3)
    expected = []
    for f in range(5):
        train, test = np.flatnonzero(folds != f), np.flatnonzero(folds == f)
        pred = naive_ensemble_fold(data, params, train, test)[:, 0]
        expected.append(slow_rrmse(y[test], pred, y[train]))
    np.testing.assert_allclose(record["per_fold"], expected, rtol=1e-12)
    assert record["baseline_per_fold"] == [1.0] * 5 and record["baseline_name"] == "training mean"
    assert record["mean"] < (0.6 if missing == "learned" else 0.8)


def test_mtr_rrmse_is_the_mean_over_targets():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(120, 4))
    Y = np.stack([X[:, 0] + rng.normal(0, 0.2, 120), rng.normal(size=120)], 1)
    keys = random_keys(120, seed=8)
    data, _ = tree_data_from_arrays(X, Y, "mtr", row_keys=keys)
    params = EnsembleParams(trees=4, seed=1)
    record = cross_validate_ensemble(data, params, 3, seed=1)
    folds = naive_folds(keys, None, 3, 1)
    for f in range(3):
        train, test = np.flatnonzero(folds != f), np.flatnonzero(folds == f)
        pred = naive_ensemble_fold(data, params, train, test)
        per_target = [slow_rrmse(Y[test, j], pred[:, j], Y[train, j]) for j in range(2)]
        assert record["per_fold"][f] == pytest.approx(np.mean(per_target), rel=1e-12)
        assert per_target[0] < 0.6 < 0.95 < per_target[1]  # the planted target is predicted, the noise is not


# ----- planted and random data -----------------------------------------------------------------------------
def test_planted_classes_beat_the_majority_and_random_labels_do_not():
    X, y = planted_classes(n=300, seed=1, classes=2, noise=0.3)
    data, _ = tree_data_from_arrays(X, y, "classification", row_keys=random_keys(300, seed=1))
    params = EnsembleParams(trees=20, seed=1)
    good = cross_validate_ensemble(data, params, 5, seed=1)
    assert good["mean"] > 0.85 and good["mean"] > good["baseline"] + 0.3
    noise = np.random.default_rng(11).integers(0, 2, 300).astype(float)
    data, _ = tree_data_from_arrays(X, noise, "classification", row_keys=random_keys(300, seed=1))
    bad = cross_validate_ensemble(data, params, 5, seed=1)
    assert abs(bad["mean"] - bad["baseline"]) < 0.1, bad


def test_random_regression_targets_are_no_better_than_the_training_mean():
    rng = np.random.default_rng(12)
    X = rng.normal(size=(200, 5))
    data, _ = tree_data_from_arrays(X, rng.normal(size=200), "regression", row_keys=random_keys(200, seed=2))
    record = cross_validate_ensemble(data, EnsembleParams(trees=20, seed=1), 5, seed=1)
    assert record["mean"] > 0.95


def test_mlc_micro_f1_beats_the_per_label_majority_on_planted_labels():
    rng = np.random.default_rng(13)
    X = rng.normal(size=(200, 5))
    Y = np.stack([X[:, 0] > 0.5, X[:, 1] > 0.8, X[:, 0] + X[:, 2] > 1.0], 1).astype(float)
    data, _ = tree_data_from_arrays(X, Y, "mlc", row_keys=random_keys(200, seed=3))
    record = cross_validate_ensemble(data, EnsembleParams(trees=10, seed=1), 4, seed=1)
    assert record["metric"] == "micro_f1" and record["baseline_name"] == "per-label majority"
    assert record["mean"] > 0.7 and record["baseline"] == 0.0  # every label rarer than 1/2: the empty set


# ----- boosting ----------------------------------------------------------------------------------------------
def naive_boosting_fold(data: BoostingData, params, train, test):
    """Boost on the training rows, then F = initial + shrinkage * sum of the leaf values, routed slowly."""
    sub = BoostingData(np.ascontiguousarray(data.codes[:, train]), data.nominal, data.lower, data.upper,
                       data.Y[train], data.row_keys[train], data.task)
    model = boost(sub, params)
    F = np.tile(model.initial, (test.size, 1))
    for (tree, values), k in zip(model.trees, model.tree_column):
        for r, i in enumerate(test):
            F[r, k] += params.shrinkage * values[slow_route(tree, data.codes[:, i])]
    return F


def boosting_data(X, y, task, keys):
    td, _ = tree_data_from_arrays(X, y, task, row_keys=keys)
    return BoostingData(td.codes, td.nominal, td.lower, td.upper, td.Y, td.row_keys, td.task)


@pytest.mark.parametrize("classes", [2, 3])
def test_boosting_accuracy_equals_a_naive_reference_and_beats_the_majority(classes):
    X, y = planted_classes(n=240, seed=classes, classes=classes, noise=0.3)
    keys = random_keys(240, seed=classes)
    data = boosting_data(X, y, "classification", keys)
    params = BoostingParams(trees=15, shrinkage=0.2, seed=3)
    record = cross_validate_boosting(data, params, 4, seed=3)
    folds = naive_folds(keys, y, 4, 3)
    expected = []
    for f in range(4):
        train, test = np.flatnonzero(folds != f), np.flatnonzero(folds == f)
        F = naive_boosting_fold(data, params, train, test)
        cls = (F[:, 0] > 0).astype(float) if classes == 2 else np.argmax(F, axis=1).astype(float)
        expected.append(float(np.mean(cls == y[test])))
    np.testing.assert_array_equal(record["per_fold"], expected)
    assert record["metric"] == "accuracy" and record["mean"] > record["baseline"] + 0.25


def test_boosting_regression_rrmse_equals_a_naive_reference():
    rng = np.random.default_rng(14)
    X = rng.normal(size=(160, 4))
    y = X[:, 0] - 2 * X[:, 1] + rng.normal(0, 0.3, 160)
    keys = random_keys(160, seed=14)
    data = boosting_data(X, y, "regression", keys)
    params = BoostingParams(trees=20, shrinkage=0.2, seed=1)
    record = cross_validate_boosting(data, params, 4, seed=5)
    folds = naive_folds(keys, None, 4, 5)
    for f in range(4):
        train, test = np.flatnonzero(folds != f), np.flatnonzero(folds == f)
        F = naive_boosting_fold(data, params, train, test)
        assert record["per_fold"][f] == pytest.approx(slow_rrmse(y[test], F[:, 0], y[train]), rel=1e-12)
    assert record["mean"] < 0.6


# ----- the option ----------------------------------------------------------------------------------------------
def test_the_option_is_in_the_table_the_parameter_objects_and_yaml(tmp_path):
    opt = O.option("cv_folds")
    assert opt.default is None and opt.methods == frozenset({"ensemble", "boosting"}) and opt.param_name == "cvFolds"
    assert EnsembleParams().cv_folds == 0 and BoostingParams(cv_folds=10).cv_folds == 10
    assert opt.kind.parse("5", opt) == 5
    for bad, fragment in [(1, "at least 2"), (-2, "must be 0 (off) or an integer >= 2"), ("3", "not '3'"),
                          (True, "not True")]:
        with pytest.raises(InputError, match=re.escape(fragment)):
            O.check_value(opt, bad)
    cfg = tmp_path / "c.yaml"
    cfg.write_text("cv-folds: 4\n")
    assert O.load_config(str(cfg)) == {"cv_folds": 4}
    cfg.write_text("cv_folds: 1\n")
    with pytest.raises(InputError, match="c.yaml: --cv-folds must be 0 \\(off\\) or at least 2"):
        O.load_config(str(cfg))
    from spark_fr import FeatureRanker

    assert FeatureRanker(cvFolds=3).getOrDefault("cvFolds") == 3
    with pytest.raises(InputError):
        FeatureRanker(cvFolds=1)


def test_job_refuses_one_fold_and_more_folds_than_rows_with_one_line(spark, tmp_path, capsys):
    csv = tmp_path / "d.csv"
    X, y = planted_classes(n=30, seed=0, classes=2)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])]).assign(y=y.astype(int).astype(str))
    frame.to_csv(csv, index=False)
    for folds, fragment in [(1, "--cv-folds must be 0 (off) or at least 2"),
                            (31, "--cv-folds 31 needs at least 31 rows to learn from; there are 30")]:
        out = tmp_path / f"out{folds}"
        code, _, err = run_job(["--input", csv, "--targets", "y", "--trees", 3, "--cv-folds", folds,
                                "--output", out], capsys)
        errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
        assert code == 2 and len(errors) == 1 and fragment in errors[0], err[-2000:]
        if folds == 1:  # refused with the options, before anything runs: the only line
            assert len(err.strip().splitlines()) == 1, err
        assert not out.exists()


# ----- end to end ----------------------------------------------------------------------------------------------
def planted_frame(spark, n=300, seed=0):
    X, y = planted_classes(n=n, seed=seed, classes=3, noise=0.3)
    pdf = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    pdf["y"] = np.array(["a", "b", "c"])[y.astype(int)]
    pdf = pd.concat([pdf, pdf.iloc[:20]], ignore_index=True)  # duplicated rows: distinct keys, all the same
    return spark.createDataFrame(pdf)


def without_seconds(record):
    return {k: v for k, v in record.items() if k != "seconds"}


@pytest.mark.parametrize("method", ["ensemble", "boosting"])
def test_rank_records_the_same_cross_validation_for_1_and_2_partitions(spark, method, monkeypatch):
    df = planted_frame(spark)
    kw = dict(targets="y", method=method, trees=8, seed=5, cv_folds=4, spark=spark)
    runs = [spark_fr.rank(df.repartition(1), **kw), spark_fr.rank(df.orderBy("f3").repartition(2), **kw)]
    records = [r.metadata["cross_validation"] for r in runs]
    assert RECORD_KEYS <= set(records[0]) and records[0]["folds"] == 4 and records[0]["rows"] == 320
    assert records[0]["metric"] == "accuracy" and records[0]["mean"] > records[0]["baseline"] + 0.25
    assert without_seconds(records[0]) == without_seconds(records[1])
    assert runs[0].params["cv_folds"] == 4
    monkeypatch.setenv("SPARK_FR_DRIVER_MAX_SECONDS", "1000")  # the folds in the driver: the same record
    here = spark_fr.rank(df, **kw).metadata["cross_validation"]
    assert without_seconds(here) == without_seconds(records[0])
    off = spark_fr.rank(df, **{**kw, "cv_folds": 0}).metadata
    assert "cross_validation" not in off


def test_job_writes_the_record_into_run_json(spark, tmp_path, capsys):
    csv = tmp_path / "d.csv"
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 4))
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"]).assign(y=3 * X[:, 0] + rng.normal(0, 0.3, 200))
    frame.to_csv(csv, index=False)
    out = tmp_path / "out"
    code, _, err = run_job(["--input", csv, "--targets", "y", "--trees", 10, "--cv-folds", 3, "--output", out],
                           capsys)
    assert code == 0, err
    record = json.loads((out / "run.json").read_text())["cross_validation"]
    assert RECORD_KEYS <= set(record) and record["metric"] == "rrmse" and record["baseline"] == 1.0
    assert record["mean"] < 0.6 and len(record["per_fold"]) == 3


def test_partitioned_semi_supervised_and_unsupervised_runs(spark):
    df = planted_frame(spark, n=200)
    kw = dict(trees=4, seed=1, cv_folds=3, spark=spark)
    part = spark_fr.rank(df, targets="y", ensemble_mode="partitioned", **kw).metadata["cross_validation"]
    assert part["folds"] == 3 and "broadcast mode" in part["skipped"]
    unsup = spark_fr.rank(df.drop("y"), task="unsupervised", **kw).metadata["cross_validation"]
    assert "no target" in unsup["skipped"]
    from pyspark.sql import functions as F

    partial = df.withColumn("y", F.when(F.col("f5") > 0.5, F.lit(None)).otherwise(F.col("y")))
    labelled = partial.filter(F.col("y").isNotNull()).count()
    ssl = spark_fr.rank(partial, targets="y", semi_supervised=True, **kw).metadata["cross_validation"]
    assert ssl["rows"] == 220 and ssl["scored_rows"] == labelled and ssl["metric"] == "accuracy"
