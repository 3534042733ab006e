"""Progress logging for long Spark jobs: "<label> done / total" every few seconds, from an accumulator."""
from __future__ import annotations

import logging
import threading
import time

log = logging.getLogger("spark_fr")


class Progress:
    """Context manager that logs ``label done / total`` every ``every`` seconds while a job runs.

    Parameters
    ----------
    accumulator : pyspark.Accumulator
        Incremented by the tasks as units of work finish (Spark reports it when a task ends).
    total : int
    every : float
    label : str
    """

    def __init__(self, accumulator, total: int, every: float = 5.0, label: str = "trees"):
        self.acc = accumulator
        self.total = total
        self.every = every
        self.label = label
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._last = -1

    def _run(self):
        start = time.perf_counter()
        while not self._stop.wait(self.every):
            done = int(self.acc.value)
            if done != self._last:
                self._last = done
                log.info("%s %d / %d done (%.0f s)", self.label, done, self.total, time.perf_counter() - start)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=1)
