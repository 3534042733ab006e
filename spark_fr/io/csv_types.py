"""The type of a CSV column from counts of its values: one rule for every CSV reader of spark_fr.

Sketch
------
A reader counts, per column, its known values (not empty, not a missing marker) and how many of them are
numbers (Spark's cast rules), plain integer literals (``[+-]?[0-9]+``), integers within a long, integers within
38 digits, and ``yyyy-MM-dd`` dates that exist. :func:`column_type` turns the counts into a type, or into the
problem to report (the reader then finds the first offending value and names its file, line and column):

* **Flat tables** (``typed=False``, :func:`spark_fr.io.csv.read_csv` for ``spark_fr.rank``): all numbers ->
  ``double``; mostly numbers with some text -> the error ``number`` (a typo would otherwise turn a numeric
  column into categories); else ``string``.
* **Relational tables** (``typed=True``: :mod:`spark_fr.relational.sources` with Spark and
  :mod:`spark_fr.relational.local_sources` in the driver): integers are kept exact, since keys are integers and
  doubles above 2^53 collide: all integer literals -> ``bigint`` (within a long) or ``decimal(38,0)``; other
  numbers -> ``double``; all dates -> ``date``; mostly numbers -> error ``number``; mostly dates (an
  impossible date such as 2021-02-30, a typo) -> error ``date``; else ``string``. A **declared** type wins
  (the schema's ``types:``): ``nominal`` is always a string; ``numeric`` must be all numbers and ``date`` all
  dates (any other known value is the error); an ``id`` (keys and foreign keys too) is never an error:
  integers, else numbers, else strings.
"""
from __future__ import annotations

from dataclasses import dataclass

#: the Spark types :func:`column_type` returns
DOUBLE, BIGINT, DECIMAL, DATE, STRING = "double", "bigint", "decimal(38,0)", "date", "string"
#: the problems it reports: a value that is not a number, or not a date
NOT_A_NUMBER, NOT_A_DATE = "number", "date"
#: Java regular expressions (Spark's ``rlike``) and their Python twins (``fullmatch``): plain integer literals and
#: ``yyyy-MM-dd``, on values trimmed of spaces
INTEGER_RLIKE, INTEGER_RE = r"^[+-]?[0-9]+\z", r"[+-]?[0-9]+"
DATE_RLIKE, DATE_RE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}\z", r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
#: digits of the largest integers a ``decimal(38,0)`` holds
DECIMAL_DIGITS = 38


@dataclass(frozen=True)
class Counts:
    """What a reader counted in one column (see the module's notes).

    Attributes
    ----------
    known : int
        Values that are not missing.
    numbers : int
        Known values Spark's cast makes a number of.
    integers, longs, decimals : int
        Known values that are plain integer literals; of these, those within a long; those of at most 38 digits.
    dates : int
        Known values that are existing ``yyyy-MM-dd`` dates.
    """

    known: int
    numbers: int
    integers: int = 0
    longs: int = 0
    decimals: int = 0
    dates: int = 0


def _numeric_type(c: Counts, typed: bool) -> str:
    if typed and c.integers == c.known:
        if c.longs == c.known:
            return BIGINT
        if c.decimals == c.known:
            return DECIMAL
    return DOUBLE


def column_type(c: Counts, typed: bool = False, declared: str | None = None) -> tuple:
    """(Spark type, problem) of a CSV column (see the module's notes); problem is None,
    :data:`NOT_A_NUMBER` or :data:`NOT_A_DATE` (then the type is None).

    Parameters
    ----------
    c : Counts
    typed : bool
        Relational tables (exact integers, dates) rather than flat ones.
    declared : {'numeric', 'nominal', 'date', 'id'}, optional
        The schema's type of the column (relational tables).
    """
    k = c.known
    if declared == "nominal":
        return STRING, None
    if declared == "id":
        return (_numeric_type(c, typed) if k and c.numbers == k else STRING), None
    if declared == "numeric":
        return (_numeric_type(c, typed), None) if c.numbers == k else (None, NOT_A_NUMBER)
    if declared == "date":
        return (DATE, None) if c.dates == k else (None, NOT_A_DATE)
    if k and c.numbers == k:
        return _numeric_type(c, typed), None
    if typed and k and c.dates == k:
        return DATE, None
    if c.numbers > 0 and c.numbers >= k - c.numbers:
        return None, NOT_A_NUMBER
    if typed and c.dates > 0 and c.dates >= k - c.dates:
        return None, NOT_A_DATE
    return STRING, None


def problem_text(problem: str, declared: str | None, value: str) -> str:
    """The end of the one-line error for ``value`` of a column with ``problem`` (after ``column 'x'``)."""
    why = f"the schema declares it {declared}" if declared else (
        "the column is otherwise numeric" if problem == NOT_A_NUMBER else "the column is otherwise dates")
    what = "a number" if problem == NOT_A_NUMBER else "a date (yyyy-MM-dd)"
    return (f": '{value}' is not {what} ({why}); fix the value or write it as a missing value (empty or ?)")
