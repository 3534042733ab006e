"""Stable row ids: a 64-bit hash of each row's content, made distinct for repeated rows (NumPy only).

Sketch
------
* ``content_keys``: FNV-1a over the row's encoded features (bin codes and/or scaled values) and the bits
  of its targets, finished by the SplitMix64 mix. Identical rows get identical keys, whatever file,
  partition or position they come from.
* ``distinct_keys``: in a sorted array of content keys, the k-th copy of a repeated row gets
  ``mix64(key + k * golden)``, so every row has its own id (for bootstrapping) and the ids still do not
  depend on the row order.
"""
from __future__ import annotations

import numpy as np

from ..runtime.rng import GOLDEN, mix64_array

_FNV_PRIME = np.uint64(0x100000001B3)
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)


def content_keys(parts, Y: np.ndarray) -> np.ndarray:
    """64-bit content hash of every row.

    Parameters
    ----------
    parts : list of ndarray
        The encoded features: codes (D, m) uint8 and/or scaled values (m, D) float64.
    Y : ndarray (m, T)
        Targets (NaN = missing).

    Returns
    -------
    ndarray of uint64 (m,)
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
    return mix64_array(h)


def distinct_keys(sorted_keys: np.ndarray) -> np.ndarray:
    """Make equal keys (identical rows) distinct: the k-th copy gets mix64(key + k * golden)."""
    n = sorted_keys.size
    if n < 2:
        return sorted_keys
    new_run = np.r_[True, sorted_keys[1:] != sorted_keys[:-1]]
    if new_run.all():
        return sorted_keys
    run_start = np.maximum.accumulate(np.where(new_run, np.arange(n), 0))
    occ = (np.arange(n) - run_start).astype(np.uint64)
    with np.errstate(over="ignore"):
        z = mix64_array(sorted_keys + occ * GOLDEN)
    return np.where(occ == 0, sorted_keys, z)
