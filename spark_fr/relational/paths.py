"""Foreign-key paths from the target table.

Sketch
------
Every foreign key is a :class:`Link` ``child.column -> parent``. Walked from the child it is a *to-one*
hop (at most one related row: the parent whose key the column holds); walked from the parent it is a
*to-many* hop (all children holding the parent's key). An n-n relation is a link table with two foreign
keys, i.e. a to-many hop followed by a to-one hop.

:func:`enumerate_paths` lists the paths from the target table with 1..``max_depth`` hops, breadth first
(shorter paths first), and within a length in the order of the schema's links: to-one hops of a table
(its foreign keys, in declaration order) before its to-many hops (links into it, in the order of the
tables and their foreign keys). Tables may repeat (cycles are fine: the depth bounds them), but a path
never walks straight back over the link it just came by (target -> account -> target only finds the
same row again, or its siblings through the same key); a self-referencing link (employee.manager ->
employee) may be walked in either direction, but not forth and straight back either.
"""
from __future__ import annotations

from dataclasses import dataclass

from .schema import RelationalSchema

ONE, MANY = "one", "many"


@dataclass(frozen=True)
class Link:
    """A foreign key: ``child.column`` holds keys of ``parent``."""

    child: str
    column: str
    parent: str

    @property
    def name(self) -> str:
        """``child.column->parent`` (used in lineage and relation roll-ups)."""
        return f"{self.child}.{self.column}->{self.parent}"


@dataclass(frozen=True)
class Hop:
    """One step of a path: over ``link`` in ``direction`` ('one' or 'many'), reaching ``table``.

    Attributes
    ----------
    link : Link
    direction : {'one', 'many'}
    table : str
        The table reached.
    label : str
        Short readable name of the hop in feature names: the table reached, or ``<table>_by_<column>`` when
        several links join the same two tables in this direction; over a self-reference, the column going
        to-one (``referrer_id``: the referrer's row) and ``<table>_by_<column>`` going to-many (the rows
        that refer to this one).
    """

    link: Link
    direction: str
    table: str
    label: str

    @property
    def link_name(self) -> str:
        return self.link.name


@dataclass(frozen=True)
class Path:
    """A foreign-key path from the target table (``hops`` may be empty: the target table itself)."""

    start: str
    hops: tuple = ()

    @property
    def table(self) -> str:
        """The last table of the path (whose attributes are aggregated)."""
        return self.hops[-1].table if self.hops else self.start

    @property
    def n_many(self) -> int:
        """How many to-many hops (aggregation levels) the path has."""
        return sum(h.direction == MANY for h in self.hops)

    def tables(self) -> tuple:
        """The tables along the path, the start included."""
        return (self.start,) + tuple(h.table for h in self.hops)


def links(schema: RelationalSchema) -> list:
    """Every foreign key of the schema as a :class:`Link`, in table and declaration order."""
    return [Link(t.name, fk.column, fk.table) for t in schema.tables.values() for fk in t.foreign_keys]


def _labels(all_links: list) -> dict:
    """{(link, direction): hop label} (see :class:`Hop`)."""
    out = {}
    for link in all_links:
        for direction, src, dst in ((ONE, link.child, link.parent), (MANY, link.parent, link.child)):
            twins = [x for x in all_links if (x.child, x.parent) == (link.child, link.parent)]
            if link.child == link.parent:  # a self-reference: the column tells the directions apart
                out[(link, direction)] = link.column if direction == ONE else f"{dst}_by_{link.column}"
            else:
                out[(link, direction)] = dst if len(twins) == 1 else f"{dst}_by_{link.column}"
    return out


class Walk:
    """The hops a path may take next, for one schema (shared by :func:`enumerate_paths` and the width count of
    :mod:`spark_fr.relational.width`)."""

    def __init__(self, schema: RelationalSchema):
        self.start = schema.target.table
        self._links = links(schema)
        self._labels = _labels(self._links)
        self._from: dict = {}

    def steps_from(self, table: str) -> list:
        """The hops that leave ``table``: its to-one hops, then its to-many hops (schema order)."""
        if table not in self._from:
            out = [Hop(x, ONE, x.parent, self._labels[(x, ONE)]) for x in self._links if x.child == table]
            out += [Hop(x, MANY, x.child, self._labels[(x, MANY)]) for x in self._links if x.parent == table]
            self._from[table] = out
        return self._from[table]

    def next_hops(self, last: Hop | None) -> list:
        """The hops after ``last`` (None: from the target table), never straight back over the link just walked."""
        if last is None:
            return self.steps_from(self.start)
        return [h for h in self.steps_from(last.table) if not (h.link == last.link and h.direction != last.direction)]


def enumerate_paths(schema: RelationalSchema, max_depth: int | None = None) -> list:
    """The foreign-key paths from the target table, shortest first (see the module's notes).

    Parameters
    ----------
    schema : RelationalSchema
    max_depth : int, optional
        Most hops per path (default: the schema's ``max_depth``).

    Returns
    -------
    list of Path
        The empty path (the target table) first, then paths of 1, 2, ... hops.
    """
    depth = schema.max_depth if max_depth is None else max_depth
    walk = Walk(schema)
    level = [Path(walk.start)]
    out = list(level)
    for _ in range(depth):
        level = [Path(walk.start, path.hops + (hop,)) for path in level
                 for hop in walk.next_hops(path.hops[-1] if path.hops else None)]
        out += level
    return out
