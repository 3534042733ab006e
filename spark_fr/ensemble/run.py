"""An ensemble ranking run: from a read dataset to score results (encode, fit the task, grow on Spark).

Sketch
------
    prepared <- persisted, counted, statistics, bins, target type        spark_fr.data.prepare
    encoded  <- bin codes collected on the driver in canonical order     spark_fr.data.blocks  (broadcast)
    fitted   <- the target type fitted to the rows with a known target   spark_fr.tasks
    mode     <- broadcast when the encoded data fits --max-broadcast-mb, else partitioned
    scores   <- trees grown and scored on Spark: broadcast mode             spark_fr.ensemble.spark
                or partitioned mode (rows shuffled to their tree groups)    spark_fr.ensemble.partitioned
"""
from __future__ import annotations

import logging

import numpy as np

from ..data.blocks import collect_encoded
from ..data.prepare import prepare
from ..errors import InputError
from ..results import MethodRun
from ..tasks import TaskError
from .params import EnsembleParams
from .spark import rank_trees_on_spark
from .trees import TreeData

log = logging.getLogger(__name__)


def broadcast_bytes(n_rows: int, n_features: int, n_columns: int, rf_score: bool) -> float:
    """Size of the data broadcast mode ships to every task: codes (twice with the RF score), targets, keys."""
    return n_rows * (n_features * (2 if rf_score else 1) + 8.0 * (3 * n_columns + 1))


def derived_settings(params: EnsembleParams, n_features: int) -> dict:
    """What the options resolve to for this input (recorded in the output's params)."""
    out = {"features_per_node": params.features_per_node(n_features)}
    patch = params.patch_size(n_features)
    if patch is not None:
        out["features_per_tree"] = patch
    return out


def choose_mode(params: EnsembleParams, prep) -> str:
    """``--ensemble-mode``, or for auto: broadcast up to ``--max-broadcast-mb``, partitioned above."""
    if params.ensemble_mode != "auto":
        return params.ensemble_mode
    columns = max(len(prep.encoder.names), len(prep.encoder.classes or []))
    size = broadcast_bytes(prep.n_rows, len(prep.plan.features), columns, "rf" in params.effective_scores())
    mode = "broadcast" if size <= params.max_broadcast_mb * 2 ** 20 else "partitioned"
    log.info("ensemble mode %s: %.0f MB of encoded data (broadcast up to %.0f MB)", mode, size / 2 ** 20,
             params.max_broadcast_mb)
    return mode


def rank_ensemble(spark, dataset, spec, params: EnsembleParams, semi_supervised: bool = False) -> MethodRun:
    """Rank the features of ``dataset`` with a PCT ensemble (see the module sketch)."""
    prep = prepare(dataset, spec, outputs=("codes",), method="ensemble", spark=spark,
                   force_executors=params.ensemble_mode == "partitioned")
    try:
        mode = choose_mode(params, prep)
        if mode == "partitioned":
            from .partitioned import rank_trees_partitioned

            try:
                results, info = rank_trees_partitioned(spark, prep, params)
            except TaskError as err:
                raise InputError(str(err)) from None
            timings = dict(prep.timings)
            timings["trees_s"] = info.pop("trees_s")
            D = len(spec.feature_names)
            return MethodRun(spec.feature_names, prep.usable, results, prep.encoder.names, prep.task,
                             info.pop("rows_used"), prep.n_rows, info, timings,
                             derived_settings(params, D))
        encoded = collect_encoded(prep, spec.feature_names, spark)
    finally:
        prep.release()
    log.info("encoded %d rows x %d features (task %s) in %.1f s", encoded.n_rows, encoded.n_features,
             prep.task, sum(encoded.timings.values()))
    Y = encoded.Y
    labelled = ~np.all(np.isnan(Y), axis=1)
    dropped = int((~labelled).sum())
    if dropped:
        log.warning("%d rows without any known target value are not used (supervised ranking)", dropped)
    try:
        fitted = prep.target_type.fit(Y[labelled], prep.encoder.names, prep.encoder.classes,
                                      prep.encoder.label_weights(params.hmlc_w0))
    except TaskError as err:
        raise InputError(str(err)) from None
    lower, upper, _ = encoded.bin_arrays()
    Yl = fitted.targets(Y[labelled])
    tree_data = TreeData(np.ascontiguousarray(encoded.codes[:, labelled]), encoded.nominal, lower, upper,
                         np.ascontiguousarray(fitted.clustering_matrix(Yl)), Yl, fitted.prototype_columns(Yl),
                         encoded.row_keys[labelled], fitted)
    results, info = rank_trees_on_spark(spark, tree_data, params)
    timings = dict(encoded.timings)
    timings["trees_s"] = info.pop("trees_s")
    info["encoded_on"] = encoded.encoded_on
    info["ensemble_mode"] = "broadcast"
    return MethodRun(encoded.feature_names, encoded.usable, results, prep.encoder.names, prep.task,
                     int(labelled.sum()), encoded.n_rows, info, timings,
                     derived_settings(params, encoded.n_features))
