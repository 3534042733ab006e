"""The target types: one line each. ``--task auto`` asks them, by their ``inference_priority``, whether they
claim the target columns."""
from __future__ import annotations

from .base import TargetType, TaskError
from .classification import Classification
from .hmlc import HMLC
from .mlc import MLC
from .regression import Regression
from .unsupervised import Unsupervised

#: every target type (in the order they are listed to users)
TARGET_TYPES = (Classification(), Regression("regression", single=True), Regression("mtr", single=False), MLC(),
                HMLC(), Unsupervised())
_BY_NAME = {t.name: t for t in TARGET_TYPES}


def names(method: str | None = None) -> tuple:
    """Names of the target types (those ``method`` supports, if given), in registry order."""
    return tuple(t.name for t in TARGET_TYPES if method is None or method in t.methods)


def get(name: str) -> TargetType:
    """The target type called ``name``."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise TaskError(f"unknown task '{name}'; expected one of {', '.join(names())}") from None


def infer(columns: list, labels_xml: bool = False) -> TargetType:
    """The target type ``--task auto`` chooses for these target columns.

    Parameters
    ----------
    columns : list of TargetColumn
    labels_xml : bool
        Whether the targets are the labels of a Mulan label file.

    Returns
    -------
    TargetType

    Raises
    ------
    TaskError
        No target, or targets no type claims (e.g. several nominal ones).
    """
    if not columns:
        raise TaskError("no target column: pass --targets (or --task unsupervised)")
    for t in sorted(TARGET_TYPES, key=lambda t: t.inference_priority):
        if t.claims(columns, labels_xml):
            return t
    raise TaskError("several targets that are not all numeric or all {0,1} labels: choose --task "
                    "explicitly (multi-target classification is not supported)")


def require_method(target_type: TargetType, method: str) -> None:
    """Raise :class:`TaskError` if ``method`` does not support ``target_type``."""
    if method not in target_type.methods:
        why = WHY_NOT.get(method, "")
        raise TaskError(f"--method {method} does not support the task '{target_type.name}' in this version; it "
                        f"supports {', '.join(names(method))}{why}")


#: why a method is limited to some target types (added to :func:`require_method`'s message)
WHY_NOT = {"reliefe": " (ReliefE finds neighbours per class or compares label sets, as its paper defines it; "
                      "use --method relief for other targets)"}
