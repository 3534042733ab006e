"""One rule for paths and URIs: what a path given to any option names, before anything is read or written.

Sketch
------
Every option that takes a path (``--input``, ``--output``, ``--plot``, ``--config``, ``--labels-xml``,
``--schema`` and the tables in it, drift's sources and outputs, a saved model) is parsed by :func:`locate` into a
:class:`Location`, with no I/O:

* **local**: a path without a scheme (``out/enb``, ``/abs/x``, ``~/x``; Databricks' ``/Volumes/...`` and
  ``/dbfs/...`` are local paths on the driver, served by their mounts), and a ``file:`` URI in each of its three
  spellings, ``file:/abs``, ``file:///abs`` and ``file://localhost/abs`` (percent-escapes decoded: the file
  ``/abs``). A local path is made absolute (``~`` expanded) so that every later step sees one spelling.
* **a URI** with any other scheme (``dbfs:/``, ``s3a://``, ``s3://``, ``abfss://``, ``gs://``, ``hdfs://``, ...):
  kept as given (trailing slashes dropped); which file system serves it is decided by
  :func:`spark_fr.io.filesystems.files_for` (the Spark session's Hadoop file system, else pyarrow's on the
  driver), and a scheme nobody serves is an error there, before any work, never a local folder.

Decisions
---------
* A scheme is ``letters:/`` (two or more characters, then ``:/``), as Hadoop's ``Path`` reads it; ``a:b`` with no
  slash is a local file name with a colon, and ``C:/x`` (one letter) a Windows drive, not a scheme.
* ``file://HOST/x`` with a host other than ``localhost`` names a file on another machine: refused (one line).
* Schemes are compared lower-cased (``S3A://`` is ``s3a://``), as Hadoop does.
"""
from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from ..errors import InputError

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+):/")


@dataclass(frozen=True)
class Location:
    """Where a path option points.

    Attributes
    ----------
    given : str
        The text as the user gave it (for messages).
    scheme : str or None
        None for a local path (``file:`` URIs included), else the URI's scheme, lower-cased.
    path : str
        A local path: the absolute file system path; a URI: the URI (trailing ``/`` dropped).
    """

    given: str
    scheme: str | None
    path: str

    @property
    def local(self) -> bool:
        """Whether this process's own file functions serve it."""
        return self.scheme is None

    @property
    def name(self) -> str:
        """The last part of the path (a file or directory name)."""
        return self.path.rstrip("/").rsplit("/", 1)[-1]

    def parent(self) -> "Location":
        """The directory holding this location (itself at a root)."""
        if self.local:
            return Location(self.given, None, os.path.dirname(self.path) or self.path)
        parts = urlsplit(self.path)
        up = posixpath.dirname(parts.path.rstrip("/")) or "/"
        if up == parts.path or parts.path in ("", "/"):
            return self
        authority = f"//{parts.netloc}" if self.path[len(parts.scheme) + 1:].startswith("//") else ""
        return Location(self.given, self.scheme, f"{parts.scheme}:{authority}{up}")

    def child(self, name: str) -> "Location":
        """The location of ``name`` inside this directory."""
        if self.local:
            return Location(self.given, None, os.path.join(self.path, name))
        return Location(self.given, self.scheme, self.path.rstrip("/") + "/" + name)

    def sibling(self, name: str) -> "Location":
        """The location of ``name`` beside this one (in the same directory)."""
        return self.parent().child(name)

    def __str__(self) -> str:
        return self.path


def scheme_of(text: str) -> str | None:
    """The scheme of a URI (lower-cased), or None for a plain local path."""
    m = _SCHEME.match(text)
    return m.group(1).lower() if m else None


def locate(text, option: str = "path") -> Location:
    """Parse a path or URI given to ``option`` (see the module sketch); no file is touched.

    Parameters
    ----------
    text : str or os.PathLike
    option : str
        The option's name, for the one-line error (``--output``).

    Returns
    -------
    Location

    Raises
    ------
    InputError
        An empty path, or a ``file:`` URI naming another host.
    """
    text = os.fspath(text)
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{option}: an empty path")
    scheme = scheme_of(text)
    if scheme is None:
        return Location(text, None, os.path.abspath(os.path.expanduser(text)))
    if scheme == "file":
        parts = urlsplit(text)
        if parts.netloc not in ("", "localhost"):
            raise InputError(f"{option} {text}: a file: URI must name a file of this machine (file:/path, "
                             f"file:///path or file://localhost/path), not of host '{parts.netloc}'")
        if not parts.path.startswith("/"):
            raise InputError(f"{option} {text}: a file: URI needs an absolute path (file:///path)")
        return Location(text, None, os.path.normpath(unquote(parts.path)))
    uri = text if re.fullmatch(r"[^/]*:/+", text) else text.rstrip("/")
    return Location(text, scheme, uri)


def is_local(text) -> bool:
    """Whether a path or URI names a file of this machine (a plain path or a ``file:`` URI)."""
    return scheme_of(os.fspath(text)) in (None, "file")


def local_path(text) -> str:
    """The local file of a plain path or ``file:`` URI (as :func:`locate`, absolute); a URI of another scheme is
    returned unchanged."""
    loc = locate(text)
    return loc.path if loc.local else os.fspath(text)
