"""Termination by a signal, as an exception: a job killed with SIGTERM cleans up as an interrupted one does.

A scheduler, ``timeout`` or ``kill`` ends a job with SIGTERM, whose default action ends Python at once: no
``finally`` runs, so the writers' hidden ``.tmp-`` / ``.old-`` siblings, a relational run's
``spark_fr_relational_*`` directory and the JVM's log file would stay behind. :func:`sigterm_raises` (the
command line's ``main`` runs inside it) turns SIGTERM into :class:`Terminated`, a ``BaseException`` like
``KeyboardInterrupt``: it unwinds the stack through every ``finally`` and context manager, which remove what
they made. ``jobs/rank.py`` then prints one line and exits with code 143 (128 + SIGTERM, what a shell reports
for a process SIGTERM ended; Ctrl-C keeps 130).

Unwinding may meet code the signal cut short (a Py4J call whose answer was never read): an error raised then
replaces :class:`Terminated`, so the command line asks :func:`received` and still reports the termination.

Moving results into place must not stop halfway (an earlier ranking swapped out, the new one not yet in):
:func:`deferred` marks such a section, and a SIGTERM that arrives inside it is raised when it ends. A second
SIGTERM while the first one unwinds is ignored, so the clean-up itself is not cut short (SIGKILL still ends the
process).

A SIGTERM that lands while a finalizer runs (a ``__del__``, or a weakref callback such as the one by which
Py4J frees a Java object when its Python proxy is collected) cannot be raised there: Python prints an exception
raised in a finalizer and drops it, and the job would run on to its end. The handler then sends the signal
again 50 ms later, when the finalizer is done. Finalizers it does not recognise (any weakref callback:
``WeakKeyDictionary``'s ``remove``, which matplotlib's transforms and ``copy.deepcopy`` trigger while a plot is
drawn, ...) are caught where Python drops the exception: :func:`sigterm_raises` installs a
``sys.unraisablehook`` that, for a :class:`Terminated`, puts the handler back (it had set SIGTERM to ignored
before raising) and sends the signal again the same way. Without it the dropped signal left the process
ignoring SIGTERM and running on (issue 37: a publishing loop still running 120 s after SIGTERM).
"""
from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import contextmanager

#: the exit code of a job ended by SIGTERM (128 + 15)
EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(BaseException):
    """The process received SIGTERM (raised in the main thread by :func:`sigterm_raises`'s handler)."""


_state = {"deferred": 0, "pending": False, "received": False}


def received() -> bool:
    """Whether this process received SIGTERM inside :func:`sigterm_raises` (a clean-up cut short by it may raise
    another error; the caller still reports the termination)."""
    return _state["received"]


#: seconds after which a SIGTERM that arrived inside a finalizer is sent again
REDELIVER_S = 0.05


def _in_finalizer(frame) -> bool:
    """Whether the interrupted code runs inside a finalizer (``__del__``, a ``weakref.finalize`` callback, or
    Py4J's weakref callbacks, lambdas in its modules), where a raised exception is dropped. A Py4J lambda that is
    not a finalizer only delays the signal by :data:`REDELIVER_S`."""
    while frame is not None:
        code = frame.f_code
        if (code.co_name == "__del__" or (code.co_name == "<lambda>" and "py4j" in code.co_filename)
                or (code.co_name == "__call__" and code.co_filename.endswith("weakref.py"))):
            return True
        frame = frame.f_back
    return False


def _send_again(signum: int) -> None:
    """Send ``signum`` to this process again :data:`REDELIVER_S` seconds from now (from a daemon thread)."""
    timer = threading.Timer(REDELIVER_S, os.kill, (os.getpid(), signum))
    timer.daemon = True
    timer.start()


def _handler(signum, frame):
    _state["received"] = True
    if _in_finalizer(frame):
        _send_again(signum)
        return
    if _state["deferred"]:
        _state["pending"] = True
        return
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the clean-up runs to its end
    raise Terminated(f"terminated by signal {signum}")


@contextmanager
def sigterm_raises():
    """Within the block, SIGTERM raises :class:`Terminated` in the main thread (elsewhere: no change); the
    previous handler is restored after it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _state["received"] = False
    previous = signal.signal(signal.SIGTERM, _handler)
    previous_hook = sys.unraisablehook

    def unraisable(info):
        """A :class:`Terminated` that Python dropped (raised inside a finalizer): raise it again soon."""
        if isinstance(info.exc_value, Terminated) and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, _handler)
            _send_again(signal.SIGTERM)
            return
        previous_hook(info)

    sys.unraisablehook = unraisable
    try:
        yield
    finally:
        sys.unraisablehook = previous_hook
        signal.signal(signal.SIGTERM, previous)
        _state["pending"] = False


@contextmanager
def deferred():
    """A section that a SIGTERM must not cut: the signal is raised (as :class:`Terminated`) when it ends."""
    _state["deferred"] += 1
    try:
        yield
    finally:
        _state["deferred"] -= 1
        if not _state["deferred"] and _state["pending"] and threading.current_thread() is threading.main_thread():
            _state["pending"] = False
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            raise Terminated(f"terminated by signal {int(signal.SIGTERM)}")
