"""spark_fr/runtime/checkout_cache.py: in a source checkout, a cached kernel whose callee's module changed is
compiled again, not loaded with the callee's old code; ``import spark_fr`` still does not import numba; a
checkout keeps its newest cache folders and removes only its own. A small checkout (spark_fr's two rule modules
copied in, a kernel calling a kernel of another module, a kernel of the tests calling it too), real processes,
numba's real caches; the same small checkout without the rule shows what numba alone does."""
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

from tests.paths import ROOT

CALLEE = "from numba import njit\n\n\n@njit(cache=True)\ndef g():\n    return 1.0\n"
CALLER = ("from numba import njit\n\nfrom .callee import g\n\n\n@njit(cache=True)\ndef f():\n"
          "    return g() + 1.0\n")
TESTS_KERNEL = ("from numba import njit\n\nfrom spark_fr.callee import g\n\n\n@njit(cache=True)\ndef h():\n"
                "    return g() * 3.0\n")
PROBE = '''import json, sys
import spark_fr
numba_at_import = "numba" in sys.modules
from spark_fr import caller
from tests import uses
from spark_fr.runtime import checkout_cache
print(json.dumps({"f": caller.f(), "h": uses.h(), "numba_at_import": numba_at_import,
                  "hits": sum(caller.f.stats.cache_hits.values()) + sum(uses.h.stats.cache_hits.values()),
                  "folder": checkout_cache.cache_folder()}))
'''


def checkout(parent: Path, rule: bool = True) -> Path:
    """A checkout ``parent``: spark_fr with the cache rule (``rule`` False: a package that never installs it),
    ``callee.py`` and ``caller.py``, and ``tests/uses.py``."""
    pkg = parent / "spark_fr"
    (pkg / "runtime").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .runtime import numba_cache\nnumba_cache.install()\n" if rule else "")
    (pkg / "runtime" / "__init__.py").write_text("")
    for module in ("numba_cache.py", "checkout_cache.py"):
        shutil.copy(ROOT / "spark_fr" / "runtime" / module, pkg / "runtime" / module)
    (pkg / "callee.py").write_text(CALLEE)
    (pkg / "caller.py").write_text(CALLER)
    (parent / "tests").mkdir()
    (parent / "tests" / "__init__.py").write_text("")
    (parent / "tests" / "uses.py").write_text(TESTS_KERNEL)
    return parent


def probe(root: Path, cache: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "NUMBA"))}
    run = subprocess.run([sys.executable, "-c", PROBE], env=dict(env, PYTHONPATH=str(root), NUMBA_CACHE_DIR=str(cache)),
                         cwd=root, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def edit_callee(root: Path, value: float) -> None:
    (root / "spark_fr" / "callee.py").write_text(CALLEE.replace("return 1.0", f"return {value}"))


def test_an_edited_callee_recompiles_its_callers(tmp_path):
    root, cache = checkout(tmp_path / "checkout"), tmp_path / "cache"
    first, again = probe(root, cache), probe(root, cache)
    assert (first["f"], first["h"], first["hits"]) == (2.0, 3.0, 0)
    assert (again["f"], again["h"], again["hits"]) == (2.0, 3.0, 2)  # unchanged sources: both loaded from the cache
    assert not first["numba_at_import"]  # a checkout's `import spark_fr` stays without numba
    folder = Path(first["folder"])
    assert folder.parent == cache and folder.name.startswith("spark_fr-") and list(folder.rglob("caller.f-*.nbi"))
    assert not list((root / "spark_fr").rglob("*.nbi"))  # spark_fr's kernels: not numba's in-tree cache
    edit_callee(root, 10.0)
    edited, edited_again = probe(root, cache), probe(root, cache)
    assert (edited["f"], edited["h"], edited["hits"]) == (11.0, 30.0, 0)  # compiled again, with the new callee
    assert edited_again["hits"] == 2 and edited_again["f"] == 11.0 and edited["folder"] != first["folder"]


def test_numba_alone_keeps_the_callers_old_code(tmp_path):
    """Why the rule exists: numba checks a kernel against its own file only."""
    root, cache = checkout(tmp_path / "checkout", rule=False), tmp_path / "cache"
    assert probe(root, cache)["f"] == 2.0
    edit_callee(root, 10.0)
    stale = probe(root, cache)
    assert stale["f"] == 2.0 and stale["hits"] >= 1  # the caller's cached code still holds the old callee


def test_a_checkout_keeps_its_newest_folders_and_removes_only_its_own_and_those_of_removed_checkouts(tmp_path):
    from spark_fr.runtime.checkout_cache import KEEP, MARKER

    root, cache = checkout(tmp_path / "checkout"), tmp_path / "cache"
    cache.mkdir()
    foreign = cache / "spark_fr-0123456789ab"  # not made by the rule (no marker): a wheel's, or anybody's
    (foreign / "pct").mkdir(parents=True)
    other = cache / "spark_fr-ba9876543210"  # another checkout's
    other.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (other / MARKER).write_text(json.dumps({"checkout": str(tmp_path / "elsewhere"), "created": 0}))
    gone = cache / "spark_fr-00000000000a"  # a checkout's that was removed since (a CI clone, a worktree)
    gone.mkdir()
    (gone / MARKER).write_text(json.dumps({"checkout": str(tmp_path / "removed"), "host": socket.gethostname(),
                                           "created": 0}))
    remote = cache / "spark_fr-00000000000b"  # a path absent here, of another machine sharing the cache folder
    remote.mkdir()
    (remote / MARKER).write_text(json.dumps({"checkout": str(tmp_path / "removed"), "host": "another-machine",
                                             "created": 0}))
    folders = []
    for value in range(KEEP + 2):
        edit_callee(root, float(value))
        folders.append(probe(root, cache)["folder"])
        os.utime(Path(folders[-1]) / MARKER, (1000.0 + value, 1000.0 + value))  # distinct times, in order
    assert len(set(folders)) == KEEP + 2
    left = sorted(p.name for p in cache.glob("spark_fr-*"))  # (the tests' kernels: numba's own folder beside)
    assert left == sorted([foreign.name, other.name, remote.name] + [Path(f).name for f in folders[-KEEP:]])
