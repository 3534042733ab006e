"""Loading the tables of a relational schema as Spark DataFrames.

Sketch
------
Each table comes from (first match wins):

1. a DataFrame the caller passes (``tables={name: DataFrame}``, the form ``rank_relational`` will take);
2. ``explode``: the elements of a parent table's array column (nested JSON), one row per element, through
   ``posexplode``. The child's key is ``"<parent key>:<position>"`` (a string) and its foreign key is the
   parent's key, so both depend only on the data, never on partitioning. Struct elements become columns
   (their fields); other elements one column named after the array column;
3. ``catalog: db.table``: ``spark.table``;
4. a path: CSV/TSV (:func:`spark_fr.io.csv.read_csv`, with a header or, given ``columns:``, without one,
   typed as relational tables need: exact integers, dates, the schema's declared types, and a value that
   does not fit its column an error naming the file, line and column, see :mod:`spark_fr.io.csv_types`),
   Parquet (:func:`spark_fr.io.parquet.read_parquet`), Delta (:func:`spark_fr.io.delta_read.read_delta`) or JSON
   (``spark.read.json``; a file that starts with ``[`` is one multi-line document).

A table naming a column twice is refused (the schema refers to columns by name), by the readers' rule
(:mod:`spark_fr.data.names`), whatever its source. A table without a declared key uses its column ``<table>_id``
if it has one, else gets it generated: the row's position as read (:mod:`spark_fr.relational.row_keys`, the same
numbers as the local engine's), computed where a join reads it (one small job), null elsewhere. Nothing else
here runs a Spark job except what the readers need to type columns (a header or type pass), so loading stays lazy.
"""
from __future__ import annotations

import logging
import os
from concurrent.futures import ThreadPoolExecutor

from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..data.columns import qcol
from ..data.names import REFUSE, deduplicate
from ..errors import InputError
from ..io.locations import is_local
from .row_keys import keys_read, spark_positions
from .schema import RelationalSchema, TableSpec

#: file sources read side by side
READ_THREADS = 4

log = logging.getLogger(__name__)


def load_tables(spark, schema: RelationalSchema, tables: dict | None = None) -> dict:
    """Every table of ``schema`` as a DataFrame, with its key column (generated where the schema says so).

    Parameters
    ----------
    spark : SparkSession
    schema : RelationalSchema
    tables : dict, optional
        {table name: DataFrame} supplied by the caller; they replace the schema's sources.

    Returns
    -------
    dict
        {table name: DataFrame}, in the schema's table order.

    Raises
    ------
    InputError
        A table without a source nor a DataFrame, a DataFrame for an unknown table, an unreadable source,
        a missing array column.
    """
    tables = dict(tables or {})
    for name in tables:
        if name not in schema.tables:
            raise InputError(f"{schema.origin}: a DataFrame was given for the unknown table '{name}'")
    out: dict = {}
    keyed = keys_read(schema)
    # file sources first, side by side: each read lists its files and reads a footer (a small Spark job, mostly
    # latency); the first unreadable one, in schema order, is the error
    files = [n for n, spec in schema.tables.items() if n not in tables and spec.source.kind == "path"]
    with ThreadPoolExecutor(max_workers=READ_THREADS) as pool:
        read = dict(zip(files, pool.map(lambda n: read_path(spark, schema.tables[n], schema.origin,
                                                            declared_types(schema, n)), files)))

    def load(name: str):
        if name in out:
            return out[name]
        spec = schema.tables[name]
        if name in tables:
            df = tables[name]
        elif spec.source.kind == "explode":
            df = explode_child(load(spec.source.parent), schema.tables[spec.source.parent], spec, schema.origin)
            if _root_format(schema, spec) == "json":  # nested JSON values are typed as the top level's are
                from ..io.csv import type_text_columns

                text = [f.name for f in df.schema.fields if isinstance(f.dataType, T.StringType)
                        and f.name not in (spec.key, spec.source.parent_column)]
                df = type_text_columns(df, text, declared_types(schema, name),
                                       f"{schema.origin}: table '{name}' ({source_of_explode(schema, spec)})")
        elif spec.source.kind == "catalog":
            df = spark.table(spec.source.catalog)
        elif spec.source.kind == "path":
            df = read[name]
        else:
            raise InputError(f"{schema.origin}: table '{name}' has no source and no DataFrame was given for it")
        deduplicate(df.columns, REFUSE, source=f"{schema.origin}: table '{name}'")  # the schema names columns
        if spec.generated_key and spec.key not in df.columns:
            if name in keyed:
                df = spark_positions(df, spec.key, files=name not in tables and spec.source.kind == "path")
            else:  # nothing reads it
                df = df.withColumn(spec.key, F.lit(None).cast("bigint"))
        out[name] = df
        return df

    for name in schema.tables:
        load(name)
    return out


def explode_child(parent, parent_spec: TableSpec, spec: TableSpec, origin: str):
    """The rows of ``spec`` (an ``explode`` table): one per element of the parent's array column."""
    src = spec.source
    where = f"{origin}: table '{spec.name}'"
    fields = {f.name: f for f in parent.schema.fields}
    if src.array_column not in fields:
        raise InputError(f"{where}: the parent '{parent_spec.name}' has no column '{src.array_column}'")
    atype = fields[src.array_column].dataType
    if not isinstance(atype, T.ArrayType):
        raise InputError(f"{where}: column '{src.array_column}' of '{parent_spec.name}' is not an array "
                         f"({atype.simpleString()})")
    rows = parent.select(qcol(parent_spec.key).alias("__parent"),
                         F.posexplode(qcol(src.array_column)).alias("__pos", "__elem"))
    elem = atype.elementType
    if isinstance(elem, T.StructType):
        values = [F.col("__elem").getField(f.name).alias(f.name) for f in elem.fields]
        names = [f.name for f in elem.fields]
    else:
        values, names = [F.col("__elem").alias(src.array_column)], [src.array_column]
    for generated in (spec.key, src.parent_column):
        if generated in names:
            raise InputError(f"{where}: the generated column '{generated}' is already a field of the elements; "
                             f"name it with key: / explode.parent_column:")
    key = F.concat(F.col("__parent").cast("string"), F.lit(":"), F.col("__pos").cast("string"))
    return rows.select(key.alias(spec.key), F.col("__parent").alias(src.parent_column), *values)


def _root(schema: RelationalSchema, spec: TableSpec) -> TableSpec:
    while spec.source.kind == "explode":
        spec = schema.tables[spec.source.parent]
    return spec


def _root_format(schema: RelationalSchema, spec: TableSpec) -> str | None:
    root = _root(schema, spec)
    if root.source.kind != "path":
        return None
    try:
        return format_of(root.source.path, root.source.format)
    except InputError:
        return None


def source_of_explode(schema: RelationalSchema, spec: TableSpec) -> str:
    """``<parent>.<array column> in <file>`` for messages about an ``explode`` table."""
    root = _root(schema, spec)
    where = f" in {root.source.path}" if root.source.kind == "path" else ""
    return f"the elements of {spec.source.parent}.{spec.source.array_column}{where}"


def format_of(path: str, fmt: str) -> str:
    """The format of ``path``: ``fmt`` unless 'auto', else from the extension or directory layout."""
    if fmt != "auto":
        return fmt
    low = path.lower().rstrip("/")
    for ext, f in ((".tsv", "tsv"), (".tsv.gz", "tsv"), (".csv", "csv"), (".csv.gz", "csv"), (".json", "json"),
                   (".jsonl", "json"), (".ndjson", "json"), (".json.gz", "json"), (".parquet", "parquet")):
        if low.endswith(ext):
            return f
    from ..io.readers import detect_format

    found = detect_format(path)
    if found not in ("csv", "parquet", "delta"):
        raise InputError(f"{path}: unsupported format '{found}' for a relational table")
    return found


def declared_types(schema: RelationalSchema, name: str) -> dict:
    """{column: declared kind} of a table: the schema's ``types:``, and ``id`` for its key, foreign keys and
    (the target table) the target's id."""
    spec = schema.tables[name]
    ids = {spec.key, *(fk.column for fk in spec.foreign_keys)}
    if name == schema.target.table:
        ids.add(schema.target.id)
    return {**{c: "id" for c in ids}, **spec.types}


def read_path(spark, spec: TableSpec, origin: str, declared: dict | None = None):
    """Read a table stored at a path (see the module's notes); ``declared``: :func:`declared_types`."""
    src = spec.source
    path = src.path
    if is_local(path) and not os.path.exists(path):
        raise InputError(f"{origin}: table '{spec.name}': input not found: {path}")
    fmt = format_of(path, src.format)
    if fmt in ("csv", "tsv"):
        from ..io.csv import read_csv

        sep = src.separator or ("\t" if fmt == "tsv" else ",")
        columns = list(src.columns) if src.columns else None
        return read_csv(spark, path, sep, columns=columns, typed=True, declared=declared, duplicate_names=REFUSE).df
    if fmt == "parquet":
        from ..io.parquet import read_parquet

        ds = read_parquet(spark, path, duplicate_names=REFUSE)
        return ds.df if ds.df is not None else spark.read.parquet(path)
    if fmt == "delta":
        from ..io.delta_read import read_delta

        return read_delta(spark, path).df
    if fmt == "json":
        from ..io.csv import type_text_columns

        df = spark.read.json(path, multiLine=_starts_with_bracket(path))
        text = [f.name for f in df.schema.fields if isinstance(f.dataType, T.StringType)]
        return type_text_columns(df, text, declared or {}, f"{origin}: table '{spec.name}' ({path})")
    raise InputError(f"{origin}: table '{spec.name}': unsupported format '{fmt}'")


def _starts_with_bracket(path: str) -> bool:
    if not is_local(path) or os.path.isdir(path):
        return False
    with open(path, "rb") as fh:
        head = fh.read(4096).lstrip()
    return head[:1] == b"["
