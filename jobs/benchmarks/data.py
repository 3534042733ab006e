"""The synthetic data sets of the benchmark: ``make_synthetic.py`` (shared CLUS tools), written once.

A set is an ARFF file and its ``.truth.json`` side-car (task, n, p, target names, the planted relevant
features, CLUS attribute ranges) in the work folder, named after its task and size; a later run reuses it
when the side-car matches the requested size, so repeated benchmarks read the same bytes.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from .paths import CLUS_TOOLS


def make_data(workdir: Path, rows: int, features: int, targets: int, task: str = "mtr") -> tuple:
    """Write a synthetic set once (reused when its side-car matches); return (arff path, truth dict).

    Parameters
    ----------
    workdir : Path
    rows, features, targets : int
        n, p and k of ``make_synthetic.py --task TASK`` (k is used by ``mtr`` only).
    task : str
        ``mtr`` (the ensemble suite), ``reg`` or ``cls`` (the Relief suite).

    Returns
    -------
    tuple of (Path, dict)
        The ARFF file and its ``.truth.json`` side-car (``relevant``, ``target_names``, ...).
    """
    name = f"mtr_{rows}x{features}x{targets}" if task == "mtr" else f"{task}_{rows}x{features}"
    arff, truth_path = workdir / f"{name}.arff", workdir / f"{name}.truth.json"
    if arff.exists() and truth_path.exists():
        truth = json.loads(truth_path.read_text())
        if truth.get("task") == task and (truth.get("n"), truth.get("p")) == (rows, features) and \
                (task != "mtr" or len(truth.get("target_names", [])) == targets):
            return arff, truth
    if str(CLUS_TOOLS) not in sys.path:
        sys.path.insert(0, str(CLUS_TOOLS))
    from make_synthetic import make

    workdir.mkdir(parents=True, exist_ok=True)
    path, truth = make(str(workdir), task, name=name, n=rows, p=features, k=targets if task == "mtr" else None)
    return Path(path), truth
