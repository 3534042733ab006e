"""The task of a fit: ``task``, ``labelType``, or what the label is (Spark ML's habits), said in one log line.

Sketch
------
    task set (not 'auto')   it wins; a ``labelType`` that contradicts it is a one-line error     task_of
    labelType set           categorical -> classification (several targets: mlc),
                            continuous -> regression (several targets: mtr)                        task_of
    neither, one label      the label's Spark type, ML attribute and values decide                 infer_label_type

Decisions
---------
* **Categorical labels** (``labelType`` unset, one label): a numeric column whose ML attribute is nominal or binary
  (``StringIndexer``'s output), a string, boolean or integer column, and a floating-point column whose known
  values are all whole numbers in ``0 .. 99``: what MLlib's classifiers take as class indices without metadata
  (``Classifier.getNumClasses`` reads ``max(label) + 1`` classes and refuses more than 100). Any other
  floating-point column is continuous (a fraction, a negative value, or a value of 100 or more). A label with no
  known value is left to :func:`spark_fr.rank` (its message names the column).
* **One aggregate**: the floating-point check is one ``agg`` over the label (count, min, max, the number of
  fractional values and one of them, and the set of the values when they are class indices: at most 100), never
  a ``collect`` of the column; the other kinds are read from the schema alone.
* **The log line** names the label, what it holds, the task and how to choose the other one, e.g. ``labelCol 'y':
  doubles 0.0/1.0 only -> classification (labelType unset); set labelType='continuous' to rank it as regression``.
* **spark_fr.rank keeps its own inference** (a numeric label is regression unless its ML attribute is nominal or
  binary): the command line and :func:`spark_fr.rank` read files whose numeric class columns are rare (ARFF and
  CSV give classes as strings), and their users say ``--task``; the Estimator is Spark ML's door, where a 0/1
  double label (StringIndexer, every MLlib classifier) is the normal form of a class.
* **Several targets** (``targetCols``): ``labelType`` unset leaves the task to :func:`spark_fr.rank` (mtr for
  numbers, mlc for 0/1 labels); set, categorical is mlc and continuous is mtr. With ``hierarchy`` (HMLC) only
  ``labelType='categorical'`` agrees.
"""
from __future__ import annotations

import logging

from pyspark.sql import types as T

from ..data.columns import qcol
from ..data.schema import label_attribute
from ..errors import InputError

log = logging.getLogger(__name__)

#: MLlib's classifiers take at most this many classes from a label without metadata (Classifier.getNumClasses)
MAX_CLASSES = 100
INTEGER_TYPES = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
FLOAT_TYPES = (T.FloatType, T.DoubleType, T.DecimalType)
#: tasks whose labels are categorical / continuous
CATEGORICAL_TASKS = ("classification", "mlc", "hmlc")
CONTINUOUS_TASKS = ("regression", "mtr")


def task_of(params, dataset, targets: list) -> str | None:
    """The ``task`` keyword of the fit's :func:`spark_fr.rank` call (None: its own inference), logged in one line
    when the label decided it (module docstring).

    Raises
    ------
    InputError
        ``labelType`` contradicts ``task`` or ``hierarchy``.
    """
    task, label_type = params._get("task", "auto"), params._get("labelType")
    hierarchy = params.isSet(params.hierarchy)
    if task != "auto" or hierarchy:
        given = f"task '{task}'" if task != "auto" else "hierarchy (HMLC)"
        task_kind = "categorical" if task in CATEGORICAL_TASKS or hierarchy else \
            "continuous" if task in CONTINUOUS_TASKS else None
        if label_type is not None and label_type != task_kind:
            raise InputError(f"labelType '{label_type}' and {given} disagree: {given} takes "
                             f"{task_kind or 'no'} labels; unset labelType or task")
        return None if task == "auto" else task
    if not targets:
        return None
    what = f"labelCol '{targets[0]}'" if params.getLabelCol() is not None else f"targetCols {','.join(targets)}"
    if label_type is not None:
        chosen = _task(label_type, len(targets))
        log.info("%s: labelType='%s' -> %s", what, label_type, chosen)
        return chosen
    if len(targets) > 1:
        return None
    inferred = infer_label_type(dataset, targets[0])
    if inferred is None:
        return None
    label_type, holds = inferred
    chosen, other = _task(label_type, 1), "continuous" if label_type == "categorical" else "categorical"
    log.info("%s: %s -> %s (labelType unset); set labelType='%s' to rank it as %s", what, holds, chosen, other,
             _task(other, 1))
    return chosen


#: {(labelType, several targets): task}
TASK_OF_LABEL = {("categorical", False): "classification", ("categorical", True): "mlc",
                 ("continuous", False): "regression", ("continuous", True): "mtr"}


def _task(label_type: str, n_targets: int) -> str:
    return TASK_OF_LABEL[label_type, n_targets > 1]


def infer_label_type(dataset, column: str) -> tuple | None:
    """``(labelType, what the label holds)`` of one label column, or None when the column says nothing (no known
    value, or a type :func:`spark_fr.rank` classifies by itself or refuses).

    Examples of the second element: ``"its Spark ML attribute is nominal"``, ``"strings"``, ``"doubles 0.0/1.0
    only"``, ``"doubles with fractions (e.g. 0.25)"``.
    """
    field = dataset.schema[column]
    attr = label_attribute(field)
    if attr is not None:
        return "categorical", f"its Spark ML attribute is {attr.kind} (class indices)"
    kind = field.dataType
    if isinstance(kind, (T.StringType, T.BooleanType)):
        return "categorical", f"{kind.simpleString()} values"
    if isinstance(kind, INTEGER_TYPES):
        return "categorical", f"{kind.simpleString()} values (class labels)"
    if isinstance(kind, FLOAT_TYPES):
        return _float_label(dataset, column, kind.simpleString())
    return None


def _float_label(dataset, column: str, type_name: str) -> tuple | None:
    """The floating-point rule (module docstring) by one aggregate over the column."""
    from pyspark.sql import functions as F

    x = qcol(column).cast("double")
    known = x.isNotNull() & ~F.isnan(x)
    fractional = known & (x != F.floor(x))
    index = known & ~fractional & (x >= 0) & (x < MAX_CLASSES)
    row = dataset.agg(F.count(F.when(known, 1)).alias("n"), F.min(F.when(known, x)).alias("lo"),
                      F.max(F.when(known, x)).alias("hi"), F.count(F.when(fractional, 1)).alias("fractions"),
                      F.first(F.when(fractional, x), ignorenulls=True).alias("fraction"),
                      F.collect_set(F.when(index, x)).alias("values")).first()
    if not row["n"]:
        return None
    name = "doubles" if type_name == "double" else f"{type_name} values"
    if row["fractions"]:
        return "continuous", f"{name} with fractions (e.g. {row['fraction']:g})"
    if row["lo"] < 0:
        return "continuous", f"{name} down to {row['lo']:g} (class indices are >= 0)"
    if row["hi"] >= MAX_CLASSES:
        return "continuous", (f"{name} up to {row['hi']:g} (class indices of MLlib's classifiers are below "
                              f"{MAX_CLASSES})")
    values = sorted(row["values"])
    shown = "/".join(f"{v:.1f}" for v in values) + " only" if len(values) <= 6 else \
        f"{values[0]:.1f}/{values[1]:.1f}/.../{values[-1]:.1f} only ({len(values)} values)"
    return "categorical", f"{name} {shown}"
