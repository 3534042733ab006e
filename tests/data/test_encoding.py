"""Encoding on Spark: bins, codes, canonical row order, sparse input, other input formats."""
import numpy as np
import pyarrow as pa
import pandas as pd
from pyspark.ml.linalg import Vectors, VectorUDT
from pyspark.sql import types as T

import spark_fr
from tests.conftest import check_png
from spark_fr.data.binning import fit_bins
from spark_fr.data.prepare import encode
from spark_fr.data.schema import resolve
from spark_fr.io.readers import read_dataset


def encoded(spark, df, targets, **kw):
    ds = read_dataset(spark, df)
    return encode(ds, resolve(ds, targets), **kw)


def test_few_distinct_values_are_lossless_and_many_use_quantiles(spark):
    rng = np.random.default_rng(0)
    n = 2000
    pdf = pd.DataFrame({"few": rng.integers(0, 40, n) * 0.25, "many": rng.normal(size=n),
                        "cat": rng.choice(["b", "a", "c"], n), "y": rng.normal(size=n)})
    pdf.loc[::17, "few"] = np.nan
    enc = encoded(spark, spark.createDataFrame(pdf), "y")
    few, many, cat = enc.bins
    assert few.lossless and few.n_bins == 40
    assert not many.lossless and 200 <= many.n_bins <= 255
    assert cat.nominal and cat.categories == ["a", "b", "c"]
    # codes decode back: a lossless code is the rank of the value, missing is 255
    order = np.argsort(enc.row_keys)  # any fixed order: compare as multisets
    vals = np.unique(pdf.few.dropna())
    assert sorted(enc.codes[0][enc.codes[0] != 255]) == sorted(np.searchsorted(vals, pdf.few.dropna()))
    assert (enc.codes[0] == 255).sum() == pdf.few.isna().sum()
    # quantile bins hold about the same number of rows each
    counts = np.bincount(enc.codes[1], minlength=many.n_bins)
    assert counts.max() < 3 * n / many.n_bins
    assert order.size == n


def test_quantile_bins_from_a_hash_sample_do_not_depend_on_partitioning(spark):
    rng = np.random.default_rng(1)
    n = 5000
    pdf = pd.DataFrame({"x": rng.exponential(size=n), "y": rng.normal(size=n)})
    df = spark.createDataFrame(pdf)
    a = encoded(spark, df.repartition(1), "y", sample_rows=800)
    assert a.encoded_on == "driver"
    for parts in (1, 7):
        # the same input encoded by Spark tasks instead of on the driver
        b = encoded(spark, df.repartition(parts), "y", sample_rows=800, local_limit=0)
        assert b.encoded_on == "executors"
        np.testing.assert_array_equal(a.bins[0].cuts, b.bins[0].cuts)
        np.testing.assert_array_equal(a.codes, b.codes)
        np.testing.assert_array_equal(a.Y, b.Y)
        np.testing.assert_array_equal(a.row_keys, b.row_keys)
    # the sample really is a sample: cuts differ from the full-data quantiles, but not by much
    full = fit_bins(pdf.x.to_numpy())
    assert not np.array_equal(a.bins[0].cuts, full.cuts)
    assert np.abs(a.bins[0].cuts[:100] - full.cuts[:100]).max() < 0.1


def test_sparse_vector_column_encodes_like_dense_columns(spark):
    rng = np.random.default_rng(2)
    n, D = 300, 6
    X = np.where(rng.random((n, D)) < 0.7, 0.0, rng.integers(1, 5, (n, D)).astype(float))
    y = X[:, 0] * 2 + rng.normal(size=n)
    rows = [(Vectors.sparse(D, {j: X[i, j] for j in range(D) if X[i, j] != 0}) if i % 2 else
             Vectors.dense(X[i]), float(y[i])) for i in range(n)]
    vec_df = spark.createDataFrame(rows, T.StructType([T.StructField("features", VectorUDT()),
                                                       T.StructField("y", T.DoubleType())]))
    dense_df = spark.createDataFrame(pd.DataFrame({**{f"features[{j}]": X[:, j] for j in range(D)}, "y": y}))
    a = encoded(spark, vec_df, "y")
    b = encoded(spark, dense_df, "y")
    c = encoded(spark, vec_df.repartition(3), "y", local_limit=0)
    assert a.feature_names == b.feature_names == c.feature_names
    np.testing.assert_array_equal(a.codes, b.codes)
    np.testing.assert_array_equal(a.codes, c.codes)
    np.testing.assert_array_equal(a.Y, b.Y)
    ra = spark_fr.rank(vec_df, targets="y", trees=10, seed=3, spark=spark).to_pandas()
    rb = spark_fr.rank(dense_df, targets="y", trees=10, seed=3, spark=spark).to_pandas()
    pd.testing.assert_frame_equal(ra[["feature", "score", "importance", "rank"]],
                                  rb[["feature", "score", "importance", "rank"]], check_exact=True)


def test_sparse_arff_stays_sparse_until_encoding(spark, datasets):
    ds = read_dataset(spark, str(datasets / "mlc_medical/medical.arff"),
                      labels_xml=str(datasets / "mlc_medical/medical.xml"))
    source = ds.batch_source()
    # driver side: the 1,449 features travel as one sparse vector column (indices + values), never densified
    batch = source.driver_batches()[0]
    vec = [f for f in batch.schema if pa.types.is_struct(f.type)]
    assert len(vec) == 1
    first = batch.column(vec[0].name)[0].as_py()
    assert first["size"] == 1449 and first["type"] == 0 and len(first["indices"]) < 40
    # Spark side (large files): the same rows as one VectorUDT column
    df = source._frame(spark)
    types = {f.name: type(f.dataType) for f in df.schema.fields}
    assert sum(1 for t in types.values() if t is VectorUDT) == 1
    row = df.select([n for n, t in types.items() if t is VectorUDT][0]).first()[0]
    assert row.numNonzeros() == len(first["indices"]) and row.size == 1449


def test_parquet_and_delta_inputs(spark, tmp_path):
    rng = np.random.default_rng(3)
    pdf = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200)})
    pdf["y"] = pdf.a * 3 + rng.normal(size=200) * 0.1
    pdf.to_parquet(tmp_path / "d.parquet")
    from deltalake import write_deltalake

    write_deltalake(str(tmp_path / "delta"), pdf)
    write_deltalake(str(tmp_path / "delta"), pdf.iloc[:0], mode="overwrite")
    write_deltalake(str(tmp_path / "delta"), pdf, mode="append")  # snapshot = one copy, files = two
    r1 = spark_fr.rank(str(tmp_path / "d.parquet"), targets="y", trees=10, seed=1, spark=spark)
    r2 = spark_fr.rank(str(tmp_path / "delta"), targets="y", trees=10, seed=1, spark=spark)
    assert r2.metadata["n_rows"] == 200
    pd.testing.assert_frame_equal(r1.to_pandas()[["feature", "score", "importance"]],
                                  r2.to_pandas()[["feature", "score", "importance"]], check_exact=True)
    assert r1.top("genie3", 1).feature[0] == "a"


def test_dots_and_spaces_in_column_names(spark):
    rng = np.random.default_rng(4)
    pdf = pd.DataFrame({"a.b": rng.normal(size=150), "c d": rng.normal(size=150)})
    pdf["y`1"] = pdf["a.b"] + rng.normal(size=150) * 0.1
    r = spark_fr.rank(spark.createDataFrame(pdf), targets="y`1", trees=8, spark=spark)
    assert r.top("genie3", 1).feature[0] == "a.b"


def test_ranking_to_spark_and_plot(spark, tmp_path):
    rng = np.random.default_rng(5)
    pdf = pd.DataFrame({"a": rng.normal(size=150), "b": rng.normal(size=150)})
    pdf["y"] = pdf.a + rng.normal(size=150) * 0.1
    r = spark_fr.rank(spark.createDataFrame(pdf), targets="y", trees=8, spark=spark)
    sdf = r.to_spark(spark)
    assert [f.name for f in sdf.schema.fields] == ["feature", "score", "target", "importance", "rank",
                                                    "importance_std", "run_id", "created_at", "params"]
    assert sdf.count() == 6
    fig = r.plot(str(tmp_path / "p.png"), top=2)
    assert len(fig.axes) == 3
    fig.dpi = 110  # the dpi the PNG is saved with
    check_png(tmp_path / "p.png", fig, best=r.top(r.scores[0], 1).feature[0])
