"""Relational (multi-table) data: a schema of tables and foreign keys, and aggregate features along
foreign-key paths (thesis ch. 9). :func:`generate_features` is the entry point; the ranking and the roll-up
of importances to attributes and relations build on its :class:`GeneratedTable`.
"""
from .generate import GeneratedTable, generate_features
from .lineage import FeatureLineage
from .schema import RelationalSchema, load_schema

__all__ = ["FeatureLineage", "GeneratedTable", "RelationalSchema", "generate_features", "load_schema"]
