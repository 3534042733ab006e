"""Random patches (wide mode): each tree's features are a seeded, partition-free draw; a tree tests only its
patch; the trees equal a local reference grown on the patch's columns; broadcast and partitioned modes (which
ship each tree group only its patches' columns) give the same ranking bit for bit; planted features win."""
import math

import numpy as np
import pandas as pd
import pytest

import spark_fr
from spark_fr.ensemble.local import tree_data_from_arrays
from spark_fr.ensemble.params import EnsembleParams
from spark_fr.ensemble.partitioned import plan_groups
from spark_fr.ensemble.patches import patch_size, patches_union, tree_patch
from spark_fr.ensemble.trees import grow_tree_of, score_tree
from spark_fr.pct import scores as S
from spark_fr.pct.config import grow_config
from spark_fr.pct.tree import grow
from spark_fr.results import ScoreKey
from spark_fr.runtime.rng import Stream, derive_seed

COLS = ["feature", "score", "target", "importance", "rank", "importance_std"]


def test_patch_size_resolves_counts_and_fractions():
    assert patch_size(None, 100) is None
    assert patch_size(10, 100) == 10
    assert patch_size(0.25, 100) == 25
    assert patch_size(0.001, 100) == 1
    assert patch_size(100, 100) is None and patch_size(500, 100) is None and patch_size(1.0, 100) is None


def test_patches_are_seeded_draws_of_distinct_features_covering_all_features_evenly():
    D, p = 200, 20
    a = tree_patch(7, 3, D, p)
    assert a.size == p and np.all(np.diff(a) > 0) and a.min() >= 0 and a.max() < D
    np.testing.assert_array_equal(a, tree_patch(7, 3, D, p))  # a function of (seed, tree) alone
    assert not np.array_equal(a, tree_patch(7, 4, D, p)) and not np.array_equal(a, tree_patch(8, 3, D, p))
    counts = np.bincount(np.concatenate([tree_patch(11, t, D, p) for t in range(2000)]), minlength=D)
    expected = 2000 * p / D  # 200 per feature; binomial sd ~ 13.4
    assert abs(counts - expected).max() < 6 * math.sqrt(expected * (1 - p / D))
    union = patches_union(7, range(3, 6), D, p)
    np.testing.assert_array_equal(union, np.unique(np.concatenate([tree_patch(7, t, D, p) for t in (3, 4, 5)])))


def _data(n=400, D=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D))
    X[rng.random(X.shape) < 0.03] = np.nan
    Y = np.stack([np.nan_to_num(X[:, 0]) * 2 + rng.normal(0, 0.3, n), np.nan_to_num(X[:, 1]) + rng.normal(0, 0.3, n)],
                 axis=1)
    return tree_data_from_arrays(X, Y, "mtr")[0]


def test_a_tree_tests_only_its_patch_and_equals_a_tree_grown_on_the_patch_columns():
    data = _data()
    params = EnsembleParams(trees=5, seed=3, max_features_per_tree=8, max_features=4, per_target=True)
    for t in range(5):
        patch = tree_patch(3, t, 30, 8)
        w = data.sampling(params).counts(t, data.row_keys)
        tree = grow_tree_of(data, params, t, w, track=True)
        assert set(tree.feature[tree.feature >= 0]) <= set(patch)
        config = grow_config(max_features=4, track_columns=True, seed=derive_seed(3, t, Stream.GROW),
                             missing=params.missing)
        ref = grow(np.ascontiguousarray(data.codes[patch]), data.nominal[patch], data.lower[patch], data.upper[patch],
                   data.Z, w, config)
        np.testing.assert_array_equal(tree.feature[tree.internal], patch[ref.feature[ref.internal]])
        np.testing.assert_array_equal(tree.gain, ref.gain)
        got = score_tree(data, params, t)
        want = np.zeros(30)
        want[patch] = S.genie3(ref, 8)
        np.testing.assert_array_equal(got[ScoreKey("genie3")], want)
        outside = np.setdiff1d(np.arange(30), patch)
        for key, arr in got.items():
            assert np.all(arr[..., outside] == 0), key


def test_without_patches_the_per_node_subset_is_unchanged_and_with_them_capped_at_the_patch():
    data = _data(D=30)
    params = EnsembleParams(trees=1, seed=1, max_features_per_tree=3)  # sqrt(30) = 6 > 3
    w = data.sampling(params).counts(0, data.row_keys)
    tree = grow_tree_of(data, params, 0, w, track=False)
    patch = tree_patch(1, 0, 30, 3)
    ref = grow(np.ascontiguousarray(data.codes[patch]), data.nominal[patch], data.lower[patch], data.upper[patch],
               data.Z, w, grow_config(max_features=3, seed=derive_seed(1, 0, Stream.GROW), missing=params.missing))
    np.testing.assert_array_equal(tree.gain, ref.gain)


def test_groups_with_patches_hold_few_trees():
    assert len(plan_groups(100, 2)) == 4
    groups = plan_groups(100, 2, n_features=20000, patch=1000)  # 5 trees per group at most
    assert len(groups) == 20 and max(len(g) for g in groups) == 5
    assert sum(len(g) for g in groups) == 100


def frame(n=400, D=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, D))
    X[rng.random(X.shape) < 0.03] = np.nan
    pdf = pd.DataFrame(X, columns=[f"f{i:02d}" for i in range(D)])
    x = np.nan_to_num(X)
    pdf["y1"] = 2 * x[:, 0] + x[:, 1] + rng.normal(0, 0.2, n)
    pdf["y2"] = x[:, 2] - x[:, 3] + rng.normal(0, 0.2, n)
    return pd.concat([pdf, pdf.iloc[:20]], ignore_index=True)


def test_partitioned_mode_with_patches_gives_exactly_the_broadcast_ranking_for_any_partitioning(spark):
    df = spark.createDataFrame(frame())
    kw = dict(targets="y1,y2", trees=10, seed=4, per_target=True, max_features_per_tree=0.2, spark=spark)
    a = spark_fr.rank(df, ensemble_mode="broadcast", **kw)
    assert a.metadata["params"]["features_per_tree"] == 8
    for parts in (1, 3):
        b = spark_fr.rank(df.repartition(parts), ensemble_mode="partitioned", **kw)
        assert b.metadata["ensemble_mode"] == "partitioned" and b.metadata["group_columns_max"] < 40
        pd.testing.assert_frame_equal(a.to_pandas()[COLS], b.to_pandas()[COLS], check_exact=True)
    full = spark_fr.rank(df, ensemble_mode="broadcast", **{**kw, "max_features_per_tree": None})
    assert not np.allclose(full.to_pandas().importance, a.to_pandas().importance)


@pytest.mark.parametrize("score", ["genie3", "rf"])
def test_patches_still_rank_the_planted_features_first(spark, score):
    df = spark.createDataFrame(frame(n=600, D=60, seed=2))
    r = spark_fr.rank(df, targets="y1,y2", trees=60, seed=2, max_features_per_tree=0.25, scores=score,
                      spark=spark)
    assert set(r.top(score, 4).feature) == {"f00", "f01", "f02", "f03"}
