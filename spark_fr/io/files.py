"""Listing and opening input files on the driver, locally or on any file system Spark reads.

Sketch
------
The CSV and Parquet readers check every file (CSV headers, Parquet footers) before Spark reads it, so
they need the files Spark would read and a cheap way to look inside them:

* :func:`data_files` lists a file, or the files under a directory the way Spark's file index does: names
  starting with ``_`` or ``.`` (``_SUCCESS``, ``.crc`` files, ``_delta_log``) and ``*._COPYING_`` are
  skipped, except partition directories ``key=value``; the files come back sorted by path.
* :func:`read_range` reads bytes at an offset (a Parquet footer is the last few KB of a file).
* :func:`open_text` streams a text file (``.gz`` and ``.bz2`` are decompressed here, other Hadoop codecs
  through Hadoop), as UTF-8 with a leading byte-order mark dropped and line ends kept (``newline=''``).

Local paths use Python's own file functions. A URI with a scheme (``s3a://``, ``abfss://``, ``hdfs://``,
``dbfs:/``, ``file://``) goes through the Hadoop ``FileSystem`` of the Spark session, so the driver sees
exactly what Spark will read, with the same credentials.
"""
from __future__ import annotations

import bz2
import gzip
import io
import os
import re
from dataclasses import dataclass

from ..errors import InputError

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]+:/")


@dataclass(frozen=True)
class DataFile:
    """A file Spark would read: its path (as given or as listed) and its size in bytes."""

    path: str
    size: int

    @property
    def name(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1]


def is_uri(path: str) -> bool:
    """True for a path with a scheme (``s3a://b/k``, ``file:/x``: read through Hadoop), False for a local path."""
    return _SCHEME.match(path) is not None


def is_hidden(name: str) -> bool:
    """Whether Spark's file index skips a file or directory of this name (``_x``, ``.x``, ``x._COPYING_``)."""
    return (name.startswith("_") and "=" not in name) or name.startswith(".") or name.endswith("._COPYING_")


def data_files(spark, path: str) -> tuple:
    """The files Spark reads for ``path``, and the subdirectories it descends into.

    Parameters
    ----------
    spark : SparkSession or None
        Needed only for a URI (Hadoop file system).
    path : str
        A file or a directory.

    Returns
    -------
    files : list of DataFile
        Sorted by path; for a file, the file itself.
    subdirs : list of str
        The (non-hidden) subdirectories under ``path`` that were listed too.
    """
    if is_uri(path):
        return _hadoop_data_files(spark, path)
    if not os.path.isdir(path):
        return [DataFile(path, os.path.getsize(path))], []
    files, subdirs = [], []
    for root, dirs, names in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not is_hidden(d))
        subdirs.extend(os.path.join(root, d) for d in dirs)
        files.extend(DataFile(os.path.join(root, n), os.path.getsize(os.path.join(root, n)))
                     for n in names if not is_hidden(n))
    return sorted(files, key=lambda f: f.path), sorted(subdirs)


def read_range(spark, path: str, offset: int, length: int) -> bytes:
    """``length`` bytes of a file from ``offset`` (fewer at the end of the file)."""
    if not is_uri(path):
        with open(path, "rb") as fh:
            fh.seek(offset)
            return fh.read(length)
    stream = _hadoop_fs(spark, path)[0].open(_hadoop_path(spark, path))
    try:
        stream.seek(offset)
        return bytes(stream.readNBytes(length))
    finally:
        stream.close()


def open_binary(spark, path: str):
    """A binary stream of a file's bytes (compressed or not)."""
    if not is_uri(path):
        return open(path, "rb")
    fs, hpath = _hadoop_fs(spark, path)
    return io.BufferedReader(_JavaInputStream(fs.open(hpath)), 1 << 20)


def open_text(spark, path: str):
    """A text stream of a (possibly compressed) file: UTF-8, a leading BOM dropped, line ends kept.

    Undecodable bytes become U+FFFD, as Spark's own UTF-8 decoding does.
    """
    low = path.lower()
    if low.endswith(".gz"):
        raw = gzip.GzipFile(fileobj=open_binary(spark, path))
    elif low.endswith(".bz2"):
        raw = bz2.BZ2File(open_binary(spark, path))
    elif low.rsplit(".", 1)[-1] in ("deflate", "snappy", "lz4", "zst", "zstd", "br"):
        raw = _hadoop_codec_stream(spark, path)
    else:
        raw = open_binary(spark, path)
    return io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace", newline="")


# --- Hadoop file systems (through the Spark session's JVM) ----------------------------------------------


class _JavaInputStream(io.RawIOBase):
    """A Python raw stream over a ``java.io.InputStream`` (read in chunks through py4j)."""

    def __init__(self, jstream):
        self._stream = jstream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self._stream.readNBytes(min(len(buffer), 1 << 20))
        n = len(data)
        buffer[:n] = data
        return n

    def close(self) -> None:
        if not self.closed:
            self._stream.close()
        super().close()


def _jvm(spark):
    jvm = getattr(spark, "_jvm", None) if spark is not None else None
    if jvm is None:
        raise InputError("reading a URI on the driver needs a classic Spark session (with a JVM)")
    return jvm


def _hadoop_path(spark, path: str):
    return _jvm(spark).org.apache.hadoop.fs.Path(path)


def _hadoop_fs(spark, path: str):
    hpath = _hadoop_path(spark, path)
    return hpath.getFileSystem(spark._jsc.hadoopConfiguration()), hpath


def _hadoop_data_files(spark, path: str) -> tuple:
    fs, hpath = _hadoop_fs(spark, path)
    status = fs.getFileStatus(hpath)
    if not status.isDirectory():
        return [DataFile(path, int(status.getLen()))], []
    files, subdirs, todo = [], [], [hpath]
    while todo:
        for st in fs.listStatus(todo.pop()):
            p = st.getPath()
            if is_hidden(p.getName()):
                continue
            if st.isDirectory():
                subdirs.append(p.toString())
                todo.append(p)
            else:
                files.append(DataFile(p.toString(), int(st.getLen())))
    return sorted(files, key=lambda f: f.path), sorted(subdirs)


def _hadoop_codec_stream(spark, path: str):
    jvm = _jvm(spark)
    fs, hpath = _hadoop_fs(spark, path)
    codec = jvm.org.apache.hadoop.io.compress.CompressionCodecFactory(
        spark._jsc.hadoopConfiguration()).getCodec(hpath)
    stream = fs.open(hpath) if codec is None else codec.createInputStream(fs.open(hpath))
    return io.BufferedReader(_JavaInputStream(stream), 1 << 20)
