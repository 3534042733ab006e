"""``pyspark-client`` only and no ``SPARK_REMOTE``: a run that needs Spark says in one line what to do
(spark_fr.runtime.client_only), exit code 2 and nothing written, instead of pyspark's ``[CONNECT_URL_NOT_SET]``.

The environment is this virtualenv's Python with ``pyspark.core`` hidden (an import hook that finds no such
module): ``pyspark-client`` ships no ``pyspark/core`` (nor the JVM's launcher and jars), and that is what pyspark's
own test, ``pyspark.util.is_remote_only``, looks at. pyspark itself then raises ``[CONNECT_URL_NOT_SET]`` from
``SparkSession.builder.getOrCreate()``, as in a ``pyspark-client`` venv (asserted below, before the classification of
that real exception is). The built wheel in a venv with ``pyspark-client`` installed from the registry:
tests/end_to_end/test_package.py (the ``environment`` marker). Cost: two Python processes, ~5 s each.
"""
import json
import subprocess
import sys

from spark_fr.runtime.client_only import CLIENT_ONLY, client_only, known_input_error
from tests.conftest import DATASETS, JOB, _subprocess_env

ENB = DATASETS / "mtr_enb" / "enb.arff"
#: what pyspark-client lacks: ``pyspark.core`` (RDDs, SparkContext, the JVM's launcher)
HIDE_CORE = """
import importlib.abc, sys
class _NoCore(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "pyspark.core" or name.startswith("pyspark.core."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _NoCore())
"""


def client_env() -> dict:
    """The suite's subprocess environment without any Spark Connect setting; the trees go to Spark (the run
    needs a session)."""
    env = {k: v for k, v in _subprocess_env().items()
           if k not in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED", "SPARK_LOCAL_REMOTE", "PYSPARK_GATEWAY_PORT")}
    env["SPARK_FR_DRIVER_MAX_SECONDS"] = "0"
    return env


def test_the_job_says_to_set_spark_remote_in_one_line(tmp_path):
    out = tmp_path / "out"
    code = HIDE_CORE + "import runpy\nsys.argv = sys.argv[1:]\nrunpy.run_path(sys.argv[0], run_name='__main__')\n"
    r = subprocess.run([sys.executable, "-c", code, str(JOB), "--input", str(ENB), "--targets", "Y1,Y2", "--trees",
                        "3", "--output", str(out)], capture_output=True, text=True, env=client_env(), timeout=600,
                       cwd=tmp_path)
    assert r.returncode == 2, r.stderr[-3000:]
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: {CLIENT_ONLY}"] and r.stderr.splitlines()[-1] == errors[0], r.stderr[-3000:]
    assert "CONNECT_URL_NOT_SET" not in r.stderr and "Traceback" not in r.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written


PROBE = HIDE_CORE + """
import json
from pyspark.sql import SparkSession
import spark_fr
from spark_fr.runtime.client_only import client_only, known_input_error
out = {"client_only": client_only()}
try:
    SparkSession.builder.getOrCreate()
except Exception as err:
    mine = known_input_error(err)
    out.update(raised=type(err).__name__, condition=err.getCondition(),
               mine=None if mine is None else [type(mine).__name__, str(mine)])
try:
    spark_fr.rank(sys.argv[1], targets="Y1,Y2", trees=3)
except spark_fr.InputError as err:
    out["rank"] = [type(err).__name__, str(err)]
print(json.dumps(out))
"""


def test_pysparks_own_error_and_the_python_api_give_the_same_line():
    r = subprocess.run([sys.executable, "-c", PROBE, str(ENB)], capture_output=True, text=True, env=client_env(),
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.splitlines()[-1])
    # pyspark itself sees a client-only pyspark and raises CONNECT_URL_NOT_SET, as in a pyspark-client venv
    assert out["client_only"] is True
    assert (out["raised"], out["condition"]) == ("PySparkRuntimeError", "CONNECT_URL_NOT_SET"), out
    assert out["mine"] == ["ClientOnlyError", CLIENT_ONLY]
    assert out["rank"] == ["ClientOnlyError", CLIENT_ONLY]  # spark_fr.rank: a run that needs Spark
    # the whole pyspark (this process) is not client-only, and an error that is not pyspark's setup one is left alone
    assert not client_only() and known_input_error(ValueError("CONNECT_URL_NOT_SET")) is None
    assert "\n" not in CLIENT_ONLY and "SPARK_REMOTE=sc://host:port" in CLIENT_ONLY
