"""Choosing a reader: ARFF, CSV, Parquet, Delta, MATLAB ``.mat``, or a DataFrame given by the caller.

ARFF covers Clus' HARFF (``.harff``) too; a ``.zip`` holding one ARFF/HARFF file (as the HMLC benchmark
sets are distributed) is extracted once to a local temporary directory and read from there.

Every reader returns a :class:`spark_fr.data.schema.Dataset`. Missing inputs and unknown formats are
reported here, in one line, before Spark does any work.
"""
from __future__ import annotations

import glob
import logging
import os

import numpy as np
import pyarrow as pa

from ..data.names import check_policy, deduplicate, rename_frame, renamed_warning
from ..data.schema import ColumnInfo, Dataset, columns_of_dataframe
from ..errors import InputError
from ..runtime.session import conf_value
from .delta_read import read_delta  # noqa: F401 (where readers of other inputs find it)
from .files import local_copy
from .frames import is_pandas_frame, read_frame
from .locations import is_local, local_path, locate

log = logging.getLogger(__name__)

FORMATS = ("auto", "arff", "csv", "parquet", "delta", "mat")


def input_path(spark, path: str, option: str = "--input") -> str:
    """An input path checked before any work (:mod:`spark_fr.io.locations`): a local path as given (a ``file:`` URI
    as its local path) that must exist; a URI served by a file system of the session (on Spark Connect, by the
    server: its reader says) that must exist. Returns the path the readers take: a local one made absolute here,
    so that Spark's JVM, whose working directory may differ from Python's (a notebook's ``os.chdir``), reads the
    same file."""
    loc = locate(path, option)
    if loc.local:
        if not os.path.exists(loc.path):
            raise InputError(f"input not found: {path}")
        return loc.path
    from ..runtime.engine import is_connect
    from .filesystems import files_for

    if spark is not None and is_connect(spark):
        return loc.path
    files = files_for(loc, spark, option)
    if not files.exists(loc):
        raise InputError(f"input not found: {path}")
    return loc.path


def detect_format(path: str, spark=None) -> str:
    """Format of ``path`` from its extension or layout ('arff', 'csv', 'parquet', 'delta', 'mat'); the layout of a
    directory at a URI is listed through its file system (a classic session's)."""
    p = path.rstrip("/")
    low = p.lower()
    names = _directory_names(spark, p)
    if names is not None:
        if "_delta_log" in names:
            return "delta"
        if any(n.endswith(".parquet") for n in names) or _nested_parquet(spark, p, names):
            return "parquet"
        if any(n.endswith(".csv") for n in names):
            return "csv"
        raise InputError(f"{path}: cannot tell the format of this directory; pass --format")
    if low.endswith(".zip"):
        return "arff"
    for ext, fmt in ((".arff", "arff"), (".arff.gz", "arff"), (".harff", "arff"), (".harff.gz", "arff"), (".csv", "csv"), (".csv.gz", "csv"),
                     (".tsv", "csv"), (".parquet", "parquet"), (".mat", "mat")):
        if low.endswith(ext):
            return fmt
    raise InputError(f"{path}: unknown file type; pass --format arff|csv|parquet|delta|mat")


def _directory_names(spark, path: str):
    """The names in a directory (None: not a directory, or a URI this process cannot list)."""
    if is_local(path):
        local = local_path(path)
        return sorted(os.listdir(local)) if os.path.isdir(local) else None
    from ..runtime.engine import is_connect
    from .filesystems import files_for

    if spark is None or is_connect(spark):
        return None
    loc = locate(path)
    files = files_for(loc, spark)
    return files.listdir(loc) if files.isdir(loc) else None


def _nested_parquet(spark, path: str, names: list) -> bool:
    """Whether a (partitioned) directory holds ``*.parquet`` files one level down."""
    if is_local(path):
        return bool(glob.glob(os.path.join(local_path(path), "*", "*.parquet")))
    for name in names:
        inner = _directory_names(spark, path.rstrip("/") + "/" + name)
        if inner and any(n.endswith(".parquet") for n in inner):
            return True
    return False


def read_dataset(spark, source, *, format: str = "auto", labels_xml: str | None = None, targets=None,
                 features_col: str | None = None, table: str | None = None, version: int | None = None,
                 timestamp: str | None = None, where: str | None = None, exclude=None,
                 duplicate_names: str = "error") -> Dataset:
    """Read the input of a ranking run.

    Parameters
    ----------
    spark : SparkSession
    source : str, list of str or pyspark.sql.DataFrame
        A path (local or any URI Spark can read), several paths of one format (a list, or one string of
        comma-separated existing paths; ARFF files must declare the same attributes), or a DataFrame.
    format : str
        One of :data:`FORMATS`.
    labels_xml : str, optional
        Mulan label file (MLC): its labels are the targets.
    targets : list of str, optional
        Target names (needed by readers that store features in a vector column).
    features_col : str, optional
        For a DataFrame: the vector column holding the features.
    table : str, optional
        A catalog table (``[catalog.]db.table``) instead of ``source`` (:mod:`spark_fr.io.delta_read`).
    version, timestamp : optional
        Delta time travel (a Delta path or a Delta catalog table).
    where : str, optional
        A row filter (Delta paths and catalog tables; :mod:`spark_fr.io.tables`).
    exclude : list of str, optional
        Columns that are neither features nor targets.
    duplicate_names : {'error', 'rename'}
        A name the input gives to two columns (or vector elements): an error naming the input and both
        positions, or the repeats renamed ``name__2``, ... by one rule for every format
        (:mod:`spark_fr.data.names`), said in one warning line. Delta and catalog tables cannot hold a name
        twice.

    Returns
    -------
    Dataset
        ``extra['fingerprint']`` says what was read (:func:`fingerprint`); ``extra['renamed']`` the renamings.
    """
    check_policy(duplicate_names)
    ds = _read(spark, source, format, labels_xml, targets, features_col, table, version, timestamp, where,
               duplicate_names)
    unique_feature_names(ds, duplicate_names)
    line = renamed_warning(ds.source, ds.extra.get("renamed") or ())
    if line:
        log.warning("%s", line)
    if exclude:
        exclude_columns(ds, exclude, targets)
    ds.extra["fingerprint"] = fingerprint(spark, ds, source, table)
    return ds


def unique_feature_names(ds: Dataset, policy: str) -> None:
    """Give the dataset's columns unique names (the elements of a vector column are named by its metadata, and
    may repeat each other or an ordinary column's name); renamings are added to ``extra['renamed']``.

    The readers have made the names of ordinary columns unique already; names are compared exactly here (the
    features are reached by column and position, never resolved by name).
    """
    def unit(i: int) -> str:
        c = ds.columns[i]
        return "column" if c.index is None else f"element {c.index} of the vector column '{c.column}'"

    def where(first: int, position: int) -> str:
        return f": {unit(first)} and {unit(position)}"

    names, renamed = deduplicate([c.name for c in ds.columns], policy, source=ds.source, unit="feature",
                                 detail=where)
    if renamed:
        for c, name in zip(ds.columns, names):
            c.name = name
        ds.extra["renamed"] = list(ds.extra.get("renamed") or []) + renamed


def exclude_columns(ds: Dataset, exclude, targets=None) -> None:
    """Leave the ``--exclude`` columns out of the dataset's columns (each must be a column of the input)."""
    names = [exclude] if isinstance(exclude, str) else list(exclude)
    if isinstance(targets, str):
        targets = [t.strip() for t in targets.split(",") if t.strip()]
    known = {c.name for c in ds.columns} | set(ds.skipped)
    for name in names:
        if name not in known:
            raise InputError(f"--exclude: column '{name}' is not in {ds.source}")
        if targets and name in targets:
            raise InputError(f"--exclude and --targets both name column '{name}'")
    drop = set(names)
    ds.columns = [c for c in ds.columns if c.name not in drop]
    if ds.default_target in drop:
        ds.default_target = None
    if ds.class_column in drop:
        ds.class_column = None
    ds.extra["excluded"] = list(names)


def fingerprint(spark, ds: Dataset, source, table=None) -> dict:
    """What a run read, for its record: a Delta snapshot's version, a catalog table, or the files and their sizes.

    Decision: files are listed as Spark reads them (:func:`spark_fr.io.files.data_files`: a directory's data
    files, hidden files left out), with sizes in bytes; at most :data:`FINGERPRINT_FILES` are listed one by one
    (the count and the total size are always given). A DataFrame from the caller has no fingerprint.
    """
    out: dict = {}
    snap = ds.extra.get("snapshot")
    if table is not None:
        out.update(ds.extra.get("table") or {"table": table})
    if snap is not None:
        if table is None:
            out["path"] = snap.source
        out.update(snap.record())
    if ds.extra.get("where") is not None:
        out["where"] = ds.extra["where"]
    if snap is not None or table is not None or not isinstance(source, (str, list, tuple)):
        return out
    from .files import data_files

    files = []
    for p in split_inputs(source):
        try:
            files.extend(data_files(spark, local_path(p))[0])
        except Exception as err:  # an input Spark read but the listing cannot (recorded, never fatal)
            log.debug("no fingerprint for %s: %s", p, err)
            return {"paths": split_inputs(source)}
    out["files"] = len(files)
    out["bytes"] = sum(f.size for f in files)
    if len(files) <= FINGERPRINT_FILES:
        out["sizes"] = {f.path: f.size for f in files}
    return out


#: files listed one by one in a fingerprint (above it: their count and total size only)
FINGERPRINT_FILES = 1000


def _read(spark, source, format, labels_xml, targets, features_col, table, version, timestamp, where,
          duplicate_names="error") -> Dataset:
    if format not in FORMATS:
        raise InputError(f"--format must be one of {', '.join(FORMATS)}, not '{format}'")
    label_names = None
    if labels_xml:
        from .mulan import MulanError, read_label_names

        xml = labels_xml if is_local(labels_xml) else local_copy(spark, labels_xml, "--labels-xml")
        if not os.path.exists(local_path(xml)):
            raise InputError(f"label file not found: {labels_xml}")
        try:
            label_names = read_label_names(local_path(xml))
        except MulanError as err:
            raise InputError(str(err)) from None
    if isinstance(targets, str):
        targets = [t.strip() for t in targets.split(",") if t.strip()]
    if table is not None:
        if source is not None:
            raise InputError("give --input (a path) or --input-table (a catalog table), not both")
        from .delta_read import read_table

        ds = read_table(spark, table, features_col, version=version, timestamp=timestamp, where=where)
        ds.label_names = label_names
        return ds
    if source is None:
        raise InputError("no input: give --input (a path) or --input-table (a catalog table)")
    if not isinstance(source, (str, list, tuple)):
        if version is not None or timestamp is not None or where is not None:
            raise InputError("--version-as-of, --timestamp-as-of and --where apply to Delta tables and catalog tables, "
                             "not to a DataFrame (filter it yourself)")
        if is_pandas_frame(source):  # read on the driver: no Spark job, no JVM for a small frame
            if features_col is not None:
                raise InputError("features_col applies to a Spark DataFrame's vector column, not to a pandas "
                                 "DataFrame (its features are its columns)")
            ds = read_frame(source, duplicate_names)
            ds.label_names = label_names
            return ds
        case_sensitive = conf_value(spark, "spark.sql.caseSensitive", "false").lower() == "true"
        df, renamed = rename_frame(source, duplicate_names, "DataFrame", case_sensitive)
        ds = Dataset(df, columns_of_dataframe(df, features_col), "DataFrame", extra={"renamed": renamed})
        ds.label_names = label_names
        return ds
    named = split_inputs(source)
    paths = [input_path(spark, p) for p in named]
    fmts = {detect_format(p, spark) if format == "auto" else format for p in paths}
    if len(fmts) > 1:
        raise InputError(f"several inputs must have one format, not {', '.join(sorted(fmts))}: {', '.join(paths)}")
    fmt = fmts.pop()
    path = paths[0]
    if fmt != "delta" and (version is not None or timestamp is not None or where is not None):
        given = [f for f, v in (("--version-as-of", version), ("--timestamp-as-of", timestamp), ("--where", where))
                 if v is not None]
        raise InputError(f"{' and '.join(given)} appl{'y' if len(given) > 1 else 'ies'} to Delta tables and catalog "
                         f"tables; {path} is {fmt}")
    if len(paths) > 1 and fmt not in ("arff", "csv", "parquet"):
        raise InputError(f"several inputs are supported for ARFF, CSV and Parquet files, not {fmt}: {', '.join(paths)}")
    if fmt == "arff":
        from .archive import extract_single
        from .arff.spark import read_arff

        local = [local_copy(spark, p) for p in paths]
        local = [extract_single(p) if p.lower().endswith(".zip") else p for p in local]
        ds = read_arff(spark, local if len(local) > 1 else local[0], targets=targets, label_names=label_names,
                       duplicate_names=duplicate_names)
    elif fmt == "csv":
        ds = _read_csv(spark, paths if len(paths) > 1 else path, duplicate_names)
    elif fmt == "parquet":
        from .parquet import read_parquet

        ds = read_parquet(spark, paths, features_col, duplicate_names)
    elif fmt == "delta":
        from .delta_read import read_delta

        ds = read_delta(spark, path, features_col, version=version, timestamp=timestamp, where=where)
    else:
        ds = read_mat(spark, local_copy(spark, path))
    if label_names:
        ds.label_names = label_names
    ds.source = ", ".join(named)  # the paths the user named (not an extracted archive member)
    return ds


def _read_csv(spark, path, duplicate_names: str) -> Dataset:
    """CSV input read in the driver when it is local and small (:mod:`spark_fr.io.csv_driver`: the same table, no
    Spark job, no JVM), else by Spark (:func:`spark_fr.io.csv.read_csv`)."""
    from .csv_driver import NotPlain, read_csv_driver

    case_sensitive = spark is not None and conf_value(spark, "spark.sql.caseSensitive", "false").lower() == "true"
    try:
        return read_csv_driver(path, duplicate_names=duplicate_names, case_sensitive=case_sensitive)
    except NotPlain as why:
        log.debug("CSV input read by Spark: %s", why)
    from .csv import read_csv

    return read_csv(spark, path, duplicate_names=duplicate_names)


def split_inputs(source) -> list:
    """The input paths: a list as given, or a string split at commas (unless the whole string is a path)."""
    if isinstance(source, (list, tuple)):
        paths = [str(p) for p in source]
        if not paths:
            raise InputError("no input path given")
        return paths
    parts = [p.strip() for p in str(source).split(",")]
    if len(parts) > 1 and all(parts) and not os.path.exists(str(source)):
        return parts
    return [str(source)]


def read_mat(spark, path: str) -> Dataset:
    """Read a MATLAB file with ``input_space`` (X) and ``target_space`` (class vector), as in ReliefE; the class column
    ``class`` is the default target and, for ``--task unsupervised``, not a feature."""
    import scipy.io
    import scipy.sparse as sp

    try:
        mat = scipy.io.loadmat(path)
    except Exception as err:
        raise InputError(f"{path}: not a readable MATLAB file ({str(err).splitlines()[0]})") from None
    if "input_space" not in mat or "target_space" not in mat:
        raise InputError(f"{path}: expected the variables 'input_space' and 'target_space'")
    X = mat["input_space"]
    y = np.asarray(mat["target_space"].todense() if sp.issparse(mat["target_space"]) else mat["target_space"])
    y = y.ravel()
    n, D = X.shape
    if y.size != n:
        raise InputError(f"{path}: target_space has {y.size} values for {n} rows")
    names = [f"x{i + 1}" for i in range(D)]
    classes = np.unique(y)
    labels = [str(int(c)) if float(c).is_integer() else str(c) for c in classes]
    target = pa.array([labels[i] for i in np.searchsorted(classes, y)], pa.string())
    Xc = sp.csr_matrix(X) if sp.issparse(X) else None
    density = (Xc.nnz / max(n * D, 1)) if Xc is not None else 1.0
    if Xc is not None and (density < 0.3 or D > 1000):
        from pyspark.ml.linalg import VectorUDT
        from pyspark.sql import types as T

        from .arff.spark import VECTOR_COLUMN, _vector_array

        Xc.sort_indices()
        vec = _vector_array(Xc.indptr, Xc.indices, Xc.data.astype(np.float64), D)
        table = pa.table({VECTOR_COLUMN: vec, "class": target})
        schema = T.StructType([T.StructField(VECTOR_COLUMN, VectorUDT()), T.StructField("class", T.StringType())])
        df = _arrow_to_df(spark, table, schema)
        cols = [ColumnInfo(nm, "numeric", None, VECTOR_COLUMN, i) for i, nm in enumerate(names)]
        cols.append(ColumnInfo("class", "nominal", labels, "class"))
    else:
        Xd = np.asarray(X.todense() if sp.issparse(X) else X, dtype=np.float64)
        table = pa.table({**{nm: Xd[:, i] for i, nm in enumerate(names)}, "class": target})
        df = spark.createDataFrame(table)
        cols = [ColumnInfo(nm, "numeric", None, nm) for nm in names]
        cols.append(ColumnInfo("class", "nominal", labels, "class"))
    # target_space is the class by the file's layout: unsupervised ranking leaves it out (as scikit-learn's CSVs' class)
    return Dataset(df, cols, path, default_target="class", class_column="class")


def _arrow_to_df(spark, table, schema):
    """A DataFrame from a driver-side Arrow table whose vector column is a Spark ML vector struct.

    ``createDataFrame`` cannot take Arrow structs as vectors, so the batches are shipped in a closure and
    emitted by ``mapInArrow`` (fine for the in-memory sizes a ``.mat`` file holds).
    """
    batches = table.to_batches(max_chunksize=4096)

    def emit(iterator):
        for _ in iterator:
            yield from batches

    return spark.range(1, numPartitions=1).mapInArrow(emit, schema)
