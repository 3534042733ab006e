"""``spark_fr.rank``: the functional API behind the job and the notebooks.

Sketch
------
    params   <- validated options (fail before touching data)
    dataset  <- read (ARFF / CSV / Parquet / Delta / .mat / a DataFrame)          spark_fr.io
    spec     <- targets and features (names checked)                              spark_fr.data.schema
    encoded  <- statistics, bins, encoded blocks on the driver                     spark_fr.data.encode
    task     <- fitted on the targets (training variances, classes)               spark_fr.tasks
    scores   <- trees grown and scored on Spark (broadcast mode)                   spark_fr.ensemble.spark
    ranking  <- long table + run metadata                                          spark_fr.ranking
"""
from __future__ import annotations

import logging
import platform
import time
from datetime import datetime, timezone

import numpy as np

from .data.encode import encode
from .data.schema import resolve
from .ensemble.params import EnsembleParams, ParamError
from .errors import InputError
from .io.readers import read_dataset
from .ranking import Ranking
from .tasks import TaskError, fit_task

log = logging.getLogger(__name__)

METHODS = ("ensemble", "relief", "reliefe")
TASKS = ("auto", "classification", "regression", "mtr", "mlc", "hmlc", "unsupervised")


def versions() -> dict:
    """Versions of spark_fr and of what it runs on (for run metadata)."""
    import numba
    import pyarrow
    import pyspark

    from . import __version__

    return {"spark_fr": __version__, "pyspark": pyspark.__version__, "numpy": np.__version__,
            "numba": numba.__version__, "pyarrow": pyarrow.__version__, "python": platform.python_version()}


def _ensemble_params(opts: dict) -> EnsembleParams:
    keys = ("ensemble", "trees", "scores", "max_features", "min_samples_leaf", "max_depth", "bootstrap",
            "symbolic_weight", "per_target", "seed", "resample_constant_features")
    opts = dict(opts)
    if "resample_constant_features" in opts:
        opts["resample_constant"] = opts.pop("resample_constant_features")
    keys = tuple("resample_constant" if k == "resample_constant_features" else k for k in keys)
    kwargs = {k: opts[k] for k in keys if opts.get(k) is not None}
    try:
        return EnsembleParams(**kwargs)
    except ParamError as err:
        raise InputError(str(err)) from None


def rank(data, targets=None, task: str = "auto", method: str = "ensemble", *, spark=None, **params) -> Ranking:
    """Rank the features of a table for predicting its targets.

    Parameters
    ----------
    data : str or pyspark.sql.DataFrame
        A path (ARFF, CSV, Parquet, Delta directory, ``.mat``) or a Spark DataFrame.
    targets : str or list of str, optional
        Target columns (comma-separated string or list). Default: the labels of ``labels_xml``, else the
        last attribute of an ARFF file.
    task : str
        'auto' (inferred from the targets), 'classification', 'regression', 'mtr' or 'mlc'.
    method : str
        'ensemble' (PCT ensembles: Symbolic, Genie3, RF scores).
    spark : SparkSession, optional
        Default: the active session, or a local one.
    **params
        The options of ``jobs/rank.py`` with underscores: ``format``, ``labels_xml``, ``features_col``,
        ``ensemble`` ('rf', 'bagging', 'extra_trees'), ``trees``, ``scores``, ``per_target``, ``seed``,
        ``max_features``, ``min_samples_leaf``, ``max_depth``, ``bootstrap``, ``symbolic_weight``,
        ``resample_constant_features``, ``semi_supervised``.

    Returns
    -------
    Ranking

    Raises
    ------
    spark_fr.errors.InputError
        Bad input or parameters (one-line message naming the file, column, row or option).
    """
    t_start = time.perf_counter()
    unknown = set(params) - {"format", "labels_xml", "features_col", "ensemble", "trees", "scores",
                             "per_target", "seed", "max_features", "min_samples_leaf", "max_depth",
                             "bootstrap", "symbolic_weight", "semi_supervised", "relief_neighbours",
                             "relief_iterations", "title", "resample_constant_features"}
    if unknown:
        raise InputError(f"unknown parameter(s): {', '.join(sorted(unknown))}")
    if method not in METHODS:
        raise InputError(f"--method must be one of {', '.join(METHODS)}, not '{method}'")
    if task not in TASKS:
        raise InputError(f"--task must be one of {', '.join(TASKS)}, not '{task}'")
    if method != "ensemble":
        raise InputError(f"--method {method} is not available in this version; use --method ensemble")
    if task in ("hmlc", "unsupervised") or params.get("semi_supervised"):
        what = "--semi-supervised" if params.get("semi_supervised") else f"--task {task}"
        raise InputError(f"{what} is not available in this version; supported tasks: classification, "
                         f"regression, mtr, mlc")
    ens = _ensemble_params(params)
    scores = ens.effective_scores()
    if "rf" in ens.scores and "rf" not in scores:
        log.warning("the RF score needs out-of-bag rows, and %s without bootstrapping has none: it is "
                    "skipped (add --bootstrap to compute it)", ens.ensemble)
    if not scores:
        raise InputError("no score left to compute: the RF score needs bootstrapping (--bootstrap)")

    if spark is None:
        from .session import get_spark

        spark = get_spark()
    timings = {}
    t0 = time.perf_counter()
    dataset = read_dataset(spark, data, format=params.get("format") or "auto", labels_xml=params.get("labels_xml"),
                           targets=targets, features_col=params.get("features_col"))
    spec = resolve(dataset, targets, task, bool(params.get("semi_supervised")))
    timings["read_s"] = time.perf_counter() - t0
    log.info("input %s: %d features, target(s) %s", dataset.source, len(spec.features),
             ", ".join(spec.target_names))
    encoded = encode(dataset, spec)
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

    from .ensemble.spark import rank_trees_on_spark
    from .ensemble.trees import TreeData

    lower, upper, _ = encoded.bin_arrays()
    Yl = Y[labelled]
    tree_data = TreeData(np.ascontiguousarray(encoded.codes[:, labelled]), encoded.nominal, lower, upper,
                         np.ascontiguousarray(fitted.clustering_matrix(Yl)), Yl, fitted.prototype_columns(Yl),
                         encoded.row_keys[labelled], fitted)
    results, info = rank_trees_on_spark(spark, tree_data, ens)
    timings["trees_s"] = info["trees_s"]
    timings["total_s"] = time.perf_counter() - t_start

    run_params = {"input": dataset.source if isinstance(data, str) else "DataFrame", "task": encoded.task,
                  "method": method, "targets": encoded.target_names, **ens.to_dict(),
                  "features_per_node": ens.features_per_node(encoded.n_features)}
    for key in ("format", "labels_xml", "features_col"):
        if params.get(key):
            run_params[key] = params[key]
    metadata = {"input": run_params["input"], "title": params.get("title"), "n_rows": int(labelled.sum()),
                "n_rows_read": encoded.n_rows, "n_features": encoded.n_features,
                "unusable_features": [n for n, u in zip(encoded.feature_names, encoded.usable) if not u],
                "timings": timings, "encoded_on": encoded.encoded_on, "tree_groups": info["tree_groups"], "versions": versions(),
                "spark_master": spark.sparkContext.master,
                "created_at": datetime.now(timezone.utc)}
    return Ranking.from_scores(encoded.feature_names, encoded.usable, results, encoded.target_names, run_params,
                               metadata)
