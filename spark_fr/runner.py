"""One runner for the command lines: ``jobs/rank.py``, ``jobs/evaluate.py`` and ``jobs/drift.py``.

Sketch
------
A job (:class:`Job`) is its options (rows of the option table, :mod:`spark_fr.options`) and its work; the runner
does the rest, the same way for every job:

    options  <- the defaults < a YAML config (--config; a URI read through the session's file systems)
                < the command line (it wins); then the job's checks of their combinations       :func:`resolve`
    logging  <- --log-level, to standard error as it is before a JVM starts                    :func:`terminal`
    session  <- the active session (spark-submit, a notebook, tests), else a local one started in the background
                when Spark is first needed (a run that never needs it never starts it)          :func:`session`
    work     <- ``job.work(opts, given)``: its exit code
    errors   <- one line on standard error and the exit code                                   :func:`main`
                  0   success (a job may return its own code: drift's 3 when the drift is above --fail-above)
                  2   bad input or parameters (InputError, FileNotFoundError); nothing written
                  1   any other failure (the traceback with --log-level debug)
                  130 interrupted (Ctrl-C); 143 terminated (SIGTERM unwinds like Ctrl-C: every clean-up runs,
                      :mod:`spark_fr.runtime.signals`)
    exit     <- :func:`exit_process`: a run whose lazy session start was abandoned, or that was interrupted or
                terminated, ends without waiting for the JVM's start or the driver's worker threads

The console scripts of the wheel (``spark-fr-rank``, ``spark-fr-evaluate``, ``spark-fr-drift``) and
``python -m spark_fr.cli`` (``.evaluation.job``, ``.evaluation.drift_job``) run the same jobs through
:func:`console`, named as they were invoked.
"""
from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass
from typing import Callable

from . import options as O
from .errors import InputError, one_line
from .runtime.signals import EXIT_TERMINATED, Terminated, received, sigterm_raises

log = logging.getLogger("spark_fr")

EXIT_OK, EXIT_FAILURE, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130


@dataclass(frozen=True)
class Job:
    """A command line: its options and its work.

    Attributes
    ----------
    prog : str
        The script, as ``--help`` and messages name it (``jobs/rank.py``).
    description, epilog : str
        ``--help``'s text before and after the options.
    options : tuple of Option
        Every option of the command line and of its configs (``--config``, ``--master`` and ``--log-level``
        among them).
    work : callable
        ``work(opts, given) -> exit code``: the options resolved, and the names given on the command line.
    check : callable, optional
        ``check(opts, given, config) -> opts``: checks of combinations of options (one-line :class:`InputError`),
        with the values given on the command line and in the config (dicts); returns the options to run with.
    app_name : str
        The name of a session the runner starts.
    """

    prog: str
    description: str
    epilog: str
    options: tuple
    work: Callable
    check: Callable | None = None
    app_name: str = "spark_fr"

    def parser(self):
        """The job's command line (:func:`spark_fr.options.build_parser`)."""
        return O.build_parser(self.prog, self.options, self.description, self.epilog)


# ----- options ----------------------------------------------------------------------------------------------
def load_config(path: str, job: Job, master: str | None = None) -> dict:
    """A ``--config`` file's options (:func:`spark_fr.options.load_config`): a local path, a ``file:`` URI, a
    config shipped with spark_fr by its name (:func:`spark_fr.options.config_path`), or a URI read through the
    session's file systems (:func:`spark_fr.io.files.driver_file`; a session is started for
    it, with ``--master``)."""
    from .io.files import driver_file

    path = O.config_path(path)  # a bare name: a config shipped with spark_fr (--config scheduled)
    return O.load_config(driver_file(path, "--config", master=master), name=path, options=job.options, job=job.prog)


def resolve(job: Job, argv=None) -> tuple:
    """The options of a run: the defaults, the config, the command line (it wins), then the job's checks.

    Returns
    -------
    (options, names given on the command line)
    """
    given = O.parse_command_line(argv, job.parser())
    cfg = load_config(given["config"], job, given.get("master")) if given.get("config") else {}
    opts = {**{o.name: o.default for o in job.options}, **cfg, **given}
    if job.check is not None:
        opts = job.check(opts, given, cfg)
    return opts, set(given)


# ----- logging ----------------------------------------------------------------------------------------------
def active_session():
    """The process's active Spark session, or None. A process that has not imported pyspark has none: a run on
    files does not import pyspark (a tenth of a second of every job's start) until it starts a session."""
    spark_sql = sys.modules.get("pyspark.sql")
    return None if spark_sql is None else spark_sql.SparkSession.getActiveSession()


def terminal():
    """Where messages go: standard error as it is now, even while a starting JVM's output is redirected.

    A session this run starts sends the JVM's standard error (file descriptor 2) to a log file while it
    starts, in a background thread; messages of this process go to a copy of the descriptor taken before.
    """
    if active_session() is not None or not hasattr(sys.stderr, "fileno"):
        return sys.stderr
    try:
        if sys.stderr.fileno() != 2:
            return sys.stderr
    except (OSError, ValueError):  # a captured stream
        return sys.stderr
    sys.stderr.flush()
    return os.fdopen(os.dup(2), "w", buffering=1)


def setup_logging(level: str, stream) -> None:
    """spark_fr's log lines at ``level`` to ``stream`` (py4j's, numba's and matplotlib's at warnings only)."""
    logging.basicConfig(level=getattr(logging, level.upper()), stream=stream, force=True,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    for noisy in ("py4j", "numba", "matplotlib"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


# ----- the session ------------------------------------------------------------------------------------------
#: the sessions this process started lazily (see :func:`abandoned_start`)
_STARTING: list = []


def session(opts: dict, app_name: str, lazy: bool = True):
    """The run's session: the active one (a notebook's, spark-submit's, the tests'), else a new local one with
    ``--master``, started in the background when first used (``lazy``), else now. Spark's own log is off unless
    ``--log-level debug``; ``--master`` with ``SPARK_REMOTE`` is refused."""
    from .runtime.session import SessionStart, check_master, get_spark, remote_url, when_ready

    if opts.get("master"):
        check_master(opts["master"])
        if remote_url() is not None:
            raise InputError(f"--master {opts['master']} and SPARK_REMOTE={remote_url()} cannot be used together: "
                             f"SPARK_REMOTE makes a Spark Connect session, whose server has its own master")
    debug = opts.get("log_level") == "debug"
    spark = active_session()  # a session of the caller's (a notebook, spark-submit, tests)
    if spark is None and not lazy:
        spark = get_spark(master=opts.get("master"), app_name=app_name, quiet=not debug)
    elif spark is None:
        spark = SessionStart(lazy=True, master=opts.get("master"), app_name=app_name, quiet=not debug)
        _STARTING.append(spark)
    if not debug:
        when_ready(spark, _quiet_spark)
    return spark


def _quiet_spark(spark) -> None:
    """Spark's own log off (a classic session; a Spark Connect session's log is the server's)."""
    from .runtime.engine import is_connect

    if not is_connect(spark):
        spark.sparkContext.setLogLevel("OFF")


def abandoned_start() -> bool:
    """Whether a session this process started is still starting (the run ended before it needed Spark)."""
    return any(not s.ready for s in _STARTING)


def settle_abandoned_starts() -> None:
    """Let the sessions still starting get past the JVM's launch (:meth:`SessionStart.settle`) before an exit
    that does not wait for them: no temporary folder of pyspark's launcher is left behind."""
    for s in _STARTING:
        s.settle()


def exit_process(code: int) -> None:
    """End the job's process with ``code``. A run that ended before it needed Spark does not wait for the JVM to
    finish starting, and an interrupted or terminated one (130, 143; everything was cleaned up) not for the
    driver's worker threads either: a JVM launch under way gets past its launch, the JVM's log file is removed,
    and the process ends at once."""
    if abandoned_start() or code in (EXIT_INTERRUPTED, EXIT_TERMINATED):
        from .runtime.session import remove_jvm_log

        settle_abandoned_starts()
        sys.stdout.flush()
        sys.stderr.flush()
        remove_jvm_log()
        os._exit(code)
    sys.exit(code)


def invoked_as(default: str) -> str:
    """How the user ran the command, for ``--help`` and messages: a console script's name (``spark-fr-rank``) or
    ``python -m <module>``; ``default`` (``jobs/rank.py``) otherwise."""
    main_module = sys.modules.get("__main__")
    spec = getattr(main_module, "__spec__", None)
    if spec is not None and spec.name and not spec.name.endswith("__main__"):
        return f"python -m {spec.name}"
    name = os.path.basename(sys.argv[0] or "")
    if name and not name.endswith(".py") and name != "-c":
        return name[:-4] if name.lower().endswith(".exe") else name
    return default


def console(job: Job) -> None:
    """A console script's or ``python -m``'s run of ``job`` (``spark-fr-rank`` = ``jobs/rank.py``): the same
    runner, named as invoked (:func:`invoked_as`), ended by :func:`exit_process` as the scripts of ``jobs/``."""
    from dataclasses import replace

    exit_process(main(replace(job, prog=invoked_as(job.prog))))


# ----- errors and exit codes --------------------------------------------------------------------------------
def failure_message(err: BaseException, prog: str = "jobs/rank.py") -> str:
    """One line for a failure that is not bad input: what happened, and what to do about it."""
    from .runtime.session import jvm_log_tail

    text = f"{type(err).__name__}: {err}"
    jvm = jvm_log_tail()
    if "OutOfMemoryError" in text or "OutOfMemoryError" in jvm:
        kind = "Java heap space" if "Java heap space" in text + jvm else "memory"
        return (f"Spark's driver ran out of memory (java.lang.OutOfMemoryError: {kind}); give it more: "
                f"SPARK_FR_DRIVER_MEMORY=16g python {prog} ..., or spark-submit --driver-memory 16g")
    grpc_status = _grpc_status(err)
    if grpc_status is not None:
        from .runtime.session import _without_secrets, remote_url

        remote = remote_url()
        where = f"the Spark Connect server (SPARK_REMOTE={_without_secrets(remote)})" if remote else "Spark Connect"
        return (f"{where} answered a request with gRPC status {grpc_status}; check that the address is a Spark "
                f"Connect server of a version this pyspark ({_pyspark_version()}) speaks to")
    lost = ("Py4JNetworkError", "ConnectionRefusedError", "Connection refused", "Answer from Java side is empty")
    if any(s in text for s in lost):
        return ("Spark's driver (its JVM) stopped unexpectedly; if the machine is short of memory, give the driver "
                "less or more (SPARK_FR_DRIVER_MEMORY) and rerun with --log-level debug to see why")
    return f"unexpected failure: {one_line(err)} (rerun with --log-level debug for details)"


def _grpc_status(err: BaseException) -> str | None:
    """``CODE (details)`` of a gRPC error (pyspark's Connect client lets grpc's own errors through, e.g. from a
    server that speaks HTTP/2 but not Spark Connect), or None."""
    for e in (err, err.__cause__, err.__context__):
        code = getattr(e, "code", None)
        if e is None or not callable(code) or not type(e).__module__.startswith("grpc"):
            continue
        try:
            name = getattr(code(), "name", str(code()))
            details = e.details() if callable(getattr(e, "details", None)) else ""
        except Exception:  # noqa: BLE001 - an error object without its status: not one we can describe
            continue
        return f"{name} ({details})" if details else name
    return None


def _pyspark_version() -> str:
    import pyspark

    return pyspark.__version__


def main(job: Job, argv=None) -> int:
    """Run ``job``: resolve its options, set up logging, do its work, and turn every failure into one line on
    standard error and an exit code (module sketch). SIGTERM unwinds like Ctrl-C: every clean-up runs."""
    with sigterm_raises():
        try:
            return _main(job, argv)
        except Terminated:  # before the error stream was set up
            print("error: terminated (SIGTERM)", file=sys.stderr)
            return EXIT_TERMINATED


def _as_input_error(err: Exception) -> Exception:
    """``err``, or the one-line InputError of a pyspark error that is the user's setup
    (:func:`spark_fr.runtime.client_only.known_input_error`)."""
    from .runtime.client_only import known_input_error

    return known_input_error(err) or err


def _main(job: Job, argv) -> int:
    try:
        opts, given = resolve(job, argv)
    except (InputError, FileNotFoundError) as err:
        print(f"error: {one_line(err)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    stream = terminal()
    setup_logging(opts.get("log_level", "info"), stream)
    try:
        return job.work(opts, given)
    except Terminated:
        print("error: terminated (SIGTERM)", file=stream)
        return EXIT_TERMINATED
    except Exception as err:
        if received():  # an error of a clean-up that the signal cut short: the run was terminated
            print("error: terminated (SIGTERM)", file=stream)
            return EXIT_TERMINATED
        err = _as_input_error(err)
        if isinstance(err, (InputError, FileNotFoundError)):
            print(f"error: {one_line(err)}", file=stream)
            return EXIT_BAD_INPUT
        if opts.get("log_level") == "debug":  # not bad input: one line on stderr, the traceback with debug
            raise
        print(f"error: {failure_message(err, job.prog)}", file=stream)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print("error: interrupted", file=stream)
        return EXIT_INTERRUPTED
    finally:
        stream.flush()
