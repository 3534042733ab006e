"""Tests of spark_fr.io.arff.tokens: quoting and escapes, splitting values, sparse entries, header tokens."""

from __future__ import annotations

import pytest

from spark_fr.io.arff.errors import Problem
from spark_fr.io.arff.tokens import (
    Quoted,
    entry_problem,
    has_quote,
    header_word,
    is_blank_or_comment,
    keyword,
    read_quoted,
    split_plain_sparse,
    split_quoted_values,
    split_sparse_quoted,
)


@pytest.mark.parametrize(
    ("text", "start", "value", "end"),
    [
        ("'abc' tail", 0, "abc", 5),
        ('x,"a b",y', 2, "a b", 7),
        (r"'it\'s'", 0, "it's", 7),
        (r"'a\tb\nc\\d\%e'", 0, "a\tb\nc\\d%e", 15),
        (r"'keep \q'", 0, "keep \\q", 9),  # unknown escape: the backslash is kept
        ("'a\"b'", 0, 'a"b', 5),  # the other quote character is ordinary inside
    ],
)
def test_read_quoted(text, start, value, end):
    assert read_quoted(text, start) == (value, end)


def test_read_quoted_unterminated():
    with pytest.raises(Problem, match=r"unterminated quote ' in \"'abc\""):
        read_quoted("'abc", 0)


def test_split_quoted_values_strips_unquoted_and_keeps_quoted():
    cells = split_quoted_values(" a , 'b, c ' ,\"d\",e'f, ? ")
    assert cells == ["a", "b, c ", "d", "e'f", "?"]
    assert [isinstance(c, Quoted) for c in cells] == [False, True, True, False, False]
    assert split_quoted_values("") == [""]
    assert split_quoted_values("a,") == ["a", ""]


@pytest.mark.parametrize(
    ("text", "cell", "reason"),
    [
        ("1,'x' y,2", 1, "unexpected text after quoted value 'x': 'y'"),
        ("1,2,'open", 2, "unterminated quote"),
    ],
)
def test_split_quoted_values_errors_carry_the_value_position(text, cell, reason):
    with pytest.raises(Problem, match=reason) as info:
        split_quoted_values(text)
    assert info.value.cell == cell


def test_split_plain_sparse():
    assert split_plain_sparse("") == [] and split_plain_sparse("  ") == []
    assert split_plain_sparse("0 1.5, 12  x y ,3\tz") == [("0", "1.5"), ("12", "x y"), ("3", "z")]
    with pytest.raises(Problem, match="sparse entry '2' has no value") as info:
        split_plain_sparse("0 1, 2")
    assert info.value.cell == "2"
    with pytest.raises(Problem, match="empty sparse entry") as info:
        split_plain_sparse("0 1,, 2 3")
    assert info.value.cell is None


def test_split_sparse_quoted():
    pairs = split_sparse_quoted(" 0 'a, b' , 4 plain text,7 \"q\" ")
    assert pairs == [("0", "a, b"), ("4", "plain text"), ("7", "q")]
    assert [isinstance(v, Quoted) for _, v in pairs] == [True, False, True]
    with pytest.raises(Problem, match="unterminated quote") as info:
        split_sparse_quoted("0 1, 3 'open")
    assert info.value.cell == "3"
    with pytest.raises(Problem, match="unexpected text after quoted value 'x': 'y'") as info:
        split_sparse_quoted("5 'x' y")
    assert info.value.cell == "5"
    with pytest.raises(Problem, match="sparse entry '2' has no value"):
        split_sparse_quoted("0 'a', 2")


def test_entry_problem():
    assert entry_problem("") == "empty sparse entry"
    assert entry_problem("7") == "sparse entry '7' has no value"
    assert entry_problem("7 x y") == "sparse entry '7 x y' is not '<index> <value>'"


def test_header_tokens():
    assert header_word("  name numeric", 0) == ("name", 6)
    assert header_word("a{x,y}", 0) == ("a", 1)  # a bare token ends at '{'
    assert header_word(" 'a b' real", 0) == ("a b", 6)
    assert keyword("@ATTRIBUTE x numeric") == "@attribute"
    assert keyword("@attribute{") == "@attribute"
    assert keyword("@data") == "@data"
    assert keyword("data") is None
    assert is_blank_or_comment("   ") and is_blank_or_comment("  % note") and not is_blank_or_comment("1,%")
    assert has_quote("a'b") and has_quote('"') and not has_quote("{0 1}")
