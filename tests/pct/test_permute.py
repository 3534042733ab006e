"""The RF score's per-feature kernel (spark_fr.pct.permute) against slow, obvious NumPy references on random inputs."""
import numpy as np
import pytest

from spark_fr.pct.permute import PairArrays, draw_permutation, rows_to_walk, walk_buffers
from spark_fr.pct.route import permutation
from spark_fr.runtime.rng import rand_below
from spark_fr.pct.scores import oob_permutation, permutation_seed


def reference_rows_to_walk(XR, oob, pairs, f, perm):
    """The pairs of feature f to walk, one pair at a time: (positions, rows, donors, starts)."""
    out = []
    for q in range(pairs.indptr[f], pairs.indptr[f + 1]):
        i = int(pairs.positions[q])
        donor = int(oob[perm[i]])
        code = int(XR[donor, f])
        if not pairs.lo[q] <= code <= pairs.hi[q]:
            out.append((i, int(oob[i]), donor, int(pairs.first_nodes[q])))
    return tuple(np.array([o[c] for o in out], np.int64) for c in range(4))


def random_pairs(rng, n_oob, D, n_nodes):
    """Pairs grouped by feature (some features without any), positions increasing within one, ranges of codes
    that may be empty (lo > hi), as rows_by_path_feature makes them."""
    counts = rng.integers(0, n_oob, D) * (rng.random(D) < 0.8)
    indptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    positions = np.concatenate([np.sort(rng.choice(n_oob, c, replace=False)) for c in counts]).astype(np.int64)
    lo = rng.integers(0, 256, indptr[-1]).astype(np.int64)
    hi = np.minimum(lo + rng.integers(-20, 200, indptr[-1]), 254).astype(np.int64)
    first_nodes = rng.integers(0, n_nodes, indptr[-1]).astype(np.int64)
    return PairArrays(indptr, positions, first_nodes, lo, hi)


def reference_permutation(state_seed, n):
    """Fisher-Yates from the last position down, j drawn by rand_below from one SplitMix64 state: one swap at a time."""
    state = np.array([state_seed], np.uint64)
    p = list(range(n))
    for i in range(n - 1, 0, -1):
        j = rand_below(state, i + 1)
        p[i], p[j] = p[j], p[i]
    return np.array(p, np.int64)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 17, 1000])
def test_draw_permutation_is_the_rf_scores_permutation_to_the_bit(n):
    perm = np.full(n, -7, np.int64)  # reused across draws, as the RF score reuses it across features
    for seed, feature in [(0, 0), (3, 11), (2**63 + 5, 49)]:
        draw_permutation(permutation_seed(seed, feature), perm)
        want = reference_permutation(permutation_seed(seed, feature), n)
        assert np.array_equal(perm, want)
        assert np.array_equal(permutation(permutation_seed(seed, feature), n), want)
        assert np.array_equal(oob_permutation(seed, feature, n), want)


@pytest.mark.parametrize("case", range(6))
def test_rows_to_walk_matches_a_pair_by_pair_reference(case):
    rng = np.random.default_rng(case)
    n, D = int(rng.integers(2, 400)), int(rng.integers(1, 9))
    XR = rng.integers(0, 256, (n, D)).astype(np.uint8)
    XR[rng.random((n, D)) < 0.1] = 255  # missing codes: always outside the range
    oob = np.sort(rng.choice(n, int(rng.integers(1, n + 1)), replace=False)).astype(np.int64)
    pairs = random_pairs(rng, oob.size, D, 50)
    buffers = walk_buffers(oob.size, pairs.indptr)
    for buffer in buffers[1:]:
        buffer[:] = -1  # whatever an earlier feature left in them
    seed = int(rng.integers(0, 2**62))
    walked = 0
    for f in rng.permutation(D):  # the buffers reused from feature to feature, in any order
        k = rows_to_walk(XR, oob, pairs, int(f), permutation_seed(seed, f), buffers)
        want = reference_rows_to_walk(XR, oob, pairs, f, oob_permutation(seed, f, oob.size))
        got = (buffers.positions[:k], buffers.rows[:k], buffers.donors[:k], buffers.starts[:k])
        for g, w in zip(got, want):
            assert np.array_equal(g, w)
        walked += k
    assert walked > 0  # the cases test something


def test_walk_buffers_hold_the_largest_feature_and_every_out_of_bag_row():
    buffers = walk_buffers(10, np.array([0, 3, 3, 9], np.int64))
    assert buffers.perm.shape == (10,) and all(b.shape == (6,) for b in buffers[1:])
    assert all(b.shape == (0,) for b in walk_buffers(4, np.zeros(1, np.int64))[1:])
