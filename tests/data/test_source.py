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
