"""Tests of spark_fr.io.arff.plain and the driver's parse of uncompressed files: plain chunks read by pyarrow as they
are, every other chunk through the lines, the same rows and errors as the text reader's lines."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from tests.io.arff.arff_helpers import write
from spark_fr.io.arff.plain import byte_ranges, data_offset, plain_shape, read_range, text_lines
from spark_fr.io.arff.source import open_text

HEADER = "@relation r\n@attribute a numeric\n@attribute b {x,y}\n@attribute c numeric\n@data\n"
#: pieces lines are made of: plain ones and every kind of character the plain test must refuse
PIECES = ["1.5", "2", "?", "x", "y", ",", " ", "'", '"', "{", "}", "%", "@", "\t", "\r", "\x0c", "é", "-3e2"]


def slow_plain_shape(text: bytes):
    """The definition: every line non-empty, printable ASCII without ' " { } % @, no space at either end."""
    lines = text.split(b"\n")
    if text.endswith(b"\n"):
        lines = lines[:-1]
    if not text:
        return None
    for line in lines:
        if not line or line[:1] == b" " or line[-1:] == b" ":
            return None
        if any(c < 32 or c > 126 or c in b"'\"{}%@" for c in line):
            return None
    return len(lines), max(len(line) for line in lines)


def test_plain_shape_equals_its_definition_on_random_chunks():
    rng = np.random.default_rng(7)
    seen = {True: 0, False: 0}
    for _ in range(3000):
        lines = []
        for _ in range(rng.integers(1, 6)):
            weights = np.r_[np.full(6, 12.0), np.ones(len(PIECES) - 6)]
            picks = rng.choice(len(PIECES), size=rng.integers(0, 6), p=weights / weights.sum())
            lines.append("".join(PIECES[i] for i in picks))
        text = ("\n".join(lines) + ("\n" if rng.random() < 0.7 else "")).encode("utf-8")
        want = slow_plain_shape(text)
        assert plain_shape(text) == want, text
        seen[want is not None] += 1
    assert min(seen.values()) > 300  # both answers were exercised


def test_byte_ranges_cover_the_data_in_whole_lines(tmp_path):
    rng = np.random.default_rng(3)
    rows = "".join(f"{rng.random():.{rng.integers(1, 12)}f},x,{i}\n" for i in range(5000))
    for tail in ("", "1,y,2"):  # with and without a final newline
        path = str(write(tmp_path, HEADER + rows + tail))
        start = data_offset(path, 5)
        data = open(path, "rb").read()[start:]
        assert data.startswith(rows[:20].encode())
        for parts in (1, 2, 3):
            for size in (1, 100, 4096, 1 << 20):
                ranges = byte_ranges(path, start, parts, size)
                pieces = [read_range(*r) for r in ranges]
                assert b"".join(pieces) == data
                assert all(p.endswith(b"\n") for p in pieces[:-1])
                assert len(ranges) % parts == 0 or size == 1  # whole lines: fewer than asked only past one per line


def test_data_offset_refuses_a_header_with_carriage_returns(tmp_path):
    assert data_offset(str(write(tmp_path, HEADER + "1,x,2\n", newline="\r\n")), 5) is None
    assert data_offset(str(write(tmp_path, HEADER + "1,x,2\r\n")), 5) == len(HEADER)


def test_text_lines_equal_the_text_readers_lines(tmp_path):
    body = b"1,x,2\r\n3,y,4\r5,x,6\n\n % c\n7,\xff\xfe,8\n9,y,1"
    path = tmp_path / "t.arff"
    path.write_bytes(HEADER.encode() + body)
    with open_text(str(path)) as fh:
        want = [line.rstrip("\r\n") for line in fh][5:]
    assert text_lines(body) == want


CASES = {
    "plain": "".join(f"{i * 0.25},{'xy'[i % 2]},{i % 5}\n" for i in range(300)),
    "missing and no final newline": "".join(f"{i},?,{i % 3}\n" for i in range(300)) + "?,x,1",
    "missing numbers and NaN": "".join(f"{'?' if i % 4 == 0 else i},x,{'NaN' if i % 9 == 0 else i}\n"
                                       for i in range(300)),
    "crlf": "".join(f"{i},x,{i}\r\n" for i in range(300)),
    "comments and blank lines": "".join(f"{i},y,{i}\n" + ("% note\n\n" if i % 50 == 0 else "") for i in range(300)),
    "quotes and sparse rows": "".join(f"{i},'x',{i}\n" if i % 7 else f"{{0 {i}, 1 y}}\n" for i in range(300)),
    "spaces around lines": "".join(f" {i},x,{i} \n" for i in range(300)),
    "spaces after commas": "".join(f"{i}, y, {i}\n" for i in range(300)),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("threads", ["1", "2"])
def test_driver_batches_equal_the_line_parse(tmp_path, monkeypatch, case, threads):
    """The driver's byte ranges (plain ones straight to pyarrow) give the rows the text reader's lines give."""
    from spark_fr.io.arff import plain
    from spark_fr.io.readers import read_dataset

    monkeypatch.setattr(plain, "CHUNK_BYTES", 997)  # several ranges, cut anywhere
    monkeypatch.setenv("SPARK_FR_DRIVER_THREADS", threads)
    source = read_dataset(None, str(write(tmp_path, HEADER + CASES[case]))).batch_source()
    got = pa.Table.from_batches(source.driver_batches())
    want = pa.Table.from_batches([b.select(source.names) for b in source.parse(source._lines())])
    assert got.num_rows == want.num_rows > 250
    assert got.equals(want)


def test_a_bad_line_is_the_same_error_as_from_the_lines(tmp_path, monkeypatch):
    from spark_fr.io.arff import plain
    from spark_fr.io.readers import read_dataset

    monkeypatch.setattr(plain, "CHUNK_BYTES", 997)
    rows = [f"{i},x,{i}" for i in range(300)]
    rows[123] = "1.0,zz,3"  # not a category of b: plain bytes that pyarrow reads, the domain check refuses
    source = read_dataset(None, str(write(tmp_path, HEADER + "\n".join(rows) + "\n"))).batch_source()

    def errors(batches):
        return [e for b in batches for e in b.column("_error").to_pylist() if e is not None]

    got, want = errors(source.driver_batches()), errors(source.parse(source._lines()))
    assert len(got) == len(want) == 1 and got == want and "1.0,zz,3" in got[0]


def test_plain_ranges_are_read_by_pyarrow_as_they_are(tmp_path):
    """The plain case's ranges take the fast path (not the lines), and give their lines' rows."""
    from spark_fr.io.arff import ArffRowParser, read_header

    path = str(write(tmp_path, HEADER + CASES["plain"]))
    header = read_header(path)
    parser = ArffRowParser(header)
    ranges = byte_ranges(path, data_offset(path, header.data_line), 2, 997)
    assert len(ranges) == 4
    for r in ranges:
        chunk = read_range(*r)
        fast, lines = parser.parse_plain(chunk), parser.parse_lines(text_lines(chunk))
        assert fast is not None and fast.n_rows == lines.n_rows
        assert all(np.array_equal(fast.numeric[a], lines.numeric[a]) for a in (0, 2))
        assert fast.nominal[1] == lines.nominal[1]
    assert parser.parse_plain(b"1,x,2\n3,x\n") is None  # pyarrow refuses a short row: the lines' path says why


def test_plain_columns_are_pyarrows_own_where_their_nulls_are_the_missing_values(tmp_path):
    """A plain range's numeric columns are the CSV reader's Arrow arrays when their nulls are exactly the missing
    values (``?``); where pyarrow read a ``NaN`` (missing to ARFF, not null to pyarrow) the column is made from its
    values, as the lines' path makes it. Either way: the values with a null at each missing one."""
    from spark_fr.io.arff import ArffRowParser, read_header

    path = str(write(tmp_path, HEADER + CASES["missing numbers and NaN"]))
    parser = ArffRowParser(read_header(path))
    fast = parser.parse_plain(read_range(path, data_offset(path, read_header(path).data_line), 10**6))
    assert sorted(fast.arrow) == [0]  # a: "?" only; c has NaNs
    for a in (0, 2):
        v = fast.numeric[a]
        got = fast.numeric_arrow(a)
        assert got.equals(pa.array(v, pa.float64(), mask=np.isnan(v)))
        assert got.null_count == np.isnan(v).sum() > 0
