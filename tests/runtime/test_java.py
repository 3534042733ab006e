"""A missing or unusable Java is named in one line before any JVM starts (spark_fr.runtime.session.check_java),
instead of pyspark's ``[JAVA_GATEWAY_EXITED]``: exit code 2 from jobs/rank.py and nothing written.

The machine has OpenJDK 17 and Temurin 25 (both usable), no older Java: the too-old case uses a stand-in JDK
folder whose ``bin/java`` is a shell script printing Java 11's version banner, as ``java -version`` does."""
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import DATASETS, JOB, _subprocess_env
from spark_fr.runtime.session import JavaError, check_java, java_major

TEMURIN = Path("/usr/lib/jvm/temurin-25-jdk-amd64")


def fake_jdk(root: Path, banner: str | None) -> Path:
    """A folder with ``bin/java``: a script printing ``banner`` to stderr (``None``: a file that does not run)."""
    (root / "bin").mkdir(parents=True)
    java = root / "bin" / "java"
    java.write_text(f"#!/bin/sh\necho '{banner}' >&2\nexit 0\n" if banner else "\x7fELF not really\n")
    java.chmod(java.stat().st_mode | stat.S_IXUSR)
    return root


@pytest.mark.parametrize("case", ["java_home_empty", "no_java_on_path", "java_11"])
def test_job_names_the_java_problem_in_one_line(tmp_path, case):
    env = _subprocess_env()
    env["SPARK_FR_DRIVER_MAX_SECONDS"] = "0"  # the trees go to Spark: the run needs the JVM
    if case == "java_home_empty":
        (tmp_path / "jdk").mkdir()
        env["JAVA_HOME"] = str(tmp_path / "jdk")
        expected = f"error: JAVA_HOME={tmp_path / 'jdk'} points to no Java ({tmp_path / 'jdk' / 'bin' / 'java'} is not there)"
    elif case == "no_java_on_path":
        env.pop("JAVA_HOME", None)
        env["PATH"] = str(Path(sys.executable).parent)  # the virtual environment's bin: no java
        expected = "error: Java not found (JAVA_HOME is not set and no java is on PATH); Spark needs Java 17 or newer"
    else:
        jdk = fake_jdk(tmp_path / "jdk11", 'openjdk version "11.0.22" 2024-01-16')
        env["JAVA_HOME"] = str(jdk)
        expected = f"error: Java 11 found at {jdk / 'bin' / 'java'} (JAVA_HOME={jdk}); Spark 4 needs Java 17 or newer"
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, str(JOB), "--input", str(DATASETS / "mtr_enb" / "enb.arff"), "--targets",
                        "Y1,Y2", "--trees", "3", "--output", str(out), "--plot", str(tmp_path / "out.png")],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 2, r.stderr[-3000:]
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(expected), r.stderr
    assert "JAVA_GATEWAY_EXITED" not in r.stderr and "Traceback" not in r.stderr
    assert r.stderr.splitlines()[-1] == errors[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == (["jdk"] if case == "java_home_empty" else
                                                          ["jdk11"] if case == "java_11" else [])  # nothing written


def test_a_java_that_does_not_run_is_named(tmp_path, monkeypatch):
    jdk = fake_jdk(tmp_path / "broken", None)
    monkeypatch.setenv("JAVA_HOME", str(jdk))
    with pytest.raises(JavaError, match=r"^the java at .*/broken/bin/java \(JAVA_HOME=.*\) does not run \("):
        check_java()


def test_the_java_on_path_passes(monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    assert check_java() >= 17


@pytest.mark.skipif(not (TEMURIN / "bin" / "java").exists(), reason="no Temurin 25 on this machine")
def test_a_newer_java_passes(monkeypatch):
    """Java 25 (Temurin): newer Javas are accepted (pyspark 4.2 started and ran jobs on it here)."""
    monkeypatch.setenv("JAVA_HOME", str(TEMURIN))
    assert check_java() == 25


@pytest.mark.parametrize("banner, major", [('openjdk version "17.0.15" 2025-04-15', 17),
                                           ('java version "1.8.0_292"', 8), ('openjdk version "21" 2023-09-19', 21),
                                           ('openjdk version "25.0.3" 2026-04-21 LTS', 25), ("no banner", None)])
def test_java_major(banner, major):
    assert java_major(banner) == major
