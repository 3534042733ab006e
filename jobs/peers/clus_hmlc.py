"""CLUS peer of the HMLC benchmark: a CLUS random forest's Genie3 and Symbolic rankings for hierarchical
multi-label classification.

    python jobs/peers/clus_hmlc.py cellcycle_FUN.train.arff result.json --trees 50 --seed 1
    python jobs/peers/clus_hmlc.py derisi_GO.train.arff result.json --trees 50 --hier-type DAG --train-errors

Runs CLUS (the ``pyclus`` jar, Java) through ``run_clus.py`` of ``../shared/tools/clus`` on a Clus HMC ARFF
file: the one ``hierarchical`` attribute is the target, every other attribute is descriptive.
``EnsembleMethod = RForest`` with ``--trees`` trees, ``SelectRandomSubspaces = SQRT``, ``FeatureRanking =
[Genie3, Symbolic]``, ``SymbolicWeight = 0.5``, ``NumberOfThreads = --threads`` (2), ``RandomSeed = --seed``;
``[Hierarchical] Type = Tree`` or ``DAG`` (``--hier-type auto``: from the class specification, by spark_fr's
rule: ``parent/child`` edges when some item starts with ``root/`` and every item has one ``/``, else label
paths), ``HSeparator = /``, ``WType = ExpAvgParentWeight`` and ``WParam = --w0`` (0.75): the label weights
``w(l) = w0 * mean(w(parents))`` that spark_fr's ``--hmlc-w0`` gives.

CLUS evaluates the forest on its training rows after the ranking (``[Output] TrainErrors = Yes``, its
default): for HMLC that is pooled precision-recall curves over every label, often longer than growing the
trees, and of no use to a ranking. It is switched off (``TrainErrors = No``) unless ``--train-errors``.
Writes ``{"order": Genie3 order, "symbolic_order": Symbolic order, "hier_type", "clus_wall_s",
"clus_peak_rss_kb" (GNU time), "clus_induction_s" (CLUS' "Induction Time")}``. Exits 1 with CLUS' output on
standard error if CLUS fails.
"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from _common import add_clus_arguments, clus_workdir, peer_parser, run_clus_ranking, write_result


def read_header(path: str) -> tuple:
    """The attributes of a Clus HMC ARFF file.

    Parameters
    ----------
    path : str
        Attribute names without spaces (as in the shared HMC sets).

    Returns
    -------
    tuple of (list of str, int, str)
        The attribute names in file order, the 0-based index of the one ``hierarchical`` attribute and its
        class specification.
    """
    names, target, spec = [], [], ""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            parts = line.strip().split(None, 2)
            if not parts:
                continue
            if parts[0].lower() == "@data":
                break
            if parts[0].lower() == "@attribute" and len(parts) == 3:
                kind = parts[2].split(None, 1)
                if kind[0].lower() == "hierarchical":
                    target.append(len(names))
                    spec = kind[1] if len(kind) > 1 else ""
                names.append(parts[1])
    if len(target) != 1:
        raise SystemExit(f"{path}: {len(target)} hierarchical attributes, expected 1")
    return names, target[0], spec


def hier_type(spec: str) -> str:
    """``DAG`` when the specification lists ``parent/child`` edges (see the module doc), else ``Tree``."""
    items = [s.strip() for s in spec.split(",") if s.strip()]
    return "DAG" if any(s.startswith("root/") for s in items) and all(s.count("/") == 1 for s in items) else "Tree"


def clus_range(indices: list) -> str:
    """A CLUS attribute range (1-based, ``1-77,79``) of 0-based indices.

    Parameters
    ----------
    indices : list of int
        Increasing.

    Returns
    -------
    str
    """
    runs, start = [], None
    for prev, i in zip([None, *indices], indices):
        if start is None or i != prev + 1:
            if start is not None:
                runs.append((start, prev))
            start = i
    if start is not None:
        runs.append((start, indices[-1]))
    return ",".join(str(a + 1) if a == b else f"{a + 1}-{b + 1}" for a, b in runs)


def induction_seconds(workdir: str) -> float | None:
    """CLUS' "Induction Time" from ``run.out`` in its working folder (None if absent)."""
    out = Path(workdir) / "run.out"
    if not out.exists():
        return None
    m = re.search(r"Induction Time: ([0-9.Ee+-]+) sec", out.read_text(errors="replace"))
    return float(m.group(1)) if m else None


def rank(arff: str, trees: int, seed: int, threads: int, workdir: str, clus_tools: str, kind: str = "auto",
         w0: float = 0.75, train_errors: bool = False, xmx: str | None = None) -> dict:
    """Run the CLUS forest on an HMC ARFF file and collect its two rankings.

    Parameters
    ----------
    arff : str
    trees, seed, threads : int
        ``Iterations``, ``RandomSeed`` and ``NumberOfThreads``.
    workdir : str
        CLUS' working folder (settings, ``.out``, ``.fimp``).
    clus_tools : str
        The folder of ``run_clus.py``.
    kind : str
        ``Tree``, ``DAG`` or ``auto`` (from the class specification).
    w0 : float
        ``WParam`` of ``WType = ExpAvgParentWeight``.
    train_errors : bool
        Keep CLUS' evaluation on the training rows (``TrainErrors``).
    xmx : str, optional
        The JVM's maximum heap (``4g``); default the JVM's.

    Returns
    -------
    dict
        ``order``, ``symbolic_order``, ``hier_type``, ``clus_wall_s``, ``clus_peak_rss_kb``, ``clus_induction_s``.
    """
    names, target, spec = read_header(arff)
    kind = hier_type(spec) if kind == "auto" else kind
    task = {"task": "hmlc", "descriptive": clus_range([i for i in range(len(names)) if i != target]),
            "target": str(target + 1), "hier_type": kind, "hier_sep": "/", "ensemble": "RForest",
            "rankings": ["Genie3", "Symbolic"], "trees": trees, "threads": threads, "seed": seed,
            "symbolic_weight": 0.5,
            "extra": {"Hierarchical": {"WType": "ExpAvgParentWeight", "WParam": w0},
                      "Output": {"TrainErrors": "Yes" if train_errors else "No"}}}
    if xmx:
        task["xmx"] = xmx
    res = run_clus_ranking(arff, task, workdir, "Genie3", clus_tools)
    return {"order": res["rankings"]["Genie3"]["order"], "symbolic_order": res["rankings"]["Symbolic"]["order"],
            "hier_type": kind, "clus_wall_s": res["wall_s"], "clus_peak_rss_kb": res["peak_rss_kb"],
            "clus_induction_s": induction_seconds(workdir)}


def main(argv=None) -> int:
    """Command line: ``ARFF OUTPUT [--trees T] [--hier-type auto|Tree|DAG] [--w0 W] [--train-errors] ...``."""
    ap = peer_parser(__doc__, "Clus HMC ARFF file: one hierarchical attribute, the others descriptive")
    ap.add_argument("--trees", type=int, default=50, help="Iterations (default 50)")
    ap.add_argument("--hier-type", choices=("auto", "Tree", "DAG"), default="auto",
                    help="[Hierarchical] Type (default auto: from the class specification)")
    ap.add_argument("--w0", type=float, default=0.75, help="WParam of WType = ExpAvgParentWeight (default 0.75)")
    ap.add_argument("--train-errors", action="store_true", help="keep CLUS' evaluation on the training rows")
    ap.add_argument("--xmx", help="JVM maximum heap, e.g. 4g (default: the JVM's)")
    add_clus_arguments(ap)
    a = ap.parse_args(argv)
    # short Java stack traces: CLUS' trees are deep, and run_clus.py keeps the last 3,000 characters of the
    # output, so a failure's exception line (OutOfMemoryError, ...) would otherwise scroll out of it
    os.environ.setdefault("JAVA_TOOL_OPTIONS", "-XX:MaxJavaStackTraceDepth=12")
    write_result(a.output, rank(a.arff, a.trees, a.seed, a.threads, clus_workdir(a), a.clus_tools, a.hier_type,
                                a.w0, a.train_errors, a.xmx))
    return 0


if __name__ == "__main__":
    sys.exit(main())
