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


def acceptance(spark, base):
    """Issue 35's acceptance, in either kind of session: VectorAssembler -> FeatureRanker(labelCol of 0/1 doubles,
    selectionMode='percentile') -> LogisticRegression: classification inferred and logged, fit, save, load,
    CrossValidator; explainParams works; featureImportances equals the ranking. Returns what the test compares.

    Decision: the pipeline's small fits run where users' small work runs, on the driver (the driver limit back at
    its default, as ``case_on_driver`` in tests/runtime/test_connect.py does): the acceptance is the pipeline's
    (inference, save, load, CrossValidator), and its five fits a session on Spark tasks cost 10-15 s of CPU each
    run; fits on Spark tasks under both kinds of session are tests/runtime/test_connect.py's
    test_estimator_fit_and_transform_same_bits."""
    import os

    saved = os.environ.pop("SPARK_FR_DRIVER_MAX_SECONDS", None)
    try:
        return _acceptance(spark, base)
    finally:
        if saved is not None:
            os.environ["SPARK_FR_DRIVER_MAX_SECONDS"] = saved


def _acceptance(spark, base):
    import logging

    import numpy as np, pandas as pd
    from pyspark.ml import Pipeline, PipelineModel
    from pyspark.ml.classification import LogisticRegression
    from pyspark.ml.evaluation import BinaryClassificationEvaluator
    from pyspark.ml.feature import VectorAssembler
    from pyspark.ml.tuning import CrossValidator, ParamGridBuilder
    from spark_fr.estimator import FeatureRanker, FeatureRankingModel

    X = [f"x{i}" for i in range(8)]
    rng = np.random.default_rng(2)
    pdf = pd.DataFrame(rng.uniform(-1, 1, (120, 8)).round(6), columns=X)
    pdf["y"] = ((pdf.x3 + pdf.x6) > 0).astype(float)  # 0.0 / 1.0: StringIndexer's and MLlib's form of a class
    df = spark.createDataFrame(pdf)
    ranker = FeatureRanker(featuresCol="features", labelCol="y", selectionMode="percentile", selectionThreshold=0.25,
                           outputCol="selected", numTrees=4, seed=1, scores=["genie3"])
    pipe = Pipeline(stages=[VectorAssembler(inputCols=X, outputCol="features"), ranker,
                            LogisticRegression(featuresCol="selected", labelCol="y", maxIter=10)])
    lines = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())
    logger = logging.getLogger("spark_fr.estimator.label")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        model = pipe.fit(df)
    finally:
        logger.removeHandler(handler)
    fitted = model.stages[1]
    explained = (FeatureRanker().explainParams(), fitted.explainParams(), len(fitted.extractParamMap()))
    joint = fitted.ranking.to_pandas().query("score == 'genie3' and target == '__all__'").set_index("feature")
    importances = fitted.featureImportances.toArray().tolist()
    assert importances == [float(joint.importance[x]) for x in X]

    model.write().overwrite().save(base + "/pipe")
    back = PipelineModel.load(base + "/pipe")
    loaded = back.stages[1]
    assert isinstance(loaded, FeatureRankingModel) and loaded.featureImportances.toArray().tolist() == importances
    assert loaded.getOrDefault("selectionMode") == "percentile" and loaded.selectedFeatures == fitted.selectedFeatures
    a, b = (m.transform(df).select("prediction").toPandas() for m in (model, back))
    pd.testing.assert_frame_equal(a, b)

    grid = ParamGridBuilder().addGrid(ranker.selectionThreshold, [0.25, 0.5]).build()
    cv = CrossValidator(estimator=pipe, estimatorParamMaps=grid, numFolds=2, seed=3,
                        evaluator=BinaryClassificationEvaluator(labelCol="y")).fit(df)
    best = cv.bestModel.stages[1]
    return (lines, fitted.ranking.params["task"], fitted.selectedFeatures, fitted.outputFeatures, importances,
            explained, len(cv.avgMetrics), best.getOrDefault("selectionThreshold"), len(best.outputFeatures))


def check_acceptance(result) -> None:
    lines, task, selected, output, importances, explained, n_metrics, threshold, n_best = result
    assert lines == ["labelCol 'y': doubles 0.0/1.0 only -> classification (labelType unset); set "
                     "labelType='continuous' to rank it as regression"]
    assert task == "classification"
    assert sorted(selected) == ["x3", "x6"] and output == ["x3", "x6"]  # floor(0.25 * 8) = 2, input order
    assert len(importances) == 8 and min(importances[3], importances[6]) > max(
        v for i, v in enumerate(importances) if i not in (3, 6))
    default, fitted, n_params = explained
    assert "reliefe options (unused with method='ensemble'" in default and "selectionMode: " in fitted
    assert n_params >= 39
    assert n_metrics == 2 and threshold in (0.25, 0.5) and n_best == int(threshold * 8)


def test_issue35_acceptance_pipeline_on_a_classic_session(spark, tmp_path):
    check_acceptance(acceptance(spark, "file://" + str(tmp_path)))


def test_issue35_acceptance_pipeline_on_spark_connect(connect, tmp_path):
    check_acceptance(connect.run(acceptance, "file://" + str(tmp_path)))
