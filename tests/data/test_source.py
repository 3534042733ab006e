"""spark_fr.data.source: a Spark DataFrame's narrowing collected on the driver gives the batches of its projection
under the internal names, whether Spark projects it (some columns left out) or the driver renames the DataFrame's
own columns (every column kept)."""
import numpy as np
import pandas as pd
import pyarrow as pa

from spark_fr.data.columns import safe_select
from spark_fr.data.schema import ColumnInfo
from spark_fr.data.source import FrameSource


def awkward_frame(spark):
    rng = np.random.default_rng(3)
    pdf = pd.DataFrame({"a.b": rng.normal(size=50), "c d": rng.integers(0, 9, 50), "e`f": ["x", None] * 25,
                        "g": rng.normal(size=50)})
    return spark.createDataFrame(pdf).repartition(3)


def infos(names):
    return [ColumnInfo(n, "nominal" if n == "e`f" else "numeric", None, n) for n in names]


def table_of(batches) -> pa.Table:
    return pa.Table.from_batches(batches).combine_chunks()


def test_a_narrowing_collects_the_batches_of_its_projection(spark):
    df = awkward_frame(spark)
    for names in (["g", "a.b", "e`f", "c d"], ["c d", "a.b"]):  # every column (renamed on the driver), then two
        source, cols = FrameSource(df).narrow(infos(names))
        projected, expected_cols = safe_select(df, infos(names))
        assert cols == expected_cols
        got, want = source.driver_batches(), projected.toArrow().to_batches()
        assert [b.num_rows for b in got] == [b.num_rows for b in want], names
        assert table_of(got).select(sorted(want[0].schema.names)).equals(
            table_of(want).select(sorted(want[0].schema.names))), names
        assert sorted(got[0].schema.names) == sorted(c.column for c in cols)
        assert source.size_estimate() is not None
        # every column kept: no Spark projection was made for the driver (thousands of aliases cost Spark's planner)
        assert (source._df is None) == (len(names) == 4), names
        # Spark's passes read the projection: the same rows
        parts = source.map(spark, lambda batches: iter([sum(b.num_rows for b in batches)])).collect()
        assert sum(parts) == 50


def test_a_wide_frame_is_collected_with_interpreted_projections_and_small_batches_and_the_settings_restored(
        spark, tmp_path):
    """A frame wider than whole-stage code takes is collected with Spark's interpreted projections and Parquet column
    batches of fewer rows (the same batches); the session's settings are back afterwards; a narrow frame and a
    user's own value are left alone."""
    import pyarrow.parquet as pq

    from spark_fr.data.source import FACTORY_MODE, INTERPRETED, PARQUET_BATCH, collection_settings

    before = spark.conf.get(FACTORY_MODE), spark.conf.get(PARQUET_BATCH)
    assert before[0] != INTERPRETED and before[1] == "4096"
    with collection_settings(spark, 101):
        assert (spark.conf.get(FACTORY_MODE), spark.conf.get(PARQUET_BATCH)) == (INTERPRETED, "4096")
    with collection_settings(spark, 5000):
        assert (spark.conf.get(FACTORY_MODE), spark.conf.get(PARQUET_BATCH)) == (INTERPRETED, "128")
    assert (spark.conf.get(FACTORY_MODE), spark.conf.get(PARQUET_BATCH)) == before
    with collection_settings(spark, 100):
        assert (spark.conf.get(FACTORY_MODE), spark.conf.get(PARQUET_BATCH)) == before
    spark.conf.set(FACTORY_MODE, "CODEGEN_ONLY")
    spark.conf.set(PARQUET_BATCH, "1000")
    try:
        with collection_settings(spark, 5000):
            assert (spark.conf.get(FACTORY_MODE), spark.conf.get(PARQUET_BATCH)) == ("CODEGEN_ONLY", "1000")
        assert (spark.conf.get(FACTORY_MODE), spark.conf.get(PARQUET_BATCH)) == ("CODEGEN_ONLY", "1000")
    finally:
        spark.conf.unset(FACTORY_MODE)
        spark.conf.unset(PARQUET_BATCH)
    # a Parquet frame of 1,000 rows read in column batches of 128 rows (the settings of 20,000 columns) and as
    # Spark reads it by default: the same rows, missing values included
    rng = np.random.default_rng(4)
    wide = pd.DataFrame(rng.normal(size=(1000, 30)), columns=[f"x{i}" for i in range(30)])
    wide.iloc[::9, 2] = np.nan
    wide["n"] = pd.array(rng.integers(0, 5, 1000), dtype="Int64")
    wide.loc[::13, "n"] = pd.NA
    pq.write_table(pa.Table.from_pandas(wide, preserve_index=False), tmp_path / "wide.parquet", row_group_size=700)
    frame = spark.read.parquet(str(tmp_path / "wide.parquet")).where("x0 > -3")
    plain = table_of(frame.toArrow().to_batches())
    with collection_settings(spark, 20000):
        assert spark.conf.get(PARQUET_BATCH) == "128"
        small = table_of(frame.toArrow().to_batches())
    assert small.num_rows > 900 and small.equals(plain)
    rng = np.random.default_rng(5)
    pdf = pd.DataFrame(rng.normal(size=(40, 130)), columns=[f"x{i}" for i in range(130)])
    pdf.iloc[::7, 3] = np.nan
    df = spark.createDataFrame(pdf).repartition(2)
    source, cols = FrameSource(df).narrow(infos(list(pdf.columns)))
    got = table_of(source.driver_batches())
    want = table_of(df.toArrow().to_batches())
    alias = {c.name: c.column for c in cols}
    assert got.select([alias[n] for n in pdf.columns]).rename_columns(list(pdf.columns)).equals(want)
    assert (spark.conf.get(FACTORY_MODE), spark.conf.get(PARQUET_BATCH)) == before


def test_a_wide_frames_parquet_batches_hold_about_a_million_values_in_a_power_of_two_of_rows():
    """The batch's rows: Spark's default up to 256 columns, then the largest power of two whose batch holds at most
    2^20 values, never under 128 rows."""
    from spark_fr.data.source import parquet_batch_rows

    assert [parquet_batch_rows(n) for n in (1, 101, 256)] == [4096] * 3
    for n in (257, 1000, 2048, 5000, 8191, 8192, 8193, 20000, 10 ** 6):
        rows = parquet_batch_rows(n)
        assert rows & (rows - 1) == 0 and 128 <= rows <= 4096, (n, rows)
        assert rows == 128 or (rows * n <= 1 << 20 < 2 * rows * n), (n, rows)
    assert (parquet_batch_rows(5000), parquet_batch_rows(1000), parquet_batch_rows(20000)) == (128, 1024, 128)
