"""Catalog table names: parsed and checked here, never pasted into SQL.

Sketch
------
* **Table names** (``--input-table``, ``--output-table``): one to three parts, ``table``, ``db.table`` or
  ``catalog.db.table``; each part an identifier (letters, digits, ``_``; not starting with a digit) or a
  backquoted name (```my table```, a backquote doubled inside). :func:`parse_table_name` gives the parts, and
  :func:`quoted_name` the form Spark's APIs take (every part backquoted), so a name never changes meaning.
* **Filters** (``--where``) are parsed, checked and rendered by :mod:`spark_fr.io.where`.
"""
from __future__ import annotations

import re

from ..errors import InputError

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# ----- table names ----------------------------------------------------------------------------------------
def parse_table_name(text, flag: str = "--input-table") -> list:
    """The parts of a catalog table name (1 to 3: ``[catalog.][db.]table``).

    Raises
    ------
    InputError
        Not a name (empty part, a character outside an identifier, an unclosed backquote, more than 3 parts).
    """
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{flag} must be a table name (db.table or catalog.db.table), not {text!r}")
    s = text.strip()
    parts, i = [], 0
    while True:
        if i < len(s) and s[i] == "`":
            j, name = i + 1, []
            while True:
                k = s.find("`", j)
                if k < 0:
                    raise InputError(f"{flag} {text}: unclosed backquote")
                name.append(s[j:k])
                if s[k + 1:k + 2] == "`":
                    name.append("`")
                    j = k + 2
                    continue
                i = k + 1
                break
            part = "".join(name)
            if not part:
                raise InputError(f"{flag} {text}: an empty name between backquotes")
        else:
            m = _IDENT.match(s, i)
            if not m:
                shown = s[i:i + 1] or "the end"
                raise InputError(f"{flag} {text}: not a table name (unexpected {shown!r} at position {i + 1}; "
                                 f"quote names with other characters in backquotes)")
            part, i = m.group(0), m.end()
        parts.append(part)
        if i == len(s):
            break
        if s[i] != ".":
            raise InputError(f"{flag} {text}: not a table name (unexpected {s[i]!r} at position {i + 1})")
        i += 1
    if len(parts) > 3:
        raise InputError(f"{flag} {text}: a table name has at most 3 parts (catalog.db.table), not {len(parts)}")
    return parts


def quote_identifier(part: str) -> str:
    """One name part in backquotes (a backquote inside doubled)."""
    return "`" + part.replace("`", "``") + "`"


def quoted_name(parts) -> str:
    """Every part backquoted and joined with dots: what ``spark.table`` and ``DataFrameWriterV2`` take."""
    return ".".join(quote_identifier(p) for p in parts)


def display_name(parts) -> str:
    """The name as a user writes it (parts backquoted only when they need it)."""
    return ".".join(p if _IDENT.fullmatch(p) else quote_identifier(p) for p in parts)
