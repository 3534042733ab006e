"""The ARFF header: ``@relation``, ``@attribute`` declarations (types, nominal domains, the Clus
``hierarchical`` class specification) up to ``@data``.

Sketch
------
::

    % comment                                  (also blank lines, anywhere)
    @relation name
    @attribute x1 numeric                      (also real, integer)
    @attribute 'a name' {v1, 'v 2', v3}        (nominal: domain in braces, comma separated)
    @attribute s string
    @attribute d date "yyyy-MM-dd"             (format accepted, not used)
    @attribute class hierarchical 01,01/02     (Clus: tree paths or DAG edges, kept as text)
    @data

* Keywords are case-insensitive; names may be quoted (:mod:`spark_fr.io.arff.tokens`).
* :func:`read_header` streams the file line by line up to ``@data`` (it never reads the whole
  file), then peeks at the first data row to tell dense data from sparse data.
* An attribute name declared twice is an error naming both attributes and their lines, or (with
  ``duplicate_names='rename'``) the repeat becomes ``name__2`` (:mod:`spark_fr.data.names`); CLUS reads
  such files by position, as the renamed header does.
* Every error is one :class:`ArffError` line ``FILE line N: attribute 'x': reason``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from .errors import ArffError, Problem, file_label, shorten
from .source import open_text, read_lines
from .tokens import QUOTES, Quoted, header_word, is_blank_or_comment, keyword, read_quoted, split_quoted_values

NUMERIC = "numeric"
NOMINAL = "nominal"
STRING = "string"
DATE = "date"
HIERARCHICAL = "hierarchical"

NUMERIC_KEYWORDS = frozenset({"numeric", "real", "integer"})


@dataclass(frozen=True)
class ArffAttribute:
    """One ``@attribute`` declaration.

    Attributes
    ----------
    name : str
        Attribute name, unquoted, escapes resolved.
    kind : str
        ``'numeric'``, ``'nominal'``, ``'string'``, ``'date'`` or ``'hierarchical'``.
    values : tuple of str or None
        Nominal domain in declaration order (None for other kinds).
    hierarchy : str or None
        For ``'hierarchical'``: the raw class specification after the keyword,
        whitespace-stripped (None for other kinds).
    """

    name: str
    kind: str
    values: tuple[str, ...] | None = None
    hierarchy: str | None = None


@dataclass(frozen=True)
class ArffHeader:
    """Parsed ARFF header.

    Attributes
    ----------
    path : str
        The file the header was read from.
    relation : str
        The ``@relation`` name ('' when absent).
    attributes : tuple of ArffAttribute
        Declared attributes, in order.
    data_line : int
        1-based line number of the ``@data`` line.
    sparse : bool or None
        True if the first data row is sparse (``{...}``), False if dense,
        None if the file has no data rows.
    renamed : tuple of spark_fr.data.names.Renamed
        Attributes whose name repeats an earlier one's, renamed (``duplicate_names='rename'``).
    """

    path: str
    relation: str
    attributes: tuple[ArffAttribute, ...]
    data_line: int
    sparse: bool | None
    renamed: tuple = ()


def read_header(path: str, duplicate_names: str = "error") -> ArffHeader:
    """Read the header of an ARFF file, streaming it up to ``@data``.

    Parameters
    ----------
    path : str
        ARFF file (UTF-8; undecodable bytes are replaced), plain or gzip-compressed (``.gz``).
    duplicate_names : {'error', 'rename'}
        An attribute name declared twice (two different columns, which CLUS reads by position) is an error,
        or the repeat is renamed by the rule of :mod:`spark_fr.data.names` (names compared exactly).

    Returns
    -------
    ArffHeader
        Relation, attributes, the line number of ``@data`` and whether the
        first data row is sparse.

    Raises
    ------
    ArffError
        Missing file, no ``@data``, no attributes, duplicate attribute name (with ``'error'``),
        malformed ``@attribute``/``@relation``, unknown type or unexpected
        header line, compression not matching the name; the message names the file and the
        1-based line.
    """
    label = file_label(path)
    relation = ""
    attributes: list[ArffAttribute] = []
    lines_of: list[int] = []
    with open_text(path) as handle:
        lines = read_lines(handle, label)
        line_no = 0
        for line_no, line in lines:
            stripped = line.strip()
            if not stripped or stripped[0] == "%":
                continue
            word = keyword(stripped)
            rest = stripped[len(word) :] if word else ""
            try:
                if word == "@relation":
                    relation = parse_relation(rest)
                elif word == "@attribute":
                    attributes.append(parse_attribute(rest))
                    lines_of.append(line_no)
                elif word == "@data":
                    _expect_end(rest, "@data")
                    if not attributes:
                        raise Problem("no @attribute declared before @data")
                    attributes, renamed = _unique_names(label, attributes, lines_of, duplicate_names)
                    sparse = _peek_sparse(line for _, line in lines)
                    return ArffHeader(path, relation, tuple(attributes), line_no, sparse, tuple(renamed))
                else:
                    raise Problem(f"unexpected header line {shorten(stripped, 60)}")
            except Problem as exc:
                raise ArffError(f"{label} line {line_no}: {exc}") from None
    raise ArffError(f"{label} line {line_no}: no @data line found")


def _unique_names(label: str, attributes: list, lines_of: list, policy: str) -> tuple:
    """The attributes with repeated names renamed (:func:`spark_fr.data.names.deduplicate`), or an ArffError."""
    from ...data.names import deduplicate
    from ...errors import InputError

    def source(position: int) -> str:
        return f"{label} line {lines_of[position]}"

    def first_line(first: int, position: int) -> str:
        return f"; the first on line {lines_of[first]}"

    try:
        names, renamed = deduplicate([a.name for a in attributes], policy, source=source, unit="attribute",
                                     detail=first_line)
    except InputError as err:
        raise ArffError(str(err)) from None
    if renamed:
        attributes = [a if a.name == n else replace(a, name=n) for a, n in zip(attributes, names)]
    return attributes, renamed


def parse_relation(rest: str) -> str:
    """The relation name from the text after ``@relation`` (quoted or bare)."""
    rest = rest.strip()
    if rest[:1] in QUOTES:
        name, _ = read_quoted(rest, 0)
        return name
    return rest


def parse_attribute(rest: str) -> ArffAttribute:
    """Parse the text after ``@attribute``.

    Raises
    ------
    Problem
        The reason, starting with ``attribute 'name':`` once the name is known.
    """
    name, i = header_word(rest, 0)
    if name == "":
        raise Problem("missing attribute name")
    type_text = rest[i:].strip()
    if not type_text or type_text.startswith("%"):
        raise Problem(f"attribute {name!r}: missing type")
    try:
        return _typed_attribute(name, type_text)
    except Problem as exc:
        raise Problem(f"attribute {name!r}: {exc}") from None


def _typed_attribute(name: str, type_text: str) -> ArffAttribute:
    """The attribute ``name`` of the declared type ``type_text`` (without the name prefix on errors)."""
    if type_text.startswith("{"):
        return ArffAttribute(name, NOMINAL, parse_domain(type_text), None)
    word, j = header_word(type_text, 0)
    kind = word.lower()
    tail = type_text[j:]
    if kind in NUMERIC_KEYWORDS:
        _expect_end(tail, word)
        return ArffAttribute(name, NUMERIC, None, None)
    if kind == STRING:
        _expect_end(tail, word)
        return ArffAttribute(name, STRING, None, None)
    if kind == DATE:
        return ArffAttribute(name, DATE, None, None)
    if kind == HIERARCHICAL:
        spec = tail.strip()
        if not spec:
            raise Problem("hierarchical type without a class specification")
        return ArffAttribute(name, HIERARCHICAL, None, spec)
    if kind == "relational":
        raise Problem("relational attributes are not supported")
    raise Problem(f"unknown type {word!r}")


def parse_domain(type_text: str) -> tuple[str, ...]:
    """Parse ``{v1, v2, ...}`` (possibly followed by a comment) into a nominal domain.

    Raises
    ------
    Problem
        No closing brace, text after it, an empty domain or value, a value declared twice.
    """
    i = 1
    n = len(type_text)
    while i < n and type_text[i] != "}":
        if type_text[i] in QUOTES:
            _, i = read_quoted(type_text, i)
        else:
            i += 1
    if i >= n:
        raise Problem("nominal domain has no closing '}'")
    tail = type_text[i + 1 :].strip()
    if tail and not tail.startswith("%"):
        raise Problem(f"unexpected text after nominal domain: {shorten(tail, 30)}")
    body = type_text[1:i]
    if not body.strip():
        raise Problem("empty nominal domain {}")
    values = split_quoted_values(body)
    seen: set[str] = set()
    for value in values:
        if value == "" and not isinstance(value, Quoted):
            raise Problem(f"empty value in nominal domain {{{body}}}")
        if value in seen:
            raise Problem(f"nominal value {str(value)!r} declared twice")
        seen.add(value)
    return tuple(str(v) for v in values)


def domain_text(values: tuple[str, ...], limit: int = 8) -> str:
    """A nominal domain for messages: ``{a, b, ...}`` (at most ``limit`` values)."""
    shown = ", ".join(values[:limit])
    return "{" + shown + (", ...}" if len(values) > limit else "}")


def _expect_end(rest: str, kind: str) -> None:
    rest = rest.strip()
    if rest and not rest.startswith("%"):
        raise Problem(f"unexpected text after type {kind}: {shorten(rest, 30)}")


def _peek_sparse(lines: Iterator[str]) -> bool | None:
    for line in lines:
        if not is_blank_or_comment(line):
            return line.lstrip().startswith("{")
    return None
