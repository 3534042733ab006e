"""The Estimator's stage on a Spark Connect session: transform, save (with overwrite) and load of the model and the
Estimator, and a PipelineModel with VectorAssembler and LogisticRegression, on a client without a JVM.

A Connect client and a classic session cannot share a process (pyspark.ml picks its Connect code by a process-wide
switch), so the stage runs in the suite's Connect worker process (``connect`` in conftest.py: pyspark's local
Connect server, ``remote("local[2]")``). The model is built from a ranking table: fitting under Connect is
tests/runtime/test_connect.py's.
"""


def stage_on_connect(spark, base):
    """Runs in the suite's Connect worker (conftest ``connect``): ``spark`` is its Connect session."""
    import numpy as np, pandas as pd

    assert type(spark).__module__.startswith("pyspark.sql.connect"), type(spark)
    from pyspark.ml import PipelineModel
    from pyspark.ml.classification import LogisticRegression
    from pyspark.ml.feature import VectorAssembler
    from spark_fr.estimator import FeatureRanker, FeatureRankingModel
    from spark_fr.estimator.vectors import Slot

    X = [f"x{i}" for i in range(6)]
    rng = np.random.default_rng(0)
    pdf = pd.DataFrame(rng.uniform(-1, 1, (120, 6)), columns=X)
    pdf["y"] = ((pdf.x1 + pdf.x4) > 0).astype(int)
    df = spark.createDataFrame(pdf)
    est = FeatureRanker(featuresCol="features", labelCol="y", numTopFeatures=2, outputCol="selected", numTrees=5)
    est.write().save(base + "/est")
    est.write().overwrite().save(base + "/est")
    assert FeatureRanker.load(base + "/est").extractParamMap().keys() == est.extractParamMap().keys()

    order = ["x4", "x1", "x0", "x2", "x3", "x5"]
    table = pd.DataFrame({"feature": order, "score": "genie3", "target": "__all__", "importance": np.linspace(1, 0, 6),
                          "rank": np.arange(1, 7, dtype="int32"), "importance_std": np.nan, "run_id": "r",
                          "created_at": pd.Timestamp("2026-01-02T03:04:05.123456", tz="UTC"), "params": "{}"})
    ranker = FeatureRankingModel(table, {"run_id": "r"}, [Slot(x, "features", i) for i, x in enumerate(X)])
    ranker = est._copyValues(ranker._resetUid(est.uid))
    assembler = VectorAssembler(inputCols=X, outputCol="features")
    out = ranker.transform(assembler.transform(df))
    assert out.schema["selected"].metadata["ml_attr"]["attrs"]["numeric"] == [{"idx": 0, "name": "x1"},
                                                                              {"idx": 1, "name": "x4"}]
    rows = out.select("x1", "x4", "selected").toPandas()
    assert (np.stack(rows.selected.map(lambda v: v.toArray())) == rows[["x1", "x4"]].to_numpy()).all()
    ranker.write().save(base + "/model")
    ranker.write().overwrite().save(base + "/model")
    back = FeatureRankingModel.load(base + "/model")
    pd.testing.assert_frame_equal(back.ranking.to_pandas(), table)
    assert back.outputFeatures == ["x1", "x4"] and back.uid == est.uid

    pipe = PipelineModel([assembler, ranker, LogisticRegression(featuresCol="selected", labelCol="y").fit(out)])
    pipe.write().overwrite().save(base + "/pipe")
    loaded = PipelineModel.load(base + "/pipe")
    a, b = (m.transform(df).select("prediction").toPandas() for m in (pipe, loaded))
    pd.testing.assert_frame_equal(a, b)
    return True


def test_the_stage_transforms_saves_and_loads_on_spark_connect(connect, tmp_path):
    assert connect.run(stage_on_connect, "file://" + str(tmp_path)) is True


def indexed_label_fit(spark):
    """Runs in either kind of session: a StringIndexer label ranked by FeatureRanker(labelCol='label'), and a fit on
    null feature vectors. Returns (task, label attributes, ranking table, the fit's error on null vectors)."""
    import numpy as np, pandas as pd
    from pyspark.ml.feature import StringIndexer, VectorAssembler
    from pyspark.sql import functions as F
    from spark_fr.errors import InputError
    from spark_fr.estimator import FeatureRanker

    rng = np.random.default_rng(5)
    pdf = pd.DataFrame(rng.uniform(-1, 1, (200, 4)).round(4), columns=["x0", "x1", "x2", "x3"])
    pdf["species"] = np.select([pdf.x1 < -0.5, pdf.x1 < 0.2], ["setosa", "versicolor"], "virginica")
    df = spark.createDataFrame(pdf)
    df = StringIndexer(inputCol="species", outputCol="label").fit(df).transform(df).drop("species")
    model = FeatureRanker(labelCol="label", numTrees=5, seed=2).fit(df)
    table = model.ranking.to_pandas()[["feature", "score", "target", "importance", "rank"]]
    holes = VectorAssembler(inputCols=["x0", "x1", "x2", "x3"], outputCol="features").transform(df) \
        .withColumn("features", F.when(F.col("x0") < 0.9, F.col("features")))
    try:
        FeatureRanker(featuresCol="features", labelCol="label", numTrees=2).fit(holes)
        error = None
    except InputError as err:
        error = str(err)
    return model.ranking.params["task"], model.metadata["label_attributes"], table, error


def test_a_string_indexer_label_and_null_vectors_on_spark_connect(spark, connect):
    """Schema metadata reaches a Connect client too: the label is classified with its class names, as classic."""
    import pandas as pd

    task_c, attrs_c, table_c, error_c = indexed_label_fit(spark)
    task_r, attrs_r, table_r, error_r = connect.run(indexed_label_fit)
    assert task_r == task_c == "classification"
    assert attrs_r == attrs_c and sorted(attrs_r["label"]["classes"]) == ["setosa", "versicolor", "virginica"]
    pd.testing.assert_frame_equal(table_r, table_c, check_exact=True)
    assert error_r == error_c == ("DataFrame: the vector column 'features' is null in some rows (rows without "
                                  "features): drop them (df.dropna(subset=['features'])) or fill them")
