"""Streaming ARFF reader: header parsing and fast parsing of data lines.

Format sketch
-------------
::

    % comment                                  (also blank lines, anywhere)
    @relation name
    @attribute x1 numeric                      (also real, integer)
    @attribute 'a name' {v1, 'v 2', v3}        (nominal: domain in braces)
    @attribute s string
    @attribute d date "yyyy-MM-dd"             (format accepted, not used)
    @attribute class hierarchical 01,01/02     (Clus: tree paths or DAG edges)
    @data
    1.5,v1,abc,2020-01-01,01/02@01/03          (dense row)
    {0 1.5, 2 'x y'}                           (sparse row: 0-based index, value)

A file may be gzip-compressed if its name ends in ``.gz`` (as Spark's text reader requires).

Modules, from the bottom up (each imports only modules above it in this list)
-----------------------------------------------------------------------------
``errors``   ArffError / ArffLineError, the internal Problem, formatting a located line error
``source``   opening a file as text (plain or gzip), finding a row's line number
``tokens``   quoting and escapes, splitting values, sparse ``index value`` entries, header tokens
``header``   ``@relation``, ``@attribute`` (types, nominal domains, Clus ``hierarchical``), read_header
``parsed``   ParsedRows / SparseParsedRows and joining the pieces of runs
``cells``    per-attribute conversion of cells (numbers, domains, missing values, sparse defaults)
``layout``   features as CSR columns: the attribute -> column map, CSR of tokenized rows
``dense``    dense rows: pyarrow CSV fast path, Python path, dense columns to CSR
``sparse``   sparse rows: index checks, Python path, pyarrow fast path, entries to columns / CSR
``runs``     grouping lines into runs of one kind (dense, sparse, quoted)
``parser``   ArffRowParser: runs -> the right path; the earliest bad line as an ArffLineError
``spark``    (imported on demand) an ARFF file as a Spark DataFrame (``read_arff``)

Decisions
---------
* The header is streamed line by line (``read_header`` never reads the whole
  file). The first data row is peeked to tell dense from sparse data.
* Data lines are parsed by :class:`ArffRowParser`, which receives lines
  without line numbers (they come from Spark splits). Lines whose first
  non-blank character is ``%`` and blank lines are skipped; a ``%`` elsewhere is
  an ordinary character.
* Dense rows are split on ``,`` only (not on whitespace, unlike Weka's
  tokenizer); unquoted values are stripped of surrounding whitespace, quoted
  values are kept exactly. A quote character only opens a quoted value at the
  start of a value; elsewhere it is literal. A quoted ``'?'`` is the literal
  string ``?``, not a missing value. Nominal domains are also comma
  separated, so ``{low value, high}`` has the two values ``low value`` and
  ``high``.
* Fast paths: lines are grouped into runs of dense unquoted, sparse
  unquoted and quoted lines. Dense runs are parsed by pyarrow's CSV reader
  (C++); sparse runs are split with pyarrow string kernels and converted
  once per distinct value (numeric) or distinct (attribute, value) pair
  (nominal) with numpy. When a fast path fails (e.g. a ``?`` with spaces
  around it, or a malformed row) the run is re-parsed in Python, which
  defines the semantics and produces the exact error. Quoted lines always
  use the Python character tokenizer. Numbers follow Python's ``float``
  (``nan``, ``inf`` accepted).
* Sparse rows follow Weka: absent numeric -> 0.0, absent nominal -> the
  first value of the domain; absent string/date/hierarchical -> missing.
  Indices need not be sorted, but may not repeat, and must be integers in
  ``0..m-1``. Instance weights (``{w}`` after a row) and relational attributes
  are not supported.
* Errors are :class:`ArffError` (a ``ValueError``) with one line:
  ``FILE line N: attribute 'x': reason``. Row errors raised by the parser are
  :class:`ArffLineError` carrying ``line_text`` and ``reason``; the caller
  turns them into a located message with :func:`find_line_number` and
  :func:`format_line_error`. When a chunk of lines has several errors, the
  one in the earliest line is reported.
"""

from __future__ import annotations

from .errors import ArffError, ArffLineError, format_line_error
from .header import ArffAttribute, ArffHeader, read_header
from .parsed import ParsedRows, SparseParsedRows
from .parser import ArffRowParser
from .source import find_line_number

__all__ = [
    "ArffError",
    "ArffLineError",
    "ArffAttribute",
    "ArffHeader",
    "ParsedRows",
    "SparseParsedRows",
    "ArffRowParser",
    "read_header",
    "find_line_number",
    "format_line_error",
]
