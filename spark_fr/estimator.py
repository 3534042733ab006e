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
from pyspark.ml.param import Param, Params
from pyspark.ml.util import (DefaultParamsReadable, DefaultParamsReader, DefaultParamsWritable,
                             DefaultParamsWriter, MLReadable, MLReader, MLWritable, MLWriter)

from . import options as O
from .errors import InputError


def _converter(opt, name: str):
    """A Param type converter that checks values like :func:`spark_fr.rank` does (InputError, one line,
    naming the Param)."""
    def convert(value):
        try:
            return O.check_value(opt, value)
        except InputError as err:
            raise InputError(str(err).replace(opt.flag, name, 1)) from None

    return convert


#: Params of the model only (not options of a ranking run)
MODEL_OPTIONS = (
    O.Option("numTopFeatures", O.Integer(lo=1, description="a positive integer"), 10,
             "features kept by transform", O.RUN, where=frozenset({O.API})),
    O.Option("selectionScore", O.Choice(("symbolic", "genie3", "rf", "relief")), "genie3",
             "score whose joint ranking transform uses", O.RUN, where=frozenset({O.API})),
)


class _RankerParams(Params):
    """One Param per option of :mod:`spark_fr.options` that applies to a DataFrame (camelCase), plus the
    model's own ``numTopFeatures`` and ``selectionScore``; values are checked as :func:`spark_fr.rank`
    checks its keywords."""

    def __init__(self, *args):
        super().__init__(*args)
        defaults = {}
        for opt in _PARAM_OPTIONS.values():
            if opt.default is not None:
                defaults[_param_name(opt)] = opt.default
        self._setDefault(**defaults)

    def getTargetCols(self):
        """The target columns; ``[]`` when none were set (unsupervised, or targets inferred by the reader)."""
        return self.getOrDefault(self.targetCols) if self.isDefined(self.targetCols) else []

    def getNumTrees(self):
        return self.getOrDefault(self.numTrees)

    def getScores(self):
        return self.getOrDefault(self.scores)

    def getNumTopFeatures(self):
        return self.getOrDefault(self.numTopFeatures)

    def getSelectionScore(self):
        return self.getOrDefault(self.selectionScore)

    def rank_keywords(self) -> dict:
        """{option name: value} of the Params that are set (the others have :func:`spark_fr.rank`'s defaults)."""
        return {opt.name: self.getOrDefault(getattr(self, name)) for name, opt in _PARAM_OPTIONS.items()
                if opt not in MODEL_OPTIONS and self.isSet(getattr(self, name))}


def _param_name(opt) -> str:
    return opt.param_name if opt not in MODEL_OPTIONS else opt.name


_PARAM_OPTIONS = {_param_name(o): o for o in (*O.estimator_options(), *MODEL_OPTIONS)}
for _name, _opt in _PARAM_OPTIONS.items():
    setattr(_RankerParams, _name, Param(Params._dummy(), _name, _opt.help, _converter(_opt, _name)))


def _check_names(cls, kwargs: dict) -> None:
    unknown = sorted(set(kwargs) - set(_PARAM_OPTIONS))
    if unknown:
        raise InputError(f"unknown parameter(s) of {cls.__name__}: {', '.join(unknown)}; known: "
                         f"{', '.join(sorted(_PARAM_OPTIONS))}")


class FeatureRanker(Estimator, _RankerParams, DefaultParamsReadable, DefaultParamsWritable):
    """Rank the features of a DataFrame (see :func:`spark_fr.rank`) in an ML pipeline.

    Parameters are the options of :func:`spark_fr.rank` in camelCase (``targetCols``, ``task``, ``method``,
    ``ensemble``, ``numTrees``, ``scores``, ``perTarget``, ``maxFeatures``, ``minSamplesLeaf``,
    ``featuresCol``, ``reliefNeighbours``, ..., ``seed``), and ``numTopFeatures`` / ``selectionScore`` for
    :meth:`FeatureRankingModel.transform`. Values are checked when they are set (one-line
    :class:`spark_fr.errors.InputError`).
    """

    @keyword_only
    def __init__(self, **kwargs):
        super().__init__()
        kwargs = {k: v for k, v in self._input_kwargs.items() if v is not None}
        _check_names(type(self), kwargs)
        self._set(**kwargs)

    @keyword_only
    def setParams(self, **kwargs):
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
        _check_names(type(self), kwargs)
        return self._set(**kwargs)

    def _fit(self, dataset):
        from .api import rank

        if not hasattr(dataset, "sparkSession"):
            raise InputError(f"{type(self).__name__}.fit takes a Spark DataFrame, not {type(dataset).__name__}")
        ranking = rank(dataset, spark=dataset.sparkSession, **self.rank_keywords())
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
        if "score" not in t.columns:
            raise InputError(f"{type(self).__name__} has no ranking: fit a FeatureRanker to get one")
        sel = t[(t["score"] == self.getSelectionScore()) & (t["target"] == "__all__")].sort_values("rank")
        if sel.empty:
            raise InputError(f"selectionScore '{self.getSelectionScore()}' was not computed by this fit; its scores: "
                             f"{', '.join(sorted(t['score'].unique())) if len(t) else 'none'}")
        return list(sel["feature"][: self.getNumTopFeatures()])

    def _targets(self) -> list:
        """The fit's target columns: ``targetCols``, else those the run resolved (none when unsupervised)."""
        return list(self.getTargetCols() or (self.metadata.get("params") or {}).get("targets") or [])

    def _transform(self, dataset):
        from .data.columns import qcol

        if not hasattr(dataset, "sparkSession"):
            raise InputError(f"{type(self).__name__}.transform takes a Spark DataFrame, not {type(dataset).__name__}")
        keep = [c for c in self._targets() if c in dataset.columns]
        chosen = self.selectedFeatures
        missing = [f for f in chosen if f not in dataset.columns]
        if missing:
            raise InputError(f"selected feature '{missing[0]}' is not a column of the DataFrame "
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
