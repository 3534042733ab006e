"""Readable, safe and unique names for generated features.

A name joins its parts with ``__``: the hop labels of the path, the attribute (or ``count`` for a row count),
the aggregates innermost first (so the name reads along the path: ``account__disp__card__count__mean`` is
the number of cards per disposition, averaged over the account's dispositions), then a share's value
(``share_HH``) or a condition (``category_HH``). Every part keeps only ASCII letters, digits and ``_``
(anything else becomes ``_``), so names never hold dots, spaces, backticks or quotes and every part of
spark_fr can refer to them. Collisions (compared without case, as Spark compares names) get ``_2``, ``_3``,
... in generation order, so the names are deterministic.
"""
from __future__ import annotations

import re

_UNSAFE = re.compile(r"[^0-9A-Za-z_]")


def safe_part(text) -> str:
    """``text`` with every character other than ASCII letters, digits and ``_`` replaced by ``_``."""
    out = _UNSAFE.sub("_", str(text))
    return out or "_"


def feature_name(labels, attribute, aggregates_inner_first, suffix=None) -> str:
    """``label1__label2__attribute__agg__...__suffix`` (each part made safe)."""
    parts = [safe_part(p) for p in labels]
    aggs = list(aggregates_inner_first)
    if attribute is None:  # a row count: the innermost aggregate is the count itself
        parts.append("count")
        aggs = aggs[1:]
    else:
        parts.append(safe_part(attribute))
    parts += [safe_part(a) for a in aggs]
    if suffix is not None:
        parts.append(safe_part(suffix))
    return "__".join(parts)


class Names:
    """Hands out unique names (case-insensitively), reserving some up front."""

    def __init__(self, reserved=()):
        self._taken = {str(r).lower() for r in reserved}

    def unique(self, name: str) -> str:
        """``name``, or ``name_2``, ``name_3``, ... (the first one not taken); it is then taken."""
        out, i = name, 1
        while out.lower() in self._taken:
            i += 1
            out = f"{name}_{i}"
        self._taken.add(out.lower())
        return out
