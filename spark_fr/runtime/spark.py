"""Broadcast a payload, run groups of work as Spark tasks, merge the results exactly, clean up.

Sketch
------
Ensembles (groups of trees) and Relief (groups of instance shards) share one Spark skeleton::

    bc     <- sc.broadcast(payload)                       once per run
    done   <- accumulator (units finished), logged every few seconds while the job runs
    result <- sc.parallelize(groups, len(groups)).treeAggregate(zero,
                  seqOp  = acc, group -> merge(acc, work(bc.value, group));  done += size(group)
                  combOp = merge)
    bc.destroy()                                          also when the job fails

``work`` must depend only on the payload and the group (a retried task recomputes the same value), and
``merge`` must give the same result in any order (exact sums, or results keyed by group), so the outcome is
the same for any partitioning, executor count or retry.

Small work runs in the driver process instead (:func:`run_units`, :func:`on_driver`): the same ``work``
and ``merge`` over the same groups, so the same result bit for bit, without a Spark job. A Spark job costs
0.5-2 s (broadcast, task launch, Python workers; in a cold process, waiting for the session to start), more
than work estimated below :data:`DRIVER_MAX_SECONDS` takes on one core. Larger work that starts while a
session of ours is still starting (a cold ``jobs/rank.py``) begins in the driver, one unit at a time, and
hands the units left to Spark once the session is up (:func:`run_units`): the JVM's start-up is no longer
idle time, and the result is the same, since every unit is computed by the same ``work`` and merged exactly.
"""
from __future__ import annotations

import copy
import logging
import os
import time

from .progress import Progress

log = logging.getLogger(__name__)

#: work estimated to take at most this many seconds on one core runs in the driver process (environment
#: variable ``SPARK_FR_DRIVER_MAX_SECONDS`` overrides it; 0: always Spark tasks)
DRIVER_MAX_SECONDS = 2.0


def driver_limit() -> float:
    """:data:`DRIVER_MAX_SECONDS`, or ``SPARK_FR_DRIVER_MAX_SECONDS`` when set (0: never work in the driver)."""
    limit = os.environ.get("SPARK_FR_DRIVER_MAX_SECONDS")
    try:
        return DRIVER_MAX_SECONDS if limit is None else max(0.0, float(limit))
    except ValueError:
        return DRIVER_MAX_SECONDS


def on_driver(estimated_seconds: float) -> bool:
    """Whether work estimated at ``estimated_seconds`` (one core) runs in the driver process."""
    return estimated_seconds <= driver_limit()


def _starting(spark) -> bool:
    from .session import SessionStart

    return isinstance(spark, SessionStart) and not spark.started


def run_units(spark, payload, units: list, work, merge, zero, plan, *, estimated_seconds: float | None = None,
              size=len, label: str = "units", description: str = "spark_fr"):
    """``work`` over ``units``, where it is cheapest; the same merged result wherever each unit runs.

    * every unit in the driver, one at a time, when ``estimated_seconds`` (the whole work on one core) is
      within :func:`driver_limit` (no Spark job, the session is never waited for);
    * else units in the driver while ``spark`` is a session of ours still starting (unless the limit is 0),
      and the units left as Spark tasks, in the groups ``plan(units_left, parallelism)`` makes.

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
    all_here = estimated_seconds is not None and on_driver(estimated_seconds)
    early = driver_limit() > 0
    while k < len(units) and (all_here or (early and _starting(spark))):
        result = merge(result, work(payload, units[k:k + 1]))
        k += 1
    if k:
        log.info("%d of %d %s done in the driver%s", k, len(units), label,
                 "" if all_here else " while the Spark session started")
    waited = 0.0
    if k < len(units):
        t_wait = time.perf_counter()
        sc = spark.sparkContext
        waited = time.perf_counter() - t_wait
        groups = plan(units[k:], sc.defaultParallelism)
        value, _ = run_grouped(sc, payload, groups, work, merge, zero, size=size, label=label,
                               description=description)
        result = merge(result, value)
    return result, time.perf_counter() - t0 - waited, k


def run_grouped(sc, payload, groups: list, work, merge, zero, *, size=len, total: int | None = None,
                label: str = "units", description: str = "spark_fr"):
    """Run ``work(payload, group)`` for every group as one Spark task each and merge the results.

    Parameters
    ----------
    sc : pyspark.SparkContext
    payload : object
        Broadcast once; tasks read it as ``work``'s first argument.
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
    total : int, optional
        Total units (default: the sum of the sizes).
    label : str
        What the units are, for the progress log ('trees', 'Relief instances').
    description : str
        Spark job description (shown in the Spark UI).

    Returns
    -------
    object
        The merged value, and the wall time in seconds.
    """
    total = sum(size(g) for g in groups) if total is None else total
    t0 = time.perf_counter()
    bc = sc.broadcast(payload)
    done = sc.accumulator(0)

    def seq(acc, group):
        value = work(bc.value, group)
        done.add(size(group))
        return merge(acc, value)

    try:
        sc.setJobDescription(description)
        with Progress(done, total, label=label):
            result = sc.parallelize(groups, len(groups)).treeAggregate(zero, seq, merge, depth=2)
    finally:
        sc.setJobDescription(None)
        bc.destroy()
    seconds = time.perf_counter() - t0
    log.info("%s %d / %d done (%.1f s)", label, total, total, seconds)
    return result, seconds
