"""``--missing fractional`` (CLUS's rule for missing feature values) against slow, obvious references.

The reference grower below is plain NumPy on (row, weight) lists: a test is scored by the impurity reduction of
the rows whose value of its feature is known, |E_k| impu(E_k) - |E_k,L| impu(E_k,L) - |E_k,R| impu(E_k,R),
valid if the known rows of both sides weigh >= min_leaf (less 1e-9 of it, for the rounding of fractional
weights); a row with a missing value goes down both branches,
its weight times the share of the known weight going each way; a node's gain (what Genie3 sums) is the
reduction of |E| impu(E) over the weighted rows of the node and of its children. A row is predicted by the
same shares: the mixture of the prototypes of the leaves it reaches.
"""
import itertools

import numpy as np
import pytest

from spark_fr import tasks
from spark_fr.pct import scores as pct_scores
from spark_fr.pct.config import grow_config
from spark_fr.pct.impurity import known_totals, new_sums
from spark_fr.pct.node_rows import NodeRows, TreeTests, free_start, split_fractional
from spark_fr.pct.numeric import scan_numeric_complete, scan_numeric_missing
from spark_fr.pct.route import permutation
from spark_fr.pct.subsets import subset_greedy
from spark_fr.pct.tree import grow, leaf_prototypes
from spark_fr.runtime.rng import Stream, derive_seed, poisson1_counts, rand_below
from spark_fr.tasks.sparse_columns import SparseColumns

from tests.conftest import slow_fractional_route
from tests.pct.test_grow_helpers import ss_ref as ss  # |E| impu(E), the slow reference

MISSING = 255


def threshold_tests(codes):
    """The known codes going left of every threshold test "code <= t" of a numeric feature, by increasing t."""
    return [frozenset(codes[codes <= t]) for t in codes]


def greedy_subset(codes, score):
    """CLUS's greedy forward selection of a nominal test's subset A (the grower's): add the category (in code
    order) whose addition scores best, the first of equal ones; stop when that is no better than the previous
    round or A would hold every category. Returns (h, A, evaluated): A as the side without the first category
    (A and its complement are one test, of the same score on the known rows), and every (h, A) scored on the
    way, in that orientation (for breaking ties as the kernel did)."""
    def oriented(A):
        return frozenset(A) if codes[0] not in A else frozenset(codes.tolist()) - frozenset(A)

    A, cur, evaluated = [], -np.inf, []
    while len(A) < codes.size - 1:
        round_best = (-np.inf, None)
        for c in codes.tolist():
            if c not in A:
                h = score(frozenset(A + [c]))
                if h > -np.inf:
                    evaluated.append((h, oriented(A + [c])))
                if h > round_best[0]:
                    round_best = (h, c)
        if round_best[1] is None or round_best[0] <= cur:
            break
        A.append(round_best[1])
        cur = round_best[0]
    return cur, oriented(A), evaluated


def kernel_test(tree, node):
    """The known codes (0..254) going left at a node of the kernel's tree."""
    f = tree.feature[node]
    if tree.nominal[f]:
        return frozenset(c for c in range(255) if (int(tree.mask[node, c >> 6]) >> (c & 63)) & 1)
    return frozenset(range(int(tree.threshold[node]) + 1))


class ReferenceTree:
    """The fractional rule grown in plain NumPy (best splitter; features drawn as the kernel draws them).

    Exact ties between tests (equal reductions, up to 1e-9 relative) are broken as ``follow`` (the kernel's
    tree) broke them, so that two correct growers give the same tree; ``ties`` counts them.
    """

    def __init__(self, X, nominal, Z, w, min_leaf, max_depth, max_features, seed, follow):
        # a side must weigh min_leaf, up to rounding (the fractional weights are sums of products of shares)
        self.X, self.nominal, self.Z, self.min_leaf, self.max_depth = X, nominal, Z, min_leaf * (1 - 1e-9), max_depth
        self.max_features, self.follow, self.ties = max_features, follow, 0
        self.state = np.array([seed], np.uint64)
        self.feats = np.arange(X.shape[0])
        self.by_id, self.n_nodes = {}, 1
        rows = np.flatnonzero(w > 0)
        self.root_impurity = ss(Z[rows], w[rows]) / w[rows].sum()
        self.grow(rows, w[rows], 0, 0)
        self.nodes = [self.by_id[i] for i in range(self.n_nodes)]

    def draw(self, visited):
        """The next candidate feature: a step of a Fisher-Yates shuffle of the (persistent) feature order."""
        D = self.feats.size
        j = visited + rand_below(self.state, D - visited)
        self.feats[[visited, j]] = self.feats[[j, visited]]
        return int(self.feats[visited])

    def best_test(self, rows, ws, P, node):
        """(h, feature, known codes going left) of the best test on the drawn features (first of equal ones)."""
        best = (0.0, -1, None)
        candidates = []  # (h, f, left codes) of every valid test
        for visited in range(self.X.shape[0]):
            f = self.draw(visited)
            c = self.X[f, rows]
            known = c != MISSING
            codes = np.unique(c[known])
            if codes.size >= 2:
                Zk, wk = self.Z[rows][known], ws[known]
                Pk = ss(Zk, wk)
                def score(A):
                    left = np.isin(c[known], list(A))
                    wl, wr = wk[left].sum(), wk[~left].sum()
                    if wl >= self.min_leaf and wr >= self.min_leaf and wl > 0 and wr > 0:
                        return Pk - ss(Zk[left], wk[left]) - ss(Zk[~left], wk[~left])
                    return -np.inf

                if self.nominal[f]:
                    h, A, evaluated = greedy_subset(codes, score)
                    candidates += [(hh, f, AA) for hh, AA in evaluated]
                    f_best = (h, A)
                else:
                    f_best = (-np.inf, None)
                    for A in threshold_tests(codes):
                        h = score(A)
                        if h > -np.inf:
                            candidates.append((h, f, A))
                        if h > f_best[0]:
                            f_best = (h, A)
                if f_best[0] > best[0]:
                    best = (f_best[0], f, f_best[1])
            if visited + 1 >= self.max_features:
                break
        if best[1] >= 0 and self.follow is not None and self.follow.feature[node] >= 0:
            kf = int(self.follow.feature[node])
            ktest = kernel_test(self.follow, node) & set(np.unique(self.X[kf, rows]).tolist())
            for h, f, A in candidates:  # the kernel's test, if it is as good as the best
                if f == kf and A == ktest and (f, A) != best[1:] and h >= best[0] - 1e-9 * max(abs(best[0]), P):
                    self.ties += 1
                    best = (h, f, A)
        return best

    def grow(self, rows, ws, depth, node):
        """Node ``node`` of the (row, weight) pairs; its children are numbered when it splits, and the left
        subtree is grown first (the kernel's numbering and order of feature draws)."""
        W, P = ws.sum(), ss(self.Z[rows], ws)
        rec = {"weight": W, "depth": depth, "feature": -1, "rows": rows, "ws": ws}
        self.by_id[node] = rec
        can_split = (W >= 2 * self.min_leaf and (self.max_depth < 0 or depth < self.max_depth)
                     and P > 1e-13 * W * self.root_impurity and P > 0)
        if not can_split:
            return
        h, f, A = self.best_test(rows, ws, P, node)
        if f < 0 or h <= 1e-12 * P:
            return
        c = self.X[f, rows]
        miss = c == MISSING
        go_left = ~miss & np.isin(c, list(A))
        go_right = ~miss & ~go_left
        share = ws[go_left].sum() / ws[~miss].sum()
        lrows, lws = np.r_[rows[go_left], rows[miss]], np.r_[ws[go_left], ws[miss] * share]
        rrows, rws = np.r_[rows[go_right], rows[miss]], np.r_[ws[go_right], ws[miss] * (1 - share)]
        gain = P - ss(self.Z[lrows], lws) - ss(self.Z[rrows], rws) if miss.any() else h
        lc, rc = self.n_nodes, self.n_nodes + 1
        self.n_nodes += 2
        rec.update(feature=f, test=A, heuristic=h, gain=gain, share=share, left=lc, right=rc)
        self.grow(lrows, lws, depth + 1, lc)
        self.grow(rrows, rws, depth + 1, rc)

    def predict(self, codes_row, proto, node=0):
        rec = self.nodes[node]
        if rec["feature"] < 0:
            return proto[node]
        c = codes_row[rec["feature"]]
        if c == MISSING:
            return rec["share"] * self.predict(codes_row, proto, rec["left"]) + \
                (1 - rec["share"]) * self.predict(codes_row, proto, rec["right"])
        # a value the node's rows do not have: numeric, by the threshold (the largest code going left);
        # nominal, right (a category not in the subset)
        go_left = c <= max(rec["test"]) if not self.nominal[rec["feature"]] else c in rec["test"]
        return self.predict(codes_row, proto, rec["left"] if go_left else rec["right"])


def random_problem(seed, n=None, nominal_share=0.3, y_missing=0.0, K=None):
    rng = np.random.default_rng(seed)
    n = n or int(rng.integers(60, 160))
    D = int(rng.integers(2, 6))
    K = K or int(rng.integers(1, 4))
    nominal = rng.random(D) < nominal_share
    X = np.empty((D, n), np.uint8)
    for f in range(D):
        X[f] = rng.integers(0, int(rng.integers(2, 7)) if nominal[f] else int(rng.integers(3, 25)), n)
        X[f, rng.random(n) < (0.0, 0.15, 0.4, 0.7)[int(rng.integers(0, 4))]] = MISSING
    Z = rng.standard_normal((n, K)) * rng.uniform(0.3, 3.0, K)
    Z += np.where(X[0] == MISSING, 0.0, X[0] % 5 * 0.4)[:, None]
    if y_missing:
        Z[rng.random((n, K)) < y_missing] = np.nan
    w = np.minimum(rng.integers(0, 3, n), rng.integers(0, 4, n)).astype(float)
    params = dict(min_leaf=float(rng.choice([1.0, 2.0, 3.0])), max_depth=int(rng.choice([-1, -1, 4])),
                  max_features=int(rng.choice([D, max(1, D // 2)])), seed=int(rng.integers(0, 2 ** 62)))
    lower, upper = np.zeros((D, 255)), np.ones((D, 255))
    return X, nominal, lower, upper, Z, w, params


def compare_with_reference(tree, ref, rel=1e-9):
    assert tree.n_nodes == len(ref.nodes)
    P0 = max(rec["weight"] for rec in ref.nodes) * ref.root_impurity
    for node, rec in enumerate(ref.nodes):
        assert tree.weight[node] == pytest.approx(rec["weight"], rel=rel), node
        assert tree.depth[node] == rec["depth"]
        assert tree.feature[node] == rec["feature"], node
        if rec["feature"] < 0:
            continue
        present = set(np.unique(ref.X[rec["feature"], rec["rows"]])) - {MISSING}
        assert kernel_test(tree, node) & present == rec["test"], node
        assert (tree.left[node], tree.right[node]) == (rec["left"], rec["right"])
        assert tree.gain[node] == pytest.approx(rec["gain"], rel=rel, abs=1e-9 * P0), node
        assert tree.left_share[node] == pytest.approx(rec["share"], rel=rel), node
    # the leaves' rows and their fractional weights
    rows, leaves, weights = tree.memberships(None)
    for node, rec in enumerate(ref.nodes):
        if rec["feature"] < 0:
            mine = leaves == node
            order = np.argsort(rec["rows"], kind="stable")
            assert np.array_equal(rows[mine], rec["rows"][order]), node
            np.testing.assert_allclose(weights[mine], rec["ws"][order], rtol=rel)


@pytest.mark.parametrize("y_missing", [0.0, 0.15])
@pytest.mark.parametrize("seed", range(8))
def test_dense_grower_is_the_reference_grower(seed, y_missing):
    """Structure, node weights, shares, gains and leaf memberships; predictions of new rows with missing values
    mix the leaves' prototypes with the shares."""
    X, nominal, lower, upper, Z, w, p = random_problem(seed, y_missing=y_missing)
    tree = grow(X, nominal, lower, upper, Z, w, grow_config(missing="fractional", **p))
    ref = ReferenceTree(X, nominal, Z, w, p["min_leaf"], p["max_depth"], p["max_features"], p["seed"], tree)
    compare_with_reference(tree, ref)
    assert ref.ties <= 2
    # prototypes and predictions: the weighted means of the leaves' rows, mixed along both branches
    proto_cols = np.where(np.isnan(Z), np.nan, Z)
    proto = leaf_prototypes(tree, proto_cols, w, np.zeros(Z.shape[1]))
    if not y_missing:
        for node, rec in enumerate(ref.nodes):
            if rec["feature"] < 0:
                expected = (rec["ws"][:, None] * Z[rec["rows"]]).sum(0) / rec["ws"].sum()
                np.testing.assert_allclose(proto[node], expected, rtol=1e-9, atol=1e-12)
    XR = np.ascontiguousarray(X.T)
    rows = np.arange(X.shape[1])
    got = tree.routes(XR, rows).take(proto)
    expected = np.array([ref.predict(X[:, r], proto) for r in rows])
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("splitter", ["best", "random"])
@pytest.mark.parametrize("seed", range(4))
def test_sparse_grower_is_the_reference_grower(seed, splitter):
    """Label-sparse clustering columns: the same tree as the reference (best splitter); with extra trees, every
    node's gain is the reduction over the weighted rows of the node and its children, as the dense grower's."""
    X, nominal, lower, upper, _, w, p = random_problem(100 + seed, K=1)
    rng = np.random.default_rng(seed)
    V = (rng.random((X.shape[1], 30)) < 0.15).astype(float)
    V[:, 0] = X[0] % 3 == 0
    V *= rng.uniform(0.5, 1.5, 30)
    S = SparseColumns.from_dense(V)
    sparse = grow(X, nominal, lower, upper, S, w, grow_config(missing="fractional", splitter=splitter, **p))
    dense = grow(X, nominal, lower, upper, V, w, grow_config(missing="fractional", splitter=splitter, **p))
    if splitter == "best":
        ref = ReferenceTree(X, nominal, V, w, p["min_leaf"], p["max_depth"], p["max_features"], p["seed"], sparse)
        compare_with_reference(sparse, ref)
    rows, leaves, weights = sparse.memberships(None)
    assert weights.sum() == pytest.approx(w.sum(), rel=1e-12)
    if sparse.n_nodes == dense.n_nodes and np.array_equal(sparse.feature, dense.feature):  # no tie broken apart
        np.testing.assert_allclose(sparse.gain, dense.gain, rtol=1e-8, atol=1e-10 * max(dense.gain.max(), 1))
        np.testing.assert_allclose(sparse.weight, dense.weight, rtol=1e-12)
        np.testing.assert_allclose(sparse.left_share, dense.left_share, rtol=1e-12)


def known_heuristic_ref(c, Zs, ws, left_codes, min_leaf):
    known = c != MISSING
    Zk, wk, left = Zs[known], ws[known], np.isin(c[known], list(left_codes))
    if wk[left].sum() < min_leaf or wk[~left].sum() < min_leaf or not left.any() or left.all():
        return -np.inf
    return ss(Zk, wk) - ss(Zk[left], wk[left]) - ss(Zk[~left], wk[~left])


@pytest.mark.parametrize("y_missing", [0.0, 0.2])
def test_a_test_is_scored_on_the_known_rows(y_missing):
    """The totals of the known rows (the node's minus the missing code's cell) fed to the learned scans give
    the reduction of the known rows for every threshold and every subset the greedy search tries: the heuristic
    values."""
    from tests.pct.test_grow_helpers import Node

    for seed in range(30):
        nominal = seed % 3 == 0
        nd = Node(seed, n_codes=[3, 5, 12][seed % 3], p_missing_code=[0.2, 0.5, 0.8][seed % 3],
                  p_missing_target=y_missing, nominal=nominal)
        if nd.MW == 0.0 or nd.known_codes.size < 2:
            continue
        known_sums = new_sums(nd.Z.shape[1])
        Wk, Pk, sT2k = known_totals(nd.parent, nd.hist, nd.has_missing, known_sums)
        parent = nd.parent._replace(W=Wk, P=Pk, sT2=sT2k, sums=known_sums, MW=0.0)
        known = nd.c != MISSING
        assert Wk == pytest.approx(nd.ws[known].sum(), rel=1e-12)
        if nd.has_missing:
            assert Pk == pytest.approx(ss(nd.Zs[known], nd.ws[known]), rel=1e-9, abs=1e-9)
        else:
            assert sT2k == pytest.approx(((nd.ws[known, None] * nd.Zs[known]).sum(0) ** 2).sum(), rel=1e-9)
        if nominal:
            refs = [greedy_subset(nd.known_codes, lambda A: known_heuristic_ref(nd.c, nd.Zs, nd.ws, A, 2.0))[0]]
            h, _ = subset_greedy(nd.search, nd.hist, nd.pc, parent, nd.has_missing, 2.0, nd.L)
        else:
            refs = [known_heuristic_ref(nd.c, nd.Zs, nd.ws, A, 2.0) for A in threshold_tests(nd.known_codes)]
            scan = scan_numeric_missing if nd.has_missing else scan_numeric_complete
            h, b, _ = scan(nd.hist, nd.pc, parent, 2.0, nd.L)
        best = max(refs)
        if best == -np.inf:
            assert h == -np.inf
            continue
        assert h == pytest.approx(best, rel=1e-9, abs=1e-9 * ss(nd.Zs, nd.ws))
        if not nominal:
            assert b == nd.known_codes[int(np.argmax(refs))]


def test_without_missing_feature_values_fractional_is_learned_to_the_bit():
    """The recorded random cases with their missing codes filled: the same trees bit for bit (but
    ``missing_left``, which a fractional tree does not use), dense and sparse."""
    from tests.pct.grow_cases import case

    for i in range(0, 120, 3):
        c = case(i)
        p = dict(c["params"], splitter=["best", "random"][c["params"]["splitter"]])
        X = np.where(c["X"] == MISSING, 0, c["X"]).astype(np.uint8)
        Zs = [c["Z"]]
        if not np.isnan(c["Z"]).any():
            Zs.append(SparseColumns.from_dense(c["Z"]))
        for Z in Zs:
            a = grow(X, c["nominal"], c["lower"], c["upper"], Z, c["w"], grow_config(**p))
            b = grow(X, c["nominal"], c["lower"], c["upper"], Z, c["w"], grow_config(missing="fractional", **p))
            for name in ("feature", "threshold", "mask", "left", "right", "weight", "depth", "gain", "column_gain"):
                assert np.array_equal(getattr(a, name), getattr(b, name)), (i, name)
            rows, leaves, weights = b.memberships(c["w"])
            assert np.array_equal(np.sort(rows), np.flatnonzero(a.leaf_of_row >= 0))
            assert np.array_equal(leaves, a.leaf_of_row[rows]) and np.array_equal(weights, c["w"][rows])


def test_per_column_gains_add_up_to_the_node_gains():
    """Per-target Genie3 of a fractional tree: the per-column reductions of the weighted rows sum to the gain."""
    for seed in range(6):
        X, nominal, lower, upper, Z, w, p = random_problem(200 + seed, K=3, y_missing=0.1 * (seed % 2))
        tree = grow(X, nominal, lower, upper, Z, w, grow_config(missing="fractional", track_columns=True, **p))
        per_feature = np.bincount(tree.feature[tree.internal], weights=tree.gain[tree.internal],
                                  minlength=X.shape[0])
        np.testing.assert_allclose(tree.column_gain.sum(axis=1), per_feature, rtol=1e-9, atol=1e-9)


def test_split_fractional_keeps_the_other_ranges_and_conserves_the_weight():
    rng = np.random.default_rng(0)
    for trial in range(50):
        n = int(rng.integers(5, 60))
        X = rng.integers(0, 6, (1, n)).astype(np.uint8)
        X[0, rng.random(n) < rng.random()] = MISSING
        cap = 2 * n + 8
        rows = np.r_[rng.permutation(n), np.full(cap - n, -1)].astype(np.int64)
        weights = np.r_[rng.integers(1, 4, n).astype(float), np.zeros(cap - n)]
        nr = NodeRows(rows.copy(), weights.copy())
        start, end = int(rng.integers(0, n // 2 + 1)), n
        stack = np.array([[9, 0, start]], np.int64)  # a pending node holding [0, start)
        top = free_start(end, stack, 1)
        tests = TreeTests(np.zeros(1, np.int32), np.array([2], np.int32), np.zeros(1, bool), np.zeros((1, 4), np.uint64),
                          np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(1, bool), np.zeros(1))
        nr2, share, (n_missing, ls, le, rs, re) = split_fractional(X, tests, 0, nr, start, end, top)
        seg_rows, seg_w = rows[start:end], weights[start:end]
        c = X[0, seg_rows]
        miss, left = c == MISSING, (c != MISSING) & (c <= 2)
        right = (c != MISSING) & ~left
        assert n_missing == miss.sum()
        assert share == pytest.approx(seg_w[left].sum() / seg_w[~miss].sum() if (~miss).any() else 0.5)
        assert np.array_equal(nr2.rows[:start], rows[:start]) and np.array_equal(nr2.weights[:start], weights[:start])
        L = dict(zip(nr2.rows[ls:le], nr2.weights[ls:le]))
        R = dict(zip(nr2.rows[rs:re], nr2.weights[rs:re]))
        assert set(L) == set(seg_rows[left | miss]) and set(R) == set(seg_rows[right | miss])
        for r, wr, m in zip(seg_rows, seg_w, miss):
            if m:
                assert L[r] == pytest.approx(wr * share) and R[r] == pytest.approx(wr * (1 - share))
        if n_missing:  # the copied child lies above every range still to be grown
            assert min(ls, rs) >= start and (ls >= top or rs >= top)


def test_min_leaf_must_be_positive():
    X, nominal, lower, upper, Z, w, p = random_problem(1)
    with pytest.raises(ValueError, match="positive"):
        grow(X, nominal, lower, upper, Z, w, grow_config(missing="fractional", min_leaf=0.0))


TASKS = ["regression", "mtr", "classification", "mlc"]


@pytest.mark.parametrize("task_name", TASKS)
def test_rf_score_of_a_fractional_tree_matches_its_definition(task_name):
    """Every OOB row predicted from scratch (the mixture of its leaves' prototypes, permuted feature f taking
    another OOB row's value): the relative error increase of each feature."""
    from tests.pct.test_pct_kernels import make_features, make_targets

    rng = np.random.default_rng(21)
    n = 260
    codes, nominal, lower, upper = make_features(rng, n, missing=0.25)
    Y, classes = make_targets(task_name, rng, n, missing=0.05 if task_name != "classification" else 0.0)
    task = tasks.get(task_name).fit(Y, [f"t{j}" for j in range(Y.shape[1])], classes)
    seed = derive_seed(4, 0)
    w = poisson1_counts(seed, np.arange(n, dtype=np.uint64))
    tree = grow(codes, nominal, lower, upper, task.clustering_matrix(Y), w,
                grow_config(max_features=3, seed=seed, missing="fractional", track_columns=True))
    assert tree.fractional
    D = codes.shape[0]
    XR = np.ascontiguousarray(codes.T)
    joint, per_t = pct_scores.permutation_scores(tree, XR, Y, task.prototype_columns(Y), w, task, seed, True)
    oob = np.flatnonzero(w == 0)
    proto = leaf_prototypes(tree, task.prototype_columns(Y), w, task.default_prototype())

    def predict(x):
        return sum(p * proto[leaf] for leaf, p in slow_fractional_route(tree, x).items())

    base_pred = np.array([predict(codes[:, r]) for r in oob])
    base_t = task.target_errors(Y[oob], task.predict(base_pred))
    base = np.nanmean(base_t)
    used = set(tree.feature[tree.internal])
    assert any(len(slow_fractional_route(tree, codes[:, r])) > 1 for r in oob)  # rows that go down both branches
    for f in range(D):
        if f not in used:
            assert joint[f] == 0.0
            continue
        perm = permutation(np.uint64(derive_seed(seed, f, Stream.PERMUTATION)), oob.size)
        preds = []
        for i, r in enumerate(oob):
            x = codes[:, r].copy()
            x[f] = codes[f, oob[perm[i]]]
            preds.append(predict(x))
        err_t = task.target_errors(Y[oob], task.predict(np.array(preds)))
        floor = 1.0 / (oob.size * Y.shape[1])
        # the divisor is the error (regression-like tasks) or the accuracy (classification, thesis Sec. 4.3)
        ref = (1.0 - base) if task_name == "classification" else base
        ref_t = (1.0 - base_t) if task_name == "classification" else base_t
        assert joint[f] == pytest.approx((np.nanmean(err_t) - base) / max(ref, floor), abs=1e-9)
        np.testing.assert_allclose(per_t[:, f], np.nan_to_num((err_t - base_t) / np.maximum(ref_t, 1.0 / oob.size)),
                                   atol=1e-9)


def _tested_features(tree, codes_row) -> set:
    """The features tested at the nodes one row's fractional walk meets (both ways at a missing code)."""
    out, todo = set(), [0]
    while todo:
        node = todo.pop()
        f = int(tree.feature[node])
        if f < 0:
            continue
        out.add(f)
        code = int(codes_row[f])
        if code == 255:
            todo += [int(tree.left[node]), int(tree.right[node])]
        elif tree.nominal[f]:
            todo.append(int(tree.left[node] if (int(tree.mask[node, code // 64]) >> (code % 64)) & 1 else tree.right[node]))
        else:
            todo.append(int(tree.left[node] if code <= tree.threshold[node] else tree.right[node]))
    return out


def test_routes_kernels_match_a_python_walk():
    rng = np.random.default_rng(3)
    for seed in range(5):
        X, nominal, lower, upper, Z, w, p = random_problem(300 + seed)
        tree = grow(X, nominal, lower, upper, Z, w, grow_config(missing="fractional", **p))
        XR = np.ascontiguousarray(X.T)
        rows = np.arange(X.shape[1])
        routes = tree.routes(XR, rows)
        for i, r in enumerate(rows):
            got = dict(zip(routes.leaves[routes.indptr[i]:routes.indptr[i + 1]].tolist(),
                           routes.props[routes.indptr[i]:routes.indptr[i + 1]].tolist()))
            ref = slow_fractional_route(tree, X[:, r])
            assert got.keys() == ref.keys() and all(got[k] == pytest.approx(ref[k], rel=1e-12) for k in ref)
            assert sum(got.values()) == pytest.approx(1.0)
        perm = rng.permutation(rows.size)
        pairs = tree.rows_by_path_feature(XR, rows)
        indptr, positions, base = pairs.indptr, pairs.positions, pairs.routes
        for f in range(X.shape[0]):  # a row going down one path keeps its leaf exactly for the codes in its range
            part = slice(indptr[f], indptr[f + 1])
            pos = positions[part]  # from the first node testing f: the routes from the root, to the bit
            from_first = tree.routes(XR, rows[pos], rows[perm[pos]], f, pairs.first_nodes[part])
            from_root = tree.routes(XR, rows[pos], rows[perm[pos]], f)
            assert np.array_equal(from_first.indptr, from_root.indptr) and \
                np.array_equal(from_first.leaves, from_root.leaves) and np.array_equal(from_first.props, from_root.props)
            for i, a, b in zip(positions[part], pairs.lo[part], pairs.hi[part]):
                one_path = len(slow_fractional_route(tree, X[:, rows[i]])) == 1  # it met no missing code
                assert (a <= b) == (one_path and not nominal[f]), (f, i)
                if a <= b:
                    leaf = slow_fractional_route(tree, X[:, rows[i]])
                    for v in range(0, 255, 7):
                        x = X[:, rows[i]].copy()
                        x[f] = v
                        assert (slow_fractional_route(tree, x) == leaf) == (a <= v <= b), (f, i, v)
        for f in range(X.shape[0]):
            reaching = set(positions[indptr[f]:indptr[f + 1]].tolist())
            # exactly the rows whose fractional walk (both ways at a missing code) meets a node testing f
            assert reaching == {i for i, r in enumerate(rows) if f in _tested_features(tree, X[:, r])}
            assert list(positions[indptr[f]:indptr[f + 1]]) == sorted(reaching)
            permuted = tree.routes(XR, rows, perm, f)
            for i, r in enumerate(rows):
                x = X[:, r].copy()
                x[f] = X[f, perm[i]]
                ref = slow_fractional_route(tree, x)
                got = dict(zip(permuted.leaves[permuted.indptr[i]:permuted.indptr[i + 1]].tolist(),
                               permuted.props[permuted.indptr[i]:permuted.indptr[i + 1]].tolist()))
                assert got.keys() == ref.keys() and all(got[k] == pytest.approx(ref[k], rel=1e-12) for k in ref)
                if i not in reaching:  # a row that reaches no node testing f cannot move
                    assert ref == slow_fractional_route(tree, X[:, r])
        changed = tree.routes(XR, rows, perm, 0).differs(base)
        for i in range(rows.size):
            a = base.subset(np.array([i]))
            b = tree.routes(XR, rows[i:i + 1], perm[i:i + 1], 0)
            same = np.array_equal(a.leaves, b.leaves) and np.array_equal(a.props, b.props)
            assert changed[i] == (not same)
