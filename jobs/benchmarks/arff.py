"""ARFF suite (``--suite arff``): spark_fr's ARFF row parser against scipy's ``loadarff``, in process.

The parser runs once per Spark partition on the executors, so its speed bounds the reading of large
files. For each of ``ARFF_FILES`` (from ``../shared/datasets``) the data lines are parsed by
``spark_fr.io.arff.ArffRowParser`` (one core) and the whole file by ``scipy.io.arff.loadarff``, best of
``--repeats`` each; the table gives rows, size, both times, spark_fr's rows per second and the ratio
``scipy / spark_fr`` (> 1: spark_fr is faster). scipy reads dense files of numeric and nominal attributes
only; for the others the ratio says why it is missing. ``--json PATH`` writes the table. Example::

    python jobs/benchmark.py --suite arff --repeats 5
"""
from __future__ import annotations

import sys
import time

from .measure import environment
from .options import fill_defaults
from .paths import DATASETS, ROOT
from .tables import write_json

SUMMARY = "ARFF row parsing speed vs scipy"
ARFF_FILES = ("mlc_yeast/yeast.arff", "mlc_scene/scene-train.arff", "mlc_medical/medical.arff",
              "hmlc_derisi_GO/derisi_GO.train.arff")


def add_arguments(parser) -> None:
    """The suite uses the shared ``--repeats`` and ``--json``; nothing to add."""


def check_arguments(args, error) -> None:
    """Fill in the suite's default of ``--repeats`` (3); nothing to check."""
    fill_defaults(args, repeats=3)


def best_of(fn, repeats: int) -> float:
    """The shortest of ``repeats`` timed calls of ``fn``.

    Parameters
    ----------
    fn : callable
        Called without arguments.
    repeats : int

    Returns
    -------
    float
        Seconds.
    """
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def run(args) -> int:
    """Time both parsers on every file that exists; print the table, write ``--json``.

    Parameters
    ----------
    args : argparse.Namespace
        From ``jobs/benchmark.py`` (``repeats``, ``json``).

    Returns
    -------
    int
        0.
    """
    sys.path.insert(0, str(ROOT))
    from scipy.io import arff as scipy_arff

    from spark_fr.io.arff import ArffRowParser, read_header

    print(f"{'file':<40}{'rows':>7}{'MB':>7}{'spark_fr s':>12}{'rows/s':>10}{'scipy s':>9}{'scipy / ours':>14}")
    report = []
    for name in ARFF_FILES:
        path = DATASETS / name
        if not path.exists():
            print(f"{name:<40}  (not found)")
            continue
        header = read_header(str(path))
        lines = path.read_text(encoding="utf-8").splitlines()[header.data_line:]
        parser = ArffRowParser(header)
        n = parser.parse_lines(lines).n_rows
        ours = best_of(lambda: parser.parse_lines(lines), args.repeats)
        try:
            theirs = best_of(lambda: scipy_arff.loadarff(str(path)), args.repeats)
        except Exception as err:  # sparse rows, string or hierarchical attributes: scipy cannot read them
            theirs, why = None, type(err).__name__
        mb = path.stat().st_size / 2 ** 20
        ratio = f"{theirs / ours:.2f}x" if theirs else f"  n/a: {why}"
        print(f"{name:<40}{n:>7}{mb:>7.1f}{ours:>12.3f}{n / ours:>10.0f}"
              f"{(f'{theirs:.3f}' if theirs else '-'):>9}{ratio:>14}")
        report.append({"file": name, "rows": n, "mb": mb, "spark_fr_s": ours, "scipy_s": theirs})
    if args.json:
        write_json(args.json, {"suite": "arff", "environment": environment(), "files": report}, announce=False)
    return 0
