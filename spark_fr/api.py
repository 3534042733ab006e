"""``spark_fr.rank``: the functional API behind the job, the Estimator and the notebooks.

Sketch
------
    options  <- the keywords checked against the option table (fail before touching data)    spark_fr.options
    session  <- the given one, the active one, or one that starts when first needed       :func:`lazy_session`
    dataset  <- read (ARFF / CSV / Parquet / Delta / .mat / a Spark or pandas DataFrame)      spark_fr.io
    spec     <- targets and features (names checked)                                           spark_fr.data.schema
    run      <- the method: ensemble (spark_fr.ensemble.run), relief (spark_fr.relief.run), reliefe
                (spark_fr.relief.run) or boosting
                (spark_fr.ensemble.boosting)
    ranking  <- long table + run metadata                                                       spark_fr.ranking
    check    <- a ranking whose importances are all 0 says so: one warning line, and ``informative`` /
                ``warnings`` in the metadata (run.json)                                       :func:`note_information`
"""
from __future__ import annotations

import importlib
import logging
import platform
import time
import uuid
from datetime import datetime, timezone

import numpy as np

from . import options as O
from . import tasks
from .runtime import warmups
from .runtime.logs import show_logs_by_default
from .runtime.engine import is_connect, session_kind, session_of
from .runtime.session import master_of, when_ready
from .data.schema import Dataset, resolve
from .ensemble.params import BoostingParams, EnsembleParams
from .errors import InputError
from .io.frames import is_pandas_frame
from .io.readers import read_dataset
from .ranking import ALL_TARGETS, Ranking
from .relief.params import ReliefEParams, ReliefParams
from .results import informative
from .tasks import TaskError

log = logging.getLogger(__name__)

#: the ranking methods: their parameter objects, their run (module, function), and whether they take unlabelled
#: rows (their numba warm-ups are registered by their packages: spark_fr.runtime.warmups)
METHODS = {"ensemble": {"params": EnsembleParams, "run": ("ensemble.run", "rank_ensemble"), "semi_supervised": True},
           "relief": {"params": ReliefParams, "run": ("relief.run", "rank_relief"), "semi_supervised": True},
           "reliefe": {"params": ReliefEParams, "run": ("relief.run", "rank_reliefe"), "semi_supervised": False},
           "boosting": {"params": BoostingParams, "run": ("ensemble.boosting", "rank_boosting"),
                        "semi_supervised": False}}


def pyspark_version() -> str:
    """pyspark's version: of the imported module, else of the installed distribution (a run on files never
    imports pyspark, a tenth of a second), else of the module imported here (a runtime's own pyspark)."""
    import sys
    from importlib import metadata

    if "pyspark" not in sys.modules:
        for dist in ("pyspark", "pyspark-client"):
            try:
                return metadata.version(dist)
            except metadata.PackageNotFoundError:
                pass
    import pyspark

    return pyspark.__version__


def versions() -> dict:
    """Versions of spark_fr and of what it runs on (for run metadata)."""
    import numba
    import pyarrow

    from .version import __version__

    return {"spark_fr": __version__, "pyspark": pyspark_version(), "numpy": np.__version__,
            "numba": numba.__version__, "pyarrow": pyarrow.__version__, "python": platform.python_version()}


def warm_up(method: str, opts: dict | None = None) -> None:
    """Compile (or load from numba's cache) the kernels a run of ``method`` with the options ``opts`` needs, in this
    process: the warm-up its package registered (:mod:`spark_fr.runtime.warmups`), once per process."""
    warmups.warm_for(method if method in METHODS else "ensemble", opts or {})


def warm_up_all(methods) -> None:
    """Compile (or load) every kernel runs of ``methods`` may use: each warm-up they use
    (:func:`~spark_fr.runtime.warmups.of_methods`) with every value of the run options it takes. What a shipped cache
    holds (``jobs/package.py``) and what the test suite compiles before its workers start."""
    import itertools

    methods = list(methods)
    for method in methods:
        warm_up(method)  # imports the method's package, which registers its warm-ups
    for name in warmups.of_methods(methods):
        entry = warmups.registered()[name]
        # every word of a one-word option (--missing); a list of names (--scores) takes the warm-up's default: all
        words = [o for o in entry.options if isinstance(O.option(o).kind, O.Choice)]
        for values in itertools.product(*(O.option(o).kind.choices for o in words)):
            warmups.warm(name, **dict(zip(words, values)))


def _check_data(data, table=None) -> None:
    if table is not None:
        if data is not None:
            raise InputError("give data (a path or a DataFrame) or input_table (a catalog table), not both")
        return
    if data is None:
        raise InputError("no input: give data (a path, a list of paths or a Spark DataFrame) or input_table")
    if isinstance(data, str) or (isinstance(data, (list, tuple)) and data and all(isinstance(p, str) for p in data)):
        return
    if type(data).__name__ == "DataFrame" and hasattr(data, "sparkSession"):
        return
    if isinstance(data, Dataset) or is_pandas_frame(data):  # an input already read (spark_fr.evaluation hands over
        return  # its training parts), or a pandas frame (read on the driver: spark_fr.io.frames)
    shown = repr(data).splitlines()[0][:60] if not hasattr(data, "shape") else f"of shape {data.shape}"
    raise InputError(f"data must be a path, a list of paths, a Spark DataFrame or a pandas DataFrame, not "
                     f"{type(data).__name__} {shown}")


def check_options(opts: dict, method: str, given: set) -> object:
    """The method's parameter object, after the checks that need no data (one-line errors).

    Options given for another method are named in a warning. Returns the parameter object.
    """
    ignored = sorted(n for n in given if O.option(n).methods and method not in O.option(n).methods)
    if ignored:
        log.warning("%s apply to other methods than --method %s; ignored",
                    ", ".join(O.option(n).flag for n in ignored), method)
    task = opts.get("task", "auto")
    semi = bool(opts.get("semi_supervised"))
    try:
        if task != "auto":
            tasks.require_method(tasks.get(task), method)
    except TaskError as err:
        raise InputError(str(err)) from None
    if semi and not METHODS[method]["semi_supervised"]:
        supported = ", ".join(f"--method {m}" for m, d in METHODS.items() if d["semi_supervised"])
        raise InputError(f"--semi-supervised is available with {supported} in this version")
    if semi and task != "auto" and not tasks.get(task).supervised:
        raise InputError(f"--semi-supervised needs targets; --task {task} has none")
    if "ssl_weight" in given and not semi:
        raise InputError("--ssl-weight applies to semi-supervised ranking: add --semi-supervised")
    if opts.get("per_target") and task != "auto" and not tasks.get(task).supervised:
        raise InputError(f"--per-target needs targets; --task {task} has none")
    params = METHODS[method]["params"].from_options(opts)
    if task != "auto" and hasattr(params, "for_task"):
        params.for_task(tasks.get(task))  # checked with the task's defaults (unsupervised: extra trees bootstrap)
    else:
        params.check()
    return params


def rank(data=None, targets=None, task: str = "auto", method: str = "ensemble", *, spark=None,
         **params) -> Ranking:
    """Rank the features of a table for predicting its targets.

    Parameters
    ----------
    data : str, list of str, pyspark.sql.DataFrame or pandas.DataFrame
        A path (ARFF, CSV, Parquet, Delta directory, ``.mat``), several paths of one format, a Spark
        DataFrame, or a pandas DataFrame (read on the driver: :mod:`spark_fr.io.frames`); or None with ``input_table='db.table'`` (a catalog table); or a
        :class:`spark_fr.data.schema.Dataset` already read (e.g. a training part of :mod:`spark_fr.evaluation`).
        Delta inputs take ``version_as_of`` or ``timestamp_as_of`` (time travel; the old names ``version`` and
        ``timestamp`` still work with a FutureWarning until spark_fr 0.3) and ``where`` (a row filter);
        ``exclude`` leaves columns out.
    targets : str or list of str, optional
        Target columns (comma-separated string or list). Default: the labels of ``labels_xml``, else the
        hierarchical class attribute or the last attribute of an ARFF file.
    task : str
        'auto' (inferred from the targets) or a target type: 'classification', 'regression', 'mtr',
        'mlc', 'hmlc', 'unsupervised' (:mod:`spark_fr.tasks`).
    method : str
        'ensemble' (PCT ensembles: Symbolic, Genie3, RF scores), 'relief' (the Relief family), 'reliefe'
        (ReliefE: Relief with neighbours in a learned embedding; classification and MLC) or 'boosting'
        (gradient-boosted PCTs, classification and regression: Symbolic and Genie3 summed over the trees, the
        importance after every tree in the metadata's ``boosting.curve``).
    spark : SparkSession, optional
        Default: the active session, else a local one (or ``SPARK_REMOTE``'s) started only if the run needs Spark
        (:func:`lazy_session`: small local work starts no JVM).
    **params
        The options of ``jobs/rank.py`` with underscores (:mod:`spark_fr.options` lists them: ``seed``,
        ``per_target``, ``trees``, ``relief_neighbours``, ...), and ``hierarchy`` (HMLC from a table: a
        :class:`spark_fr.hierarchy.Hierarchy` or a Clus class specification such as ``'01,01/02,02'`` or
        ``'root/a,a/b'``; the single target is then a string column of ``@``-joined labels).

    Returns
    -------
    Ranking

    Raises
    ------
    spark_fr.errors.InputError
        Bad input or parameters (one-line message naming the file, column, row or option).
    """
    return run_ranking(data, targets, task, method, spark=spark, params=params)


def run_ranking(data, targets=None, task: str = "auto", method: str = "ensemble", *, spark=None,
                params: dict | None = None, feature_relations=None, build=None, origin=None) -> Ranking:
    """:func:`rank` with the hooks of a relational run (:func:`spark_fr.relational.rank.rank_relational`).

    Parameters
    ----------
    data, targets, task, method, spark
        As :func:`rank`.
    params : dict
        :func:`rank`'s keywords.
    feature_relations : FeatureRelations, optional
        The relations of the input's features (tree methods add relation-level scores).
    build : callable, optional
        ``build(feature_names, usable, results, target_names, params, metadata) -> Ranking`` (default
        :meth:`Ranking.from_scores`).
    origin : object, optional
        Where a generated input's columns come from, for messages about them: ``no_rows()`` and
        ``infinite(column, value)`` give the one-line error (:mod:`spark_fr.data.validate`).
    """
    params = dict(params or {})
    t_start = time.perf_counter()
    show_logs_by_default()  # a notebook or a plain session that configured no logging sees the progress
    _check_data(data, params.get("input_table"))
    opts = O.check_keywords({"targets": targets, "task": task, "method": method, **params})
    given = set(opts) - {"targets", "task", "method"}  # the keywords given (their new names: O.RENAMED)
    method = opts.get("method", "ensemble")
    method_params = check_options(opts, method, given)
    semi = bool(opts.get("semi_supervised"))

    if spark is None:
        spark = lazy_session()
    elif not any(hasattr(type(spark), a) for a in ("when_ready", "sparkContext", "createDataFrame")):  # the type:
        # an instance's attribute would wait for a session still starting
        raise InputError(f"spark must be a SparkSession, not {type(spark).__name__} {spark!r:.40}")
    timings = {}
    job_group = f"spark_fr-{uuid.uuid4().hex}"
    when_ready(spark, lambda s: _tag_jobs(s, job_group))
    interrupted = False
    try:
        run, dataset, spec = _run(spark, data, opts, method, method_params, semi, timings, feature_relations,
                                  origin)
    except BaseException as err:
        # Ctrl-C or SIGTERM may have cut a Py4J call short, leaving its answer unread on this thread's
        # connection: no more calls on it (the next one would read that answer)
        interrupted = not isinstance(err, Exception)
        raise
    finally:
        n_jobs = 0
        if getattr(spark, "ready", True) and not interrupted:  # a session still starting ran no job
            n_jobs = _untag_jobs(session_of(spark), job_group)
    timings["total_s"] = time.perf_counter() - t_start
    run.info.setdefault("session", session_kind(spark))
    return _report(data, params, opts, method, method_params, semi, timings, run, dataset, spec, spark, n_jobs,
                   build or Ranking.from_scores)


def lazy_session():
    """The session of a run given none: the active one, else a local one (or ``SPARK_REMOTE``'s) that starts only
    when the run first needs Spark, as ``jobs/rank.py``'s does (:func:`spark_fr.runner.session`).

    Decision: a run needs Spark, and so starts a JVM, when its input is read by Spark (Delta, catalog tables,
    ``.mat``, URIs, Parquet with partition directories, CSV that the driver cannot read exactly as Spark does:
    :mod:`spark_fr.io.csv_driver`) or is larger than the driver's passes take (``prepare``'s ``local_limit``,
    512 MB), or when its trees or Relief shards are estimated at more than the driver does in the time a JVM
    takes to start (:data:`spark_fr.runtime.spark.SESSION_START_SECONDS`, 10 s on the driver's threads;
    ``SPARK_FR_DRIVER_MAX_SECONDS`` scales it, 0 always uses Spark). A local ARFF file, local CSV and Parquet
    files and a pandas DataFrame of a few MB then rank in the driver, with no JVM.
    """
    from pyspark.sql import SparkSession

    from .runtime.session import SessionStart

    return SparkSession.getActiveSession() or SessionStart(lazy=True, app_name="spark_fr rank")


def _tag_jobs(spark, tag: str) -> None:
    """Mark the run's Spark work: a job group (classic: counted at the end, cancellable with
    ``sc.cancelJobGroup``) or an operation tag (Spark Connect: cancellable with ``spark.interruptTag``)."""
    if is_connect(spark):
        spark.addTag(tag)
    else:
        spark.sparkContext.setJobGroup(tag, "spark_fr rank")


def _untag_jobs(spark, tag: str):
    """Undo :func:`_tag_jobs`; the number of Spark jobs the run started (None under Spark Connect, which
    reports no job ids)."""
    if is_connect(spark):
        spark.removeTag(tag)
        return None
    sc = spark.sparkContext
    n_jobs = len(sc.statusTracker().getJobIdsForGroup(tag))
    sc.setLocalProperty("spark.jobGroup.id", None)
    return n_jobs


def _run(spark, data, opts: dict, method: str, method_params, semi: bool, timings: dict,
         feature_relations=None, origin=None) -> tuple:
    """Read, resolve and run the method: (MethodRun, dataset, spec); timings are added to ``timings``."""
    t0 = time.perf_counter()
    dataset = data if isinstance(data, Dataset) else read_dataset(
        spark, data, format=opts.get("format", "auto"), labels_xml=opts.get("labels_xml"),
        targets=opts.get("targets"), features_col=opts.get("features_col"), table=opts.get("input_table"),
        version=opts.get("version_as_of"), timestamp=opts.get("timestamp_as_of"), where=opts.get("where"),
        exclude=opts.get("exclude"), duplicate_names=opts.get("duplicate_names", "error"))
    if opts.get("hierarchy") is not None:
        _attach_hierarchy(dataset, opts["hierarchy"], opts.get("targets"))
    dataset.feature_relations = feature_relations
    if origin is not None:
        dataset.extra["origin"] = origin
    spec = resolve(dataset, opts.get("targets"), opts.get("task", "auto"), semi)
    timings["read_s"] = time.perf_counter() - t0
    log.info("input %s: %d features, target(s) %s", dataset.source, len(spec.features),
             ", ".join(spec.target_names) or "none (unsupervised)")
    module, function = METHODS[method]["run"]
    run = getattr(importlib.import_module(f"{__package__}.{module}"), function)(spark, dataset, spec, method_params,
                                                                                 semi)
    timings.update(run.timings)
    return run, dataset, spec


def _report(data, params, opts, method, method_params, semi, timings, run, dataset, spec, spark, n_jobs,
            build) -> Ranking:
    """The Ranking of a run, with its parameters and metadata (timings, Spark jobs, versions)."""
    from_source = isinstance(data, (str, list, tuple, Dataset)) or opts.get("input_table") is not None
    run_params = {"input": dataset.source if from_source else "DataFrame", "task": run.task,
                  "method": method, "targets": list(spec.target_names), "semi_supervised": semi,
                  **method_params.to_dict(), **run.params}
    for key in ("format", "labels_xml", "features_col", "input_table", "version_as_of", "timestamp_as_of", "where",
                "exclude", "duplicate_names", "run_id"):
        if opts.get(key) is not None and (key not in ("format", "duplicate_names") or params.get(key)):
            run_params[key] = opts[key]
    names = run.feature_names
    information = informative(run.results, run.usable, run.target_names, ALL_TARGETS)
    warnings = uninformative_warning(information, run, method_params)
    if warnings:
        log.warning("%s", warnings[0])
    metadata = {"input": run_params["input"], "title": opts.get("title"), "n_rows": run.n_rows,
                "n_rows_read": run.n_rows_read, "n_features": len(names),
                "unusable_features": [n for n, u in zip(names, run.usable) if not u], "timings": timings,
                "spark_jobs": n_jobs, **run.info, "informative": information, "warnings": warnings,
                "versions": versions(), "spark_master": master_of(spark),
                "input_fingerprint": dataset.extra.get("fingerprint") or {},
                "created_at": datetime.now(timezone.utc)}
    if opts.get("run_id"):
        metadata["run_id"] = opts["run_id"]
    if dataset.extra.get("renamed"):  # --duplicate-names rename: {new name: the name the input gives}
        metadata["renamed_columns"] = {r.new_name: r.name for r in dataset.extra["renamed"]}
    if dataset.extra.get("label_attributes"):  # targets read as classes by their Spark ML attribute (data.schema)
        metadata["label_attributes"] = dataset.extra["label_attributes"]
    return build(names, run.usable, run.results, run.target_names, run_params, metadata)


#: why a score can be 0 for every feature when the features themselves could be used (a tree method's trees
#: never split, or split without changing what the score measures; Relief's neighbours never differ)
ZERO_BECAUSE = {"symbolic": "no tree split on any feature",
                "genie3": "no tree's split reduced the impurity",
                "rf": "permuting a feature never changed the trees' out-of-bag error",
                "relief": "no feature ever differed between a sampled row and its neighbours",
                "reliefe": "no feature ever differed between a sampled row and its neighbours"}


def _zero_reason(score: str, run, params) -> str:
    """Why every importance of ``score`` is 0, as far as the run can tell."""
    n = run.n_rows
    if not np.asarray(run.usable, bool).any():
        return f"every feature is constant or missing on the {n} rows used"
    leaf = getattr(params, "min_samples_leaf", None)
    if leaf is not None and score != "relief":
        if getattr(params, "max_depth", None) == 0:
            return "--max-depth 0 makes every tree a single leaf"
        need = 2 * int(np.ceil(leaf))
        if n < need:
            return f"the {n} rows used are fewer than a split needs, {need} (--min-samples-leaf {leaf:g} on each side)"
    return ZERO_BECAUSE.get(score, "every importance is 0")


def uninformative_warning(information: dict, run, params) -> list:
    """The run's warnings about rankings without information (``[]`` or one line; module sketch).

    Decision: a ranking (score and target) whose importances are all 0 carries no information, its order is the
    file order; this is legitimate (every feature constant; trees that never split on this data) but must not
    pass for a ranking. The line names the rankings and, as far as the run can tell, why (all features
    constant or missing, fewer rows than a split needs, ``--max-depth 0``, else what the score's zero means).
    ``metadata['informative']`` is ``{score: {target: bool}}`` for every ranking, ``metadata['warnings']`` the
    list of such lines (empty when every ranking carries information).
    """
    zero = [(s, t) for s, by_target in information.items() for t, ok in by_target.items() if not ok]
    if not zero:
        return []
    groups: dict = {}
    for s, t in zero:
        name = s if t == ALL_TARGETS else f"{s} for target {t}"
        groups.setdefault(_zero_reason(s, run, params), []).append(name)
    reasons = "; ".join(f"{', '.join(names)}: {why}" if len(groups) > 1 else why for why, names in groups.items())
    if len(zero) == sum(len(b) for b in information.values()):
        what = "the ranking carries no information: every importance of every score is 0"
    else:
        names = [n for ns in groups.values() for n in ns]
        what = f"no information in the {', '.join(names)} ranking{'s' if len(names) > 1 else ''}: every importance is 0"
    return [f"{what} ({reasons}); features are listed in file order"]


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
    names = list(targets or [])
    if len(names) != 1:
        raise InputError("with a hierarchy, give exactly one target: the column of '@'-joined labels")
    col = next((c for c in dataset.columns if c.name == names[0]), None)
    if col is None:
        raise InputError(f"target column '{names[0]}' not found in {dataset.source}")
    if col.kind != "nominal" or col.index is not None:
        raise InputError(f"target column '{names[0]}' must be a string column of '@'-joined labels for HMLC")
    col.kind, col.categories = "hierarchical", None
    dataset.hierarchy = hierarchy
