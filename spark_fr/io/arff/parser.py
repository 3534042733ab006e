"""The ARFF row parser: data lines (dense and/or sparse) to columns or to CSR features.

Sketch
------
* Lines arrive without line numbers (they come from Spark splits). They are grouped into runs of
  one kind (:mod:`spark_fr.io.arff.runs`), and each run is converted as a whole:

  - ``CSV`` (dense, no quotes): pyarrow's CSV reader, Python on failure (:mod:`.dense`);
  - ``SPARSE`` (no quotes): pyarrow string kernels, Python on failure (:mod:`.sparse`);
  - ``QUOTED``: the Python tokenizer line by line, then column conversion (:mod:`.cells`).

* ``parse_plain`` reads a plain chunk of dense lines (bytes: :mod:`.plain`) with pyarrow's CSV reader as it
  is, or declines (None).
* ``parse_lines`` returns every attribute column-wise; ``parse_lines_sparse`` returns the chosen
  feature attributes as CSR arrays and the others column-wise (:mod:`.layout`).
* Errors: when converting a run fails, its raw lines are re-checked one by one with the exact
  Python rules, and the earliest bad line is raised as an :class:`ArffLineError` (reason +
  raw text); the caller locates it in the file.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from . import dense, sparse
from .cells import CellConverter
from .errors import ArffLineError, Problem
from .header import ArffHeader
from .layout import Layout, check_features, items_to_csr, make_layout, split_row
from .parsed import ParsedRows, SparseParsedRows, concat_csr, concat_parsed, select
from .plain import plain_shape
from .runs import CSV, SPARSE, line_runs


class ArffRowParser:
    """Parse ARFF data lines against a header.

    Parameters
    ----------
    header : ArffHeader
        The header of the file the lines come from.

    Notes
    -----
    Instances are picklable (they are shipped to Spark executors).
    """

    def __init__(self, header: ArffHeader):
        self.header = header
        self._conv = CellConverter(header.attributes)

    def parse_lines(self, lines: Iterable[str]) -> ParsedRows:
        """Parse data lines (dense and/or sparse) into columns.

        Parameters
        ----------
        lines : iterable of str
            Data lines, with or without line terminators. Blank lines and
            lines starting with ``%`` are skipped.

        Returns
        -------
        ParsedRows
            Every attribute, column-wise.

        Raises
        ------
        ArffLineError
            For the earliest malformed line: wrong number of values, bad
            number, nominal value outside the domain, unterminated quote,
            bad sparse entry or index.
        """
        attrs = list(range(self._conv.m))
        pieces: list[ParsedRows] = []
        for kind, stripped, raw in line_runs(lines):
            try:
                pieces.append(self._run_columns(kind, stripped, attrs))
            except ValueError as exc:
                self._raise_first_error(raw, exc)
        return concat_parsed(pieces, self._conv.empty(attrs))

    def parse_plain(self, text: bytes) -> ParsedRows | None:
        """Every attribute of a plain chunk of dense lines (bytes, see :mod:`spark_fr.io.arff.plain`) read by
        pyarrow's CSV reader as it is; None when the chunk is not plain or pyarrow refuses it (then its lines take
        :meth:`parse_lines`, which gives the same rows, or the error)."""
        shape = plain_shape(text)
        if shape is None:
            return None
        try:
            return dense.arrow_text_columns(self._conv, text, *shape)
        except dense.FAST_PATH_FAILURES:
            return None

    def parse_lines_sparse(self, lines: Iterable[str], feature_indices: Sequence[int]) -> SparseParsedRows:
        """Parse data lines, returning the given features as CSR arrays.

        Parameters
        ----------
        lines : iterable of str
            Data lines (dense and/or sparse rows).
        feature_indices : sequence of int
            Numeric or nominal attribute indices; position p in this list is
            CSR column p. Nominal values are stored as their domain index.

        Returns
        -------
        SparseParsedRows
            CSR arrays for the features (zeros omitted, NaN = missing) and a
            :class:`ParsedRows` for every other attribute.

        Raises
        ------
        ArffError
            If ``feature_indices`` is invalid (out of range, repeated, or a
            string/date/hierarchical attribute).
        ArffLineError
            For the earliest malformed line (as :meth:`parse_lines`).
        """
        layout = make_layout(self._conv, check_features(self._conv, self.header.path, feature_indices))
        csr_pieces = []
        other_pieces: list[ParsedRows] = []
        for kind, stripped, raw in line_runs(lines):
            try:
                csr, other = self._run_csr(kind, stripped, layout)
            except ValueError as exc:
                self._raise_first_error(raw, exc)
            csr_pieces.append(csr)
            other_pieces.append(other)
        other = concat_parsed(other_pieces, self._conv.empty(layout.others))
        indptr, indices, values = concat_csr(csr_pieces)
        return SparseParsedRows(other.n_rows, tuple(layout.features), indptr, indices, values, other)

    # ----------------------------------------------------------------- one run

    def _run_columns(self, kind: str, stripped: list[str], attrs: list[int]) -> ParsedRows:
        """Columns of one run (all attributes)."""
        conv = self._conv
        if kind == CSV:
            return dense.csv_columns(conv, stripped, attrs)
        if kind == SPARSE:
            try:
                return sparse.entry_columns(conv, sparse.arrow_entries(conv, stripped), attrs)
            except dense.FAST_PATH_FAILURES:
                pass  # the Python path below defines the semantics and the errors
        rows, quoted = self._python_rows(stripped)
        return conv.cell_columns(attrs, [sparse.full_row(conv, row) for row in rows], quoted)

    def _run_csr(self, kind: str, stripped: list[str], layout: Layout):
        """CSR piece of the features and columns of the other attributes for one run."""
        conv = self._conv
        if kind == CSV:
            columns = dense.csv_columns(conv, stripped, list(range(conv.m)))
            return dense.dense_to_csr(conv, columns, layout.features), select(columns, layout.others)
        if kind == SPARSE:
            try:
                entries = sparse.arrow_entries(conv, stripped)
                return sparse.entry_csr(entries, layout), sparse.entry_columns(conv, entries, layout.others)
            except dense.FAST_PATH_FAILURES:
                pass
        rows, quoted = self._python_rows(stripped)
        other_rows, items = [], []
        for row in rows:
            other_row, feature_items = split_row(conv, row, layout)
            other_rows.append(other_row)
            items.append(feature_items)
        csr = items_to_csr(conv, items, layout, quoted)
        return csr, conv.cell_columns(layout.others, other_rows, quoted)

    def _python_rows(self, stripped: list[str]) -> tuple[list, bool]:
        """Tokenize lines one by one: (rows as cell lists or {index: cell} dicts, any quoted)."""
        rows = []
        quoted = False
        for s in stripped:
            row, row_quoted = self._row_cells(s)
            rows.append(row)
            quoted = quoted or row_quoted
        return rows, quoted

    def _row_cells(self, s: str) -> tuple[list[str] | dict[int, str], bool]:
        """Tokenize one stripped line: a list of m cells (dense) or {index: cell} (sparse)."""
        try:
            if s[0] == "{":
                return sparse.sparse_cells(self._conv, s)
            return dense.dense_cells(self._conv, s)
        except Problem as exc:
            raise self._conv.locate(exc) from None

    # ----------------------------------------------------------------- errors

    def _raise_first_error(self, raw: list[str], original: ValueError):
        """Re-check the raw lines of a run one by one and raise the earliest ArffLineError."""
        for line in raw:
            problem = self._check_line(line)
            if problem is not None:
                raise ArffLineError(problem, line) from None
        if isinstance(original, ArffLineError):
            raise original
        raise ArffLineError(str(original), raw[-1] if raw else "") from None

    def _check_line(self, line: str) -> str | None:
        """Reason why one line is invalid, or None."""
        try:
            row, _ = self._row_cells(line.strip())
            cells = row.items() if isinstance(row, dict) else enumerate(row)
            for a, cell in cells:
                self._conv.convert(a, cell)
        except Problem as exc:
            return str(exc)
        return None
