"""``spark_fr.rank_relational``: rank the generated features of a relational schema, and roll them up.

Sketch
------
    options   <- checked first, before any data is read                             spark_fr.api.check_options
    schema    <- YAML / dict                                                        spark_fr.relational.schema
    generated <- one row per target example, features along foreign-key paths, lineage   relational.generate
    ranking   <- spark_fr.rank on the generated frame (id column dropped), with each feature's relations:
                 the tree methods add relation-level Symbolic / Genie3 by the node rule   pct.relation_scores
    table     <- feature, attribute and relation levels                              relational.rollup

Decisions
---------
* **Defaults** for ``--method ensemble``: bagging of 50 trees (the thesis's relational default, spec Sec. 7.3:
  bagging ranked best of bagging, boosting and random forests), unless ``ensemble`` / ``trees`` are given.
  ``cv_folds`` defaults to 10 (the thesis's 10-fold CV: the accuracy says whether the ranking is worth
  reading) when the option exists and is not given.
* **Task**: 'auto' infers it from the target column (a nominal column: classification; numbers: regression).
* Rows whose target is missing are left out by the ranking (supervised methods), as for any table.
"""
from __future__ import annotations

import logging
import time

from .. import options as O
from ..api import check_options, run_ranking
from ..errors import InputError
from ..runtime.logs import show_logs_by_default
from .checks import empty_target, source_of
from .generate import generate_features
from .rollup import RelationalRanking, feature_relations
from .schema import load_schema
from .width import DEFAULT_MAX_FEATURES

log = logging.getLogger(__name__)

#: the relational defaults of options the user leaves unset (see the module's notes)
#: keywords of spark_fr.rank that a relational run does not take, and why
NOT_RELATIONAL = {"targets": "the schema's 'target' names the table and column",
                  "labels_xml": "the target is one column of the schema's target table",
                  "hierarchy": "the target is one column of the schema's target table",
                  "format": "each table's format is in the schema (format:)",
                  "features_col": "the features are generated from the schema's tables",
                  "input_table": "each table's source is in the schema (catalog:)",
                  "version_as_of": "each table's source is in the schema",
                  "timestamp_as_of": "each table's source is in the schema",
                  "where": "each table's source is in the schema",
                  "exclude": "the schema's columns: lists choose what is used",
                  "duplicate_names": "the schema names each table's columns, so a table naming a column twice is "
                                     "refused; rename it in the source"}
RELATIONAL_DEFAULTS = {"ensemble": {"ensemble": "bagging", "trees": 50}, "boosting": {}, "relief": {}}
CV_FOLDS = 10


def rank_relational(tables: dict | None = None, schema=None, method: str = "ensemble", *, task: str = "auto",
                    spark=None, relation_rollup: str = "node", base_dir: str | None = None, check: bool = True,
                    engine: str = "auto", max_features_generated: int | None = DEFAULT_MAX_FEATURES,
                    **params) -> RelationalRanking:
    """Rank the relations, attributes and generated features of a multi-table database for its target.

    Parameters
    ----------
    tables : dict, optional
        {table name: Spark DataFrame} replacing the schema's sources (all or some of them).
    schema : str, dict or RelationalSchema
        The schema (a YAML file such as ``conf/relational/financial.yaml``, or the same as a dict); options of
        ``jobs/rank.py`` in the file are ignored here (pass them as keywords).
    method : {'ensemble', 'boosting', 'relief'}
    task : str
        'auto' or a single-target type ('classification', 'regression').
    spark : SparkSession, optional
    relation_rollup : {'node', 'feature'}
        How Symbolic and Genie3 reach the relations (:mod:`spark_fr.relational.rollup`).
    base_dir : str, optional
        Where the schema's relative source paths resolve.
    check : bool
        Check keys and measure dangling foreign keys before generating (:func:`generate_features`).
    engine : {'auto', 'spark', 'local'}
        Where the features are generated (:func:`generate_features`; ``--engine`` of ``jobs/rank.py``): with the
        local engine the ranking reads them from a temporary Parquet file, so small data never starts the JVM
        when the ranking itself runs in the driver. The metadata's ``relational`` entry records ``engine`` and
        ``engine_reason``.
    max_features_generated : int or None
        Refuse, before generating, a schema estimated to generate more features than this
        (:mod:`spark_fr.relational.width`; None: no limit).
    **params
        The options of :func:`spark_fr.rank` (``trees``, ``seed``, ``cv_folds``, ...).

    Returns
    -------
    RelationalRanking
        Levels ``feature``, ``attribute`` and ``relation``; the metadata's ``relational`` entry describes the
        generation (tables, paths, features, seconds).

    Raises
    ------
    spark_fr.errors.InputError
        A bad schema, table, option or value (one line).
    """
    show_logs_by_default()  # a notebook that configured no logging sees the generation's and ranking's lines
    if schema is None:
        raise InputError("rank_relational needs a schema (a YAML file or a dict): tables, keys, foreign keys, target")
    if relation_rollup not in ("node", "feature"):
        raise InputError(f"relation_rollup must be node or feature, not {relation_rollup!r}")
    engine = O.check_value(O.option("engine"), engine)
    for name in NOT_RELATIONAL:
        if params.get(name) is not None and params[name] != O.option(name).default:
            raise InputError(f"rank_relational does not take {name}=: {NOT_RELATIONAL[name]}")
    if max_features_generated is not None:
        max_features_generated = O.check_value(O.option("max_features_generated"), max_features_generated)
    params = {**{k: v for k, v in RELATIONAL_DEFAULTS.get(method, {}).items() if params.get(k) is None}, **{
        k: v for k, v in params.items() if v is not None}}
    if "cv_folds" in O.BY_NAME and params.get("cv_folds") is None and method in O.option("cv_folds").methods:
        params["cv_folds"] = CV_FOLDS
    opts = O.check_keywords({"task": task, "method": method, **params})
    check_options(opts, opts.get("method", method), set(params))  # bad options fail before any data is read
    parsed = load_schema(schema, base_dir=base_dir)
    if spark is None:  # started only when needed: the local engine and a driver-side ranking never need it
        from pyspark.sql import SparkSession

        from ..runtime.session import SessionStart

        spark = SparkSession.getActiveSession() or SessionStart(lazy=True, app_name="spark_fr rank_relational")
    t0 = time.perf_counter()
    generated = generate_features(spark, parsed, tables, check=check, engine=engine,
                                  max_features=max_features_generated)
    log.info("relational: %d features along %d paths from %d tables (target %s.%s)", len(generated.lineage),
             len(generated.paths), len(parsed.tables), parsed.target.table, parsed.target.column)
    info = {"schema": parsed.origin, "tables": sorted(parsed.tables), "target_table": parsed.target.table,
            "max_depth": parsed.max_depth, "paths": len(generated.paths), "features": len(generated.lineage),
            "relation_rollup": relation_rollup, "planning_s": time.perf_counter() - t0, "engine": generated.engine,
            "engine_reason": generated.engine_reason}
    by_name = {f.feature: f for f in generated.lineage}

    def build(names, usable, results, target_names, run_params, metadata):
        lineage = [by_name[n] for n in names]
        metadata = {**metadata, "input": parsed.origin, "relational": info}
        return RelationalRanking.from_relational(lineage, usable, results, target_names,
                                                 {**run_params, "input": parsed.origin}, metadata, relation_rollup)

    with generated.ranking_input(drop_id=True) as data:
        return run_ranking(data, [generated.target], task, method, spark=spark, params=params,
                           feature_relations=feature_relations(generated.lineage), build=build,
                           origin=GeneratedOrigin(parsed, by_name))


class GeneratedOrigin:
    """Messages about the generated input that name what the user can fix: the schema's tables and columns
    (``origin`` of :func:`spark_fr.api.run_ranking`), not the generated features' names."""

    def __init__(self, schema, lineage: dict):
        self.schema = schema
        self.lineage = lineage

    def no_rows(self) -> str:
        return str(empty_target(self.schema))

    def infinite(self, column: str, value: str) -> str:
        f = self.lineage.get(column)
        if f is None:  # the target column
            t = self.schema.target
            return (f"{self.schema.origin}: table '{t.table}' ({source_of(self.schema.tables[t.table])}): column "
                    f"'{column}' holds an infinite value ({value}); write it as a missing value or drop the row")
        read = f"column '{f.attribute}'" if f.attribute is not None else "the number of rows"
        what = " of ".join([*f.aggregates, read])
        return (f"{self.schema.origin}: the generated feature '{column}' ({what} of table '{f.table}'"
                f"{' along ' + ', '.join(h.link_name for h in f.path) if f.path else ''}) overflows to {value}: "
                f"the values of table '{f.table}' ({source_of(self.schema.tables[f.table])}) are too large to add "
                f"up in a double; scale them down (or leave out that aggregate)")
