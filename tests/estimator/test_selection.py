"""Selection modes of the fitted model (spark_fr/estimator/selection.py, issue 35 (2)): numTopFeatures,
percentile, threshold (a value, or a random shadow feature), fwe from the per-tree spread; featureImportances;
and a model saved before them (format 2, by the Estimator of e6d3164) still loads and selects as it did."""
import numpy as np
import pandas as pd
import pytest
from scipy.stats import t as student

from spark_fr.errors import InputError
from spark_fr.estimator import FeatureRanker, FeatureRankingModel
from spark_fr.estimator.selection import SHADOW
from spark_fr.estimator.vectors import Slot
from tests.paths import TESTS

NAMES = [f"f{i}" for i in range(10)]
#: importance and its spread over 20 trees, best first: f0..f3 clearly above 0, f4 barely, f5..f9 noise
IMPORTANCE = np.array([0.9, 0.6, 0.4, 0.3, 0.05, 0.02, 0.01, 0.005, 0.0, 0.0])
STD = np.array([0.1, 0.2, 0.2, 0.3, 0.2, 0.1, 0.1, 0.05, 0.0, 0.0])
TREES = 20


def model(std=STD, **params):
    table = pd.DataFrame({"feature": NAMES, "score": "genie3", "target": "__all__", "importance": IMPORTANCE,
                          "rank": np.arange(1, 11, dtype="int32"), "importance_std": std})
    slots = [Slot(n, "features", i) for i, n in enumerate(reversed(NAMES))]  # input order: f9 first
    m = FeatureRankingModel(table, {"params": {"trees": TREES, "method": "ensemble"}}, slots)
    return m._set(**params)


def test_each_selection_mode_selects_as_documented():
    assert model().selectedFeatures == NAMES  # numTopFeatures, 10 by default
    assert model(numTopFeatures=3).selectedFeatures == NAMES[:3]
    assert model(selectionThreshold=2.0).selectedFeatures == NAMES[:2]  # Spark's: the threshold is the count
    assert model(selectionMode="percentile").selectedFeatures == NAMES[:1]  # default 0.1 of 10
    assert model(selectionMode="percentile", selectionThreshold=0.35).selectedFeatures == NAMES[:3]  # floor(3.5)
    assert model(selectionMode="threshold").selectedFeatures == NAMES[:8]  # importance > 0
    assert model(selectionMode="threshold", selectionThreshold=0.3).selectedFeatures == NAMES[:3]  # strictly above
    # fwe: one-sided t test of mean > 0 over the trees, Bonferroni over the 10 features
    p = student.sf(IMPORTANCE[:8] / (STD[:8] / np.sqrt(TREES)), TREES - 1)
    for alpha in (0.05, 0.001, 1e-10):
        expected = [n for n, pj in zip(NAMES, p) if pj < alpha / 10]
        assert model(selectionMode="fwe", selectionThreshold=alpha).selectedFeatures == expected
    assert model(selectionMode="fwe").selectedFeatures == NAMES[:4]  # f4: t = 1.1, not significant
    assert model(selectionMode="fwe", selectionThreshold=1e-8).selectedFeatures == NAMES[:2]  # p(f2) = 1.5e-8
    zero_spread = STD.copy()
    zero_spread[4] = 0.0  # a positive importance with no spread: p = 0
    assert model(zero_spread, selectionMode="fwe").selectedFeatures == NAMES[:5]


def test_feature_importances_follow_the_input_vector():
    m = model(selectionMode="percentile", selectionThreshold=0.2, outputCol="v")
    assert m.featureImportances.toArray().tolist() == IMPORTANCE[::-1].tolist()  # slots: f9 .. f0
    assert m.outputFeatures == ["f1", "f0"]  # input order


def test_selection_mistakes_are_one_line_errors():
    cases = [
        (dict(selectionMode="fwe"), None, "selectionMode 'fwe' tests the spread of score 'genie3' over the trees, "
         "which the ensemble fit does not give (importance_std is null); use selectionMode 'threshold', "
         "'percentile' or 'numTopFeatures'"),
        (dict(selectionMode="percentile", selectionThreshold=1.5), STD,
         "selectionThreshold 1.5 is not a fraction in (0, 1] for selectionMode 'percentile'"),
        (dict(selectionThreshold=2.5), STD,
         "selectionThreshold 2.5 is not a whole number >= 1 (the number of features) for selectionMode "
         "'numTopFeatures'"),
        (dict(selectionMode="fwe", selectionThreshold=1.0), STD,
         "selectionThreshold 1 is not a family-wise error rate in (0, 1) for selectionMode 'fwe'"),
        (dict(selectionMode="percentile", selectionThreshold="shadow"), STD,
         "selectionThreshold 'shadow' is for selectionMode 'threshold', not 'percentile'"),
        (dict(selectionMode="threshold", selectionThreshold="shadow"), STD,
         "selectionThreshold 'shadow': this model was fitted without a shadow feature; fit the FeatureRanker with "
         "selectionMode='threshold', selectionThreshold='shadow'"),
    ]
    for params, std, message in cases:
        with pytest.raises(InputError) as err:
            model(np.full(10, np.nan) if std is None else std, **params).selectedFeatures
        assert str(err.value) == message
    with pytest.raises(InputError, match="^selectionThreshold must be shadow or a number, not 'median'$"):
        FeatureRanker(selectionThreshold="median")


def noisy(spark, n=200):
    """x0 and x1 decide y; n0..n5 are noise."""
    rng = np.random.default_rng(11)
    pdf = pd.DataFrame(rng.uniform(-1, 1, (n, 8)), columns=["x0", "x1"] + [f"n{i}" for i in range(6)])
    pdf["y"] = np.where(pdf.x0 + 0.7 * pdf.x1 > 0, "a", "b")
    return spark.createDataFrame(pdf)


def test_a_shadow_feature_is_ranked_then_taken_out_and_selects_what_beats_it(spark, tmp_path):
    df = noisy(spark)
    kw = dict(labelCol="y", numTrees=12, seed=5, scores=["genie3"], selectionMode="threshold",
              selectionThreshold="shadow")
    m = FeatureRanker(**kw).fit(df)
    table = m.ranking.to_pandas()
    assert SHADOW not in set(table.feature) and sorted(table["rank"]) == list(range(1, 9))
    shadow = m.metadata["shadow"]
    assert shadow["feature"] == SHADOW and 1 <= shadow["rank"]["genie3"] <= 9
    above = table[table.importance > shadow["importance"]["genie3"]].sort_values("rank").feature.tolist()
    assert m.selectedFeatures == above and {"x0", "x1"} <= set(above) and len(above) < 8
    again = FeatureRanker(**kw).fit(df.repartition(3))  # a hash of the rows, not rand(): same shadow
    assert again.metadata["shadow"] == shadow
    m.save(str(tmp_path / "m"))
    back = FeatureRankingModel.load(str(tmp_path / "m"))
    assert back.metadata["shadow"] == shadow and back.selectedFeatures == above
    with pytest.raises(InputError, match="^selectionThreshold 'shadow' is for selectionMode 'threshold', not"):
        FeatureRanker(**{**kw, "selectionMode": "percentile"}).fit(df)


def test_a_model_saved_before_selection_modes_loads_and_selects_as_it_did(spark):
    saved = TESTS / "estimator" / "data" / "model_format2"
    rows = pd.read_csv(TESTS / "estimator" / "data" / "model_format2_rows.csv")
    from pyspark.ml.feature import VectorAssembler

    X = ["x0", "x1", "x2", "x3"]
    df = VectorAssembler(inputCols=X, outputCol="features").transform(spark.createDataFrame(rows))
    m = FeatureRankingModel.load(str(saved))
    assert m.getOrDefault("selectionMode") == "numTopFeatures" and m.selectedFeatures == ["x1", "x3"]
    joint = m.ranking.to_pandas().set_index("feature").importance
    assert m.featureImportances.toArray().tolist() == [joint[x] for x in X]
    out = m.transform(df).select("x1", "x3", "selected").toPandas()
    assert (np.stack(out.selected.map(lambda v: v.toArray())) == out[["x1", "x3"]].to_numpy()).all()
    assert "selectionMode" in m.explainParams()
