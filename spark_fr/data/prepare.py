"""Preparing an input for encoding: persist, count, one statistics pass, checks, bins, target type.

Algorithm sketch
----------------
1. Small or large: the source's estimate of the input's size (:mod:`spark_fr.data.source`: file sizes,
   Spark's plan statistics) decides. A small input (up to ``local_limit`` bytes) is read once as Arrow
   batches on the driver (at most one Spark job, none for a local file its reader reads itself); a large
   one is kept (persisted), to be read by two passes of Spark tasks.
2. One statistics pass (:mod:`spark_fr.data.stats`): rows, counts, min/max, distinct values up to 255,
   string counts, parse errors, and a hash-selected sample of the numeric values (the k rows with the
   smallest hash of their feature values, k from the number of numeric columns): on the driver's batches
   with the same per-batch functions, or one Spark job. The row count comes from this pass; nothing else
   reads the input before it.
3. Checks (:mod:`spark_fr.data.validate`): bad input stops here with a one-line error.
4. Feature bins and Relief scaling (:mod:`spark_fr.data.plan`).
5. The target type: ``--task`` or inferred from the target columns (:mod:`spark_fr.tasks`), checked
   against them, and its encoder.

The result, a :class:`PreparedInput`, is encoded by :mod:`spark_fr.data.blocks` (collected on the driver,
or left distributed).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
from .. import tasks
from ..errors import InputError
from ..tasks import TaskError
from . import validate
from .blocks import collect_encoded
from .plan import EncodingPlan, feature_bins, feature_scaling, target_columns
from .schema import Dataset, TaskSpec
from .stats import collect_stats, driver_stats

log = logging.getLogger(__name__)


@dataclass
class PreparedInput:
    """An input ready to be encoded: persisted, counted, checked, with its encoding plan.

    Attributes
    ----------
    source : BatchSource
        The input's feature and target columns (kept for the encoding pass; released by :meth:`release`).
    plan : EncodingPlan
    stats : DataStats
    usable : ndarray of bool (D,)
    target_type : TargetType
    n_rows : int
    local : bool
        Whether the input was collected as Arrow ``batches`` (small input).
    batches : list or None
    timings : dict
    hierarchy : Hierarchy or None
    """

    source: object
    plan: EncodingPlan
    stats: object
    usable: np.ndarray
    target_type: object
    n_rows: int
    local: bool
    batches: list | None
    timings: dict
    hierarchy: object

    @property
    def task(self) -> str:
        return self.target_type.name

    @property
    def encoder(self):
        """The target type's encoder (target names, classes)."""
        return self.plan.target_encoder

    def release(self) -> None:
        if not self.local:
            self.source.release()


def sample_size(n_numeric: int, sample_rows: int, max_sample_values: int) -> int:
    """Rows of the quantile sample: ``sample_rows``, fewer for many numeric columns (bounded values)."""
    return min(sample_rows, max(1000, max_sample_values // max(n_numeric, 1)))


def vector_size(columns) -> int:
    """Number of elements of the vector column the columns point into (0 if none)."""
    idx = [c.index for c in columns if c.index is not None]
    return (max(idx) + 1) if idx else 0


def column_statistics(spark, source, dataset: Dataset, cols: list, n_features: int, sample_rows: int,
                      local: bool) -> tuple:
    """(statistics, batches or None): step 2 over a source narrowed to ``cols`` (the features, the first
    ``n_features``, then the targets; the sample hash is computed from the features)."""
    vsize = vector_size(cols)
    string_cols = [c.kind in ("nominal", "hierarchical") and c.index is None for c in cols]
    if local:
        return driver_stats(source.driver_batches(), cols, string_cols, vsize, dataset.error_column, sample_rows,
                            n_features)
    return collect_stats(spark, source, cols, string_cols, vsize, dataset.error_column, sample_rows, n_features), None


def zero_codes(features: list, bins: list) -> list:
    """The code of the value 0 of each feature held in a vector column (its implicit entries), None for the others
    (a wide table's 20,000 ordinary features spent 0.18 s encoding a zero each)."""
    return [int(b.encode(np.zeros(1))[0]) if c.index is not None else None for c, b in zip(features, bins)]


def resolve_target_type(spec: TaskSpec, columns: list, labels_xml: bool, method: str | None = None):
    """The target type of the run: ``spec.task``, or inferred from the target columns; checked against them
    and against the ranking method."""
    try:
        if spec.task == "auto":
            target_type = tasks.infer(columns, labels_xml)
            log.info("task inferred from the targets: %s", target_type.name)
        else:
            target_type = tasks.get(spec.task)
        if method is not None:
            tasks.require_method(target_type, method)
    except TaskError as err:
        raise InputError(str(err)) from None
    validate.check_target_type(target_type, columns)
    return target_type


def prepare(dataset: Dataset, spec: TaskSpec, *, outputs=("codes",), method: str | None = None, spark=None,
            sample_rows: int = 100_000, local_limit: int = 512_000_000, max_sample_values: int = 20_000_000,
            force_executors: bool = False) -> PreparedInput:
    """Steps 1-5 of the module sketch. The caller must call ``release()`` on the result when done.

    ``method`` (when given) must support the target type ('ensemble', 'relief'); ``local_limit`` is the
    estimated input size (bytes) up to which the input is collected on the driver.
    """
    timings = {}
    features, targets = spec.features, spec.targets
    columns = features + targets
    source, cols = dataset.batch_source().narrow(columns)
    size = source.size_estimate()
    local = not force_executors and size is not None and size <= local_limit
    if not local:
        source.cache()
    try:
        t1 = time.perf_counter()
        n_numeric = sum(1 for c in features if c.kind == "numeric")
        k = sample_size(n_numeric, sample_rows, max_sample_values)
        stats, batches = column_statistics(spark, source, dataset, cols, len(features), k, local)
        n_rows = stats.n_rows
        timings["statistics_s"] = time.perf_counter() - t1

        validate.check_parse_errors(dataset, stats.errors)
        validate.check_rows(dataset, stats.n_rows)
        fstats, tstats = stats.columns[:len(features)], stats.columns[len(features):]
        validate.check_targets_known(targets, tstats)
        validate.check_finite(dataset, columns, stats.columns)
        for c, s in zip(targets, tstats):
            if c.kind == "hierarchical":
                validate.check_hierarchy_values(dataset, c.name, s.counts or {})

        t1 = time.perf_counter()
        sample = stats.sample if "codes" in outputs else None
        bins, feature_categories, usable = feature_bins(features, fstats, sample)
        stats.sample = None  # not needed any more (and not kept in the run's metadata)
        offset, width, half = feature_scaling(features, fstats)
        timings["binning_s"] = time.perf_counter() - t1

        tcols = target_columns(targets, tstats)
        target_type = resolve_target_type(spec, tcols, bool(dataset.label_names), method)
        hierarchy = dataset.hierarchy if any(c.kind == "hierarchical" for c in targets) else None
        try:
            encoder = target_type.encoder(tcols, hierarchy)
        except TaskError as err:
            raise InputError(str(err)) from None
        plan = EncodingPlan(cols[:len(features)], cols[len(features):], feature_categories, bins,
                            zero_codes(cols[:len(features)], bins), offset, width, half, encoder,
                            vector_size(columns), tuple(outputs))
        return PreparedInput(source, plan, stats, usable, target_type, n_rows, local, batches, timings, hierarchy)
    except BaseException:
        if not local:
            source.release()
        raise


def encode(dataset: Dataset, spec: TaskSpec, *, outputs=("codes",), spark=None, **kwargs):
    """Prepare a dataset and collect its encoding on the driver (see :func:`prepare` for ``kwargs``).

    Returns
    -------
    spark_fr.data.blocks.EncodedData
    """
    prep = prepare(dataset, spec, outputs=outputs, spark=spark, **kwargs)
    try:
        return collect_encoded(prep, [c.name for c in spec.features], spark)
    finally:
        prep.release()
