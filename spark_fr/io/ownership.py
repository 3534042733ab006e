"""What exists at an output location, and whether spark_fr wrote it: the checks every writer makes first.

Sketch
------
A run replaces or deletes only what it can prove it wrote, on any file system
(:mod:`spark_fr.io.filesystems`: local, Hadoop, pyarrow):

* a ``run.json`` is ours when it holds a ``run_id`` and spark_fr among its ``versions``
  (:func:`is_our_run_json`); a directory's entries are ours when it holds such a ``run.json`` and only our
  file names beside it (:func:`foreign_entries`, with the names a writer owns);
* a PNG is ours when its text chunks carry :data:`PNG_MARK` (:func:`is_our_png`);
* a location can be written when its nearest existing ancestor is a directory (probed with a temporary file on
  a local disk; :func:`check_creatable`).

Every function takes a path (a string: a local path, or a URI served as :func:`files_for` says) or a
:class:`~spark_fr.io.locations.Location` with the backend that serves it.
"""
from __future__ import annotations

import json
import os
import uuid

from ..errors import InputError, one_line
from ..runtime.signals import deferred
from .filesystems import files_for
from .locations import Location, locate

#: the PNG text chunk that marks a plot written by spark_fr (so that a later run may replace it)
PNG_MARK = "spark_fr"
#: the files of a ranking directory
OUR_FILES = frozenset({"run.json", "ranking.csv", "ranking.parquet"})


def at(path, files=None, option: str = "path") -> tuple:
    """``(location, backend)`` of a path, a URI or a :class:`Location` (the backend chosen when not given)."""
    loc = path if isinstance(path, Location) else locate(path, option)
    return loc, files if files is not None else files_for(loc, None, option)


def read_json(path, files=None):
    """The JSON document of a file, or None when it is missing or not JSON."""
    loc, files = at(path, files)
    try:
        return json.loads(files.read_head(loc).decode("utf-8"))
    except Exception:  # missing, unreadable (a Hadoop checksum error through py4j), not JSON: not a record of ours
        return None


def is_our_run_json(path, files=None) -> bool:
    """Whether ``path`` is a ``run.json`` written by spark_fr."""
    meta = read_json(path, files)
    return isinstance(meta, dict) and "run_id" in meta and "spark_fr" in (meta.get("versions") or {})


def foreign_entries(directory, files=None, ours=OUR_FILES, marker: str = "run.json", is_ours=None) -> list:
    """Entries of a directory that a run of ours did not write (all of them if its ``marker`` is not ours).

    Parameters
    ----------
    directory : str or Location
    files : backend, optional
    ours : set of str
        The file names a run of this kind writes.
    marker : str
        The file that proves a run of ours wrote the directory.
    is_ours : callable, optional
        ``is_ours(location, files) -> bool`` for the marker (default: :func:`is_our_run_json`).
    """
    loc, files = at(directory, files)
    names = files.listdir(loc)
    if not names:
        return []
    check = is_ours or is_our_run_json
    if marker not in names or not check(loc.child(marker), files):
        return names
    return [n for n in names if n not in ours or files.isdir(loc.child(n))]


def is_our_png(path, files=None) -> bool:
    """Whether ``path`` is a PNG whose text chunks say spark_fr wrote it."""
    loc, files = at(path, files)
    try:
        head = files.read_head(loc, 4096)
    except Exception:  # missing, unreadable, a directory: not a plot of ours
        return False
    return head.startswith(b"\x89PNG") and PNG_MARK.encode() in head


def check_creatable(path, what: str, files=None) -> None:
    """The nearest existing ancestor of ``path`` must be a writable directory (a local one is probed with a
    temporary file; on other file systems the permissions are the store's, known when writing)."""
    loc, files = at(path, files, what)
    parent = loc.parent()
    while not files.exists(parent):
        up = parent.parent()
        if up == parent:
            break
        parent = up
    if not files.isdir(parent) and not (parent.local and os.path.isdir(parent.path)):
        raise InputError(f"{what} {loc.given} cannot be created: {parent.path} is not a directory")
    if not loc.local:
        return
    try:
        with deferred():  # a SIGTERM waits until the probe is gone (spark_fr.runtime.signals)
            fd, probe = _mkstemp(parent.path)
            os.close(fd)
            os.remove(probe)
    except OSError as err:
        raise InputError(f"{what} {loc.given} cannot be written: {parent.path}: {err.strerror or one_line(err)}") from None


def _mkstemp(directory: str):
    import tempfile

    return tempfile.mkstemp(prefix=".spark_fr-probe-", dir=directory)


def make_parents(loc: Location, files, created: list) -> None:
    """Create the missing folders above ``loc``, outermost first, appending each to ``created``."""
    missing = []
    parent = loc.parent()
    while not files.isdir(parent):
        missing.append(parent)
        up = parent.parent()
        if up == parent:
            break
        parent = up
    for folder in reversed(missing):
        try:
            files.mkdir(folder)
        except FileExistsError:  # another run made it meanwhile: not ours to remove
            continue
        created.append(folder)


def remove_created(created: list, files) -> None:
    """Remove the folders a failed publication made, innermost first, each only if still empty."""
    for folder in reversed(created):
        try:
            files.rmdir(folder)
        except Exception:  # not empty (another run's output), or gone
            pass


def sibling(loc: Location, what: str) -> Location:
    """A hidden name beside ``loc`` for a temporary or an earlier version of it."""
    return loc.sibling(f".{loc.name}.{what}-{uuid.uuid4().hex[:8]}")


def remove_our_directory(loc: Location, files, ours=OUR_FILES) -> None:
    """Delete a directory of ours: only our files, then the directory (left alone if anything else is in it)."""
    for name in ours:
        p = loc.child(name)
        if files.isfile(p):
            files.remove(p)
    try:
        files.rmdir(loc)
    except OSError:
        pass


def shown(names: list, limit: int = 3) -> str:
    """A few names for a message (``a, b, c, ...``)."""
    return ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")


def publish_file(path, write, what: str = "--plot", files=None) -> str:
    """Write one file at ``path`` through a temporary name beside it, then rename it into place.

    Parameters
    ----------
    path : str or Location
        A local path or a URI (:mod:`spark_fr.io.locations`); an existing file there must be a PNG of ours
        (:func:`is_our_png`; a job checks that before any work, and it is checked again here).
    write : callable
        ``write(local_file)`` writes the content to a local file (``fig.savefig``); for a remote location the file
        is then copied beside the destination and renamed.
    what : str
        The option, for messages.

    Returns
    -------
    str
        The path written.
    """
    import tempfile

    loc, files = at(path, files, what)
    if files.isdir(loc):
        raise InputError(f"{what} {loc.given} is a directory; give a .png file name")
    if files.exists(loc) and not is_our_png(loc, files):
        raise InputError(f"{what} {loc.given} exists and was not written by spark_fr; choose another file name")
    check_creatable(loc, what, files)
    made: list = []
    make_parents(loc, files, made)
    tmp = sibling(loc, "tmp")
    tmp = tmp.sibling(tmp.name + ".png")
    try:
        if loc.local:
            write(tmp.path)
        else:
            with tempfile.TemporaryDirectory(prefix="spark_fr-file-") as local:
                write(os.path.join(local, loc.name))
                files.put(os.path.join(local, loc.name), tmp)
        with deferred():
            files.replace(tmp, loc)
        tmp = None
    finally:
        if tmp is not None:
            try:
                if files.exists(tmp):
                    files.remove(tmp)
            finally:
                remove_created(made, files)
    return loc.path


def stage_directory(tmp: Location, files, write) -> None:
    """Make the new directory ``tmp`` holding what ``write(local_directory)`` writes (on the driver's disk first,
    then copied, for a remote file system); nothing is left of it if writing fails."""
    import shutil
    import tempfile

    if tmp.local:
        os.makedirs(tmp.path)
        try:
            write(tmp.path)
        except BaseException:
            shutil.rmtree(tmp.path, ignore_errors=True)
            raise
        return
    with tempfile.TemporaryDirectory(prefix="spark_fr-out-") as local:
        write(local)
        files.mkdir(tmp)
        try:
            for name in sorted(os.listdir(local)):
                files.put(os.path.join(local, name), tmp.child(name))
        except BaseException:
            files.rmtree(tmp)
            raise


def commit_directory(tmp: Location, out: Location, files, *, foreign, refuse_existing: str | None = None,
                     ours=OUR_FILES, option: str = "--output", retries: int = 12) -> None:
    """Move the staged directory ``tmp`` into place at ``out`` (call with SIGTERM deferred).

    ``out`` absent: one rename; an empty directory: filled, and kept; a directory of ours (``foreign(out, files)``
    lists nothing): renamed aside, ``tmp`` renamed in, the old one's files of ours deleted. Another run publishing
    at the same moment is retried (the last one wins). Anything else is refused, and nothing is written.

    Parameters
    ----------
    tmp, out : Location
    files : backend
    foreign : callable
        ``foreign(location, files) -> list`` of the entries a run of ours did not write.
    refuse_existing : str, optional
        The message when an earlier output of ours exists and must not be replaced (``--mode error``).
    ours : set of str
        The file names removed from the replaced directory.
    """
    import time

    for attempt in range(retries):
        if files.isdir(out) and not files.listdir(out):
            # an empty directory (perhaps a mount point or one the user made): fill it, keep it
            for name in files.listdir(tmp):
                files.rename(tmp.child(name), out.child(name))
            files.rmdir(tmp)
            return
        if not files.exists(out):
            try:
                files.rename(tmp, out)
                return
            except OSError:
                time.sleep(0.05 * (attempt + 1))  # another run published at the same moment
                continue
        found = foreign(out, files) if files.isdir(out) else [out.name]
        if found:
            raise InputError(f"{option} {out.path} holds files spark_fr did not write ({shown(found)}); "
                             f"nothing was written")
        if refuse_existing:
            raise InputError(refuse_existing)
        old = sibling(out, "old")
        try:
            files.rename(out, old)
        except OSError:
            time.sleep(0.05 * (attempt + 1))
            continue
        try:
            files.rename(tmp, out)
        except OSError:  # another run published in between
            try:
                files.rename(old, out)  # put the earlier output back, and try again
            except OSError:  # the other run's output is in place: the earlier one is superseded
                remove_our_directory(old, files, ours)
            time.sleep(0.05 * (attempt + 1))
            continue
        remove_our_directory(old, files, ours)
        return
    raise InputError(f"{option} {out.path}: other runs kept replacing it; nothing was written")
