"""The Databricks quickstart notebook runs as a plain Python script and produces its outputs."""
import subprocess
import sys
from pathlib import Path

import pandas as pd

from conftest import _subprocess_env, check_png

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "quickstart.py"


def test_notebook_is_in_databricks_source_format():
    text = NOTEBOOK.read_text()
    assert text.startswith("# Databricks notebook source\n")
    assert text.count("\n# COMMAND ----------\n") >= 4


def test_quickstart_runs_as_a_script(datasets, tmp_path):
    env = _subprocess_env()
    env["SPARK_FR_OUT"] = str(tmp_path)
    env["SPARK_FR_DATA"] = str(datasets)
    r = subprocess.run([sys.executable, str(NOTEBOOK)], capture_output=True, text=True, env=env, timeout=600,
                       cwd=str(ROOT))
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Ranking(run_id=" in r.stdout and "genie3 (top 5)" in r.stdout
    table = pd.read_csv(tmp_path / "emotions" / "ranking.csv")
    assert set(table.target) == {"__all__", "amazed-suprised", "happy-pleased", "relaxing-calm", "quiet-still",
                                 "sad-lonely", "angry-aggresive"}
    check_png(tmp_path / "emotions.png")


def test_relational_notebook_runs_as_a_script(datasets, tmp_path):
    """notebooks/relational.py: the financial tables read with Spark and passed as DataFrames."""
    notebook = ROOT / "notebooks" / "relational.py"
    assert notebook.read_text().startswith("# Databricks notebook source\n")
    env = _subprocess_env()
    env["SPARK_FR_OUT"] = str(tmp_path)
    r = subprocess.run([sys.executable, str(notebook)], capture_output=True, text=True, env=env, timeout=600,
                       cwd=str(ROOT))
    assert r.returncode == 0, r.stderr[-3000:]
    assert "genie3, relations (top 5):" in r.stdout and "loan.account_id->account" in r.stdout
    table = pd.read_csv(tmp_path / "financial" / "ranking.csv")
    assert set(table.level) == {"feature", "attribute", "relation"}
    assert {"loan.status"}.isdisjoint(set(table.feature))  # the target is never a feature
    check_png(tmp_path / "financial.png")
