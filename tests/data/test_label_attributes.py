"""A label's Spark ML attribute decides its type (issue 37, item 3; the rule is spark_fr.data.schema's).

A ``StringIndexer`` output holds class indices with a nominal attribute naming the classes: ``spark_fr.rank``
ranks it as classification, with the class names of the attribute, exactly as the string column it was indexed
from. A binary attribute likewise; a ``--task`` other than classification keeps the numbers; an index the attribute
does not know is a one-line error; a Spark-written Parquet file keeps the attribute. The Estimator's side is in
tests/estimator/test_estimator.py (classic) and tests/estimator/test_estimator_connect.py (Spark Connect).
"""
import numpy as np
import pandas as pd
import pytest
from pyspark.sql import functions as F

import spark_fr
from spark_fr.errors import InputError

COLUMNS = ["feature", "score", "target", "importance", "rank"]
PARAMS = dict(trees=8, seed=3)


def species_frame(spark, n=240, seed=0):
    """x1 decides the species (three classes, unequally frequent), x3 a little; x0 and x2 are noise. The frame
    holds the string column 'species' and its StringIndexer output 'label'."""
    from pyspark.ml.feature import StringIndexer

    rng = np.random.default_rng(seed)
    pdf = pd.DataFrame(rng.uniform(-1, 1, (n, 4)).round(4), columns=["x0", "x1", "x2", "x3"])
    pdf["species"] = np.select([pdf.x1 < -0.5, pdf.x1 + 0.2 * pdf.x3 < 0.2], ["setosa", "versicolor"], "virginica")
    df = spark.createDataFrame(pdf)
    return StringIndexer(inputCol="species", outputCol="label").fit(df).transform(df)


def table(ranking) -> pd.DataFrame:
    return ranking.to_pandas()[COLUMNS].sort_values(["score", "target", "feature"]).reset_index(drop=True)


def test_a_string_indexer_label_ranks_as_the_string_column(spark):
    df = species_frame(spark)
    vals = df.schema["label"].metadata["ml_attr"]["vals"]
    assert sorted(vals) == ["setosa", "versicolor", "virginica"] and vals != sorted(vals)  # frequency order
    indexed = spark_fr.rank(df.drop("species"), targets="label", spark=spark, **PARAMS)
    strings = spark_fr.rank(df.drop("label"), targets="species", spark=spark, **PARAMS)
    assert indexed.params["task"] == "classification"
    assert indexed.metadata["label_attributes"] == {"label": {"type": "nominal", "classes": vals}}
    a, b = table(indexed), table(strings)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert a[(a.score == "genie3") & (a["rank"] == 1)].feature.tolist() == ["x1"]


def test_a_binary_attribute_is_classification_and_its_absence_regression(spark):
    df = species_frame(spark).drop("species", "label").withColumn("y", (F.col("x1") > 0).cast("double"))
    meta = {"ml_attr": {"type": "binary", "name": "y", "vals": ["no", "yes"]}}
    binary = spark_fr.rank(df.withColumn("y", F.col("y").alias("y", metadata=meta)), targets="y", spark=spark,
                           **PARAMS)
    assert binary.params["task"] == "classification"
    assert binary.metadata["label_attributes"] == {"y": {"type": "binary", "classes": ["no", "yes"]}}
    plain = spark_fr.rank(df, targets="y", spark=spark, **PARAMS)
    assert plain.params["task"] == "regression" and "label_attributes" not in plain.metadata


def test_a_task_given_keeps_the_indices_as_numbers(spark):
    df = species_frame(spark).drop("species")
    ranking = spark_fr.rank(df, targets="label", task="regression", spark=spark, **PARAMS)
    assert ranking.params["task"] == "regression" and "label_attributes" not in ranking.metadata


@pytest.mark.parametrize("value, shown", [(3.0, "3.0"), (0.5, "0.5"), (-1.0, "-1.0")])
def test_an_index_the_attribute_does_not_know_is_one_line(spark, value, shown):
    df = species_frame(spark).drop("species")
    meta = df.schema["label"].metadata
    bad = df.withColumn("label", F.when(F.col("x0") > 0.9, F.lit(value)).otherwise(F.col("label"))
                        .alias("label", metadata=meta))
    with pytest.raises(InputError) as err:
        spark_fr.rank(bad, targets="label", spark=spark, **PARAMS)
    assert str(err.value) == (f"DataFrame: column 'label' holds {shown}, which is not a class index of its Spark ML "
                              f"attribute (0 to 2)")


def test_missing_labels_stay_missing(spark):
    """null and NaN in an indexed label are missing targets (semi-supervised: unlabelled rows), not errors."""
    df = species_frame(spark).drop("species")
    meta = df.schema["label"].metadata
    holes = df.withColumn("label", F.when(F.col("x0") > 0.8, F.lit(None)).when(F.col("x0") < -0.8, F.lit(float("nan")))
                          .otherwise(F.col("label")).alias("label", metadata=meta))
    ranking = spark_fr.rank(holes, targets="label", semi_supervised=True, spark=spark, **PARAMS)
    assert ranking.params["task"] == "classification"


def test_several_binary_labels_stay_multi_label_targets(spark):
    """Several 0/1 labels (two-valued StringIndexer outputs) are MLC's labels as before; a single one is a class."""
    from pyspark.ml.feature import StringIndexer

    df = species_frame(spark).drop("label")
    df = df.withColumn("a", F.when(F.col("x1") > 0, "yes").otherwise("no")) \
        .withColumn("b", F.when(F.col("x3") > 0, "yes").otherwise("no"))
    df = StringIndexer(inputCols=["a", "b"], outputCols=["la", "lb"]).fit(df).transform(df).drop("a", "b", "species")
    assert spark_fr.rank(df, targets=["la", "lb"], spark=spark, **PARAMS).params["task"] == "mlc"
    assert spark_fr.rank(df.drop("lb"), targets="la", spark=spark, **PARAMS).params["task"] == "classification"


def test_a_spark_written_parquet_file_keeps_the_attribute(spark, tmp_path):
    """Spark writes the attribute into the file's footer; read by path, the label is a class label too."""
    path = str(tmp_path / "indexed.parquet")
    species_frame(spark).drop("species").coalesce(1).write.parquet(path)
    ranking = spark_fr.rank(path, targets="label", spark=spark, **PARAMS)
    assert ranking.params["task"] == "classification"
    assert set(ranking.metadata["label_attributes"]["label"]["classes"]) == {"setosa", "versicolor", "virginica"}


def test_a_delta_table_read_by_deltalake_keeps_the_label_attribute(spark, tmp_path):
    """The deltalake path read the data files with a schema without the columns' metadata: a StringIndexer label
    stored in a Delta table was ranked as regression there and as classification by Spark's Delta reader."""
    import json

    import pyarrow as pa
    from deltalake import DeltaTable, Field, Schema, write_deltalake

    df = species_frame(spark)
    vals = df.schema["label"].metadata["ml_attr"]["vals"]
    pdf = df.drop("species").toPandas()
    path = str(tmp_path / "labelled")
    attr = json.dumps({"vals": vals, "type": "nominal", "name": "label"})
    DeltaTable.create(path, Schema([Field(c, "double", True) for c in ("x0", "x1", "x2", "x3")]
                                   + [Field("label", "double", True, metadata={"ml_attr": attr})]))
    write_deltalake(path, pa.Table.from_pandas(pdf, preserve_index=False), mode="append")
    from_delta = spark_fr.rank(path, targets="label", spark=spark, **PARAMS)
    assert from_delta.metadata["input_fingerprint"]["reader"].startswith("deltalake")  # the suite's session has no Delta
    assert from_delta.params["task"] == "classification"
    assert from_delta.metadata["label_attributes"] == {"label": {"type": "nominal", "classes": vals}}
    pd.testing.assert_frame_equal(table(from_delta), table(spark_fr.rank(df.drop("species"), targets="label",
                                                                          spark=spark, **PARAMS)), check_exact=True)
