"""Tests of spark_fr.io.arff.header: @relation, @attribute types and domains, Clus hierarchical specs, read_header."""

from __future__ import annotations

import numpy as np
import pytest

from tests.io.arff.arff_helpers import QUOTED, header_of, parse_text, write
from spark_fr.io.arff import ArffError, ArffRowParser, read_header
from spark_fr.io.arff.errors import Problem
from spark_fr.io.arff.header import domain_text, parse_attribute, parse_domain, parse_relation


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_quoted_header(tmp_path, newline):
    header = read_header(str(write(tmp_path, QUOTED, newline=newline)))
    assert header.relation == "my relation"
    names = [a.name for a in header.attributes]
    assert names == ["first name", "it's", "x3", "tab\tname", "d", "h", 'q"uote\\']
    kinds = [a.kind for a in header.attributes]
    assert kinds == ["string", "nominal", "numeric", "numeric", "date", "hierarchical", "numeric"]
    assert header.attributes[1].values == ("a,b", "c d", "e'f", "plain")
    assert header.attributes[5].hierarchy == "A,A/A1,B"
    assert header.attributes[0].values is None and header.attributes[0].hierarchy is None
    assert header.data_line == 12
    assert header.sparse is False


def test_no_data_rows(tmp_path):
    header, rows = parse_text(tmp_path, "@relation r\n@attribute a numeric\n@attribute b {x,y}\n@data\n% nothing\n\n")
    assert header.sparse is None
    assert rows.n_rows == 0
    assert rows.numeric[0].dtype == np.float64 and rows.numeric[0].shape == (0,)
    assert rows.nominal[1] == []
    empty = ArffRowParser(header).parse_lines_sparse([], [0, 1])
    assert empty.n_rows == 0 and empty.indptr.tolist() == [0] and empty.values.size == 0


def test_header_is_streamed(tmp_path):
    # the data part is not read beyond the first row: invalid rows do not matter to read_header
    text = "@relation r\n@attribute a numeric\n@data\n{0 1}\n" + "garbage,,,\n" * 1000
    header = header_of(tmp_path, text)
    assert header.sparse is True and header.data_line == 3


def test_nominal_with_space_separated_braces(tmp_path):
    header = header_of(tmp_path, "@relation r\n@attribute a{x, y ,z}\n@attribute b { 'p q' , r }\n@data\n")
    assert header.attributes[0].values == ("x", "y", "z")
    assert header.attributes[1].values == ("p q", "r")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("@relation r\n@attribute a numeric\n", "t.arff line 2: no @data line found"),
        ("@relation r\n@attribute a numeric\n\n@attribute a real\n@data\n",
         "t.arff line 4: duplicate attribute name 'a' (attributes 1 and 2; the first on line 2); pass "
         "--duplicate-names rename to read the repeat as 'a__2'"),
        ("@relation r\n@attribute a\n@data\n", "t.arff line 2: attribute 'a': missing type"),
        ("@relation r\n@attribute a numbers\n@data\n", "t.arff line 2: attribute 'a': unknown type 'numbers'"),
        ("@relation r\n@attribute a numeric extra\n@data\n",
         "t.arff line 2: attribute 'a': unexpected text after type numeric: 'extra'"),
        ("@relation r\n@attribute a {x,y\n@data\n", "t.arff line 2: attribute 'a': nominal domain has no closing '}'"),
        ("@relation r\n@attribute a {x,x}\n@data\n", "t.arff line 2: attribute 'a': nominal value 'x' declared twice"),
        ("@relation r\n@attribute 'a numeric\n@data\n", "t.arff line 2: unterminated quote"),
        ("@relation r\n@attribute c hierarchical\n@data\n",
         "t.arff line 2: attribute 'c': hierarchical type without a class specification"),
        ("@relation r\n@attribute b relational\n@data\n",
         "t.arff line 2: attribute 'b': relational attributes are not supported"),
        ("@relation r\nfoo bar\n@data\n", "t.arff line 2: unexpected header line 'foo bar'"),
        ("@relation r\n@data\n", "t.arff line 2: no @attribute declared before @data"),
    ],
)
def test_header_errors(tmp_path, text, message):
    with pytest.raises(ArffError) as info:
        header_of(tmp_path, text)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(ArffError, match="nope.arff: cannot open"):
        read_header(str(tmp_path / "nope.arff"))


@pytest.mark.parametrize(
    ("rest", "expected"),
    [
        (" x real", ("x", "numeric", None, None)),
        (" x INTEGER % note", ("x", "numeric", None, None)),
        (" 'a b' string", ("a b", "string", None, None)),
        (' d date "yyyy-MM-dd"', ("d", "date", None, None)),
        (" c {no, 'maybe so', yes}", ("c", "nominal", ("no", "maybe so", "yes"), None)),
        (" c{'}', ','} % braces in quotes", ("c", "nominal", ("}", ","), None)),
        (" h hierarchical  root/A, A/B ", ("h", "hierarchical", None, "root/A, A/B")),
    ],
)
def test_parse_attribute(rest, expected):
    a = parse_attribute(rest)
    assert (a.name, a.kind, a.values, a.hierarchy) == expected


@pytest.mark.parametrize(
    ("rest", "reason"),
    [
        ("", "missing attribute name"),
        (" x {}", "attribute 'x': empty nominal domain {}"),
        (" x {a,,b}", "attribute 'x': empty value in nominal domain {a,,b}"),
        (" x {a} tail", "attribute 'x': unexpected text after nominal domain: 'tail'"),
        (" x string more", "attribute 'x': unexpected text after type string: 'more'"),
    ],
)
def test_parse_attribute_errors(rest, reason):
    with pytest.raises(Problem) as info:
        parse_attribute(rest)
    assert str(info.value) == reason


def test_quoted_empty_domain_value_is_allowed():
    assert parse_domain("{'', a}") == ("", "a")


def test_relation_and_domain_text():
    assert parse_relation(" 'my rel' ") == "my rel"
    assert parse_relation(" plain name ") == "plain name"
    assert domain_text(("a", "b")) == "{a, b}"
    assert domain_text(tuple("abcdefghij"), limit=3) == "{a, b, c, ...}"


def test_header_of_a_sparse_file_with_comments_before_the_first_row(tmp_path):
    header = header_of(tmp_path, "@relation r\n@attribute a numeric\n@data\n% c\n\n  {0 1}\n")
    assert header.sparse is True and header.data_line == 3 and header.relation == "r"
