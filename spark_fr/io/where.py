"""Row filters (``--where``): parsed and checked here, bound to the session's time zone, never pasted into SQL.

Sketch
------
* **The grammar**: a small language of column comparisons, parsed into a tree (:class:`Cmp`, :class:`In`,
  :class:`IsNull`, :class:`And`, :class:`Or`, :class:`Not`)::

      expr    := or
      or      := and ("OR" and)*
      and     := not ("AND" not)*
      not     := "NOT" not | "(" expr ")" | compare
      compare := column ("=" | "==" | "!=" | "<>" | "<" | "<=" | ">" | ">=") literal
               | column ["NOT"] "IN" "(" literal ("," literal)* ")"
               | column "IS" ["NOT"] "NULL"
      column  := identifier | `backquoted`
      literal := number | 'string' ('' inside) | TRUE | FALSE | DATE 'yyyy-mm-dd' | TIMESTAMP '...'

  ``a OR b OR c ...`` is one :class:`Or` of all its terms (likewise ``AND``), so thousands of terms parse and
  render without recursion; they are rendered as a balanced tree (depth log2 of the terms). Parentheses and
  ``NOT`` may nest :data:`MAX_NESTING` deep. An integer beyond 64 bits and a number beyond a double's range
  (``1e400``) are one-line errors naming the literal, as Spark would otherwise fail (or DataFusion misread them).
* :func:`check_filter` checks the tree against the input's schema (every column exists, has a simple type, and is
  compared with a literal of its kind: a number with a numeric column, a string with a string column, a date
  with a date or timestamp column, ...).
* **One time-zone rule** (:func:`bind`): a literal compared with a ``timestamp`` column (an instant) that has no
  offset of its own (``TIMESTAMP '2026-03-01 00:00:00'``, ``'2026-03-01'``, ``DATE '2026-03-01'``: midnight) is
  read in the Spark session's time zone (``spark.sql.session.timeZone``), as Spark SQL reads it; the session
  itself turns the literal into an instant (``spark_micros``), so the rule is Spark's to the microsecond (DST
  gaps and overlaps included). Both Delta readers then compare with that instant. A ``timestamp_ntz`` column
  compares wall-clock times, with no zone. Decision: a literal with an offset compared with a ``timestamp_ntz``
  column is an error (which wall clock it means depends on a zone the column does not have).
* The bound tree becomes a Spark Column (:func:`to_column`: ``functions.col`` and ``functions.lit``, the text
  itself never reaches SQL) or, for ``deltalake``'s query engine, SQL text generated from the tree with every
  name and literal quoted (:func:`to_sql`); :func:`sql_depth` says how deeply that SQL nests (DataFusion's parser
  stops at 50 levels, and deep ``NOT`` chains go wrong before that: the reader filters in Spark instead).
  Decision: any top-level column may be filtered (a filter on the partition columns also prunes files, the
  point of ``--where`` on a partitioned table); expressions, functions and column-to-column comparisons are
  not part of the grammar.
"""
from __future__ import annotations

import datetime as _dt
import math
import operator
import re
from dataclasses import dataclass

from ..errors import InputError

#: the deepest nesting of parentheses and NOT a filter may have
MAX_NESTING = 64
INT64_MIN, INT64_MAX = -2 ** 63, 2 ** 63 - 1
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_MICRO = _dt.timedelta(microseconds=1)


# ----- the tree ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Lit:
    """A literal: ``kind`` is 'number', 'string', 'bool', 'date' or 'timestamp' as parsed; :func:`bind` makes a
    temporal literal 'instant' (microseconds since 1970-01-01 UTC), 'wallclock' (a naive datetime) or 'date'."""

    kind: str
    value: object

    def shown(self) -> str:
        if self.kind == "string":
            return "'" + str(self.value).replace("'", "''") + "'"
        if self.kind == "bool":
            return "TRUE" if self.value else "FALSE"
        if self.kind in ("date", "timestamp", "wallclock"):
            text = self.value.isoformat(sep=" ") if isinstance(self.value, _dt.datetime) else self.value.isoformat()
            return f"{'DATE' if self.kind == 'date' else 'TIMESTAMP'} '{text}'"
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
    items: tuple


@dataclass(frozen=True)
class Or:
    items: tuple


@dataclass(frozen=True)
class Not:
    inner: object


# ----- parsing ----------------------------------------------------------------------------------------------
_TOKEN = re.compile(r"""\s*(?:
    (?P<num>[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?))
  | (?P<str>'(?:[^']|'')*')
  | (?P<bq>`(?:[^`]|``)+`)
  | (?P<op><=|>=|<>|!=|==|=|<|>)
  | (?P<punct>[(),])
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
)""", re.VERBOSE)
_END = re.compile(r"\s*\Z")
_KEYWORDS = {"AND", "OR", "NOT", "IN", "IS", "NULL", "TRUE", "FALSE", "DATE", "TIMESTAMP"}


def clip(text: str, width: int = 80) -> str:
    """A filter as messages show it: its first ``width`` characters (a generated filter may be megabytes)."""
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[:width - 3] + "..."


def _tokens(text: str) -> list:
    out, i = [], 0
    while not _END.match(text, i):
        m = _TOKEN.match(text, i)
        if not m or m.end() == i:
            j = len(text) - len(text[i:].lstrip())
            raise InputError(f"--where {clip(text)}: unexpected {text[j]!r} at position {j + 1} (a filter compares "
                             f"columns with literals: col = 'x' AND n >= 3, col IN (1, 2), col IS NULL)")
        kind = m.lastgroup
        value, pos = m.group(kind), m.start(kind)
        if kind == "word" and value.upper() in _KEYWORDS:
            kind, value = "kw", value.upper()
        out.append((kind, value, pos))
        i = m.end()
    return out


def _number(value: str, pos: int, text: str):
    """A numeric literal: an int of 64 bits or a finite double, else a one-line error naming it."""
    if any(c in value for c in ".eE"):
        parsed = float(value)
        if not math.isfinite(parsed):
            raise InputError(f"--where {clip(text)}: the number {value} (position {pos + 1}) is beyond the range of a "
                             f"double (about 1.8e308)")
        return parsed
    digits = value.lstrip("+-").lstrip("0")
    parsed = int(value) if len(digits) <= 19 else None  # (Python refuses int() of more than 4300 digits)
    if parsed is None or not INT64_MIN <= parsed <= INT64_MAX:
        raise InputError(f"--where {clip(text)}: the integer {clip(value, 40)} (position {pos + 1}) does not fit in "
                         f"64 bits ({INT64_MIN} to {INT64_MAX})")
    return parsed


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks = _tokens(text)
        self.i = 0
        self.depth = 0

    def fail(self, what: str):
        if self.i < len(self.toks):
            _, value, pos = self.toks[self.i]
            where = f"at {clip(value, 40)!r} (position {pos + 1})"
        else:
            where = "at the end"
        raise InputError(f"--where {clip(self.text)}: expected {what} {where}")

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
        items = [self.and_()]
        while self.peek("kw", "OR"):
            self.i += 1
            items.append(self.and_())
        return items[0] if len(items) == 1 else Or(tuple(items))

    def and_(self):
        items = [self.not_()]
        while self.peek("kw", "AND"):
            self.i += 1
            items.append(self.not_())
        return items[0] if len(items) == 1 else And(tuple(items))

    def deeper(self):
        self.depth += 1
        if self.depth > MAX_NESTING:
            pos = self.toks[self.i][2]
            raise InputError(f"--where {clip(self.text)}: parentheses and NOT nest more than {MAX_NESTING} levels deep "
                             f"at position {pos + 1} (the limit is {MAX_NESTING}; a OR b OR c needs no parentheses)")

    def not_(self):
        start = self.depth
        nots = 0
        while self.peek("kw", "NOT"):  # a chain of NOTs without recursion
            self.deeper()
            self.i += 1
            nots += 1
        if self.peek("punct", "("):
            self.deeper()
            self.i += 1
            node = self.or_()
            self.take("punct", ")", "')'")
        else:
            node = self.compare()
        self.depth = start
        for _ in range(nots):
            node = Not(node)
        return node

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
        kind, value, pos = t
        self.i += 1
        if kind == "num":
            return Lit("number", _number(value, pos, self.text))
        if kind == "str":
            return Lit("string", value[1:-1].replace("''", "'"))
        if kind == "kw" and value in ("TRUE", "FALSE"):
            return Lit("bool", value == "TRUE")
        if kind == "kw" and value in ("DATE", "TIMESTAMP"):
            s = self.take("str", what=f"a quoted {value.lower()} after {value}")[1][1:-1]
            try:
                parsed = _dt.date.fromisoformat(s) if value == "DATE" else parse_datetime(s)
            except ValueError:
                raise InputError(f"--where {clip(self.text)}: {value} '{clip(s, 40)}' is not an ISO {value.lower()} "
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


def parse_datetime(text: str) -> _dt.datetime:
    """An ISO date-time (``T`` or a space between date and time; an offset or ``Z`` optional); ValueError if not."""
    s = text.strip()
    return _dt.datetime.fromisoformat(s.replace(" ", "T", 1) if len(s) > 10 else s)


def parse_filter(text) -> object:
    """The tree of a ``--where`` filter (module sketch); a one-line :class:`InputError` if it is not one."""
    if not isinstance(text, str):
        raise InputError(f"--where must be a string, not {text!r}")
    return _Parser(text).parse()


# ----- walking the tree without recursion --------------------------------------------------------------------
def leaves(tree):
    """The comparisons of a filter, in order of appearance."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (And, Or)):
            stack.extend(reversed(node.items))
        elif isinstance(node, Not):
            stack.append(node.inner)
        else:
            yield node


def columns_of(tree) -> list:
    """The columns a filter names, in order of appearance."""
    return list(dict.fromkeys(leaf.column for leaf in leaves(tree)))


def _literals(leaf) -> tuple:
    return leaf.values if isinstance(leaf, In) else (leaf.value,) if isinstance(leaf, Cmp) else ()


# ----- checking against the schema ----------------------------------------------------------------------------
#: which literal kinds each family of column types accepts
_ACCEPTS = {"number": {"number"}, "string": {"string"}, "bool": {"bool"}, "date": {"date", "string"},
            "timestamp": {"timestamp", "date", "string"}}
_NUMERIC = ("tinyint", "smallint", "int", "bigint", "float", "double", "byte", "short", "integer", "long")


def family(type_name: str) -> str | None:
    """The family of a Spark type name (simpleString): 'number', 'string', 'bool', 'date', 'timestamp' or None."""
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


def is_instant(type_name: str) -> bool:
    """Whether a Spark type is ``timestamp`` (an instant, shown in the session's zone), not ``timestamp_ntz``."""
    return type_name.lower() in ("timestamp", "timestamp_ltz")


def check_filter(tree, types: dict, source: str) -> None:
    """Check a filter against the input's columns: ``types`` is ``{column: Spark type name}`` (simpleString).

    Raises
    ------
    InputError
        A column that is not in the input, of a type that cannot be filtered, or compared with a literal of
        another kind (naming the column, its type and the literal).
    """
    lower = {c.lower(): c for c in types}
    for node in leaves(tree):
        col = node.column
        if col not in types:
            close = lower.get(col.lower())
            hint = f" (did you mean '{close}'?)" if close else ""
            raise InputError(f"--where: column '{col}' is not in {source}{hint}")
        fam = family(types[col])
        if fam is None:
            raise InputError(f"--where: column '{col}' of {source} is {types[col]}, which a filter cannot compare")
        for lit in _literals(node):
            if lit.kind not in _ACCEPTS[fam]:
                raise InputError(f"--where: column '{col}' of {source} is {types[col]}, compared with {lit.shown()} "
                                 f"(a {lit.kind}); give a {fam} literal")
            if lit.kind == "string" and fam in ("date", "timestamp"):
                try:
                    _dt.date.fromisoformat(lit.value) if fam == "date" else parse_datetime(lit.value)
                except ValueError:
                    raise InputError(f"--where: column '{col}' of {source} is {types[col]}; '{lit.value}' is not "
                                     f"an ISO {fam}") from None
            value = _temporal(lit, fam)
            if isinstance(value, _dt.datetime) and value.tzinfo is not None and not is_instant(types[col]):
                raise InputError(f"--where: column '{col}' of {source} is {types[col]} (a time without a zone), "
                                 f"compared with {lit.shown()}, which has an offset; give the time without one")


# ----- binding: the one time-zone rule ------------------------------------------------------------------------
def _temporal(lit: Lit, fam: str | None):
    """A literal's date or datetime as compared with a column of family ``fam`` (None: not temporal there)."""
    if fam == "date":
        return _dt.date.fromisoformat(lit.value) if lit.kind == "string" else lit.value
    if fam != "timestamp":
        return None
    if lit.kind == "string":
        return parse_datetime(lit.value)
    if lit.kind == "date":
        return _dt.datetime.combine(lit.value, _dt.time())  # a date compared with a time: its midnight
    return lit.value


def micros_of(value: _dt.datetime) -> int:
    """Microseconds since 1970-01-01 UTC of an aware datetime (a naive one read as UTC)."""
    aware = value if value.tzinfo is not None else value.replace(tzinfo=_dt.timezone.utc)
    return (aware - _EPOCH) // _MICRO


def naive_instants(tree, types: dict) -> list:
    """The naive date-times of a checked filter compared with ``timestamp`` columns: what the session's zone
    turns into instants (:func:`bind`)."""
    out = []
    for node in leaves(tree):
        if is_instant(types.get(node.column, "")):
            for lit in _literals(node):
                value = _temporal(lit, "timestamp")
                if value.tzinfo is None:
                    out.append(value)
    return list(dict.fromkeys(out))


def bind(tree, types: dict, instants: dict | None = None):
    """The checked filter with its temporal literals bound (module sketch): compared with a ``timestamp`` column,
    an 'instant' (``instants`` maps each naive date-time of :func:`naive_instants` to its microseconds in the
    session's zone); with a ``timestamp_ntz`` column, a 'wallclock'; with a ``date`` column, a 'date'."""
    instants = instants or {}

    def lit_for(lit: Lit, type_name: str) -> Lit:
        fam = family(type_name)
        value = _temporal(lit, fam)
        if value is None:
            return lit
        if fam == "date":
            return Lit("date", value)
        if not is_instant(type_name):
            return Lit("wallclock", value)
        return Lit("instant", instants[value] if value.tzinfo is None else micros_of(value))

    def leaf(node):
        t = types.get(node.column, "")
        if isinstance(node, Cmp):
            return Cmp(node.column, node.op, lit_for(node.value, t))
        if isinstance(node, In):
            return In(node.column, tuple(lit_for(v, t) for v in node.values), node.negated)
        return node

    return _map_leaves(tree, leaf)


def _map_leaves(tree, fn):
    """``tree`` with each comparison replaced by ``fn(comparison)`` (recursion only as deep as the nesting)."""
    if isinstance(tree, (And, Or)):
        return type(tree)(tuple(_map_leaves(t, fn) for t in tree.items))
    if isinstance(tree, Not):
        return Not(_map_leaves(tree.inner, fn))
    return fn(tree)


# ----- rendering ----------------------------------------------------------------------------------------------
def _balanced(parts: list, join):
    """``parts`` combined pairwise, level by level, into one balanced tree (depth log2 of the parts)."""
    while len(parts) > 1:
        parts = [join(parts[i], parts[i + 1]) if i + 1 < len(parts) else parts[i] for i in range(0, len(parts), 2)]
    return parts[0]


def _column_value(lit: Lit):
    from pyspark.sql import functions as F

    if lit.kind == "instant":
        return F.timestamp_micros(F.lit(int(lit.value)))
    if lit.kind == "wallclock":
        return F.lit(lit.value.isoformat(sep=" ")).cast("timestamp_ntz")
    if lit.kind == "date":
        return F.lit(lit.value.isoformat()).cast("date")
    return F.lit(lit.value)


#: a comparison's operator as a function of (Column, value)
_COMPARE = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
            ">=": operator.ge}


def to_column(tree):
    """A bound filter (:func:`bind`) as a Spark Column (``functions.col`` / ``lit``: no SQL text is parsed)."""
    from ..data.columns import qcol

    if isinstance(tree, And):
        return _balanced([to_column(t) for t in tree.items], lambda a, b: a & b)
    if isinstance(tree, Or):
        return _balanced([to_column(t) for t in tree.items], lambda a, b: a | b)
    if isinstance(tree, Not):
        return ~to_column(tree.inner)
    col = qcol(tree.column)
    if isinstance(tree, IsNull):
        return col.isNotNull() if tree.negated else col.isNull()
    if isinstance(tree, In):
        inside = col.isin([_column_value(v) for v in tree.values])
        return ~inside if tree.negated else inside
    return _COMPARE[tree.op](col, _column_value(tree.value))  # one comparison: each is a round trip to the JVM


def to_sql(tree) -> str:
    """A bound filter as SQL text for ``deltalake``'s query engine (DataFusion), generated from the checked tree:
    names in double quotes, strings in single quotes (quotes doubled), numbers as Python writes them, instants and
    wall-clock times as ``to_timestamp_micros(N)``."""
    if isinstance(tree, (And, Or)):
        word = " AND " if isinstance(tree, And) else " OR "
        return _balanced([to_sql(t) for t in tree.items], lambda a, b: f"({a}{word}{b})")
    if isinstance(tree, Not):
        return f"(NOT {to_sql(tree.inner)})"
    col = '"' + tree.column.replace('"', '""') + '"'
    if isinstance(tree, IsNull):
        return f"({col} IS {'NOT ' if tree.negated else ''}NULL)"
    if isinstance(tree, In):
        inside = ", ".join(_sql_literal(v) for v in tree.values)
        return f"({col} {'NOT ' if tree.negated else ''}IN ({inside}))"
    return f"({col} {'<>' if tree.op == '!=' else tree.op} {_sql_literal(tree.value)})"


def sql_depth(tree) -> int:
    """How deeply :func:`to_sql`'s text nests parentheses."""
    if isinstance(tree, (And, Or)):
        return max(sql_depth(t) for t in tree.items) + max(1, math.ceil(math.log2(len(tree.items))))
    if isinstance(tree, Not):
        return sql_depth(tree.inner) + 1
    return 1


def _sql_literal(lit: Lit) -> str:
    if lit.kind == "number":
        return repr(float(lit.value)) if isinstance(lit.value, float) else str(int(lit.value))
    if lit.kind == "bool":
        return "TRUE" if lit.value else "FALSE"
    if lit.kind == "instant":
        return f"to_timestamp_micros({int(lit.value)})"
    if lit.kind == "wallclock":
        return f"to_timestamp_micros({micros_of(lit.value)})"
    if lit.kind == "date":
        return f"DATE '{lit.value.isoformat()}'"
    return "'" + str(lit.value).replace("'", "''") + "'"
