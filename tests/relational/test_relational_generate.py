"""Relational feature generation against a slow pandas reference (tests/relational/relational_reference.py) on small
hand-made tables: every aggregate, to-one and to-many hops, empty groups, nulls, dangling keys, an n-n link
table, a self-reference, chains of two to-many hops, conditional aggregates and shares; hostile names."""
import datetime as dt
import re

import pandas as pd
import pytest
from pyspark.sql import types as T

from tests.relational.relational_reference import Reference, compare
from spark_fr.relational import generate_features as _generate_features
from spark_fr.relational import load_schema
from spark_fr.relational.paths import enumerate_paths


def generate_features(*args, **kwargs):
    """The Spark engine's generation: this module checks it against the pandas reference (the local engine's
    parity with it is tests/relational/test_relational_local*.py). DataFrame inputs go to the local engine under
    ``engine='auto'`` since it reads them (Arrow collect), so the engine is named here."""
    kwargs.setdefault("engine", "spark")
    return _generate_features(*args, **kwargs)

D = dt.date
CUSTOMER = [  # cust_id, age, segment, since, label, city_id, referrer_id
    (1, 30.0, "x", D(2020, 1, 5), "yes", 10, None),
    (2, None, "y", D(2019, 6, 1), "no", 10, 1),
    (3, 45.0, "x", None, "yes", 20, 1),   # no orders
    (4, 52.0, None, D(2021, 3, 9), "no", 99, 2),  # dangling city
    (5, 23.0, "y", D(2018, 2, 2), None, None, 9),  # no city, dangling referrer, missing label
]
CITY = [(10, 1000.0, "north"), (20, 250.0, "south"), (30, 80.0, "north")]
ORDERS = [  # order_id, cust_id, amount, kind, day
    (100, 1, 10.0, "a", D(2022, 1, 1)),
    (101, 1, 20.0, "b", D(2022, 1, 3)),
    (102, 1, None, "a", D(2022, 2, 1)),
    (103, 2, 5.0, "c", D(2022, 3, 1)),
    (104, 2, 5.0, None, None),
    (105, 4, 7.5, "a", D(2022, 4, 1)),
    (106, 5, 1.0, "c", D(2022, 5, 1)),
    (107, 5, 3.0, "b", D(2022, 5, 2)),
    (108, 8, 100.0, "a", D(2022, 6, 1)),  # dangling customer
]
ITEM = [  # item_id, order_id, product_id, price
    (1000, 100, 1, 2.0), (1001, 100, 2, 4.0), (1002, 100, 1, 2.0),
    (1003, 101, 3, 10.0),
    (1004, 103, 2, None), (1005, 103, 77, 1.5),  # unknown product
    (1006, 105, 3, 8.0), (1007, 106, 1, 0.5), (1008, 107, 2, 3.0),
    # orders 102 and 104 have no items
]
PRODUCT = [(1, "food"), (2, "tools"), (3, "food")]

SCHEMAS = {
    "customer": "cust_id int, age double, segment string, since date, label string, city_id int, referrer_id int",
    "city": "city_id int, pop double, region string",
    "orders": "order_id int, cust_id int, amount double, kind string, day date",
    "item": "item_id int, order_id int, product_id int, price double",
    "product": "product_id int, category string",
}
ROWS = {"customer": CUSTOMER, "city": CITY, "orders": ORDERS, "item": ITEM, "product": PRODUCT}
KEYS = {"customer": "cust_id", "city": "city_id", "orders": "order_id", "item": "item_id", "product": "product_id"}


def shop_schema(**extra):
    cfg = {
        "tables": {
            "customer": {"key": "cust_id", "foreign_keys": {"city_id": "city"}, "types": {"referrer_id": "id"}},
            "city": {"key": "city_id"},
            "orders": {"key": "order_id", "foreign_keys": {"cust_id": "customer"}},
            "item": {"key": "item_id", "foreign_keys": {"order_id": "orders", "product_id": "product"}},
            "product": {"key": "product_id"},
        },
        "target": {"table": "customer", "column": "label"},
        "max_depth": 3,
        "frequent_values": 2,
    }
    cfg.update(extra)
    return cfg


@pytest.fixture(scope="module")
def shop(spark):
    frames = {n: spark.createDataFrame(ROWS[n], SCHEMAS[n]) for n in ROWS}
    pdfs = {n: pd.DataFrame(ROWS[n], columns=[c.split()[0] for c in SCHEMAS[n].split(", ")]) for n in ROWS}
    return frames, Reference(pdfs, KEYS)


@pytest.fixture(scope="module")
def generated(spark, shop):
    frames, _ = shop
    return generate_features(spark, shop_schema(), frames, engine="spark")  # the Spark engine (DataFrames: auto is local)


@pytest.fixture(scope="module")
def values(generated):
    return generated.frame.toPandas()


def test_every_feature_equals_the_pandas_reference(generated, values, shop):
    _, ref = shop
    checked = compare(generated, ref, "customer", "cust_id", pdf=values)
    assert checked == len(generated.lineage) * len(CUSTOMER)


def test_self_reference_both_ways(spark, shop):
    frames, ref = shop
    schema = {"tables": {"customer": {"key": "cust_id", "foreign_keys": {"referrer_id": "customer"}}},
              "target": {"table": "customer", "column": "label"}, "max_depth": 2,
              "aggregates": {"numeric": ["count", "mean"], "nominal": ["mode", "share"], "date": ["max"],
                             "conditional": ["sum"]}}
    g = generate_features(spark, schema, {"customer": frames["customer"]}, check=False, engine="spark")
    labels = {tuple(h.label for h in lin.path) for lin in g.lineage}
    # to-one twice, to-many twice; never one hop and straight back
    assert labels == {(), ("referrer_id",), ("customer_by_referrer_id",), ("referrer_id", "referrer_id"),
                      ("customer_by_referrer_id", "customer_by_referrer_id")}
    assert {"referrer_id__age", "referrer_id__referrer_id__age", "customer_by_referrer_id__count",
            "customer_by_referrer_id__customer_by_referrer_id__count__mean"} <= set(g.features)
    compare(g, ref, "customer", "cust_id")


def test_frame_layout_and_rows(generated):
    cols = generated.frame.columns
    assert cols[:2] == ["cust_id", "label"]
    assert cols[2:] == generated.features
    assert len(set(c.lower() for c in cols)) == len(cols)
    assert all(re.fullmatch(r"[A-Za-z0-9_]+", c) for c in generated.features)
    assert generated.frame.count() == len(CUSTOMER)


def test_expected_features_exist(generated):
    names = set(generated.features)
    expected = {
        # depth 0 and to-one hops (identity); the target, key and foreign keys are not features
        "age", "segment", "since", "city__pop", "city__region",
        # one to-many hop: every aggregate, shares and conditions on the 2 most frequent values
        "orders__count", "orders__amount__count_distinct", "orders__amount__mean", "orders__amount__min",
        "orders__amount__max", "orders__amount__sum", "orders__amount__std", "orders__kind__mode",
        "orders__kind__count_distinct", "orders__kind__share_a", "orders__kind__share_b",
        "orders__day__mean", "orders__day__max",
        "orders__count__kind_a", "orders__amount__mean__kind_a", "orders__amount__sum__kind_b",
        # chains: two to-many hops (outer mean/min/max), the n-n link to product, a self-reference
        "orders__item__count__mean", "orders__item__price__sum__max", "orders__item__price__std__min",
        "orders__item__product__category__mode__mode", "orders__item__product__count__mean__category_food",
        "orders__item__product__category__share_food__max",
    }
    assert expected <= names, sorted(expected - names)
    assert not {"label", "cust_id", "city_id", "referrer_id"} & names
    assert not [n for n in names if "label" in n]  # the target column is never aggregated
    # 'c' ties with 'b' (2 orders each): the smaller value wins; 'share' of c is not generated
    assert "orders__kind__share_c" not in names
    lin = generated.lineage_of("orders__item__price__sum__max")
    assert lin.aggregates == ("max", "sum") and lin.attribute == "price" and lin.table == "item"
    assert [h.label for h in lin.path] == ["orders", "item"] and [h.direction for h in lin.path] == ["many", "many"]
    assert lin.relations == {"orders.cust_id->customer", "item.order_id->orders", "item.price"}
    cond = generated.lineage_of("orders__amount__mean__kind_a")
    assert cond.condition == ("kind", "a") and cond.relations == {"orders.cust_id->customer", "orders.amount",
                                                                   "orders.kind"}
    assert generated.lineage_of("orders__count").attribute is None


def test_empty_groups_counts_zero_others_missing(values):
    pdf = values.set_index("cust_id")
    assert pdf.at[3, "orders__count"] == 0 and pdf.at[3, "orders__amount__count_distinct"] == 0
    assert pd.isna(pdf.at[3, "orders__amount__mean"]) and pd.isna(pdf.at[3, "orders__kind__mode"])
    assert pd.isna(pdf.at[3, "orders__item__count__mean"])
    # customer 1: items per order 3, 1, 0 (order 102 has none)
    assert pdf.at[1, "orders__item__count__mean"] == pytest.approx(4 / 3)
    assert pdf.at[1, "orders__item__count__min"] == 0
    assert pd.isna(pdf.at[4, "city__pop"])  # dangling city
    assert pdf.at[2, "orders__amount__count_distinct"] == 1  # 5.0 twice


def test_paths_never_walk_straight_back(spark, shop):
    schema = load_schema(shop_schema())
    paths = enumerate_paths(schema)
    for p in paths:
        for a, b in zip(p.hops, p.hops[1:]):
            assert not (a.link == b.link and a.direction != b.direction), p
    labels = [tuple(h.label for h in p.hops) for p in paths]
    assert labels[0] == () and len(labels) == len(set(labels))
    assert [len(x) for x in labels] == sorted(len(x) for x in labels)
    assert labels == [(), ("city",), ("orders",), ("orders", "item"), ("orders", "item", "product")]
    assert labels == [tuple(h.label for h in p.hops) for p in enumerate_paths(schema)]  # deterministic


def test_depth_and_aggregate_options(spark, shop):
    frames, ref = shop
    g = generate_features(spark, shop_schema(max_depth=1, aggregates={
        "numeric": ["sum"], "nominal": ["mode"], "date": [], "conditional": ["max"]}), frames, check=False)
    assert all(len(l.path) <= 1 for l in g.lineage)
    agg_names = {l.aggregates for l in g.lineage if l.path and l.path[0].direction == "many"}
    assert agg_names == {("sum",), ("mode",), ("max",)}
    assert "orders__count" not in g.features  # count not asked for
    compare(g, ref, "customer", "cust_id")


def test_hostile_table_and_column_names(spark):
    evil_col = "a`; DROP TABLE x; --"
    evil_table = "we\"ird`tab' le"
    tgt = spark.createDataFrame([(1, "p", 1.0), (2, "q", None), (3, "p", 2.0)],
                                T.StructType([T.StructField("id.x", T.IntegerType()), T.StructField("y", T.StringType()),
                                              T.StructField(evil_col, T.DoubleType())]))
    child = spark.createDataFrame([(1, 1, 2.0, "u"), (2, 1, 4.0, "v"), (3, 2, 1.0, "u")],
                                  T.StructType([T.StructField("k`", T.IntegerType()),
                                                T.StructField("fk'", T.IntegerType()),
                                                T.StructField(evil_col, T.DoubleType()),
                                                T.StructField("c c", T.StringType())]))
    schema = {"tables": {"t.1": {"key": "id.x"},
                         evil_table: {"key": "k`", "foreign_keys": {"fk'": "t.1"}}},
              "target": {"table": "t.1", "column": "y"}, "max_depth": 1}
    g = generate_features(spark, schema, {"t.1": tgt, evil_table: child}, engine="spark")
    assert g.frame.columns[:2] == ["id.x", "y"]
    assert all(re.fullmatch(r"[A-Za-z0-9_]+", c) for c in g.features)
    assert "a___DROP_TABLE_x____" in g.features
    assert "we_ird_tab__le__a___DROP_TABLE_x______mean" in g.features
    ref = Reference({"t.1": tgt.toPandas(), evil_table: child.toPandas()}, {"t.1": "id.x", evil_table: "k`"})
    assert compare(g, ref, "t.1", "id.x") == 3 * len(g.features)
    assert spark.catalog.tableExists("x") is False


def test_name_collisions_are_deduplicated(spark):
    a = spark.createDataFrame([(1, 0, 1.0)], "k int, y int, `B__C__MEAN` double")
    b = spark.createDataFrame([(1, 1, 2.0)], "k int, fk int, c double")
    schema = {"tables": {"a": {"key": "k"}, "b": {"key": "k", "foreign_keys": {"fk": "a"}}},
              "target": {"table": "a", "column": "y"}, "max_depth": 1,
              "aggregates": {"numeric": ["mean"]}}
    g = generate_features(spark, schema, {"a": a, "b": b}, engine="spark")
    assert g.features == ["B__C__MEAN", "b__c__mean_2"]
    assert g.lineage_of("b__c__mean_2").path[0].table == "b"
