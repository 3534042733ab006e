"""The code's layout: every module of spark_fr is on its package's floor, and imports, directly or through other
modules, only modules of its own package and of packages on lower floors (never sideways, never upwards, never in
a cycle); kernels know nothing of Spark; nothing outside spark_fr.tasks names a target type in an `if`; functions,
modules and kernels stay within their sizes.

The checks are functions of a package's folder and a table of floors, so that they are tested here on small
synthetic packages too: a planted upward import, a module on no floor and a cycle each fail with one line.
"""
import ast
import re
from pathlib import Path

import pytest

from tests.paths import ROOT

PKG = ROOT / "spark_fr"

#: One floor per package and per top-level module: all of a package's modules share it. A module imports modules
#: of its own package and of lower floors only, directly or through others. A module that no entry holds (a new
#: top-level module or package) is on no floor and fails the test until it is given one here; "spark_fr" is the
#: package's own __init__ (its public names) only, not a floor for its modules.
FLOORS = {
    # no spark_fr import: one-line input errors, score records, scaling, label hierarchies, the version
    "spark_fr.errors": 0, "spark_fr.results": 0, "spark_fr.scaling": 0, "spark_fr.hierarchy": 0,
    "spark_fr.version": 0,
    # the ground floor: seeded hashing, exact sums, groups, SIGTERM, sessions and engines, progress, logs, warm-ups;
    # the notebooks' stand-ins
    "spark_fr.runtime": 1, "spark_fr.notebook": 1,
    "spark_fr.tasks": 2,  # the target types
    "spark_fr.options": 3, "spark_fr.data": 3, "spark_fr.pct": 3,  # the option table; column blocks; tree kernels
    "spark_fr.io": 4,  # readers, the publication layer, paths and file systems
    "spark_fr.ensemble": 5, "spark_fr.relief": 5,  # the methods
    "spark_fr.runner": 5,  # the command lines' runner: options, config (io's driver_file), session, exit codes
    "spark_fr.ranking": 6,  # the result table and its plot
    "spark_fr.api": 7,  # spark_fr.rank
    "spark_fr.relational": 8, "spark_fr.evaluation": 8, "spark_fr.estimator": 8,  # above spark_fr.rank
    "spark_fr.sklearn": 8,  # the scikit-learn selector (above spark_fr.rank)
    "spark_fr.cli": 9,  # jobs/rank.py's command line (relational schemas included)
    "spark_fr": 10,
}
#: numba kernels: no Spark
KERNELS = ("spark_fr.pct", "spark_fr.tasks", "spark_fr.runtime.rng", "spark_fr.runtime.exact",
           "spark_fr.relief.distances", "spark_fr.relief.neighbours", "spark_fr.relief.update",
           "spark_fr.relief.shard", "spark_fr.relief.neighbourhood",
           "spark_fr.relief.dense", "spark_fr.relief.candidates", "spark_fr.relief.embedded",
           "spark_fr.relief.sparse_update", "spark_fr.relief.accumulators", "spark_fr.relief.adaptive_k",
           "spark_fr.relational.local_kernels",
           "spark_fr.evaluation.knn_kernel")


# ----- the import graph of a package's folder ------------------------------------------------------------------
def modules_of(pkg: Path) -> dict:
    """``{module name: path}`` of every module under the folder ``pkg`` (a package's __init__ under its name)."""
    out = {}
    for path in sorted(pkg.rglob("*.py")):
        parts = list(path.relative_to(pkg.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def imports_of(name: str, modules: dict) -> set:
    """The modules of ``modules`` that module ``name`` imports (anywhere in it, lazy imports included)."""
    path = modules[name]
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    top = name.split(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == top}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != top:
                continue
            for a in node.names:  # `from . import tasks` imports the module spark_fr.tasks
                sub = f"{target}.{a.name}"
                out.add(sub if sub in modules else target)
    return {m for m in out if m in modules and m != name}


def import_graph(modules: dict) -> dict:
    """``{module: the modules it imports}``."""
    return {m: imports_of(m, modules) for m in modules}


def place(name: str, floors: dict):
    """The entry of ``floors`` that holds module ``name``: its own (a top-level module, the package's __init__) or
    its top-level package's; None when neither has one (no catch-all: the root holds only itself)."""
    for key in (name, ".".join(name.split(".")[:2])):
        if key in floors:
            return key
    return None


def check_placed(modules, floors: dict) -> None:
    """Every module is on a floor; else one line naming the modules on none."""
    missing = sorted(m for m in modules if place(m, floors) is None)
    if missing:
        raise AssertionError(f"on no floor: {', '.join(missing)} (give the package or top-level module a floor in "
                             f"FLOORS, tests/test_layout.py)")


def downward_violations(name: str, graph: dict, floors: dict) -> list:
    """What module ``name`` imports, directly or through other modules, that is neither of its own package nor on a
    lower floor: one text per module reached, with the chain of imports that reaches it."""
    mine = place(name, floors)
    if mine is None:
        return []
    chains, queue, out = {name: [name]}, [name], []
    while queue:
        m = queue.pop(0)
        for t in sorted(graph[m]):
            if t in chains:
                continue
            chains[t] = chains[m] + [t]
            queue.append(t)
            theirs = place(t, floors)
            if theirs is None or theirs == mine or floors[theirs] < floors[mine]:
                continue
            through = f" through {' -> '.join(chains[t])}" if len(chains[t]) > 2 else ""
            out.append(f"{name} (floor {floors[mine]}) imports {t} (floor {floors[theirs]}){through}")
    return out


def import_cycle(graph: dict, packages: set):
    """A chain of imports that comes back to its start, or None. A module's import of its own package's __init__
    (its public names) is not followed, nor of the root package, which imports everything."""
    state = {}

    def visit(m, stack):
        state[m] = 1
        for t in sorted(graph[m]):
            if t in packages and m.startswith(t + "."):
                continue
            if state.get(t) == 1:
                return stack + [m, t]
            if t not in state:
                found = visit(t, stack + [m])
                if found:
                    return found
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m, [])
            if found:
                return found[found.index(found[-1]):]
    return None


def check_downwards(name: str, graph: dict, floors: dict) -> None:
    """Module ``name`` imports only its package and lower floors, directly or through others; else one line."""
    bad = downward_violations(name, graph, floors)
    if bad:
        raise AssertionError("; ".join(bad))


def check_no_cycle(graph: dict, packages: set) -> None:
    """No chain of imports comes back to its start; else one line naming the chain."""
    cycle = import_cycle(graph, packages)
    if cycle:
        raise AssertionError("import cycle: " + " -> ".join(cycle))


MODULES = modules_of(PKG)
GRAPH = import_graph(MODULES)
PACKAGES = {m for m, p in MODULES.items() if p.name == "__init__.py"}


# ----- the package's floors --------------------------------------------------------------------------------------
def test_every_module_is_on_a_floor():
    check_placed(MODULES, FLOORS)


def test_one_floor_per_package():
    """FLOORS names top-level modules and packages that exist, each with one whole floor."""
    tops = {".".join(m.split(".")[:2]) for m in MODULES}
    odd = sorted(k for k in FLOORS if k not in tops or not isinstance(FLOORS[k], int))
    assert not odd, f"FLOORS entries that are not a top-level module or package with a whole floor: {odd}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_run_downwards_and_never_sideways(name):
    check_downwards(name, GRAPH, FLOORS)


def test_no_import_cycle():
    check_no_cycle(GRAPH, PACKAGES)


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
OVER_LIMIT = {}


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


# ----- the checks on small synthetic packages (written here, parsed, never imported) ---------------------------
SYNTHETIC_FLOORS = {"spark_fr.low": 0, "spark_fr.side": 0, "spark_fr.mid": 1, "spark_fr.top": 2, "spark_fr": 3}
#: a package whose imports run downwards: relative, absolute, from-package and lazy imports, a package's __init__
#: re-exporting a module's name, the root importing the top
LAYERED = {
    "__init__.py": "from .top.run import go\n",
    "low/__init__.py": "", "low/base.py": "import numpy as np\n",
    "side/__init__.py": "", "side/other.py": "",
    "mid/__init__.py": "from .work import step\n", "mid/work.py": "from ..low import base\nfrom . import more\n",
    "mid/more.py": "from spark_fr.low.base import np\n",
    "top/__init__.py": "", "top/run.py": "from spark_fr.mid import step\n\n\ndef go():\n    import spark_fr.top.plot\n",
    "top/plot.py": "",
}


def synthetic(tmp_path, changes: dict) -> tuple:
    """``LAYERED`` with ``changes`` (``{path in the package: source}``) written under ``tmp_path`` as a package
    ``spark_fr``: its modules, import graph and packages."""
    for rel, text in {**LAYERED, **changes}.items():
        path = tmp_path / "spark_fr" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    modules = modules_of(tmp_path / "spark_fr")
    return modules, import_graph(modules), {m for m, p in modules.items() if p.name == "__init__.py"}


def failures(check, *args) -> str | None:
    """What ``check(*args)`` fails with (one line), None when it passes."""
    try:
        check(*args)
    except AssertionError as err:
        assert "\n" not in str(err), str(err)
        return str(err)
    return None


def test_a_layered_package_passes_every_check(tmp_path):
    modules, graph, packages = synthetic(tmp_path, {})
    assert graph["spark_fr.top.run"] == {"spark_fr.mid", "spark_fr.top.plot"}  # a lazy import is an import
    assert failures(check_placed, modules, SYNTHETIC_FLOORS) is None
    assert [failures(check_downwards, m, graph, SYNTHETIC_FLOORS) for m in sorted(modules)] == [None] * len(modules)
    assert failures(check_no_cycle, graph, packages) is None


def test_a_planted_upward_import_fails_in_every_module_it_reaches_naming_how(tmp_path):
    """low.base imports top.plot, lazily: low.base fails, and so does every module of mid, which imports low.base
    directly (work, more) or through another (mid's __init__ through mid.work). top.run reaches top.plot too, but in
    its own package, and the root is above everything."""
    modules, graph, _ = synthetic(tmp_path, {"low/base.py": "def f():\n    from ..top import plot\n"})
    failed = {m: failures(check_downwards, m, graph, SYNTHETIC_FLOORS) for m in sorted(modules)}
    assert {m: f for m, f in failed.items() if f} == {
        "spark_fr.low.base": "spark_fr.low.base (floor 0) imports spark_fr.top.plot (floor 2)",
        "spark_fr.mid": "spark_fr.mid (floor 1) imports spark_fr.top.plot (floor 2) through "
                        "spark_fr.mid -> spark_fr.mid.work -> spark_fr.low.base -> spark_fr.top.plot",
        "spark_fr.mid.more": "spark_fr.mid.more (floor 1) imports spark_fr.top.plot (floor 2) through "
                             "spark_fr.mid.more -> spark_fr.low.base -> spark_fr.top.plot",
        "spark_fr.mid.work": "spark_fr.mid.work (floor 1) imports spark_fr.top.plot (floor 2) through "
                             "spark_fr.mid.work -> spark_fr.low.base -> spark_fr.top.plot",
    }


def test_an_import_sideways_fails(tmp_path):
    """Two packages on one floor: neither may import the other."""
    _, graph, _ = synthetic(tmp_path, {"low/base.py": "import spark_fr.side.other\n"})
    assert failures(check_downwards, "spark_fr.low.base", graph, SYNTHETIC_FLOORS) == \
        "spark_fr.low.base (floor 0) imports spark_fr.side.other (floor 0)"


@pytest.mark.parametrize("new", ["extra.py", "newpkg/__init__.py", "newpkg/tool.py"])
def test_a_module_on_no_floor_fails_in_one_line_naming_it(tmp_path, new):
    """No catch-all: a new top-level module or package is on no floor (the root's entry holds the root only)."""
    modules, _, _ = synthetic(tmp_path, {new: ""})
    name = "spark_fr." + new.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    assert failures(check_placed, modules, SYNTHETIC_FLOORS) == (
        f"on no floor: {name} (give the package or top-level module a floor in FLOORS, tests/test_layout.py)")


def test_a_cycle_fails_naming_it(tmp_path):
    """A cycle inside one package, which the floors cannot see: mid.more imports mid.work, which imports mid.more."""
    modules, graph, packages = synthetic(tmp_path, {"mid/more.py": "from .work import step\n"})
    assert [failures(check_downwards, m, graph, SYNTHETIC_FLOORS) for m in sorted(modules)] == [None] * len(modules)
    assert failures(check_no_cycle, graph, packages) == \
        "import cycle: spark_fr.mid.work -> spark_fr.mid.more -> spark_fr.mid.work"
