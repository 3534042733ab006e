"""The grower's kernels and numba's reference counting (spark_fr/pct/jit.py): the split search's kernels are
compiled without it (``BORROWING``), so they must hand no array back, and growing trees of every kind must
free every array it allocates, once.

Numba itself refuses, in a kernel without reference counting, an allocation and the return of an array that
is not one of its arguments; the return of an argument is checked here (the caller would count a reference
it was never given)."""
import ast
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PCT = ROOT / "spark_fr" / "pct"

#: grows a tree of every kind (dense and label-sparse targets, learned and fractional missing values, best and
#: random splitters, numeric and nominal features, per-column gains) with numba's allocation counts on, twice,
#: and prints the counts the second round added (the first one compiles or loads the kernels)
GROW_EVERY_KIND = r'''
import gc, json
import numpy as np
from numba.core.runtime import rtsys
from spark_fr.pct.config import grow_config
from spark_fr.pct.tree import grow
from spark_fr.tasks.sparse_columns import SparseColumns


def every_kind():
    rng = np.random.default_rng(5)
    n, D, K = 300, 6, 12
    X = rng.integers(0, 40, (D, n)).astype(np.uint8)
    X[2] %= 5
    X[rng.random((D, n)) < 0.15] = 255
    nominal = np.arange(D) == 2
    lower = np.cumsum(rng.random((D, 255)) + 0.01, axis=1)
    upper = lower + 0.005
    C = ((rng.random((n, K)) < 0.2) | ((X[0] < 20)[:, None] & (rng.random((n, K)) < 0.6))).astype(float)
    dense = np.ascontiguousarray(C - C.mean(0))
    holes = dense.copy()
    holes[rng.random((n, K)) < 0.1] = np.nan
    sparse = SparseColumns.from_dense(C, np.ones(K))
    w = rng.poisson(1.0, n).astype(float)
    for Z in (dense, holes, sparse):
        for splitter in ("best", "random"):
            for missing in ("learned", "fractional"):
                config = grow_config(min_leaf=2.0, splitter=splitter, missing=missing, track_columns=True, seed=3)
                tree = grow(X, nominal, lower, upper, Z, w, config)
                assert tree.n_nodes > 3


every_kind()
gc.collect()
before = rtsys.get_allocation_stats()
every_kind()
gc.collect()
after = rtsys.get_allocation_stats()
print(json.dumps({k: getattr(after, k) - getattr(before, k) for k in ("alloc", "free", "mi_alloc", "mi_free")}))
'''


def _borrowing_kernels():
    """{module:function: its ast.FunctionDef} of the kernels of spark_fr/pct compiled with ``BORROWING``."""
    out = {}
    for path in sorted(PCT.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any(
                    isinstance(d, ast.Call) and any(k.arg is None and getattr(k.value, "id", None) == "BORROWING"
                                                    for k in d.keywords) for d in node.decorator_list):
                out[f"{path.stem}:{node.name}"] = node
    return out


def _returned_arguments(fn: ast.FunctionDef) -> list:
    """The array or tuple arguments of ``fn`` (those it indexes or reads a field of) that one of its ``return``
    statements hands back, alone or in a tuple."""
    params = {a.arg for a in fn.args.args}
    held = {n.value.id for n in ast.walk(fn) if isinstance(n, (ast.Subscript, ast.Attribute))
            and isinstance(n.value, ast.Name) and n.value.id in params}
    out = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and node.value is not None:
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            out += [v.id for v in values if isinstance(v, ast.Name) and v.id in held]
    return out


def test_no_borrowing_kernel_hands_an_argument_back():
    """A kernel without reference counting returns none of its array arguments: its caller would take the
    array for a new reference and free it."""
    kernels = _borrowing_kernels()
    assert {"search:best_split", "numeric:scan_numeric_missing", "histogram:fill_histogram",
            "sparse_targets:sparse_best_test", "node_rows:partition"} <= set(kernels)
    bad = {name: args for name, fn in kernels.items() if (args := _returned_arguments(fn))}
    assert not bad, bad


def test_the_check_finds_a_returned_argument():
    fn = ast.parse("def k(a, b, n):\n    if b[0]:\n        return a.x, n\n    return 1.0, b\n").body[0]
    assert _returned_arguments(fn) == ["b"]


def test_growing_trees_frees_every_allocation_once():
    """With numba's allocation counts on, growing trees of every kind (the second time: the kernels compiled
    or loaded) allocates as many arrays as it frees: no kernel leaks an array, or frees one twice."""
    env = dict(os.environ, NUMBA_NRT_STATS="1", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", GROW_EVERY_KIND], env=env, cwd=ROOT, capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stderr[-2000:]
    counts = json.loads(out.stdout.strip().splitlines()[-1])
    assert counts["alloc"] > 100, counts  # the trees' arrays and scratch
    assert counts["alloc"] == counts["free"] and counts["mi_alloc"] == counts["mi_free"], counts
