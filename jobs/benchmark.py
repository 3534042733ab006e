"""Benchmark spark_fr against its peers: ``python jobs/benchmark.py [--suite NAME] [options]``.

Every suite runs spark_fr and its peers as separate commands, alternating them, and reports median wall
times, ratios ``peer / spark_fr`` and peak memory (reported, never asserted); ``--json PATH`` keeps
everything. The suites, their peers (scripts in ``jobs/peers/``) and the measuring live in
``jobs/benchmarks/``; a suite is a module there plus a line in ``SUITES`` of ``jobs/benchmark.py``.
The shared options (``--rows``, ``--features``, ``--peers``, ...) take the chosen suite's defaults.
``--check`` runs the harness's own tests instead (``python -m pytest -m peers``: each suite end to end at a tiny
size with its real peers, every peer a separate measured process; a few minutes, not in the default test run).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # jobs/, also when this file is loaded by path
ROOT = Path(__file__).resolve().parents[1]
#: the pytest marker of the harness's own tests (tests/conftest.py leaves them out of the default run)
MARKER = "peers"

from benchmarks import arff, ensemble, hmlc, relational, relief, reliefe, scaling, tall, wide  # noqa: E402

# name -> suite module (SUMMARY, add_arguments, check_arguments, run); the first is the default
SUITES = {"ensemble": ensemble, "relief": relief, "arff": arff, "tall": tall, "wide": wide,
          "scaling": scaling, "hmlc": hmlc, "relational": relational, "reliefe": reliefe}


def parse_args(argv=None) -> argparse.Namespace:
    """Parse the command line: the shared options, then each suite's own.

    Parameters
    ----------
    argv : list of str, optional
        Default ``sys.argv[1:]``.

    Returns
    -------
    argparse.Namespace
        Checked by the chosen suite, which fills in its defaults of the shared options and parses its comma
        lists into lists.
    """
    default = next(iter(SUITES))
    description = "\n".join([__doc__, *(mod.__doc__ for mod in SUITES.values())])
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", choices=tuple(SUITES), default=default,
                    help="; ".join(f"{name}: {mod.SUMMARY}" + (" (default)" if name == default else "")
                                   for name, mod in SUITES.items()))
    per_suite = " (default: the suite's)"
    ap.add_argument("--rows", type=int, help="rows of the synthetic data" + per_suite)
    ap.add_argument("--features", type=int, help="features of the synthetic data" + per_suite)
    ap.add_argument("--targets", type=int, help="targets of the synthetic data" + per_suite)
    ap.add_argument("--trees", type=int, help="trees per ensemble" + per_suite)
    ap.add_argument("--repeats", type=int, help="rounds of alternating commands" + per_suite)
    ap.add_argument("--peers", help="comma list of the suite's peers (see its description)" + per_suite)
    ap.add_argument("--workdir", default="/tmp/spark_fr_benchmark", help="data and per-run outputs")
    ap.add_argument("--json", help="write the results as JSON to this path")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per run before it is killed")
    ap.add_argument("--max-memory-gb", type=float,
                    help="peak RSS (GB) of a run's process tree above which it is killed and reported as out of memory, "
                         "a line of the table (tall and wide suites; default 3/4 of the machine's memory)")
    ap.add_argument("--check", action="store_true",
                    help=f"run the benchmark's own tests instead of a suite (python -m pytest -m {MARKER}: every suite "
                         "end to end at a tiny size with its real peers; a few minutes)")
    for mod in SUITES.values():
        mod.add_arguments(ap)
    args = ap.parse_args(argv)
    SUITES[args.suite].check_arguments(args, ap.error)
    return args


def check_command() -> list:
    """The command that runs the harness's own tests: pytest on the project's tests, the ``peers`` marker only.

    Returns
    -------
    list of str
        ``python -m pytest -q -m peers tests``, run from the project's root.
    """
    return [sys.executable, "-m", "pytest", "-q", "-m", MARKER, str(ROOT / "tests")]


def main(argv=None) -> int:
    """Run the chosen suite; its exit code (0, or 1 if a peer failed in every round). ``--check``: pytest's."""
    args = parse_args(argv)
    if args.check:
        if not (ROOT / "tests" / "conftest.py").is_file():
            print(f"error: --check needs the project's tests, not found under {ROOT / 'tests'}", file=sys.stderr)
            return 2
        return subprocess.run(check_command(), cwd=str(ROOT)).returncode
    return SUITES[args.suite].run(args)


if __name__ == "__main__":
    sys.exit(main())
