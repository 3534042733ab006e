"""Checking a relational schema against the loaded tables, and the kind of every column.

Sketch
------
* :func:`column_kinds`: per table, the attributes (columns that become features) and their kind. Declared
  types win; otherwise numbers are numeric, strings and booleans nominal, dates and timestamps date; arrays,
  structs, maps and binary columns are skipped (logged once). The key and foreign-key columns (and the
  target's id) are ids, never attributes. Every column the schema names must exist (one-line error naming
  the table and column). No Spark job.
* :func:`check_data`: one pass per table (:func:`table_pass`, one Spark job): its rows, non-null and distinct
  keys (a null or repeated key is an error), and for each of its foreign keys, through a left join with the
  parent's keys, how many rows point at no parent (the share is logged as a warning; the features then treat
  such rows as having no parent). Keys are checked as the joins compare them (:func:`key_value`,
  :mod:`spark_fr.relational.keys`). The generation runs the same passes with the largest ``|x|`` of the
  attributes it profiles added, so a table is scanned once for its checks and its bounds.
* :func:`check_declared`: a string column the schema declares numeric or a date must hold only numbers or
  dates (one job per such table, when there is one; the first other value is named).
"""
from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..data.columns import qcol, try_cast, try_date
from ..errors import InputError
from . import keys as K
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


def source_of(spec) -> str:
    """Where a table comes from, for messages: its path, catalog table, parent's array column, or 'DataFrame'."""
    src = spec.source
    if src.kind == "path":
        return src.path
    if src.kind == "catalog":
        return f"catalog table {src.catalog}"
    if src.kind == "explode":
        return f"the elements of {src.parent}.{src.array_column}"
    return "a DataFrame"


def empty_target(schema: RelationalSchema) -> InputError:
    """The error for ranking a target table without rows (generating its features gives an empty table)."""
    t = schema.target.table
    return InputError(f"{schema.origin}: the target table '{t}' has no rows ({source_of(schema.tables[t])}): "
                      f"there is nothing to rank")


def key_value(df, column: str, as_type: str | None):
    """The values of a key or foreign-key column as the joins compare them (:func:`spark_fr.relational.keys.key_plan`):
    the column itself, or cast (to text: integral doubles as their digits, dates as yyyy-MM-dd)."""
    c = qcol(column)
    if as_type is None:
        return c
    dtype = df.schema[column].dataType
    if as_type == K.TEXT and isinstance(dtype, (T.FloatType, T.DoubleType)):
        x = c.cast("double")
        return F.when((x == F.rint(x)) & (F.abs(x) < float(2 ** 53)), x.cast("bigint").cast("string")) \
            .otherwise(x.cast("string"))
    return c.cast(as_type)


def key_types(schema: RelationalSchema, frames: dict) -> dict:
    """{(table, column): Spark type name} of every key and foreign key (for :func:`spark_fr.relational.keys.key_plan`)."""
    return {(t, c): frames[t].schema[c].dataType.simpleString() for t, c in K.key_columns(schema)}


def check_declared(schema: RelationalSchema, frames: dict) -> None:
    """String columns declared numeric or date must hold numbers or dates (see the module's notes).

    Raises
    ------
    InputError
        Naming the table, its source, the column and the first value (in sort order) that is not one.
    """
    for name, spec in schema.tables.items():
        fields = {f.name: f.dataType for f in frames[name].schema.fields}
        bad = [(c, k) for c, k in spec.types.items() if k in ("numeric", "date") and c in fields
               and isinstance(fields[c], (T.StringType, T.VarcharType, T.CharType))]
        if not bad:
            continue
        exprs = []
        for i, (c, k) in enumerate(bad):
            parsed = try_cast(c, "double") if k == "numeric" else try_date(qcol(c))
            exprs.append(F.min(F.when(qcol(c).isNotNull() & parsed.isNull(), qcol(c))).alias(f"b{i}"))
        row = frames[name].agg(*exprs).first()
        for i, (c, k) in enumerate(bad):
            if row[f"b{i}"] is not None:
                what = "a number" if k == "numeric" else "a date"
                raise InputError(f"{schema.origin}: table '{name}' ({source_of(spec)}): column '{c}' is declared "
                                 f"{k} but holds '{row[f'b{i}']}', which is not {what}; fix the value or the "
                                 f"declared type")


@dataclass
class TablePass:
    """What one pass over a table measured (:func:`table_pass`).

    Attributes
    ----------
    rows : int
    keys : dict
        {key column: (non-null values, distinct values)}.
    links : dict
        {foreign-key column: (non-null values, values with no row in the parent)}.
    largest : dict
        {value name: its largest ``|x|``, None without values}.
    """

    rows: int
    keys: dict = field(default_factory=dict)
    links: dict = field(default_factory=dict)
    largest: dict = field(default_factory=dict)


def key_checks(schema: RelationalSchema, name: str) -> list:
    """The key columns of table ``name`` a join reads: its key and (the target table) the target's id; none when
    nothing reads them (:func:`referenced_tables`)."""
    if name not in referenced_tables(schema):
        return []
    spec = schema.tables[name]
    keys = [spec.key]
    if name == schema.target.table and schema.target.id != spec.key:
        keys.append(schema.target.id)
    return keys


def table_pass(schema: RelationalSchema, name: str, frames: dict, plan: dict, keys=(), links=(),
               values=()) -> TablePass:
    """One Spark job over table ``name``: its rows, the non-null and distinct values of ``keys``, for each foreign
    key of ``links`` its non-null values and those without a parent row (a left join with the parent's keys), and
    the largest ``|x|`` of each ``(name, Column)`` of ``values`` (columns of the table's frame). The parents' keys
    are joined distinct, so that the table's own counts stay its rows' even when a parent repeats a key (its own
    pass reports that)."""
    df = frames[name]
    cols = [key_value(df, k, plan.get((name, k))).alias(f"__k{i}") for i, k in enumerate(keys)]
    cols += [key_value(df, fk.column, plan.get((name, fk.column))).alias(f"__f{i}") for i, fk in enumerate(links)]
    cols += [v.alias(f"__a{j}") for j, (_, v) in enumerate(values)]
    rows = df.select(F.lit(1).alias("__one"), *cols)
    for i, fk in enumerate(links):
        parent = frames[fk.table]
        pk = schema.tables[fk.table].key
        keys_of = parent.select(key_value(parent, pk, plan.get((fk.table, pk))).alias(f"__p{i}")).distinct()
        rows = rows.join(keys_of, F.col(f"__f{i}") == F.col(f"__p{i}"), "left")
    aggs = [F.count(F.lit(1)).alias("rows")]
    for i in range(len(keys)):
        aggs += [F.count(F.col(f"__k{i}")).alias(f"n{i}"), F.count_distinct(F.col(f"__k{i}")).alias(f"d{i}")]
    for i in range(len(links)):
        fk = F.col(f"__f{i}")
        aggs += [F.count(fk).alias(f"l{i}"),
                 F.count(F.when(fk.isNotNull() & F.col(f"__p{i}").isNull(), 1)).alias(f"m{i}")]
    aggs += [F.max(F.abs(F.col(f"__a{j}"))).alias(f"a{j}") for j in range(len(values))]
    row = rows.agg(*aggs).first()
    return TablePass(int(row["rows"]), {k: (row[f"n{i}"], row[f"d{i}"]) for i, k in enumerate(keys)},
                     {fk.column: (row[f"l{i}"], row[f"m{i}"]) for i, fk in enumerate(links)},
                     {v: None if row[f"a{j}"] is None else float(row[f"a{j}"]) for j, (v, _) in enumerate(values)})


def report_passes(schema: RelationalSchema, passes: dict, plan: dict) -> dict:
    """Raise the first bad key, in schema order, of the passes ({table: TablePass}); log the dangling foreign
    keys; return their shares ({(child table, foreign-key column): share}, as :func:`check_data`)."""
    for name in schema.tables:
        done = passes.get(name)
        for k, (known, distinct) in (done.keys.items() if done else ()):
            if known < done.rows:
                raise InputError(f"{schema.origin}: table '{name}': key '{k}' is missing in {done.rows - known} "
                                 f"of {done.rows} rows")
            if distinct < known:
                raise repeated_key(schema, name, k, known - distinct, plan.get((name, k)))
    shares = {}
    for name, spec in schema.tables.items():
        done = passes.get(name)
        for fk in spec.foreign_keys:
            if done is None or fk.column not in done.links:
                continue
            n, dangling = done.links[fk.column]
            share = dangling / n if n else 0.0
            shares[(name, fk.column)] = share
            if share > 0:
                log.warning("%s: table '%s': %.1f%% of the foreign keys '%s' (%d rows) have no row in '%s'",
                            schema.origin, name, 100 * share, fk.column, dangling, fk.table)
    return shares


def check_data(schema: RelationalSchema, frames: dict, plan: dict | None = None) -> dict:
    """Check keys (present, unique) and measure dangling foreign keys: one :func:`table_pass` per table, side by
    side.

    Keys are checked where a join uses them: the target table's and those of tables that foreign keys point
    to. A table nothing points to (a fact table, typically the largest) is not checked: its rows are
    aggregated one by one, so a repeated or missing key changes no feature, and the check would cost a
    shuffle of all of its rows.

    Parameters
    ----------
    schema : RelationalSchema
    frames : dict
        {table: DataFrame}.
    plan : dict, optional
        :func:`spark_fr.relational.keys.key_plan` (default: every key compared as it is).

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
    plan = plan or {}
    names = [n for n, spec in schema.tables.items() if key_checks(schema, n) or spec.foreign_keys]
    with ThreadPoolExecutor(max_workers=4) as pool:  # small jobs, mostly latency: side by side
        jobs = {n: pool.submit(table_pass, schema, n, frames, plan, key_checks(schema, n),
                               schema.tables[n].foreign_keys) for n in names}
        return report_passes(schema, {n: job.result() for n, job in jobs.items()}, plan)


def referenced_tables(schema: RelationalSchema) -> set:
    """The tables whose key a join reads: the target table and every table a foreign key points at."""
    return {schema.target.table} | {fk.table for spec in schema.tables.values() for fk in spec.foreign_keys}


def repeated_key(schema: RelationalSchema, name: str, key: str, repeated: int, cast: str | None) -> InputError:
    """The error for a key with ``repeated`` repeated values (compared as ``cast``, when linked columns differ)."""
    how = f" (compared as {cast}, the type of the columns linked to it)" if cast else ""
    return InputError(f"{schema.origin}: table '{name}': key '{key}' is not unique ({repeated} repeated values){how}")
