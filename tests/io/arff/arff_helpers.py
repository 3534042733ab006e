"""Helpers shared by the ARFF tests (files written to tmp_path, parsing, CSR comparisons)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from spark_fr.io.arff import ArffLineError, ArffRowParser, read_header
from tests.paths import DATASETS

needs_datasets = pytest.mark.skipif(not DATASETS.is_dir(), reason="shared datasets not available")


def data_lines(path: Path, header) -> list[str]:
    with open(path, encoding="utf-8") as handle:
        return handle.read().splitlines()[header.data_line :]


def parse_file(path: Path):
    header = read_header(str(path))
    return header, ArffRowParser(header).parse_lines(data_lines(path, header))


def write(tmp_path: Path, text: str, name: str = "t.arff", newline: str = "\n") -> Path:
    path = tmp_path / name
    path.write_bytes(text.replace("\n", newline).encode("utf-8"))
    return path


def header_of(tmp_path: Path, text: str):
    return read_header(str(write(tmp_path, text)))


def parse_text(tmp_path: Path, text: str):
    path = write(tmp_path, text)
    header = read_header(str(path))
    return header, ArffRowParser(header).parse_lines(data_lines(path, header))


def dense_features(header, rows, features):
    """Expected CSR content as a dense matrix (nominal -> domain index)."""
    out = np.empty((rows.n_rows, len(features)))
    for p, a in enumerate(features):
        attr = header.attributes[a]
        if attr.kind == "numeric":
            out[:, p] = rows.numeric[a]
        else:
            out[:, p] = [np.nan if v is None else attr.values.index(v) for v in rows.nominal[a]]
    return out


def csr_to_dense(result):
    out = np.zeros((result.n_rows, len(result.feature_indices)))
    assert result.indptr.dtype == np.int64 and result.indices.dtype == np.int32
    assert result.values.dtype == np.float64
    assert result.indptr[0] == 0 and result.indptr[-1] == len(result.indices) == len(result.values)
    for r in range(result.n_rows):
        lo, hi = result.indptr[r], result.indptr[r + 1]
        cols = result.indices[lo:hi]
        assert np.all(np.diff(cols) > 0)  # sorted, no duplicates
        out[r, cols] = result.values[lo:hi]
    assert not np.any(result.values == 0)  # zeros omitted
    return out


def assert_sparse_matches_dense(header, lines, features):
    parser = ArffRowParser(header)
    dense = parser.parse_lines(lines)
    sparse = parser.parse_lines_sparse(lines, features)
    assert sparse.n_rows == dense.n_rows == sparse.other.n_rows
    np.testing.assert_array_equal(csr_to_dense(sparse), dense_features(header, dense, features))
    others = [a for a in range(len(header.attributes)) if a not in set(features)]
    assert sorted(sparse.other.numeric) + sorted(sparse.other.nominal) == sorted(
        [a for a in others if a in dense.numeric]
    ) + sorted([a for a in others if a in dense.nominal])
    for a in sparse.other.numeric:
        np.testing.assert_array_equal(sparse.other.numeric[a], dense.numeric[a])
    for a in sparse.other.nominal:
        assert sparse.other.nominal[a] == dense.nominal[a]
    return sparse


QUOTED = r"""% a comment line
   % an indented comment

@RELATION 'my relation'
@Attribute 'first name' STRING
@attribute "it\'s" {'a,b', "c d", 'e\'f', plain}
@ATTRIBUTE	x3	REAL
@attribute 'tab\tname' integer
@attribute d DATE "yyyy-MM-dd HH:mm:ss"
@attribute h Hierarchical  A,A/A1,B
@attribute "q\"uote\\" numeric % trailing comment
@Data
'John Smith', 'a,b', 1.5, 2, '2020-01-01 10:00:00', A/A1@B, 1
'O\'Brien',"c d",?,3,?,?,2
% inner comment

"x",'e\'f', -2e3 ,4, "2020-01-02 00:00:00", B,3
plain,plain,7,8,?,A,  ?
'?',  plain  ,1,1,?,A,4
"""


SPARSE = """@relation s
@attribute n1 numeric
@attribute c {x,y,z}
@attribute n2 numeric
@attribute t {no,yes}
@attribute s string
@data
{0 1.5, 3 yes}
{}
{1 ?, 2 ?, 4 'hello world'}
2.5,z,0,no,abc
{2 3, 1 y}
{1 'z', 3 "yes"}
"""


ERRORS = """@relation e
@attribute n1 numeric
@attribute c {x,y,z}
@attribute n2 numeric
@attribute t {no,yes}
@data
"""


def row_error(tmp_path, row: str, method: str = "parse_lines") -> ArffLineError:
    header = header_of(tmp_path, ERRORS + row + "\n")
    parser = ArffRowParser(header)
    lines = ["1,x,2,no", row, "3,y,4,yes"]
    with pytest.raises(ArffLineError) as info:
        if method == "parse_lines":
            parser.parse_lines(lines)
        else:
            parser.parse_lines_sparse(lines, [0, 1])
    assert info.value.line_text == row
    return info.value
