"""Compile spark_fr's numba kernels once, before the suite's two workers start, when its sources have no cache yet.

Sketch
------
A fresh clone (CI's) has no numba cache: each pytest-xdist worker compiles every kernel its first tests meet, and
both meet the trees' and Relief's (the first tree test of a worker took 67 s, the first Relief test 30 s, on a
quiet 2-core machine), so most kernels compile twice, once per worker, at the same time. Here the controlling
process runs the methods' warm-ups (spark_fr.runtime.warmups, every option value, as ``jobs/package.py`` does for
the shipped cache) in two processes side by side before the workers start, each into the checkout's own numba
cache; the workers then load the kernels from it. Only a whole run (no paths, ``-k`` or ``-m``) of a checkout
without a cache does this, so a developer's part of the suite starts at once; ``SPARK_FR_TEST_PREWARM=0`` turns it
off. A warm-up that fails is reported and ignored: the workers compile what they need, as before.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ENV = "SPARK_FR_TEST_PREWARM"
#: the methods' warm-ups in two groups, one process each (ensemble's with its label-sparse trees: 62 s alone, Relief's
#: 47 s; measured 2026-11-29, load 3)
GROUPS = (("ensemble", "boosting"), ("relief", "reliefe"))
#: every warm-up with every value of the options it takes (spark_fr.api.warm_up_all, as jobs/package.py's WARM_UP)
SCRIPT = """
import sys
from spark_fr import api
api.warm_up_all(sys.argv[1].split(","))
"""


def cache_is_cold(root: Path) -> bool:
    """Whether the cache of the checkout at ``root``'s sources holds no compiled grow loop (the cache folder of
    spark_fr.runtime.checkout_cache: one per state of the sources, so after an edit it is cold)."""
    from spark_fr.runtime.numba_cache import FolderSources, cache_root

    return not any(Path(cache_root(FolderSources(str(root)))).rglob("grow.grow_tree-*.nbi"))


def prewarm(root: Path) -> str:
    """Run the warm-ups of :data:`GROUPS` side by side with this Python from ``root``; returns a one-line summary."""
    start = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    procs = [subprocess.Popen([sys.executable, "-c", SCRIPT, ",".join(group)], cwd=str(root), env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for group in GROUPS]
    failed = []
    for group, proc in zip(GROUPS, procs):
        _, err = proc.communicate()
        if proc.returncode != 0:
            failed.append(f"{','.join(group)}: {(err.strip().splitlines() or ['exit ' + str(proc.returncode)])[-1]}")
    seconds = time.perf_counter() - start
    if failed:
        return f"numba warm-ups before the workers: {seconds:.0f} s, failed ({'; '.join(failed)}): the workers compile"
    return f"numba warm-ups before the workers ({', '.join(','.join(g) for g in GROUPS)}): {seconds:.0f} s"


def whole_run(config) -> bool:
    """The controlling process of a whole run (no paths, ``-k`` or ``-m`` given)."""
    whole = config.args_source == config.ArgsSource.TESTPATHS
    return not hasattr(config, "workerinput") and whole and not config.option.keyword and not config.option.markexpr


def wanted(config, root: Path) -> bool:
    """A whole run of a checkout without a cache, in the controlling process, not turned off by :data:`ENV`."""
    return os.environ.get(ENV, "1") != "0" and whole_run(config) and cache_is_cold(root)
