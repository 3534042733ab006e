"""One numba cache for spark_fr's kernels when the package is imported from a zip archive (``--py-files``).

Installed (``numba_cache.install()``) by ``spark_fr/__init__.py`` before any kernel module is imported; it does
nothing unless spark_fr itself lives in a ``.zip``.

Why: numba's ``cache=True`` keys a zipped module's cache by the archive's absolute path (numba's
``ZipCacheLocator``, under the user's cache directory; older numba refuses to cache zipped code at all). Spark
copies ``--py-files`` into a new folder for every application and executor, so every executor compiled every
kernel again, in every run (8-10 s per Python worker for the tree kernels on 2 busy cores).

Decision: for a module of the ``spark_fr`` package inside a zip, the cache goes to
``<base>/spark_fr-<sources>/<module's folder in the package>``, where ``<base>`` is ``NUMBA_CACHE_DIR`` when set
(``spark.executorEnv.NUMBA_CACHE_DIR``), else numba's user-wide cache folder, and ``<sources>`` a hash of all
the package's ``.py`` files (two versions of spark_fr never share, nor overwrite, each other's entries). Freshness
is checked by numba as usual, on a hash of the module's source (never a path or a time). So every executor and
application on a machine shares one cache, and ``jobs/package.py`` ships one inside the archive
(``spark_fr/_numba_cache/``, compiled for the executors' Python and CPU): a process that imports spark_fr from
the zip copies the shipped files there first, never over a file that exists, each by an atomic rename, and
numba loads them instead of compiling. A CPU or numba version the shipped cache was not built for is a cache
miss: numba compiles and adds the entry, as it would without it.
"""
from __future__ import annotations

import hashlib
import os
import sys
import uuid
import zipfile

PACKAGE = "spark_fr"
SHIPPED = f"{PACKAGE}/_numba_cache/"  # prefix of the cache files inside the archive
_installed = {}


def package_archive() -> str | None:
    """The zip archive spark_fr is imported from, or None (an ordinary folder)."""
    parts = os.path.abspath(__file__).split(os.sep)
    for i, part in enumerate(parts):
        if part.lower().endswith(".zip"):
            head = os.sep.join(parts[:i + 1])
            if zipfile.is_zipfile(head):
                return head
    return None


def sources_hash(zip_path: str) -> str:
    """12 hex digits of the SHA-256 of every ``spark_fr/**.py`` in the archive (names and contents, sorted)."""
    digest = hashlib.sha256()
    with zipfile.ZipFile(zip_path) as zf:
        for name in sorted(n for n in zf.namelist() if n.startswith(PACKAGE + "/") and n.endswith(".py")):
            digest.update(name.encode() + b"\0" + zf.read(name) + b"\0")
    return digest.hexdigest()[:12]


def cache_root(zip_path: str) -> str:
    """The folder of this archive's kernels' cache: ``<NUMBA_CACHE_DIR or user cache>/spark_fr-<sources>``."""
    from numba.core import config
    from numba.misc.appdirs import AppDirs

    base = config.CACHE_DIR or AppDirs(appname="numba", appauthor=False).user_cache_dir
    return os.path.join(os.path.abspath(base), f"{PACKAGE}-{sources_hash(zip_path)}")


def unpack_shipped(zip_path: str, root: str) -> int:
    """Copy the archive's shipped cache files into ``root`` (data files before indexes; never over an existing
    file; each through a temporary name and an atomic rename). Returns how many were copied."""
    copied = 0
    with zipfile.ZipFile(zip_path) as zf:
        names = [n for n in zf.namelist() if n.startswith(SHIPPED) and not n.endswith("/")]
        for name in sorted(names, key=lambda n: (n.endswith(".nbi"), n)):  # an index only after its data
            target = os.path.join(root, *name[len(SHIPPED):].split("/"))
            if os.path.exists(target):
                continue
            os.makedirs(os.path.dirname(target), exist_ok=True)
            tmp = f"{target}.{uuid.uuid4().hex}.tmp"
            with open(tmp, "wb") as out:
                out.write(zf.read(name))
            os.replace(tmp, target)
            copied += 1
    return copied


def _locator_class(zip_path: str, root: str):
    from numba.core.caching import _CacheLocator

    sources = {}

    class ArchiveCacheLocator(_CacheLocator):
        """numba cache locator for spark_fr's modules inside ``zip_path``: a folder under ``root`` per package
        folder, the module's source hash as its freshness stamp."""

        def __init__(self, py_func, py_file, inner):
            self._py_file = py_file
            self._inner = inner
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = os.path.join(root, *inner.split("/")[1:-1])

        def get_cache_path(self):
            return self._cache_path

        def get_source_stamp(self):
            if self._inner not in sources:
                with zipfile.ZipFile(zip_path) as zf:
                    # numba's own stamp of a module's source (a SHA-256 digest): the same files as in-tree caches
                    sources[self._inner] = hashlib.sha256(zf.read(self._inner)).digest()
            return sources[self._inner]

        def get_disambiguator(self):
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func, py_file):
            prefix = os.path.join(zip_path, PACKAGE) + os.sep
            if not os.path.abspath(py_file).startswith(prefix):
                return None
            inner = PACKAGE + "/" + os.path.abspath(py_file)[len(prefix):].replace(os.sep, "/")
            self = cls(py_func, py_file, inner)
            try:
                self.ensure_cache_path()
            except OSError:  # not writable: numba's own locators decide
                return None
            return self

    return ArchiveCacheLocator


def install() -> dict | None:
    """Route numba's cache of spark_fr's kernels as described above when spark_fr is imported from a zip; copy
    the archive's shipped cache files in place. Returns ``{"zip", "root", "unpacked"}``, or None (not zipped, or
    a numba without the locator hooks: its own behaviour then)."""
    if _installed:
        return _installed
    zip_path = package_archive()
    if zip_path is None:
        return None
    try:
        from numba.core import caching
    except ImportError:
        return None
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    if impl is None or not isinstance(getattr(impl, "_locator_classes", None), list):
        return None
    root = cache_root(zip_path)
    try:
        unpacked = unpack_shipped(zip_path, root)
    except OSError as err:  # a read-only cache folder: compile as numba would
        print(f"spark_fr: numba cache {root} not usable ({err}); kernels compile in this process",
              file=sys.stderr)
        return None
    impl._locator_classes.insert(0, _locator_class(zip_path, root))
    _installed.update(zip=zip_path, root=root, unpacked=unpacked)
    return _installed
