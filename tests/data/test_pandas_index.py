"""A pandas index stored with the data is not a feature (issue 37, item 2; the rule is spark_fr.data.schema's).

pandas (through pyarrow) stores an index that is not a plain RangeIndex as a column, ``__index_level_0__`` when it
has no name, and declares it in the file's ``pandas`` metadata. The planted case: rows ordered by class, then
shuffled (a re-sorted frame), so the stored index predicts the class perfectly while the four features are noise.
Every way such data reaches a ranking must leave the unnamed index out (one log line) and keep a named one: one
Parquet file, a directory of them (read with pyarrow, or through Spark when it has partition directories), the
DataFrame Spark reads from such a file (Spark drops the pandas metadata: the name decides), and a Delta table that
``deltalake.write_deltalake`` made from the frame (its files carry the column, not the metadata).
"""
import logging

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import spark_fr
from spark_fr.errors import InputError
from spark_fr.io import parquet as P

FEATURES = ["x0", "x1", "x2", "x3"]
INDEX = "__index_level_0__"
PARAMS = dict(targets="y", trees=10, seed=1, scores="genie3")


def planted(n=160, seed=0, name=None) -> pd.DataFrame:
    """Rows ordered by class (first half 'a'), four noise features, then shuffled: the index (each row's place
    before the shuffle) tells the class, the features do not."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, len(FEATURES))).round(4), columns=FEATURES)
    df["y"] = np.where(np.arange(n) < n // 2, "a", "b")
    df = df.sample(frac=1.0, random_state=seed)
    df.index.name = name
    return df


def genie3(ranking) -> list:
    t = ranking.to_pandas()
    return list(t[(t.score == "genie3") & (t.target == "__all__")].sort_values("rank").feature)


def index_lines(caplog) -> list:
    return [r.getMessage() for r in caplog.records if "index of a pandas DataFrame" in r.getMessage()]


def test_the_planted_index_is_stored_and_would_win():
    """The case is what the issue describes: the column is in the file, and it alone predicts the class."""
    df = planted()
    table = pa.Table.from_pandas(df)
    assert INDEX in table.schema.names
    order = df.index.to_numpy() < len(df) // 2
    assert (order == (df.y == "a").to_numpy()).all()


def test_pandas_index_of_a_footer():
    """Unnamed, or named like a column (both stored as __index_level_N__): declared; named: a column; a
    RangeIndex is metadata only; no pandas metadata, or metadata of another shape: nothing declared."""
    unnamed = pa.Table.from_pandas(planted()).schema
    named = pa.Table.from_pandas(planted(name="id")).schema
    clash = pa.Table.from_pandas(planted(name="x0")).schema
    ranged = pa.Table.from_pandas(planted().reset_index(drop=True)).schema
    assert P.pandas_index(unnamed) == [INDEX]
    assert P.pandas_index(named) == [] and "id" in named.names
    assert P.pandas_index(clash) == [INDEX]
    assert P.pandas_index(ranged) == [] and INDEX not in ranged.names
    assert P.pandas_index(pa.schema([("a", pa.int64())])) == []
    odd = unnamed.with_metadata({b"pandas": b'{"index_columns": 7}'})
    assert P.pandas_index(odd) == []


@pytest.mark.parametrize("layout", ["file", "directory", "partitioned"])
def test_an_unnamed_index_in_parquet_files_is_left_out_with_one_line(spark, tmp_path, caplog, layout):
    df = planted()
    if layout == "file":
        path = tmp_path / "data.parquet"
        df.to_parquet(path)
    elif layout == "directory":  # read with pyarrow (local files, no partition directories)
        path = tmp_path / "data"
        path.mkdir()
        df.iloc[:80].to_parquet(path / "part-0.parquet")
        df.iloc[80:].to_parquet(path / "part-1.parquet")
    else:  # partition directories: read through Spark
        path = tmp_path / "data"
        for g in (0, 1):
            (path / f"g={g}").mkdir(parents=True)
            df.iloc[g * 80:(g + 1) * 80].to_parquet(path / f"g={g}" / "part.parquet")
    with caplog.at_level(logging.INFO, logger="spark_fr"):
        ranking = spark_fr.rank(str(path), spark=spark, **PARAMS)
    ranked = genie3(ranking)
    assert INDEX not in ranked
    assert set(ranked) == set(FEATURES) | ({"g"} if layout == "partitioned" else set())
    lines = index_lines(caplog)
    assert len(lines) == 1 and f"'{INDEX}'" in lines[0], lines


def test_a_named_index_is_an_ordinary_column(spark, tmp_path):
    path = tmp_path / "named.parquet"
    planted(name="id").to_parquet(path)
    ranked = genie3(spark_fr.rank(str(path), spark=spark, **PARAMS))
    assert ranked[0] == "id" and set(ranked) == {"id", *FEATURES}


def test_a_spark_dataframe_read_from_a_pandas_file(spark, tmp_path, caplog):
    """Spark keeps the column and drops the pandas metadata: its reserved name decides; a named index stays."""
    path, named = tmp_path / "data.parquet", tmp_path / "named.parquet"
    planted().to_parquet(path)
    planted(name="id").to_parquet(named)
    df = spark.read.parquet(str(path))
    assert INDEX in df.columns
    with caplog.at_level(logging.INFO, logger="spark_fr"):
        ranked = genie3(spark_fr.rank(df, spark=spark, **PARAMS))
    assert set(ranked) == set(FEATURES) and len(index_lines(caplog)) == 1
    assert genie3(spark_fr.rank(spark.read.parquet(str(named)), spark=spark, **PARAMS))[0] == "id"


def test_a_delta_table_written_from_pandas(spark, tmp_path):
    deltalake = pytest.importorskip("deltalake")
    path = tmp_path / "table"
    deltalake.write_deltalake(str(path), planted())
    assert INDEX in deltalake.DeltaTable(str(path)).schema().to_arrow().names  # the column, no pandas metadata
    ranked = genie3(spark_fr.rank(str(path), spark=spark, **PARAMS))
    assert set(ranked) == set(FEATURES)


def test_naming_the_unnamed_index_as_a_target_says_what_it_is(spark, tmp_path):
    path = tmp_path / "data.parquet"
    planted().to_parquet(path)
    with pytest.raises(InputError, match=rf"target column '{INDEX}' is the unnamed index of a pandas DataFrame"):
        spark_fr.rank(str(path), spark=spark, **{**PARAMS, "targets": INDEX})
