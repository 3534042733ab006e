"""The task of a FeatureRanker fit (spark_fr/estimator/label.py, issue 35 (2)): labelType, and a label's type
inferred from its Spark type, ML attribute and values when labelType is unset, said in one log line."""
import logging

import numpy as np
import pandas as pd
import pytest

from spark_fr.errors import InputError
from spark_fr.estimator import FeatureRanker
from spark_fr.estimator.label import infer_label_type


def labels(spark):
    """One frame, a column per kind of label (nulls and NaN among the doubles are missing, not values)."""
    from pyspark.ml.feature import StringIndexer

    n = 12
    pdf = pd.DataFrame({
        "d01": [0.0, 1.0] * 6, "d012": [0.0, 1.0, 2.0, None] * 3, "d_nan": [1.0, np.nan, 0.0, 3.0] * 3,
        "d7": [float(i % 8) for i in range(n)], "frac": [0.0, 1.0, 0.25] * 4, "neg": [-1.0, 1.0] * 6,
        "big": [0.0, 100.0] * 6, "i": list(range(n)), "s": ["a", "b"] * 6, "b": [True, False] * 6,
        "empty": [None] * n, "colour": ["red", "blue", "green"] * 4})
    pdf["empty"] = pdf["empty"].astype(float)
    df = spark.createDataFrame(pdf)
    return StringIndexer(inputCol="colour", outputCol="indexed").fit(df).transform(df)


def test_a_label_is_typed_by_its_schema_or_one_aggregate_of_its_values(spark):
    df = labels(spark)
    expected = {
        "d01": ("categorical", "doubles 0.0/1.0 only"),
        "d012": ("categorical", "doubles 0.0/1.0/2.0 only"),
        "d_nan": ("categorical", "doubles 0.0/1.0/3.0 only"),
        "d7": ("categorical", "doubles 0.0/1.0/.../7.0 only (8 values)"),
        "frac": ("continuous", "doubles with fractions (e.g. 0.25)"),
        "neg": ("continuous", "doubles down to -1 (class indices are >= 0)"),
        "big": ("continuous", "doubles up to 100 (class indices of MLlib's classifiers are below 100)"),
        "i": ("categorical", "bigint values (class labels)"),
        "s": ("categorical", "string values"),
        "b": ("categorical", "boolean values"),
        "indexed": ("categorical", "its Spark ML attribute is nominal (class indices)"),
        "empty": None,
    }
    assert {c: infer_label_type(df, c) for c in expected} == expected


def task_lines(caplog) -> list:
    return [r.getMessage() for r in caplog.records if r.name == "spark_fr.estimator.label"]


def planted01(spark, n=160):
    """x1 decides the 0.0/1.0 double label y (what StringIndexer gives and MLlib's classifiers take)."""
    rng = np.random.default_rng(3)
    pdf = pd.DataFrame(rng.uniform(-1, 1, (n, 4)), columns=["x0", "x1", "x2", "x3"])
    pdf["y"] = (pdf.x1 > 0).astype(float)
    return spark.createDataFrame(pdf)


def test_a_double_label_of_class_indices_is_ranked_as_classification_and_said_in_one_line(spark, caplog):
    df = planted01(spark)
    kw = dict(labelCol="y", numTrees=4, seed=1, scores=["genie3"])
    with caplog.at_level(logging.INFO, logger="spark_fr.estimator.label"):
        model = FeatureRanker(**kw).fit(df)
    assert model.ranking.params["task"] == "classification"
    assert task_lines(caplog) == ["labelCol 'y': doubles 0.0/1.0 only -> classification (labelType unset); set "
                                  "labelType='continuous' to rank it as regression"]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="spark_fr.estimator.label"):
        assert FeatureRanker(labelType="continuous", **kw).fit(df).ranking.params["task"] == "regression"
        assert FeatureRanker(task="regression", **kw).fit(df).ranking.params["task"] == "regression"  # task wins
    assert task_lines(caplog) == ["labelCol 'y': labelType='continuous' -> regression"]
    with pytest.raises(InputError) as err:
        FeatureRanker(task="regression", labelType="categorical", **kw).fit(df)
    assert str(err.value) == ("labelType 'categorical' and task 'regression' disagree: task 'regression' takes "
                              "continuous labels; unset labelType or task")
    with pytest.raises(InputError, match="^--labelType must be one of categorical, continuous, not 'nominal'$|"
                                         "^labelType must be one of categorical, continuous, not 'nominal'$"):
        FeatureRanker(labelType="nominal")
