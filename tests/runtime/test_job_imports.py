"""The rank job's modules import without pandas and pyspark.ml (each costs 0.3-0.4 s; the job loads pandas in its
warm-up thread, beside the input's read, and pyspark.ml only for vector columns)."""
from __future__ import annotations

import json
import subprocess
import sys

from tests.paths import ROOT

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
