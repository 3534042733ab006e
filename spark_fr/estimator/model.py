"""The fitted stage: :class:`FeatureRankingModel` (the ranking, the selected features, and transform)."""
from __future__ import annotations

import pandas as pd
from pyspark.ml import Model
from pyspark.ml.util import MLReadable, MLWritable

from ..errors import InputError
from .params import RankerParams
from .persistence import ModelReader, ModelWriter
from .selection import joint, select
from .vectors import append_selected

#: the score a model selects by when ``selectionScore`` is not set and the fit computed it
DEFAULT_SELECTION_SCORE = "genie3"


class FeatureRankingModel(Model, RankerParams, MLWritable, MLReadable):
    """A fitted ranking: ``ranking`` / ``rankingDF``, ``selectedFeatures``, and ``transform``.

    Parameters
    ----------
    table : pandas.DataFrame, optional
        The ranking table (:meth:`spark_fr.ranking.Ranking.to_pandas`).
    metadata : dict, optional
        The run metadata (:attr:`spark_fr.ranking.Ranking.metadata`).
    slots : list of Slot, optional
        Where each ranked feature lives in the fitted DataFrame, in input order
        (:mod:`spark_fr.estimator.vectors`); None (a model saved by the first version): columns named like the
        features, in rank order.

    Notes
    -----
    ``transform(df)`` with ``outputCol`` set returns every column of ``df`` and the vector ``outputCol`` of the
    selected features in input order (:attr:`outputFeatures`, also in the vector's attribute metadata). Without
    ``outputCol`` it returns the targets and the selected columns, in rank order (the first form of this
    Estimator; features inside a vector column then need ``outputCol``).
    """

    def __init__(self, table: pd.DataFrame | None = None, metadata: dict | None = None, slots: list | None = None):
        super().__init__()
        self._table = table if table is not None else pd.DataFrame()
        self.metadata = metadata or {}
        self._slots = slots

    @property
    def ranking(self):
        """The :class:`spark_fr.ranking.Ranking`."""
        from ..ranking import Ranking

        return Ranking(self._table.copy(), dict(self.metadata))

    @property
    def rankingDF(self):
        """The ranking table as a Spark DataFrame (on the active session, classic or Connect)."""
        from pyspark.sql import SparkSession

        return self.ranking.to_spark(SparkSession.active())

    def selection_score(self) -> str:
        """``selectionScore``; unset: genie3 when the fit computed it, else the fit's only score (relief)."""
        chosen = self.getSelectionScore()
        if chosen is not None:
            return chosen
        scores = sorted(self._table["score"].unique()) if "score" in self._table.columns else []
        return scores[0] if len(scores) == 1 else DEFAULT_SELECTION_SCORE

    @property
    def selectedFeatures(self) -> list:
        """The features selected by ``selectionMode`` / ``selectionThreshold`` (default: the ``numTopFeatures``
        best) in the selection score's joint ranking, best first (:mod:`spark_fr.estimator.selection`)."""
        return select(self._table, self.metadata, self.selection_score(), self.getSelectionMode(),
                      self.getSelectionThreshold(), self.getNumTopFeatures())

    @property
    def featureImportances(self):
        """The importance of each feature in the selection score's joint ranking, as a
        :class:`pyspark.ml.linalg.DenseVector` aligned with the input (as RandomForestClassificationModel's):
        element i is the i-th element of ``featuresCol`` (without it, the i-th ranked column in input order;
        a model saved by the first version: its features in rank order); 0 for a feature the ranking lacks."""
        from pyspark.ml.linalg import Vectors

        sel = joint(self._table, self.selection_score())
        importance = dict(zip(sel["feature"], sel["importance"].astype(float)))
        names = [s.name for s in self._slots] if self._slots is not None else list(sel["feature"])
        return Vectors.dense([importance.get(n, 0.0) for n in names])

    @property
    def outputFeatures(self) -> list:
        """The selected features in the order of ``outputCol``'s elements (input order)."""
        return [s.name for s in self._selected_slots()]

    def _targets(self) -> list:
        """The fit's targets: ``labelCol`` / ``targetCols``, else those the run resolved (none when unsupervised)."""
        return list(self.target_names() or (self.metadata.get("params") or {}).get("targets") or [])

    def _selected_slots(self) -> list:
        """The slots of the selected features in input order; a model without slots (saved by the first version)
        has columns named like its features, in rank order."""
        from .vectors import Slot

        if self._slots is None:
            return [Slot(n, n) for n in self.selectedFeatures]
        chosen = set(self.selectedFeatures)
        return [s for s in self._slots if s.name in chosen]

    def _transform(self, dataset):
        from ..data.columns import qcol

        if not hasattr(dataset, "sparkSession"):
            raise InputError(f"{type(self).__name__}.transform takes a Spark DataFrame, not {type(dataset).__name__}")
        output = self.getOutputCol()
        if output is not None:
            return append_selected(dataset, self._selected_slots(), output)
        chosen = self.selectedFeatures
        slots = {s.name: s for s in self._slots or ()}
        inside = [slots[n] for n in chosen if n in slots and slots[n].index is not None]
        if inside:
            raise InputError(f"selected feature '{inside[0].name}' is {inside[0].where()}: set outputCol to get the "
                             f"selected features as a vector")
        missing = [f for f in chosen if f not in dataset.columns]
        if missing:
            raise InputError(f"selected feature '{missing[0]}' is not a column of the DataFrame")
        keep = [c for c in self._targets() if c in dataset.columns]
        return dataset.select(*[qcol(c) for c in keep + chosen])

    def write(self):
        """A writer for any Hadoop file system path (:mod:`spark_fr.estimator.persistence`)."""
        return ModelWriter(self)

    @classmethod
    def read(cls):
        return ModelReader(cls)
