"""The aggregates of one to-many hop computed with the numpy kernels of :mod:`spark_fr.relational.local_kernels`.

The shared planning (``plan.innermost`` / ``plan.outer``) hands every output column of a hop to a group object
(``add``, ``add_share``): Spark's :class:`spark_fr.relational.aggregates.GroupAggregates` turns them into SQL;
:class:`HopGroup` records them and computes them over arrays (:meth:`HopGroup.run`), for the local engine over a
whole table and for the Spark engine over each partition of rows hashed by the group key
(:mod:`spark_fr.relational.partition_hop`). One implementation of the aggregates' semantics for both.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import local_kernels as K
from .local_table import Unsupported


class Entry(NamedTuple):
    """One output column of a hop: aggregate ``name`` of column ``value`` (None: the count of rows) over the rows
    whose column ``condition[0]`` equals ``condition[1]`` (None: every row); ``kind`` of the value, its sum's
    ``grid`` exponent (None: sorted values), the ``level`` whose share a share is."""

    name: str
    value: str | None
    alias: str
    condition: tuple | None
    kind: str
    grid: int | None
    level: str | None

    @property
    def output_kind(self) -> str:
        """'nominal' for a mode (a string), else 'numeric' (a double)."""
        return "nominal" if self.name == "mode" else "numeric"


class HopGroup:
    """The aggregates of one hop as :class:`spark_fr.relational.aggregates.GroupAggregates` receives them from
    the shared planning (``add``, ``add_share``), recorded, then computed with the kernels of
    :mod:`spark_fr.relational.local_kernels` (:meth:`run`)."""

    def __init__(self):
        self.entries = []  # Entry, in the order added

    def add(self, name, value, alias, condition=None, kind="numeric", grid=None, domain=None):
        self.entries.append(Entry(name, value, alias, condition, kind, grid, None))

    def add_share(self, value, level, alias):
        self.entries.append(Entry("share", value, alias, None, "nominal", None, level))

    def columns_read(self) -> list:
        """The value and condition columns the entries read, sorted."""
        return sorted({e.value for e in self.entries if e.value is not None}
                      | {e.condition[0] for e in self.entries if e.condition is not None})

    def __bool__(self):
        return bool(self.entries)

    def run(self, cols: dict, g: np.ndarray, n_groups: int) -> dict:
        """{alias: array over the groups} from the rows' value columns ``cols`` and groups ``g``."""
        nominal, masks, out, numeric = {}, {}, {}, {}

        def nominal_of(col):
            if col not in nominal:
                got = cols[col]
                nominal[col] = got if isinstance(got, K.NominalColumn) else K.NominalColumn(got)
            return nominal[col]

        def mask_of(condition):
            if condition is None:
                return None
            if condition not in masks:  # a null never equals the value
                col = nominal_of(condition[0])
                code = col.code_of(condition[1])
                masks[condition] = col.codes == code if code >= 0 else np.zeros(len(g), bool)
            return masks[condition]

        for name, value, alias, condition, kind, grid, level in self.entries:
            mask = mask_of(condition)
            if value is None:  # the count of (matching) rows
                out[alias] = np.bincount(g if mask is None else g[mask], minlength=n_groups).astype(np.float64)
            elif kind == "nominal":
                out[alias] = nominal_aggregate(name, g, nominal_of(value), mask, n_groups, level)
            else:  # numeric: all aggregates of one (value, condition, grid) at once
                numeric.setdefault((value, condition, grid), []).append((name, alias))
        columns = {}
        for (value, condition, grid), items in numeric.items():
            if value not in columns:
                columns[value] = K.NumericColumn(cols[value])
            res = columns[value].aggregates({n for n, _ in items}, g, mask_of(condition), n_groups, grid)
            for name, alias in items:
                out[alias] = res[name]
        return out


def nominal_aggregate(name, g, col, mask, n_groups, level):
    codes = col.selected(mask)
    k = max(len(col.values), 1)
    if name == "count_distinct":
        return K.count_distinct_codes(g, codes, k, n_groups)
    if name == "mode":
        best = K.mode_codes(g, codes, k, n_groups)
        r = np.array([None] * n_groups, dtype=object)
        r[best >= 0] = col.values[best[best >= 0]]
        return r
    if name == "share":
        return K.share_codes(g, codes, col.code_of(level), n_groups)
    raise Unsupported(f"aggregate {name} of a nominal value")
