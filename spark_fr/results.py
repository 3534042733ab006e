"""What a ranking method returns: one typed record per computed score, and the run's report (NumPy only)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class ScoreKey:
    """Which score: its name ('symbolic', 'genie3', 'rf', 'relief'), whether it is per target, and its level:
    'feature' (importances over the features) or 'relation' (over the relations of a relational table, by the
    node rule of :mod:`spark_fr.pct.relation_scores`)."""

    name: str
    per_target: bool = False
    level: str = "feature"


@dataclass
class ScoreResult:
    """The importances of one score.

    Attributes
    ----------
    key : ScoreKey
    importance : ndarray
        (D,) for a joint ranking; (T, D) per target.
    std : ndarray or None
        Spread of the importance over trees or shards (same shape), None where undefined.
    """

    key: ScoreKey
    importance: np.ndarray
    std: np.ndarray | None = None

    @property
    def name(self) -> str:
        return self.key.name

    @property
    def per_target(self) -> bool:
        return self.key.per_target


def find(results: list, name: str, per_target: bool = False) -> ScoreResult:
    """The result of score ``name`` (joint, or per target) in a list of results (KeyError if absent)."""
    for r in results:
        if r.key == ScoreKey(name, per_target):
            return r
    raise KeyError((name, per_target))


@dataclass
class MethodRun:
    """What a ranking method reports back to :func:`spark_fr.rank`.

    Attributes
    ----------
    feature_names : list of str
    usable : ndarray of bool
    results : list of ScoreResult
    target_names : list of str
        Names of the targets of per-target results.
    task : str
        The target type used.
    n_rows : int
        Rows the ranking used.
    n_rows_read : int
    info : dict
        Method details for the run metadata.
    timings : dict
    params : dict
        Derived parameters recorded with the options (e.g. the features tried per node).
    """

    feature_names: list
    usable: np.ndarray
    results: list
    target_names: list
    task: str
    n_rows: int
    n_rows_read: int
    info: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)


def informative(results: list, usable: np.ndarray, target_names: list, all_targets: str = "__all__") -> dict:
    """Which rankings carry information: ``{score: {target: bool}}`` over the feature-level results.

    A ranking (one score, one target or the joint ``all_targets``) carries no information when the importance of
    every usable feature is exactly 0 (unusable features are 0 by definition): its ranks are then the file order.

    Parameters
    ----------
    results : list of ScoreResult
    usable : ndarray of bool (D,)
    target_names : list of str
        The targets of per-target results, in order.
    all_targets : str
        The name of the joint ranking's target.

    Returns
    -------
    dict
    """
    usable = np.asarray(usable, bool)
    out: dict = {}
    for r in results:
        if r.key.level != "feature":
            continue
        rows = r.importance if r.per_target else np.asarray(r.importance)[None, :]
        names = list(target_names) if r.per_target else [all_targets]
        for target, values in zip(names, rows):
            values = np.asarray(values, float)[usable]
            out.setdefault(r.name, {})[target] = bool(values.size and np.any(values != 0))
    return out
