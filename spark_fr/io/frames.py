"""Reading a pandas DataFrame: its columns as Arrow batches on the driver, no Spark job and no JVM for small frames.

Sketch
------
    frame   <- a pandas DataFrame (column names: strings; repeats refused or renamed, --duplicate-names)
    table   <- pyarrow.Table.from_pandas, without the index (an index is not data: spark_fr.data.schema)
    kinds   <- numbers (integers, floats, decimals; pandas' nullable ones too) are numeric features,
               strings, booleans and categoricals (their values as strings) nominal ones; other types (dates,
               times, lists) are no features and are listed like a DataFrame's unsupported columns
    source  <- :class:`ArrowSource`: the table's batches on the driver (``driver_batches``), or, for a frame
               above prepare's ``local_limit`` (512 MB of Arrow data), a Spark DataFrame made from the table
               and read by Spark tasks (``map``: the session is asked for only then)

Decisions
---------
* Only a pandas frame is read here: ``rank()`` takes a table with named columns (the scikit-learn selector,
  :mod:`spark_fr.sklearn`, names a NumPy array's columns ``x0, x1, ...`` itself, as scikit-learn does).
* A column that pyarrow cannot type (an ``object`` column mixing numbers and strings) is a one-line error naming
  the column, before any work: spark_fr does not guess which values were meant.
* Names are compared exactly (a pandas frame tells ``A`` from ``a``).
"""
from __future__ import annotations

import pyarrow as pa

from ..data.names import deduplicate
from ..data.schema import ColumnInfo, Dataset
from ..data.source import BatchSource
from ..errors import InputError, one_line

#: rows per Arrow batch handed to the passes
BATCH_ROWS = 10_000


def is_pandas_frame(data) -> bool:
    """Whether ``data`` is a pandas DataFrame (without importing pandas when nobody did)."""
    import sys

    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(data, pd.DataFrame)


def column_kind(t: pa.DataType) -> str | None:
    """'numeric', 'nominal', or None (no feature) for a column of Arrow type ``t``."""
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
        return "numeric"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_boolean(t):
        return "nominal"
    return None


def frame_table(frame, duplicate_names: str = "error") -> tuple:
    """(the frame's columns as an Arrow table, the renamings): the index left out, repeats renamed or refused, categoricals as strings,
    float16 as float32, unsigned 64-bit integers as floats.

    Raises
    ------
    InputError
        A column name that is not a string, a name given twice, or a column pyarrow cannot type.
    """
    bad = [c for c in frame.columns if not isinstance(c, str)]
    if bad:
        raise InputError(f"DataFrame column names must be strings, not {type(bad[0]).__name__} {bad[0]!r}; "
                         f"rename the columns (df.columns = [str(c) for c in df.columns])")
    names, renamed = deduplicate(list(frame.columns), duplicate_names, source="DataFrame")
    arrays = []
    for i, name in enumerate(frame.columns):
        values = frame.iloc[:, i]
        try:
            arr = pa.Array.from_pandas(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as err:
            raise InputError(f"DataFrame column '{name}': values of several types, which spark_fr cannot read as "
                             f"one column ({one_line(err)}); convert it to numbers or to strings") from None
        arrays.append(_plain(arr))
    return pa.Table.from_arrays(arrays, names=names), renamed


def _plain(arr: pa.Array) -> pa.Array:
    """A dictionary (categorical) column as its values' strings; float16 as float32; uint64 as float64."""
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(pa.string()) if pa.types.is_string(arr.type.value_type) else \
            pa.array([None if v is None else str(v) for v in arr.to_pylist()], pa.string())
    if pa.types.is_float16(arr.type):
        arr = arr.cast(pa.float32())
    if pa.types.is_uint64(arr.type):
        arr = arr.cast(pa.float64())
    return arr


def read_frame(frame, duplicate_names: str = "error") -> Dataset:
    """A pandas DataFrame as a :class:`Dataset` read from the driver (module sketch).

    Parameters
    ----------
    frame : pandas.DataFrame
    duplicate_names : {'error', 'rename'}

    Returns
    -------
    Dataset
        No Spark DataFrame: ``batches`` is an :class:`ArrowSource` of the frame's columns.
    """
    table, renamed = frame_table(frame, duplicate_names)
    kinds = {f.name: column_kind(f.type) for f in table.schema}
    columns = [ColumnInfo(n, k, None, n) for n, k in kinds.items() if k is not None]
    skipped = {f.name: str(f.type) for f in table.schema if kinds[f.name] is None}
    return Dataset(None, columns, "DataFrame", batches=ArrowSource(table), skipped_columns=skipped,
                   extra={"renamed": renamed})


class ArrowSource(BatchSource):
    """An Arrow table held by the driver as a batch source (see :mod:`spark_fr.data.source`)."""

    def __init__(self, table: pa.Table, batch_rows: int = BATCH_ROWS):
        self.table = table
        self.batch_rows = batch_rows

    def narrow(self, columns):
        names = list(dict.fromkeys(c.column for c in columns))
        return type(self)(self.table.select(names), self.batch_rows), columns

    def size_estimate(self):
        return int(self.table.nbytes)

    def driver_batches(self):
        return self.table.to_batches(max_chunksize=self.batch_rows)

    def map(self, spark, fn):
        """Spark tasks over the table as a Spark DataFrame (a frame too large for the driver's passes)."""
        from ..runtime.engine import engine_for, session_of

        session = session_of(spark)
        return engine_for(session).from_frame(session.createDataFrame(self.table), fn)
