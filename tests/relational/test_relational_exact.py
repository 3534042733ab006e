"""Exact, order-independent sums, means and standard deviations (``spark_fr/relational/exact.py``) and the
native aggregates of ``GroupAggregates``: checked against slow references (Python integers, fractions,
``math.fsum``) on random inputs, the same bits in Spark for any partitioning and in numpy, and the domain
form of mode / count_distinct against Spark's own ``mode`` / ``collect_set``."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from pyspark.sql import functions as F

from spark_fr.relational import exact as X
from spark_fr.relational.aggregates import GroupAggregates
from spark_fr.relational.sqltext import Sql


def _gridded(v: float, e: int) -> float:
    return float(np.sign(v) * np.rint(abs(v) * 2.0 ** (X.SUM_BITS - e)) * 2.0 ** (e - X.SUM_BITS))


def _hostile_values(rng, n):
    """Concentrated (1e6 +- 1e-3), heavy-tailed of both signs, tiny, small integers; 5 % missing."""
    parts = [rng.normal(1e6, 1e-3, n // 4), rng.lognormal(0, 5, n // 4) * rng.choice([-1, 1], n // 4),
             rng.uniform(-1, 1, n // 4) * 1e-12, rng.integers(-5, 5, n - 3 * (n // 4)).astype(float)]
    x = np.concatenate(parts)
    rng.shuffle(x)
    x[rng.random(n) < 0.05] = np.nan
    return x


def _exact_std(vals) -> float:
    fr = [Fraction(float(v)) for v in vals]
    m = sum(fr) / len(fr)
    return math.sqrt(float(sum((v - m) ** 2 for v in fr) / (len(fr) - 1)))


def test_words_equal_python_integers():
    """The carried words of a sum of signed limbs are the exact integer (slow reference: Python ints)."""
    rng = np.random.default_rng(3)
    for limb, n in ((32, 3), (16, 7)):
        sums = [rng.integers(-(2 ** 61), 2 ** 61, 200, dtype=np.int64) for _ in range(n)]
        ws = X.words(sums, limb, X._shift_numpy, X._mask_numpy)
        for i in range(200):
            want = sum(int(s[i]) << (limb * j) for j, s in enumerate(sums))
            got = int(ws[0][i]) + (int(ws[1][i]) << 52) + (int(ws[2][i]) << 104)
            assert got == want
            assert 0 <= ws[0][i] < 2 ** 52 and 0 <= ws[1][i] < 2 ** 52


@pytest.mark.parametrize("seed", [0, 1])
def test_numpy_sums_and_stds_against_exact_references(seed):
    rng = np.random.default_rng(seed)
    n, groups = 6000, 150
    g = rng.integers(0, groups, n)
    x = _hostile_values(rng, n)
    for gg, xx in ((g, x), (g[x > 1e5], x[x > 1e5])):  # all values; only the concentrated ones
        e = X.grid_exponent(float(np.nanmax(np.abs(xx))))
        sums = X.group_sums_numpy(gg, xx, groups, e)
        stds = X.group_stds_numpy(gg, xx, groups, e)
        for k in range(groups):
            vals = xx[(gg == k) & ~np.isnan(xx)]
            if not len(vals):
                assert np.isnan(sums[k]) and np.isnan(stds[k])
                continue
            want = math.fsum(_gridded(v, e) for v in vals)
            assert abs(sums[k] - want) <= np.spacing(abs(want)), (k, sums[k], want)
            if len(vals) < 2:
                assert np.isnan(stds[k])
                continue
            exact = _exact_std(vals)
            assert abs(stds[k] - exact) <= 1e-12 * exact + 2.0 ** (e - X.STD_BITS + 2), (k, stds[k], exact)


def _spark_stats(spark, pdf, e, partitions):
    df = spark.createDataFrame(pdf).repartition(partitions)
    df = df.withColumn("x", F.when(~F.isnan("x"), F.col("x")))
    limbs = X.sum_limbs(Sql.col("x"), e)
    std_limbs = X.std_limbs(Sql.col("x"), e)
    out = df.groupBy("g").agg(F.count("x").alias("n"),
                              *[F.sum(c.column()).alias(f"s{i}") for i, c in enumerate(limbs)],
                              *[F.sum(c.column()).alias(f"t{i}") for i, c in enumerate(std_limbs)])
    out = out.select("*", *[w.column().alias(f"w{i}")
                            for i, w in enumerate(X.sum_words([Sql.col(f"s{i}") for i in range(len(limbs))]))])
    out = out.select("*", X.sum_from_words([Sql.col(f"w{i}") for i in range(3)], e).column().alias("sum"))
    for step in X.std_steps([Sql.col(f"t{i}") for i in range(len(std_limbs))], Sql.col("n"), e, "std"):
        out = out.select("*", *[expr.column().alias(name) for name, expr in step])
    return {r["g"]: (r["sum"], r["std"]) for r in out.select("g", "sum", "std").collect()}


def test_spark_gives_the_numpy_bits_for_any_partitioning(spark):
    rng = np.random.default_rng(11)
    n, groups = 8000, 120
    g = rng.integers(0, groups, n)
    x = _hostile_values(rng, n)
    e = X.grid_exponent(float(np.nanmax(np.abs(x))))
    pdf = pd.DataFrame({"g": g, "x": x})
    one, seven = _spark_stats(spark, pdf, e, 1), _spark_stats(spark, pdf, e, 7)
    assert one == seven
    sums, stds = X.group_sums_numpy(g, x, groups, e), X.group_stds_numpy(g, x, groups, e)
    for k, (s, sd) in one.items():
        assert (s is None and np.isnan(sums[k])) or s == sums[k]
        assert (sd is None and np.isnan(stds[k])) or sd == stds[k]


def test_domain_modes_and_distinct_counts_equal_spark_mode_and_collect_set(spark):
    """Per-value counts (small domains) against Spark's mode (smallest value on ties) and collect_set, with a
    condition, ties, missing values and groups without any value."""
    rng = np.random.default_rng(5)
    n = 3000
    pdf = pd.DataFrame({"g": rng.integers(0, 400, n),
                        "v": rng.choice(["b", "a", "c'", "d\\", None], n, p=[.3, .3, .2, .1, .1]),
                        "c": rng.choice(["x", "y"], n)})
    pdf.loc[pdf.g >= 390, "v"] = None
    domain = ("a", "b", "c'", "d\\")
    df = spark.createDataFrame(pdf).repartition(3)
    for condition in (None, ("c", "y")):
        fast, slow = GroupAggregates(), GroupAggregates()
        for group, dom in ((fast, domain), (slow, None)):
            group.add("mode", "v", "mode", condition, "nominal", domain=dom)
            group.add("count_distinct", "v", "nd", condition, "nominal", domain=dom)
        a = {r["__g"]: (r["mode"], r["nd"]) for r in fast.apply(df, F.col("g").alias("__g")).collect()}
        b = {r["__g"]: (r["mode"], r["nd"]) for r in slow.apply(df, F.col("g").alias("__g")).collect()}
        assert a == b
        assert any(m is None for m, _ in a.values())


def test_sums_fall_back_to_sorted_values_without_a_finite_bound(spark):
    """Infinite values: no grid (bound not finite), the sorted-value path; same results in 1 and 4 partitions."""
    assert X.grid_exponent(float("inf")) is None and X.grid_exponent(float("nan")) is None
    pdf = pd.DataFrame({"g": [1, 1, 1, 2, 2, 3], "x": [1.0, float("inf"), 2.0, 0.5, 0.25, -float("inf")]})
    out = {}
    for parts in (1, 4):
        group = GroupAggregates()
        group.add("sum", "x", "s", grid=None)
        group.add("mean", "x", "m", grid=None)
        rows = group.apply(spark.createDataFrame(pdf).repartition(parts), F.col("g").alias("__g")).collect()
        out[parts] = {r["__g"]: (r["s"], r["m"]) for r in rows}
    assert out[1] == out[4]
    assert out[1][1] == (float("inf"), float("inf")) and out[1][2] == (0.75, 0.375)
    assert out[1][3] == (-float("inf"), -float("inf"))
