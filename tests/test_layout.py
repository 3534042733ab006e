"""The code's layout: imports run downwards only (floors), never sideways between packages, and never in a
cycle; kernels know nothing of Spark; nothing outside spark_fr.tasks names a target type in an `if`."""
import ast
import re
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "spark_fr"

#: floor of each part of the package (the longest matching prefix wins); a module may import its own part
#: and parts on lower floors only
FLOORS = {
    "spark_fr.errors": 0, "spark_fr.scaling": 0, "spark_fr.results": 0, "spark_fr.hierarchy": 0, "spark_fr.version": 0,
    "spark_fr.runtime.rng": 0, "spark_fr.runtime.exact": 0, "spark_fr.runtime.groups": 0,
    "spark_fr.runtime.signals": 0, "spark_fr.runtime.numba_cache": 0, "spark_fr.runtime.delta": 0,
    "spark_fr.runtime.warmups": 0,
    "spark_fr.tasks": 1,
    "spark_fr.options": 2, "spark_fr.runtime.progress": 2, "spark_fr.runtime.session": 2,
    "spark_fr.runtime.logs": 2, "spark_fr.notebook": 2,
    "spark_fr.runtime.engine": 2.5, "spark_fr.runtime.spark": 3, "spark_fr.pct": 3, "spark_fr.data": 3,
    "spark_fr.io": 4,
    "spark_fr.runtime.runner": 4.5,  # the command lines' runner: options, config (io's driver_file), session, exits
    "spark_fr.ensemble": 5, "spark_fr.relief": 5,
    "spark_fr.ranking": 6,
    "spark_fr.evaluation.similarity": 6.2,  # FJI
    "spark_fr.evaluation.drift": 6.3,  # drift between runs of a rankings table (io/ranking_runs, the ranking's plot)
    "spark_fr.evaluation.drift_job": 6.4,
    "spark_fr.relational": 6.5,  # schema, Spark feature generation, the roll-up (uses data/, io/, ranking)
    "spark_fr.api": 7,
    "spark_fr.relational.rank": 7.5,  # rank_relational: generation, then spark_fr.api's run
    "spark_fr.evaluation": 7.6,  # the protocols: spark_fr.rank on every split's training part, weighted kNN

    "spark_fr.cli": 8, "spark_fr.estimator": 8,
    "spark_fr.evaluation.job": 8.5,  # jobs/evaluate.py's options and work (run by spark_fr.runtime.runner)
    "spark_fr": 9,
}
#: numba kernels: no Spark
KERNELS = ("spark_fr.pct", "spark_fr.tasks", "spark_fr.runtime.rng", "spark_fr.runtime.exact",
           "spark_fr.relief.distances", "spark_fr.relief.neighbours", "spark_fr.relief.update",
           "spark_fr.relief.shard", "spark_fr.relief.neighbourhood",
           "spark_fr.relief.dense", "spark_fr.relief.candidates", "spark_fr.relief.embedded",
           "spark_fr.relief.sparse_update", "spark_fr.relief.accumulators", "spark_fr.relief.adaptive_k",
           "spark_fr.relational.local_kernels",
           "spark_fr.evaluation.knn_kernel")


def module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def part(name: str) -> str:
    return max((k for k in FLOORS if name == k or name.startswith(k + ".")), key=len)


def imports(name: str) -> set:
    """The spark_fr modules a module imports (anywhere in it, lazy imports included)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("spark_fr")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("spark_fr"):
                continue
            for a in node.names:  # `from . import tasks` imports the module spark_fr.tasks
                sub = f"{target}.{a.name}"
                out.add(sub if sub in MODULES else target)
    return {m for m in out if m in MODULES and m != name}


GRAPH = {m: imports(m) for m in MODULES}


def test_every_module_has_a_floor():
    assert all(part(m) for m in MODULES)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_run_downwards_and_never_sideways(name):
    mine = part(name)
    for target in GRAPH[name]:
        theirs = part(target)
        if name == "spark_fr" or theirs == mine:
            continue
        assert FLOORS[theirs] < FLOORS[mine], f"{name} (floor {FLOORS[mine]}) imports {target} (floor {FLOORS[theirs]})"


def test_no_import_cycle():
    state = {}

    def visit(m, stack):
        state[m] = 1
        for t in GRAPH[m]:
            if t == "spark_fr" or t.startswith("spark_fr.") and MODULES[t].name == "__init__.py" and m.startswith(t):
                continue
            if state.get(t) == 1:
                raise AssertionError(" -> ".join(stack + [m, t]))
            if t not in state:
                visit(t, stack + [m])
        state[m] = 2

    for m in GRAPH:
        if m not in state:
            visit(m, [])


@pytest.mark.parametrize("name", [m for m in sorted(MODULES) if m.startswith(KERNELS)])
def test_kernels_know_nothing_of_spark(name):
    text = MODULES[name].read_text()
    assert not re.search(r"^\s*(import pyspark|from pyspark)", text, re.M), name


TASK_WORDS = r"['\"](classification|regression|mtr|mlc|hmlc|unsupervised)['\"]"


@pytest.mark.parametrize("name", [m for m in sorted(MODULES) if not m.startswith("spark_fr.tasks")])
def test_only_the_target_types_branch_on_a_task_name(name):
    for no, line in enumerate(MODULES[name].read_text().splitlines(), 1):
        if re.search(r"\b(if|elif)\b[^#]*" + TASK_WORDS, line) or re.search(TASK_WORDS + r"\s+(==|!=|in)\b", line):
            raise AssertionError(f"{name}:{no}: {line.strip()}")


# ----- sizes: a unit does one thing ----------------------------------------------------------------------------
#: the limits the code keeps (issue "Write each algorithm once")
MAX_FUNCTION_LINES, MAX_MODULE_LINES, MAX_KERNEL_PARAMETERS = 100, 600, 8
#: what exceeds a limit today, with its size today: a ratchet, never a catch-all. An entry may only shrink; one
#: that no longer exceeds its limit must be removed (the test says so), and nothing new may join the list.
OVER_LIMIT = {
    # module lines
    "spark_fr/pct/grow.py": 966,
    # function lines
    "spark_fr/pct/grow.py:grow_tree": 128, "spark_fr/pct/grow_sparse.py:grow_tree_sparse": 129,
    # numba kernels' parameters
    **{f"spark_fr/pct/grow.py:{k} parameters": n for k, n in (
        ("_split_at_random_threshold", 22), ("_best_subset", 22), ("_subset_random", 21), ("_children_reduction", 21),
        ("_subset_greedy", 20), ("_evaluate_partition", 17), ("_scan_numeric_missing", 16), ("_add_column_gain", 14),
        ("_split_rows", 13), ("_known_totals", 12), ("_histogram", 12), ("_record_split", 12),
        ("apply_tree_permuted", 12), ("_add_bin", 11), ("_keep_better", 11), ("_push_children", 11),
        ("_scan_numeric_complete", 10), ("rows_by_path_feature", 10), ("_split_value", 9), ("apply_tree", 9))},
    **{f"spark_fr/pct/grow_sparse.py:{k} parameters": n for k, n in (
        ("_random_numeric", 23), ("_sweep_numeric", 19), ("_sparse_children_reduction", 18),
        ("_sparse_column_gain", 13), ("_known_sums", 12), ("_bucket_rows", 11), ("_missing_block", 11),
        ("_compact_histogram", 11), ("_sparse_totals", 10), ("_two_sided", 10), ("_side_sums", 9))},
    "spark_fr/pct/node_rows.py:split_fractional parameters": 11, "spark_fr/pct/node_rows.py:partition parameters": 10,
    "spark_fr/pct/route_fractional.py:route_fractional parameters": 11,
    "spark_fr/pct/route_fractional.py:rows_reaching_feature parameters": 9,
}


def _is_kernel(node) -> bool:
    """A function compiled by numba (``@njit``, ``@njit(...)``, ``@numba.njit``, ``@jit``)."""
    for d in node.decorator_list:
        f = d.func if isinstance(d, ast.Call) else d
        if (getattr(f, "id", None) or getattr(f, "attr", None)) in ("njit", "jit"):
            return True
    return False


def _sizes() -> dict:
    """``{place: (size, limit)}`` of every module, function and numba kernel of the package."""
    out = {}
    for path in MODULES.values():
        rel = path.relative_to(PKG.parent).as_posix()
        text = path.read_text()
        out[rel] = (len(text.splitlines()), MAX_MODULE_LINES)
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out[f"{rel}:{node.name}"] = (node.end_lineno - node.lineno + 1, MAX_FUNCTION_LINES)
                if _is_kernel(node):
                    a = node.args
                    out[f"{rel}:{node.name} parameters"] = (len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs),
                                                            MAX_KERNEL_PARAMETERS)
    return out


def test_functions_modules_and_kernels_stay_within_their_limits():
    """No function longer than 100 lines, no module longer than 600, no numba kernel with more than 8 parameters
    (a kernel takes named state objects), except the places listed in OVER_LIMIT, which may only shrink."""
    sizes = _sizes()
    over = {place: size for place, (size, limit) in sizes.items() if size > limit}
    new = sorted(f"{p} ({n})" for p, n in over.items() if p not in OVER_LIMIT)
    grown = sorted(f"{p} ({OVER_LIMIT[p]} -> {n})" for p, n in over.items() if p in OVER_LIMIT and n > OVER_LIMIT[p])
    fixed = sorted(p for p in OVER_LIMIT if p not in over)
    assert not new, f"over the limits: {', '.join(new)}"
    assert not grown, f"grown past their size in OVER_LIMIT: {', '.join(grown)}"
    assert not fixed, f"within the limits now: remove from OVER_LIMIT: {', '.join(fixed)}"
