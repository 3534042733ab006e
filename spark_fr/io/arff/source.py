"""The text of an ARFF file on the driver: plain or gzip-compressed, and finding a line in it.

Sketch
------
* :func:`open_text` opens a file for streaming as text (UTF-8, a byte-order mark dropped,
  undecodable bytes replaced, any newline convention). A name ending in ``.gz`` is read through
  :mod:`gzip`.
* Spark's text reader picks its decompression codec by file extension only, so the driver follows
  the same rule and checks that it agrees with the content: gzip data under another name, or a
  ``.gz`` name over data that is not gzip, is refused with a one-line :class:`ArffError` (Spark
  would otherwise parse compressed bytes, or fail deep inside Hadoop).
* Spark reads a gzip file in one task and, if the data is truncated or corrupt, fails with an
  internal error. :func:`check_gzip` decompresses the whole stream once on the driver first (fast
  next to parsing), so such a file is refused in one line before any Spark work.
* :func:`find_line_number` streams the file again to turn a row error's text into its line number
  (error path only).
"""

from __future__ import annotations

import gzip
import io
import zlib

from .errors import ArffError, file_label

GZIP_MAGIC = b"\x1f\x8b"


def is_gzip_name(path: str) -> bool:
    """True if Spark reads ``path`` through its gzip codec (the name ends in ``.gz``)."""
    return str(path).lower().endswith(".gz")


def open_text(path: str) -> io.TextIOBase:
    """Open an ARFF file (plain or ``.gz``) as a text stream.

    Parameters
    ----------
    path : str
        A local file.

    Returns
    -------
    text stream
        To be used in a ``with`` block and iterated line by line.

    Raises
    ------
    ArffError
        The file cannot be opened, or its name and content disagree about gzip compression.
    """
    label = file_label(path)
    try:
        with open(path, "rb") as raw:
            magic = raw.read(2)
    except OSError as exc:
        raise ArffError(f"{label}: cannot open: {exc.strerror or exc}") from None
    gzipped = magic == GZIP_MAGIC
    if gzipped and not is_gzip_name(path):
        raise ArffError(f"{label}: the file is gzip-compressed but its name does not end in .gz "
                        f"(Spark decompresses by extension); rename it to {label}.gz")
    if is_gzip_name(path) and not gzipped:
        raise ArffError(f"{label}: the name ends in .gz but the file is not gzip-compressed")
    if gzipped:
        return gzip.open(path, "rt", encoding="utf-8-sig", errors="replace", newline=None)
    return open(path, encoding="utf-8-sig", errors="replace", newline=None)


def check_gzip(path: str, chunk: int = 1 << 20) -> None:
    """Check that a ``.gz`` file decompresses to its end (no-op for other names).

    Parameters
    ----------
    path : str
        The file.
    chunk : int
        Bytes decompressed per read.

    Raises
    ------
    ArffError
        Truncated or corrupt gzip data (or see :func:`open_text`).
    """
    if not is_gzip_name(path):
        return
    with open_text(path) as handle:
        stream = handle.buffer
        try:
            while stream.read(chunk):
                pass
        except (OSError, EOFError, zlib.error) as exc:
            raise ArffError(f"{file_label(path)}: corrupt or truncated gzip data ({exc})") from None


def read_lines(handle, label: str):
    """Iterate ``(line number, line)`` over an open text stream; a corrupt gzip stream is an ArffError."""
    try:
        yield from enumerate(handle, start=1)
    except (OSError, EOFError, zlib.error) as exc:
        raise ArffError(f"{label}: cannot read: {exc}") from None


def find_line_number(path: str, line_text: str, start_line: int) -> int | None:
    """Find the 1-based number of the first line from ``start_line`` equal to ``line_text``.

    Parameters
    ----------
    path : str
        The ARFF file (plain or ``.gz``).
    line_text : str
        The line content (a trailing ``\\n``/``\\r\\n`` is ignored).
    start_line : int
        First line number (1-based) to consider, e.g. ``header.data_line + 1``.

    Returns
    -------
    int or None
        The line number, or None if no line matches.
    """
    target = line_text.rstrip("\r\n")
    with open_text(path) as handle:
        for line_no, line in read_lines(handle, file_label(path)):
            if line_no >= start_line and line.rstrip("\r\n") == target:
                return line_no
    return None
