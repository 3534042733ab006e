"""Features as CSR columns: where each attribute goes, and CSR pieces of tokenized rows.

Sketch
------
* ``parse_lines_sparse(lines, features)`` returns the attributes ``features`` (numeric or nominal)
  as CSR columns, column p = attribute ``features[p]``, nominal values as their domain index, and
  every other attribute column-wise. :func:`make_layout` checks the feature list once and records
  the attribute -> CSR column map, the other attributes, and a value -> float table per feature.
* Rows tokenized in Python (quoted runs, and the fallback path) are split by :func:`split_row`
  into the cells of the other attributes and ``(CSR column, cell)`` items; :func:`items_to_csr`
  converts the items (table lookups, or the exact per-cell conversion for quoted rows), drops
  zeros and sorts each row by column.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .cells import CellConverter
from .errors import ArffError, Problem, file_label
from .header import NOMINAL, NUMERIC
from .parsed import row_sorted


@dataclass
class Layout:
    """Where each attribute goes in ``parse_lines_sparse``."""

    features: list[int]
    position: list[int]  # attribute -> CSR column, -1 for others
    position_arr: np.ndarray
    others: list[int]
    slot: dict[int, int]  # other attribute -> position in a row of others
    luts: list[dict[str, float]]


class NumLut(dict):
    """Value text -> float for a numeric feature; unknown keys go through ``float``."""

    def __missing__(self, key: str) -> float:
        return float(key)


def check_features(conv: CellConverter, path: str, feature_indices: Sequence[int]) -> list[int]:
    """The feature attributes as a list of ints.

    Raises
    ------
    ArffError
        An index is repeated or out of range, or names a string/date/hierarchical attribute.
    """
    features = [int(a) for a in feature_indices]
    label = file_label(path)
    if len(set(features)) != len(features):
        raise ArffError(f"{label}: feature_indices contains repeated attributes")
    for a in features:
        if not 0 <= a < conv.m:
            raise ArffError(f"{label}: feature index {a} out of range (0..{conv.m - 1})")
        if conv.attrs[a].kind not in (NUMERIC, NOMINAL):
            raise ArffError(
                f"{label}: attribute {conv.attrs[a].name!r} is {conv.attrs[a].kind}; "
                "only numeric and nominal attributes can be CSR features"
            )
    return features


def make_layout(conv: CellConverter, features: list[int]) -> Layout:
    """The :class:`Layout` of checked ``features`` (see :func:`check_features`)."""
    position = [-1] * conv.m
    for p, a in enumerate(features):
        position[a] = p
    others = [a for a in range(conv.m) if position[a] < 0]
    return Layout(
        features=features,
        position=position,
        position_arr=np.array(position, dtype=np.int64),
        others=others,
        slot={a: k for k, a in enumerate(others)},
        luts=[_feature_lut(conv, a) for a in features],
    )


def _feature_lut(conv: CellConverter, a: int) -> dict[str, float]:
    if conv.is_numeric(a):
        return NumLut({"?": float("nan")})
    lut = dict(conv.codes[a])
    lut["?"] = float("nan")
    return lut


def split_row(conv: CellConverter, row, layout: Layout):
    """Split a tokenized row (a list of cells, or a sparse ``{index: cell}`` dict).

    Returns
    -------
    other_row : list of str
        The cells of ``layout.others`` (sparse defaults filled in).
    items : list of (int, str)
        ``(CSR column, cell)`` of the features present in the row.
    """
    position = layout.position
    if isinstance(row, list):
        items = [(p, row[a]) for a, p in enumerate(position) if p >= 0]
        return [row[a] for a in layout.others], items
    other_row = [conv.defaults[a] for a in layout.others]
    items = []
    for index, value in row.items():
        p = position[index]
        if p >= 0:
            items.append((p, value))
        else:
            other_row[layout.slot[index]] = value
    return other_row, items


def items_to_csr(conv: CellConverter, items, layout: Layout, quoted: bool):
    """CSR piece ``(counts, indices, values)`` of the feature items of tokenized rows.

    Raises
    ------
    Problem
        An invalid value (exact reason when ``quoted``; a vague one otherwise: the caller
        re-checks line by line).
    """
    features, luts = layout.features, layout.luts
    n = len(items)
    counts = np.fromiter((len(r) for r in items), dtype=np.int64, count=n)
    positions = [p for row in items for p, _ in row]
    cells = [v for row in items for _, v in row]
    if quoted:
        raw = [conv.convert(features[p], v) for p, v in zip(positions, cells)]
        values = np.array(
            [r if isinstance(r, float) else np.nan if r is None else conv.codes[features[p]][r]
             for p, r in zip(positions, raw)],
            dtype=np.float64,
        )
    else:
        try:
            values = np.array([luts[p][v] for p, v in zip(positions, cells)], dtype=np.float64)
        except (KeyError, ValueError):
            raise Problem("bad feature value") from None
    indices = np.array(positions, dtype=np.int32)
    keep = values != 0
    row_of = np.repeat(np.arange(n), counts)
    counts = np.bincount(row_of[keep], minlength=n)
    indices, values, row_of = indices[keep], values[keep], row_of[keep]
    if not row_sorted(row_of, indices):
        order = np.lexsort((indices, row_of))
        indices, values = indices[order], values[order]
    return counts, indices, values
