"""The tiny nodes' memo of best tests by their codes' order pattern (spark_fr.pct.order_memo) against each
feature's own search, and its keys against a brute-force definition of the order pattern."""
import itertools

import numpy as np

from spark_fr.pct.config import grow_config
from spark_fr.pct.dense_targets import dense_node_totals, dense_search_feature, new_dense_state
from spark_fr.pct.histogram import Codes
from spark_fr.pct.node_rows import node_rows
from spark_fr.pct.order_memo import MEMO_ROWS, pattern
from spark_fr.pct.search import new_search

MISSING = 255


def _search_all(X, Z, w, rows, spans, config, fresh):
    """Every feature's search result at each node ``span`` in turn, on one backend state (the memo shared by the
    node's features) or, ``fresh``, on a new state per feature (no result is ever recalled)."""
    D = X.shape[0]
    codes = Codes(X, np.zeros(D, np.bool_), np.zeros((D, 255)), np.zeros((D, 255)))
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
        n, D, K = 40, [60, 80][seed % 2], int(rng.integers(1, 5))  # node codes kept (<= 64 features) or not
        X = rng.integers(0, int(rng.integers(2, 6)), size=(D, n)).astype(np.uint8)
        X[rng.random((D, n)) < 0.05] = MISSING
        Z = rng.standard_normal((n, K))
        w = rng.integers(0, 3, n).astype(float)
        rows = np.flatnonzero(w > 0).astype(np.int64)
        sizes = rng.integers(1, MEMO_ROWS + 3, 6)
        starts = np.cumsum(np.concatenate([[0], sizes[:-1]]))
        spans = [(int(s), int(s + z)) for s, z in zip(starts, sizes) if s + z <= rows.size]
        config = grow_config(min_leaf=float(rng.choice([1.0, 2.0])), seed=seed)
        shared, tb = _search_all(X, Z, w, rows.copy(), spans, config, fresh=False)
        alone, _ = _search_all(X, Z, w, rows.copy(), spans, config, fresh=True)
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
    memo_of = new_dense_state(np.zeros((8, 1)), np.arange(8), np.zeros(1, np.bool_), grow_config()).memo
    for n in range(2, MEMO_ROWS + 1):
        orders = {}
        for c in itertools.product(range(4), repeat=n):
            X[0, :n] = c
            nr = node_rows(np.arange(n, dtype=np.int64), np.ones(n), n, X, np.zeros((n, 1)))  # keeps X's codes
            key = pattern(memo_of, X, 0, nr, 0, n)
            assert key == _brute_key(c) and 0 <= key < n ** n
            order = tuple(np.argsort(np.argsort(c, kind="stable"), kind="stable")), tuple(
                (np.asarray(c)[:, None] == np.asarray(c)[None, :]).ravel())
            assert orders.setdefault(key, order) == order
        X[0, n - 1] = MISSING
        nr = node_rows(np.arange(n, dtype=np.int64), np.ones(n), n, X, np.zeros((n, 1)))
        assert pattern(memo_of, X, 0, nr, 0, n) == -1
    nr = node_rows(np.arange(8, dtype=np.int64), np.ones(8), 8, X, np.zeros((8, 1)))
    assert pattern(memo_of, X, 0, nr, 0, MEMO_ROWS + 1) == -1
