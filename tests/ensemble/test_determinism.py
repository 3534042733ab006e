"""The same seed gives the same ranking whatever the partitioning (input partitions, tree groups)."""
import numpy as np
import pandas as pd

import spark_fr
from spark_fr.ensemble import spark as ens_spark
from spark_fr.runtime.exact import ExactSum

COLS = ["feature", "score", "target", "importance", "rank", "importance_std"]


def synthetic_df(spark, n=700, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 8))
    X[rng.random(X.shape) < 0.05] = np.nan
    pdf = pd.DataFrame(X, columns=[f"f{i}" for i in range(8)])
    pdf["colour"] = np.array(["red", "green", "blue", "grey"])[rng.integers(0, 4, n)]
    pdf["y1"] = 2 * np.nan_to_num(X[:, 0]) + (pdf.colour == "red") + rng.normal(0, 0.2, n)
    pdf["y2"] = np.nan_to_num(X[:, 1]) * np.nan_to_num(X[:, 2]) + rng.normal(0, 0.2, n)
    # duplicated rows must not break the canonical order
    pdf = pd.concat([pdf, pdf.iloc[:40]], ignore_index=True)
    return spark.createDataFrame(pdf)


def rank_table(df, **kw):
    ranking = spark_fr.rank(df, targets="y1,y2", trees=24, seed=11, per_target=True, **kw)
    return ranking.to_pandas()[COLS]


def test_same_ranking_for_1_2_and_8_input_partitions(spark):
    df = synthetic_df(spark)
    tables = [rank_table(df.repartition(p), spark=spark) for p in (1, 2, 8)]
    tables.append(rank_table(df.orderBy("f3", ascending=False).coalesce(3), spark=spark))
    for t in tables[1:]:
        pd.testing.assert_frame_equal(tables[0], t, check_exact=True)


def test_fractional_missing_values_give_the_same_ranking_for_any_partitioning(spark):
    """--missing fractional (the default: rows with a missing value down both branches): 1 or 8 input
    partitions, the same bits; and not the learned rule's ranking."""
    df = synthetic_df(spark, seed=2)
    one = rank_table(df.repartition(1), spark=spark, missing="fractional")
    eight = rank_table(df.repartition(8), spark=spark, missing="fractional")
    pd.testing.assert_frame_equal(one, eight, check_exact=True)
    assert not np.allclose(one.importance, rank_table(df, spark=spark, missing="learned").importance)


def test_same_ranking_for_any_number_of_tree_groups(spark, monkeypatch):
    """Trees grouped 1 per task or all in one task: identical sums (exact accumulation)."""
    df = synthetic_df(spark, seed=1)
    many = rank_table(df, spark=spark)
    monkeypatch.setattr(ens_spark, "plan_groups", lambda n, *a, **k: [range(0, n)])
    one = rank_table(df, spark=spark)
    monkeypatch.setattr(ens_spark, "plan_groups", lambda n, *a, **k: [range(i, i + 1) for i in range(n)])
    singles = rank_table(df, spark=spark)
    pd.testing.assert_frame_equal(many, one, check_exact=True)
    pd.testing.assert_frame_equal(many, singles, check_exact=True)


def test_a_different_seed_gives_different_trees(spark):
    df = synthetic_df(spark, seed=2)
    a = spark_fr.rank(df, targets="y1,y2", trees=10, seed=1, spark=spark).to_pandas()
    b = spark_fr.rank(df, targets="y1,y2", trees=10, seed=2, spark=spark).to_pandas()
    assert not np.allclose(a.importance, b.importance)


def test_exact_sum_does_not_depend_on_the_order():
    rng = np.random.default_rng(0)
    parts = [rng.standard_cauchy(50) * 10.0 ** rng.integers(-8, 8) for _ in range(300)]
    results = []
    for perm_seed in range(5):
        order = np.random.default_rng(perm_seed).permutation(len(parts))
        # combine in a random tree shape
        accs = []
        for i in order:
            a = ExactSum(50)
            a.add(parts[i])
            accs.append(a)
        r = np.random.default_rng(perm_seed + 100)
        while len(accs) > 1:
            i, j = sorted(r.choice(len(accs), 2, replace=False))
            accs[i].merge(accs.pop(j))
        results.append(accs[0].value())
    for r_ in results[1:]:
        np.testing.assert_array_equal(results[0], r_)
    plain = [np.sum(np.array(parts)[np.random.default_rng(s).permutation(len(parts))], axis=0) for s in range(5)]
    assert any(not np.array_equal(plain[0], p) for p in plain[1:]), "plain sums would differ (test is meaningful)"
