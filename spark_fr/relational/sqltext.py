"""Spark SQL expression text built with Python operators.

Building a Spark ``Column`` costs one py4j round trip per function or operator; the fixed-point arithmetic of
:mod:`spark_fr.relational.exact` would cost tens of thousands of them per feature table (seconds). An
:class:`Sql` object only concatenates text; :meth:`Sql.column` parses the finished expression once
(``F.expr``). Only internal column names and numbers go into the text, never user data (string values are
compared with Column expressions).
"""
from __future__ import annotations


class Sql:
    """An SQL expression (its text), combined with ``+ - * /``, unary ``-`` and the helpers below."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    @classmethod
    def col(cls, name: str) -> "Sql":
        """A column by name (backtick-quoted)."""
        return cls("`" + name.replace("`", "``") + "`")

    def _bin(self, op: str, other, reverse: bool = False) -> "Sql":
        o = text(other)
        return Sql(f"({o} {op} {self.text})" if reverse else f"({self.text} {op} {o})")

    def __add__(self, o):
        return self._bin("+", o)

    def __radd__(self, o):
        return self._bin("+", o, True)

    def __sub__(self, o):
        return self._bin("-", o)

    def __rsub__(self, o):
        return self._bin("-", o, True)

    def __mul__(self, o):
        return self._bin("*", o)

    def __rmul__(self, o):
        return self._bin("*", o, True)

    def __truediv__(self, o):
        return self._bin("/", o)

    def __rtruediv__(self, o):
        return self._bin("/", o, True)

    def __neg__(self):
        return Sql(f"(- {self.text})")

    def cast(self, type_name: str) -> "Sql":
        return Sql(f"CAST({self.text} AS {type_name})")

    def column(self):
        """The parsed ``pyspark.sql.Column``."""
        from pyspark.sql import functions as F

        return F.expr(self.text)


def text(x) -> str:
    """SQL text of an :class:`Sql` or a Python number (a double literal round-trips exactly)."""
    if isinstance(x, Sql):
        return x.text
    if isinstance(x, bool):
        raise TypeError("no booleans")
    if isinstance(x, int):
        return f"{x}L"
    if isinstance(x, float):
        return f"{x!r}D"
    raise TypeError(f"not an SQL operand: {x!r}")


def fn(name: str, *args) -> Sql:
    """``name(arg, ...)``."""
    return Sql(f"{name}({', '.join(text(a) for a in args)})")


def when(condition: Sql, value) -> Sql:
    """``CASE WHEN condition THEN value END`` (null otherwise)."""
    return Sql(f"(CASE WHEN {condition.text} THEN {text(value)} END)")


def compare(a, op: str, b) -> Sql:
    """``a op b`` for a comparison operator."""
    return Sql(f"({text(a)} {op} {text(b)})")
