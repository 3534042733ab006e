"""The label-sparse target backend of the grower (spark_fr.pct.sparse_targets) against brute-force references
and against the dense backend, operation by operation and whole trees, and the HMLC task's choice of the sparse
representation."""
import itertools

import numpy as np
import pytest
from numba import njit

from spark_fr.pct.config import MISSING_FRACTIONAL, grow_config
from spark_fr.pct.grow import leaf_weight_floor
from spark_fr.pct.histogram import Codes
from spark_fr.pct.node_rows import Children, TreeTests, node_rows, partition, split_fractional
from spark_fr.pct.search import new_search
from spark_fr.pct.sparse_targets import SparseTargets
from spark_fr.pct.targets import (add_column_gain, children_gain, end_node, moved_targets, n_columns, new_state,
                                  node_totals, search_feature)
from spark_fr.pct.tree import grow
from spark_fr.tasks.hmlc import HMLC
from spark_fr.tasks.base import column_moments
from spark_fr.tasks.sparse_columns import SparseColumns, SparseLabels, label_errors, worth_sparse

MISSING = 255


# ---- the representation ------------------------------------------------------------------------------

def test_sparse_columns_hold_exactly_the_scaled_non_zero_values():
    rng = np.random.default_rng(1)
    C = (rng.random((40, 50)) < 0.1) * rng.integers(1, 4, (40, 50)).astype(float)
    C[7] = 0.0  # a row without any value
    scale = rng.random(50) + 0.5
    S = SparseColumns.from_dense(C, scale)
    assert S.shape == (40, 50) and S.nnz == np.count_nonzero(C)
    assert np.array_equal(S.to_dense(), C * scale)
    for r in range(40):
        idx = S.indices[S.indptr[r]:S.indptr[r + 1]]
        assert np.array_equal(idx, np.flatnonzero(C[r]))  # increasing columns within a row
    assert S.mean_row_nnz == pytest.approx(np.count_nonzero(C) / 40)
    C[3, 3] = np.nan
    with pytest.raises(ValueError, match="missing"):
        SparseColumns.from_dense(C)


def test_only_wide_sparse_complete_columns_are_worth_it():
    rng = np.random.default_rng(2)
    sparse = (rng.random((100, 64)) < 0.05).astype(float)
    assert worth_sparse(sparse)
    assert not worth_sparse(sparse[:, :8])                                     # few columns: dense is cheap
    assert not worth_sparse((rng.random((100, 64)) < 0.5).astype(float))       # half of the values set
    with_missing = sparse.copy()
    with_missing[0] = np.nan                                                   # an unlabelled row
    assert not worth_sparse(with_missing)


# ---- random nodes and the brute-force reference -------------------------------------------------------

def random_problem(seed, n=120, D=5, K=40, p_missing=0.15, nominal_share=0.4):
    """Random codes (numeric and nominal, missing codes), sparse 0/1-like columns scaled by random weights
    (some driven by feature 0), Poisson weights."""
    rng = np.random.default_rng(seed)
    nominal = rng.random(D) < nominal_share
    X = np.empty((D, n), np.uint8)
    for f in range(D):
        X[f] = rng.integers(0, 6 if nominal[f] else 30, n)
    X[rng.random((D, n)) < p_missing] = MISSING
    lower = np.cumsum(rng.random((D, 255)) + 0.01, axis=1)
    upper = lower + 0.005
    driven = (X[0] % 3 == 0)[:, None] & (np.arange(K) < 6)
    C = ((rng.random((n, K)) < 0.06) | (driven & (rng.random((n, K)) < 0.8))).astype(float)
    C = C[:, C.var(axis=0) > 0]
    scale = rng.random(C.shape[1]) + 0.2
    w = rng.poisson(1.0, n).astype(float)
    return X, nominal, lower, upper, C, scale, w


def sse(V, w):
    """sum_k sum_r w_r (v_rk - mean_k)^2 over the rows (the obvious definition; 0 for no weight)."""
    W = w.sum()
    if W <= 0:
        return 0.0
    mean = (w[:, None] * V).sum(axis=0) / W
    return float((w[:, None] * (V - mean) ** 2).sum())


def reduction(V, w, left):
    return sse(V, w) - sse(V[left], w[left]) - sse(V[~left], w[~left])


def candidate_tests(codes, nominal_f):
    """Every test of a feature over the codes of a node, as boolean 'goes left' masks of the known rows:
    thresholds between present codes, or proper subsets of the present categories."""
    known = np.unique(codes[codes != MISSING])
    if nominal_f:
        for size in range(1, len(known)):
            for subset in itertools.combinations(known, size):
                yield np.isin(codes, subset)
    else:
        for t in known[:-1]:
            yield (codes <= t) & (codes != MISSING)


def brute_best(X, nominal, V, w, rows, min_leaf):
    """Largest reduction over every test of every feature, missing values sent to either side."""
    best = -np.inf
    for f in range(X.shape[0]):
        c = X[f, rows]
        miss = c == MISSING
        for goes in candidate_tests(c, nominal[f]):
            for ml in ((False, True) if miss.any() else (False,)):
                left = goes | (miss & ml)
                wl, wr = w[rows][left].sum(), w[rows][~left].sum()
                if wl >= min_leaf and wr >= min_leaf and wl > 0 and wr > 0:
                    best = max(best, reduction(V[rows], w[rows], left))
    return best


def rows_of_nodes(tree, X, rows):
    """{node: rows reaching it} by a Python walk of the tests (missing codes, nominal masks, thresholds)."""
    out = {}
    for r in rows:
        node = 0
        while True:
            out.setdefault(node, []).append(r)
            f = tree.feature[node]
            if f < 0:
                break
            code = int(X[f, r])
            if code == MISSING:
                go_left = bool(tree.missing_left[node])
            elif tree.nominal[f]:
                go_left = bool((int(tree.mask[node, code >> 6]) >> (code & 63)) & 1)
            else:
                go_left = code <= tree.threshold[node]
            node = tree.left[node] if go_left else tree.right[node]
    return {k: np.array(v) for k, v in out.items()}


@pytest.mark.parametrize("seed", range(6))
def test_the_root_split_is_the_best_of_all_tests(seed):
    """A stump over all features finds the largest reduction of all thresholds and subsets (brute force)."""
    X, nominal, lower, upper, C, scale, w = random_problem(seed, n=60, D=3)
    S = SparseColumns.from_dense(C, scale)
    stump = grow(X, nominal, lower, upper, S, w, grow_config(min_leaf=3, max_depth=1, seed=seed))
    rows = np.flatnonzero(w > 0)
    best = brute_best(X, nominal, C * scale, w, rows, 3.0)
    assert stump.feature[0] >= 0
    assert stump.gain[0] == pytest.approx(best, rel=1e-9)


@pytest.mark.parametrize("splitter", ["best", "random"])
@pytest.mark.parametrize("seed", range(4))
def test_every_node_gain_is_the_reduction_of_its_rows(splitter, seed):
    """h*(N) of every node of full trees (both splitters) is the sum-of-squares reduction of its bagged rows,
    and per-column gains (per-target Genie3) sum the per-column reductions of each feature's splits."""
    X, nominal, lower, upper, C, scale, w = random_problem(100 + seed)
    V = C * scale
    S = SparseColumns.from_dense(C, scale)
    tree = grow(X, nominal, lower, upper, S, w,
                grow_config(min_leaf=2, max_features=3, splitter=splitter, track_columns=True, seed=seed))
    reach = rows_of_nodes(tree, X, np.flatnonzero(w > 0))
    assert tree.internal.size > 5
    column_gain = np.zeros_like(tree.column_gain)
    for node in tree.internal:
        r = reach[node]
        left = np.isin(r, reach[tree.left[node]])
        assert tree.gain[node] == pytest.approx(reduction(V[r], w[r], left), rel=1e-9, abs=1e-12)
        for k in range(V.shape[1]):
            column_gain[tree.feature[node], k] += reduction(V[r][:, [k]], w[r], left)
    assert np.allclose(tree.column_gain, column_gain, rtol=1e-9, atol=1e-12)
    # and its leaves are pure or too small or cannot be split
    for node in np.flatnonzero(tree.feature < 0):
        assert tree.weight[node] == pytest.approx(w[reach[node]].sum())


# ---- the two target backends, operation by operation -------------------------------------------------------

def test_every_operation_has_both_backends_and_its_name():
    """Each operation of spark_fr.pct.targets is the module's name of it, with a kernel in each backend whose
    parameters are the operation's (numba compiles the kernel's Python function in its place)."""
    import inspect

    from spark_fr.pct import targets

    for name, (params, _) in targets.OPERATIONS.items():
        assert getattr(targets, name).__name__ == name
        for backend in ("dense", "sparse"):
            kernel = targets.BACKENDS[backend][name]
            assert list(inspect.signature(kernel.py_func).parameters) == [p.strip() for p in params.split(",")]
    assert set(targets.BACKENDS["dense"]) == set(targets.BACKENDS["sparse"]) == set(targets.OPERATIONS)


@njit(cache=True)
def node_operations(codes, targets, w, rows, start, end, config):
    """A target backend's operations on the node ``rows[start:end]``: its totals (W, P), and per feature its
    present codes (nt, n_known, MW), its best test (h, threshold, missing_left) and that test's mask."""
    fractional = config.missing == MISSING_FRACTIONAL
    tb = new_state(targets, rows, codes.nominal, config)
    nr = node_rows(rows, w, rows.shape[0], None, moved_targets(tb))
    node = node_totals(tb, nr, start, end)
    D = codes.X.shape[0]
    search = new_search(config.seed, D)
    present = np.zeros((D, 3))
    tests = np.full((D, 3), -np.inf)
    masks = np.zeros((D, 4), np.uint64)
    for f in range(D):
        pc, h, thr, ml = search_feature(tb, search, codes, f, nr, (start, end), node, config)
        present[f, 0], present[f, 1], present[f, 2] = pc.nt, pc.n_known, pc.MW
        if pc.n_known >= 2 or (not fractional and pc.nt >= 2):
            tests[f, 0], tests[f, 1], tests[f, 2] = h, thr, 1.0 if ml else 0.0
            masks[f] = search.mask
    end_node(tb)
    return np.array([node.W, node.P]), present, tests, masks


@njit(cache=True)
def split_operations(codes, targets, w, rows, start, end, config, tests):
    """The node ``rows[start:end]`` split by the test of node 0 of ``tests``, and the backend's gains of the
    split: per column (learned: add_column_gain; fractional: children_gain, with its reduction over the
    weighted rows)."""
    tb = new_state(targets, rows, codes.nominal, config)
    nr = node_rows(rows, w, 2 * rows.shape[0] + 16, None, moved_targets(tb))
    node = node_totals(tb, nr, start, end)
    gains = np.zeros((codes.X.shape[0], n_columns(tb)))
    f = tests.feature[0]
    reduction = np.nan
    if config.missing == MISSING_FRACTIONAL:
        nr, share, children = split_fractional(codes.X, tests, 0, nr, start, end, end)
        reduction = children_gain(tb, gains, f, True, nr, children, node)
    else:
        mid = partition(codes.X, tests, 0, nr, start, end)
        add_column_gain(tb, gains, f, nr, Children(0, start, mid, mid, end), node)
    end_node(tb)
    return gains, reduction


def goes_left_ref(codes, nominal_f, threshold, mask):
    """The rows with a known code going left by a test (threshold or mask)."""
    codes = codes.astype(np.int64)
    if nominal_f:
        bits = [(int(mask[c >> 6]) >> (c & 63)) & 1 if c != MISSING else 0 for c in codes]
        return np.array(bits, bool)
    return (codes <= threshold) & (codes != MISSING)


@pytest.mark.parametrize("missing", ["learned", "fractional"])
@pytest.mark.parametrize("splitter", ["best", "random"])
def test_each_backend_operation_agrees_with_the_other_on_random_nodes(splitter, missing):
    """On random nodes of random problems, every operation of the label-sparse backend against the dense one
    (the dense task's centred, scaled matrix): the node's weight to the bit and impurity to rounding; the
    present codes of every feature to the bit; every feature's best test of the same gain, which is the
    reduction its test makes by definition (on the rows whose value is known, for a fractional test of a
    feature with missing values); the random draws of extra trees giving the same tests; and a split's
    per-column gains and (fractional) its reduction over the weighted rows."""
    for seed in range(10):
        X, nominal, lower, upper, C, scale, w = random_problem(300 + seed, n=150, D=6, nominal_share=0.5)
        V = C * scale
        dense_Z = np.ascontiguousarray((C - C.mean(axis=0)) * scale)
        sparse = SparseColumns.from_dense(C, scale)
        sparse = SparseTargets(sparse.indptr, sparse.indices, sparse.values, sparse.n_columns)
        rng = np.random.default_rng(seed)
        rows = rng.permutation(np.flatnonzero(w > 0)).astype(np.int64)
        start, end = int(rng.integers(0, 10)), rows.size - int(rng.integers(0, 10))
        config = grow_config(min_leaf=2.0, splitter=splitter, missing=missing, seed=seed)
        config = config._replace(min_leaf=leaf_weight_floor(config.min_leaf, missing == "fractional"))
        codes = Codes(X, nominal, lower, upper)
        a = node_operations(codes, dense_Z, w, rows.copy(), start, end, config)
        b = node_operations(codes, sparse, w, rows.copy(), start, end, config)
        assert a[0][0] == b[0][0] and a[0][1] == pytest.approx(b[0][1], rel=1e-9)
        assert np.array_equal(a[1], b[1])
        node = rows[start:end]
        for f in range(X.shape[0]):
            (h_a, thr_a, ml_a), (h_b, thr_b, ml_b) = a[2][f], b[2][f]
            if h_a == -np.inf or h_b == -np.inf:
                assert h_a == h_b
                continue
            assert h_b == pytest.approx(h_a, rel=1e-9, abs=1e-9 * a[0][1])
            if splitter == "random":  # the same draws: the same test
                assert (thr_a, ml_a) == (thr_b, ml_b) and np.array_equal(a[3][f], b[3][f])
            c = X[f, node]
            miss = c == MISSING
            for thr, ml, mask, h in ((thr_a, ml_a, a[3][f], h_a), (thr_b, ml_b, b[3][f], h_b)):
                left = goes_left_ref(c, nominal[f], thr, mask)
                if missing == "fractional" and miss.any():  # scored on the rows whose value is known
                    ref = reduction(V[node[~miss]], w[node[~miss]], left[~miss])
                else:
                    ref = reduction(V[node], w[node], left | (miss & (ml > 0)))
                assert h == pytest.approx(ref, rel=1e-9, abs=1e-9 * a[0][1])
        f = int(np.argmax(a[2][:, 0]))
        if a[2][f, 0] == -np.inf:
            continue
        tests = TreeTests(np.array([f], np.int32), np.array([max(a[2][f, 1], 0)], np.int32),
                          np.array([a[2][f, 2] > 0 and missing == "learned"]), a[3][f][None, :].copy(),
                          np.zeros(1, np.int32), np.zeros(1, np.int32), nominal, np.zeros(1))
        gains_a, red_a = split_operations(codes, dense_Z, w, rows.copy(), start, end, config, tests)
        gains_b, red_b = split_operations(codes, sparse, w, rows.copy(), start, end, config, tests)
        np.testing.assert_allclose(gains_b, gains_a, rtol=1e-8, atol=1e-10 * a[0][1])
        if missing == "fractional":
            assert red_b == pytest.approx(red_a, rel=1e-9, abs=1e-9 * a[0][1])
        assert gains_a[f].sum() > 0 and not np.delete(gains_a, f, axis=0).any()


def split_of(tree, node):
    return (int(tree.feature[node]), int(tree.threshold[node]) if tree.feature[node] >= 0 else 0,
            bool(tree.missing_left[node]), tuple(tree.mask[node]))


def compare_up_to_ties(dense, sparse, X, V, w):
    """Walk both trees together; where they choose different tests, both tests must reduce the node's
    impurity equally (a tie, broken by rounding); returns (nodes compared, ties found)."""
    reach_d = rows_of_nodes(dense, X, np.flatnonzero(w > 0))
    reach_s = rows_of_nodes(sparse, X, np.flatnonzero(w > 0))
    stack, compared, ties = [(0, 0)], 0, 0
    while stack:
        i, j = stack.pop()
        compared += 1
        assert np.array_equal(np.sort(reach_d[i]), np.sort(reach_s[j]))
        assert dense.weight[i] == sparse.weight[j]
        if split_of(dense, i) != split_of(sparse, j):
            ties += 1
            r = reach_d[i]
            h_d = reduction(V[r], w[r], np.isin(r, reach_d[dense.left[i]])) if dense.feature[i] >= 0 else 0.0
            h_s = reduction(V[r], w[r], np.isin(r, reach_s[sparse.left[j]])) if sparse.feature[j] >= 0 else 0.0
            assert h_d == pytest.approx(h_s, rel=1e-9, abs=1e-9 * max(sse(V[r], w[r]), 1e-300))
            continue
        if dense.feature[i] >= 0:
            assert sparse.gain[j] == pytest.approx(dense.gain[i], rel=1e-9, abs=1e-12)
            stack += [(dense.left[i], sparse.left[j]), (dense.right[i], sparse.right[j])]
    return compared, ties


@pytest.mark.parametrize("splitter", ["best", "random"])
def test_sparse_and_dense_grow_the_same_trees_up_to_ties(splitter):
    identical = 0
    for seed in range(12):
        X, nominal, lower, upper, C, scale, w = random_problem(200 + seed, n=200, D=6)
        Z = (C - C.mean(axis=0)) * scale  # the dense task's centred, scaled clustering matrix
        S = SparseColumns.from_dense(C, scale)
        kw = dict(min_leaf=3, max_features=3, splitter=splitter, track_columns=True, seed=seed)
        config = grow_config(**kw)
        dense, sparse = grow(X, nominal, lower, upper, Z, w, config), grow(X, nominal, lower, upper, S, w, config)
        compared, ties = compare_up_to_ties(dense, sparse, X, C * scale, w)
        assert compared >= 0.85 * dense.n_nodes  # ties (0/1 labels, small nodes) cut off few subtrees
        if ties == 0:
            identical += 1
            assert np.array_equal(dense.leaf_of_row, sparse.leaf_of_row)
            assert np.allclose(dense.column_gain, sparse.column_gain, rtol=1e-8, atol=1e-10)
    assert identical >= 1


# ---- the HMLC task chooses the representation ----------------------------------------------------------

def test_hmlc_clusters_on_sparse_labels_and_the_same_values_as_dense():
    rng = np.random.default_rng(5)
    L, n = 60, 300
    Y = (rng.random((n, L)) < 0.04).astype(float)
    Y[:, 0] = 1.0  # a constant label: left out
    task = HMLC().fit_from_moments(column_moments(Y, np.ones(L)), [f"l{j}" for j in range(L)],
                                   label_weights=np.linspace(1.0, 0.2, L))
    S = task.clustering_input(Y)
    assert isinstance(S, SparseColumns) and S.n_columns == task.kept.size == L - 1
    Z = task.clustering_matrix(Y)
    assert np.allclose(S.to_dense() - task.center * np.sqrt(task.alpha), Z, rtol=0, atol=1e-12)
    Y[3] = np.nan  # an unlabelled row (semi-supervised input): missing values stay dense
    assert isinstance(task.clustering_input(Y), np.ndarray)


# ---- label-sparse encoded targets (SparseLabels) -------------------------------------------------------

def random_labels(seed, n=80, L=50, unlabelled=0.0):
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, L)) < 0.08).astype(float)
    Y[:, 3] = 1.0            # a label every row has (constant 1: predicted, not clustered)
    Y[:, 7] = 0.0            # a label no row has
    Y[rng.random(n) < unlabelled] = np.nan
    return Y


def test_sparse_labels_keep_the_matrix_and_its_unlabelled_rows():
    Y = random_labels(1, unlabelled=0.2)
    S = SparseLabels.from_dense(Y)
    assert S.shape == Y.shape and S.nnz == np.nansum(Y)
    assert np.array_equal(S.to_dense(), Y, equal_nan=True)
    assert np.array_equal(S.labelled, ~np.isnan(Y).all(axis=1))
    assert np.array_equal(S.dense_columns(10, 23), Y[:, 10:23], equal_nan=True)
    pick = np.array([5, 0, 5, 79, 12])
    assert np.array_equal(S[pick].to_dense(), Y[pick], equal_nan=True)
    mask = np.arange(80) % 3 == 0
    assert np.array_equal(S[mask].to_dense(), Y[mask], equal_nan=True)
    both = SparseLabels.vstack([S[mask], S[~mask]])
    assert np.array_equal(both.to_dense(), np.vstack([Y[mask], Y[~mask]]), equal_nan=True)
    full = S[S.labelled]
    cols, scale = np.array([0, 3, 8, 20, 49]), np.array([0.5, 1.0, 2.0, 3.0, 4.0])
    assert np.array_equal(full.select(cols, scale).to_dense(), Y[S.labelled][:, cols] * scale)
    with pytest.raises(ValueError, match="unlabelled"):
        S.select(cols)
    partial = Y.copy()
    partial[S.labelled.argmax(), 0] = np.nan
    with pytest.raises(ValueError, match="complete or unlabelled"):
        SparseLabels.from_dense(partial)


def test_hmlc_fits_sparse_labels_exactly_as_dense_ones(monkeypatch):
    """The moments of label blocks (forced to 7 labels per block) give the fit of the whole dense matrix,
    to the last bit: every column's moments are its own."""
    import spark_fr.tasks.base as base

    Y = random_labels(2)
    names = [f"l{j}" for j in range(Y.shape[1])]
    weights = np.linspace(1.0, 0.3, Y.shape[1])
    dense = HMLC().fit(Y, names, None, weights)
    monkeypatch.setattr(base, "MOMENT_BLOCK_VALUES", 7 * Y.shape[0])
    sparse = HMLC().fit(SparseLabels.from_dense(Y), names, None, weights)
    for attr in ("center", "alpha", "train_variance", "kept", "constant_prediction"):
        assert np.array_equal(getattr(dense, attr), getattr(sparse, attr)), attr
    assert 3 not in dense.kept and 7 not in dense.kept


def test_label_errors_count_the_differing_labels():
    rng = np.random.default_rng(3)
    Y = random_labels(4)
    P = (rng.random((15, Y.shape[1])) < 0.1).astype(float)  # predicted sets of 15 nodes
    nodes = rng.integers(0, 15, Y.shape[0])
    got = label_errors(SparseLabels.from_dense(Y), SparseColumns.from_dense(P), nodes)
    assert np.array_equal(got, np.abs(Y - P[nodes]).sum(axis=0))


def hmlc_tree_data(Y, X, sparse_targets):
    """TreeData of an HMLC problem whose trees grow on sparse clustering columns, with the label matrix and
    prototype columns dense or label-sparse."""
    from spark_fr.data.binning import fit_bins, stack_bins
    from spark_fr.ensemble.trees import TreeData

    names = [f"l{j}" for j in range(Y.shape[1])]
    fitted = HMLC().fit(Y, names, None, np.linspace(1.0, 0.3, Y.shape[1]))
    bins = [fit_bins(X[:, f], nominal=False) for f in range(X.shape[1])]
    codes = np.ascontiguousarray(np.stack([b.encode(X[:, f]) for f, b in enumerate(bins)]))
    lower, upper, _ = stack_bins(bins)
    T = SparseLabels.from_dense(Y) if sparse_targets else Y
    Z = fitted.clustering_input(SparseLabels.from_dense(Y))
    return TreeData(codes, np.zeros(X.shape[1], bool), lower, upper, Z, T, fitted.prototype_columns(T),
                    np.arange(Y.shape[0], dtype=np.uint64), fitted)


@pytest.mark.parametrize("missing", ["learned", "fractional"])
def test_label_sparse_targets_score_trees_bit_for_bit_as_dense_ones(missing):
    """Leaf frequencies, predicted sets and error counts of the label-sparse form: the same Symbolic, Genie3
    and RF scores, joint and per label, as the dense label matrix. Fractional trees (features with missing
    values): the mixed label frequencies of the leaves a row reaches, sparse and dense, to the bit."""
    from spark_fr.ensemble.params import EnsembleParams
    from spark_fr.ensemble.trees import score_tree
    from spark_fr.results import ScoreKey

    rng = np.random.default_rng(6)
    X = rng.random((300, 6))
    Y = random_labels(7, n=300)
    Y[:, 10:14] = (X[:, [0]] > 0.5) & (rng.random((300, 4)) < 0.9)  # labels driven by x0
    if missing == "fractional":
        X[rng.random(X.shape) < 0.2] = np.nan
    params = EnsembleParams(trees=4, seed=3, scores="symbolic,genie3,rf", per_target=True, missing=missing)
    dense, sparse = hmlc_tree_data(Y, X, False), hmlc_tree_data(Y, X, True)
    assert isinstance(sparse.proto, SparseColumns) and isinstance(dense.proto, np.ndarray)
    for t in range(4):
        a, b = score_tree(dense, params, t), score_tree(sparse, params, t)
        assert a.keys() == b.keys()
        for key in a:
            assert np.array_equal(a[key], b[key]), key
    rf = sum(score_tree(sparse, params, t)[ScoreKey("rf")] for t in range(4))
    assert np.argmax(rf) == 0  # the feature the driven labels follow
