"""Slow, obvious reference of relational features: pandas tables, row by row, following the definition
A = agg_1( agg_2( ... X ) ) over the related rows of each hop (to-one hops: the one related row)."""
from __future__ import annotations

import datetime as dt
import math
from collections import Counter

import numpy as np
import pandas as pd

COUNT_LIKE = ("count", "count_distinct")
EPOCH = dt.date(1970, 1, 1)


def _missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x)) or x is pd.NaT


def raw(x):
    """A cell as the features see it: dates as days since the epoch, numbers as floats, others as strings."""
    if _missing(x):
        return None
    if isinstance(x, pd.Timestamp):
        x = x.date()
    if isinstance(x, dt.datetime):
        return (x - dt.datetime(1970, 1, 1)).total_seconds() / 86400
    if isinstance(x, dt.date):
        return float((x - EPOCH).days)
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x)).lower()
    if isinstance(x, (int, float, np.integer, np.floating)):
        return float(x)
    return str(x)


def apply(agg: str, values: list, level=None):
    """One aggregate over a group's values (None = missing)."""
    if agg == "count":
        return float(len(values))
    known = [v for v in values if not _missing(v)]
    if agg == "count_distinct":
        return float(len(set(known)))
    if agg == "share":
        return None if not known else float(np.mean([v == level for v in known]))
    if not known:
        return None
    if agg == "mean":
        return float(np.mean(known))
    if agg == "min":
        return min(known)
    if agg == "max":
        return max(known)
    if agg == "sum":
        return float(np.sum(known))
    if agg == "std":
        return None if len(known) < 2 else float(np.std(known, ddof=1))
    if agg == "mode":
        counts = Counter(known)
        top = max(counts.values())
        return min(v for v, c in counts.items() if c == top)
    raise ValueError(agg)


class Reference:
    """The tables as pandas frames plus each table's key and the links (child, column, parent)."""

    def __init__(self, frames: dict, keys: dict):
        self.frames = frames
        self.keys = keys

    def related(self, row, hop) -> list:
        link = hop.link
        if hop.direction == "one":
            parent = self.frames[link.parent]
            value = row[link.column]
            if _missing(value):
                return []
            return [r for _, r in parent[parent[self.keys[link.parent]] == value].iterrows()]
        child = self.frames[link.child]
        return [r for _, r in child[child[link.column] == row[self.keys[hop.link.parent]]].iterrows()]

    def value(self, row, hops, attribute, aggregates, condition=None, level=None):
        """The feature value for one row of the path's first table (aggregates outermost first)."""
        if not hops:
            return None if attribute is None else raw(row[attribute])
        hop, rest = hops[0], hops[1:]
        rel = self.related(row, hop)
        if hop.direction == "one":
            if not rel:
                return (0.0 if aggregates[0] in COUNT_LIKE else None) if aggregates else None
            return self.value(rel[0], rest, attribute, aggregates, condition, level)
        agg, inner = aggregates[0], aggregates[1:]
        if inner:
            return apply(agg, [self.value(r, rest, attribute, inner, condition, level) for r in rel])
        if condition is not None:
            rel = [r for r in rel if self.value(r, rest, condition[0], ()) == condition[1]]
        if attribute is None:
            return float(len(rel))
        return apply(agg, [self.value(r, rest, attribute, ()) for r in rel], level)

    def feature(self, target: str, lineage) -> dict:
        """{target key: value} of one generated feature."""
        out = {}
        frame = self.frames[target]
        for _, row in frame.iterrows():
            out[row[self.keys[target]]] = self.value(row, lineage.path, lineage.attribute, lineage.aggregates,
                                                     lineage.condition, lineage.value)
        return out


def compare(generated, reference: Reference, target: str, id_column: str, tol=1e-9, pdf=None) -> int:
    """Assert every generated feature equals the reference for every target row; returns how many cells."""
    if pdf is None:  # either engine's result
        pdf = generated.frame.toPandas() if generated.frame is not None else generated.pandas
    pdf = pdf.set_index(id_column)
    checked = 0
    for lin in generated.lineage:
        expected = reference.feature(target, lin)
        assert set(expected) == set(pdf.index), lin.feature
        for key, want in expected.items():
            got = pdf.at[key, lin.feature]
            got = None if _missing(got) else got
            if want is None or got is None:
                assert want is None and got is None, (lin.feature, key, got, want)
            elif isinstance(want, str):
                assert got == want, (lin.feature, key, got, want)
            else:
                assert abs(float(got) - want) <= tol * max(1.0, abs(want)), (lin.feature, key, got, want)
            checked += 1
    return checked
