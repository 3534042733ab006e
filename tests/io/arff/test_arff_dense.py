"""Tests of spark_fr.io.arff.dense: dense rows (pyarrow fast path, Python path, quoting, CSR of dense rows)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.io.arff.arff_helpers import QUOTED, header_of, parse_text, write
from spark_fr.io.arff import ArffRowParser, dense, read_header
from spark_fr.io.arff.cells import CellConverter
from spark_fr.io.arff.dense import arrow_columns, csv_columns, dense_cells, dense_to_csr, python_columns
from spark_fr.io.arff.errors import Problem
from spark_fr.io.arff.tokens import Quoted


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_quoted_rows(tmp_path, newline):
    path = write(tmp_path, QUOTED, newline=newline)
    header = read_header(str(path))
    with open(path, "rb") as handle:  # raw lines, keeping '\r\n' as a naive splitter would
        raw = handle.read().decode().split("\n")[header.data_line :]
    rows = ArffRowParser(header).parse_lines(raw)
    assert rows.n_rows == 5
    assert rows.nominal[0] == ["John Smith", "O'Brien", "x", "plain", "?"]  # quoted '?' is a value
    assert rows.nominal[1] == ["a,b", "c d", "e'f", "plain", "plain"]
    np.testing.assert_array_equal(rows.numeric[2], [1.5, np.nan, -2000.0, 7.0, 1.0])
    np.testing.assert_array_equal(rows.numeric[3], [2, 3, 4, 8, 1])
    assert rows.nominal[4] == ["2020-01-01 10:00:00", None, "2020-01-02 00:00:00", None, None]
    assert rows.nominal[5] == ["A/A1@B", None, "B", "A", "A"]
    np.testing.assert_array_equal(rows.numeric[6], [1, 2, 3, np.nan, 4])


def test_quoted_value_keeps_inner_spaces(tmp_path):
    text = "@relation r\n@attribute s string\n@attribute n numeric\n@data\n'  a b ',1\n c d ,2\n"
    _, rows = parse_text(tmp_path, text)
    assert rows.nominal[0] == ["  a b ", "c d"]


def test_unquoted_missing_with_spaces_in_numeric_column(tmp_path):
    # ' ?' defeats the pyarrow fast path; the Python path must give the same answer
    _, rows = parse_text(tmp_path, "@relation r\n@attribute a numeric\n@attribute b {x,y}\n@data\n1, ?\n ? ,x\n2,y\n")
    np.testing.assert_array_equal(rows.numeric[0], [1.0, np.nan, 2.0])
    assert rows.nominal[1] == [None, "x", "y"]


DENSE = "@relation d\n@attribute n numeric\n@attribute c {x,y}\n@attribute s string\n@data\n"


def converter(tmp_path):
    return CellConverter(header_of(tmp_path, DENSE).attributes)


def test_dense_cells(tmp_path):
    conv = converter(tmp_path)
    assert dense_cells(conv, "1, x ,abc") == (["1", " x ", "abc"], False)
    cells, quoted = dense_cells(conv, "1,'x','a, b'")
    assert quoted and cells == ["1", "x", "a, b"] and isinstance(cells[2], Quoted)
    with pytest.raises(Problem, match=r"expected 3 values, found 2 \(no value for attribute 's'\)"):
        dense_cells(conv, "1,x")
    with pytest.raises(Problem, match="expected 3 values, found 4"):
        dense_cells(conv, "1,x,a,b")


def test_csv_fallback_equals_python_path(tmp_path):
    conv = converter(tmp_path)
    lines = ["1,x,a", " ? , y , b c ", "2.5,?,?"]
    with pytest.raises(dense.FAST_PATH_FAILURES):  # " ? " with spaces: pyarrow refuses the run
        arrow_columns(conv, lines)
    got = csv_columns(conv, lines, [0, 1, 2])
    ref = python_columns(conv, lines, [0, 1, 2])
    np.testing.assert_array_equal(got.numeric[0], [1.0, np.nan, 2.5])
    np.testing.assert_array_equal(ref.numeric[0], got.numeric[0])
    assert got.nominal[1] == ref.nominal[1] == ["x", "y", None]
    assert got.nominal[2] == ref.nominal[2] == ["a", "b c", None]


def test_arrow_path_refuses_values_outside_the_domain(tmp_path):
    conv = converter(tmp_path)
    with pytest.raises(Problem, match="value outside domain"):
        arrow_columns(conv, ["1,z,a"])
    assert arrow_columns(conv, ["1,y,a", "2,x,?"]).nominal[2] == ["a", None]


@pytest.mark.parametrize("block_cells", [1, 2, 5, 4_000_000])
def test_dense_to_csr_in_blocks(tmp_path, monkeypatch, block_cells):
    conv = converter(tmp_path)
    columns = csv_columns(conv, ["0,x,a", "1.5,y,b", "?,?,c", "0,y,d"], [0, 1, 2])
    monkeypatch.setattr(dense, "CSR_BLOCK_CELLS", block_cells)
    counts, indices, values = dense_to_csr(conv, columns, [1, 0])
    assert counts.tolist() == [0, 2, 2, 1]  # zeros dropped (x is domain index 0), NaN kept
    assert indices.tolist() == [0, 1, 0, 1, 0]
    np.testing.assert_array_equal(values, [1.0, 1.5, np.nan, np.nan, 1.0])


@pytest.mark.parametrize("seed", range(6))
def test_float_matrix_equals_each_columns_values(seed):
    """spark_fr.data.columns.float_matrix (one Arrow call; the ARFF ranges' numeric columns) against the obvious
    reference, each column's own values with nulls as NaN: random float64 tables of several chunks, nulls, a string
    column left out, no rows, and a record batch sliced from the table."""
    import pyarrow as pa

    from spark_fr.data.columns import float_matrix

    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(0, 40)), int(rng.integers(1, 6))
    chunks = np.sort(rng.integers(0, n + 1, size=int(rng.integers(0, 3))))
    columns = {}
    for j in range(m):
        values = [None if rng.random() < 0.2 else float(rng.normal()) for _ in range(n)]
        parts = np.split(np.arange(n), chunks)
        columns[f"c{j}"] = pa.chunked_array([pa.array([values[i] for i in p], pa.float64()) for p in parts],
                                            pa.float64())
    columns["s"] = pa.chunked_array([pa.array(["x"] * n, pa.string())])
    table = pa.table(columns)
    wanted = [j for j in range(m) if rng.random() < 0.7]
    start = int(rng.integers(0, n + 1))
    batch = table.combine_chunks().to_batches()[0].slice(start) if n else None
    for data, first in ((table, 0), (batch, start)):
        if data is None:
            continue
        M = float_matrix(data, wanted)
        assert M.shape == (data.num_rows, len(wanted)) and M.dtype == np.float64
        for q, j in enumerate(wanted):
            ref = np.array([np.nan if v is None else v for v in table.column(j).to_pylist()[first:]], np.float64)
            np.testing.assert_array_equal(M[:, q], ref)
