"""The notebooks of ``notebooks/`` outside Databricks: widgets with their defaults, ``display``, paths, and a
Jupyter (``.ipynb``) copy of a Databricks source notebook.

Sketch
------
A notebook of ``notebooks/`` is Databricks source format (``# Databricks notebook source``, cells separated by
``# COMMAND ----------``, ``# MAGIC`` lines for Markdown and ``%pip``). On Databricks, ``dbutils`` and
``display`` exist in the notebook; elsewhere the notebook takes this module's::

    try:
        dbutils, display          # Databricks: its widgets and its display
    except NameError:             # plain Python, Jupyter: the stand-ins below
        from spark_fr.notebook import dbutils, display

Decisions
---------
* **Widgets** (:class:`Widgets`, ``dbutils.widgets`` outside Databricks) return their default, or the
  environment variable ``SPARK_FR_WIDGET_<NAME>`` (the name upper-cased, non-alphanumerics as ``_``) when it is
  set: a test or a scheduler sets a notebook's parameters without editing it (``SPARK_FR_WIDGET_TREES=20``).
  Reading a widget that was never defined is an error, as on Databricks.
* **display** (:func:`display`): in IPython (Jupyter) it is IPython's, with a Spark DataFrame shown as a pandas
  table of its first 1,000 rows (Databricks shows a Spark DataFrame as a grid; IPython would show its
  schema only). In a plain process it prints: a ranking's ``repr`` and :meth:`~spark_fr.ranking.Ranking.summary`,
  the first 20 rows of a Spark or pandas DataFrame, a line for a figure (a script cannot show it).
* **Paths** (:func:`find_path`): a notebook never uses ``__file__`` (Databricks notebooks have none). Its
  default paths are relative (``conf/relational/financial.yaml``, ``shared/datasets``) and found from the working
  directory upwards: the project's root when run as a script or by the tests, ``notebooks/`` in Jupyter, the
  notebook's folder in a Databricks Repo; an environment variable overrides the search.
* **Jupyter**: :func:`to_ipynb` (``python -m spark_fr.notebook notebooks/quickstart.py quickstart.ipynb``)
  writes a notebook Jupyter opens: ``%md`` cells become Markdown cells, other ``# MAGIC`` cells (``%pip``) code
  cells holding the magic (IPython runs ``%pip`` too; ``skip_pip=True`` leaves them out).
"""
from __future__ import annotations

import json
import os
import re
import sys

from .errors import InputError

HEADER = "# Databricks notebook source"
SEPARATOR = "# COMMAND ----------"
MAGIC = "# MAGIC"
WIDGET_ENV = "SPARK_FR_WIDGET_"
#: rows shown by display: of a Spark DataFrame in Jupyter, of any table when printed
JUPYTER_ROWS, PRINTED_ROWS = 1000, 20


class Widgets:
    """``dbutils.widgets`` outside Databricks: every widget returns its value given to :func:`run_notebook`, else
    ``SPARK_FR_WIDGET_<NAME>``, else its default."""

    def __init__(self, values: dict | None = None):
        self._defaults: dict = {}
        self._values = {name: str(value) for name, value in (values or {}).items()}

    @staticmethod
    def env_name(name: str) -> str:
        """The environment variable that overrides widget ``name``."""
        return WIDGET_ENV + re.sub(r"[^0-9A-Za-z]", "_", name).upper()

    def text(self, name: str, defaultValue: str = "", label: str | None = None) -> None:
        self._defaults[name] = str(defaultValue)

    def dropdown(self, name: str, defaultValue: str, choices, label: str | None = None) -> None:
        if defaultValue not in choices:
            raise InputError(f"widget {name!r}: default {defaultValue!r} is not one of its choices {list(choices)}")
        self._defaults[name] = str(defaultValue)

    combobox = dropdown

    def multiselect(self, name: str, defaultValue: str, choices, label: str | None = None) -> None:
        self.dropdown(name, defaultValue, choices, label)

    def get(self, name: str) -> str:
        if name not in self._defaults:
            raise InputError(f"no widget named {name!r} (define it first: dbutils.widgets.text({name!r}, default))")
        if name in self._values:
            return self._values[name]
        return os.environ.get(self.env_name(name), self._defaults[name])

    def getArgument(self, name: str, defaultValue: str | None = None) -> str | None:
        return self.get(name) if name in self._defaults else defaultValue

    def getAll(self) -> dict:
        return {name: self.get(name) for name in self._defaults}

    def remove(self, name: str) -> None:
        self._defaults.pop(name, None)

    def removeAll(self) -> None:
        self._defaults.clear()


class _Dbutils:
    """The part of Databricks' ``dbutils`` the notebooks use: ``dbutils.widgets``."""

    def __init__(self, values: dict | None = None):
        self.widgets = Widgets(values)


#: ``dbutils`` outside Databricks (widgets only)
dbutils = _Dbutils()


def _ipython():
    """The running IPython shell, or None (a plain process)."""
    module = sys.modules.get("IPython")
    return module.get_ipython() if module is not None else None


def _loaded_type(module: str, name: str):
    """The class ``module.name`` when its module is loaded, else None (no object of it can exist then)."""
    return getattr(sys.modules.get(module), name, None)


def _is_instance(obj, *types) -> bool:
    return any(t is not None and isinstance(obj, t) for t in types)


def kind_of(obj) -> str:
    """What :func:`display` takes ``obj`` for: 'ranking', 'spark', 'pandas', 'figure' or 'other'.

    Decision: by real types only, never by attributes (a Spark Connect DataFrame answers every attribute with a
    column, so it "has" ``summary`` and ``to_html``): :class:`spark_fr.ranking.Ranking`, a classic or a Connect
    :class:`pyspark.sql.DataFrame` (``pyspark.sql.DataFrame`` is the parent of both in pyspark 4; the Connect
    class is named too, for a ``pyspark-client`` whose parent may differ), a pandas DataFrame, a matplotlib
    Figure. A type is looked up in ``sys.modules``: this module sits below them all and imports none of them,
    and an object of a type whose module is not loaded cannot exist.
    """
    if _is_instance(obj, _loaded_type("spark_fr.ranking", "Ranking")):
        return "ranking"
    if _is_instance(obj, _loaded_type("pyspark.sql.dataframe", "DataFrame"),
                    _loaded_type("pyspark.sql.connect.dataframe", "DataFrame")):
        return "spark"
    if _is_instance(obj, _loaded_type("pandas", "DataFrame")):
        return "pandas"
    if _is_instance(obj, _loaded_type("matplotlib.figure", "Figure")):
        return "figure"
    return "other"


def display(*objs) -> None:
    """Show objects as a notebook would (module notes): IPython's display in Jupyter, text in a plain process."""
    shell = _ipython()
    for obj in objs:
        if shell is not None:
            from IPython.display import display as ipython_display

            ipython_display(obj.limit(JUPYTER_ROWS).toPandas() if kind_of(obj) == "spark" else obj)
        else:
            print(as_text(obj))


def as_text(obj) -> str:
    """What :func:`display` prints for ``obj`` in a plain process."""
    kind = kind_of(obj)
    if kind == "ranking":
        return f"{obj!r}\n{obj.summary(10)}"
    if kind == "spark":
        obj, kind = obj.limit(PRINTED_ROWS + 1).toPandas(), "pandas"
    if kind == "pandas":
        more = "\n…" if len(obj) > PRINTED_ROWS else ""
        return obj.head(PRINTED_ROWS).to_string(index=False, max_colwidth=60) + more
    if kind == "figure":
        w, h = obj.get_size_inches()
        return f"<matplotlib figure {w:.1f} x {h:.1f} in, {len(obj.axes)} panel(s): shown in a notebook>"
    return str(obj)


def run_notebook(path: str, spark, widgets: dict | None = None) -> dict:
    """Run the code cells of the Databricks source notebook at ``path`` in this process, on ``spark``.

    Parameters
    ----------
    path : str
        A notebook of ``notebooks/``.
    spark : pyspark.sql.SparkSession
        The notebook's ``spark``: a classic or a Spark Connect session (as Databricks gives one).
    widgets : dict, optional
        Widget values (``{"trees": 20}``); the others keep their defaults (or ``SPARK_FR_WIDGET_<NAME>``).

    Returns
    -------
    dict
        The notebook's variables after its last cell.

    Notes
    -----
    Decision: ``%pip`` and ``%md`` cells are skipped (the package is installed; Markdown shows nothing), the code
    cells run in one namespace holding ``spark``, this module's ``dbutils`` (with ``widgets``) and ``display``, as
    Databricks runs them; a failing cell raises with the notebook's file and line in the traceback.
    """
    with open(path, encoding="utf-8") as fh:
        cells = source_cells(fh.read())
    namespace = {"__name__": "__notebook__", "spark": spark, "dbutils": _Dbutils(widgets), "display": display}
    for kind, text in cells:
        if kind == "code":
            exec(compile(text, str(path), "exec"), namespace)  # noqa: S102 - the notebook is the code to run
    return namespace


def find_path(relative: str, env: str | None = None) -> str:
    """``relative`` found from the working directory upwards (module notes), or ``$env`` when it is set.

    Returns
    -------
    str
        The first existing ``<dir>/<relative>`` for the working directory and its parents; ``relative`` itself
        when none exists (a reader's error then names it).
    """
    if env and os.environ.get(env):
        return os.environ[env]
    here = os.getcwd()
    while True:
        candidate = os.path.join(here, relative)
        if os.path.exists(candidate):
            return candidate
        parent = os.path.dirname(here)
        if parent == here:
            return relative
        here = parent


def source_cells(text: str) -> list:
    """The cells of a Databricks source notebook: ``[(kind, text)]`` with kind 'markdown', 'magic' or 'code'."""
    if not text.startswith(HEADER):
        raise InputError(f"not a Databricks source notebook: it does not start with {HEADER!r}")
    body = text[len(HEADER):]
    cells = []
    for chunk in re.split(rf"^{re.escape(SEPARATOR)}[ \t]*$", body, flags=re.M):
        lines = chunk.strip("\n").splitlines()
        if not any(line.strip() for line in lines):
            continue
        if all(line.startswith(MAGIC) for line in lines):
            lines = [line[len(MAGIC):][1:] if line.startswith(MAGIC + " ") else line[len(MAGIC):] for line in lines]
            if lines[0].startswith("%md"):
                first = lines[0][3:].strip()
                cells.append(("markdown", "\n".join(([first] if first else []) + lines[1:])))
            else:
                cells.append(("magic", "\n".join(lines)))
        else:
            cells.append(("code", "\n".join(lines)))
    return cells


def to_ipynb(source: str, skip_pip: bool = False) -> dict:
    """A Jupyter notebook (nbformat 4, as a dict) of a Databricks source notebook's text (module notes)."""
    out = []
    for kind, text in source_cells(source):
        if kind == "magic" and skip_pip and text.lstrip().startswith("%pip"):
            continue
        cell = {"id": f"cell-{len(out)}", "cell_type": "markdown" if kind == "markdown" else "code", "metadata": {},
                "source": text}
        if cell["cell_type"] == "code":
            cell.update(execution_count=None, outputs=[])
        out.append(cell)
    return {"nbformat": 4, "nbformat_minor": 5, "cells": out,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                         "language_info": {"name": "python"}}}


def main(argv=None) -> int:
    """``python -m spark_fr.notebook SOURCE.py OUT.ipynb [--skip-pip]``: write the Jupyter copy."""
    args = list(sys.argv[1:] if argv is None else argv)
    skip = "--skip-pip" in args
    args = [a for a in args if a != "--skip-pip"]
    if len(args) != 2:
        print("usage: python -m spark_fr.notebook SOURCE.py OUT.ipynb [--skip-pip]", file=sys.stderr)
        return 2
    try:
        with open(args[0], encoding="utf-8") as fh:
            notebook = to_ipynb(fh.read(), skip_pip=skip)
    except (OSError, InputError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    with open(args[1], "w", encoding="utf-8") as fh:
        json.dump(notebook, fh, indent=1)
        fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
