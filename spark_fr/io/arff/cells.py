"""Converting tokenized values (cells) to column values, attribute by attribute.

Sketch
------
* :class:`CellConverter` is built once per header: per attribute its kind, its nominal domain
  (a set, and value -> domain index), its sparse default, and a kind id for vectorized code.
* The exact, per-cell rule is :meth:`CellConverter.convert`: numbers follow Python's ``float``
  (``nan``, ``inf`` accepted), an unquoted ``?`` is missing, a quoted value is taken as written,
  a nominal value must be in its domain. Every fast path must agree with it.
* :meth:`CellConverter.cell_columns` converts whole columns of tokenized rows: without quotes with
  numpy / set operations, with quotes cell by cell through ``convert``.
* Sparse defaults follow Weka: absent numeric -> 0, absent nominal -> the first value of the
  domain, absent string/date/hierarchical -> missing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .errors import Problem
from .header import NOMINAL, NUMERIC, ArffAttribute, domain_text
from .parsed import ParsedRows
from .tokens import Quoted

KIND_IDS = {NUMERIC: 0, NOMINAL: 1}  # everything else: 2 (text)


class CellConverter:
    """Per-attribute conversion of cells to numbers, nominal values or text.

    Parameters
    ----------
    attributes : sequence of ArffAttribute
        The header's attributes.

    Attributes
    ----------
    attrs : tuple of ArffAttribute
    m : int
        Number of attributes.
    domains : list of frozenset or None
        Per nominal attribute its values and ``'?'``.
    codes : list of dict or None
        Per nominal attribute: value -> domain index (float).
    defaults : list of str
        The cell an absent sparse entry stands for.
    quoted_default : bool
        True if some default must not be stripped (forces the exact conversion path).
    kind_ids : ndarray of int8
        0 numeric, 1 nominal, 2 text, per attribute.
    """

    def __init__(self, attributes: Sequence[ArffAttribute]):
        self.attrs = tuple(attributes)
        self.m = len(self.attrs)
        self.domains = [frozenset(a.values) | {"?"} if a.kind == NOMINAL else None for a in self.attrs]
        self.codes = [
            {v: float(k) for k, v in enumerate(a.values)} if a.kind == NOMINAL else None for a in self.attrs
        ]
        self.defaults = [sparse_default(a) for a in self.attrs]
        self.quoted_default = any(isinstance(d, Quoted) for d in self.defaults)
        self.kind_ids = np.array([KIND_IDS.get(a.kind, 2) for a in self.attrs], dtype=np.int8)

    def is_numeric(self, a: int) -> bool:
        """True if attribute ``a`` is numeric."""
        return self.attrs[a].kind == NUMERIC

    def check_count(self, found: int) -> None:
        """Raise a :class:`Problem` unless a dense row has one value per attribute."""
        if found != self.m:
            reason = f"expected {self.m} values, found {found}"
            if found < self.m:
                reason += f" (no value for attribute {self.attrs[found].name!r})"
            raise Problem(reason)

    def locate(self, exc: Problem) -> Problem:
        """Prefix a tokenizer problem with the attribute it concerns, when known."""
        cell = exc.cell
        if isinstance(cell, str):
            try:
                cell = int(cell)
            except ValueError:
                cell = None
        if isinstance(cell, int) and 0 <= cell < self.m:
            return Problem(f"attribute {self.attrs[cell].name!r}: {exc}")
        return exc

    def convert(self, a: int, cell: str):
        """Strict conversion of one cell.

        Parameters
        ----------
        a : int
            Attribute index.
        cell : str
            The cell (a :class:`Quoted` value is never stripped nor missing).

        Returns
        -------
        float, str or None
            float for numeric attributes (NaN = missing); str or None (missing) otherwise.

        Raises
        ------
        Problem
            Not a number, or a nominal value outside the domain (the reason names the attribute).
        """
        attr = self.attrs[a]
        if isinstance(cell, Quoted):
            text, missing = str(cell), False
        else:
            text = cell.strip()
            missing = text == "?"
        if attr.kind == NUMERIC:
            if missing:
                return float("nan")
            try:
                return float(text)
            except ValueError:
                raise Problem(f"attribute {attr.name!r}: {text!r} is not a number") from None
        if missing:
            return None
        if attr.kind == NOMINAL and text not in self.codes[a]:
            raise Problem(f"attribute {attr.name!r}: {text!r} is not in the domain {domain_text(attr.values)}")
        return text

    def empty(self, attrs: Sequence[int]) -> ParsedRows:
        """Zero rows of the columns ``attrs``."""
        out = ParsedRows(0)
        for a in attrs:
            if self.is_numeric(a):
                out.numeric[a] = np.empty(0, dtype=np.float64)
            else:
                out.nominal[a] = []
        return out

    def cell_columns(self, attrs: Sequence[int], rows: list[list[str]], quoted: bool) -> ParsedRows:
        """Columns of tokenized rows (cells aligned with ``attrs``).

        Parameters
        ----------
        attrs : sequence of int
            The attribute of each cell position.
        rows : list of list of str
        quoted : bool
            True if any cell may be :class:`Quoted` (cell-by-cell conversion).

        Raises
        ------
        Problem
            Some value is invalid (the reason may be vague on the unquoted path: the caller
            re-checks line by line for the exact error).
        """
        if not rows:
            return self.empty(attrs)
        out = ParsedRows(len(rows))
        for a, column in zip(attrs, zip(*rows)):
            if self.is_numeric(a):
                out.numeric[a] = self._numeric_column(a, column, quoted)
            else:
                out.nominal[a] = self._text_column(a, column, quoted)
        return out

    def _numeric_column(self, a: int, column: tuple[str, ...], quoted: bool) -> np.ndarray:
        if not quoted:
            try:
                return np.array(column, dtype=np.float64)
            except ValueError:
                filled = ["nan" if v.strip() == "?" else v for v in column]
                return np.array(filled, dtype=np.float64)
        return np.array([self.convert(a, v) for v in column], dtype=np.float64)

    def _text_column(self, a: int, column: tuple[str, ...], quoted: bool) -> list[str | None]:
        if quoted:
            return [self.convert(a, v) for v in column]
        values = list(map(str.strip, column))
        present = set(values)
        domain = self.domains[a]
        if domain is not None and not present <= domain:
            raise Problem("value outside domain")
        if "?" in present:
            values = [None if v == "?" else v for v in values]
        return values


def sparse_default(attr: ArffAttribute) -> str:
    """The cell an absent sparse entry of ``attr`` stands for (Weka's convention)."""
    if attr.kind == NUMERIC:
        return "0"
    if attr.kind == NOMINAL:
        first = attr.values[0]
        needs_quote = first != first.strip() or first == "?"
        return Quoted(first) if needs_quote else first
    return "?"
