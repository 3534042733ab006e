"""Label-sparse encoding of HMLC targets: the label sets of a hierarchy, their row keys, and a real run that
keeps them sparse from the encoder to the trees."""
import numpy as np
import pytest

import spark_fr
from spark_fr.data.rowkeys import content_keys
from spark_fr.hierarchy import Hierarchy
from spark_fr.tasks.hmlc import HierarchyEncoder
from spark_fr.tasks.sparse_columns import SparseLabels


def class_values(path):
    """The hierarchy spec and the class strings of a Clus HMC ARFF file."""
    lines = path.read_text().splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.strip().lower() == "@data")
    spec = [ln for ln in lines[:at] if " hierarchical " in ln][0].split(None, 3)[3]
    return spec, [ln.rsplit(",", 1)[1] for ln in lines[at + 1:] if ln.strip()]


@pytest.mark.parametrize("name", ["hmlc_cellcycle_FUN/cellcycle_FUN.train.arff",
                                  "hmlc_derisi_GO/derisi_GO.train.arff"])
def test_label_sets_are_the_label_matrix(datasets, name):
    spec, values = class_values(datasets / name)
    h = Hierarchy.from_clus_spec(spec)
    values = values[:300] + ["?", None, "root", ""]  # and the four ways of saying "no label"
    indptr, indices, labelled = h.label_sets(values)
    S = SparseLabels(indptr, indices, labelled, len(h.labels))
    dense = h.label_matrix(values)
    assert np.array_equal(S.to_dense(), dense.astype(np.float64), equal_nan=True)
    assert labelled[:300].all() and not labelled[300:].any()
    assert (np.diff(indices[indptr[0]:indptr[1]]) > 0).all()  # increasing within a row
    enc = HierarchyEncoder(h)
    assert enc.sparse  # hundreds of labels
    compact = enc.encode_compact([values], len(values))
    assert isinstance(compact, SparseLabels)
    assert np.array_equal(compact.to_dense(), enc.encode([values], len(values)), equal_nan=True)


@pytest.mark.parametrize("seed", range(3))
def test_row_keys_of_label_sets_are_those_of_the_dense_labels(seed):
    rng = np.random.default_rng(seed)
    n, L = 200, 70
    Y = (rng.random((n, L)) < 0.05).astype(float)
    Y[rng.random(n) < 0.1] = np.nan
    Y[5] = Y[9]  # identical rows: identical keys
    codes = rng.integers(0, 4, (3, n)).astype(np.uint8)
    codes[:, 5] = codes[:, 9]
    dense = content_keys([codes], Y)
    sparse = content_keys([codes], SparseLabels.from_dense(Y))
    assert np.array_equal(dense, sparse)
    rows = np.hstack([codes.T, np.nan_to_num(Y, nan=-1.0)])
    assert dense[5] == dense[9] and np.unique(dense).size == np.unique(rows, axis=0).shape[0]


def test_a_run_keeps_the_labels_sparse_and_ranks_as_in_partitioned_mode(spark, datasets):
    """derisi_GO's first 400 rows (a 4,119-label DAG): the encoded targets are SparseLabels, and broadcast and
    partitioned mode (per-block moments, rows shipped as label sets) give the same ranking bit for bit."""
    import pandas as pd

    path = datasets / "hmlc_derisi_GO" / "derisi_GO.train.arff"
    lines = path.read_text().splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.strip().lower() == "@data")
    attrs = [ln.split(None, 2) for ln in lines[:at] if ln.lower().startswith("@attribute")]
    spec = attrs[-1][2].split(None, 1)[1]
    rows = [ln.split(",") for ln in lines[at + 1:] if ln.strip()][:400]
    pdf = pd.DataFrame([[float(v) for v in r[:-1]] for r in rows], columns=[a[1] for a in attrs[:-1]])
    pdf["class"] = [r[-1] for r in rows]
    df = spark.createDataFrame(pdf)
    kw = dict(targets="class", hierarchy=spec, trees=3, seed=5, per_target=True, scores="symbolic,genie3,rf",
              spark=spark)
    a_run = spark_fr.rank(df.repartition(1), **kw)
    b_run = spark_fr.rank(df.repartition(3), ensemble_mode="partitioned", **kw)
    a, b = a_run.to_pandas(), b_run.to_pandas()
    cols = ["score", "target", "feature", "importance", "rank"]
    pd.testing.assert_frame_equal(a[cols], b[cols], check_exact=True)
    assert a.target.nunique() > 3000  # the joint ranking and one per varying label
    for r in (a_run, b_run):
        assert r.metadata["encoded_targets"] == "label_sets"
