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

Decisions
---------
* **A pandas index is not data.** pandas (through pyarrow) stores an index that is not a plain ``RangeIndex`` as
  a column of the Parquet file, named ``__index_level_N__`` when the index has no name (or a name that a column
  already has), and lists it in the file's ``pandas`` metadata. A filtered or re-sorted frame's index still
  says where each row came from: with rows ordered by class it predicts the class perfectly, and would be ranked
  first. :func:`columns_of_dataframe` leaves such columns out of the features with one log line: the ones a
  file's pandas metadata declares as an unnamed index (:mod:`spark_fr.io.parquet` passes them) and, everywhere,
  a column named ``__index_level_N__``. Spark drops the pandas metadata (``spark.read.parquet`` of a pandas file,
  a Delta table written by ``deltalake.write_deltalake`` from a pandas frame, whose files carry the column but not
  the metadata), and that name is pyarrow's reserved name for an index (pandas-on-Spark names its index columns
  the same way), so a DataFrame holding it is taken to hold a pandas index, as pandas would read it back and as
  ``spark.createDataFrame(pdf)`` drops the index. A *named* index (``df.index.name = 'id'``) is stored as the
  column ``id`` and is an ordinary column: the user named it. RangeIndex metadata (no column) needs nothing.
* **A label's Spark ML attribute says what it is.** A numeric target column whose ``ml_attr`` metadata is
  ``nominal`` (``StringIndexer``'s output, ``IndexToString``'s input) or ``binary`` holds class indices, not
  quantities: :func:`resolve` reads it as the class names of the attribute's ``vals`` (index ``i`` is
  ``vals[i]``; without ``vals``, the index itself as a name), so ``--task auto`` infers classification and the
  classes are named as the user knows them (``metadata['label_attributes']`` records them). The classes are then
  ordered as those of a string column (sorted names): an indexed label ranks exactly as the string column it was
  indexed from. This holds for one target; of several targets only nominal attributes of more than two values
  are read so (several 0/1 labels stay multi-label targets), and a ``--task`` other than classification keeps
  the numbers (the user said what they are). A value that is not a class index of the attribute (fractional,
  negative, or beyond ``vals``) is a one-line error naming the column and the value; null and NaN are missing.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from .. import tasks
from ..errors import InputError

log = logging.getLogger(__name__)


def numeric_types() -> tuple:
    """pyspark's numeric column types (pyspark is imported here, not with the module: a run on files never needs
    it, and its import is a tenth of a second of every job's start)."""
    from pyspark.sql import types as T
    return T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType, T.DecimalType

#: pyarrow's name for a pandas index column it cannot name after the index (module docstring)
PANDAS_INDEX = re.compile(r"__index_level_\d+__")
#: the column of a Dataset carrying an error text per row (an indexed label's invalid value, a null vector)
ROW_ERROR_COLUMN = "__spark_fr_row_error"


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
        if self.df is None:
            return dict(self.skipped_columns)
        from pyspark.ml.linalg import VectorUDT  # here: pyspark.ml costs 0.3 s to import (scipy)

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
                         quiet: bool = False, index_columns=()) -> list:
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
    index_columns : iterable of str
        Columns a file's pandas metadata declares as an unnamed index; they, and every column named
        ``__index_level_N__``, are left out (module docstring).

    Returns
    -------
    list of ColumnInfo
    """
    from pyspark.ml.linalg import VectorUDT  # here: pyspark.ml costs half a second to import, and the CSV and
    # relational readers that import this module never meet a vector column
    from pyspark.sql import types as T

    numeric = numeric_types()
    if features_col is not None:
        vectors = [f.name for f in df.schema.fields if isinstance(f.dataType, VectorUDT)]
        if features_col not in vectors:
            raise InputError(f"--features-col '{features_col}' is not a vector column of the input (vector columns: "
                             f"{', '.join(vectors) or 'none'})")
    out = []
    skipped = []
    index = pandas_index_columns([f.name for f in df.schema.fields], index_columns, quiet)
    for f in df.schema.fields:
        if f.name in index:
            continue
        if isinstance(f.dataType, numeric):
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


def pandas_index_columns(names, declared=(), quiet: bool = False) -> list:
    """The columns among ``names`` that hold a pandas index with no name of its own (module docstring): those
    ``declared`` by a file's pandas metadata, and those named ``__index_level_N__``; one log line names them."""
    declared = set(declared)
    found = [n for n in names if n in declared or PANDAS_INDEX.fullmatch(n)]
    if found and not quiet:
        shown = ", ".join(f"'{n}'" for n in found)
        log.warning("column%s %s hold%s the index of a pandas DataFrame (as pandas stores an unnamed index), not "
                    "data: left out of the features (name the index, df.index.name = 'id', to rank it)",
                    "s" if len(found) > 1 else "", shown, "" if len(found) > 1 else "s")
    return found


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

    from .columns import qcol

    vector = qcol(col)  # a null vector (a row without features) has no size: every element missing there
    row = df.select(F.max(F.when(vector.isNotNull(), F.size(vector_to_array(vector)))).alias("n")).first()
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
            refuse_null_vectors(dataset, features)
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
        if t not in names and (PANDAS_INDEX.fullmatch(t) or t in dataset.extra.get("pandas_index", ())):
            raise InputError(f"target column '{t}' is the unnamed index of a pandas DataFrame, left out of "
                             f"{dataset.source}'s columns; name the index (df.index.name = 'id') to use it")
        if t not in names and t in dataset.skipped:
            raise InputError(f"target column '{t}' has the type {dataset.skipped[t]}; targets must be numeric, string "
                             f"or boolean columns")
        if t not in names:
            shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
            raise InputError(f"target column '{t}' not found in {dataset.source}; columns are: {shown}")
        if t in seen:
            raise InputError(f"target column '{t}' is given twice")
        seen.add(t)
    target_cols = read_indexed_labels(dataset, [dataset.column(t) for t in targets], task)
    for c in target_cols:
        if c.index is not None:
            raise InputError(f"target '{c.name}' is inside the feature vector column '{c.column}'; "
                             f"targets must be ordinary columns")
    features = [c for c in dataset.columns if c.name not in seen and c.kind in ("numeric", "nominal")]
    if not features:
        raise InputError(f"no feature columns left in {dataset.source} besides the targets")
    refuse_null_vectors(dataset, features)
    return TaskSpec(features, target_cols, task, semi_supervised)


@dataclass(frozen=True)
class LabelAttribute:
    """The Spark ML attribute of a numeric column that marks it a class label (module docstring).

    Attributes
    ----------
    kind : {'nominal', 'binary'}
    classes : list of str or None
        The class name of each index (``vals``; a binary attribute without them: '0', '1'; a nominal one with
        ``num_vals`` only: its indices), or None when the attribute does not say how many classes there are.
    """

    kind: str
    classes: list | None


def label_attribute(field_) -> LabelAttribute | None:
    """The :class:`LabelAttribute` of a numeric field whose ``ml_attr`` metadata is nominal or binary, else None."""
    meta = (field_.metadata or {}).get("ml_attr") or {}
    kind = meta.get("type")
    if not isinstance(field_.dataType, numeric_types()) or kind not in ("nominal", "binary"):
        return None
    if meta.get("vals"):
        classes = [str(v) for v in meta["vals"]]
    elif kind == "binary":
        classes = ["0", "1"]
    elif meta.get("num_vals"):
        classes = [str(i) for i in range(int(meta["num_vals"]))]
    else:
        classes = None
    return LabelAttribute(kind, classes)


def read_indexed_labels(dataset: Dataset, targets: list, task: str) -> list:
    """The target columns, those whose Spark ML attribute marks them class labels read as their class names.

    The rule and its limits are the module docstring's. The dataset's DataFrame gets the class names in place of
    the indices, and an error column (:data:`ROW_ERROR_COLUMN`) for values that are no class index, reported
    by the statistics pass; ``dataset.extra['label_attributes']`` records ``{target: {type, classes}}``.
    """
    if dataset.df is None or dataset.batches is not None or not _takes_classes(task):
        return targets
    fields = {f.name: f for f in dataset.df.schema.fields}
    out = []
    for c in targets:
        field_ = fields.get(c.column) if c.index is None and c.kind == "numeric" else None
        attr = label_attribute(field_) if field_ is not None else None
        several = len(targets) > 1 and (attr is None or attr.kind == "binary" or
                                        (attr.classes is not None and len(attr.classes) <= 2))
        if attr is None or several:
            out.append(c)
            continue
        _index_to_class(dataset, c.column, c.name, attr.classes)
        shown = ", ".join(f"'{v}'" for v in (attr.classes or [])[:8]) + (", ..." if len(attr.classes or []) > 8 else "")
        log.info("target '%s' holds class indices (its Spark ML attribute is %s): read as the classes %s", c.name,
                 attr.kind, shown or "named by their indices")
        dataset.extra.setdefault("label_attributes", {})[c.name] = {"type": attr.kind, "classes": attr.classes}
        c = ColumnInfo(c.name, "nominal", None, c.column)
        dataset.columns = [c if d.name == c.name else d for d in dataset.columns]
        out.append(c)
    return out


def _takes_classes(task: str) -> bool:
    """Whether ``--task`` lets an indexed label be read as classes: 'auto', or a task that claims one nominal target
    (classification); any other task given takes the numbers as they are."""
    return task == "auto" or tasks.get(task).claims([ColumnInfo("label", "nominal")], False)


def _index_to_class(dataset: Dataset, column: str, name: str, classes: list | None) -> None:
    """Replace the class indices of ``column`` by their names; an invalid index is an error of the row."""
    from pyspark.sql import functions as F

    from .columns import qcol

    x = qcol(column).cast("double")
    known = x.isNotNull() & ~F.isnan(x)
    valid = known & (x >= 0) & (x == F.floor(x)) & (x < (len(classes) if classes is not None else 2 ** 31))
    if classes is None:
        value, expected = x.cast("long").cast("string"), "a class index of its Spark ML attribute (a whole number)"
    else:
        value = F.try_element_at(F.array(*[F.lit(v) for v in classes]), x.cast("int") + 1)
        expected = f"a class index of its Spark ML attribute (0 to {len(classes) - 1})"
    error = F.when(known & ~valid, F.concat(F.lit(f"column '{name}' holds "), qcol(column).cast("string"),
                                             F.lit(f", which is not {expected}")))
    with_row_error(dataset, {column: F.when(valid, value)}, error)


def refuse_null_vectors(dataset: Dataset, features: list) -> None:
    """A null in a vector column of features is an error of its row, reported by the statistics pass.

    Decision: a null vector (a row without features: what a left join or a ``when`` without ``otherwise`` leaves)
    is an error naming the column, as for Spark ML (``VectorAssembler``'s default ``handleInvalid='error'``, and
    its learners refuse null vectors): ranking such rows as rows whose every feature is missing would let rows
    without information weigh on the targets' statistics unnoticed. The rows' vectors are replaced by empty ones
    meanwhile, so the statistics pass reads them and reports the error (pyspark cannot hand a null vector to
    Arrow). Nothing is read before that pass, the first over the rows.
    """
    if dataset.df is None or dataset.batches is not None:
        return
    columns = list(dict.fromkeys(c.column for c in features if c.index is not None))
    if not columns:
        return
    from pyspark.ml.functions import array_to_vector  # here: pyspark.ml costs 0.3 s to import (scipy)
    from pyspark.sql import functions as F

    from .columns import qcol

    empty = array_to_vector(F.array().cast("array<double>"))
    errors = [F.when(qcol(c).isNull(), F.lit(f"the vector column '{c}' is null in some rows (rows without "
                                             f"features): drop them (df.dropna(subset=['{c}'])) or fill them"))
              for c in columns]
    with_row_error(dataset, {c: F.coalesce(qcol(c), empty) for c in columns}, F.coalesce(*errors))


def with_row_error(dataset: Dataset, replaced: dict, error) -> None:
    """Replace columns of the dataset's DataFrame (``{column: expression}``) and add ``error`` (a string column, null
    where a row is fine) to its error column, which the statistics pass reports (:mod:`spark_fr.data.validate`).
    Every expression reads the columns as they were."""
    from pyspark.sql import functions as F

    from .columns import qcol

    if dataset.error_column is not None:
        error = F.coalesce(qcol(dataset.error_column), error)
    dataset.error_column = dataset.error_column or ROW_ERROR_COLUMN
    dataset.df = dataset.df.withColumns({**replaced, dataset.error_column: error})
