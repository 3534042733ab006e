"""The local engine's kernels (spark_fr.relational.local_kernels, the numpy limbs of exact.py) against slow,
obvious per-group references on random inputs: ties, signed zeros, missing values, empty groups, masks, both
branches of the mode and distinct count (matrix and sorted pairs)."""
import math
from fractions import Fraction

import numpy as np
import pytest

from spark_fr.relational import exact as X
from spark_fr.relational import local_kernels as K


def limbs_reference(x, e, bits, limb, n):
    """The limbs by the textbook formula: exact integer arithmetic on q = rint(|x| 2^(bits - e))."""
    out = [[] for _ in range(n)]
    for v in x:
        q = round(Fraction(abs(float(v))) * Fraction(2) ** (bits - e))  # half to even, as rint
        s = -1 if v < 0 else (1 if v > 0 else 0)
        for j in range(n):
            part = q >> (limb * j)
            out[j].append(s * (part if j == n - 1 else part & ((1 << limb) - 1)))
    return [np.array(c, dtype=np.int64) for c in out]


@pytest.mark.parametrize("seed", range(6))
def test_numpy_limbs_equal_the_integer_reference(seed):
    rng = np.random.default_rng(seed)
    top = int(rng.integers(-300, 300))
    x = rng.choice([-1.0, 1.0], 300) * rng.random(300) * 10.0 ** rng.integers(top - 30, top + 1, 300)
    x[:4] = [0.0, -0.0, 5e-324, float(np.max(np.abs(x)))]
    e = X.grid_exponent(float(np.max(np.abs(x))))
    for bits, limb, n in ((X.SUM_BITS, X.SUM_LIMB, X.SUM_LIMBS), (X.STD_BITS, X.STD_LIMB, X.STD_LIMBS)):
        got = X._limbs_numpy(x, e, bits, limb, n)
        want = limbs_reference(x, e, bits, limb, n)
        for g, w in zip(got, want):
            assert np.array_equal(g, w)


def groups_of(rng, n, n_groups):
    g = rng.integers(0, n_groups, n)
    return g.astype(np.int64)


@pytest.mark.parametrize("seed", range(6))
def test_sequential_sums_add_in_row_order(seed):
    rng = np.random.default_rng(seed)
    n_groups = 7 + 20 * (seed % 2)
    g = groups_of(rng, 200 + 800 * (seed >= 4), n_groups)  # seeds 4, 5: groups longer than LONG_GROUP
    if seed % 3 != 2:  # else the rows of the groups interleave
        g = np.sort(g)
    x = rng.normal(0, 1, len(g)) * 10.0 ** rng.integers(-5, 15, len(g))
    x[rng.random(len(g)) < 0.1] = -0.0  # 0.0 + -0.0 is 0.0: a group of negative zeros sums to 0.0
    if seed >= 4:
        x[g == 3] = -0.0
    got = K.sequential_sums(g, x, n_groups)
    for j in range(n_groups):
        vals = x[g == j]
        if len(vals) == 0:
            assert np.isnan(got[j])
            continue
        acc = 0.0
        for v in vals:
            acc += v
        assert got[j] == acc and np.signbit(got[j]) == np.signbit(acc)


@pytest.mark.parametrize("matrix", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_nominal_kernels_against_per_group_counts(monkeypatch, seed, matrix):
    if not matrix:
        monkeypatch.setattr(K, "MODE_MATRIX_CELLS", 0)  # the sorted-pairs branch
    rng = np.random.default_rng(seed)
    n, n_groups = 400, 30
    words = np.array(["b", "a", "é", "Z", "aa", "ß", "€", "b "], dtype=object)
    x = words[rng.integers(0, len(words), n)]
    x[rng.random(n) < 0.2] = None
    g = groups_of(rng, n, n_groups)
    col = K.NominalColumn(x)
    k = len(col.values)
    assert list(col.values) == sorted(col.values, key=lambda s: s.encode("utf-8"))
    mask = rng.random(n) < 0.7
    codes = col.selected(mask)
    cd = K.count_distinct_codes(g, codes, k, n_groups)
    mode = K.mode_codes(g, codes, k, n_groups)
    level = col.values[1]
    share = K.share_codes(g, codes, col.code_of(level), n_groups)
    for j in range(n_groups):
        vals = [v for v, gi, m in zip(x, g, mask) if gi == j and m and v is not None]
        assert cd[j] == len(set(vals))
        if not vals:
            assert mode[j] == -1 and np.isnan(share[j])
            continue
        counts = {v: vals.count(v) for v in vals}
        want = min(counts, key=lambda v: (-counts[v], v.encode("utf-8")))
        assert col.values[mode[j]] == want
        assert share[j] == vals.count(level) / len(vals)
    assert col.code_of("not there") == -1


def per_group(x, g, sel, j):
    return [v for v, gi, s in zip(x, g, sel) if gi == j and s]


@pytest.mark.parametrize("seed", range(4))
def test_numeric_aggregates_against_per_group_references(seed):
    rng = np.random.default_rng(seed)
    n, n_groups = 500, 40
    ties = np.array([0.0, -0.0, 1.5, -2.25, 3.0, 1e-3, 7.0, 5e-324])
    x = ties[rng.integers(0, len(ties), n)]
    x[rng.random(n) < 0.15] = np.nan
    g = groups_of(rng, n, n_groups)
    mask = rng.random(n) < 0.6
    col = K.NumericColumn(x)
    names = {"min", "max", "count_distinct", "mode", "sum", "mean", "std"}
    for m in (None, mask):
        got = col.aggregates(names, g, m, n_groups, None)  # no grid: the sorted path
        sel = ~np.isnan(x) if m is None else ~np.isnan(x) & m
        for j in range(n_groups):
            vals = per_group(x, g, sel, j)
            if not vals:
                assert all(np.isnan(got[a][j]) for a in ("min", "max", "mode", "sum", "mean", "std"))
                assert got["count_distinct"][j] == 0
                continue
            lo, hi = min(vals), max(vals)  # Python keeps the first of equal values, as Spark does
            assert got["min"][j] == lo and np.signbit(got["min"][j]) == np.signbit(lo)
            assert got["max"][j] == hi and np.signbit(got["max"][j]) == np.signbit(hi)
            assert got["count_distinct"][j] == len({v + 0.0 for v in vals})
            counts = {}
            for v in vals:
                counts[v + 0.0] = counts.get(v + 0.0, 0) + 1
            assert got["mode"][j] == min(counts, key=lambda v: (-counts[v], v))
            acc = 0.0
            for v in sorted(vals):
                acc += v
            assert got["sum"][j] == acc
            assert got["mean"][j] == acc / len(vals)
            if len(vals) > 1:
                mean = acc / len(vals)
                sq = 0.0
                for v in sorted(vals):
                    sq += (v - mean) * (v - mean)
                assert got["std"][j] == math.sqrt(sq / (len(vals) - 1))
            else:
                assert np.isnan(got["std"][j])


@pytest.mark.parametrize("chunk", [None, 7])
@pytest.mark.parametrize("seed", range(3))
def test_grid_sums_and_stds_are_exact(monkeypatch, seed, chunk):
    if chunk:
        monkeypatch.setattr(X, "LIMB_CHUNK", chunk)  # limbs summed a few rows at a time: the same sums
    rng = np.random.default_rng(seed)
    n, n_groups = 600, 25
    x = rng.integers(-10 ** 6, 10 ** 6, n) / 1024.0  # on the grid: the fixed-point sums are exact
    x[rng.random(n) < 0.1] = np.nan
    g = groups_of(rng, n, n_groups)
    mask = rng.random(n) < 0.5
    e = X.grid_exponent(float(np.nanmax(np.abs(x))))
    col = K.NumericColumn(x)
    got = col.aggregates({"sum", "mean", "std"}, g, mask, n_groups, e)
    for j in range(n_groups):
        vals = [Fraction(v) for v in per_group(x, g, ~np.isnan(x) & mask, j)]
        if not vals:
            assert np.isnan(got["sum"][j]) and np.isnan(got["mean"][j])
            continue
        total = sum(vals)
        assert got["sum"][j] == float(total)  # rounded once
        assert got["mean"][j] == float(total) / len(vals)
        if len(vals) > 1:
            var = (sum(v * v for v in vals) - total * total / len(vals)) / (len(vals) - 1)
            assert got["std"][j] == pytest.approx(math.sqrt(var), rel=1e-15, abs=0)
