"""One registry of the methods' numba warm-ups: each method registers its warm-up; a run warms what it needs.

Sketch
------
    register(name, module, function, options, compile_seconds, method)
                                                 a method's package says where its warm-up is (``spark_fr.relief``:
                                                 'relief', 'reliefe'; ``spark_fr.ensemble``: 'ensemble',
                                                 'boosting'), which run options it takes (the ensemble's
                                                 ``missing``: fractional trees have kernels of their own) and about
                                                 how long its kernels take to compile (the log line of a compile);
                                                 ``method``: the ranking method whose runs use it when that is not
                                                 its name ('label_sets': the ensemble's trees on label-sparse targets)
    of_methods(methods)                          the warm-ups of some ranking methods (what a shipped cache holds)
    warm(name, **values)                         imports the module and runs the warm-up, once per process for each
                                                 set of values: it compiles the kernels (or loads them from numba's
                                                 cache) on a tiny problem; later calls return at once
    warm_for(name, opts)                         the warm-up a run with options ``opts`` needs

A warm-up runs on the driver before the work: the command line's runs warm while the session starts (the JVM
starts in the background), and a method warms before its Spark jobs, so that the Python workers find the kernels
in numba's cache instead of compiling them concurrently (``jobs/package.py`` ships that cache). Decision: a
warm-up runs once per process and set of values (a notebook's second run has its kernels compiled already); the
registry imports nothing of spark_fr but its neighbour :mod:`spark_fr.runtime.numba_cache` (which says, in one
log line, that a warm-up compiles and about how long it takes), so it stands on the ground floor under every method.
"""
from __future__ import annotations

import importlib
import inspect
import threading
from dataclasses import dataclass

from . import numba_cache


@dataclass(frozen=True)
class WarmUp:
    """Where a method's warm-up is: ``module.function(**values)``, the run options it takes (``options``) and about
    how many seconds its kernels take to compile from an empty cache (``compile_seconds``)."""

    name: str
    module: str
    function: str
    options: tuple = ()
    compile_seconds: float | None = None
    method: str = ""


_REGISTRY: dict = {}
_DONE: set = set()
_LOCK = threading.RLock()  # a warm-up may warm another


def register(name: str, module: str, function: str, options: tuple = (),
             compile_seconds: float | None = None, method: str | None = None) -> WarmUp:
    """Register the warm-up ``name``: ``module.function``, taking the run options ``options`` as keywords, its
    kernels compiling in about ``compile_seconds`` (the log line's estimate when they do), used by runs of the
    ranking method ``method`` (default: ``name``). Registering a name again replaces its entry."""
    entry = WarmUp(name, module, function, tuple(options), compile_seconds, method or name)
    _REGISTRY[name] = entry
    return entry


def registered() -> dict:
    """``{name: WarmUp}`` of every registered warm-up."""
    return dict(_REGISTRY)


def of_methods(methods) -> list:
    """The names of the registered warm-ups that runs of the ranking ``methods`` use, in registration order."""
    wanted = set(methods)
    return [name for name, entry in _REGISTRY.items() if entry.method in wanted]


def warm(name: str, **values) -> bool:
    """Compile (or load from numba's cache) the kernels of ``name`` in this process, with ``values`` for the options
    its warm-up takes; once per process and set of values (:func:`values_key`). Returns whether it ran now.

    Raises
    ------
    KeyError
        Nothing is registered under ``name``.
    """
    entry = _REGISTRY[name]
    with _LOCK:
        function = getattr(importlib.import_module(entry.module), entry.function)
        key = (name, values_key(function, values))
        if key in _DONE:
            return False
        numba_cache.watch_compiles()
        with numba_cache.expecting(name, entry.compile_seconds):
            function(**values)
        _DONE.add(key)
    return True


def values_key(function, values: dict) -> tuple:
    """The values a warm-up ``function`` runs with, as the key of its runs: its defaults filled in, and a list or
    tuple of names as a sorted tuple (a run's ``--scores genie3,symbolic`` and its parameters' list are one key)."""
    signature = inspect.signature(function)
    bound = signature.bind(**values)
    bound.apply_defaults()
    flat = {}
    for k, v in bound.arguments.items():
        if signature.parameters[k].kind is inspect.Parameter.VAR_KEYWORD:
            flat.update(v)
        else:
            flat[k] = v
    return tuple(sorted((k, tuple(sorted(v)) if isinstance(v, (list, tuple)) else v) for k, v in flat.items()))


def warm_for(name: str, opts: dict) -> bool:
    """The warm-up of ``name`` with the values a run's options ``opts`` give (an option absent or None: the
    warm-up's own default)."""
    entry = _REGISTRY[name]
    return warm(name, **{k: opts[k] for k in entry.options if opts.get(k) is not None})
