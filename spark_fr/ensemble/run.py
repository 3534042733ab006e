"""An ensemble ranking run: from a read dataset to score results (encode, fit the task, grow on Spark).

Sketch
------
    prepared <- persisted, counted, statistics, bins, target type        spark_fr.data.prepare
    encoded  <- bin codes collected on the driver in canonical order     spark_fr.data.blocks  (broadcast)
    type     <- the target type, with the features as clustering attributes too for semi-supervised and
                unsupervised ranking (spark_fr.tasks.semi_supervised); the task's default options
    fitted   <- the type fitted to the rows with a known target (all rows  spark_fr.tasks
                when clustering on the features); --ssl-weight auto: w by internal cross-validation
    mode     <- broadcast when the encoded data fits --max-broadcast-mb, else partitioned
    scores   <- trees grown and scored on Spark: broadcast mode             spark_fr.ensemble.spark
                or partitioned mode (rows shuffled to their tree groups)    spark_fr.ensemble.partitioned
    cv       <- --cv-folds K (broadcast mode): the ensemble's K-fold        spark_fr.ensemble.validation
                cross-validated predictive performance, in info["cross_validation"] (partitioned mode:
                skipped, with a warning: the data is never on the driver)
"""
from __future__ import annotations

import dataclasses
import logging

import numpy as np

from ..data.blocks import codes_of_rows, collect_encoded
from ..data.prepare import prepare
from ..errors import InputError
from ..results import MethodRun
from .. import tasks
from ..tasks import TaskError
from ..tasks.descriptive import DescriptiveLayout
from ..tasks.semi_supervised import with_features
from ..tasks.sparse_columns import SparseLabels
from .params import EnsembleParams
from .spark import estimate_tree_seconds, fold_runner, rank_trees_on_spark
from .trees import TreeData
from .validation import check_folds, cross_validate_ensemble, describe

log = logging.getLogger(__name__)

#: the SSL weight when none is given (the middle of the thesis' grid; ``auto`` searches the grid)
DEFAULT_SSL_WEIGHT = 0.5


def broadcast_bytes(n_rows: int, n_features: int, n_columns: int, rf_score: bool) -> float:
    """Size of the data broadcast mode ships to every task: codes (twice with the RF score), targets, keys."""
    return n_rows * (n_features * (2 if rf_score else 1) + 8.0 * (3 * n_columns + 1))


def derived_settings(params: EnsembleParams, n_features: int, ssl_weight: float | None = None) -> dict:
    """What the options resolve to for this input (recorded in the output's params): the task's defaults for
    the options left unset, the features per node and per tree, the SSL weight used."""
    out = {k: getattr(params, k) for k in params.unset}
    out["bootstrap"] = params.bootstrap
    out["features_per_node"] = params.features_per_node(n_features)
    patch = params.patch_size(n_features)
    if patch is not None:
        out["features_per_tree"] = patch
    if ssl_weight is not None:
        out["ssl_weight"] = ssl_weight
    return out


def encoded_form(prep) -> str:
    """How the run kept its targets (run.json ``encoded_targets``): 'dense', or 'label_sets' (HMLC,
    :class:`~spark_fr.tasks.sparse_columns.SparseLabels`)."""
    return prep.encoder.compact_form if "sparse_targets" in prep.plan.outputs else "dense"


def choose_mode(params: EnsembleParams, prep, on_features: bool = False) -> str:
    """``--ensemble-mode``, or for auto: broadcast up to ``--max-broadcast-mb``, partitioned above."""
    if params.ensemble_mode != "auto":
        return params.ensemble_mode
    stored = len(prep.encoder.names) if on_features else prep.encoder.stored_columns()  # SSL: dense targets
    columns = max(stored, len(prep.encoder.classes or []))
    if on_features:
        columns += len(prep.plan.features)
    size = broadcast_bytes(prep.n_rows, len(prep.plan.features), columns, "rf" in params.effective_scores())
    mode = "broadcast" if size <= params.max_broadcast_mb * 2 ** 20 else "partitioned"
    log.info("ensemble mode %s: %.0f MB of encoded data (broadcast up to %.0f MB)", mode, size / 2 ** 20,
             params.max_broadcast_mb)
    return mode


def clusters_on_features(spec, semi_supervised: bool) -> bool:
    """Whether the trees cluster on the features too: semi-supervised (SSL-PCT) or unsupervised ranking."""
    return semi_supervised or (spec.task != "auto" and not tasks.get(spec.task).supervised)


def clustering_type(prep, params: EnsembleParams, on_features: bool):
    """The run's target type: the prepared one as the parameters configure it, with the features as
    clustering attributes too when ``on_features``."""
    base = prep.target_type.for_params(params)
    if not on_features:
        return base
    weight = {None: DEFAULT_SSL_WEIGHT, "auto": 1.0}.get(params.ssl_weight, params.ssl_weight)
    return with_features(base, DescriptiveLayout.of_bins(prep.plan.bins), weight)


def training_rows(Y: np.ndarray, n_targets: int, on_features: bool) -> np.ndarray:
    """Mask of the rows the trees learn from: those with a known target, or all of them when the trees
    cluster on the features (unlabelled rows then count through the features); logs what is left out."""
    if isinstance(Y, SparseLabels):
        labelled = Y.labelled.copy()
    else:
        targets = Y[:, :n_targets]
        labelled = ~np.all(np.isnan(targets), axis=1) if n_targets else np.zeros(Y.shape[0], bool)
    if on_features:
        if n_targets:
            log.info("semi-supervised: %d labelled and %d unlabelled rows", int(labelled.sum()),
                     int((~labelled).sum()))
            if labelled.all():
                log.warning("--semi-supervised: every row has a known target, so there are no unlabelled rows; "
                            "the features still take part in the impurity with weight 1 - w")
        return np.ones(Y.shape[0], bool)
    dropped = int((~labelled).sum())
    if dropped:
        log.warning("%d rows without any known target value are not used (supervised ranking; "
                    "--semi-supervised uses them)", dropped)
    return labelled


def feature_relations(dataset, feature_names):
    """A relational input's relations of the features ``feature_names`` (in that order), or None."""
    relations = getattr(dataset, "feature_relations", None)
    return None if relations is None else relations.for_features(list(feature_names))


def validate_ensemble(spark, data: TreeData, params: EnsembleParams) -> dict:
    """``--cv-folds``: the cross-validation record of the run's ensemble (:mod:`spark_fr.ensemble.validation`),
    its folds computed where :func:`~spark_fr.runtime.spark.run_units` finds cheapest; logs one line."""
    k = params.cv_folds
    log.info("%d-fold cross-validation of the ensemble (%d trees per fold)", k, params.trees)
    seconds = estimate_tree_seconds(data, params) * params.trees * k
    data = dataclasses.replace(data, codes_rows=None)  # the folds route their rows from the codes: ship them once
    record = cross_validate_ensemble(data, params, k, params.seed, runner=fold_runner(spark),
                                     estimated_seconds=seconds)
    log.info("%s", describe(record))
    return record


def cv_skipped_partitioned(k: int) -> dict:
    """The record of ``--cv-folds`` in partitioned mode, where it is not computed (logged as a warning)."""
    reason = ("cross-validation needs the encoded data on the driver (broadcast mode); this run is partitioned "
              "(raise --max-broadcast-mb or set --ensemble-mode broadcast to get it)")
    log.warning("--cv-folds %d skipped: %s", k, reason)
    return {"folds": k, "skipped": reason}


def rank_ensemble(spark, dataset, spec, params: EnsembleParams, semi_supervised: bool = False) -> MethodRun:
    """Rank the features of ``dataset`` with a PCT ensemble (see the module sketch)."""
    on_features = clusters_on_features(spec, semi_supervised)
    outputs = ("codes", "scaled") if on_features else ("codes", "sparse_targets")  # SSL: dense targets
    prep = prepare(dataset, spec, outputs=outputs, method="ensemble", spark=spark,
                   force_executors=params.ensemble_mode == "partitioned")
    try:
        params = params.for_task(prep.target_type)
        target_type = clustering_type(prep, params, on_features)
        mode = choose_mode(params, prep, on_features)
        if mode == "partitioned":
            from .partitioned import rank_trees_partitioned

            if params.ssl_weight == "auto" and semi_supervised:
                raise InputError("--ssl-weight auto is not available in partitioned mode (the data does not fit "
                                 "--max-broadcast-mb): give a weight, e.g. --ssl-weight 0.5")
            try:
                results, info = rank_trees_partitioned(spark, prep, params, target_type, on_features,
                                                       feature_relations(dataset, spec.feature_names))
            except TaskError as err:
                raise InputError(str(err)) from None
            info["encoded_targets"] = encoded_form(prep)
            if params.cv_folds:
                info["cross_validation"] = cv_skipped_partitioned(params.cv_folds)
            timings = dict(prep.timings)
            timings["trees_s"] = info.pop("trees_s")
            D = len(spec.feature_names)
            return MethodRun(spec.feature_names, prep.usable, results, prep.encoder.names, prep.task,
                             info.pop("rows_used"), prep.n_rows, info, timings,
                             derived_settings(params, D, target_type.weight if semi_supervised else None))
        encoded = collect_encoded(prep, spec.feature_names, spark)
    finally:
        prep.release()
    log.info("encoded %d rows x %d features (task %s) in %.1f s", encoded.n_rows, encoded.n_features,
             prep.task, sum(encoded.timings.values()))
    Y = np.hstack([encoded.Y, encoded.scaled]) if on_features else encoded.Y
    rows = training_rows(Y, encoded.Y.shape[1], on_features)
    try:
        fitted = target_type.fit(Y[rows], prep.encoder.names, prep.encoder.classes,
                                 prep.encoder.label_weights(params.hmlc_w0))
    except TaskError as err:
        raise InputError(str(err)) from None
    lower, upper, _ = encoded.bin_arrays()
    Yl = fitted.targets(Y[rows])
    tree_data = TreeData(codes_of_rows(encoded.codes, rows), encoded.nominal, lower, upper,
                         fitted.clustering_input(Yl), Yl, fitted.prototype_columns(Yl),
                         encoded.row_keys[rows], fitted,
                         relations=feature_relations(dataset, encoded.feature_names))
    if params.cv_folds:
        check_folds(params.cv_folds, int(rows.sum()))  # before any tree is grown
    info = {}
    if on_features and semi_supervised and params.ssl_weight == "auto":
        from .ssl_weight import choose_ssl_weight

        tree_data, info["ssl_weight_search"] = choose_ssl_weight(spark, tree_data, params)
    results, tree_info = rank_trees_on_spark(spark, tree_data, params)
    info.update(tree_info)
    if params.cv_folds:
        info["cross_validation"] = validate_ensemble(spark, tree_data, params)
    timings = dict(encoded.timings)
    timings["trees_s"] = info.pop("trees_s")
    info["encoded_on"] = encoded.encoded_on
    info["ensemble_mode"] = "broadcast"
    info["encoded_targets"] = encoded_form(prep)
    return MethodRun(encoded.feature_names, encoded.usable, results, prep.encoder.names, prep.task,
                     int(rows.sum()), encoded.n_rows, info, timings,
                     derived_settings(params, encoded.n_features, tree_data.task.weight if semi_supervised else None))
