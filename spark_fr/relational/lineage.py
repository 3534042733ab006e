"""What each generated feature is: its path, attribute, aggregates and condition (for rankings to roll up).

A feature's *relations* are the relational atoms it uses, in the sense of the thesis (each column is a binary
relation ``attr(ID, value)``, each foreign key a link): the links along its path (``child.column->parent``)
and the attributes it reads (``table.attribute``, and ``table.condition_attribute`` for a conditional
aggregate). A row count reads no attribute: its relations are its links only.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FeatureLineage:
    """Where a generated feature comes from.

    Attributes
    ----------
    feature : str
        The feature's column name in :attr:`GeneratedTable.frame`.
    path : tuple of spark_fr.relational.paths.Hop
        Hops from the target table (empty: an attribute of the target table itself).
    table : str
        The table whose attribute (or rows) is aggregated: the last table of the path.
    attribute : str or None
        The attribute aggregated; None for a count of related rows.
    aggregates : tuple of str
        Outermost first, as in ``A = agg_1(agg_2(... X))``; one per to-many hop (to-one hops are the
        identity). Shares are written ``share`` (the value is in ``value``); empty for a copied attribute.
    condition : tuple or None
        ``(nominal attribute, value)`` of a conditional aggregate: only the rows holding that value count.
    relations : frozenset of str
        Links and attributes the feature uses (see the module's notes).
    kind : {'numeric', 'nominal'}
        The feature's type (a mode or a copied nominal attribute is nominal).
    value : str or None
        For a ``share`` aggregate: the value whose share it is.
    """

    feature: str
    path: tuple
    table: str
    attribute: str | None
    aggregates: tuple
    condition: tuple | None
    relations: frozenset
    kind: str = "numeric"
    value: str | None = None

    @property
    def depth(self) -> int:
        """Number of hops of the path."""
        return len(self.path)


def relations_of(path: tuple, table: str, attribute: str | None, condition: tuple | None) -> frozenset:
    """The relations a feature uses (see the module's notes)."""
    out = {h.link.name for h in path}
    if attribute is not None:
        out.add(f"{table}.{attribute}")
    if condition is not None:
        out.add(f"{table}.{condition[0]}")
    return frozenset(out)
