"""XGBoost peer of the tall and wide suites: XGBoost's histogram random forest, its total-gain importances.

    python jobs/peers/xgboost_forest.py tall.parquet result.json --targets 3 --trees 20 --max-depth 12 --min-samples-leaf 2
    python jobs/peers/xgboost_forest.py wide.parquet result.json --classifier --trees 100 --min-samples-leaf 2

Reads the table as ``sklearn_forest.py`` does (a Parquet table with pyarrow, or a dense ARFF file with pandas;
the features are the first ``--features`` columns, the targets the next ``--targets``) and grows XGBoost's
random forest (its "Random Forests in XGBoost" recipe): one boosting round of ``num_parallel_tree=T`` trees
with ``learning_rate=1``, ``tree_method="hist"`` (256 bins), every target at once in each tree
(``multi_strategy="multi_output_tree"``: ``reg:squarederror`` on the targets, or ``multi:softprob`` on the
classes for ``--classifier``), and the random forest's sampling mapped onto XGBoost's:

- rows: ``subsample`` = the share of distinct rows in a bootstrap of m draws out of n, ``1 - exp(-m / n)``
  (0.632 for the bootstrap, m = n; ``--max-samples`` sets m). XGBoost draws without replacement and weighs
  every drawn row once, where a bootstrap counts a row as often as it is drawn: the same expected rows,
  not the same weights.
- features per node: ``colsample_bynode`` drawing ``floor(sqrt(p))`` features, as ``max_features="sqrt"``.
- leaves: ``min_child_weight`` = ``--min-samples-leaf``: the squared error's hessian is 1 per row, so a child
  needs that many rows (for ``--classifier`` the hessians are ``p (1 - p)`` per class, at most 1/4: there the
  minimum is ``min_samples_leaf / 4``, about as many rows); ``reg_lambda=0``, so a split's gain is the
  variance (Gini for the classifier's gradients) reduction, as in a random forest.
- depth: ``--max-depth D``; 0 (the default), the full depth: XGBoost's ``max_depth=0``, no limit, the trees
  grown depth-wise until no node can split (checked with XGBoost 3.2: the same trees as ``max_depth=30``).

The importance is ``Booster.get_score(importance_type="total_gain")``: the loss reduction of a feature's
splits summed over the forest (features never used score 0), the quantity a random forest's impurity
importance is; with multi-output trees it is one vector over all targets. Writes ``{"order": [features, most
important first], "importance": {feature: total gain}, "read_s": reading the table, "fit_s": building the
DMatrix and growing the forest, "trees_built": the trees of the model (N; N x classes if the trees are not
multi-output), "max_depth": the depth used, "subsample", "colsample_bynode", "multi_strategy", "xgboost": its
version}``. XGBoost gives no time per tree; the benchmark reports ``fit_s / trees``.
"""
from __future__ import annotations

import sys
import time

from _common import bootstrap_share, class_codes, count_or_fraction, node_fraction, peer_parser, ranked, \
    read_features_targets, write_result

def forest_params(rows: int, features: int, targets: int, classes: int, trees: int, max_depth: int,
                  min_samples_leaf: int, seed: int, n_jobs: int, max_samples=None) -> dict:
    """XGBoost's parameters for the random forest described in the module docstring.

    Parameters
    ----------
    rows, features : int
        The shape of the training data.
    targets : int
        Regression targets (ignored when ``classes`` > 0).
    classes : int
        Classes of the classifier; 0 for regression.
    trees, max_depth, min_samples_leaf, seed, n_jobs : int
        ``max_depth`` 0 is the full depth (XGBoost's "no limit").
    max_samples : int, float or None

    Returns
    -------
    dict
    """
    params = {"booster": "gbtree", "tree_method": "hist", "max_bin": 256, "num_parallel_tree": trees,
              "learning_rate": 1.0, "max_depth": max_depth,
              "subsample": round(bootstrap_share(rows, max_samples), 6), "colsample_bynode": node_fraction(features),
              "reg_lambda": 0.0, "min_child_weight": min_samples_leaf / 4 if classes else float(min_samples_leaf),
              "nthread": n_jobs, "seed": seed, "verbosity": 1}
    if classes:
        params.update(objective="multi:softprob", num_class=classes)
    else:
        params.update(objective="reg:squarederror")
    if classes > 2 or targets > 1:
        params["multi_strategy"] = "multi_output_tree"
    return params


def rank(path: str, features: int | None, targets: int, trees: int, seed: int, n_jobs: int,
         classifier: bool = False, min_samples_leaf: int = 1, max_depth: int = 0, max_samples=None) -> dict:
    """Grow the forest and order the features by their total gain.

    Parameters
    ----------
    path : str
        A dense ARFF file or a Parquet table: numeric features, then the targets.
    features : int or None
        The number of leading feature columns (None: every column before the targets).
    targets : int
        The number of target columns after the features (1 for ``classifier``).
    trees, seed, n_jobs : int
        ``num_parallel_tree``, ``seed`` and ``nthread``.
    classifier : bool
        One target of class labels (``multi:softprob``).
    min_samples_leaf, max_depth : int
    max_samples : int, float or None

    Returns
    -------
    dict
        See the module docstring.
    """
    import xgboost as xgb

    t0 = time.perf_counter()
    names, X, Y = read_features_targets(path, features, targets, classifier)
    classes = 0
    if classifier:
        Y, classes = class_codes(Y)
    t1 = time.perf_counter()
    params = forest_params(X.shape[0], X.shape[1], targets, classes, trees, max_depth, min_samples_leaf, seed, n_jobs,
                           max_samples)
    booster = xgb.train(params, xgb.DMatrix(X, label=Y, feature_names=names, nthread=n_jobs), num_boost_round=1)
    t2 = time.perf_counter()
    gain = booster.get_score(importance_type="total_gain")
    return {**ranked(names, [gain.get(name, 0.0) for name in names], t1 - t0, t2 - t1),
            "trees_built": trees_built(booster),
            "max_depth": params["max_depth"], "subsample": params["subsample"],
            "colsample_bynode": params["colsample_bynode"], "multi_strategy": params.get("multi_strategy"),
            "xgboost": xgb.__version__}


def trees_built(booster) -> int:
    """The number of trees in a trained booster (its JSON model's ``trees``).

    Parameters
    ----------
    booster : xgboost.Booster

    Returns
    -------
    int
    """
    import json

    return len(json.loads(booster.save_raw("json"))["learner"]["gradient_booster"]["model"]["trees"])


def main(argv=None) -> int:
    """Command line: ``INPUT OUTPUT [--features P] [--targets K] [--trees T] [--max-depth D] ...``."""
    ap = peer_parser(__doc__, "dense ARFF file or Parquet table, features first, targets last")
    ap.add_argument("--features", type=int, help="leading feature columns (default: all but the targets)")
    ap.add_argument("--targets", type=int, default=1, help="target columns after the features (default 1)")
    ap.add_argument("--trees", type=int, default=100, help="num_parallel_tree (default 100)")
    ap.add_argument("--seed", type=int, default=1, help="seed (default 1)")
    ap.add_argument("--n-jobs", type=int, default=2, help="nthread (default 2)")
    ap.add_argument("--classifier", action="store_true", help="multi:softprob on one class-label target")
    ap.add_argument("--min-samples-leaf", type=int, default=1, help="min_child_weight (see above; default 1)")
    ap.add_argument("--max-depth", type=int, default=0, help="max_depth; 0: the full depth (no limit; default)")
    ap.add_argument("--max-samples", type=count_or_fraction,
                    help="rows drawn per tree, a count or a fraction (default n): subsample = 1 - exp(-m / n)")
    a = ap.parse_args(argv)
    if a.classifier and a.targets != 1:
        ap.error("--classifier takes one target column")
    if a.max_depth < 0:
        ap.error("--max-depth must be >= 0")
    write_result(a.output, rank(a.arff, a.features, a.targets, a.trees, a.seed, a.n_jobs, a.classifier,
                                a.min_samples_leaf, a.max_depth, a.max_samples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
