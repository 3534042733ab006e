"""Whether columns hold more distinct values than a limit among their first rows (a numba kernel, no Spark).

Sketch
------
The statistics pass tracks a numeric column's distinct values while they are at most 255
(:mod:`spark_fr.data.stats`); most columns of a continuous table show more than that among the first few hundred
rows of a batch, and are not tracked further. :func:`many_distinct` finds them: per column, the known values of the
first ``rows`` rows go into a small open-addressing set of their bits (-0.0 as 0.0, NaN skipped: the values
``np.unique`` of the known values tells apart), and the column is done as soon as the set holds more than
``limit`` values (after about ``limit`` rows for a continuous column). One pass over the prefix, no sort.
"""
from __future__ import annotations

import numpy as np
from numba import njit

#: the set's slots: a power of two, at least twice the largest limit (255 + 1 values), so it stays half empty
_SLOTS = 1024
_EMPTY = np.float64(np.nan).view(np.uint64)  # never stored: NaN is skipped
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True)
def _many_distinct(M, cols, rows, limit, slots, out):
    """``out[q]`` = whether column ``cols[q]`` of ``M`` (rows x columns) holds more than ``limit`` distinct known
    values among its first ``rows`` rows (``slots``: scratch, uint64, a power of two > 2 * limit)."""
    mask = np.uint64(slots.shape[0] - 1)
    cell = np.zeros(1, np.float64)
    bits = cell.view(np.uint64)
    for q in range(cols.shape[0]):
        j = cols[q]
        slots[:] = _EMPTY
        n = 0
        for r in range(rows):
            v = M[r, j]
            if v != v:
                continue
            cell[0] = v + 0.0  # -0.0 and 0.0 are one value
            b = bits[0]
            at = ((b * _GOLDEN) >> np.uint64(54)) & mask
            while slots[at] != _EMPTY and slots[at] != b:
                at = (at + np.uint64(1)) & mask
            if slots[at] == _EMPTY:
                slots[at] = b
                n += 1
                if n > limit:
                    break
        out[q] = n > limit


def many_distinct(M: np.ndarray, cols: np.ndarray, rows: int, limit: int) -> np.ndarray:
    """Whether each column ``cols`` of ``M`` (rows x columns, float64) holds more than ``limit`` (< 512) distinct
    known values among its first ``rows`` rows: a bool array aligned with ``cols``.

    Parameters
    ----------
    M : ndarray of float64, shape (m, k)
    cols : ndarray of int64
        The columns to test.
    rows : int
        The prefix of rows looked at (at most m).
    limit : int
        The most distinct values a column may have to be False.

    Returns
    -------
    ndarray of bool, shape (len(cols),)
    """
    out = np.zeros(cols.size, np.bool_)
    if cols.size:
        _many_distinct(M, np.asarray(cols, np.int64), min(rows, M.shape[0]), limit,
                       np.empty(_SLOTS, np.uint64), out)
    return out


def warm_up_many_distinct() -> None:
    """Compile (or load from numba's cache) the kernel for the statistics pass's matrices (column-major; numba types
    a one-column matrix as C-contiguous, a wider one as Fortran)."""
    for k in (2, 1):
        many_distinct(np.zeros((2, k), order="F"), np.arange(k, dtype=np.int64), 2, 1)
