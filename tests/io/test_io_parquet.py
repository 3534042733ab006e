"""spark_fr.io.parquet (and the file helpers it uses): each piece (type names, merging, footers, checks),
then hostile Parquet inputs through the real job: a one-line error naming the file and column with exit
code 2 and nothing written, or a ranking equal to the one of the same data in one well-formed file."""
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spark_fr.errors import InputError
from spark_fr.io import parquet as P
from spark_fr.io.files import DataFile, data_files, read_range
from tests.test_bad_input import expect_error
from tests.conftest import JOB, _subprocess_env, run_job

RANKING = ["feature", "score", "target", "importance", "rank", "importance_std"]


def df_file(path) -> DataFile:
    return DataFile(str(path), os.path.getsize(path))


def table(seed=2, n=120) -> pd.DataFrame:
    """'a' and the integer 'k' drive 'y'; 'b' is noise."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.normal(size=n).round(3), "b": rng.normal(size=n).round(3),
                       "k": rng.integers(0, 6, size=n)})
    df["y"] = np.where(df.a + (df.k > 3) > 0.3, "yes", "no")
    return df


def ranking(out_dir) -> pd.DataFrame:
    t = pd.read_csv(out_dir / "ranking.csv")[RANKING]
    return t.sort_values(["score", "target", "feature"]).reset_index(drop=True)


def rank_ok(tmp_path, capsys, name, *args):
    out = tmp_path / name
    code, _, err = run_job(list(args) + ["--trees", 5, "--seed", 3, "--output", out], capsys)
    assert code == 0, err[-3000:]
    return ranking(out)


def write_table(path, columns: dict):
    pq.write_table(pa.table(columns), path)
    return path


# --- types and merging -------------------------------------------------------------------------------------------

ARROW_TYPES = {
    "i8": pa.array([1, 2], pa.int8()), "i16": pa.array([1, 2], pa.int16()), "i32": pa.array([1, 2], pa.int32()),
    "i64": pa.array([1, 2], pa.int64()), "u8": pa.array([1, 2], pa.uint8()), "u16": pa.array([1, 2], pa.uint16()),
    "u32": pa.array([1, 2], pa.uint32()), "u64": pa.array([1, 2], pa.uint64()),
    "f32": pa.array([1, 2], pa.float32()), "f64": pa.array([1.0, 2.0]), "bo": pa.array([True, False]),
    "s": pa.array(["x", "y"]), "ls": pa.array(["x", "y"], pa.large_string()),
    "dict": pa.array(["x", "y"]).dictionary_encode(), "bin": pa.array([b"x", b"y"]),
    "dec": pa.array([1, 2], pa.decimal128(5, 2)), "d": pa.array([1, 2], pa.date32()),
    "ts": pa.array([1, 2], pa.timestamp("us")), "tsz": pa.array([1, 2], pa.timestamp("ms", tz="UTC")),
    "nul": pa.array([None, None], pa.null()),
}


def test_spark_type_names_match_what_spark_reads(spark, tmp_path):
    f = write_table(tmp_path / "t.parquet", ARROW_TYPES)
    read = {fld.name: fld.dataType.simpleString() for fld in spark.read.parquet(str(f)).schema}
    for fld in pq.read_schema(f):
        mine = P.spark_type(fld.type)
        assert mine == read[fld.name] or (mine == "void" and read[fld.name] == "int"), (fld.name, mine, read)


def test_merge_type():
    assert P.merge_type("int", "bigint") == "bigint" and P.merge_type("tinyint", "smallint") == "smallint"
    assert P.merge_type("bigint", "double") == "double" and P.merge_type("float", "decimal(5,2)") == "double"
    assert P.merge_type("void", "string") == "string" and P.merge_type("date", "void") == "date"
    assert P.merge_type("string", "string") == "string"
    for a, b in [("string", "double"), ("boolean", "int"), ("date", "timestamp"), ("binary", "string")]:
        assert P.merge_type(a, b) is None and P.merge_type(b, a) is None


# --- footers ------------------------------------------------------------------------------------------------------


def test_read_footer_of_good_and_bad_files(tmp_path):
    good = write_table(tmp_path / "g.parquet", {"a": [1.0, 2.0], "s": ["x", "y"]})
    assert P.read_footer(None, df_file(good)).names == ["a", "s"]
    raw = good.read_bytes()
    cases = {"empty.parquet": (b"", "the file is empty (0 bytes)"),
             "text.parquet": (b"a,b\n1,2\n", "not a Parquet file (no 'PAR1' marker at its start)"),
             "cut.parquet": (raw[: len(raw) // 2], "not a Parquet file (no 'PAR1' marker at its end; truncated?)"),
             "tiny.parquet": (b"PAR1", "not a Parquet file"),
             "enc.parquet": (b"PARE" + raw[4:-4] + b"PARE", "an encrypted Parquet file"),
             "long.parquet": (raw[:-8] + (10 ** 6).to_bytes(4, "little") + b"PAR1", "damaged Parquet file"),
             "garbled.parquet": (raw[:-60] + b"\xff" * 52 + raw[-8:], "damaged Parquet footer")}
    for name, (content, fragment) in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(InputError) as err:
            P.read_footer(None, df_file(tmp_path / name))
        assert str(err.value).startswith(str(tmp_path / name)) and fragment in str(err.value), (name, err.value)


def test_read_footer_wider_than_one_read(tmp_path):
    wide = write_table(tmp_path / "w.parquet", {f"feature_{i:05d}": [1.0] for i in range(3000)})
    assert int.from_bytes(wide.read_bytes()[-8:-4], "little") + 8 > P.TAIL_BYTES  # the footer takes a second read
    assert P.read_footer(None, df_file(wide)).names == [f"feature_{i:05d}" for i in range(3000)]


def test_footers_through_hadoop_for_a_uri(spark, tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    write_table(d / "p0.parquet", {"a": [1.0]})
    write_table(d / "p1.parquet", {"a": [2.0]})
    (d / "_SUCCESS").write_bytes(b"")
    files, subdirs = data_files(spark, "file://" + str(d))
    assert [f.name for f in files] == ["p0.parquet", "p1.parquet"] and subdirs == []
    assert files[0].path.startswith("file:") and files[0].size == os.path.getsize(d / "p0.parquet")
    assert read_range(spark, files[0].path, 0, 4) == b"PAR1"
    assert P.read_footer(spark, files[1]).names == ["a"]


def test_check_footer(tmp_path):
    dup = tmp_path / "dup.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array([1]), pa.array([2])], names=["x", "x"]), dup)
    ci = tmp_path / "ci.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array([1]), pa.array([2])], names=["X", "x"]), ci)
    ns = write_table(tmp_path / "ns.parquet", {"when": pa.array([1], pa.timestamp("ns")), "a": [1.0]})
    half = write_table(tmp_path / "half.parquet", {"h": pa.array(np.array([1.0], np.float16)), "a": [1.0]})
    for f, fragment in [(dup, "duplicate column name 'x'"), (ci, "duplicate column name 'x' (columns 1 and 2) (as 'X'"),
                        (ns, "column 'when' holds nanosecond timestamps"), (half, "column 'h' holds 16-bit floats")]:
        with pytest.raises(InputError) as err:
            P.check_footer(P.Footer(str(f), df_file(f), P.read_footer(None, df_file(f))))
        assert str(err.value).startswith(str(f)) and fragment in str(err.value)
    P.check_footer(P.Footer(str(ci), df_file(ci), P.read_footer(None, df_file(ci))), case_sensitive=True)


def footers(tmp_path, *tables):
    out = []
    for i, cols in enumerate(tables):
        f = write_table(tmp_path / f"p{i}.parquet", cols)
        out.append(P.Footer(str(tmp_path), df_file(f), P.read_footer(None, df_file(f))))
    return out


def test_merge_schemas(tmp_path):
    fts = footers(tmp_path, {"a": pa.array([1], pa.int32()), "y": ["u"]},
                  {"y": ["v"], "a": pa.array([2], pa.int64()), "n": pa.array([None], pa.null())},
                  {"a": [1.5], "b": ["w"], "y": ["w"]})
    order, merged, missing = P.merge_schemas(fts)
    assert order == ["a", "y", "n", "b"]
    assert merged == {"a": "double", "y": "string", "n": "void", "b": "string"}
    assert missing == {"n": [fts[0].file.path, fts[2].file.path], "b": [fts[0].file.path, fts[1].file.path]}


@pytest.mark.parametrize("second,fragment", [
    ({"a": ["x"]}, "column 'a' is string here but bigint in"),
    ({"a": [True]}, "column 'a' is boolean here but bigint in"),
    ({"A": [1]}, "column 'A' is 'a' in"),
])
def test_merge_schemas_conflicts(tmp_path, second, fragment):
    fts = footers(tmp_path, {"a": [1]}, second)
    with pytest.raises(InputError) as err:
        P.merge_schemas(fts)
    msg = str(err.value)
    assert msg.startswith(fts[1].file.path) and fragment in msg and fts[0].file.path in msg


# --- hostile inputs through the job -------------------------------------------------------------------------------


def test_empty_file_and_a_file_that_is_not_parquet(spark, tmp_path, capsys):
    (tmp_path / "e.parquet").write_bytes(b"")
    expect_error(["--input", tmp_path / "e.parquet", "--targets", "y"], capsys, tmp_path, "e.parquet",
                 "the file is empty (0 bytes)")
    (tmp_path / "t.parquet").write_text("a,y\n1,2\n")
    expect_error(["--input", tmp_path / "t.parquet", "--targets", "y"], capsys, tmp_path, "t.parquet",
                 "not a Parquet file")
    d = tmp_path / "dir"
    d.mkdir()
    table().to_parquet(d / "part-0.parquet")
    (d / "notes.txt").write_text("written by hand")
    expect_error(["--input", d, "--targets", "y"], capsys, tmp_path, "notes.txt", "not a Parquet file")
    (d / "notes.txt").unlink()
    (d / "part-1.parquet").write_bytes(b"")
    expect_error(["--input", d, "--targets", "y"], capsys, tmp_path, "part-1.parquet", "the file is empty")


def test_directory_with_conflicting_types(spark, tmp_path, capsys):
    df = table()
    d = tmp_path / "dir"
    d.mkdir()
    df.iloc[:60].to_parquet(d / "part-0.parquet")
    df.iloc[60:].assign(b=df.b.iloc[60:].astype(str)).to_parquet(d / "part-1.parquet")
    expect_error(["--input", d, "--targets", "y"], capsys, tmp_path, "part-1.parquet", "column 'b' is string here",
                 "double in", "part-0.parquet")


def test_several_inputs_with_conflicting_types(spark, tmp_path, capsys):
    df = table()
    df.iloc[:60].to_parquet(tmp_path / "a.parquet")
    df.iloc[60:].assign(k=df.k.iloc[60:] > 2).to_parquet(tmp_path / "b.parquet")
    expect_error(["--input", f"{tmp_path / 'a.parquet'},{tmp_path / 'b.parquet'}", "--targets", "y"], capsys,
                 tmp_path, "b.parquet", "column 'k' is boolean here but bigint in", "a.parquet")


def test_compatible_types_rank_as_one_file(spark, tmp_path, capsys):
    """int32 + int64 parts, int + float parts, and a part without a column: Spark alone fails or drops data."""
    df = table()
    df.to_parquet(tmp_path / "one.parquet")
    base = rank_ok(tmp_path, capsys, "o1", "--input", tmp_path / "one.parquet", "--targets", "y")
    widths = tmp_path / "widths"
    widths.mkdir()
    pq.write_table(pa.Table.from_pandas(df.iloc[:60], preserve_index=False).cast(
        pa.schema([("a", pa.float64()), ("b", pa.float64()), ("k", pa.int32()), ("y", pa.string())])),
        widths / "part-0.parquet")
    df.iloc[60:].to_parquet(widths / "part-1.parquet")
    pd.testing.assert_frame_equal(rank_ok(tmp_path, capsys, "o2", "--input", widths, "--targets", "y"), base,
                                  check_exact=True)

    mixed = tmp_path / "mixed"
    mixed.mkdir()
    df.iloc[:60].to_parquet(mixed / "part-0.parquet")
    df.iloc[60:].assign(a=(df.a.iloc[60:] * 1000).astype(int)).to_parquet(mixed / "part-1.parquet")
    df.assign(a=np.r_[df.a.iloc[:60], (df.a.iloc[60:] * 1000).astype(int)].astype(float)).to_parquet(
        tmp_path / "one_mixed.parquet")
    pd.testing.assert_frame_equal(rank_ok(tmp_path, capsys, "o3", "--input", mixed, "--targets", "y"),
                                  rank_ok(tmp_path, capsys, "o4", "--input", tmp_path / "one_mixed.parquet",
                                          "--targets", "y"), check_exact=True)

    gap = tmp_path / "gap"
    gap.mkdir()
    df.iloc[:60].drop(columns=["b"]).to_parquet(gap / "part-0.parquet")
    df.iloc[60:].to_parquet(gap / "part-1.parquet")
    df.assign(b=np.r_[np.full(60, np.nan), df.b.iloc[60:]])[["a", "k", "y", "b"]].to_parquet(
        tmp_path / "one_gap.parquet")
    got = rank_ok(tmp_path, capsys, "o5", "--input", gap, "--targets", "y")
    assert "b" in set(got.feature)  # Spark alone takes part-0's schema and drops 'b'
    pd.testing.assert_frame_equal(got, rank_ok(tmp_path, capsys, "o6", "--input", tmp_path / "one_gap.parquet",
                                               "--targets", "y"), check_exact=True)


def test_partitioned_directory_with_integer_widths(spark, tmp_path, capsys):
    df = table()
    for part, rows, kind in [("g=1", df.iloc[:60], pa.int32()), ("g=2", df.iloc[60:], pa.int64())]:
        (tmp_path / "data" / part).mkdir(parents=True)
        pq.write_table(pa.Table.from_pandas(rows, preserve_index=False).cast(
            pa.schema([("a", pa.float64()), ("b", pa.float64()), ("k", kind), ("y", pa.string())])),
            tmp_path / "data" / part / "p.parquet")
    got = rank_ok(tmp_path, capsys, "o1", "--input", tmp_path / "data", "--targets", "y")
    assert set(got.feature) == {"a", "b", "k", "g"}  # the partition column is kept


def test_check_layout(tmp_path):
    d = tmp_path / "data"
    for sub in ["g=1/h=a", "g=2/h=b", "g=3", "_tmp", "empty"]:
        (d / sub).mkdir(parents=True)
    for sub in ["g=1/h=a", "g=2/h=b", "_tmp"]:
        write_table(d / sub / "p.parquet", {"a": [1.0]})
    files, subdirs = data_files(None, str(d))
    P.check_layout(str(d), files, subdirs)  # partitions (an empty one, a hidden and an empty directory aside)
    write_table(d / "g=1" / "stray.parquet", {"a": [1.0]})
    with pytest.raises(InputError, match="g=1/stray.parquet: a Parquet file next to partition directories"):
        P.check_layout(str(d), *data_files(None, str(d)))
    (d / "g=1" / "stray.parquet").unlink()
    write_table(d / "empty" / "p.parquet", {"a": [1.0]})
    with pytest.raises(InputError, match="empty: a subdirectory of the Parquet input .* not a partition directory"):
        P.check_layout(str(d), *data_files(None, str(d)))


def test_files_spark_would_leave_out(spark, tmp_path, capsys):
    df = table()
    d = tmp_path / "data"
    (d / "g=1").mkdir(parents=True)
    df.iloc[:60].to_parquet(d / "g=1" / "p.parquet")
    df.iloc[60:].to_parquet(d / "p.parquet")  # Spark reads only g=1 and drops these 60 rows silently
    expect_error(["--input", d, "--targets", "y"], capsys, tmp_path, "p.parquet",
                 "a Parquet file next to partition directories")
    e = tmp_path / "nested"
    (e / "2024").mkdir(parents=True)
    df.iloc[:60].to_parquet(e / "p.parquet")
    df.iloc[60:].to_parquet(e / "2024" / "p.parquet")  # Spark reads only the top file
    expect_error(["--input", e, "--targets", "y"], capsys, tmp_path, "2024", "not a partition directory")


def test_nanosecond_timestamps(spark, tmp_path, capsys):
    df = table()
    t = pa.Table.from_pandas(df, preserve_index=False).append_column(
        "when", pa.array(np.arange(len(df)), pa.timestamp("ns")))
    pq.write_table(t, tmp_path / "ts.parquet")
    expect_error(["--input", tmp_path / "ts.parquet", "--targets", "y"], capsys, tmp_path, "ts.parquet",
                 "column 'when' holds nanosecond timestamps")


def test_bad_parquet_in_a_real_process_is_one_quiet_line(tmp_path):
    """No Spark ERROR log, no Java or Python stack: only the error line (and Spark's start-up banner)."""
    df = table()
    d = tmp_path / "dir"
    d.mkdir()
    df.iloc[:60].to_parquet(d / "part-0.parquet")
    df.iloc[60:].assign(b="text").to_parquet(d / "part-1.parquet")
    (tmp_path / "e.parquet").write_bytes(b"")
    out = tmp_path / "o"
    for bad, fragment in [(d, "column 'b' is string here"), (tmp_path / "e.parquet", "the file is empty")]:
        r = subprocess.run([sys.executable, str(JOB), "--input", str(bad), "--targets", "y", "--trees", "5",
                            "--output", str(out)], capture_output=True, text=True, env=_subprocess_env(),
                           timeout=300)
        assert r.returncode == 2, r.stderr[-3000:]
        errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
        assert len(errors) == 1 and fragment in errors[0], r.stderr[-3000:]
        noise = [ln for ln in r.stderr.splitlines() if " ERROR " in ln or ln.lstrip().startswith("at ")
                 or "Traceback" in ln or "Exception" in ln]
        assert noise == [], noise[:5]
        assert not out.exists()


def test_local_source_batches_equal_the_files_columns_by_name(spark, tmp_path):
    """:class:`P.ParquetSource` (each file opened once, with its parsed footer; a batch holding every column asked
    for is the row group's own, renamed) against the obvious reference: each file read whole by pyarrow, its row
    groups in order, the columns asked for picked by name (null where a file lacks one)."""
    rng = np.random.default_rng(3)
    full = {f"x{i}": rng.normal(size=12) for i in (3, 1, 2)} | {"s": [str(v) for v in rng.integers(0, 3, 12)]}
    pq.write_table(pa.table(full), tmp_path / "a.parquet", row_group_size=5)
    pq.write_table(pa.table({k: v for k, v in full.items() if k != "x2"}), tmp_path / "b.parquet", row_group_size=7)
    ds = P.read_parquet(spark, str(tmp_path))
    source = ds.batches
    assert isinstance(source, P.ParquetSource) and set(source.metadata) == {str(tmp_path / f"{n}.parquet") for n in "ab"}
    for names in (["s", "x1", "x2", "x3"], ["x1", "x3"], ["s"]):
        narrowed, _ = source.narrow([c for c in ds.columns if c.column in names])
        got = narrowed.driver_batches()
        expected = []
        for f in ("a", "b"):
            t = pq.read_table(tmp_path / f"{f}.parquet")
            for g in range(pq.ParquetFile(tmp_path / f"{f}.parquet").num_row_groups):
                part = pq.ParquetFile(tmp_path / f"{f}.parquet").read_row_group(g)
                expected.append({n: part.column(n).to_pylist() if n in t.column_names else [None] * part.num_rows
                                 for n in names})
        assert [b.schema.names for b in got] == [names] * len(expected)
        assert [b.to_pydict() for b in got] == expected
    assert sorted(source._opened) == [str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet")]
    assert narrowed._file(str(tmp_path / "a.parquet")) is source._file(str(tmp_path / "a.parquet"))
    import pickle

    shipped = pickle.loads(pickle.dumps(narrowed))  # to Spark tasks: no footers, files opened there
    assert shipped.metadata == {} and shipped._opened == {}
    assert [b.to_pydict() for b in shipped.driver_batches()] == expected


def test_the_drivers_batches_are_each_row_groups_own_in_order(tmp_path):
    """:meth:`P.ParquetSource.driver_batches` decodes a file's row groups in one call (pyarrow then merges their
    chunks); its batches are still each row group's own, in order, as the streamed read's (one call per row group):
    the same rows and batch boundaries, whatever the reading."""
    rng = np.random.default_rng(3)
    names = ["a", "b", "c"]
    paths = []
    for name, rows, group in (("one", 25_000, 12_000), ("two", 7_000, 3_000)):
        table = pa.table({"a": rng.normal(size=rows), "b": pa.array([str(v) for v in rng.integers(0, 7, rows)]),
                          "c": rng.integers(0, 3, rows)})
        paths.append(str(tmp_path / f"{name}.parquet"))
        pq.write_table(table, paths[-1], row_group_size=group)
    source = P.ParquetSource([(p, names) for p in paths], names, {"a": "double", "b": "string", "c": "bigint"})
    expected = [batch for p in paths for g in range(pq.ParquetFile(p).num_row_groups)
                for batch in pq.ParquetFile(p).read_row_group(g).to_batches(max_chunksize=10_000)]
    for got in (source.driver_batches(), list(source.read(source._units()))):
        assert [b.num_rows for b in got] == [b.num_rows for b in expected] == [10_000, 2_000, 10_000, 2_000, 1_000,
                                                                              3_000, 3_000, 1_000]
        assert all(a.equals(b) for a, b in zip(got, expected))
