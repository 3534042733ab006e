"""Checking a relational schema against the loaded tables, and the kind of every column.

Sketch
------
* :func:`column_kinds`: per table, the attributes (columns that become features) and their kind. Declared
  types win; otherwise numbers are numeric, strings and booleans nominal, dates and timestamps date; arrays,
  structs, maps and binary columns are skipped (logged once). The key and foreign-key columns (and the
  target's id) are ids, never attributes. Every column the schema names must exist (one-line error naming
  the table and column). No Spark job.
* :func:`check_data`: one aggregation per table (rows, non-null keys, distinct keys: a null or repeated
  key is an error) and one anti join per foreign key (the share of child rows whose parent key is absent
  is logged as a warning; the features then treat such rows as having no parent).
"""
from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..data.columns import qcol
from ..errors import InputError
from .schema import RelationalSchema

log = logging.getLogger(__name__)

_NUMERIC = (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType, T.DecimalType)
_NOMINAL = (T.StringType, T.BooleanType, T.CharType, T.VarcharType)
_DATE = (T.DateType, T.TimestampType, T.TimestampNTZType)


def inferred_kind(data_type) -> str | None:
    """The attribute kind of a Spark type ('numeric', 'nominal', 'date'), or None (not usable)."""
    if isinstance(data_type, _NUMERIC):
        return "numeric"
    if isinstance(data_type, _NOMINAL):
        return "nominal"
    if isinstance(data_type, _DATE):
        return "date"
    return None


def column_kinds(schema: RelationalSchema, frames: dict) -> dict:
    """{table: {column: kind}} of every table's attributes, in column order (ids and skipped columns left out).

    Raises
    ------
    InputError
        A key, foreign key, typed column or target column that the table does not have.
    """
    out = {}
    for name, spec in schema.tables.items():
        fields = {f.name: f.dataType for f in frames[name].schema.fields}
        where = f"{schema.origin}: table '{name}'"
        if spec.key not in fields:
            raise InputError(f"{where}: unknown key column '{spec.key}'")
        for fk in spec.foreign_keys:
            if fk.column not in fields:
                raise InputError(f"{where}: unknown foreign-key column '{fk.column}'")
        for col in spec.types:
            if col not in fields:
                raise InputError(f"{where}: unknown column '{col}' in types")
        ids = {spec.key} | {fk.column for fk in spec.foreign_keys}
        if name == schema.target.table:
            for col in (schema.target.id, schema.target.column):
                if col not in fields:
                    raise InputError(f"{schema.origin}: target: table '{name}' has no column '{col}'")
            ids.add(schema.target.id)
        kinds, skipped = {}, []
        for col, dtype in fields.items():
            declared = spec.types.get(col)
            if col in ids or declared == "id":
                continue
            kind = declared or inferred_kind(dtype)
            if kind is None:
                skipped.append(f"{col} ({dtype.simpleString()})")
            elif kind == "date" and not isinstance(dtype, _DATE + (T.StringType,)):
                raise InputError(f"{where}: column '{col}' is declared a date but holds {dtype.simpleString()}")
            else:
                kinds[col] = kind
        if skipped:
            log.info("%s: columns that are not attributes (type): %s", where, ", ".join(skipped))
        out[name] = kinds
    if out[schema.target.table].get(schema.target.column) is None and \
            schema.target.column != schema.target.id:
        raise InputError(f"{schema.origin}: target: column '{schema.target.column}' of table "
                         f"'{schema.target.table}' is not a usable target (an id, or of an unsupported type)")
    return out


def check_data(schema: RelationalSchema, frames: dict) -> dict:
    """Check keys (present, unique) and measure dangling foreign keys.

    Keys are checked where a join uses them: the target table's and those of tables that foreign keys point
    to. A table nothing points to (a fact table, typically the largest) is not checked: its rows are
    aggregated one by one, so a repeated or missing key changes no feature, and the check would cost a
    shuffle of all of its rows.

    Returns
    -------
    dict
        {(child table, foreign-key column): share of the child's rows with a non-null foreign key whose
        parent key is absent}; shares above 0 are also logged as warnings.

    Raises
    ------
    InputError
        A table whose key (or the target's id) is missing in some rows or repeated.
    """
    referenced = {schema.target.table} | {fk.table for spec in schema.tables.values() for fk in spec.foreign_keys}
    key_checks = [(name, spec) for name, spec in schema.tables.items() if name in referenced]
    links = [(name, fk) for name, spec in schema.tables.items() for fk in spec.foreign_keys]
    with ThreadPoolExecutor(max_workers=4) as pool:  # small jobs, mostly latency: side by side
        keys = [pool.submit(_key_counts, schema, name, spec, frames[name]) for name, spec in key_checks]
        dangling = [pool.submit(_dangling, schema, name, fk, frames) for name, fk in links]
        for job in keys:
            job.result()  # the first bad key, in schema order
        shares = {}
        for (name, fk), job in zip(links, dangling):
            row = job.result()
            share = row["dangling"] / row["n"] if row["n"] else 0.0
            shares[(name, fk.column)] = share
            if share > 0:
                log.warning("%s: table '%s': %.1f%% of the foreign keys '%s' (%d rows) have no row in '%s'",
                            schema.origin, name, 100 * share, fk.column, row["dangling"], fk.table)
    return shares


def _key_counts(schema: RelationalSchema, name: str, spec, df) -> None:
    """Raise InputError when a table's key (or the target's id) is missing in some rows or repeated."""
    keys = [spec.key]
    if name == schema.target.table and schema.target.id != spec.key:
        keys.append(schema.target.id)
    exprs = [F.count(F.lit(1)).alias("rows")]
    for i, k in enumerate(keys):
        exprs += [F.count(qcol(k)).alias(f"n{i}"), F.count_distinct(qcol(k)).alias(f"d{i}")]
    row = df.agg(*exprs).first()
    for i, k in enumerate(keys):
        if row[f"n{i}"] < row["rows"]:
            raise InputError(f"{schema.origin}: table '{name}': key '{k}' is missing in "
                             f"{row['rows'] - row[f'n{i}']} of {row['rows']} rows")
        if row[f"d{i}"] < row[f"n{i}"]:
            raise InputError(f"{schema.origin}: table '{name}': key '{k}' is not unique "
                             f"({row[f'n{i}'] - row[f'd{i}']} repeated values)")


def _dangling(schema: RelationalSchema, name: str, fk, frames: dict):
    """Row ``(n, dangling)``: the child's non-null foreign keys, and those whose parent key is absent."""
    parent = schema.tables[fk.table]
    child = frames[name].select(qcol(fk.column).alias("__fk")).where(F.col("__fk").isNotNull())
    keys = frames[fk.table].select(qcol(parent.key).alias("__pk"))
    return child.join(keys, F.col("__fk") == F.col("__pk"), "left").agg(
        F.count(F.lit(1)).alias("n"), F.count(F.when(F.col("__pk").isNull(), 1)).alias("dangling")).first()
