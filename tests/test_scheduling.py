"""The suite's own scheduling (tests/scheduling.py): units go out longest first by the recorded module times."""
import json
import os
from collections import OrderedDict
from pathlib import Path
from types import SimpleNamespace

from tests.paths import ROOT
from tests.scheduling import UNKNOWN_SECONDS_PER_TEST, DurationRecorder, longest_first, read_record, unit_seconds


def _queue(units: dict) -> OrderedDict:
    """xdist's work queue: unit -> {nodeid: done}."""
    return OrderedDict((u, {f"{m}::t{i}": False for m, n in mods for i in range(n)}) for u, mods in units.items())


def test_units_go_out_longest_first_by_the_record_and_unknown_modules_by_their_tests():
    record = {"tests/a/test_short.py": 3.0, "tests/b/test_long.py": 90.0, "tests/d/test_delta.py": 50.0,
              "tests/d/test_connect.py": 45.0}
    queue = _queue({"tests/a/test_short.py": [("tests/a/test_short.py", 40)],        # many tests, short
                    "tests/b/test_long.py": [("tests/b/test_long.py", 2)],           # few tests, long
                    "tests/c/test_new.py": [("tests/c/test_new.py", 20)],            # not recorded: 20 x 0.5 s
                    "sessions": [("tests/d/test_delta.py", 5), ("tests/d/test_connect.py", 5)]})
    longest_first(queue, record)
    assert list(queue) == ["sessions", "tests/b/test_long.py", "tests/c/test_new.py", "tests/a/test_short.py"]
    assert unit_seconds(queue["tests/c/test_new.py"], record) == 20 * UNKNOWN_SECONDS_PER_TEST
    assert unit_seconds(queue["sessions"], record) == 95.0


def test_without_a_record_the_order_is_by_tests_and_ties_keep_their_order(tmp_path):
    assert read_record(tmp_path / "missing.json") == {}
    queue = _queue({"x": [("tests/x.py", 2)], "y": [("tests/y.py", 9)], "z": [("tests/z.py", 2)]})
    longest_first(queue, read_record(tmp_path / "missing.json"))
    assert list(queue) == ["y", "x", "z"]


def test_the_recorder_sums_setup_call_and_teardown_per_module(tmp_path):
    recorder = DurationRecorder(tmp_path / "record.json")
    for nodeid, seconds in (("tests/a.py::t[1]", 1.25), ("tests/a.py::t[1]", 2.0), ("tests/a.py::u", 0.5),
                            ("tests/b.py::v", 4.0)):
        recorder.add(SimpleNamespace(nodeid=nodeid, duration=seconds))
    recorder.write()
    assert json.loads((tmp_path / "record.json").read_text()) == {"tests/a.py": 3.8, "tests/b.py": 4.0}
    assert read_record(tmp_path / "record.json") == {"tests/a.py": 3.8, "tests/b.py": 4.0}


def test_the_kernels_are_compiled_before_the_workers_only_when_no_cache_of_the_sources_holds_the_grow_loop(
        tmp_path, monkeypatch):
    from numba.core import config

    from spark_fr.runtime.numba_cache import FolderSources, cache_root
    from tests.prewarm import cache_is_cold

    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "cache"))  # numba's NUMBA_CACHE_DIR, as read at import
    checkout = tmp_path / "checkout"
    (checkout / "spark_fr" / "pct").mkdir(parents=True)
    (checkout / "spark_fr" / "pct" / "grow.py").write_text("x = 1\n")
    assert cache_is_cold(checkout)
    root = Path(cache_root(FolderSources(str(checkout))))
    assert root.parent == tmp_path / "cache"
    (root / "pct").mkdir(parents=True)
    (root / "pct" / "grow.grow_tree-143.py311.nbi").write_bytes(b"")
    assert not cache_is_cold(checkout)
    (checkout / "spark_fr" / "pct" / "grow.py").write_text("x = 2\n")  # an edit: the sources' folder is another
    assert cache_is_cold(checkout)


def test_the_jvms_are_pointed_at_the_class_archive_once_and_only_when_it_exists(tmp_path, monkeypatch):
    from tests import jvm_archive

    monkeypatch.setenv("SPARK_SUBMIT_OPTS", "-XX:TieredStopAtLevel=1")
    monkeypatch.delenv(jvm_archive.ENV, raising=False)
    monkeypatch.delenv(jvm_archive.DIR_ENV, raising=False)
    assert jvm_archive.folder(tmp_path) == tmp_path / ".cache" / "jvm"
    monkeypatch.setenv(jvm_archive.DIR_ENV, str(tmp_path / "jvm"))
    assert jvm_archive.wanted(tmp_path) and not jvm_archive.use(tmp_path)
    assert os.environ["SPARK_SUBMIT_OPTS"] == "-XX:TieredStopAtLevel=1"
    path = jvm_archive.archive(tmp_path)
    assert path.parent == tmp_path / "jvm" and path.suffix == ".jsa"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")
    assert not jvm_archive.wanted(tmp_path)
    assert jvm_archive.use(tmp_path) and jvm_archive.use(tmp_path)
    assert os.environ["SPARK_SUBMIT_OPTS"] == f"-XX:TieredStopAtLevel=1 -XX:SharedArchiveFile={path}"
    path.unlink()
    monkeypatch.setenv("SPARK_SUBMIT_OPTS", "")
    assert jvm_archive.use(tmp_path, coming=True)  # being made: the JVMs started after it is in place map it
    assert os.environ["SPARK_SUBMIT_OPTS"] == f"-XX:SharedArchiveFile={path}"
    monkeypatch.setenv("SPARK_SUBMIT_OPTS", "")
    monkeypatch.setenv(jvm_archive.ENV, "0")
    assert not jvm_archive.use(tmp_path) and not jvm_archive.wanted(tmp_path)
    assert os.environ["SPARK_SUBMIT_OPTS"] == ""


def test_the_suites_spark_jvm_maps_the_class_archive_exactly_when_it_was_in_place(spark):
    """HotSpot ignores an archive it cannot use without a word: the session's JVM, started after the archive was in
    place, must have mapped it; one started before (or with the archive turned off) runs its jobs without it."""
    from tests import jvm_archive

    path = jvm_archive.archive(ROOT)
    process = spark.sparkContext._jvm.java.lang.ProcessHandle.current()
    started = process.info().startInstant().get().toEpochMilli() / 1000.0
    mapped = str(path) in Path(f"/proc/{process.pid()}/maps").read_text()
    in_place = os.environ.get(jvm_archive.ENV) != "0" and path.is_file() and path.stat().st_mtime < started
    if in_place:
        assert f"{jvm_archive.OPTION}{path}" in os.environ["SPARK_SUBMIT_OPTS"]
        assert mapped, f"the session's JVM did not map {path}"
    else:
        assert not mapped and spark.range(3).count() == 3
