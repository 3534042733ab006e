"""Scaling numbers to [0, 1] by a range, without overflow when the range exceeds the largest double.

``(v - lo) / (hi - lo)`` overflows when ``hi - lo`` does (e.g. lo = -1e308, hi = 1e308). For such columns
the values and bounds are halved first (exact in binary floating point), which gives the correctly rounded
quotient; every other column is computed exactly as the plain formula, bit for bit.
"""
from __future__ import annotations

import numpy as np


def unit_range(lo, hi):
    """(offset, width, half) per column: ``(v * half - offset) / width`` scales v to [0, 1].

    A width of 0 (a constant column) becomes 1, so the column scales to 0.
    """
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        width = hi - lo
        half = np.where(np.isinf(width) & np.isfinite(lo) & np.isfinite(hi), 0.5, 1.0)
        if np.any(half != 1.0):
            width = hi * half - lo * half
        offset = lo * half
    return offset, np.where(width > 0, width, 1.0), half


def to_unit(v, lo, hi):
    """``(v - lo) / (hi - lo)`` (0 for a constant column), without overflow."""
    offset, width, half = unit_range(lo, hi)
    v = np.asarray(v, dtype=np.float64)
    if np.all(half == 1.0):
        return (v - offset) / width
    return (v * half - offset) / width
