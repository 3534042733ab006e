"""The file system that serves a :class:`~spark_fr.io.locations.Location`, as one small backend object.

Sketch
------
:func:`files_for` chooses, once per location, who reads and writes it:

* a local path -> :class:`LocalFiles` (Python's own file functions);
* a URI, with a classic Spark session (the caller's, or the run's, started for it) -> :class:`HadoopFiles`: the
  session's Hadoop ``FileSystem`` for the scheme, with the cluster's credentials, exactly what Spark itself reads
  and writes (``dbfs:`` on Databricks, ``s3a:`` with hadoop-aws, ``abfss:``, ``gs:``, ``hdfs:``, ``file:``);
* a URI with no JVM in this process (Spark Connect, or no session at all) -> :class:`ArrowFiles`: pyarrow's file
  systems on the driver (``s3``/``s3a``, ``gs``, ``hdfs``, ``abfs``/``abfss``), with the driver's credentials;
* nobody serves the scheme -> one-line :class:`~spark_fr.errors.InputError`, before any work: a URI never becomes a
  local folder named after it.

Each backend has the few operations the writers need (``exists``, ``isdir``, ``listdir``, ``read_head``,
``size``, ``get``, ``mkdir``, ``rename``, ``replace``, ``put``, ``remove``, ``rmdir``, ``rmtree``), with the semantics of Python's
``os`` functions: ``rename`` refuses an existing destination other than an empty directory (Hadoop would move the
source *into* a directory), ``replace`` replaces a file, ``rmdir`` only removes an empty directory. They are tested operation by operation against each other
(``tests/io/test_locations.py``: Hadoop's local file system behind ``file:`` URIs against :class:`LocalFiles`).
"""
from __future__ import annotations

import os
import shutil

from ..errors import InputError, one_line
from .locations import Location

#: schemes pyarrow serves on the driver, and the scheme pyarrow knows each by
ARROW_SCHEMES = {"s3": "s3", "s3a": "s3", "s3n": "s3", "gs": "gs", "gcs": "gs", "hdfs": "hdfs",
                 "abfs": "abfs", "abfss": "abfs"}


class LocalFiles:
    """A local file system (``os``): the paths are the locations' absolute paths."""

    kind = "local"

    def exists(self, loc: Location) -> bool:
        return os.path.lexists(loc.path)

    def isdir(self, loc: Location) -> bool:
        return os.path.isdir(loc.path) and not os.path.islink(loc.path)

    def isfile(self, loc: Location) -> bool:
        return os.path.isfile(loc.path)

    def listdir(self, loc: Location) -> list:
        return sorted(os.listdir(loc.path))

    def read_head(self, loc: Location, size: int | None = None) -> bytes:
        with open(loc.path, "rb") as fh:
            return fh.read() if size is None else fh.read(size)

    def mkdir(self, loc: Location) -> None:
        os.mkdir(loc.path)

    def rename(self, src: Location, dst: Location) -> None:
        if os.path.lexists(dst.path) and not (os.path.isdir(dst.path) and not os.listdir(dst.path)):
            raise FileExistsError(dst.path)
        os.rename(src.path, dst.path)

    def replace(self, src: Location, dst: Location) -> None:
        os.replace(src.path, dst.path)

    def size(self, loc: Location) -> int:
        return os.path.getsize(loc.path)

    def get(self, loc: Location, local_file: str) -> None:
        shutil.copyfile(loc.path, local_file)

    def put(self, local_file: str, loc: Location) -> None:
        shutil.copyfile(local_file, loc.path)

    def remove(self, loc: Location) -> None:
        os.remove(loc.path)

    def rmdir(self, loc: Location) -> None:
        os.rmdir(loc.path)

    def rmtree(self, loc: Location) -> None:
        shutil.rmtree(loc.path, ignore_errors=True)


class HadoopFiles:
    """A Hadoop ``FileSystem`` of a classic Spark session (through its JVM)."""

    kind = "hadoop"

    def __init__(self, spark, loc: Location):
        self._jvm = spark._jvm
        self._conf = spark._jsc.hadoopConfiguration()
        self._fs = self._path(loc).getFileSystem(self._conf)

    def _path(self, loc: Location):
        return self._jvm.org.apache.hadoop.fs.Path(loc.path)

    def _status(self, loc: Location):
        try:
            return self._fs.getFileStatus(self._path(loc))
        except Exception as err:  # java.io.FileNotFoundException through py4j
            if "FileNotFoundException" in str(err) or "does not exist" in str(err):
                return None
            raise

    def exists(self, loc: Location) -> bool:
        return self._status(loc) is not None

    def isdir(self, loc: Location) -> bool:
        st = self._status(loc)
        return st is not None and st.isDirectory()

    def isfile(self, loc: Location) -> bool:
        st = self._status(loc)
        return st is not None and st.isFile()

    def listdir(self, loc: Location) -> list:
        return sorted(str(st.getPath().getName()) for st in self._fs.listStatus(self._path(loc)))

    def read_head(self, loc: Location, size: int | None = None) -> bytes:
        stream = self._fs.open(self._path(loc))
        try:
            if size is None:
                return bytes(stream.readAllBytes())
            return bytes(stream.readNBytes(size))
        finally:
            stream.close()

    def mkdir(self, loc: Location) -> None:
        if self.exists(loc):
            raise FileExistsError(loc.path)
        if not self._fs.mkdirs(self._path(loc)):
            raise OSError(f"{loc.path}: could not be created")

    def rename(self, src: Location, dst: Location) -> None:
        if self.exists(dst):
            if not (self.isdir(dst) and not self.listdir(dst)):
                raise FileExistsError(dst.path)
            self._fs.delete(self._path(dst), False)  # an empty directory is replaced, as os.rename does
        if not self._fs.rename(self._path(src), self._path(dst)):
            raise OSError(f"{src.path} could not be renamed to {dst.path}")

    def replace(self, src: Location, dst: Location) -> None:
        if self.isfile(dst):  # not atomic on Hadoop: the file is gone for a moment
            self._fs.delete(self._path(dst), False)
        self.rename(src, dst)

    def size(self, loc: Location) -> int:
        return int(self._fs.getFileStatus(self._path(loc)).getLen())

    def get(self, loc: Location, local_file: str) -> None:
        stream = self._fs.open(self._path(loc))
        try:
            with open(local_file, "wb") as out:
                while True:
                    chunk = bytes(stream.readNBytes(1 << 20))
                    if not chunk:
                        break
                    out.write(chunk)
        finally:
            stream.close()

    def put(self, local_file: str, loc: Location) -> None:
        out = self._fs.create(self._path(loc), False)
        try:
            with open(local_file, "rb") as fh:
                while True:
                    chunk = fh.read(1 << 20)
                    if not chunk:
                        break
                    out.write(bytearray(chunk))
        finally:
            out.close()

    def remove(self, loc: Location) -> None:
        if self.isdir(loc) or not self._fs.delete(self._path(loc), False):
            raise OSError(f"{loc.path}: could not be removed")

    def rmdir(self, loc: Location) -> None:
        if not self.isdir(loc) or self.listdir(loc):
            raise OSError(f"{loc.path}: not an empty directory")
        self._fs.delete(self._path(loc), False)

    def rmtree(self, loc: Location) -> None:
        try:
            self._fs.delete(self._path(loc), True)
        except Exception:  # a clean-up: best effort, as shutil.rmtree(ignore_errors=True)
            pass


class ArrowFiles:
    """A pyarrow file system on the driver (for a URI when this process has no JVM)."""

    kind = "pyarrow"

    def __init__(self, loc: Location):
        from pyarrow import fs as pafs

        uri = loc.path
        arrow_scheme = ARROW_SCHEMES.get(loc.scheme, loc.scheme)
        if arrow_scheme != loc.scheme:
            uri = arrow_scheme + uri[len(loc.scheme):]
        self._pafs = pafs
        self._fs, _ = pafs.FileSystem.from_uri(uri)
        self._scheme = loc.scheme

    def _p(self, loc: Location) -> str:
        from urllib.parse import urlsplit

        parts = urlsplit(loc.path)
        return (parts.netloc + parts.path).rstrip("/") if self._scheme != "hdfs" else parts.path

    def _info(self, loc: Location):
        return self._fs.get_file_info(self._p(loc))

    def exists(self, loc: Location) -> bool:
        return self._info(loc).type != self._pafs.FileType.NotFound

    def isdir(self, loc: Location) -> bool:
        return self._info(loc).type == self._pafs.FileType.Directory

    def isfile(self, loc: Location) -> bool:
        return self._info(loc).type == self._pafs.FileType.File

    def listdir(self, loc: Location) -> list:
        infos = self._fs.get_file_info(self._pafs.FileSelector(self._p(loc)))
        return sorted(i.base_name for i in infos)

    def read_head(self, loc: Location, size: int | None = None) -> bytes:
        with self._fs.open_input_stream(self._p(loc)) as fh:
            return fh.read() if size is None else fh.read(size)

    def mkdir(self, loc: Location) -> None:
        if self.exists(loc):
            raise FileExistsError(loc.path)
        self._fs.create_dir(self._p(loc), recursive=False)

    def rename(self, src: Location, dst: Location) -> None:
        if self.exists(dst) and not (self.isdir(dst) and not self.listdir(dst)):
            raise FileExistsError(dst.path)
        self._fs.move(self._p(src), self._p(dst))

    def replace(self, src: Location, dst: Location) -> None:
        if self.isfile(dst):
            self._fs.delete_file(self._p(dst))
        self.rename(src, dst)

    def size(self, loc: Location) -> int:
        return int(self._info(loc).size)

    def get(self, loc: Location, local_file: str) -> None:
        with self._fs.open_input_stream(self._p(loc)) as src, open(local_file, "wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)

    def put(self, local_file: str, loc: Location) -> None:
        with open(local_file, "rb") as src, self._fs.open_output_stream(self._p(loc)) as out:
            shutil.copyfileobj(src, out, 1 << 20)

    def remove(self, loc: Location) -> None:
        self._fs.delete_file(self._p(loc))

    def rmdir(self, loc: Location) -> None:
        if self.listdir(loc):
            raise OSError(f"{loc.path}: not an empty directory")
        self._fs.delete_dir(self._p(loc))

    def rmtree(self, loc: Location) -> None:
        try:
            self._fs.delete_dir(self._p(loc))
        except Exception:  # a clean-up: best effort
            pass


def _jvm_session(spark):
    """The classic session behind ``spark`` (None, a session, or one of ours still starting), started if needed;
    None when this process has no JVM to ask (no session; Spark Connect)."""
    from ..runtime.engine import is_connect, session_of

    if spark is None:
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession()
    if spark is None or is_connect(spark):
        return None
    return session_of(spark)


def hadoop_serves(spark, scheme: str) -> bool:
    """Whether the session's Hadoop configuration has a ``FileSystem`` for ``scheme``."""
    jvm = spark._jvm
    try:
        jvm.org.apache.hadoop.fs.FileSystem.getFileSystemClass(scheme, spark._jsc.hadoopConfiguration())
        return True
    except Exception:  # UnsupportedFileSystemException, or a configured class that is not on the classpath
        return False


def files_for(loc: Location, spark=None, option: str = "path"):
    """The backend that serves ``loc`` (module sketch), or a one-line error naming the option and the scheme.

    Parameters
    ----------
    loc : Location
    spark : SparkSession, SessionStart or None
        The run's session (a session of ours still starting is started for a URI); None: the active one, if any.
    option : str
        For the message (``--output``).
    """
    if loc.local:
        return LocalFiles()
    session = _jvm_session(spark)
    if session is not None:
        if hadoop_serves(session, loc.scheme):
            return HadoopFiles(session, loc)
    elif loc.scheme in ARROW_SCHEMES:
        try:
            return ArrowFiles(loc)
        except Exception as err:  # pyarrow's errors: no credentials, no libhdfs, ...
            raise InputError(f"{option} {loc.given}: pyarrow cannot open it on the driver ({one_line(err)})") from None
    where = ("the Spark session's Hadoop configuration has no FileSystem for it" if session is not None
             else "this process has no JVM (Spark Connect or no session) and pyarrow does not serve it")
    raise InputError(f"{option} {loc.given}: no file system serves '{loc.scheme}:' here ({where}); give a local "
                     f"path, a file: URI, or a URI whose file system the cluster has")


def served(loc: Location, spark=None, option: str = "path") -> Location:
    """Check, before any work, that ``loc`` is served (:func:`files_for`); returns it."""
    files_for(loc, spark, option)
    return loc
