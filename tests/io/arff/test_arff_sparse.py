"""Tests of spark_fr.io.arff.sparse: sparse rows, their defaults, CSR output and hostile indices and values."""

from __future__ import annotations

import numpy as np
import pytest

from tests.io.arff.arff_helpers import SPARSE, assert_sparse_matches_dense, data_lines, header_of, parse_text, write
from spark_fr.io.arff import (ArffError, ArffLineError, ArffRowParser, find_line_number, format_line_error, read_header,
                              sparse)
from spark_fr.io.arff.cells import CellConverter
from spark_fr.io.arff.errors import Problem
from spark_fr.io.arff.sparse import check_index, full_row, index_entries, sparse_cells


def test_sparse_semantics(tmp_path):
    header, rows = parse_text(tmp_path, SPARSE)
    assert header.sparse is True
    assert rows.n_rows == 6
    np.testing.assert_array_equal(rows.numeric[0], [1.5, 0, 0, 2.5, 0, 0])
    assert rows.nominal[1] == ["x", "x", None, "z", "y", "z"]
    np.testing.assert_array_equal(rows.numeric[2], [0, 0, np.nan, 0, 3, 0])
    assert rows.nominal[3] == ["yes", "no", "no", "no", "no", "yes"]
    assert rows.nominal[4] == [None, None, "hello world", "abc", None, None]
    # a run of unquoted sparse rows (vectorized path) with missing values
    plain = ArffRowParser(header).parse_lines(["{1 ?, 3 yes, 4 ?}", "{0 1, 2 ?}", "{4 txt}"])
    assert plain.nominal[1] == [None, "x", "x"]
    assert plain.nominal[3] == ["yes", "no", "no"]
    assert plain.nominal[4] == [None, None, "txt"]
    np.testing.assert_array_equal(plain.numeric[2], [0, np.nan, 0])


def test_sparse_csr_matches_dense(tmp_path):
    path = write(tmp_path, SPARSE)
    header = read_header(str(path))
    lines = data_lines(path, header)
    result = assert_sparse_matches_dense(header, lines, [0, 1, 2])
    assert result.indptr.tolist() == [0, 1, 1, 3, 5, 7, 8]
    assert result.indices.tolist() == [0, 1, 2, 0, 1, 1, 2, 1]
    np.testing.assert_array_equal(result.values, [1.5, np.nan, np.nan, 2.5, 2.0, 1.0, 3.0, 2.0])
    assert result.other.nominal[3] == ["yes", "no", "no", "no", "no", "yes"]
    # feature order defines the CSR columns; unsorted feature lists still give sorted rows
    assert_sparse_matches_dense(header, lines, [2, 0])
    assert_sparse_matches_dense(header, lines, [3, 1, 0])


def test_sparse_feature_validation(tmp_path):
    header = header_of(tmp_path, SPARSE)
    parser = ArffRowParser(header)
    with pytest.raises(ArffError, match="'s' is string"):
        parser.parse_lines_sparse([], [0, 4])
    with pytest.raises(ArffError, match="out of range"):
        parser.parse_lines_sparse([], [7])
    with pytest.raises(ArffError, match="repeated"):
        parser.parse_lines_sparse([], [0, 0])


def test_sparse_first_domain_value_with_spaces(tmp_path):
    text = "@relation s\n@attribute c {' a ', b}\n@attribute n numeric\n@data\n{1 2}\n{0 b}\n"
    _, rows = parse_text(tmp_path, text)
    assert rows.nominal[0] == [" a ", "b"]


# ------------------------------------------------------------------ hostile sparse rows

HOSTILE = "@relation h\n@attribute a numeric\n@attribute b {x,y}\n@attribute c numeric\n@data\n"
GOOD = ["{0 1, 1 y, 2 3}", "{2 1}", "{0 2, 1 x}"]
RANGE = "attributes are 0 'a' .. 2 'c'"


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "python"])
@pytest.mark.parametrize("method", ["parse_lines", "parse_lines_sparse"])
@pytest.mark.parametrize(
    ("row", "reason"),
    [
        ("{0 3, 7 1, 2 1}", f"sparse index 7 out of range (entry 2 of the row; {RANGE})"),
        ("{0 3, 3 1}", f"sparse index 3 out of range (entry 2 of the row; {RANGE})"),
        ("{-1 4, 2 1}", f"sparse index -1 out of range (entry 1 of the row; {RANGE})"),
        ("{0 3, 1.5 4}", f"sparse index '1.5' is not an integer (entry 2 of the row; {RANGE})"),
        ("{0 3, b y}", f"sparse index 'b' is not an integer (entry 2 of the row; {RANGE})"),
        ("{99999999999999999999 1}", f"sparse index 99999999999999999999 out of range (entry 1 of the row; {RANGE})"),
        ("{2 1, 0 3, 2 4}", "attribute 'c': sparse index 2 given twice"),
        ("{0 3, 1 z}", "attribute 'b': 'z' is not in the domain {x, y}"),
        ("{0 3, 1 'x '}", "attribute 'b': 'x ' is not in the domain {x, y}"),
        ("{0 3, 2 x}", "attribute 'c': 'x' is not a number"),
        ("{0 3,, 2 1}", "empty sparse entry"),
    ],
)
def test_hostile_sparse_rows(tmp_path, monkeypatch, row, reason, method, fast):
    header = header_of(tmp_path, HOSTILE)
    if not fast:
        monkeypatch.setattr(sparse, "arrow_entries", refuse)
    parser = ArffRowParser(header)
    lines = GOOD + [row] + GOOD
    with pytest.raises(ArffLineError) as info:
        if method == "parse_lines":
            parser.parse_lines(lines)
        else:
            parser.parse_lines_sparse(lines, [0, 1])
    assert (info.value.reason, info.value.line_text) == (reason, row)


def refuse(*args, **kwargs):
    raise Problem("fast path disabled in this test")


def test_hostile_sparse_rows_are_located_in_the_file(tmp_path):
    path = write(tmp_path, HOSTILE + "\n".join(GOOD + ["{0 3, 7 1, 2 1}"] + GOOD) + "\n", name="h.arff")
    header = read_header(str(path))
    with pytest.raises(ArffLineError) as info:
        ArffRowParser(header).parse_lines_sparse(data_lines(path, header), [0, 1])
    line_no = find_line_number(str(path), info.value.line_text, header.data_line + 1)
    assert format_line_error(str(path), line_no, info.value) == (
        f"h.arff line 9: sparse index 7 out of range (entry 2 of the row; {RANGE})")


def test_check_index_and_full_row(tmp_path):
    conv = CellConverter(header_of(tmp_path, HOSTILE).attributes)
    assert check_index(conv, "2", 0) == 2 and check_index(conv, "+1", 0) == 1
    with pytest.raises(Problem, match="out of range"):
        check_index(conv, "3", 0)
    assert index_entries(conv, [("2", "5"), ("0", "1")]) == {2: "5", 0: "1"}
    assert full_row(conv, {2: "5"}) == ["0", "x", "5"]  # Weka's defaults: 0, the first domain value
    assert full_row(conv, ["1", "y", "2"]) == ["1", "y", "2"]
    assert sparse_cells(conv, "{1 'y'}") == ({1: "y"}, True)
    assert sparse_cells(conv, "{}") == ({}, False)
    with pytest.raises(Problem, match="does not end with"):
        sparse_cells(conv, "{0 1")
