"""The task specification: which columns are features (and of what kind) and which are targets.

Sketch
------
A reader returns a :class:`Dataset`: a Spark DataFrame plus what the file format says about its columns
(ARFF nominal domains, a Mulan label list, the feature names of a vector column). :func:`resolve` then
chooses the targets (``--targets``, a Mulan label file, or the ARFF convention that the class is the last
attribute), makes every other usable column a feature, and checks the names, before any heavy work.

Features live either in ordinary columns (numeric types are numeric features, string and boolean columns
nominal ones) or in one Spark ML vector column (``VectorUDT``, dense or sparse: a nominal feature stores
its category index there). Columns of other types (dates, arrays, maps) are not features; they are listed
in a warning.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

from pyspark.sql import types as T

from .. import tasks
from ..errors import InputError

log = logging.getLogger(__name__)

NUMERIC_TYPES = (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType, T.DecimalType)


@dataclass
class ColumnInfo:
    """What is known about one logical column (a DataFrame column or one element of a vector column).

    Attributes
    ----------
    name : str
    kind : {'numeric', 'nominal', 'hierarchical'}
        'hierarchical': a Clus HMLC class column (label paths joined by '@'); a target only.
    categories : list of str or None
        Declared nominal domain (ARFF), in order; None when it must be discovered from the data.
    column : str
        DataFrame column that holds the values.
    index : int or None
        Position inside a vector column, or None for an ordinary column.
    """

    name: str
    kind: str
    categories: list | None = None
    column: str = ""
    index: int | None = None


@dataclass
class Dataset:
    """An input's rows and what the reader knows about its columns.

    Attributes
    ----------
    df : pyspark.sql.DataFrame or None
        The rows as a Spark DataFrame (None when the reader gives a ``batches`` source of its own).
    columns : list of ColumnInfo
        All logical columns in file order (features and potential targets).
    source : str
        Where the data came from (path or 'DataFrame').
    label_names : list of str or None
        Targets named by a Mulan label file.
    default_target : str or None
        Target used when none is given (ARFF: the last attribute).
    class_column : str or None
        A column that is a class label by the file's layout (scikit-learn's CSVs); unsupervised ranking
        leaves it out of the features.
    error_column : str or None
        Column carrying a parse error message per row (ARFF), checked by the statistics pass.
    hierarchy : object
        Label hierarchy (HMLC), if any.
    feature_relations : FeatureRelations or None
        A relational input's relations of each feature (:mod:`spark_fr.pct.relation_scores`), if any.
    batches : BatchSource or None
        Where the passes read the rows (default: the DataFrame, see :mod:`spark_fr.data.source`).
    skipped_columns : dict
        {name: type} of columns that are neither features nor targets, when there is no DataFrame to ask.
    """

    df: object
    columns: list
    source: str
    label_names: list | None = None
    default_target: str | None = None
    class_column: str | None = None
    error_column: str | None = None
    hierarchy: object = None
    feature_relations: object = None
    extra: dict = field(default_factory=dict)
    batches: object = None
    skipped_columns: dict = field(default_factory=dict)

    def batch_source(self):
        """The :class:`spark_fr.data.source.BatchSource` of the rows."""
        from .source import FrameSource

        if self.batches is not None:
            return self.batches
        return FrameSource(self.df, [self.error_column] if self.error_column else [])

    @property
    def skipped(self) -> dict:
        """{name: type} of the input's columns that are neither features nor targets (unsupported type)."""
        from pyspark.ml.linalg import VectorUDT

        if self.df is None:
            return dict(self.skipped_columns)
        known = {c.column for c in self.columns}
        try:
            fields = self.df.schema.fields
        except Exception:  # not a DataFrame (tests)
            return {}
        return {f.name: f.dataType.simpleString() for f in fields
                if f.name not in known and not isinstance(f.dataType, VectorUDT)}

    def column(self, name: str) -> ColumnInfo:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)


@dataclass
class TaskSpec:
    """Resolved features and targets of a ranking run.

    Attributes
    ----------
    features : list of ColumnInfo
    targets : list of ColumnInfo
    task : str
        'auto' until the task is inferred from the target statistics.
    semi_supervised : bool
    """

    features: list
    targets: list
    task: str = "auto"
    semi_supervised: bool = False

    @property
    def feature_names(self) -> list:
        return [c.name for c in self.features]

    @property
    def target_names(self) -> list:
        return [c.name for c in self.targets]


def columns_of_dataframe(df, features_col: str | None = None, vector_names: list | None = None,
                         quiet: bool = False) -> list:
    """Logical columns of a DataFrame from its Spark types.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
    features_col : str, optional
        A vector column holding features; other vector columns are ignored.
    vector_names : list of str, optional
        Names of the vector's elements (default: Spark ML attribute metadata, else ``col[i]``).
    quiet : bool
        Do not log the columns left out (a reader for another purpose than ranking, e.g. relational tables).

    Returns
    -------
    list of ColumnInfo
    """
    from pyspark.ml.linalg import VectorUDT  # here: pyspark.ml costs half a second to import, and the CSV and
    # relational readers that import this module never meet a vector column

    if features_col is not None:
        vectors = [f.name for f in df.schema.fields if isinstance(f.dataType, VectorUDT)]
        if features_col not in vectors:
            raise InputError(f"--features-col '{features_col}' is not a vector column of the input (vector columns: "
                             f"{', '.join(vectors) or 'none'})")
    out = []
    skipped = []
    for f in df.schema.fields:
        if isinstance(f.dataType, NUMERIC_TYPES):
            out.append(ColumnInfo(f.name, "numeric", None, f.name))
        elif isinstance(f.dataType, (T.StringType, T.BooleanType)):
            out.append(ColumnInfo(f.name, "nominal", None, f.name))
        elif isinstance(f.dataType, VectorUDT) and (features_col is None or f.name == features_col):
            names = vector_names or vector_names_from_metadata(f)
            if names is None:
                size = _vector_size(df, f.name)
                names = [f"{f.name}[{i}]" for i in range(size)]
            out.extend(ColumnInfo(n, "numeric", None, f.name, i) for i, n in enumerate(names))
        else:
            skipped.append(f"{f.name} ({f.dataType.simpleString()})")
    if skipped and not quiet:
        log.warning("columns that are not features (unsupported type) are ignored: %s", ", ".join(skipped))
    return out


def vector_names_from_metadata(field_) -> list | None:
    """The names of a vector field's elements from its Spark ML attribute metadata, or None without it."""
    meta = field_.metadata.get("ml_attr", {}) if field_.metadata else {}
    attrs = meta.get("attrs")
    size = meta.get("num_attrs")
    if not attrs or not size:
        return None
    names = [None] * int(size)
    for group in attrs.values():
        for a in group:
            names[a["idx"]] = a.get("name", f"{field_.name}[{a['idx']}]")
    return [n or f"{field_.name}[{i}]" for i, n in enumerate(names)]


def _vector_size(df, col: str) -> int:
    from pyspark.sql import functions as F
    from pyspark.ml.functions import vector_to_array

    row = df.select(F.max(F.size(vector_to_array(F.col(col)))).alias("n")).first()
    return int(row["n"] or 0)


def resolve(dataset: Dataset, targets=None, task: str = "auto", semi_supervised: bool = False) -> TaskSpec:
    """Choose targets and features.

    Parameters
    ----------
    dataset : Dataset
    targets : list of str or str, optional
        Target names (a comma-separated string is split). Default: the Mulan labels, else the dataset's
        default target (ARFF: last attribute).
    task : str
        Requested task ('auto' to infer it later from the target values).
    semi_supervised : bool

    Returns
    -------
    TaskSpec

    Raises
    ------
    InputError
        Unknown target names, a target that is part of a feature vector, or no feature left.
    """
    if isinstance(targets, str):
        targets = [t.strip() for t in targets.split(",") if t.strip()]
    names = [c.name for c in dataset.columns]
    if task != "auto" and not tasks.get(task).supervised:
        if targets:
            raise InputError(f"--task {task} takes no --targets")
        targets = []
        if dataset.class_column in names:
            log.info("unsupervised: the class column '%s' of the file's layout is not a feature",
                     dataset.class_column)
            names = [n for n in names if n != dataset.class_column]
            features = [c for c in dataset.columns if c.name in names and c.kind in ("numeric", "nominal")]
            if not features:
                raise InputError(f"no feature columns in {dataset.source} besides the class column")
            return TaskSpec(features, [], task, semi_supervised)
    elif not targets:
        if dataset.label_names:
            targets = list(dataset.label_names)
        elif dataset.default_target:
            targets = [dataset.default_target]
            log.info("no --targets given: using the last attribute '%s' (ARFF convention)", targets[0])
        else:
            raise InputError("no target given: pass --targets NAME[,NAME...] (or --task unsupervised)")
    seen = set()
    for t in targets:
        if t not in names and t in dataset.skipped:
            raise InputError(f"target column '{t}' has the type {dataset.skipped[t]}; targets must be numeric, string "
                             f"or boolean columns")
        if t not in names:
            shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
            raise InputError(f"target column '{t}' not found in {dataset.source}; columns are: {shown}")
        if t in seen:
            raise InputError(f"target column '{t}' is given twice")
        seen.add(t)
    target_cols = [dataset.column(t) for t in targets]
    for c in target_cols:
        if c.index is not None:
            raise InputError(f"target '{c.name}' is inside the feature vector column '{c.column}'; "
                             f"targets must be ordinary columns")
    features = [c for c in dataset.columns if c.name not in seen and c.kind in ("numeric", "nominal")]
    if not features:
        raise InputError(f"no feature columns left in {dataset.source} besides the targets")
    return TaskSpec(features, target_cols, task, semi_supervised)
