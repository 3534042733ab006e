"""Ensemble ranking of in-memory NumPy arrays, without Spark (tests, small data, debugging).

The Spark path (:mod:`spark_fr.ensemble.spark`) runs exactly the same per-tree code on broadcast data;
this module only replaces the encoding pass and the ``treeAggregate`` by local loops.
"""
from __future__ import annotations

import numpy as np

from ..data.binning import fit_bins, stack_bins
from .. import tasks
from .params import EnsembleParams
from .trees import TreeData, score_tree_group


def tree_data_from_arrays(X, Y, task: str, nominal=None, target_names=None, classes=None,
                          row_keys=None, label_weights=None) -> tuple:
    """Bin ``X`` and fit ``task`` on ``Y``; return (TreeData, list of FeatureBins).

    Parameters
    ----------
    X : ndarray (n, D)
        Numeric values, or category indices for nominal features (NaN = missing).
    Y : ndarray (n, T) or (n,)
        Raw targets (class indices for classification).
    task : str
    nominal : ndarray of bool (D,), optional
    target_names, classes : list, optional
    row_keys : ndarray of uint64, optional
        Stable row keys (default: the row positions).
    label_weights : ndarray, optional
        HMLC: the hierarchy weights w(l) of the label columns (:meth:`spark_fr.hierarchy.Hierarchy.weights`).
    """
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim == 1:
        Y = Y[:, None]
    n, D = X.shape
    nominal = np.zeros(D, bool) if nominal is None else np.asarray(nominal, bool)
    bins = [fit_bins(X[:, f], f"x{f}", bool(nominal[f])) for f in range(D)]
    codes = np.ascontiguousarray(np.stack([b.encode(X[:, f]) for f, b in enumerate(bins)]))
    lower, upper, _ = stack_bins(bins)
    target_names = target_names or [f"y{j}" for j in range(Y.shape[1])]
    fitted = tasks.get(task).fit(Y, target_names, classes, label_weights)
    Y = fitted.targets(Y)
    keys = np.arange(n, dtype=np.uint64) if row_keys is None else np.asarray(row_keys, np.uint64)
    data = TreeData(codes, nominal, lower, upper, fitted.clustering_input(Y), Y,
                    fitted.prototype_columns(Y), keys, fitted)
    return data, bins


def rank_arrays(X, Y, task: str, params: EnsembleParams | None = None, **kwargs) -> list:
    """Mean and spread of each score over the ensemble, computed locally.

    Returns
    -------
    list of ScoreResult
    """
    params = params or EnsembleParams()
    data, _ = tree_data_from_arrays(X, Y, task, **kwargs)
    return score_tree_group(data, params, range(params.trees)).results()
