"""How the suite's modules are shared between its two pytest-xdist workers, and the record of their times.

Sketch
------
``--dist loadfile`` hands out whole modules (a module's fixtures are built once, on one worker); the modules that
use the Delta or Connect session process travel together as one unit, ``sessions`` (tests/conftest.py). xdist
hands the units out by their number of tests; a run then ends when the worker that got a long module last ends
it, while the other waits. Here the units go out longest first (the "longest processing time" rule, within 4/3
of the best split of two workers), by their time in the last recorded run, ``tests/module_durations.json``
(seconds per module: the sum of its tests' setup, call and teardown). A module the record does not know counts
:data:`UNKNOWN_SECONDS_PER_TEST` per test. ``SPARK_FR_TEST_DURATIONS=record python -m pytest -q`` rewrites the
record at the end of a whole run (docs/testing.md).
"""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

RECORD = Path(__file__).resolve().parent / "module_durations.json"
RECORD_ENV = "SPARK_FR_TEST_DURATIONS"
#: the seconds a test of a module missing from the record is taken to cost (the suite's median module: ~0.5 s/test)
UNKNOWN_SECONDS_PER_TEST = 0.5


def read_record(path: Path = RECORD) -> dict:
    """Seconds per test module from the last recorded run (empty when there is none or it is unreadable)."""
    try:
        return {str(k): float(v) for k, v in json.loads(path.read_text()).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def unit_seconds(nodeids, record: dict) -> float:
    """The estimated time of a unit of work: its modules' recorded seconds, :data:`UNKNOWN_SECONDS_PER_TEST` a
    test for a module the record does not hold.

    Parameters
    ----------
    nodeids : iterable of str
        The unit's test ids (``tests/x/test_y.py::test_z[...]``).
    record : dict
        Seconds per module (:func:`read_record`).
    """
    tests = defaultdict(int)
    for nodeid in nodeids:
        tests[nodeid.split("::", 1)[0]] += 1
    return sum(record[m] if m in record else n * UNKNOWN_SECONDS_PER_TEST for m, n in tests.items())


def longest_first(workqueue, record: dict) -> None:
    """Reorder xdist's work queue (an ordered ``{unit: {nodeid: done}}``) in place: the longest unit first.

    Ties keep their order (the sort is stable), so a run without a record keeps xdist's own order.
    """
    order = sorted(workqueue, key=lambda unit: -unit_seconds(workqueue[unit], record))
    for unit in order:
        workqueue.move_to_end(unit)


class DurationRecorder:
    """Sums each module's test reports (setup, call, teardown) and writes them as the record at the end.

    Used in the controlling process (with xdist the workers' reports reach it) when ``SPARK_FR_TEST_DURATIONS``
    is ``record``; only a whole run (no ``-k``, ``-m`` or paths) replaces the record, so a part cannot shrink it.
    """

    def __init__(self, path: Path = RECORD):
        self.path = path
        self.seconds = defaultdict(float)

    def add(self, report) -> None:
        """Count one test report's duration for its module."""
        self.seconds[report.nodeid.split("::", 1)[0]] += float(getattr(report, "duration", 0.0) or 0.0)

    def write(self) -> None:
        """Write the record, modules sorted, seconds rounded to 0.1 s."""
        self.path.write_text(json.dumps({m: round(s, 1) for m, s in sorted(self.seconds.items())}, indent=0) + "\n")
