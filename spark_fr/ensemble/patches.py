"""Random patches for wide tables: each tree draws its own subset of the features.

Sketch
------
With ``--max-features-per-tree p`` (a count, or a fraction of the D features), tree t uses only the p
features with the smallest ``hash(derive_seed(s, t, PATCH), feature index)``: a seeded choice that depends
on (seed, tree, feature) alone. Its per-node random subset (``--max-features``, resolved from D and capped
at p) is drawn within the patch. A tree then needs only its patch's columns: partitioned mode ships a tree
group's rows with the union of its trees' patches only, so a task holds rows x (patch) cells and a table of
10^5 columns never materialises whole in one task. Feature importances of the features outside a tree's
patch are 0 for that tree (as for any feature a tree does not use).
"""
from __future__ import annotations

import math

import numpy as np

from ..runtime.rng import Stream, derive_seed, hash_uniform


def patch_size(max_features_per_tree, n_features: int) -> int | None:
    """The number of features of every tree's patch (None: every tree sees every feature)."""
    if max_features_per_tree is None:
        return None
    if isinstance(max_features_per_tree, float):
        p = math.ceil(max_features_per_tree * n_features)
    else:
        p = int(max_features_per_tree)
    p = max(1, min(n_features, p))
    return None if p >= n_features else p


def tree_patch(seed: int, tree: int, n_features: int, size: int | None) -> np.ndarray:
    """The sorted feature indices of tree ``tree``'s patch (all features when ``size`` is None)."""
    if size is None:
        return np.arange(n_features)
    u = hash_uniform(derive_seed(seed, tree, Stream.PATCH), np.arange(n_features, dtype=np.uint64))
    return np.sort(np.lexsort((np.arange(n_features), u))[:size])


def patches_union(seed: int, trees, n_features: int, size: int | None) -> np.ndarray:
    """The features some tree of ``trees`` uses (sorted)."""
    if size is None:
        return np.arange(n_features)
    return np.unique(np.concatenate([tree_patch(seed, int(t), n_features, size) for t in trees]))
