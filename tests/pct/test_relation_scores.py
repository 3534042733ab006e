"""Relation-level scores (spark_fr.pct.relation_scores) against slow obvious references: the thesis's node
rule walked from the root with Python sets, its worked example, the feature rule, and the roll-up inside the
ensembles (broadcast, partitioned data) and boosting."""
import numpy as np
import pytest

from spark_fr.ensemble.boosting import boost_arrays
from spark_fr.ensemble.local import tree_data_from_arrays
from spark_fr.ensemble.params import BoostingParams, EnsembleParams
from spark_fr.ensemble.trees import grow_tree_of, score_tree
from spark_fr.pct import scores as pct_scores
from spark_fr.pct.relation_scores import (FeatureRelations, node_rewards, relation_scores,
                                          share_by_feature)
from spark_fr.pct.tree import Tree
from spark_fr.results import ScoreKey


def reference_node_rule(tree, rewards, sets, names):
    """Walk the tree from the root, carrying the parent's relation set (Python sets, one node at a time)."""
    out = dict.fromkeys(names, 0.0)

    def visit(node, parent_set):
        f = int(tree.feature[node])
        if f < 0:
            return
        mine = set(sets[f])
        new = mine - parent_set if parent_set is not None else mine
        if not new:
            new = mine
        for r in new:
            out[r] += rewards[node] / len(new)
        visit(int(tree.left[node]), mine)
        visit(int(tree.right[node]), mine)

    visit(0, None)
    return np.array([out[n] for n in names])


def random_relations(rng, D, R):
    names = [f"r{i}" for i in range(R)]
    sets = [list(rng.choice(names, size=rng.integers(1, 4), replace=False)) for _ in range(D)]
    return sets, names


def planted(rng, n=300, D=8):
    X = rng.normal(size=(n, D))
    y = ((X[:, 0] + 0.5 * X[:, 1] > 0).astype(int) + (X[:, 2] > 1).astype(int))
    return X, y


def hand_tree(feature, left, right, weight, gain):
    n = len(feature)
    feature = np.asarray(feature, np.int32)
    return Tree(feature, np.zeros(n, np.int32), np.zeros(n, bool), np.zeros((n, 4), np.uint64),
                np.asarray(left, np.int32), np.asarray(right, np.int32), np.asarray(weight, float),
                np.zeros(n, np.int32), np.asarray(gain, float), np.empty(0, np.int64), np.zeros((0, 0)),
                np.zeros(2, bool))


def test_the_thesis_worked_example():
    """Fig. 3.2: r_stars in the root (1 x 1), re-used by the YES child next to two new relations that share its
    reward: stars scores 1, nationID and nationName 1/2 x 1/2 each (half of the examples reach the child)."""
    rel = FeatureRelations.from_sets([["stars"], ["stars", "nationID", "nationName"]])
    # root tests feature 0 (left child 1 tests feature 1; the others are leaves)
    tree = hand_tree([0, 1, -1, -1, -1], [1, 3, -1, -1, -1], [2, 4, -1, -1, -1], [10, 5, 5, 2, 3], [0.6, 0.3, 0, 0, 0])
    symbolic = relation_scores(tree, node_rewards(tree, "symbolic", 10), rel)
    assert dict(zip(rel.names, symbolic)) == {"nationID": 0.25, "nationName": 0.25, "stars": 1.0}
    genie3 = relation_scores(tree, node_rewards(tree, "genie3", 10), rel)
    assert dict(zip(rel.names, genie3)) == pytest.approx({"nationID": 0.15, "nationName": 0.15, "stars": 0.6})


def test_a_test_adding_no_relation_shares_among_all_of_its_own():
    rel = FeatureRelations.from_sets([["a", "b"], ["a"]])
    tree = hand_tree([0, 1, -1, -1, -1], [1, 3, -1, -1, -1], [2, 4, -1, -1, -1], [8, 4, 4, 2, 2], [1.0, 0.5, 0, 0, 0])
    out = relation_scores(tree, node_rewards(tree, "genie3", 8), rel)
    assert dict(zip(rel.names, out)) == {"a": 0.5 + 0.5, "b": 0.5}


@pytest.mark.parametrize("seed", range(6))
def test_node_rule_matches_the_reference_on_grown_trees(seed):
    rng = np.random.default_rng(seed)
    X, y = planted(rng)
    data, _ = tree_data_from_arrays(X, y, "classification")
    sets, names = random_relations(rng, X.shape[1], 5)
    rel = FeatureRelations.from_sets(sets, names)
    params = EnsembleParams(ensemble="rf", trees=3, seed=seed, max_features=3)
    for t in range(3):
        tree = grow_tree_of(data, params, t, data.sampling(params).counts(t, data.row_keys), False)
        for score in ("symbolic", "genie3"):
            rewards = node_rewards(tree, score, data.n_rows)
            got = relation_scores(tree, rewards, rel)
            assert np.allclose(got, reference_node_rule(tree, rewards, sets, names), rtol=1e-12, atol=1e-15)
            # nothing is lost or created: the relation scores sum to the feature scores
            feature = (pct_scores.genie3(tree, X.shape[1]) if score == "genie3"
                       else pct_scores.symbolic(tree, X.shape[1], data.n_rows))
            assert got.sum() == pytest.approx(feature.sum(), rel=1e-12)


def test_feature_rule_matches_the_reference():
    rng = np.random.default_rng(3)
    sets, names = random_relations(rng, 12, 6)
    rel = FeatureRelations.from_sets(sets, names)
    imp = rng.random(12)
    expected = np.zeros(6)
    for f, s in enumerate(sets):
        for r in s:
            expected[names.index(r)] += imp[f] / len(s)
    assert np.allclose(share_by_feature(imp, rel), expected, rtol=1e-12)
    per_target = np.vstack([imp, 2 * imp])
    assert np.allclose(share_by_feature(per_target, rel), np.vstack([expected, 2 * expected]))


def test_incidence_reordered_by_feature_names():
    rel = FeatureRelations.from_sets([["a"], ["b", "c"], ["c"]], features=["f0", "f1", "f2"])
    sub = rel.for_features(["f2", "f0"])
    assert sub.names == rel.names and sub.features == ("f2", "f0")
    assert [list(sub.of(i)) for i in range(2)] == [[2], [0]]
    with pytest.raises(KeyError):
        rel.for_features(["nope"])


def test_score_tree_adds_relation_scores_equal_with_a_subset_of_the_feature_rows():
    """Partitioned mode ships a tree group only its patches' features (feature_ids): the relation scores of a
    tree must not depend on that."""
    rng = np.random.default_rng(7)
    X, y = planted(rng, n=200, D=10)
    data, _ = tree_data_from_arrays(X, y, "classification")
    sets, names = random_relations(rng, 10, 4)
    data.relations = FeatureRelations.from_sets(sets, names)
    params = EnsembleParams(ensemble="rf", trees=4, seed=5, max_features_per_tree=0.5, scores=["symbolic", "genie3"])
    for t in range(4):
        full = score_tree(data, params, t)
        key = ScoreKey("genie3", level="relation")
        assert full[key].shape == (4,) and full[key].sum() == pytest.approx(full[ScoreKey("genie3")].sum())
        from spark_fr.ensemble.patches import tree_patch

        cols = np.asarray(sorted(tree_patch(params.seed, t, 10, params.patch_size(10))), np.int64)
        sub, _ = tree_data_from_arrays(X, y, "classification")
        sub.codes, sub.nominal = np.ascontiguousarray(data.codes[cols]), data.nominal[cols]
        sub.lower, sub.upper = data.lower[cols], data.upper[cols]
        sub.feature_ids, sub.n_features_all, sub.relations = cols, 10, data.relations
        part = score_tree(sub, params, t)
        for k in full:
            assert np.array_equal(full[k], part[k]), k


def test_boosting_relation_scores_sum_to_the_feature_scores():
    rng = np.random.default_rng(11)
    X, y = planted(rng, n=300, D=6)
    sets, names = random_relations(rng, 6, 4)
    model, data = boost_arrays(X, y, "classification", BoostingParams(trees=5, seed=1))
    assert model.relation_scores == {}
    data.relations = FeatureRelations.from_sets(sets, names)
    from spark_fr.ensemble.boosting import boost, results_of

    model = boost(data, BoostingParams(trees=5, seed=1))
    results = {r.key: r.importance for r in results_of(model, ["symbolic", "genie3"])}
    for s in ("symbolic", "genie3"):
        rel = results[ScoreKey(s, level="relation")]
        assert rel.shape == (4,)
        assert rel.sum() == pytest.approx(results[ScoreKey(s)].sum(), rel=1e-12)
