"""The driver-side RFC 4180 scanner of CSV files, and finding the line behind an error Spark reports.

Sketch
------
Spark parses CSV line by line and says only that some records are malformed, or that a column holds a value it
does not take. The scanner (:func:`scan_records`) reads a file on the driver as RFC 4180 CSV (quoted values over
several lines, doubled quotes, any line end), keeping each record's first and last line and where an
unterminated quote opens; :func:`find_bad_record` and :func:`find_value` use it to name the file and line of the
first record with another number of fields than the header, or of the first bad value of a column.
"""
from __future__ import annotations

import zlib
from typing import NamedTuple

from ..errors import InputError, one_line
from .files import DataFile, open_text

FIELD_LIMIT = 1 << 20  # characters kept of one value by the driver-side scanner (values are only inspected)


class Record(NamedTuple):
    """One CSV record as :func:`scan_records` sees it.

    Attributes
    ----------
    line, end : int
        1-based physical lines where the record starts and ends (``end > line`` when a quoted value
        holds a line break).
    n_fields : int
    fields : list of str or None
        The values (only when asked for).
    quote_line : int or None
        Where the quoted value that carried the record over a line end (or that never closed) opens.
    closed : bool
        False when the file ends inside a quoted value.
    doubled : bool
        Whether a quote doubled as ``""`` occurs inside a quoted value.
    """

    line: int
    end: int
    n_fields: int
    fields: list | None
    quote_line: int | None = None
    closed: bool = True
    doubled: bool = False


def scan_records(lines, sep: str = ",", values: bool = False):
    """The RFC 4180 records of CSV text, with the physical lines they start and end on.

    A quote opens a quoted value only at the start of a field; inside it a doubled quote ``""`` is a quote,
    and separators and line breaks are part of the value; text after the closing quote is kept (as Python's
    ``csv`` module does). Blank lines (only whitespace) outside quotes are skipped, as Spark skips them.
    Lines without a quote take a fast path (split at the separator).

    Parameters
    ----------
    lines : iterable of str
        Physical lines with their line ends (a file opened with ``newline=''``).
    sep : str
        The one-character separator.
    values : bool
        Also return the values (each value is cut at ``FIELD_LIMIT`` characters).

    Yields
    ------
    Record
    """
    it = iter(lines)
    n_line = 0
    for raw in it:
        n_line += 1
        if '"' not in raw:
            body = raw.rstrip("\r\n")
            if body.strip():
                yield Record(n_line, n_line, body.count(sep) + 1, body.split(sep) if values else None)
            continue
        start, fields, cur = n_line, [], []
        n, state, quote_open, quote_line, doubled = 1, 0, 0, None, False  # 0 start, 1 plain, 2 quoted, 3 quote seen
        text = raw
        while True:
            for ch in text:
                if state == 2:
                    if ch == '"':
                        state = 3
                    elif values and len(cur) < FIELD_LIMIT:
                        cur.append(ch)
                    continue
                if ch == '"' and state == 3:
                    state, doubled = 2, True
                    if values:
                        cur.append(ch)
                elif ch == '"' and state == 0:
                    state, quote_open = 2, n_line
                elif ch == sep:
                    n += 1
                    state = 0
                    if values:
                        fields.append("".join(cur))
                        cur = []
                elif ch in "\r\n":
                    break
                else:
                    state = 1
                    if values and len(cur) < FIELD_LIMIT:
                        cur.append(ch)
            if state != 2:
                break
            if quote_line is None:
                quote_line = quote_open
            text = next(it, None)
            if text is None:
                if values:
                    fields.append("".join(cur))
                yield Record(start, n_line, n, fields if values else None, quote_open, False, doubled)
                return
            n_line += 1
        if values:
            fields.append("".join(cur))
        yield Record(start, n_line, n, fields if values else None, quote_line, True, doubled)


def file_records(spark, file: DataFile, sep: str, values: bool):
    """The records of a file; a stream that cannot be decompressed is an error naming the file."""
    try:
        with open_text(spark, file.path) as fh:
            yield from scan_records(fh, sep, values)
    except (OSError, EOFError, zlib.error) as err:
        raise InputError(f"{file.path}: cannot read the file ({one_line(err)})") from None


def find_bad_record(spark, files: list, headers: dict, n_columns: int):
    """The first malformed record of ``files`` read as RFC 4180 CSV.

    Parameters
    ----------
    files : list of DataFile
    headers : dict
        :class:`Header` by file path (gives each file's separator; its first record is skipped).
    n_columns : int

    Returns
    -------
    tuple (path, line, message) or None
        ``line`` is where the bad record starts, or where its unterminated quote opens.
    """
    for f in files:
        records = file_records(spark, f, headers[f.path].sep, values=False)
        if headers[f.path].present:
            next(records, None)
        for r in records:
            if not r.closed:
                return f.path, r.quote_line, ("a quoted value opens here and is never closed (unterminated '\"'; "
                                              f"the file ends on line {r.end} inside it)")
            if r.n_fields != n_columns:
                msg = field_count_message(n_columns, r.n_fields, headers[f.path].present)
                if r.end > r.line:
                    msg += (f"; this record runs to line {r.end} inside a quoted value that opens on line "
                            f"{r.quote_line}")
                return f.path, r.line, msg
    return None


def field_count_message(expected: int, found: int, header: bool) -> str:
    """The message for a record with ``found`` fields where the header (or a headerless file's given column
    names) has ``expected``."""
    return f"expected {expected} fields (as in the {'header' if header else 'column names given'}), found {found}"


def find_value(spark, files: list, headers: dict, column: str, predicate):
    """(path, line, value) of the first value of ``column`` for which ``predicate`` holds, or None."""
    for f in files:
        h = headers[f.path]
        j = h.names.index(column)
        records = file_records(spark, f, h.sep, values=True)
        if h.present:
            next(records, None)
        for r in records:
            if j < len(r.fields) and predicate(r.fields[j]):
                return f.path, r.line, r.fields[j]
    return None
