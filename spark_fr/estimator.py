"""A pyspark.ml Estimator around :func:`spark_fr.rank`, for ML pipelines.

``FeatureRanker(targetCols=[...], numTrees=100, ...).fit(df)`` returns a :class:`FeatureRankingModel`
whose ``rankingDF`` is the ranking table and whose ``transform`` keeps the target columns and the
``numTopFeatures`` best features by ``selectionScore`` (joint ranking), like Spark's feature selectors.
Params follow Spark ML conventions (camelCase, typed, with getters); the model has the estimator's uid.
Both persist with ``save`` / ``load`` (the model stores its ranking table as Parquet).
"""
from __future__ import annotations

import json
import os

import pandas as pd
from pyspark import keyword_only
from pyspark.ml import Estimator, Model
from pyspark.ml.param import Param, Params, TypeConverters
from pyspark.ml.param.shared import HasSeed
from pyspark.ml.util import (DefaultParamsReadable, DefaultParamsReader, DefaultParamsWritable,
                             DefaultParamsWriter, MLReadable, MLReader, MLWritable, MLWriter)


class _RankerParams(HasSeed):
    targetCols = Param(Params._dummy(), "targetCols", "target columns", TypeConverters.toListString)
    task = Param(Params._dummy(), "task", "auto, classification, regression, mtr or mlc", TypeConverters.toString)
    ensemble = Param(Params._dummy(), "ensemble", "rf, bagging or extra_trees", TypeConverters.toString)
    numTrees = Param(Params._dummy(), "numTrees", "number of trees", TypeConverters.toInt)
    scores = Param(Params._dummy(), "scores", "scores among symbolic, genie3, rf", TypeConverters.toListString)
    perTarget = Param(Params._dummy(), "perTarget", "one ranking per target too", TypeConverters.toBoolean)
    maxFeatures = Param(Params._dummy(), "maxFeatures", "features per node: sqrt, log2, all, count or fraction",
                        TypeConverters.toString)
    minSamplesLeaf = Param(Params._dummy(), "minSamplesLeaf", "minimal examples per leaf", TypeConverters.toFloat)
    featuresCol = Param(Params._dummy(), "featuresCol", "vector column holding the features (optional)",
                        TypeConverters.toString)
    numTopFeatures = Param(Params._dummy(), "numTopFeatures", "features kept by transform", TypeConverters.toInt)
    selectionScore = Param(Params._dummy(), "selectionScore", "score used by transform", TypeConverters.toString)

    def __init__(self, *args):
        super().__init__(*args)
        self._setDefault(task="auto", ensemble="rf", numTrees=100, scores=["symbolic", "genie3", "rf"],
                         perTarget=False, maxFeatures="", minSamplesLeaf=2.0, featuresCol="", numTopFeatures=10,
                         selectionScore="genie3", seed=0)

    def getTargetCols(self):
        return self.getOrDefault(self.targetCols)

    def getNumTrees(self):
        return self.getOrDefault(self.numTrees)

    def getScores(self):
        return self.getOrDefault(self.scores)

    def getNumTopFeatures(self):
        return self.getOrDefault(self.numTopFeatures)

    def getSelectionScore(self):
        return self.getOrDefault(self.selectionScore)


class FeatureRanker(Estimator, _RankerParams, DefaultParamsReadable, DefaultParamsWritable):
    """Rank features of a DataFrame with PCT ensembles (see :func:`spark_fr.rank`).

    Parameters
    ----------
    targetCols : list of str
    task, ensemble : str
    numTrees : int
    scores : list of str
    perTarget : bool
    maxFeatures : str
    minSamplesLeaf : float
    featuresCol : str
    numTopFeatures : int
    selectionScore : str
    seed : int
    """

    @keyword_only
    def __init__(self, *, targetCols=None, task="auto", ensemble="rf", numTrees=100, scores=None, perTarget=False,
                 maxFeatures="", minSamplesLeaf=2.0, featuresCol="", numTopFeatures=10, selectionScore="genie3",
                 seed=0):
        super().__init__()
        kwargs = {k: v for k, v in self._input_kwargs.items() if v is not None}
        self._set(**kwargs)

    @keyword_only
    def setParams(self, **kwargs):
        return self._set(**{k: v for k, v in kwargs.items() if v is not None})

    def _fit(self, dataset):
        from .api import rank

        g = self.getOrDefault
        ranking = rank(dataset, targets=list(g(self.targetCols)), task=g(self.task), ensemble=g(self.ensemble),
                       trees=g(self.numTrees), scores=list(g(self.scores)), per_target=g(self.perTarget),
                       max_features=g(self.maxFeatures) or None, min_samples_leaf=g(self.minSamplesLeaf),
                       features_col=g(self.featuresCol) or None, seed=g(self.seed),
                       spark=dataset.sparkSession)
        model = FeatureRankingModel(ranking.to_pandas(), ranking.metadata)
        model._resetUid(self.uid)
        return self._copyValues(model)


class FeatureRankingModel(Model, _RankerParams, MLWritable, MLReadable):
    """A fitted ranking: ``rankingDF``, ``selectedFeatures``, and a ``transform`` that keeps them."""

    def __init__(self, table: pd.DataFrame | None = None, metadata: dict | None = None):
        super().__init__()
        self._table = table if table is not None else pd.DataFrame()
        self.metadata = metadata or {}

    @property
    def ranking(self):
        """The :class:`spark_fr.ranking.Ranking`."""
        from .ranking import Ranking

        return Ranking(self._table.copy(), dict(self.metadata))

    @property
    def rankingDF(self):
        """The ranking table as a Spark DataFrame."""
        return self.ranking.to_spark()

    @property
    def selectedFeatures(self) -> list:
        """The ``numTopFeatures`` best features by ``selectionScore`` (joint ranking)."""
        t = self._table
        sel = t[(t["score"] == self.getSelectionScore()) & (t["target"] == "__all__")].sort_values("rank")
        if sel.empty:
            raise ValueError(f"selectionScore '{self.getSelectionScore()}' was not computed; "
                             f"scores: {sorted(t['score'].unique())}")
        return list(sel["feature"][: self.getNumTopFeatures()])

    def _transform(self, dataset):
        from .data.columns import qcol

        keep = [c for c in self.getTargetCols() if c in dataset.columns]
        chosen = self.selectedFeatures
        missing = [f for f in chosen if f not in dataset.columns]
        if missing:
            raise ValueError(f"selected feature '{missing[0]}' is not a column of the DataFrame "
                             f"(features inside a vector column are not selected by transform)")
        return dataset.select(*[qcol(c) for c in keep + chosen])

    def write(self):
        return _ModelWriter(self)

    @classmethod
    def read(cls):
        return _ModelReader(cls)


class _ModelWriter(MLWriter):
    def __init__(self, instance):
        super().__init__()
        self.instance = instance

    def saveImpl(self, path):
        DefaultParamsWriter.saveMetadata(self.instance, path, self.sparkSession,
                                         extraMetadata={"run": json.loads(json.dumps(self.instance.metadata,
                                                                                     default=str))})
        os.makedirs(os.path.join(path, "ranking"), exist_ok=True)
        self.instance._table.to_parquet(os.path.join(path, "ranking", "part-0.parquet"), index=False)


class _ModelReader(MLReader):
    def __init__(self, cls):
        super().__init__()
        self.cls = cls

    def load(self, path):
        meta = DefaultParamsReader.loadMetadata(path, self.sparkSession)
        table = pd.read_parquet(os.path.join(path, "ranking", "part-0.parquet"))
        model = self.cls(table, meta.get("run", {}))
        model._resetUid(meta["uid"])
        DefaultParamsReader.getAndSetParams(model, meta)
        return model
