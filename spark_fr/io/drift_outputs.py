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

Both paths may be local paths or URIs (:mod:`spark_fr.io.locations`): every file operation goes through the
backend that serves the location (:mod:`spark_fr.io.filesystems`), and the staging, the renames and the
replacement of an earlier output are the rankings' own (:func:`spark_fr.io.ownership.stage_directory`,
:func:`~spark_fr.io.ownership.commit_directory`); only the proof of ownership is drift's.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os

from ..errors import InputError
from ..runtime.signals import deferred
from ..version import __version__
from .ownership import (at, check_creatable, commit_directory, is_our_png, make_parents, read_json, remove_created,
                        sibling, stage_directory)

log = logging.getLogger(__name__)

#: the record of a drift output, which carries spark_fr's mark and the hashes of the other files
RECORD = "drift.json"
#: the tables of a drift output
TABLES = ("summary.csv", "fji.csv", "changes.csv", "ranks.csv")
#: every file a drift output holds
FILES = frozenset(TABLES + (RECORD,))
KIND = "drift"
RETRIES = 12


# ----- ownership ------------------------------------------------------------------------------------------------
def our_record(path, files=None) -> dict | None:
    """The record of a ``drift.json`` spark_fr wrote (its mark: ``kind`` drift, ``versions.spark_fr`` and the
    hashes of its files), or None.

    Parameters
    ----------
    path : str or Location
        A ``drift.json``.
    files : backend, optional

    Returns
    -------
    dict or None
    """
    loc, files = at(path, files)
    record = read_json(loc, files) if files.isfile(loc) else None
    if not isinstance(record, dict) or record.get("kind") != KIND:
        return None
    if "spark_fr" not in (record.get("versions") or {}) or not isinstance(record.get("files"), dict):
        return None
    return record


def foreign_entries(directory, files=None) -> list:
    """The entries of ``directory`` a drift output of ours did not write (module sketch), described for a message
    (``summary.csv (a folder)``); empty for an empty directory or a drift output of ours."""
    loc, files = at(directory, files)
    names = files.listdir(loc)
    record = our_record(loc.child(RECORD), files)
    if record is None:
        return [_described(loc, n, files) for n in names]
    return [_described(loc, n, files) for n in names if n != RECORD and not _proven(loc, n, record, files)]


def _proven(directory, name: str, record: dict, files) -> bool:
    """Whether ``name`` is a regular file whose content has the hash ``record`` gives it."""
    loc = directory.child(name)
    if name not in TABLES or not files.isfile(loc):
        return False
    try:
        content = files.read_head(loc)
    except Exception:  # unreadable (Hadoop's checksum of a file changed behind its back): not proven ours
        return False
    return record["files"].get(name) == _sha256(content)


def _described(directory, name: str, files) -> str:
    loc = directory.child(name)
    if files.isfile(loc):
        return name
    return f"{name} (a {'folder' if files.isdir(loc) else 'link'})"


def _refusal(directory: str, foreign: list) -> str:
    foreign = sorted(foreign, key=lambda n: n != RECORD)  # an unmarked drift.json first: it is why
    shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
    hint = ""
    if foreign[0] == RECORD:
        hint = ": its drift.json lacks spark_fr's mark (if an earlier spark_fr wrote the folder, delete it yourself)"
    return (f"--output {directory} holds files spark_fr's drift did not write ({shown}){hint}; spark_fr replaces "
            f"only a drift output it wrote: choose a new or empty directory")


# ----- before the work --------------------------------------------------------------------------------------------
def check(output, plot) -> None:
    """Refuse, before any work, outputs that cannot be written or would replace what spark_fr did not write.

    Parameters
    ----------
    output : str or None
        The folder of the tables and ``drift.json`` (a local path or a URI).
    plot : str or None
        The heat map's PNG file.

    Raises
    ------
    spark_fr.errors.InputError
        One line naming the option, the path and what is in the way.
    """
    out = at(output, None, "--output") if output is not None else None
    png = at(plot, None, "--plot") if plot is not None else None
    if out is not None and png is not None:
        _check_apart(out[0], png[0])
    if out is not None:
        check_creatable(out[0], "--output", out[1])
        _check_output(*out)
    if png is not None:
        check_creatable(png[0], "--plot", png[1])
        _check_plot(*png)


def _check_output(loc, files) -> None:
    if not files.exists(loc):
        return
    if not files.isdir(loc):
        raise InputError(f"--output {loc.path} exists and is not a directory; choose a new path")
    foreign = foreign_entries(loc, files)
    if foreign:
        raise InputError(_refusal(loc.path, foreign))


def _check_plot(loc, files) -> None:
    if files.isdir(loc):
        raise InputError(f"--plot {loc.path} is a directory; give a .png file name")
    if files.exists(loc) and not is_our_png(loc, files):
        raise InputError(f"--plot {loc.path} exists and was not written by spark_fr; choose another file name")


def _check_apart(out, png) -> None:
    """Decision (as the rankings'): the plot may not be the output, nor inside it, nor hold it."""
    sep = os.sep if out.local else "/"
    o, p = (os.path.realpath(out.path), os.path.realpath(png.path)) if out.local else (out.path, png.path)
    if o == p:
        raise InputError(f"--plot and --output are the same path: {out.path}")
    if out.local != png.local:
        return
    if p.startswith(o + sep):
        raise InputError(f"--plot {png.path} is inside --output {out.path}, which spark_fr writes and replaces as a "
                         f"whole; put the plot beside it, e.g. --plot {out.path.rstrip(sep)}.png")
    if o.startswith(p + sep):
        raise InputError(f"--output {out.path} is inside --plot {png.path}; give the plot a file name of its own")


# ----- after the work ---------------------------------------------------------------------------------------------
def publish(output, plot, tables: dict | None = None, record: dict | None = None, png: bytes | None = None) -> None:
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
    out = at(output, None, "--output") if output is not None else (None, None)
    pic = at(plot, None, "--plot") if plot is not None else (None, None)
    made_out, made_plot, staged, plot_tmp, done = [], [], None, None, False
    try:
        if pic[0] is not None:
            make_parents(pic[0], pic[1], made_plot)
            plot_tmp = sibling(pic[0], "tmp")  # named first: the clean-up knows it from the start
            plot_tmp = plot_tmp.sibling(plot_tmp.name + ".png")
            _put_bytes(pic[1], plot_tmp, png)
        if out[0] is not None:
            make_parents(out[0], out[1], made_out)
            staged = sibling(out[0], "tmp")
            stage_directory(staged, out[1], lambda local: _write_tables(local, tables or {}, record or {}))
        with deferred():  # a SIGTERM waits until both are in place (spark_fr.runtime.signals)
            check(output, plot)  # again: another process may have written there meanwhile
            if out[0] is not None:
                commit_directory(staged, out[0], out[1], foreign=foreign_entries, ours=FILES, retries=RETRIES)
                staged = None
            if pic[0] is not None:
                pic[1].replace(plot_tmp, pic[0])
                plot_tmp = None
            done = True
    finally:
        if plot_tmp is not None and pic[1].exists(plot_tmp):
            pic[1].remove(plot_tmp)
        if staged is not None:
            out[1].rmtree(staged)
        if not done:
            remove_created(made_out, out[1])
            remove_created(made_plot, pic[1])


def _write_tables(folder: str, tables: dict, record: dict) -> None:
    """The tables, then ``drift.json`` with spark_fr's mark and the tables' hashes, in the local ``folder``."""
    hashes = {}
    for name in TABLES:
        if name in tables:
            with open(os.path.join(folder, name), "xb") as fh:
                fh.write(tables[name])
            hashes[name] = _sha256(tables[name])
    versions = {**(record.get("versions") or {}), "spark_fr": __version__}
    marked = {**record, "kind": KIND, "versions": versions, "files": hashes}
    with open(os.path.join(folder, RECORD), "xb") as fh:
        fh.write(json.dumps(marked, indent=2, default=str).encode("utf-8"))


def _put_bytes(files, loc, data: bytes) -> None:
    """A new file of ``data`` at ``loc`` (through a local temporary file)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="spark_fr-drift-") as local:
        path = os.path.join(local, "file")
        with open(path, "wb") as fh:
            fh.write(data)
        files.put(path, loc)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
