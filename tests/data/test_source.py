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


def test_a_wide_frame_is_collected_with_interpreted_projections_and_the_setting_restored(spark):
    """A frame wider than whole-stage code takes is collected with Spark's interpreted projections (the same
    batches); the session's setting is back afterwards; a narrow frame and a user's own value are left alone."""
    from spark_fr.data.source import FACTORY_MODE, INTERPRETED, interpreted_projections

    before = spark.conf.get(FACTORY_MODE)
    assert before != INTERPRETED
    with interpreted_projections(spark, 101):
        assert spark.conf.get(FACTORY_MODE) == INTERPRETED
    assert spark.conf.get(FACTORY_MODE) == before
    with interpreted_projections(spark, 100):
        assert spark.conf.get(FACTORY_MODE) == before
    spark.conf.set(FACTORY_MODE, "CODEGEN_ONLY")
    try:
        with interpreted_projections(spark, 5000):
            assert spark.conf.get(FACTORY_MODE) == "CODEGEN_ONLY"
        assert spark.conf.get(FACTORY_MODE) == "CODEGEN_ONLY"
    finally:
        spark.conf.unset(FACTORY_MODE)
    rng = np.random.default_rng(5)
    pdf = pd.DataFrame(rng.normal(size=(40, 130)), columns=[f"x{i}" for i in range(130)])
    pdf.iloc[::7, 3] = np.nan
    df = spark.createDataFrame(pdf).repartition(2)
    source, cols = FrameSource(df).narrow(infos(list(pdf.columns)))
    got = table_of(source.driver_batches())
    want = table_of(df.toArrow().to_batches())
    alias = {c.name: c.column for c in cols}
    assert got.select([alias[n] for n in pdf.columns]).rename_columns(list(pdf.columns)).equals(want)
    assert spark.conf.get(FACTORY_MODE) == before
