"""Hostile ARFF input through the real job (``jobs/rank.py`` in this process, on the test Spark session):
exit code 2, exactly one ``error:`` line naming the file, the line and the attribute, nothing written.
Also: a gzip-compressed ARFF file ranks exactly like the plain file."""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import run_job

HEAD = "@relation t\n@attribute a numeric\n@attribute b {x,y}\n@attribute c numeric\n@data\n"
ROWS = [f"{{0 {i}, 1 {'xy'[i % 2]}, 2 {i % 3}}}" for i in range(40)]  # sparse: features in a vector column
RANGE = "attributes are 0 'a' .. 2 'c'"


def expect_one_error(args, capsys, tmp_path) -> str:
    """Run the job; check exit code 2, one ``error:`` line and no output; return that line."""
    out_dir = tmp_path / "out"
    code, _, err = run_job([str(a) for a in args] + ["--output", out_dir, "--trees", 5], capsys)
    errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert code == 2, err[-3000:]
    assert len(errors) == 1, err[-3000:]
    assert not out_dir.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")], "temporary output left behind"
    return errors[0]


def sparse_file(tmp_path: Path, bad_row: str, at: int = 30, name: str = "s.arff") -> Path:
    rows = list(ROWS)
    rows[at] = bad_row
    path = tmp_path / name
    path.write_text(HEAD + "\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize(
    ("bad_row", "message"),
    [
        ("{0 3, 7 1, 2 1}", f"s.arff line 36: sparse index 7 out of range (entry 2 of the row; {RANGE})"),
        ("{-1 3, 1 x, 2 1}", f"s.arff line 36: sparse index -1 out of range (entry 1 of the row; {RANGE})"),
        ("{0 3, 1.0 x, 2 1}", f"s.arff line 36: sparse index '1.0' is not an integer (entry 2 of the row; {RANGE})"),
        ("{0 3, 1 x, 0 4}", "s.arff line 36: attribute 'a': sparse index 0 given twice"),
        ("{0 3, 1 z, 2 1}", "s.arff line 36: attribute 'b': 'z' is not in the domain {x, y}"),
        ("{0 3, 1 x, 2 one}", "s.arff line 36: attribute 'c': 'one' is not a number"),  # the target column
    ],
    ids=["index-out-of-range", "negative-index", "non-integer-index", "index-twice", "undeclared-nominal",
         "target-not-a-number"],
)
def test_hostile_sparse_row(spark, tmp_path, capsys, bad_row, message):
    line = expect_one_error(["--input", sparse_file(tmp_path, bad_row), "--targets", "c"], capsys, tmp_path)
    assert line == f"error: {message}"


def test_earliest_hostile_sparse_row_is_reported(spark, tmp_path, capsys):
    rows = list(ROWS)
    rows[12], rows[30] = "{0 3, 1 z, 2 1}", "{0 3, 9 1}"
    path = tmp_path / "two.arff"
    path.write_text(HEAD + "\n".join(rows) + "\n")
    line = expect_one_error(["--input", path, "--targets", "c"], capsys, tmp_path)
    assert line == "error: two.arff line 18: attribute 'b': 'z' is not in the domain {x, y}"


def gzip_copy(src: Path, target: Path) -> Path:
    target.write_bytes(gzip.compress(src.read_bytes()))
    return target


def ranking(out_dir: Path) -> pd.DataFrame:
    table = pd.read_csv(out_dir / "ranking.csv")
    cols = ["score", "target", "feature", "rank", "importance", "importance_std"]
    return table[cols].sort_values(["score", "target", "feature"]).reset_index(drop=True)


def test_gzip_arff_ranks_like_the_plain_file(spark, datasets, tmp_path, capsys):
    plain = datasets / "mtr_enb/enb.arff"
    packed = gzip_copy(plain, tmp_path / "enb.arff.gz")
    tables = []
    for source, out in ((plain, tmp_path / "plain"), (packed, tmp_path / "packed")):
        code, _, err = run_job(["--input", source, "--targets", "Y1,Y2", "--trees", 8, "--seed", 4,
                                "--output", out], capsys)
        assert code == 0, err[-3000:]
        tables.append(ranking(out))
    assert len(tables[0]) == 24  # 8 features x 3 scores
    pd.testing.assert_frame_equal(tables[0], tables[1], check_exact=True)


def test_gzip_arff_with_a_bad_row_is_located(spark, tmp_path, capsys):
    packed = gzip_copy(sparse_file(tmp_path, "{0 3, 1 z, 2 1}", at=7), tmp_path / "s.arff.gz")
    line = expect_one_error(["--input", packed, "--targets", "c"], capsys, tmp_path)
    assert line == "error: s.arff.gz line 13: attribute 'b': 'z' is not in the domain {x, y}"


@pytest.mark.parametrize("case", ["truncated", "gzip-without-gz-name", "gz-name-without-gzip"])
def test_bad_gzip_input(spark, datasets, tmp_path, capsys, case):
    data = gzip.compress((datasets / "mtr_enb/enb.arff").read_bytes())
    if case == "truncated":
        path, expected = tmp_path / "t.arff.gz", "error: t.arff.gz: corrupt or truncated gzip data ("
        path.write_bytes(data[: len(data) // 2])
    elif case == "gzip-without-gz-name":
        path = tmp_path / "g.arff"
        expected = "error: g.arff: the file is gzip-compressed but its name does not end in .gz"
        path.write_bytes(data)
    else:
        path = tmp_path / "p.arff.gz"
        expected = "error: p.arff.gz: the name ends in .gz but the file is not gzip-compressed"
        path.write_bytes((datasets / "mtr_enb/enb.arff").read_bytes())
    line = expect_one_error(["--input", path, "--targets", "Y1,Y2"], capsys, tmp_path)
    assert line.startswith(expected), line


def test_bad_value_in_a_wide_dense_file(spark, tmp_path, capsys):
    # more than WIDE_FEATURES features: dense rows also go into the vector column (the same error path)
    width = 1001
    head = "@relation w\n" + "".join(f"@attribute f{j} numeric\n" for j in range(width)) + "@attribute y {a,b}\n@data\n"
    rows = [",".join(str((i * j) % 7) for j in range(width)) + f",{'ab'[i % 2]}" for i in range(30)]
    rows[20] = rows[20].replace("0,", "zero,", 1)
    path = tmp_path / "wide.arff"
    path.write_text(head + "\n".join(rows) + "\n")
    line = expect_one_error(["--input", path, "--targets", "y"], capsys, tmp_path)
    assert line == f"error: wide.arff line {width + 4 + 20}: attribute 'f0': 'zero' is not a number"
