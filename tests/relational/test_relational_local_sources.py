"""The local engine on Delta tables and on the caller's DataFrames, and generated keys, against the Spark engine:
every table prepared and profiled the same bit for bit (the walk's first operations, compared by
tests/relational/relational_twin.py; its later operations: tests/relational/test_relational_executors.py) from a partitioned Delta table
with a null partition and a column added by a later commit, DataFrames of every column type it reads; generated
keys numbering the rows as read in both engines (a keyless target in a directory of CSV files that Spark splits
into many blocks, a foreign key into it, a keyless link table, DataFrames in several partitions, Parquet and Delta
files); the engine choice and its reasons; under Spark Connect, whole runs of both engines."""
import datetime as dt
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from spark_fr.relational import generate_features, load_schema
from spark_fr.relational.local_sources import choose_engine
from tests.relational.test_relational_generate import CITY, CUSTOMER, ITEM, ORDERS, PRODUCT, SCHEMAS, shop_schema
from tests.relational.relational_twin import prepare_both
from tests.relational.test_relational_local_parquet import SHOP_TYPES

SHOP = {"customer": CUSTOMER, "city": CITY, "orders": ORDERS, "item": ITEM, "product": PRODUCT}


def write_delta(path, rows, fields, partition_by=None, mode="overwrite", schema_mode=None):
    from deltalake import write_deltalake

    names = [n for n, _ in fields]
    cols = list(zip(*rows)) if rows else [[] for _ in names]
    table = pa.Table.from_arrays([pa.array(list(v), t) for (_, t), v in zip(fields, cols)], names=names)
    write_deltalake(str(path), table, partition_by=partition_by, mode=mode, schema_mode=schema_mode)


def test_delta_tables_identical(spark, tmp_path):
    pytest.importorskip("deltalake")
    cfg = json.loads(json.dumps(shop_schema()))
    for name, spec in cfg["tables"].items():
        path = tmp_path / name
        fields = [(n, pa.string() if pa.types.is_dictionary(t) else t) for n, t in SHOP_TYPES[name]]
        if name == "orders":  # partitioned by kind (one null partition); a later commit adds a column
            write_delta(path, SHOP[name][:5], fields, partition_by=["kind"])
            write_delta(path, [r + (0.5 * i,) for i, r in enumerate(SHOP[name][5:])],
                        fields + [("discount", pa.float64())], partition_by=["kind"], mode="append",
                        schema_mode="merge")
        else:
            write_delta(path, SHOP[name], fields)
        spec["source"] = str(path)
    assert choose_engine(load_schema(cfg)).engine == "local"
    prepared = prepare_both(spark, cfg)
    assert "discount" in prepared["orders"].attrs  # the later commit's column: null in the first commit's rows
    assert any("discount" in f for f in generate_features(None, cfg, engine="local").features)


def test_dataframes_identical(spark, tmp_path):
    frames = {n: spark.createDataFrame(SHOP[n], SCHEMAS[n]) for n in SHOP}
    frames["orders"] = frames["orders"].withColumn("paid", frames["orders"]["amount"] > 6)
    choice = choose_engine(load_schema(shop_schema()), frames)
    assert choice.engine == "local", choice.reason
    assert generate_features(spark, shop_schema(), frames).engine == "local"
    prepare_both(spark, shop_schema(), frames)
    ts = frames["city"].withColumn("at", frames["city"]["pop"].cast("timestamp"))
    assert "timestamp" in choose_engine(load_schema(shop_schema()), {**frames, "city": ts}).reason


# --- generated keys ---------------------------------------------------------------------------------------------


def keyless_schema(source: dict) -> dict:
    """A keyless target (visits) with a foreign key into it (notes.visit_row: its row position), a keyless link
    table between visits and tags, and a tag table."""
    return {"tables": {"visit": {**source["visit"], "types": {"label": "nominal"}},
                       "note": {**source["note"], "key": "note_id", "foreign_keys": {"visit_id": "visit"}},
                       "link": {**source["link"], "foreign_keys": {"visit_id": "visit", "tag_id": "tag"}},
                       "tag": {**source["tag"], "key": "tag_id"}},
            "target": {"table": "visit", "column": "label"}, "max_depth": 2,
            "aggregates": {"numeric": ["count", "mean", "sum"], "nominal": ["mode", "count_distinct"]}}


def keyless_rows(seed=5, n=60):
    rng = np.random.default_rng(seed)
    visit = pd.DataFrame({"label": rng.choice(["a", "b"], n), "x": np.round(rng.normal(0, 10, n), 2)})
    note = pd.DataFrame({"note_id": np.arange(3 * n), "visit_id": rng.integers(0, n + 2, 3 * n),
                         "w": np.round(rng.random(3 * n), 3)})
    link = pd.DataFrame({"visit_id": rng.integers(0, n, 2 * n), "tag_id": rng.integers(0, 5, 2 * n)})
    link = pd.concat([link, link.iloc[:3]])  # the same pair twice: a keyless table may repeat rows
    tag = pd.DataFrame({"tag_id": np.arange(5), "name": ["p", "q", "r", "p", "s"]})
    return {"visit": visit, "note": note, "link": link, "tag": tag}


def _check_positions(loc, visit):
    """The visits' generated ids number ``visit`` (the table as read) from 0 (``loc``: a local engine's run)."""
    ids = loc.pandas["visit_id"].to_numpy()
    assert ids.dtype.kind in "if" and sorted(ids.tolist()) == list(range(len(visit)))
    # the id is the row's position: its attribute is the one at that row of the files as read
    assert np.array_equal(loc.pandas.sort_values("visit_id")["x"].to_numpy(), visit["x"].to_numpy())


def test_generated_keys_of_csv_files_split_into_blocks_identical(spark, tmp_path):
    frames = keyless_rows()
    source = {}
    for name, df in frames.items():
        folder = tmp_path / name
        folder.mkdir()
        third = -(-len(df) // 3)
        for i in range(3):  # a directory of files (sorted by name), the middle one alone in its order
            df.iloc[i * third:(i + 1) * third].to_csv(folder / f"part-{i}.csv", index=False)
        source[name] = {"source": str(folder), "format": "csv"}
    cfg = keyless_schema(source)
    conf = {k: spark.conf.get(k) for k in ("spark.sql.files.maxPartitionBytes", "spark.sql.files.openCostInBytes")}
    spark.conf.set("spark.sql.files.maxPartitionBytes", "200")  # several blocks per file, packed largest first
    spark.conf.set("spark.sql.files.openCostInBytes", "0")
    try:
        prepare_both(spark, cfg)  # generated keys: the Spark engine's numbering from the blocks is the local one's
    finally:
        for k, v in conf.items():
            spark.conf.set(k, v)
    loc = generate_features(None, cfg, engine="local")
    _check_positions(loc, frames["visit"])
    assert any(f.startswith("link__") for f in loc.features)


def test_generated_keys_of_parquet_delta_and_dataframes_identical(spark, tmp_path):
    pytest.importorskip("deltalake")
    frames = keyless_rows(seed=8, n=40)
    source = {}
    for name, df in frames.items():
        if name == "visit":  # Delta, two commits
            from deltalake import write_deltalake

            write_deltalake(str(tmp_path / name), df.iloc[:25])
            write_deltalake(str(tmp_path / name), df.iloc[25:], mode="append")
        else:  # Parquet directories of two files
            (tmp_path / name).mkdir()
            df.iloc[: len(df) // 2].to_parquet(tmp_path / name / "a.parquet")
            df.iloc[len(df) // 2:].to_parquet(tmp_path / name / "b.parquet")
        source[name] = {"source": str(tmp_path / name)}
    cfg = keyless_schema(source)
    cfg["tables"]["visit"]["format"] = "delta"
    # a Delta table as read: its snapshot's files sorted by path (file names are random: not the commit order)
    from deltalake import DeltaTable

    files = sorted(DeltaTable(str(tmp_path / "visit")).file_uris())
    assert len(files) == 2
    prepare_both(spark, cfg)
    _check_positions(generate_features(None, cfg, engine="local"), pd.concat([pd.read_parquet(f) for f in files]))
    # DataFrames in several partitions: numbered in the frame's order
    given = {n: spark.createDataFrame(df) for n, df in frames.items()}  # in the session's 2 partitions
    assert given["visit"].rdd.getNumPartitions() > 1
    keyless = keyless_schema({n: {} for n in frames})
    prepare_both(spark, keyless, given)
    _check_positions(generate_features(spark, keyless, given, engine="local"), frames["visit"])


def test_dataframes_reading_parquet_files_identical(spark, tmp_path):
    """DataFrames that are plain ``spark.read.parquet`` scans are read from their files (no Spark job), and the
    features are the Spark engine's on the same DataFrames bit for bit. A table that needs a generated key is
    read so only from one file: the keyless visits are three files whose sizes do not follow their paths
    (Spark's partition gives them largest first), so they are collected, and numbered as Spark gives them."""
    from spark_fr.relational.local_arrow import parquet_scan_path

    frames = keyless_rows(seed=13, n=60)
    paths = {}
    for name, df in frames.items():
        if name in ("visit", "note"):  # directories: visit keyless (numbered), note keyed
            folder = tmp_path / name
            folder.mkdir()
            cuts = [0, 5, 45, len(df)]  # a: 5 rows, b: 40, c: 15 (visit; note has more rows in c)
            for part, (lo, hi) in zip("abc", zip(cuts, cuts[1:])):
                df.iloc[lo:hi].to_parquet(folder / f"{part}.parquet", index=False)
            paths[name] = str(folder)
        else:  # one file each (link: keyless)
            paths[name] = str(tmp_path / f"{name}.parquet")
            df.to_parquet(paths[name], index=False)
    given = {n: spark.read.parquet(p) for n, p in paths.items()}
    assert parquet_scan_path(given["note"]) == paths["note"]
    assert parquet_scan_path(given["link"], numbered=True) == paths["link"]  # one file: Spark's order is its own
    assert parquet_scan_path(given["visit"], numbered=True) is None  # three files: collected
    note = given["note"]
    assert parquet_scan_path(note.select("note_id", "visit_id", "w")) is None  # any plan above the scan
    assert parquet_scan_path(note.where("w > 0.5")) is None
    assert parquet_scan_path(spark.read.option("mergeSchema", "true").parquet(paths["note"])) is None
    assert parquet_scan_path(spark.read.schema("note_id long, visit_id long").parquet(paths["note"])) is None
    assert parquet_scan_path(spark.range(3)) is None
    keyless = keyless_schema({n: {} for n in frames})
    prepare_both(spark, keyless, given)
    loc = generate_features(spark, keyless, given, engine="local")
    visit = frames["visit"]
    _check_positions(loc, pd.concat([visit.iloc[5:45], visit.iloc[45:], visit.iloc[:5]]))  # b, c, a: by size


# --- the engine choice --------------------------------------------------------------------------------------------


def test_engine_choice_reasons(tmp_path):
    cfg = {"tables": {"a": {"key": "k", "source": str(tmp_path / "a.csv")}}, "target": {"table": "a", "column": "y"}}
    pd.DataFrame({"k": range(1000), "y": ["p", "q"] * 500, "x": np.arange(1000) / 7}).to_csv(tmp_path / "a.csv",
                                                                                           index=False)
    choice = choose_engine(load_schema(cfg))
    assert choice.engine == "local" and "cells" in choice.reason
    cells = float(choice.reason.split(" cells")[0])
    assert 3000 <= cells <= 5000  # 1000 rows x (3 columns + a key) estimated from the first lines
    assert choose_engine(load_schema(cfg), max_cells=1000).engine == "spark"
    low = choose_engine(load_schema(cfg), memory=1000)
    assert low.engine == "spark" and "GB available" in low.reason
    for spec, why in (({"catalog": "db.t"}, "catalog"), ({"source": "s3://b/a.parquet"}, "remote"),
                      ({"source": str(tmp_path / "a.json")}, "format json")):
        (tmp_path / "a.json").write_text('{"k": 1, "y": "p"}\n')
        other = {"tables": {"a": {"key": "k", **spec}}, "target": {"table": "a", "column": "y"}}
        choice = choose_engine(load_schema(other))
        assert choice.engine == "spark" and why in choice.reason and "table 'a'" in choice.reason


def test_dates_and_booleans_from_a_dataframe(spark):
    rows = [(1, "p", dt.date(2020, 1, 2), True, 1.5), (2, "q", None, None, None), (3, "p", dt.date(1969, 12, 31),
                                                                                  False, -0.0)]
    df = spark.createDataFrame(rows, "k long, y string, d date, b boolean, x float")
    cfg = {"tables": {"a": {"key": "k"}}, "target": {"table": "a", "column": "y"}}
    loc = generate_features(spark, cfg, {"a": df}, engine="local")
    assert list(loc.pandas["b"]) == ["true", None, "false"]
    assert list(loc.pandas["d"][[0, 2]]) == [18263.0, -1.0]


# --- the command line ---------------------------------------------------------------------------------------------


def test_engine_on_the_command_line_and_in_run_json(spark, tmp_path, capsys):
    import yaml

    from tests.conftest import run_job

    frames = keyless_rows(n=80)
    source = {}
    for name, df in frames.items():
        df.to_csv(tmp_path / f"{name}.csv", index=False)
        source[name] = {"source": str(tmp_path / f"{name}.csv")}
    schema = tmp_path / "schema.yaml"
    schema.write_text(yaml.safe_dump(keyless_schema(source)))
    for engine in ("local", "auto"):
        out = tmp_path / engine
        code, _, err = run_job(["--schema", schema, "--engine", engine, "--trees", "3", "--cv-folds", "0",
                                "--output", out], capsys)
        assert code == 0, err
        run = json.loads((out / "run.json").read_text())["relational"]
        assert run["engine"] == "local"
        expected = "engine='local'" if engine == "local" else "GB available"
        assert expected in run["engine_reason"]
    code, _, err = run_job(["--input", tmp_path / "visit.csv", "--targets", "label", "--engine", "spark"], capsys)
    assert code == 2 and "--engine spark applies to relational data (--schema)" in err
    code, _, err = run_job(["--schema", schema, "--engine", "gpu"], capsys)
    assert code == 2 and "--engine" in err


# --- Spark Connect ------------------------------------------------------------------------------------------------


def case_connect(spark, frames, cfg):
    """Under a session: the DataFrames' features by auto (collected with toArrow to the local engine) and by the
    Spark engine, and the CSV schema's by the Spark engine (generated keys from file, block and id)."""
    given = {n: spark.createDataFrame(df) for n, df in frames.items()}
    keyless = keyless_schema({n: {} for n in frames})
    auto = generate_features(spark, keyless, given)
    on_spark = generate_features(spark, keyless, given, engine="spark")
    files = generate_features(spark, cfg, engine="spark")
    return auto.engine, auto.pandas, on_spark.frame.toPandas(), files.frame.toPandas()


def test_dataframes_and_generated_keys_under_spark_connect(connect, tmp_path):
    frames = keyless_rows(seed=11, n=30)
    source = {}
    for name, df in frames.items():
        df.to_csv(tmp_path / f"{name}.csv", index=False)
        source[name] = {"source": str(tmp_path / f"{name}.csv")}
    cfg = keyless_schema(source)
    engine, auto, on_spark, files = connect.run(case_connect, frames, cfg)
    assert engine == "local"
    want = generate_features(None, cfg, engine="local").pandas.sort_values("visit_id").reset_index(drop=True)
    for got in (auto, on_spark, files):
        got = got.sort_values("visit_id").reset_index(drop=True)[list(want.columns)]
        pd.testing.assert_frame_equal(got, want, check_exact=True, check_dtype=False)
