"""Relational feature generation, the entry point: one row per target example, one column per (path,
attribute, aggregates), by the walk of :mod:`spark_fr.relational.walk` (its sketch) over one of two engines.

* the **local engine** (:class:`spark_fr.relational.local.LocalExecutor`): numpy arrays in the driver, no JVM,
  for inputs that fit it; the result is a pandas DataFrame (:attr:`GeneratedTable.pandas`);
* the **Spark engine** (:class:`spark_fr.relational.spark_executor.SparkExecutor`): a lazy Spark plan
  (:attr:`GeneratedTable.frame`).

Both give the same names, order, lineage and values bit for bit. ``engine='auto'`` picks the local engine when
every table is a DataFrame or a local CSV/TSV, Parquet or Delta source and together they fit the driver
(:func:`spark_fr.relational.local_sources.choose_engine`), and falls back to Spark when the local engine cannot
reproduce an input exactly (:func:`spark_fr.relational.local.try_local`); the result says which and why.

Frequent values of a nominal attribute are its ``frequent_values`` most frequent non-missing values over
its whole table, ties broken by the smaller value.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

from ..errors import InputError
from .lineage import FeatureLineage
from .schema import load_schema
from .spark_executor import SparkExecutor
from .walk import walk
from .width import DEFAULT_MAX_FEATURES

log = logging.getLogger(__name__)


@dataclass
class GeneratedTable:
    """Generated features and their lineage.

    Attributes
    ----------
    frame : pyspark.sql.DataFrame
        The target id column, the target column, then one column per feature (numeric features are doubles,
        nominal ones strings); one row per target-table row, in no particular order.
    lineage : list of FeatureLineage
        One per feature, in column order.
    id : str
        The id column's name.
    target : str
        The target column's name.
    """

    frame: object
    lineage: list
    id: str
    target: str
    paths: list = field(default_factory=list)
    pandas: object = None  # the local engine's result (pandas DataFrame); frame is then None
    engine: str = "spark"
    engine_reason: str = ""  # why this engine (engine='auto': the size rule, or what the local engine refused)

    def ranking_input(self, drop_id: bool = True):
        """A context manager giving what :func:`spark_fr.api.run_ranking` takes: the Spark frame, or (local
        engine) a Parquet file written under the system temporary directory and removed on exit."""
        from .local import ranking_input

        return ranking_input(self, drop_id)

    @property
    def features(self) -> list:
        """The feature column names, in order."""
        return [f.feature for f in self.lineage]

    def lineage_of(self, feature: str) -> FeatureLineage:
        """The lineage of one feature."""
        for f in self.lineage:
            if f.feature == feature:
                return f
        raise InputError(f"no generated feature is called {feature!r}")


def generate_features(spark, schema, tables: dict | None = None, *, base_dir: str | None = None,
                      check: bool = True, engine: str = "auto",
                      max_features: int | None = DEFAULT_MAX_FEATURES) -> GeneratedTable:
    """Generate relational features for the target table of ``schema``: the single entry point.

    Parameters
    ----------
    spark : SparkSession
    schema : str, dict or RelationalSchema
        A YAML schema file, the same as a dict, or a parsed schema (:func:`spark_fr.relational.schema.load_schema`).
    tables : dict, optional
        {table name: DataFrame} replacing the schema's sources (the Python API's form).
    base_dir : str, optional
        Where relative source paths resolve (see :mod:`spark_fr.relational.schema`).
    check : bool
        Check keys (unique, present) and measure dangling foreign keys (warnings) first.
    engine : {'auto', 'spark', 'local'}
        'local' generates in the driver with numpy (:mod:`spark_fr.relational.local`; ``spark`` is not
        touched unless DataFrames are given, the result is ``.pandas``); 'auto' picks it when every table is a
        DataFrame or a local CSV/TSV, Parquet or Delta source and together they fit the driver
        (:func:`spark_fr.relational.local_sources.choose_engine`), and falls back to Spark when the local
        engine cannot reproduce an input exactly; else Spark. ``engine_reason`` of the result says why.
    max_features : int or None
        Refuse, before any aggregate is computed, a schema that would generate more features than this
        (:func:`spark_fr.relational.width.check_width`; None: no limit).

    Returns
    -------
    GeneratedTable
        ``frame``: columns ``[target id, target column, *features]``, one row per target-table row (rows
        whose target is missing are kept: the ranking step decides); ``lineage``: a
        :class:`~spark_fr.relational.lineage.FeatureLineage` per feature, in column order. Feature names are
        unique (also without case), hold only ASCII letters, digits and ``_``, and never equal the id or
        target column. Numeric features are doubles (dates: days since 1970-01-01), nominal ones strings; a
        target column of kind nominal (declared, or a string column) is a string column (class labels).
        Count-like aggregates of empty groups are 0; other aggregates of empty groups are null.

    Raises
    ------
    InputError
        A bad schema, a missing table, column or source, a repeated or missing key (one line).
    """
    schema = load_schema(schema, base_dir=base_dir)
    if engine not in ("auto", "spark", "local"):
        raise InputError(f"engine must be auto, spark or local, not {engine!r}")
    reason = "engine='spark'"
    if engine != "spark":
        from .local import try_local

        done, reason = try_local(schema, tables, check, forced=engine == "local", max_features=max_features)
        if done is not None:
            pdf, lineage, paths = done
            return GeneratedTable(None, lineage, schema.target.id, schema.target.column, paths, pandas=pdf,
                                  engine="local", engine_reason=reason)
    frame, lineage, paths = walk(SparkExecutor(spark, schema, tables), schema, check, max_features)
    log.info("relational features: %d from %d paths (max depth %d)", len(lineage), len(paths), schema.max_depth)
    return GeneratedTable(frame, lineage, schema.target.id, schema.target.column, paths, engine_reason=reason)
