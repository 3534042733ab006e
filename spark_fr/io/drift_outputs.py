"""Publishing drift's outputs (``jobs/drift.py --output DIR --plot FILE.png``) under the rankings' ownership rule.

Sketch
------
:func:`check` runs before anything is read, :func:`publish` after the report exists (as
:class:`spark_fr.io.writers.Publication` does for a ranking):

* **check**: both paths creatable (:func:`spark_fr.io.writers.check_creatable`), the plot neither the output nor
  inside it (the output is written and replaced as a whole), and what exists there ours or nothing:

  - ``--output DIR``: absent, an empty directory, or a drift output of ours: its ``drift.json`` carries
    spark_fr's mark (``"kind": "drift"`` and ``"versions": {"spark_fr": ...}``, as ``run.json`` carries the
    version) and the SHA-256 of every other file written with it, and every other entry of ``DIR`` is a regular
    file whose content has its recorded hash. Anything else (a user's ``summary.csv`` or ``drift.json``, a
    folder named ``summary.csv``, a table we wrote and the user edited) is refused in one line naming it.
  - ``--plot FILE.png``: absent, or a PNG carrying spark_fr's mark (:func:`spark_fr.io.writers.is_our_png`).

* **publish**: the tables and ``drift.json`` (written last, with the hashes) to a hidden sibling folder, the
  plot to a hidden sibling file; then, both checked again, moved into place by renames with SIGTERM deferred
  (:func:`spark_fr.runtime.signals.deferred`): ``DIR`` absent -> one rename; an empty ``DIR`` -> its files moved
  in (the folder kept); an earlier drift output of ours -> renamed aside, the new one renamed in, the old one's
  files (those still proven ours) deleted. A failure leaves neither output, no temporary, and no folder made for
  the outputs. Drift has no ``--mode``: Decision: an earlier drift output of ours is replaced (a scheduled job
  writes the same ``DIR`` every day), as a CSV ranking is by default.

Every filesystem operation of this module is one of the small functions of the section "filesystem" at its end
(local paths, ``os``), or :func:`~spark_fr.io.writers.check_creatable` and :func:`~spark_fr.io.writers.is_our_png`,
so that they can be routed through a filesystem object.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import time
import uuid

from ..errors import InputError
from ..runtime.signals import deferred
from ..version import __version__
from .writers import RETRIES, check_creatable, is_our_png

log = logging.getLogger(__name__)

#: the record of a drift output, which carries spark_fr's mark and the hashes of the other files
RECORD = "drift.json"
#: the tables of a drift output
TABLES = ("summary.csv", "fji.csv", "changes.csv", "ranks.csv")
#: every file a drift output holds
FILES = frozenset(TABLES + (RECORD,))
KIND = "drift"


# ----- ownership ------------------------------------------------------------------------------------------------
def our_record(path: str) -> dict | None:
    """The record of a ``drift.json`` spark_fr wrote (its mark: ``kind`` drift, ``versions.spark_fr`` and the
    hashes of its files), or None.

    Parameters
    ----------
    path : str
        A ``drift.json``.

    Returns
    -------
    dict or None
    """
    try:
        record = json.loads(_read(path))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("kind") != KIND:
        return None
    if "spark_fr" not in (record.get("versions") or {}) or not isinstance(record.get("files"), dict):
        return None
    return record


def foreign_entries(directory: str) -> list:
    """The entries of ``directory`` a drift output of ours did not write (module sketch), described for a message
    (``summary.csv (a folder)``); empty for an empty directory or a drift output of ours."""
    names = _list(directory)
    record = our_record(os.path.join(directory, RECORD)) if _kind(os.path.join(directory, RECORD)) == "file" else None
    if record is None:
        return [_described(directory, n) for n in names]
    return [_described(directory, n) for n in names if n != RECORD and not _proven(directory, n, record)]


def _proven(directory: str, name: str, record: dict) -> bool:
    """Whether ``name`` is a regular file whose content has the hash ``record`` gives it."""
    path = os.path.join(directory, name)
    return name in TABLES and _kind(path) == "file" and record["files"].get(name) == _sha256(_read(path))


def _described(directory: str, name: str) -> str:
    kind = _kind(os.path.join(directory, name))
    return name if kind == "file" else f"{name} (a {'folder' if kind == 'dir' else 'link'})"


def _refusal(directory: str, foreign: list) -> str:
    foreign = sorted(foreign, key=lambda n: n != RECORD)  # an unmarked drift.json first: it is why
    shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
    hint = ""
    if foreign[0] == RECORD:
        hint = ": its drift.json lacks spark_fr's mark (if an earlier spark_fr wrote the folder, delete it yourself)"
    return (f"--output {directory} holds files spark_fr's drift did not write ({shown}){hint}; spark_fr replaces "
            f"only a drift output it wrote: choose a new or empty directory")


# ----- before the work --------------------------------------------------------------------------------------------
def check(output: str | None, plot: str | None) -> None:
    """Refuse, before any work, outputs that cannot be written or would replace what spark_fr did not write.

    Parameters
    ----------
    output : str or None
        The folder of the tables and ``drift.json``.
    plot : str or None
        The heat map's PNG file.

    Raises
    ------
    spark_fr.errors.InputError
        One line naming the option, the path and what is in the way.
    """
    if output is not None and plot is not None:
        _check_apart(output, plot)
    if output is not None:
        check_creatable(output, "--output")
        _check_output(output)
    if plot is not None:
        check_creatable(plot, "--plot")
        _check_plot(plot)


def _check_output(output: str) -> None:
    kind = _kind(output)
    if kind == "absent":
        return
    if kind != "dir":
        raise InputError(f"--output {output} exists and is not a directory; choose a new path")
    foreign = foreign_entries(output)
    if foreign:
        raise InputError(_refusal(output, foreign))


def _check_plot(plot: str) -> None:
    kind = _kind(plot)
    if kind == "dir":
        raise InputError(f"--plot {plot} is a directory; give a .png file name")
    if kind != "absent" and (kind != "file" or not is_our_png(plot)):
        raise InputError(f"--plot {plot} exists and was not written by spark_fr; choose another file name")


def _check_apart(output: str, plot: str) -> None:
    """Decision (as the rankings'): the plot may not be the output, nor inside it, nor hold it."""
    out, png = _real(output), _real(plot)
    if out == png:
        raise InputError(f"--plot and --output are the same path: {output}")
    if png.startswith(out + os.sep):
        raise InputError(f"--plot {plot} is inside --output {output}, which spark_fr writes and replaces as a whole; "
                         f"put the plot beside it, e.g. --plot {output.rstrip(os.sep)}.png")
    if out.startswith(png + os.sep):
        raise InputError(f"--output {output} is inside --plot {plot}; give the plot a file name of its own")


# ----- after the work ---------------------------------------------------------------------------------------------
def publish(output: str | None, plot: str | None, tables: dict | None = None, record: dict | None = None,
            png: bytes | None = None) -> None:
    """Write the drift output and the plot together (module sketch): all or nothing.

    Parameters
    ----------
    output : str or None
        The folder; ``tables`` and ``record`` are written there.
    plot : str or None
        The PNG file; ``png`` is written there.
    tables : dict, optional
        ``{name: bytes}``, the names of :data:`TABLES` (with ``output``).
    record : dict, optional
        What ``drift.json`` says (with ``output``); spark_fr's mark and the tables' hashes are added.
    png : bytes, optional
        The heat map (it must carry spark_fr's PNG mark).

    Raises
    ------
    spark_fr.errors.InputError
        An output that is not (or no longer) ours: nothing is written.
    """
    check(output, plot)
    created, staged, plot_tmp, done = [], None, None, False
    try:
        if plot is not None:
            _make_parents(plot, created)
            plot_tmp = _sibling(plot, "tmp") + ".png"  # named first: the clean-up knows it from the start
            _write(plot_tmp, png)
        if output is not None:
            _make_parents(output, created)
            staged = _sibling(output, "tmp")
            _stage(staged, tables or {}, record or {})
        with deferred():  # a SIGTERM waits until both are in place (spark_fr.runtime.signals)
            check(output, plot)  # again: another process may have written there meanwhile
            if output is not None:
                _commit(staged, output)
                staged = None
            if plot is not None:
                _replace(plot_tmp, plot)
                plot_tmp = None
            done = True
    finally:
        _clean_up(staged, plot_tmp, [] if done else created)


def _stage(folder: str, tables: dict, record: dict) -> None:
    """The tables, then ``drift.json`` with spark_fr's mark and the tables' hashes, in a new ``folder``."""
    _make_dir(folder)
    hashes = {}
    for name in TABLES:
        if name in tables:
            _write(os.path.join(folder, name), tables[name])
            hashes[name] = _sha256(tables[name])
    versions = {**(record.get("versions") or {}), "spark_fr": __version__}
    marked = {**record, "kind": KIND, "versions": versions, "files": hashes}
    _write(os.path.join(folder, RECORD), json.dumps(marked, indent=2, default=str).encode("utf-8"))


def _commit(staged: str, output: str) -> None:
    """Move the staged folder into place (module sketch); retried when another run swaps at the same moment."""
    for attempt in range(RETRIES):
        kind = _kind(output)
        if kind == "dir" and not _list(output):  # an empty folder (perhaps one the user made): fill it, keep it
            for name in _list(staged):
                _replace(os.path.join(staged, name), os.path.join(output, name))
            _remove_empty_dir(staged)
            return
        if kind == "absent":
            if _rename(staged, output):
                return
        else:
            _check_output(output)
            old = _sibling(output, "old")
            if _rename(output, old):
                if _rename(staged, output):
                    _remove_ours(old)
                    return
                if not _rename(old, output):  # another run's output is in place: the earlier one is superseded
                    _remove_ours(old)
        time.sleep(0.05 * (attempt + 1))
    raise InputError(f"--output {output}: other runs kept replacing it; nothing was written")


def _remove_ours(folder: str) -> None:
    """Delete an earlier drift output of ours: the files still proven ours, then the folder (kept, with a log
    line, if anything else is in it)."""
    record = our_record(os.path.join(folder, RECORD))
    if record is not None:
        for name in _list(folder):
            if name != RECORD and _proven(folder, name, record):
                _remove_file(os.path.join(folder, name))
        _remove_file(os.path.join(folder, RECORD))
    if not _remove_empty_dir(folder):
        log.warning("%s: kept, it holds files spark_fr's drift did not write", folder)


def _clean_up(staged: str | None, plot_tmp: str | None, created: list) -> None:
    """Remove the temporaries, and the folders made for the outputs (when still empty)."""
    if plot_tmp is not None and _kind(plot_tmp) == "file":
        _remove_file(plot_tmp)
    if staged is not None and _kind(staged) == "dir":
        for name in _list(staged):
            _remove_file(os.path.join(staged, name))
        _remove_empty_dir(staged)
    for folder in reversed(created):
        _remove_empty_dir(folder)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _sibling(path: str, what: str) -> str:
    """A hidden name beside ``path`` for a temporary or an earlier version of it."""
    return os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{what}-{uuid.uuid4().hex[:8]}")


# ----- filesystem (local paths; the only functions here that touch it) --------------------------------------------
def _kind(path: str) -> str:
    """'absent', 'file', 'dir' or 'other' (a link, a device: never ours); links are not followed."""
    if os.path.islink(path):
        return "other"
    if os.path.isfile(path):
        return "file"
    if os.path.isdir(path):
        return "dir"
    return "other" if os.path.lexists(path) else "absent"


def _real(path: str) -> str:
    """The path with links resolved."""
    return os.path.realpath(path)


def _list(directory: str) -> list:
    return sorted(os.listdir(directory))


def _read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def _write(path: str, data: bytes) -> None:
    """A new file (never an existing one)."""
    with open(path, "xb") as fh:
        fh.write(data)


def _make_dir(path: str) -> None:
    os.mkdir(path)


def _make_parents(path: str, created: list) -> None:
    """Create the missing folders above ``path``, outermost first, appending each to ``created``."""
    missing, parent = [], os.path.dirname(path)
    while parent and not os.path.isdir(parent) and os.path.dirname(parent) != parent:
        missing.append(parent)
        parent = os.path.dirname(parent)
    for folder in reversed(missing):
        try:
            os.mkdir(folder)
        except FileExistsError:  # another run made it meanwhile: not ours to remove
            continue
        created.append(folder)


def _rename(source: str, target: str) -> bool:
    """Rename ``source`` to ``target``, which must not exist (a directory rename onto an empty directory is
    refused too); False when it did not happen."""
    if os.path.lexists(target):
        return False
    try:
        os.rename(source, target)
    except OSError:
        return False
    return True


def _replace(source: str, target: str) -> None:
    os.replace(source, target)


def _remove_file(path: str) -> None:
    os.remove(path)


def _remove_empty_dir(path: str) -> bool:
    try:
        os.rmdir(path)
    except OSError:
        return False
    return True
