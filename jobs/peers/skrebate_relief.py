"""skrebate peer of the Relief benchmark: ReliefF on every row of a classification set.

    python jobs/peers/skrebate_relief.py data.arff result.json --features 200 --neighbours 10 --n-jobs 2

Reads the ARFF file with pandas (the features are the first ``--features`` attributes, the class the next
one, coded by order of appearance), fits ``skrebate.ReliefF(n_features_to_select=all,
n_neighbors=--neighbours, n_jobs=--n-jobs)``, which builds the n x n distance matrix and uses every row
as an instance, and writes ``{"order": [features, highest weight first], "read_s": reading time,
"algo_s": fit time}``.
"""
from __future__ import annotations

import sys
import time

from _common import order_by_importance, peer_parser, read_arff, write_result


def rank(arff: str, features: int | None, neighbours: int, n_jobs: int) -> dict:
    """Read the data, fit ReliefF, order the features by weight.

    Parameters
    ----------
    arff : str
        A dense ARFF file: numeric features, then the class attribute.
    features : int or None
        The number of leading feature attributes (None: every attribute but the last).
    neighbours, n_jobs : int
        ``n_neighbors`` and ``n_jobs`` of ReliefF.

    Returns
    -------
    dict
        ``order``, ``read_s`` (header and rows), ``algo_s`` (``fit``).
    """
    import numpy as np
    import pandas as pd
    from skrebate import ReliefF

    t0 = time.perf_counter()
    names, data = read_arff(arff)
    p = len(names) - 1 if features is None else features
    X = data.iloc[:, :p].to_numpy(np.float64)
    y = pd.factorize(data.iloc[:, p])[0].astype(np.float64)
    t1 = time.perf_counter()
    model = ReliefF(n_features_to_select=p, n_neighbors=neighbours, n_jobs=n_jobs).fit(X, y)
    t2 = time.perf_counter()
    order = order_by_importance(names[:p], model.feature_importances_)
    return {"order": [names[i] for i in order], "read_s": t1 - t0, "algo_s": t2 - t1}


def main(argv=None) -> int:
    """Command line: ``ARFF OUTPUT [--features P] [--neighbours K] [--n-jobs N]``."""
    ap = peer_parser(__doc__, "dense ARFF file, numeric features first, the class last")
    ap.add_argument("--features", type=int, help="leading feature attributes (default: all but the last)")
    ap.add_argument("--neighbours", type=int, default=10, help="n_neighbors (default 10)")
    ap.add_argument("--n-jobs", type=int, default=2, help="n_jobs (default 2)")
    a = ap.parse_args(argv)
    write_result(a.output, rank(a.arff, a.features, a.neighbours, a.n_jobs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
