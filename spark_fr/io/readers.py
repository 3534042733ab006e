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

from ..data.schema import ColumnInfo, Dataset, columns_of_dataframe
from ..errors import InputError

log = logging.getLogger(__name__)

FORMATS = ("auto", "arff", "csv", "parquet", "delta", "mat")


def _is_remote(path: str) -> bool:
    return "://" in path and not path.startswith("file://")


def _local_path(path: str) -> str:
    """The file of a ``file://`` URI (checked on the driver as a local path), else ``path``."""
    if path.startswith("file:"):
        from urllib.parse import unquote, urlparse

        return unquote(urlparse(path).path)
    return path


def detect_format(path: str) -> str:
    """Format of ``path`` from its extension or layout ('arff', 'csv', 'parquet', 'delta', 'mat')."""
    p = path.rstrip("/")
    low = p.lower()
    if os.path.isdir(p):
        if os.path.isdir(os.path.join(p, "_delta_log")):
            return "delta"
        if glob.glob(os.path.join(p, "*.parquet")) or glob.glob(os.path.join(p, "*", "*.parquet")):
            return "parquet"
        if glob.glob(os.path.join(p, "*.csv")):
            return "csv"
        raise InputError(f"{path}: cannot tell the format of this directory; pass --format")
    if low.endswith(".zip"):
        return "arff"
    for ext, fmt in ((".arff", "arff"), (".arff.gz", "arff"), (".harff", "arff"), (".harff.gz", "arff"), (".csv", "csv"), (".csv.gz", "csv"),
                     (".tsv", "csv"), (".parquet", "parquet"), (".mat", "mat")):
        if low.endswith(ext):
            return fmt
    raise InputError(f"{path}: unknown file type; pass --format arff|csv|parquet|delta|mat")


def read_dataset(spark, source, *, format: str = "auto", labels_xml: str | None = None, targets=None,
                 features_col: str | None = None) -> Dataset:
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

    Returns
    -------
    Dataset
    """
    if format not in FORMATS:
        raise InputError(f"--format must be one of {', '.join(FORMATS)}, not '{format}'")
    label_names = None
    if labels_xml:
        from .mulan import MulanError, read_label_names

        if not os.path.exists(labels_xml):
            raise InputError(f"label file not found: {labels_xml}")
        try:
            label_names = read_label_names(labels_xml)
        except MulanError as err:
            raise InputError(str(err)) from None
    if isinstance(targets, str):
        targets = [t.strip() for t in targets.split(",") if t.strip()]
    if not isinstance(source, (str, list, tuple)):
        ds = Dataset(source, columns_of_dataframe(source, features_col), "DataFrame")
        ds.label_names = label_names
        return ds
    paths = split_inputs(source)
    for p in paths:
        if not _is_remote(p) and not os.path.exists(_local_path(p)):
            raise InputError(f"input not found: {p}")
    fmts = {detect_format(p) if format == "auto" else format for p in paths}
    if len(fmts) > 1:
        raise InputError(f"several inputs must have one format, not {', '.join(sorted(fmts))}: {', '.join(paths)}")
    fmt = fmts.pop()
    path = paths[0]
    if len(paths) > 1 and fmt not in ("arff", "csv", "parquet"):
        raise InputError(f"several inputs are supported for ARFF, CSV and Parquet files, not {fmt}: {', '.join(paths)}")
    if fmt == "arff":
        from .archive import extract_single
        from .arff.spark import read_arff

        local = [extract_single(p) if p.lower().endswith(".zip") else p for p in paths]
        ds = read_arff(spark, local if len(local) > 1 else local[0], targets=targets, label_names=label_names)
    elif fmt == "csv":
        from .csv import read_csv

        ds = read_csv(spark, paths if len(paths) > 1 else path)
    elif fmt == "parquet":
        from .parquet import read_parquet

        ds = read_parquet(spark, paths, features_col)
    elif fmt == "delta":
        ds = read_delta(spark, path, features_col)
    else:
        ds = read_mat(spark, path)
    if label_names:
        ds.label_names = label_names
    ds.source = ", ".join(paths)  # the paths the user named (not an extracted archive member)
    return ds


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


def read_delta(spark, path: str, features_col: str | None = None) -> Dataset:
    """Read the current snapshot of a Delta table (through ``deltalake``: Spark here has no Delta jars)."""
    from deltalake import DeltaTable

    try:
        dt = DeltaTable(path)
    except Exception as err:  # deltalake raises its own error types
        raise InputError(f"{path}: not a readable Delta table ({str(err).splitlines()[0]})") from None
    features = set(getattr(dt.protocol(), "reader_features", None) or [])
    unsupported = features & {"deletionVectors", "columnMapping"}
    if unsupported:
        raise InputError(f"{path}: Delta reader feature(s) {', '.join(sorted(unsupported))} are not supported "
                         f"without Spark's Delta jars")
    uris = dt.file_uris()
    if not uris:
        raise InputError(f"{path}: the input has no rows")
    df = spark.read.option("basePath", path).parquet(*uris)
    return Dataset(df, columns_of_dataframe(df, features_col), path)


def read_mat(spark, path: str) -> Dataset:
    """Read a MATLAB file with ``input_space`` (X) and ``target_space`` (class vector), as in ReliefE."""
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
    return Dataset(df, cols, path, default_target="class")


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
