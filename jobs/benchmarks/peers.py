"""A benchmarked program: the command that starts it, how to read its ranking, whether it can run here.

Sketch
------
A :class:`Peer` pairs ``command(run_dir)`` (the command line of one run writing into ``run_dir``) with
``top(run_dir)`` (its feature order and extra facts, read back after the run). spark_fr runs as a user
starts it, ``jobs/rank.py`` with CSV output (:func:`rank_command`, read by :func:`spark_fr_top`, or by
:func:`spark_fr_reader` for several scores at once); every
other peer is a script of ``jobs/peers/`` (:func:`script_command`) writing ``result.json`` (read by
:func:`json_top`). A peer named ``<program>_d<D>`` (:func:`depth_peer`: ``spark_fr_d12``, ``xgboost_d20``) is
that program's forest at depth D. The suites build their peers from these pieces; :func:`check_available`
drops the peers whose software is missing, with a message.
"""
from __future__ import annotations

import csv
import importlib.metadata as md
import importlib.util
import json
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .paths import CLUS_TOOLS, PEER_SCRIPTS, RANK_JOB

RESULT = "result.json"
#: a forest program at a depth: ``spark_fr_d12``, ``xgboost_d20``, ``lightgbm_d12``
DEPTH_PEER = re.compile(r"^(spark_fr|xgboost|lightgbm)_d([1-9][0-9]*)$")
#: the forest peers that are a script of jobs/peers/
FOREST_SCRIPTS = {"sklearn": "sklearn_forest.py", "xgboost": "xgboost_forest.py", "lightgbm": "lightgbm_forest.py"}
#: module -> what to install, the versions the benchmark ran with (pyproject.toml's test extra, tests/constraints.txt);
#: xgboost-cpu is XGBoost without its CUDA build and the NCCL wheel it pulls in (the peers run on CPUs)
PINNED = {"xgboost": "xgboost-cpu==3.2.0", "lightgbm": "lightgbm==4.7.0"}


@dataclass
class Peer:
    """One benchmarked program: how to start it and how to read its ranking.

    Attributes
    ----------
    name : str
    command : callable
        ``command(run_dir) -> list of str``: the command line of one run writing into ``run_dir``.
    top : callable
        ``top(run_dir) -> (list of feature names, best first; dict of extra facts)``.
    """

    name: str
    command: Callable[[Path], list]
    top: Callable[[Path], tuple]


def rank_command(arff: Path, targets: str, *options: str) -> Callable[[Path], list]:
    """spark_fr as a user starts it: ``python jobs/rank.py`` writing CSV into ``RUN_DIR/out``.

    Parameters
    ----------
    arff : Path
    targets : str
        Comma-separated target columns.
    *options : str
        Method options, placed after ``--targets`` (``--trees 100 --scores genie3``, ``--method relief``, ...).

    Returns
    -------
    callable
        ``run_dir -> command line``; the seed is 1, the log level ``warning``.
    """
    def command(run_dir: Path) -> list:
        return [sys.executable, str(RANK_JOB), "--input", str(arff), "--targets", targets, *options, "--seed", "1",
                "--output", str(run_dir / "out"), "--output-format", "csv", "--log-level", "warning"]

    return command


def script_command(script: str, arff: Path, *options: str) -> Callable[[Path], list]:
    """A peer script of ``jobs/peers/``: ``python jobs/peers/SCRIPT ARFF [options] RUN_DIR/result.json``.

    Parameters
    ----------
    script : str
        The file name in ``jobs/peers/``.
    arff : Path
    *options : str
        The script's options.

    Returns
    -------
    callable
        ``run_dir -> command line``.
    """
    def command(run_dir: Path) -> list:
        return [sys.executable, str(PEER_SCRIPTS / script), str(arff), *options, str(run_dir / RESULT)]

    return command


def spark_fr_top(run_dir: Path, score: str) -> tuple:
    """The joint ranking of one score from spark_fr's ``ranking.csv``, and its ``run.json``.

    Parameters
    ----------
    run_dir : Path
        The run folder (the job wrote into ``run_dir/out``).
    score : str
        ``genie3``, ``symbolic``, ``rf``, ``relief``, ...

    Returns
    -------
    tuple of (list of str, dict)
        The features by rank (target ``__all__``) and the parsed ``run.json``.
    """
    with open(run_dir / "out" / "ranking.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["score"] == score and r["target"] == "__all__"]
    order = [r["feature"] for r in sorted(rows, key=lambda r: int(r["rank"]))]
    return order, json.loads((run_dir / "out" / "run.json").read_text())


def spark_fr_reader(scores: tuple, k: int) -> Callable[[Path], tuple]:
    """A ``Peer.top`` for spark_fr runs that computed several scores: the first score's order, every score's top.

    Parameters
    ----------
    scores : tuple of str
        The scores the run computed (``symbolic``, ``genie3``, ``rf``); the first gives the order.
    k : int
        The length of the tops kept per score.

    Returns
    -------
    callable
        ``run_dir -> (order, {"tops": {score: top-k}, "ensemble_mode", "tree_groups",
        "spark_fr_timings"})``, read from ``ranking.csv`` and ``run.json``.
    """
    def top(run_dir: Path) -> tuple:
        orders = {score: spark_fr_top(run_dir, score)[0] for score in scores}
        run = json.loads((run_dir / "out" / "run.json").read_text())
        return orders[scores[0]], {"tops": {score: order[:k] for score, order in orders.items()},
                                   "ensemble_mode": run.get("ensemble_mode"), "tree_groups": run.get("tree_groups"),
                                   "spark_fr_timings": run.get("timings", {})}

    return top


def json_top(run_dir: Path) -> tuple:
    """A peer script's ``result.json``: its ``order`` and the other facts (without ``importance``).

    Parameters
    ----------
    run_dir : Path

    Returns
    -------
    tuple of (list of str, dict)
    """
    res = json.loads((run_dir / RESULT).read_text())
    order = res.pop("order")
    res.pop("importance", None)
    return order, res


def depth_peer(name: str) -> tuple | None:
    """``(program, depth)`` of a peer named ``<program>_d<D>`` (:data:`DEPTH_PEER`), else None.

    Parameters
    ----------
    name : str

    Returns
    -------
    tuple of (str, int) or None
    """
    found = DEPTH_PEER.match(name)
    return (found.group(1), int(found.group(2))) if found else None


def _missing(name: str) -> str | None:
    """Why the peer ``name`` cannot run here, or None if it can (or needs nothing beyond spark_fr)."""
    program = (depth_peer(name) or (name,))[0]
    if program in PINNED and importlib.util.find_spec(program) is None:
        return f"{name} skipped: {program} is not installed (pip install {PINNED[program]})"
    if name == "clus":
        if shutil.which("java") is None:
            return "clus skipped: java is not on PATH"
        try:
            md.distribution("pyclus")
        except md.PackageNotFoundError:
            return "clus skipped: pyclus is not installed (pip install pyclus==1.0.2)"
        if not (CLUS_TOOLS / "run_clus.py").exists():
            return f"clus skipped: {CLUS_TOOLS / 'run_clus.py'} not found"
    if name == "sklearn" and importlib.util.find_spec("sklearn") is None:
        return "sklearn skipped: scikit-learn is not installed"
    if name == "skrebate" and importlib.util.find_spec("skrebate") is None:
        return "skrebate skipped: skrebate is not installed (pip install skrebate==0.8.4)"
    return None


def announce(names: list, notes: list) -> bool:
    """Print why peers were dropped; False (with a message on stderr) when no peer is left to run."""
    for note in notes:
        print(note)
    if not names:
        print("no peer can run here", file=sys.stderr)
    return bool(names)


def check_available(names: list) -> tuple:
    """Drop the peers that cannot run here.

    Parameters
    ----------
    names : list of str
        Peer kinds (``clus``, ``sklearn``, ``skrebate``, ``xgboost``, ``lightgbm`` and their ``_d<D>`` forms; others
        are always kept).

    Returns
    -------
    tuple of (list of str, list of str)
        The names kept, in order, and one message per dropped peer.
    """
    kept, notes = [], []
    for name in names:
        why = _missing(name)
        if why:
            notes.append(why)
        else:
            kept.append(name)
    return kept, notes
