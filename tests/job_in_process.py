"""Run ``jobs/rank.py`` in the test process as a separate process would run it, under the suite's Spark session.

A real ``python jobs/rank.py`` process costs an interpreter, its imports and, once it needs Spark, a JVM start
(40-90 s under load); many short failing runs (tests/end_to_end/test_hostile_inputs.py) spend nearly all their time there.
:func:`run_as_process` runs the job's script (``runpy``, as ``__main__``) in this process instead, keeping what
a process would show:

* file descriptors 1 and 2 go to files for the run, and ``sys.stdout`` / ``sys.stderr`` write to them: what
  the job prints, what its logging writes and what native code writes to the descriptors is all captured;
* Python's warnings are printed to that standard error under the interpreter's default filters (pytest
  records them otherwise), every location afresh;
* the working directory, the environment, ``sys.argv``, ``sys.path``, the root logger and the SIGTERM handler
  are the run's own and put back afterwards; the exit code is ``SystemExit``'s.

What differs from a process: the job finds the suite's session active and uses it (no JVM starts, the session's
configuration is the suite's), modules are imported already (an import-time warning would not show), and the
JVM's own output is the suite's. ``jobs/rank.py`` ends a process whose lazy JVM start it abandoned with
``os._exit``; with an active session it never starts one, and an ``os._exit`` here raises instead of ending the
test process. So a suite running a job this way keeps a real process for each of the script's ways out and
checks that it gives the same result (tests/end_to_end/test_hostile_inputs.py).
"""
from __future__ import annotations

import contextlib
import logging
import os
import runpy
import signal
import sys
import tempfile
import warnings
from pathlib import Path

#: the interpreter's default warning filters (``python -W`` unset, not a development build), first match wins
DEFAULT_FILTERS = [("default", DeprecationWarning, "__main__"), ("ignore", DeprecationWarning, None),
                   ("ignore", PendingDeprecationWarning, None), ("ignore", ImportWarning, None),
                   ("ignore", ResourceWarning, None)]


class ExitedProcess(AssertionError):
    """The job called ``os._exit``: it would have ended the test process."""


@contextlib.contextmanager
def _descriptors_to_files():
    """fd 1 and 2, and ``sys.stdout`` / ``sys.stderr``, write to files in the block; yields a dict that holds
    their text ('stdout', 'stderr') after it."""
    sys.stdout.flush()
    sys.stderr.flush()
    files = {name: tempfile.TemporaryFile() for name in ("stdout", "stderr")}
    saved = {fd: os.dup(fd) for fd in (1, 2)}
    streams = sys.stdout, sys.stderr
    out: dict = {}
    try:
        os.dup2(files["stdout"].fileno(), 1)
        os.dup2(files["stderr"].fileno(), 2)
        sys.stdout = open(1, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False)
        sys.stderr = open(2, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False)
        yield out
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        sys.stdout, sys.stderr = streams
        for fd, copy in saved.items():
            os.dup2(copy, fd)
            os.close(copy)
        for name, f in files.items():
            f.seek(0)
            out[name] = f.read().decode("utf-8", "replace")
            f.close()


@contextlib.contextmanager
def _printed_warnings():
    """Warnings printed to ``sys.stderr`` as the interpreter prints them, under its default filters."""
    def show(message, category, filename, lineno, file=None, line=None):
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))

    with warnings.catch_warnings():  # resets the once-per-location registries too (the filters change)
        warnings.resetwarnings()
        for action, category, module in reversed(DEFAULT_FILTERS):
            warnings.filterwarnings(action, category=category, module=module or "")
        warnings.showwarning = show
        yield


@contextlib.contextmanager
def _process_state(cwd, env):
    root = logging.getLogger()
    saved = (os.getcwd(), dict(os.environ), sys.argv, list(sys.path), root.handlers[:], root.level,
             signal.getsignal(signal.SIGTERM), os._exit)

    def no_exit(code):
        raise ExitedProcess(f"the job called os._exit({code}): a lazy JVM start was abandoned, which cannot "
                            f"happen under an active session")

    try:
        os.chdir(cwd)
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        os._exit = no_exit
        yield
    finally:
        os.chdir(saved[0])
        os.environ.clear()
        os.environ.update(saved[1])
        sys.argv, sys.path[:] = saved[2], saved[3]
        for handler in root.handlers[:]:
            if handler not in saved[4]:
                root.removeHandler(handler)
        for handler in saved[4]:
            if handler not in root.handlers:
                root.addHandler(handler)
        root.setLevel(saved[5])
        signal.signal(signal.SIGTERM, saved[6])
        os._exit = saved[7]


def run_as_process(job: Path, args, cwd: Path, env: dict | None = None) -> dict:
    """Run ``job`` with ``args`` in this process as ``python job args`` would run in ``cwd`` with ``env``.

    Returns
    -------
    dict with 'code' (the exit code), 'stdout' and 'stderr' (text)
    """
    from pyspark.sql import SparkSession

    assert SparkSession.getActiveSession() is not None, "run_as_process needs the suite's session active"
    code = 0
    with _process_state(cwd, env):
        sys.argv = [str(job), *map(str, args)]
        with _descriptors_to_files() as captured, _printed_warnings():
            try:
                runpy.run_path(str(job), run_name="__main__")
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                if not isinstance(exc.code, (int, type(None))):
                    print(exc.code, file=sys.stderr)
    return {"code": code, **captured}
