"""The ground floor: seeded hashing with named streams, cutting work into groups, and the task plans built on
it (tree groups, Relief shards and their task groups)."""
import numpy as np
import pytest

from spark_fr.runtime.groups import contiguous_groups
from spark_fr.runtime.rng import GOLDEN, Stream, _mix64_int, derive_seed, hash_uniform, mix64, mix64_array


@pytest.mark.parametrize("n,k", [(10, 3), (7, 7), (5, 9), (1, 1), (100, 6), (16, 2)])
def test_contiguous_groups_cover_everything_once_in_order(n, k):
    groups = contiguous_groups(n, k)
    assert [i for g in groups for i in g] == list(range(n))
    assert len(groups) == min(n, k) and all(len(g) > 0 for g in groups)
    sizes = [len(g) for g in groups]
    assert max(sizes) - min(sizes) <= 1


def test_contiguous_groups_of_nothing():
    assert contiguous_groups(0, 4) == []


def test_the_three_forms_of_mix64_agree():
    z = np.random.default_rng(0).integers(0, 2 ** 63, 200, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    with np.errstate(over="ignore"):
        arr = mix64_array(z)
    assert [_mix64_int(int(v)) for v in z] == [int(v) for v in arr]
    assert [int(mix64(v)) for v in z[:20]] == [int(v) for v in arr[:20]]
    assert len(set(int(v) for v in arr)) == 200  # a bijection does not collide


def test_named_streams_are_independent_and_stable():
    seeds = {s: derive_seed(7, 3, s) for s in Stream}
    assert len(set(seeds.values())) == len(Stream)
    assert derive_seed(7, 3, Stream.GROW) == derive_seed(7, 3)  # the default stream
    # the derivation is part of every published result: a change here changes every ranking
    M = (1 << 64) - 1

    def splitmix(z):
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
        return z ^ (z >> 31)

    z = splitmix((7 * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & M)
    z = splitmix(z ^ ((3 * 0xD1B54A32D192ED03) & M))
    assert derive_seed(7, 3, Stream.PERMUTATION) == splitmix(z ^ ((2 * 0x8CB92BA72F3D8DD7 + 1) & M))
    assert int(Stream.BOOTSTRAP) == 1 and int(Stream.PERMUTATION) == 2 and int(Stream.RELIEF_SAMPLE) == 7
    keys = np.arange(1000, dtype=np.uint64) * GOLDEN
    u = hash_uniform(seeds[Stream.BOOTSTRAP], keys)
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.05
    assert abs(np.corrcoef(u, hash_uniform(seeds[Stream.GROW], keys))[0, 1]) < 0.1


def test_tree_groups_follow_the_work_and_the_cores():
    from spark_fr.ensemble.spark import plan_groups

    assert plan_groups(100, 0.001, 2) == [range(0, 100)]          # tiny trees: one task
    big = plan_groups(100, 10.0, 2)
    assert len(big) == 6 and [i for g in big for i in g] == list(range(100))  # 3 tasks per core
    assert len(plan_groups(3, 10.0, 8)) == 3                       # never more groups than trees


def test_relief_shards_and_task_groups():
    from spark_fr.relief.broadcast import SMALL_WORK, shard_groups
    from spark_fr.relief.sampling import micro_blocks, shard_bounds

    assert shard_bounds(10, 3) == [(0, 3), (3, 7), (7, 10)]
    assert shard_bounds(2, 16) == [(0, 1), (1, 2)]
    shards = [list(range(a, b)) for a, b in shard_bounds(1000, 16)]
    small = shard_groups(shards, 2, 10)
    assert len(small) == 2 and [i for g in small for i, _ in g] == list(range(16))
    assert len(shard_groups(shards, 2, int(SMALL_WORK))) == 16
    assert micro_blocks(130) == [(0, 64), (64, 128), (128, 130)]
