"""LightGBM peer of the tall and wide suites: LightGBM's random forest mode (``boosting="rf"``), its gain
importances.

    python jobs/peers/lightgbm_forest.py tall.parquet result.json --targets 3 --trees 20 --max-depth 12 --min-samples-leaf 2
    python jobs/peers/lightgbm_forest.py wide.parquet result.json --classifier --trees 100 --min-samples-leaf 2

Reads the table as ``sklearn_forest.py`` does (a Parquet table with pyarrow, or a dense ARFF file with pandas;
the features are the first ``--features`` columns, the targets the next ``--targets``) and trains
``lightgbm.train(params, Dataset(X, y), num_boost_round=T)`` with ``boosting="rf"`` (255 bins), the random
forest's sampling mapped onto LightGBM's:

- rows: ``bagging_fraction`` = the share of distinct rows in a bootstrap of m draws out of n, ``1 - exp(-m /
  n)`` (0.632 for the bootstrap; ``--max-samples`` sets m), ``bagging_freq=1`` (a new bag for every tree);
  LightGBM draws without replacement, as XGBoost does (``xgboost_forest.py``).
- features per node: ``feature_fraction_bynode`` drawing ``floor(sqrt(p))`` features.
- leaves: ``min_data_in_leaf`` = ``--min-samples-leaf``, ``min_sum_hessian_in_leaf=0``, ``lambda_l2=0``.
- depth: ``--max-depth D`` with ``num_leaves = min(2^D, 131072)``; 0, the full depth: ``max_depth=-1`` and
  ``num_leaves=131072``, LightGBM's largest (Decision: LightGBM grows leaf by leaf and must be given a number
  of leaves; a fully grown tree on 10^6 rows would need several times this many). ``histogram_pool_size``
  (``--histogram-pool-mb``, 2048) bounds its cache of leaf histograms, which would otherwise take
  ``num_leaves`` x the bins x 16 bytes (26 GB for 131072 leaves, 50 features, 255 bins).

LightGBM has no multi-output trees: with several targets it trains one forest per target, one after the
other, timed together (as a user ranking all targets would), and the importance is the mean over targets of
each forest's gain importance normalised to sum 1 (Decision: each target weighs the same, as spark_fr's joint
ranking over standardised targets). ``--classifier`` is one ``multiclass`` forest (one tree per class and
round: T rounds make T x classes trees). Writes ``{"order", "importance", "read_s", "fit_s": building the
Datasets and training every forest, "forests": one per target, "trees_built": the trees of all forests (N
per target, N x classes for the classifier), "num_leaves", "max_depth", "lightgbm": its version}``. LightGBM gives no time per tree here; the benchmark reports ``fit_s / trees``.
"""
from __future__ import annotations

import sys
import time

from _common import bootstrap_share, class_codes, count_or_fraction, node_fraction, peer_parser, ranked, \
    read_features_targets, write_result

#: LightGBM's largest num_leaves
MAX_LEAVES = 131072


def forest_params(rows: int, features: int, classes: int, max_depth: int, min_samples_leaf: int, seed: int,
                  n_jobs: int, max_samples=None, histogram_pool_mb: float = 2048) -> dict:
    """LightGBM's parameters for the random forest described in the module docstring.

    Parameters
    ----------
    rows, features : int
        The shape of the training data.
    classes : int
        Classes of the classifier; 0 for regression.
    max_depth : int
        0: the full depth (``max_depth=-1``, :data:`MAX_LEAVES` leaves).
    min_samples_leaf, seed, n_jobs : int
    max_samples : int, float or None
    histogram_pool_mb : float
        ``histogram_pool_size``.

    Returns
    -------
    dict
    """
    params = {"boosting": "rf", "objective": "multiclass" if classes else "regression", "max_bin": 255,
              "bagging_fraction": round(bootstrap_share(rows, max_samples), 6), "bagging_freq": 1,
              "feature_fraction_bynode": node_fraction(features), "min_data_in_leaf": min_samples_leaf,
              "min_sum_hessian_in_leaf": 0.0, "lambda_l2": 0.0, "max_depth": max_depth or -1,
              "num_leaves": min(2 ** max_depth, MAX_LEAVES) if max_depth else MAX_LEAVES,
              "histogram_pool_size": histogram_pool_mb, "num_threads": n_jobs, "seed": seed, "verbose": -1}
    if classes:
        params["num_class"] = classes
    return params


def rank(path: str, features: int | None, targets: int, trees: int, seed: int, n_jobs: int,
         classifier: bool = False, min_samples_leaf: int = 1, max_depth: int = 0, max_samples=None,
         histogram_pool_mb: float = 2048) -> dict:
    """Train the forest (one per target) and order the features by their gain importance.

    Parameters
    ----------
    path : str
        A dense ARFF file or a Parquet table: numeric features, then the targets.
    features : int or None
        The number of leading feature columns (None: every column before the targets).
    targets : int
        The number of target columns after the features (1 for ``classifier``).
    trees, seed, n_jobs : int
        ``num_boost_round``, ``seed`` and ``num_threads``.
    classifier : bool
        One ``multiclass`` forest on one target of class labels.
    min_samples_leaf, max_depth : int
    max_samples : int, float or None
    histogram_pool_mb : float

    Returns
    -------
    dict
        See the module docstring.
    """
    import lightgbm as lgb
    import numpy as np

    t0 = time.perf_counter()
    names, X, Y = read_features_targets(path, features, targets, classifier)
    classes = 0
    if classifier:
        Y, classes = class_codes(Y)
    t1 = time.perf_counter()
    params = forest_params(X.shape[0], X.shape[1], classes, max_depth, min_samples_leaf, seed, n_jobs, max_samples,
                           histogram_pool_mb)
    columns = [Y] if classifier else [Y[:, j] for j in range(Y.shape[1])]
    imp, built = np.zeros(len(names)), 0
    for y in columns:
        booster = lgb.train(params, lgb.Dataset(X, label=y, feature_name=names, free_raw_data=False),
                            num_boost_round=trees)
        gain = booster.feature_importance(importance_type="gain")
        imp += gain / gain.sum() if gain.sum() > 0 else gain
        built += booster.num_trees()
    t2 = time.perf_counter()
    return {**ranked(names, imp / len(columns), t1 - t0, t2 - t1), "forests": len(columns), "trees_built": built,
            "num_leaves": params["num_leaves"], "max_depth": params["max_depth"], "lightgbm": lgb.__version__}


def main(argv=None) -> int:
    """Command line: ``INPUT OUTPUT [--features P] [--targets K] [--trees T] [--max-depth D] ...``."""
    ap = peer_parser(__doc__, "dense ARFF file or Parquet table, features first, targets last")
    ap.add_argument("--features", type=int, help="leading feature columns (default: all but the targets)")
    ap.add_argument("--targets", type=int, default=1, help="target columns after the features (default 1)")
    ap.add_argument("--trees", type=int, default=100, help="num_boost_round (default 100)")
    ap.add_argument("--seed", type=int, default=1, help="seed (default 1)")
    ap.add_argument("--n-jobs", type=int, default=2, help="num_threads (default 2)")
    ap.add_argument("--classifier", action="store_true", help="one multiclass forest on one class-label target")
    ap.add_argument("--min-samples-leaf", type=int, default=1, help="min_data_in_leaf (default 1)")
    ap.add_argument("--max-depth", type=int, default=0,
                    help=f"max_depth, num_leaves = min(2^D, {MAX_LEAVES}); 0: the full depth (-1, {MAX_LEAVES} leaves)")
    ap.add_argument("--max-samples", type=count_or_fraction,
                    help="rows drawn per tree, a count or a fraction (default n): bagging_fraction = 1 - exp(-m / n)")
    ap.add_argument("--histogram-pool-mb", type=float, default=2048, help="histogram_pool_size (default 2048)")
    a = ap.parse_args(argv)
    if a.classifier and a.targets != 1:
        ap.error("--classifier takes one target column")
    if a.max_depth < 0:
        ap.error("--max-depth must be >= 0")
    write_result(a.output, rank(a.arff, a.features, a.targets, a.trees, a.seed, a.n_jobs, a.classifier,
                                a.min_samples_leaf, a.max_depth, a.max_samples, a.histogram_pool_mb))
    return 0


if __name__ == "__main__":
    sys.exit(main())
