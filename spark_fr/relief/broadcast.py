"""Relief on Spark, broadcast mode: the scaled data is broadcast, the sampled instances are sharded.

Algorithm sketch
----------------
    data   <- ReliefData (scaled features, targets, keys, influence)       on the driver (spark_fr.relief.setup)
    shards <- the m sampled instances cut into shards                      (spark_fr.relief.sampling)
    groups <- consecutive shards, one group per Spark task
    sums   <- run_grouped(data, groups, work = the shard kernel,            (spark_fr.runtime.spark)
                          merge = results keyed by shard)
    weights from the summed accumulators; importance_std from the per-shard weights

Each shard is computed exactly as on its own, whatever group it is in, so the grouping (and the number of
partitions or executors) never changes the result.
"""
from __future__ import annotations

import logging


from ..runtime import warmups
from ..runtime.groups import contiguous_groups
from ..runtime.spark import run_units
from .accumulators import combine_shards
from .local import run_shard
from .sampling import sampled_shards
from .setup import ReliefData

log = logging.getLogger(__name__)

#: distance evaluations (instances x rows x features) below which the shards go to one task per core: a
#: Spark task costs ~0.1 s, more than such shards take, and progress is not needed for so short a job
SMALL_WORK = 2e10

#: seconds per distance evaluation (one instance, one row, one feature) of the shard kernel, one core
#: (5,000 x 200 rows, 1,000 instances: 0.48 s on the 2-core development machines)
SECONDS_PER_EVALUATION = 5e-10


def shard_groups(shards: list, cores: int, rows_x_features: int) -> list:
    """Shards, numbered, in groups of consecutive ones: one group per Spark task.

    Small jobs get one group per core (few tasks: Spark's per-task cost dominates them); large ones one
    shard per task (finer progress, better balance).
    """
    return group_numbered(list(enumerate(shards)), cores, rows_x_features)


def group_numbered(numbered: list, cores: int, rows_x_features: int) -> list:
    """:func:`shard_groups` of shards already numbered ((index, rows) pairs)."""
    work = sum(len(rows) for _, rows in numbered) * float(rows_x_features)
    n_groups = len(numbered) if work > SMALL_WORK else max(1, min(len(numbered), int(cores)))
    return [numbered[g.start:g.stop] for g in contiguous_groups(len(numbered), n_groups)]


def _run_group(data: ReliefData, group, k, sigma, per_target) -> dict:
    return {i: run_shard(data, rows, k, sigma, per_target) for i, rows in group}


def _merge_dicts(a: dict, b: dict) -> dict:
    a.update(b)
    return a


def relief_broadcast(spark, data: ReliefData, params) -> tuple:
    """Relief weights with the data broadcast and the sampled instances sharded over tasks.

    Returns
    -------
    (list of ScoreResult, info dict)
    """
    warmups.warm("relief")
    shards = sampled_shards(data.keys, params)
    k, sigma, per_target = params.neighbours, params.sigma, params.per_target
    m = sum(len(s) for s in shards)
    info = {"relief_mode": "broadcast", "relief_shards": len(shards), "relief_instances": m}

    def work(payload, group):
        return _run_group(payload, group, k, sigma, per_target)

    def plan(numbered, parallelism):
        return group_numbered(numbered, parallelism, data.n_rows * data.n_features)

    log.info("Relief (broadcast mode): %d instances, k = %d, %d rows x %d features, %d shards", m, k,
             data.n_rows, data.n_features, len(shards))
    res, seconds, early = run_units(spark, data, list(enumerate(shards)), work, _merge_dicts, {}, plan,
                                    estimated_seconds=m * float(data.n_rows) * data.n_features * SECONDS_PER_EVALUATION,
                                    size=lambda group: sum(len(rows) for _, rows in group), label="Relief instances",
                                    description=f"spark_fr: Relief, {m} instances in {len(shards)} shards (broadcast)")
    sums = [res[i] for i in range(len(shards))]
    executed_on = "driver" if early == len(shards) else "spark"
    return combine_shards(sums, data.target.n_classes > 0), {**info, "relief_s": seconds, "executed_on": executed_on,
                                                              "shards_on_driver": early}
