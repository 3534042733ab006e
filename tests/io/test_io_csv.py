"""spark_fr.io.csv: each piece (values, the RFC 4180 scanner, headers, files, line finders, types, the
scikit-learn layout), then hostile CSV inputs through the real job: a one-line error naming the file, line
or column with exit code 2 and nothing written, or a ranking equal to the one of the same data in a
well-formed file."""
import bz2
import gzip
import io
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from spark_fr.errors import InputError
from spark_fr.io import csv as C
from spark_fr.io.files import DataFile, data_files, open_text
from tests.test_bad_input import expect_error
from tests.conftest import JOB, _subprocess_env, run_job

RANKING = ["feature", "score", "target", "importance", "rank", "importance_std"]


def write(path, text, encoding="utf-8", newline="\n"):
    with open(path, "w", encoding=encoding, newline="") as fh:
        fh.write(text.replace("\n", newline))
    return path


def df_file(path) -> DataFile:
    import os

    return DataFile(str(path), os.path.getsize(path))


def table(seed=1, n=120) -> pd.DataFrame:
    """A small classification table: 'a' and the colour 't' drive 'y', 'b' is noise."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.normal(size=n).round(3), "b": rng.normal(size=n).round(3),
                       "t": rng.choice(["red", "green", "blue"], size=n)})
    df["y"] = np.where(df.a + (df.t == "red") > 0.3, "yes", "no")
    return df


def ranking(out_dir) -> pd.DataFrame:
    t = pd.read_csv(out_dir / "ranking.csv")[RANKING]
    return t.sort_values(["score", "target", "feature"]).reset_index(drop=True)


def rank_ok(tmp_path, capsys, name, *args):
    out = tmp_path / name
    code, _, err = run_job(list(args) + ["--trees", 5, "--seed", 3, "--output", out], capsys)
    assert code == 0, err[-3000:]
    return ranking(out)


# --- values --------------------------------------------------------------------------------------------------

NUMBER_CASES = ["1", "-2.5e3", ".5", "5.", " 7 ", "\t3", "1\r", "1d", "1F", "0x1p3", "-0x1.8p1", "inf", "-Infinity",
                "NaN", "+nan", "-NaN", "INF", "+Infinity", "NaNd", "0x1p3d", "\u00a01", "\x001", "1e999", "1_000",
                "0x10", "1,5", "abc", "", "1e", "e5", "--1", "1.2.3", "Infinityd", "١٢", "0x", "+.5e-3"]


def test_to_number_agrees_with_sparks_cast(spark):
    from pyspark.sql import functions as F

    df = spark.createDataFrame([(s,) for s in NUMBER_CASES], "v string")
    got = {r.v: r.x for r in df.select("v", F.trim("v").try_cast("double").alias("x")).collect()}
    for s in NUMBER_CASES:
        mine, theirs = C.to_number(s), got[s]
        assert (mine is None) == (theirs is None), (s, mine, theirs)
        if mine is not None:
            assert mine == theirs or (mine != mine and theirs != theirs), (s, mine, theirs)


def test_missing_markers_and_infinities():
    for v in ["", "?", " NA ", "nan", "-NaN", "NULL", "None", "n/a"]:
        assert C.is_missing(v), v
    for v in ["0", "x", "missing", "-"]:
        assert not C.is_missing(v), v
    assert C.is_infinite("inf") and C.is_infinite("-Infinity") and C.is_infinite("1e400")
    assert not C.is_infinite("1e300") and not C.is_infinite("nan") and not C.is_infinite("abc")


# --- the RFC 4180 scanner ---------------------------------------------------------------------------------------


def scan(text, **kw):
    return list(C.scan_records(io.StringIO(text, newline=""), **kw))


def test_scanner_plain_lines_blank_lines_and_line_ends():
    recs = scan("a,b,c\r\n\r\n1,2,3\n   \n4,5\r6,7,8", values=True)
    assert [(r.line, r.end, r.n_fields) for r in recs] == [(1, 1, 3), (3, 3, 3), (5, 5, 2), (6, 6, 3)]
    assert recs[0].fields == ["a", "b", "c"] and recs[3].fields == ["6", "7", "8"]


def test_scanner_quotes_separators_doubled_quotes_and_line_breaks():
    recs = scan('a,b,c\n1,"x, ""y""",3\n2,"multi\r\nline\nvalue",4\n5,"q"tail,6\n', values=True)
    assert recs[1].fields == ["1", 'x, "y"', "3"] and recs[1].doubled and recs[1].end == 2
    assert (recs[2].line, recs[2].end, recs[2].quote_line) == (3, 5, 3)
    assert recs[2].fields == ["2", "multi\r\nline\nvalue", "4"] and not recs[2].doubled
    assert recs[3].fields == ["5", "qtail", "6"] and recs[3].line == 6
    assert all(r.closed for r in recs)


def test_scanner_reports_where_an_unterminated_quote_opens():
    recs = scan('a,b\n1,2\n3,"open\n4,5\n6,7\n')
    assert [r.closed for r in recs] == [True, True, False]
    assert (recs[2].line, recs[2].quote_line, recs[2].end) == (3, 3, 5)
    # a quote inside an unquoted value is a plain character, not an opening quote
    assert [r.n_fields for r in scan('a,b\n5"3,x\n')] == [2, 2]


def test_scanner_counts_without_values_and_tabs():
    recs = scan("a\tb\tc\n1\t\t3\n", sep="\t")
    assert [r.n_fields for r in recs] == [3, 3] and recs[1].fields is None


# --- files and headers -------------------------------------------------------------------------------------------


def test_data_files_skip_hidden_names_and_report_subdirectories(tmp_path):
    for name in ["part-1.csv", "part-0.csv", "_SUCCESS", ".part-0.csv.crc", "x.csv._COPYING_"]:
        write(tmp_path / name, "a\n1\n")
    files, subdirs = data_files(None, str(tmp_path))
    assert [f.name for f in files] == ["part-0.csv", "part-1.csv"] and subdirs == []
    (tmp_path / "empty").mkdir()
    assert [f.name for f in C.csv_files(None, str(tmp_path))] == ["part-0.csv", "part-1.csv"]
    (tmp_path / "old").mkdir()
    write(tmp_path / "old" / "p.csv", "a\n1\n")
    with pytest.raises(InputError, match="old: a CSV input directory must hold only CSV files"):
        C.csv_files(None, str(tmp_path))


def test_csv_files_empty_files(tmp_path):
    write(tmp_path / "e.csv", "")
    with pytest.raises(InputError, match="e.csv: the file is empty"):
        C.csv_files(None, str(tmp_path / "e.csv"))
    d = tmp_path / "d"
    d.mkdir()
    write(d / "p0.csv", "a\n1\n")
    write(d / "p1.csv", "")
    assert [f.name for f in C.csv_files(None, str(d))] == ["p0.csv"]  # an empty part holds no rows


def test_open_text_decompresses_and_drops_a_bom(tmp_path):
    body = "\ufeffa,b\r\n1,2\r\n"
    with gzip.open(tmp_path / "x.csv.gz", "wt", encoding="utf-8", newline="") as fh:
        fh.write(body)
    with bz2.open(tmp_path / "x.csv.bz2", "wt", encoding="utf-8", newline="") as fh:
        fh.write(body)
    for name in ["x.csv.gz", "x.csv.bz2"]:
        with open_text(None, str(tmp_path / name)) as fh:
            assert fh.read() == "a,b\r\n1,2\r\n"


def test_separator_of():
    assert C.separator_of("a/b.tsv") == "\t" and C.separator_of("b.TSV.gz") == "\t"
    assert C.separator_of("b.csv") == "," and C.separator_of("b.csv.bz2") == ","


@pytest.mark.parametrize("text,fragment", [
    ("a,,y\n1,2,3\n", "line 1: column 2 of the header has no name"),
    (",a,y\n0,1,2\n", "line 1: column 1 of the header has no name (an index written by pandas' to_csv?)"),
    ("a,y,\n0,1,\n", "line 1: column 3 of the header has no name (a separator at the end of the line?)"),
    ("a,b,a\n1,2,3\n", "line 1: duplicate column name 'a' (columns 1 and 3); pass --duplicate-names rename to "
                       "read the repeat as 'a__2'"),
    ("A,b,a\n1,2,3\n", "duplicate column name 'a' (columns 1 and 3) (as 'A'"),
    ('\n\n"a\nb",y\n1,2\n', "line 3: a quoted column name holds a line break"),
    ('"a,y\n1,2\n', "line 1: a quoted column name opens here and is never closed"),
])
def test_bad_headers(tmp_path, text, fragment):
    f = write(tmp_path / "h.csv", text)
    with pytest.raises(InputError) as err:
        C.read_header(None, df_file(f), ",")
    assert fragment in str(err.value) and "h.csv" in str(err.value)


def test_header_with_bom_crlf_and_leading_blank_lines(tmp_path):
    f = tmp_path / "h.csv"
    f.write_bytes(b"\xef\xbb\xbf\r\na,b,y\r\n1,2,3\r\n")
    h = C.read_header(None, df_file(f), ",")
    assert h.names == ["a", "b", "y"] and h.line == 2
    g = write(tmp_path / "c.csv", "A,a\n1,2\n")
    assert C.read_header(None, df_file(g), ",", case_sensitive=True).names == ["A", "a"]


def test_header_that_is_not_utf8(tmp_path):
    f = write(tmp_path / "u.csv", "a,b\n1,2\n", encoding="utf-16")
    with pytest.raises(InputError, match="u.csv line 1: the header is not UTF-8 text"):
        C.read_header(None, df_file(f), ",")


def test_same_columns_rule(tmp_path):
    def hdr(name, text):
        return C.read_header(None, df_file(write(tmp_path / name, text)), ",")

    first = hdr("p0.csv", "a,b,y\n")
    C.check_same_columns([first, hdr("p1.csv", "y,a,b\n")])  # reordered: read by name
    for text, fragment in [("a,c,y\n", "column 'c' stands where"), ("a,b,y,z\n", "column 'z' is not in"),
                           ("a,y\n", "column 'b' of"), ("a,B,y\n", "column 'B' stands where")]:
        with pytest.raises(InputError) as err:
            C.check_same_columns([first, hdr("p2.csv", text)])
        msg = str(err.value)
        assert "p2.csv line 1: the header differs" in msg and fragment in msg and "p0.csv" in msg


def test_sklearn_header(tmp_path):
    f = write(tmp_path / "s.csv", "3,2,setosa,virginica\n1.0,2.0,0\n")
    assert C.sklearn_header(None, df_file(f)) == (2, ["setosa", "virginica"])
    g = write(tmp_path / "t.csv", "3,2\n1.0,2.0,0\n")
    assert C.sklearn_header(None, df_file(g)) == (2, [])
    for text in ["a,b,y\n1,2,3\n", "3,2,setosa\n1.0,0\n"]:
        assert C.sklearn_header(None, df_file(write(tmp_path / "u.csv", text))) is None


# --- line finders -------------------------------------------------------------------------------------------------


def test_find_bad_record_and_find_value(tmp_path):
    f = write(tmp_path / "p.csv", 'a,t,y\n1,"x\ny",2\n3,z,4\n5,"q\nr",6,7\n8,w\n')
    h = {str(f): C.read_header(None, df_file(f), ",")}
    path, line, msg = C.find_bad_record(None, [df_file(f)], h, 3)
    assert (path, line) == (str(f), 5) and "found 4" in msg and "runs to line 6" in msg
    g = write(tmp_path / "q.csv", "a,t,y\n1,x,2\n3,z,4\n")
    assert C.find_bad_record(None, [df_file(g)], {str(g): h[str(f)]}, 3) is None
    assert C.find_value(None, [df_file(f)], h, "t", lambda v: v == "z") == (str(f), 4, "z")
    assert C.find_value(None, [df_file(f)], h, "t", lambda v: v == "nope") is None


# --- types (read_csv) ------------------------------------------------------------------------------------------


def test_type_inference_and_missing_values(spark, tmp_path):
    rows = ["1,red,2.5,a,?", "2,blue,NA,b,", "3,red,,7,x", " 4 ,green,1e3,c,null"]
    f = write(tmp_path / "t.csv", "n,s,m,mostly_text,gone\n" + "\n".join(rows) + "\n")
    ds = C.read_csv(spark, str(f))
    kinds = {c.name: c.kind for c in ds.columns}
    assert kinds == {"n": "numeric", "s": "nominal", "m": "numeric", "mostly_text": "nominal", "gone": "nominal"}
    got = ds.df.toPandas()
    assert got.n.tolist() == [1.0, 2.0, 3.0, 4.0]
    assert got.m.tolist()[0] == 2.5 and np.isnan(got.m.tolist()[1]) and got.m.tolist()[3] == 1000.0
    assert got.gone.isna().tolist() == [True, True, False, True]


def test_mostly_numeric_column_with_text_names_line_and_value(spark, tmp_path):
    rows = [f"{i},{i * 0.5}" for i in range(10)]
    rows[6] = "6,3.O"
    f = write(tmp_path / "t.csv", "a,b\n" + "\n".join(rows) + "\n")
    with pytest.raises(InputError, match=r"t.csv line 8: column 'b': '3.O' is not a number"):
        C.read_csv(spark, str(f))


def test_sklearn_layout(spark, tmp_path):
    f = write(tmp_path / "s.csv", "4,2,setosa,virginica\n1.0,2.0,0\n1.5,2.5,1\n2.0,3.0,0\n2.5,3.5,1\n")
    ds = C.read_csv(spark, str(f))
    assert [c.name for c in ds.columns] == ["x1", "x2", "target"] and ds.default_target == "target"
    assert ds.df.toPandas().target.tolist() == ["setosa", "virginica", "setosa", "virginica"]


# --- hostile inputs through the job -------------------------------------------------------------------------------


def test_directory_with_reordered_headers_ranks_as_one_file(spark, tmp_path, capsys):
    df = table()
    df.to_csv(tmp_path / "one.csv", index=False)
    d = tmp_path / "parts"
    d.mkdir()
    df.iloc[:60].to_csv(d / "part-0.csv", index=False)
    df.iloc[60:][["y", "t", "b", "a"]].to_csv(d / "part-1.csv", index=False)
    write(d / "_SUCCESS", "")
    base = rank_ok(tmp_path, capsys, "o1", "--input", tmp_path / "one.csv", "--targets", "y")
    pd.testing.assert_frame_equal(rank_ok(tmp_path, capsys, "o2", "--input", d, "--targets", "y"), base,
                                  check_exact=True)
    # several CSV files as a comma-separated --input follow the same rule; the columns come in the first
    # file's order (which matters: random feature subsets draw features by position)
    listed = f"{d / 'part-1.csv'},{d / 'part-0.csv'}"
    pd.concat([df.iloc[60:], df.iloc[:60]])[["y", "t", "b", "a"]].to_csv(tmp_path / "one_yt.csv", index=False)
    base_yt = rank_ok(tmp_path, capsys, "o3", "--input", tmp_path / "one_yt.csv", "--targets", "y")
    pd.testing.assert_frame_equal(rank_ok(tmp_path, capsys, "o4", "--input", listed, "--targets", "y"), base_yt,
                                  check_exact=True)


@pytest.mark.parametrize("columns,fragment", [
    (["a", "b", "colour", "y"], "column 'colour' stands where"),
    (["a", "b", "y"], "column 't' of"),
])
def test_directory_with_renamed_or_missing_columns(spark, tmp_path, capsys, columns, fragment):
    df = table()
    d = tmp_path / "parts"
    d.mkdir()
    df.iloc[:60].to_csv(d / "part-0.csv", index=False)
    later = df.iloc[60:].rename(columns={"t": "colour"})
    later[columns].to_csv(d / "part-1.csv", index=False)
    msg = expect_error(["--input", d, "--targets", "y"], capsys, tmp_path, "part-1.csv line 1", fragment)
    assert "part-0.csv" in msg


def test_list_of_csv_files_with_an_extra_column(spark, tmp_path, capsys):
    df = table()
    df.iloc[:60].to_csv(tmp_path / "a.csv", index=False)
    df.iloc[60:].assign(z=1.0).to_csv(tmp_path / "b.csv", index=False)
    expect_error(["--input", f"{tmp_path / 'a.csv'},{tmp_path / 'b.csv'}", "--targets", "y"], capsys, tmp_path,
                 "b.csv line 1", "column 'z' is not in")


def test_duplicate_column_names(spark, tmp_path, capsys):
    f = write(tmp_path / "d.csv", "x1,x2,x1,y\n" + "".join(f"{i},{i % 3},{i * 2},{i % 2}\n" for i in range(30)))
    expect_error(["--input", f, "--targets", "y"], capsys, tmp_path, "d.csv line 1", "duplicate column name 'x1'")
    g = write(tmp_path / "e.csv", "Speed,speed,y\n" + "".join(f"{i},{i % 3},{i % 2}\n" for i in range(30)))
    expect_error(["--input", g, "--targets", "y"], capsys, tmp_path, "e.csv line 1", "duplicate column name 'speed'",
                 "'Speed'")


def test_unterminated_quote_is_reported_where_it_opens(spark, tmp_path, capsys):
    rows = [f"{i},{i * 0.5},{i % 2}" for i in range(30)]
    rows[10] = '10,"5.0,1'
    f = write(tmp_path / "q.csv", "a,b,y\n" + "\n".join(rows) + "\n")
    expect_error(["--input", f, "--targets", "y"], capsys, tmp_path, "q.csv line 12",
                 "a quoted value opens here and is never closed")


def test_a_column_named_like_the_corrupt_record_column(spark, tmp_path, capsys):
    df = table()
    df.to_csv(tmp_path / "one.csv", index=False)
    df.rename(columns={"b": "_corrupt"}).to_csv(tmp_path / "c.csv", index=False)
    base = rank_ok(tmp_path, capsys, "o1", "--input", tmp_path / "one.csv", "--targets", "y")
    got = rank_ok(tmp_path, capsys, "o2", "--input", tmp_path / "c.csv", "--targets", "y")
    got["feature"] = got.feature.replace({"_corrupt": "b"})
    pd.testing.assert_frame_equal(got.sort_values(["score", "target", "feature"]).reset_index(drop=True), base,
                                  check_exact=True)


def test_bom_and_crlf_rank_as_a_plain_file(spark, tmp_path, capsys):
    df = table()
    df.to_csv(tmp_path / "one.csv", index=False)
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbf" + (tmp_path / "one.csv").read_bytes().replace(b"\n", b"\r\n"))
    base = rank_ok(tmp_path, capsys, "o1", "--input", tmp_path / "one.csv", "--targets", "y")
    pd.testing.assert_frame_equal(rank_ok(tmp_path, capsys, "o2", "--input", tmp_path / "bom.csv", "--targets", "y"),
                                  base, check_exact=True)


def test_quoted_line_breaks_and_doubled_quotes_are_read_as_rfc4180(spark, tmp_path, capsys):
    df = table()
    df["t"] = df.t.map({"red": "re\nd", "green": 'gr"e"en, x', "blue": "blue"})
    df.to_csv(tmp_path / "m.csv", index=False)  # pandas quotes line breaks and doubles quotes
    df.to_parquet(tmp_path / "m.parquet")
    got = rank_ok(tmp_path, capsys, "o1", "--input", tmp_path / "m.csv", "--targets", "y")
    want = rank_ok(tmp_path, capsys, "o2", "--input", tmp_path / "m.parquet", "--targets", "y")
    pd.testing.assert_frame_equal(got, want, check_exact=True)


def test_wrong_field_count_in_a_record_with_a_multiline_value(spark, tmp_path, capsys):
    rows = [f"{i},v{i % 3},{i % 2}" for i in range(30)]
    rows[8] = '8,"two\nlines",1,surplus'
    f = write(tmp_path / "m.csv", "a,t,y\n" + "\n".join(rows) + "\n")
    expect_error(["--input", f, "--targets", "y"], capsys, tmp_path, "m.csv line 10", "expected 3 fields",
                 "found 4", "runs to line 11")


def test_header_without_a_name(spark, tmp_path, capsys):
    table().to_csv(tmp_path / "i.csv")  # pandas writes the index under an empty name
    expect_error(["--input", tmp_path / "i.csv", "--targets", "y"], capsys, tmp_path, "i.csv line 1",
                 "column 1 of the header has no name")


def test_header_only_gzipped_csv(spark, tmp_path, capsys):
    with gzip.open(tmp_path / "h.csv.gz", "wt") as fh:
        fh.write("a,b,y\n")
    expect_error(["--input", tmp_path / "h.csv.gz", "--targets", "y"], capsys, tmp_path, "h.csv.gz", "no rows")
    with gzip.open(tmp_path / "e.csv.gz", "wt") as fh:
        fh.write("")
    expect_error(["--input", tmp_path / "e.csv.gz", "--targets", "y"], capsys, tmp_path, "e.csv.gz", "no header line")


def test_infinite_value_in_a_numeric_column(spark, tmp_path, capsys):
    rows = [f"{i * 0.1},{i % 2}" for i in range(30)]
    rows[4] = "-Infinity,0"
    f = write(tmp_path / "f.csv", "a,y\n" + "\n".join(rows) + "\n")
    expect_error(["--input", f, "--targets", "y", "--method", "relief"], capsys, tmp_path, "f.csv line 6",
                 "column 'a' holds an infinite value (-inf), written '-Infinity'")


def test_utf16_csv_and_a_csv_directory_with_a_subdirectory(spark, tmp_path, capsys):
    f = write(tmp_path / "u.csv", "a,y\n1,2\n", encoding="utf-16")
    expect_error(["--input", f, "--targets", "y"], capsys, tmp_path, "u.csv line 1", "not UTF-8")
    d = tmp_path / "parts"
    (d / "2024").mkdir(parents=True)
    write(d / "p.csv", "a,y\n1,2\n")
    write(d / "2024" / "p.csv", "a,y\n3,4\n")
    expect_error(["--input", d, "--targets", "y"], capsys, tmp_path, "2024", "only CSV files")


def test_sklearn_csv_with_a_value_that_is_not_a_class_index(spark, tmp_path, capsys):
    f = write(tmp_path / "s.csv", "4,2,c0,c1\n1.0,2.0,0\n1.5,2.5,1\n2.0,3.0,2\n2.5,3.5,1\n")
    expect_error(["--input", f], capsys, tmp_path, "s.csv line 4", "column 'target'", "'2' is not a class index 0..1")


def test_errors_in_a_later_part_name_that_part_and_its_line(spark, tmp_path, capsys):
    df = table()
    d = tmp_path / "parts"
    d.mkdir()
    df.iloc[:60].to_csv(d / "part-0.csv", index=False)
    later = df.iloc[60:][["t", "y", "b", "a"]].astype(str)  # reordered: values are found by name
    later.iloc[6, 2] = "1.2.3"
    later.to_csv(d / "part-1.csv", index=False)
    expect_error(["--input", d, "--targets", "y"], capsys, tmp_path, "part-1.csv line 8", "column 'b'",
                 "'1.2.3' is not a number")
    text = (d / "part-1.csv").read_text().splitlines()
    text[3] += ",surplus"
    (d / "part-1.csv").write_text("\n".join(text) + "\n")
    expect_error(["--input", d, "--targets", "y"], capsys, tmp_path, "part-1.csv line 4", "expected 4 fields")


def test_rfc4180_parts_next_to_plain_parts(spark, tmp_path, capsys):
    df = table()
    df["t"] = np.r_[df.t.iloc[:60], df.t.iloc[60:].map({"red": "re\nd", "green": 'gr"e"en', "blue": "blue"})]
    d = tmp_path / "parts"
    d.mkdir()
    df.iloc[:60].to_csv(d / "part-0.csv", index=False)
    df.iloc[60:].to_csv(d / "part-1.csv", index=False)
    df.to_parquet(tmp_path / "one.parquet")
    pd.testing.assert_frame_equal(rank_ok(tmp_path, capsys, "o1", "--input", d, "--targets", "y"),
                                  rank_ok(tmp_path, capsys, "o2", "--input", tmp_path / "one.parquet", "--targets",
                                          "y"), check_exact=True)


def test_headers_and_records_through_hadoop_for_a_uri(spark, tmp_path):
    with gzip.open(tmp_path / "h.csv.gz", "wt", encoding="utf-8-sig", newline="") as fh:
        fh.write('a,t,y\r\n1,"x\r\ny",2\r\n3,z\r\n')
    (f,), _ = data_files(spark, "file://" + str(tmp_path / "h.csv.gz"))
    h = C.read_header(spark, f, ",")
    assert h.names == ["a", "t", "y"]
    path, line, msg = C.find_bad_record(spark, [f], {f.path: h}, 3)
    assert (path, line) == (f.path, 4) and "found 2" in msg


def test_files_where_finds_the_part_spark_flags(spark, tmp_path):
    d = tmp_path / "parts"
    d.mkdir()
    for i in range(3):
        write(d / f"part-{i}.csv", "a,y\n" + "".join(f"{j},{j % 2}\n" for j in range(5)) + ("7\n" if i == 1 else ""))
    files = C.csv_files(spark, str(d))
    headers = [C.read_header(spark, f, ",") for f in files]
    groups = C._groups(spark, headers, ["a", "y"], "_corrupt")
    from spark_fr.data.columns import qcol

    assert [f.name for f in C._files_where(groups, ["a", "y"], "_corrupt", files, qcol("_corrupt").isNotNull())] \
        == ["part-1.csv"]
    assert [f.name for f in C._files_where(groups, ["a", "y"], "_corrupt", files, qcol("a") == "3")] == \
        ["part-0.csv", "part-1.csv", "part-2.csv"]


def test_bad_csv_part_in_a_real_process_is_one_quiet_line(tmp_path):
    """No Spark ERROR log, no Java or Python stack: only the error line (and Spark's start-up banner)."""
    d = tmp_path / "parts"
    d.mkdir()
    table().iloc[:60].to_csv(d / "part-0.csv", index=False)
    rows = (d / "part-0.csv").read_text().splitlines()
    rows[5] = rows[5].replace(",", ',"', 1)
    (d / "part-1.csv").write_text("\n".join(rows) + "\n")
    out = tmp_path / "o"
    r = subprocess.run([sys.executable, str(JOB), "--input", str(d), "--targets", "y", "--trees", "5",
                        "--output", str(out)], capture_output=True, text=True, env=_subprocess_env(), timeout=300)
    assert r.returncode == 2, r.stderr[-3000:]
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "part-1.csv line 6: a quoted value opens here" in errors[0], r.stderr[-3000:]
    noise = [ln for ln in r.stderr.splitlines() if " ERROR " in ln or ln.lstrip().startswith("at ")
             or "Traceback" in ln or "Exception" in ln]
    assert noise == [], noise[:5]
    assert not out.exists()
