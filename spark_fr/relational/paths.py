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


def steps_from(table: str, all_links: list, labels: dict) -> list:
    """The hops that leave ``table``: its to-one hops, then its to-many hops (schema order)."""
    out = [Hop(x, ONE, x.parent, labels[(x, ONE)]) for x in all_links if x.child == table]
    out += [Hop(x, MANY, x.child, labels[(x, MANY)]) for x in all_links if x.parent == table]
    return out


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
    all_links = links(schema)
    labels = _labels(all_links)
    start = schema.target.table
    level = [Path(start)]
    out = list(level)
    for _ in range(depth):
        nxt = []
        for path in level:
            last = path.hops[-1] if path.hops else None
            for hop in steps_from(path.table, all_links, labels):
                if last is not None and hop.link == last.link and hop.direction != last.direction:
                    continue  # straight back over the link just walked
                nxt.append(Path(start, path.hops + (hop,)))
        out += nxt
        level = nxt
    return out
