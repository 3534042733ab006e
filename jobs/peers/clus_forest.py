"""CLUS peer of the ensemble benchmarks: a CLUS random forest's Genie3 and Symbolic rankings.

    python jobs/peers/clus_forest.py data.arff result.json --features 200 --targets 5 --trees 100 --seed 1 \\
        --workdir clus_run
    python jobs/peers/clus_forest.py wide.arff result.json --task cls --trees 100

Runs CLUS (the ``pyclus`` jar, Java) through ``run_clus.py`` of ``../shared/tools/clus``: multi-target
regression (``--task mtr``, the default; ``reg`` and ``cls`` for one numeric or nominal target) on the
first ``--features`` attributes for the next ``--targets``, ``EnsembleMethod =
RForest`` with ``--trees`` trees, ``SelectRandomSubspaces = SQRT``, ``FeatureRanking = [Genie3,
Symbolic]``, ``SymbolicWeight = 0.5``, ``NumberOfThreads = --threads`` (2), ``RandomSeed = --seed``.
Writes ``{"order": Genie3 order, "symbolic_order": Symbolic order, "clus_wall_s": CLUS' wall time,
"clus_peak_rss_kb": its peak RSS (GNU time)}``. Exits 1 with CLUS' output on standard error if CLUS fails.
"""
from __future__ import annotations

import sys

from _common import add_clus_arguments, arff_header, clus_workdir, peer_parser, run_clus_ranking, write_result


def rank(arff: str, features: int, targets: int, trees: int, seed: int, threads: int, workdir: str,
         clus_tools: str, task: str = "mtr") -> dict:
    """Run the CLUS forest and collect its two rankings.

    Parameters
    ----------
    arff : str
    features, targets : int
        Descriptive attributes ``1-features``, targets ``features+1-features+targets`` (1-based).
    trees, seed, threads : int
        ``Iterations``, ``RandomSeed`` and ``NumberOfThreads``.
    workdir : str
        CLUS' working folder (settings, ``.out``, ``.fimp``).
    clus_tools : str
        The folder of ``run_clus.py``.
    task : str
        ``mtr``, ``reg`` or ``cls`` (CLUS' task of ``run_clus.py``).

    Returns
    -------
    dict
        ``order``, ``symbolic_order``, ``clus_wall_s``, ``clus_peak_rss_kb``.
    """
    target = str(features + 1) if targets == 1 else f"{features + 1}-{features + targets}"
    task = {"task": task, "descriptive": f"1-{features}", "target": target,
            "ensemble": "RForest", "rankings": ["Genie3", "Symbolic"], "trees": trees, "threads": threads,
            "seed": seed, "symbolic_weight": 0.5}
    res = run_clus_ranking(arff, task, workdir, "Genie3", clus_tools)
    return {"order": res["rankings"]["Genie3"]["order"], "symbolic_order": res["rankings"]["Symbolic"]["order"],
            "clus_wall_s": res["wall_s"], "clus_peak_rss_kb": res["peak_rss_kb"]}


def main(argv=None) -> int:
    """Command line: ``ARFF OUTPUT [--features P] [--targets K] [--trees T] [--seed S] [--threads N] ...``."""
    ap = peer_parser(__doc__, "ARFF file, features first, targets last")
    ap.add_argument("--features", type=int, help="leading feature attributes (default: all but the targets)")
    ap.add_argument("--targets", type=int, default=1, help="target attributes after the features (default 1)")
    ap.add_argument("--trees", type=int, default=100, help="Iterations (default 100)")
    ap.add_argument("--task", choices=("mtr", "reg", "cls"), default="mtr",
                    help="mtr (default), reg or cls: the targets' type")
    add_clus_arguments(ap)
    a = ap.parse_args(argv)
    workdir = clus_workdir(a)
    features = len(arff_header(a.arff)[0]) - a.targets if a.features is None else a.features
    write_result(a.output, rank(a.arff, features, a.targets, a.trees, a.seed, a.threads, workdir, a.clus_tools,
                                a.task))
    return 0


if __name__ == "__main__":
    sys.exit(main())
