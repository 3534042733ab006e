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
