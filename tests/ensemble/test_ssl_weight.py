"""``--ssl-weight auto`` on planted data: it chooses w < 1 where the unlabelled rows help and keeps w = 1 where
they are noise; the choice rule (paired over the held-out labelled rows) and the per-row errors it pairs.

* Unlabelled rows that help: the class is the XOR of two clusters that the features x0, x1 show plainly
  (blobs at +-1), 60 labels among 400 rows, 8 noise features. Greedy supervised trees cannot find an XOR from
  a few labels (the first split on x0 or x1 gains nothing), so they are at chance; trees that cluster on the
  features (w = 0) split x0 and x1 at their gaps, and their leaves' few labels suffice.
* Unlabelled rows that are noise: the class is x0 > 0.5 on 150 labelled rows; the 350 unlabelled rows' other
  features form strong clusters unrelated to it, so clustering on them sends the trees the wrong way.
"""
import numpy as np
import pandas as pd
import pytest

import spark_fr
from spark_fr import tasks
from spark_fr.ensemble.ssl_weight import WEIGHTS, best_weight
from spark_fr.tasks.descriptive import DescriptiveLayout
from spark_fr.tasks.semi_supervised import with_features


def xor_clusters(seed, n=400, labelled=60, D=10, sd=0.3):
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 2, n), rng.integers(0, 2, n)
    X = rng.normal(size=(n, D))
    X[:, 0] = np.where(a == 1, 1.0, -1.0) + rng.normal(0, sd, n)
    X[:, 1] = np.where(b == 1, 1.0, -1.0) + rng.normal(0, sd, n)
    pdf = pd.DataFrame(X, columns=[f"x{i}" for i in range(D)])
    y = np.where(a ^ b, "b", "a").astype(object)
    y[labelled:] = None
    pdf["y"] = y
    return pdf


def unrelated_clusters(seed, n=500, labelled=150, D=8):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, D))
    shape = (n - labelled, D - 1)
    X[labelled:, 1:] = rng.integers(0, 2, shape) * 0.5 + 0.25 + rng.normal(0, 0.02, shape)
    pdf = pd.DataFrame(X, columns=[f"x{i}" for i in range(D)])
    y = np.where(X[:, 0] > 0.5, "hi", "lo").astype(object)
    y[labelled:] = None
    pdf["y"] = y
    return pdf


def auto(spark, pdf, seed):
    r = spark_fr.rank(spark.createDataFrame(pdf), targets="y", trees=8, seed=seed, scores="genie3",
                      semi_supervised=True, ssl_weight="auto", spark=spark)
    search = r.metadata["ssl_weight_search"]
    assert r.params["ssl_weight"] == search["chosen"]
    assert len(search["fold_errors"]) == 4 and len(search["errors"]) == 11
    return r, search


def top(r, k):
    g = r.to_pandas()
    g = g[(g.score == "genie3") & (g.target == "__all__")].sort_values("rank")
    return list(g.feature[:k])


@pytest.mark.parametrize("seed", [0, 1])
def test_auto_chooses_w_below_1_where_the_unlabelled_rows_help(spark, seed):
    r, search = auto(spark, xor_clusters(seed), seed)
    errors = search["errors"]
    assert search["chosen"] < 1.0, errors
    assert errors[-1] > 0.4  # supervised trees at chance on the XOR
    assert errors[WEIGHTS.index(search["chosen"])] < errors[-1] - 0.2, errors
    assert search["labelled_rows"] == 60
    assert set(top(r, 2)) == {"x0", "x1"}


@pytest.mark.parametrize("seed", [0, 1])
def test_auto_keeps_w_1_where_the_unlabelled_rows_are_noise(spark, seed):
    r, search = auto(spark, unrelated_clusters(seed), seed)
    errors = search["errors"]
    assert search["chosen"] == 1.0, errors
    assert errors[0] > errors[-1] + 0.1  # clustering on the unlabelled rows' features hurts
    assert top(r, 1) == ["x0"]


def test_best_weight_prefers_supervised_unless_a_weight_is_clearly_better():
    rng = np.random.default_rng(0)
    flat = 0.1 + rng.normal(0, 0.01, (4, len(WEIGHTS)))
    assert best_weight(flat) == 1.0
    better = flat.copy()
    better[:, 3] = flat[:, -1] - 0.05 + rng.normal(0, 0.002, 4)  # clearly better on every fold
    assert best_weight(better) == WEIGHTS[3]
    lucky = flat.copy()
    lucky[0, 2] = flat[0, -1] - 0.05  # better on one fold only: noise
    assert best_weight(lucky) == 1.0


def test_paired_over_rows_a_halved_error_is_seen_and_a_few_lucky_rows_are_not():
    """0/1 errors of 60 held-out rows: w = 1 (and every w > 0) wrong on 20, w = 0 on 10, 4 of them the same. Paired
    over the rows the halving is clear; the 4 fold means of the same rows leave 4 differences, and how the rows
    fall into folds decides (here one fold is worse at w = 0, and the fold-level rule keeps w = 1)."""
    m = len(WEIGHTS)
    E = np.zeros((60, m))
    E[:20, 1:] = 1.0
    E[16:26, 0] = 1.0
    assert best_weight(E) == 0.0
    fold = np.random.default_rng(0).permutation(60) % 4
    means = np.array([E[fold == k].mean(axis=0) for k in range(4)])
    assert (means[:, 0] > means[:, -1]).any() and best_weight(means) == 1.0
    lucky = np.zeros((60, m))
    lucky[:3, -1] = 1.0  # w = 1 wrong on 3 rows the others get right: within noise
    assert best_weight(lucky) == 1.0


@pytest.mark.parametrize("name", ["classification", "mtr", "mlc"])
def test_row_target_errors_average_to_the_target_error(name):
    rng = np.random.default_rng(1)
    n, D = 50, 3
    if name == "classification":
        Yt, classes = rng.integers(0, 3, (n, 1)).astype(float), ["a", "b", "c"]
    elif name == "mtr":
        Yt, classes = rng.normal(size=(n, 2)) * [1.0, 10.0], None
    else:
        Yt, classes = (rng.random((n, 3)) < 0.4).astype(float), None
    Y = np.hstack([Yt, rng.uniform(size=(n, D))])
    task = with_features(tasks.get(name), DescriptiveLayout(np.zeros(D)), 0.5).fit(
        Y, [f"t{j}" for j in range(Yt.shape[1])], classes)
    Y = task.targets(Y)
    pred = task.predict(task.prototype_columns(Y)[rng.permutation(n)])  # some other row's values
    rows = task.row_target_errors(Y, pred)
    assert rows.shape == (n,) and np.all(rows >= 0)
    assert np.mean(rows) == pytest.approx(task.target_error(Y, pred), rel=1e-12)
