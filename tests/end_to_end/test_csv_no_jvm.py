"""No JVM for a small local CSV file (issue 35, item 3): in a fresh Python process, ``spark_fr.rank('small.csv')``
and ``jobs/rank.py --input small.csv`` start no Java process and no py4j gateway (the check of
tests/end_to_end/test_sklearn_no_jvm.py: the process's descendants, pyspark's gateway launcher counted, no
SparkContext), and rank bit for bit as the same file read by Spark (spark_fr.io.csv.read_csv) does."""
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import spark_fr
from spark_fr.io import csv as C
from tests.conftest import _subprocess_env
from tests.end_to_end.test_sklearn_no_jvm import SCRIPT as NO_JVM_SCRIPT
from tests.paths import JOB, ROOT

RANKING = ["feature", "score", "target", "importance", "rank"]
OPTIONS = {"trees": 5, "seed": 3}

SCRIPT = NO_JVM_SCRIPT.split("import numpy as np\n")[0] + r"""
import runpy
import spark_fr

csv, job, folder = sys.argv[1:4]
t = time.perf_counter()
ranking = spark_fr.rank(csv, targets="y", trees=5, seed=3)
ranking.to_pandas().to_pickle(folder + "/api.pkl")
out.append(state("rank_csv", time.perf_counter() - t))
t = time.perf_counter()
import spark_fr.runner as runner
exit_process = runner.exit_process

def exit_recorded(code):  # the job ends its process itself (os._exit when no session was started): record first
    out.append({**state("job_csv", time.perf_counter() - t), "code": code})
    print("RESULT " + json.dumps(out), flush=True)
    exit_process(code)

runner.exit_process = exit_recorded
sys.argv = [job, "--input", csv, "--targets", "y", "--trees", "5", "--seed", "3", "--output", folder + "/job"]
runpy.run_path(job, run_name="__main__")
"""


def small_csv(path):
    rng = np.random.default_rng(5)
    n = 150
    df = pd.DataFrame({"a": rng.normal(size=n).round(3), "b": rng.normal(size=n).round(3),
                       "t": rng.choice(["red", "green", "blue"], size=n), "gap": rng.normal(size=n).round(2)})
    df.loc[::7, "gap"] = np.nan
    df["y"] = np.where(df.a + (df.t == "red") > 0.3, "yes", "no")
    df.to_csv(path, index=False, na_rep="NA")
    return path


@pytest.fixture(scope="module")
def csv_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("csv_no_jvm")
    csv = small_csv(d / "small.csv")
    drop = ("SPARK_REMOTE", "PYSPARK_SUBMIT_ARGS", "SPARK_FR_DRIVER_MAX_SECONDS")
    env = {k: v for k, v in _subprocess_env().items() if k not in drop}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(csv), str(JOB), str(d)], env=env, cwd=str(d),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
    return d, csv, {s["step"]: s for s in json.loads(line[len("RESULT "):])}


def test_the_scan_sees_the_processes_children(csv_run):
    assert "sleep" in csv_run[2]["control"]["children"]


@pytest.mark.parametrize("step", ["rank_csv", "job_csv"])
def test_no_jvm_is_started(csv_run, step):
    s = csv_run[2][step]
    assert s["java"] == [], s
    assert (s["launches"], s["gateway"], s["jvm"], s["session"]) == (0, False, False, False), s
    assert s.get("code", 0) == 0


def _sorted(t: pd.DataFrame) -> pd.DataFrame:
    return t[RANKING].sort_values(["score", "target", "feature"]).reset_index(drop=True)


def test_rankings_equal_the_spark_read_bit_for_bit(csv_run, spark, monkeypatch):
    d, csv, _ = csv_run
    monkeypatch.delenv("SPARK_FR_DRIVER_MAX_SECONDS", raising=False)  # the trees where the subprocess grew them
    read_by_spark = C.read_csv(spark, str(csv))
    assert read_by_spark.df is not None
    reference = _sorted(spark_fr.rank(read_by_spark, targets="y", spark=spark, **OPTIONS).to_pandas())
    api = _sorted(pd.read_pickle(d / "api.pkl"))
    pd.testing.assert_frame_equal(api, reference, check_exact=True)
    job = _sorted(pd.read_csv(d / "job" / "ranking.csv", float_precision="round_trip"))
    assert job[["feature", "score", "target"]].equals(reference[["feature", "score", "target"]])
    assert np.array_equal(job.importance.to_numpy(float), reference.importance.to_numpy(float))
