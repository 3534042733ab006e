"""No JVM for small local work (issue 35, acceptance): in a fresh Python process, spark_fr.rank on a local ARFF file
and on a pandas DataFrame, and a scikit-learn Pipeline (FeatureRanker -> LogisticRegression) in GridSearchCV on a
pandas frame, start no Java process and no py4j gateway.

How it is checked (it cannot pass by accident): after each step the process lists its own descendants with psutil
and looks for one whose name or command line says java; pyspark's gateway launcher (``launch_gateway``, wrapped
in both modules that hold it) counts its calls; ``SparkContext._gateway`` / ``_jvm`` and the active session must
stay None. The scan is first shown to see a child the process started itself (a ``sleep``), so an empty answer
means no JVM, not a scanner that sees nothing.
"""
import json
import subprocess
import sys
import time

import pytest

from tests.conftest import _subprocess_env
from tests.paths import DATASETS, ROOT

SCRIPT = r"""
import json, subprocess, sys, time
import psutil
import pyspark.context, pyspark.java_gateway

launches = []
original = pyspark.java_gateway.launch_gateway
def counted(*args, **kwargs):
    launches.append(1)
    return original(*args, **kwargs)
pyspark.java_gateway.launch_gateway = pyspark.context.launch_gateway = counted

def java_descendants():
    found = []
    for p in psutil.Process().children(recursive=True):
        try:
            words = (p.name() + " " + " ".join(p.cmdline())).lower()
        except psutil.Error:
            continue
        if "java" in words:
            found.append(words[:200])
    return found

def state(step, seconds):
    from pyspark import SparkContext
    from pyspark.sql import SparkSession
    return {"step": step, "seconds": round(seconds, 2), "java": java_descendants(), "launches": len(launches),
            "gateway": SparkContext._gateway is not None, "jvm": SparkContext._jvm is not None,
            "session": SparkSession.getActiveSession() is not None}

out = []
control = subprocess.Popen(["sleep", "60"])
seen = [p.name() for p in psutil.Process().children(recursive=True)]
control.kill(); control.wait()
out.append({"step": "control", "children": seen})

import numpy as np
import pandas as pd
import spark_fr
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from spark_fr.sklearn import FeatureRanker

t = time.perf_counter()
ranking = spark_fr.rank(sys.argv[1], targets="Y1,Y2", trees=5, seed=1)
out.append({**state("rank_arff", time.perf_counter() - t), "top": ranking.top(n=1)["feature"].iloc[0]})

X, y = load_iris(return_X_y=True, as_frame=True)
t = time.perf_counter()
ranking = spark_fr.rank(X.assign(species=[str(v) for v in y]), targets="species", trees=5, seed=1)
out.append({**state("rank_pandas", time.perf_counter() - t), "top": ranking.top(n=1)["feature"].iloc[0]})

t = time.perf_counter()
pipe = Pipeline([("rank", FeatureRanker(trees=5, random_state=0)), ("clf", LogisticRegression(max_iter=500))])
search = GridSearchCV(pipe, {"rank__n_features_to_select": [1, 2, 3]}, cv=3).fit(X, y)
out.append({**state("grid_search", time.perf_counter() - t), "best": search.best_params_,
            "accuracy": search.score(X, y)})
print("RESULT " + json.dumps(out))
"""


@pytest.fixture(scope="module")
def no_jvm_run(tmp_path_factory):
    # as users run it: small work in the driver (the suite's conftest sends all work to Spark tasks), no Connect
    # server (with SPARK_FR_DRIVER_MAX_SECONDS=0 this process does start a JVM, and every check here says so)
    drop = ("SPARK_REMOTE", "PYSPARK_SUBMIT_ARGS", "SPARK_FR_DRIVER_MAX_SECONDS")
    env = {k: v for k, v in _subprocess_env().items() if k not in drop}
    env["PYTHONPATH"] = str(ROOT)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(DATASETS / "mtr_enb" / "enb.arff")], env=env,
                          cwd=str(tmp_path_factory.mktemp("no_jvm")), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
    steps = {s["step"]: s for s in json.loads(line[len("RESULT "):])}
    steps["process_s"] = time.perf_counter() - t0
    return steps


def test_the_scan_sees_the_processes_children(no_jvm_run):
    assert "sleep" in no_jvm_run["control"]["children"]


@pytest.mark.parametrize("step", ["rank_arff", "rank_pandas", "grid_search"])
def test_no_jvm_is_started(no_jvm_run, step):
    s = no_jvm_run[step]
    assert s["java"] == [], s
    assert (s["launches"], s["gateway"], s["jvm"], s["session"]) == (0, False, False, False), s


def test_the_work_was_done(no_jvm_run):
    assert no_jvm_run["rank_arff"]["top"]
    assert no_jvm_run["rank_pandas"]["top"] in ("petal length (cm)", "petal width (cm)")
    assert no_jvm_run["grid_search"]["best"]["rank__n_features_to_select"] in (1, 2, 3)
    assert no_jvm_run["grid_search"]["accuracy"] > 0.9
