"""Unsupervised ranking: no targets; the descriptive space is the target space.

Sketch
------
* Chosen with ``--task unsupervised`` only (never inferred), without ``--targets``.
* Relief (URelief): d_Y = d_X, the descriptive distance, for every pair of rows.
* Ensembles: not yet (the issue "PCT ensembles for hierarchies, partial labels and no labels").
"""
from __future__ import annotations

import numpy as np

from .base import ReliefTarget, TargetType, TaskError
from .distances import T_DESCRIPTIVE


class Unsupervised(TargetType):
    """No targets (see the module docstring)."""

    name = "unsupervised"
    methods = frozenset({"relief"})
    supervised = False

    def check(self, columns):
        if columns:
            raise TaskError("--task unsupervised takes no --targets")

    def relief_target(self, Y, params, *, summary=None, semi_supervised=False, n_classes=None, hierarchy=None):
        Y = np.asarray(Y, dtype=np.float64)
        return ReliefTarget(T_DESCRIPTIVE, np.zeros((Y.shape[0], 1)), np.ones(1))
