"""The distinct-values test of the statistics pass against ``np.unique`` of each column's known prefix."""
from __future__ import annotations

import numpy as np
import pytest

from spark_fr.data.distinct import many_distinct


@pytest.mark.parametrize("seed", range(4))
def test_many_distinct_equals_numpys_unique_count_of_the_known_prefix(seed):
    """Columns of every kind (continuous, few integers, integers near the limit, NaNs, -0.0 beside 0.0, all
    missing, infinities, repeated blocks), prefixes shorter and longer than the matrix, limits around the counts."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 700))
    cols = [rng.normal(size=m), rng.integers(0, 5, m), rng.integers(0, 256, m), rng.integers(0, 257, m),
            np.where(rng.random(m) < 0.4, np.nan, rng.integers(0, 300, m)), np.full(m, np.nan),
            rng.choice([0.0, -0.0, np.inf, -np.inf, np.nan, 1.5], m), np.repeat(rng.normal(size=m // 3 + 1), 3)[:m],
            rng.integers(0, 2**20, m) * 2.0**-10]
    M = np.asfortranarray(np.column_stack(cols).astype(np.float64))
    for rows in (0, 1, m // 2, m, m + 10, 512):
        for limit in (0, 1, 4, 5, 200, 255, 256):
            which = rng.permutation(M.shape[1])[:int(rng.integers(0, M.shape[1] + 1))]
            got = many_distinct(M, which, rows, limit)
            want = [np.unique(M[:rows, j][~np.isnan(M[:rows, j])]).size > limit for j in which]
            assert got.tolist() == want, (rows, limit)
