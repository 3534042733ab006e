"""The grower against a frozen record of the grower of main, and its split-search helpers against slow,
obvious references (pure NumPy, brute force) on random inputs."""
from pathlib import Path

import numpy as np
import pytest

from grow_cases import N_CASES, case, input_digest, load, run

FIXTURE = Path(__file__).parent / "data" / "grow_trees.npz"


@pytest.fixture(scope="module")
def recorded():
    return load(FIXTURE)


@pytest.mark.parametrize("i", range(N_CASES))
def test_grow_tree_reproduces_the_recorded_trees_bit_for_bit(recorded, i):
    """Every node array (and the in-place partition of ``rows``) equals the one recorded with the grower of
    main before the split searches became helpers (tests/grow_cases.py), to the last bit."""
    c = case(i)
    expected = recorded[i]
    assert input_digest(c) == expected["digest"], "random inputs changed (NumPy's generator?): not a grower bug"
    got = run(c)
    assert set(got) == set(expected) - {"digest"}
    for name, a in got.items():
        e = expected[name]
        assert a.dtype == e.dtype, name
        a = a.ravel()
        assert a.shape == e.shape, name
        if a.dtype.kind == "f":  # compare bits: -0.0 != 0.0, NaN == NaN of the same payload
            a, e = a.view(np.uint64), e.view(np.uint64)
        assert np.array_equal(a, e), f"case {i}: {name} differs at {np.flatnonzero(a != e)[:5]}"
