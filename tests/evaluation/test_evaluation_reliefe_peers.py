"""The ReliefE paper's quality protocol in the evaluation (spec methods-papers.md 3.10): the named ReliefE rankings,
scikit-rebate's MultiSURF as a peer computed on each split's training rows (checked against skrebate called
directly), the random curve baseline and the curves' own feature counts (top 50 / top 100)."""
import numpy as np
import pytest

from spark_fr.errors import InputError
from spark_fr.evaluation import evaluate
from spark_fr.evaluation import configs as C
from spark_fr.evaluation.data import read_evaluation_data
from spark_fr.evaluation.multisurf import multisurf_importances
from spark_fr.evaluation.splits import cv_splits
from tests.evaluation.test_evaluation_protocol import write_arff


@pytest.fixture
def on_driver(monkeypatch):
    """Small rankings in the driver process (the suite forces Spark tasks otherwise)."""
    monkeypatch.setenv("SPARK_FR_DRIVER_MAX_SECONDS", "30")


def xor_data(tmp_path, seed=0, n=300, D=8, linear=False):
    """An XOR of x0 and x1 (no main effect: Relief's case) among noise; x2 in units of thousands. (No feature with
    few values: skrebate 0.8.4 weighs a categorical feature's mismatch D times in mixed data, which hides the XOR.)"""
    rng = np.random.default_rng(seed)
    X = rng.random((n, D))
    X[:, 2] *= 5000.0
    y = np.where((X[:, 0] + X[:, 1] > 1.0) if linear else (X[:, 0] > 0.5) ^ (X[:, 1] > 0.5), "p", "n")
    flip = rng.random(n) < 0.02
    y[flip] = np.where(y[flip] == "p", "n", "p")
    return write_arff(tmp_path / "xor.arff", X, {"class": y}, nominal_targets=("class",)), X, y


def test_multisurf_ranking_is_skrebates_on_the_training_rows_and_finds_the_xor(tmp_path, spark, on_driver):
    from skrebate import MultiSURF

    path, X, y = xor_data(tmp_path)
    ev = evaluate(str(path), rankings="multisurf", splits=2, spark=spark, similarity=False)
    data = read_evaluation_data(spark, str(path))
    folds, _ = cv_splits(data.keys, 2, 0, data.Y[:, 0])
    raw = np.column_stack([np.asarray(data.table.column(c.column).to_numpy(zero_copy_only=False), np.float64)
                           for c in data.columns[:data.n_features]])  # the ARFF's values, canonical order
    assert raw[:, 2].max() > 1000.0
    for fold in folds:
        got = ev.importances[(ev.importances.split == fold.name) & (ev.importances.ranking == "multisurf")]
        got = got.set_index("feature").importance.reindex(data.feature_names).to_numpy()
        theirs = MultiSURF(n_jobs=1).fit(raw[fold.train], data.Y[fold.train, 0].astype(int)).feature_importances_
        assert np.allclose(got, theirs, rtol=1e-9, atol=1e-12)  # the training range's scaling changes nothing
        assert set(np.argsort(-got)[:2]) == {0, 1}  # the planted XOR pair on top
    assert set(ev.importances.ranking) == {"multisurf"}


def test_multisurf_refuses_too_many_rows_and_other_tasks_in_one_line(tmp_path, spark, on_driver):
    path, X, y = xor_data(tmp_path, n=60)
    with pytest.raises(InputError, match=r"^the multisurf ranking holds an n x n distance matrix: 40 training rows "
                                         r"are more than its limit of 30") as err:
        evaluate(str(path), rankings={"multisurf": {"method": "multisurf", "max_rows": 30}}, splits=3, spark=spark)
    assert "\n" not in str(err.value)
    with pytest.raises(InputError, match="the multisurf ranking takes max_rows, not neighbours"):
        evaluate(str(path), rankings={"multisurf": {"method": "multisurf", "neighbours": 3}}, spark=spark)
    reg = write_arff(tmp_path / "reg.arff", X, {"y": X[:, 0] * 2.0})
    with pytest.raises(InputError, match="MultiSURF ranks features for one class; the task is regression"):
        evaluate(str(reg), rankings="multisurf", splits=2, spark=spark)
    with pytest.raises(InputError, match="at least 2 classes"):
        multisurf_importances(X[:10], np.zeros(10))


def test_reliefe_rankings_run_in_the_papers_protocol_with_a_random_curve_baseline(tmp_path, spark, on_driver):
    assert C.NAMED["reliefe"] == {"method": "reliefe"}
    assert C.NAMED["reliefe-absmean-adaptive"] == {"method": "reliefe", "reliefe_update": "absmean",
                                                   "reliefe_k": "adaptive"}
    assert not {"reliefe", "reliefe-absmean-adaptive", "multisurf"} & set(C.ALL)
    path, X, y = xor_data(tmp_path, seed=1, n=200, linear=True)  # LogisticRegression's curves need a linear class
    # no embedding here (UMAP compiles for minutes); the named configurations keep their own update and k
    ev = evaluate(str(path), rankings="reliefe,reliefe-absmean-adaptive", splits=2, spark=spark,
                  curves=True, curve_learner="sklearn", curve_features=[1, 2, 3, 50], reliefe_embed="none",
                  similarity=False)
    c = ev.curves
    assert set(c.ranking) == {"reliefe", "reliefe-absmean-adaptive", "random"}
    assert sorted(set(c.n_features)) == [1, 2, 3, 8]  # 50 > D left out, D added
    assert set(c.measure) == {"macro_f1"} and set(c.learner) == {"sklearn"}
    areas = ev.table[ev.table.measure == "au_rmacro_f1"].groupby("ranking").value.mean()
    assert set(areas.index) == {"reliefe", "reliefe-absmean-adaptive", "random"}
    top2 = c[c.n_features == 2].groupby("ranking").value.mean()
    for name in ("reliefe", "reliefe-absmean-adaptive"):
        top = ev.importances[(ev.importances.ranking == name) & (ev.importances["rank"] <= 2)]
        assert set(top.feature) == {"x0", "x1"}, name
        assert top2[name] > top2["random"]
    rnd = c[c.ranking == "random"]
    assert rnd.groupby("split").n_features.count().min() == 4
    with pytest.raises(InputError, match="--curve-features takes positive integers"):
        evaluate(str(path), rankings="relief", curves=True, curve_features=[0, 4], spark=spark)
