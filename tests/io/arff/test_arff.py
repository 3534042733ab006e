"""Tests of spark_fr.io.arff as a whole (pure Python, no Spark): every shared ARFF file, the row parser's
fast paths against its Python path, segmenting, pickling. Per-module tests: tests/io/arff/test_arff_*.py."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from tests.io.arff.arff_helpers import (DATASETS, SPARSE, assert_sparse_matches_dense, data_lines, header_of,
                                        needs_datasets, parse_file, write)
from spark_fr.io.arff import ArffLineError, ArffRowParser, dense, read_header, runs, sparse
from spark_fr.io.arff.errors import Problem


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
