"""Cutting n units of work (trees, Relief instances, shards) into contiguous groups (no Spark)."""
from __future__ import annotations

import numpy as np


def contiguous_groups(n: int, n_groups: int) -> list:
    """Cut ``range(n)`` into ``n_groups`` contiguous, non-empty groups of sizes as equal as possible.

    Parameters
    ----------
    n : int
        Number of units.
    n_groups : int
        Wanted number of groups; clamped to [1, n].

    Returns
    -------
    list of range
        Empty when ``n == 0``. Boundaries are ``round(i * n / n_groups)``, so the same (n, n_groups)
        always gives the same groups.
    """
    if n <= 0:
        return []
    k = max(1, min(int(n_groups), int(n)))
    bounds = np.linspace(0, n, k + 1).round().astype(int)
    return [range(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]
