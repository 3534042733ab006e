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
    assert entries["ensemble"].options == ("missing",)
    asked = []
    monkeypatch.setattr(warmups, "warm", lambda name, **values: asked.append((name, values)))
    api.warm_up("ensemble", {"missing": "fractional", "trees": 3})
    api.warm_up("relief", {"missing": "fractional"})
    api.warm_up("boosting")
    assert asked == [("ensemble", {"missing": "fractional"}), ("relief", {}), ("boosting", {})]


def test_nothing_registered_is_a_key_error():
    with pytest.raises(KeyError):
        warmups.warm("no such method")
