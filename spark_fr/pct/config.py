"""The grow configuration: a tree's options as the grower reads them (no Spark).

Sketch
------
The options of one tree travel as one named object, :data:`GrowConfig`, from the tree builder
(:mod:`spark_fr.ensemble.trees`, :mod:`spark_fr.ensemble.boosting`) to the numba grower
(:func:`spark_fr.pct.grow.grow_tree`), which reads its fields by name:

    option table (spark_fr.options) -> ensemble parameters -> tree builder: grow_config(...) -> GrowConfig

:func:`grow_config` is the one place where option values become the kernel's values: ``--max-depth`` None
becomes -1 (unlimited), ``--max-features`` None becomes 0 (every feature), the splitter and ``--missing``
names become the integer codes below, and a fractional tree without a positive minimal leaf weight is
refused before any work.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

SPLITTER_BEST = 0
SPLITTER_RANDOM = 1
#: the splitter of an ensemble: the best test of each candidate feature, or one at random (extra trees)
SPLITTERS = {"best": SPLITTER_BEST, "random": SPLITTER_RANDOM}

#: ``--missing``: a missing feature value goes as a block to the better side (learned), or down both branches
#: with fractional weights, the heuristic being computed on the known values (fractional, CLUS)
MISSING_LEARNED = 0
MISSING_FRACTIONAL = 1
MISSING_MODES = {"learned": MISSING_LEARNED, "fractional": MISSING_FRACTIONAL}

#: the options of one tree, as the grower reads them (see :func:`grow_config` for the meaning of each field)
GrowConfig = namedtuple("GrowConfig", ["min_leaf", "max_depth", "max_features", "splitter", "missing",
                                       "resample_constant", "track_columns", "seed"])


def grow_config(*, min_leaf: float = 2.0, max_depth: int | None = None, max_features: int | None = None,
                splitter: str = "best", missing: str = "learned", resample_constant: bool = False,
                track_columns: bool = False, seed: int = 0) -> GrowConfig:
    """The :data:`GrowConfig` of one tree.

    Parameters
    ----------
    min_leaf : float
        Minimal (weighted) number of examples in a leaf; fractional: of the examples with a known value of the
        test on each side (as CLUS), up to rounding (:func:`spark_fr.pct.grow.leaf_weight_floor`); must be
        positive then.
    max_depth : int, optional
        Maximal depth (root = 0); None or negative: unlimited (-1 in the configuration).
    max_features : int, optional
        Features evaluated per node, drawn at random without replacement; None: all of them, in a random order
        (0 in the configuration).
    splitter : {'best', 'random'}
        The best test of each candidate feature, or one random test (extra trees).
    missing : {'learned', 'fractional'}
        A missing feature value goes as a block to the better side of a test (learned), or down both branches
        with fractional weights, the test being scored on the known values (fractional, CLUS).
    resample_constant : bool
        False (the thesis, CLUS): the ``max_features`` sampled features are the candidates, and a node is a
        leaf when none of them can split it. True (scikit-learn): a feature constant in the node (fractional: on
        its rows with a known value) does not count, and more are drawn.
    track_columns : bool
        Keep per-feature, per-column reductions (for per-target Genie3).
    seed : int
        The tree's 64-bit seed.

    Returns
    -------
    GrowConfig
        Fields of fixed types (float, int, int, int, int, bool, bool, uint64), so the grower compiles once.
    """
    if splitter not in SPLITTERS:
        raise ValueError(f"splitter must be one of {sorted(SPLITTERS)}, not {splitter!r}")
    if missing not in MISSING_MODES:
        raise ValueError(f"--missing must be one of {sorted(MISSING_MODES)}, not {missing!r}")
    if missing == "fractional" and not min_leaf > 0:
        raise ValueError(f"--missing fractional needs a positive minimal leaf weight, not {min_leaf}")
    depth = -1 if max_depth is None or max_depth < 0 else int(max_depth)
    return GrowConfig(float(min_leaf), depth, 0 if max_features is None else int(max_features), SPLITTERS[splitter],
                      MISSING_MODES[missing], bool(resample_constant), bool(track_columns), np.uint64(seed))
