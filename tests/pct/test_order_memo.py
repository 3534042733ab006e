"""The small nodes' reads: the tiny nodes' memo of best tests by their codes' order pattern (spark_fr.pct.order_memo)
against each feature's own search, its keys against a brute-force definition of the order pattern, and the
row-major codes against X (the same trees)."""
import itertools

import numpy as np

from spark_fr.ensemble.params import EnsembleParams
from spark_fr.ensemble.trees import ROW_MAJOR_MAX_FEATURES, TreeData
from spark_fr.pct.config import grow_config
from spark_fr.pct.dense_targets import dense_node_totals, dense_search_feature, new_dense_state
from spark_fr.pct.histogram import Codes
from spark_fr.pct.node_rows import NODE_CODES_MAX_FEATURES, node_rows
from spark_fr.pct.order_memo import MEMO_ROWS, pattern
from spark_fr.pct.search import new_search
from spark_fr.pct.tree import grow

MISSING = 255


def _search_all(X, Z, w, rows, spans, config, fresh, by_row):
    """Every feature's search result at each node ``span`` in turn, on one backend state (the memo shared by the
    node's features) or, ``fresh``, on a new state per feature (no result is ever recalled); ``by_row``: the small
    nodes read the row-major codes."""
    D = X.shape[0]
    codes = Codes(X, np.zeros(D, np.bool_), np.zeros((D, 255)), np.zeros((D, 255)))
    if by_row:
        codes = codes._replace(by_row=np.ascontiguousarray(X.T))
    nr = node_rows(rows, w, rows.size, X, Z)
    search = new_search(1, D)
    tb = new_dense_state(Z, rows, codes.nominal, config)
    out = []
    for start, end in spans:
        node = dense_node_totals(tb, nr, start, end)
        for f in range(D):
            if fresh:
                tb = new_dense_state(Z, rows, codes.nominal, config)
                node = dense_node_totals(tb, nr, start, end)
            pc, h, thr, ml = dense_search_feature(tb, search, codes, f, nr, (start, end), node, config)
            out.append((tuple(pc), np.float64(h).view(np.uint64), int(thr), bool(ml)))
    return out, tb


def test_a_recalled_best_test_is_the_features_own_to_the_bit():
    """At nodes of 1-6 rows (tiny codes' ranges, so many features share an order pattern; missing codes), one after
    another on the same state: every feature's (present codes, gain bits, threshold code, missing_left) equals its
    search on a fresh state, and results were recalled (fewer keys remembered than features searched)."""
    recalled = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        n, D, K = 40, [60, 80, 80][seed % 3], int(rng.integers(1, 5))  # node codes kept (<= 64 features) or not
        X = rng.integers(0, int(rng.integers(2, 6)), size=(D, n)).astype(np.uint8)
        X[rng.random((D, n)) < 0.05] = MISSING
        Z = rng.standard_normal((n, K))
        w = rng.integers(0, 3, n).astype(float)
        rows = np.flatnonzero(w > 0).astype(np.int64)
        sizes = rng.integers(1, MEMO_ROWS + 3, 6)
        starts = np.cumsum(np.concatenate([[0], sizes[:-1]]))
        spans = [(int(s), int(s + z)) for s, z in zip(starts, sizes) if s + z <= rows.size]
        config = grow_config(min_leaf=float(rng.choice([1.0, 2.0])), seed=seed)
        shared, tb = _search_all(X, Z, w, rows.copy(), spans, config, False, seed % 3 == 2)
        alone, _ = _search_all(X, Z, w, rows.copy(), spans, config, True, False)
        assert shared == alone
        last = spans[-1]
        if last[1] - last[0] <= MEMO_ROWS:
            recalled += D - int((tb.memo.tag == tb.memo.node[0]).sum())
    assert recalled > 0


def _brute_key(c):
    """The order pattern key by its definition: sum over i of (number of codes smaller than c_i) * n**i."""
    n = len(c)
    return sum(sum(int(cj < ci) for cj in c) * n ** i for i, ci in enumerate(c))


def test_pattern_keys_name_the_order_of_the_codes():
    """Every code vector of 2-4 rows over 4 values: equal keys exactly when the codes are in the same order (same
    ties, same smaller ones); a missing code or too many rows gives -1."""
    X = np.zeros((1, 8), np.uint8)
    codes = Codes(X, np.zeros(1, np.bool_), np.zeros((1, 255)), np.zeros((1, 255)))
    memo_of = new_dense_state(np.zeros((8, 1)), np.arange(8), np.zeros(1, np.bool_), grow_config()).memo
    for n in range(2, MEMO_ROWS + 1):
        orders = {}
        for c in itertools.product(range(4), repeat=n):
            X[0, :n] = c
            nr = node_rows(np.arange(n, dtype=np.int64), np.ones(n), n, X, np.zeros((n, 1)))  # keeps X's codes
            key = pattern(memo_of, codes, 0, nr, 0, n)
            assert key == _brute_key(c) and 0 <= key < n ** n
            order = tuple(np.argsort(np.argsort(c, kind="stable"), kind="stable")), tuple(
                (np.asarray(c)[:, None] == np.asarray(c)[None, :]).ravel())
            assert orders.setdefault(key, order) == order
        X[0, n - 1] = MISSING
        nr = node_rows(np.arange(n, dtype=np.int64), np.ones(n), n, X, np.zeros((n, 1)))
        assert pattern(memo_of, codes, 0, nr, 0, n) == -1
    nr = node_rows(np.arange(8, dtype=np.int64), np.ones(8), 8, X, np.zeros((8, 1)))
    assert pattern(memo_of, codes, 0, nr, 0, MEMO_ROWS + 1) == -1


def test_row_major_codes_grow_the_same_trees():
    """The small nodes' codes read from the row-major copy (more than 64 features: the tree keeps no node codes)
    give the trees grown from X, every node array to the bit."""
    rng = np.random.default_rng(3)
    D, n = 100, 400
    X = rng.integers(0, 12, size=(D, n)).astype(np.uint8)
    X[rng.random((D, n)) < 0.03] = MISSING
    Z = rng.standard_normal((n, 3)) + X[:3].T / 4.0
    lower = np.cumsum(np.ones((D, 255)), axis=1)
    for seed in range(4):
        w = rng.poisson(1.0, n).astype(float)
        config = grow_config(min_leaf=1.0, max_features=10, seed=seed)
        a = grow(X, np.zeros(D, np.bool_), lower, lower + 0.5, Z, w, config)
        b = grow(X, np.zeros(D, np.bool_), lower, lower + 0.5, Z, w, config, by_row=np.ascontiguousarray(X.T))
        assert a.feature.size > 50
        for name in ("feature", "threshold", "missing_left", "left", "right", "weight", "gain", "leaf_of_row"):
            assert np.array_equal(getattr(a, name), getattr(b, name)), name


def test_the_row_major_codes_are_made_for_the_grower_only_where_it_reads_them():
    """TreeData.with_row_major_for: made for the RF score whatever the width; for the grower alone only past
    NODE_CODES_MAX_FEATURES features (and up to ROW_MAJOR_MAX_FEATURES), and not when the trees grow on patches."""
    def data(D):
        codes = np.zeros((D, 8), np.uint8)
        return TreeData(codes, np.zeros(D, np.bool_), None, None, None, None, None, None, None)

    genie3, rf = EnsembleParams(trees=1, scores=["genie3"]), EnsembleParams(trees=1, scores=["genie3", "rf"])
    assert data(NODE_CODES_MAX_FEATURES).with_row_major_for(genie3).codes_rows is None
    assert data(ROW_MAJOR_MAX_FEATURES + 1).with_row_major_for(genie3).codes_rows is None
    assert data(10).with_row_major_for(rf).codes_rows.shape == (8, 10)
    made = data(NODE_CODES_MAX_FEATURES + 1).with_row_major_for(genie3)
    assert np.array_equal(made.codes_rows, made.codes.T) and made.codes_rows.flags.c_contiguous
    patches = EnsembleParams(trees=1, scores=["genie3"], max_features_per_tree=0.5)  # trees on a patch's copy
    assert patches.patch_size(100) is not None and data(100).with_row_major_for(patches).codes_rows is None
