"""What the peer scripts share: reading a dense ARFF file with pandas or a Parquet table with pyarrow (features
first, targets last), the per-node feature fraction of the boosting libraries' forests, ordering features by
importance, running CLUS through the shared ``run_clus.py``, parsing a Relief iteration
count, writing the result.

Sketch
------
Every peer script is started as its own process (``python jobs/peers/NAME.py ARFF [options] OUTPUT``),
which puts this folder first on ``sys.path``, so ``import _common`` finds this module. It imports only
the standard library at the top: a peer pays for pandas, NumPy or CLUS only when it uses them, so the
benchmark measures the peer and not this helper. Every peer writes one JSON object to OUTPUT whose
``order`` lists the feature names, most important first; the other keys are the peer's own facts
(timings, CLUS' own measurements), which ``jobs/benchmark.py`` records with each run.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

CLUS_TOOLS = Path(__file__).resolve().parents[3] / "shared" / "tools" / "clus"


def peer_parser(description: str, arff_help: str):
    """The command line every peer starts from: ``ARFF OUTPUT`` (options may come between them).

    Parameters
    ----------
    description : str
        The script's docstring (shown by ``--help`` as written).
    arff_help : str
        What the ARFF file must hold.

    Returns
    -------
    argparse.ArgumentParser
    """
    import argparse

    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("arff", help=arff_help)
    parser.add_argument("output", help="result JSON file")
    return parser


def arff_header(path: str) -> tuple:
    """The attribute names of an ARFF file and the number of lines up to and including ``@data``.

    Parameters
    ----------
    path : str
        A dense ARFF file with one attribute per ``@attribute`` line.

    Returns
    -------
    tuple of (list of str, int)
        The names in file order, and how many lines to skip to reach the first data row.
    """
    names, skip = [], 0
    with open(path) as fh:
        for skip, line in enumerate(fh, start=1):
            low = line.strip().lower()
            if low.startswith("@attribute"):
                names.append(line.split()[1])
            elif low == "@data":
                break
    return names, skip


def read_arff(path: str, dtype=None) -> tuple:
    """Read a dense ARFF file the way a pandas user would: the header by hand, the rows with ``read_csv``.

    Parameters
    ----------
    path : str
    dtype : optional
        ``dtype`` of :func:`pandas.read_csv` (``numpy.float64`` when every column is numeric).

    Returns
    -------
    tuple of (list of str, pandas.DataFrame)
        The attribute names and the data, one column per attribute (integer column labels).
    """
    import pandas as pd

    names, skip = arff_header(path)
    return names, pd.read_csv(path, skiprows=skip, header=None, dtype=dtype)


def is_parquet(path: str) -> bool:
    """Whether ``path`` is a Parquet table: a ``.parquet`` file, or a directory (of Parquet parts).

    Parameters
    ----------
    path : str

    Returns
    -------
    bool
    """
    return str(path).endswith(".parquet") or Path(path).is_dir()


def read_parquet_columns(path: str) -> tuple:
    """Read a Parquet table with pyarrow, column by column (no pandas frame in between).

    Parameters
    ----------
    path : str
        A Parquet file or a directory of Parquet files.

    Returns
    -------
    tuple of (list of str, list of numpy.ndarray)
        The column names in file order and one array per column (numbers keep their width: float32 stays
        float32; strings become object arrays).
    """
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    return table.column_names, [col.to_numpy() for col in table.columns]


def read_table(path: str, classifier: bool) -> tuple:
    """The column names and one array per column, from ARFF (pandas) or Parquet (pyarrow).

    Parameters
    ----------
    path : str
    classifier : bool
        Read the ARFF file without forcing every column to float64 (the class column is text).

    Returns
    -------
    tuple of (list of str, list of numpy.ndarray)
    """
    import numpy as np

    if is_parquet(path):
        return read_parquet_columns(path)
    names, data = read_arff(path, dtype=None if classifier else np.float64)
    return names, [data[i].to_numpy() for i in range(len(names))]


def read_features_targets(path: str, features: int | None, targets: int, classifier: bool) -> tuple:
    """The feature names, the feature matrix and the targets of a table whose targets follow its features.

    Parameters
    ----------
    path : str
        A dense ARFF file or a Parquet table.
    features : int or None
        The number of leading feature columns (None: every column before the targets).
    targets : int
        The number of target columns after the features (1 for ``classifier``).
    classifier : bool
        One target of class labels, returned as it is; else the targets as float64.

    Returns
    -------
    tuple of (list of str, numpy.ndarray, numpy.ndarray)
        ``names``, ``X`` (rows x features, the columns' own type: float32 stays float32) and ``Y`` (rows x
        targets float64, or the class column).
    """
    import numpy as np

    names, columns = read_table(path, classifier)
    p = len(names) - targets if features is None else features
    X = np.column_stack(columns[:p])
    Y = columns[p] if classifier else np.column_stack(columns[p:p + targets]).astype(np.float64)
    return names[:p], X, Y


def bootstrap_share(rows: int, max_samples=None) -> float:
    """The expected share of distinct rows in ``m`` draws with replacement out of ``rows``: ``1 - exp(-m / n)``.

    Parameters
    ----------
    rows : int
    max_samples : int, float or None
        ``m``: a count, a fraction of ``rows``, or None for ``rows`` (the bootstrap: 0.632).

    Returns
    -------
    float
        In (0, 1).
    """
    import math

    m = rows if max_samples is None else (max_samples * rows if isinstance(max_samples, float) else max_samples)
    return 1.0 - math.exp(-m / rows)


def node_fraction(features: int) -> float:
    """The per-node feature fraction that makes XGBoost and LightGBM draw ``floor(sqrt(features))`` features.

    XGBoost draws ``int(fraction * features)`` (truncated, in float32) and LightGBM ``round(fraction *
    features)``: a quarter above the count gives the count in both.

    Parameters
    ----------
    features : int

    Returns
    -------
    float
        In (0, 1].
    """
    import math

    return min(1.0, (max(1, math.isqrt(features)) + 0.25) / features)


def order_by_importance(names: list, importance) -> list:
    """Indices of ``importance``, largest first (ties keep the file order).

    Parameters
    ----------
    names : list of str
        Feature names, aligned with ``importance`` (only their number is checked).
    importance : array-like of float

    Returns
    -------
    list of int
    """
    import numpy as np

    importance = np.asarray(importance, dtype=np.float64)
    if len(importance) != len(names):
        raise ValueError(f"{len(importance)} importances for {len(names)} features")
    return [int(i) for i in np.argsort(-importance, kind="stable")]


def ranked(names: list, importance, read_s: float, fit_s: float) -> dict:
    """The part of a forest peer's result every forest writes: ``order`` (largest importance first, ties in file
    order), ``importance`` by name, ``read_s`` and ``fit_s`` (rounded to the millisecond)."""
    imp = [float(v) for v in importance]
    order = order_by_importance(names, imp)
    return {"order": [names[i] for i in order], "importance": {names[i]: imp[i] for i in order},
            "read_s": round(read_s, 3), "fit_s": round(fit_s, 3)}


def class_codes(labels):
    """A class-label target as codes 0 .. c - 1 (in sorted label order) and c, for libraries that take codes."""
    import numpy as np

    classes, codes = np.unique(labels, return_inverse=True)
    return codes, len(classes)


def run_clus_ranking(arff: str, task: dict, workdir: str, ranking: str, clus_tools: str | Path = CLUS_TOOLS) -> dict:
    """Run CLUS with ``run_clus.py``; exit with CLUS' output on standard error if it fails.

    Parameters
    ----------
    arff : str
    task : dict
        The task description of ``run_clus.run_clus`` (task, descriptive, target, method, ...).
    workdir : str
        Where CLUS writes its settings, ``.out`` and ``.fimp`` files (kept for inspection).
    ranking : str
        The ranking CLUS must produce (``Genie3``, ``Relief``, ...); its absence is a failure.
    clus_tools : str or Path
        The folder holding ``run_clus.py`` (default: ``../shared/tools/clus`` next to the repository).

    Returns
    -------
    dict
        The result of ``run_clus`` (rankings, wall time, peak RSS measured by GNU time, ...).
    """
    sys.path.insert(0, str(clus_tools))
    from run_clus import run_clus

    res = run_clus(arff, task, workdir=workdir)
    if res["returncode"] != 0 or ranking not in res["rankings"]:
        sys.stderr.write(res["stdout_tail"])
        sys.exit(1)
    return res


def add_clus_arguments(parser) -> None:
    """The options every CLUS peer takes: ``--threads``, ``--seed``, ``--workdir``, ``--clus-tools``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
    """
    parser.add_argument("--threads", type=int, default=2, help="NumberOfThreads (default 2)")
    parser.add_argument("--seed", type=int, default=1, help="RandomSeed (default 1)")
    parser.add_argument("--workdir", help="CLUS' working folder (default: clus/ next to OUTPUT)")
    parser.add_argument("--clus-tools", default=str(CLUS_TOOLS), help=f"folder of run_clus.py (default {CLUS_TOOLS})")


def clus_workdir(args) -> str:
    """``--workdir``, or ``clus/`` in the folder of the ``output`` argument.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed with :func:`add_clus_arguments` and an ``output`` argument.

    Returns
    -------
    str
    """
    return args.workdir or str(Path(args.output).resolve().parent / "clus")


def count_or_fraction(text: str):
    """A Relief iteration count as spark_fr's command line reads it: ``1000`` a count, ``0.2`` a fraction.

    Parameters
    ----------
    text : str

    Returns
    -------
    int or float
        A float when ``text`` has a ``.``, ``e`` or ``E``, else an int.
    """
    return float(text) if any(c in text for c in ".eE") else int(text)


def write_result(path: str, result: dict) -> None:
    """Write a peer's result (``order`` first, then its own facts) as one line of JSON.

    Parameters
    ----------
    path : str
    result : dict
    """
    Path(path).write_text(json.dumps(result))
