"""Progress of long work: one reporter for every long loop, logged steadily through the ``spark_fr`` logger.

Sketch
------
A :class:`Progress` is made once per long loop with the loop's **total units** (trees, Relief instances,
boosting rounds, cross-validation folds), which never changes while it runs::

    with Progress(total, "trees") as p:          # a thread logs a line every `every` seconds
        ... p.advance(n) ...                      # units finished here (the driver's threads, a Spark job's end)
        with p.tracking(poll):                    # units finished so far inside a running Spark job
            run the job                           #   (poll() reads an accumulator or the session's task counts)
        p.advance(units of the job)
    -> "trees 40 / 100 (40 %), 12 s elapsed, ETA 18 s"

* **Steady.** A line every ``every`` seconds (``SPARK_FR_PROGRESS_SECONDS``, 5 by default) whether or not a unit
  finished since the last one, so a Spark task that grows trees for a minute never leaves the log silent; and a
  last line when the loop ends.
* **One total.** Units done in the driver and in Spark count towards the same total; ``done`` never goes down
  (a poll that lags behind is ignored) and never exceeds the total.
* **ETA** = elapsed x (total - done) / done, from the units done so far. Before the first unit the line says
  ``ETA after the first trees`` (when it will know), never a bare "unknown": Spark tasks that each grow a group
  of trees finish their first trees together, a minute or more after the start.
* **Units** (``unit``): a pass whose total is counted in something other than its label reads
  ``statistics: 1,200 / 5,000 columns (24 %), 40 s elapsed, ETA 2 min 10 s``.
* **Structured.** Each line is an INFO record of the ``spark_fr.progress`` logger whose ``progress`` attribute
  holds the numbers (``label``, ``done``, ``total``, ``percent``, ``elapsed_s``, ``eta_s``, ``final``): a
  notebook handler can draw a bar from them instead of printing the text.

No Spark here: the pollers that read Spark's counters come from :mod:`spark_fr.runtime.engine`.
"""
from __future__ import annotations

import logging
import os
import threading
import time

log = logging.getLogger("spark_fr.progress")

#: seconds between two progress lines (``SPARK_FR_PROGRESS_SECONDS`` overrides it)
EVERY_SECONDS = 5.0


def report_every() -> float:
    """:data:`EVERY_SECONDS`, or ``SPARK_FR_PROGRESS_SECONDS`` when set to a positive number."""
    try:
        value = float(os.environ.get("SPARK_FR_PROGRESS_SECONDS", EVERY_SECONDS))
    except ValueError:
        return EVERY_SECONDS
    return value if value > 0 else EVERY_SECONDS


def _duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``1 h 02 min``."""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


class Progress:
    """Units done out of a fixed total, logged every few seconds with the elapsed time and an ETA.

    Parameters
    ----------
    total : int
        Units of the whole loop (constant).
    label : str
        What the units are ('trees', 'Relief instances', 'boosting rounds', 'cross-validation folds').
    every : float, optional
        Seconds between two lines (default :func:`report_every`).
    clock : callable
        Monotonic clock in seconds (tests pass a fake one).
    logger : logging.Logger
    unit : str, optional
        What the total counts when the label does not say it ('columns'): ``label: done / total unit``.
    brief : bool
        Log no last line for a loop that ended before its first periodic line (a pass that most runs finish
        in a moment, such as the statistics pass: a long one reports, a short one stays out of the log).
    """

    def __init__(self, total: int, label: str, every: float | None = None, clock=time.monotonic, logger=None,
                 unit: str | None = None, brief: bool = False):
        self.total = max(int(total), 0)
        self.label = label
        self.unit = unit
        self.brief = brief
        self._lines = 0         # lines logged
        self.every = report_every() if every is None else float(every)
        self.clock = clock
        self.logger = logger or log
        self._lock = threading.Lock()
        self._base = 0          # units finished and counted for good
        self._polls = []        # callables giving the units a running job has finished so far
        self._shown = 0         # the largest `done` reported (done never goes down)
        self._start = None
        self._stop = threading.Event()
        self._thread = None

    # ----- counting ----------------------------------------------------------------------------------------
    def advance(self, n: int = 1) -> None:
        """``n`` more units finished (thread-safe)."""
        with self._lock:
            self._base += int(n)

    @property
    def done(self) -> int:
        """Units finished so far (counted ones plus what the running jobs report), within [0, total]."""
        with self._lock:
            polls = list(self._polls)
            base = self._base
        extra = 0
        for poll in polls:
            try:
                extra += max(0, int(poll()))
            except Exception:  # a poller must never break the run it reports on
                pass
        value = min(self.total, base + extra)
        with self._lock:
            self._shown = max(self._shown, value)
            return self._shown

    def tracking(self, poll):
        """Context manager: while it is open, ``poll()`` (units a running job has finished) counts towards
        :attr:`done`; the caller :meth:`advance`\\ s by the job's units once the job has ended."""
        return _Tracking(self, poll)

    # ----- reporting ---------------------------------------------------------------------------------------
    def state(self, final: bool = False) -> dict:
        """The numbers of a progress line."""
        now = self.clock()
        if self._start is None:
            self._start = now
        done, total = self.done, self.total
        elapsed = now - self._start
        eta = elapsed * (total - done) / done if done > 0 else None
        percent = 100.0 * done / total if total else 100.0
        return {"label": self.label, "done": done, "total": total, "percent": percent, "elapsed_s": elapsed,
                "eta_s": 0.0 if final else eta, "final": final, "unit": self.unit}

    @staticmethod
    def format(state: dict) -> str:
        """``trees 40 / 100 (40 %), 12 s elapsed, ETA 18 s``; with a unit,
        ``statistics: 1,200 / 5,000 columns (24 %), ...``."""
        unit = state.get("unit")
        counts = (f"{state['label']}: {state['done']:,} / {state['total']:,} {unit}" if unit
                  else f"{state['label']} {state['done']} / {state['total']}")
        text = f"{counts} ({state['percent']:.0f} %), {_duration(state['elapsed_s'])} elapsed"
        if state["final"]:
            return text + ", done"
        if state["eta_s"] is None:
            return text + f", ETA after the first {unit or state['label']}"
        return text + f", ETA {_duration(state['eta_s'])}"

    def report(self, final: bool = False) -> dict:
        """Log one line now; returns its numbers."""
        state = self.state(final)
        self.logger.info("%s", self.format(state), extra={"progress": state})
        self._lines += 1
        return state

    def _run(self):
        while not self._stop.wait(self.every):
            self.report()

    def start(self) -> "Progress":
        self._start = self.clock()
        if self.total > 0 and self._thread is None:
            self._thread = threading.Thread(target=self._run, name="spark_fr-progress", daemon=True)
            self._thread.start()
        return self

    def stop(self, completed: bool = True) -> None:
        """Stop the reporting thread; with ``completed``, log the last line."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None
        if completed and self.total > 0 and (self._lines or not self.brief):
            self.report(final=self.done >= self.total)

    def __enter__(self) -> "Progress":
        return self.start()

    def __exit__(self, exc_type, exc, tb):
        self.stop(completed=exc_type is None)
        return False


class _Tracking:
    def __init__(self, progress: Progress, poll):
        self.progress, self.poll = progress, poll

    def __enter__(self):
        with self.progress._lock:
            self.progress._polls.append(self.poll)
        return self

    def __exit__(self, *exc):
        with self.progress._lock:
            self.progress._polls.remove(self.poll)
        return False


class NoProgress:
    """A :class:`Progress` that reports nothing (work inside Spark tasks, short loops)."""

    total = 0
    done = 0

    def advance(self, n: int = 1) -> None:
        pass

    def tracking(self, poll):
        return _Null()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
