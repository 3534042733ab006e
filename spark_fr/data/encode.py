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
import pickle
import time
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import functions as F

from ..errors import InputError
from ..tasks import infer_task
from .binning import OTHER_CATEGORY, FeatureBins, nominal_bins, numeric_bins, stack_bins
from .columns import BatchValues, numeric_array, safe_select
from .schema import Dataset, TaskSpec
from .stats import HASH_COLUMN, SAMPLE_ALL, DataStats, batch_stats, collect_stats

log = logging.getLogger(__name__)

_BLOCK_SCHEMA = pa.schema([("codes", pa.binary()), ("targets", pa.binary()), ("keys", pa.binary()),
                           ("m", pa.int64())])
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
    codes : ndarray of uint8 (D, n)
    usable : ndarray of bool (D,)
        False for features with fewer than two distinct values (missing counted as a value).
    Y : ndarray (n, T)
        Raw targets: numbers, class indices, or 0/1 labels; NaN = missing.
    target_names : list of str
    target_kinds : list of str
    target_categories : list
        Class names of nominal targets (None for numeric ones).
    row_keys : ndarray of uint64 (n,)
    task : str
        Resolved task name.
    stats : DataStats
    timings : dict
    encoded_on : str
        'driver' (small input collected once) or 'executors' (encoded by Spark tasks).
    """

    feature_names: list
    bins: list
    nominal: np.ndarray
    codes: np.ndarray
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

    @property
    def n_rows(self) -> int:
        return self.codes.shape[1]

    @property
    def n_features(self) -> int:
        return self.codes.shape[0]

    def bin_arrays(self):
        """(lower, upper, thresholds) as (D, 255) arrays."""
        return stack_bins(self.bins)


def _row_keys(codes: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """64-bit content hash of every row (FNV-1a over the codes and target bits, then SplitMix64)."""
    m = codes.shape[1]
    h = np.full(m, _FNV_OFFSET, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for f in range(codes.shape[0]):
            h = (h ^ codes[f].astype(np.uint64)) * _FNV_PRIME
        yb = np.where(np.isnan(Y), np.nan, Y + 0.0).astype(np.float64)  # one NaN pattern, no -0.0
        bits = np.ascontiguousarray(yb).view(np.uint64)
        for j in range(Y.shape[1]):
            h = (h ^ bits[:, j]) * _FNV_PRIME
            h = h ^ (h >> np.uint64(29))
        h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return h ^ (h >> np.uint64(31))


def _target_values(bv: BatchValues, i: int, categories) -> np.ndarray:
    c = bv.columns[i]
    if c.kind == "nominal":
        from .columns import category_indices

        return category_indices(bv.batch.column(c.column), categories)
    return numeric_array(bv.batch.column(c.column))


def _encode_partition(batches, features, feature_categories, bins, zero_codes, targets, target_categories,
                      vector_size):
    D = len(features)
    T = len(targets)
    for batch in batches:
        m = batch.num_rows
        if m == 0:
            continue
        bv = BatchValues(batch, features, feature_categories, vector_size)
        codes = np.empty((D, m), np.uint8)
        for f, c in enumerate(features):
            if c.index is None:
                codes[f] = bins[f].encode(bv.dense(f))
            else:
                codes[f] = zero_codes[f]
                rows, vals = bv.sparse(f)
                codes[f, rows] = bins[f].encode(vals)
        tv = BatchValues(batch, targets, target_categories, vector_size)
        Y = np.empty((m, T))
        for j in range(T):
            Y[:, j] = _target_values(tv, j, target_categories[j])
        keys = _row_keys(codes, Y)
        yield pa.RecordBatch.from_arrays(
            [pa.array([codes.tobytes()], pa.binary()), pa.array([Y.tobytes()], pa.binary()),
             pa.array([keys.tobytes()], pa.binary()), pa.array([m], pa.int64())],
            names=["codes", "targets", "keys", "m"])


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


def encode(dataset: Dataset, spec: TaskSpec, *, sample_rows: int = 100_000, local_limit: int = 20_000_000,
           max_sample_values: int = 20_000_000) -> EncodedData:
    """Encode a dataset for the tree kernels.

    Parameters
    ----------
    dataset : Dataset
    spec : TaskSpec
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
    timings = {}
    t0 = time.perf_counter()
    df = dataset.df.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        features, targets = spec.features, spec.targets
        columns = features + targets
        vsize = _vector_size(columns)
        string_cols = [c.kind == "nominal" and c.index is None for c in columns]
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
        local = n_rows * len(columns) <= local_limit
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
        if overflow:
            cuts = _quantile_cuts(stats, overflow)
            for f in overflow:
                s = fstats[f]
                bins[f] = numeric_bins(features[f].name, None, cuts[f], s.vmin, s.vmax)
        for s in stats.columns:
            s.sample = []  # not needed any more (and not kept in the run's metadata)
        timings["binning_s"] = time.perf_counter() - t1

        # targets
        target_categories = []
        kinds = []
        domains = []
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
            task = infer_task(kinds, domains, labels_xml=bool(dataset.label_names))
            log.info("task inferred from the targets: %s", task)

        # encode
        t2 = time.perf_counter()
        zero_codes = [int(b.encode(np.zeros(1))[0]) for b in bins]
        fcats = feature_categories
        tcats = target_categories

        def fn(batches_):
            return _encode_partition(batches_, fcols, fcats, bins, zero_codes, tcols, tcats, vsize)

        if local:
            table = pa.Table.from_batches(list(fn(iter(batches))), schema=_BLOCK_SCHEMA)
        else:
            table = narrow.mapInArrow(fn, "codes binary, targets binary, keys binary, m long").toArrow()
        D, T = len(features), len(targets)
        ms = table.column("m").to_pylist()
        n = int(sum(ms))
        codes = np.empty((D, n), np.uint8)
        Y = np.empty((n, T))
        keys = np.empty(n, np.uint64)
        pos = 0
        for cb, yb, kb, m in zip(table.column("codes").to_pylist(), table.column("targets").to_pylist(),
                                 table.column("keys").to_pylist(), ms):
            codes[:, pos:pos + m] = np.frombuffer(cb, np.uint8).reshape(D, m)
            Y[pos:pos + m] = np.frombuffer(yb, np.float64).reshape(m, T)
            keys[pos:pos + m] = np.frombuffer(kb, np.uint64)
            pos += m
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        codes = np.ascontiguousarray(codes[:, order])
        Y = Y[order]
        keys = _dedup_keys(keys)
        timings["encoding_s"] = time.perf_counter() - t2
    finally:
        df.unpersist()

    # label targets: category names '0'/'1' become numbers
    if task == "mlc":
        for j, cats in enumerate(target_categories):
            if cats is not None:
                vals = np.array([float(x) for x in cats])
                col = Y[:, j]
                known = ~np.isnan(col)
                col[known] = vals[col[known].astype(np.int64)]
                target_categories[j] = None
    return EncodedData([c.name for c in features], bins, np.array([b.nominal for b in bins], bool), codes,
                       usable, Y, [c.name for c in targets], kinds, target_categories, keys, task, stats,
                       timings, "driver" if local else "executors")


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
