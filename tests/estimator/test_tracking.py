"""spark_fr.estimator.tracking on Spark Connect: pyspark.ml autologging fails there, so a fit logs its own Params,
metrics and ranking to the caller's active MLflow run and says once, in one line, what it cannot log. (Under
classic autologging: tests/estimator/test_estimator.py::test_mlflow_pyspark_ml_autologging_sees_the_ranking.)
selection.json records the rule that selected (mode, its parameter as applied, the count), on a classic session."""
import json
import logging
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("mlflow")


def fit_in_a_run_on_connect(spark, store: str) -> dict:
    """Runs in the suite's Connect worker: autologging asked for (it fails), then a fit inside a run, twice."""
    import mlflow
    import mlflow.pyspark.ml
    from pyspark.ml.feature import VectorAssembler

    from spark_fr.estimator import FeatureRanker

    rng = np.random.default_rng(0)
    pdf = pd.DataFrame(rng.uniform(-1, 1, (80, 4)), columns=["a", "b", "c", "d"])
    pdf["y"] = (pdf.b > 0).astype(int)
    df = VectorAssembler(inputCols=["a", "b", "c", "d"], outputCol="features").transform(spark.createDataFrame(pdf))
    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"  # in the worker only: the test's file store
    mlflow.set_tracking_uri(store)
    out = {}
    try:
        mlflow.pyspark.ml.autolog(log_models=False, log_datasets=False, silent=True)
    except Exception as err:  # noqa: BLE001 - what MLflow does on Connect is the point
        out["autolog"] = type(err).__name__
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logging.getLogger("spark_fr.estimator.tracking").addHandler(handler)
    try:
        with mlflow.start_run() as run:
            ranker = FeatureRanker(featuresCol="features", labelCol="y", numTrees=3, seed=1, scores=["genie3"])
            model = ranker.fit(df)
            last = ranker.fit(df, {ranker.numTrees: 4})  # a second fit in the same run, as a CrossValidator makes
    finally:
        logging.getLogger("spark_fr.estimator.tracking").removeHandler(handler)
        mlflow.pyspark.ml.autolog(disable=True)
        os.environ.pop("MLFLOW_ALLOW_FILE_STORE")
    client = mlflow.MlflowClient()
    data = client.get_run(run.info.run_id).data
    base = f"spark_fr/{model.uid}"
    out.update(uid=model.uid, run_id=run.info.run_id, params=dict(data.params), metrics=dict(data.metrics),
               artifacts=sorted(a.path for a in client.list_artifacts(run.info.run_id, base)),
               logged=[r.getMessage() for r in records if r.levelno >= logging.WARNING],
               ranking=pd.read_csv(client.download_artifacts(run.info.run_id, f"{base}/ranking.csv")).to_dict("list"),
               last=last.ranking.to_pandas()[["feature", "rank"]].to_dict("list"))
    return out


def test_a_fit_on_connect_logs_its_params_metrics_and_ranking_to_the_active_run(connect, tmp_path):
    out = connect.run(fit_in_a_run_on_connect, "file://" + str(tmp_path / "mlruns"))
    uid, base = out["uid"], f"spark_fr/{out['uid']}"
    assert out.get("autolog"), "pyspark.ml autologging now works on Connect: revisit spark_fr.estimator.tracking"
    assert out["artifacts"] == [f"{base}/ranking.csv", f"{base}/run.json", f"{base}/selection.json"]
    assert out["ranking"]["feature"] == out["last"]["feature"]  # the artifacts: the last fit's
    assert out["params"][f"{uid}.numTrees"] == "3"  # the first fit's; MLflow keeps a Param's first value
    assert out["params"][f"{uid}.labelCol"] == "y"
    assert out["metrics"][f"{uid}.n_rows"] == 80 and out["metrics"][f"{uid}.n_features"] == 4
    assert f"{uid}.timings.total_s" in out["metrics"]
    # one line, once for both fits, saying what is not logged and where the rest went
    assert len(out["logged"]) == 1 and "\n" not in out["logged"][0], out["logged"]
    assert out["logged"][0].startswith("MLflow on Spark Connect: pyspark.ml autologging does not work there")
    assert out["run_id"] in out["logged"][0]


# ----- selection.json: the rule that selected, on a classic session (issue 35 (2)) ----------------------------------
def test_selection_json_records_the_mode_its_parameter_and_the_count(spark, tmp_path, monkeypatch):
    """A classic session's autologging: a fit selecting by a shadow feature records selectionMode 'threshold',
    selectionThreshold 'shadow' with the shadow's importance it was compared with, and the count selected; the
    other modes record their applied parameter (a mode's default when unset)."""
    import mlflow
    import mlflow.pyspark.ml
    from pyspark.ml.feature import VectorAssembler

    from spark_fr.estimator import FeatureRanker
    from spark_fr.estimator.tracking import selection_record

    rng = np.random.default_rng(3)
    pdf = pd.DataFrame(rng.uniform(-1, 1, (120, 6)), columns=[f"x{i}" for i in range(6)])
    pdf["y"] = ((pdf.x1 + pdf.x4) > 0).astype(int)
    df = VectorAssembler(inputCols=list(pdf.columns[:6]), outputCol="features").transform(spark.createDataFrame(pdf))
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    mlflow.set_tracking_uri("file://" + str(tmp_path / "mlruns"))
    mlflow.pyspark.ml.autolog(log_models=False, log_datasets=False, silent=True)
    try:
        ranker = FeatureRanker(featuresCol="features", labelCol="y", numTrees=8, seed=1, scores=["genie3"],
                               selectionMode="threshold", selectionThreshold="shadow")
        model = ranker.fit(df)
        run = mlflow.last_active_run()
    finally:
        mlflow.pyspark.ml.autolog(disable=True)
    logged = mlflow.MlflowClient().download_artifacts(run.info.run_id, f"spark_fr/{model.uid}/selection.json",
                                                      str(tmp_path))
    record = json.loads(Path(logged).read_text())
    shadow = model.metadata["shadow"]["importance"]["genie3"]
    assert record["selectionMode"] == "threshold" and record["selectionThreshold"] == "shadow"
    assert record["shadowImportance"] == pytest.approx(shadow, rel=1e-12)
    assert record["numSelected"] == len(record["selectedFeatures"]) == len(model.selectedFeatures) > 0
    assert record["selectedFeatures"] == model.selectedFeatures and record["selectionScore"] == "genie3"
    assert set(model.selectedFeatures) >= {"x1", "x4"}
    # the other modes, on the same fitted model: the parameter applied (a mode's default when unset) and the count
    rules = {}
    for params in ({}, {"selectionThreshold": 2.0}, {"selectionMode": "percentile"},
                   {"selectionMode": "threshold", "selectionThreshold": 0.01}, {"selectionMode": "fwe"}):
        other = model.copy()
        other.clear(other.selectionThreshold)
        r = selection_record(other._set(**{"selectionMode": "numTopFeatures", **params}))
        assert r["numSelected"] == len(r["selectedFeatures"])
        rules[(r["selectionMode"], r["selectionThreshold"])] = r["numSelected"]
    table = model.ranking.to_pandas()
    joint = table[(table.score == "genie3") & (table.target == "__all__")]
    assert set(rules) == {("numTopFeatures", 10), ("numTopFeatures", 2), ("percentile", 0.1), ("threshold", 0.01),
                          ("fwe", 0.05)}
    assert rules[("numTopFeatures", 10)] == 6 and rules[("numTopFeatures", 2)] == 2  # 6 features ranked
    assert rules[("percentile", 0.1)] == 0  # floor(0.1 x 6), Spark's rule
    assert rules[("threshold", 0.01)] == int((joint.importance > 0.01).sum())
