"""A JVM that spark_fr launches compiles huge generated methods (``-XX:-DontCompileHugeMethods``), keeping
the Java options a user passes."""
import json
import subprocess
import sys

from tests.conftest import _subprocess_env
from spark_fr.runtime.session import JVM_OPTIONS, with_jvm_options

PROBE = """
import json, sys
from spark_fr.runtime.session import get_spark
spark = get_spark(master="local[1]", quiet=True, conf={"spark.driver.extraJavaOptions": "-Dspark_fr.probe=yes"})
args = list(spark._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
print(json.dumps({"args": args, "conf": spark.sparkContext.getConf().get("spark.driver.extraJavaOptions")}))
spark.stop()
"""


def test_the_options_are_added_once_and_a_users_choice_wins():
    assert with_jvm_options(None) == JVM_OPTIONS
    assert with_jvm_options("  -Dx=1 ") == f"-Dx=1 {JVM_OPTIONS}"
    assert with_jvm_options("-XX:+DontCompileHugeMethods") == "-XX:+DontCompileHugeMethods"  # the user's sign
    assert with_jvm_options(with_jvm_options("-Dx=1")) == with_jvm_options("-Dx=1")


def test_a_launched_jvm_runs_with_the_options_and_the_users(tmp_path):
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=_subprocess_env(),
                          cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "-XX:-DontCompileHugeMethods" in out["args"]
    assert "-Dspark_fr.probe=yes" in out["args"]
    assert out["conf"].endswith("-Dspark_fr.probe=yes -XX:-DontCompileHugeMethods")  # after Spark's own
