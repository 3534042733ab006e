"""scikit-learn peer of the ensemble benchmark: a multi-output random forest's impurity importances.

    python jobs/peers/sklearn_forest.py data.arff result.json --features 200 --targets 5 --trees 100 --seed 1

Reads the ARFF file with pandas (the features are the first ``--features`` attributes, the targets the
next ``--targets``), fits ``RandomForestRegressor(n_estimators=T, max_features="sqrt", n_jobs=N,
random_state=S)`` on all targets at once (multi-output trees; other parameters at scikit-learn's defaults,
e.g. ``min_samples_leaf=1``) and writes ``{"order": [features, most important first], "importance":
{feature: feature_importances_ value}}``. The impurity importance of variance-reduction trees is the
quantity spark_fr and CLUS call Genie3.
"""
from __future__ import annotations

import sys

from _common import order_by_importance, peer_parser, read_arff, write_result


def rank(arff: str, features: int | None, targets: int, trees: int, seed: int, n_jobs: int) -> dict:
    """Fit the forest and order the features by their impurity importance.

    Parameters
    ----------
    arff : str
        A dense ARFF file of numeric attributes.
    features : int or None
        The number of leading feature attributes (None: every attribute before the targets).
    targets : int
        The number of target attributes after the features.
    trees, seed, n_jobs : int
        ``n_estimators``, ``random_state`` and ``n_jobs`` of the forest.

    Returns
    -------
    dict
        ``order`` and ``importance`` (see the module docstring).
    """
    import numpy as np
    from sklearn.ensemble import RandomForestRegressor

    names, data = read_arff(arff, dtype=np.float64)
    data = data.to_numpy()
    p = len(names) - targets if features is None else features
    X, Y = data[:, :p], data[:, p:p + targets]
    model = RandomForestRegressor(n_estimators=trees, max_features="sqrt", n_jobs=n_jobs,
                                  random_state=seed).fit(X, Y)
    imp = model.feature_importances_
    order = order_by_importance(names[:p], imp)
    return {"order": [names[i] for i in order], "importance": {names[i]: float(imp[i]) for i in order}}


def main(argv=None) -> int:
    """Command line: ``ARFF OUTPUT [--features P] [--targets K] [--trees T] [--seed S] [--n-jobs N]``."""
    ap = peer_parser(__doc__, "dense numeric ARFF file, features first, targets last")
    ap.add_argument("--features", type=int, help="leading feature attributes (default: all but the targets)")
    ap.add_argument("--targets", type=int, default=1, help="target attributes after the features (default 1)")
    ap.add_argument("--trees", type=int, default=100, help="n_estimators (default 100)")
    ap.add_argument("--seed", type=int, default=1, help="random_state (default 1)")
    ap.add_argument("--n-jobs", type=int, default=2, help="n_jobs (default 2)")
    a = ap.parse_args(argv)
    write_result(a.output, rank(a.arff, a.features, a.targets, a.trees, a.seed, a.n_jobs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
