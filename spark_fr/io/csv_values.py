"""The values of a CSV file: what is missing, a number, a date or infinite, in Python and as Spark columns.

Sketch
------
One rule per test of a value, written twice where two engines apply it:

* **in Python** (:func:`is_missing`, :func:`is_number`, :func:`is_date`, :func:`is_infinite`): the driver-side
  scanner that finds the line of a bad value (:mod:`spark_fr.io.csv_scan`) and the relational engine that reads
  CSV in the driver;
* **as Spark columns** (:class:`ValueTests`): the one aggregation that types every column of a CSV read
  (:func:`text_stats`: counts for :func:`spark_fr.io.csv_types.column_type`), and the filters that find the rows
  of a bad value. Missing markers: empty, ``?``, ``NA``, ``NaN``, ``null``, ``None``, ``n/a`` (any case); numbers
  by Spark's cast rules (Java's ``NaN`` / ``Infinity`` spellings in their case only).
"""
from __future__ import annotations

import re

from pyspark.sql import functions as F

from ..data.columns import qcol, try_cast, try_date
from ..errors import InputError
from . import csv_types as CT

MISSING_MARKERS = ("", "?", "na", "nan", "+nan", "-nan", "null", "none", "n/a")
_SPARK_TRIM = "".join(chr(i) for i in range(33))  # what Spark's string-to-number cast trims
_NUMBER = re.compile(
    r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    r"|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?")
_SPECIAL_NUMBERS = {"inf", "+inf", "-inf", "infinity", "+infinity", "-infinity", "nan"}  # Spark's, any case
_JAVA_SPECIAL = re.compile(r"[+-]?(?:NaN|Infinity)")  # Java's, this case only


def is_missing(text: str) -> bool:
    """Whether a CSV value is a missing marker (Spark side: ``lower(trim(v)) in MISSING_MARKERS``)."""
    return text.strip(" ").lower() in MISSING_MARKERS


def to_number(text: str) -> float | None:
    """The double Spark's ``try_cast(trim(v) as double)`` makes of a CSV value, or None.

    Spark's cast follows Java's ``Double.parseDouble`` (after trimming whitespace and control characters)
    plus the literals ``inf``, ``infinity`` (any case, signed) and ``nan`` (any case): ``1``, ``-2.5e3``, ``.5``, ``1d``
    and ``1f`` (Java suffixes), ``0x1p3`` are numbers; ``1_000``, ``0x10``, ``1,5`` are not.
    """
    t = text.strip(_SPARK_TRIM)
    low = t.lower()
    if low in _SPECIAL_NUMBERS or _JAVA_SPECIAL.fullmatch(t):
        return float(low)
    if _NUMBER.fullmatch(t) is None:
        return None
    if t[-1] in "fFdD":
        t = t[:-1]
    return float.fromhex(t) if "x" in low else float(t)


def is_number(text: str) -> bool:
    """Whether Spark's cast makes a number of a CSV value (see :func:`to_number`)."""
    return to_number(text) is not None


def is_date(text: str) -> bool:
    """Whether a CSV value is an existing ``yyyy-MM-dd`` date (Spark side: :func:`date_value`)."""
    import datetime as dt

    t = text.strip(" ")
    if not re.fullmatch(CT.DATE_RE, t):
        return False
    try:
        dt.date.fromisoformat(t)
    except ValueError:
        return False
    return True


def is_infinite(text: str) -> bool:
    """Whether a CSV value parses (as Spark does) to +-infinity, e.g. ``inf``, ``-Infinity`` or ``1e999``."""
    v = to_number(text)
    return v is not None and abs(v) == float("inf")


def infinite_message(value: str) -> str:
    """The end of the message for an infinite number ``value`` in a numeric column."""
    sign = "-inf" if (to_number(value) or 0) < 0 else "inf"
    return f" holds an infinite value ({sign}), written '{value}'; write it as a missing value or drop the row"


class ValueTests:
    """The tests of a text value, defined once: for the typing aggregation (over row columns computed once per row,
    :func:`text_stats`) and for finding a bad value's line (straight from the column, :meth:`of`).

    Parameters
    ----------
    text : Column
        The value trimmed.
    known : Column
        Whether the value is present and not a missing-value marker.
    cast : callable
        ``cast(sql_type)``: the trimmed value cast to ``sql_type``, null where it does not convert.
    """

    def __init__(self, text, known, cast):
        self.text, self.known, self.cast = text, known, cast
        self.number = cast("double")

    @classmethod
    def of(cls, c: str) -> "ValueTests":
        """The tests of column ``c`` itself."""
        return cls(F.trim(qcol(c)), known_value(c), lambda to: try_cast(c, to, trim=True))

    def numeric(self):
        return self.known & self.number.isNotNull()

    def infinite(self):
        return self.numeric() & (F.abs(self.number) == F.lit(float("inf")))

    def integer(self):
        return self.known & self.text.rlike(CT.INTEGER_RLIKE)

    def long(self):
        return self.integer() & self.cast("bigint").isNotNull()

    def decimal(self):
        return self.integer() & self.cast(CT.DECIMAL).isNotNull()

    def date(self):
        return self.known & self.text.rlike(CT.DATE_RLIKE) & try_date(self.text, "yyyy-MM-dd").isNotNull()


def known_value(c):
    """Column ``c``'s value is present and not a missing-value marker."""
    markers = F.array(*[F.lit(m) for m in MISSING_MARKERS])
    return qcol(c).isNotNull() & ~F.array_contains(markers, F.lower(F.trim(qcol(c))))


def numeric_value(c):
    """Column ``c``'s value is a number."""
    return ValueTests.of(c).numeric()


def infinite_value(c):
    """Column ``c``'s value is an infinite number."""
    return ValueTests.of(c).infinite()


def date_value(c):
    """Column ``c``'s value is a ``yyyy-MM-dd`` date that exists."""
    return ValueTests.of(c).date()


def class_index_ok(c, n_classes: int):
    """Column ``c``'s value is missing or a class index 0..n_classes - 1 (a scikit-learn CSV's last column)."""
    v = ValueTests.of(c).number
    return ~known_value(c) | (v.isNotNull() & (v == F.floor(v)) & (v >= 0) & (v < n_classes))


def text_stats(df, names: list, typed: bool, extra=()):
    """One aggregation of ``df`` with, per text column ``names[i]``, the counts of
    :class:`spark_fr.io.csv_types.Counts` (known ``k<i>``, numbers ``n<i>``; typed: integers ``i<i>``, longs
    ``l<i>``, 38-digit integers ``y<i>``, dates ``d<i>``), a text ``b<i>``, a non-date ``e<i>`` and an infinite
    value ``f<i>``; then the aggregates ``extra`` (over ``df``'s columns). The first row.

    The tests of a value (trimmed, known, parsed as a number, an integer, a date) are row columns computed once
    per row in two projections before the aggregation: written inside each aggregate, Spark evaluated them once
    per aggregate (9 per column), which took twice as long on a 10^6-line file."""
    p = "__t"  # the row columns' prefix: no column of df starts with it (without case)
    while any(c.lower().startswith(p) for c in df.columns):
        p += "_"
    rows = df.select("*", *[F.trim(qcol(c)).alias(f"{p}t{i}") for i, c in enumerate(names)],
                     *[known_value(c).alias(f"{p}k{i}") for i, c in enumerate(names)])
    second = []
    for i, _ in enumerate(names):
        tests = ValueTests(F.col(f"{p}t{i}"), F.col(f"{p}k{i}"), lambda to, t=f"{p}t{i}": try_cast(t, to))
        second += [tests.numeric().alias(f"{p}n{i}"), tests.infinite().alias(f"{p}f{i}")]
        if typed:
            second += [tests.integer().alias(f"{p}i{i}"), tests.long().alias(f"{p}l{i}"),
                       tests.decimal().alias(f"{p}y{i}"), tests.date().alias(f"{p}d{i}")]
    rows = rows.select("*", *second)
    aggs = []
    for i, c in enumerate(names):
        flag = {x: F.col(f"{p}{x}{i}") for x in ("kndfily" if typed else "knf")}
        aggs += [F.count(F.when(flag["k"], 1)).alias(f"k{i}"), F.count(F.when(flag["n"], 1)).alias(f"n{i}"),
                 F.min(F.when(flag["k"] & ~flag["n"], qcol(c))).alias(f"b{i}"),
                 F.min(F.when(flag["f"], qcol(c))).alias(f"f{i}")]
        if typed:
            aggs += [F.count(F.when(flag[x], 1)).alias(f"{x}{i}") for x in "ilyd"]
            aggs.append(F.min(F.when(flag["k"] & ~flag["d"], qcol(c))).alias(f"e{i}"))
    return rows.agg(*aggs, *extra).first()


def counts(found: dict, i: int) -> CT.Counts:
    """The :class:`spark_fr.io.csv_types.Counts` of column ``i`` in a row of :func:`text_stats`."""
    return CT.Counts(*(found.get(f"{x}{i}", 0) for x in "knilyd"))


def typed_value(c: str, kind: str):
    """Text column ``c`` as a column of ``kind`` (a type of :func:`spark_fr.io.csv_types.column_type`)."""
    value = F.trim(qcol(c))
    if kind == CT.DATE:
        value = F.to_date(value, "yyyy-MM-dd")
    elif kind != CT.STRING:
        value = value.cast(kind)
    return F.when(known_value(c), value)


def type_text_columns(df, names: list, declared: dict, where: str):
    """Type the string columns ``names`` of a table read from text without lines (JSON) by the relational rule of
    :mod:`spark_fr.io.csv_types` (one aggregation); the other columns stay as they are.

    Raises
    ------
    InputError
        A value that does not fit its column (named with ``where`` and the column), an infinite number.
    """
    if not names:
        return df
    found = text_stats(df, names, True).asDict()
    typed = {}
    for i, c in enumerate(names):
        kind, problem = CT.column_type(counts(found, i), True, declared.get(c))
        if problem is not None:
            value = found[f"b{i}" if problem == CT.NOT_A_NUMBER else f"e{i}"]
            raise InputError(f"{where}: column '{c}'{CT.problem_text(problem, declared.get(c), value.strip())}")
        if kind == CT.DOUBLE and found[f"f{i}"] is not None:
            raise InputError(f"{where}: column '{c}'{infinite_message(found[f'f{i}'].strip())}")
        typed[c] = typed_value(c, kind)
    return df.select(*[typed[f.name].alias(f.name) if f.name in typed else qcol(f.name) for f in df.schema.fields])
