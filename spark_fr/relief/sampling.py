"""Which instances Relief samples, in which order, and how they are cut into shards and micro-blocks.

Sketch
------
* The m sampled instances are the rows with the smallest ``hash_uniform(seed, content key)`` (ties by the
  key), in that order. Identical rows get identical hashes, so the sample's content does not depend on the
  order or partitioning of the rows; tall mode finds the same m by merging per-block bottom-m lists.
* They are cut into ``shards`` contiguous shards (``importance_std`` is the spread of the shards'
  weights), and each shard into micro-blocks of :data:`INSTANCE_BLOCK` instances: inside a micro-block the
  accumulators are plain floating-point sums, micro-blocks are combined exactly, and every mode cuts the
  same micro-blocks, so every mode gets bit-identical sums.
"""
from __future__ import annotations

import numpy as np

from ..runtime.groups import contiguous_groups
from ..runtime.rng import Stream, derive_seed, hash_uniform

#: instances accumulated with plain sums before an exact merge (see the module docstring)
INSTANCE_BLOCK = 64


def sample_hashes(keys: np.ndarray, seed: int) -> np.ndarray:
    """The sampling hash of each row key (smaller = sampled earlier)."""
    return hash_uniform(derive_seed(seed, 0, Stream.RELIEF_SAMPLE), keys)


def bottom(u: np.ndarray, keys: np.ndarray, m: int) -> np.ndarray:
    """Positions of the m smallest (hash, key), in that order."""
    return np.lexsort((keys, u))[:m]


def sample_order(keys: np.ndarray, seed: int) -> np.ndarray:
    """Row positions sorted by (hash, key): the sampling order of Relief."""
    return bottom(sample_hashes(keys, seed), keys, keys.size)


def shard_bounds(m: int, shards: int) -> list:
    """(start, end) of each shard of m instances (contiguous, as equal as possible)."""
    return [(g.start, g.stop) for g in contiguous_groups(m, shards)] if m > 0 else [(0, 0)]


def sampled_shards(keys: np.ndarray, params) -> list:
    """The sampled instances (row positions) cut into shards."""
    m = params.n_iterations(keys.size)
    order = sample_order(keys, params.seed)[:m]
    return [order[a:b] for a, b in shard_bounds(m, params.shards)]


def micro_blocks(n: int) -> list:
    """(start, end) of the micro-blocks of a shard of n instances."""
    return [(a, min(n, a + INSTANCE_BLOCK)) for a in range(0, n, INSTANCE_BLOCK)]
