"""Mulan label XML files (the label list of a Mulan multi-label ARFF data set).

Format sketch
-------------
::

    <?xml version="1.0" encoding="utf-8"?>
    <labels xmlns="http://mulan.sourceforge.net/labels">
      <label name="amazed-suprised"></label>
      <label name="A">                  <!-- nested labels define a hierarchy -->
        <label name="A1"/>
      </label>
    </labels>

Decisions
---------
* Parsed with :mod:`xml.etree.ElementTree`; element names are compared
  without their namespace, so files with or without the Mulan namespace work.
  The root element must be ``<labels>``.
* Every ``<label>`` element is a label, nested ones included; labels are
  returned in document order (a parent before its children).
* XML entities (``&apos;``, ``&amp;``, ...) are resolved by the XML parser;
  ARFF-style backslash escapes (``\\'``, ``\\"``, ``\\\\``, ``\\t``, ``\\n``,
  ``\\r``, ``\\%``) are resolved as well so the names equal the attribute names
  read by :mod:`spark_fr.io.arff`. Names are otherwise kept exactly.
* Errors (missing file, malformed XML, wrong root, ``<label>`` without a
  name, repeated name, no labels) raise :class:`MulanError`, a ``ValueError``
  whose one-line message names the file.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

__all__ = ["MulanError", "read_label_names", "read_label_tree"]

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "'": "'", '"': '"', "\\": "\\", "%": "%"}


class MulanError(ValueError):
    """A Mulan label XML file that cannot be used; the message names the file."""


def _local(tag: object) -> str:
    """Element name without its ``{namespace}`` prefix ('' for comments etc.)."""
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1]


def _unescape(text: str) -> str:
    """Resolve ARFF backslash escapes; unknown escapes are kept literally."""
    if "\\" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            out.append(_ESCAPES.get(text[i + 1], text[i : i + 2]))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _parse(xml_path: str) -> ET.Element:
    label = os.path.basename(xml_path) or xml_path
    try:
        return ET.parse(xml_path).getroot()
    except OSError as exc:
        raise MulanError(f"{label}: cannot open: {exc.strerror or exc}") from None
    except ET.ParseError as exc:
        position = getattr(exc, "position", None)
        reason = str(exc).split(": line ")[0]
        if position:
            line, column = position
            raise MulanError(f"{label} line {line}: malformed XML: {reason} (column {column + 1})") from None
        raise MulanError(f"{label}: malformed XML: {reason}") from None


def read_label_tree(xml_path: str) -> list[tuple[str, str | None]]:
    """Read the labels of a Mulan XML file with their parents.

    Parameters
    ----------
    xml_path : str
        The Mulan label file.

    Returns
    -------
    list of (str, str or None)
        ``(label, parent)`` in document order; ``parent`` is the name of the
        enclosing ``<label>`` element, or None for a top-level label.

    Raises
    ------
    MulanError
        Missing file, malformed XML, root element other than ``<labels>``,
        a ``<label>`` without ``name``, a repeated name, or no labels.
    """
    label = os.path.basename(xml_path) or xml_path
    root = _parse(xml_path)
    if _local(root.tag) != "labels":
        raise MulanError(f"{label}: root element is <{_local(root.tag)}>, expected <labels>")
    tree: list[tuple[str, str | None]] = []
    seen: set[str] = set()

    def walk(element: ET.Element, parent: str | None) -> None:
        for child in element:
            if _local(child.tag) != "label":
                walk(child, parent)
                continue
            raw = child.get("name")
            if raw is None:
                raise MulanError(f"{label}: a <label> element has no name attribute")
            name = _unescape(raw)
            if name in seen:
                raise MulanError(f"{label}: label {name!r} is declared twice")
            seen.add(name)
            tree.append((name, parent))
            walk(child, name)

    walk(root, None)
    if not tree:
        raise MulanError(f"{label}: no <label> elements found")
    return tree


def read_label_names(xml_path: str) -> list[str]:
    """Read the label names of a Mulan XML file: :func:`read_label_tree` without the parents.

    Parameters
    ----------
    xml_path : str
        The Mulan label file, as for :func:`read_label_tree`.

    Returns
    -------
    list of str
        Label names in document order, nested labels included, with XML
        entities and ARFF backslash escapes resolved.

    Raises
    ------
    MulanError
        As :func:`read_label_tree`.
    """
    return [name for name, _ in read_label_tree(xml_path)]
