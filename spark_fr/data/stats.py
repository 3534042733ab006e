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
* a **hash-selected sample** of the values of the numeric columns: the k rows with the smallest hash of
  their feature values (:func:`spark_fr.data.rowkeys.raw_row_hashes`; a bottom-k sketch), so the sample, and
  the quantile bins computed from it, are the same for any partitioning (the union of per-partition
  samples is the sample). Spark's ``approxQuantile`` merges per-partition sketches instead, and its
  answer can move with the partitioning.

The same per-batch functions run inside Spark tasks (``mapInArrow``) or on the driver over collected
Arrow batches (small inputs, see :mod:`spark_fr.data.prepare`).

Progress: the pass reports against the fixed total of its columns (:class:`spark_fr.runtime.progress.Progress`,
``statistics: 1,200 / 5,000 columns (24 %), 40 s elapsed, ETA 2 min 10 s``; a pass shorter than the reporting
interval logs nothing). Decision: every task (and every
driver batch) reads all the columns of its rows, so the columns "done" are the columns x the fraction of the
pass done: of its Spark tasks (:meth:`spark_fr.runtime.engine.Engine.tracked`), or of the driver's batches. The
reporting never touches the statistics.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import numpy as np

from ..runtime.engine import engine_for
from ..runtime.progress import Progress
from ..runtime.spark import driver_map, driver_threads
from .batch_matrix import remember
from .columns import BatchValues, value_counts
from .distinct import many_distinct
from .rowkeys import raw_row_hashes

MAX_DISTINCT = 255
#: the row prefix of a batch whose distinct values are counted first (:func:`~spark_fr.data.distinct.many_distinct`):
#: a column with more than MAX_DISTINCT of them there is not tracked further (the same statistics: it has as many in
#: the whole batch)
PREFIX_ROWS = 512
#: the most consecutive columns of the sample a thread copies (and sorts) at a time (:meth:`RowSample.matrix`)
SAMPLE_PIECE_COLUMNS = 256
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


def take_rows(values: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``values[idx]`` (rows of a rows x columns matrix), column-major: each column gathered contiguously."""
    return np.take(values.T, idx, axis=1).T


class RowSample:
    """The numeric values of the k rows with the smallest hash (a bottom-k sketch: merges in any order).

    Attributes
    ----------
    k : int
    hashes : ndarray of int64
        Hashes of the rows kept (at most k).
    columns : list of int
        The logical columns sampled.
    values : ndarray (rows, len(columns)) or None
        Their values in the rows kept, column-major (each column contiguous, as the statistics pass's matrix).

    Rows are added in blocks (a batch's rows, or another sample's) and kept as they come; a block's rows whose hash
    is above the k-th smallest one known are dropped at once (they cannot be among the k smallest), and once the
    blocks hold more than 2k rows they are cut back to the k of smallest hash (:meth:`_cut`), as they are before
    being read (:attr:`hashes`, :attr:`values`).

    Decision: cut back at 2k rows, not after every block. A tall table's sample (k = 100,000 rows of 50 columns, from
    100 batches of 10,000 rows) gathered k rows after each batch: 1.7 s of its 4.1 s statistics pass, where the
    bound drops most rows of later batches and the gathers are a few. The rows are gathered and stacked column by
    column (:func:`take_rows`, :func:`gather_rows`): the values come from column-major matrices, and gathering
    rows across thousands of columns row by row cost most of a wide table's statistics pass. The sample's one
    reader (the quantile bins) sorts each column: the order of its rows is not kept (the blocks' order, also after
    a cut: each block's kept rows are gathered straight into the new matrix). The rows kept are the same (the k
    smallest hashes; equal hashes are rows of equal features, whose values the bins read).
    """

    def __init__(self, k: int):
        self.k = k
        self.columns: list = []
        self.blocks: list = []  # row blocks of values, aligned with the concatenation of self._hashes
        self._hashes: list = []
        self._rows = 0
        self._bound = None  # the k-th smallest hash after the last cut (rows above it are dropped)

    def __getstate__(self):  # pickled cut (a task's sample sent to the driver)
        self._cut()
        return self.__dict__

    @property
    def hashes(self) -> np.ndarray:
        self._cut()
        return self._hashes[0] if self._hashes else np.empty(0, np.int64)

    @property
    def values(self) -> np.ndarray | None:
        """The rows kept (rows x columns, column-major), the blocks stacked once; None before any row."""
        self._cut()
        if not self.blocks:
            return None
        if len(self.blocks) > 1:
            self.blocks = [stack_blocks(self.blocks)]
        return self.blocks[0]

    def add(self, hashes: np.ndarray, columns: list, values: np.ndarray) -> "RowSample":
        """Add rows (hashes and a matrix of their values), keeping the k with the smallest hash."""
        if hashes.size > self.k:
            idx = np.argpartition(hashes, self.k - 1)[:self.k]
            hashes, values = hashes[idx], take_rows(values, idx)
        if self._bound is not None and hashes.size and hashes.max() > self._bound:
            idx = np.flatnonzero(hashes <= self._bound)
            hashes, values = hashes[idx], take_rows(values, idx)
        if not self.blocks:
            self.columns = list(columns)
        if hashes.size or not self.blocks:
            self.blocks.append(values)
            self._hashes.append(hashes)
            self._rows += hashes.size
        if self._rows > 2 * self.k:
            self._cut()
        return self

    def _cut(self) -> None:
        """The blocks cut back to the k rows of smallest hash (in hash order), when they hold more; one block of
        hashes anyway."""
        if len(self._hashes) > 1:
            self._hashes = [np.concatenate(self._hashes)]
        if self._rows <= self.k:
            return
        both = self._hashes[0]
        idx = np.argsort(both, kind="stable")[:self.k]
        self._bound = both[idx[-1]]
        idx.sort()  # the rows kept in the blocks' order: each block's rows gathered into one range of the matrix
        self.blocks, self._hashes, self._rows = [gather_rows(self.blocks, idx)], [both[idx]], self.k

    def merge(self, other: "RowSample") -> "RowSample":
        if other.values is None:
            return self
        return self.add(other.hashes, other.columns, other.values)

    def matrix(self, columns: list, sort: bool = False) -> np.ndarray:
        """The sampled values of the logical ``columns`` (rows x columns): a new column-major matrix, the caller's
        to change; with ``sort``, each column sorted (NaN last), as the quantile bins read it.

        Decision: the matrix is filled in pieces of at most :data:`SAMPLE_PIECE_COLUMNS` consecutive columns, on
        the driver's threads (numpy's copies and sorts release the GIL), each piece copied from every block as one
        column-major slab and sorted while it is in cache. Selecting the columns of each block first and stacking
        the selections made a row-major copy and then a transposing one (20,000 x 200: 0.05-0.17 s against
        0.01); a copy per column cost 0.27 s on 2,000 x 20,000, the whole matrix copied then sorted 0.39 + 0.13 s."""
        self._cut()
        if not self.blocks:
            return np.empty((0, len(columns)), order="F")
        at = {c: j for j, c in enumerate(self.columns)}
        pos = np.array([at[c] for c in columns], np.int64)
        out = np.empty((sum(b.shape[0] for b in self.blocks), pos.size), order="F")
        cuts = np.union1d(np.flatnonzero(np.diff(pos) != 1) + 1, np.arange(0, pos.size, SAMPLE_PIECE_COLUMNS)[1:])
        pieces = list(zip(np.r_[0, cuts].tolist(), np.r_[cuts, pos.size].tolist())) if pos.size else []

        def fill(piece):
            lo, hi = piece
            start = 0
            for b in self.blocks:
                end = start + b.shape[0]
                out[start:end, lo:hi] = b[:, pos[lo]:pos[lo] + hi - lo]
                start = end
            if sort:
                out[:, lo:hi].sort(axis=0)

        driver_map(fill, pieces)
        return out

    def column(self, i: int) -> np.ndarray:
        """The sampled values of logical column i (empty if none)."""
        return self.matrix([i])[:, 0] if self.blocks and i in self.columns else np.empty(0)


def gather_rows(blocks: list, idx: np.ndarray) -> np.ndarray:
    """The rows ``idx`` (increasing) of the stacking of row blocks (rows x columns each), gathered into one new
    column-major matrix block by block (no stacking of all the blocks' rows first: a wide table's two row groups of
    1,000 x 20,000 values were copied whole to keep half of them)."""
    out = np.empty((idx.size, blocks[0].shape[1]), order="F")
    bounds = np.searchsorted(idx, np.cumsum([0] + [b.shape[0] for b in blocks]))
    start = 0
    for b, lo, hi in zip(blocks, bounds[:-1], bounds[1:]):
        if hi > lo:  # out.T[:, range] is a strided view: mode="clip" lets np.take write it without a buffer
            np.take(b.T, idx[lo:hi] - start, axis=1, out=out.T[:, lo:hi], mode="clip")
        start += b.shape[0]
    return out


def stack_blocks(blocks: list) -> np.ndarray:
    """Row blocks (rows x columns each) stacked into one new float64 matrix, column-major (``np.vstack`` gives a
    row-major one: turning it cost a second copy)."""
    out = np.empty((sum(b.shape[0] for b in blocks), blocks[0].shape[1]), order="F")
    start = 0
    for b in blocks:
        out[start:start + b.shape[0]] = b
        start += b.shape[0]
    return out


def _distinct_sorted(M: np.ndarray) -> tuple:
    """(columns sorted, mask of the first occurrence of each known value) of a column-major matrix."""
    S = np.sort(M, axis=0)  # NaN last
    new = np.r_[np.ones((1, M.shape[1]), bool), S[1:] != S[:-1]] & ~np.isnan(S)
    return S, new


def add_numeric_matrix(stats: list, M: np.ndarray) -> None:
    """:meth:`ColumnStats.add_numeric` of the columns of ``M`` (rows x columns), vectorised.

    The same statistics as column by column: missing and known counts, min and max, and the distinct
    values while there are at most 255. Columns with more than 255 distinct values among their first
    :data:`PREFIX_ROWS` rows are not sorted (most columns of a wide continuous table): a set of each column's values,
    left once it holds 256 (:func:`~spark_fr.data.distinct.many_distinct`; sorting prefixes of 300, then 512 rows
    took 0.19 s of a batch of 1,000 x 20,000 against 0.02).
    """
    if M.shape[0] == 0:
        return
    n_missing = np.isnan(M).sum(axis=0)
    n_known = M.shape[0] - n_missing
    # np.nanmin and np.nanmax of a float matrix, without their warning for an all-NaN column (NaN then; the
    # warnings filter they would need is not thread-safe: the driver's batches run on several threads)
    vmin, vmax = np.fmin.reduce(M, axis=0), np.fmax.reduce(M, axis=0)
    tracked = np.array([s.distinct is not None for s in stats], bool)
    many = np.zeros(M.shape[1], bool)
    if M.shape[0] > MAX_DISTINCT and tracked.any():  # most continuous columns show 256 values in as many rows
        cols = np.flatnonzero(tracked)
        many[cols] = many_distinct(M, cols, PREFIX_ROWS, MAX_DISTINCT)
        tracked &= ~many
    cand = np.flatnonzero(tracked)
    S, new = _distinct_sorted(M[:, cand]) if cand.size else (None, None)
    col = {j: q for q, j in enumerate(cand)}
    for j, s in enumerate(stats):
        s.n_missing += int(n_missing[j])
        s.n_known += int(n_known[j])
        if not n_known[j]:
            continue
        s.vmin = min(s.vmin, float(vmin[j]))
        s.vmax = max(s.vmax, float(vmax[j]))
        if s.distinct is None:
            continue
        if many[j]:
            s.distinct = None
            continue
        q = col[j]
        values = S[:, q][new[:, q]]
        if values.size > MAX_DISTINCT:
            s.distinct = None
            continue
        u = np.unique(np.r_[s.distinct, values])
        s.distinct = u if u.size <= MAX_DISTINCT else None


def sample_values(bv, M: np.ndarray, pos: dict, numeric: list, keep: np.ndarray) -> np.ndarray:
    """The values of the logical columns ``numeric`` in the rows ``keep`` of a batch (rows x columns): from the
    batch's matrix ``M`` of dense numeric columns (``pos``: logical column -> column of ``M``), else from ``bv``.
    A matrix that holds exactly these columns in this order is the sample itself when every row is kept (a new
    matrix per batch: nothing writes to it afterwards)."""
    held = [j for j, i in enumerate(numeric) if i in pos]
    in_m = [pos[numeric[j]] for j in held]
    if len(held) == len(numeric) and in_m == list(range(M.shape[1])):
        return M if keep.size == M.shape[0] and np.array_equal(keep, np.arange(keep.size)) else take_rows(M, keep)
    values = np.empty((keep.size, len(numeric)), order="F")
    if held:
        values[:, held] = take_rows(M, keep)[:, in_m]
    for j, i in enumerate(numeric):
        if i not in pos:
            values[:, j] = bv.values(i)[keep]
    return values


@dataclass
class DataStats:
    """Statistics of all logical columns of a dataset."""

    n_rows: int
    columns: list
    errors: list = field(default_factory=list)
    sample: RowSample | None = None

    def merge(self, other: "DataStats") -> "DataStats":
        self.n_rows += other.n_rows
        for a, b in zip(self.columns, other.columns):
            a.merge(b)
        self.add_errors(other.errors)
        if other.sample is not None:
            self.sample = other.sample if self.sample is None else self.sample.merge(other.sample)
        return self

    def add_errors(self, errors) -> None:
        """Keep up to MAX_ERRORS distinct error texts (the smallest ones: deterministic)."""
        if errors:
            self.errors = sorted(set(self.errors) | set(errors))[:MAX_ERRORS]


def batch_stats(batches, columns, string_columns, vector_size, error_column, sample_rows=None,
                n_hashed: int | None = None, on_batch=None, remember_matrices: bool = False) -> DataStats:
    """Statistics of a sequence of Arrow batches (one partition, or the whole data on the driver).

    Parameters
    ----------
    batches : iterable of pyarrow.RecordBatch
    columns : list of ColumnInfo
    string_columns : list of bool
        Whether logical column i is read as strings (nominal values to count).
    vector_size : int
    error_column : str or None
    sample_rows : int or None
        Keep the numeric values of the ``sample_rows`` rows with the smallest hash of their first
        ``n_hashed`` columns (the features; default all) (None: no sample).
    on_batch : callable, optional
        Called after each batch (progress).
    remember_matrices : bool
        The driver's batches, kept for the encoding pass: the pass's matrix of each batch's numeric columns is
        remembered with it (:func:`spark_fr.data.batch_matrix.remember`).
    """
    stats = DataStats(0, [ColumnStats() for _ in columns], sample=RowSample(sample_rows) if sample_rows else None)
    for batch in batches:
        bv = BatchValues(batch, columns, vector_size=vector_size)
        stats.n_rows += batch.num_rows
        if error_column is not None:
            stats.add_errors([e for e in batch.column(error_column).to_pylist() if e is not None])
        dense = [i for i, c in enumerate(columns) if not string_columns[i] and c.index is None]
        M = bv.dense_matrix(dense)  # column-major: one contiguous column each
        if remember_matrices:
            remember(batch, [columns[i].column for i in dense], M)
        add_numeric_matrix([stats.columns[i] for i in dense], M)
        for i, c in enumerate(columns):
            if string_columns[i]:
                stats.columns[i].add_strings(bv.strings(i), batch.num_rows)
            elif c.index is not None:
                rows, vals = bv.sparse(i)
                stats.columns[i].add_numeric(vals, implicit_zeros=batch.num_rows - rows.size)
        if stats.sample is not None and batch.num_rows:
            pos = {i: j for j, i in enumerate(dense)}
            hashes = raw_row_hashes(bv, len(columns) if n_hashed is None else n_hashed, M, pos)
            keep = np.arange(batch.num_rows)
            if hashes.size > stats.sample.k:
                keep = np.argpartition(hashes, stats.sample.k - 1)[:stats.sample.k]
            numeric = [i for i, c in enumerate(columns) if c.kind == "numeric"]
            stats.sample.add(hashes[keep], numeric, sample_values(bv, M, pos, numeric, keep))
        if on_batch is not None:
            on_batch()
    return stats


def driver_stats(batches: list, columns, *args) -> tuple:
    """:func:`batch_stats` of the driver's batches (``args``: its arguments after ``columns``), with progress
    against the columns (module sketch): (statistics, the batches kept for the encoding pass, each with the
    pass's matrix of its numeric columns remembered)."""
    n_batches, finished = max(len(batches), 1), []
    runs = _runs(batches, driver_threads())

    def run_stats(run):
        return batch_stats(run, columns, *args, on_batch=lambda: finished.append(1), remember_matrices=True)

    with Progress(len(columns), "statistics", unit="columns", brief=True) as progress, \
            progress.tracking(lambda: len(columns) * len(finished) // n_batches):
        parts = driver_map(run_stats, runs)
        progress.advance(len(columns))
    stats = parts[0]
    for part in parts[1:]:
        stats.merge(part)
    return stats, batches


def _runs(batches: list, n: int) -> list:
    """The batches cut into at most ``n`` runs of consecutive ones (one at least), as even in rows as whole batches
    allow.

    Decision: the driver's statistics run over the runs on its threads, and merge (the statistics merge exactly
    and in any order, as the Spark tasks' do). The pass spends its time in numpy, pyarrow and numba's nogil
    kernels."""
    if n <= 1 or len(batches) <= 1:
        return [batches]
    total = sum(b.num_rows for b in batches) or 1
    runs, run, rows = [], [], 0
    for b in batches:
        run.append(b)
        rows += b.num_rows
        if len(runs) < n - 1 and rows * n >= total * (len(runs) + 1):
            runs.append(run)
            run = []
    if run:
        runs.append(run)
    return runs


@contextlib.contextmanager
def tracked(spark, progress, units: int):
    """:meth:`spark_fr.runtime.engine.Engine.tracked` of ``spark``'s engine; without a session (a caller that
    lets the source's DataFrame find its own), ``progress`` advances by ``units`` at the end only."""
    if spark is None:
        yield
        progress.advance(units)
        return
    with engine_for(spark).tracked(progress, units):
        yield


def collect_stats(spark, source, columns, string_columns, vector_size=0, error_column=None, sample_rows=None,
                  n_hashed: int | None = None) -> DataStats:
    """:func:`batch_stats` of every partition of a :class:`spark_fr.data.source.BatchSource` (Spark tasks),
    merged on the driver."""

    def fn(batches):
        yield batch_stats(batches, columns, string_columns, vector_size, error_column, sample_rows, n_hashed)

    total = DataStats(0, [ColumnStats() for _ in columns], sample=RowSample(sample_rows) if sample_rows else None)
    with Progress(len(columns), "statistics", unit="columns", brief=True) as progress, \
            tracked(spark, progress, len(columns)):
        parts = source.map(spark, fn).collect()
    for part in parts:
        total.merge(part)
    return total
