"""The descriptive clustering part (semi-supervised and unsupervised trees) against brute-force references:
impurity, the grower's gain, the RF score's error, and the SSL mixture of targets and features."""
import numpy as np
import pytest

from spark_fr import tasks
from spark_fr.data.binning import fit_bins, stack_bins
from spark_fr.pct.config import grow_config
from spark_fr.pct.tree import grow
from spark_fr.tasks.descriptive import DescriptiveLayout
from spark_fr.tasks.semi_supervised import with_features


def random_features(rng, n, n_numeric=3, cats=(3, 2)):
    """n rows of numeric features (some missing) and nominal ones (category indices, some missing)."""
    cols = [rng.normal(size=n) * rng.uniform(0.1, 10) for _ in range(n_numeric)]
    cols += [rng.integers(0, c, n).astype(float) for c in cats]
    X = np.column_stack(cols)
    X[rng.random(X.shape) < 0.1] = np.nan
    return X, DescriptiveLayout(np.array([0] * n_numeric + list(cats)))


def var_known(v, w):
    k = ~np.isnan(v)
    if w[k].sum() <= 0:
        return 0.0
    m = np.average(v[k], weights=w[k])
    return float(np.average((v[k] - m) ** 2, weights=w[k]))


def gini_known(v, w, c):
    k = ~np.isnan(v)
    if w[k].sum() <= 0:
        return 0.0
    p = np.array([w[k][v[k] == j].sum() for j in range(c)]) / w[k].sum()
    return float(1.0 - np.sum(p ** 2))


def brute_descriptive_impurity(X, layout, w, X_train):
    """(1/D) sum_i impu(E, x_i) / impu(E_train, x_i), variance or Gini over the known rows (thesis Eq. 2.13)."""
    total = 0.0
    ones = np.ones(X_train.shape[0])
    for f, c in enumerate(layout.n_categories):
        if c == 0:
            num, den = var_known(X[:, f], w), var_known(X_train[:, f], ones)
        else:
            num, den = gini_known(X[:, f], w, c), gini_known(X_train[:, f], ones, c)
        total += num / den if den > 0 else 0.0
    return total / layout.n_features


@pytest.mark.parametrize("seed", range(4))
def test_unsupervised_impurity_is_the_mean_normalised_variance_and_gini(seed):
    rng = np.random.default_rng(seed)
    X, layout = random_features(rng, 80)
    fitted = with_features(tasks.get("unsupervised"), layout, 0.0).fit(X, [], None)
    sub = rng.random(80) < 0.5
    w = rng.poisson(1.0, sub.sum()).astype(float)
    assert fitted.impurity(X[sub], w) == pytest.approx(brute_descriptive_impurity(X[sub], layout, w, X), rel=1e-10)
    assert fitted.impurity(X) == pytest.approx(1.0, rel=1e-12)  # every feature varies: each term is 1 on E_train
    # the grower sees sum_k alpha_k Var(column k) as the column variances of Z (NaN = missing)
    Z = fitted.clustering_matrix(X[sub])
    zsum = sum(var_known(Z[:, k], w) for k in range(Z.shape[1]))
    assert zsum == pytest.approx(fitted.impurity(X[sub], w), rel=1e-10)


@pytest.mark.parametrize("task,weight", [("mtr", 0.3), ("classification", 0.7), ("mlc", 0.5), ("regression", 1.0),
                                         ("mtr", 0.0)])
def test_ssl_impurity_mixes_the_normalised_target_and_feature_impurities(task, weight):
    rng = np.random.default_rng(11)
    n = 90
    X, layout = random_features(rng, n)
    if task == "classification":
        Y = rng.integers(0, 3, (n, 1)).astype(float)
    elif task == "mlc":
        Y = (rng.random((n, 3)) < 0.4).astype(float)
    else:
        Y = rng.normal(size=(n, 1 if task == "regression" else 2)) * [5.0, 0.1][: 1 if task == "regression" else 2]
    Y[rng.random(n) < 0.5] = np.nan  # unlabelled rows
    names = [f"y{j}" for j in range(Y.shape[1])]
    classes = ["a", "b", "c"] if task == "classification" else None
    fitted = with_features(tasks.get(task), layout, weight).fit(np.hstack([Y, X]), names, classes)
    lab = ~np.isnan(Y[:, 0])
    sub = rng.random(n) < 0.6
    w = rng.poisson(1.0, sub.sum()).astype(float) + 0.5
    ones = np.ones(lab.sum())
    if task == "classification":
        target = gini_known(Y[sub, 0], w, 3) / gini_known(Y[lab, 0], ones, 3)
    else:
        target = np.mean([var_known(Y[sub, j], w) / var_known(Y[lab, j], ones) for j in range(Y.shape[1])])
    expected = weight * target + (1 - weight) * brute_descriptive_impurity(X[sub], layout, w, X)
    assert fitted.impurity(np.hstack([Y, X])[sub], w) == pytest.approx(expected, rel=1e-10)


def test_the_grower_gain_is_the_brute_force_reduction_with_unlabelled_rows():
    """The root split's h* equals |E| impu(E) - |E_L| impu(E_L) - |E_R| impu(E_R) of the SSL impurity."""
    rng = np.random.default_rng(3)
    n = 120
    X, layout = random_features(rng, n)
    Y = np.column_stack([X[:, 0] * 2 + rng.normal(size=n), rng.normal(size=n)])
    Y[rng.random(n) < 0.6] = np.nan
    fitted = with_features(tasks.get("mtr"), layout, 0.4).fit(np.hstack([Y, X]), ["a", "b"], None)
    YA = fitted.targets(np.hstack([Y, X]))
    nominal = layout.nominal
    bins = [fit_bins(X[:, f], f"x{f}", bool(nominal[f])) for f in range(X.shape[1])]
    codes = np.ascontiguousarray(np.stack([b.encode(X[:, f]) for f, b in enumerate(bins)]))
    lower, upper, _ = stack_bins(bins)
    w = rng.poisson(1.0, n).astype(float)
    tree = grow(codes, nominal, lower, upper, fitted.clustering_matrix(YA), w,
                grow_config(max_depth=1, max_features=None, seed=7))
    assert tree.feature[0] >= 0
    rows = np.flatnonzero(w > 0)
    leaf = tree.leaf_of_row[rows]
    left = rows[leaf == tree.left[0]]
    right = rows[leaf == tree.right[0]]

    def part(r):
        return w[r].sum() * fitted.impurity(YA[r], w[r])

    assert tree.gain[0] == pytest.approx(part(rows) - part(left) - part(right), rel=1e-9)


def test_unsupervised_error_is_the_normalised_reconstruction_error():
    """Thesis Eq. 3.3: mean over features of MSE / Var (numeric) and mismatch rate / Gini (nominal)."""
    rng = np.random.default_rng(5)
    X, layout = random_features(rng, 100)
    fitted = with_features(tasks.get("unsupervised"), layout, 0.0).fit(X, [], None)
    P = fitted.prototype_columns(X[rng.integers(0, 100, 7)])  # seven leaves' "prototypes": single rows
    P = np.where(np.isnan(P), 0.25, P)
    leaf = rng.integers(0, 7, 100)
    pred = fitted.predict(P[leaf])
    ones = np.ones(100)
    terms = []
    for f, c in enumerate(layout.n_categories):
        k = ~np.isnan(X[:, f])
        if c == 0:
            terms.append(np.mean((X[k, f] - pred[k, f]) ** 2) / var_known(X[:, f], ones))
            np.testing.assert_array_equal(pred[:, f], P[leaf, layout.start[f]])
        else:
            block = P[leaf, layout.start[f]:layout.start[f] + c]
            np.testing.assert_array_equal(pred[:, f], np.argmax(block, axis=1))
            terms.append(np.mean(X[k, f] != pred[k, f]) / gini_known(X[:, f], ones, c))
    assert fitted.error(X, pred) == pytest.approx(np.mean(terms), rel=1e-12)


def test_ssl_error_weights_the_relative_target_error_and_the_feature_error():
    rng = np.random.default_rng(8)
    n = 100
    X, layout = random_features(rng, n)
    y = rng.integers(0, 2, n).astype(float)
    y[:40] = np.nan
    weight = 0.3
    fitted = with_features(tasks.get("classification"), layout, weight).fit(np.column_stack([y, X]), ["c"],
                                                                                ["no", "yes"])
    YA = np.column_stack([y, X])
    pred = np.column_stack([rng.integers(0, 2, n).astype(float), fitted.desc.predict(fitted.desc.layout.columns(X))])
    known = ~np.isnan(y)
    p_major = max(np.mean(y[known] == 0), np.mean(y[known] == 1))
    target = np.mean(y[known] != pred[known, 0]) / (1 - p_major)  # relative to the default model's error
    unsup = with_features(tasks.get("unsupervised"), layout, 0.0).fit(X, [], None)
    features = unsup.error(X, pred[:, 1:])
    assert fitted.error(YA, pred) == pytest.approx(weight * target + (1 - weight) * features, rel=1e-12)
    # without labelled rows among the evaluated ones, the feature part counts alone
    assert fitted.error(YA[~known], pred[~known]) == pytest.approx(unsup.error(X[~known], pred[~known, 1:]))


def test_constant_features_weigh_nothing_and_all_constant_is_an_error():
    X = np.column_stack([np.arange(10.0), np.ones(10)])
    layout = DescriptiveLayout(np.zeros(2, np.int64))
    fitted = with_features(tasks.get("unsupervised"), layout, 0.0).fit(X, [], None)
    assert fitted.desc.alpha[1] == 0.0 and fitted.desc.alpha[0] > 0
    with pytest.raises(tasks.TaskError, match="every feature is constant"):
        with_features(tasks.get("unsupervised"), layout, 0.0).fit(np.ones((10, 2)), [], None)


def test_a_leaf_without_known_values_predicts_its_nearest_ancestors_prototype():
    """Brute force: a node's prototype is the weighted mean over the in-bag rows below it; where a column has
    no known value there, the parent's (recursively), and the default at the root."""
    from spark_fr.pct.tree import leaf_prototypes

    rng = np.random.default_rng(4)
    n = 150
    X, layout = random_features(rng, n)
    Y = np.column_stack([X[:, 0] + rng.normal(size=n), rng.normal(size=n)])
    Y[X[:, 1] > 1.0] = np.nan  # whole regions without a label: some leaves have none
    Y[rng.random(n) < 0.3, 1] = np.nan
    fitted = with_features(tasks.get("mtr"), layout, 0.2).fit(np.hstack([Y, X]), ["a", "b"], None)
    YA = fitted.targets(np.hstack([Y, X]))
    bins = [fit_bins(X[:, f], f"x{f}", bool(layout.nominal[f])) for f in range(X.shape[1])]
    codes = np.ascontiguousarray(np.stack([b.encode(X[:, f]) for f, b in enumerate(bins)]))
    lower, upper, _ = stack_bins(bins)
    w = rng.poisson(1.0, n).astype(float)
    tree = grow(codes, layout.nominal, lower, upper, fitted.clustering_matrix(YA), w,
                grow_config(max_features=None, seed=1))
    cols = fitted.prototype_columns(YA)
    default = np.full(cols.shape[1], -7.0)
    got = leaf_prototypes(tree, cols, w, default)

    def below(node):
        if tree.feature[node] < 0:
            return np.flatnonzero(tree.leaf_of_row == node)
        return np.concatenate([below(tree.left[node]), below(tree.right[node])])

    parent = {int(c): int(p) for p in tree.internal for c in (tree.left[p], tree.right[p])}
    missing_leaves = 0
    for node in range(tree.n_nodes):
        for k in range(cols.shape[1]):
            at = node
            while True:
                r = below(at)
                known = r[~np.isnan(cols[r, k])]
                if w[known].sum() > 0:
                    expected = np.average(cols[known, k], weights=w[known])
                    break
                if at == 0:
                    expected = default[k]
                    break
                at = parent[at]
            missing_leaves += at != node and tree.feature[node] < 0
            assert got[node, k] == pytest.approx(expected, rel=1e-12, abs=1e-12)
    assert missing_leaves > 0  # the case the rule is for did occur
