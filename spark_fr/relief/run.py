"""A Relief ranking run: from a read dataset to score results, in broadcast or tall mode.

Sketch
------
    prepared <- persisted, counted, statistics, scaling, target type      spark_fr.data.prepare
    mode     <- broadcast up to ``broadcast_limit`` values (rows x features), else tall
    broadcast: scaled rows collected on the driver -> one block           spark_fr.relief.setup
               -> shards of instances on Spark                             spark_fr.relief.broadcast
    tall:      encoded blocks left in partitions                          spark_fr.relief.tall
"""
from __future__ import annotations

import logging

import numpy as np

from ..data.blocks import block_parts, collect_encoded, feature_value_counts
from ..data.prepare import prepare
from ..results import MethodRun
from .broadcast import relief_broadcast
from .params import ReliefParams
from .setup import ReliefSetup, build_relief_data
from .tall import relief_tall

log = logging.getLogger(__name__)


def rank_relief(spark, dataset, spec, params: ReliefParams, semi_supervised: bool = False) -> MethodRun:
    """Rank the features of ``dataset`` with the Relief family (see the module sketch)."""
    prep = prepare(dataset, spec, outputs=("scaled",), method="relief", spark=spark,
                   force_executors=params.mode == "tall")
    try:
        mode = params.mode
        if mode == "auto":
            mode = "broadcast" if prep.n_rows * len(spec.features) <= params.broadcast_limit else "tall"
        bins = prep.plan.bins
        classes = prep.encoder.classes
        setup = ReliefSetup(prep.target_type, params, semi_supervised, np.array([b.nominal for b in bins], bool),
                            feature_value_counts(bins), len(classes) if classes else 0, prep.hierarchy)
        if mode == "broadcast":
            encoded = collect_encoded(prep, spec.feature_names, spark)
            data, _, dropped = build_relief_data({"scaled": encoded.scaled, "Y": encoded.Y,
                                                  "keys": encoded.content_keys}, setup)
            if dropped:
                log.warning("%d rows without any known target value are not used (supervised ranking)", dropped)
            results, info = relief_broadcast(spark, data, params)
            n_used = data.n_rows
        else:
            results, info = relief_tall(spark, block_parts(prep, spark), setup)
            n_used = prep.n_rows
    finally:
        prep.release()
    timings = dict(prep.timings)
    timings["relief_s"] = info.pop("relief_s")
    return MethodRun(spec.feature_names, prep.usable, results, prep.encoder.names, prep.task, n_used, prep.n_rows,
                     info, timings)
