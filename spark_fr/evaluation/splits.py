"""The training and test parts of the evaluation protocols (thesis section 8; no Spark).

Every split is a pure function of the seed and of the rows' keys (and classes), never of the row order or the
partitioning, like ``--cv-folds`` (:func:`spark_fr.ensemble.validation.fold_of`):

* :func:`random_splits` (MTR; MLC and HMLC without a test file): ``repeats`` random splits into 2/3 training and
  1/3 test rows. Split r orders the rows by ``hash_uniform(derive_seed(seed, r, Stream.EVAL_SPLIT), key)`` and
  takes the first ``round(n * train_fraction)`` for training.
* :func:`cv_splits` (classification, the unsupervised protocol): K-fold cross-validation, stratified by the class
  where there is one (the folds of ``--cv-folds``).
* :func:`given_split` (``--test``): the input's training rows and the test file's rows.
* :func:`ssl_labelled` (the semi-supervised protocol): which training rows keep their labels. For x-fold
  cross-validation the thesis keeps ``floor(L / (x - 1)) + r_i`` labelled rows in each fold's copy, with
  ``r = L mod (x - 1)`` and ``r_i = 1`` for ``i < r``, so that the training folds of test fold i together hold
  (about) L labelled rows; for a given split, L of the training rows. Within a fold (or the training part) the
  labelled rows are the first in the order ``hash_uniform(derive_seed(seed, fold, Stream.EVAL_LABELLED), key)``,
  so the labelled rows of a smaller L are a subset of those of a larger one (the thesis's nesting).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..ensemble.validation import fold_of
from ..runtime.rng import derive_seed, hash_uniform

#: derived-seed streams of the evaluation (distinct from every stream of spark_fr.runtime.rng.Stream)
STREAM_SPLIT = 11
STREAM_LABELLED = 12
STREAM_RANDOM_RANKING = 13


@dataclass
class Split:
    """One training/test split.

    Attributes
    ----------
    name : str
        'split 0', 'fold 3', 'test'.
    train, test : ndarray of int64
        Row numbers (canonical order).
    """

    name: str
    train: np.ndarray
    test: np.ndarray


def _order(keys: np.ndarray, seed: int, index: int, stream: int) -> np.ndarray:
    u = hash_uniform(derive_seed(seed, index, stream), keys)
    return np.lexsort((keys, u))


def random_splits(keys: np.ndarray, repeats: int, seed: int, train_fraction: float = 2.0 / 3.0) -> list:
    """``repeats`` random training/test splits (module sketch)."""
    keys = np.asarray(keys, np.uint64)
    n = keys.size
    n_train = int(round(n * train_fraction))
    if n_train < 2 or n - n_train < 1:
        raise InputError(f"{n} rows are too few for a {train_fraction:.3g} / {1 - train_fraction:.3g} split")
    out = []
    for r in range(repeats):
        order = _order(keys, seed, r, STREAM_SPLIT)
        out.append(Split(f"split {r}", np.sort(order[:n_train]), np.sort(order[n_train:])))
    return out


def cv_splits(keys: np.ndarray, folds: int, seed: int, classes: np.ndarray | None = None) -> tuple:
    """K-fold cross-validation (stratified by ``classes`` when given): (list of Split, fold of every row)."""
    f = fold_of(keys, classes, folds, seed)
    return [Split(f"fold {i}", np.flatnonzero(f != i), np.flatnonzero(f == i)) for i in range(folds)], f


def given_split(test: np.ndarray) -> list:
    """The input's rows for training, the test file's rows for testing."""
    return [Split("test", np.flatnonzero(~test), np.flatnonzero(test))]


def ssl_labelled(keys: np.ndarray, splits: list, labelled: int, seed: int, folds: np.ndarray | None = None) -> list:
    """For every split, a boolean mask over its training rows: which keep their labels (module sketch).

    Parameters
    ----------
    keys : ndarray of uint64 (n,)
    splits : list of Split
    labelled : int
        L, the labelled rows of a training part.
    seed : int
    folds : ndarray of int64 (n,), optional
        The cross-validation fold of every row (None: each split's training rows are one pool, L of them kept).

    Returns
    -------
    list of ndarray of bool
        One mask per split, aligned with ``split.train``.
    """
    keys = np.asarray(keys, np.uint64)
    if labelled < 1:
        raise InputError(f"--labelled must be at least 1, not {labelled}")
    keep = np.zeros(keys.size, bool)
    if folds is None:
        out = []
        for s in splits:
            order = s.train[_order(keys[s.train], seed, 0, STREAM_LABELLED)]
            mask = np.zeros(keys.size, bool)
            mask[order[:labelled]] = True
            out.append(mask[s.train])
        return out
    x = int(folds.max()) + 1
    base, r = divmod(labelled, x - 1)
    for i in range(x):
        rows = np.flatnonzero(folds == i)
        take = base + (1 if i < r else 0)
        order = rows[_order(keys[rows], seed, i, STREAM_LABELLED)]
        keep[order[:take]] = True
    return [keep[s.train] for s in splits]


def random_ranking(n_features: int, seed: int, index: int) -> np.ndarray:
    """A random order of the features as importances (n, n-1, ..., 1 in a seeded order): the unsupervised
    protocol's non-informed baseline, one per split."""
    u = hash_uniform(derive_seed(seed, index, STREAM_RANDOM_RANKING), np.arange(n_features, dtype=np.uint64))
    order = np.lexsort((np.arange(n_features), u))
    imp = np.empty(n_features)
    imp[order] = np.arange(n_features, 0, -1, dtype=np.float64)
    return imp
