"""The rank job, ``jobs/rank.py`` (``spark-submit`` or plain ``python``): its options and its work.

Sketch
------
    options     <- the defaults, a YAML config, the command line (it wins)       spark_fr.runner, .options
    publication <- the output and the plot checked before any work                spark_fr.io.writers
    warm-up     <- the method's kernels compiled while the session starts         spark_fr.runtime.warmups
    ranking     <- spark_fr.rank(...), or rank_relational(...) for --schema
    publish     <- table, run.json and plot written together
    summary     <- the top features per score on standard output

Every option can come from ``--config FILE.yaml`` (same names, dashes or underscores). Sessions, logging, one-line
errors and exit codes are the runner's (:mod:`spark_fr.runner`): 0 success; 2 bad input or parameters
(one line on standard error, nothing written); 1 any other failure (one line; the details with ``--log-level
debug``); 130 interrupted (Ctrl-C); 143 terminated (SIGTERM, e.g. ``timeout`` or a scheduler:
:mod:`spark_fr.runtime.signals`). Interrupted and terminated runs unwind through every clean-up first: they leave
no temporary file or directory, and no half-written output.
"""
from __future__ import annotations

import logging
import threading
import time

from . import options as O
from .errors import InputError
from .options.command_line import RANK_DESCRIPTION, RANK_EPILOG
from . import runner

log = logging.getLogger("spark_fr")


def check_options(opts: dict, given: dict, config: dict) -> dict:
    """The combinations of options the rank job refuses before any work (one-line :class:`InputError`)."""
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
    return opts


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


def warm_up_beside(opts: dict) -> threading.Thread:
    """Load (or compile) the kernels of the run's method in a thread of its own, started here.

    Decision: the warm-up loads a few dozen kernels from numba's cache (about 0.9 s of one core on the wide
    benchmark, mostly Python and LLVM's linking) while the run reads its input (pyarrow decodes a Parquet file
    without the GIL) and a Spark session starts: they no longer wait for each other. A kernel the run calls while
    the warm-up loads it waits for numba's compiler lock, as with any two threads. The thread is not a daemon: the
    process ends after it, as it did after a warm-up in the main thread; a warm-up that fails says so in a debug
    line, and the run compiles what it calls itself. pandas (the ranking's table; pyarrow imports it on its first
    conversion of a NumPy array) is imported after the kernels, not before them: its 0.3-0.4 s of the GIL then
    falls after the input's parse, whose threads take the GIL back between pyarrow calls (MTR, 2 trees, 8 pairs:
    statistics median 0.74 -> 0.58 s, whole process 1.96 -> 1.76 s; wide: 4.45 -> 4.19 s)."""
    from .api import warm_up

    def warm():
        try:
            warm_up(opts["method"], opts)
            import pandas  # noqa: F401 (after the kernels: see the decision above)
        except Exception as err:  # noqa: BLE001 (the run compiles on use, and reports any error there)
            log.debug("the warm-up failed (%s: %s): the run compiles its kernels on use", type(err).__name__, err)

    thread = threading.Thread(target=warm, name="spark_fr-warm-up")
    thread.start()
    return thread


def run(opts: dict, given: set = frozenset()) -> int:
    """The rank job's work, from resolved options; returns the exit code."""
    from .io.writers import Publication

    t0 = time.perf_counter()
    # the JVM starts when Spark is first needed (reading with Spark, work too large for the driver), in the
    # background: this thread goes on with what it can do without Spark until it uses the session
    starting = runner.session(opts, JOB.app_name)
    # the outputs are checked before any work (a catalog output starts the session: its catalog is asked)
    publication = Publication(opts.get("output"), opts["output_format"], opts.get("mode"), opts.get("plot"),
                              table=opts.get("output_table"), spark=starting).check()
    if opts.get("mlflow_experiment"):  # reached before any work (spark_fr.io.tracking)
        from .io.tracking import MlflowRun

        publication = MlflowRun(opts["mlflow_experiment"]).check().publishing(publication)
    from .api import rank

    warm_up_beside(opts)  # the kernels the run needs, while a session starts and this thread reads the input
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


JOB = runner.Job("jobs/rank.py", RANK_DESCRIPTION, RANK_EPILOG, tuple(O.job_options()), run, check_options,
                 app_name="spark_fr rank")


def main(argv=None) -> int:
    """``jobs/rank.py``: the rank job run by :func:`spark_fr.runner.main` (exit codes in the module
    docstring)."""
    return runner.main(JOB, argv)


def console() -> None:
    """The console script ``spark-fr-rank`` (and ``python -m spark_fr.cli``): :func:`main` as ``jobs/rank.py``
    runs it."""
    runner.console(JOB)


if __name__ == "__main__":
    runner.console(JOB)
