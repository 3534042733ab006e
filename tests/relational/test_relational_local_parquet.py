"""The local relational engine on Parquet sources against the Spark engine reading the same files: every table
prepared and profiled the same bit for bit (the walk's first operations, compared by tests/relational/relational_twin.py:
column kinds, key plan, prepared keys and values, passes and frequent values; the walk's later operations are
tests/relational/test_relational_executors.py) with typed columns (8/32/64-bit integers with nulls, float32, double, plain
and dictionary strings, booleans, dates), a directory of part files, random tables at depth 2; the inputs it turns
down go to Spark (auto) or fail with a one-line error (engine='local'); the engine choice."""
import datetime as dt
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spark_fr.errors import InputError
from spark_fr.relational import generate_features, load_schema
from spark_fr.relational.local_arrow import read_parquet_local
from spark_fr.relational.local_sources import BYTES_PER_CELL, LOCAL_MAX_CELLS, local_possible
from tests.relational.test_relational_generate import CITY, CUSTOMER, ITEM, ORDERS, PRODUCT, shop_schema
from tests.relational.relational_twin import prepare_both
from tests.relational.test_relational_local import random_tables

D = dt.date
SHOP_TYPES = {  # Arrow types of the shop tables: every kind of column the local engine reads
    "customer": [("cust_id", pa.int32()), ("age", pa.float32()), ("segment", pa.dictionary(pa.int8(), pa.string())),
                 ("since", pa.date32()), ("label", pa.string()), ("city_id", pa.int64()), ("referrer_id", pa.int64())],
    "city": [("city_id", pa.int64()), ("pop", pa.float64()), ("region", pa.large_string())],
    "orders": [("order_id", pa.int64()), ("cust_id", pa.int32()), ("amount", pa.float64()),
               ("kind", pa.dictionary(pa.int32(), pa.string())), ("day", pa.date32())],
    "item": [("item_id", pa.int64()), ("order_id", pa.int64()), ("product_id", pa.int8()), ("price", pa.float64())],
    "product": [("product_id", pa.int8()), ("category", pa.string())],
}
SHOP = {"customer": CUSTOMER, "city": CITY, "orders": ORDERS, "item": ITEM, "product": PRODUCT}


def write_parquet(path, rows, fields, parts: int = 1):
    """``rows`` as Parquet at ``path`` (a file, or a directory of ``parts`` files)."""
    names = [n for n, _ in fields]
    cols = list(zip(*rows)) if rows else [[] for _ in names]
    arrays = []
    for (name, t), values in zip(fields, cols):
        if pa.types.is_dictionary(t):
            arrays.append(pa.array(list(values), pa.string()).dictionary_encode().cast(t))
        else:
            arrays.append(pa.array(list(values), t))
    table = pa.Table.from_arrays(arrays, names=names)
    if parts == 1:
        pq.write_table(table, path)
        return
    path.mkdir()
    step = -(-table.num_rows // parts)
    for i in range(parts):
        pq.write_table(table.slice(i * step, step), path / f"part-{i:05d}.parquet")
    (path / "_SUCCESS").write_text("")


def shop_parquet(cfg, folder, parts=None):
    cfg = json.loads(json.dumps(cfg))
    for name, spec in cfg["tables"].items():
        path = folder / f"{name}.parquet"
        write_parquet(path, SHOP[name], SHOP_TYPES[name], (parts or {}).get(name, 1))
        spec["source"] = str(path)
    return cfg


def test_shop_tables_typed_parquet_identical(spark, tmp_path):
    cfg = shop_parquet(shop_schema(), tmp_path, parts={"orders": 3})
    assert local_possible(load_schema(cfg))
    prepared = prepare_both(spark, cfg)
    assert len(prepared["orders"].frame["__k"]) == len(ORDERS)  # the three part files
    loc = generate_features(None, cfg, engine="local")
    assert len(loc.pandas) == len(CUSTOMER)
    # the frequent values of a dictionary column, a nominal float32 and dates went through as Spark reads them
    assert any("kind" in f for f in loc.features) and any("since" in f for f in loc.features)


def test_shop_with_conditions_booleans_and_nominal_integers_identical(spark, tmp_path):
    cfg = shop_schema(max_depth=2, frequent_values=3, aggregates={
        "numeric": ["count", "count_distinct", "mean", "min", "max", "sum", "std"],
        "nominal": ["count", "count_distinct", "mode", "share"], "date": ["count", "min", "max", "mean"],
        "conditional": ["count", "sum", "mean", "min", "max"],
        "outer": ["mean", "min", "max", "sum", "std", "count_distinct"], "outer_nominal": ["mode", "count_distinct"]})
    cfg["tables"]["item"]["types"] = {"product_id": "nominal"}  # an 8-bit integer as a nominal value: "3"
    cfg = shop_parquet(cfg, tmp_path)
    flag = [(r[0], None if i == 2 else i % 3 == 0) for i, r in enumerate(ORDERS)]
    write_parquet(tmp_path / "orders.parquet",
                  [r + (f[1],) for r, f in zip(ORDERS, flag)], SHOP_TYPES["orders"] + [("paid", pa.bool_())])
    prepare_both(spark, cfg)
    loc = generate_features(None, cfg, engine="local")
    assert any("paid" in f for f in loc.features)


@pytest.mark.parametrize("seed", [2])
def test_random_tables_parquet_identical(spark, tmp_path, seed):
    cfg, rows, columns = random_tables(seed)
    types = {"t": [pa.int64(), pa.string(), pa.float64(), pa.string(), pa.date32(), pa.int64(), pa.int16()],
             "child": [pa.int64(), pa.int64(), pa.float64(), pa.float64(), pa.string(), pa.date32(), pa.float64()],
             "grand": [pa.int64(), pa.int32(), pa.float64(), pa.dictionary(pa.int16(), pa.string())],
             "other": [pa.int64(), pa.float64(), pa.string()]}
    cfg = json.loads(json.dumps(cfg))
    for name, spec in cfg["tables"].items():
        path = tmp_path / f"{name}.parquet"
        write_parquet(path, rows[name], list(zip(columns[name], types[name])), parts=2 if name == "grand" else 1)
        spec["source"] = str(path)
    prepare_both(spark, cfg)


def test_read_parquet_local_types(tmp_path):
    rows = [(1, 2.5, "a", True, D(2020, 1, 2)), (2, None, None, None, None), (-3, -0.0, "b", False, D(1969, 12, 31))]
    fields = [("i", pa.int16()), ("x", pa.float32()), ("s", pa.dictionary(pa.int8(), pa.string())),
              ("b", pa.bool_()), ("d", pa.date32())]
    write_parquet(tmp_path / "t.parquet", rows, fields)
    t = read_parquet_local(str(tmp_path / "t.parquet"))
    assert t.rows == 3
    assert t.types == {"i": "long", "x": "double", "s": "string", "b": "boolean", "d": "date"}
    assert t.columns["i"].dtype == np.int64 and list(t.columns["i"]) == [1, 2, -3]
    assert np.isnan(t.columns["x"][1]) and np.signbit(t.columns["x"][2])
    assert list(t.columns["s"]) == ["a", None, "b"]
    assert list(t.columns["b"]) == ["true", None, "false"]
    assert str(t.columns["d"][0]) == "2020-01-02" and np.isnat(t.columns["d"][1])
    assert str(t.columns["d"][2]) == "1969-12-31"


def _one_table(tmp_path, rows, fields, name="a.parquet"):
    write_parquet(tmp_path / name, rows, fields)
    return {"tables": {"a": {"key": "k", "source": str(tmp_path / name)}}, "target": {"table": "a", "column": "y"},
            "aggregates": {"numeric": ["mean"]}}


@pytest.mark.parametrize("case", ["nan", "timestamp", "decimal", "huge integer"])
def test_inputs_the_local_engine_turns_down_go_to_spark(spark, tmp_path, case):
    k, y = ("k", pa.int64()), ("y", pa.string())
    rows, fields = {
        "nan": ([(1, "p", 1.0), (2, "q", float("nan"))], [k, y, ("x", pa.float64())]),
        "timestamp": ([(1, "p", dt.datetime(2020, 1, 1, 3))], [k, y, ("x", pa.timestamp("us", tz="UTC"))]),
        "decimal": ([(1, "p", 1)], [k, y, ("x", pa.decimal128(10, 2))]),
        "huge integer": ([(1, "p", 2 ** 60 + 1)], [k, y, ("x", pa.int64())]),
    }[case]
    if case == "decimal":
        import decimal

        rows = [(1, "p", decimal.Decimal("1.25"))]
    cfg = _one_table(tmp_path, rows, fields)
    assert local_possible(load_schema(cfg))  # the footers look fine: the values decide
    got = generate_features(spark, cfg)
    assert got.engine == "spark"
    with pytest.raises(InputError, match=r"engine='local' cannot reproduce this input exactly"):
        generate_features(None, cfg, engine="local")


def test_engine_choice_for_parquet(tmp_path):
    rows = [(i, "p" if i % 2 else "q", float(i)) for i in range(10)]
    fields = [("k", pa.int64()), ("y", pa.string()), ("x", pa.float64())]
    cfg = _one_table(tmp_path, rows, fields)
    schema = load_schema(cfg)
    assert local_possible(schema)
    assert not local_possible(schema, max_cells=30)  # 10 rows x 3 columns: too many
    assert local_possible(schema, max_cells=31)
    assert generate_features(None, cfg).engine == "local"
    assert not local_possible(schema, memory=2 * 30 * BYTES_PER_CELL - 1)  # the driver's memory decides too
    assert local_possible(schema, memory=2 * 30 * BYTES_PER_CELL)
    assert LOCAL_MAX_CELLS * BYTES_PER_CELL <= 20e9  # the cap fits a 24 GB machine
    part = tmp_path / "parted"
    (part / "region=north").mkdir(parents=True)
    pq.write_table(pa.table({"k": [1], "y": ["p"], "x": [1.0]}), part / "region=north" / "f.parquet")
    cfg["tables"]["a"]["source"] = str(part)
    assert not local_possible(load_schema(cfg))  # partition directories: Spark's discovery


def test_a_damaged_file_is_a_one_line_error_naming_it(tmp_path):
    cfg = _one_table(tmp_path, [(1, "p", 1.0)], [("k", pa.int64()), ("y", pa.string()), ("x", pa.float64())])
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 not really parquet")
    cfg["tables"]["a"]["source"] = str(bad)
    assert not local_possible(load_schema(cfg))  # auto: Spark's reader reports it
    with pytest.raises(InputError, match=r"bad\.parquet: not a readable Parquet file") as e:
        generate_features(None, cfg, engine="local")
    assert "\n" not in str(e.value)


def test_an_empty_table_gives_an_empty_feature_table(tmp_path):
    cfg = _one_table(tmp_path, [], [("k", pa.int64()), ("y", pa.string()), ("x", pa.float64())])
    got = generate_features(None, cfg, engine="local")
    assert got.pandas.shape == (0, 3) and got.features == ["x"]
