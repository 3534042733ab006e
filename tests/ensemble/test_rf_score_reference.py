"""The Random-Forest (OOB permutation) score of a whole forest against a from-scratch reference.

The reference is written from the definition (methods-thesis.md Sec. 4.3), in plain numpy and Python loops:

    imp_RF(x_i) = (1/|E|) sum_T [Err(OOB_T^i) - Err(OOB_T)] / Err(OOB_T)

with OOB_T^i the tree's out-of-bag rows with x_i permuted among them (one permutation per tree and feature),
a term 0 when T does not test x_i, and Err the task's error: the relative MSE ``mean_j MSE_j / Var(E_train, y_j)``
(regression, MTR), the Hamming loss (MLC), the weighted Hamming loss ``sum_l w(l) mean_S [y_l != yhat_l]``
(HMLC), and for classification the accuracy with the x(-1) convention: ``-(acc(OOB^i) - acc(OOB)) / acc(OOB)``.

It takes from the library only what a user could export: the forest's trees (node arrays), each tree's
bootstrap counts, out-of-bag rows and permutations (spark_fr.ensemble.trees.forest), and the encoded data.
Leaf prototypes (in-bag weighted means of the class indicators, targets or labels), routing (a walk down the
node arrays, conftest.slow_route), predictions (arg-max, mean, frequency >= 0.5) and errors are recomputed here.
The forests grow with ``--missing learned`` (a row reaches one leaf); the RF score of fractional trees (the
default, a row with a missing value reaching several leaves) has its own reference in test_missing_fractional.py.
"""
import numpy as np
import pytest

from spark_fr.ensemble.local import rank_arrays, tree_data_from_arrays
from spark_fr.ensemble.params import EnsembleParams
from spark_fr.ensemble.trees import forest
from spark_fr.hierarchy import Hierarchy

from tests.conftest import as_dict, slow_route

N, D = 160, 5
SEEDS = {"classification": 1, "regression": 2, "mtr": 3, "mlc": 4, "hmlc": 5}
HIERARCHY = "A,A/a1,A/a2,B,B/b1"


def random_data(task, seed):
    """Random features (one nominal, a few missing values) and targets that follow features 0 and 1 noisily."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (N, D))
    X[:, 4] = rng.integers(0, 4, N)  # nominal: category indices
    signal = X[:, 0] + 0.5 * X[:, 1] + 0.3 * (X[:, 4] == 2)
    X[rng.random((N, D)) < 0.04] = np.nan
    noise = rng.normal(0, 0.5, N)
    if task == "classification":
        Y = np.digitize(signal + noise, [-0.4, 0.4]).astype(float)
    elif task == "regression":
        Y = signal + noise
    elif task == "mtr":
        Y = np.column_stack([signal + noise, 3 * X[:, 1] + rng.normal(0, 1, N) * 2, rng.normal(0, 1, N)])
        Y = np.nan_to_num(Y)
    elif task == "mlc":
        Y = np.column_stack([(np.nan_to_num(X[:, j]) + rng.normal(0, 0.6, N)) > 0 for j in range(3)]).astype(float)
    else:  # hmlc: A/a1 from feature 0, B/b1 from feature 1, closed under ancestors
        h = Hierarchy.from_clus_spec(HIERARCHY)
        rows = []
        for i in range(N):
            labels = []
            if np.nan_to_num(X[i, 0]) + rng.normal(0, 0.5) > 0:
                labels.append("A/a1" if rng.random() < 0.7 else "A/a2")
            if np.nan_to_num(X[i, 1]) + rng.normal(0, 0.5) > 0.2:
                labels.append("B/b1")
            rows.append("@".join(labels) or "B")
        Y = h.label_matrix(rows)
    return X, Y


def reference_weights(h: Hierarchy, w0: float = 0.75) -> np.ndarray:
    """w(l) = w0 * mean(w(parents)), a label below the virtual root counting a parent of weight 1 / w0 (loops)."""
    memo = {}

    def weight(j):
        if j not in memo:
            vals = [weight(p) for p in h.parents[j]] + ([1.0 / w0] if h.root_parent[j] else [])
            memo[j] = w0 * sum(vals) / len(vals)
        return memo[j]

    return np.array([weight(j) for j in range(len(h.labels))])


def reference_error(task, Y, P, Y_train, label_weights):
    """Err of predictions P on rows Y, by the definitions (classification: minus the accuracy, see the module)."""
    if task == "classification":
        return -float(np.mean(Y[:, 0] == P[:, 0]))
    if task in ("regression", "mtr"):
        return float(np.mean([np.mean((Y[:, j] - P[:, j]) ** 2) / np.var(Y_train[:, j]) for j in range(Y.shape[1])]))
    wrong = Y != P
    if task == "mlc":
        return float(wrong.mean())
    return float(sum(label_weights[j] * wrong[:, j].mean() for j in range(Y.shape[1])))


def reference_predictions(task, leaf_of, leaves, Y, weights, n_classes):
    """Leaf prototypes from the in-bag rows (weighted by their bootstrap counts) and the predictions at ``leaves``."""
    out = []
    for leaf in leaves:
        rows = [i for i in range(len(leaf_of)) if leaf_of[i] == leaf and weights[i] > 0]
        w = np.array([weights[i] for i in rows])
        if task == "classification":
            dist = [sum(w[k] for k, i in enumerate(rows) if Y[i, 0] == c) for c in range(n_classes)]
            out.append([float(np.argmax(dist))])
        else:
            mean = (w[:, None] * Y[rows]).sum(axis=0) / w.sum()
            out.append(list(mean) if task in ("regression", "mtr") else list((mean >= 0.5).astype(float)))
    return np.array(out)


def reference_rf_score(data, params, task, label_weights, divide_by_error=False):
    """imp_RF of every feature over the forest's exported trees (module docstring); ``divide_by_error``: for
    classification, the relative increase of the misclassification rate instead (not the thesis' form)."""
    codes = data.codes  # (D, n) uint8, missing = 255
    Y = data.Y
    n_classes = len(data.task.classes) if task == "classification" else 0
    total = np.zeros(codes.shape[0])
    n_trees = 0
    for grown in forest(data, params):
        n_trees += 1
        tree, w = grown.tree, grown.weights
        oob = np.flatnonzero(w == 0)
        assert np.array_equal(grown.oob, oob)  # every out-of-bag row (below --max-oob-rows)
        leaf_of = [slow_route(tree, codes[:, i]) for i in range(codes.shape[1])]
        base_pred = reference_predictions(task, leaf_of, [leaf_of[i] for i in oob], Y, w, n_classes)
        base = reference_error(task, Y[oob], base_pred, Y, label_weights)
        assert base != 0  # noisy data: the relative change is defined
        for f in sorted(set(tree.feature[tree.feature >= 0].tolist())):
            perm = grown.permutation(f)
            assert sorted(perm) == list(range(oob.size))
            leaves = []
            for k, i in enumerate(oob):
                row = codes[:, i].copy()
                row[f] = codes[f, oob[perm[k]]]
                leaves.append(slow_route(tree, row))
            err = reference_error(task, Y[oob], reference_predictions(task, leaf_of, leaves, Y, w, n_classes), Y,
                                  label_weights)
            if divide_by_error:
                err, base = 1 + err, 1 + base  # the misclassification rates
            total[f] += (err - base) / abs(base)
    return total / n_trees


@pytest.mark.parametrize("task,ensemble", [("classification", "rf"), ("regression", "bagging"), ("mtr", "rf"),
                                           ("mlc", "rf"), ("hmlc", "extra_trees")])
def test_rf_score_equals_the_reference_on_the_exported_trees(task, ensemble):
    X, Y = random_data(task, seed=SEEDS[task])
    nominal = np.arange(D) == 4
    label_weights = None
    names = None
    if task == "hmlc":
        h = Hierarchy.from_clus_spec(HIERARCHY)
        label_weights = reference_weights(h)
        np.testing.assert_allclose(label_weights, h.weights(0.75))
        names = list(h.labels)
    classes = ["c0", "c1", "c2"] if task == "classification" else None
    data, _ = tree_data_from_arrays(X, Y, task, nominal=nominal, classes=classes, target_names=names,
                                    label_weights=label_weights)
    params = EnsembleParams(ensemble=ensemble, trees=6, seed=4, bootstrap=True, min_samples_leaf=3,
                            max_features=3 if ensemble != "bagging" else None, missing="learned")
    ours = as_dict(rank_arrays(X, Y, task, params, nominal=nominal, classes=classes, target_names=names,
                               label_weights=label_weights))["rf"][0]
    reference = reference_rf_score(data, params, task, label_weights)
    assert np.count_nonzero(reference) >= 2
    np.testing.assert_allclose(ours, reference, rtol=1e-9, atol=1e-12)


def test_classification_divides_by_the_accuracy_not_the_error():
    """The thesis' x(-1) convention: the decrease of the accuracy relative to the accuracy. Dividing by the error
    instead (a few mistakes out of bag) weighs each tree's term (acc / err) times more: another score."""
    X, Y = random_data("classification", seed=3)
    nominal, classes = np.arange(D) == 4, ["c0", "c1", "c2"]
    data, _ = tree_data_from_arrays(X, Y, "classification", nominal=nominal, classes=classes)
    params = EnsembleParams(trees=4, seed=2, missing="learned")
    ours = as_dict(rank_arrays(X, Y, "classification", params, nominal=nominal, classes=classes))["rf"][0]
    np.testing.assert_allclose(ours, reference_rf_score(data, params, "classification", None), rtol=1e-9)
    other = reference_rf_score(data, params, "classification", None, divide_by_error=True)
    assert np.abs(other - ours).max() > 0.1 * np.abs(ours).max()
