"""scikit-rebate's MultiSURF (Urbanowicz et al. 2018): the ReliefE paper's strongest Relief peer (spec
methods-papers.md 3.10), computed in the evaluation on the training rows of each split, not by spark_fr.rank.

Algorithm sketch (skrebate 0.8.4's ``MultiSURF().fit(X, y)``, called as it is)
------------------------------------------------------------------------------
    X      <- the training rows' features: numeric scaled to [0, 1] by the training rows' range (the evaluation's
              scaling; skrebate scales a continuous feature by its range itself, so this is the same as raw units
              up to rounding), nominal as category indices, NaN where missing (skrebate's own missing-value
              handling); a feature is categorical when it is nominal here or when skrebate's
              default rule (at most 10 distinct known values) says so
    y      <- the class indices of the training rows with a known class
    D      <- the full n x n distance matrix (Manhattan on range-scaled continuous, Hamming on categorical)
    per row i: its neighbours are the rows closer than mean(D_i) - std(D_i) / 2 (no fixed k); hits and misses
              update every feature as in ReliefF
    importance <- ``feature_importances_`` (higher = more important); ties in the order of the features

Decision: the full distance matrix is O(n^2) memory and skrebate's scoring is O(n^2 D) Python-level work, so the
evaluation refuses more than :data:`MAX_ROWS` training rows in one line (``{'multisurf': {'method': 'multisurf',
'max_rows': n}}`` raises the limit) rather than running out of memory or for hours. Classification only (the
paper's peer for multi-class data); other tasks are refused in one line.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError

#: the most training rows MultiSURF is run on (an n x n float64 matrix: 800 MB at 10,000 rows)
MAX_ROWS = 10_000
#: skrebate's default: a feature with at most this many distinct values is categorical
CATEGORICAL_THRESHOLD = 10


def multisurf_importances(X: np.ndarray, y: np.ndarray, nominal: np.ndarray | None = None,
                          max_rows: int = MAX_ROWS) -> np.ndarray:
    """skrebate's MultiSURF importances of the features of ``X`` for the classes ``y`` (module sketch).

    Parameters
    ----------
    X : float64 (n, D)
        Numeric features (any units: skrebate scales them by their range; NaN = missing), nominal ones as category
        indices.
    y : (n,)
        Class indices; rows with a missing class (NaN) are left out.
    nominal : bool (D,), optional
        Which features are nominal (given to skrebate as categorical; default: its own rule).
    max_rows : int
        Refuse more rows than this (one-line error).

    Returns
    -------
    float64 (D,)
        skrebate's ``feature_importances_``.
    """
    try:
        from skrebate import MultiSURF
    except ImportError:
        raise InputError("the multisurf ranking needs scikit-rebate (pip install skrebate; the tests pin 0.8.4)") \
            from None

    X = np.asarray(X, np.float64)
    y = np.asarray(y, np.float64)
    known = ~np.isnan(y)
    X, y = X[known], y[known]
    n = X.shape[0]
    if n > int(max_rows):
        raise InputError(f"the multisurf ranking holds an n x n distance matrix: {n} training rows are more than its "
                         f"limit of {int(max_rows)} (set 'max_rows' in its configuration to raise it)")
    if np.unique(y).size < 2:
        raise InputError(f"the multisurf ranking needs at least 2 classes among the {n} training rows")
    categorical = None  # skrebate's own rule
    if nominal is not None and np.any(nominal):  # nominal features, and the numeric ones its rule calls categorical
        few = [np.unique(c[~np.isnan(c)]).size <= CATEGORICAL_THRESHOLD for c in X.T]
        categorical = [f for f in range(X.shape[1]) if nominal[f] or few[f]]
    model = MultiSURF(categorical_features=categorical, n_jobs=1)
    model.fit(X, y.astype(np.int64))
    return np.asarray(model.feature_importances_, np.float64)
