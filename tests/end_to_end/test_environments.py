"""Fresh environments (``jobs/check_environment.py``): a new virtualenv, a runtime's packages installed first,
then the spark_fr wheel; installing it must change none of them, and a ranking there must equal this checkout's
bit for bit. Each builds an environment from the package registry (2-5 minutes, more on a busy machine), so
they run only with ``SPARK_FR_CHECK_ENVIRONMENTS=1``; docs/install.md ("Checked environments") lists what they
gave.
"""
import os
import subprocess
import sys

import pytest

from tests.paths import ROOT


ENVIRONMENTS = {
    # a Databricks 17.3 LTS-like runtime: Python 3.12, Spark 4.0, its numpy / pandas / pyarrow
    "py312-spark40": ("python3.12", ["pyspark==4.0.1", "numpy==2.1.3", "pandas==2.2.3", "pyarrow==19.0.1"]),
    # the tests' pyspark on Python 3.12
    "py312-spark42": ("python3.12", ["pyspark==4.2.0", "numpy==2.1.3", "pandas==2.2.3", "pyarrow==19.0.1"]),
    # Spark 3.5 on Python 3.12 (Databricks 16.4 LTS: Spark 3.5.2, Python 3.12); PyPI's pyspark 3.5 imports
    # distutils, which Python 3.12 has only through setuptools (a runtime has it)
    "py312-spark35": ("python3.12", ["pyspark==3.5.2", "numpy==1.26.4", "pandas==2.1.4", "pyarrow==15.0.2",
                                     "setuptools"]),
    # the oldest versions the ranges allow, on Python 3.11 (Databricks 15.4 LTS: Spark 3.5.0, Python 3.11)
    "py311-oldest": ("python3.11", ["pyspark==3.5.0", "numpy==1.26.4", "pandas==1.5.3", "pyarrow==14.0.1",
                                    "numba==0.59.1", "scipy==1.11.4", "matplotlib==3.7.2", "PyYAML==6.0.1"]),
}


@pytest.mark.environment
@pytest.mark.skipif(os.environ.get("SPARK_FR_CHECK_ENVIRONMENTS") != "1",
                    reason="builds a virtualenv from the registry: SPARK_FR_CHECK_ENVIRONMENTS=1 runs it")
@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_fresh_environment(name, tmp_path):
    python, preinstall = ENVIRONMENTS[name]
    run = subprocess.run([sys.executable, str(ROOT / "jobs" / "check_environment.py"), "--python", python,
                          "--workdir", str(tmp_path / "env"), "--preinstall", *preinstall],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr + run.stdout
    assert run.stdout.splitlines()[-1].startswith("ok: ") and "rankings identical" in run.stdout


def test_rankings_are_compared_with_their_names_as_text(tmp_path):
    """compare reads the feature names as text (a feature '007' is not the number 7, nor '1e5' 100000.0) and never
    parses the run id (an id of digits, an "e" and digits can crash pandas' C parser: pandas issue 62617)."""
    import runpy

    compare = runpy.run_path(str(ROOT / "jobs" / "check_environment.py"))["compare"]
    header = "feature,score,target,importance,rank,importance_std,run_id,created_at,params\n"
    ours, theirs = tmp_path / "a", tmp_path / "b"
    ours.mkdir()
    theirs.mkdir()
    rows = "007,rf,__all__,0.5,1,0.0,{run},2026-11-29,{{}}\n1e5,rf,__all__,0.25,2,0.0,{run},2026-11-29,{{}}\n"
    (ours / "r.csv").write_text(header + rows.format(run="4534173563" + "e" + "1234567890123"))
    (theirs / "r.csv").write_text(header + rows.format(run="another"))
    assert compare(ours, theirs, True) == ([], [])
    (theirs / "r.csv").write_text(header + rows.replace("007", "7").format(run="another"))
    problems, _ = compare(ours, theirs, True)
    assert len(problems) == 1 and "r: the ranking differs" in problems[0]
