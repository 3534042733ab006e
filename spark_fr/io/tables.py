"""Catalog table names and row filters (``--where``): parsed and checked here, never pasted into SQL.

Sketch
------
* **Table names** (``--input-table``, ``--output-table``): one to three parts, ``table``, ``db.table`` or
  ``catalog.db.table``; each part an identifier (letters, digits, ``_``; not starting with a digit) or a
  backquoted name (```my table```, a backquote doubled inside). :func:`parse_table_name` gives the parts, and
  :func:`quoted_name` the form Spark's APIs take (every part backquoted), so a name never changes meaning.
* **Filters** (``--where``): a small grammar of column comparisons, parsed into a tree (:class:`Cmp`,
  :class:`In`, :class:`IsNull`, :class:`And`, :class:`Or`, :class:`Not`)::

      expr    := or
      or      := and ("OR" and)*
      and     := not ("AND" not)*
      not     := "NOT" not | "(" expr ")" | compare
      compare := column ("=" | "==" | "!=" | "<>" | "<" | "<=" | ">" | ">=") literal
               | column ["NOT"] "IN" "(" literal ("," literal)* ")"
               | column "IS" ["NOT"] "NULL"
      column  := identifier | `backquoted`
      literal := number | 'string' ('' inside) | TRUE | FALSE | DATE 'yyyy-mm-dd' | TIMESTAMP '...'

  :func:`check_filter` checks it against the input's schema (every column exists, has a simple type, and is
  compared with a literal of its kind: a number with a numeric column, a string with a string column, a date
  with a date or timestamp column, ...). The checked tree becomes a Spark Column (:func:`to_column`,
  ``functions.col`` and ``functions.lit``: the text itself never reaches SQL) or, for ``deltalake``'s
  query engine, SQL text generated from the tree with every name and literal quoted (:func:`to_sql`).
  Decision: any top-level column may be filtered (a filter on the partition columns also prunes files, the
  point of ``--where`` on a partitioned table); expressions, functions and column-to-column comparisons are
  not part of the grammar.
"""
from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass

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


# ----- filters: the tree ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Lit:
    """A literal: ``kind`` is 'number', 'string', 'bool', 'date' or 'timestamp'."""

    kind: str
    value: object

    def shown(self) -> str:
        if self.kind == "string":
            return "'" + str(self.value).replace("'", "''") + "'"
        if self.kind == "bool":
            return "TRUE" if self.value else "FALSE"
        if self.kind in ("date", "timestamp"):
            return f"{self.kind.upper()} '{self.value.isoformat(sep=' ') if self.kind == 'timestamp' else self.value}'"
        return repr(self.value)


@dataclass(frozen=True)
class Cmp:
    column: str
    op: str  # one of = != < <= > >=
    value: Lit


@dataclass(frozen=True)
class In:
    column: str
    values: tuple
    negated: bool = False


@dataclass(frozen=True)
class IsNull:
    column: str
    negated: bool = False


@dataclass(frozen=True)
class And:
    left: object
    right: object


@dataclass(frozen=True)
class Or:
    left: object
    right: object


@dataclass(frozen=True)
class Not:
    inner: object


_TOKEN = re.compile(r"""\s*(?:
    (?P<num>[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?))
  | (?P<str>'(?:[^']|'')*')
  | (?P<bq>`(?:[^`]|``)+`)
  | (?P<op><=|>=|<>|!=|==|=|<|>)
  | (?P<punct>[(),])
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
)""", re.VERBOSE)
_KEYWORDS = {"AND", "OR", "NOT", "IN", "IS", "NULL", "TRUE", "FALSE", "DATE", "TIMESTAMP"}


def _tokens(text: str) -> list:
    out, i = [], 0
    while i < len(text):
        if text[i:].strip() == "":
            break
        m = _TOKEN.match(text, i)
        if not m or m.end() == i:
            j = i + len(text[i:]) - len(text[i:].lstrip())
            raise InputError(f"--where {text}: unexpected {text[j]!r} at position {j + 1} (a filter compares columns "
                             f"with literals: col = 'x' AND n >= 3, col IN (1, 2), col IS NULL)")
        kind = m.lastgroup
        value, pos = m.group(kind), m.start(kind)
        if kind == "word" and value.upper() in _KEYWORDS:
            kind, value = "kw", value.upper()
        out.append((kind, value, pos))
        i = m.end()
    return out


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks = _tokens(text)
        self.i = 0

    def fail(self, what: str):
        if self.i < len(self.toks):
            _, value, pos = self.toks[self.i]
            where = f"at {value!r} (position {pos + 1})"
        else:
            where = "at the end"
        raise InputError(f"--where {self.text}: expected {what} {where}")

    def peek(self, kind=None, value=None):
        if self.i >= len(self.toks):
            return None
        t = self.toks[self.i]
        if (kind is None or t[0] == kind) and (value is None or t[1] == value):
            return t
        return None

    def take(self, kind=None, value=None, what=""):
        t = self.peek(kind, value)
        if t is None:
            self.fail(what or value or kind)
        self.i += 1
        return t

    def parse(self):
        if not self.toks:
            raise InputError("--where must be a filter such as \"country = 'SI' AND year >= 2024\", not empty")
        tree = self.or_()
        if self.i != len(self.toks):
            self.fail("AND, OR or the end")
        return tree

    def or_(self):
        node = self.and_()
        while self.peek("kw", "OR"):
            self.i += 1
            node = Or(node, self.and_())
        return node

    def and_(self):
        node = self.not_()
        while self.peek("kw", "AND"):
            self.i += 1
            node = And(node, self.not_())
        return node

    def not_(self):
        if self.peek("kw", "NOT"):
            self.i += 1
            return Not(self.not_())
        if self.peek("punct", "("):
            self.i += 1
            node = self.or_()
            self.take("punct", ")", "')'")
            return node
        return self.compare()

    def column(self) -> str:
        t = self.peek()
        if t is not None and t[0] == "word":
            self.i += 1
            return t[1]
        if t is not None and t[0] == "bq":
            self.i += 1
            return t[1][1:-1].replace("``", "`")
        self.fail("a column name")

    def literal(self) -> Lit:
        t = self.peek()
        if t is None:
            self.fail("a literal")
        kind, value, _ = t
        self.i += 1
        if kind == "num":
            number = float(value) if any(c in value for c in ".eE") else int(value)
            return Lit("number", number)
        if kind == "str":
            return Lit("string", value[1:-1].replace("''", "'"))
        if kind == "kw" and value in ("TRUE", "FALSE"):
            return Lit("bool", value == "TRUE")
        if kind == "kw" and value in ("DATE", "TIMESTAMP"):
            s = self.take("str", what=f"a quoted {value.lower()} after {value}")[1][1:-1]
            try:
                parsed = (_dt.date.fromisoformat(s) if value == "DATE"
                          else _dt.datetime.fromisoformat(s.replace(" ", "T", 1)))
            except ValueError:
                raise InputError(f"--where {self.text}: {value} '{s}' is not an ISO {value.lower()} "
                                 f"({'yyyy-mm-dd' if value == 'DATE' else 'yyyy-mm-dd hh:mm:ss'})") from None
            return Lit(value.lower(), parsed)
        self.i -= 1
        self.fail("a literal (a number, a 'quoted string', TRUE, FALSE, DATE '...' or TIMESTAMP '...')")

    def compare(self):
        col = self.column()
        if self.peek("op"):
            op = self.take("op")[1]
            op = {"==": "=", "<>": "!="}.get(op, op)
            return Cmp(col, op, self.literal())
        if self.peek("kw", "IS"):
            self.i += 1
            negated = bool(self.peek("kw", "NOT"))
            self.i += negated
            self.take("kw", "NULL", "NULL")
            return IsNull(col, negated)
        negated = bool(self.peek("kw", "NOT"))
        self.i += negated
        if self.peek("kw", "IN"):
            self.i += 1
            self.take("punct", "(", "'('")
            values = [self.literal()]
            while self.peek("punct", ","):
                self.i += 1
                values.append(self.literal())
            self.take("punct", ")", "')'")
            return In(col, tuple(values), negated)
        self.fail("a comparison (=, !=, <, <=, >, >=), IN (...) or IS [NOT] NULL after the column")


def parse_filter(text) -> object:
    """The tree of a ``--where`` filter (module sketch); a one-line :class:`InputError` if it is not one."""
    if not isinstance(text, str):
        raise InputError(f"--where must be a string, not {text!r}")
    return _Parser(text).parse()


def columns_of(tree) -> list:
    """The columns a filter names, in order of appearance."""
    if isinstance(tree, (And, Or)):
        return list(dict.fromkeys(columns_of(tree.left) + columns_of(tree.right)))
    if isinstance(tree, Not):
        return columns_of(tree.inner)
    return [tree.column]


#: which literal kinds each family of column types accepts
_ACCEPTS = {"number": {"number"}, "string": {"string"}, "bool": {"bool"}, "date": {"date", "string"},
            "timestamp": {"timestamp", "date", "string"}}
_NUMERIC = ("tinyint", "smallint", "int", "bigint", "float", "double", "byte", "short", "integer", "long")


def _family(type_name: str) -> str | None:
    t = type_name.lower()
    if t in _NUMERIC or t.startswith("decimal"):
        return "number"
    if t in ("string", "varchar", "char") or t.startswith(("varchar(", "char(")):
        return "string"
    if t == "boolean":
        return "bool"
    if t == "date":
        return "date"
    if t.startswith("timestamp"):
        return "timestamp"
    return None


def check_filter(tree, types: dict, source: str) -> None:
    """Check a filter against the input's columns: ``types`` is ``{column: Spark type name}`` (simpleString).

    Raises
    ------
    InputError
        A column that is not in the input, of a type that cannot be filtered, or compared with a literal of
        another kind (naming the column, its type and the literal).
    """
    lower = {c.lower(): c for c in types}
    for node in _leaves(tree):
        col = node.column
        if col not in types:
            close = lower.get(col.lower())
            hint = f" (did you mean '{close}'?)" if close else ""
            raise InputError(f"--where: column '{col}' is not in {source}{hint}")
        family = _family(types[col])
        if family is None:
            raise InputError(f"--where: column '{col}' of {source} is {types[col]}, which a filter cannot compare")
        literals = node.values if isinstance(node, In) else (node.value,) if isinstance(node, Cmp) else ()
        for lit in literals:
            if lit.kind not in _ACCEPTS[family]:
                raise InputError(f"--where: column '{col}' of {source} is {types[col]}, compared with {lit.shown()} "
                                 f"(a {lit.kind}); give a {family} literal")
            if lit.kind == "string" and family in ("date", "timestamp"):
                try:
                    (_dt.date.fromisoformat if family == "date" else
                     (lambda s: _dt.datetime.fromisoformat(s.replace(" ", "T", 1))))(lit.value)
                except ValueError:
                    raise InputError(f"--where: column '{col}' of {source} is {types[col]}; '{lit.value}' is not "
                                     f"an ISO {family}") from None


def _leaves(tree):
    if isinstance(tree, (And, Or)):
        yield from _leaves(tree.left)
        yield from _leaves(tree.right)
    elif isinstance(tree, Not):
        yield from _leaves(tree.inner)
    else:
        yield tree


def _lit_value(lit: Lit, family: str | None = None):
    if lit.kind == "string" and family == "date":
        return _dt.date.fromisoformat(lit.value)
    if lit.kind == "string" and family == "timestamp":
        return _dt.datetime.fromisoformat(lit.value.replace(" ", "T", 1))
    return lit.value


def to_column(tree, types: dict | None = None):
    """The filter as a Spark Column (``functions.col`` / ``lit``: no SQL text is parsed)."""
    from pyspark.sql import functions as F

    from ..data.columns import qcol

    types = types or {}
    if isinstance(tree, And):
        return to_column(tree.left, types) & to_column(tree.right, types)
    if isinstance(tree, Or):
        return to_column(tree.left, types) | to_column(tree.right, types)
    if isinstance(tree, Not):
        return ~to_column(tree.inner, types)
    col = qcol(tree.column)
    family = _family(types.get(tree.column, "")) if tree.column in types else None
    if isinstance(tree, IsNull):
        return col.isNotNull() if tree.negated else col.isNull()
    if isinstance(tree, In):
        inside = col.isin([_lit_value(v, family) for v in tree.values])
        return ~inside if tree.negated else inside
    value = F.lit(_lit_value(tree.value, family))
    return {"=": col == value, "!=": col != value, "<": col < value, "<=": col <= value, ">": col > value,
            ">=": col >= value}[tree.op]


def to_sql(tree, types: dict | None = None) -> str:
    """The filter as SQL text for ``deltalake``'s query engine (DataFusion), generated from the checked tree:
    names in double quotes, strings in single quotes (quotes doubled), numbers as Python writes them."""
    types = types or {}
    if isinstance(tree, And):
        return f"({to_sql(tree.left, types)} AND {to_sql(tree.right, types)})"
    if isinstance(tree, Or):
        return f"({to_sql(tree.left, types)} OR {to_sql(tree.right, types)})"
    if isinstance(tree, Not):
        return f"(NOT {to_sql(tree.inner, types)})"
    col = '"' + tree.column.replace('"', '""') + '"'
    family = _family(types.get(tree.column, "")) if tree.column in types else None
    if isinstance(tree, IsNull):
        return f"({col} IS {'NOT ' if tree.negated else ''}NULL)"
    if isinstance(tree, In):
        inside = ", ".join(_sql_literal(v, family) for v in tree.values)
        return f"({col} {'NOT ' if tree.negated else ''}IN ({inside}))"
    return f"({col} {'<>' if tree.op == '!=' else tree.op} {_sql_literal(tree.value, family)})"


def _sql_literal(lit: Lit, family: str | None) -> str:
    if lit.kind == "number":
        return repr(float(lit.value)) if isinstance(lit.value, float) else str(int(lit.value))
    if lit.kind == "bool":
        return "TRUE" if lit.value else "FALSE"
    value = _lit_value(lit, family)
    if isinstance(value, _dt.datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, _dt.date):
        return f"DATE '{value.isoformat()}'"
    return "'" + str(value).replace("'", "''") + "'"
