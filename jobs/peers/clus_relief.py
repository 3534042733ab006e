"""CLUS peer of the Relief benchmark: ``clus.jar -relief`` on a synthetic set with its truth side-car.

    python jobs/peers/clus_relief.py data.arff result.json --neighbours 10 --iterations 1000 --workdir clus_run

Runs CLUS (the ``pyclus`` jar, Java) through ``run_clus.py`` of ``../shared/tools/clus`` with the task,
descriptive and target ranges of the ``.truth.json`` side-car written by ``make_synthetic.py`` (``--truth``,
default: next to the ARFF file), ``Neighbours = --neighbours``, ``Iterations = --iterations`` (a count, or a
fraction of the rows when written with ``.``, ``e`` or ``E``), ``NumberOfThreads = --threads`` (2; only CLUS' neighbour
search is threaded), ``RandomSeed = --seed``. Writes ``{"order": [features, highest weight first],
"algo_s": CLUS' "Induction Time" from its .out file (null if absent), "clus_wall_s", "clus_peak_rss_kb",
"clus_cpu_percent"}`` (the last three from GNU time). Exits 1 with CLUS' output if CLUS fails.
"""
from __future__ import annotations

import json
import os
import re
import sys

from _common import (
    add_clus_arguments, clus_workdir, count_or_fraction, peer_parser, run_clus_ranking, write_result,
)


def induction_time(out_file: str):
    """CLUS' ``Induction Time`` in seconds from its ``.out`` file.

    Parameters
    ----------
    out_file : str

    Returns
    -------
    float or None
        None when the file or the line is missing.
    """
    try:
        with open(out_file) as fh:
            found = re.search(r"Induction Time: ([-+\d.Ee]+) sec", fh.read())
    except OSError:
        return None
    return float(found.group(1)) if found else None


def rank(arff: str, truth: dict, neighbours: int, iterations, threads: int, seed: int, workdir: str,
         clus_tools: str) -> dict:
    """Run CLUS Relief and collect its ranking and timings.

    Parameters
    ----------
    arff : str
    truth : dict
        The side-car: ``task`` (cls, reg, mtr, ...), ``descriptive`` and ``target`` (CLUS ranges).
    neighbours : int
    iterations : int or float
        A count of instances, or a fraction of the rows.
    threads, seed : int
    workdir : str
        CLUS' working folder (settings ``run.s``, ``run.out``, ``run.fimp``).
    clus_tools : str
        The folder of ``run_clus.py``.

    Returns
    -------
    dict
        ``order``, ``algo_s``, ``clus_wall_s``, ``clus_peak_rss_kb``, ``clus_cpu_percent``.
    """
    task = {"task": truth["task"], "descriptive": truth["descriptive"], "target": truth["target"],
            "method": "relief", "neighbours": neighbours, "iterations": iterations, "threads": threads,
            "seed": seed}
    res = run_clus_ranking(arff, task, workdir, "Relief", clus_tools)
    return {"order": res["rankings"]["Relief"]["order"], "algo_s": induction_time(os.path.join(workdir, "run.out")),
            "clus_wall_s": res["wall_s"], "clus_peak_rss_kb": res["peak_rss_kb"],
            "clus_cpu_percent": res["cpu_percent"]}


def main(argv=None) -> int:
    """Command line: ``ARFF OUTPUT [--truth JSON] [--neighbours K] [--iterations M] [--threads N] ...``."""
    ap = peer_parser(__doc__, "ARFF file written by make_synthetic.py")
    ap.add_argument("--truth", help="its .truth.json side-car (default: the ARFF path with .truth.json)")
    ap.add_argument("--neighbours", type=int, default=10, help="Neighbours (default 10)")
    ap.add_argument("--iterations", type=count_or_fraction, default=1.0,
                    help="Iterations: a count, or a fraction of the rows (default 1.0 = every row)")
    add_clus_arguments(ap)
    a = ap.parse_args(argv)
    workdir = clus_workdir(a)
    truth_path = a.truth or os.path.splitext(a.arff)[0] + ".truth.json"
    with open(truth_path) as fh:
        truth = json.load(fh)
    write_result(a.output, rank(a.arff, truth, a.neighbours, a.iterations, a.threads, a.seed, workdir,
                                a.clus_tools))
    return 0


if __name__ == "__main__":
    sys.exit(main())
