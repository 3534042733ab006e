"""The grower against a frozen record of the grower of main, and its split-search helpers against slow,
obvious references (pure NumPy, brute force) on random inputs."""
from pathlib import Path

import numpy as np
import pytest

from spark_fr.pct.config import SPLITTER_BEST
from spark_fr.pct.dense_targets import DenseState, dense_column_gain
from spark_fr.pct.grow import _push_children, _tree_arrays
from spark_fr.pct.histogram import (SMALL_NODE_ROWS, UNROLLED_COLUMNS, Codes, Histogram, clear_histogram,
                                   fill_histogram, fill_small_histogram)
from spark_fr.pct.impurity import NodeTotals, Totals, new_sums, node_totals
from spark_fr.pct.node_rows import Children, NodeRows, TreeTests, goes_left, node_rows, partition, split_fractional
from spark_fr.pct.numeric import random_threshold, scan_numeric_complete, scan_numeric_missing, split_at_threshold
from spark_fr.pct.order_memo import new_order_memo
from spark_fr.pct.route import next_node
from spark_fr.pct.search import Search, Split, draw_feature, keep_better
from spark_fr.pct.subsets import best_subset, subset_random
from spark_fr.runtime.rng import rand_below, rand_uniform
from tests.pct.grow_cases import N_CASES, case, input_digest, load, run

MISSING = 255
FIXTURE = Path(__file__).parent / "grow_trees.npz"


@pytest.fixture(scope="module")
def recorded():
    return load(FIXTURE)


@pytest.mark.parametrize("i", range(N_CASES))
def test_grow_tree_reproduces_the_recorded_trees_bit_for_bit(recorded, i):
    """Every node array (and the in-place partition of ``rows``) equals the one recorded with the grower of
    main before the split searches became helpers (tests/pct/grow_cases.py), to the last bit."""
    c = case(i)
    expected = recorded[i]
    assert input_digest(c) == expected["digest"], "random inputs changed (NumPy's generator?): not a grower bug"
    got = run(c)
    assert set(got) == set(expected) - {"digest"}
    for name, a in got.items():
        e = expected[name]
        assert a.dtype == e.dtype, name
        a = a.ravel()
        assert a.shape == e.shape, name
        if a.dtype.kind == "f":  # compare bits: -0.0 != 0.0, NaN == NaN of the same payload
            a, e = a.view(np.uint64), e.view(np.uint64)
        assert np.array_equal(a, e), f"case {i}: {name} differs at {np.flatnonzero(a != e)[:5]}"


# ---- the helpers of grow_tree against slow references -------------------------------------------------


def ss_ref(Zs, ws):
    """|E| impu(E): sum over columns of W / N_k * (weighted sum of squared deviations of the known values)."""
    W = ws.sum()
    total = 0.0
    for k in range(Zs.shape[1]):
        known = ~np.isnan(Zs[:, k])
        N = ws[known].sum()
        if N > 0:
            z, wk = Zs[known, k], ws[known]
            total += W / N * (wk * (z - (wk * z).sum() / N) ** 2).sum()
    return total


def gain_ref(Zs, ws, left):
    return ss_ref(Zs, ws) - ss_ref(Zs[left], ws[left]) - ss_ref(Zs[~left], ws[~left])


def best_side_of_missing_ref(c, Zs, ws, in_a, min_leaf):
    """Best of (missing right, missing left) for the known rows with ``in_a`` on the left: (h, missing_left),
    h = -inf if neither side split is valid (both sides weigh >= min_leaf and > 0). With no missing row the
    default direction is the heavier side."""
    miss = c == MISSING
    best, best_ml = -np.inf, False
    for ml in ((False, True) if miss.any() else (False,)):
        left = (in_a & ~miss) | (miss & ml)
        wl, wr = ws[left].sum(), ws[~left].sum()
        if wl >= min_leaf and wr >= min_leaf and wl > 0 and wr > 0:
            h = gain_ref(Zs, ws, left)
            if h > best:
                best, best_ml = h, (ml if miss.any() else wl > wr)
    return best, best_ml


class Node:
    """A random node (rows[start:end] of a random table) with the grower's scratch objects, its totals and
    the histogram of feature 0 computed by the helpers."""

    def __init__(self, seed, n_codes=6, K=3, p_missing_code=0.2, p_missing_target=0.0, nominal=False,
                 weights=True):
        rng = np.random.default_rng(seed)
        self.rng = rng
        n = int(rng.integers(20, 120))
        present = np.sort(rng.choice(255 if not nominal else 40, n_codes, replace=False))
        codes = rng.choice(present, n).astype(np.uint8)
        codes[rng.random(n) < p_missing_code] = MISSING
        self.X = np.ascontiguousarray(np.stack([codes, rng.integers(0, 3, n).astype(np.uint8)]))
        Z = rng.standard_normal((n, K)) * rng.uniform(0.1, 3, K)
        Z[rng.random((n, K)) < p_missing_target] = np.nan
        self.Z = Z
        self.w = rng.integers(0, 3, n).astype(float) if weights else np.ones(n)
        rows = rng.permutation(np.flatnonzero(self.w > 0)).astype(np.int64)
        self.start = int(rng.integers(0, 3))
        self.end = rows.size - int(rng.integers(0, 3))
        self.rows = rows
        self.has_missing = bool(np.isnan(Z).any())
        self.lower = np.zeros((2, 255))
        self.upper = np.zeros((2, 255))
        edges = np.cumsum(rng.random(510) + 0.01)
        self.lower[0], self.upper[0] = edges[0::2], edges[1::2]
        self.T, self.L = new_sums(K), new_sums(K)
        self.hist = Histogram(np.zeros(256), np.zeros((256, K)), np.zeros((256, K)),
                              np.zeros((256, K) if self.has_missing else (1, 1)), np.zeros(256, np.int64),
                              np.full(n, 77, np.uint8))
        self.search = Search(np.array([rng.integers(0, 2**63)], np.uint64), np.arange(2), np.zeros(256, np.bool_),
                             np.zeros(4, np.uint64), np.zeros(4, np.uint64))
        # the grower's (row, weight) pairs, rows in place, with their rows of Z in node order
        self.nr = node_rows(rows, self.w, rows.size, None, Z)
        self.G = self.nr.targets[self.start:]  # the node's rows of Z, as the dense backend's histogram reads them
        self.TW, self.P, self.sT2 = node_totals(self.nr, self.start, self.end, self.has_missing, self.T)
        self.pc = fill_histogram(self.X, 0, self.nr, self.start, self.end, self.G, self.has_missing, self.hist)
        self.nt, self.n_known, self.MW = self.pc
        self.parent = Totals(self.TW, self.P, self.sT2, self.T, self.MW)
        in_node = self.rows[self.start:self.end]
        self.c, self.Zs, self.ws = self.X[0, in_node], self.Z[in_node], self.w[in_node]
        self.known_codes = np.unique(self.c[self.c != MISSING])

    @property
    def state(self):
        return self.search.state

    @property
    def mask(self):
        return self.search.mask

    def subset_args(self, min_leaf):
        return self.search, self.hist, self.pc, self.parent, self.has_missing, min_leaf, self.L

    def mask_codes(self):
        return {c for c in range(256) if (int(self.mask[c >> 6]) >> (c & 63)) & 1}


def test_node_totals_and_histogram_are_weighted_sums():
    """Totals and histogram cells against NumPy's sums; with complete targets each cell is the sum of its rows'
    w * z in node order, to the bit, for K up to UNROLLED_COLUMNS (a constant loop) and past it."""
    for seed in range(40):
        nd = Node(seed, n_codes=[1, 3, 20, 30, 60][seed % 5], p_missing_target=0.2 * (seed % 2),
                  p_missing_code=0.3 * (seed % 3 == 0), K=[3, 1, UNROLLED_COLUMNS, UNROLLED_COLUMNS + 1, 5][seed % 5])
        Zs, ws, c = nd.Zs, nd.ws, nd.c
        known = ~np.isnan(Zs)
        Z0 = np.where(known, Zs, 0.0)
        assert nd.TW == pytest.approx(ws.sum(), rel=1e-12)
        np.testing.assert_allclose(nd.T.S, (ws[:, None] * Z0).sum(0), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(nd.T.Q, (ws[:, None] * Z0 ** 2).sum(0), rtol=1e-10)
        np.testing.assert_allclose(nd.T.N, (ws[:, None] * known).sum(0), rtol=1e-12)
        assert nd.P == pytest.approx(ss_ref(Zs, ws), rel=1e-9, abs=1e-9)
        assert nd.sT2 == (0.0 if nd.has_missing else pytest.approx((nd.T.S ** 2).sum(), rel=1e-12))
        # the node rows keep their rows of Z in node order, to the bit
        assert np.array_equal(nd.nr.targets[:nd.rows.size].view(np.uint64), nd.Z[nd.rows].view(np.uint64))
        T2 = new_sums(Zs.shape[1])
        assert node_totals(nd.nr, nd.start, nd.end, nd.has_missing, T2) == (nd.TW, nd.P, nd.sT2)
        assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(T2, nd.T))
        # present codes in increasing order, the missing code last
        present = np.unique(c)
        hist = nd.hist
        assert nd.nt == present.size and list(hist.touched[:nd.nt]) == list(present)
        assert nd.n_known == np.count_nonzero(present != MISSING)
        assert nd.MW == ws[c == MISSING].sum()
        for b in present:
            sel = c == b
            assert hist.w[b] == pytest.approx(ws[sel].sum(), rel=1e-12)
            np.testing.assert_allclose(hist.s[b], (ws[sel, None] * Z0[sel]).sum(0), rtol=1e-10, atol=1e-10)
            if nd.has_missing:
                np.testing.assert_allclose(hist.q[b], (ws[sel, None] * Z0[sel] ** 2).sum(0), rtol=1e-10)
                np.testing.assert_allclose(hist.n[b], (ws[sel, None] * known[sel]).sum(0), rtol=1e-12)
            else:
                in_order = np.zeros(Zs.shape[1])
                for r in np.flatnonzero(sel):
                    in_order = in_order + ws[r] * Zs[r]
                assert np.array_equal(hist.s[b].view(np.uint64), in_order.view(np.uint64))
        # cleared, the histogram is all zeros again (fill_histogram adds to it without resetting a cell) and a
        # second fill of the same node gives the same cells to the bit
        first = [a.copy() for a in hist[:4]]
        clear_histogram(hist, nd.nt)
        assert not any(a.any() for a in hist[:4])
        assert fill_histogram(nd.X, 0, nd.nr, nd.start, nd.end, nd.G, nd.has_missing, hist) == nd.pc
        assert all(np.array_equal(a, b) for a, b in zip(first, hist[:4]))


def _histogram(K, m):
    return Histogram(np.zeros(256), np.zeros((256, K)), np.zeros((1, 1)), np.zeros((1, 1)), np.arange(256),
                     np.zeros(m, np.uint8))


def test_small_histogram_is_the_256_code_one_to_the_bit():
    """A node of at most SMALL_NODE_ROWS rows: the small histogram's cells are the 256-code histogram's cells of
    the same codes, in the same order, to the bit (codes read from X, the row-major codes or the node codes; the
    missing code's cell last and in cell MISSING), and the numeric scan over it finds the same threshold with the same gain."""
    bits = np.ndarray.view
    for seed in range(80):
        nd = Node(seed, n_codes=[1, 2, 5, 12, 40][seed % 5], p_missing_code=[0.0, 0.3, 0.9][seed % 3])
        start = nd.start
        end = min(nd.end, start + int(nd.rng.integers(1, SMALL_NODE_ROWS + 1)))
        K = nd.Z.shape[1]
        T = new_sums(K)
        TW, P, sT2 = node_totals(nd.nr, start, end, False, T)
        big = _histogram(K, nd.rows.size)
        pc = fill_histogram(nd.X, 0, nd.nr, start, end, nd.nr.targets[start:], False, big)
        by_x = Codes(nd.X, np.zeros(2, np.bool_), nd.lower, nd.upper)
        by_row = by_x._replace(by_row=np.ascontiguousarray(nd.X.T))
        node_codes = node_rows(nd.rows.copy(), nd.w, nd.rows.size, nd.X, nd.Z)
        for codes, nr in ((by_x, nd.nr), (by_row, nd.nr), (by_x, node_codes)):
            small = _histogram(K, 256)
            spc = fill_small_histogram(codes, 0, nr, start, end, nr.targets[start:],
                                       np.zeros(2 * SMALL_NODE_ROWS, np.int32), small)
            assert spc == pc
            cells = list(range(pc.nt)) + ([MISSING] if pc.n_known < pc.nt else [])
            for t, c in enumerate(cells):
                b = big.touched[min(t, pc.nt - 1)]
                assert small.codes[min(c, pc.nt - 1)] == b
                assert bits(small.w[c:c + 1], np.uint64) == bits(big.w[b:b + 1], np.uint64)
                assert np.array_equal(bits(small.s[c], np.uint64), bits(big.s[b], np.uint64))
            for min_leaf in (1.0, 2.0):
                parent = Totals(TW, P, sT2, T, pc.MW)
                h, b, ml = scan_numeric_complete(big, pc, parent, min_leaf, new_sums(K))
                hs, c, mls = scan_numeric_complete(small, spc, parent, min_leaf, new_sums(K))
                assert (hs == h or h == -np.inf == hs) and ml == mls
                assert (small.codes[c] if c >= 0 else -1) == b


@pytest.mark.parametrize("p_missing_target", [0.0, 0.15])
@pytest.mark.parametrize("p_missing_code", [0.0, 0.25])
def test_numeric_scan_is_the_best_of_every_threshold(p_missing_target, p_missing_code):
    """The hot path (complete targets) and the missing-values path against trying every threshold with
    both sides for the missing block."""
    for seed in range(25):
        nd = Node(seed, n_codes=[2, 5, 12, 40][seed % 4], p_missing_target=p_missing_target,
                  p_missing_code=p_missing_code)
        min_leaf = [1.0, 2.0, 3.5][seed % 3]
        best = (-np.inf, -1, False)
        for t in nd.known_codes:
            h, ml = best_side_of_missing_ref(nd.c, nd.Zs, nd.ws, nd.c <= t, min_leaf)
            if h > best[0]:
                best = (h, int(t), ml)
        scan = scan_numeric_missing if nd.has_missing else scan_numeric_complete
        got = scan(nd.hist, nd.pc, nd.parent, min_leaf, nd.L)
        if best[1] < 0:
            assert got[0] == -np.inf and got[1] == -1
            continue
        assert got[0] == pytest.approx(best[0], rel=1e-9, abs=1e-9 * nd.P)
        assert (got[1], got[2]) == best[1:]


def test_random_threshold_is_the_last_bin_below_a_uniform_draw():
    for seed in range(60):
        nd = Node(seed, n_codes=[1, 2, 7, 30][seed % 4], p_missing_code=0.3 * (seed % 2),
                  p_missing_target=0.1 * (seed % 3 == 0))
        state = nd.state.copy()
        known = nd.known_codes
        if known.size == 1:
            expected = known[0]
        else:
            u = nd.lower[0, known[0]] + rand_uniform(state) * (nd.upper[0, known[-1]] - nd.lower[0, known[0]])
            below = [b for b in known[:-1] if nd.upper[0, b] <= u]
            expected = max(below) if below else known[0]
        t_bin = random_threshold(nd.state, 0, nd.hist.touched, nd.n_known, nd.lower, nd.upper)
        h, ml = split_at_threshold(t_bin, nd.hist, nd.pc, nd.parent, nd.has_missing, 2.0, nd.L)
        assert t_bin == expected
        assert nd.state[0] == state[0]  # one draw, none for a single present code
        h_ref, ml_ref = best_side_of_missing_ref(nd.c, nd.Zs, nd.ws, nd.c <= expected, 2.0)
        if h_ref == -np.inf:
            assert h == -np.inf
        else:
            assert h == pytest.approx(h_ref, rel=1e-9, abs=1e-9 * nd.P) and ml == ml_ref


def greedy_ref(nd, min_leaf):
    """Forward selection in Python: add the category (in code order) whose addition gives the best split,
    the first of equal ones; stop when that is no better than the previous round or A would be full; then A or
    its complement (the same test), whichever does not hold the first category."""
    cats = list(nd.known_codes)
    A, cur_h, cur_ml = [], -np.inf, False
    while len(A) < len(cats) - 1:
        round_best = (-np.inf, None, False)
        for c in cats:
            if c not in A:
                h, ml = best_side_of_missing_ref(nd.c, nd.Zs, nd.ws, np.isin(nd.c, A + [c]), min_leaf)
                if h > round_best[0]:
                    round_best = (h, c, ml)
        if round_best[1] is None or round_best[0] <= cur_h:
            break
        A.append(round_best[1])
        cur_h, cur_ml = round_best[0], round_best[2]
    if cats[0] in A:
        A = [c for c in cats if c not in A]
        cur_h, cur_ml = best_side_of_missing_ref(nd.c, nd.Zs, nd.ws, np.isin(nd.c, A), min_leaf)
    return set(A), cur_h, cur_ml


@pytest.mark.parametrize("p_missing_target", [0.0, 0.15])
def test_nominal_tests_are_the_greedy_selection_for_any_number_of_categories(p_missing_target):
    """The best splitter's subset search (CLUS's): greedy forward selection for 2 categories as for 16."""
    for seed in range(45):
        nd = Node(seed, n_codes=int(2 + seed % 15), nominal=True, p_missing_code=0.2 * (seed % 2),
                  p_missing_target=p_missing_target, K=1 + seed % 3)
        if nd.known_codes.size < 2:
            continue
        A, h_ref, ml_ref = greedy_ref(nd, 2.0)
        state = nd.state.copy()
        h, ml = best_subset(SPLITTER_BEST, *nd.subset_args(2.0))
        assert nd.state[0] == state[0]  # no random draw
        assert nd.mask_codes() == A
        if h_ref == -np.inf:
            assert h == -np.inf
        else:
            assert h == pytest.approx(h_ref, rel=1e-9, abs=1e-9 * nd.P) and ml == ml_ref


def test_random_subset_is_a_fair_coin_per_category_redrawn_until_proper():
    for seed in range(60):
        nd = Node(seed, n_codes=int(1 + seed % 10), nominal=True, p_missing_code=0.3 * (seed % 2),
                  p_missing_target=0.1 * (seed % 3 == 0))
        cats = nd.known_codes
        state = nd.state.copy()
        A = set(cats)
        while cats.size > 1 and (not A or A == set(cats)):
            A = {c for c in cats if rand_uniform(state) < 0.5}
        h, ml = subset_random(*nd.subset_args(2.0))
        assert nd.mask_codes() == A and nd.state[0] == state[0]
        h_ref, ml_ref = best_side_of_missing_ref(nd.c, nd.Zs, nd.ws, np.isin(nd.c, list(A)), 2.0)
        if h_ref == -np.inf:
            assert h == -np.inf
        else:
            assert h == pytest.approx(h_ref, rel=1e-9, abs=1e-9 * nd.P) and ml == ml_ref


def test_keep_better_keeps_the_first_of_the_best_splits():
    rng = np.random.default_rng(0)
    for _ in range(200):
        m = int(rng.integers(1, 12))
        hs = rng.integers(-2, 4, m).astype(float)  # many ties, some below the initial 0
        hs[rng.random(m) < 0.1] = -np.inf
        hs[rng.random(m) < 0.1] = np.nan
        nominal = rng.random(m) < 0.5
        best = Split(0.0, -1, 0, False)
        search = Search(np.zeros(1, np.uint64), np.arange(m), np.zeros(256, np.bool_), np.zeros(4, np.uint64),
                        np.zeros(4, np.uint64))
        for f in range(m):
            search.mask[:] = f + 1
            best = keep_better(best, Split(hs[f], f, 10 + f, bool(f % 2)), bool(nominal[f]), search)
        valid = [f for f in range(m) if hs[f] > 0]
        if not valid:
            assert tuple(best) == (0.0, -1, 0, False) and not search.best_mask.any()
            continue
        f = min(valid, key=lambda f: (-hs[f], f))  # first of the largest
        assert (best.h, best.feature) == (hs[f], f) and best.missing_left == bool(f % 2)
        if nominal[f]:  # a subset test: its mask (the threshold is not used)
            assert (search.best_mask == f + 1).all()
        else:
            assert best.threshold == 10 + f


def random_tree_arrays(rng, n_nodes=8):
    threshold = rng.integers(0, 255, n_nodes).astype(np.int32)
    missing_left = rng.random(n_nodes) < 0.5
    mask = rng.integers(0, 2**63, (n_nodes, 4), dtype=np.uint64) ^ rng.integers(0, 2, (n_nodes, 4),
                                                                                   dtype=np.uint64)
    return threshold, missing_left, mask


def route_ref(codes, nominal_f, node, threshold, missing_left, mask):
    """numpy masks: missing -> missing_left, nominal -> bit of the mask, numeric -> code <= threshold."""
    codes = codes.astype(np.int64)
    bit = (mask[node][codes.clip(0, 254) >> 6] >> (codes.clip(0, 254) & 63).astype(np.uint64)) & np.uint64(1)
    test = bit.astype(bool) if nominal_f else codes <= threshold[node]
    return np.where(codes == MISSING, missing_left[node], test)


def test_routing_and_partition_match_numpy_masks():
    rng = np.random.default_rng(1)
    for trial in range(60):
        threshold, missing_left, mask = random_tree_arrays(rng)
        n = int(rng.integers(1, 200))
        X = rng.integers(0, 256, (2, n)).astype(np.uint8)
        X[:, rng.random(n) < 0.5] = rng.choice([0, 1, 63, 64, 127, 128, 191, 192, 254, 255])
        node, f, nominal_f = int(rng.integers(0, 8)), int(rng.integers(0, 2)), bool(trial % 2)
        expected = route_ref(X[f], nominal_f, node, threshold, missing_left, mask)
        left = np.arange(8, 16, dtype=np.int32)
        right = np.arange(16, 24, dtype=np.int32)
        feature = np.full(8, f, np.int32)
        tests = TreeTests(feature, threshold, missing_left, mask, left, right, np.array([nominal_f] * 2), np.zeros(0))
        got = [goes_left(tests, node, X[f, r], nominal_f) for r in range(n)]
        assert got == list(expected)
        nxt = [next_node(tests, node, X[f, r]) for r in range(n)]
        assert nxt == list(np.where(expected, left[node], right[node]))
        rows = rng.permutation(n).astype(np.int64)
        start, end = int(rng.integers(0, n + 1)), n
        start, end = min(start, int(rng.integers(0, n + 1))), max(start, int(rng.integers(0, n + 1)))
        before = rows.copy()
        weights = rows * 0.5  # a weight per pair, moved with its row
        mid = partition(X, tests, node, NodeRows(rows, weights), start, end)
        assert (weights == rows * 0.5).all()
        seg = before[start:end]
        assert mid == start + expected[seg].sum()
        assert set(rows[start:mid]) == set(seg[expected[seg]])
        assert set(rows[mid:end]) == set(seg[~expected[seg]])
        assert (rows[:start] == before[:start]).all() and (rows[end:] == before[end:]).all()


def test_node_codes_follow_their_rows_through_partitions_and_fractional_splits():
    """A tree on few features keeps its rows' codes (and the dense targets) in node order (node_rows given X and
    Z): after a partition or a
    fractional split (the smaller child copied above the ranges, the buffer grown) every position holds its
    row's codes, and rows, weights and children are those of the buffer reading X itself."""
    rng = np.random.default_rng(3)
    for trial in range(60):
        n, D = int(rng.integers(1, 80)), int(rng.integers(1, 20))  # rows of 1, 2 and 3 words of codes
        X = rng.integers(0, 6, (D, n)).astype(np.uint8)
        X[rng.random((D, n)) < rng.random() * 0.5] = MISSING
        w = rng.integers(1, 4, n).astype(float)
        rows = rng.permutation(n).astype(np.int64)
        cap = n + int(rng.integers(0, 5))  # little room: a fractional split grows the buffer
        Z = rng.standard_normal((n, 2))
        kept, plain = node_rows(rows.copy(), w, cap, X, Z), node_rows(rows.copy(), w, cap)
        width = (D + 7) // 8 * 8  # whole 8-byte words per row, the padding zeros
        assert kept.codes.shape == (cap, width) and plain.codes.shape == (0, 0)
        assert np.array_equal(kept.codes[:n, :D], X[:, rows].T) and not kept.codes[:, D:].any()
        f, fractional = int(rng.integers(0, D)), bool(trial % 2)
        start = int(rng.integers(0, n))
        tests = TreeTests(np.full(1, f, np.int32), np.array([2], np.int32), np.array([not fractional and trial % 4 == 0]),
                          np.zeros((1, 4), np.uint64), np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(D, bool),
                          np.zeros(1))
        if fractional:
            kept, share, children = split_fractional(X, tests, 0, kept, start, n, n)
            plain, share_p, children_p = split_fractional(X, tests, 0, plain, start, n, n)
            assert (share, children) == (share_p, children_p)
            used = max(children.left_end, children.right_end)
        else:
            mid = partition(X, tests, 0, kept, start, n)
            assert mid == partition(X, tests, 0, plain, start, n)
            used = n
        assert np.array_equal(kept.rows[:used], plain.rows[:used])
        assert np.array_equal(kept.weights[:used], plain.weights[:used])
        assert np.array_equal(kept.codes[:used, :D], X[:, kept.rows[:used]].T), trial
        assert not kept.codes[:used, D:].any(), trial
        assert np.array_equal(kept.targets[:used], Z[kept.rows[:used]]), trial  # the targets follow their rows


def test_draw_feature_is_a_fisher_yates_shuffle_and_children_are_pushed_right_first():
    for seed in range(20):
        D = 1 + seed % 9
        state = np.array([seed * 7919], np.uint64)
        ref_state = state.copy()
        feats = np.arange(D)
        drawn = [draw_feature(state, feats, v) for v in range(D)]
        ref = list(range(D))
        for v in range(D):
            j = v + rand_below(ref_state, D - v)
            ref[v], ref[j] = ref[j], ref[v]
        assert drawn == ref and sorted(drawn) == list(range(D))
    nodes = _tree_arrays(8)
    nodes.depth[1] = 3
    stack = np.zeros((8, 3), np.int64)
    assert _push_children(nodes, 1, Children(0, 10, 14, 14, 20), 5, stack, 2) == (7, 4)
    assert (nodes.left[1], nodes.right[1], nodes.depth[5], nodes.depth[6]) == (5, 6, 4, 4)
    assert stack[2].tolist() == [6, 14, 20] and stack[3].tolist() == [5, 10, 14]  # left child popped first


def test_column_gain_is_the_per_column_reduction():
    for seed in range(10):
        nd = Node(seed, p_missing_target=0.2 * (seed % 2))
        nrows = nd.rows[nd.start:nd.end].copy()
        left = nd.rng.random(nrows.size) < 0.4
        nd.rows[nd.start:nd.end] = np.concatenate([nrows[left], nrows[~left]])
        mid = nd.start + int(left.sum())
        column_gain = np.zeros((2, nd.Z.shape[1]))
        tb = DenseState(nd.Z, nd.has_missing, nd.T, nd.L, new_sums(nd.Z.shape[1]), nd.hist, nd.hist,
                        np.zeros(0, np.int32), 0, new_order_memo())
        dense_column_gain(tb, column_gain, 1, node_rows(nd.rows, nd.w, nd.rows.size, None, nd.Z),
                          Children(0, nd.start, mid, mid, nd.end), NodeTotals(nd.TW, nd.P, nd.sT2))
        Zs, ws = nd.Z[nrows], nd.w[nrows]
        ref = [gain_ref(Zs[:, [k]], ws, left) for k in range(Zs.shape[1])]
        np.testing.assert_allclose(column_gain[1], ref, rtol=1e-9, atol=1e-9 * nd.P)
        assert not column_gain[0].any()
