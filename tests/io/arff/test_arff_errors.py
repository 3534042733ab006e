"""Tests of spark_fr.io.arff.errors: row errors, the earliest bad line, locating and formatting it."""

from __future__ import annotations

import pickle

import pytest

from tests.io.arff.arff_helpers import ERRORS, data_lines, header_of, row_error, write
from spark_fr.io.arff import ArffError, ArffLineError, ArffRowParser, find_line_number, format_line_error, read_header
from spark_fr.io.arff.cells import CellConverter
from spark_fr.io.arff.errors import Problem, file_label, shorten


@pytest.mark.parametrize("method", ["parse_lines", "parse_lines_sparse"])
@pytest.mark.parametrize(
    ("row", "reason"),
    [
        ("1,x,2", "expected 4 values, found 3 (no value for attribute 't')"),
        ("1,x,2,no,5", "expected 4 values, found 5"),
        ("1,x,abc,no", "attribute 'n2': 'abc' is not a number"),
        ("1,w,2,no", "attribute 'c': 'w' is not in the domain {x, y, z}"),
        ("1,x,2,'no", "attribute 't': unterminated quote ' in \"'no\""),
        ("1,'x' y,2,no", "attribute 'c': unexpected text after quoted value 'x': 'y'"),
        ("{0 1, 9 2}", "sparse index 9 out of range (entry 2 of the row; attributes are 0 'n1' .. 3 't')"),
        ("{0 1, a 2}", "sparse index 'a' is not an integer (entry 2 of the row; attributes are 0 'n1' .. 3 't')"),
        ("{0 1, 0 2}", "attribute 'n1': sparse index 0 given twice"),
        ("{0 1, 2}", "attribute 'n2': sparse entry '2' has no value"),
        ("{0 1, 2 3", "sparse row does not end with '}'"),
        ("{2 abc}", "attribute 'n2': 'abc' is not a number"),
        ("{1 w}", "attribute 'c': 'w' is not in the domain {x, y, z}"),
        ("{3 'maybe}", "attribute 't': unterminated quote ' in \"'maybe\""),
    ],
)
def test_row_errors(tmp_path, row, reason, method):
    err = row_error(tmp_path, row, method)
    assert err.reason == reason
    assert reason in str(err)
    assert isinstance(err, ArffError) and isinstance(err, ValueError)


def test_quoted_question_mark_is_not_missing_in_numeric(tmp_path):
    err = row_error(tmp_path, "1,x,'?',no")
    assert err.reason == "attribute 'n2': '?' is not a number"


def test_earliest_error_is_reported(tmp_path):
    header = header_of(tmp_path, ERRORS)
    parser = ArffRowParser(header)
    # line 2 has a domain error in a later column, line 3 a number error in an earlier column,
    # line 4 a structural error found while reading: line 2 wins
    lines = ["1,x,2,no", "1,x,2,maybe", "abc,x,2,no", "1,x", "{0 1}"]
    with pytest.raises(ArffLineError) as info:
        parser.parse_lines(lines)
    assert info.value.line_text == "1,x,2,maybe"
    with pytest.raises(ArffLineError) as info:
        parser.parse_lines_sparse(lines, [0, 1, 2])
    assert info.value.line_text == "1,x,2,maybe"


def test_line_error_with_file_line_number(tmp_path):
    text = ERRORS + "% comment\n1,x,2,no\n\n3,y,4,yes\n5,z,six,no\n7,x,8,yes\n"
    path = write(tmp_path, text, name="bad.arff")
    header = read_header(str(path))
    parser = ArffRowParser(header)
    with pytest.raises(ArffLineError) as info:
        parser.parse_lines(data_lines(path, header))
    err = info.value
    line_no = find_line_number(str(path), err.line_text, header.data_line + 1)
    assert line_no == 11
    assert format_line_error(str(path), line_no, err) == "bad.arff line 11: attribute 'n2': 'six' is not a number"
    assert find_line_number(str(path), err.line_text + "\n", 1) == 11
    assert find_line_number(str(path), err.line_text, 11) == 11  # start_line is inclusive
    assert find_line_number(str(path), err.line_text, 12) is None
    assert "line unknown" in format_line_error(str(path), None, err)


def test_arff_line_error_message_and_pickling():
    err = ArffLineError("attribute 'a': 'x' is not a number", "x,1\r\n")
    assert str(err) == "attribute 'a': 'x' is not a number (row: 'x,1')"
    back = pickle.loads(pickle.dumps(err))
    assert (back.reason, back.line_text, str(back)) == (err.reason, err.line_text, str(err))


def test_format_line_error():
    err = ArffLineError("attribute 'b': 'z' is not in the domain {x, y}", "1,z\n")
    assert format_line_error("/data/dir/d.arff", 12, err) == (
        "d.arff line 12: attribute 'b': 'z' is not in the domain {x, y}")
    assert format_line_error("d.arff", None, err) == (
        "d.arff (line unknown): attribute 'b': 'z' is not in the domain {x, y}; row '1,z'")
    long = ArffLineError("bad", "x" * 200)
    assert "..." in format_line_error("d.arff", None, long) and len(format_line_error("d.arff", None, long)) < 120


def test_problem_carries_the_cell_and_shorten_cuts():
    assert Problem("r", 3).cell == 3 and Problem("r").cell is None
    assert shorten("abc") == "'abc'" and shorten("a" * 100, 10) == "'aaaaaaa...'"
    assert file_label("/x/y/z.arff") == "z.arff"


def test_locate_names_the_attribute_of_a_tokenizer_problem(tmp_path):
    conv = CellConverter(header_of(tmp_path, ERRORS).attributes)
    assert str(conv.locate(Problem("unterminated quote", 1))) == "attribute 'c': unterminated quote"
    assert str(conv.locate(Problem("unterminated quote", "3"))) == "attribute 't': unterminated quote"
    assert str(conv.locate(Problem("unterminated quote", "9"))) == "unterminated quote"  # no such attribute
    assert str(conv.locate(Problem("unterminated quote", "x"))) == "unterminated quote"
