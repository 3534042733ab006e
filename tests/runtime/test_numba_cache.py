"""spark_fr/runtime/numba_cache.py's one cache rule, on a package of one small kernel (seconds, not the minute of
spark_fr's own kernels): a cache compiled for one tree of sources is found by a fresh process importing the same
sources from another path (an installed folder that ships the cache, or a zip), refused when one byte of the
sources differs, and a compile says so in one log line. Real processes, real numba caches; the rule's module is
spark_fr's own file, copied into the small package. The wheel built by ``jobs/package.py --wheel``, installed in a
new virtualenv, is tests/end_to_end/test_cold_start.py (``environment`` marker: minutes).
"""
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.paths import ROOT

KERNEL = '''import numpy as np
from numba import njit


@njit(cache=True)
def helper(x):
    return x * 2.0


@njit(cache=True)
def total(a):
    s = 0.0
    for v in a:
        s += helper(v)
    return s
'''
INIT = "from .runtime import numba_cache\nnumba_cache.install()\n"
PROBE = '''import json, logging, sys
logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
import numpy as np
import spark_fr
from spark_fr import kernel
from spark_fr.runtime import numba_cache
numba_cache.watch_compiles()  # as spark_fr.runtime.warmups.warm does around a method's warm-up
with numba_cache.expecting("ensemble", 30):
    value = kernel.total(np.arange(4.0))
info = numba_cache.install() or {}
import numba
print(json.dumps({"value": value, "hits": sum(kernel.total.stats.cache_hits.values()),
                  "misses": sum(kernel.total.stats.cache_misses.values()), "file": spark_fr.__file__,
                  "root": info.get("root"), "unpacked": info.get("unpacked"), "target": info.get("target"),
                  "cpu": numba.config.CPU_NAME}))
'''
LINE = "compiling spark_fr's numba kernels for this machine (ensemble, about 30 s, once)"


def small_package(parent: Path, kernel: str = KERNEL, shipped: bool = True) -> Path:
    """A package named spark_fr under ``parent``: the rule's module (spark_fr's file), one kernel module and,
    when ``shipped``, a ``_numba_cache/`` folder (an installed package that ships a cache)."""
    pkg = parent / "spark_fr"
    (pkg / "runtime").mkdir(parents=True)
    (pkg / "__init__.py").write_text(INIT)
    (pkg / "runtime" / "__init__.py").write_text("")
    for rule in ("numba_cache.py", "checkout_cache.py"):
        shutil.copy(ROOT / "spark_fr" / "runtime" / rule, pkg / "runtime" / rule)
    (pkg / "kernel.py").write_text(kernel)
    if shipped:
        (pkg / "_numba_cache").mkdir()
    return pkg


def probe(path: Path, cache: Path, **env) -> tuple:
    """Run PROBE importing spark_fr from ``path`` (a folder or a zip) with an empty numba cache ``cache``: its
    JSON line and its standard error."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "NUMBA"))}
    clean.update(PYTHONPATH=str(path), NUMBA_CACHE_DIR=str(cache), **env)
    run = subprocess.run([sys.executable, "-c", PROBE], env=clean, cwd=cache.parent, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.strip().splitlines()[-1]), run.stderr


def ship(root: Path, pkg: Path, sources: str) -> None:
    """Put the cache compiled at ``root`` into ``pkg/_numba_cache``, what it is for beside it (as jobs/package.py)."""
    for path in root.rglob("*"):
        if path.is_file() and path.suffix in (".nbi", ".nbc"):
            target = pkg / "_numba_cache" / path.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
    (pkg / "_numba_cache.json").write_text(json.dumps(
        {"cpu_name": "generic", "cpu_features": "", "machine": os.uname().machine, "sources": sources}))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A cache compiled for the portable target (as jobs/package.py does) from sources at one path, and the same
    sources at another path shipping it."""
    base = tmp_path_factory.mktemp("numba_cache")
    first = small_package(base / "build")
    info, err = probe(base / "build", base / "build-cache", NUMBA_CPU_NAME="generic", NUMBA_CPU_FEATURES="")
    assert info["misses"] >= 1 and info["value"] == 12.0 and LINE in err
    root = Path(info["root"])
    assert root.parent == base / "build-cache" and root.name.startswith("spark_fr-")
    installed = small_package(base / "site-packages")
    ship(root, installed, root.name[len("spark_fr-"):])
    assert first != installed
    return base, installed, root.name


def test_a_shipped_cache_is_found_by_the_same_sources_at_another_path(built):
    base, installed, name = built
    info, err = probe(base / "site-packages", base / "user-cache")
    assert info["file"] == str(installed / "__init__.py") and info["value"] == 12.0
    assert (info["misses"], info["hits"]) == (0, 1), err  # loaded, not compiled
    assert info["target"] == "adopted" and info["cpu"] == "generic"
    assert Path(info["root"]) == base / "user-cache" / name  # the same sources, the same folder
    assert "compiling" not in err
    shipped = sorted(p.relative_to(installed / "_numba_cache") for p in (installed / "_numba_cache").rglob("*")
                     if p.is_file())
    assert info["unpacked"] == len(shipped)


def test_the_same_rule_for_a_zip_of_the_same_sources(built, tmp_path):
    base, installed, name = built
    archive = tmp_path / "copied" / "spark_fr.zip"
    archive.parent.mkdir()
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(installed.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                zf.write(path, path.relative_to(installed.parent).as_posix())
    info, err = probe(archive, tmp_path / "cache")
    assert info["file"] == str(archive / "spark_fr" / "__init__.py")
    assert (info["misses"], info["hits"], info["target"]) == (0, 1, "adopted"), err
    assert Path(info["root"]).name == name


def test_one_byte_of_other_sources_refuses_the_shipped_cache_and_the_compile_is_one_log_line(built, tmp_path):
    base, installed, name = built
    changed = small_package(tmp_path / "site-packages", KERNEL.replace("* 2.0", "* 2.00"))
    shutil.rmtree(changed / "_numba_cache")
    shutil.copytree(installed / "_numba_cache", changed / "_numba_cache")
    shutil.copy(installed / "_numba_cache.json", changed / "_numba_cache.json")
    info, err = probe(tmp_path / "site-packages", tmp_path / "cache")
    assert info["target"] == "refused" and info["unpacked"] == 0 and Path(info["root"]).name != name
    assert info["misses"] >= 1 and info["hits"] == 0 and info["cpu"] is None  # compiled for this machine
    assert [line for line in err.splitlines() if "compiling" in line] == [f"spark_fr.runtime.numba_cache: {LINE}"]


@pytest.mark.parametrize("env, decided, cpu", [({"NUMBA_CPU_NAME": "x86-64"}, "chosen", "x86-64"),
                                               ({"SPARK_FR_NUMBA_CPU": "host"}, "native", None)])
def test_a_cpu_the_user_chose_is_kept_and_the_portable_cache_is_a_miss(built, tmp_path, env, decided, cpu):
    base, installed, name = built
    info, err = probe(base / "site-packages", tmp_path / "cache", **env)
    assert info["target"] == decided and info["cpu"] == cpu
    assert info["misses"] >= 1 and info["hits"] == 0 and LINE in err


def test_a_source_checkout_compiles_for_this_machine_into_the_folder_of_its_sources(tmp_path):
    """A checkout adopts no shipped target; its kernels go to the folder named by its sources' hash, as a zip's do
    (spark_fr.runtime.checkout_cache; tests/runtime/test_checkout_cache.py: why, and the folders kept)."""
    small_package(tmp_path / "checkout", shipped=False)
    info, err = probe(tmp_path / "checkout", tmp_path / "cache")
    assert info["root"] is None and info["target"] is None and info["cpu"] is None
    assert info["misses"] >= 1 and LINE in err
    assert list((tmp_path / "cache").glob("spark_fr-*/kernel.total-*.nbi"))
    assert not list((tmp_path / "checkout").rglob("*.nbi"))
