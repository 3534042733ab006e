"""Seeded hashing and random numbers shared by the numba kernels and the orchestration (no Spark).

Sketch
------
Every random choice in spark_fr comes from SplitMix64 (Steele, Lea & Flood 2014), whose finaliser
:func:`mix64` is written here once, in its three forms (numba scalar, NumPy array, Python int):

* ``derive_seed(seed, index, stream)`` derives one 64-bit seed per tree, shard or feature from the user
  seed, an index and a named :class:`Stream`, so a tree is the same whichever task, executor or retry grows
  it, and independent uses of the same (seed, index) never share random numbers.
* ``hash_uniform(seed, keys)`` maps (seed, row key) to a uniform number in [0, 1) without any state; it
  gives bootstrap counts and samples that depend on the row, never on partitioning or row order.
* Inside numba kernels a one-element ``uint64`` array is the generator state and ``next_u64`` /
  ``rand_below`` / ``rand_uniform`` advance it. numba's own ``np.random`` is never used: its state is global
  per thread and its stream differs from NumPy's, which would make results depend on the process.
"""
from __future__ import annotations

from enum import IntEnum

import numpy as np
from numba import njit

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_MASK64 = (1 << 64) - 1


class Stream(IntEnum):
    """Named random streams: what a derived seed is used for (the values are part of every result)."""

    GROW = 0            #: growing a tree (feature subsets, extra-trees thresholds)
    BOOTSTRAP = 1       #: a tree's Poisson bootstrap counts
    PERMUTATION = 2     #: the RF score's permutation of one feature (index = the feature)
    OOB_SAMPLE = 3      #: which out-of-bag rows the RF score of a tree evaluates (when they are capped)
    PATCH = 4           #: which features a tree may use (random patches, wide mode)
    SSL_FOLD = 5        #: the cross-validation fold of a labelled row (--ssl-weight auto)
    RELIEF_SAMPLE = 7   #: the order in which Relief samples its instances
    SUBSAMPLE = 8       #: the rows of a boosting round (example subsampling without replacement)
    CV = 9              #: the order in which rows are dealt to the folds of --cv-folds (cross-validation)
    RELIEFE_CYCLIC = 10  #: ReliefE: the order of the rows of one target value in the cyclic sample
    RELIEFE_PRMS = 11    #: ReliefE: the coins of the PrMS sparsification of the cyclic sample
    RELIEFE_EMBED = 12   #: ReliefE: the embedder's random state (UMAP, random projection, randomized PCA)


@njit(cache=True, nogil=True, inline="always")
def mix64(z):
    """SplitMix64 finaliser: a bijective 64-bit mix of ``z`` (uint64), for numba kernels."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def mix64_array(z: np.ndarray) -> np.ndarray:
    """:func:`mix64` of every element of a uint64 array (NumPy, wrapping arithmetic)."""
    z = np.asarray(z, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        return z ^ (z >> np.uint64(31))


def _mix64_int(z: int) -> int:
    """:func:`mix64` of a Python int (taken modulo 2**64)."""
    z &= _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


@njit(cache=True, nogil=True, inline="always")
def next_u64(state):
    """Advance the SplitMix64 state (a 1-element uint64 array) and return the next 64-bit value."""
    state[0] += GOLDEN
    return mix64(state[0])


@njit(cache=True, nogil=True, inline="always")
def rand_uniform(state):
    """Uniform float in [0, 1) with 53 random bits."""
    return (next_u64(state) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, nogil=True, inline="always")
def rand_below(state, n):
    """Uniform integer in [0, n) (n >= 1), by multiply-shift on 53 random bits."""
    return int(rand_uniform(state) * n)


def derive_seed(seed: int, index: int, stream: Stream = Stream.GROW) -> int:
    """Seed of item ``index`` (a tree, a shard, a feature) of stream ``stream`` under the user seed ``seed``.

    Parameters
    ----------
    seed : int
        The user's seed (or a seed derived from it).
    index : int
        Tree, shard or feature index.
    stream : Stream
        What the seed is for; separates independent uses of the same (seed, index).

    Returns
    -------
    int
        A 64-bit seed (Python int in [0, 2**64)).
    """
    z = _mix64_int((seed & _MASK64) * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019)
    z = _mix64_int(z ^ ((index & _MASK64) * 0xD1B54A32D192ED03))
    return _mix64_int(z ^ ((int(stream) & _MASK64) * 0x8CB92BA72F3D8DD7 + 1))


def hash_uniform(seed: int, keys: np.ndarray) -> np.ndarray:
    """Uniform numbers in [0, 1), one per key, as a pure function of (seed, key).

    Parameters
    ----------
    seed : int
        64-bit seed (e.g. from :func:`derive_seed`).
    keys : ndarray of uint64
        Stable row keys.

    Returns
    -------
    ndarray of float64
    """
    keys = np.asarray(keys, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = mix64_array(keys * GOLDEN + np.uint64(seed & _MASK64))
    return (z >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)


# Poisson(1) cumulative distribution, enough terms that the tail is below 1e-16.
_POISSON1_CDF = np.cumsum([np.exp(-1.0) / np.prod(np.arange(1, k + 1, dtype=float)) for k in range(20)])


def _poisson_cdf(rate: float) -> np.ndarray:
    if rate == 1.0:
        return _POISSON1_CDF
    k = np.arange(60)
    logp = -rate + k * np.log(rate) - np.cumsum(np.r_[0.0, np.log(np.arange(1, 60))])
    return np.cumsum(np.exp(logp))


def poisson_counts(seed: int, keys: np.ndarray, rate: float = 1.0) -> np.ndarray:
    """Poisson(rate) counts, one per row key, as a function of (seed, key) only (rate 1: the bootstrap).

    A rate below 1 is the Poisson form of drawing ``rate * n`` rows with replacement (subbagging).
    """
    u = hash_uniform(seed, keys)
    return np.searchsorted(_poisson_cdf(float(rate)), u, side="right").astype(np.float64)


def poisson1_counts(seed: int, keys: np.ndarray) -> np.ndarray:
    """Poisson(1) bootstrap counts, one per row key, as a function of (seed, key) only.

    The Poisson bootstrap (each row drawn Poisson(1) times) is the large-sample form of drawing n rows with
    replacement; unlike the multinomial form it needs no global view of the data, so the same row gets the
    same count whatever the partitioning. About 36.8 % of the rows get 0 (out of bag).

    Parameters
    ----------
    seed : int
        Tree seed.
    keys : ndarray of uint64
        Stable row keys.

    Returns
    -------
    ndarray of float64
        Counts 0, 1, 2, ...
    """
    u = hash_uniform(seed, keys)
    return np.searchsorted(_POISSON1_CDF, u, side="right").astype(np.float64)
