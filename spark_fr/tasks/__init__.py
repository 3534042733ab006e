"""Target types: the one place where a task's inference, encoding, impurity, prototype, error and
Relief distance are defined (one module per type, :mod:`spark_fr.tasks.registry` lists them)."""
from .base import FittedTask, ReliefTarget, TargetColumn, TargetEncoder, TargetSummary, TargetType, TaskError
from .registry import TARGET_TYPES, get, infer, names, require_method

__all__ = ["FittedTask", "ReliefTarget", "TargetColumn", "TargetEncoder", "TargetSummary", "TargetType",
           "TaskError", "TARGET_TYPES", "get", "infer", "names", "require_method"]
