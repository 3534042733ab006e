"""The pyspark.ml Estimator: fit, transform, uid, persistence, agreement with spark_fr.rank, and pipelines with
VectorAssembler and LogisticRegression (issue 21: vector input, outputCol, labelCol, every method, HMLC, any Hadoop
file system path, MLflow autologging)."""
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
              "featuresCol 'vec' is not a vector column of the DataFrame (vector columns: none)"),
             (lambda: model.ranking.top("rf"), "score 'rf' is not in this ranking; its scores: genie3")]
    for call, message in cases:
        with pytest.raises(InputError) as err:
            call()
        assert message in str(err.value) and "\n" not in str(err.value), str(err.value)
    with pytest.raises(InputError, match="spark must be a SparkSession, not str"):
        spark_fr.rank(df, targets="y1", spark="local[2]")
    # a pandas DataFrame is data rank() reads (issue 35, tests/io/test_frames.py); what it does not read is one line
    with pytest.raises(InputError, match="or a pandas DataFrame, not ndarray of shape \\(300, 8\\)$"):
        spark_fr.rank(df.toPandas().to_numpy(), targets="y1", spark=spark)


# ----- issue 21: the Estimator in Pipelines ------------------------------------------------------------------
import os  # noqa: E402

import pytest  # noqa: E402
from pyspark.ml.classification import LogisticRegression  # noqa: E402
from pyspark.ml.feature import VectorAssembler  # noqa: E402

from spark_fr.errors import InputError  # noqa: E402
from spark_fr.hierarchy import Hierarchy  # noqa: E402

X = [f"x{i}" for i in range(8)]


def planted(spark, n=240, seed=0):
    """x3 and x7 decide the class y; the other six columns are noise."""
    rng = np.random.default_rng(seed)
    pdf = pd.DataFrame(rng.uniform(-1, 1, (n, len(X))), columns=X)
    pdf["y"] = ((pdf.x3 + pdf.x7) > 0).astype(int)
    return spark.createDataFrame(pdf)


def assembled(spark, **kw):
    """The planted frame with its input columns kept and their assembled vector 'features'."""
    return VectorAssembler(inputCols=X, outputCol="features").transform(planted(spark, **kw))


def pipeline(**ranker):
    return Pipeline(stages=[VectorAssembler(inputCols=X, outputCol="features"),
                            FeatureRanker(featuresCol="features", labelCol="y", numTopFeatures=2, outputCol="selected",
                                          **{"numTrees": 10, "seed": 1, **ranker}),
                            LogisticRegression(featuresCol="selected", labelCol="y", maxIter=20)])


@pytest.fixture(scope="module")
def fitted(spark):
    """The acceptance pipeline, fitted once: (frame, PipelineModel)."""
    df = planted(spark)
    return df, pipeline().fit(df)


def test_the_acceptance_pipeline_fits_saves_to_a_file_uri_loads_and_predicts_the_same(spark, fitted, tmp_path):
    df, model = fitted
    ranker = model.stages[1]
    joint = ranker.ranking.to_pandas().query("score == 'genie3' and target == '__all__'")
    assert sorted(joint.feature) == X  # each element once: the frame's x0..x7 columns are not ranked again
    assert set(ranker.selectedFeatures) == {"x3", "x7"} and ranker.outputFeatures == ["x3", "x7"]
    out = model.transform(df)
    assert out.columns[:len(df.columns)] == df.columns and "selected" in out.columns  # transform appends
    attrs = out.schema["selected"].metadata["ml_attr"]
    assert attrs["num_attrs"] == 2 and [a["name"] for a in attrs["attrs"]["numeric"]] == ["x3", "x7"]
    rows = out.select("x3", "x7", "selected").toPandas()
    np.testing.assert_array_equal(np.stack(rows.selected.map(lambda v: v.toArray())), rows[["x3", "x7"]].to_numpy())
    assert model.stages[2].numFeatures == 2

    uri = "file://" + str(tmp_path / "p1")
    model.write().save(uri)
    back = PipelineModel.load(uri)
    loaded = back.stages[1]
    assert isinstance(loaded, FeatureRankingModel) and loaded.uid == ranker.uid
    pd.testing.assert_frame_equal(loaded.ranking.to_pandas(), ranker.ranking.to_pandas(), check_exact=True)
    assert loaded.metadata["run_id"] == ranker.metadata["run_id"] and loaded.outputFeatures == ["x3", "x7"]
    assert loaded.extractParamMap() == {loaded.getParam(p.name): v for p, v in ranker.extractParamMap().items()}
    cols = ["prediction", "probability"]
    pd.testing.assert_frame_equal(back.transform(df).select(cols).toPandas().map(str),
                                  model.transform(df).select(cols).toPandas().map(str))


def test_save_and_load_on_plain_paths_and_uris_never_write_a_relative_folder(spark, fitted, tmp_path, monkeypatch):
    """The first version wrote `save('file:///...')` to `./file:/...` with pandas; Spark's writers resolve the URI."""
    monkeypatch.chdir(tmp_path)
    ranker = fitted[1].stages[1]
    plain, uri = tmp_path / "m", "file://" + str(tmp_path / "u")
    ranker.write().save(str(plain))
    ranker.write().overwrite().save(str(plain))  # overwrite replaces it
    ranker.save(uri)
    with pytest.raises(Exception, match="already exists"):
        ranker.save(uri)
    assert sorted(os.listdir(tmp_path)) == ["m", "u"]
    for path in (str(plain), uri):
        back = FeatureRankingModel.load(path)
        pd.testing.assert_frame_equal(back.ranking.to_pandas(), ranker.ranking.to_pandas(), check_exact=True)
        assert back.selectedFeatures == ranker.selectedFeatures and back.getOutputCol() == "selected"
    est = FeatureRanker(labelCol="y", featuresCol="features", hierarchy=Hierarchy.from_clus_spec("root/a,a/b,root/c"),
                        reliefInfluence=[0.2, 0.4], numTopFeatures=3)
    est.write().overwrite().save(uri)
    back = FeatureRanker.load(uri)
    assert back.uid == est.uid and back.getHierarchy() == est.getHierarchy()
    assert back.getOrDefault("reliefInfluence") == (0.2, 0.4) and back.getNumTopFeatures() == 3


def test_vector_input_and_duplicate_names(spark):
    """With featuresCol only the vector is ranked; without it, a column and a vector element of the same name is an
    error (it would be counted twice), and so is a vector element named like the target."""
    df = assembled(spark)
    with pytest.raises(InputError, match="^the feature name 'x0' is both the column 'x0' and element 0 of the vector "
                                         "column 'features': set featuresCol to rank one vector column alone, or "
                                         "drop one of them$"):
        FeatureRanker(labelCol="y", numTrees=2).fit(df)
    leaky = VectorAssembler(inputCols=["x3", "y"], outputCol="v").transform(planted(spark))
    with pytest.raises(InputError, match="^element 1 of the vector column 'v' is named 'y', like the target"):
        FeatureRanker(labelCol="y", featuresCol="v", numTrees=2).fit(leaky)
    twice = VectorAssembler(inputCols=["x3", "x3"], outputCol="v").transform(planted(spark))
    with pytest.raises(InputError, match="'x3' is both element 0 of the vector column 'v' and element 1"):
        FeatureRanker(labelCol="y", featuresCol="v", numTrees=2).fit(twice)


def test_params_mistakes_are_one_line_input_errors(spark, fitted):
    df, model = fitted
    ranker = model.stages[1]
    frame = assembled(spark)
    cases = [
        (lambda: FeatureRanker(labelCol="y", targetCols=["x1", "x2"]).fit(frame),
         "labelCol 'y' and targetCols x1,x2 disagree"),
        (lambda: FeatureRanker(featuresCol="features").fit(frame), "no target: set labelCol"),
        (lambda: FeatureRanker(labelCol="z", featuresCol="features").fit(frame),
         "target column 'z' is not a column of the DataFrame"),
        (lambda: FeatureRanker(labelCol="y", featuresCol="x1").fit(frame),
         "featuresCol 'x1' is not a vector column of the DataFrame (vector columns: features)"),
        (lambda: FeatureRanker(hierarchy="root/a, a/b, b/a"), "hierarchy: the hierarchy has a cycle through label"),
        (lambda: FeatureRanker(hierarchy=3), "hierarchy must be a spark_fr.hierarchy.Hierarchy or a Clus class"),
        (lambda: FeatureRanker(outputCol=""), "outputCol must be a non-empty string"),
        (lambda: ranker.transform(frame.withColumn("selected", frame.x0)),
         "outputCol 'selected' is already a column of the DataFrame"),
        (lambda: ranker.transform(frame.drop("features")),
         "selected feature 'x3' is element 3 of the vector column 'features', which the DataFrame does not have"),
        (lambda: ranker.transform(VectorAssembler(inputCols=X[::-1], outputCol="features").transform(df)),
         "element 3 of the vector column 'features' is 'x4' here but 'x3' when the ranker was fitted"),
    ]
    for call, message in cases:
        try:
            call()
        except InputError as err:
            assert message in str(err) and "\n" not in str(err), str(err)
        else:
            pytest.fail(f"no InputError: {message}")
    legacy = ranker.copy()
    legacy.clear(legacy.outputCol)
    with pytest.raises(InputError, match="^selected feature 'x[37]' is element [37] of the vector column 'features': "
                                         "set outputCol to get the selected features as a vector$"):
        legacy.transform(frame)


def test_string_features_are_ranked_but_cannot_go_in_a_vector(spark):
    pdf = planted(spark).toPandas()
    pdf["colour"] = np.where(pdf.x3 + pdf.x7 > 0, "red", "blue")
    df = spark.createDataFrame(pdf)
    model = FeatureRanker(labelCol="y", numTopFeatures=1, outputCol="v", numTrees=5, seed=2,
                          scores=["genie3"]).fit(df)
    assert model.selectedFeatures == ["colour"]
    with pytest.raises(InputError, match="^selected feature 'colour' is a string column; a vector holds numbers: index "
                                         "it first"):
        model.transform(df)
    model.setNumTopFeatures(3)
    assert model.outputFeatures == [f for f in df.columns if f in model.selectedFeatures]  # input order
    model.setOutputCol("w").setNumTopFeatures(1).setSelectionScore("genie3")
    legacy = model.copy()
    legacy.clear(legacy.outputCol)
    assert legacy.transform(df).columns == ["y", "colour"]


@pytest.mark.parametrize("method, params, expected", [
    ("relief", {"reliefNeighbours": 5, "reliefIterations": 60}, {"neighbours": 5, "iterations": 60}),
    ("boosting", {"numTrees": 8, "shrinkage": 0.3, "exampleFraction": 1.0, "boostingLeaf": "mean"},
     {"trees": 8, "shrinkage": 0.3, "example_fraction": 1.0, "leaf_values": "mean"}),
])
def test_every_method_fits_in_a_pipeline_with_its_options(spark, method, params, expected):
    df = planted(spark)
    model = pipeline(method=method, **params).fit(df)
    ranker = model.stages[1]
    run = ranker.metadata["params"]
    assert run["method"] == method and {k: run[k] for k in expected} == expected
    assert set(ranker.selectedFeatures) == {"x3", "x7"}
    assert ranker.selection_score() == ("relief" if method == "relief" else "genie3")
    assert model.transform(df).select("prediction").count() == df.count()


def test_hmlc_through_the_hierarchy_param(spark):
    """x0 decides the branch A / B, x1 the label below A, x2 the one below B; a Hierarchy object and its Clus
    specification give the same ranking."""
    rng = np.random.default_rng(5)
    pdf = pd.DataFrame(rng.random((300, 5)), columns=[f"x{i}" for i in range(5)])
    pdf["labels"] = np.where(pdf.x0 > 0.5, np.where(pdf.x1 > 0.5, "A/a1", "A/a2"), np.where(pdf.x2 > 0.5, "B/b1", "B/b2"))
    df = VectorAssembler(inputCols=[f"x{i}" for i in range(5)], outputCol="features").transform(spark.createDataFrame(pdf))
    spec = "A,A/a1,A/a2,B,B/b1,B/b2"
    kw = dict(labelCol="labels", featuresCol="features", numTopFeatures=3, outputCol="top", numTrees=10, seed=3,
              scores=["genie3"])
    model = FeatureRanker(hierarchy=spec, **kw).fit(df)
    assert model.metadata["params"]["task"] == "hmlc"
    assert set(model.selectedFeatures) == {"x0", "x1", "x2"} and model.selectedFeatures[0] == "x0"
    other = FeatureRanker(hierarchy=Hierarchy.from_clus_spec(spec), **kw).fit(df)
    cols = ["feature", "score", "target", "importance", "rank"]
    pd.testing.assert_frame_equal(other.ranking.to_pandas()[cols], model.ranking.to_pandas()[cols])
    assert model.transform(df).columns[-1] == "top"


def test_mlflow_pyspark_ml_autologging_sees_the_ranking(spark, tmp_path, monkeypatch):
    import mlflow
    import mlflow.pyspark.ml

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 keeps the file store but asks for the opt-in
    mlflow.set_tracking_uri("file://" + str(tmp_path / "mlruns"))
    mlflow.pyspark.ml.autolog(log_models=False, log_datasets=False, silent=True)
    try:
        df = planted(spark, n=120)
        model = pipeline(scores=["genie3"]).fit(df)
        run = mlflow.last_active_run()
    finally:
        mlflow.pyspark.ml.autolog(disable=True)
    ranker = model.stages[1]
    client = mlflow.MlflowClient()
    base = f"spark_fr/{ranker.uid}"
    assert sorted(a.path for a in client.list_artifacts(run.info.run_id, base)) == [
        f"{base}/ranking.csv", f"{base}/run.json", f"{base}/selection.json"]
    logged = pd.read_csv(client.download_artifacts(run.info.run_id, f"{base}/ranking.csv", str(tmp_path)))
    mine = ranker.ranking.to_pandas()
    cols = ["feature", "score", "target", "rank"]
    pd.testing.assert_frame_equal(logged[cols], mine[cols], check_dtype=False)
    np.testing.assert_allclose(logged.importance, mine.importance, rtol=1e-15)
    params = client.get_run(run.info.run_id).data.params
    assert any(k.endswith("numTopFeatures") and v == "2" for k, v in params.items()), params
    # no autologging, no MLflow calls: a later fit logs nothing
    before = len(client.search_runs([run.info.experiment_id]))
    FeatureRanker(labelCol="y", numTrees=2, scores=["genie3"]).fit(df)
    assert len(client.search_runs([run.info.experiment_id])) == before


def ranking_table(order):
    """A joint genie3 ranking of the features ``order``, best first (a fitted model's table, without a fit)."""
    n = len(order)
    return pd.DataFrame({"feature": order, "score": "genie3", "target": "__all__", "importance": np.linspace(1, 0, n),
                         "rank": np.arange(1, n + 1, dtype="int32"), "importance_std": np.nan, "run_id": "r",
                         "created_at": pd.Timestamp("2026-01-02T03:04:05.123456", tz="UTC"), "params": "{}"}
                        ).astype({"created_at": "datetime64[us, UTC]"})  # as spark_fr.rank gives it


def test_a_model_saved_by_the_first_version_loads_and_keeps_its_form(spark, tmp_path):
    """Format 1: DefaultParamsWriter metadata and a pandas-written ranking/part-0.parquet, no feature slots."""
    from pyspark.ml.util import DefaultParamsWriter

    df = planted(spark, n=20)
    old = FeatureRankingModel(ranking_table(["x7", "x3", "x0"]), {"params": {"targets": ["y"]}})
    old._set(numTopFeatures=2)
    DefaultParamsWriter.saveMetadata(old, str(tmp_path / "v1"), spark, extraMetadata={"run": old.metadata})
    (tmp_path / "v1" / "ranking").mkdir()
    old._table.to_parquet(tmp_path / "v1" / "ranking" / "part-0.parquet", index=False)
    back = FeatureRankingModel.load(str(tmp_path / "v1"))
    assert back._slots is None and back.selectedFeatures == ["x7", "x3"]
    pd.testing.assert_frame_equal(back.ranking.to_pandas(), old.ranking.to_pandas(), check_exact=True)
    assert back.transform(df).columns == ["y", "x7", "x3"]
    back.setOutputCol("v")
    assert back.transform(df).columns[-1] == "v" and back.outputFeatures == ["x7", "x3"]
    back.save(str(tmp_path / "v2"))
    again = FeatureRankingModel.load(str(tmp_path / "v2"))
    assert again._slots is None and again.transform(df).schema["v"].metadata == back.transform(df).schema["v"].metadata
    pd.testing.assert_frame_equal(again.ranking.to_pandas(), old.ranking.to_pandas(), check_exact=True)


# ----- issue 37: a label typed by its ML attribute; null feature vectors -------------------------------------
from tests.data.test_label_attributes import species_frame  # noqa: E402

SPECIES_X = ["x0", "x1", "x2", "x3"]


def test_a_string_indexer_label_is_a_class_label_named_by_its_attribute(spark):
    """StringIndexer -> VectorAssembler -> FeatureRanker(labelCol='label'): classification with the species names,
    the same ranking as labelCol='species' (the string column), the StringIndexer's class order recorded."""
    from pyspark.ml.feature import StringIndexer

    df = species_frame(spark).drop("label")
    ranker = dict(featuresCol="features", numTrees=8, seed=3, numTopFeatures=1, outputCol="selected")
    stages = [StringIndexer(inputCol="species", outputCol="label"), VectorAssembler(inputCols=SPECIES_X,
                                                                                     outputCol="features")]
    model = Pipeline(stages=stages + [FeatureRanker(labelCol="label", **ranker)]).fit(df)
    indexed = model.stages[-1]
    vals = model.stages[0].labels
    assert indexed.ranking.params["task"] == "classification"
    assert indexed.metadata["label_attributes"] == {"label": {"type": "nominal", "classes": list(vals)}}
    assert indexed.selectedFeatures == ["x1"]
    strings = FeatureRanker(labelCol="species", **ranker).fit(model.stages[1].transform(df))
    cols = ["feature", "score", "target", "importance", "rank"]
    pd.testing.assert_frame_equal(indexed.ranking.to_pandas()[cols], strings.ranking.to_pandas()[cols],
                                  check_exact=True)


def test_null_feature_vectors_are_a_one_line_error_and_transform_gives_nan(spark):
    from pyspark.sql import functions as F

    df = assembled(spark)
    holes = df.withColumn("features", F.when(F.col("x0") < 0.9, F.col("features"))
                          .alias("features", metadata=df.schema["features"].metadata))
    for frame in (holes, holes.withColumn("features", F.when(F.col("x0") < 0.9, F.col("features")))):  # no metadata
        with pytest.raises(InputError) as err:
            FeatureRanker(featuresCol="features", labelCol="y", numTrees=2).fit(frame)
        assert str(err.value) == ("DataFrame: the vector column 'features' is null in some rows (rows without "
                                  "features): drop them (df.dropna(subset=['features'])) or fill them")
    ranker = FeatureRanker(featuresCol="features", labelCol="y", numTrees=5, seed=1, numTopFeatures=2,
                           outputCol="selected").fit(df)
    out = ranker.transform(holes).select("x0", "selected").toPandas()
    missing = np.stack(out.selected.map(lambda v: v.toArray()))[out.x0 >= 0.9]
    assert len(missing) > 0 and np.isnan(missing).all()


def test_saving_a_model_to_a_scheme_nobody_serves_is_one_line_and_writes_nothing(spark, fitted, tmp_path,
                                                                                 monkeypatch):
    """`dbfs:/models/m` on a machine without DBFS: spark_fr's one-line error, no folder named 'dbfs:' (issue 37)."""
    from spark_fr.errors import InputError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=r"^model path dbfs:/models/m: no file system serves 'dbfs:' here"):
        fitted[1].stages[1].write().save("dbfs:/models/m")
    assert os.listdir(tmp_path) == []
