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

A Spark Connect session has no JVM in this process. Decision: there, a URI goes through Spark's own
``binaryFile`` reader (the server's file systems and credentials, as for the data itself): the files and
their sizes are listed without reading them; a byte range (a Parquet footer) is cut out of the file's content
on an executor, which reads the whole file to do so; a stream (a CSV header, a file scanned for a malformed
record) brings the whole file to the driver. Compression codecs other than ``.gz`` and ``.bz2`` are not read
on the driver there (one-line error). Local paths are read by Python in both kinds of session: they must be
visible to this process and to Spark alike (a local Connect server, a Databricks notebook's ``/Volumes``).
"""
from __future__ import annotations

import bz2
import gzip
import io
import os
from dataclasses import dataclass

from ..errors import InputError
from .locations import scheme_of


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
    return scheme_of(path) is not None


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
        return _connect_data_files(spark, path) if _connect(spark) else _hadoop_data_files(spark, path)
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
    if _connect(spark):
        return _connect_read_range(spark, path, offset, length)
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
    if _connect(spark):
        return io.BytesIO(_connect_read_range(spark, path, 0, None))
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


def local_copy(spark, path: str, option: str = "--input") -> str:
    """A local file with the bytes of ``path``: the path itself when it is local, else a copy on the driver.

    Files that Python parses on the driver (ARFF, a ``.zip`` of one, ``.mat``, a Mulan XML label file, a YAML
    config or schema) are read from a URI through the file system that serves it (Hadoop's, or Spark's
    ``binaryFile`` reader on Spark Connect) into a temporary folder of this process (removed at exit).
    Decision: a copy, not a stream, so that every driver-side reader keeps reading files; a fresh copy each time,
    never a cache a changed file could hide behind.
    """
    if not is_uri(path):
        return path
    name = path.rstrip("/").rsplit("/", 1)[-1] or "file"
    import uuid

    target = os.path.join(_fetch_dir(), f"{uuid.uuid4().hex[:8]}-{name}")
    if _connect(spark):  # the server's file systems serve it (binaryFile)
        try:
            data_files(spark, path)
        except FileNotFoundError:
            raise InputError(f"{option} {path}: no such file") from None
        _copy_stream(open_binary(spark, path), target)
        return target
    from .filesystems import files_for
    from .locations import locate

    loc = locate(path, option)
    files = files_for(loc, spark, option)  # a scheme nobody serves: one line
    if not files.isfile(loc):
        raise InputError(f"{option} {path}: no such file")
    files.get(loc, target)
    return target


_FETCHED: list = []


def _fetch_dir() -> str:
    """This process's folder of copies (:func:`local_copy`), removed when it exits."""
    if not _FETCHED:
        import atexit
        import shutil
        import tempfile

        _FETCHED.append(tempfile.mkdtemp(prefix="spark_fr_fetched-"))
        atexit.register(shutil.rmtree, _FETCHED[0], True)
    return _FETCHED[0]


def _copy_stream(stream, path: str) -> None:
    import shutil

    with stream as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)


def driver_file(path: str, option: str, spark=None, master: str | None = None) -> str:
    """The local file to parse for a small file given to ``option`` (a config, a schema, a label file): a local path
    or ``file:`` URI as its local path; a URI copied to the driver (:func:`local_copy`) through the session's file
    systems (``spark``; else the active session, else one started for it, with ``master``)."""
    from .locations import is_local, local_path

    if is_local(path):
        return local_path(path)
    if spark is None:
        from ..runtime.session import get_spark

        spark = get_spark(master=master, app_name="spark_fr", quiet=True)
    return local_copy(spark, path, option)


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
    if _connect(spark) or not is_uri(path):
        raise InputError(f"{path}: this compression is read through Hadoop's codecs, which need a classic Spark "
                         f"session and a URI; decompress the file or use .gz / .bz2")
    jvm = _jvm(spark)
    fs, hpath = _hadoop_fs(spark, path)
    codec = jvm.org.apache.hadoop.io.compress.CompressionCodecFactory(
        spark._jsc.hadoopConfiguration()).getCodec(hpath)
    stream = fs.open(hpath) if codec is None else codec.createInputStream(fs.open(hpath))
    return io.BufferedReader(_JavaInputStream(stream), 1 << 20)


# --- Spark Connect: Spark's binaryFile reader -----------------------------------------------------------------


def _connect(spark) -> bool:
    from ..runtime.engine import is_connect

    return spark is not None and is_connect(spark)


def _binary_files(spark, path: str):
    from pyspark.errors import AnalysisException

    try:
        df = spark.read.format("binaryFile").option("recursiveFileLookup", "true").load(path)
        df.schema  # resolves the path now
    except AnalysisException as err:
        if "PATH_NOT_FOUND" in str(err) or "does not exist" in str(err):
            raise FileNotFoundError(f"{path}: no such file or directory") from None
        raise
    return df


def _same_path(a: str, b: str) -> bool:
    from urllib.parse import urlparse

    pa, pb = urlparse(a), urlparse(b)
    return pa.scheme == pb.scheme and pa.path.rstrip("/") == pb.path.rstrip("/")


def _connect_data_files(spark, path: str) -> tuple:
    """:func:`data_files` of a URI through ``binaryFile`` (contents not read)."""
    rows = _binary_files(spark, path).select("path", "length").collect()
    if len(rows) == 1 and _same_path(rows[0]["path"], path):
        return [DataFile(path, int(rows[0]["length"]))], []
    from urllib.parse import urlparse

    depth = urlparse(path).path.rstrip("/").count("/")
    files, subdirs = [], set()
    for r in rows:
        p = r["path"]
        files.append(DataFile(p, int(r["length"])))
        parent = p.rsplit("/", 1)[0]
        while urlparse(parent).path.rstrip("/").count("/") > depth:  # directories between the root and the file
            subdirs.add(parent)
            parent = parent.rsplit("/", 1)[0]
    return sorted(files, key=lambda f: f.path), sorted(subdirs)


def _connect_read_range(spark, path: str, offset: int, length: int | None) -> bytes:
    """Bytes of a file through ``binaryFile`` (``length`` None: to the end)."""
    from pyspark.sql import functions as F

    content = F.col("content")
    if length is not None or offset:
        n = F.length(content) - F.lit(offset) if length is None else F.lit(length)
        content = F.substring(content, F.lit(offset + 1), n)
    rows = _binary_files(spark, path).select(content.alias("c")).collect()
    return bytes(rows[0]["c"]) if rows and rows[0]["c"] is not None else b""
