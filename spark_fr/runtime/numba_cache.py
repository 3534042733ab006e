"""One numba cache rule for spark_fr's kernels, wherever spark_fr is imported from: a zip archive (``--py-files``)
or an installed package that ships a cache (a wheel built by ``jobs/package.py --wheel``).

Installed (``numba_cache.install()``) by ``spark_fr/__init__.py`` before any kernel module is imported.

Sketch
------
    sources()          where spark_fr's sources are: a zip archive, or a folder with a shipped cache
                       (``spark_fr/_numba_cache/``); None for a source checkout (spark_fr.runtime.checkout_cache)
    sources_hash(...)  12 hex digits of the SHA-256 of every ``spark_fr/**.py`` (names and contents, sorted): the
                       same for a zip and a folder that hold the same sources
    cache_root(...)    ``<NUMBA_CACHE_DIR or numba's user cache>/spark_fr-<sources hash>``: the writable cache
    unpack_shipped     copies the shipped files there, never over a file that exists, each by an atomic rename
    adopt_target       compiles (and loads) for the CPU target the shipped cache was built for (``generic``:
                       any x86-64), unless the user chose one (``NUMBA_CPU_NAME``) or numba already compiled
    watch_compiles     one log line when a kernel of spark_fr compiles (a cache miss) and about how long it takes

Why: numba keys a zipped module's cache by the archive's absolute path, and Spark copies ``--py-files`` into a
new folder for every application and executor; an installed wheel has no cache at all, so every fresh
installation (a Databricks ``%pip``, a job cluster's init script) compiled every kernel on the driver and on every
executor: 75 s of CPU for the ensemble's and Relief's kernels, in every scheduled run of a new job cluster.

Decision: one rule for both. For a module of the ``spark_fr`` package in a zip, or in a folder that ships a
cache, numba's cache goes to ``cache_root()/<module's folder in the package>``; freshness is numba's usual check
on a hash of the module's source (never a path or a time: pip does not keep the wheel's modification times), and
numba's index keys each entry by the function's bytecode, numba's version and the CPU target. Two versions of
spark_fr never share, nor overwrite, each other's entries, and a shipped cache whose ``_numba_cache.json`` names other
sources (one byte differs) is not copied: a kernel's compiled code holds the kernels it calls from other modules,
which numba's per-module check does not see. A source checkout (or a package installed without a shipped cache)
follows the same rule, registered when numba is first imported (``spark_fr.runtime.checkout_cache``): numba's own
in-tree cache ran a kernel's old callees after an edit to their module.

Decision: the shipped cache is compiled for a portable target (``NUMBA_CPU_NAME=generic``: x86-64 with SSE2;
``spark_fr/_numba_cache.json`` beside the files says so), because numba's index key holds the CPU name and features
and a cluster's machines are not the build machine (trees grow 7-13 % slower than with the machine's own code,
measured; the first run of a fresh install no longer compiles for 30-90 s on every node). A process that imports
spark_fr before numba compiled anything, with neither ``NUMBA_CPU_NAME`` nor ``NUMBA_CPU_FEATURES`` set, compiles
for that target too: spark_fr sets both in its environment (its Python workers and child processes follow; numba
code of the user's own in the same process is compiled for it too). ``SPARK_FR_NUMBA_CPU=host`` (or a
``NUMBA_CPU_NAME`` of the user's) keeps native code: then the shipped cache is a miss and the kernels compile once
for the machine (the log line says so). A numba or Python version the shipped cache was not built for is a miss as
well: numba compiles and adds the entry, as it would without it.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import platform
import sys
import uuid
import zipfile

PACKAGE = "spark_fr"
SHIPPED_DIR = "_numba_cache"
SHIPPED = f"{PACKAGE}/{SHIPPED_DIR}/"  # prefix of the cache files inside the archive
TARGET = f"{PACKAGE}/{SHIPPED_DIR}.json"  # beside the cache: what it was compiled for ({"cpu_name", "sources", ...})
NATIVE_ENV = "SPARK_FR_NUMBA_CPU"  # 'host': compile for this machine's CPU, never for the shipped cache's target
log = logging.getLogger(__name__)
_installed = {}


class ZipSources:
    """spark_fr's sources in a zip archive (``--py-files``); its shipped cache under ``spark_fr/_numba_cache/``."""

    kind = "zip"

    def __init__(self, path: str):
        self.path = path
        with zipfile.ZipFile(path) as zf:
            self._names = zf.namelist()

    def has(self, name: str) -> bool:
        return name in self._names

    def py_names(self) -> list:
        return sorted(n for n in self._names if n.startswith(PACKAGE + "/") and n.endswith(".py"))

    def shipped_names(self) -> list:
        return sorted(n[len(SHIPPED):] for n in self._names if n.startswith(SHIPPED) and not n.endswith("/"))

    def read(self, name: str) -> bytes:
        with zipfile.ZipFile(self.path) as zf:
            return zf.read(name)

    def read_many(self, names) -> dict:
        with zipfile.ZipFile(self.path) as zf:
            return {n: zf.read(n) for n in names}

    def inner_name(self, py_file: str) -> str | None:
        prefix = os.path.join(self.path, PACKAGE) + os.sep
        path = os.path.abspath(py_file)
        return PACKAGE + "/" + path[len(prefix):].replace(os.sep, "/") if path.startswith(prefix) else None


class FolderSources(ZipSources):
    """spark_fr's sources in a folder (an installed package); its shipped cache in ``spark_fr/_numba_cache/``."""

    kind = "folder"

    def __init__(self, path: str):  # the folder that holds the spark_fr package (site-packages)
        self.path = path
        package = os.path.join(path, PACKAGE)
        self._names = []
        for folder, dirs, files in os.walk(package):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            rel = os.path.relpath(folder, path).replace(os.sep, "/")
            self._names += [f"{rel}/{f}" for f in files if not f.endswith((".pyc", ".tmp"))]

    def read(self, name: str) -> bytes:
        with open(os.path.join(self.path, *name.split("/")), "rb") as f:
            return f.read()

    def read_many(self, names) -> dict:
        return {n: self.read(n) for n in names}


def package_archive() -> str | None:
    """The zip archive spark_fr is imported from, or None (an ordinary folder)."""
    parts = os.path.abspath(__file__).split(os.sep)
    for i, part in enumerate(parts):
        if part.lower().endswith(".zip"):
            head = os.sep.join(parts[:i + 1])
            if zipfile.is_zipfile(head):
                return head
    return None


def sources(package_parent: str | None = None):
    """Where spark_fr's sources are, when the rule applies: ``ZipSources`` (imported from a zip), ``FolderSources``
    (a folder whose package ships ``_numba_cache/``), or None (a source checkout: numba's own cache).
    ``package_parent`` (the folder holding ``spark_fr/``) defaults to this module's."""
    if package_parent is None:
        archive = package_archive()
        if archive is not None:
            return ZipSources(archive)
        package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if os.path.isdir(os.path.join(package_parent, PACKAGE, SHIPPED_DIR)):
        return FolderSources(package_parent)
    return None


def sources_hash(where) -> str:
    """12 hex digits of the SHA-256 of every ``spark_fr/**.py`` (names and contents, sorted) of ``where``: a zip
    archive's path or a sources object (:func:`sources`)."""
    src = ZipSources(where) if isinstance(where, (str, os.PathLike)) else where
    digest = hashlib.sha256()
    names = src.py_names()
    contents = src.read_many(names)
    for name in names:
        digest.update(name.encode() + b"\0" + contents[name] + b"\0")
    return digest.hexdigest()[:12]


def cache_root(where) -> str:
    """The folder of these sources' kernels' cache: ``<NUMBA_CACHE_DIR or user cache>/spark_fr-<sources>``."""
    from numba.core import config
    from numba.misc.appdirs import AppDirs

    base = config.CACHE_DIR or AppDirs(appname="numba", appauthor=False).user_cache_dir
    return os.path.join(os.path.abspath(base), f"{PACKAGE}-{sources_hash(where)}")


def unpack_shipped(where, root: str) -> int:
    """Copy the shipped cache files of ``where`` (a zip's path or a sources object) into ``root`` (data files
    before indexes; never over an existing file; each through a temporary name and an atomic rename). Returns how
    many were copied."""
    src = ZipSources(where) if isinstance(where, (str, os.PathLike)) else where
    todo = [n for n in sorted(src.shipped_names(), key=lambda n: (n.endswith(".nbi"), n))  # an index after its data
            if not os.path.exists(os.path.join(root, *n.split("/")))]
    contents = src.read_many([SHIPPED + n for n in todo]) if todo else {}
    for name in todo:
        target = os.path.join(root, *name.split("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        tmp = f"{target}.{uuid.uuid4().hex}.tmp"
        with open(tmp, "wb") as out:
            out.write(contents[SHIPPED + name])
        os.replace(tmp, target)
    return len(todo)


def shipped_target(src) -> dict | None:
    """What the shipped cache was compiled for (``spark_fr/_numba_cache.json``: CPU target, sources hash, Python,
    numba), or None (not recorded: an archive of an older ``jobs/package.py``, for the build machine's CPU)."""
    if not src.has(TARGET):
        return None
    try:
        return json.loads(src.read(TARGET))
    except (OSError, ValueError):
        return None


def adopt_target(target: dict | None) -> str:
    """Compile for the shipped cache's CPU target in this process (see the module docstring), when it is portable
    and nobody chose otherwise. Returns what was decided: 'adopted', 'chosen' (the user's NUMBA_CPU_NAME or
    NUMBA_CPU_FEATURES), 'compiled' (numba compiled before spark_fr's import), 'native' (a cache for the build
    machine's CPU, or another machine type). (:func:`install` gives 'refused' for a cache of other sources.)"""
    if not target or target.get("cpu_name") in (None, "host"):
        return "native"
    if target.get("machine") and target["machine"] != platform.machine():
        return "native"
    if os.environ.get(NATIVE_ENV, "").lower() == "host":
        return "native"
    if os.environ.get("NUMBA_CPU_NAME") or os.environ.get("NUMBA_CPU_FEATURES") is not None:
        return "chosen"
    from numba.core import config
    from numba.core.registry import cpu_target

    if "_toplevel_target_context" in vars(cpu_target):  # numba's codegen exists: its CPU is set
        return "compiled"
    os.environ["NUMBA_CPU_NAME"] = target["cpu_name"]
    os.environ["NUMBA_CPU_FEATURES"] = target.get("cpu_features", "")
    config.reload_config()
    return "adopted"


def _locator_class(src, root: str):
    from numba.core.caching import _CacheLocator

    stamps = {}

    class SourcesCacheLocator(_CacheLocator):
        """numba cache locator for spark_fr's modules in ``src`` (a zip or an installed folder): a folder under
        ``root`` per package folder, a hash of the module's source as its freshness stamp."""

        def __init__(self, py_func, py_file, inner):
            self._inner = inner
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = os.path.join(root, *inner.split("/")[1:-1])

        def get_cache_path(self):
            return self._cache_path

        def get_source_stamp(self):
            if self._inner not in stamps:  # numba's own stamp of a module's source (a SHA-256 digest)
                stamps[self._inner] = hashlib.sha256(src.read(self._inner)).digest()
            return stamps[self._inner]

        def get_disambiguator(self):
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func, py_file):
            inner = src.inner_name(py_file)
            if inner is None:
                return None
            self = cls(py_func, py_file, inner)
            try:
                self.ensure_cache_path()
            except OSError:  # not writable: numba's own locators decide
                return None
            return self

    return SourcesCacheLocator


def _folder_rule(parent: str) -> tuple:
    """(cache folder, locator class) of the rule for the sources in the folder ``parent`` (a checkout's)."""
    src = FolderSources(parent)
    root = cache_root(src)
    return root, _locator_class(src, root)


def install() -> dict | None:
    """Route numba's cache of spark_fr's kernels as described above when spark_fr is imported from a zip or from a
    folder that ships a cache; copy the shipped cache files in place; compile for their CPU target; announce
    compiles. Returns ``{"kind", "zip" (or "folder"), "root", "unpacked", "target"}``, or None (a source checkout,
    or a numba without the locator hooks: its own behaviour then)."""
    if _installed:
        return _installed
    src = sources()
    if src is None:  # a checkout: the same rule, registered when numba is imported (spark_fr.runtime.checkout_cache)
        from . import checkout_cache

        checkout_cache.install(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                               _folder_rule)
        return None
    watch_compiles()
    try:
        from numba.core import caching
    except ImportError:
        return None
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    if impl is None or not isinstance(getattr(impl, "_locator_classes", None), list):
        return None
    root = cache_root(src)
    target = shipped_target(src)
    # a shipped cache built for other sources (one byte differs) is refused: a kernel's compiled code holds the code
    # of the kernels it calls, from other modules, which numba's per-module check does not see
    fits = not target or target.get("sources") in (None, os.path.basename(root)[len(PACKAGE) + 1:])
    try:
        unpacked = unpack_shipped(src, root) if fits else 0
    except OSError as err:  # a read-only cache folder: compile as numba would
        print(f"spark_fr: numba cache {root} not usable ({err}); kernels compile in this process",
              file=sys.stderr)
        return None
    target = adopt_target(target) if fits else "refused"
    impl._locator_classes.insert(0, _locator_class(src, root))
    _installed.update({"kind": src.kind, src.kind: src.path, "root": root, "unpacked": unpacked, "target": target})
    return _installed


# ----- one log line while spark_fr's kernels compile ----------------------------------------------------------
_NOTICE = {"label": None, "seconds": None, "said": set(), "listening": False}


class expecting:
    """Context of a warm-up: a compile inside it is announced as ``label``'s, about ``seconds`` long."""

    def __init__(self, label: str, seconds: float | None):
        self.label, self.seconds = label, seconds

    def __enter__(self):
        self._saved = _NOTICE["label"], _NOTICE["seconds"]
        _NOTICE["label"], _NOTICE["seconds"] = self.label, self.seconds
        return self

    def __exit__(self, *exc):
        _NOTICE["label"], _NOTICE["seconds"] = self._saved
        return False


def compile_notice(label: str | None, seconds: float | None) -> str:
    """The one line that says spark_fr's kernels compile: ``compiling spark_fr's numba kernels for this machine
    (ensemble, about 30 s, once)``."""
    what = f"{label}, " if label else ""
    about = f"about {seconds:.0f} s" if seconds else "up to a minute"
    return f"compiling spark_fr's numba kernels for this machine ({what}{about}, once)"


def _on_compile(dispatcher) -> None:
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
    if not module.startswith(PACKAGE + "."):
        return
    key = _NOTICE["label"]
    if key in _NOTICE["said"]:
        return
    _NOTICE["said"].add(key)
    log.info(compile_notice(key, _NOTICE["seconds"]))


def watch_compiles() -> None:
    """Listen to numba's compile events (a compile starts only on a cache miss): the first compile of a spark_fr
    kernel in each warm-up (:class:`expecting`), or outside any, logs :func:`compile_notice` once. Started by
    :func:`install` (a zip or an installed wheel) and by every warm-up (:mod:`spark_fr.runtime.warmups`)."""
    if _NOTICE["listening"]:
        return
    try:
        from numba.core import event
    except ImportError:
        return

    class Listener(event.Listener):
        def on_start(self, ev):
            _on_compile((ev.data or {}).get("dispatcher"))

        def on_end(self, ev):
            pass

    event.register("numba:compile", Listener())
    _NOTICE["listening"] = True

