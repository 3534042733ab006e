"""``pyspark-client`` only (the Spark Connect client: no ``pyspark.core``, no JVM, no jars) and no Spark Connect
server given: one line saying what to do, instead of pyspark's ``[CONNECT_URL_NOT_SET]``.

Sketch
------
* :func:`client_only` is pyspark's own test (``pyspark.util.is_remote_only``: ``pyspark.core`` cannot be imported),
  the one that makes ``SparkSession.builder.getOrCreate()`` raise ``[CONNECT_URL_NOT_SET]`` without
  ``SPARK_REMOTE``.
* :func:`check_local_spark`: :func:`spark_fr.runtime.session.get_spark` calls it before it would make a local (or
  cluster) session, before Java is checked (a "Java not found" would suggest installing Java for a pyspark that
  cannot use it): a one-line :class:`ClientOnlyError` (an ``InputError``: exit code 2 from the jobs, nothing
  written) saying to set ``SPARK_REMOTE=sc://host:port`` or to pass a session.
* :func:`known_input_error` gives the same line for pyspark's own ``[CONNECT_URL_NOT_SET]`` raised elsewhere (a
  caller's ``SparkSession.builder.getOrCreate()``): the jobs' runner reports it as bad input (exit code 2).

Decision: the error comes when the run first needs Spark, not at its start: a run that the driver does alone (a
small local file) needs no server and works in such an environment.
"""
from __future__ import annotations

from ..errors import InputError


class ClientOnlyError(InputError):
    """This pyspark is the Spark Connect client only and no Spark Connect server is given: one line saying what
    to do."""


#: the one line of :class:`ClientOnlyError`
CLIENT_ONLY = ("this run needs Spark, but this Python has pyspark-client only (a Spark Connect client: it cannot "
               "start a local Spark) and SPARK_REMOTE is not set: set SPARK_REMOTE=sc://host:port to a Spark Connect "
               "server (in Python, or pass spark=<a Spark Connect session>), or install pyspark for a local Spark")


def client_only() -> bool:
    """Whether this pyspark is the Spark Connect client only (``pyspark-client``): pyspark's own test."""
    try:
        from pyspark.util import is_remote_only
    except ImportError:  # a pyspark before 4.0: always the whole package
        return False
    return bool(is_remote_only())


def check_local_spark() -> None:
    """A local or cluster session can be made here (not ``pyspark-client`` only).

    Raises
    ------
    ClientOnlyError
        One line saying to set ``SPARK_REMOTE`` or to pass a session (module sketch).
    """
    if client_only():
        raise ClientOnlyError(CLIENT_ONLY)


def known_input_error(err: BaseException) -> InputError | None:
    """The one-line :class:`~spark_fr.errors.InputError` for an error of pyspark's that is the user's setup:
    ``[CONNECT_URL_NOT_SET]`` (no Spark Connect URL where only Connect sessions can be made), else None."""
    condition = getattr(err, "getCondition", None) or getattr(err, "getErrorClass", None)
    try:
        name = condition() if callable(condition) else None
    except Exception:  # noqa: BLE001 - an error object without its condition: not one we know
        return None
    return ClientOnlyError(CLIENT_ONLY) if name == "CONNECT_URL_NOT_SET" else None
