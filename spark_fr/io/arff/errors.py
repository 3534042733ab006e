"""ARFF errors: the exception types and the one-line messages they carry.

Sketch
------
* :class:`ArffError` (a ``ValueError``) is any header or data error; its message is one line that
  names the file: ``FILE line N: attribute 'x': reason``.
* Data lines reach the row parser without their line numbers (they come from Spark splits), so a
  row error is an :class:`ArffLineError` carrying the raw ``line_text`` and the ``reason``. The
  caller locates the line in the file (:func:`spark_fr.io.arff.source.find_line_number`) and
  formats the final message with :func:`format_line_error`.
* Inside the parser, tokenizers and converters raise :class:`Problem` (reason only, plus the value
  position or sparse index text when the attribute is not named yet); the row parser turns it into
  an :class:`ArffLineError`. A ``Problem`` never leaves the package.
"""

from __future__ import annotations

import os

EOL = "\r\n"


class ArffError(ValueError):
    """An ARFF header or data error; the message is one line naming the file."""


class ArffLineError(ArffError):
    """A data line that cannot be parsed (its line number is not known here).

    Attributes
    ----------
    line_text : str
        The raw line as given to the parser.
    reason : str
        What is wrong, without file or line number, e.g.
        ``"attribute 'x3': 'abc' is not a number"``.
    """

    def __init__(self, reason: str, line_text: str):
        self.reason = reason
        self.line_text = line_text
        super().__init__(f"{reason} (row: {shorten(line_text.rstrip(EOL))})")

    def __reduce__(self):
        return (type(self), (self.reason, self.line_text))


class Problem(ValueError):
    """Internal: a tokenizer/conversion failure carrying only the reason.

    ``cell`` locates the failure when the attribute is not named yet: the
    value position (dense row) or the index text (sparse row).
    """

    def __init__(self, reason: str, cell: int | str | None = None):
        super().__init__(reason)
        self.cell = cell


def shorten(text: str, limit: int = 80) -> str:
    """``repr`` of ``text``, cut to about ``limit`` characters."""
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def file_label(path: str) -> str:
    """The name shown for a file in messages (its base name)."""
    return os.path.basename(path) or path


def format_line_error(path: str, line_no: int | None, err: ArffLineError) -> str:
    """Format a row error as ``"FILE line N: reason"``.

    Parameters
    ----------
    path : str
        The ARFF file (only its base name is shown).
    line_no : int or None
        1-based line number (from :func:`spark_fr.io.arff.find_line_number`); None if unknown.
    err : ArffLineError
        The parser error.

    Returns
    -------
    str
        One line; with an unknown line number the row text is shown instead.
    """
    label = file_label(path)
    if line_no is None:
        return f"{label} (line unknown): {err.reason}; row {shorten(err.line_text.rstrip(EOL))}"
    return f"{label} line {line_no}: {err.reason}"
