"""``spark_fr.sklearn.FeatureRanker``: spark_fr's rankings as a scikit-learn feature selector.

Sketch
------
    fit(X, y)   X: a pandas DataFrame, a NumPy array (or anything ``check_array`` takes; SciPy sparse matrices are
                made dense), or a Spark DataFrame (y: the names of its target columns)
        task    <- ``task``, or y's kind as scikit-learn names it (``type_of_target``): binary / multiclass ->
                   classification, continuous -> regression, continuous-multioutput -> mtr,
                   multilabel-indicator -> mlc; no y -> unsupervised                       :func:`task_of_target`
        frame   <- X's columns (a NumPy array's named x0, x1, ... as scikit-learn names them) and y's
        ranking <- :func:`spark_fr.rank` on the frame: read and ranked in the driver, with no JVM, when the work
                   is small (:func:`spark_fr.api.lazy_session` states the rule); a Spark DataFrame in its own session
    feature_importances_ <- the joint ranking's importances (``ranking_score``, target ``__all__``) in X's column order
    get_support()        <- importance >= ``threshold`` ('mean', 'median', '1.25*mean', a number; as
                            ``SelectFromModel``), then at most ``n_features_to_select`` in the ranking's order

Decisions
---------
* No selection parameter selects as ``SelectFromModel`` does by default: importance at least the mean.
  ``n_features_to_select`` alone keeps that many (an int) or that fraction of the features (a float in (0, 1]),
  the best of the ranking (its ties: file order); with ``threshold`` too, at most that many above it.
* ``random_state`` is rank()'s ``seed``: an int as it is, None rank()'s default seed (0: fits are repeatable as
  spark_fr's rankings always are), a ``RandomState`` one draw from it.
* Class labels (a binary or multiclass y) are ranked as strings (``str(label)``): 0/1 integers are classes,
  not quantities, as ``type_of_target`` says. A Spark DataFrame keeps its columns' types (rank()'s inference).
* Fitting logs only spark_fr's warnings unless ``verbose``: a grid search fits many times.
* A SciPy sparse X is made dense (up to :data:`DENSE_LIMIT`, 512 MB dense; above, a one-line error pointing to a
  Spark DataFrame with a vector column): cheap for the sizes the driver ranks, and the ranking is the same.
"""
from __future__ import annotations

import logging
from contextlib import contextmanager
from numbers import Integral, Real

import numpy as np
import pandas as pd

try:
    from sklearn.utils.validation import validate_data  # scikit-learn >= 1.6 (its estimator tags too)
except ImportError:  # scikit-learn is not a dependency of spark_fr's core
    raise ImportError("spark_fr.sklearn needs scikit-learn >= 1.6: pip install 'scikit-learn>=1.6'") from None
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, check_random_state

#: scikit-learn's kinds of target (``type_of_target``) and the spark_fr task each is ranked as
TASK_OF_TARGET = {"binary": "classification", "multiclass": "classification", "continuous": "regression",
                  "continuous-multioutput": "mtr", "multilabel-indicator": "mlc"}
#: the kinds of target whose values are class labels (ranked as strings: module decisions)
CLASS_LABELS = ("binary", "multiclass")
#: a SciPy sparse X is made dense up to this many bytes (prepare's local_limit: what the driver's passes take)
DENSE_LIMIT = 512 * 2 ** 20
#: the target columns' names in the frame handed to rank() (X's names are never taken: a suffix is added)
TARGET_NAME = "__target__"


def task_of_target(y) -> str:
    """The spark_fr task of a target array, from scikit-learn's ``type_of_target`` (module sketch).

    Raises
    ------
    ValueError
        A kind of target spark_fr does not rank (multi-target classes, unknown).
    """
    kind = type_of_target(y, input_name="y", raise_unknown=True)
    if kind not in TASK_OF_TARGET:
        raise ValueError(f"y is {kind} (scikit-learn's type_of_target); spark_fr ranks binary, multiclass, "
                         f"continuous, continuous-multioutput and multilabel-indicator targets")
    return TASK_OF_TARGET[kind]


def parse_threshold(threshold, importances: np.ndarray) -> float:
    """A ``SelectFromModel`` threshold as a number: 'mean', 'median', 'k*mean', 'k*median' or a number."""
    if isinstance(threshold, str):
        scale, _, reference = threshold.rpartition("*")
        references = {"mean": np.mean, "median": np.median}
        if reference.strip() not in references:
            raise ValueError(f"threshold must be 'mean', 'median', 'k*mean', 'k*median' or a number, not "
                             f"{threshold!r}")
        try:
            factor = float(scale) if scale.strip() else 1.0
        except ValueError:
            raise ValueError(f"threshold {threshold!r}: {scale.strip()!r} is not a number") from None
        return factor * float(references[reference.strip()](importances))
    if isinstance(threshold, Real) and not isinstance(threshold, bool):
        return float(threshold)
    raise ValueError(f"threshold must be 'mean', 'median', 'k*mean', 'k*median' or a number, not {threshold!r}")


def top_count(n, n_features: int) -> int:
    """``n_features_to_select`` as a count: an int >= 1 (at most the features), or a fraction in (0, 1]."""
    if isinstance(n, Integral) and not isinstance(n, bool) and n >= 1:
        return min(int(n), n_features)
    if isinstance(n, Real) and not isinstance(n, (bool, Integral)) and 0 < n <= 1:
        return max(1, int(n * n_features))
    raise ValueError(f"n_features_to_select must be an int >= 1 or a fraction in (0, 1], not {n!r}")


@contextmanager
def _quiet(verbose: bool):
    """spark_fr's log at warnings only while fitting, unless ``verbose``."""
    logger = logging.getLogger("spark_fr")
    level = logger.level
    if not verbose:
        logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


def _is_spark_frame(X) -> bool:
    return type(X).__name__ == "DataFrame" and hasattr(X, "sparkSession")


class FeatureRanker(SelectorMixin, BaseEstimator):
    """Select features by a spark_fr ranking (PCT ensembles, Relief, ReliefE, boosting).

    Parameters
    ----------
    method : {'ensemble', 'relief', 'reliefe', 'boosting'}
        rank()'s ``method``.
    task : str
        'auto' (from y, module sketch) or a spark_fr task ('classification', 'regression', 'mtr', 'mlc',
        'unsupervised', ...).
    ranking_score : str, optional
        The score whose importances are ``feature_importances_`` ('genie3', 'symbolic', 'rf', 'relief', ...);
        default the first of the run's scores (as :meth:`spark_fr.Ranking.top`). Given, only it is computed
        (rank()'s ``scores``) where the method takes a choice.
    trees : int, optional
        Trees of a tree method (rank()'s default when None).
    n_features_to_select : int or float, optional
        Keep at most this many features (a float: a fraction of them), the best of the ranking.
    threshold : str or float, optional
        Keep features whose importance is at least this: 'mean', 'median', '1.25*mean', or a number. Default:
        'mean' when ``n_features_to_select`` is None, else no threshold.
    random_state : int, RandomState or None
        rank()'s ``seed`` (module decisions).
    options : dict, optional
        Other rank() keywords (``min_samples_leaf``, ``relief_neighbours``, ...).
    verbose : bool
        Show spark_fr's progress lines while fitting.

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features_in_,)
        The joint ranking's importances, in X's column order (0 for a column that is no feature, e.g. dates).
    ranking_ : spark_fr.Ranking
        The whole ranking (every score, run metadata).
    task_ : str
        The task ranked.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        X's column names (a DataFrame's).
    """

    def __init__(self, method="ensemble", task="auto", ranking_score=None, trees=None, n_features_to_select=None,
                 threshold=None, random_state=None, options=None, verbose=False):
        self.method = method
        self.task = task
        self.ranking_score = ranking_score
        self.trees = trees
        self.n_features_to_select = n_features_to_select
        self.threshold = threshold
        self.random_state = random_state
        self.options = options
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # missing values are spark_fr's to handle
        tags.input_tags.sparse = True
        tags.target_tags.required = False  # no y: unsupervised ranking
        return tags

    # ----- fit ------------------------------------------------------------------------------------------------
    def fit(self, X, y=None):
        """Rank X's features for predicting y (module sketch).

        Parameters
        ----------
        X : pandas.DataFrame, array-like or sparse matrix of shape (n_samples, n_features), or a Spark DataFrame
        y : array-like of shape (n_samples,) or (n_samples, n_targets), optional
            For a Spark DataFrame: the name(s) of its target column(s).

        Returns
        -------
        self
        """
        self._check_selection()
        if _is_spark_frame(X):
            return self._fit_spark(X, y)
        frame, names, targets, task = self._frame(X, y)
        ranking = self._rank(frame, targets, task)
        return self._keep(ranking, names, task)

    def _check_selection(self) -> None:
        """Bad selection parameters fail before any work (the checks of :meth:`_get_support_mask`)."""
        if self.n_features_to_select is not None:
            top_count(self.n_features_to_select, 1)
        if self.threshold is not None:
            parse_threshold(self.threshold, np.zeros(1))

    def _frame(self, X, y) -> tuple:
        """(a pandas frame of X's and y's columns, X's names, the target columns, the task)."""
        if isinstance(X, pd.DataFrame):
            validate_data(self, X, skip_check_array=True)  # feature_names_in_, n_features_in_
            if X.shape[1] == 0 or X.shape[0] == 0:
                raise ValueError(f"X of shape {X.shape}: no data to rank")
            names = [str(c) for c in X.columns]
            frame = X.set_axis(names, axis=1).reset_index(drop=True)
        else:
            X = validate_data(self, X, accept_sparse=("csr", "csc", "coo"), dtype="numeric",
                              ensure_all_finite="allow-nan", ensure_min_samples=2)
            if hasattr(X, "toarray"):
                dense_bytes = 8 * X.shape[0] * X.shape[1]
                if dense_bytes > DENSE_LIMIT:
                    raise ValueError(f"X is a sparse matrix of shape {X.shape}, {dense_bytes / 2 ** 20:.0f} MB dense; "
                                     f"spark_fr.sklearn makes sparse input dense up to {DENSE_LIMIT >> 20} MB: give "
                                     f"a Spark DataFrame with a vector column (spark_fr.rank, features_col)")
                X = X.toarray()
            names = [f"x{i}" for i in range(X.shape[1])]
            frame = pd.DataFrame(np.asarray(X, dtype=np.float64), columns=names)
        task = self.task
        if y is None:
            return frame, names, [], "unsupervised" if task == "auto" else task
        y = np.asarray(y)
        if y.shape[0] != frame.shape[0]:
            raise ValueError(f"X has {frame.shape[0]} rows, y {y.shape[0]}")
        kind = task_of_target(y)
        task = kind if task == "auto" else task
        Y = y.reshape(len(y), -1)
        labels = type_of_target(y) in CLASS_LABELS
        stem = TARGET_NAME
        while any(n.startswith(stem) for n in names):
            stem = f"_{stem}"
        targets = [stem] if Y.shape[1] == 1 else [f"{stem}{j}" for j in range(Y.shape[1])]
        for j, name in enumerate(targets):
            frame[name] = [str(v) for v in Y[:, j]] if labels else Y[:, j]
        return frame, names, targets, task

    def _keywords(self) -> dict:
        """rank()'s keywords: ``options``, then this selector's own parameters."""
        from . import options as O

        kw = dict(self.options or {})
        if self.trees is not None:
            kw["trees"] = self.trees
        kw["seed"] = self._seed()
        if self.ranking_score is not None and self.method in (O.option("scores").methods or ()):
            kw["scores"] = [self.ranking_score]
        return kw

    def _seed(self):
        if self.random_state is None:
            return (self.options or {}).get("seed")
        if isinstance(self.random_state, Integral):
            return int(self.random_state)
        return int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))

    def _rank(self, data, targets, task, spark=None):
        from .api import rank

        with _quiet(self.verbose):
            return rank(data, targets=targets or None, task=task, method=self.method, spark=spark,
                        **self._keywords())

    def _keep(self, ranking, names: list, task: str):
        """Set the fitted attributes from a ranking of the features ``names``."""
        table = ranking.to_pandas()
        score = self.ranking_score if self.ranking_score is not None else ranking.scores[0]
        if score not in ranking.scores:
            raise ValueError(f"score {score!r} is not in the ranking of method {self.method!r}; its scores: "
                             f"{', '.join(ranking.scores)}")
        joint = table[(table["score"] == score) & (table["target"] == "__all__")]
        importance = dict(zip(joint["feature"], joint["importance"]))
        order = dict(zip(joint["feature"], joint["rank"]))
        self.feature_importances_ = np.array([importance.get(n, 0.0) for n in names], dtype=np.float64)
        self._order = np.array([order.get(n, len(names) + 1) for n in names])
        self.ranking_, self.task_, self.score_ = ranking, task, score
        return self

    def _fit_spark(self, df, y):
        """A Spark DataFrame: y names its target column(s); ranked in its own session."""
        targets = [] if y is None else [y] if isinstance(y, str) else list(y) if isinstance(y, (list, tuple)) else y
        if not isinstance(targets, list) or not all(isinstance(t, str) for t in targets):
            raise ValueError(f"with a Spark DataFrame X, y names its target column(s) (a str or a list of str), "
                             f"not {type(y).__name__}")
        task = "unsupervised" if not targets and self.task == "auto" else self.task
        names = [c for c in df.columns if c not in targets]
        ranking = self._rank(df, targets, task, spark=df.sparkSession)
        ranked = set(ranking.to_pandas()["feature"])
        names = [c for c in names if c in ranked]
        self.feature_names_in_ = np.array(names, dtype=object)
        self.n_features_in_ = len(names)
        return self._keep(ranking, names, ranking.params.get("task", self.task))

    # ----- selection ------------------------------------------------------------------------------------------
    def _get_support_mask(self):
        check_is_fitted(self)
        importance = self.feature_importances_
        threshold = self.threshold
        if threshold is None and self.n_features_to_select is None:
            threshold = "mean"
        mask = np.ones(importance.size, bool) if threshold is None else \
            importance >= parse_threshold(threshold, importance)
        if self.n_features_to_select is not None:
            keep = top_count(self.n_features_to_select, importance.size)
            best = np.argsort(self._order, kind="stable")[:keep]
            top = np.zeros(importance.size, bool)
            top[best] = True
            mask &= top
        return mask

    def transform(self, X):
        """X's selected columns (a Spark DataFrame: its selected columns, by name).

        Parameters
        ----------
        X : pandas.DataFrame, array-like, sparse matrix or Spark DataFrame

        Returns
        -------
        The same kind of data with the selected columns only.
        """
        if _is_spark_frame(X):
            return X.select(*[str(n) for n in self.get_feature_names_out()])
        return super().transform(X)
