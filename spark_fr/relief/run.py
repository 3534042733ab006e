"""A Relief or ReliefE ranking run: from a read dataset to score results, in broadcast or tall mode.

Sketch
------
    prepared <- persisted, counted, statistics, scaling, target type      spark_fr.data.prepare
    mode     <- --relief-mode; auto: broadcast up to ``broadcast_limit`` values (rows x features), else tall
    Relief   broadcast: scaled rows collected on the driver -> one block  spark_fr.relief.setup
                        -> shards of instances on Spark                    spark_fr.relief.broadcast
             tall:      encoded blocks left in partitions                 spark_fr.relief.tall
    ReliefE  broadcast: CSR rows collected on the driver                  spark_fr.relief.reliefe
             tall:      CSR blocks left in partitions                     spark_fr.relief.tall (reliefe_blocks)
"""
from __future__ import annotations

import logging
import time

import numpy as np

from ..data.blocks import block_parts, collect_encoded, feature_value_counts
from ..data.prepare import prepare
from ..errors import InputError
from ..results import MethodRun
from .broadcast import relief_broadcast
from .params import ReliefEParams, ReliefParams
from .reliefe import reliefe_weights
from .reliefe_data import build_reliefe_data, collect_sparse
from .setup import ReliefSetup, build_relief_data
from .tall import relief_tall, reliefe_tall

log = logging.getLogger(__name__)


def _prepared(spark, dataset, spec, params, method: str) -> tuple:
    """(prepared input, mode): the input prepared for the method, and the mode (``--relief-mode``; auto:
    broadcast up to ``broadcast_limit`` rows x features, else tall)."""
    prep = prepare(dataset, spec, outputs=("scaled",), method=method, spark=spark,
                   force_executors=params.mode == "tall")
    mode = params.mode
    if mode == "auto":
        mode = "broadcast" if prep.n_rows * len(spec.features) <= params.broadcast_limit else "tall"
    return prep, mode


def warn_dropped(n_dropped: int) -> None:
    """One warning line for the rows left out for lack of a known target."""
    if n_dropped:
        log.warning("%d rows without any known target value are not used (supervised ranking)", n_dropped)


def rank_relief(spark, dataset, spec, params: ReliefParams, semi_supervised: bool = False) -> MethodRun:
    """Rank the features of ``dataset`` with the Relief family (see the module sketch)."""
    prep, mode = _prepared(spark, dataset, spec, params, "relief")
    try:
        bins = prep.plan.bins
        classes = prep.encoder.classes
        setup = ReliefSetup(prep.target_type, params, semi_supervised, np.array([b.nominal for b in bins], bool),
                            feature_value_counts(bins), len(classes) if classes else 0, prep.hierarchy)
        if mode == "broadcast":
            encoded = collect_encoded(prep, spec.feature_names, spark)
            data, _, dropped = build_relief_data({"scaled": encoded.scaled, "Y": encoded.Y,
                                                  "keys": encoded.content_keys}, setup)
            warn_dropped(dropped)
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


def rank_reliefe(spark, dataset, spec, params: ReliefEParams, semi_supervised: bool = False) -> MethodRun:
    """Rank the features of ``dataset`` with ReliefE (see the module sketch), in broadcast or tall mode
    (``--relief-mode``, Relief's: auto = broadcast up to ``broadcast_limit`` rows x features)."""
    if semi_supervised:
        raise InputError("--semi-supervised is not available with --method reliefe")
    prep, mode = _prepared(spark, dataset, spec, params, "reliefe")
    try:
        t = time.perf_counter()
        nominal = np.array([b.nominal for b in prep.plan.bins], bool)
        n_classes = len(prep.encoder.classes) if prep.encoder.classes else 0
        if mode == "broadcast":
            data = build_reliefe_data(collect_sparse(prep, spark), spec.feature_names, nominal,
                                      len(prep.encoder.names))
            read_s = time.perf_counter() - t
            n_used, n_dropped = data.n_rows, data.n_dropped
            dens = float(data.X.nnz) / max(1, data.n_rows * data.n_features)
            warn_dropped(n_dropped)
            results, info, timings = reliefe_weights(spark, data, n_classes, params)
        else:
            results, info, timings, n_used, n_dropped, dens = reliefe_tall(
                spark, block_parts(prep, spark), spec.feature_names, nominal, n_classes, params)
            warn_dropped(n_dropped)
            read_s = 0.0
    finally:
        prep.release()
    all_timings = dict(prep.timings)
    all_timings["encoding_s"] = read_s
    all_timings.update(timings)
    all_timings["reliefe_s"] = sum(v for k, v in timings.items())
    info["reliefe_density"] = dens
    return MethodRun(spec.feature_names, prep.usable, results, prep.encoder.names, prep.task, n_used,
                     prep.n_rows, info, all_timings)
