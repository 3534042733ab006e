"""spark_fr's log lines are visible where nobody configured logging (a notebook, a plain Python process), can be
turned down or off, and never override a program's own logging configuration (spark_fr.runtime.logs).

Each case is a real Python process calling ``spark_fr.rank`` on a small ARFF file. The work runs in the driver
(a lazy session is passed, and the test suite's SPARK_FR_DRIVER_MAX_SECONDS=0 is removed), so no JVM starts."""
import re
import subprocess
import sys

import pytest

from tests.conftest import DATASETS, _subprocess_env

ENB = DATASETS / "mtr_enb" / "enb.arff"
OURS = re.compile(r"^\[spark_fr \d\d:\d\d:\d\d\] ", re.M)

SCRIPT = f"""
import logging, sys
import spark_fr
from spark_fr.runtime.session import SessionStart

mode = sys.argv[1]
USER = dict(level=logging.INFO, format="USER %(name)s: %(message)s", stream=sys.stderr)
if mode == "configured":
    logging.basicConfig(**USER)
elif mode.startswith("set_"):
    spark_fr.set_verbosity(mode[4:])

def rank(**kw):
    return spark_fr.rank({str(ENB)!r}, targets="Y1,Y2", trees=3, seed=1, spark=SessionStart(lazy=True), **kw)

rank(max_depth=0 if mode == "warning" else None)
if mode == "configured_later":  # logging configured after the first call: the second call's lines appear once
    logging.basicConfig(**USER)
    rank()
print("done")
"""


def run(mode: str, **env) -> str:
    """Standard error of the script in ``mode`` (it must succeed)."""
    environ = _subprocess_env()
    for name in ("SPARK_FR_DRIVER_MAX_SECONDS", "SPARK_FR_LOG_LEVEL"):
        environ.pop(name, None)
    environ.update(env)
    r = subprocess.run([sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, env=environ, timeout=600)
    assert r.returncode == 0 and r.stdout.strip() == "done", r.stderr[-3000:]
    return r.stderr


def ours(stderr: str) -> list:
    return [line for line in stderr.splitlines() if OURS.match(line)]


def test_info_lines_show_when_nobody_configured_logging():
    lines = ours(run("default"))
    assert any(re.search(r"\] input .*enb\.arff: 8 features, target\(s\) Y1, Y2$", line) for line in lines), lines
    assert len([line for line in lines if "] input " in line]) == 1  # once


def test_warnings_are_marked():
    err = run("warning")  # max_depth=0: the ranking carries no information
    assert any("] WARNING: the ranking carries no information" in line for line in ours(err)), err


@pytest.mark.parametrize("mode, env", [("default", {"SPARK_FR_LOG_LEVEL": "warning"}),
                                       ("default", {"SPARK_FR_LOG_LEVEL": "none"}),
                                       ("set_warning", {}), ("set_none", {})],
                         ids=["env-warning", "env-none", "set_verbosity-warning", "set_verbosity-none"])
def test_turned_down_or_off(mode, env):
    err = run(mode, **env)
    assert not ours(err) and " input " not in err, err


def test_a_misspelt_level_warns_and_shows_info():
    lines = ours(run("default", SPARK_FR_LOG_LEVEL="loud"))
    assert "WARNING: SPARK_FR_LOG_LEVEL must be one of debug, info, warning, error, none, not 'loud'" in lines[0]
    assert any("] input " in line for line in lines)


def test_a_program_that_configured_logging_keeps_its_configuration():
    err = run("configured")
    assert not ours(err)
    assert len(re.findall(r"^USER spark_fr\.api: input .*enb\.arff", err, re.M)) == 1, err


def test_logging_configured_after_a_call_takes_over_without_duplicates():
    err = run("configured_later")
    inputs = [line for line in err.splitlines() if " input " in line]
    assert len(inputs) == 2, err  # one per call: ours first, then the program's handler alone
    assert OURS.match(inputs[0]) and inputs[1].startswith("USER spark_fr.api: input ")
