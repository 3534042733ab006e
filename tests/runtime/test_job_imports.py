"""The rank job's modules import without pandas and pyspark.ml (each costs 0.3-0.4 s; the job loads pandas in its
warm-up thread, beside the input's read, and pyspark.ml only for vector columns), and a run that never needs Spark
never imports pyspark (0.1 s)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.paths import DATASETS, JOB, ROOT

PROBE = """import json, sys
import spark_fr.cli, spark_fr.api, spark_fr.ranking, spark_fr.io.writers, spark_fr.io.arff.spark, spark_fr.data.schema
print(json.dumps([m for m in ("pandas", "pyspark.ml", "scipy.sparse") if m in sys.modules]))
"""


def test_the_rank_jobs_modules_import_neither_pandas_nor_pyspark_ml():
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


PARSER_PROBE = """import json, sys
from spark_fr.cli import JOB
JOB.parser().parse_args(["--input", "x.csv", "--targets", "y"])
print(json.dumps([m for m in ("numba", "spark_fr.tasks.registry") if m in sys.modules]))
"""


def test_the_rank_jobs_command_line_is_parsed_without_numba():
    """The main thread parses the command line before it starts the warm-up thread: the task registry (every task,
    numba: ~0.4 s) is imported there, beside the input's read, not while the parser is built."""
    out = subprocess.run([sys.executable, "-c", PARSER_PROBE], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


@pytest.mark.parametrize("kind", ["arff", "parquet"])
def test_a_run_on_a_file_without_spark_never_imports_pyspark(tmp_path, kind):
    """The README's job (the ENB ARFF, read and ranked on the driver), and a table of its shape as a local Parquet file
    (read with pyarrow), import no pyspark module: not to check for a session, to read the file, or to write its versions
    into the run's metadata (which still names pyspark's). With the job's own driver budget (the suite's conftest sets
    0 s, sending work to Spark)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = DATASETS / "mtr_enb" / "enb.arff"
    if kind == "parquet":  # 768 rows of 8 features and the two targets
        rng = np.random.default_rng(1)
        pq.write_table(pa.table({c: rng.normal(size=768) for c in [f"X{i}" for i in range(1, 9)] + ["Y1", "Y2"]}),
                       tmp_path / "enb.parquet")
        data = tmp_path / "enb.parquet"
    env = {k: v for k, v in os.environ.items() if k != "SPARK_FR_DRIVER_MAX_SECONDS"}
    out = subprocess.run([sys.executable, "-X", "importtime", str(JOB), "--input", str(data),
                          "--targets", "Y1,Y2", "--trees", "2", "--seed", "1", "--output", str(tmp_path / "out"),
                          "--log-level", "warning"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines() if line.startswith("import time:")}
    assert "numpy" in imported  # the probe sees the imports
    assert not {m for m in imported if m.split(".")[0] == "pyspark"}
    assert json.loads((tmp_path / "out" / "run.json").read_text())["versions"]["pyspark"]
