"""Column statistics in one pass over the data: partial statistics per partition, merged on the driver.

Sketch
------
Each Spark task (``mapInArrow``) summarises its rows per logical column and emits one pickled
:class:`ColumnStats` list; the driver merges them. Every statistic merges exactly and in any order (counts,
minimum, maximum, sets, string counts), so the result never depends on the partitioning:

* numeric: known count, min, max and the set of distinct values while it has at most 255 elements
  (then only "more than 255" is remembered: such columns are binned by quantiles, see
  :mod:`spark_fr.data.prepare`);
* nominal (strings): the count of every value (capped at 100,000 distinct values per column);
* a few parse errors carried by the reader's error column (ARFF); the driver reports the one on the
  earliest line;
* a **hash-selected sample** of the values of the numeric columns: a row is in the sample when its
  ``xxhash64`` (computed by Spark from the row's feature values) is below a threshold, so the sample, and
  the quantile bins computed from it, are the same for any partitioning (the union of per-partition
  samples is the sample). Spark's ``approxQuantile`` merges per-partition sketches instead, and its
  answer can move with the partitioning.

The same per-batch functions run inside Spark tasks (``mapInArrow``) or on the driver over collected
Arrow batches (small inputs, see :mod:`spark_fr.data.prepare`).
"""
from __future__ import annotations

import pickle
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from .columns import BatchValues, value_counts

MAX_DISTINCT = 255
MAX_STRING_VALUES = 100_000
MAX_ERRORS = 20


@dataclass
class ColumnStats:
    """Mergeable statistics of one logical column."""

    n_known: int = 0
    n_missing: int = 0
    vmin: float = np.inf
    vmax: float = -np.inf
    distinct: np.ndarray | None = field(default_factory=lambda: np.empty(0))
    counts: dict | None = None
    sample: list = field(default_factory=list)

    def add_numeric(self, v: np.ndarray, implicit_zeros: int = 0) -> None:
        known = v[~np.isnan(v)]
        self.n_missing += int(v.size - known.size)
        self.n_known += int(known.size) + implicit_zeros
        if implicit_zeros:
            known = np.r_[known, 0.0]
        if known.size:
            self.vmin = min(self.vmin, float(known.min()))
            self.vmax = max(self.vmax, float(known.max()))
            if self.distinct is not None:
                u = np.unique(np.r_[self.distinct, np.unique(known)])
                self.distinct = u if u.size <= MAX_DISTINCT else None

    def add_strings(self, arr, n_rows: int) -> None:
        vc = value_counts(arr)
        if self.counts is None:
            self.counts = {}
        for k, c in vc.items():
            self.counts[k] = self.counts.get(k, 0) + c
        known = sum(vc.values())
        self.n_known += known
        self.n_missing += n_rows - known
        self._cap()

    def merge(self, other: "ColumnStats") -> None:
        self.sample.extend(other.sample)
        self.n_known += other.n_known
        self.n_missing += other.n_missing
        self.vmin = min(self.vmin, other.vmin)
        self.vmax = max(self.vmax, other.vmax)
        if self.distinct is None or other.distinct is None:
            self.distinct = None
        else:
            u = np.unique(np.r_[self.distinct, other.distinct])
            self.distinct = u if u.size <= MAX_DISTINCT else None
        if other.counts is not None:
            if self.counts is None:
                self.counts = {}
            for k, c in other.counts.items():
                self.counts[k] = self.counts.get(k, 0) + c
            self._cap()

    def _cap(self) -> None:
        if self.counts is not None and len(self.counts) > MAX_STRING_VALUES:
            keep = sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_STRING_VALUES]
            self.counts = dict(keep)


@dataclass
class DataStats:
    """Statistics of all logical columns of a dataset."""

    n_rows: int
    columns: list
    errors: list = field(default_factory=list)

    def merge(self, other: "DataStats") -> "DataStats":
        self.n_rows += other.n_rows
        for a, b in zip(self.columns, other.columns):
            a.merge(b)
        self.add_errors(other.errors)
        return self

    def add_errors(self, errors) -> None:
        """Keep up to MAX_ERRORS distinct error texts (the smallest ones: deterministic)."""
        if errors:
            self.errors = sorted(set(self.errors) | set(errors))[:MAX_ERRORS]


HASH_COLUMN = "__h"
SAMPLE_ALL = 1 << 62


def batch_stats(batches, columns, string_columns, vector_size, error_column, sample_threshold=None) -> DataStats:
    """Statistics of a sequence of Arrow batches (one partition, or the whole data on the driver).

    Parameters
    ----------
    batches : iterable of pyarrow.RecordBatch
    columns : list of ColumnInfo
    string_columns : list of bool
        Whether logical column i is read as strings (nominal values to count).
    vector_size : int
    error_column : str or None
    sample_threshold : int or None
        Keep the numeric values of rows whose ``HASH_COLUMN`` value, masked to 62 bits, is below this
        threshold (``SAMPLE_ALL``: every row, no hash needed; None: no sample).
    """
    stats = DataStats(0, [ColumnStats() for _ in columns])
    for batch in batches:
        bv = BatchValues(batch, columns, vector_size=vector_size)
        stats.n_rows += batch.num_rows
        if error_column is not None:
            stats.add_errors([e for e in batch.column(error_column).to_pylist() if e is not None])
        keep = None
        if sample_threshold is not None and sample_threshold >= SAMPLE_ALL:
            keep = np.ones(batch.num_rows, bool)
        elif sample_threshold is not None:
            h = np.asarray(batch.column(HASH_COLUMN).to_numpy(zero_copy_only=False), dtype=np.int64)
            keep = (h & ((1 << 62) - 1)) < sample_threshold
        for i, c in enumerate(columns):
            if string_columns[i]:
                stats.columns[i].add_strings(bv.strings(i), batch.num_rows)
                continue
            if c.index is None:
                v = bv.dense(i)
                stats.columns[i].add_numeric(v)
            else:
                rows, vals = bv.sparse(i)
                stats.columns[i].add_numeric(vals, implicit_zeros=batch.num_rows - rows.size)
                v = None
            if keep is not None and c.kind == "numeric" and keep.any():
                if v is None:
                    v = bv.values(i)
                stats.columns[i].sample.append(v[keep])
    return stats


def partition_stats(batches, columns, string_columns, vector_size, error_column, sample_threshold=None):
    """``mapInArrow`` function: one pickled :class:`DataStats` per partition."""
    stats = batch_stats(batches, columns, string_columns, vector_size, error_column, sample_threshold)
    yield pa.RecordBatch.from_arrays([pa.array([pickle.dumps(stats)], type=pa.binary())], names=["stats"])


def collect_stats(df, columns, string_columns, vector_size=0, error_column=None,
                  sample_threshold=None) -> DataStats:
    """Run :func:`partition_stats` on every partition of ``df`` (already narrowed by ``safe_select``, with
    ``HASH_COLUMN`` when sampling) and merge the results on the driver."""

    def fn(batches):
        return partition_stats(batches, columns, string_columns, vector_size, error_column, sample_threshold)

    blobs = df.mapInArrow(fn, "stats binary").collect()
    total = DataStats(0, [ColumnStats() for _ in columns])
    for row in blobs:
        total.merge(pickle.loads(row["stats"]))
    return total
