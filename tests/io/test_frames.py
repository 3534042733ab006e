"""spark_fr.io.frames: a pandas DataFrame read on the driver (kinds of columns, names, one-line errors), and ranked
by spark_fr.rank exactly as the same rows in a Spark DataFrame."""
import numpy as np
import pandas as pd
import pytest

from spark_fr.errors import InputError
from spark_fr.io.frames import ArrowSource, read_frame


def test_column_kinds():
    frame = pd.DataFrame({"i": [1, 2, 3], "f": [0.5, np.nan, 2.0], "n": pd.array([1, None, 3], dtype="Int64"),
                          "s": ["a", "b", None], "b": [True, False, True],
                          "c": pd.Categorical(["x", "y", "x"]), "ci": pd.Categorical([1, 2, 1]),
                          "d": pd.to_datetime(["2020-01-01"] * 3)}, index=[7, 3, 5])
    ds = read_frame(frame)
    kinds = {c.name: c.kind for c in ds.columns}
    assert kinds == {"i": "numeric", "f": "numeric", "n": "numeric", "s": "nominal", "b": "nominal",
                     "c": "nominal", "ci": "nominal"}
    assert list(ds.skipped) == ["d"]  # a date is no feature; the index is no column at all
    batches = ds.batch_source().driver_batches()
    assert batches[0].column("ci").to_pylist() == ["1", "2", "1"]
    assert batches[0].column("n").to_pylist() == [1, None, 3]
    assert isinstance(ds.batch_source(), ArrowSource)


@pytest.mark.parametrize("frame,fragment", [
    (pd.DataFrame({0: [1.0], "y": [2.0]}), "DataFrame column names must be strings, not int 0"),
    (pd.DataFrame([[1.0, 2.0]], columns=["x", "x"]), "duplicate column name 'x'"),
    (pd.DataFrame({"x": [1, "a", 2.5]}), "DataFrame column 'x': values of several types"),
])
def test_bad_frames_fail_in_one_line(frame, fragment):
    with pytest.raises(InputError) as info:
        read_frame(frame)
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_repeated_names_are_renamed_on_request():
    ds = read_frame(pd.DataFrame([[1.0, 2.0]], columns=["x", "x"]), "rename")
    assert [c.name for c in ds.columns] == ["x", "x__2"]


def test_a_pandas_frame_ranks_as_the_same_rows_in_spark(spark):
    import spark_fr

    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"a": rng.normal(size=120), "b": rng.normal(size=120),
                          "c": rng.choice(["u", "v", "w"], size=120)})
    frame["y"] = np.where(frame["a"] + (frame["c"] == "u") > 0.3, "yes", "no")
    local = spark_fr.rank(frame, targets="y", trees=5, seed=2)
    remote = spark_fr.rank(spark.createDataFrame(frame), targets="y", trees=5, seed=2)
    cols = ["feature", "score", "target", "importance", "rank"]
    pd.testing.assert_frame_equal(local.to_pandas()[cols], remote.to_pandas()[cols])
    assert local.metadata["input"] == "DataFrame" and local.to_pandas()["feature"].iloc[0] in ("a", "c")


def test_features_col_is_refused_for_a_pandas_frame():
    import spark_fr

    with pytest.raises(InputError, match="features_col applies to a Spark DataFrame's vector column"):
        spark_fr.rank(pd.DataFrame({"x": [1.0, 2.0], "y": [0.0, 1.0]}), targets="y", features_col="v")
