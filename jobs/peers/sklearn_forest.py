"""scikit-learn peer of the ensemble benchmarks: a random forest's impurity importances.

    python jobs/peers/sklearn_forest.py data.arff result.json --features 200 --targets 5 --trees 100 --seed 1
    python jobs/peers/sklearn_forest.py tall.parquet result.json --targets 3 --min-samples-leaf 2
    python jobs/peers/sklearn_forest.py wide.parquet result.json --classifier --min-samples-leaf 2

Reads the table (a dense ARFF file with pandas, or a Parquet file / folder with pyarrow; the features are
the first ``--features`` columns, the targets the next ``--targets``), fits ``RandomForestRegressor(
n_estimators=T, max_features="sqrt", min_samples_leaf=L, max_samples=M, n_jobs=N, random_state=S)`` on
all targets at once (multi-output trees), or ``RandomForestClassifier`` with the same parameters for
``--classifier`` (one target of class labels); the other parameters stay at scikit-learn's defaults
(``min_samples_leaf=1`` unless given). Writes ``{"order": [features, most important first], "importance":
{feature: feature_importances_ value}, "read_s": reading the table, "fit_s": fitting the forest}``. The
impurity importance of variance-reduction (or Gini) trees is the quantity spark_fr and CLUS call Genie3.
"""
from __future__ import annotations

import sys
import time

from _common import count_or_fraction, peer_parser, ranked, read_features_targets, write_result


def rank(path: str, features: int | None, targets: int, trees: int, seed: int, n_jobs: int,
         classifier: bool = False, min_samples_leaf: int = 1, max_samples=None) -> dict:
    """Fit the forest and order the features by their impurity importance.

    Parameters
    ----------
    path : str
        A dense ARFF file or a Parquet table: numeric features, then the targets.
    features : int or None
        The number of leading feature columns (None: every column before the targets).
    targets : int
        The number of target columns after the features (1 for ``classifier``).
    trees, seed, n_jobs : int
        ``n_estimators``, ``random_state`` and ``n_jobs`` of the forest.
    classifier : bool
        ``RandomForestClassifier`` instead of the regressor.
    min_samples_leaf : int
    max_samples : int, float or None
        Rows drawn per tree (None: n, the bootstrap).

    Returns
    -------
    dict
        ``order``, ``importance``, ``read_s``, ``fit_s`` (see the module docstring).
    """
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    t0 = time.perf_counter()
    names, X, Y = read_features_targets(path, features, targets, classifier)
    t1 = time.perf_counter()
    forest = RandomForestClassifier if classifier else RandomForestRegressor
    model = forest(n_estimators=trees, max_features="sqrt", min_samples_leaf=min_samples_leaf,
                   max_samples=max_samples, n_jobs=n_jobs, random_state=seed).fit(X, Y)
    t2 = time.perf_counter()
    return ranked(names, model.feature_importances_, t1 - t0, t2 - t1)


def main(argv=None) -> int:
    """Command line: ``INPUT OUTPUT [--features P] [--targets K] [--trees T] [--seed S] [--n-jobs N] ...``."""
    ap = peer_parser(__doc__, "dense ARFF file or Parquet table, features first, targets last")
    ap.add_argument("--features", type=int, help="leading feature columns (default: all but the targets)")
    ap.add_argument("--targets", type=int, default=1, help="target columns after the features (default 1)")
    ap.add_argument("--trees", type=int, default=100, help="n_estimators (default 100)")
    ap.add_argument("--seed", type=int, default=1, help="random_state (default 1)")
    ap.add_argument("--n-jobs", type=int, default=2, help="n_jobs (default 2)")
    ap.add_argument("--classifier", action="store_true", help="RandomForestClassifier (one class-label target)")
    ap.add_argument("--min-samples-leaf", type=int, default=1, help="min_samples_leaf (default 1)")
    ap.add_argument("--max-samples", type=count_or_fraction,
                    help="max_samples: rows per tree, a count or a fraction (default n)")
    a = ap.parse_args(argv)
    if a.classifier and a.targets != 1:
        ap.error("--classifier takes one target column")
    write_result(a.output, rank(a.arff, a.features, a.targets, a.trees, a.seed, a.n_jobs, a.classifier,
                                a.min_samples_leaf, a.max_samples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
