"""Command line of ``jobs/rank.py`` (``spark-submit`` or plain ``python``), with YAML configs.

Sketch
------
    options     <- the defaults, a YAML config, the command line (it wins)       spark_fr.options
    publication <- the output and the plot checked before any work                spark_fr.io.writers
    ranking     <- spark_fr.rank(...)
    publish     <- table, run.json and plot written together
    summary     <- the top features per score on standard output

Every option can come from ``--config FILE.yaml`` (same names, dashes or underscores). Exit codes: 0
success; 2 bad input or parameters (one line on standard error, nothing written); 1 any other failure
(one line; the details with ``--log-level debug``); 130 interrupted (Ctrl-C); 143 terminated (SIGTERM, e.g.
``timeout`` or a scheduler: :mod:`spark_fr.runtime.signals`). Interrupted and terminated runs unwind through
every clean-up first: they leave no temporary file or directory, and no half-written output.
"""
from __future__ import annotations

import logging
import os
import sys
import time

from . import options as O
from .errors import InputError, one_line
from .runtime.signals import EXIT_TERMINATED, Terminated, received, sigterm_raises

log = logging.getLogger("spark_fr")


def resolve_options(argv=None) -> tuple:
    """Merge the defaults, the YAML config and the command line (the command line wins).

    Returns
    -------
    (options, names given on the command line)
    """
    given = O.parse_command_line(argv)
    cfg = load_config_file(given["config"], given.get("master")) if given.get("config") else {}
    opts = {**O.defaults(O.JOB), **cfg, **given}
    inputs = [f for f, k in (("--input", "input"), ("--input-table", "input_table"), ("--schema", "schema"))
              if opts.get(k)]
    if not inputs:
        raise InputError("--input is required (on the command line or in --config), or --input-table for a catalog "
                         "table, or --schema for relational data")
    if len(inputs) > 1:
        raise InputError(f"give one of --input (a path), --input-table (a catalog table) or --schema (relational "
                         f"data), not {' and '.join(inputs)}")
    if opts.get("output") and opts.get("output_table"):
        raise InputError("give --output (a path) or --output-table (a catalog table), not both")
    if opts.get("schema") and opts.get("targets"):
        raise InputError("--targets does not apply to relational data: the schema's 'target' names the column")
    if not opts.get("schema") and opts.get("engine", "auto") != "auto":
        raise InputError(f"--engine {opts['engine']} applies to relational data (--schema): it says where the "
                         f"features are generated")
    return opts, set(given)


def load_config_file(path: str, master: str | None = None) -> dict:
    """A ``--config`` file's options: a local path, a ``file:`` URI, or a URI read through the session's file
    systems (:func:`spark_fr.io.files.driver_file`; a session is started for it, with ``--master``)."""
    from .io.files import driver_file

    return O.load_config(driver_file(path, "--config", master=master), name=path)


def terminal():
    """Where messages go: standard error as it is now, even while a starting JVM's output is redirected.

    A session this run starts sends the JVM's standard error (file descriptor 2) to a log file while it
    starts, in a background thread; messages of this process go to a copy of the descriptor taken before.
    """
    from pyspark.sql import SparkSession

    if SparkSession.getActiveSession() is not None or not hasattr(sys.stderr, "fileno"):
        return sys.stderr
    try:
        if sys.stderr.fileno() != 2:
            return sys.stderr
    except (OSError, ValueError):  # a captured stream
        return sys.stderr
    sys.stderr.flush()
    return os.fdopen(os.dup(2), "w", buffering=1)


def _setup_logging(level: str, stream) -> None:
    logging.basicConfig(level=getattr(logging, level.upper()), stream=stream, force=True,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    for noisy in ("py4j", "numba", "matplotlib"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def rank_keywords(opts: dict, given: set) -> dict:
    """The options to pass to :func:`spark_fr.rank`: those it accepts, without the ones of other methods that
    came from a config file (a config may hold settings for several methods)."""
    method = opts.get("method", "ensemble")
    out = {}
    for name, value in opts.items():
        opt = O.BY_NAME[name]
        if O.API not in opt.where or value is None or name in ("targets", "task", "method"):
            continue
        if opt.methods and method not in opt.methods and name not in given:
            continue
        out[name] = value
    return out


def run(opts: dict, given: set = frozenset()) -> int:
    """Run a ranking job from resolved options; returns the exit code."""
    from .io.writers import Publication
    from .runtime.session import SessionStart, check_master, remote_url

    t0 = time.perf_counter()
    if opts.get("master"):
        check_master(opts["master"])
        if remote_url() is not None:
            raise InputError(f"--master {opts['master']} and SPARK_REMOTE={remote_url()} cannot be used together: "
                             f"SPARK_REMOTE makes a Spark Connect session, whose server has its own master")
    debug = opts.get("log_level") == "debug"
    # the JVM starts when Spark is first needed (reading with Spark, work too large for the driver), in the
    # background: this thread goes on with what it can do without Spark until it uses the session
    from pyspark.sql import SparkSession

    starting = SparkSession.getActiveSession()  # a session of the caller's (a notebook, spark-submit, tests)
    if starting is None:
        starting = SessionStart(lazy=True, master=opts.get("master"), app_name="spark_fr rank", quiet=not debug)
        _STARTING.append(starting)
    # the outputs are checked before any work (a catalog output starts the session: its catalog is asked)
    publication = Publication(opts.get("output"), opts["output_format"], opts.get("mode"), opts.get("plot"),
                              table=opts.get("output_table"), spark=starting).check()
    if opts.get("mlflow_experiment"):  # reached before any work (spark_fr.io.tracking)
        from .io.tracking import MlflowRun

        publication = MlflowRun(opts["mlflow_experiment"]).check().publishing(publication)
    from .api import rank, warm_up, when_session_ready

    if not debug:
        when_session_ready(starting, _quiet_spark)
    warm_up(opts["method"])
    if opts.get("schema"):
        from .relational.rank import rank_relational

        keywords = rank_keywords(opts, given)
        keywords.setdefault("title", opts["schema"])
        ranking = rank_relational(schema=opts["schema"], method=opts["method"], task=opts["task"], spark=starting,
                                  relation_rollup=opts["relation_rollup"], engine=opts["engine"],
                                  max_features_generated=opts["max_features_generated"], **keywords)
    else:
        ranking = rank(opts.get("input"), targets=opts.get("targets"), task=opts["task"], method=opts["method"],
                       spark=starting, title=opts.get("input") or opts.get("input_table"),
                       **rank_keywords(opts, given))
    # the session's start-up time; 0 when the run never needed Spark (its start is abandoned at exit)
    ranking.metadata["timings"]["session_s"] = getattr(starting, "seconds", None) or 0.0
    ranking.metadata["timings"]["process_s"] = time.perf_counter() - t0
    publication.publish(ranking)
    for what, path in (("wrote", publication.output), ("wrote", publication.table_name), ("wrote", publication.plot)):
        if path:
            log.info("%s %s", what, path)
    print(ranking.summary(10))
    log.info("done in %.1f s", time.perf_counter() - t0)
    return 0


def _quiet_spark(session) -> None:
    """Spark's own log off (a classic session; a Spark Connect session's log is the server's)."""
    from .runtime.engine import is_connect

    if not is_connect(session):
        session.sparkContext.setLogLevel("OFF")


#: the sessions this process started (see :func:`abandoned_start`)
_STARTING: list = []


def abandoned_start() -> bool:
    """Whether a session this process started is still starting (the run ended before it needed Spark)."""
    return any(not s.ready for s in _STARTING)


def settle_abandoned_starts() -> None:
    """Let the sessions still starting get past the JVM's launch (:meth:`SessionStart.settle`) before an exit
    that does not wait for them: no temporary folder of pyspark's launcher is left behind."""
    for s in _STARTING:
        s.settle()


def failure_message(err: BaseException) -> str:
    """One line for a failure that is not bad input: what happened, and what to do about it."""
    from .runtime.session import jvm_log_tail

    text = f"{type(err).__name__}: {err}"
    jvm = jvm_log_tail()
    if "OutOfMemoryError" in text or "OutOfMemoryError" in jvm:
        kind = "Java heap space" if "Java heap space" in text + jvm else "memory"
        return (f"Spark's driver ran out of memory (java.lang.OutOfMemoryError: {kind}); give it more: "
                f"SPARK_FR_DRIVER_MEMORY=16g python jobs/rank.py ..., or spark-submit --driver-memory 16g")
    lost = ("Py4JNetworkError", "ConnectionRefusedError", "Connection refused", "Answer from Java side is empty")
    if any(s in text for s in lost):
        return ("Spark's driver (its JVM) stopped unexpectedly; if the machine is short of memory, give the driver "
                "less or more (SPARK_FR_DRIVER_MEMORY) and rerun with --log-level debug to see why")
    return f"unexpected failure: {one_line(err)} (rerun with --log-level debug for details)"


def main(argv=None) -> int:
    """Entry point: parse options, run, and turn every failure into one line on standard error (SIGTERM
    unwinds like Ctrl-C: every clean-up runs, then exit code 143)."""
    with sigterm_raises():
        try:
            return _main(argv)
        except Terminated:  # before the error stream was set up
            print("error: terminated (SIGTERM)", file=sys.stderr)
            return EXIT_TERMINATED


def _main(argv=None) -> int:
    try:
        opts, given = resolve_options(argv)
    except InputError as err:
        print(f"error: {one_line(err)}", file=sys.stderr)
        return 2
    err_stream = terminal()
    _setup_logging(opts.get("log_level", "info"), err_stream)
    try:
        return run(opts, given)
    except Terminated:
        print("error: terminated (SIGTERM)", file=err_stream)
        return EXIT_TERMINATED
    except Exception as err:
        if received():  # an error of a clean-up that the signal cut short: the run was terminated
            print("error: terminated (SIGTERM)", file=err_stream)
            return EXIT_TERMINATED
        if isinstance(err, (InputError, FileNotFoundError)):
            print(f"error: {one_line(err)}", file=err_stream)
            return 2
        if opts.get("log_level") == "debug":  # not bad input: one line on stderr, the traceback with debug
            raise
        print(f"error: {failure_message(err)}", file=err_stream)
        return 1
    except KeyboardInterrupt:
        print("error: interrupted", file=err_stream)
        return 130
    finally:
        err_stream.flush()
