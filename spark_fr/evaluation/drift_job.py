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

Exit codes: 0 the runs were compared (and the drift is at most ``--fail-above``); 3 the drift is above
``--fail-above`` (the report and files are written all the same); 2 bad input (an unknown table, run, score or
target, fewer than 2 runs, a run id in two sources with different rows, an output holding what spark_fr did not
write: one line on standard error, nothing written); 143 terminated by SIGTERM (nothing half-written); 1 any
other failure. ``python -m spark_fr.evaluation.drift_job`` runs it as ``jobs/drift.py`` does.
"""
from __future__ import annotations

import logging
import os
import sys

from .. import options as O
from ..errors import InputError, one_line
from ..runtime.signals import EXIT_TERMINATED, Terminated, received, sigterm_raises

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
)
BY_NAME = {o.name: o for o in OPTIONS}


def build_parser():
    """The command line (every value defaults to None, so that a config file can fill it)."""
    p = O.Parser(prog="jobs/drift.py", description="Compare runs of a table of feature rankings (spark_fr): rank "
                  "changes, features entering and leaving the top K, the Fuzzy Jaccard Index of the top-k sets and "
                  "its area, a heat map; exit code 3 when the drift passes --fail-above.",
                  epilog="Example: spark-submit jobs/drift.py --table main.ml.feature_rankings --last 2 --top 20 "
                         "--fail-above 0.3 --plot out/drift.png")
    for opt in OPTIONS:
        shown = opt.default_help or opt.default
        text = opt.help + ("" if shown in (None, "") else f" (default: {shown})")
        metavar = "|".join(opt.kind.choices) if isinstance(opt.kind, O.Choice) else None
        p.add_argument(opt.flag, dest=opt.name, type=O.parse_with(opt), default=None, help=text, metavar=metavar)
    return p


def load_config(path: str, master: str | None = None) -> dict:
    """The options of a YAML config file (dashes or underscores), checked like the command line; a URI is read
    through its file system (:func:`spark_fr.io.files.driver_file`)."""
    import yaml

    from ..io.files import driver_file

    shown, path = path, driver_file(path, "--config", master=master)
    if not os.path.isfile(path):
        raise InputError(f"config file not found: {shown}")
    try:
        with open(path, encoding="utf-8") as fh:
            cfg = yaml.safe_load(fh) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise InputError(f"{shown}: not valid YAML ({one_line(err)})") from None
    if not isinstance(cfg, dict):
        raise InputError(f"{shown}: a config file must be a mapping of option names to values")
    out = {}
    for key, value in cfg.items():
        opt = BY_NAME.get(str(key).replace("-", "_"))
        if opt is None or opt.name == "config":
            raise InputError(f"{shown}: unknown option '{key}' of jobs/drift.py")
        if value is not None:
            out[opt.name] = O.check_value(opt, value, where=f"{shown}: ")
    return out


def resolve_options(argv=None) -> dict:
    """The defaults, the config file, then the command line (it wins)."""
    given = {k: v for k, v in vars(build_parser().parse_args(argv)).items() if v is not None}
    cfg = load_config(given["config"], given.get("master")) if given.get("config") else {}
    opts = {**{o.name: o.default for o in OPTIONS}, **cfg, **given}
    if not opts.get("table"):
        raise InputError("--table is required (on the command line or in --config)")
    if given.get("runs") and "last" in given or cfg.get("runs") and "last" in cfg:
        raise InputError("give --runs or --last, not both")
    if "runs" in cfg and "last" in given:  # the command line wins
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


def run(opts: dict) -> int:
    """Compare the runs, print and write the report; returns the exit code."""
    from .drift import compare_runs

    output, plot = _outputs(opts)
    spark = None
    if opts.get("master"):
        from ..runtime.session import check_master, get_spark

        check_master(opts["master"])
        spark = get_spark(master=opts["master"], app_name="spark_fr drift", quiet=True)
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


def main(argv=None) -> int:
    """Entry point: every failure is one line on standard error (exit codes in the module docstring)."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                        datefmt="%H:%M:%S")
    for noisy in ("py4j", "matplotlib"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    with sigterm_raises():  # a scheduler's SIGTERM unwinds through the clean-up of the outputs' temporaries
        try:
            return run(resolve_options(argv))
        except (InputError, FileNotFoundError) as err:
            print(f"error: {one_line(err)}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("error: interrupted", file=sys.stderr)
            return 130
        except Terminated:
            print("error: terminated", file=sys.stderr)
            return EXIT_TERMINATED
        except Exception as err:  # noqa: BLE001 - one line, not a traceback
            if received():  # an error of a clean-up that the signal cut short
                print("error: terminated", file=sys.stderr)
                return EXIT_TERMINATED
            print(f"error: unexpected failure: {one_line(err)}", file=sys.stderr)
            return 1


if __name__ == "__main__":  # python -m spark_fr.evaluation.drift_job, as jobs/drift.py
    sys.exit(main())
