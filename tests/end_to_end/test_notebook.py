"""The notebooks of notebooks/: Databricks source format with a %pip cell, widgets and display, no __file__; each
runs in this process (spark_fr.notebook.run_notebook, paths found from the working directory) on the suite's
classic session AND on its Spark Connect session (the sessions are shared: no JVM started here), and quickstart,
turned into .ipynb, in a real Jupyter kernel (its own process and session), where the ranking shows as HTML, the
plot inline and the progress under the cell. The stand-ins of spark_fr.notebook are tested on their own too."""
import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import _subprocess_env, check_png
from spark_fr.errors import InputError
from spark_fr.notebook import Widgets, as_text, find_path, kind_of, run_notebook, source_cells, to_ipynb
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


def check_quickstart(stdout: str, out: Path, trees: int) -> None:
    """What notebooks/quickstart.py printed and wrote."""
    assert "Ranking(run_id=" in stdout and "genie3 (top 10):" in stdout  # display(ranking)
    assert "importance_std" in stdout  # display of a Spark DataFrame (the second display)
    assert "<matplotlib figure" in stdout  # display(fig), which a script cannot show
    table = pd.read_csv(out / "ranking" / "ranking.csv")
    assert set(table.target) == {"__all__", "amazed-suprised", "happy-pleased", "relaxing-calm", "quiet-still",
                                 "sad-lonely", "angry-aggresive"}
    assert json.loads(table.params.iloc[0])["trees"] == trees  # the widget's value reached the run
    check_png(out / "ranking.png")


def check_relational(stdout: str, out: Path) -> None:
    """What notebooks/relational.py printed and wrote (the financial tables read with Spark, as DataFrames)."""
    assert "genie3, relations (top 10):" in stdout and "loan.account_id->account" in stdout
    assert "(2 folds)" in stdout  # the widgets' values reached the run
    table = pd.read_csv(out / "financial" / "ranking.csv")
    assert set(table.level) == {"feature", "attribute", "relation"}
    assert {"loan.status"}.isdisjoint(set(table.feature))  # the target is never a feature
    check_png(out / "financial.png")


def check_scheduled(stdout: str, out: Path) -> None:
    """What notebooks/scheduled.py printed and wrote: two runs appended to one Delta table, their drift, the
    heat map and the alert."""
    assert stdout.count("appended to") == 2 and "genie3 [__all__]: FJI area" in stdout
    assert "left the top 10: support_calls" in stdout  # the demo's day 2: support_calls lost its effect
    assert "ALERT: drift" in stdout  # above the widget's 0.1
    from deltalake import DeltaTable

    rows = DeltaTable(str(out / "rankings")).to_pandas()
    assert rows.run_id.nunique() == 2 and set(rows.score) == {"genie3"}
    check_png(out / "drift.png")


#: small runs: (widgets, check) per notebook
IN_PROCESS = {
    "quickstart.py": ({"trees": 10}, lambda stdout, out: check_quickstart(stdout, out, trees=10)),
    "relational.py": ({"trees": 5, "cv_folds": 2}, check_relational),
    "scheduled.py": ({"trees": 10}, check_scheduled),
}


def run_in_process(spark, name: str, out: str) -> str:
    """notebooks/<name> run in this process on ``spark`` from the project's root (module level: the Connect worker
    runs it too), its small widgets and ``output`` set: what it printed."""
    buffer = io.StringIO()
    with contextlib.chdir(ROOT), contextlib.redirect_stdout(buffer):
        run_notebook(str(ROOT / "notebooks" / name), spark, widgets={**IN_PROCESS[name][0], "output": out})
    return buffer.getvalue()


@pytest.mark.parametrize("name", sorted(IN_PROCESS))
def test_notebook_runs_on_the_classic_session(spark, name, tmp_path):
    """The notebook in this process on the suite's classic session, as ``python notebooks/<name>`` runs it but for
    the session, which is the suite's (the plain process, its own session and its log lines: the Jupyter kernel
    below)."""
    IN_PROCESS[name][1](run_in_process(spark, name, str(tmp_path)), tmp_path)


@pytest.mark.parametrize("name", sorted(IN_PROCESS))
def test_notebook_runs_on_spark_connect(connect, name, tmp_path):
    """The notebook on the suite's Spark Connect session (as on Databricks serverless or a shared cluster): its
    DataFrames are Connect DataFrames, which display takes for tables, never for a ranking."""
    IN_PROCESS[name][1](connect.run(run_in_process, name, str(tmp_path)), tmp_path)


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
    monkeypatch.setenv(Widgets.env_name("trees"), "10")
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
    given = Widgets({"input": "c.csv"})  # run_notebook's values come first
    given.text("input", "a.csv")
    assert given.get("input") == "c.csv"


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


def _display_of_a_range(spark) -> tuple:
    frame = spark.range(3).withColumnRenamed("id", "importance")
    return kind_of(frame), as_text(frame)


def test_display_takes_classic_and_connect_dataframes_for_tables(spark, connect):
    """By their types: a Connect DataFrame answers any attribute (``summary``, ``to_html``) with a column, and was
    once shown as a ranking (a crash at quickstart's second display under SPARK_REMOTE)."""
    for kind, text in (_display_of_a_range(spark), connect.run(_display_of_a_range)):
        assert kind == "spark" and text.split() == ["importance", "0", "1", "2"]


def test_display_kinds_of_plain_objects():
    assert kind_of(pd.DataFrame({"a": [1]})) == "pandas" and kind_of(42) == kind_of("summary") == "other"

    class LooksLikeARanking:  # has a Ranking's methods, is not one
        def summary(self, n):
            raise AssertionError("display called summary on an object that is not a Ranking")

        to_html = summary

    assert kind_of(LooksLikeARanking()) == "other"


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
