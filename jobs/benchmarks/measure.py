"""Running one command and measuring it: wall time, peak RSS of its process tree, the load average.

Sketch
------
:func:`run_measured` starts the command with its output in files of its run folder and polls it every
``SAMPLE_EVERY_S`` seconds: each poll reads the parent pid of every process in ``/proc`` to find the
command's descendants (Spark's JVM and its Python workers, CLUS' JVM) and sums their resident set sizes
(``statm``); the peak of that sum is the run's memory. Pages shared between processes (forked Python
workers) are counted once per process, so the sum over-states a little; a process living less than one
poll may be missed. The same polls read each process's CPU time (user + system, ``stat``); the run's CPU time
is the sum of the last value seen of every process of the tree (the work done, which a busy machine
stretches less than the wall time; the CPU of a process's last poll interval, at most ``SAMPLE_EVERY_S``, and
processes shorter than a poll are missed). The wall time runs from the start of the process to its exit, so
interpreter or JVM start-up, reading the input and writing the result are included. The 1-minute load
average before and after each run, and :func:`environment`, tell how busy the (shared) machine was. The command
runs in its own process group: a run past its time limit, or past its memory limit (``max_rss_mb``, checked at
every poll), is killed with its whole tree (a Spark peer's JVM included), and ``killed`` says why;
:func:`classify` turns that, or an out-of-memory error in the run's standard error, into the status the suites
print ("did not finish: out of memory (over 18.0 GB)"): a peer that did not finish is a line in a table, not a
crash of the benchmark.
"""
from __future__ import annotations

import os
import platform
import shutil
import signal
import subprocess
import time
from pathlib import Path

SAMPLE_EVERY_S = 0.2
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
#: what a run that died of an out-of-memory error leaves in its standard error (Python, the JVM, C++, NumPy)
OOM_MARKERS = ("MemoryError", "OutOfMemoryError", "Cannot allocate memory", "std::bad_alloc",
               "Unable to allocate")


def _children_map() -> dict:
    """``{parent pid: [child pids]}`` for every process visible in /proc."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])  # the command name may contain spaces and ')'
        children.setdefault(ppid, []).append(int(entry))
    return children


def _tree(root: int) -> list:
    """``root`` and every descendant (pids)."""
    children = _children_map()
    out, stack = [], [root]
    while stack:
        pid = stack.pop()
        out.append(pid)
        stack.extend(children.get(pid, []))
    return out


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of one process so far (None if it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * PAGE_KB
    except (OSError, IndexError, ValueError):
        return 0


def tree_rss_kb(root: int) -> int:
    """Sum of the resident set sizes of ``root`` and all its descendants.

    Parameters
    ----------
    root : int
        A process id.

    Returns
    -------
    int
        kB; processes that vanish while they are read count 0.
    """
    return sum(_rss_kb(pid) for pid in _tree(root))


def run_measured(command: list, run_dir: Path, timeout: float, max_rss_mb: float | None = None) -> dict:
    """Run ``command`` in ``run_dir`` and measure it.

    Parameters
    ----------
    command : list of str
    run_dir : Path
        Created if needed; receives ``stdout.txt`` and ``stderr.txt``.
    timeout : float
        Seconds before the command is killed.
    max_rss_mb : float, optional
        Peak RSS of the process tree above which the command is killed (default: no limit).

    Returns
    -------
    dict
        ``wall_s``, ``peak_rss_mb`` (process tree), ``cpu_s`` (process tree, see the module's notes),
        ``returncode``, ``stderr_tail`` (failed runs only), ``load_avg_1_before``, ``load_avg_1_after``,
        ``killed`` (None, ``"timeout"`` or ``"memory"``).
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    load_before = round(os.getloadavg()[0], 2)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    killed = None
    with open(run_dir / "stdout.txt", "w") as out, open(run_dir / "stderr.txt", "w") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(command, cwd=run_dir, stdout=out, stderr=err, env=env, start_new_session=True)
        peak, cpu = 0, {}
        while proc.poll() is None:
            pids = _tree(proc.pid)
            peak = max(peak, sum(_rss_kb(pid) for pid in pids))
            for pid in pids:
                used = cpu_seconds(pid)
                if used is not None:
                    cpu[pid] = used
            if time.perf_counter() - t0 > timeout:
                killed = "timeout"
            elif max_rss_mb is not None and peak > max_rss_mb * 1024:
                killed = "memory"
            if killed:
                _kill_tree(proc)
                break
            time.sleep(SAMPLE_EVERY_S)
        proc.wait()
        wall = time.perf_counter() - t0
    tail = (run_dir / "stderr.txt").read_text(errors="replace")[-2000:]
    return {"wall_s": round(wall, 3), "peak_rss_mb": round(peak / 1024, 1), "cpu_s": round(sum(cpu.values()), 2),
            "returncode": proc.returncode,
            "stderr_tail": tail if proc.returncode else "", "load_avg_1_before": load_before,
            "load_avg_1_after": round(os.getloadavg()[0], 2), "killed": killed}


def _kill_tree(proc) -> None:
    """Kill the command's process group (it was started in a new session), then the command itself."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.kill()


def classify(res: dict, timeout: float, max_gb: float | None) -> str:
    """``ok``, ``did not finish: timeout (N s)``, ``did not finish: out of memory (...)`` or ``failed (exit N)``.

    Parameters
    ----------
    res : dict
        :func:`run_measured`'s facts.
    timeout : float
        The run's time limit (s).
    max_gb : float or None
        The run's memory limit (GB), None if it had none.

    Returns
    -------
    str
        A run killed by the OOM killer (exit -9 or 137) or whose standard error ends with one of
        :data:`OOM_MARKERS` is out of memory too.
    """
    if res["returncode"] == 0 and not res.get("killed"):
        return "ok"
    if res.get("killed") == "timeout":
        return f"did not finish: timeout ({timeout:.0f} s)"
    if res.get("killed") == "memory":
        return f"did not finish: out of memory (over {max_gb:.1f} GB)" if max_gb else "did not finish: out of memory"
    if res["returncode"] in (-9, 137) or any(m in res.get("stderr_tail", "") for m in OOM_MARKERS):
        return f"did not finish: out of memory (exit {res['returncode']})"
    return f"failed (exit {res['returncode']})"


def total_memory_gb() -> float:
    """The machine's physical memory in GB."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30


def environment() -> dict:
    """Machine facts that matter for reading the timings.

    Returns
    -------
    dict
        ``cpus``, ``load_avg_1_5_15``, ``python``, ``platform``, ``java`` (its path, or None).
    """
    return {"cpus": os.cpu_count(), "load_avg_1_5_15": [round(x, 2) for x in os.getloadavg()],
            "python": platform.python_version(), "platform": platform.platform(), "java": shutil.which("java")}


def machine_line(env: dict, what: str) -> str:
    """The line a suite prints before its runs: cores, load average, and what it is about to run.

    Parameters
    ----------
    env : dict
        From :func:`environment`.
    what : str

    Returns
    -------
    str
    """
    return f"machine: {env['cpus']} cpus, load average {env['load_avg_1_5_15']}; {what}"
