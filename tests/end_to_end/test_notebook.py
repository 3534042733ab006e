"""The notebooks of notebooks/: Databricks source format with a %pip cell, widgets and display, no __file__; they
run as plain Python scripts (widgets keep their defaults, paths found from the working directory) and, turned
into .ipynb, in a real Jupyter kernel, where the ranking shows as HTML, the plot inline and the progress under
the cell. The stand-ins of spark_fr.notebook are tested on their own too."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import _subprocess_env, check_png
from spark_fr.errors import InputError
from spark_fr.notebook import Widgets, as_text, find_path, source_cells, to_ipynb
from tests.paths import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.py"))
QUICKSTART = ROOT / "notebooks" / "quickstart.py"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_a_databricks_notebook(notebook):
    """Source format, a %pip cell before any code, widgets with defaults, display, and no __file__."""
    text = notebook.read_text()
    assert text.startswith("# Databricks notebook source\n")
    assert text.count("\n# COMMAND ----------\n") >= 4
    cells = source_cells(text)
    kinds = [kind for kind, _ in cells]
    assert kinds[0] == "markdown" and cells[1] == ("magic", "%pip install spark_fr")
    assert "code" not in kinds[:2]
    code = "\n".join(body for kind, body in cells if kind == "code")
    assert "__file__" not in text
    assert "dbutils.widgets.text(" in code and "dbutils.widgets.get(" in code
    assert "display(ranking)" in code and "display(fig)" in code


def _run_script(notebook: Path, tmp_path: Path, **widgets) -> subprocess.CompletedProcess:
    """The notebook as a plain Python process from the project's root, widgets set by the environment."""
    env = _subprocess_env()
    env.pop("SPARK_FR_DATA", None)  # the datasets are found from the working directory upwards
    env.pop("SPARK_FR_DRIVER_MAX_SECONDS", None)  # as users run it: small work in the driver
    env["SPARK_FR_OUT"] = str(tmp_path)
    env.update({Widgets.env_name(k): str(v) for k, v in widgets.items()})
    return subprocess.run([sys.executable, str(notebook)], capture_output=True, text=True, env=env, timeout=900,
                          cwd=str(ROOT))


def test_quickstart_runs_as_a_script(tmp_path):
    r = _run_script(QUICKSTART, tmp_path, trees=30)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Ranking(run_id=" in r.stdout and "genie3 (top 10):" in r.stdout  # display(ranking)
    assert "<matplotlib figure" in r.stdout  # display(fig), which a script cannot show
    # the progress and what the run did, with no logging configured by the script
    assert "] input " in r.stderr and "[spark_fr " in r.stderr
    table = pd.read_csv(tmp_path / "ranking" / "ranking.csv")
    assert set(table.target) == {"__all__", "amazed-suprised", "happy-pleased", "relaxing-calm", "quiet-still",
                                 "sad-lonely", "angry-aggresive"}
    assert json.loads(table.params.iloc[0])["trees"] == 30  # the widget's value reached the run
    check_png(tmp_path / "ranking.png")


def test_relational_notebook_runs_as_a_script(tmp_path):
    """notebooks/relational.py: the financial tables read with Spark and passed as DataFrames."""
    r = _run_script(ROOT / "notebooks" / "relational.py", tmp_path, trees=10, cv_folds=2)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "genie3, relations (top 10):" in r.stdout and "loan.account_id->account" in r.stdout
    assert "(2 folds)" in r.stdout  # the widgets' values reached the run
    assert "[spark_fr " in r.stderr and "relational: " in r.stderr
    table = pd.read_csv(tmp_path / "financial" / "ranking.csv")
    assert set(table.level) == {"feature", "attribute", "relation"}
    assert {"loan.status"}.isdisjoint(set(table.feature))  # the target is never a feature
    check_png(tmp_path / "financial.png")


def test_scheduled_notebook_runs_twice_and_shows_the_drift(tmp_path):
    """notebooks/scheduled.py: two runs appended to one Delta table, then their drift, heat map and alert."""
    r = _run_script(ROOT / "notebooks" / "scheduled.py", tmp_path, trees=20)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.count("appended to") == 2 and "genie3 [__all__]: FJI area" in r.stdout
    assert "left the top 10: support_calls" in r.stdout  # the demo's day 2: support_calls lost its effect
    assert "ALERT: drift" in r.stdout  # above the widget's 0.1
    from deltalake import DeltaTable

    rows = DeltaTable(str(tmp_path / "rankings")).to_pandas()
    assert rows.run_id.nunique() == 2 and set(rows.score) == {"genie3"}
    check_png(tmp_path / "drift.png")


def test_quickstart_runs_in_a_jupyter_kernel(tmp_path, monkeypatch):
    """The .ipynb copy (without the %pip cell) in a real IPython kernel: display(ranking) is the HTML table,
    display(fig) one PNG, the run's log lines and progress show under the cell (stderr stream)."""
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("ipykernel")
    nb = nbformat.from_dict(to_ipynb(QUICKSTART.read_text(), skip_pip=True))
    nbformat.validate(nb)
    for key, value in _subprocess_env().items():  # the kernel inherits this process's environment
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("SPARK_FR_DATA", raising=False)
    monkeypatch.delenv("SPARK_FR_DRIVER_MAX_SECONDS", raising=False)  # as users run it: small work in the driver
    monkeypatch.setenv("SPARK_FR_OUT", str(tmp_path))
    monkeypatch.setenv(Widgets.env_name("trees"), "20")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    nbclient.NotebookClient(nb, timeout=900, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert any("spark_fr Ranking" in h and "<table" in h and "genie3" in h for h in html)
    assert any("<table" in h and "importance" in h and "spark_fr" not in h for h in html)  # a Spark DataFrame
    assert sum("image/png" in o.get("data", {}) for o in outputs) == 1  # the figure, once
    stderr = "".join(o.get("text", "") for o in outputs if o.get("name") == "stderr")
    assert "[spark_fr " in stderr and "] input " in stderr
    assert not [o for o in outputs if o["output_type"] == "error"]
    check_png(tmp_path / "ranking.png")  # run from notebooks/: the datasets were found upwards


# ----- the stand-ins and the conversion ---------------------------------------------------------------------
def test_widgets_return_their_defaults_or_the_environment(monkeypatch):
    w = Widgets()
    w.text("input", "a.csv", "input")
    w.dropdown("method", "relief", ["ensemble", "relief"])
    assert w.get("input") == "a.csv" and w.getArgument("nope", "x") == "x"
    monkeypatch.setenv("SPARK_FR_WIDGET_INPUT", "b.csv")
    assert w.getAll() == {"input": "b.csv", "method": "relief"}
    with pytest.raises(InputError, match="no widget named 'trees'"):
        w.get("trees")
    with pytest.raises(InputError, match="not one of its choices"):
        w.dropdown("score", "rf", ["genie3"])
    assert Widgets.env_name("labels-xml") == "SPARK_FR_WIDGET_LABELS_XML"


def test_find_path_walks_up_from_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "x.yaml").write_text("a: 1\n")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    assert find_path("conf/x.yaml") == str(tmp_path / "conf" / "x.yaml")
    assert find_path("conf/missing.yaml") == "conf/missing.yaml"
    monkeypatch.setenv("SPARK_FR_SOMEWHERE", "/elsewhere")
    assert find_path("conf/x.yaml", env="SPARK_FR_SOMEWHERE") == "/elsewhere"


def test_source_cells_and_ipynb_of_a_source_notebook():
    text = ("# Databricks notebook source\n# MAGIC %md\n# MAGIC # Title\n# MAGIC text\n\n# COMMAND ----------\n\n"
            "# MAGIC %pip install spark_fr\n\n# COMMAND ----------\n\nx = 1\n# a comment\n")
    assert source_cells(text) == [("markdown", "# Title\ntext"), ("magic", "%pip install spark_fr"),
                                  ("code", "x = 1\n# a comment")]
    nb = to_ipynb(text)
    assert [c["cell_type"] for c in nb["cells"]] == ["markdown", "code", "code"]
    assert nb["cells"][1]["source"] == "%pip install spark_fr"
    assert [c["cell_type"] for c in to_ipynb(text, skip_pip=True)["cells"]] == ["markdown", "code"]
    with pytest.raises(InputError, match="not a Databricks source notebook"):
        source_cells("print(1)\n")


def test_ipynb_command_line(tmp_path):
    out = tmp_path / "quickstart.ipynb"
    r = subprocess.run([sys.executable, "-m", "spark_fr.notebook", str(QUICKSTART), str(out)], capture_output=True,
                       text=True, env=_subprocess_env(), cwd=str(ROOT), timeout=120)
    assert r.returncode == 0, r.stderr
    nb = json.loads(out.read_text())
    assert nb["nbformat"] == 4 and nb["cells"][0]["cell_type"] == "markdown"
    assert nb["cells"][1]["source"] == "%pip install spark_fr"
    bad = subprocess.run([sys.executable, "-m", "spark_fr.notebook", str(ROOT / "README.md"), str(out)],
                         capture_output=True, text=True, env=_subprocess_env(), cwd=str(ROOT), timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "not a Databricks source notebook" in bad.stderr


def test_printed_display_of_tables_and_figures():
    frame = pd.DataFrame({"feature": [f"x{i}" for i in range(30)], "importance": range(30)})
    text = as_text(frame)
    assert "x19" in text and "x20" not in text and text.endswith("…")
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4, 3))
    fig.add_subplot()
    assert as_text(fig) == "<matplotlib figure 4.0 x 3.0 in, 1 panel(s): shown in a notebook>"
    assert as_text(42) == "42"
