"""spark_fr's numba cache rule for a source checkout (or a package installed without a shipped cache).

Sketch
------
    install(parent,    once per process, from ``spark_fr/__init__.py`` (through ``numba_cache.install``) for the
      rule)            folder ``parent`` that holds ``spark_fr/``; numba is not imported here: the rule is registered
                       when ``numba.core.caching`` is first imported (an import hook that removes itself), or at once
                       when it already is
    register           spark_fr's kernels: the zip's and the wheel's rule (:mod:`spark_fr.runtime.numba_cache`): the
                       cache under ``<NUMBA_CACHE_DIR or numba's user cache>/spark_fr-<hash of every source>``; the
                       folder marked as this checkout's, and this checkout's older folders but the newest
                       :data:`KEEP` removed, as are those of checkouts that are gone; the kernels of
                       ``parent/tests`` (which call spark_fr's): numba's own in-tree cache, the sources' hash added
                       to their stamp

Why: numba checks a cached kernel against its own module's source only, while a kernel's compiled code holds the
code of the kernels it calls from other modules and the values of the globals it reads. In a checkout, with
numba's in-tree cache, an edit to ``spark_fr/pct/numeric.py`` left ``grow.grow_tree``'s cached code, which holds
the numeric scan, in use: the grower ran the old scan, silently, and the tests passed on it (found on 2026-11-30:
a developer's checkout grew trees 25-90 % slower than a fresh copy of its own sources; its timings and its "same
trees to the bit" checks were of old code). The zip and the wheel had the rule already.

Decision: the hash covers every module of the package, not the modules a kernel imports: their import closure is
191 of the 213 modules (lazy imports included) and costs 0.7 s per process to compute; the hash costs ~20 ms. An
edit anywhere in ``spark_fr`` compiles the kernels again on their next use, into a new folder; a checkout keeps its
:data:`KEEP` newest folders, and the folders of this machine's checkouts that no longer exist are removed (a
folder is removed only when its marker, :data:`MARKER`, names this checkout, or one of this machine that is gone:
a cache folder shared by machines keeps the others' entries).
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import json
import os
import shutil
import socket
import sys
import time

CACHING = "numba.core.caching"
MARKER = "spark_fr_checkout.json"  # in a cache folder this rule made: {"checkout": path, "host", "created": time}
KEEP = 3  # a checkout's cache folders kept (the current one and the newest others)
TESTS = "tests"
_state = {"parent": None, "root": None, "sources_locator": None}


def install(parent: str, sources_locator) -> None:
    """The rule for spark_fr's sources in the folder ``parent`` (see the module docstring); once per process.
    ``sources_locator(parent)`` gives the zip's and the wheel's rule for them, once numba is imported: (the cache
    folder, numba's locator class of spark_fr's kernels) (``spark_fr.runtime.numba_cache``, which calls this)."""
    if _state["parent"] is not None:
        return
    _state["parent"] = os.path.abspath(parent)
    _state["sources_locator"] = sources_locator
    if CACHING in sys.modules:
        register(sys.modules[CACHING])
    else:
        sys.meta_path.insert(0, _AfterCaching())


def cache_folder() -> str | None:
    """This process's cache folder of spark_fr's kernels (None before numba's caching module is imported)."""
    return _state["root"]


def register(caching) -> None:
    """Add the rule's two locators in front of numba's own (``caching``: numba's caching module)."""
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    classes = getattr(impl, "_locator_classes", None)
    if not isinstance(classes, list) or any(getattr(c, "spark_fr_checkout", False) for c in classes):
        return
    root, package = _state["sources_locator"](_state["parent"])
    try:
        _mark_and_prune(root)
    except OSError:  # an unwritable cache folder: numba's own locators decide, as before
        return
    _state["root"] = root
    package.spark_fr_checkout = True
    classes.insert(0, _tests_locator_class(classes, os.path.join(_state["parent"], TESTS), os.path.basename(root)))
    classes.insert(0, package)


def _mark_and_prune(root: str) -> None:
    os.makedirs(root, exist_ok=True)
    marker = os.path.join(root, MARKER)
    if not os.path.exists(marker):
        with open(marker, "w") as out:
            json.dump({"checkout": _state["parent"], "host": socket.gethostname(), "created": time.time()}, out)
    base, mine = os.path.dirname(root), []
    for name in os.listdir(base):
        folder = os.path.join(base, name)
        if folder == root or not name.startswith("spark_fr-"):
            continue
        try:
            with open(os.path.join(folder, MARKER)) as f:
                made = json.load(f)
        except (OSError, ValueError):
            continue  # not made by this rule: never removed
        checkout = made.get("checkout")
        if checkout == _state["parent"]:
            mine.append((os.path.getmtime(os.path.join(folder, MARKER)), folder))
        elif (made.get("host") == socket.gethostname() and isinstance(checkout, str) and os.path.isabs(checkout)
              and not os.path.exists(checkout)):  # this machine's checkout that is gone (a removed clone, worktree);
            shutil.rmtree(folder, ignore_errors=True)  # a shared cache folder's entries of other machines stay
    for _, folder in sorted(mine, reverse=True)[KEEP - 1:]:
        shutil.rmtree(folder, ignore_errors=True)


def _tests_locator_class(numba_locators: list, tests: str, stamp: str):
    class TestsCacheLocator:
        """numba's own locator for a kernel of the checkout's tests, the sources' hash added to its stamp."""

        spark_fr_checkout = True

        @classmethod
        def from_function(cls, py_func, py_file):
            if not py_file or not os.path.abspath(py_file).startswith(tests + os.sep):
                return None
            for other in numba_locators:
                if getattr(other, "spark_fr_checkout", False):
                    continue
                locator = other.from_function(py_func, py_file)
                if locator is not None:
                    own = locator.get_source_stamp()
                    locator.get_source_stamp = lambda: (own, stamp)
                    return locator
            return None

    return TestsCacheLocator


class _AfterCaching(importlib.abc.MetaPathFinder):
    """Finds nothing itself: when numba's caching module is imported, removes itself from the import system and has
    the rule registered right after that module has run."""

    def find_spec(self, name, path, target=None):
        if name != CACHING:
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)  # the usual finders
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module):
            run(module)
            register(module)

        loader.exec_module = exec_module
        return spec
