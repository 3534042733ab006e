"""``spark_fr.rank``: the functional API behind the job and the notebooks.

Sketch
------
    params   <- validated options (fail before touching data)
    dataset  <- read (ARFF / CSV / Parquet / Delta / .mat / a DataFrame)          spark_fr.io
    spec     <- targets and features (names checked)                              spark_fr.data.schema
    prepared <- persisted, counted, statistics, bins, task                         spark_fr.data.encode
    ensemble:  encoded blocks on the driver -> trees on Spark (broadcast mode)     spark_fr.ensemble.spark
    relief:    scaled blocks on the driver (broadcast mode) or left distributed
               (tall mode) -> Relief accumulators on Spark                         spark_fr.relief.spark
    ranking  <- long table + run metadata                                          spark_fr.ranking
"""
from __future__ import annotations

import logging
import platform
import time
from datetime import datetime, timezone

import numpy as np

from .data.encode import block_rdd, collect_encoded, feature_value_counts, prepare
from .data.schema import resolve
from .ensemble.params import EnsembleParams, ParamError
from .errors import InputError
from .io.readers import read_dataset
from .ranking import Ranking
from .relief.params import ReliefParamError, ReliefParams
from .tasks import TaskError, fit_task

log = logging.getLogger(__name__)

METHODS = ("ensemble", "relief", "reliefe")
TASKS = ("auto", "classification", "regression", "mtr", "mlc", "hmlc", "unsupervised")
ENSEMBLE_TASKS = ("auto", "classification", "regression", "mtr", "mlc")
COMMON_PARAMS = {"format", "labels_xml", "features_col", "per_target", "seed", "semi_supervised", "title",
                 "hierarchy"}
ENSEMBLE_PARAMS = {"ensemble", "trees", "scores", "max_features", "min_samples_leaf", "max_depth", "bootstrap",
                   "symbolic_weight", "resample_constant_features"}
RELIEF_PARAMS = {"relief_neighbours", "relief_iterations", "relief_sigma", "relief_target_distance",
                 "relief_influence", "relief_mode", "hmlc_w0", "relief_hmlc_squared",
                 "relief_hmlc_normaliser"}


def versions() -> dict:
    """Versions of spark_fr and of what it runs on (for run metadata)."""
    import numba
    import pyarrow
    import pyspark

    from . import __version__

    return {"spark_fr": __version__, "pyspark": pyspark.__version__, "numpy": np.__version__,
            "numba": numba.__version__, "pyarrow": pyarrow.__version__, "python": platform.python_version()}


def _ensemble_params(opts: dict) -> EnsembleParams:
    names = {"ensemble": "ensemble", "trees": "trees", "scores": "scores", "max_features": "max_features",
             "min_samples_leaf": "min_samples_leaf", "max_depth": "max_depth", "bootstrap": "bootstrap",
             "symbolic_weight": "symbolic_weight", "per_target": "per_target", "seed": "seed",
             "resample_constant_features": "resample_constant"}
    kwargs = {field: opts[key] for key, field in names.items() if opts.get(key) is not None}
    try:
        return EnsembleParams(**kwargs)
    except ParamError as err:
        raise InputError(str(err)) from None


def _relief_params(opts: dict) -> ReliefParams:
    names = {"relief_neighbours": "neighbours", "relief_iterations": "iterations", "relief_sigma": "sigma",
             "relief_target_distance": "target_distance", "relief_influence": "influence", "relief_mode": "mode",
             "hmlc_w0": "hmlc_w0", "relief_hmlc_squared": "hmlc_squared",
             "relief_hmlc_normaliser": "hmlc_normaliser", "per_target": "per_target",
             "seed": "seed"}
    kwargs = {field: opts[key] for key, field in names.items() if opts.get(key) is not None}
    try:
        return ReliefParams(**kwargs)
    except ReliefParamError as err:
        raise InputError(str(err)) from None


def rank(data, targets=None, task: str = "auto", method: str = "ensemble", *, spark=None, **params) -> Ranking:
    """Rank the features of a table for predicting its targets.

    Parameters
    ----------
    data : str or pyspark.sql.DataFrame
        A path (ARFF, CSV, Parquet, Delta directory, ``.mat``) or a Spark DataFrame.
    targets : str or list of str, optional
        Target columns (comma-separated string or list). Default: the labels of ``labels_xml``, else the
        hierarchical class attribute or the last attribute of an ARFF file.
    task : str
        'auto' (inferred from the targets), 'classification', 'regression', 'mtr', 'mlc', 'hmlc' or
        'unsupervised' (Relief).
    method : str
        'ensemble' (PCT ensembles: Symbolic, Genie3, RF scores) or 'relief' (the Relief family).
    spark : SparkSession, optional
        Default: the active session, or a local one.
    **params
        The options of ``jobs/rank.py`` with underscores. Common: ``format``, ``labels_xml``,
        ``features_col``, ``per_target``, ``seed``, ``semi_supervised``, ``hierarchy`` (HMLC from a table:
        a :class:`spark_fr.hierarchy.Hierarchy` or a Clus class specification such as ``'01,01/02,02'``
        or ``'root/a,a/b'``; the single target is then a string column of ``@``-joined labels). Ensembles: ``ensemble`` ('rf',
        'bagging', 'extra_trees'), ``trees``, ``scores``, ``max_features``, ``min_samples_leaf``,
        ``max_depth``, ``bootstrap``, ``symbolic_weight``, ``resample_constant_features``. Relief:
        ``relief_neighbours``, ``relief_iterations``, ``relief_sigma``, ``relief_target_distance``,
        ``relief_influence``, ``relief_mode``, ``hmlc_w0``, ``relief_hmlc_squared``,
        ``relief_hmlc_normaliser``.

    Returns
    -------
    Ranking

    Raises
    ------
    spark_fr.errors.InputError
        Bad input or parameters (one-line message naming the file, column, row or option).
    """
    t_start = time.perf_counter()
    unknown = set(params) - COMMON_PARAMS - ENSEMBLE_PARAMS - RELIEF_PARAMS
    if unknown:
        raise InputError(f"unknown parameter(s): {', '.join(sorted(unknown))}")
    if method not in METHODS:
        raise InputError(f"--method must be one of {', '.join(METHODS)}, not '{method}'")
    if task not in TASKS:
        raise InputError(f"--task must be one of {', '.join(TASKS)}, not '{task}'")
    if method == "reliefe":
        raise InputError("--method reliefe is not available in this version; use --method relief or ensemble")
    semi = bool(params.get("semi_supervised"))
    if method == "ensemble":
        if task not in ENSEMBLE_TASKS or semi:
            what = "--semi-supervised" if semi else f"--task {task}"
            raise InputError(f"{what} is available with --method relief; ensembles support classification, "
                             f"regression, mtr and mlc in this version")
        method_params = _ensemble_params(params)
        scores = method_params.effective_scores()
        if "rf" in method_params.scores and "rf" not in scores:
            log.warning("the RF score needs out-of-bag rows, and %s without bootstrapping has none: it is "
                        "skipped (add --bootstrap to compute it)", method_params.ensemble)
        if not scores:
            raise InputError("no score left to compute: the RF score needs bootstrapping (--bootstrap)")
    else:
        method_params = _relief_params(params)

    if spark is None:
        from .session import get_spark

        spark = get_spark()
    timings = {}
    t0 = time.perf_counter()
    dataset = read_dataset(spark, data, format=params.get("format") or "auto", labels_xml=params.get("labels_xml"),
                           targets=targets, features_col=params.get("features_col"))
    if params.get("hierarchy") is not None:
        _attach_hierarchy(dataset, params["hierarchy"], targets)
    spec = resolve(dataset, targets, task, semi)
    timings["read_s"] = time.perf_counter() - t0
    log.info("input %s: %d features, target(s) %s", dataset.source, len(spec.features),
             ", ".join(spec.target_names) or "none (unsupervised)")
    if method == "ensemble":
        names, usable, results, target_names, info, task_name, n_rows, n_read = _rank_ensemble(
            spark, dataset, spec, method_params, timings)
    else:
        names, usable, results, target_names, info, task_name, n_rows, n_read = _rank_relief(
            spark, dataset, spec, method_params, semi, timings)
    timings["total_s"] = time.perf_counter() - t_start

    run_params = {"input": dataset.source if isinstance(data, (str, list, tuple)) else "DataFrame", "task": task_name,
                  "method": method, "targets": list(spec.target_names), "semi_supervised": semi,
                  **method_params.to_dict()}
    if method == "ensemble":
        run_params["features_per_node"] = method_params.features_per_node(len(names))
    for key in ("format", "labels_xml", "features_col"):
        if params.get(key):
            run_params[key] = params[key]
    metadata = {"input": run_params["input"], "title": params.get("title"), "n_rows": n_rows, "n_rows_read": n_read,
                "n_features": len(names), "unusable_features": [n for n, u in zip(names, usable) if not u],
                "timings": timings, **info, "versions": versions(), "spark_master": spark.sparkContext.master,
                "created_at": datetime.now(timezone.utc)}
    return Ranking.from_scores(names, usable, results, target_names, run_params, metadata)


def _rank_ensemble(spark, dataset, spec, ens: EnsembleParams, timings: dict):
    from .ensemble.spark import rank_trees_on_spark
    from .ensemble.trees import TreeData

    prep = prepare(dataset, spec, outputs=("codes",))
    try:
        encoded = collect_encoded(prep, spec.feature_names)
    finally:
        prep.release()
    timings.update(encoded.timings)
    log.info("encoded %d rows x %d features (task %s) in %.1f s", encoded.n_rows, encoded.n_features,
             encoded.task, sum(encoded.timings.values()))
    Y = encoded.Y
    labelled = ~np.all(np.isnan(Y), axis=1)
    dropped = int((~labelled).sum())
    if dropped:
        log.warning("%d rows without any known target value are not used (supervised ranking)", dropped)
    classes = encoded.target_categories[0] if encoded.task == "classification" else None
    try:
        fitted = fit_task(encoded.task, Y[labelled], encoded.target_names, classes)
    except TaskError as err:
        raise InputError(str(err)) from None
    lower, upper, _ = encoded.bin_arrays()
    Yl = Y[labelled]
    tree_data = TreeData(np.ascontiguousarray(encoded.codes[:, labelled]), encoded.nominal, lower, upper,
                         np.ascontiguousarray(fitted.clustering_matrix(Yl)), Yl, fitted.prototype_columns(Yl),
                         encoded.row_keys[labelled], fitted)
    results, info = rank_trees_on_spark(spark, tree_data, ens)
    timings["trees_s"] = info.pop("trees_s")
    info["encoded_on"] = encoded.encoded_on
    return (encoded.feature_names, encoded.usable, results, encoded.target_names, info, encoded.task,
            int(labelled.sum()), encoded.n_rows)


def _rank_relief(spark, dataset, spec, rp: ReliefParams, semi: bool, timings: dict):
    from .relief.prepare import build_relief_data
    from .relief.spark import relief_broadcast, relief_tall

    prep = prepare(dataset, spec, outputs=("scaled",), force_executors=rp.mode == "tall")
    try:
        timings.update(prep.timings)
        D = len(spec.features)
        mode = rp.mode
        if mode == "auto":
            mode = "broadcast" if prep.n_rows * D <= rp.broadcast_limit else "tall"
        task = prep.task
        classes = prep.target_categories[0] if task == "classification" else None
        if task == "classification":
            _check_classes(prep, spec, semi)
        bins = prep.plan.bins
        nominal = np.array([b.nominal for b in bins], bool)
        n_values = feature_value_counts(bins)
        if mode == "broadcast":
            encoded = collect_encoded(prep, spec.feature_names)
            timings.update(encoded.timings)
            data, kept = build_relief_data(encoded.scaled, encoded.content_keys, encoded.Y, task, nominal, n_values,
                                           rp, semi_supervised=semi, classes=classes, hierarchy=prep.hierarchy)
            dropped = int((~kept).sum())
            if dropped:
                log.warning("%d rows without any known target value are not used (supervised ranking)", dropped)
            results, info = relief_broadcast(spark, data, rp)
            n_used = data.n_rows
        else:
            results, info = relief_tall(spark, block_rdd(prep), task, rp, nominal=nominal, n_values=n_values,
                                        semi_supervised=semi, n_classes=len(classes) if classes else 0,
                                        hierarchy=prep.hierarchy)
            n_used = None
    finally:
        prep.release()
    timings["relief_s"] = info.pop("relief_s")
    n_used = n_used if n_used is not None else prep.n_rows
    target_names = prep.target_names if task != "hmlc" else []
    if task == "hmlc":
        results.pop("relief/targets", None)
    return (spec.feature_names, prep.usable, results, target_names, info, task, n_used, prep.n_rows)


def _attach_hierarchy(dataset, hierarchy, targets) -> None:
    """Make the single target column of a table an HMLC label column over ``hierarchy``."""
    from .hierarchy import Hierarchy, HierarchyError

    if isinstance(hierarchy, str):
        try:
            hierarchy = Hierarchy.from_clus_spec(hierarchy)
        except HierarchyError as err:
            raise InputError(f"hierarchy: {err}") from None
    if not isinstance(hierarchy, Hierarchy):
        raise InputError("hierarchy must be a spark_fr.hierarchy.Hierarchy or a Clus class specification string")
    names = [t.strip() for t in targets.split(",")] if isinstance(targets, str) else list(targets or [])
    if len(names) != 1:
        raise InputError("with a hierarchy, give exactly one target: the column of '@'-joined labels")
    col = next((c for c in dataset.columns if c.name == names[0]), None)
    if col is None:
        raise InputError(f"target column '{names[0]}' not found in {dataset.source}")
    if col.kind != "nominal" or col.index is not None:
        raise InputError(f"target column '{names[0]}' must be a string column of '@'-joined labels for HMLC")
    col.kind, col.categories = "hierarchical", None
    dataset.hierarchy = hierarchy


def _check_classes(prep, spec, semi: bool) -> None:
    """A classification target needs two classes among the rows used."""
    s = prep.stats.columns[len(spec.features)]
    present = [k for k, c in (s.counts or {}).items() if c > 0]
    if len(present) < 2:
        name = spec.targets[0].name
        only = present[0] if present else "?"
        raise InputError(f"target column '{name}' has a single class '{only}'; classification needs at least two")
