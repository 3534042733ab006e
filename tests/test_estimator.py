"""The pyspark.ml Estimator: fit, transform, uid, persistence, and agreement with spark_fr.rank."""
import numpy as np
import pandas as pd
from pyspark.ml import Pipeline, PipelineModel

import spark_fr
from spark_fr.estimator import FeatureRanker, FeatureRankingModel


def data(spark):
    rng = np.random.default_rng(0)
    pdf = pd.DataFrame(rng.uniform(-1, 1, (300, 6)), columns=[f"f{i}" for i in range(6)])
    pdf["y1"] = 3 * pdf.f0 + pdf.f1 + rng.normal(0, 0.1, 300)
    pdf["y2"] = 3 * pdf.f2 + rng.normal(0, 0.1, 300)
    return spark.createDataFrame(pdf)


def test_fit_transform_and_uid(spark):
    df = data(spark)
    est = FeatureRanker(targetCols=["y1", "y2"], numTrees=15, numTopFeatures=3, seed=4)
    model = est.fit(df)
    assert model.uid == est.uid
    assert set(model.selectedFeatures) == {"f0", "f1", "f2"}
    out = model.transform(df)
    assert out.columns == ["y1", "y2"] + model.selectedFeatures
    direct = spark_fr.rank(df, targets=["y1", "y2"], trees=15, seed=4, spark=spark).to_pandas()
    cols = ["feature", "score", "target", "importance", "rank"]
    pd.testing.assert_frame_equal(model.ranking.to_pandas()[cols], direct[cols], check_exact=True)
    assert model.rankingDF.count() == 18


def test_persistence_round_trip(spark, tmp_path):
    df = data(spark)
    pipe = Pipeline(stages=[FeatureRanker(targetCols=["y1", "y2"], numTrees=5, numTopFeatures=2,
                                          scores=["genie3"])])
    model = pipe.fit(df)
    model.write().overwrite().save(str(tmp_path / "pipe"))
    back = PipelineModel.load(str(tmp_path / "pipe"))
    ranker = back.stages[0]
    assert isinstance(ranker, FeatureRankingModel)
    assert ranker.uid == model.stages[0].uid
    assert ranker.selectedFeatures == model.stages[0].selectedFeatures
    assert ranker.getNumTrees() == 5
    est = FeatureRanker(targetCols=["y1"], numTrees=7)
    est.save(str(tmp_path / "est"))
    assert FeatureRanker.load(str(tmp_path / "est")).getNumTrees() == 7


# ----- issue 20: user mistakes are one-line InputErrors, not KeyError / ValueError / AttributeError ----------
def test_an_unsupervised_fit_transforms_to_its_selected_features(spark):
    df = data(spark).drop("y1", "y2")
    model = FeatureRanker(task="unsupervised", numTrees=5, numTopFeatures=3, seed=1).fit(df)
    assert model.getTargetCols() == []
    out = model.transform(df)
    assert out.columns == model.selectedFeatures and len(out.columns) == 3


def test_transform_keeps_the_targets_the_run_resolved(spark):
    """Targets given as a comma string are the run's targets (params), kept by transform."""
    df = data(spark)
    model = FeatureRanker(targetCols="y1,y2", numTrees=5, numTopFeatures=2, seed=1).fit(df)
    assert model.transform(df).columns[:2] == ["y1", "y2"]


def test_estimator_mistakes_are_one_line_input_errors(spark):
    import pytest

    from spark_fr.errors import InputError

    df = data(spark)
    model = FeatureRanker(targetCols=["y1", "y2"], numTrees=5, scores=["genie3"], seed=1).fit(df)
    cases = [(lambda: model.copy({model.selectionScore: "relief"}).selectedFeatures,
              "selectionScore 'relief' was not computed by this fit; its scores: genie3"),
             (lambda: model.transform(df.drop("f0", "f2")), "selected feature 'f"),
             (lambda: model.transform(df.toPandas()), "transform takes a Spark DataFrame, not DataFrame"),
             (lambda: FeatureRanker(targetCols=["y1"]).fit(df.toPandas()), "fit takes a Spark DataFrame"),
             (lambda: FeatureRankingModel().selectedFeatures, "has no ranking: fit a FeatureRanker"),
             (lambda: FeatureRanker(targetCols=["y1"], featuresCol="vec", numTrees=2).fit(df),
              "--features-col 'vec' is not a vector column of the input (vector columns: none)"),
             (lambda: model.ranking.top("rf"), "score 'rf' is not in this ranking; its scores: genie3")]
    for call, message in cases:
        with pytest.raises(InputError) as err:
            call()
        assert message in str(err.value) and "\n" not in str(err.value), str(err.value)
    with pytest.raises(InputError, match="spark must be a SparkSession, not str"):
        spark_fr.rank(df, targets="y1", spark="local[2]")
    with pytest.raises(InputError, match="not DataFrame of shape \\(300, 8\\)$"):
        spark_fr.rank(df.toPandas(), targets="y1", spark=spark)
