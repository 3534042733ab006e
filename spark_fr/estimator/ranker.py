"""The Estimator: :class:`FeatureRanker` (the frame to rank, the run, the model)."""
from __future__ import annotations

from pyspark import keyword_only
from pyspark.ml import Estimator
from pyspark.ml.linalg import VectorUDT
from pyspark.ml.util import DefaultParamsReadable, DefaultParamsWritable

from ..data.columns import qcol
from ..errors import InputError
from .label import task_of
from .model import FeatureRankingModel
from .params import RankerParams, check_names
from .persistence import ParamsWriter
from .selection import check_threshold, drop_shadow, shadow_column
from .tracking import log_ranking
from .vectors import check_unique, locate, named_slots


class FeatureRanker(Estimator, RankerParams, DefaultParamsReadable, DefaultParamsWritable):
    """Rank the features of a DataFrame (see :func:`spark_fr.rank`) in an ML pipeline.

    Parameters are the options of :func:`spark_fr.rank` in camelCase (``targetCols``, ``task``, ``method``,
    ``ensemble``, ``numTrees``, ``scores``, ``perTarget``, ``maxFeatures``, ``minSamplesLeaf``, ``featuresCol``,
    ``shrinkage``, ``reliefNeighbours``, ..., ``seed``) and the stage's own: ``labelCol`` (one target),
    ``labelType`` (categorical or continuous; unset: inferred, :mod:`spark_fr.estimator.label`), ``hierarchy``
    (HMLC), and ``outputCol`` / ``selectionMode`` / ``selectionThreshold`` / ``numTopFeatures`` / ``selectionScore``
    for :meth:`FeatureRankingModel.transform` (:mod:`spark_fr.estimator.selection`). Values are checked when they are set (one-line
    :class:`spark_fr.errors.InputError`). :mod:`spark_fr.estimator` states the decisions.
    """

    @keyword_only
    def __init__(self, **kwargs):
        super().__init__()
        kwargs = {k: v for k, v in self._input_kwargs.items() if v is not None}
        check_names(type(self), kwargs)
        self._set(**kwargs)

    @keyword_only
    def setParams(self, **kwargs):
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
        check_names(type(self), kwargs)
        return self._set(**kwargs)

    def ranking_input(self, dataset):
        """The frame :func:`spark_fr.rank` ranks: with ``featuresCol``, the targets and that vector only (its
        elements are the features); without it, the whole frame. Feature names must be unique (no vector
        element and column of the same name) and no vector element may be named like a target."""
        if not hasattr(dataset, "sparkSession"):
            raise InputError(f"{type(self).__name__}.fit takes a Spark DataFrame, not {type(dataset).__name__}")
        targets, features_col = self.target_names(), self.getFeaturesCol()
        if not targets and self.supervised():
            raise InputError("no target: set labelCol (one target) or targetCols (several), or task='unsupervised'")
        columns = dataset.columns
        for t in targets:
            if t not in columns:
                shown = ", ".join(columns[:12]) + (", ..." if len(columns) > 12 else "")
                raise InputError(f"target column '{t}' is not a column of the DataFrame; its columns: {shown}")
        if features_col is not None:
            vectors = [f.name for f in dataset.schema.fields if isinstance(f.dataType, VectorUDT)]
            if features_col not in vectors:
                raise InputError(f"featuresCol '{features_col}' is not a vector column of the DataFrame (vector "
                                 f"columns: {', '.join(vectors) or 'none'})")
            if features_col in targets:
                raise InputError(f"featuresCol '{features_col}' is also a target")
            dataset = dataset.select(*[qcol(c) for c in (*targets, features_col)])
        check_unique(named_slots(dataset.schema, features_col), targets, features_col)
        return dataset

    def _fit(self, dataset):
        from ..api import rank

        mode, threshold = self.getSelectionMode(), self.getSelectionThreshold()
        check_threshold(mode, threshold)
        frame = self.ranking_input(dataset)
        keywords = self.rank_keywords()
        task = task_of(self, frame, self.target_names())
        if task is not None:
            keywords["task"] = task
        shadow = mode == "threshold" and threshold == "shadow"
        ranked = shadow_column(frame, self._get("seed", 0)) if shadow else frame
        ranking = rank(ranked, spark=frame.sparkSession, **keywords)
        table, metadata = ranking.to_pandas(), ranking.metadata
        if shadow:
            table, metadata = drop_shadow(table, metadata)
        names = list(dict.fromkeys(table["feature"]))
        model = FeatureRankingModel(table, metadata, locate(frame.schema, self.getFeaturesCol(), names))
        model._resetUid(self.uid)
        model = self._copyValues(model)
        log_ranking(model)
        return model

    def write(self):
        """A ``DefaultParamsWriter`` whose ``overwrite()`` also works on a Spark Connect session."""
        return ParamsWriter(self)
