"""The rows an evaluation works on: read once, validated, encoded once, held on the driver; training parts as inputs
that :func:`spark_fr.rank` reads like any other.

Sketch
------
    datasets <- spark_fr.io.readers.read_dataset(input [, test])       any format the ranking job reads
    checks   <- spark_fr.data.prepare.prepare(each input)                bad input fails here, one line naming it
    [test_holds_training: the test input is the whole data; each training row takes one equal test row out]
    table    <- the feature and target columns of every row as one Arrow table (train rows, then test rows),
                columns renamed __e0, __e1, ... (the same for both inputs)
    encoded  <- prepare + encode_batch of that table: features scaled to [0, 1] by the range of all rows (nominal:
                category index; NaN = missing), targets in the task's units, content keys
    order    <- rows sorted by content key (stable), keys made distinct: the canonical order, which does not depend
                on the input's partitioning or file order; the part (train / test) travels with each row

A training part becomes a :class:`spark_fr.data.schema.Dataset` over an in-memory Arrow source
(:class:`ArrowSource`): the same column descriptions as the input (declared nominal domains, the ARFF
``hierarchical`` class and its hierarchy, the Mulan labels), so ``spark_fr.rank`` ranks it exactly as it ranks a
file. Rows can be handed over with their targets hidden (made null), which is how the semi-supervised protocol
makes unlabelled rows.

Decision: the evaluation protocols are for benchmark-sized data (the thesis's largest evaluation set has 60,607
rows), so the rows are held on the driver; the neighbour searches can still run as Spark tasks
(:mod:`spark_fr.evaluation.knn`), and the rankings run as spark_fr runs them.
"""
from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..data.blocks import encode_batch, feature_value_counts
from ..data.prepare import prepare
from ..data.rowkeys import distinct_keys
from ..data.schema import Dataset, TaskSpec, resolve
from ..io import frames
from ..errors import InputError
from ..io.readers import read_dataset

log = logging.getLogger(__name__)

#: rows per Arrow batch handed to a ranking
BATCH_ROWS = 65_536


class ArrowSource(frames.ArrowSource):
    """An evaluation's Arrow table held on the driver (:class:`spark_fr.io.frames.ArrowSource`), whose Spark tasks
    run over the driver's batches themselves."""

    def map(self, spark, fn):
        from ..runtime.engine import engine_for, session_of

        batches = self.driver_batches()
        return engine_for(session_of(spark)).from_units(batches, lambda bs: fn(iter(bs)), max(1, len(batches)))


@dataclass
class EvaluationData:
    """Every row of an evaluation, encoded, in canonical order.

    Attributes
    ----------
    name : str
        Short name of the dataset (tables, plots).
    source : str
        The input(s) as given.
    dataset : Dataset
        The read input (its column descriptions, hierarchy, Mulan labels).
    columns : list of ColumnInfo
        The features, then the targets, pointing at ``table``'s columns.
    n_features : int
    table : pyarrow.Table
        The raw values of ``columns`` in canonical order.
    task : str
        The target type ('regression', 'mtr', 'classification', 'mlc', 'hmlc', 'unsupervised').
    X : float64 (n, D)
        Features scaled by the range of all rows (numeric), category indices (nominal); NaN = missing.
    nominal : bool (D,)
    n_values : float64 (D,)
        Categories of each nominal feature (1 for numeric ones).
    Y : float64 (n, T)
        Targets in the task's units (class index, number, 0/1 label closed under ancestors); NaN = unknown.
    keys : uint64 (n,)
        Distinct row keys (content keys made distinct; ties of the neighbour search, splits).
    test : bool (n,) or None
        The rows of the test input (``--test``), or None.
    target_names : list of str
        Columns of ``Y`` (labels for HMLC).
    classes : list of str or None
        Class names (classification).
    """

    name: str
    source: str
    dataset: Dataset
    columns: list
    n_features: int
    table: pa.Table
    task: str
    X: np.ndarray
    nominal: np.ndarray
    n_values: np.ndarray
    Y: np.ndarray
    keys: np.ndarray
    test: np.ndarray | None
    target_names: list
    classes: list | None

    @property
    def n_rows(self) -> int:
        return self.X.shape[0]

    @property
    def feature_names(self) -> list:
        return [c.name for c in self.columns[:self.n_features]]

    @property
    def target_columns(self) -> list:
        """The names of the target columns of the input (one hierarchical column for HMLC)."""
        return [c.name for c in self.columns[self.n_features:]]

    def subset(self, rows: np.ndarray, hide: np.ndarray | None = None, label: str = "") -> Dataset:
        """The rows ``rows`` as an input of :func:`spark_fr.rank`, with the targets of ``rows[hide]`` made null."""
        table = self.table.take(pa.array(np.asarray(rows, np.int64)))
        if hide is not None and np.any(hide):
            table = _hide_targets(table, self.columns[self.n_features:], np.asarray(hide, bool))
        ds = self.dataset
        return Dataset(None, list(self.columns), f"{self.source} ({label})" if label else self.source,
                       label_names=ds.label_names, hierarchy=ds.hierarchy, batches=ArrowSource(table, BATCH_ROWS),
                       extra={"fingerprint": {"evaluation": self.source, "rows": int(len(rows))}})

    def scaled_by(self, train_rows: np.ndarray) -> np.ndarray:
        """``X`` with every numeric feature rescaled to [0, 1] by its range over ``train_rows`` (the thesis: the
        training range). A feature constant (or unknown) on the training rows becomes 0 where it is known."""
        X = self.X.copy()
        Xt = self.X[train_rows]
        for f in np.flatnonzero(~self.nominal):
            col = Xt[:, f]
            known = col[~np.isnan(col)]
            if known.size == 0:
                X[:, f] = np.where(np.isnan(X[:, f]), np.nan, 0.0)
                continue
            lo, hi = known.min(), known.max()
            if hi > lo:
                X[:, f] = (X[:, f] - lo) / (hi - lo)
            else:
                X[:, f] = np.where(np.isnan(X[:, f]), np.nan, 0.0)
        return X


def _hide_targets(table: pa.Table, targets: list, hide: np.ndarray) -> pa.Table:
    import pyarrow.compute as pc

    mask = pa.array(hide)
    for c in targets:
        i = table.schema.get_field_index(c.column)
        col = table.column(i)
        table = table.set_column(i, c.column, pc.if_else(mask, pa.scalar(None, col.type), col))
    return table


def _raw_rows(spark, ds: Dataset, spec: TaskSpec) -> tuple:
    """(the rows of ``spec``'s columns as an Arrow table with columns __e0, __e1, ..., their ColumnInfo): the
    input checked first by :func:`prepare` (parse errors, infinite values, unknown labels: one line)."""
    prep = prepare(ds, spec, outputs=("scaled",), spark=spark)
    try:
        batches = prep.batches if prep.local else prep.source.driver_batches()
    finally:
        prep.release()
    cols = prep.plan.features + prep.plan.targets
    physical = list(dict.fromkeys(c.column for c in cols))
    rename = {name: f"__e{i}" for i, name in enumerate(physical)}
    tables = [pa.Table.from_batches([b]).select(physical) for b in batches if b.num_rows]
    if tables:
        table = pa.concat_tables(tables, promote_options="permissive")
    else:
        table = pa.Table.from_batches(batches).select(physical)
    table = table.rename_columns([rename[n] for n in table.column_names])
    return table, [dataclasses.replace(c, column=rename[c.column]) for c in cols]


def _same_columns(train_cols: list, test_cols: list, test_path: str) -> None:
    a = [(c.name, c.kind, c.index is None) for c in train_cols]
    b = [(c.name, c.kind, c.index is None) for c in test_cols]
    if a != b:
        for x, y in zip(a, b):
            if x != y:
                raise InputError(f"--test {test_path}: column '{y[0]}' ({y[1]}) does not match the training "
                                 f"input's '{x[0]}' ({x[1]}); the test input must have the same columns")
        raise InputError(f"--test {test_path}: {len(b)} feature and target columns, the training input has {len(a)}")


def read_evaluation_data(spark, data, test=None, *, targets=None, task: str = "auto", name: str | None = None,
                         test_holds_training: bool = False, **read) -> EvaluationData:
    """Read, check and encode the rows of an evaluation (module sketch).

    Parameters
    ----------
    spark : SparkSession (or a session still starting)
    data : str, list of str or pyspark.sql.DataFrame
        The input (its training part when ``test`` is given).
    test : str, list of str or DataFrame, optional
        The test rows (a given split: Mulan's and the HMLC benchmarks' train/test files).
    targets : str or list of str, optional
    task : str
    name : str, optional
        The dataset's name in tables (default: the file name without extensions).
    test_holds_training : bool
        ``test`` is the whole data, the training rows included (a semi-supervised benchmark's full file beside its
        labelled part, as the HMLC suite's enron): every training row takes one row of equal content (features and
        targets) out of the test rows, a multiset difference, so the test part is the rest whatever the order. A
        training row the test input does not hold is an error.
    **read
        ``format``, ``labels_xml``, ``exclude``, ``features_col`` (as :func:`spark_fr.io.readers.read_dataset`).

    Returns
    -------
    EvaluationData
    """
    ds = read_dataset(spark, data, targets=targets, **read)
    spec = resolve(ds, targets, task)
    table, cols = _raw_rows(spark, ds, spec)
    n_train = table.num_rows
    if test is not None:
        ds_t = read_dataset(spark, test, targets=spec.target_names or None, **read)
        spec_t = resolve(ds_t, spec.target_names or None, task)
        table_t, cols_t = _raw_rows(spark, ds_t, spec_t)
        _same_columns(cols, cols_t, str(test))
        ds = dataclasses.replace(ds, hierarchy=_joint_hierarchy(ds.hierarchy, ds_t.hierarchy, str(test)))
        if table_t.schema != table.schema:
            try:
                table_t = table_t.cast(table.schema)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:
                raise InputError(f"--test {test}: its columns' types differ from the training input's "
                                 f"({err})") from None
        table = pa.concat_tables([table, table_t])
    D = len(spec.features)
    combined = Dataset(None, cols, ds.source, label_names=ds.label_names, hierarchy=ds.hierarchy,
                       batches=ArrowSource(table, BATCH_ROWS))
    cspec = TaskSpec(cols[:D], cols[D:], spec.task, False)
    prep = prepare(combined, cspec, outputs=("scaled",), spark=spark)
    try:
        batches = prep.batches if prep.local else prep.source.driver_batches()
        blocks = [encode_batch(b, prep.plan) for b in batches if b.num_rows]
    finally:
        prep.release()
    n = table.num_rows
    T = len(prep.encoder.names)
    X = np.vstack([b["scaled"] for b in blocks]) if blocks else np.empty((0, D))
    Y = np.vstack([np.asarray(b["Y"], np.float64) for b in blocks]) if blocks else np.empty((0, T))
    content = np.concatenate([b["keys"] for b in blocks]) if blocks else np.empty(0, np.uint64)
    part = np.zeros(n, bool)
    part[n_train:] = True
    if test is not None and test_holds_training:
        keep = _without_training_rows(content, n_train, str(test))
        table, X, Y, content, part = table.filter(pa.array(keep)), X[keep], Y[keep], content[keep], part[keep]
    order = np.argsort(content, kind="stable")
    bins = prep.plan.bins
    return EvaluationData(name or dataset_name(ds.source), str(data) if isinstance(data, str) else ds.source, ds,
                          cols, D, table.take(pa.array(order)), prep.task, np.ascontiguousarray(X[order]),
                          np.array([b.nominal for b in bins], bool), feature_value_counts(bins),
                          np.ascontiguousarray(Y[order]), distinct_keys(content[order]),
                          part[order] if test is not None else None, list(prep.encoder.names),
                          list(prep.encoder.classes) if prep.encoder.classes else None)


def _edges(h) -> set:
    return {(h.labels[p] if p >= 0 else "", h.labels[i]) for i, ps in enumerate(h.parents)
            for p in (tuple(ps) + ((-1,) if h.root_parent[i] else ()))}


def _joint_hierarchy(train, test, test_path: str):
    """The hierarchy of the evaluation: the training input's, or the test input's when it declares the same
    hierarchy with more labels (a HARFF's full file beside its labelled part: enron's declares a label, 4.18, that
    no training row has); the test labels must be in it (else :func:`prepare` names the first that is not)."""
    if train is None or test is None or train == test:
        return train
    if _edges(train) <= _edges(test):
        log.info("--test %s declares %d labels the training input does not; the evaluation uses its hierarchy",
                 test_path, len(test.labels) - len(train.labels))
        return test
    return train


def _without_training_rows(content: np.ndarray, n_train: int, test: str) -> np.ndarray:
    """Rows to keep: all training rows (the first ``n_train``) and the test rows left when every training row has
    taken one test row of equal content key out (the first such in input order; equal rows are interchangeable)."""
    train_keys, train_counts = np.unique(content[:n_train], return_counts=True)
    test_keys = content[n_train:]
    order = np.argsort(test_keys, kind="stable")
    sorted_keys = test_keys[order]
    first = np.searchsorted(sorted_keys, train_keys, side="left")
    held = np.searchsorted(sorted_keys, train_keys, side="right") - first
    missing = int(np.maximum(train_counts - held, 0).sum())
    if missing:
        raise InputError(f"--test {test}: {missing} of the {n_train} training rows are not among its rows; a test "
                         f"input that holds the training rows must hold every one of them")
    drop = np.zeros(test_keys.size, bool)
    for start, count in zip(first, train_counts):
        drop[order[start:start + count]] = True
    return np.r_[np.ones(n_train, bool), ~drop]


def dataset_name(source: str) -> str:
    """A short name of an input: its file name without directories and extensions (``enb`` of
    ``.../mtr_enb/enb.arff``, ``cellcycle_FUN`` of ``cellcycle_FUN.train.arff``)."""
    import os

    first = str(source).split(",")[0].strip().rstrip("/")
    base = os.path.basename(first) or first
    for ext in (".gz", ".zip", ".arff", ".harff", ".csv", ".parquet", ".mat", ".tsv"):
        if base.lower().endswith(ext):
            base = base[: -len(ext)]
    for part in (".train", "-train", "_train", "-training_set"):
        if base.lower().endswith(part):
            base = base[: -len(part)]
    return base
