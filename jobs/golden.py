"""Golden rankings: record the exact output of a fixed set of runs, or check the code against the recording.

Used to prove that a change which should not change results (a refactoring, a faster kernel that keeps
the arithmetic) leaves every ranking bit-identical::

    python jobs/golden.py record                     # every case into tests/golden/rankings.json
    python jobs/golden.py record --cases a,b         # those cases again (the others kept)
    python jobs/golden.py check                      # = pytest tests/end_to_end/test_golden.py
    python jobs/golden.py check /tmp/other.json      # against another recording
    python jobs/golden.py list                       # the cases and what each covers

The cases, how one runs and how its result is fingerprinted live in tests/golden/golden_cases.py; the runs
are those of tests/end_to_end/test_golden.py, which this script runs with pytest (the suite's session, the suite's
Spark Connect worker for the Connect case), in record mode (SPARK_FR_GOLDEN_RECORD: write, compare nothing)
or against a recording (SPARK_FR_GOLDEN). So what is recorded is exactly what the test checks.

Bits can differ between CPUs (vectorised sums), so record and check on one machine.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the test suite is the package ``tests``

from tests.golden import golden_cases as G  # noqa: E402


def pytest_command(names: list) -> list:
    """``python -m pytest`` on the test of each case in ``names``, in this order."""
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            *(f"tests/end_to_end/test_golden.py::test_golden_ranking[{n}]" for n in names)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("action", choices=("record", "check", "list"))
    ap.add_argument("path", nargs="?", default=str(G.RECORDED), help="golden JSON file (default: %(default)s)")
    ap.add_argument("--cases", help="comma list of case names (default: all)")
    args = ap.parse_args(argv)
    names = [n.strip() for n in args.cases.split(",")] if args.cases else list(G.CASES)
    unknown = [n for n in names if n not in G.CASES]
    if unknown:
        print(f"error: unknown golden case(s) {', '.join(unknown)} (python jobs/golden.py list)", file=sys.stderr)
        return 2
    if args.action == "list":
        for name in names:
            case = G.CASES[name]
            print(f"{name:42s} {case.covers} [{case.where}, {case.session}]")
        return 0
    env = dict(os.environ)
    path = str(Path(args.path).resolve())
    env["SPARK_FR_GOLDEN_RECORD" if args.action == "record" else "SPARK_FR_GOLDEN"] = path
    command = pytest_command(names)
    if args.action == "check" and not args.cases:
        command.append("tests/end_to_end/test_golden.py::test_layouts_equal_in_the_recording")
    code = subprocess.run(command, cwd=ROOT, env=env).returncode
    if args.action == "record" and code == 0:
        print(f"recorded {len(names)} case(s) in {path}")
    return code


if __name__ == "__main__":
    sys.exit(main())
