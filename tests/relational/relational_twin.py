"""The relational walk's two executors side by side: :class:`Twin` is an executor that runs every operation on
both (the Spark engine's and the local engine's) and asserts that their results are equal bit for bit before the
walk goes on, so a difference is reported at the operation that makes it (tests/relational/test_relational_executors.py and
the source tests of the local engine use it)."""
from __future__ import annotations

import datetime as dt
import math

import numpy as np

from spark_fr.relational import load_schema
from spark_fr.relational import walk as W
from spark_fr.relational.checks import column_kinds, key_checks
from spark_fr.relational.keys import TEXT, key_plan
from spark_fr.relational.local import LocalExecutor
from spark_fr.relational.local_kernels import NominalColumn
from spark_fr.relational.row_keys import keys_read
from spark_fr.relational.spark_executor import SparkExecutor

EPOCH = dt.date(1970, 1, 1)
#: the Spark frames cached by the comparisons (released by :func:`walk_both` and :func:`prepare_both`)
CACHED = []


def cell(v):
    """A cell as both engines must agree on it: missing (null, NaN), a double as its exact hexadecimal text
    (numbers; Spark's integer keys and dates as the local engine's doubles and days; -0.0 apart from 0.0), or a
    string."""
    if v is None:
        return (0,)
    if isinstance(v, dt.datetime):
        raise AssertionError(f"unexpected timestamp {v!r}")
    if isinstance(v, dt.date):
        v = float((v - EPOCH).days)
    if isinstance(v, (bool, np.bool_)):
        raise AssertionError(f"unexpected boolean {v!r}")
    if isinstance(v, (int, float, np.integer, np.floating)):
        v = float(v)
        return (0,) if math.isnan(v) else (1, v.hex())
    return (2, str(v))


def spark_rows(df) -> list:
    """The rows of a Spark frame as sorted tuples of :func:`cell`."""
    return sorted(tuple(cell(v) for v in r) for r in df.collect())


def local_rows(cols: dict, columns: list) -> list:
    """The rows of {column: array or NominalColumn} over ``columns`` as sorted tuples of :func:`cell`."""
    arrays = [cols[c].objects() if isinstance(cols[c], NominalColumn) else cols[c] for c in columns]
    return sorted(zip(*[[cell(v) for v in a] for a in arrays])) if arrays else []


def assert_frames_equal(what: str, spark_frame, local_cols: dict):
    """A Spark frame and the local engine's columns hold the same rows (any order), cell for cell; returns the
    Spark frame cached (the next operation starts from its rows: each comparison runs one step of the plan)."""
    spark_frame = spark_frame.cache()
    CACHED.append(spark_frame)
    columns = spark_frame.columns
    assert sorted(columns) == sorted(local_cols), (what, columns, list(local_cols))
    got, want = spark_rows(spark_frame), local_rows(local_cols, columns)
    assert len(got) == len(want), (what, len(got), len(want))
    for a, b in zip(got, want):
        assert a == b, (what, dict(zip(columns, a)), dict(zip(columns, b)))
    return spark_frame


class TwinGroup:
    """A hop's aggregates recorded by both executors' groups (and by ``more`` groups, :class:`KernelTwin`'s)."""

    def __init__(self, spark_group, local_group, *more):
        self.spark, self.local, self.more = spark_group, local_group, more

    def add(self, *args, **kwargs):
        for g in (self.spark, self.local, *self.more):
            g.add(*args, **kwargs)

    def add_share(self, *args, **kwargs):
        for g in (self.spark, self.local, *self.more):
            g.add_share(*args, **kwargs)

    def __bool__(self):
        return bool(self.local)


class Twin:
    """An executor of :mod:`spark_fr.relational.walk` running each operation on a :class:`SparkExecutor` and a
    :class:`LocalExecutor` and comparing the two results; frames are (Spark frame, local frame) pairs.
    ``calls`` counts the operations compared."""

    small_jobs = 1

    def __init__(self, spark_ex: SparkExecutor, local_ex: LocalExecutor):
        self.spark, self.local = spark_ex, local_ex
        self.schema = local_ex.schema
        self.calls = {}

    def _count(self, op: str) -> None:
        self.calls[op] = self.calls.get(op, 0) + 1

    @staticmethod
    def _side(table, i: int):
        return W.Prepared(table.frame[i], table.attrs, table.fks)

    def column_types(self):
        a, b = self.spark.column_types(), self.local.column_types()
        assert column_kinds(self.schema, a) == column_kinds(self.schema, b)
        self._count("column_types")
        return b

    def key_types(self):
        """The Spark engine's key types (its plan may widen an integer key to its partner's type; the local
        engine's numbers are doubles either way), after checking that both plans compare the same keys as text."""
        a, b = self.spark.key_types(), self.local.key_types()
        text = [{k for k, v in key_plan(self.schema, t).items() if v == TEXT} for t in (a, b)]
        assert text[0] == text[1], (a, b)
        self._count("key_types")
        return a

    def check_declared(self):
        self.spark.check_declared()
        self.local.check_declared()

    def prepare(self, name, keys, values):
        """Both prepared tables, compared but for a generated key that nothing reads (null in Spark, never
        computed: :mod:`spark_fr.relational.row_keys`)."""
        a, b = self.spark.prepare(name, keys, values), self.local.prepare(name, keys, values)
        if self.schema.tables[name].generated_key and name not in keys_read(self.schema):
            a = assert_frames_equal(f"prepare {name}", a.drop("__k"), {c: v for c, v in b.items() if c != "__k"})
        else:
            a = assert_frames_equal(f"prepare {name}", a, b)
        self._count("prepare")
        return a, b

    def table_pass(self, name, table, plan, keys, links, values):
        a = self.spark.table_pass(name, self._side(table, 0), plan, keys, links, values)
        b = self.local.table_pass(name, self._side(table, 1), plan, keys, links, values)
        assert a == b, (name, a, b)
        self._count("table_pass")
        return b

    def nominal_values(self, table, k):
        a, b = self.spark.nominal_values(self._side(table, 0), k), self.local.nominal_values(self._side(table, 1), k)
        assert a == b, (a, b)
        self._count("nominal_values")
        return b

    def groups(self, largest):
        a, b = self.spark.groups(largest), self.local.groups(largest)
        return lambda: TwinGroup(a(), b())

    def _pair(self, op, a, b):
        a = assert_frames_equal(op, a, {"__l": b.link, **b.cols})
        self._count(op)
        return a, b

    def start(self, table, link, columns):
        return self._pair("start", self.spark.start(self._side(table, 0), link, columns),
                          self.local.start(self._side(table, 1), link, columns))

    def aggregate(self, frame, group):
        return self._pair("aggregate", self.spark.aggregate(frame[0], group.spark),
                          self.local.aggregate(frame[1], group.local))

    def join(self, frame, parent, on, link):
        return self._pair("join", self.spark.join(frame[0], self._side(parent, 0), on, link),
                          self.local.join(frame[1], self._side(parent, 1), on, link))

    def fill(self, frame, values):
        return self._pair("fill", self.spark.fill(frame[0], values), self.local.fill(frame[1], values))

    def target(self, name, table, key, kind, columns):
        return (self.spark.target(name, self._side(table, 0), key, kind, columns),
                self.local.target(name, self._side(table, 1), key, kind, columns))

    def attach(self, result, frame, features):
        return (self.spark.attach(result[0], frame[0], features), self.local.attach(result[1], frame[1], features))

    def finish(self, result):
        a, b = self.spark.finish(result[0]), self.local.finish(result[1])
        assert list(a.columns) == list(b.columns)
        assert_frames_equal("finish", a, {c: b[c].to_numpy() for c in b.columns})
        self._count("finish")
        return b


class KernelTwin(Twin):
    """A :class:`Twin` over a Spark executor with ``kernels=False`` whose Spark side aggregates every hop twice,
    each compared with the local engine's: by Spark's ``groupBy`` (the frame the walk goes on with) under
    ``partitions`` shuffle partitions, and by the group the executor chooses with the kernels on (the kernels per
    partition unless a value may be NaN: ``kernel_groups``) under ``kernel_partitions``; so one walk checks both
    ways of aggregating under two partitionings."""

    def __init__(self, spark, spark_ex: SparkExecutor, local_ex: LocalExecutor, partitions: int,
                 kernel_partitions: int):
        super().__init__(spark_ex, local_ex)
        self.conf, self.partitions, self.kernel_partitions = spark.conf, partitions, kernel_partitions
        self.kernel_groups = None

    def groups(self, largest):
        a, b = self.spark.groups(largest), self.local.groups(largest)
        self.spark.kernels = True
        try:
            k = self.kernel_groups = self.spark.groups(largest)
        finally:
            self.spark.kernels = False
        return lambda: TwinGroup(a(), b(), k())

    def aggregate(self, frame, group):
        b = self.local.aggregate(frame[1], group.local)
        self.conf.set("spark.sql.shuffle.partitions", str(self.kernel_partitions))
        try:  # the partitions are read when the hop is planned and when it runs: both here
            assert_frames_equal("aggregate by the kernels", self.spark.aggregate(frame[0], group.more[0]),
                                {"__l": b.link, **b.cols})
        finally:
            self.conf.set("spark.sql.shuffle.partitions", str(self.partitions))
        self._count("aggregate_by_the_kernels")
        return self._pair("aggregate", self.spark.aggregate(frame[0], group.spark), b)


def twin(spark, cfg, tables=None, kernels: bool = True) -> Twin:
    """The two executors of schema ``cfg`` (and the DataFrames ``tables``) as a :class:`Twin`."""
    schema = load_schema(cfg)
    return Twin(SparkExecutor(spark, schema, tables, kernels=kernels), LocalExecutor(schema, tables))


def walk_both(spark, cfg, tables=None, check: bool = True, kernels: bool = True) -> tuple:
    """The whole walk over a :class:`Twin` (every operation compared): (the local result, lineage, the twin)."""
    t = twin(spark, cfg, tables, kernels)
    try:
        frame, lineage, _ = W.walk(t, t.schema, check, None)
    finally:
        release()
    return frame, lineage, t


def walk_kernels_and_groupby(spark, cfg, partitions: int, kernel_partitions: int, check: bool = True) -> KernelTwin:
    """The whole walk over a :class:`KernelTwin`: Spark's ``groupBy`` under ``partitions`` shuffle partitions and
    the kernels under ``kernel_partitions``, every operation compared with the local engine's; returns the twin
    (``spark.sql.shuffle.partitions`` is ``partitions`` after)."""
    schema = load_schema(cfg)
    t = KernelTwin(spark, SparkExecutor(spark, schema, kernels=False), LocalExecutor(schema), partitions,
                   kernel_partitions)
    spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
    try:
        W.walk(t, t.schema, check, None)
    finally:
        release()
    return t


def release() -> None:
    """Unpersist the frames the comparisons cached."""
    while CACHED:
        CACHED.pop().unpersist()


def prepare_both(spark, cfg, tables=None) -> dict:
    """The walk's first steps over a :class:`Twin` for every table (what the sources decide): the column kinds
    and the key plan, each table prepared, and a pass over it measuring every key a join reads, every foreign key
    and numeric or date attribute, and its nominal values; returns {table: the local engine's Prepared}."""
    try:
        return _prepare_both(twin(spark, cfg, tables))
    finally:
        release()


def _prepare_both(t: Twin) -> dict:
    schema = t.schema
    kinds = column_kinds(schema, t.column_types())
    plan = key_plan(schema, t.key_types())
    t.check_declared()
    out = {}
    for name, spec in schema.tables.items():
        table = W.prepare(t, spec, kinds[name], plan)
        values = [(a, kind) for a, (_, kind) in table.attrs.items() if kind != "nominal"]
        t.table_pass(name, table, plan, key_checks(schema, name), spec.foreign_keys, values)
        t.nominal_values(table, schema.frequent_values)
        out[name] = W.Prepared(table.frame[1], table.attrs, table.fks)
    return out
