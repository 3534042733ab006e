"""A ReliefE ranking run: from a read dataset to score results, in broadcast or tall mode (Relief's run.py).

Sketch
------
    prepared <- persisted, counted, statistics, scaling, target type      spark_fr.data.prepare
    mode     <- --relief-mode; auto: broadcast up to ``broadcast_limit`` values (rows x features), else tall
    broadcast: CSR rows collected on the driver                           spark_fr.relief.reliefe
    tall:      CSR blocks left in partitions                              spark_fr.relief.reliefe_tall
"""
from __future__ import annotations

import logging
import time

import numpy as np

from ..data.blocks import block_parts
from ..data.prepare import prepare
from ..errors import InputError
from ..results import MethodRun
from .params import ReliefEParams
from .reliefe import reliefe_weights
from .reliefe_data import build_reliefe_data, collect_sparse
from .reliefe_tall import reliefe_tall

log = logging.getLogger(__name__)


def rank_reliefe(spark, dataset, spec, params: ReliefEParams, semi_supervised: bool = False) -> MethodRun:
    """Rank the features of ``dataset`` with ReliefE (see the module sketch), in broadcast or tall mode
    (``--relief-mode``, Relief's: auto = broadcast up to ``broadcast_limit`` rows x features)."""
    if semi_supervised:
        raise InputError("--semi-supervised is not available with --method reliefe")
    prep = prepare(dataset, spec, outputs=("scaled",), method="reliefe", spark=spark,
                   force_executors=params.mode == "tall")
    try:
        t = time.perf_counter()
        mode = params.mode
        if mode == "auto":
            mode = "broadcast" if prep.n_rows * len(spec.features) <= params.broadcast_limit else "tall"
        nominal = np.array([b.nominal for b in prep.plan.bins], bool)
        classes = prep.encoder.classes
        task = prep.task
        n_classes = len(classes) if classes else 0
        if mode == "broadcast":
            blocks = collect_sparse(prep, spark)
            data = build_reliefe_data(blocks, spec.feature_names, nominal, len(prep.encoder.names))
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
    return MethodRun(spec.feature_names, prep.usable, results, prep.encoder.names, task, n_used,
                     prep.n_rows, info, all_timings)


def warn_dropped(n_dropped: int) -> None:
    """One warning line for the rows left out for lack of a known target."""
    if n_dropped:
        log.warning("%d rows without any known target value are not used (supervised ranking)", n_dropped)
