"""Label hierarchies (spark_fr.hierarchy): parsing Clus specs, closure, weights, the HMLC-Relief normaliser.

The normaliser is checked against a brute force over all pairs of label sets on random trees and DAGs;
parsing against the sizes of the shared benchmark hierarchies (cellcycle FunCat tree, derisi GO DAG,
Diatoms, enron HARFF).
"""
from __future__ import annotations

import itertools
import zipfile
from pathlib import Path

import numpy as np
import pytest

from spark_fr.hierarchy import Hierarchy, HierarchyError
from tests.paths import DATASETS


def clus_spec(path: Path) -> str:
    """The class specification of a Clus ``hierarchical`` attribute, read naively (plain text)."""
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as z:
            name = next(n for n in z.namelist() if n.endswith(".harff") and not n.startswith("__MACOSX"))
            lines = z.read(name).decode().splitlines()
    else:
        lines = path.read_text().splitlines()
    line = next(ln for ln in lines if ln.lower().startswith("@attribute") and " hierarchical " in ln.lower())
    return line.split(None, 3)[3]


def brute_closure(edges: list, label: str) -> set:
    """Ancestors by repeated search over the raw (parent, child) edges."""
    out, todo = {label}, [label]
    while todo:
        c = todo.pop()
        for p, k in edges:
            if k == c and p != "root" and p not in out:
                out.add(p)
                todo.append(p)
    return out


def brute_max_pair(h: Hierarchy, labels, w, squared):
    sets = [set(h.closure(h.labels[i])) for i in labels]
    best = max(sum(w[j] for j in a ^ b) for a, b in itertools.combinations(sets, 2))
    return best if squared else np.sqrt(best)


def random_tree(rng, n: int) -> Hierarchy:
    """A random tree as Clus paths, listed in random order (children may come before parents)."""
    paths = []
    for i in range(n):
        parent = paths[rng.integers(len(paths))] if paths and rng.random() < 0.8 else None
        paths.append(f"{parent}/{i}" if parent else str(i))
    return Hierarchy.from_clus_spec(",".join(rng.permutation(paths)))


def random_dag(rng, n: int) -> tuple:
    edges = []
    for i in range(n):
        k = rng.integers(0, min(i, 3) + 1)
        parents = rng.choice(i, size=k, replace=False) if k else []
        edges += [(f"t{p}", f"t{i}") for p in parents] or [("root", f"t{i}")]
    return Hierarchy.from_clus_spec(", ".join(f"{p}/{c}" for p, c in rng.permutation(edges))), edges


# ----- the normaliser --------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(12))
def test_tree_normaliser_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    h = random_tree(rng, int(rng.integers(3, 40)))
    assert h.is_tree
    w = h.weights(float(rng.uniform(0.3, 1.0)))
    for _ in range(5):
        labels = rng.choice(len(h.labels), size=int(rng.integers(2, len(h.labels) + 1)), replace=False)
        for squared in (True, False):
            got = h.max_pair_distance(labels, w, squared)
            assert got == pytest.approx(brute_max_pair(h, labels, w, squared), rel=1e-12, abs=1e-12)
    # random (non-hierarchy) weights too: the programme must not rely on the decay
    w = rng.uniform(0.01, 2.0, len(h.labels))
    labels = np.arange(len(h.labels))
    assert h.max_pair_distance(labels, w, True) == pytest.approx(brute_max_pair(h, labels, w, True), rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_dag_normaliser_and_closure_equal_brute_force(seed):
    rng = np.random.default_rng(100 + seed)
    h, edges = random_dag(rng, int(rng.integers(4, 30)))
    for i, name in enumerate(h.labels):
        assert set(h.closure(name)) == {h.index[x] for x in brute_closure(edges, name)}
        assert all(p < i for p in h.parents[i])  # topological order
    w = h.weights(0.75)
    labels = rng.choice(len(h.labels), size=min(len(h.labels), 12), replace=False)
    for squared in (True, False):
        assert h.max_pair_distance(labels, w, squared) == pytest.approx(brute_max_pair(h, labels, w, squared))


def test_fewer_than_two_labels_give_zero():
    h = Hierarchy.from_clus_spec("a,a/b")
    assert h.max_pair_distance([1], h.weights(0.75)) == 0.0


# ----- weights, label rows ---------------------------------------------------------------------------------
def test_weights_follow_the_definition():
    # tree: 1 at the top, w0 per level
    h = Hierarchy.from_clus_spec("a/b/c,a,a/b,d")
    w = dict(zip(h.labels, h.weights(0.5)))
    assert w == {"a": 1.0, "a/b": 0.5, "a/b/c": 0.25, "d": 1.0}
    # DAG: w0 times the mean of the parents' weights
    h = Hierarchy.from_clus_spec("root/x, root/y, x/z, y/z, z/u, x/u")
    w = dict(zip(h.labels, h.weights(0.5)))
    assert w["x"] == w["y"] == 1.0
    assert w["z"] == pytest.approx(0.5)
    assert w["u"] == pytest.approx(0.5 * (0.5 + 1.0) / 2)
    with pytest.raises(HierarchyError, match="w0"):
        h.weights(0.0)


def test_label_matrix_is_closed_under_ancestors_and_marks_unlabelled_rows():
    h = Hierarchy.from_clus_spec("01,01/01,01/01/03,02,02/05")
    Y = h.label_matrix(["01/01/03@02", "02/05", "?", None, "root", "01"])
    col = {n: Y[:, i] for i, n in enumerate(h.labels)}
    assert list(col["01"][:2]) == [1, 0] and list(col["01/01"][:2]) == [1, 0]
    assert list(col["01/01/03"][:2]) == [1, 0] and list(col["02"][:2]) == [1, 1] and col["02/05"][1] == 1
    assert np.isnan(Y[2:5]).all() and not np.isnan(Y[[0, 1, 5]]).any()
    assert Y[5].sum() == 1
    finals = {h.labels[i] for i in h.final_labels(Y)}
    assert finals == {"01/01/03", "02", "02/05", "01"}  # '02' is final in row 0, '01' in row 5
    with pytest.raises(HierarchyError, match="'01/07' is not in the hierarchy"):
        h.label_matrix(["01/07"])


@pytest.mark.parametrize("spec, message", [
    ("root/a, a/b, b/a", "cycle"),
    ("01,01//02", "malformed label path"),
    ("", "empty"),
])
def test_malformed_specs_are_errors(spec, message):
    with pytest.raises(HierarchyError, match=message):
        Hierarchy.from_clus_spec(spec)


# ----- the shared benchmark hierarchies ---------------------------------------------------------------------
@pytest.mark.parametrize("path, labels, edges, tree, depth", [
    ("hmlc_cellcycle_FUN/cellcycle_FUN.train.arff", 499, 499, True, 6),
    ("hmlc_derisi_GO/derisi_GO.train.arff", 4119, 5821, False, None),
    ("hmlc_Diatoms/Diatoms_train.arff", 398, 398, True, 3),
    ("hmlc_enron_harff/enron.harff.zip", 56, 56, True, 3),
])
def test_benchmark_hierarchies(path, labels, edges, tree, depth):
    spec = clus_spec(DATASETS / path)
    h = Hierarchy.from_clus_spec(spec)
    assert len(h.labels) == labels
    assert sum(len(p) + int(r) for p, r in zip(h.parents, h.root_parent)) == edges
    assert h.is_tree == tree
    if depth is not None:
        assert int(h.depth.max()) == depth
    items = [s.strip() for s in spec.split(",")]
    if items[0].startswith("root/") or "/" in items[0] and all(s.count("/") == 1 for s in items):
        raw = [tuple(s.split("/")) for s in items]
        for name in h.labels[:: max(1, len(h.labels) // 50)]:
            assert {h.labels[i] for i in h.closure(name)} == brute_closure(raw, name)
    # the normaliser of all labels agrees between the tree programme and the blockwise DAG computation
    w = h.weights(0.75)
    some = np.arange(len(h.labels))[:: max(1, len(h.labels) // 600)]
    assert h.max_pair_distance(some, w, True) == pytest.approx(h._max_pair_dag(some, w), rel=1e-12)
