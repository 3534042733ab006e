"""Reading an ARFF file into a Spark DataFrame: header on the driver, data rows parsed in parallel.

Sketch
------
* The header (attributes, nominal domains, Clus ``hierarchical`` type) is streamed on the driver by
  :func:`spark_fr.io.arff.read_header`.
* ``spark.read.text`` splits the file into partitions; a ``mapInArrow`` function drops the header lines
  (``@relation/@attribute/@data``; comments and blank lines are skipped by the row parser) and parses
  the rest with :class:`spark_fr.io.arff.ArffRowParser`.
* Dense files with up to ``WIDE_FEATURES`` features become one column per attribute (internal names
  ``_c0, _c1, ...``; numeric -> double, others -> string). Sparse files, and dense files with more
  features, keep the features in one Spark ML vector column ``features`` (sparse rows stay sparse;
  nominal features store their domain index) and only the targets as ordinary columns.
* A Clus ``hierarchical`` class attribute (HMLC) is kept as a string column (the '@'-joined label paths of
  each row) and is the default target; its hierarchy is parsed from the header
  (:class:`spark_fr.hierarchy.Hierarchy`), and encoding turns the column into the 0/1 label matrix closed
  under ancestors.
* A gzip-compressed file (name ending in ``.gz``) is decompressed by Spark's text reader (one task per
  file); the driver reads its header through :mod:`gzip` and checks the whole stream first.
* A malformed line does not fail the Spark job: its batch yields one row with the ``_error`` column set
  (reason and raw line). The statistics pass collects these, and the driver finds the earliest one's line
  number by streaming the file (error path only).
"""
from __future__ import annotations

import logging
import os

import numpy as np
import pyarrow as pa

from ...data.schema import ColumnInfo, Dataset
from ...data.source import BatchSource, FrameSource
from ...errors import InputError
from .errors import ArffError, ArffLineError, format_line_error
from .header import read_header
from .parser import ArffRowParser
from .plain import byte_ranges, data_offset, read_range, text_lines
from .source import check_gzip, find_line_number, is_gzip_name, open_text

log = logging.getLogger(__name__)

WIDE_FEATURES = 1000
VECTOR_COLUMN = "features"
ERROR_COLUMN = "_error"
_SEP = "\x00"

_VECTOR_ARROW = pa.struct([
    pa.field("type", pa.int8(), nullable=False),
    pa.field("size", pa.int32()),
    pa.field("indices", pa.list_(pa.field("element", pa.int32(), nullable=False))),
    pa.field("values", pa.list_(pa.field("element", pa.float64(), nullable=False))),
])


def _is_header_line(line: str) -> bool:
    s = line.lstrip()
    if not s.startswith("@"):
        return False
    word = s[1:10].lower()
    return word.startswith(("relation", "attribute", "data"))


def _column_arrays(parsed, attr_indices, kinds):
    arrays = []
    for i in attr_indices:
        if kinds[i] == "numeric":
            arrays.append(parsed.numeric_arrow(i))
        else:
            arrays.append(pa.array(parsed.nominal[i], type=pa.string()))
    return arrays


def _vector_array(indptr, indices, values, size):
    offsets = pa.array(np.asarray(indptr, np.int32))
    idx = pa.ListArray.from_arrays(offsets, pa.array(np.asarray(indices, np.int32), pa.int32()))
    val = pa.ListArray.from_arrays(offsets, pa.array(np.asarray(values, np.float64), pa.float64()))
    n = len(indptr) - 1
    return pa.StructArray.from_arrays(
        [pa.array(np.zeros(n, np.int8), pa.int8()), pa.array(np.full(n, size, np.int32), pa.int32()),
         idx.cast(_VECTOR_ARROW.field("indices").type), val.cast(_VECTOR_ARROW.field("values").type)],
        fields=list(_VECTOR_ARROW))


def _parse_partition(batches, parser, plain_attrs, kinds, vector_attrs, schema):
    for batch in batches:
        yield from _parse_lines(batch.column(0).to_pylist(), parser, plain_attrs, kinds, vector_attrs, schema)


def _parse_lines(lines, parser, plain_attrs, kinds, vector_attrs, schema):
    """The batch of parsed rows of some data lines (header lines dropped; none for no row), or its error batch."""
    lines = [ln for ln in lines if ln is not None and not _is_header_line(ln)]
    if not lines:
        return
    try:
        if vector_attrs:
            sp = parser.parse_lines_sparse(lines, vector_attrs)
            arrays = [_vector_array(sp.indptr, sp.indices, sp.values, len(vector_attrs))]
            arrays += _column_arrays(sp.other, plain_attrs, kinds)
            n = sp.n_rows
        else:
            parsed = parser.parse_lines(lines)
            arrays = _column_arrays(parsed, plain_attrs, kinds)
            n = parsed.n_rows
    except ArffLineError as err:
        yield _error_batch(err, schema, len(vector_attrs))
        return
    if n:
        yield _rows_batch(arrays, n, schema)


def _parse_text(text, parser, plain_attrs, kinds, vector_attrs, schema):
    """The batches of a chunk of whole data lines (bytes, :mod:`spark_fr.io.arff.plain`): read by pyarrow's CSV
    reader as it is when it is plain dense rows and no feature vector is made, else its lines parsed as a batch of
    lines is (:func:`_parse_lines`: the same rows, or the error batch)."""
    parsed = None if vector_attrs else parser.parse_plain(text)
    if parsed is None:
        yield from _parse_lines(text_lines(text), parser, plain_attrs, kinds, vector_attrs, schema)
        return
    yield _rows_batch(_column_arrays(parsed, plain_attrs, kinds), parsed.n_rows, schema)


def _rows_batch(arrays, n, schema):
    """The batch of ``n`` parsed rows: their columns' ``arrays`` and a null parse error."""
    return pa.RecordBatch.from_arrays([*arrays, pa.nulls(n, pa.string())], schema=schema)


def _error_batch(err, schema, vector_size):
    """One row standing for a batch with a malformed line: ``_error`` holds the reason and the raw line.

    The other columns are null, except the vector column, which holds an empty vector: Spark's
    vector struct has non-nullable fields, and a null there fails the Arrow conversion in the JVM
    (with an internal message) before the error can reach the driver.
    """
    arrays = []
    for f in list(schema)[:-1]:
        if f.name == VECTOR_COLUMN:
            arrays.append(_vector_array(np.zeros(2, np.int32), [], [], vector_size))
        else:
            arrays.append(pa.nulls(1, f.type))
    arrays.append(pa.array([err.reason + _SEP + err.line_text], pa.string()))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def read_arff(spark, path, targets=None, label_names=None, duplicate_names: str = "error") -> Dataset:
    """Read an ARFF file (or several with the same attributes) as a :class:`Dataset`.

    Parameters
    ----------
    spark : SparkSession
    path : str or list of str
        One file, or several whose headers declare the same attributes (e.g. a labelled file and an
        unlabelled one for semi-supervised ranking); their rows are read together.
    targets : list of str, optional
        Target attributes (they stay ordinary columns when the features go into a vector column).
    label_names : list of str, optional
        Mulan labels (targets when ``targets`` is not given).
    duplicate_names : {'error', 'rename'}
        An attribute name declared twice: an error, or the repeat renamed (:mod:`spark_fr.data.names`;
        ``extra['renamed']`` lists the renamings).

    Returns
    -------
    Dataset
    """
    paths = [path] if isinstance(path, str) else list(path)
    path = paths[0]
    header, data_lines = _read_headers(paths, duplicate_names)
    attrs = header.attributes
    names = [a.name for a in attrs]
    kinds = ["numeric" if a.kind == "numeric" else "string" for a in attrs]
    hierarchical = [a.name for a in attrs if a.kind == "hierarchical"]
    target_set = set(targets or label_names or hierarchical[:1] or ([names[-1]] if names else []))
    feature_attrs = [i for i, a in enumerate(attrs) if a.name not in target_set]
    use_vector = bool(header.sparse) or len(feature_attrs) > WIDE_FEATURES
    # string, date and hierarchical attributes are never features: they stay plain columns (skipped below)
    vector_attrs = [i for i in feature_attrs if attrs[i].kind in ("numeric", "nominal")] if use_vector else []
    plain_attrs = [i for i in range(len(attrs)) if i not in set(vector_attrs)]
    fields, arrow_schema = _schemas(use_vector, plain_attrs, kinds)
    columns, hierarchy, skipped = _columns(path, attrs, plain_attrs, vector_attrs)
    if skipped:
        log.warning("%s: attributes of type string or date are not features: %s", path,
                    ", ".join(skipped[:10]) + (" ..." if len(skipped) > 10 else ""))

    parser = ArffRowParser(header)

    def parse(batches):
        return _parse_partition(batches, parser, plain_attrs, kinds, vector_attrs, arrow_schema)

    def parse_text(text):
        return _parse_text(text, parser, plain_attrs, kinds, vector_attrs, arrow_schema)

    def make_df(spark_):
        text = spark_.read.text(paths if len(paths) > 1 else path)
        return text.mapInArrow(parse, _spark_schema(fields))

    batches = ArffBatches(paths, data_lines, parse, make_df, [name for name, _ in fields], parse_text)
    return Dataset(None, columns, ", ".join(paths), label_names=label_names, default_target=_default_target(attrs),
                   error_column=ERROR_COLUMN, hierarchy=hierarchy,
                   extra={"locate_error": _locator(paths, data_lines), "arff_header": header, "open_text": open_text,
                          "renamed": list(header.renamed)}, batches=batches,
                   skipped_columns={n: "string" for n in skipped})


def _read_headers(paths: list, duplicate_names: str) -> tuple:
    """(the first file's header, {path: the line of its ``@data``}): every file must declare the same attributes; a
    truncated ``.gz`` is refused here (Spark would fail on it with an internal error)."""
    try:
        header = read_header(paths[0], duplicate_names)
        data_lines = {paths[0]: header.data_line}
        for other in paths[1:]:
            h = read_header(other, duplicate_names)
            _check_same_attributes(paths[0], header, other, h)
            data_lines[other] = h.data_line
        for p in paths:
            check_gzip(p)
    except ArffError as err:
        raise InputError(str(err)) from None
    return header, data_lines


def _schemas(use_vector: bool, plain_attrs: list, kinds: list) -> tuple:
    """(the parsed rows' columns as (name, "vector" | "double" | "string"), their Arrow schema): the feature vector
    (wide or sparse data), the plain attributes ``_c<i>`` (doubles or strings) and the parse-error column. Spark's
    schema of them is :func:`_spark_schema` (pyspark is imported when Spark reads the file, not for the driver's
    parse)."""
    fields = [(VECTOR_COLUMN, "vector")] if use_vector else []
    fields += [(f"_c{i}", "double" if kinds[i] == "numeric" else "string") for i in plain_attrs]
    fields.append((ERROR_COLUMN, "string"))
    arrow_schema = pa.schema([pa.field(VECTOR_COLUMN, _VECTOR_ARROW)] if use_vector else [])
    for name, kind in fields[(1 if use_vector else 0):]:
        arrow_schema = arrow_schema.append(pa.field(name, pa.float64() if kind == "double" else pa.string()))
    return fields, arrow_schema


def _spark_schema(fields: list):
    """Spark's StructType of the columns of :func:`_schemas`."""
    from pyspark.sql import types as T

    def spark_type(kind):
        if kind == "vector":
            from pyspark.ml.linalg import VectorUDT  # here: pyspark.ml costs 0.3 s to import (scipy)

            return VectorUDT()
        return T.DoubleType() if kind == "double" else T.StringType()
    return T.StructType([T.StructField(name, spark_type(kind)) for name, kind in fields])


def _columns(path: str, attrs: list, plain_attrs: list, vector_attrs: list) -> tuple:
    """(the columns of the Dataset, the Clus hierarchy or None, the names of the attributes that are not features:
    string and date)."""
    columns: list[ColumnInfo] = []
    hierarchy = None
    for i, a in enumerate(attrs):
        if a.kind == "hierarchical" and i in plain_attrs:
            # Clus HMLC class attribute: a string column of '@'-joined label paths, a target only
            columns.append(ColumnInfo(a.name, "hierarchical", None, f"_c{i}"))
            if hierarchy is None:
                hierarchy = _parse_hierarchy(path, a)
            continue
        if a.kind not in ("numeric", "nominal"):
            continue
        kind = "numeric" if a.kind == "numeric" else "nominal"
        cats = list(a.values) if a.kind == "nominal" else None
        if i in vector_attrs:
            columns.append(ColumnInfo(a.name, kind, cats, VECTOR_COLUMN, vector_attrs.index(i)))
        else:
            columns.append(ColumnInfo(a.name, kind, cats, f"_c{i}"))
    skipped = [a.name for a in attrs if a.kind not in ("numeric", "nominal", "hierarchical")]
    return columns, hierarchy, skipped


def _locator(paths: list, data_lines: dict):
    """``locate(errors)``: the one-line message of the first bad row among parse errors (``reason<SEP>line``), at its
    file and line (the earliest file, then line)."""
    def locate(errors):
        best = None
        for e in errors:
            reason, _, line_text = e.partition(_SEP)
            for q, p in enumerate(paths):
                line_no = find_line_number(p, line_text, data_lines[p])
                if line_no is not None:
                    break
            key = (q, line_no) if line_no is not None else (len(paths), 0)
            if best is None or key < best[0]:
                best = (key, paths[min(q, len(paths) - 1)] if line_no is not None else paths[0], line_no,
                        ArffLineError(reason, line_text))
        return format_line_error(best[1], best[2], best[3])

    return locate


def _default_target(attrs: list) -> str | None:
    """The target when none is named: the hierarchical attribute, else the last numeric or nominal one."""
    default = next((a.name for a in attrs if a.kind == "hierarchical"), None)
    if default is None:
        default = next((a.name for a in reversed(attrs) if a.kind in ("numeric", "nominal")), None)
    return default


class ArffBatches(BatchSource):
    """The rows of ARFF files as Arrow batches: parsed on the driver (a small file: no Spark job) or by Spark
    tasks over the files' lines (a large one), by the same parser (see :mod:`spark_fr.data.source`).

    Parameters
    ----------
    paths : list of str
    data_lines : dict
        Path -> the line of its ``@data``.
    parse : callable
        Arrow batches of lines (column ``value``) -> Arrow batches of parsed rows.
    make_df : callable
        ``make_df(spark)``: the parsed rows as a Spark DataFrame (Spark reads the lines).
    names : list of str
        The columns of the parsed batches to keep.
    parse_text : callable
        A chunk of whole data lines (bytes) -> Arrow batches of parsed rows (:func:`_parse_text`): the driver's
        parse of an uncompressed file.
    """

    LINES_PER_BATCH = 10_000

    def __init__(self, paths, data_lines, parse, make_df, names, parse_text):
        self.paths, self.data_lines, self.parse, self.make_df = list(paths), dict(data_lines), parse, make_df
        self.names, self.parse_text = list(names), parse_text
        self._df = None
        self._want_cache = self._cached = False

    def narrow(self, columns):
        keep = {c.column for c in columns} | {ERROR_COLUMN}
        return ArffBatches(self.paths, self.data_lines, self.parse, self.make_df,
                           [n for n in self.names if n in keep], self.parse_text), columns

    def size_estimate(self):
        return sum(os.path.getsize(p) * (5 if p.lower().endswith(".gz") else 1) for p in self.paths)

    def _lines(self, paths=None):
        """Batches of :data:`LINES_PER_BATCH` data lines (column ``value``) of ``paths`` (default: every file), read
        by the text reader."""
        for p in self.paths if paths is None else paths:
            with open_text(p) as fh:
                chunk = []
                for no, line in enumerate(fh, 1):
                    if no <= self.data_lines[p]:
                        continue
                    chunk.append(line.rstrip("\r\n"))
                    if len(chunk) == self.LINES_PER_BATCH:
                        yield pa.RecordBatch.from_arrays([pa.array(chunk, pa.string())], names=["value"])
                        chunk = []
                if chunk:
                    yield pa.RecordBatch.from_arrays([pa.array(chunk, pa.string())], names=["value"])

    def _pieces(self, threads: int):
        """The files' data in the driver's pieces: ranges of whole lines of an uncompressed file (read by the thread
        that parses them), batches of lines of a compressed one (or of one whose header has carriage returns)."""
        for p in self.paths:
            start = None if is_gzip_name(p) else data_offset(p, self.data_lines[p])
            yield from self._lines([p]) if start is None else byte_ranges(p, start, threads)

    def driver_batches(self):
        """The parsed batches, on the driver: the pieces of the files parsed on the driver's threads (pyarrow's CSV
        reader releases the GIL; a piece's parse does not depend on the others'), at most one window of them held
        at a time (:func:`~spark_fr.runtime.spark.driver_map_stream`)."""
        from ...runtime.spark import driver_map_stream, driver_threads

        def parsed(piece):
            rows = self.parse([piece]) if isinstance(piece, pa.RecordBatch) else self.parse_text(read_range(*piece))
            return [b.select(self.names) for b in rows]

        return [b for part in driver_map_stream(parsed, self._pieces(driver_threads())) for b in part]

    def _frame(self, spark):
        if self._df is None:
            from pyspark import StorageLevel

            from ...data.columns import qcol

            df = self.make_df(spark).select(*[qcol(n) for n in self.names])
            if self._want_cache:
                try:
                    df = df.persist(StorageLevel.MEMORY_AND_DISK)
                    self._cached = True
                except Exception:  # a session that caches nothing (serverless compute): parsed again per pass
                    pass
            self._df = df
        return self._df

    def map(self, spark, fn):
        return FrameSource(self._frame(spark)).map(spark, fn)

    def cache(self):
        self._want_cache = True

    def release(self):
        if self._cached:
            self._df.unpersist()
            self._cached = False



def _check_same_attributes(path: str, header, other: str, other_header) -> None:
    """Several ARFF inputs must declare the same attributes (names, types, domains, hierarchy)."""
    def sig(a):
        return (a.name, a.kind, tuple(a.values or ()), (a.hierarchy or "").replace(" ", ""))

    a, b = header.attributes, other_header.attributes
    for x, y in zip(a, b):
        if sig(x) != sig(y):
            raise InputError(f"{other}: attribute '{y.name}' differs from attribute '{x.name}' of {path}; several "
                             f"inputs must declare the same attributes")
    if len(a) != len(b):
        raise InputError(f"{other}: {len(b)} attributes, but {path} has {len(a)}; several inputs must declare the "
                         f"same attributes")


def _parse_hierarchy(path: str, attr):
    """The label hierarchy of a Clus ``hierarchical`` attribute (one-line error naming the file)."""
    from ...hierarchy import Hierarchy, HierarchyError

    try:
        return Hierarchy.from_clus_spec(attr.hierarchy or "")
    except HierarchyError as err:
        raise InputError(f"{path}: attribute '{attr.name}': {err}") from None
