"""Tokens of ARFF text: quoting and escapes, comma-separated values, sparse ``index value`` entries.

Sketch
------
* A value opening with ``'`` or ``"`` is quoted: it runs to the matching quote, the escapes
  ``\\'``, ``\\"``, ``\\\\``, ``\\t``, ``\\n``, ``\\r`` and ``\\%`` are resolved (any other
  backslash is kept literally), and it is returned as :class:`Quoted` (never stripped, never
  missing: a quoted ``'?'`` is the string ``?``). A quote anywhere else is an ordinary character.
* Values are separated by ``,`` only (not by whitespace, unlike Weka's tokenizer); unquoted values
  are stripped of surrounding whitespace.
* A sparse row body is split into ``(index text, value)`` pairs; the index is converted and checked
  by :mod:`spark_fr.io.arff.sparse`, which knows the attributes.
* Header tokens (names, type keywords) are separated by spaces and tabs, and a bare token also
  ends at ``{`` (``@attribute a{x,y}``).
* Failures raise :class:`spark_fr.io.arff.errors.Problem` with the value position (dense) or the
  index text (sparse) so that the caller can name the attribute.
"""

from __future__ import annotations

from .errors import Problem, shorten

ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "'": "'", '"': '"', "\\": "\\", "%": "%"}
WHITESPACE = " \t\r\n\f\v"
QUOTES = "'\""


class Quoted(str):
    """A value that was quoted in the source: never stripped, never missing."""

    __slots__ = ()


def has_quote(text: str) -> bool:
    """True if ``text`` contains a quote character (it then needs the quoting tokenizer)."""
    return "'" in text or '"' in text


def read_quoted(text: str, start: int) -> tuple[str, int]:
    """Read the quoted token opening at ``text[start]``.

    Parameters
    ----------
    text : str
    start : int
        Position of the opening quote.

    Returns
    -------
    value : str
        The unquoted value, escapes resolved.
    end : int
        The position after the closing quote.

    Raises
    ------
    Problem
        If the quote is not closed.
    """
    quote = text[start]
    out: list[str] = []
    i = start + 1
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == quote:
            return "".join(out), i + 1
        if ch == "\\" and i + 1 < n:
            nxt = text[i + 1]
            out.append(ESCAPES.get(nxt, "\\" + nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    raise Problem(f"unterminated quote {quote} in {shorten(text[start:], 40)}")


def skip_ws(text: str, i: int) -> int:
    """The first position from ``i`` that is not whitespace."""
    n = len(text)
    while i < n and text[i] in WHITESPACE:
        i += 1
    return i


def _until_comma(text: str, start: int) -> str:
    end = text.find(",", start)
    return text[start:] if end < 0 else text[start:end]


def _after_quoted(text: str, j: int, value: str, cell) -> int:
    """Skip whitespace after a quoted value; only a comma or the end may follow."""
    j = skip_ws(text, j)
    if j < len(text) and text[j] != ",":
        raise Problem(f"unexpected text after quoted value {value!r}: {shorten(_until_comma(text, j), 30)}", cell)
    return j


def split_quoted_values(text: str) -> list[str]:
    """Split comma-separated values honouring quotes.

    Parameters
    ----------
    text : str
        A dense row, or the body of a nominal domain.

    Returns
    -------
    list of str
        Unquoted values stripped (plain ``str``); quoted values unquoted, as :class:`Quoted`.

    Raises
    ------
    Problem
        Unterminated quote or text after a quoted value; ``cell`` is the value position.
    """
    cells: list[str] = []
    n = len(text)
    i = 0
    while True:
        j = skip_ws(text, i)
        if j < n and text[j] in QUOTES:
            try:
                value, j = read_quoted(text, j)
            except Problem as exc:
                raise Problem(str(exc), len(cells)) from None
            j = _after_quoted(text, j, value, len(cells))
            cells.append(Quoted(value))
        else:
            k = text.find(",", j)
            k = n if k < 0 else k
            cells.append(text[j:k].strip())
            j = k
        if j >= n:
            return cells
        i = j + 1  # skip the comma


def split_sparse_quoted(body: str) -> list[tuple[str, str]]:
    """Split the body of a sparse row containing quotes into ``(index text, value)`` pairs.

    Raises
    ------
    Problem
        A malformed entry; ``cell`` is the entry's index text when there is one.
    """
    items: list[tuple[str, str]] = []
    n = len(body)
    i = 0
    while True:
        j = skip_ws(body, i)
        k = j
        while k < n and body[k] not in WHITESPACE and body[k] != ",":
            k += 1
        index_text = body[j:k]
        j = skip_ws(body, k)
        if not index_text or j >= n or body[j] == ",":
            raise Problem(entry_problem(body[i:j].strip()), index_text or None)
        if body[j] in QUOTES:
            try:
                value, j = read_quoted(body, j)
            except Problem as exc:
                raise Problem(str(exc), index_text) from None
            value = Quoted(value)
            j = _after_quoted(body, j, value, index_text)
        else:
            k = body.find(",", j)
            k = n if k < 0 else k
            value = body[j:k].strip()
            j = k
        items.append((index_text, value))
        if j >= n:
            return items
        i = j + 1


def split_plain_sparse(body: str) -> list[tuple[str, str]]:
    """Split the body of a sparse row without quotes into ``(index text, value)`` pairs.

    Raises
    ------
    Problem
        An entry without a value (or an empty entry); ``cell`` is its index text.
    """
    if not body or body.isspace():
        return []
    items = []
    for part in body.split(","):
        pair = part.split(None, 1)
        if len(pair) != 2:
            raise Problem(entry_problem(part.strip()), pair[0] if pair else None)
        items.append((pair[0], pair[1].rstrip()))
    return items


def entry_problem(entry: str) -> str:
    """Why the sparse entry text ``entry`` is not ``<index> <value>``."""
    if not entry:
        return "empty sparse entry"
    if len(entry.split()) == 1:
        return f"sparse entry {shorten(entry, 30)} has no value"
    return f"sparse entry {shorten(entry, 30)} is not '<index> <value>'"


def header_word(text: str, i: int) -> tuple[str, int]:
    """Read one header token (quoted, or bare up to whitespace or ``{``) from ``text[i:]``.

    Returns
    -------
    token : str
    end : int
        The position after the token.
    """
    i = skip_ws(text, i)
    if i < len(text) and text[i] in QUOTES:
        return read_quoted(text, i)
    j = i
    while j < len(text) and text[j] not in WHITESPACE and text[j] != "{":
        j += 1
    return text[i:j], j


def is_blank_or_comment(text: str) -> bool:
    """True for a blank line or one whose first non-blank character is ``%``."""
    s = text.strip()
    return not s or s[0] == "%"


def keyword(stripped: str) -> str | None:
    """The lower-cased ``@keyword`` opening a stripped header line, or None."""
    if not stripped.startswith("@"):
        return None
    end = 1
    while end < len(stripped) and stripped[end] not in WHITESPACE and stripped[end] != "{":
        end += 1
    return stripped[:end].lower()
