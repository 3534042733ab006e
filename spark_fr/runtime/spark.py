"""Broadcast a payload, run groups of work as Spark tasks, merge the results exactly, clean up.

Sketch
------
Ensembles (groups of trees) and Relief (groups of instance shards) share one skeleton::

    progress <- Progress(total units)                      one total for the whole run, driver and Spark
    [driver]  units on the driver's threads while small, or while the session starts; all of them when the
              session, not started yet, would be a local one (its executors would be this machine's cores)
    [spark]   groups <- plan(units left, parallelism)
              result <- engine.run_grouped(payload, groups, work, merge, zero)    (spark_fr.runtime.engine)
                 classic: sc.broadcast(payload); parallelize(groups).treeAggregate(zero, seq, merge)
                 connect: payload through a broadcast DataFrame, one mapInArrow task per group, collect

``work`` must depend only on the payload and the group (a retried task recomputes the same value), and
``merge`` must give the same result in any order (exact sums, or results keyed by group), so the outcome is
the same for any partitioning, executor count, retry or kind of session.

Small work runs in the driver process instead (:func:`run_units`, :func:`on_driver`): the same ``work``
and ``merge`` over the same groups, so the same result bit for bit, without a Spark job (and without
touching the session: the driver path never asks for a ``sparkContext``). A Spark job costs
0.5-2 s (broadcast, task launch, Python workers; in a cold process, waiting for the session to start), more
than work estimated below :data:`DRIVER_MAX_SECONDS` takes on the driver's threads. Larger work that starts
while a session of ours is still starting (a cold ``jobs/rank.py``) begins in the driver and hands the units
left to Spark once the session is up (:func:`run_units`): the JVM's start-up is no longer idle time, and the
result is the same, since every unit is computed by the same ``work`` and merged exactly. The driver runs
units on all the machine's cores (threads: the numba kernels release the GIL) and merges them in unit order.
Progress (:mod:`spark_fr.runtime.progress`) counts the units of both parts against one total.
"""
from __future__ import annotations

import contextlib
import copy
import logging
import os
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from .engine import engine_for, session_of
from .progress import Progress

log = logging.getLogger(__name__)

#: work estimated to take at most this many seconds on the driver's threads runs in the driver process
#: (environment variable ``SPARK_FR_DRIVER_MAX_SECONDS`` overrides it; 0: always Spark tasks)
DRIVER_MAX_SECONDS = 2.0
#: ... and this many when the session's JVM has not been started yet (about its start-up and first job on
#: these machines): up to this, Spark cannot finish sooner than the driver (scaled with the limit above)
SESSION_START_SECONDS = 10.0


def driver_threads() -> int:
    """Threads the driver computes units with: the machine's cores (``SPARK_FR_DRIVER_THREADS`` overrides)."""
    env = os.environ.get("SPARK_FR_DRIVER_THREADS")
    try:
        return max(1, int(env)) if env else max(1, os.cpu_count() or 1)
    except ValueError:
        return max(1, os.cpu_count() or 1)


def driver_map(fn, items: list) -> list:
    """``[fn(item) for item in items]`` computed on :func:`driver_threads` threads (``fn`` spends its time in code
    that releases the GIL: numpy, pyarrow, numba's nogil kernels), the results in the items' order."""
    threads = min(driver_threads(), len(items))
    if threads <= 1:
        return [fn(item) for item in items]
    with ThreadPoolExecutor(threads, thread_name_prefix="spark_fr-driver") as pool:
        return list(pool.map(fn, items))


def driver_map_stream(fn, items) -> list:
    """:func:`driver_map` over an iterable read in windows of :func:`driver_threads` items: at most one window of
    items is held at a time (the results are all kept), the results in the items' order."""
    out, window, threads = [], [], driver_threads()
    for item in items:
        window.append(item)
        if len(window) == threads:
            out += driver_map(fn, window)
            window = []
    return out + driver_map(fn, window)


def driver_limit() -> float:
    """:data:`DRIVER_MAX_SECONDS`, or ``SPARK_FR_DRIVER_MAX_SECONDS`` when set (0: never work in the driver)."""
    limit = os.environ.get("SPARK_FR_DRIVER_MAX_SECONDS")
    try:
        return DRIVER_MAX_SECONDS if limit is None else max(0.0, float(limit))
    except ValueError:
        return DRIVER_MAX_SECONDS


def on_driver(estimated_seconds: float) -> bool:
    """Whether work estimated at ``estimated_seconds`` (one core) runs in the driver process: when it takes
    at most :func:`driver_limit` seconds on the driver's threads."""
    return estimated_seconds / driver_threads() <= driver_limit()


def _units_in_driver(payload, units: list, work, merge, result, keep_going, finished=None):
    """``work`` over ``units[0], units[1], ...`` on :func:`driver_threads` threads (the kernels release the
    GIL) while ``keep_going(k)`` for the next unit k; results are merged in unit order; ``finished(k)`` is called
    as unit k ends. Returns (result, units done)."""
    finished = finished or (lambda k: None)
    threads = driver_threads()
    values = {}
    k = 0
    if threads == 1:
        while k < len(units) and keep_going(k):
            values[k] = work(payload, units[k:k + 1])
            finished(k)
            k += 1
    else:
        with ThreadPoolExecutor(threads, thread_name_prefix="spark_fr-driver") as pool:
            running = {}
            while running or (k < len(units) and keep_going(k)):
                while k < len(units) and len(running) < threads and keep_going(k):
                    running[pool.submit(work, payload, units[k:k + 1])] = k
                    k += 1
                if running:
                    done, _ = wait(running, return_when=FIRST_COMPLETED)
                    for f in done:
                        i = running.pop(f)
                        values[i] = f.result()
                        finished(i)
    for i in sorted(values):
        result = merge(result, values[i])
    return result, k


def _starting(spark) -> bool:
    from .session import SessionStart

    return isinstance(spark, SessionStart) and not spark.started


def _local_to_the_driver(spark) -> bool:
    """Whether ``spark``'s executors would be threads of this process, at least as many as the driver's: a lazy
    session of ours, not started yet, that would be a classic local one, or a started classic session (a user's,
    a notebook's) whose master is local (``local[*]``, ``local[N]``, a single-node cluster's ``local[*, 4]``). The
    work then runs in the driver instead, at the same parallelism without the JVM's start, the broadcast and the
    Python workers.

    Decision: a user's started local session counts too (measured: a 5,000 x 5,000 DataFrame's 100 trees took
    14.4 s as Spark tasks of a ``local[*]`` session, against 6.9 s on the driver's threads for the same table read
    from its files). Spark Connect sessions and other masters keep running the work as Spark tasks.
    """
    from .engine import is_connect
    from .session import SessionStart, local_master_cores

    if isinstance(spark, SessionStart):
        cores = spark.local_cores if not spark.requested else None
    elif spark is None or is_connect(spark):
        cores = None
    else:
        try:
            cores = local_master_cores(spark.sparkContext.master)
        except Exception:  # a session without a reachable context (stopped): not the driver's threads
            cores = None
    return cores is not None and cores >= driver_threads()


def _not_started(spark) -> bool:
    """A lazy session of ours whose JVM has not been asked to start yet."""
    from .session import SessionStart

    return isinstance(spark, SessionStart) and not spark.requested


def run_units(spark, payload, units: list, work, merge, zero, plan, *, estimated_seconds: float | None = None,
              size=len, label: str = "units", description: str = "spark_fr", progress=None):
    """``work`` over ``units``, where it is cheapest; the same merged result wherever each unit runs.

    * every unit in the driver, on :func:`driver_threads` threads, when ``estimated_seconds`` (the whole
      work on one core) divided by the threads is within :func:`driver_limit` (no Spark job, the session is
      never waited for), or within :data:`SESSION_START_SECONDS` when ``spark`` is a lazy session of ours
      that was not started yet (it then never starts for this work), or whatever the estimate when that session
      would be, or ``spark`` is, a classic local one with at least the driver's threads
      (:func:`_local_to_the_driver`: local Spark runs on the same cores, after a JVM start, a broadcast and
      Python workers' start; measured: 6 trees with the RF score on 10^6 x 50 x 3, 35.8 s whole process instead
      of 41.3 s);
    * else units in the driver while ``spark`` is a session of ours still starting (unless the limit is 0),
      and then also the units left if they are small work by the same rule; the units left after that run as
      Spark tasks, in the groups ``plan(units_left, parallelism)`` makes (:meth:`Engine.run_grouped`, classic
      or Spark Connect).

    ``progress`` (default: a :class:`~spark_fr.runtime.progress.Progress` of this call, counting ``size`` of
    every unit under ``label``) advances as units end, in the driver and in Spark, against one total.

    Returns
    -------
    result : object
        The merged value.
    seconds : float
        Wall time, less any wait for the session (the session's start is timed on its own).
    on_driver : int
        Units computed in the driver (``len(units)``: no Spark job ran).
    """
    t0 = time.perf_counter()
    result = copy.deepcopy(zero)
    k = 0
    # without a JVM yet, the driver does what it can do faster than a JVM could start and run it
    limit_scale = SESSION_START_SECONDS / DRIVER_MAX_SECONDS if _not_started(spark) else 1.0
    all_here = estimated_seconds is not None and on_driver(estimated_seconds / limit_scale)
    early = driver_limit() > 0
    if not all_here and early and _local_to_the_driver(spark):
        all_here = True
        log.info("%d %s on the driver's %d threads: a local Spark session would run on the same cores (no JVM "
                 "started)", len(units), label, driver_threads())
    if not all_here and _not_started(spark):
        spark.start()  # Spark will be needed: the JVM starts while the driver begins the work
    per_unit = (estimated_seconds or 0.0) / max(len(units), 1)
    sizes = [size(units[i:i + 1]) for i in range(len(units))]
    own = progress is None
    if own:
        progress = Progress(sum(sizes), label)

    def keep_going(k):  # all of it; or while the session starts, and then the rest if it is small work
        return all_here or _starting(spark) or (estimated_seconds is not None and on_driver(per_unit * (len(units) - k)))

    waited = 0.0
    with progress if own else contextlib.nullcontext():
        if all_here or (early and _starting(spark)):
            result, k = _units_in_driver(payload, units, work, merge, result, keep_going,
                                         lambda i: progress.advance(sizes[i]))
        if k:
            log.info("%d of %d %s done in the driver%s", k, len(units), label,
                     "" if all_here else " while the Spark session started")
        if k < len(units):
            t_wait = time.perf_counter()
            session = session_of(spark)
            waited = time.perf_counter() - t_wait
            engine = engine_for(session)
            groups = plan(units[k:], engine.parallelism())
            value, _ = run_grouped(session, payload, groups, work, merge, zero, size=size, label=label,
                                   description=description, progress=progress)
            result = merge(result, value)
    return result, time.perf_counter() - t0 - waited, k


def run_grouped(spark, payload, groups: list, work, merge, zero, *, size=len, label: str = "units",
                description: str = "spark_fr", progress=None):
    """Run ``work(payload, group)`` for every group as one Spark task each and merge the results.

    Parameters
    ----------
    spark : SparkSession
        Classic or Spark Connect (:func:`spark_fr.runtime.engine.engine_for` picks the implementation).
    payload : object
        Shipped once to the tasks (a broadcast variable, or a broadcast DataFrame under Spark Connect); tasks
        read it as ``work``'s first argument.
    groups : list
        One element per task (picklable).
    work : callable
        ``work(payload, group) -> value``; a pure function of its arguments.
    merge : callable
        ``merge(a, b) -> a`` with ``b`` merged into ``a``; associative and order-independent.
    zero : object
        The neutral value (copied for every partition).
    size : callable
        Units of work in a group, for progress (default ``len``).
    label : str
        What the units are, for the progress log ('trees', 'Relief instances').
    description : str
        Spark job description (shown in the Spark UI of a classic session).
    progress : Progress, optional
        Advanced by ``size(group)`` per group (default: a Progress of this call).

    Returns
    -------
    object
        The merged value, and the wall time in seconds.
    """
    total = sum(size(g) for g in groups)
    t0 = time.perf_counter()
    engine = engine_for(spark)
    own = progress is None
    if own:
        progress = Progress(total, label)
    with progress if own else contextlib.nullcontext():
        result = engine.run_grouped(payload, groups, work, merge, zero, size=size, progress=progress,
                                    description=description)
    seconds = time.perf_counter() - t0
    log.info("%s: %d in %d Spark tasks (%s session) in %.1f s", label, total, len(groups), engine.kind, seconds)
    return result, seconds
