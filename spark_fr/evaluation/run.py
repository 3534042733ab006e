"""``spark_fr.evaluation.evaluate`` and ``evaluate_suite``: the Python API of ``jobs/evaluate.py``.

Sketch
------
    checks     <- rankings, protocol words, the extra rank() keywords: one-line errors before any data is read
    data       <- read, checked, encoded once (spark_fr.evaluation.data)
    evaluation <- the protocol on every split (spark_fr.evaluation.protocol)
    suite      <- every shared dataset of a kind, one evaluation each, combined: the comparison over datasets
"""
from __future__ import annotations

import logging

from ..errors import InputError
from . import configs as C
from .protocol import PROTOCOLS, check_rank_params, evaluate_data

log = logging.getLogger(__name__)

#: keywords of evaluate() that go to the reader
READ_KEYWORDS = ("format", "labels_xml", "exclude", "features_col")


def evaluate(data, targets=None, task: str = "auto", *, test=None, test_holds_training: bool = False,
             rankings=None, protocol: str = "auto",
             splits: int | None = None, neighbours: int | None = None, labelled=None, top_features: int = 16,
             curves: bool = False, curve_learner: str = "auto", curve_features=None, similarity: bool = True,
             seed: int = 0, spark=None,
             knn_mode: str = "auto", name: str | None = None, **params):
    """Is a ranking worth reading? Judge rankings of ``data`` by the thesis's protocols.

    Parameters
    ----------
    data : str, list of str or pyspark.sql.DataFrame
        The input, as :func:`spark_fr.rank` takes it (its training part when ``test`` is given).
    targets, task
        As :func:`spark_fr.rank`.
    test : str, list of str or DataFrame, optional
        The test rows of a given split (Mulan's and the HMLC benchmarks' test files).
    test_holds_training : bool
        ``test`` is the whole data, the training rows among its rows: the test part is the rest (each training row
        takes one equal row out; :func:`spark_fr.evaluation.data.read_evaluation_data`).
    rankings : str, list or dict, optional
        Named configurations (``'genie3-rf'``, ``'symbolic-rf'``, ``'rf-bagging'``, ``'relief'``, ``'all'``, ...:
        :mod:`spark_fr.evaluation.configs`) or ``{name: rank() keywords}``. Default: genie3-rf, symbolic-rf,
        rf-bagging, relief. The uniform baseline (and, unsupervised, a random ranking) is always added.
    protocol : str
        'auto', 'splits', 'train-test', 'cv', 'ssl' or 'unsupervised' (:mod:`spark_fr.evaluation.protocol`).
    splits : int, optional
        Random splits, or cross-validation folds (default 10).
    neighbours : int, optional
        k of the kNN (default per task: 5 MTR and regression, 15 MLC, 10 HMLC, 20 classification, 40 SSL, 1
        unsupervised).
    labelled : int or list of int, optional
        The semi-supervised protocol: L labelled training rows (each value a run of its own).
    top_features : int
        The unsupervised protocol's 1NN uses the top this many features.
    curves : bool
        Also compute the top-f curves and their areas (:mod:`spark_fr.evaluation.curves`).
    curve_learner : str
        'auto', 'knn' or 'sklearn'.
    curve_features : list of int, optional
        The curves' feature counts (default 1, 2, 4, ..., D); those above D are left out, D is always added.
    similarity : bool
        The area under the Fuzzy Jaccard curve of every pair of rankings, per split.
    seed : int
    spark : SparkSession, optional
        Default: the active session, or a local one.
    knn_mode : str
        Where the neighbour searches run: 'auto' (the driver for small work, else Spark tasks), 'driver', 'spark'.
    name : str, optional
        The dataset's name in the tables.
    **params
        Reader options (``format``, ``labels_xml``, ``exclude``, ``features_col``) and any option of
        :func:`spark_fr.rank` that the rankings do not set (``trees``, ``max_features``, ``hmlc_impurity``,
        ``relief_neighbours``, ...), passed to every ranking it applies to.

    Returns
    -------
    spark_fr.evaluation.results.Evaluation
    """
    from .data import read_evaluation_data

    read = {k: params.pop(k) for k in READ_KEYWORDS if k in params and params[k] is not None}
    _check(rankings, protocol, params, knn_mode)
    if spark is None:
        from ..runtime.session import get_spark

        spark = get_spark()
    data_ = read_evaluation_data(spark, data, test, targets=targets, task=task, name=name,
                                 test_holds_training=test_holds_training, **read)
    return evaluate_data(data_, rankings=rankings, protocol=protocol, splits=splits, neighbours=neighbours,
                         labelled=labelled, top_features=top_features, curves=curves, curve_learner=curve_learner,
                         curve_features=curve_features,
                         similarity=similarity, seed=seed, spark=spark, knn_mode=knn_mode, rank_params=params)


def _check(rankings, protocol, params, knn_mode) -> None:
    C.resolve_rankings(rankings)
    if protocol not in PROTOCOLS:
        raise InputError(f"--protocol must be one of {', '.join(PROTOCOLS)}, not '{protocol}'")
    if knn_mode not in ("auto", "driver", "spark"):
        raise InputError(f"--knn-mode must be auto, driver or spark, not '{knn_mode}'")
    check_rank_params(params)


def evaluate_suite(kind: str, *, folder: str | None = None, spark=None, **kwargs):
    """:func:`evaluate` on every shared dataset of a kind (:mod:`spark_fr.evaluation.suite`), combined: the
    comparison over datasets (Friedman, Nemenyi, Wilcoxon + BH) and its critical-difference diagram.

    Parameters
    ----------
    kind : {'mtr', 'mlc', 'hmlc', 'classification'}
        With ``task='unsupervised'``: the sets of the kind without their targets (the unsupervised protocol).
    folder : str, optional
        The shared datasets folder (default: found from the working directory, or ``SPARK_FR_DATA``).
    **kwargs
        :func:`evaluate`'s keywords (not the input's: the suite names them). The named ensemble rankings take the
        suite's protocol settings (:data:`spark_fr.evaluation.suite.ENSEMBLE_OPTIONS`) unless these keywords set
        the same options.
    """
    from .results import Evaluation
    from .suite import ENSEMBLE_OPTIONS, suite_entries

    for k in ("data", "test", "targets", "labels_xml", "name"):
        if kwargs.get(k) is not None:
            raise InputError(f"--suite names its datasets and their targets; leave out --{k.replace('_', '-')}")
    entries = suite_entries(kind, folder)
    params = {k: v for k, v in kwargs.items() if v is not None}
    _check(params.get("rankings"), params.get("protocol", "auto"),
           {k: v for k, v in params.items() if k not in _EVALUATE_KEYWORDS}, params.get("knn_mode", "auto"))
    if kind in ENSEMBLE_OPTIONS:
        given = {k for k in params if k not in _EVALUATE_KEYWORDS}
        params["rankings"] = C.with_ensemble_options(C.resolve_rankings(params.get("rankings")),
                                                     ENSEMBLE_OPTIONS[kind], given)
    if spark is None:
        from ..runtime.session import get_spark

        spark = get_spark()
    from .. import tasks

    unsupervised = params.get("task") not in (None, "auto") and not tasks.get(params["task"]).supervised
    out = []
    for i, (name, path, test, kw) in enumerate(entries):
        log.info("suite %s: dataset %d of %d, %s", kind, i + 1, len(entries), name)
        if unsupervised:  # the sets without their targets (the unsupervised protocol): the suite's task is not theirs
            kw = {k: v for k, v in kw.items() if k not in ("task", "targets")}
        out.append(evaluate(path, test=test, name=name, spark=spark, **{**params, **kw}))
    return Evaluation.combine(out)


_EVALUATE_KEYWORDS = ("rankings", "protocol", "splits", "neighbours", "labelled", "top_features", "curves",
                      "curve_learner", "curve_features", "similarity", "seed", "knn_mode", "task", "format", "exclude",
                      "features_col")
