"""HMLC Relief end to end: tree and DAG hierarchies, semi-supervised HARFF data, planted features.

* derisi GO (a DAG of 4,119 terms): spark_fr's weights equal a plain numpy RReliefF whose target distance
  is built here from the raw ARFF text (closure by searching the edges, weights by docs/methods.md's definition,
  the normaliser over pairs of the most specific labels seen), to 1e-9;
* enron (HARFF, zipped): the training and the unlabelled files together (given as two inputs, or
  concatenated: the same weights), ``--semi-supervised`` keeps all 1,648 rows, a supervised run keeps the
  1,154 labelled ones; the command line reads the zip;
* planted trees and DAGs through a DataFrame with a ``hierarchy`` parameter, with and without hidden labels,
  and broadcast = tall mode for any partitioning.
"""
from __future__ import annotations

import functools
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import spark_fr
from spark_fr.errors import InputError
from tests.paths import ROOT

COLS = ["feature", "score", "target", "importance", "rank", "importance_std"]


def arff_rows(path: Path):
    lines = path.read_text().splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.strip().lower() == "@data")
    return lines[:at], [ln.split(",") for ln in lines[at + 1:] if ln.strip() and not ln.startswith("%")]


# ----- derisi GO: a DAG, against a numpy reference ---------------------------------------------------------
def reference_dag_distances(spec: str, values: list, w0: float) -> np.ndarray:
    edges = [tuple(e.strip().split("/")) for e in spec.split(",")]
    parents: dict = {}
    for p, c in edges:
        parents.setdefault(c, []).append(p)

    @functools.lru_cache(maxsize=None)
    def weight(label):
        ps = parents[label]
        return w0 * np.mean([1.0 / w0 if p == "root" else weight(p) for p in ps])

    @functools.lru_cache(maxsize=None)
    def closure(label):
        out = {label}
        for p in parents[label]:
            if p != "root":
                out |= closure(p)
        return frozenset(out)

    sys.setrecursionlimit(10000)
    rows = [frozenset().union(*(closure(lab) for lab in v.split("@"))) for v in values]
    children: dict = {}
    for p, c in edges:
        children.setdefault(p, set()).add(c)
    finals = {lab for r in rows for lab in r if not (children.get(lab, set()) & r)}
    terms = sorted(set().union(*rows) | finals)
    col = {t: j for j, t in enumerate(terms)}
    w = np.array([weight(t) for t in terms])
    Y = np.zeros((len(rows), len(terms)))
    for i, r in enumerate(rows):
        Y[i, [col[t] for t in r]] = 1.0
    F = np.zeros((len(finals), len(terms)))
    for q, f in enumerate(sorted(finals)):
        F[q, [col[t] for t in closure(f)]] = 1.0

    def sym_diff(A, B):
        sa, sb = (A * w).sum(axis=1), (B * w).sum(axis=1)
        return np.maximum(sa[:, None] + sb[None, :] - 2.0 * (A * w) @ B.T, 0.0)

    bound = sym_diff(F, F).max()
    return np.sqrt(sym_diff(Y, Y)) / np.sqrt(bound)


@pytest.mark.slow
def test_derisi_dag_equals_the_numpy_reference(spark, datasets):
    from tests.comparisons.test_clus_relief import agreement, clus_reference

    path = datasets / "hmlc_derisi_GO" / "derisi_GO.train.arff"
    header, rows = arff_rows(path)
    spec = next(h for h in header if h.lower().startswith("@attribute class")).split(None, 3)[3]
    names = [h.split()[1] for h in header if h.lower().startswith("@attribute")][:-1]
    X = np.array([[np.nan if v == "?" else float(v) for v in r[:-1]] for r in rows])
    dY = reference_dag_distances(spec, [r[-1] for r in rows], 0.75)
    expected = clus_reference(X, dY, 10)
    r = spark_fr.rank(str(path), method="relief", spark=spark, relief_neighbours=10, relief_iterations=1.0)
    table = r.to_pandas()
    assert '"task": "hmlc"' in table.params.iloc[0]
    ours = dict(zip(table.feature, table.importance))
    a = agreement(ours, dict(zip(names, expected)))
    print(f"\nderisi GO DAG: spark_fr vs numpy reference max|diff| {a['max_abs_diff']:.3g}")
    assert a["max_abs_diff"] <= 1e-9, a


# ----- enron: HARFF, zipped, semi-supervised ----------------------------------------------------------------
@pytest.fixture(scope="module")
def enron_ssl(datasets, tmp_path_factory) -> Path:
    """The labelled training file followed by the unlabelled file's rows (class 'root'), one HARFF."""
    folder = datasets / "hmlc_enron_harff"
    texts = []
    for name in ("enron-training_set.harff.zip", "enron-unlabelled_set.harff.zip"):
        with zipfile.ZipFile(folder / name) as z:
            member = next(n for n in z.namelist() if n.endswith(".harff") and not n.startswith("__MACOSX"))
            texts.append(z.read(member).decode())
    head, _, train = texts[0].partition("@DATA")
    _, _, unlabelled = texts[1].partition("@DATA")
    out = tmp_path_factory.mktemp("enron") / "enron-ssl.harff"
    out.write_text(head + "@DATA\n" + train.strip("\n") + "\n" + unlabelled.strip("\n") + "\n")
    return out


def test_enron_semi_supervised_keeps_unlabelled_rows(spark, enron_ssl, datasets):
    kw = dict(method="relief", spark=spark, relief_neighbours=10, relief_iterations=0.5, seed=4)
    ssl = spark_fr.rank(str(enron_ssl), semi_supervised=True, **kw)
    sup = spark_fr.rank(str(enron_ssl), **kw)
    assert ssl.metadata["n_rows"] == 1648 and sup.metadata["n_rows"] == 1154
    # the two zipped files as they are distributed, given as one input: the same table, the same weights
    folder = datasets / "hmlc_enron_harff"
    both = spark_fr.rank([str(folder / "enron-training_set.harff.zip"), str(folder / "enron-unlabelled_set.harff.zip")],
                         semi_supervised=True, **kw)
    pd.testing.assert_frame_equal(both.to_pandas()[COLS], ssl.to_pandas()[COLS], check_exact=True)
    a, b = ssl.to_pandas().set_index("feature"), sup.to_pandas().set_index("feature")
    assert len(a) == len(b) == 1001
    assert not np.allclose(a.importance, b.importance.loc[a.index])  # the unlabelled rows count
    # both estimate the same relevance: the top features of one are near the top of the other
    top = a.nsmallest(20, "rank").index
    assert b.loc[top, "rank"].median() < 100


def test_command_line_reads_a_zipped_harff(tmp_path, datasets):
    out = tmp_path / "enron"
    proc = subprocess.run([sys.executable, str(ROOT / "jobs" / "rank.py"), "--input",
                           str(datasets / "hmlc_enron_harff" / "enron.harff.zip"), "--method", "relief",
                           "--relief-iterations", "300", "--seed", "1", "--output", str(out),
                           "--output-format", "csv", "--master", "local[2]"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    table = pd.read_csv(out / "ranking.csv")
    assert len(table) == 1001 and set(table.target) == {"__all__"}
    assert '"task": "hmlc"' in table.params[0] and "enron.harff.zip" in table.params[0]
    assert "ID" not in set(table.feature)  # the string identifier is not a feature


# ----- planted hierarchies through a DataFrame --------------------------------------------------------------
TREE = "A,A/a1,A/a2,B,B/b1,B/b2"
DAG = "root/A, root/B, A/C, B/C, A/D, C/E"


def planted_labels(X, kind):
    if kind == "tree":
        top = np.where(X[:, 0] > 0.5, "A", "B")
        sub = np.where(top == "A", np.where(X[:, 1] > 0.5, "A/a1", "A/a2"), np.where(X[:, 2] > 0.5, "B/b1", "B/b2"))
        return sub, {"x0", "x1", "x2"}
    # DAG: E (below C, below A and B) when x0 > 0.5, else D when x1 > 0.5, else B; plus C when x2 > 0.7
    lab = np.where(X[:, 0] > 0.5, "E", np.where(X[:, 1] > 0.5, "D", "B"))
    lab = np.where((X[:, 2] > 0.7) & (lab != "E"), np.char.add(lab.astype(str), "@C"), lab)
    return lab, {"x0", "x1", "x2"}


@pytest.mark.parametrize("kind", ["tree", "dag"])
def test_planted_features_rank_first_in_a_hierarchy(spark, kind):
    rng = np.random.default_rng(11)
    n = 500
    X = rng.random((n, 8))
    pdf = pd.DataFrame(X, columns=[f"x{i}" for i in range(8)])
    pdf["labels"], relevant = planted_labels(X, kind)
    df = spark.createDataFrame(pdf)
    spec = TREE if kind == "tree" else DAG
    for squared in (False, True):
        r = spark_fr.rank(df, targets="labels", method="relief", spark=spark, hierarchy=spec, relief_neighbours=10,
                          relief_hmlc_squared=squared)
        t = r.to_pandas()
        assert set(t.nsmallest(3, "rank").feature) == relevant, t
        w = t.set_index("feature").importance
        assert (w.loc[sorted(relevant)] > 0).all() and (w.drop(sorted(relevant)) < 0).all()
        assert w.idxmax() == "x0"  # decides the top level (tree) / the deepest label (DAG)


def test_semi_supervised_hierarchy_modes_and_partitionings_agree(spark):
    rng = np.random.default_rng(12)
    n = 400
    X = rng.random((n, 6))
    pdf = pd.DataFrame(X, columns=[f"x{i}" for i in range(6)])
    labels, _ = planted_labels(X, "tree")
    labels = labels.astype(object)
    labels[rng.random(n) < 0.6] = None  # 60 % unlabelled
    pdf["labels"] = labels
    df = spark.createDataFrame(pdf)
    kw = dict(targets="labels", method="relief", spark=spark, hierarchy=TREE, semi_supervised=True,
              relief_neighbours=8, seed=5)
    a = spark_fr.rank(df.repartition(1), relief_mode="broadcast", **kw).to_pandas()
    b = spark_fr.rank(df.repartition(7), relief_mode="tall", **kw).to_pandas()
    pd.testing.assert_frame_equal(a[COLS], b[COLS], check_exact=True)
    assert a.nsmallest(1, "rank").feature.iloc[0] == "x0"


def test_hierarchy_parameter_errors(spark):
    pdf = pd.DataFrame({"x": [0.1, 0.2, 0.3], "y": [1.0, 2.0, 3.0], "labels": ["A", "A/a1", "Z"]})
    df = spark.createDataFrame(pdf)
    with pytest.raises(InputError, match="exactly one target"):
        spark_fr.rank(df, targets="labels,y", method="relief", spark=spark, hierarchy=TREE)
    with pytest.raises(InputError, match="'y' must be a string column"):
        spark_fr.rank(df, targets="y", method="relief", spark=spark, hierarchy=TREE)
    with pytest.raises(InputError, match="cycle"):
        spark_fr.rank(df, targets="labels", method="relief", spark=spark, hierarchy="root/a, a/b, b/a")
    with pytest.raises(InputError, match="column 'labels': label 'Z' is not in the hierarchy"):
        spark_fr.rank(df, targets="labels", method="relief", spark=spark, hierarchy=TREE)


@pytest.mark.parametrize("squared", [False, True])
def test_normaliser_modes(squared):
    """'data' <= 'hierarchy' <= 'sum', each equal to its brute-force definition; 'sum' bounds every pair of rows."""
    import itertools

    from spark_fr.hierarchy import Hierarchy
    from spark_fr import tasks
    from spark_fr.relief.params import ReliefParams

    h = Hierarchy.from_clus_spec("A,A/a1,A/a2,A/a2/x,B,B/b1,C")
    values = ["A/a1@B", "A/a1", "B/b1", "A", "C@A/a1"]
    Y = h.label_matrix(values)
    w = h.weights(0.75)
    closures = {lab: set(h.closure(lab)) for lab in h.labels}

    def dist(a, b):
        d = sum(w[j] for j in a ^ b)
        return d if squared else np.sqrt(d)

    finals = ["A/a1", "B", "B/b1", "A", "C"]  # the most specific labels of some row
    expected = {"data": max(dist(closures[a], closures[b]) for a, b in itertools.combinations(finals, 2)),
                "hierarchy": max(dist(closures[a], closures[b]) for a, b in itertools.combinations(h.labels, 2)),
                "sum": dist(set(range(len(h.labels))), set())}
    hmlc = tasks.get("hmlc")
    got = {m: hmlc.relief_target(Y, ReliefParams(hmlc_squared=squared, hmlc_normaliser=m), hierarchy=h).norm
           for m in expected}
    assert got == pytest.approx(expected, rel=1e-12)
    assert got["data"] < got["hierarchy"] < got["sum"]
    rows = [set(np.nonzero(r)[0]) for r in Y]
    assert max(dist(a, b) for a, b in itertools.combinations(rows, 2)) <= got["sum"]
