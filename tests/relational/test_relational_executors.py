"""The relational walk's two executors, operation by operation: every operation the walk runs (prepare, table pass,
nominal values, start, aggregate, join, fill, target, attach, finish) run by the Spark engine's executor and by the
local engine's on the same inputs, and compared bit for bit before the walk goes on (tests/relational/relational_twin.py):
random tables at depth 2 (nulls, ties, signed zeros, subnormal to 1.5e307 values, dates, nominal integers, dangling
and missing keys), the shop schema at depth 3 with every aggregate, conditions and shares, a self-reference,
reduced aggregates, hostile names; Spark's own groupBy and the kernels per partition (any partitioning) against the
arrays. The features of a whole run on real data: tests/relational/test_relational_local.py (financial) and the golden
rankings (both engines)."""
import pytest

from spark_fr.relational.partition_hop import PartitionHop
from tests.relational.relational_twin import walk_both, walk_kernels_and_groupby
from tests.relational.test_relational_generate import shop_schema
from tests.relational.test_relational_local import random_tables, shop_files, with_sources

#: every operation of a walk that aggregates, joins and fills (the profile's and the result's included)
OPERATIONS = {"column_types", "key_types", "prepare", "table_pass", "nominal_values", "start", "aggregate", "join",
              "fill", "finish"}


@pytest.fixture
def shuffle_partitions(spark):
    """Set ``spark.sql.shuffle.partitions`` for one test; restored after it."""
    before = spark.conf.get("spark.sql.shuffle.partitions")
    yield lambda n: spark.conf.set("spark.sql.shuffle.partitions", str(n))
    spark.conf.set("spark.sql.shuffle.partitions", before)


@pytest.mark.parametrize("seed", [1])  # seed 2's tables: the groupBy / kernels test below
def test_every_operation_on_random_tables(spark, tmp_path, seed):
    cfg, rows, columns = random_tables(seed)
    frame, lineage, twin = walk_both(spark, with_sources(cfg, tmp_path, rows, columns))
    assert OPERATIONS <= set(twin.calls), twin.calls
    assert list(frame.columns[2:]) == [f.feature for f in lineage]


def test_every_operation_on_the_shop_schema(spark, tmp_path):
    frame, lineage, twin = walk_both(spark, shop_files(shop_schema(), tmp_path))
    assert OPERATIONS <= set(twin.calls) and twin.calls["aggregate"] >= 4, twin.calls
    assert "orders__item__product__category__mode__mode" in frame.columns


def test_every_operation_with_conditions_and_shares_everywhere(spark, tmp_path):
    cfg = shop_schema(max_depth=1, frequent_values=3, aggregates={  # outer aggregates: the random tables
        "numeric": ["count", "count_distinct", "mean", "min", "max", "sum", "std"],
        "nominal": ["count", "count_distinct", "mode", "share"], "date": ["count", "min", "max", "mean", "std"],
        "conditional": ["count", "sum", "mean", "min", "max"],
        "outer": ["mean", "min", "max", "sum", "std", "count_distinct"], "outer_nominal": ["mode", "count_distinct"]})
    frame, _, twin = walk_both(spark, shop_files(cfg, tmp_path))
    assert {"orders__kind__share_c", "orders__amount__sum__kind_a"} <= set(frame.columns)


def test_every_operation_on_a_self_reference_and_reduced_aggregates(spark, tmp_path):
    cfg = {"tables": {"customer": {"key": "cust_id", "foreign_keys": {"referrer_id": "customer"}}},
           "target": {"table": "customer", "column": "label"}, "max_depth": 2,
           "aggregates": {"numeric": ["count", "mean"], "nominal": ["mode", "share"], "date": ["max"],
                          "conditional": ["sum"]}}
    frame, _, _ = walk_both(spark, shop_files(cfg, tmp_path), check=False)
    assert "customer_by_referrer_id__customer_by_referrer_id__count__mean" in frame.columns
    cfg = shop_schema(max_depth=1, aggregates={"numeric": ["sum"], "nominal": ["mode"], "date": [],
                                               "conditional": ["max"]})
    frame, _, _ = walk_both(spark, shop_files(cfg, tmp_path), check=False)
    assert "orders__count" not in frame.columns and "orders__amount__max__kind_a" in frame.columns


def test_every_operation_with_hostile_names_and_collisions(spark, tmp_path):
    evil_col = "a`; DROP TABLE x; --"
    cfg = {"tables": {"t.1": {"key": "id.x", "types": {"y": "nominal"}},
                      "we\"ird`tab' le": {"key": "k`", "foreign_keys": {"fk'": "t.1"}}},
           "target": {"table": "t.1", "column": "y"}, "max_depth": 1}
    rows = {"t.1": [(1, "p", 1.0), (2, "q", None), (3, "p", 2.0)],
            "we\"ird`tab' le": [(1, 1, 2.0, "u"), (2, 1, 4.0, "v"), (3, 2, 1.0, "u")]}
    columns = {"t.1": ["id.x", "y", evil_col], "we\"ird`tab' le": ["k`", "fk'", evil_col, "c c"]}
    walk_both(spark, with_sources(cfg, tmp_path, rows, columns))
    cfg = {"tables": {"a": {"key": "k"}, "b": {"key": "k", "foreign_keys": {"fk": "a"}}},
           "target": {"table": "a", "column": "y"}, "max_depth": 1, "aggregates": {"numeric": ["mean"]}}
    frame, _, _ = walk_both(spark, with_sources(cfg, tmp_path, {"a": [(1, 0, 1.0)], "b": [(1, 1, 2.0)]},
                                                {"a": ["k", "y", "B__C__MEAN"], "b": ["k", "fk", "c"]}))
    assert list(frame.columns[2:]) == ["B__C__MEAN", "b__c__mean_2"]


def test_spark_groupby_and_the_kernels_equal_the_arrays_for_any_partitioning(spark, tmp_path, shuffle_partitions):
    """A hop aggregated by Spark's own groupBy (used when a value may be NaN) and by the kernels per partition, each
    against the arrays: one partition for the kernels (every group together), five for the groupBy (and the walk's
    other operations); both in one walk (:class:`KernelTwin`)."""
    cfg, rows, columns = random_tables(2)
    shuffle_partitions(2)  # restored after
    twin = walk_kernels_and_groupby(spark, with_sources(cfg, tmp_path, rows, columns), partitions=5,
                                    kernel_partitions=1, check=False)
    assert twin.kernel_groups is PartitionHop
    assert twin.calls["aggregate"] == twin.calls["aggregate_by_the_kernels"] >= 3, twin.calls
