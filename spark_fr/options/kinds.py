"""The kinds of option values: how an option reads command-line text and checks a typed value.

Sketch
------
Values arrive in two forms and are checked by the option's :class:`Kind`: text from the command line (``parse``:
``--trees 10``) and typed values from YAML, Python or a Spark Param (``coerce``: a string where a number or a
boolean is expected is an error, ``True`` is not an integer, ``inf`` and ``nan`` are not accepted anywhere).
Messages name the option as its command-line flag and quote the value (``--trees must be a positive integer, not
'x'``).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..errors import InputError


def _shown(value) -> str:
    if isinstance(value, str):
        return f"'{value}'"
    return repr(value)


class Kind:
    """How the values of an option are read and checked (subclasses per type); ``opt`` is the option's row of the
    table (:class:`spark_fr.options.table.Option`), whose flag the messages name."""

    #: a short description for messages, e.g. "a positive integer"
    description = "a value"

    def parse(self, text: str, opt):
        """The value of command-line text (default: the text checked as a typed value)."""
        return self.coerce(text, opt)

    def coerce(self, value, opt):
        """The checked value of a typed value (YAML, Python, a Spark Param); raises :class:`InputError`."""
        return value

    def fail(self, opt, value, where: str = "", what: str | None = None):
        raise InputError(f"{where}{opt.flag} must be {what or self.description}, not {_shown(value)}")


@dataclass(frozen=True)
class Integer(Kind):
    """An integer in [lo, hi] (bounds optional)."""

    lo: int | None = None
    hi: int | None = None
    description: str = "an integer"

    def parse(self, text, opt):
        try:
            value = int(str(text).strip())
        except ValueError:
            self.fail(opt, text)
        return self.coerce(value, opt)

    def coerce(self, value, opt):
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer() and math.isfinite(value):
                value = int(value)
            else:
                self.fail(opt, value)
        if (self.lo is not None and value < self.lo) or (self.hi is not None and value > self.hi):
            self.fail(opt, value)
        return value


class _OrWords:
    """A number kind that also takes some words (``words``): text that is one of them is kept as it is, other
    strings are parsed as numbers, and a message lists the words before the number's description."""

    def parse(self, text, opt):
        t = str(text).strip()
        return t if t in self.words else super().parse(t, opt)

    def coerce(self, value, opt):
        if isinstance(value, str):
            return self.parse(value, opt)
        return super().coerce(value, opt)

    def fail(self, opt, value, where="", what=None):
        super().fail(opt, value, where, what or " or ".join(self.words + (self.description,)))


@dataclass(frozen=True)
class IntegerOrWord(_OrWords, Integer):
    """An integer in [lo, hi], or one of some words (``--reliefe-k adaptive``, ``--reliefe-dimension auto``)."""

    words: tuple = ()


@dataclass(frozen=True)
class FoldCount(Integer):
    """A number of cross-validation folds: 0 (off) or an integer >= 2 (one fold is no cross-validation)."""

    lo: int | None = 0
    description: str = "0 (off) or an integer >= 2"

    def coerce(self, value, opt):
        value = super().coerce(value, opt)
        if value == 1:
            self.fail(opt, value, what="0 (off) or at least 2 (one fold leaves nothing to train on)")
        return value


@dataclass(frozen=True)
class Real(Kind):
    """A finite number in a range; ``lo_open`` / ``hi_open`` exclude the bound."""

    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    description: str = "a number"

    def parse(self, text, opt):
        try:
            value = float(str(text).strip())
        except ValueError:
            self.fail(opt, text)
        return self.coerce(value, opt)

    def coerce(self, value, opt):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            self.fail(opt, value)
        value = float(value)
        if self.lo is not None and (value < self.lo or (self.lo_open and value == self.lo)):
            self.fail(opt, value)
        if self.hi is not None and value > self.hi:
            self.fail(opt, value)
        return value


@dataclass(frozen=True)
class RealOrWord(_OrWords, Real):
    """A number in a range, or one of some words (e.g. ``auto``)."""

    words: tuple = ()


@dataclass(frozen=True)
class Flag(Kind):
    """true or false; on the command line a flag (``--no-<name>`` too when ``negatable``)."""

    negatable: bool = False
    description: str = "true or false"

    def coerce(self, value, opt):
        if not isinstance(value, bool):
            self.fail(opt, value)
        return value


@dataclass(frozen=True)
class Choice(Kind):
    """One of a fixed list of words (a callable gives the list when it depends on a registry)."""

    values: tuple | object = ()

    @property
    def choices(self) -> tuple:
        return tuple(self.values() if callable(self.values) else self.values)

    @property
    def description(self):
        return "one of " + ", ".join(self.choices)

    def coerce(self, value, opt):
        if not isinstance(value, str) or value not in self.choices:
            self.fail(opt, value)
        return value


@dataclass(frozen=True)
class Text(Kind):
    """A string (a path, a column name, a Spark master URL)."""

    description: str = "a string"

    def coerce(self, value, opt):
        if not isinstance(value, str) or not value.strip():
            self.fail(opt, value, what="a non-empty string")
        return value


@dataclass(frozen=True)
class Word(Text):
    """A string matching a pattern (a run id: safe in a file name, a commit message and a Delta predicate)."""

    pattern: str = r"[A-Za-z0-9][A-Za-z0-9._:+-]{0,127}"
    description: str = "letters, digits and . _ : + - (at most 128, starting with a letter or digit)"

    def coerce(self, value, opt):
        value = super().coerce(value, opt)
        if not re.fullmatch(self.pattern, value):
            self.fail(opt, value)
        return value


@dataclass(frozen=True)
class Names(Kind):
    """A list of names: a comma-separated string or a list of strings; optionally from fixed choices."""

    choices: tuple = ()
    description: str = "a comma list of names"

    def coerce(self, value, opt):
        if isinstance(value, str):
            items = [v.strip() for v in value.split(",") if v.strip()]
        elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            items = [v.strip() for v in value if v.strip()]
        else:
            self.fail(opt, value)
        if not items:
            self.fail(opt, value, what="a non-empty comma list")
        if self.choices and any(v not in self.choices for v in items):
            self.fail(opt, ",".join(items), what="a comma list of " + ", ".join(self.choices))
        return items


@dataclass(frozen=True)
class CountOrFraction(Kind):
    """A count (an integer >= 1) or a fraction in (0, 1]; '1.0' and 1.0 mean the fraction 1 (all)."""

    words: tuple = ()
    description: str = "a count or a fraction"

    def parse(self, text, opt):
        t = str(text).strip()
        if t in self.words:
            return t
        try:
            value = float(t) if any(c in t for c in ".eE") or t.lower() in ("inf", "nan") else int(t)
        except ValueError:
            self.fail(opt, text, what=self._what())
        return self.coerce(value, opt)

    def _what(self):
        return (", ".join(self.words) + ", " if self.words else "") + self.description

    def coerce(self, value, opt):
        if isinstance(value, str):
            return self.parse(value, opt)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            self.fail(opt, value, what=self._what())
        if isinstance(value, float):
            if value.is_integer() and value > 1:
                return int(value)
            if not 0 < value <= 1:
                self.fail(opt, value, what="in (0, 1] as a fraction")
            return value
        if value < 1:
            self.fail(opt, value, what=">= 1 as a count")
        return value

    def fail(self, opt, value, where="", what=None):
        if what and what.startswith(("in (0", ">= 1")):
            kind = "fraction" if what.startswith("in") else "count"
            raise InputError(f"{where}{opt.flag} as a {kind} must be {what.split(' as ')[0]}, not {_shown(value)}")
        super().fail(opt, value, where, what)


@dataclass(frozen=True)
class Pair(Kind):
    """Two numbers w0,w1 with lo <= w0 <= w1 <= hi: 'w0,w1' or a list of two numbers."""

    lo: float = 0.0
    hi: float = 1.0

    @property
    def description(self):
        return f"w0,w1 with {self.lo:g} <= w0 <= w1 <= {self.hi:g}"

    def coerce(self, value, opt):
        raw = value
        if isinstance(value, str):
            try:
                value = [float(v) for v in value.split(",")]
            except ValueError:
                self.fail(opt, raw)
        if not isinstance(value, (list, tuple)) or len(value) != 2 or any(
                isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) for v in value):
            self.fail(opt, raw)
        w0, w1 = float(value[0]), float(value[1])
        if not self.lo <= w0 <= w1 <= self.hi:
            self.fail(opt, raw)
        return (w0, w1)

