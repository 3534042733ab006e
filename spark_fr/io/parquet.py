"""Reading Parquet inputs: every file's footer is checked on the driver before Spark reads any data.

Sketch
------
* **Files.** Each input is a file or a directory; a directory's files are the ones Spark reads (names
  starting with ``_`` or ``.`` skipped, partition directories ``key=value`` descended), whatever their
  extension. Spark silently leaves out files next to partition directories and files under a
  subdirectory that is not ``key=value``: both are errors here (:func:`check_layout`).
* **Footers.** Every file's footer (the last few KB, whatever the file's size) is read on the driver and
  parsed with pyarrow, in parallel for many files. A 0-byte file, a file that is not Parquet (no ``PAR1``
  marker), an encrypted file, a truncated or damaged footer, a column type Spark cannot read (nanosecond
  timestamps, 16-bit floats), or a name given twice in one file (compared without case, as Spark does) is
  an error naming the file (and column). Spark would otherwise fail inside a task, with its ERROR log and
  Java stacks, or pick one file's schema and drop or mis-read the others' columns. With
  ``--duplicate-names rename`` a repeated name is renamed instead (:mod:`spark_fr.data.names`) and the files
  are read by position with pyarrow (Spark cannot read them at all).
* **Schemas across files.** Types are compared as the Spark types they read as (``int32`` is ``int``,
  ``large_string`` is ``string``, ...). Decisions:

  - the same columns with the same types in every file (in any order): Spark reads the input as it is
    (nothing changes for well-formed input);
  - a column absent from some files: read as missing values there (as Spark's ``mergeSchema`` does), with
    a warning naming the column and a file without it;
  - integer columns of different widths (``int32`` / ``int64``): the widest integer; integers, floating
    point and decimals mixed: double. Spark itself fails on these (it takes one file's schema), so the
    files are read in groups of one schema, cast, and unioned by name;
  - any other difference (a number in one file and a string in another, a boolean and an integer, two
    names differing only in case) is an error naming the column, two files and their types.
* **Metadata in the footers.** A pandas index stored as a column (``__index_level_0__``, declared by the
  file's ``pandas`` metadata) is not a feature: the columns any file declares as an index without a name of its
  own are left out, with one log line (:mod:`spark_fr.data.schema` states the rule; a named index is an ordinary
  column). Columns whose Spark ML attribute Spark wrote into the footer (a ``StringIndexer`` label written by
  Spark) are read through Spark, which restores the attribute, so a label is typed the same way from the file
  as from the DataFrame that was written.
"""
from __future__ import annotations

import functools
import json
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from functools import reduce

import pyarrow as pa
import pyarrow.parquet as pq

from ..data.columns import qcol
from ..data.names import deduplicate
from ..data.schema import ColumnInfo, Dataset, columns_of_dataframe, pandas_index_columns
from ..data.source import BatchSource
from ..errors import InputError, one_line
from ..runtime.session import conf_value
from .files import DataFile, data_files, is_uri, read_range

log = logging.getLogger(__name__)

MAGIC = b"PAR1"
TAIL_BYTES = 1 << 16  # read at once from the end of a file: the footer of all but the widest tables
INTEGERS = ("tinyint", "smallint", "int", "bigint")
#: footer metadata: pandas' description of the frame, Spark's schema (with its fields' metadata)
PANDAS_KEY, SPARK_SCHEMA_KEY = b"pandas", b"org.apache.spark.sql.parquet.row.metadata"
#: the Spark types of the merged numeric types (pyspark is imported when Spark reads: not for the driver's read)
_SPARK_SIMPLE = {"tinyint": "ByteType", "smallint": "ShortType", "int": "IntegerType", "bigint": "LongType",
                 "double": "DoubleType"}


@functools.lru_cache(maxsize=1024)
def spark_type(t: pa.DataType) -> str:
    """The Spark SQL type (``simpleString``) a Parquet column of Arrow type ``t`` is read as (remembered per type: a
    wide table's 20,000 columns have a handful of types).

    Unsigned integers read as the next wider signed type (``uint64`` as ``decimal(20,0)``), dictionary
    columns as their values, a column of nulls only (pandas' all-None column) as ``void`` (it merges with
    any type). Types without a simple Spark counterpart keep Arrow's name, so they only match themselves.
    """
    if pa.types.is_dictionary(t):
        t = t.value_type
    simple = [(pa.types.is_null, "void"), (pa.types.is_int8, "tinyint"), (pa.types.is_int16, "smallint"),
              (pa.types.is_int32, "int"), (pa.types.is_int64, "bigint"), (pa.types.is_uint8, "smallint"),
              (pa.types.is_uint16, "int"), (pa.types.is_uint32, "bigint"), (pa.types.is_uint64, "decimal(20,0)"),
              (pa.types.is_float16, "halffloat"), (pa.types.is_float32, "float"), (pa.types.is_float64, "double"),
              (pa.types.is_boolean, "boolean"), (pa.types.is_string, "string"), (pa.types.is_large_string, "string"),
              (pa.types.is_binary, "binary"), (pa.types.is_large_binary, "binary"),
              (pa.types.is_fixed_size_binary, "binary"), (pa.types.is_date, "date")]
    for test, name in simple:
        if test(t):
            return name
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_timestamp(t):
        return "timestamp" if t.tz else "timestamp_ntz"
    return str(t)


def is_numeric(name: str) -> bool:
    """Whether a Spark type name is a number (integer, floating point or decimal)."""
    return name in INTEGERS or name in ("float", "double") or name.startswith("decimal(")


def merge_type(a: str, b: str) -> str | None:
    """The type two files' versions of a column are read as together, or None if they conflict."""
    if a == b:
        return a
    if a == "void" or b == "void":
        return b if a == "void" else a
    if a in INTEGERS and b in INTEGERS:
        return max(a, b, key=INTEGERS.index)
    if is_numeric(a) and is_numeric(b):
        return "double"
    return None


class Footer:
    """One file's footer: the input path it came from, the file, its Arrow schema and Spark types.

    ``names`` are the file's column names in order, unique once :func:`check_footer` has renamed repeats
    (``renamed``); ``types`` maps them to their Spark types; ``metadata`` is the parsed footer (None when only the
    schema was given).
    """

    def __init__(self, source: str, file: DataFile, schema: pa.Schema, metadata: pq.FileMetaData | None = None):
        self.source, self.file, self.schema = source, file, schema
        self.metadata = metadata  # the parsed footer (row groups): pyarrow reads the file without parsing it again
        self.renamed: list = []
        self.names = list(schema.names)
        self.types = {f.name: spark_type(f.type) for f in schema}

    def rename(self, names: list, renamed: list) -> None:
        """Give the columns the unique ``names`` (same order)."""
        self.names, self.renamed = list(names), list(renamed)
        self.types = {n: spark_type(f.type) for n, f in zip(self.names, self.schema)}


def read_footer(spark, file: DataFile) -> pa.Schema:
    """The Arrow schema in a Parquet file's footer, reading only the footer's bytes (:func:`parse_footer`)."""
    return parse_footer(spark, file)[0]


def parse_footer(spark, file: DataFile) -> tuple:
    """A Parquet file's footer, parsed once from only its bytes: (its Arrow schema, its ``FileMetaData``: the row
    groups, what :class:`ParquetSource` opens the file with without parsing the footer again; 20,000 columns take
    0.1-0.2 s a parse).

    Raises
    ------
    InputError
        The file is empty, not Parquet, encrypted, truncated, or its footer cannot be parsed.
    """
    path, size = file.path, file.size
    if size == 0:
        raise InputError(f"{path}: the file is empty (0 bytes), not a Parquet file")
    tail = read_range(spark, path, max(size - TAIL_BYTES, 0), TAIL_BYTES)  # usually the whole footer
    if tail[-4:] == b"PARE":
        raise InputError(f"{path}: an encrypted Parquet file; spark_fr reads only unencrypted Parquet")
    if size < 12 or tail[-4:] != MAGIC:
        head = read_range(spark, path, 0, 4)
        where = "start" if head != MAGIC else "end"
        raise InputError(f"{path}: not a Parquet file (no '{MAGIC.decode()}' marker at its {where}"
                         f"{'; truncated?' if where == 'end' else ''})")
    length = int.from_bytes(tail[-8:-4], "little")
    if length <= 0 or length + 12 > size:
        raise InputError(f"{path}: damaged Parquet file (its footer claims {length} bytes of a {size}-byte file)")
    footer = tail[-(length + 8):] if length + 8 <= len(tail) else read_range(spark, path, size - 8 - length,
                                                                              length + 8)
    try:
        parsed = pq.ParquetFile(pa.BufferReader(MAGIC + footer))
        return parsed.schema_arrow, parsed.metadata  # the schema: what pq.read_schema returns (computed per call)
    except Exception as err:  # pyarrow raises several error types for damaged metadata
        raise InputError(f"{path}: damaged Parquet footer ({one_line(err)})") from None


def pandas_index(schema: pa.Schema) -> list:
    """The columns a file's pandas metadata declares as an index without a name of its own: an unnamed index, or
    one named like a column (stored as ``__index_level_N__`` both times); [] without (readable) pandas metadata."""
    try:
        meta = json.loads((schema.metadata or {}).get(PANDAS_KEY) or b"{}")
        described = {c.get("field_name"): c.get("name") for c in meta.get("columns") or () if isinstance(c, dict)}
        index = [e for e in meta.get("index_columns") or () if isinstance(e, str)]  # a RangeIndex is a dict
    except (ValueError, AttributeError, TypeError):  # metadata another writer filled differently: nothing declared
        return []
    return [e for e in index if e in schema.names and described.get(e, None) != e]


def spark_attributes(schema: pa.Schema) -> bool:
    """Whether Spark wrote ML attribute metadata (``ml_attr``) of some column into the file's footer."""
    return b'"ml_attr"' in ((schema.metadata or {}).get(SPARK_SCHEMA_KEY) or b"")


#: Spark types whose Arrow types Spark always reads (no unit or width to check)
_READABLE = frozenset({"tinyint", "smallint", "int", "bigint", "float", "double", "boolean", "string", "binary",
                       "date", "void"})


def check_footer(footer: Footer, case_sensitive: bool = False, duplicate_names: str = "error") -> None:
    """Names given twice (unless ``duplicate_names='rename'``: the repeats are renamed, :mod:`spark_fr.data.names`)
    and column types Spark cannot read are errors naming the file and column."""
    names, renamed = deduplicate(footer.schema.names, duplicate_names, source=footer.file.path,
                                 case_sensitive=case_sensitive)
    if renamed:
        footer.rename(names, renamed)
    for name, f in zip(footer.names, footer.schema):
        if footer.types[name] in _READABLE:
            continue
        t = f.type.value_type if pa.types.is_dictionary(f.type) else f.type
        if pa.types.is_timestamp(t) and t.unit == "ns":
            raise InputError(f"{footer.file.path}: column '{name}' holds nanosecond timestamps, which Spark "
                             f"cannot read; write them in microseconds (pandas: to_parquet(..., "
                             f"coerce_timestamps='us', allow_truncated_timestamps=True))")
        if pa.types.is_float16(t):
            raise InputError(f"{footer.file.path}: column '{name}' holds 16-bit floats, which Spark cannot "
                             f"read; write it as float32 or float64")


def merge_schemas(footers: list, case_sensitive: bool = False):
    """The columns of all files: order, merged type per column, and the files lacking each column.

    Returns
    -------
    order : list of str
        The first file's columns, then columns of later files in the order they appear.
    merged : dict
        Column name -> Spark type name.
    missing : dict
        Column name -> files (paths) that do not have it (only columns some file lacks).

    Raises
    ------
    InputError
        Two types that cannot be merged, or two names that differ only in case.
    """
    order, merged, first = [], {}, {}
    lower = {}
    for ft in footers:
        for name, t in ft.types.items():
            key = name if case_sensitive else name.lower()
            if key in lower and lower[key] != name:
                other = lower[key]
                raise InputError(f"{ft.file.path}: column '{name}' is '{other}' in {first[other].file.path} "
                                 f"(names differ only in case; every file must use the same names)")
            if name not in merged:
                order.append(name)
                merged[name], first[name], lower[key] = t, ft, name
                continue
            m = merge_type(merged[name], t)
            if m is None:
                prev = next(f for f in footers if merge_type(f.types.get(name, "void"), t) is None)
                raise InputError(f"{ft.file.path}: column '{name}' is {t} here but {prev.types[name]} in "
                                 f"{prev.file.path}; every file must give a column one kind of value")
            merged[name] = m
    missing = {n: [ft.file.path for ft in footers if n not in ft.types] for n in order}
    return order, merged, {n: fs for n, fs in missing.items() if fs}


def check_layout(source: str, files: list, subdirs: list) -> None:
    """A Parquet directory holds files, or partition directories ``key=value`` (recursively), not both.

    Spark reads only the files of the partition directories when there are some, else only the files at
    the top: a file next to partition directories, or under a subdirectory that is not ``key=value``,
    would be silently left out. Both are errors naming the file's directory.
    """
    if not subdirs:
        return
    parent = {d: d.rstrip("/").rsplit("/", 1)[0] for d in subdirs}
    holding = {}  # directory -> holds files (anywhere below)
    for f in files:
        d = f.path.rsplit("/", 1)[0]
        while d in parent:
            holding[d] = True
            d = parent[d]
    for d in subdirs:
        if holding.get(d) and "=" not in d.rstrip("/").rsplit("/", 1)[-1]:
            raise InputError(f"{d}: a subdirectory of the Parquet input {source} that is not a partition directory "
                             f"(key=value); Spark would not read its files; give it as an input of its own")
    with_partitions = {parent[d] for d in subdirs if holding.get(d)}
    for f in files:
        d = f.path.rsplit("/", 1)[0]
        if d in with_partitions:
            raise InputError(f"{f.path}: a Parquet file next to partition directories (key=value) in {d}; Spark "
                             f"would read only one of them; move it into a partition directory")


def parquet_footers(spark, paths: list) -> list:
    """The checked footers of every file of ``paths`` (files or directories), in order."""
    entries = []
    for p in paths:
        files, subdirs = data_files(spark, p)
        if not files:
            raise InputError(f"{p}: no Parquet files in this directory")
        check_layout(p, files, subdirs)
        entries.extend((p, f) for f in files)

    def one(entry):
        return Footer(entry[0], entry[1], *parse_footer(spark, entry[1]))

    if len(entries) > 8:
        with ThreadPoolExecutor(max_workers=8) as pool:
            return list(pool.map(one, entries))
    return [one(e) for e in entries]


def read_parquet(spark, paths, features_col: str | None = None, duplicate_names: str = "error") -> Dataset:
    """Read one or several Parquet files or directories as a :class:`Dataset`, after checking every footer.

    Parameters
    ----------
    spark : SparkSession
    paths : str or list of str
    features_col : str, optional
        A vector column holding the features.
    duplicate_names : {'error', 'rename'}
        A file naming a column twice: an error, or the repeat renamed (:mod:`spark_fr.data.names`;
        ``extra['renamed']`` lists the renamings). Spark cannot read such a file at all, so renamed files are
        read with pyarrow, by position (:class:`ParquetSource`: local files without partition directories);
        other inputs with a repeated name stay an error that says so.

    Returns
    -------
    Dataset
        No DataFrame when pyarrow reads the files (local files without partition directories, nested columns,
        Spark's column attributes or ``features_col``: ``batches`` is their :class:`ParquetSource`), else
        Spark's; ``extra['pandas_index']`` names the pandas index columns, ``extra['renamed']`` the renamings.

    Raises
    ------
    InputError
        A file that is not readable Parquet, or files whose schemas cannot be merged (one line naming the
        file and column).
    """
    paths = [paths] if isinstance(paths, str) else list(paths)
    case_sensitive = conf_value(spark, "spark.sql.caseSensitive", "false").lower() == "true"
    footers = parquet_footers(spark, paths)
    for ft in footers:
        check_footer(ft, case_sensitive, duplicate_names)
    order, merged, missing = merge_schemas(footers, case_sensitive)
    for name, files in missing.items():
        log.warning("Parquet column '%s' is not in %d of %d files (e.g. %s): read as missing values there",
                    name, len(files), len(footers), files[0])
    direct = ParquetSource.for_footers(footers, order, merged, features_col)
    renamed = [r for ft in footers for r in ft.renamed]
    declared = sorted({n for ft in footers for n in pandas_index(ft.schema)})
    if direct is not None:
        index = pandas_index_columns(order, declared)
        return Dataset(None, direct.column_infos(index), paths[0], batches=direct,
                       skipped_columns=direct.skipped(index), extra={"renamed": renamed, "pandas_index": index})
    if renamed:
        ft = next(ft for ft in footers if ft.renamed)
        r = ft.renamed[0]
        raise InputError(f"{ft.file.path}: duplicate column name '{r.name}' (columns {r.first + 1} and "
                         f"{r.position + 1}): Spark cannot read a Parquet file naming a column twice, and "
                         f"--duplicate-names rename reads one only as a local file without partition directories, "
                         f"nested columns or --features-col; copy it to local disk or rewrite it with unique names")
    if all(ft.types == footers[0].types for ft in footers):
        df = _spark_read(lambda: spark.read.parquet(*paths), paths)
    else:
        df = _read_in_groups(spark, footers, order, merged, paths)
    return Dataset(df, columns_of_dataframe(df, features_col, index_columns=declared), paths[0],
                   extra={"pandas_index": declared})


_NUMERIC = ("tinyint", "smallint", "int", "bigint", "float", "double")


class ParquetSource(BatchSource):
    """Local Parquet files read with pyarrow, row group by row group (see :mod:`spark_fr.data.source`).

    Used for local files without partition directories and with plain columns (numbers, strings,
    booleans): Spark's planner and its row-to-Arrow conversion cost minutes on a table of 20,000 columns,
    pyarrow reads it in seconds. Columns take their merged type in every file (a column a file lacks is
    missing there), exactly as Spark reads the files; other inputs go through Spark.

    Parameters
    ----------
    files : list of (path, list of str)
        Each file and the columns it has.
    order : list of str
        The columns, in order.
    merged : dict
        Column -> merged Spark type name.
    names : list of str, optional
        The columns the batches hold (default: all).
    metadata : dict, optional
        {path: parsed footer} (:func:`parse_footer`): the files are opened without parsing their footers again.

    Decision: each file is opened once per process (:meth:`_file`: the footer's ``pyarrow`` objects kept; a
    footer of 20,000 columns costs 0.1-0.2 s to parse, and was parsed four times a run), and a batch that holds
    every column in the order asked for is the row group's own batch, renamed if need be (no 20,000-column
    ``RecordBatch`` rebuilt per batch). The footers are not shipped to Spark tasks: they open the files themselves.
    """

    def __init__(self, files, order, merged, names=None, metadata=None):
        self.files = files  # each file's columns in file order (unique: repeats renamed), read by position
        self.order = list(order)
        self.merged = dict(merged)
        self.names = list(names) if names is not None else list(order)
        self.metadata = dict(metadata or {})
        self._opened = {}  # path -> pq.ParquetFile, shared by the narrowings of one source

    def __getstate__(self):
        return dict(self.__dict__, metadata={}, _opened={})

    @classmethod
    def for_footers(cls, footers, order, merged, features_col=None):
        """The source of checked footers, or None when the input needs Spark (URIs, partitions, other types)."""
        if features_col is not None:
            return None
        for ft in footers:
            local_file = ft.file.path == ft.source or os.path.dirname(ft.file.path) == ft.source.rstrip("/")
            if is_uri(ft.file.path) or not local_file:
                return None
        if any(t.startswith(("struct", "array", "map")) for t in merged.values()):
            return None
        if any(spark_attributes(ft.schema) for ft in footers):  # Spark restores the attributes, pyarrow cannot
            return None
        return cls([(ft.file.path, list(ft.names)) for ft in footers], order, merged,
                   metadata={ft.file.path: ft.metadata for ft in footers if ft.metadata is not None})

    def _kind(self, name: str) -> str | None:
        t = self.merged[name]
        if t in _NUMERIC or t.startswith("decimal"):
            return "numeric"
        if t in ("string", "boolean"):
            return "nominal"
        return None

    def column_infos(self, index=()) -> list:
        """The logical columns: every column of a supported type but the pandas ``index`` columns."""
        index = set(index)
        return [ColumnInfo(n, kind, None, n) for n, kind in zip(self.order, map(self._kind, self.order))
                if kind and n not in index]

    def skipped(self, index=()) -> dict:
        """{name: type} of the columns that are not features: unsupported types and the pandas ``index``."""
        return {n: self.merged[n] for n in self.order if not self._kind(n) or n in index}

    def narrow(self, columns):
        source = ParquetSource(self.files, self.order, self.merged, sorted({c.column for c in columns}), self.metadata)
        source._opened = self._opened
        return source, columns

    def size_estimate(self):
        return sum(os.path.getsize(path) for path, _ in self.files)

    def _file(self, path: str) -> pq.ParquetFile:
        """The file, opened once (with its parsed footer when the source has it)."""
        opened = self._opened.get(path)
        if opened is None:
            opened = self._opened[path] = pq.ParquetFile(path, metadata=self.metadata.get(path))
        return opened

    def _units(self) -> list:
        return [(path, g) for path, _ in self.files for g in range(self._file(path).num_row_groups)]

    def read(self, units, together: bool = False):
        """Arrow batches of some (file, row group) units, with the merged types and every needed column; a file's
        consecutive row groups decoded in one call when ``together`` (all of them held in memory at once)."""
        # each file's column positions (dicts: 20,000 columns are no quadratic scan); read by position, so a
        # file naming a column twice (renamed) reads as well as any other
        position = {path: {n: i for i, n in enumerate(names)} for path, names in self.files}
        for path, groups in _runs_of_groups(units) if together else [(path, [g]) for path, g in units]:
            where = position[path]
            present = [n for n in self.names if n in where]
            # together: a file's row groups in one call, one chunk per row group (the same batches as a call per
            # row group; ~20 % less CPU on 2 row groups of 20,001 columns): the driver's batches, all kept anyway
            opened = self._file(path)
            table = opened.reader.read_row_groups(groups, column_indices=[where[n] for n in present])
            whole = len(present) == len(self.names)
            for batch in _group_batches(table, [opened.metadata.row_group(g).num_rows for g in groups]):
                if whole:  # every column, in the order asked for: the batch itself, under the names asked for
                    yield batch if batch.schema.names == self.names else batch.rename_columns(self.names)
                    continue
                at = {n: i for i, n in enumerate(present)}  # the batch's columns, in the order asked for
                arrays = [batch.column(at[n]) if n in at else pa.nulls(batch.num_rows) for n in self.names]
                yield pa.RecordBatch.from_arrays(arrays, names=self.names)

    def driver_batches(self):
        return list(self.read(self._units(), together=True))

    def map(self, spark, fn):
        from ..runtime.engine import engine_for

        units = self._units()
        engine = engine_for(spark)
        slices = max(1, min(len(units), 4 * engine.parallelism()))
        return engine.from_units(units, lambda us: fn(self.read(us)), slices)


def _group_batches(table, group_rows):
    """The record batches of a table read from row groups of ``group_rows`` rows: each row group's rows in batches
    of at most 10,000, as when each is read by itself (pyarrow merges the chunks of row groups read together)."""
    start = 0
    for rows in group_rows:
        yield from table.slice(start, rows).to_batches(max_chunksize=10_000)
        start += rows


def _runs_of_groups(units):
    """``(path, [row groups])`` for each run of consecutive units of one file, in order."""
    runs = []
    for path, group in units:
        if runs and runs[-1][0] == path:
            runs[-1][1].append(group)
        else:
            runs.append((path, [group]))
    return runs


def _spark_read(read, paths):
    from pyspark.errors import AnalysisException

    try:
        return read()
    except AnalysisException as err:
        raise InputError(f"{', '.join(paths)}: Spark cannot read this Parquet input ({one_line(err)})") from None


def _read_in_groups(spark, footers, order, merged, paths):
    """Files of one schema read together, columns cast to the merged types and unioned by name."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    groups = {}
    for ft in footers:
        key = (ft.source, frozenset(ft.types.items()))
        groups.setdefault(key, []).append(ft)
    frames = []
    for (source, _), fts in groups.items():
        reader = spark.read
        if any(ft.file.path != source for ft in fts):  # a directory: keep its partition columns
            reader = reader.option("basePath", source)
        frames.append((fts[0].types, _spark_read(lambda: reader.parquet(*[ft.file.path for ft in fts]), paths)))
    columns = list(order) + [c for _, df in frames for c in df.columns if c not in merged]
    columns = list(dict.fromkeys(columns))
    target = {}
    for c in columns:
        same = [df.schema[c].dataType for types, df in frames if c in df.columns and types.get(c, None) in
                (merged.get(c), None)]
        target[c] = same[0] if same else getattr(T, _SPARK_SIMPLE[merged[c]])()
    parts = []
    for _, df in frames:
        cols = []
        for c in columns:
            if c not in df.columns:
                cols.append(F.lit(None).cast(target[c]).alias(c))
            elif df.schema[c].dataType != target[c]:
                cols.append(qcol(c).cast(target[c]).alias(c))
            else:
                cols.append(qcol(c))
        parts.append(df.select(*cols))
    log.info("Parquet files with %d different schemas: read in groups and merged by column name", len(parts))
    return _spark_read(lambda: reduce(lambda a, b: a.unionByName(b), parts), paths)
