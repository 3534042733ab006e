"""Encoding a Spark DataFrame into column blocks for the kernels (broadcast mode).

Algorithm sketch
----------------
1. ``persist`` the input and count it, then one statistics pass (:mod:`spark_fr.data.stats`): counts,
   min/max, distinct values up to 255, string counts, parse errors, and a hash-selected sample of the
   numeric values (a row is in the sample when ``xxhash64(row)`` is below a threshold set from the row
   count). Bad input stops here with a one-line error (empty table, a parse error with its line number, a
   target with no known value).
2. Bins (:mod:`spark_fr.data.binning`): lossless codes for numeric columns with <= 255 distinct values;
   for the others, exact quantiles of the hash-selected sample. Spark's ``approxQuantile`` merges
   per-partition sketches, so its answer can move with the partitioning; a hash-selected sample cannot.
3. One ``mapInArrow`` pass encodes each Arrow batch into a block: feature codes (D x m, uint8), raw
   targets (m x T, float64), and a 64-bit content key per row (a hash of the row's codes and targets).
   The blocks are collected on the driver and **sorted by key**: the row order, and so every tree and
   every random choice made from the order, no longer depends on how the input was partitioned. Rows with
   equal keys are identical, so their relative order does not matter; the k-th copy of a row gets the key
   ``mix(key + k)``. These keys are the stable row ids used for bootstrapping.

Small inputs (rows x columns up to ``local_limit``) take a shortcut with identical results: the narrowed
input is collected once as Arrow batches and steps 1-3 run on the driver with the same per-batch
functions, which saves two Spark jobs (a few seconds on a 20,000 x 200 table).
"""
from __future__ import annotations

import logging
import os
import re
import time
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import functions as F

from ..errors import InputError
from ..tasks import infer_task
from .binning import OTHER_CATEGORY, FeatureBins, nominal_bins, numeric_bins, stack_bins
from .columns import BatchValues, category_indices, numeric_array, safe_select
from .schema import Dataset, TaskSpec
from .stats import HASH_COLUMN, SAMPLE_ALL, DataStats, batch_stats, collect_stats

log = logging.getLogger(__name__)

_BLOCK_SCHEMA = pa.schema([("codes", pa.binary()), ("scaled", pa.binary()), ("targets", pa.binary()),
                           ("keys", pa.binary()), ("m", pa.int64()), ("t", pa.int64())])
_BLOCK_DDL = "codes binary, scaled binary, targets binary, keys binary, m long, t long"
_FNV_PRIME = np.uint64(0x100000001B3)
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)


@dataclass
class EncodedData:
    """The encoded training data on the driver (rows in canonical order).

    Attributes
    ----------
    feature_names : list of str
    bins : list of FeatureBins
    nominal : ndarray of bool (D,)
    codes : ndarray of uint8 (D, n) or None
        Bin codes for the trees (when asked for).
    scaled : ndarray of float64 (n, D) or None
        Features for Relief (when asked for): numeric ones scaled to [0, 1] by their range, nominal ones as
        category indices; NaN = missing.
    usable : ndarray of bool (D,)
        False for features with fewer than two distinct values (missing counted as a value).
    Y : ndarray (n, T)
        Raw targets: numbers, class indices, or 0/1 labels (the label matrix for HMLC); NaN = missing.
    target_names : list of str
        Target names (HMLC: the labels of the hierarchy).
    target_kinds : list of str
    target_categories : list
        Class names of nominal targets (None for numeric ones).
    row_keys : ndarray of uint64 (n,)
        Stable, distinct row ids (content keys made distinct for repeated rows).
    task : str
        Resolved task name.
    stats : DataStats
    timings : dict
    encoded_on : str
        'driver' (small input collected once) or 'executors' (encoded by Spark tasks).
    content_keys : ndarray of uint64 (n,)
        Content hash of each row (equal for identical rows).
    n_values : ndarray (D,)
        Number of categories of nominal features (1 for numeric ones).
    hierarchy : Hierarchy or None
    """

    feature_names: list
    bins: list
    nominal: np.ndarray
    codes: np.ndarray | None
    usable: np.ndarray
    Y: np.ndarray
    target_names: list
    target_kinds: list
    target_categories: list
    row_keys: np.ndarray
    task: str
    stats: DataStats
    timings: dict = field(default_factory=dict)
    encoded_on: str = "driver"
    content_keys: np.ndarray | None = None
    scaled: np.ndarray | None = None
    n_values: np.ndarray | None = None
    hierarchy: object = None

    @property
    def n_rows(self) -> int:
        return self.Y.shape[0]

    @property
    def n_features(self) -> int:
        return len(self.feature_names)

    def bin_arrays(self):
        """(lower, upper, thresholds) as (D, 255) arrays."""
        return stack_bins(self.bins)


def _row_keys(parts, Y: np.ndarray) -> np.ndarray:
    """64-bit content hash of every row (FNV-1a over the encoded features and the target bits, SplitMix64).

    ``parts`` is a list of 2-D arrays holding the encoded features: codes (D, m) uint8 and/or scaled
    values (m, D) float64.
    """
    m = Y.shape[0]
    h = np.full(m, _FNV_OFFSET, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for arr in parts:
            if arr.dtype == np.uint8:
                for f in range(arr.shape[0]):
                    h = (h ^ arr[f].astype(np.uint64)) * _FNV_PRIME
            else:
                vals = np.where(np.isnan(arr), np.nan, arr + 0.0)
                bits = np.ascontiguousarray(vals, dtype=np.float64).view(np.uint64)
                for f in range(bits.shape[1]):
                    h = (h ^ bits[:, f]) * _FNV_PRIME
                    h = h ^ (h >> np.uint64(29))
        yb = np.where(np.isnan(Y), np.nan, Y + 0.0).astype(np.float64)  # one NaN pattern, no -0.0
        bits = np.ascontiguousarray(yb).view(np.uint64)
        for j in range(Y.shape[1]):
            h = (h ^ bits[:, j]) * _FNV_PRIME
            h = h ^ (h >> np.uint64(29))
        h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return h ^ (h >> np.uint64(31))


@dataclass
class EncodingPlan:
    """Everything the per-batch encoder needs (shipped to Spark tasks).

    Attributes
    ----------
    features, targets : list of ColumnInfo
        With internal column names (see :func:`spark_fr.data.columns.safe_select`).
    feature_categories, target_categories : list
        Category lists of nominal columns read from strings.
    bins : list of FeatureBins
    zero_codes : list of int
        Code of the value 0 (implicit entries of sparse vectors).
    scale_lo, scale_range : ndarray (D,)
        Numeric scaling for Relief: (x - lo) / range (range 0 -> 1).
    target_values : list
        Per nominal target, the number each category stands for (MLC labels '0'/'1'), or None to keep the
        category index.
    hierarchy : Hierarchy or None
        For a hierarchical target column (HMLC): the label matrix replaces the column.
    vector_size : int
    outputs : tuple of str
        'codes' (trees) and/or 'scaled' (Relief).
    """

    features: list
    targets: list
    feature_categories: list
    target_categories: list
    bins: list
    zero_codes: list
    scale_lo: np.ndarray
    scale_range: np.ndarray
    target_values: list
    hierarchy: object
    vector_size: int
    outputs: tuple


def encode_batch(batch, plan: EncodingPlan) -> dict:
    """Encode one Arrow batch: {'codes', 'scaled', 'Y', 'keys'} (absent outputs are None)."""
    m = batch.num_rows
    D = len(plan.features)
    bv = BatchValues(batch, plan.features, plan.feature_categories, plan.vector_size)
    codes = scaled = None
    if "codes" in plan.outputs:
        codes = np.empty((D, m), np.uint8)
        for f, c in enumerate(plan.features):
            if c.index is None:
                codes[f] = plan.bins[f].encode(bv.dense(f))
            else:
                codes[f] = plan.zero_codes[f]
                rows, vals = bv.sparse(f)
                codes[f, rows] = plan.bins[f].encode(vals)
    if "scaled" in plan.outputs:
        scaled = np.empty((m, D))
        for f, c in enumerate(plan.features):
            v = bv.values(f)
            if c.kind == "nominal":
                scaled[:, f] = v
            else:
                scaled[:, f] = (v - plan.scale_lo[f]) / plan.scale_range[f]
    tv = BatchValues(batch, plan.targets, plan.target_categories, plan.vector_size)
    cols = []
    for j, c in enumerate(plan.targets):
        if c.kind == "hierarchical":
            strings = tv.strings(j).to_pylist()
            cols.append(np.asarray(plan.hierarchy.label_matrix(strings), dtype=np.float64))
            continue
        if c.kind == "nominal":
            idx = category_indices(batch.column(c.column), plan.target_categories[j])
            if plan.target_values[j] is not None:
                known = ~np.isnan(idx)
                out = np.full(m, np.nan)
                out[known] = plan.target_values[j][idx[known].astype(np.int64)]
                idx = out
            cols.append(idx[:, None])
        else:
            cols.append(numeric_array(batch.column(c.column))[:, None])
    Y = np.hstack(cols) if cols else np.empty((m, 0))
    keys = _row_keys([a for a in (codes, scaled) if a is not None], Y)
    return {"codes": codes, "scaled": scaled, "Y": Y, "keys": keys}


_EMPTY = b""


def _encode_partition(batches, plan: EncodingPlan):
    for batch in batches:
        if batch.num_rows == 0:
            continue
        out = encode_batch(batch, plan)
        yield pa.RecordBatch.from_arrays(
            [pa.array([out["codes"].tobytes() if out["codes"] is not None else _EMPTY], pa.binary()),
             pa.array([out["scaled"].tobytes() if out["scaled"] is not None else _EMPTY], pa.binary()),
             pa.array([out["Y"].tobytes()], pa.binary()), pa.array([out["keys"].tobytes()], pa.binary()),
             pa.array([batch.num_rows], pa.int64()), pa.array([out["Y"].shape[1]], pa.int64())],
            schema=_BLOCK_SCHEMA)


def decode_block(row, n_features: int) -> dict:
    """The arrays of one encoded block (a row of the encoding pass's output)."""
    m, T, D = int(row["m"]), int(row["t"]), n_features
    return {"codes": np.frombuffer(row["codes"], np.uint8).reshape(D, m) if row["codes"] else None,
            "scaled": np.frombuffer(row["scaled"], np.float64).reshape(m, D) if row["scaled"] else None,
            "Y": np.frombuffer(row["targets"], np.float64).reshape(m, T),
            "keys": np.frombuffer(row["keys"], np.uint64), "m": m}


def _quantile_cuts(stats: DataStats, idx) -> dict:
    """Exact quantiles (1/255 ... 254/255) of the hash-selected sample, for the columns ``idx``."""
    probs = np.arange(1, 255) / 255.0
    cuts = {}
    for i in idx:
        parts = stats.columns[i].sample
        v = np.concatenate(parts) if parts else np.empty(0)
        v = v[~np.isnan(v)]
        cuts[i] = np.quantile(v, probs, method="inverted_cdf") if v.size else np.empty(0)
    return cuts


def check_hierarchy_values(dataset: Dataset, column: str, counts: dict) -> None:
    """Every label of an HMLC column's values must be in the hierarchy (checked on the distinct values).

    The error names the file, the line of an ARFF file where the value first occurs, the column and the label.
    """
    from ..hierarchy import HierarchyError

    try:
        dataset.hierarchy.label_matrix(sorted(counts))
    except HierarchyError as err:
        where = ""
        header = dataset.extra.get("arff_header")
        if err.label is not None and header is not None and os.path.isfile(header.path):
            label = re.compile(r"(^|[,@'\s])" + re.escape(err.label) + r"($|[,@'\s])")
            with open(header.path, encoding="utf-8", errors="replace") as fh:
                for no, line in enumerate(fh, 1):
                    if no > header.data_line and label.search(line):
                        where = f" line {no}"
                        break
        raise InputError(f"{dataset.source}{where}: column '{column}': {err}") from None


def _report_parse_error(dataset: Dataset, errors: list):
    """Raise the parse error found on the earliest line (the reader knows how to locate it)."""
    locate = dataset.extra.get("locate_error")
    if locate is not None:
        raise InputError(locate(errors))
    raise InputError(f"{dataset.source}: {errors[0]}")


def _nominal_categories(name: str, declared, stats) -> list:
    if declared is not None:
        return list(declared)
    counts = stats.counts or {}
    cats = sorted(counts)
    if len(cats) > 255:
        keep = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:254]
        log.warning("nominal column '%s' has %d categories; the %d rarest share the code '%s'",
                    name, len(cats), len(cats) - 254, OTHER_CATEGORY)
        cats = sorted(k for k, _ in keep) + [OTHER_CATEGORY]
    return cats


def _vector_size(columns) -> int:
    idx = [c.index for c in columns if c.index is not None]
    return (max(idx) + 1) if idx else 0


def _sample_plan(n_rows: int, n_numeric: int, sample_rows: int, max_sample_values: int):
    """Hash threshold (62-bit scale) for a sample of about ``sample_rows`` rows (SAMPLE_ALL: every row)."""
    target = min(sample_rows, max(1000, max_sample_values // max(n_numeric, 1)))
    if n_rows <= target:
        return SAMPLE_ALL
    return int(target / n_rows * SAMPLE_ALL)


@dataclass
class PreparedInput:
    """An input ready to be encoded: persisted, counted, validated, with its encoding plan."""

    df: object          # the persisted input
    narrow: object      # its columns under internal names (+ hash column when sampling)
    plan: EncodingPlan
    stats: DataStats
    usable: np.ndarray
    task: str
    n_rows: int
    local: bool
    batches: list | None
    timings: dict
    target_names: list
    target_kinds: list
    target_categories: list
    hierarchy: object

    def release(self) -> None:
        self.df.unpersist()


def prepare(dataset: Dataset, spec: TaskSpec, *, outputs=("codes",), sample_rows: int = 100_000,
            local_limit: int = 20_000_000, max_sample_values: int = 20_000_000,
            force_executors: bool = False) -> PreparedInput:
    """Steps 1 and 2 of the module sketch: persist, count, statistics, validation, bins, task.

    The caller must call ``release()`` on the result when done with the input.
    """
    timings = {}
    t0 = time.perf_counter()
    df = dataset.df.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        features, targets = spec.features, spec.targets
        columns = features + targets
        vsize = _vector_size(columns)
        string_cols = [c.kind in ("nominal", "hierarchical") and c.index is None for c in columns]
        n_rows = df.count()
        timings["count_s"] = time.perf_counter() - t0
        n_numeric = sum(1 for c in features if c.kind == "numeric")
        threshold = _sample_plan(n_rows, n_numeric, sample_rows, max_sample_values)
        extra = [dataset.error_column] if dataset.error_column else []
        narrow, cols = safe_select(df, columns, extra)
        if threshold < SAMPLE_ALL:
            feature_cols = sorted({c.column for c in cols[:len(features)]})
            narrow = narrow.withColumn(HASH_COLUMN, F.xxhash64(*feature_cols))
        fcols, tcols = cols[:len(features)], cols[len(features):]
        local = n_rows * len(columns) <= local_limit and not force_executors
        t1 = time.perf_counter()
        if local:
            batches = narrow.toArrow().to_batches() if n_rows else []
            stats = batch_stats(batches, cols, string_cols, vsize, dataset.error_column, threshold)
        else:
            batches = None
            stats = collect_stats(narrow, cols, string_cols, vsize, dataset.error_column, threshold)
        timings["statistics_s"] = time.perf_counter() - t1
        if stats.errors:
            _report_parse_error(dataset, stats.errors)
        if stats.n_rows == 0:
            raise InputError(f"{dataset.source}: the input has no rows")
        fstats = stats.columns[:len(features)]
        tstats = stats.columns[len(features):]
        for c, s in zip(targets, tstats):
            if s.n_known == 0:
                raise InputError(f"target column '{c.name}' has no known values")
            if c.kind == "hierarchical":
                check_hierarchy_values(dataset, c.name, s.counts or {})

        # bins
        t1 = time.perf_counter()
        bins: list[FeatureBins | None] = [None] * len(features)
        feature_categories = [None] * len(features)
        overflow = []
        usable = np.zeros(len(features), bool)
        for f, (c, s) in enumerate(zip(features, fstats)):
            if c.kind == "nominal":
                if c.index is None:
                    cats = _nominal_categories(c.name, c.categories, s)
                    feature_categories[f] = cats
                    present = sum(1 for k in (s.counts or {}) if (s.counts or {})[k] > 0)
                else:
                    cats = list(c.categories)
                    present = len(s.distinct) if s.distinct is not None else 256
                bins[f] = nominal_bins(c.name, cats if cats else ["?"])
                usable[f] = present + (1 if s.n_missing else 0) >= 2
            elif s.n_known == 0:
                bins[f] = numeric_bins(c.name, np.zeros(1), None, np.nan, np.nan)
            elif s.distinct is not None:
                bins[f] = numeric_bins(c.name, s.distinct, None, s.vmin, s.vmax)
                usable[f] = s.distinct.size + (1 if s.n_missing else 0) >= 2
            else:
                overflow.append(f)
                usable[f] = True
        if overflow and "codes" in outputs:
            cuts = _quantile_cuts(stats, overflow)
            for f in overflow:
                s = fstats[f]
                bins[f] = numeric_bins(features[f].name, None, cuts[f], s.vmin, s.vmax)
        for f in overflow:
            if bins[f] is None:  # Relief only: the bins are not used
                bins[f] = numeric_bins(features[f].name, None, np.empty(0), fstats[f].vmin, fstats[f].vmax)
        for s in stats.columns:
            s.sample = []  # not needed any more (and not kept in the run's metadata)
        lo = np.array([0.0 if c.kind == "nominal" or not np.isfinite(s.vmin) else s.vmin
                       for c, s in zip(features, fstats)])
        hi = np.array([0.0 if c.kind == "nominal" or not np.isfinite(s.vmax) else s.vmax
                       for c, s in zip(features, fstats)])
        rng = np.where(hi - lo > 0, hi - lo, 1.0)
        timings["binning_s"] = time.perf_counter() - t1

        # targets and task
        target_categories, kinds, domains = [], [], []
        for c, s in zip(targets, tstats):
            kinds.append(c.kind)
            if c.kind == "nominal":
                cats = list(c.categories) if c.categories is not None else sorted(s.counts or {})
                target_categories.append(cats)
                domains.append(cats)
            else:
                target_categories.append(None)
                domains.append(list(s.distinct) if s.distinct is not None and s.distinct.size <= 2 else None)
        task = spec.task
        if task == "auto":
            if any(k == "hierarchical" for k in kinds):
                task = "hmlc"
            else:
                task = infer_task(kinds, domains, labels_xml=bool(dataset.label_names))
            log.info("task inferred from the targets: %s", task)
        target_values = [None] * len(targets)
        reported_categories = list(target_categories)
        if task == "mlc":
            for j, cats in enumerate(target_categories):
                if cats is not None:
                    try:
                        target_values[j] = np.array([float(x) for x in cats])
                    except ValueError:
                        raise InputError(f"label column '{targets[j].name}' has values {cats[:4]}; multi-label "
                                         f"targets must be 0/1") from None
                    reported_categories[j] = None  # the labels are 0/1 numbers from here on
        hierarchy = dataset.hierarchy if any(k == "hierarchical" for k in kinds) else None
        target_names = list(hierarchy.labels) if hierarchy is not None else [c.name for c in targets]
        plan = EncodingPlan(fcols, tcols, feature_categories, target_categories, bins,
                            [int(b.encode(np.zeros(1))[0]) for b in bins], lo, rng, target_values, hierarchy,
                            vsize, tuple(outputs))
        return PreparedInput(df, narrow, plan, stats, usable, task, n_rows, local, batches, timings,
                             target_names, kinds, reported_categories, hierarchy)
    except BaseException:
        df.unpersist()
        raise


def encode(dataset: Dataset, spec: TaskSpec, *, outputs=("codes",), sample_rows: int = 100_000,
           local_limit: int = 20_000_000, max_sample_values: int = 20_000_000) -> EncodedData:
    """Encode a dataset and collect it on the driver (broadcast mode).

    Parameters
    ----------
    dataset : Dataset
    spec : TaskSpec
    outputs : tuple of str
        'codes' (bin codes for the trees) and/or 'scaled' (scaled values for Relief).
    sample_rows : int
        Size of the hash-selected sample used for the quantile bins of high-cardinality columns.
    local_limit : int
        Inputs with at most this many values (rows x columns) are collected once and encoded on the
        driver by the same per-batch functions (one Spark job instead of two); larger ones are encoded
        by Spark tasks.
    max_sample_values : int
        Bound on the size of the quantile sample (rows x numeric columns).

    Returns
    -------
    EncodedData

    Raises
    ------
    InputError
        Empty input, a parse error (with its line), a target without known values, or a task that does
        not fit the targets.
    """
    prep = prepare(dataset, spec, outputs=outputs, sample_rows=sample_rows, local_limit=local_limit,
                   max_sample_values=max_sample_values)
    try:
        return collect_encoded(prep, [c.name for c in spec.features])
    finally:
        prep.release()


def _encoding_function(plan: EncodingPlan):
    def fn(batches_):
        return _encode_partition(batches_, plan)

    return fn


def collect_encoded(prep: PreparedInput, feature_names: list) -> EncodedData:
    """Step 3 of the module sketch: encode the prepared input and collect it in canonical order."""
    t2 = time.perf_counter()
    plan = prep.plan
    fn = _encoding_function(plan)
    if prep.local:
        table = pa.Table.from_batches(list(fn(iter(prep.batches))), schema=_BLOCK_SCHEMA)
    else:
        table = prep.narrow.mapInArrow(fn, _BLOCK_DDL).toArrow()
    D = len(plan.features)
    blocks = [decode_block(row, D) for row in table.to_pylist()]
    T = blocks[0]["Y"].shape[1] if blocks else len(prep.target_names)
    keys = np.concatenate([b["keys"] for b in blocks]) if blocks else np.empty(0, np.uint64)
    Y = np.vstack([b["Y"] for b in blocks]) if blocks else np.empty((0, T))
    order = np.argsort(keys, kind="stable")
    content = keys[order]
    codes = scaled = None
    if "codes" in plan.outputs:
        codes = np.ascontiguousarray(np.hstack([b["codes"] for b in blocks])[:, order])
    if "scaled" in plan.outputs:
        scaled = np.ascontiguousarray(np.vstack([b["scaled"] for b in blocks])[order])
    Y = np.ascontiguousarray(Y[order])
    prep.timings["encoding_s"] = time.perf_counter() - t2
    bins = plan.bins
    return EncodedData(feature_names, bins, np.array([b.nominal for b in bins], bool), codes, prep.usable, Y,
                       prep.target_names, prep.target_kinds, prep.target_categories, _dedup_keys(content),
                       prep.task, prep.stats, prep.timings, "driver" if prep.local else "executors", content,
                       scaled, feature_value_counts(bins), prep.hierarchy)


def feature_value_counts(bins) -> np.ndarray:
    """Number of categories of each nominal feature (1 for numeric ones)."""
    return np.array([len(b.categories) if b.nominal else 1 for b in bins], dtype=np.float64)


def block_rdd(prep: PreparedInput):
    """Step 3 without collecting: an RDD of encoded blocks (dicts of arrays, see :func:`decode_block`)."""
    D = len(prep.plan.features)
    return prep.narrow.mapInArrow(_encoding_function(prep.plan), _BLOCK_DDL).rdd.map(lambda row: decode_block(row, D))


def _dedup_keys(sorted_keys: np.ndarray) -> np.ndarray:
    """Make equal keys (identical rows) distinct: the k-th copy gets mix(key + k * golden)."""
    n = sorted_keys.size
    if n < 2:
        return sorted_keys
    new_run = np.r_[True, sorted_keys[1:] != sorted_keys[:-1]]
    if new_run.all():
        return sorted_keys
    run_start = np.maximum.accumulate(np.where(new_run, np.arange(n), 0))
    occ = (np.arange(n) - run_start).astype(np.uint64)
    with np.errstate(over="ignore"):
        z = sorted_keys + occ * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return np.where(occ == 0, sorted_keys, z)
