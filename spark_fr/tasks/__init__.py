"""Target types: the one place where a task's inference, encoding, impurity, prototype, error and
Relief distance are defined (one module per type, :mod:`spark_fr.tasks.registry` lists them).

The names below load on first use (PEP 562): importing a numba-free submodule such as
:mod:`spark_fr.tasks.hmlc_impurities` (read by :mod:`spark_fr.options` at every start) does not compile or
import the kernels' modules."""
from importlib import import_module

_FROM = {"FittedTask": "base", "ReliefTarget": "base", "TargetColumn": "base", "TargetEncoder": "base",
         "TargetSummary": "base", "TargetType": "base", "TaskError": "base", "TARGET_TYPES": "registry",
         "get": "registry", "infer": "registry", "names": "registry", "require_method": "registry"}

__all__ = list(_FROM)


def __getattr__(name: str):
    if name not in _FROM:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_FROM[name]}"), name)
    globals()[name] = value
    return value
