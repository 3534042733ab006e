"""One registry of numba warm-ups (spark_fr.runtime.warmups): the methods register theirs, a run warms what it needs,
once per process and set of option values."""
import importlib
import sys

import pytest

from spark_fr.runtime import warmups


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """A registered warm-up that records its calls (a module of its own, imported when first warmed)."""
    (tmp_path / "toy_warmup.py").write_text("calls = []\n\ndef warm(**values):\n    calls.append(values)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "toy_warmup", raising=False)  # this test's module, with its own calls
    monkeypatch.setattr(warmups, "_REGISTRY", dict(warmups._REGISTRY))
    monkeypatch.setattr(warmups, "_DONE", set())
    warmups.register("toy", "toy_warmup", "warm", options=("missing",))
    yield importlib.import_module("toy_warmup").calls


def test_a_warm_up_runs_once_per_process_and_values(toy):
    assert warmups.warm("toy") and not warmups.warm("toy")
    assert warmups.warm("toy", missing="learned") and not warmups.warm("toy", missing="learned")
    assert toy == [{}, {"missing": "learned"}]


def test_a_warm_up_with_its_defaults_or_the_same_names_in_another_order_runs_once(tmp_path, monkeypatch):
    """The key of a warm-up's run is its values with its defaults filled in, lists of names in any order: the
    command line's early warm-up (the run's options) and the run's own (its parameters) are one run."""
    (tmp_path / "named_warmup.py").write_text(
        "calls = []\n\ndef warm(missing='learned', scores=('a', 'b')):\n    calls.append((missing, scores))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(warmups, "_REGISTRY", dict(warmups._REGISTRY))
    monkeypatch.setattr(warmups, "_DONE", set())
    warmups.register("named", "named_warmup", "warm", options=("missing", "scores"))
    assert warmups.warm("named") and not warmups.warm("named", missing="learned", scores=["b", "a"])
    assert warmups.warm_for("named", {"scores": ["b"], "missing": None})
    assert not warmups.warm("named", scores=("b",), missing="learned")
    assert importlib.import_module("named_warmup").calls == [("learned", ("a", "b")), ("learned", ["b"])]


def test_a_run_warms_with_the_options_its_warm_up_takes(toy):
    warmups.warm_for("toy", {"missing": "fractional", "trees": 3, "seed": None})
    warmups.warm_for("toy", {"missing": None})  # absent or None: the warm-up's own default
    assert toy == [{"missing": "fractional"}, {}]


def test_every_method_registers_its_warm_up_and_the_api_warms_what_a_run_needs(monkeypatch):
    from spark_fr import api

    entries = warmups.registered()
    assert set(api.METHODS) <= set(entries)
    for entry in entries.values():  # each names a function that exists (nothing is compiled here)
        assert callable(getattr(importlib.import_module(entry.module), entry.function))
    assert entries["ensemble"].options == ("missing", "scores")
    asked = []
    monkeypatch.setattr(warmups, "warm", lambda name, **values: asked.append((name, values)))
    api.warm_up("ensemble", {"missing": "fractional", "trees": 3})
    api.warm_up("relief", {"missing": "fractional"})
    api.warm_up("boosting")
    assert asked == [("ensemble", {"missing": "fractional"}), ("relief", {}), ("boosting", {})]


def test_nothing_registered_is_a_key_error():
    with pytest.raises(KeyError):
        warmups.warm("no such method")


def test_the_ensembles_warm_ups_include_the_label_sparse_trees():
    import spark_fr.ensemble  # noqa: F401  (registers its warm-ups)

    assert warmups.of_methods(["ensemble"]) == ["ensemble", "label_sets"]
    assert warmups.registered()["label_sets"].method == "ensemble"
    assert set(warmups.of_methods(["relief", "boosting"])) == {"boosting", "relief"}


#: in a new process: every warm-up of a method with every option value (as jobs/package.py ships them), then real
#: runs of the job (on the driver: no Spark session for a small local file), the kernels' specialisations before
#: and after each run. A run that needs one no warm-up made would compile it on a fresh installation's first run.
COVER = """
import json, runpy, sys
import numba
from spark_fr import api
method, runs = sys.argv[1], json.loads(sys.argv[2])
api.warm_up_all([method])
def kernels():
    out = set()
    for modname, module in list(sys.modules.items()):
        if modname.startswith("spark_fr"):
            for attr, obj in vars(module).items():
                if isinstance(obj, numba.core.dispatcher.Dispatcher):
                    out.update(f"{modname}.{attr}{sig}" for sig in obj.overloads)
    return out
new = []
for args in runs:
    before = kernels()
    sys.argv = ["rank.py"] + args
    try:
        runpy.run_path(JOB, run_name="__main__")
    except SystemExit as exc:
        assert not exc.code, exc.code
    new.append(sorted(kernels() - before))
print(json.dumps(new))
"""


def test_the_ensembles_warm_ups_cover_a_dense_and_a_label_sparse_run(tmp_path):
    """The warm-ups a shipped cache holds (jobs/package.py) make every kernel a run of the job uses: a label-sparse
    (HMLC, 500 labels) and a dense run of the ensemble, one after the other in one new process, compile nothing
    new after them."""
    import json
    import subprocess

    from tests.conftest import JOB, _subprocess_env
    from tests.paths import DATASETS, ROOT

    data = ["hmlc_cellcycle_FUN/cellcycle_FUN.valid.arff", "mtr_enb/enb.arff"]
    runs = [["--input", str(DATASETS / d), "--trees", "2", "--seed", "1", "--output", str(tmp_path / f"out{i}"),
             "--output-format", "csv", "--log-level", "warning"] for i, d in enumerate(data)]
    script = COVER.replace("JOB", repr(str(JOB)))
    run = subprocess.run([sys.executable, "-c", script, "ensemble", json.dumps(runs)], cwd=str(tmp_path),
                         capture_output=True, text=True, env={**_subprocess_env(), "PYTHONPATH": str(ROOT)},
                         timeout=900)
    assert run.returncode == 0, run.stderr[-2000:]
    new = json.loads(run.stdout.strip().splitlines()[-1])
    for d, added in zip(data, new):
        assert added == [], f"{d}: kernels the run compiled after the ensemble's warm-ups: {added[:5]}"


def test_the_jobs_warm_up_runs_beside_the_run_and_a_failed_one_is_a_debug_line(monkeypatch, caplog):
    """spark_fr.cli.warm_up_beside: the warm-up of the run's method in a thread of its own (not a daemon: the process
    ends after it), with the run's options; a warm-up that raises leaves one debug line and nothing else."""
    import logging
    import threading

    from spark_fr import api, cli

    seen, release = [], threading.Event()

    def warm_up(method, opts):
        seen.append((method, opts["missing"], threading.current_thread().name))
        release.wait(10)
        raise RuntimeError("no such kernel")

    monkeypatch.setattr(api, "warm_up", warm_up)
    with caplog.at_level(logging.DEBUG, logger="spark_fr"):
        thread = cli.warm_up_beside({"method": "relief", "missing": "fractional"})
        assert thread.is_alive() and not thread.daemon  # this thread goes on meanwhile
        release.set()
        thread.join(10)
    assert seen == [("relief", "fractional", "spark_fr-warm-up")] and not thread.is_alive()
    assert [r.getMessage() for r in caplog.records if "warm-up" in r.getMessage()] == [
        "the warm-up failed (RuntimeError: no such kernel): the run compiles its kernels on use"]
