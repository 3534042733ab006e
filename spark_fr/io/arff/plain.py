"""Plain dense chunks: whole data lines that pyarrow's CSV reader can take byte for byte.

Sketch
------
On the driver, a local uncompressed ARFF file's data section is cut into ranges of whole lines (about
:data:`CHUNK_BYTES` each, as many as a multiple of the driver's threads: :func:`data_offset`, :func:`byte_ranges`),
each read by the thread that parses it (:func:`read_range`). A chunk is *plain*
(:func:`plain_shape`) when each of its lines is already what the row parser hands pyarrow for a run of dense lines
(:func:`spark_fr.io.arff.dense.arrow_columns` joins the run's stripped lines with newlines): printable ASCII
without quote characters, braces (sparse rows), ``%`` (comments) or ``@`` (header lines), no empty line, no space
at either end of a line. Such a chunk goes to pyarrow's CSV reader as it is, with no Python string per line. Any
other chunk, or one pyarrow refuses, is decoded and split into lines as the file's text reader does
(:func:`text_lines`: UTF-8 with undecodable bytes replaced, any newline convention) and takes the row parser's
usual path, so the rows, the values and the errors are the same either way.

Why: the MTR benchmark's 35 MB file spent 0.45-0.5 s of its 4.4-5 s run reading lines into Python strings and
back (the main thread's line loop, each parse thread's ``to_pylist`` and line runs) where pyarrow alone takes
0.15-0.25 s.
"""
from __future__ import annotations

import io
import os

import numpy as np

CHUNK_BYTES = 8 << 20  # bytes per range (then to the end of its last line); pyarrow reads a range in 1 MiB blocks
NEWLINE, SPACE = 10, 32
#: bytes a plain line may hold: printable ASCII and the newline, but for the characters other paths handle
PLAIN_BYTES = bytes(c for c in [*range(SPACE, 127), NEWLINE] if c not in b"'\"{}%@")


def data_offset(path: str, data_line: int) -> int | None:
    """The byte offset of the line after line ``data_line`` (the ``@data`` line) of the uncompressed file ``path``;
    None when a line before it holds a carriage return (the text reader's line count may differ from the bytes')."""
    offset = 0
    with open(path, "rb") as fh:
        for _ in range(data_line):
            line = fh.readline()
            if b"\r" in line:
                return None
            offset += len(line)
    return offset


def byte_ranges(path: str, start: int, parts: int, size: int = CHUNK_BYTES) -> list:
    """``[(path, lo, hi), ...]``: the bytes of ``path`` from ``start`` on in ranges of whole lines, of about ``size``
    bytes each and as many as a multiple of ``parts`` (the threads that read them)."""
    end = os.path.getsize(path)
    n = max(1, -(-(end - start) // size))
    n = -(-n // parts) * parts
    cuts = [start]
    with open(path, "rb") as fh:
        for k in range(1, n):
            at = start + (end - start) * k // n
            if at <= cuts[-1]:
                continue
            fh.seek(at - 1)
            cut = at - 1 + len(fh.readline())  # after the newline that ends the line holding byte at - 1
            if cuts[-1] < cut < end:
                cuts.append(cut)
    cuts.append(end)
    return [(path, lo, hi) for lo, hi in zip(cuts[:-1], cuts[1:]) if hi > lo]


def read_range(path: str, lo: int, hi: int) -> bytes:
    """The bytes ``[lo, hi)`` of ``path``."""
    with open(path, "rb") as fh:
        fh.seek(lo)
        return fh.read(hi - lo)


def plain_shape(text: bytes) -> tuple | None:
    """(rows, the longest row's length) of a plain chunk (see the module sketch), or None when it is not plain."""
    if not text or text.translate(None, PLAIN_BYTES):
        return None
    a = np.frombuffer(text, np.uint8)
    ends = np.flatnonzero(a == NEWLINE)
    if a[-1] != NEWLINE:
        ends = np.append(ends, a.size)
    starts = np.concatenate(([0], ends[:-1] + 1))
    if (ends <= starts).any() or (a[starts] == SPACE).any() or (a[ends - 1] == SPACE).any():
        return None  # an empty line, or a space at a line's start or end
    return int(ends.size), int((ends - starts).max())


def text_lines(text: bytes) -> list:
    """The lines of a chunk as the file's text reader gives them (UTF-8, undecodable bytes replaced, universal
    newlines), without their line ends."""
    return [line.rstrip("\r\n") for line in io.StringIO(text.decode("utf-8", errors="replace"), newline=None)]
