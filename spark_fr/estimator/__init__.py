"""A pyspark.ml Estimator around :func:`spark_fr.rank`, for ML pipelines.

::

    pipe = Pipeline(stages=[VectorAssembler(inputCols=[...], outputCol="features"),
                            FeatureRanker(featuresCol="features", labelCol="y", numTopFeatures=20,
                                          outputCol="selected"),
                            LogisticRegression(featuresCol="selected", labelCol="y")])
    model = pipe.fit(df); model.write().save("dbfs:/models/p1"); PipelineModel.load("dbfs:/models/p1")

``FeatureRanker(...).fit(df)`` returns a :class:`FeatureRankingModel` with the estimator's uid and Params,
whose ``ranking`` / ``rankingDF`` is the ranking table, ``featureImportances`` a vector aligned with the input,
and whose ``transform`` selects features by ``selectionMode`` (default: the ``numTopFeatures`` best) in the
``selectionScore``'s joint ranking, like Spark's feature selectors.

Sketch
------
    params       one Param per rank() option (camelCase), and the stage's own             params.py
    fit          the frame to rank (featuresCol, labelCol, names checked) -> rank() -> model  ranker.py
    task         labelType, or the label's type inferred (one log line)                     label.py
    selection    selectionMode / selectionThreshold, featureImportances, the shadow feature   selection.py
    transform    the selected features: appended as a vector, or kept as columns         model.py, vectors.py
    persistence  Spark's writers and readers, any Hadoop file system path                 persistence.py
    MLflow       the ranking logged as artifacts under pyspark.ml autologging              tracking.py

Decisions
---------
* **Params** follow Spark ML: ``featuresCol``, ``labelCol``, ``outputCol``, ``numTopFeatures``,
  ``selectionScore``; every option of :func:`spark_fr.rank` that applies to a DataFrame is a Param
  (:func:`spark_fr.options.estimator_options`: the ensemble, boosting and Relief options, ``method``, ``task``,
  ``semiSupervised``, ``seed``, ...), plus ``hierarchy`` for HMLC.
* **Targets**: ``labelCol`` names one target, ``targetCols`` several (MTR, MLC); both set is an error unless
  ``targetCols == [labelCol]``. No target is an error unless the task is unsupervised.
* **Labels** typed by their Spark ML attribute: a ``StringIndexer`` output (``ml_attr`` nominal) or a binary
  attribute as ``labelCol`` is a class label, ranked as classification with the attribute's class names, exactly as
  the string column it was indexed from (:mod:`spark_fr.data.schema` states the rule, shared with
  :func:`spark_fr.rank`; classic and Spark Connect sessions alike, both keep the schema's metadata).
* **Null vectors**: a fit on a frame whose ``featuresCol`` (or any vector column it ranks) is null in some rows is
  a one-line :class:`~spark_fr.errors.InputError` naming the column, raised by the first pass over the rows, before
  any tree or neighbour is computed (:func:`spark_fr.data.schema.refuse_null_vectors` states why, as Spark ML's
  learners and ``VectorAssembler``'s default do). ``transform`` gives NaN for the selected elements of a null vector,
  as it does for null values (it is lazy and never fails on a row).
* **Features**: with ``featuresCol`` (a vector column, e.g. a VectorAssembler's output) the features are that
  vector's elements only, named by its ML attribute metadata (else ``features[i]``): the frame's other columns
  are not ranked, so the assembler's input columns still in the frame are not counted twice. Without it, every
  column but the targets is a feature, vector columns' elements included (as :func:`spark_fr.rank`). Either
  way a feature name must be unique: a vector element named like a column (or like an element of another
  vector) is an error naming both, never a silent choice; a vector element named like a target is an error
  (the label was assembled into the features).
* **transform** with ``outputCol`` keeps every input column and appends a dense vector of the selected features
  in input order (as Spark's ``UnivariateFeatureSelector`` / ``VectorSlicer``), with ML attribute metadata
  naming them (vector elements keep their attributes, nominal ones included); missing values become NaN
  (VectorAssembler's ``handleInvalid='keep'``). ``FeatureRankingModel.outputFeatures`` lists its order,
  ``selectedFeatures`` the same features best first. Without ``outputCol`` (no default, for backward
  compatibility) transform keeps the targets and the selected columns in rank order, as the first version did;
  selected features inside a vector then need ``outputCol`` (an error says so). A string column cannot go in
  a vector: index it first.
* **labelType** unset: the label's Spark type, ML attribute and values decide the task, in one log line
  (:mod:`~spark_fr.estimator.label`); ``task`` set wins.
* **Selection** (``selectionMode``: numTopFeatures, percentile, threshold, fwe; ``selectionThreshold``) and
  ``featureImportances``: :mod:`~spark_fr.estimator.selection`. ``explainParams`` groups the Params of the
  methods not chosen (:meth:`~spark_fr.estimator.params.RankerParams.explainParams`).
* **selectionScore** unset: genie3 when the fit computed it, else the fit's only score (``relief`` for
  ``method='relief'``).
* **Persistence** (:mod:`~spark_fr.estimator.persistence`): ``DefaultParamsWriter`` metadata and Parquet
  tables written by Spark, so any Hadoop file system path works (``file:///``, ``dbfs:/``, ``s3a://``); no
  ``sparkContext``, and ``overwrite()`` works on Spark Connect too. A :class:`~spark_fr.hierarchy.Hierarchy`
  Param is saved as its fields.
* **MLflow** (:mod:`~spark_fr.estimator.tracking`): under ``mlflow.pyspark.ml.autolog()`` a fit logs the
  ranking, the run metadata and the selection as artifacts of the active run.
* **Relational data** is not a Param: a stage transforms one frame into one frame, while relational features
  are generated from several tables (and their generation learns from the data, e.g. frequent values), so a
  fitted stage could not produce them for new rows from the one frame it is given. Generate them first
  (``generate_features(spark, schema, tables, engine="spark").frame`` of :mod:`spark_fr.relational.generate`:
  one row per target example; drop its id column), then rank that frame with a FeatureRanker; or call
  :func:`spark_fr.rank_relational` for the attribute and relation roll-ups.
"""
from .model import FeatureRankingModel
from .params import STAGE_OPTIONS
from .ranker import FeatureRanker

__all__ = ["FeatureRanker", "FeatureRankingModel", "STAGE_OPTIONS"]
