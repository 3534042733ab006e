"""Unsupervised ranking: no targets; the descriptive space is the target space.

Sketch
------
* Chosen with ``--task unsupervised`` only (never inferred), without ``--targets``.
* Relief (URelief): d_Y = d_X, the descriptive distance, for every pair of rows.
* Ensembles: clustering trees (thesis Ch. 7): every feature is a clustering attribute, with the normalised
  variance / Gini impurity, the leaf prototype (mean / most frequent category) as prediction and its
  reconstruction error as the RF score's error (:mod:`spark_fr.tasks.semi_supervised` with no target,
  :mod:`spark_fr.tasks.descriptive`). The thesis' configuration is the default: extra trees with bootstrap,
  ceil(log2 D) features per node, 100 fully grown trees, Genie3 and RF scores (Symbolic on request).
"""
from __future__ import annotations

import numpy as np

from .base import EvaluationDefaults, ReliefTarget, TargetType, TaskError
from .distances import T_DESCRIPTIVE


class Unsupervised(TargetType):
    """No targets (see the module docstring)."""

    name = "unsupervised"
    supervised = False
    ensemble_defaults = {"ensemble": "extra_trees", "bootstrap": True, "max_features": "log2", "trees": 100,
                         "scores": ["genie3", "rf"]}
    #: Ch. 7: 10-fold cross-validation, 1NN on the top 16 features predicting every feature (MSE)
    evaluation = EvaluationDefaults(neighbours=1, prediction="features", measure="mse", protocol="unsupervised")

    def check(self, columns):
        if columns:
            raise TaskError("--task unsupervised takes no --targets")

    def relief_target(self, Y, params, *, summary=None, semi_supervised=False, n_classes=None, hierarchy=None):
        Y = np.asarray(Y, dtype=np.float64)
        return ReliefTarget(T_DESCRIPTIVE, np.zeros((Y.shape[0], 1)), np.ones(1))
