"""Regression and multi-target regression (MTR): numeric targets.

Sketch
------
* Inference: one numeric target is regression, several numeric targets (not all 0/1) are MTR.
* Trees: the clustering columns are the targets, weighted ``alpha_j = 1 / (T * Var(E_train, y_j))``, so the
  impurity is the scale-free MTR impurity (the mean of the normalised variances). A target that is
  constant on the training set gets weight 0 (it cannot be improved; the run logs it). The prototype is
  the mean vector; the error (RF score) is the relative MSE ``MSE_j / Var(E_train, y_j)`` averaged over
  targets (no square root: the thesis leaves it open, MSE keeps the link with the variance heuristic).
  Per-target Genie3 = T * (the reductions of column j), so the joint Genie3 is their mean.
* Values so large that their squares overflow (|y| > 2^500) are handled, not rejected: a target column
  is multiplied by a power of two first (exact in floating point, and every quantity used is relative to
  the column's own variance or range), so such a column ranks features exactly as the same column
  divided by that power of two.
* Boosting (regression only): the squared error (:class:`spark_fr.tasks.losses.SquaredLoss`).
* Relief: d_Y = mean over targets of |y1 - y2| / range (RReliefF, MTR-Relief); per target, the same with
  one target.
"""
from __future__ import annotations

import logging

import numpy as np

from ..scaling import to_unit
from .base import FittedTask, ReliefTarget, TargetType, TaskError
from .distances import T_NUMERIC

log = logging.getLogger(__name__)

#: columns whose largest magnitude is above 2**SAFE_EXPONENT are scaled down by a power of two
SAFE_EXPONENT = 500


def scale_for(maxabs: np.ndarray) -> np.ndarray:
    """Per-column powers of two that bring every |value| to at most 2**SAFE_EXPONENT (ones when none needs it)."""
    top = np.nan_to_num(np.asarray(maxabs, dtype=np.float64))
    _, exponent = np.frexp(top)
    return np.ldexp(1.0, -np.maximum(exponent - SAFE_EXPONENT, 0))


class Regression(TargetType):
    """Numeric targets: one (``regression``) or several (``mtr``)."""

    def __init__(self, name: str, single: bool):
        self.name = name
        self.single = single
        # boosting (squared loss) takes one target
        self.methods = TargetType.methods | {"boosting"} if single else TargetType.methods

    def claims(self, columns, labels_xml):
        if not all(c.kind == "numeric" for c in columns):
            return False
        return len(columns) == 1 if self.single else len(columns) > 1

    def check(self, columns):
        if self.single and len(columns) != 1:
            raise TaskError("regression takes exactly one numeric target; use --task mtr for several")
        for c in columns:
            if c.kind != "numeric":
                raise TaskError(f"target column '{c.name}' is {c.kind} ({c.shown_values()}); --task {self.name} "
                                f"needs numeric targets")
        constant = [c.name for c in columns if c.n_known and not c.vmax > c.vmin]
        if constant and len(constant) == len(columns):
            what = f"target column '{constant[0]}' is constant" if len(columns) == 1 else \
                "every target column is constant"
            raise TaskError(f"{what}; there is nothing to rank features against")

    def column_scale(self, maxabs):
        return scale_for(maxabs)

    def fit(self, Y, target_names, classes=None, label_weights=None):
        if self.single and np.shape(Y)[1] != 1:
            raise TaskError("regression takes exactly one numeric target; use --task mtr for several")
        return super().fit(Y, target_names, classes, label_weights)

    def fit_from_moments(self, moments, target_names, classes=None, label_weights=None):
        return fit_numeric_columns(self.name, moments, target_names)

    def relief_target(self, Y, params, *, summary=None, semi_supervised=False, n_classes=None, hierarchy=None):
        Y = np.asarray(Y, dtype=np.float64)
        T = Y.shape[1]
        summary = summary or self.summarize(Y)
        scaled = to_unit(Y, summary.lo, summary.hi)
        return ReliefTarget(T_NUMERIC, scaled, np.ones(T), 1.0, per_target_kinds=np.full(T, T_NUMERIC, np.int64))


def fit_numeric_columns(name: str, moments, target_names: list, fitted_class=FittedTask) -> FittedTask:
    """Fit numeric target columns (regression, MTR, and MLC's 0/1 labels) from their moments: centre and
    normalised weights ``alpha_j = 1 / (T * Var(E_train, y_j))`` (0 for a constant column).

    Raises
    ------
    TaskError
        A column without known values, or every column constant.
    """
    T = len(target_names)
    for j, tname in enumerate(target_names):
        if not moments.count[j] > 0:
            raise TaskError(f"target column '{tname}' has no known values")
    var = moments.var
    constant = [target_names[j] for j in range(T) if not var[j] > 0]
    if len(constant) == T:
        what = f"target column '{constant[0]}' is constant" if T == 1 else "every target column is constant"
        raise TaskError(f"{what}; there is nothing to rank features against")
    if constant:
        log.warning("constant target(s) get weight 0 and cannot influence the ranking: %s", ", ".join(constant))
    alpha = np.where(var > 0, 1.0 / (T * np.where(var > 0, var, 1.0)), 0.0)
    scale = None if np.all(moments.scale == 1.0) else moments.scale
    return fitted_class(name, list(target_names), moments.mean, alpha, np.arange(T), np.full(T, float(T)), var, None,
                        constant, scale)
