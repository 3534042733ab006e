"""CLUS runs cached by their inputs: the comparisons with CLUS without a JVM and a forest per run.

``run(arff, task, workdir)`` is ``run_clus`` (../shared/tools/clus/run_clus.py) for the comparisons: CLUS's
result for the same inputs, from ``tests/comparisons/clus_reference_runs/`` when that run was recorded, else CLUS
run there and then. A run's key is the SHA-256 of everything CLUS reads: the ARFF file's bytes, the settings file
``run_clus`` writes for the task (``build_settings``), the command's switches (``-forest``, ``-relief``, ``-ssl``,
the heap) and the CLUS jar's bytes; an input that changes misses the recorded run, and CLUS runs. A recorded run
holds what the tests read: the parsed rankings (:data:`KEPT`) and the settings CLUS echoed in its ``.out`` file (written to the
work folder as ``run.out``, as CLUS writes it), and, for the reader, the inputs and the Java that made it.

Decision: the recorded runs are committed (a fresh clone uses them; CLUS's runs took 7 of the suite's minutes).
CLUS's output for fixed inputs and seed is deterministic (one run and two threads give the same rankings), so a
recorded run is the run; ``test_recorded_clus_runs_are_what_clus_computes`` (test_clus_agreement.py) runs some
again in every run and compares. ``SPARK_FR_CLUS_RUNS`` chooses: unset or ``cached`` (recorded runs, CLUS for the
others), ``record`` (also records the runs that CLUS made) or ``live`` (CLUS for every run, nothing read or
written). The runs CLUS had to make are named at the end of pytest's report (tests/conftest.py).
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.paths import CLUS_TOOLS, TESTS

RECORDED = TESTS / "comparisons" / "clus_reference_runs"
MODES = ("cached", "record", "live")
KEPT = ("file", "method", "ensemble_method", "n_trees", "columns", "scores")
#: the runs CLUS made in this process for want of a recorded one: (ARFF file name, key)
MISSED: list = []


def _run_clus_module():
    if str(CLUS_TOOLS) not in sys.path:
        sys.path.insert(0, str(CLUS_TOOLS))
    import run_clus

    return run_clus


@functools.lru_cache(maxsize=None)
def _sha256_of_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@functools.lru_cache(maxsize=1)
def _java_version() -> str:
    done = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=60)
    return (done.stderr or done.stdout).splitlines()[0] if (done.stderr or done.stdout) else ""


def inputs_of(arff: Path, task: dict) -> dict:
    """What CLUS reads for ``run_clus(arff, task)``: the key's parts (the jar's and the file's digests).

    Parameters
    ----------
    arff : Path
        The data file.
    task : dict
        ``run_clus``'s task description.

    Returns
    -------
    dict
        ``arff`` (its name: the settings name it), ``arff_sha256``, ``switches`` (the command without ``java``
        and the jar's path), ``settings`` (the ``.s`` file's text) and ``jar_sha256``.
    """
    rc = _run_clus_module()
    jar = rc.find_jar()
    command = rc.command_for(jar, "run.s", dict(task))
    switches = [word for word in command if word not in ("java", jar) and word not in rc.JAVA_OPENS]
    return {"arff": Path(arff).name, "arff_sha256": _sha256_of_file(str(arff)), "switches": switches,
            "settings": rc.build_settings(Path(arff).name, dict(task)), "jar_sha256": _sha256_of_file(jar)}


def key_of(inputs: dict) -> str:
    """The SHA-256 of a run's inputs (:func:`inputs_of`), in a canonical JSON form."""
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


def settings_echo(out_text: str) -> str:
    """The settings part of a CLUS ``.out`` file (up to its first ``Run:`` line), without the ``Date:`` line."""
    lines = []
    for line in out_text.splitlines():
        if line.startswith("Run: "):
            break
        if not line.startswith("Date: "):
            lines.append(line)
    return "\n".join(lines).rstrip("\n") + "\n"


def recorded(key: str) -> dict | None:
    """The recorded run of ``key``, or None."""
    path = RECORDED / f"{key[:24]}.json"
    if not path.is_file():
        return None
    entry = json.loads(path.read_text())
    return entry if entry.get("key") == key else None


def kept(rankings: dict) -> dict:
    """The parts of ``run_clus``'s parsed rankings a recorded run keeps: per ranking its file, method, ensemble
    method, tree count, columns and scores (the ranks, order, indices and header follow from them or the file)."""
    return {name: {k: r[k] for k in KEPT} for name, r in rankings.items()}


def _record(key: str, inputs: dict, res: dict) -> None:
    RECORDED.mkdir(exist_ok=True)
    entry = {"key": key, "inputs": inputs, "java": _java_version(), "echo": res["echo"],
             "rankings": kept(res["rankings"])}
    lines = [f"{json.dumps(k)}: {json.dumps(entry[k], sort_keys=True, separators=(',', ':'))}" for k in sorted(entry)]
    (RECORDED / f"{key[:24]}.json").write_text("{\n" + ",\n".join(lines) + "\n}\n")


def mode() -> str:
    """``SPARK_FR_CLUS_RUNS`` (default ``cached``), checked."""
    value = os.environ.get("SPARK_FR_CLUS_RUNS", "cached") or "cached"
    if value not in MODES:
        raise ValueError(f"SPARK_FR_CLUS_RUNS={value}: expected one of {', '.join(MODES)}")
    return value


def run_live(arff: Path, task: dict, workdir: Path) -> dict:
    """CLUS itself (``run_clus``) in ``workdir``; its result with ``echo`` (the ``.out`` file's settings part)."""
    res = _run_clus_module().run_clus(str(arff), task, workdir=str(workdir))
    out = Path(workdir) / "run.out"
    res["echo"] = settings_echo(out.read_text()) if out.is_file() else ""
    res["rankings"] = kept(res["rankings"])
    return res


def run(arff: Path, task: dict, workdir: Path) -> dict:
    """``run_clus(arff, task, workdir)``'s result for the comparisons, from the recorded run when there is one.

    Parameters
    ----------
    arff : Path
        The data file.
    task : dict
        ``run_clus``'s task description.
    workdir : Path
        CLUS's work folder; a recorded run writes its ``run.out`` (the settings echo) there.

    Returns
    -------
    dict
        ``returncode``, ``rankings``, ``echo``, ``stdout_tail`` and ``cached`` (whether it was recorded).
    """
    how = mode()
    inputs = inputs_of(arff, task)
    key = key_of(inputs)
    entry = recorded(key) if how != "live" else None
    if entry is not None:
        Path(workdir).mkdir(parents=True, exist_ok=True)
        (Path(workdir) / "run.out").write_text(entry["echo"])
        return {"returncode": 0, "rankings": entry["rankings"], "echo": entry["echo"], "stdout_tail": "",
                "cached": True}
    res = run_live(arff, task, workdir)
    res["cached"] = False
    if how != "live":
        MISSED.append((inputs["arff"], key))
    if how == "record" and res["returncode"] == 0:
        _record(key, inputs, res)
    return res
