"""Making spark_fr's log lines visible where nobody configured logging (a notebook, a plain Python session).

Sketch
------
spark_fr logs through the ``spark_fr`` logger (its modules' loggers are its children): what it reads, the
mode it chose, trees or instances done with percent and ETA (:mod:`spark_fr.runtime.progress`), warnings.
Python shows nothing below WARNING unless the program configured logging, so a ``spark_fr.rank`` call in a
Jupyter or Databricks notebook used to run for minutes in silence.

Decisions
---------
* :func:`show_logs_by_default` runs at the start of every ``spark_fr.rank`` / ``rank_relational`` call (the
  Estimator's ``fit`` goes through ``rank``). When neither the ``spark_fr`` logger nor the root logger has a
  handler (nobody configured logging), it attaches one concise handler to ``spark_fr`` at INFO, once:
  ``[spark_fr 10:47:09] growing 100 trees (rf)``, warnings as ``[spark_fr 10:47:09] WARNING: ...``. It writes
  to ``sys.stderr`` as it is at each record (Jupyter and Databricks show it under the cell; a script's
  standard error stays its own).
* A program that configured logging keeps its configuration: nothing is attached when the root logger (or
  ``spark_fr``) has a handler, such as ``logging.basicConfig`` or the command line's own set-up
  (``spark_fr.cli``). If the root logger gets a handler after ours was attached, ours stands aside (the
  records reach the root's handler; nothing is printed twice).
* Turning it off or down: ``spark_fr.set_verbosity('warning')`` (or ``'error'``, ``'debug'``, ``'info'``;
  ``'none'`` removes our handler and leaves spark_fr's logging to Python's defaults), or the environment
  variable ``SPARK_FR_LOG_LEVEL`` with the same words, read when the handler would be attached
  (``SPARK_FR_LOG_LEVEL=none``: never attach). An explicit :func:`set_verbosity` shows spark_fr's lines at
  that level even when the root logger has handlers of its own.
"""
from __future__ import annotations

import logging
import os
import sys

LOGGER = "spark_fr"
ENV = "SPARK_FR_LOG_LEVEL"
LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
NONE = "none"
#: whether the user chose with set_verbosity (then the automatic handler is never attached again)
_STATE = {"chosen": False}


class NotebookHandler(logging.StreamHandler):
    """A stream handler on ``sys.stderr`` as it is at each record; automatic ones (``explicit=False``) stand
    aside once the root logger has a handler of its own."""

    def __init__(self, explicit: bool = False):
        super().__init__(sys.stderr)
        self.explicit = explicit
        self.setFormatter(_Format())

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):  # StreamHandler.__init__ and setStream assign it; the property always reads sys.stderr
        pass

    def filter(self, record) -> bool:
        if not self.explicit and logging.getLogger().handlers:
            return False
        return super().filter(record)


class _Format(logging.Formatter):
    """``[spark_fr HH:MM:SS] message``; ``WARNING:`` / ``ERROR:`` before the message above INFO."""

    def __init__(self):
        super().__init__("[spark_fr %(asctime)s] %(message)s", datefmt="%H:%M:%S")

    def formatMessage(self, record) -> str:
        text = super().formatMessage(record)
        if record.levelno > logging.INFO:
            head, _, rest = text.partition("] ")
            text = f"{head}] {record.levelname}: {rest}"
        return text


def _ours(logger) -> list:
    return [h for h in logger.handlers if isinstance(h, NotebookHandler)]


def _level(word, where: str) -> int | None:
    """The logging level of a verbosity word (None for 'none'); a one-line ValueError for anything else."""
    if isinstance(word, int) and not isinstance(word, bool):
        return word
    key = str(word).strip().lower()
    if key == NONE:
        return None
    if key not in LEVELS:
        raise ValueError(f"{where} must be one of {', '.join([*LEVELS, NONE])}, not {word!r}")
    return LEVELS[key]


def show_logs_by_default() -> bool:
    """Attach the concise handler to the ``spark_fr`` logger if nobody configured logging (module sketch).

    Returns
    -------
    bool
        Whether a handler was attached by this call.
    """
    logger = logging.getLogger(LOGGER)
    if _STATE["chosen"] or logger.handlers or logging.getLogger().handlers:
        return False
    word = os.environ.get(ENV, "").strip() or "info"
    try:
        level, bad = _level(word, ENV), None
    except ValueError as err:  # a misspelt variable must not stop a ranking: INFO, and a warning saying so
        level, bad = logging.INFO, str(err)
    if level is None:
        return False
    logger.addHandler(NotebookHandler())
    if logger.level == logging.NOTSET:
        logger.setLevel(level)
    if bad:
        logger.warning("%s; showing INFO", bad)
    return True


def set_verbosity(level="info") -> None:
    """Show spark_fr's log lines from ``level`` up, under the notebook cell or on standard error.

    Parameters
    ----------
    level : {'debug', 'info', 'warning', 'error', 'none'} or int
        'none' removes spark_fr's own handler and level: its logging is then Python's (or your program's)
        configuration alone.

    Raises
    ------
    spark_fr.errors.InputError
        Another word.
    """
    from ..errors import InputError

    try:
        value = _level(level, "verbosity")
    except ValueError as err:
        raise InputError(str(err)) from None
    logger = logging.getLogger(LOGGER)
    _STATE["chosen"] = True
    for handler in _ours(logger):
        logger.removeHandler(handler)
    if value is None:
        logger.setLevel(logging.NOTSET)
        return
    logger.setLevel(value)
    logger.addHandler(NotebookHandler(explicit=True))
