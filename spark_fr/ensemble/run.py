"""An ensemble ranking run: from a read dataset to score results (encode, fit the task, grow on Spark).

Sketch
------
    prepared <- persisted, counted, statistics, bins, target type        spark_fr.data.prepare
    encoded  <- bin codes collected on the driver in canonical order     spark_fr.data.blocks
    fitted   <- the target type fitted to the rows with a known target   spark_fr.tasks
    scores   <- trees grown and scored on Spark (broadcast mode)         spark_fr.ensemble.spark
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


def rank_ensemble(spark, dataset, spec, params: EnsembleParams, semi_supervised: bool = False) -> MethodRun:
    """Rank the features of ``dataset`` with a PCT ensemble (see the module sketch)."""
    prep = prepare(dataset, spec, outputs=("codes",), method="ensemble")
    try:
        encoded = collect_encoded(prep, spec.feature_names)
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
        fitted = prep.target_type.fit(Y[labelled], prep.encoder.names, prep.encoder.classes)
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
    return MethodRun(encoded.feature_names, encoded.usable, results, prep.encoder.names, prep.task,
                     int(labelled.sum()), encoded.n_rows, info, timings,
                     {"features_per_node": params.features_per_node(encoded.n_features)})
