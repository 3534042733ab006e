"""Counter-based and stateful random numbers shared by the numba kernels and the orchestration.

Sketch
------
Every random choice in spark_fr comes from SplitMix64 (Steele, Lea & Flood 2014):

* ``tree_seed(seed, index)`` derives one 64-bit seed per tree (or Relief shard) from the user seed and the
  tree index, so a tree is the same whichever task, executor or retry grows it.
* ``hash_uniform(seed, keys)`` maps (seed, row key) to a uniform number in [0, 1) without any state; it
  gives bootstrap counts and samples that depend on the row, never on partitioning or row order.
* Inside numba kernels a one-element ``uint64`` array is the generator state and ``next_u64`` /
  ``rand_below`` / ``rand_uniform`` advance it. numba's own ``np.random`` is never used: its state is global
  per thread and its stream differs from NumPy's, which would make results depend on the process.
"""
from __future__ import annotations

import numpy as np
from numba import njit

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_MASK64 = (1 << 64) - 1


@njit(cache=True, inline="always")
def mix64(z):
    """SplitMix64 finaliser: a bijective 64-bit mix of ``z`` (uint64)."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def next_u64(state):
    """Advance the SplitMix64 state (a 1-element uint64 array) and return the next 64-bit value."""
    state[0] += GOLDEN
    return mix64(state[0])


@njit(cache=True, inline="always")
def rand_uniform(state):
    """Uniform float in [0, 1) with 53 random bits."""
    return (next_u64(state) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, inline="always")
def rand_below(state, n):
    """Uniform integer in [0, n) (n >= 1), by multiply-shift on 53 random bits."""
    return int(rand_uniform(state) * n)


def _mix64_py(z: int) -> int:
    z &= _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def tree_seed(seed: int, index: int, stream: int = 0) -> int:
    """Seed of tree (or shard) ``index`` of a run with user seed ``seed``.

    Parameters
    ----------
    seed : int
        The user's seed.
    index : int
        Tree or shard index.
    stream : int, optional
        Separates independent uses of the same (seed, index), e.g. 0 for growing, 1 for permutations.

    Returns
    -------
    int
        A 64-bit seed (Python int in [0, 2**64)).
    """
    z = _mix64_py((seed & _MASK64) * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019)
    z = _mix64_py(z ^ ((index & _MASK64) * 0xD1B54A32D192ED03))
    return _mix64_py(z ^ ((stream & _MASK64) * 0x8CB92BA72F3D8DD7 + 1))


def hash_uniform(seed: int, keys: np.ndarray) -> np.ndarray:
    """Uniform numbers in [0, 1), one per key, as a pure function of (seed, key).

    Parameters
    ----------
    seed : int
        64-bit seed (e.g. from :func:`tree_seed`).
    keys : ndarray of uint64
        Stable row keys.

    Returns
    -------
    ndarray of float64
    """
    keys = np.asarray(keys, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = keys * GOLDEN + np.uint64(seed & _MASK64)
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)


# Poisson(1) cumulative distribution, enough terms that the tail is below 1e-16.
_POISSON1_CDF = np.cumsum([np.exp(-1.0) / np.prod(np.arange(1, k + 1, dtype=float)) for k in range(20)])


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
