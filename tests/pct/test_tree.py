"""spark_fr/pct/tree.py: the per-leaf sums of leaf_prototypes (segment_sums, a numba kernel) against NumPy's
sum of each leaf's block, to the bit."""
import numpy as np
import pytest

from spark_fr.pct import tree as tree_module
from spark_fr.pct.config import grow_config
from spark_fr.pct.tree import group_by_leaf, grow, leaf_prototypes, segment_sums


def numpy_segment_sums(values, bounds, targets, out):
    """The slow, obvious reference: NumPy's sum over the rows of each segment."""
    for s in range(len(bounds) - 1):
        out[targets[s]] = values[bounds[s]:bounds[s + 1]].sum(axis=0)


def bits(a):
    return np.ascontiguousarray(a).view(np.uint64)


@pytest.mark.parametrize("P", [1, 2, 3, 5])
def test_segment_sums_are_numpy_sums_to_the_bit(P):
    """Segments of 1 to 700 rows (NumPy sums one column pairwise: 8 partial sums from 8 rows, halves above 128),
    values of many magnitudes and signed zeros; a column of a 1-d array (a view with stride 0) too."""
    rng = np.random.default_rng(P)
    lengths = np.r_[rng.integers(1, 10, 200), rng.integers(10, 140, 40), rng.integers(140, 700, 10)]
    rng.shuffle(lengths)
    bounds = np.r_[0, np.cumsum(lengths)]
    values = rng.standard_normal((bounds[-1], P)) * 10.0 ** rng.uniform(-4, 4, (bounds[-1], P))
    values[rng.random(values.shape) < 0.05] = -0.0
    targets = rng.permutation(lengths.size + 5)[:lengths.size].astype(np.int64)
    for vals in (values, values[:, 0][:, None]):
        got = np.full((lengths.size + 5, vals.shape[1]), 7.0)
        want = got.copy()
        segment_sums(vals, bounds, targets, got)
        numpy_segment_sums(vals, bounds, targets, want)
        assert np.array_equal(bits(got), bits(want))


@pytest.mark.parametrize("missing", ["learned", "fractional"])
@pytest.mark.parametrize("P", [1, 3])
def test_leaf_prototypes_are_those_of_numpy_sums(monkeypatch, missing, P):
    """Prototypes of grown trees (leaves of 1 to hundreds of rows; complete and incomplete prototype columns;
    learned and fractional trees) with the kernel and with NumPy's sums: the same, to the bit."""
    rng = np.random.default_rng(7 + P)
    n, D = 3000, 4
    X = rng.integers(0, 50, (D, n)).astype(np.uint8)
    X[rng.random((D, n)) < 0.1] = 255
    lower = np.cumsum(rng.random((D, 255)) + 0.01, axis=1)
    upper = lower + 0.005
    Z = rng.standard_normal((n, 2))
    Z[:, 0] += X[0] * 0.05
    columns = rng.standard_normal((n, P)) * 3.0
    holes = columns.copy()
    holes[rng.random((n, P)) < 0.2] = np.nan
    w = rng.poisson(1.0, n).astype(float)
    for min_leaf in (1.0, 40.0, 400.0):
        tree = grow(X, np.zeros(D, bool), lower, upper, Z, w,
                    grow_config(min_leaf=min_leaf, missing=missing, max_features=2, seed=int(min_leaf)))
        for cols in (columns, holes):
            got = leaf_prototypes(tree, cols, w, np.zeros(P))
            with monkeypatch.context() as m:
                m.setattr(tree_module, "segment_sums", numpy_segment_sums)
                want = leaf_prototypes(tree, cols, w, np.zeros(P))
            assert np.array_equal(bits(got), bits(want)), (min_leaf, missing)
            assert np.array_equal(bits(got), bits(levelwise_prototypes(tree, cols, w, np.zeros(P))))


def levelwise_prototypes(tree, columns, weights, default):
    """The slow reference of leaf_prototypes' passes up and down the tree: NumPy, a level at a time."""
    rows, leaf, w = tree.memberships(weights)
    vals = columns[rows]
    complete = not np.isnan(vals).any()
    wk = w[:, None] if complete else np.where(np.isnan(vals), 0.0, w[:, None])
    terms = vals * wk if complete else np.where(wk > 0, vals, 0.0) * wk
    num = np.zeros((tree.n_nodes, columns.shape[1]))
    den = np.zeros((tree.n_nodes, wk.shape[1]))
    bounds = np.flatnonzero(np.r_[True, leaf[1:] != leaf[:-1], True])
    numpy_segment_sums(terms, bounds, leaf[bounds[:-1]], num)
    numpy_segment_sums(wk, bounds, leaf[bounds[:-1]], den)
    levels = [np.flatnonzero(tree.depth == d) for d in range(int(tree.depth.max(initial=0)) + 1)]
    for nodes in levels[::-1]:
        inner = nodes[tree.feature[nodes] >= 0]
        num[inner] = num[tree.left[inner]] + num[tree.right[inner]]
        den[inner] = den[tree.left[inner]] + den[tree.right[inner]]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = num / np.where(den > 0, den, 1.0)
    parent = np.full(tree.n_nodes, -1)
    parent[tree.left[tree.internal]] = tree.internal
    parent[tree.right[tree.internal]] = tree.internal
    proto = np.empty_like(num)
    proto[0] = np.where(den[0] > 0, mean[0], default)
    for nodes in levels[1:]:
        proto[nodes] = np.where(den[nodes] > 0, mean[nodes], proto[parent[nodes]])
    return proto


@pytest.mark.parametrize("seed", range(4))
def test_group_by_leaf_is_lexsorts_order(seed):
    """Memberships ordered by leaf, rows increasing within one (leaves of 1 to 200 rows): lexsort's order."""
    rng = np.random.default_rng(seed)
    n_nodes = 60
    sizes = rng.integers(0, 200, n_nodes) * (rng.random(n_nodes) < 0.7)
    leaves = np.repeat(np.arange(n_nodes, dtype=np.int32), sizes)
    rows = np.concatenate([rng.choice(10_000, k, replace=False) for k in sizes]).astype(np.int64)
    w = rng.random(rows.size)
    shuffle = rng.permutation(rows.size)
    rows, leaves, w = rows[shuffle], leaves[shuffle], w[shuffle]
    got = group_by_leaf(rows, leaves, w, n_nodes)
    order = np.lexsort((rows, leaves))
    for a, b in zip(got, (rows[order], leaves[order], w[order])):
        assert np.array_equal(a, b)


def test_fortran_ordered_inputs_grow_the_same_tree_without_a_second_compile():
    """grow copies a Fortran-ordered clustering matrix or code matrix to C order: the same tree as from C-ordered
    arrays, and the grow loop keeps the one specialisation the runs and warm-ups compile."""
    from spark_fr.pct.grow import grow_tree

    rng = np.random.default_rng(4)
    D, n, K = 5, 120, 3
    X = rng.integers(0, 20, (D, n)).astype(np.uint8)
    nominal = np.zeros(D, bool)
    lower = np.cumsum(rng.random((D, 255)) + 0.01, axis=1)
    upper = lower + 0.005
    Z = rng.normal(size=(n, K))
    Z[:, 0] += X[1] / 4.0
    w = rng.poisson(1.0, n).astype(float)
    config = grow_config(min_leaf=2, seed=3)
    want = grow(X, nominal, lower, upper, Z, w, config)
    compiled = len(grow_tree.signatures)
    got = grow(np.asfortranarray(X), nominal, np.asfortranarray(lower), upper, np.asfortranarray(Z), w, config)
    assert len(grow_tree.signatures) == compiled
    assert want.n_nodes > 3 and got.n_nodes == want.n_nodes
    for name in ("feature", "threshold", "left", "right", "weight", "gain"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    assert np.array_equal(got.leaf_of_row, want.leaf_of_row)
