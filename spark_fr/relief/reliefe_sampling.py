"""ReliefE's representative cyclic sample (paper Sec. 3.2; spec methods-papers.md 3.2), no Spark.

Sketch
------
The rows the embedding (and TwoNN) is fitted on::

    values <- the distinct target values: classes (classification) or label sets (MLC), in sorted order
    within each value, its rows ordered by hash_uniform(seed, content key) (ties by key)
    cycle over the values, taking the next unused row of the current value, skipping values used up,
    until `size` rows (or every row) are taken

Equivalently (and so it is computed): each row's rank among the rows of its value, then the rows sorted by
(rank, value order), the first ``size`` of them. Every value with a row is in the sample when ``size`` is at
least the number of values. The sample depends on the rows' contents only (content keys and a seeded hash),
never on their order or partitioning.

Decision (the paper's list order is unstated): values in sorted order (class index; label sets as sorted
byte strings of their 0/1 rows), rows of a value in seeded-hash order. [R] takes the values in order of
first appearance and rows in file order, which depends on the file's order.
"""
from __future__ import annotations

import numpy as np

from ..runtime.rng import Stream, derive_seed, hash_uniform


def target_value_ids(Y: np.ndarray) -> np.ndarray:
    """The index of each row's target value among the sorted distinct values (rows of ``Y``).

    Parameters
    ----------
    Y : ndarray (n, T)
        Classes (T = 1, class index) or 0/1 labels (MLC).

    Returns
    -------
    ndarray of int64 (n,)
    """
    Y = np.ascontiguousarray(np.nan_to_num(np.asarray(Y, np.float64), nan=-1.0))
    _, ids = np.unique(Y, axis=0, return_inverse=True)
    return np.asarray(ids, np.int64).reshape(-1)


def cyclic_sample(value_ids: np.ndarray, keys: np.ndarray, size: int, seed: int) -> np.ndarray:
    """Row positions of the representative cyclic sample, in the order they are taken.

    Parameters
    ----------
    value_ids : ndarray of int (n,)
        Target value of each row (:func:`target_value_ids`).
    keys : ndarray of uint64 (n,)
        Content keys of the rows.
    size : int
        Sample size |nu| (at most n rows are taken).
    seed : int

    Returns
    -------
    ndarray of int64 (min(size, n),)
    """
    value_ids = np.asarray(value_ids, np.int64)
    n = value_ids.size
    u = hash_uniform(derive_seed(seed, 0, Stream.RELIEFE_CYCLIC), keys)
    by_value = np.lexsort((keys, u, value_ids))          # rows grouped by value, hash order inside
    starts = np.searchsorted(value_ids[by_value], value_ids[by_value], side="left")
    rank = np.empty(n, np.int64)
    rank[by_value] = np.arange(n) - starts
    order = np.lexsort((value_ids, rank))                # round robin: rank first, then value
    return order[:min(int(size), n)].astype(np.int64)
