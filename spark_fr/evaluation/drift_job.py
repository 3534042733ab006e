"""Command line of ``jobs/drift.py``: compare runs of a rankings table and alert when the ranking drifts.

Sketch
------
    options  <- a YAML config (--config) and the command line (it wins), checked by the kinds of spark_fr.options
    outputs  <- --output and --plot checked before anything is read (absent, empty or spark_fr's own:
                spark_fr.io.drift_outputs)
    report   <- spark_fr.evaluation.drift.compare_runs(...)
    print    <- the report on standard output; --output DIR (CSV tables, drift.json), --plot FILE.png (heat map),
                written together
    alert    <- --fail-above X: exit code 3 when the max drift (1 - area under the FJI curve) is above X

Sessions, logging, one-line errors and exit codes are the runner's (:mod:`spark_fr.runner`), as for
``jobs/rank.py``: 0 the runs were compared (and the drift is at most ``--fail-above``); 3 the drift is above
``--fail-above`` (the report and files are written all the same); 2 bad input (an unknown table, run, score or
target, fewer than 2 runs, a run id in two sources with different rows, an output holding what spark_fr did not
write: one line on standard error, nothing written); 1 any other failure; 130 interrupted; 143 terminated by
SIGTERM (nothing half-written). ``python -m spark_fr.evaluation.drift_job`` runs it as ``jobs/drift.py`` does.
"""
from __future__ import annotations

import logging
import sys

from .. import options as O
from ..errors import InputError
from .. import runner

log = logging.getLogger("spark_fr")

#: exit code of a run whose drift is above ``--fail-above``
EXIT_DRIFT = 3
GROUP = "drift"

OPTIONS = (
    O.Option("table", O.Text(), None, "the rankings: a Delta table path, a catalog table (main.ml.feature_rankings), a "
             "run folder (ranking.csv/ranking.parquet), a folder of run folders or of .csv/.parquet files; several, "
             "comma-separated", GROUP),
    O.Option("runs", O.Names(), None, "run ids to compare, oldest first (instead of --last)", GROUP),
    O.Option("last", O.Integer(lo=2, description="an integer >= 2"), 2, "compare the N newest runs", GROUP),
    O.Option("baseline", O.Choice(("previous", "first")), "previous",
             "compare each run with the run before it, or with the first compared run", GROUP),
    O.Option("top", O.Integer(lo=1, description="a positive integer"), 20,
             "K: the Fuzzy Jaccard curve over the top-k sets, k = 1..K; entries, exits and moves in the top K", GROUP),
    O.Option("scores", O.Names(), None, "scores to compare", GROUP, default_help="every score all the runs have"),
    O.Option("targets", O.Names(), None, "targets to compare; 'all' for every target all the runs have", GROUP,
             default_help="the joint ranking __all__"),
    O.Option("level", O.Choice(("feature", "attribute", "relation")), "feature",
             "relational rankings: which level to compare", GROUP),
    O.Option("fail_above", O.Real(lo=0.0, hi=1.0, description="a number in [0, 1]"), None,
             f"exit with code {EXIT_DRIFT} when the drift, 1 - area under the Fuzzy Jaccard curve (largest over the "
             f"compared runs and rankings), is above this", GROUP),
    O.Option("plot", O.Text(), None, "write a PNG heat map of the top features' ranks over the runs", GROUP),
    O.Option("output", O.Text(), None, "folder for summary.csv, fji.csv, changes.csv, ranks.csv and drift.json", GROUP),
    O.Option("config", O.Text(), None, "YAML file with any of these options (the command line wins)", GROUP),
    O.Option("master", O.Text(), None, "Spark master when a catalog table is read with python", GROUP,
             default_help="local[*]"),
    O.BY_NAME["log_level"],
)
DESCRIPTION = ("Compare runs of a table of feature rankings (spark_fr): rank changes, features\n"
               "entering and leaving the top K, the Fuzzy Jaccard Index of the top-k sets and\n"
               "its area, a heat map; exit code 3 when the drift passes --fail-above.")
EPILOG = ("Example: spark-submit jobs/drift.py --table main.ml.feature_rankings --last 2\n"
          "--top 20 --fail-above 0.3 --plot out/drift.png")


def check_options(opts: dict, given: dict, config: dict) -> dict:
    """The combinations of options drift refuses before anything is read; ``--runs`` of a config gives way to
    ``--last`` on the command line."""
    if not opts.get("table"):
        raise InputError("--table is required (on the command line or in --config)")
    if given.get("runs") and "last" in given or config.get("runs") and "last" in config:
        raise InputError("give --runs or --last, not both")
    if "runs" in config and "last" in given:  # the command line wins
        opts["runs"] = None
    return opts


def _outputs(opts: dict) -> tuple:
    """(--output, --plot) as absolute paths or URIs (or None), refused before anything is read when they cannot be written
    or hold what spark_fr did not write (:func:`spark_fr.io.drift_outputs.check`)."""
    from ..io import drift_outputs
    from ..io.locations import locate

    output = locate(opts["output"], "--output").path if opts.get("output") else None
    plot = locate(opts["plot"], "--plot").path if opts.get("plot") else None
    drift_outputs.check(output, plot)
    return output, plot


def run(opts: dict, given: set = frozenset()) -> int:
    """Compare the runs, print and write the report; returns the exit code."""
    from .drift import compare_runs

    output, plot = _outputs(opts)
    spark = runner.session(opts, JOB.app_name, lazy=False) if opts.get("master") else None
    report = compare_runs(opts["table"], runs=opts.get("runs"), last=opts["last"], top=opts["top"],
                          scores=opts.get("scores"), targets=opts.get("targets"), baseline=opts["baseline"],
                          level=opts["level"], spark=spark)
    print(report.to_text())
    if output or plot:
        report.publish(output, plot)  # both or neither
        log.info("wrote %s", " and ".join(p for p in (output, plot) if p))
    threshold = opts.get("fail_above")
    if threshold is not None:
        w = report.worst()
        where = f"{w['score']} [{w['target']}], run {w['run_before']} -> {w['run_after']}"
        if report.exceeds(threshold):
            print(f"drift {report.max_drift:.3f} is above {threshold:g} ({where})", file=sys.stderr)
            return EXIT_DRIFT
        print(f"drift {report.max_drift:.3f} is at most {threshold:g}")
    return 0


JOB = runner.Job("jobs/drift.py", DESCRIPTION, EPILOG, OPTIONS, run, check_options, app_name="spark_fr drift")


def build_parser():
    """The command line (every value defaults to None, so that a config file can fill it)."""
    return JOB.parser()


def main(argv=None) -> int:
    """``jobs/drift.py``: drift run by :func:`spark_fr.runner.main` (exit codes in the module docstring)."""
    return runner.main(JOB, argv)


def console() -> None:
    """The console script ``spark-fr-drift`` (and ``python -m spark_fr.evaluation.drift_job``): :func:`main` as
    ``jobs/drift.py`` runs it."""
    runner.console(JOB)


if __name__ == "__main__":
    runner.console(JOB)
