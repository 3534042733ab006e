"""Tests of spark_fr.io.arff (pure Python, no Spark)."""

from __future__ import annotations

import math
import pickle
from pathlib import Path

import numpy as np
import pytest

from spark_fr.io.arff import dense, runs, sparse
from spark_fr.io.arff.errors import Problem
from spark_fr.io.arff import (
    ArffError,
    ArffLineError,
    ArffRowParser,
    find_line_number,
    format_line_error,
    read_header,
)

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"
needs_datasets = pytest.mark.skipif(not DATASETS.is_dir(), reason="shared datasets not available")

# file -> (attributes, numeric, nominal, hierarchical, data rows, sparse)
TABLE = {
    "mtr_enb/enb.arff": (10, 10, 0, 0, 768, False),
    "mtr_edm/edm.arff": (18, 18, 0, 0, 154, False),
    "mtr_jura/jura.arff": (18, 18, 0, 0, 359, False),
    "mtr_slump/slump.arff": (10, 10, 0, 0, 103, False),
    "mtr_atp1d/atp1d.arff": (417, 417, 0, 0, 337, False),
    "mtr_scpf/scpf.arff": (26, 26, 0, 0, 1137, False),
    "mtr_sf1/sf1.arff": (13, 3, 10, 0, 323, False),
    "mlc_emotions/emotions.arff": (78, 72, 6, 0, 593, False),
    "mlc_emotions/emotions-train.arff": (78, 72, 6, 0, 391, False),
    "mlc_emotions/emotions-test.arff": (78, 72, 6, 0, 202, False),
    "mlc_yeast/yeast.arff": (117, 103, 14, 0, 2417, False),
    "mlc_yeast/yeast-train.arff": (117, 103, 14, 0, 1500, False),
    "mlc_yeast/yeast-test.arff": (117, 103, 14, 0, 917, False),
    "mlc_scene/scene-train.arff": (300, 294, 6, 0, 1211, False),
    "mlc_scene/scene-test.arff": (300, 294, 6, 0, 1196, False),
    "mlc_medical/medical.arff": (1494, 0, 1494, 0, 978, True),
    "mlc_medical/medical-train.arff": (1494, 0, 1494, 0, 333, True),
    "mlc_medical/medical-test.arff": (1494, 0, 1494, 0, 645, True),
    "mlc_flags/flags.arff": (26, 10, 16, 0, 194, False),
    "mlc_flags/flags-train.arff": (26, 10, 16, 0, 129, False),
    "mlc_flags/flags-test.arff": (26, 10, 16, 0, 65, False),
    "hmlc_cellcycle_FUN/cellcycle_FUN.train.arff": (78, 77, 0, 1, 1628, False),
    "hmlc_cellcycle_FUN/cellcycle_FUN.valid.arff": (78, 77, 0, 1, 848, False),
    "hmlc_cellcycle_FUN/cellcycle_FUN.test.arff": (78, 77, 0, 1, 1281, False),
    "hmlc_derisi_GO/derisi_GO.train.arff": (64, 63, 0, 1, 1605, False),
    "hmlc_derisi_GO/derisi_GO.valid.arff": (64, 63, 0, 1, 842, False),
    "hmlc_derisi_GO/derisi_GO.test.arff": (64, 63, 0, 1, 1272, False),
    "hmlc_Diatoms/Diatoms_train.arff": (372, 371, 0, 1, 2065, False),
    "hmlc_Diatoms/Diatoms_test.arff": (372, 371, 0, 1, 1054, False),
}


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


# ------------------------------------------------------------------ shared datasets


@needs_datasets
def test_table_covers_every_arff_file():
    found = {p.relative_to(DATASETS).as_posix() for p in DATASETS.glob("*/*.arff")}
    assert found == set(TABLE)


@needs_datasets
@pytest.mark.parametrize("name", sorted(TABLE))
def test_dataset_header(name):
    n_attrs, n_numeric, n_nominal, n_hier, _, sparse = TABLE[name]
    header = read_header(str(DATASETS / name))
    kinds = [a.kind for a in header.attributes]
    assert len(header.attributes) == n_attrs
    assert kinds.count("numeric") == n_numeric
    assert kinds.count("nominal") == n_nominal
    assert kinds.count("hierarchical") == n_hier
    assert header.sparse is sparse
    names = [a.name for a in header.attributes]
    assert len(set(names)) == len(names)
    with open(DATASETS / name, encoding="utf-8") as handle:
        line = handle.read().splitlines()[header.data_line - 1]
    assert line.strip().lower() == "@data"


@needs_datasets
@pytest.mark.parametrize("name", sorted(TABLE))
def test_dataset_rows(name):
    n_attrs, _, _, _, n_rows, _ = TABLE[name]
    header, rows = parse_file(DATASETS / name)
    assert rows.n_rows == n_rows
    assert len(rows.numeric) + len(rows.nominal) == n_attrs
    assert all(len(v) == n_rows for v in rows.numeric.values())
    assert all(len(v) == n_rows for v in rows.nominal.values())


@needs_datasets
def test_enb_values():
    header, rows = parse_file(DATASETS / "mtr_enb/enb.arff")
    first = [rows.numeric[a][0] for a in range(10)]
    last = [rows.numeric[a][-1] for a in range(10)]
    assert first == [0.98, 514.5, 294.0, 110.25, 7.0, 2.0, 0.0, 0.0, 15.55, 21.33]
    assert last == [0.62, 808.5, 367.5, 220.5, 3.5, 5.0, 0.4, 5.0, 16.64, 16.03]
    assert header.relation == "energiency_efficiency_building"


@needs_datasets
def test_emotions_values():
    header, rows = parse_file(DATASETS / "mlc_emotions/emotions.arff")
    assert header.attributes[0].name == "Mean_Acc1298_Mean_Mem40_Centroid"
    assert rows.numeric[0][0] == 0.034741
    assert rows.numeric[3][0] == -73.302422
    labels = [a.name for a in header.attributes[-6:]]
    assert labels[0] == "amazed-suprised" and labels[-1] == "angry-aggresive"
    assert all(header.attributes[a].values == ("0", "1") for a in range(72, 78))
    assert [rows.nominal[a][0] for a in range(72, 78)] == ["0", "1", "1", "0", "0", "0"]


@needs_datasets
def test_sf1_values_with_comma_space_separators():
    header, rows = parse_file(DATASETS / "mtr_sf1/sf1.arff")
    assert header.attributes[0].values == ("A", "B", "C", "D", "E", "F", "H")
    assert [rows.nominal[a][0] for a in range(10)] == ["C", "S", "O", "1", "2", "1", "1", "2", "1", "2"]
    assert [rows.nominal[a][-1] for a in range(3)] == ["E", "K", "C"]
    assert [rows.numeric[a][-1] for a in (10, 11, 12)] == [0.0, 2.0, 0.0]
    assert header.attributes[10].name == "c-class"


@needs_datasets
def test_flags_tabs_and_mixed_types():
    header, rows = parse_file(DATASETS / "mlc_flags/flags.arff")
    attrs = header.attributes
    assert (attrs[0].name, attrs[0].kind, attrs[0].values) == ("landmass", "nominal", tuple("123456"))
    assert (attrs[2].name, attrs[2].kind) == ("area", "numeric")
    assert attrs[4].values == tuple(str(i) for i in range(1, 11))
    assert rows.nominal[0][0] == "5" and rows.nominal[1][0] == "1"
    assert rows.numeric[2][0] == 648.0 and rows.numeric[3][0] == 16.0
    assert rows.nominal[4][0] == "10" and rows.nominal[5][0] == "2"


@needs_datasets
def test_medical_sparse_rows():
    header, rows = parse_file(DATASETS / "mlc_medical/medical.arff")
    assert header.attributes[1449].name == "Class-0-593_70"
    ones = {a for a in range(1494) if rows.nominal[a][0] == "1"}
    assert ones == {80, 199, 392, 571, 866, 1234, 1416, 1453}
    assert all(rows.nominal[a][0] == "0" for a in range(1494) if a not in ones)
    last_ones = {a for a in range(1494) if rows.nominal[a][-1] == "1"}
    assert last_ones == {0, 36, 524, 804, 887, 1087, 1337, 1487}


@needs_datasets
def test_missing_values_and_hierarchical_values():
    header, rows = parse_file(DATASETS / "hmlc_cellcycle_FUN/cellcycle_FUN.train.arff")
    assert rows.numeric[0][0] == 0.15 and math.isnan(rows.numeric[1][0])
    assert rows.nominal[77][0] == "11/02/01@11/02/02@11/02/03/01"
    spec = header.attributes[77].hierarchy
    assert spec.startswith("01,01/01,01/01/03,") and len(spec.split(",")) == 499
    _, scpf = parse_file(DATASETS / "mtr_scpf/scpf.arff")
    assert scpf.numeric[0][0] == 432.0 and math.isnan(scpf.numeric[1][0])


@needs_datasets
def test_derisi_dag_spec():
    header = read_header(str(DATASETS / "hmlc_derisi_GO/derisi_GO.train.arff"))
    cls = header.attributes[-1]
    assert (cls.name, cls.kind, cls.values) == ("class", "hierarchical", None)
    edges = cls.hierarchy.split(",")
    assert edges[:2] == ["root/GO0003674", "GO0003674/GO0003774"]
    assert len(edges) == 5821 and all(e.count("/") == 1 for e in edges)
    assert header.relation == "derisi0.names"


@needs_datasets
def test_atp1d_double_quoted_names_with_single_quotes():
    header = read_header(str(DATASETS / "mtr_atp1d/atp1d.arff"))
    names = [a.name for a in header.attributes]
    assert names[0] == "'departwb'"
    assert names[6] == "'ALLminpA'l1"
    assert names[-1] == "LBL+aUAminpA+fut_001"


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


@needs_datasets
def test_parse_lines_sparse_medical_equals_dense_parse():
    path = DATASETS / "mlc_medical/medical.arff"
    header = read_header(str(path))
    sparse = assert_sparse_matches_dense(header, data_lines(path, header), list(range(1449)))
    assert len(sparse.other.nominal) == 45 and min(sparse.other.nominal) == 1449
    assert sparse.indptr[1] - sparse.indptr[0] == 7  # first row: 7 of its 8 entries are features
    assert sparse.indices[:7].tolist() == [80, 199, 392, 571, 866, 1234, 1416]


@needs_datasets
@pytest.mark.parametrize(
    "name", ["mlc_yeast/yeast.arff", "mlc_flags/flags.arff", "hmlc_cellcycle_FUN/cellcycle_FUN.valid.arff"]
)
def test_parse_lines_sparse_dense_files(name):
    path = DATASETS / name
    header = read_header(str(path))
    features = [a for a, attr in enumerate(header.attributes) if attr.kind in ("numeric", "nominal")]
    features = features[: len(features) - 3]
    assert_sparse_matches_dense(header, data_lines(path, header), features)


@needs_datasets
def test_yeast_equals_scipy_loadarff():
    """All 2,417 rows of a real dense file, numbers and labels, as scipy's reader reads them.

    (Parsing speed is measured by ``jobs/benchmark.py --suite arff``, not asserted here.)"""
    from scipy.io import arff as scipy_arff

    path = DATASETS / "mlc_yeast/yeast.arff"
    header, rows = parse_file(path)
    ref, _ = scipy_arff.loadarff(str(path))
    assert rows.n_rows == len(ref) == 2417
    for i, a in enumerate(header.attributes):
        if a.kind == "numeric":
            np.testing.assert_array_equal(rows.numeric[i], ref[a.name].astype(float))
        else:
            assert list(rows.nominal[i]) == [v.decode() for v in ref[a.name]]


# ------------------------------------------------------------------ quoting, escapes, layout

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


# ------------------------------------------------------------------ sparse rows

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


# ------------------------------------------------------------------ errors

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


def disable(monkeypatch, *names):
    """Make the named fast paths (``module.function``) or ArffRowParser methods give up."""
    def refuse(*args, **kwargs):
        raise Problem("disabled in this test")

    for name in names:
        module, _, attr = name.rpartition(".")
        monkeypatch.setattr({"dense": dense, "sparse": sparse}.get(module, ArffRowParser), attr, refuse)


def both_results(header, lines, features):
    parser = ArffRowParser(header)
    return parser.parse_lines(lines), parser.parse_lines_sparse(lines, features)


def assert_same_results(a, b):
    (rows_a, csr_a), (rows_b, csr_b) = a, b
    assert rows_a.n_rows == rows_b.n_rows
    assert rows_a.numeric.keys() == rows_b.numeric.keys()
    for key in rows_a.numeric:
        np.testing.assert_array_equal(rows_a.numeric[key], rows_b.numeric[key])
    assert rows_a.nominal == rows_b.nominal
    for name in ("indptr", "indices", "values"):
        np.testing.assert_array_equal(getattr(csr_a, name), getattr(csr_b, name))
    assert csr_a.other.nominal == csr_b.other.nominal
    assert csr_a.other.numeric.keys() == csr_b.other.numeric.keys()


MIXED = SPARSE + """{4 abc, 0 7}
{ 0 1 , 1 z }
{0 0, 2 0}
8,y,?,yes,?
9, x ,1, no ,plain text
"""


@pytest.mark.parametrize("text", [SPARSE, MIXED])
def test_fast_paths_agree_with_python_path(tmp_path, monkeypatch, text):
    path = write(tmp_path, text)
    header = read_header(str(path))
    lines = data_lines(path, header)
    fast = both_results(header, lines, [0, 1, 2])
    disable(monkeypatch, "dense.arrow_columns", "sparse.arrow_entries")
    assert_same_results(fast, both_results(header, lines, [0, 1, 2]))


@needs_datasets
@pytest.mark.parametrize(
    ("name", "n_features"),
    [
        ("mlc_medical/medical.arff", 1449),
        ("mlc_flags/flags.arff", 19),
        ("hmlc_cellcycle_FUN/cellcycle_FUN.valid.arff", 77),
    ],
)
def test_fast_paths_agree_with_python_path_on_datasets(monkeypatch, name, n_features):
    path = DATASETS / name
    header = read_header(str(path))
    lines = data_lines(path, header)
    fast = both_results(header, lines, list(range(n_features)))
    disable(monkeypatch, "dense.arrow_columns", "sparse.arrow_entries")
    assert_same_results(fast, both_results(header, lines, list(range(n_features))))


@needs_datasets
@pytest.mark.parametrize("name", ["mlc_medical/medical.arff", "mlc_yeast/yeast.arff", "mtr_sf1/sf1.arff"])
def test_datasets_use_the_fast_paths(monkeypatch, name):
    path = DATASETS / name
    header = read_header(str(path))
    lines = data_lines(path, header)
    disable(monkeypatch, "_python_rows", "dense.python_columns")  # the per-value Python paths
    rows, csr = both_results(header, lines, [0, 1])
    assert rows.n_rows == csr.n_rows == TABLE[name][4]


@pytest.mark.parametrize("segment_rows", [1, 2, 3])
def test_small_segments_give_the_same_result(tmp_path, monkeypatch, segment_rows):
    path = write(tmp_path, SPARSE)
    header = read_header(str(path))
    lines = data_lines(path, header) + ["4,y,5,yes,def", "6,x,0,no,'g h'", "{}"]
    expected = ArffRowParser(header).parse_lines(lines)
    expected_csr = ArffRowParser(header).parse_lines_sparse(lines, [0, 1])
    monkeypatch.setattr(runs, "SEGMENT_ROWS", segment_rows)
    rows = ArffRowParser(header).parse_lines(iter(lines))
    assert rows.n_rows == expected.n_rows == 9
    for a in expected.numeric:
        np.testing.assert_array_equal(rows.numeric[a], expected.numeric[a])
    assert rows.nominal == expected.nominal
    csr = ArffRowParser(header).parse_lines_sparse(iter(lines), [0, 1])
    for name in ("indptr", "indices", "values"):
        np.testing.assert_array_equal(getattr(csr, name), getattr(expected_csr, name))
    assert csr.other.nominal == expected_csr.other.nominal
    # an error after several converted segments is still located on its own line
    bad = lines[:7] + ["1,q,2,no,x"] + lines[7:]
    with pytest.raises(ArffLineError) as info:
        ArffRowParser(header).parse_lines(iter(bad))
    assert info.value.line_text == "1,q,2,no,x"
    assert info.value.reason == "attribute 'c': 'q' is not in the domain {x, y, z}"


def test_line_error_is_picklable_and_parser_too(tmp_path):
    err = ArffLineError("attribute 'a': 'x' is not a number", "x,1")
    back = pickle.loads(pickle.dumps(err))
    assert (back.reason, back.line_text, str(back)) == (err.reason, err.line_text, str(err))
    header = header_of(tmp_path, SPARSE)
    parser = pickle.loads(pickle.dumps(ArffRowParser(header)))
    assert parser.parse_lines(["{0 1}"]).numeric[0].tolist() == [1.0]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("@relation r\n@attribute a numeric\n", "t.arff line 2: no @data line found"),
        ("@relation r\n@attribute a numeric\n\n@attribute a real\n@data\n",
         "t.arff line 4: attribute 'a': duplicate attribute name (first declared on line 2)"),
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
