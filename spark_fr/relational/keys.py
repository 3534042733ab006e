"""How the two sides of every foreign key are compared: one decision for the checks and the joins of both engines.

Sketch
------
A key and the foreign keys that point at it may come from sources of different types (a Parquet ``bigint``
key, a CSV foreign key that holds a few ``A17`` and so is text, a JSON ``double``). Comparing them as they are
would make Spark or pandas coerce silently, differently in each place (the dangling-key check compared the
text "1" with the double 1.0 and reported 100 % dangling keys where 7,023 of 7,024 matched, while the join
matched them). So the columns linked by foreign keys are grouped (union-find: a foreign key and the key it
points at belong together, and so does every other foreign key pointing at that key), and each group gets one
type to be compared in (:func:`key_plan`):

* all of one type: compared as they are;
* a text column among them: all as text, numbers written as their digits (an integral double
  ``17.0`` as ``17``, as in the file), dates as ``yyyy-MM-dd``, booleans as ``true``/``false``;
* numbers only: as ``bigint`` when all are integers, ``decimal(38,0)`` when a 38-digit decimal is among them,
  else as ``double``;
* anything else (a date against a number, timestamps, binary): a one-line error naming both columns.

The checks (unique keys, dangling shares) and the joins then use the same compared values, so what the checks
report is what the joins do. The rendering of a compared value is engine-specific (Spark columns in
:mod:`spark_fr.relational.generate`, numpy arrays in :mod:`spark_fr.relational.local`); this module only decides.
"""
from __future__ import annotations

from ..errors import InputError

TEXT, DOUBLE, BIGINT, DECIMAL = "string", "double", "bigint", "decimal(38,0)"
_INTEGRAL = ("tinyint", "smallint", "int", "bigint", "long")
_FRACTIONAL = ("float", "double")


def _family(dtype: str) -> str:
    if dtype in _INTEGRAL or (dtype.startswith("decimal(") and dtype.endswith(",0)")):
        return "integer"
    if dtype in _FRACTIONAL or dtype.startswith("decimal("):
        return "number"
    if dtype in ("string", "boolean") or dtype.startswith(("char(", "varchar(")):
        return "text"
    if dtype == "date":
        return "date"
    return dtype


def key_columns(schema) -> list:
    """Every (table, column) a join compares: each table's key and foreign keys, in schema order."""
    out = []
    for name, spec in schema.tables.items():
        out.append((name, spec.key))
        out += [(name, fk.column) for fk in spec.foreign_keys]
    return out


def key_plan(schema, types: dict) -> dict:
    """{(table, column): the type it is compared in, or None (as it is)} for every key and foreign key.

    Parameters
    ----------
    schema : RelationalSchema
    types : dict
        {(table, column): Spark type name (``simpleString``: 'bigint', 'double', 'string', 'date', ...)} of
        every column of :func:`key_columns`.

    Raises
    ------
    InputError
        A group of linked columns whose types cannot be compared (one line naming two of them).
    """
    parent = {c: c for c in key_columns(schema)}

    def find(c):
        while parent[c] != c:
            parent[c] = parent[parent[c]]
            c = parent[c]
        return c

    for name, spec in schema.tables.items():
        for fk in spec.foreign_keys:
            a, b = find((name, fk.column)), find((fk.table, schema.tables[fk.table].key))
            if a != b:
                parent[a] = b
    groups: dict = {}
    for c in parent:
        groups.setdefault(find(c), []).append(c)
    out = {}
    for members in groups.values():
        kinds = {types[c] for c in members}
        families = {_family(t) for t in kinds}
        if len(kinds) == 1:
            as_type = None
        elif "text" in families and families <= {"text", "integer", "number", "date"}:
            as_type = TEXT
        elif families == {"integer"}:
            as_type = DECIMAL if any(t.startswith("decimal") for t in kinds) else BIGINT
        elif families <= {"integer", "number"}:
            as_type = DOUBLE
        else:
            a = next(c for c in members if _family(types[c]) not in ("text", "integer", "number"))
            b = next(c for c in members if types[c] != types[a])
            raise InputError(f"{schema.origin}: table '{a[0]}' column '{a[1]}' ({types[a]}) and table '{b[0]}' "
                             f"column '{b[1]}' ({types[b]}) are linked by foreign keys but cannot be compared; "
                             f"give them the same type")
        for c in members:
            out[c] = as_type if as_type != types[c] else None
    return out
