"""The numba tree kernels against slow, obvious NumPy references on random data, per task type."""
import itertools

import numpy as np
import pytest
from sklearn.tree import DecisionTreeRegressor

from spark_fr.data.binning import fit_bins, stack_bins
from spark_fr.pct import scores as pct_scores
from spark_fr.pct.route import permutation
from spark_fr.runtime.rng import Stream, derive_seed, poisson1_counts
from spark_fr.pct.config import grow_config
from spark_fr.pct.tree import grow, leaf_prototypes
from spark_fr import tasks

TASKS = ["regression", "mtr", "classification", "mlc"]


def make_targets(task, rng, n, missing=0.0):
    if task == "regression":
        Y = rng.normal(size=(n, 1)) * 3 + 10
    elif task == "mtr":
        Y = rng.normal(size=(n, 3)) * np.array([1.0, 50.0, 0.1])
    elif task == "classification":
        Y = rng.integers(0, 3, (n, 1)).astype(float)
    else:
        Y = (rng.random((n, 4)) < 0.4).astype(float)
    if missing:
        Y[rng.random(Y.shape) < missing] = np.nan
    classes = ["a", "b", "c"] if task == "classification" else None
    return Y, classes


def make_features(rng, n, n_num=3, n_nom=2, missing=0.0, n_values=6):
    cols, nominal = [], []
    for _ in range(n_num):
        cols.append(rng.integers(0, n_values, n) * 0.5)
        nominal.append(False)
    for _ in range(n_nom):
        cols.append(rng.integers(0, 4, n).astype(float))
        nominal.append(True)
    X = np.stack(cols, axis=1)
    if missing:
        X[rng.random(X.shape) < missing] = np.nan
    nominal = np.array(nominal)
    bins = [fit_bins(X[:, f], nominal=bool(nominal[f])) for f in range(X.shape[1])]
    codes = np.ascontiguousarray(np.stack([b.encode(X[:, f]) for f, b in enumerate(bins)]))
    lower, upper, _ = stack_bins(bins)
    return codes, nominal, lower, upper


def brute_force_best_split(codes, nominal, Y, w, task, min_leaf):
    """Every binary test on every feature, missing values sent left or right; the best h (reference)."""
    n = codes.shape[1]
    rows = np.flatnonzero(w > 0)
    W = w[rows].sum()
    P = W * task.impurity(Y[rows], w[rows])
    best = -np.inf
    for f in range(codes.shape[0]):
        c = codes[f, rows]
        present = np.unique(c[c != 255])
        miss = c == 255
        if nominal[f]:
            subsets = [set(s) for r in range(1, len(present)) for s in itertools.combinations(present, r)]
            if len(present) == 1:
                subsets = [set(present)]
        else:
            subsets = [set(present[present <= t]) for t in present]
        for A in subsets:
            in_a = np.isin(c, list(A))
            for miss_left in (False, True):
                left = in_a | (miss & miss_left)
                right = ~left
                wl, wr = w[rows][left].sum(), w[rows][right].sum()
                if wl < min_leaf or wr < min_leaf:
                    continue
                h = P - wl * task.impurity(Y[rows][left], w[rows][left]) \
                    - wr * task.impurity(Y[rows][right], w[rows][right])
                best = max(best, h)
    return best, P


@pytest.mark.parametrize("task_name", TASKS)
@pytest.mark.parametrize("x_missing,y_missing", [(0.0, 0.0), (0.2, 0.0), (0.0, 0.15), (0.2, 0.15)])
def test_root_split_is_the_brute_force_best(task_name, x_missing, y_missing):
    if task_name == "classification":
        y_missing = 0.0
    for seed in range(6):
        rng = np.random.default_rng(seed)
        n = 60
        codes, nominal, lower, upper = make_features(rng, n, missing=x_missing)
        Y, classes = make_targets(task_name, rng, n, missing=y_missing)
        task = tasks.get(task_name).fit(Y, [f"t{j}" for j in range(Y.shape[1])], classes)
        w = rng.integers(0, 3, n).astype(float)
        tree = grow(codes, nominal, lower, upper, task.clustering_matrix(Y), w, grow_config(min_leaf=2, max_depth=1))
        best, P = brute_force_best_split(codes, nominal, Y, w, task, 2.0)
        assert tree.feature[0] >= 0
        assert tree.gain[0] == pytest.approx(best, rel=1e-9, abs=1e-12 * P)
        # the split the kernel chose really has that gain
        rows = np.flatnonzero(w > 0)
        left_rows = rows[tree.leaf_of_row[rows] == tree.left[0]]
        right_rows = rows[tree.leaf_of_row[rows] == tree.right[0]]
        h = (P - w[left_rows].sum() * task.impurity(Y[left_rows], w[left_rows])
             - w[right_rows].sum() * task.impurity(Y[right_rows], w[right_rows]))
        assert h == pytest.approx(tree.gain[0], rel=1e-9, abs=1e-12 * P)
        assert tree.weight[0] == pytest.approx(w.sum())


@pytest.mark.parametrize("y_missing", [0.0, 0.1])
def test_missing_feature_values_go_to_the_better_side(y_missing):
    """Rows with a missing x have large targets: the best test sends them with the large x values."""
    rng = np.random.default_rng(8)
    n = 120
    x = rng.integers(0, 10, n).astype(float)
    y = np.where(x > 6, 5.0, 0.0) + rng.normal(size=n) * 0.1
    miss = rng.random(n) < 0.2
    y[miss] = 5.0 + rng.normal(size=miss.sum()) * 0.1
    x[miss] = np.nan
    for side in ("high", "low"):
        xs = x if side == "high" else 9 - x
        b = fit_bins(xs)
        codes = b.encode(xs)[None, :]
        lower, upper, _ = stack_bins([b])
        Y = y[:, None].copy()
        Y[rng.random(n) < y_missing] = np.nan
        task = tasks.get("regression").fit(Y, ["y"])
        tree = grow(codes, np.array([False]), lower, upper, task.clustering_matrix(Y), np.ones(n),
                    grow_config(max_depth=1))
        best, _ = brute_force_best_split(codes, np.array([False]), Y, np.ones(n), task, 2.0)
        assert tree.gain[0] == pytest.approx(best, rel=1e-9)
        assert bool(tree.missing_left[0]) == (side == "low")


def test_greedy_subset_search_for_many_categories_is_valid_and_good():
    """Above 8 categories the subset is built greedily: its gain is a real gain, close to the best."""
    rng = np.random.default_rng(3)
    n = 400
    cat = rng.integers(0, 12, n).astype(float)
    effect = rng.normal(size=12) * 2
    Y = (effect[cat.astype(int)] + rng.normal(size=n) * 0.3)[:, None]
    b = fit_bins(cat, nominal=True)
    codes = b.encode(cat)[None, :]
    lower, upper, _ = stack_bins([b])
    task = tasks.get("regression").fit(Y, ["y"])
    tree = grow(codes, np.array([True]), lower, upper, task.clustering_matrix(Y), np.ones(n), grow_config(max_depth=1))
    # the optimum for one numeric target: sort categories by mean, best prefix (Breiman)
    means = np.array([Y[cat == k, 0].mean() for k in range(12)])
    order = np.argsort(means)
    P = n * task.impurity(Y)
    best = max(P - (cat_in := np.isin(cat, order[:i])).sum() * task.impurity(Y[cat_in])
               - (~cat_in).sum() * task.impurity(Y[~cat_in]) for i in range(1, 12))
    assert tree.gain[0] <= best * (1 + 1e-9)
    assert tree.gain[0] >= 0.95 * best


def test_single_regression_tree_equals_scikit_learn():
    """Same splits (feature, partition sizes) and leaf values as DecisionTreeRegressor, without randomness."""
    for seed in range(6):
        rng = np.random.default_rng(seed)
        n, D = 400, 6
        X = rng.integers(0, 60, (n, D)) / 7.0
        y = 2 * X[:, 0] + np.sin(X[:, 1]) + rng.normal(0, 0.3, n)
        bins = [fit_bins(X[:, f]) for f in range(D)]
        codes = np.ascontiguousarray(np.stack([b.encode(X[:, f]) for f, b in enumerate(bins)]))
        lower, upper, _ = stack_bins(bins)
        task = tasks.get("regression").fit(y[:, None], ["y"])
        tree = grow(codes, np.zeros(D, bool), lower, upper, task.clustering_matrix(y[:, None]), np.ones(n),
                    grow_config(min_leaf=5))
        proto = leaf_prototypes(tree, task.prototype_columns(y[:, None]), np.ones(n), task.default_prototype())
        sk = DecisionTreeRegressor(min_samples_leaf=5, random_state=seed).fit(X, y).tree_

        def ours(node, rows):
            if tree.feature[node] < 0:
                return [("leaf", len(rows), round(proto[node, 0], 9))]
            f, t = tree.feature[node], tree.threshold[node]
            left, right = rows[codes[f, rows] <= t], rows[codes[f, rows] > t]
            return [("split", int(f), len(left), len(rows))] + ours(tree.left[node], left) + \
                ours(tree.right[node], right)

        def theirs(node, rows):
            if sk.children_left[node] == -1:
                return [("leaf", len(rows), round(sk.value[node][0][0], 9))]
            f, t = sk.feature[node], sk.threshold[node]
            left, right = rows[X[rows, f] <= t], rows[X[rows, f] > t]
            return [("split", int(f), len(left), len(rows))] + theirs(sk.children_left[node], left) + \
                theirs(sk.children_right[node], right)

        assert ours(0, np.arange(n)) == theirs(0, np.arange(n))


def test_extra_trees_threshold_is_uniform_in_the_node_range():
    """One random threshold per feature, uniform in [min, max] of the node: each of the 9 cuts between
    10 equally spaced values is chosen with probability 1/9; the gain is the partition's real gain."""
    rng = np.random.default_rng(0)
    n = 200
    x = rng.integers(0, 10, n).astype(float)
    y = rng.normal(size=(n, 1))
    b = fit_bins(x)
    codes = b.encode(x)[None, :]
    lower, upper, _ = stack_bins([b])
    task = tasks.get("regression").fit(y, ["y"])
    Z = task.clustering_matrix(y)
    chosen = []
    for s in range(1800):
        tree = grow(codes, np.array([False]), lower, upper, Z, np.ones(n),
                    grow_config(max_depth=1, splitter="random", min_leaf=1, seed=s))
        if tree.feature[0] < 0:
            continue
        t = tree.threshold[0]
        left = codes[0] <= t
        h = n * task.impurity(y) - left.sum() * task.impurity(y[left]) - (~left).sum() * task.impurity(y[~left])
        assert h == pytest.approx(tree.gain[0], rel=1e-9, abs=1e-12)
        chosen.append(t)
    counts = np.bincount(chosen, minlength=9)[:9]
    expected = len(chosen) / 9
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert counts.sum() > 1500
    assert chi2 < 30  # 8 degrees of freedom; p ~ 2e-4


def test_random_forest_feature_subset_limits_the_candidates():
    """With max_features=1 the root tests one random feature. A sampled feature that is constant in the
    node counts (thesis, CLUS: the node becomes a leaf), unless resample_constant (scikit-learn)."""
    rng = np.random.default_rng(1)
    n = 100
    codes, nominal, lower, upper = make_features(rng, n, n_num=4, n_nom=0)
    codes[3] = 0  # a constant feature
    Y = (codes[0] + rng.normal(size=n) * 0.1)[:, None].astype(float)
    task = tasks.get("regression").fit(Y, ["y"])
    Z = task.clustering_matrix(Y)

    def root(**options):
        return int(grow(codes, nominal, lower, upper, Z, np.ones(n), grow_config(max_depth=1, **options)).feature[0])

    roots = [root(max_features=1, seed=s) for s in range(80)]
    assert set(roots) == {-1, 0, 1, 2}
    assert 0.1 < roots.count(-1) / len(roots) < 0.4  # the constant feature is drawn 1 time in 4
    resampled = {root(max_features=1, seed=s, resample_constant=True) for s in range(60)}
    assert resampled == {0, 1, 2}
    # all features, random order: every root is the best split
    best = {root(seed=s) for s in range(10)}
    assert best == {0}


def _route(tree, codes, r, permuted=None):
    node = 0
    while tree.feature[node] >= 0:
        f = tree.feature[node]
        c = codes[f, permuted[1]] if permuted is not None and f == permuted[0] else codes[f, r]
        if c == 255:
            go_left = tree.missing_left[node]
        elif tree.nominal[f]:
            go_left = bool((int(tree.mask[node, c // 64]) >> (c % 64)) & 1)
        else:
            go_left = c <= tree.threshold[node]
        node = tree.left[node] if go_left else tree.right[node]
    return node


def test_prediction_and_path_kernels_match_a_python_walk():
    rng = np.random.default_rng(5)
    n = 300
    codes, nominal, lower, upper = make_features(rng, n, missing=0.1)
    Y, _ = make_targets("mtr", rng, n)
    task = tasks.get("mtr").fit(Y, ["a", "b", "c"])
    tree = grow(codes, nominal, lower, upper, task.clustering_matrix(Y), np.ones(n),
                grow_config(max_features=2, seed=9))
    XR = np.ascontiguousarray(codes.T)
    rows = np.arange(n)
    checked = 0
    assert list(tree.apply(XR, rows)) == [_route(tree, codes, r) for r in rows]
    perm = rng.permutation(n)
    for f in range(codes.shape[0]):
        got = tree.apply_permuted(XR, rows, perm, f)
        assert list(got) == [_route(tree, codes, r, (f, perm[r])) for r in rows]
    pairs = tree.rows_by_path_feature(XR, rows)
    indptr, positions, first_nodes, routes = pairs.indptr, pairs.positions, pairs.first_nodes, pairs.routes
    assert routes.single and list(routes.leaves) == [_route(tree, codes, r) for r in rows]
    for f in range(codes.shape[0]):
        expected = {}
        for r in rows:
            node, first = 0, None
            while tree.feature[node] >= 0:
                if first is None and tree.feature[node] == f:
                    first = node
                node = _route_step(tree, codes, r, node)
            if first is not None:
                expected[r] = first
        pos, starts = positions[indptr[f]:indptr[f + 1]], first_nodes[indptr[f]:indptr[f + 1]]
        assert dict(zip(pos.tolist(), starts.tolist())) == expected and len(pos) == len(expected)
        # routing from the first node testing f gives the leaf of routing the permuted row from the root
        got = tree.apply_permuted(XR, rows[pos], perm[pos], f, starts)
        assert list(got) == [_route(tree, codes, r, (f, perm[r])) for r in rows[pos]]
        # the range of codes a path lets through: exactly the known codes that keep the row's leaf (numeric f, no
        # missing code of f on the path); empty otherwise
        lo, hi = pairs.lo[indptr[f]:indptr[f + 1]], pairs.hi[indptr[f]:indptr[f + 1]]
        for r, a, b in zip(rows[pos], lo, hi):
            if a > b:
                assert nominal[f] or _path_meets_missing(tree, codes, r, f)
                continue
            assert not nominal[f]
            keeps = {v for v in range(255) if _route_with(tree, codes, r, f, v) == routes.leaves[r]}
            assert keeps == set(range(a, b + 1)), (f, r)
        checked += int(np.sum(lo <= hi))
    assert checked > 100  # the ranges were tested on many pairs


@pytest.mark.parametrize("m", [0, 1, 15, 16, 17, 33, 250])
def test_walks_from_any_node_match_a_python_walk_for_any_number_of_rows(m):
    """walk_rows' lanes take the next row as soon as theirs reaches its leaf: every row still gets its own leaf,
    from its own start node, whatever the number of rows (below, at and above the lanes) and the walks' lengths."""
    rng = np.random.default_rng(m)
    n = 300
    codes, nominal, lower, upper = make_features(rng, n, missing=0.1)
    Y, _ = make_targets("mtr", rng, n)
    task = tasks.get("mtr").fit(Y, ["a", "b", "c"])
    tree = grow(codes, nominal, lower, upper, task.clustering_matrix(Y), np.ones(n),
                grow_config(max_features=2, seed=m))
    XR = np.ascontiguousarray(codes.T)
    rows = rng.integers(0, n, m)
    perm = rng.integers(0, n, m)
    starts = rng.integers(0, tree.n_nodes, m)  # any node: a leaf, or an internal node at any depth
    for f in range(codes.shape[0]):
        got = tree.apply_permuted(XR, rows, perm, f, starts)
        want = []
        for r, p, s in zip(rows, perm, starts):
            x = codes[:, r].copy()
            x[f] = codes[f, p]
            want.append(_route_from(tree, x, s))
        assert got.tolist() == want


@pytest.mark.parametrize("m", [1, 2, 5])
def test_path_pairs_of_a_few_rows_testing_many_features(m):
    """rows_by_path_feature makes room for a row's pairs before walking it (one a feature at most), beyond the first
    room (16 a row): a few rows on a tree of 40 features, whose paths test more than 16 of them, get every pair."""
    rng = np.random.default_rng(m)
    n = 600
    codes, nominal, lower, upper = make_features(rng, n, n_num=36, n_nom=4, missing=0.05, n_values=30)
    Y, _ = make_targets("mtr", rng, n)
    task = tasks.get("mtr").fit(Y, ["a", "b", "c"])
    tree = grow(codes, nominal, lower, upper, task.clustering_matrix(Y), np.ones(n),
                grow_config(max_features=40, seed=m, min_leaf=1.0))
    XR = np.ascontiguousarray(codes.T)
    paths = [_path(tree, codes, r) for r in range(n)]
    rows = np.array(sorted(range(n), key=lambda r: -len({f for f, _ in paths[r]}))[:m], np.int64)
    assert len({f for f, _ in paths[rows[-1]]}) > 16  # more pairs than the first room of one row
    pairs = tree.rows_by_path_feature(XR, rows)
    assert pairs.routes.leaves.tolist() == [_route(tree, codes, r) for r in rows]
    for f in range(codes.shape[0]):
        part = slice(pairs.indptr[f], pairs.indptr[f + 1])
        want = [(i, next(node for g, node in paths[r] if g == f)) for i, r in enumerate(rows)
                if any(g == f for g, _ in paths[r])]
        assert list(zip(pairs.positions[part].tolist(), pairs.first_nodes[part].tolist())) == want


def _path(tree, codes, r):
    """The (feature, node) of every internal node on row r's path, from the root."""
    node, out = 0, []
    while tree.feature[node] >= 0:
        out.append((int(tree.feature[node]), node))
        node = _route_step(tree, codes, r, node)
    return out


def _route_from(tree, x, node):
    """The leaf reached from ``node`` by the row of codes ``x``."""
    while tree.feature[node] >= 0:
        node = _route_step(tree, x[:, None], 0, node)
    return node


def _route_with(tree, codes, r, f, v):
    """The leaf of row r when its code of feature f is v."""
    x = codes[:, r].copy()
    x[f] = v
    return _route(tree, x[:, None], 0)


def _path_meets_missing(tree, codes, r, f):
    """Whether row r's path reaches a node testing f with f's code missing."""
    node = 0
    while tree.feature[node] >= 0:
        if tree.feature[node] == f and codes[f, r] == 255:
            return True
        node = _route_step(tree, codes, r, node)
    return False


def _route_step(tree, codes, r, node):
    f = tree.feature[node]
    c = codes[f, r]
    if c == 255:
        go_left = tree.missing_left[node]
    elif tree.nominal[f]:
        go_left = bool((int(tree.mask[node, c // 64]) >> (c % 64)) & 1)
    else:
        go_left = c <= tree.threshold[node]
    return tree.left[node] if go_left else tree.right[node]


@pytest.mark.parametrize("task_name", TASKS)
def test_scores_of_one_tree_match_their_definitions(task_name):
    rng = np.random.default_rng(11)
    n = 250
    codes, nominal, lower, upper = make_features(rng, n, missing=0.05)
    Y, classes = make_targets(task_name, rng, n, missing=0.05 if task_name != "classification" else 0.0)
    task = tasks.get(task_name).fit(Y, [f"t{j}" for j in range(Y.shape[1])], classes)
    seed = derive_seed(3, 0)
    w = poisson1_counts(seed, np.arange(n, dtype=np.uint64))
    tree = grow(codes, nominal, lower, upper, task.clustering_matrix(Y), w,
                grow_config(max_features=3, seed=seed, track_columns=True))
    D = codes.shape[0]
    nodes = np.flatnonzero(tree.feature >= 0)
    # Symbolic and Genie3: sums over the nodes that test each feature
    sym = np.zeros(D)
    sym_w = np.zeros(D)
    gen = np.zeros(D)
    for node in nodes:
        sym[tree.feature[node]] += tree.weight[node] / n
        sym_w[tree.feature[node]] += 0.5 ** tree.depth[node]
        gen[tree.feature[node]] += tree.gain[node]
    np.testing.assert_allclose(pct_scores.symbolic(tree, D, n), sym)
    np.testing.assert_allclose(pct_scores.symbolic(tree, D, n, 0.5), sym_w)
    np.testing.assert_allclose(pct_scores.genie3(tree, D), gen)
    # per-target Genie3 averages to the joint one (MTR, MLC)
    if task_name in ("mtr", "mlc"):
        per_t = pct_scores.genie3_per_target(tree, task.column_target, task.per_target_scale)
        np.testing.assert_allclose(per_t.mean(axis=0), gen, rtol=1e-9, atol=1e-9)
    # RF score: full re-prediction of every OOB row with the same permutation
    XR = np.ascontiguousarray(codes.T)
    joint, per_t = pct_scores.permutation_scores(tree, XR, Y, task.prototype_columns(Y), w, task, seed, True)
    oob = np.flatnonzero(w == 0)
    proto = leaf_prototypes(tree, task.prototype_columns(Y), w, task.default_prototype())
    base_t = task.target_errors(Y[oob], task.predict(proto[tree.apply(XR, oob)]))
    base = np.nanmean(base_t)
    used = set(tree.feature[nodes])
    for f in range(D):
        if f not in used:
            assert joint[f] == 0.0
            continue
        perm = permutation(np.uint64(derive_seed(seed, f, Stream.PERMUTATION)), oob.size)
        leaves = np.array([_route(tree, codes, r, (f, oob[perm[i]])) for i, r in enumerate(oob)])
        err_t = task.target_errors(Y[oob], task.predict(proto[leaves]))
        floor = 1.0 / (oob.size * Y.shape[1])
        # relative increase of the error; classification: decrease of the accuracy relative to the accuracy
        ref, ref_t = (1 - base, 1 - base_t) if task_name == "classification" else (base, base_t)
        assert joint[f] == pytest.approx((np.nanmean(err_t) - base) / max(ref, floor), abs=1e-12)
        np.testing.assert_allclose(per_t[:, f], np.nan_to_num((err_t - base_t) /
                                                               np.maximum(ref_t, 1.0 / oob.size)), atol=1e-12)


def test_task_errors_are_the_usual_measures():
    rng = np.random.default_rng(2)
    Y = rng.normal(size=(50, 2)) * [2.0, 5.0]
    P = Y + rng.normal(size=(50, 2))
    t = tasks.get("mtr").fit(Y, ["a", "b"])
    expected = np.mean(((Y - P) ** 2).mean(axis=0) / Y.var(axis=0))
    assert t.error(Y, P) == pytest.approx(expected)
    L = (rng.random((40, 3)) < 0.5).astype(float)
    Lp = (rng.random((40, 3)) < 0.5).astype(float)
    assert tasks.get("mlc").fit(L, ["a", "b", "c"]).error(L, Lp) == pytest.approx(np.mean(L != Lp))  # Hamming loss
    c = rng.integers(0, 3, (30, 1)).astype(float)
    cp = rng.integers(0, 3, (30, 1)).astype(float)
    assert tasks.get("classification").fit(c, ["y"], ["a", "b", "c"]).error(c, cp) == pytest.approx(np.mean(c != cp))


def test_task_impurities_are_gini_and_normalised_variance():
    rng = np.random.default_rng(4)
    c = rng.integers(0, 3, (80, 1)).astype(float)
    p = np.bincount(c[:, 0].astype(int)) / 80
    assert tasks.get("classification").fit(c, ["y"], ["a", "b", "c"]).impurity(c) == pytest.approx(1 - (p ** 2).sum())
    Y = rng.normal(size=(80, 3)) * [1, 10, 100]
    t = tasks.get("mtr").fit(Y, ["a", "b", "c"])
    sub = Y[:30]
    assert t.impurity(sub) == pytest.approx(np.mean(sub.var(axis=0) / Y.var(axis=0)))
    L = (rng.random((80, 4)) < 0.3).astype(float)
    tl = tasks.get("mlc").fit(L, list("abcd"))
    assert tl.impurity(L[:20]) == pytest.approx(np.mean(L[:20].var(axis=0) / L.var(axis=0)))


def test_poisson_bootstrap_depends_on_seed_and_key_only():
    keys = np.arange(200_000, dtype=np.uint64) * np.uint64(7919)
    c1 = poisson1_counts(derive_seed(1, 5, Stream.BOOTSTRAP), keys)
    assert c1.mean() == pytest.approx(1.0, abs=0.01)
    assert (c1 == 0).mean() == pytest.approx(np.exp(-1), abs=0.005)
    shuffled = np.random.default_rng(0).permutation(keys.size)
    np.testing.assert_array_equal(poisson1_counts(derive_seed(1, 5, Stream.BOOTSTRAP), keys[shuffled]), c1[shuffled])
    assert not np.array_equal(poisson1_counts(derive_seed(1, 6, Stream.BOOTSTRAP), keys), c1)
