"""Golden rankings: every case of tests/golden/golden_cases.py run through jobs/rank.py under the suite's
session must give the recorded ranking bit for bit (rank, float.hex of importance and importance_std, params).

A change that should not change results (a refactoring, a faster kernel with the same arithmetic) keeps every
case identical; a change that means to change them records them again, on the same machine, and says why in
its commit::

    python jobs/golden.py record            # all cases into tests/golden/rankings.json
    python jobs/golden.py record --cases ens_hmlc_tree,relief_hmlc_tree

The recorder runs this module with SPARK_FR_GOLDEN_RECORD set to the file to write (the same runs, the same
session, nothing compared). SPARK_FR_GOLDEN names another recording to check against.
"""
import os
from pathlib import Path

import pytest

from tests.golden import golden_cases as G

RECORD = os.environ.get("SPARK_FR_GOLDEN_RECORD")
_recorded: dict = {}


@pytest.fixture(scope="module")
def golden():
    """The recording to check against ({} in record mode, which writes what the cases give at the end)."""
    if RECORD:
        yield {}
        if _recorded:
            G.save(_recorded, Path(RECORD))
        return
    path = Path(os.environ.get("SPARK_FR_GOLDEN") or G.RECORDED)
    assert path.is_file(), f"no golden recording at {path}: python jobs/golden.py record"
    yield G.load(path)


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """One folder for the module's runs: the synthetic inputs are written once, each case writes its output
    folder."""
    return tmp_path_factory.mktemp("golden")


@pytest.mark.parametrize("name", list(G.CASES))
def test_golden_ranking(name, golden, work, request):
    case = G.CASES[name]
    if case.session == "connect":
        now = request.getfixturevalue("connect").run(G.run_in_session, name, str(work))
    else:
        request.getfixturevalue("spark")
        now = G.run_case(name, work)
    if RECORD:
        _recorded[name] = now
        return
    assert name in golden, f"golden case {name} is not recorded: python jobs/golden.py record --cases {name}"
    message = G.compare(name, golden[name], now)
    if message:
        pytest.fail(message, pytrace=False)


@pytest.mark.parametrize("pair", G.LAYOUTS, ids=[f"{a}={b}" for a, b in G.LAYOUTS])
def test_layouts_equal_in_the_recording(pair):
    """Runs of the same data through two layouts or engines that give the same bits today (Spark tasks and
    the driver's threads, classic and Connect, broadcast and partitioned or tall, dense and sparse input, the
    two relational engines) stay equal in the recording: ranks, importances and spreads."""
    a, b = pair
    recording = _recorded if RECORD else G.load(Path(os.environ.get("SPARK_FR_GOLDEN") or G.RECORDED))
    if RECORD and not {a, b} <= set(recording):
        pytest.skip(f"record mode: {a} and {b} were not both run")
    worst = G.largest_difference(recording[a], recording[b])
    assert worst == 0.0, f"{a} and {b} were bit-identical; in the recording their values differ by {worst:.3g}"
    assert recording[a]["rows"] == recording[b]["rows"], f"{a} and {b}: the same values, other ranks"
