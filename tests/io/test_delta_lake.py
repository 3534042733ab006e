"""Delta tables and catalog tables as a lakehouse holds them (issue 22): real tables written by Spark's Delta
writer (column mapping after a rename and a drop, deletion vectors, partitions, time travel), read through
Spark's Delta reader (the ``delta`` worker session, tests/conftest.py) and through ``deltalake`` (the suite's
session, which has no Delta jars); rankings written by both writers, into path and catalog tables, reruns with
a run id, concurrent appends, a killed run, the run records. No mocks.

The worker's cases are module-level functions ``case(session, ...)``; the tables are written once per run."""
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from spark_fr.errors import InputError
from spark_fr.ranking import Ranking
from spark_fr.results import ScoreKey, ScoreResult

from tests.conftest import JOB, ROOT, _subprocess_env, collected, run_job

LAKE_COLUMNS = ["id", "region", "signal", "x2", "noise", "y"]  # after the rename (x1) and the drop (x3)


# ----- the tables, written by Spark in the worker ------------------------------------------------------------
def frame(n=300, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    pdf = pd.DataFrame({"id": np.arange(n, dtype=np.int64), "region": rng.choice(["eu", "us"], n),
                        "x1": rng.normal(size=n), "x2": rng.normal(size=n)})
    pdf["y"] = np.where(pdf.x1 + 0.3 * pdf.x2 > 0, "yes", "no")
    pdf["x3"] = (pdf.y == "yes").astype(float) + rng.normal(scale=0.01, size=n)  # a perfect leak, dropped later
    pdf["noise"] = rng.normal(size=n)
    return pdf[["id", "region", "x1", "x2", "x3", "noise", "y"]]


def case_lake(spark, root):
    """Write the tables with Spark, then read them in this session: Spark's own rows (the truth) and spark_fr's
    reads (Spark's Delta reader), in one call.

    ``lake``: column mapping (name) and deletion vectors, partitioned, x1 renamed, x3 dropped, rows deleted;
    ``plain``: partitioned, no reader feature, one partition replaced (two versions); ``widened``: type widening (a
    reader feature deltalake does not read); ``db.features``: ``plain`` as a catalog table; ``db.flat``: Parquet."""
    import time

    t0 = time.perf_counter()
    pdf = frame()
    lake, plain, widened = f"{root}/lake", f"{root}/plain", f"{root}/widened"
    df = spark.createDataFrame(pdf)
    (df.writeTo(f"delta.`{lake}`").using("delta").partitionedBy("region")
     .tableProperty("delta.columnMapping.mode", "name").tableProperty("delta.enableDeletionVectors", "true")
     .create())                                                                 # v0
    spark.sql(f"ALTER TABLE delta.`{lake}` RENAME COLUMN x1 TO signal")        # v1
    spark.sql(f"ALTER TABLE delta.`{lake}` DROP COLUMN x3")                    # v2
    spark.sql(f"DELETE FROM delta.`{lake}` WHERE id % 10 = 0")                 # v3: deletion vectors
    df.drop("x3").write.format("delta").partitionBy("region").save(plain)      # v0
    (df.drop("x3").filter("region = 'us' AND id < 100").write.format("delta").mode("overwrite")
     .option("replaceWhere", "region = 'us'").save(plain))                     # v1: files of 'us' removed
    spark.sql(f"CREATE TABLE delta.`{widened}` (a INT, b STRING) USING delta "
              f"TBLPROPERTIES ('delta.enableTypeWidening' = 'true')")
    rankings = f"{root}/rankings"  # runs of a rankings table, renamed into place and partly deleted
    runs = pd.DataFrame({"feature": [f"f{i}" for i in range(6)] * 2, "score": "genie3", "target": "__all__",
                         "imp": np.r_[np.linspace(6, 1, 6), np.linspace(1, 6, 6)], "rank": np.r_[1:7, 6:0:-1],
                         "run_id": ["a"] * 6 + ["b"] * 6,
                         "created_at": pd.to_datetime(["2026-11-01"] * 6 + ["2026-11-02"] * 6, utc=True)})
    (spark.createDataFrame(runs).writeTo(f"delta.`{rankings}`").using("delta")
     .tableProperty("delta.columnMapping.mode", "name").tableProperty("delta.enableDeletionVectors", "true")
     .create())
    spark.sql(f"ALTER TABLE delta.`{rankings}` RENAME COLUMN imp TO importance")
    spark.sql(f"DELETE FROM delta.`{rankings}` WHERE run_id = 'b' AND feature = 'f0'")
    spark.sql("CREATE DATABASE IF NOT EXISTS db")
    spark.sql(f"CREATE TABLE db.features USING delta LOCATION '{plain}'")  # the catalog's name for ``plain``
    spark.sql("CREATE TABLE db.flat (a INT, b STRING) USING parquet")
    history = spark.sql(f"DESCRIBE HISTORY delta.`{lake}`").select("version", "timestamp").collect()
    written = time.perf_counter() - t0
    where = "region = 'eu' AND (id < 150 OR signal > 1.5)"
    out = {"lake": lake, "plain": plain, "widened": widened, "where": where, "rankings": rankings,
           "rankings_truth": spark.read.format("delta").load(rankings).toPandas(),
           "timestamps": {int(r[0]): r[1].astimezone().isoformat() for r in history},
           "truth": {"now": spark_rows(spark, lake)},
           "ours": {"now": ours(spark, lake, {}), "widened": ours(spark, widened, {}),
                    "table": ours(spark, None, {"table": "db.features", "exclude": ["id"]}),
                    "table_v0": ours(spark, None, {"table": "spark_catalog.`db`.features", "version": 0,
                                                   "where": "region = 'us'"}),
                    "flat": ours(spark, None, {"table": "db.flat"})}}
    out["errors"] = {t: ours(spark, None, {"table": t, "version": 0} if t == "db.flat" else {"table": t})
                     for t in ("db.nope", "db.flat", "a.b.c.d", "db.`x")}
    out["seconds"] = {"write": written, "read": time.perf_counter() - t0 - written}
    return out


def spark_rows(spark, path, version=None, where=None):
    """The truth: Spark's Delta reader, sorted by id."""
    reader = spark.read.format("delta")
    if version is not None:
        reader = reader.option("versionAsOf", version)
    df = reader.load(path)
    if where is not None:
        df = df.where(where)
    return df.toPandas().sort_values("id").reset_index(drop=True)


def ours(spark, source, kwargs):
    """spark_fr's reader: (columns, rows sorted by id, fingerprint), or ('error', message)."""
    from spark_fr.io.readers import read_dataset

    try:
        ds = read_dataset(spark, source, **kwargs)
    except InputError as err:
        return "error", str(err), None
    rows = ds.df.toPandas()
    rows = rows.sort_values("id").reset_index(drop=True) if "id" in rows else rows
    return [c.name for c in ds.columns], rows, ds.extra["fingerprint"]


@pytest.fixture(scope="module")
def lake(delta, tmp_path_factory, request):
    """The tables. The work later tests need starts as soon as its tables exist, so that the JVMs work side by side
    while this process runs tests (each test waits for its part): the Connect session's read
    (:func:`case_connect_reads_by_path`; the session itself starts meanwhile when it has not) and the worker's
    :func:`case_who_reads` and :func:`case_spark_writer`, in that order."""
    connect = request.getfixturevalue("connect") if collected(request, CONNECT_TEST) else None
    root = tmp_path_factory.mktemp("lake")
    tables = delta.run(case_lake, str(root))
    print(f"Delta tables written in {tables['seconds']['write']:.1f} s, read in {tables['seconds']['read']:.1f} s")
    if connect is not None:
        tables["connect"] = connect.start(case_connect_reads_by_path, tables["lake"])
    if collected(request, WHO_READS_TEST):
        tables["who_reads"] = [delta.start(case_who_reads, tables["rankings"], env)
                               for env in ({}, {"SPARK_FR_DELTA_READER": "deltalake"})]
    if collected(request, WRITER_TEST):
        tables["writer_root"] = tmp_path_factory.mktemp("writer")
        tables["writer"] = delta.start(case_spark_writer, str(tables["writer_root"]))
    return tables


def read_here(spark, source, **kwargs):
    from spark_fr.io.readers import read_dataset

    ds = read_dataset(spark, source, **kwargs)
    rows = ds.df.toPandas()
    return [c.name for c in ds.columns], rows.sort_values("id").reset_index(drop=True), ds.extra["fingerprint"]


def same_rows(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b[list(a.columns)].reset_index(drop=True),
                                  check_dtype=False)


# ----- reading: deltalake (no Delta jars here) and Spark's reader (the worker) give the same, correct rows ----------
def test_column_mapping_and_deletion_vectors_read_by_their_logical_names_both_ways(spark, lake):
    truth = lake["truth"]["now"]
    assert list(truth.columns) == LAKE_COLUMNS and len(truth) == 270
    names, rows, fp = read_here(spark, lake["lake"])  # deltalake's engine on the driver
    assert names == LAKE_COLUMNS  # logical names, in the table's order; never col-<uuid>, never the dropped x3
    same_rows(truth, rows)
    assert fp["delta_version"] == 3 and fp["reader"] == "deltalake (driver)"
    assert set(fp["reader_features"]) == {"columnMapping", "deletionVectors"}
    names, rows, fp = lake["ours"]["now"]  # Spark's Delta reader
    assert names == LAKE_COLUMNS and fp["reader"] == "spark" and fp["delta_version"] == 3
    same_rows(truth, rows)


def test_drift_reads_a_rankings_table_with_column_mapping_and_deletion_vectors(lake):
    """The runs of a rankings table as Spark wrote them (a renamed column, deleted rows) read by deltalake's query
    engine: the logical names and Spark's rows, never nulls (as ``to_pyarrow_table`` gives) nor deleted rows."""
    from spark_fr.evaluation.drift import compare_runs
    from spark_fr.io.ranking_runs import open_runs

    runs = open_runs(lake["rankings"])
    assert list(runs.runs().run_id) == ["a", "b"]
    key = ["run_id", "feature"]
    got = runs.rows(["a", "b"]).sort_values(key).reset_index(drop=True)
    truth = lake["rankings_truth"].sort_values(key).reset_index(drop=True)
    assert len(got) == 11 and got.importance.notna().all()
    np.testing.assert_array_equal(got.importance.to_numpy(float), truth.importance.to_numpy(float))
    assert list(got.feature) == list(truth.feature)
    row = compare_runs(lake["rankings"], top=3).summary.iloc[0]  # run b reverses run a (its f0 deleted)
    assert (row["entered"], row["left"]) == ("f5,f4,f3", "f0,f1,f2")


def case_who_reads(spark, path, env):
    """Who reads the same Delta path to rank it and to compare its runs, in a session with Delta Lake."""
    import os

    from spark_fr.io.ranking_runs import open_runs
    from spark_fr.io.readers import read_dataset

    os.environ.update(env)
    try:
        return read_dataset(spark, path).extra["fingerprint"]["reader"], type(open_runs(path, spark)).__name__
    finally:
        for key in env:
            os.environ.pop(key)


WHO_READS_TEST = "test_one_rule_says_who_reads_a_delta_table_to_rank_it_and_to_compare_its_runs"


def test_one_rule_says_who_reads_a_delta_table_to_rank_it_and_to_compare_its_runs(lake):
    """spark_fr.io.delta_reader: Spark's Delta reader in a session that has Delta Lake, for a ranking's input and for
    drift's runs alike (drift read with deltalake before); deltalake for both with SPARK_FR_DELTA_READER=deltalake."""
    spark_session, deltalake = (started.get() for started in lake["who_reads"])  # started by the ``lake`` fixture
    assert spark_session == ("spark", "SparkRuns")
    assert deltalake == ("deltalake (driver)", "DeltaRuns")


def test_time_travel_and_where_give_the_rows_of_that_version(spark, lake):
    written = frame()
    names, rows, fp = read_here(spark, lake["lake"], version=0)  # before the rename, the drop and the delete
    assert names == list(written.columns) and fp["delta_version"] == 0
    same_rows(written, rows)
    # --timestamp-as-of: the version committed at or before it (v1, the rename)
    names, rows, fp = read_here(spark, lake["lake"], timestamp=lake["timestamps"][1])
    assert fp["delta_version"] == 1 and "signal" in names and "x3" in names
    now = lake["truth"]["now"]
    _, rows, fp = read_here(spark, lake["lake"], where=lake["where"])
    same_rows(now[(now.region == "eu") & ((now.id < 150) | (now.signal > 1.5))], rows)
    assert fp["where"] == lake["where"]
    # a partitioned table without reader features: the snapshot's files only (the replaced partition's are gone)
    names, rows, fp = read_here(spark, lake["plain"], where="region IN ('us') AND noise IS NOT NULL")
    assert fp["reader"] == "deltalake" and names == ["id", "region", "x1", "x2", "noise", "y"]
    same_rows(written[(written.region == "us") & (written.id < 100)].drop(columns="x3"), rows)
    assert len(read_here(spark, lake["plain"], version=0)[1]) == 300


@pytest.mark.parametrize("kwargs,message", [
    ({"version": 9}, "--version-as-of 9 does not exist (the latest version is 3)"),
    ({"version": 1, "timestamp": "2026-01-01"}, "give --version-as-of or --timestamp-as-of, not both"),
    ({"timestamp": "yesterday"}, "--timestamp-as-of must be an ISO date"),
    ({"where": "x3 > 0"}, "--where: column 'x3' is not in"),
    ({"where": "Signal > 0"}, "(did you mean 'signal'?)"),
    ({"where": "signal > 'a'"}, "column 'signal' of"),
    ({"where": "region = 'eu'; DROP TABLE t"}, "unexpected ';'"),
    ({"where": "region = 'eu' OR"}, "expected a column name at the end"),
    ({"exclude": ["x3"]}, "--exclude: column 'x3' is not in"),
    ({"exclude": ["y"], "targets": ["y"]}, "--exclude and --targets both name column 'y'"),
])
def test_bad_delta_options_are_one_line_errors_naming_what_is_wrong(spark, lake, kwargs, message):
    from spark_fr.io.readers import read_dataset

    with pytest.raises(InputError) as err:
        read_dataset(spark, lake["lake"], **kwargs)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_reader_feature_deltalake_cannot_read_names_what_to_install(spark, lake):
    from deltalake import DeltaTable

    from spark_fr.io.readers import read_dataset

    features = set(DeltaTable(lake["widened"]).protocol().reader_features or [])
    assert "typeWidening" in features
    with pytest.raises(InputError, match=r"reader feature\(s\) typeWidening.*install delta-spark"):
        read_dataset(spark, lake["widened"])
    names, rows, fp = lake["ours"]["widened"]  # Spark's reader reads it
    assert names == ["a", "b"] and fp["reader"] == "spark"


def test_catalog_tables_two_and_three_part_names_with_time_travel(spark, lake):
    written = frame()
    names, rows, fp = lake["ours"]["table"]
    assert names == ["region", "x1", "x2", "noise", "y"]
    assert len(rows) == ((written.region == "eu") | (written.id < 100)).sum()
    assert fp == {"table": "db.features", "provider": "delta", "delta_version": 1, "reader": "spark"}
    names, rows, fp = lake["ours"]["table_v0"]  # version 0, where region = 'us': Spark's reader, the filter in Spark
    assert fp["delta_version"] == 0 and len(rows) == (written.region == "us").sum() and set(rows.region) == {"us"}
    assert lake["ours"]["flat"][2] == {"table": "db.flat", "provider": "parquet"}
    for table, message in [("db.nope", "--input-table db.nope: no such table"),
                           ("db.flat", "db.flat is a parquet table: --version-as-of and --timestamp-as-of need a "
                                       "Delta table"),
                           ("a.b.c.d", "at most 3 parts"), ("db.`x", "unclosed backquote")]:
        got = lake["errors"][table]
        assert got[0] == "error" and message in got[1], got
    # a catalog table in the suite's own session (its in-memory catalog, no Delta): a Parquet table
    spark.createDataFrame(frame(40).drop(columns="x3")).write.mode("overwrite").saveAsTable("default.lake_flat")
    names, rows, fp = read_here(spark, None, table="spark_catalog.default.lake_flat", exclude=["id"])
    assert names == ["region", "x1", "x2", "noise", "y"] and len(rows) == 40


# ----- the job: the silent misread, a rerun, the run records ------------------------------------------------
def test_the_job_ranks_the_logical_columns_and_a_rerun_replaces_its_rows(spark, lake, tmp_path, capsys, monkeypatch):
    """deltalake here (the suite's session has no Delta jars): the dropped leak x3, the physical col-<uuid> names and
    the excluded id never become features; the same --run-id twice leaves one run's rows; plain and relational rows
    share the table."""
    from deltalake import DeltaTable

    from spark_fr.io.delta_table import run_records

    monkeypatch.delenv("SPARK_FR_DRIVER_MAX_SECONDS")  # small work on the driver, as users run it
    out = tmp_path / "rankings"
    args = ["--input", lake["lake"], "--targets", "y", "--exclude", "id", "--trees", 8, "--scores", "genie3",
            "--output", out, "--output-format", "delta", "--run-id", "2026-11-26"]
    for _ in range(2):
        code, _, err = run_job(args, capsys)
        assert code == 0, err
    rows = DeltaTable(str(out)).to_pandas()
    assert set(rows.feature) == {"region", "signal", "x2", "noise"} and len(rows) == 4
    assert set(rows.run_id) == {"2026-11-26"} and rows.level.isna().all() and rows.lineage.isna().all()
    assert rows.sort_values("rank").feature.iloc[0] == "signal"
    records = run_records(str(out))
    assert [r["run_id"] for r in records][-2:] == ["2026-11-26", "2026-11-26"]
    run = records[-1]["run"]
    assert run["input_fingerprint"] == {"path": lake["lake"], "delta_version": 3, "reader": "deltalake (driver)",
                                        "reader_features": ["columnMapping", "deletionVectors"]}
    assert run["params"]["exclude"] == ["id"] and run["params"]["run_id"] == "2026-11-26"
    # a relational ranking's rows (level, lineage) go into the same table
    code, _, err = run_job(args[:-2] + ["--run-id", "other", "--version-as-of", "0", "--exclude", "id,x3"], capsys)
    assert code == 0, err
    relational = relational_ranking()
    from spark_fr.io.writers import Publication

    Publication(str(out), "delta").check().publish(relational)
    rows = DeltaTable(str(out)).to_pandas()
    assert set(rows.run_id) == {"2026-11-26", "other", relational.run_id}
    assert set(rows[rows.run_id == "other"].feature) == {"region", "x1", "x2", "noise"}
    assert set(rows[rows.run_id == relational.run_id].level) == {"feature", "relation"}


def relational_ranking() -> Ranking:
    """A ranking with a relational ranking's two more columns (``level``, ``lineage``)."""
    plain = make_ranking(5)
    table = plain.to_pandas()
    table["level"] = ["feature"] * (len(table) - 1) + ["relation"]
    table["lineage"] = "{}"
    return Ranking(table, plain.metadata)


def make_ranking(seed: int = 0, run_id: str | None = None, n_features: int = 5) -> Ranking:
    rng = np.random.default_rng(seed)
    names = [f"f{i}" for i in range(n_features)]
    results = [ScoreResult(ScoreKey("genie3"), rng.random(n_features), rng.random(n_features) / 10)]
    params = {"seed": seed, **({"run_id": run_id} if run_id else {})}
    meta = {"input": "test", "versions": {"spark_fr": "test"}, "title": "t", **({"run_id": run_id} if run_id else {})}
    return Ranking.from_scores(names, np.ones(n_features, bool), results, [], params, meta)


def test_a_table_not_ours_and_a_plain_table_schema_mismatch_are_refused_before_the_work(spark, lake, tmp_path,
                                                                                         capsys):
    """Writing rankings into the input table (not ours) fails before any work, whatever the mode; nothing changes."""
    from deltalake import DeltaTable

    before = DeltaTable(lake["plain"]).version()
    for mode in ("append", "overwrite"):
        code, _, err = run_job(["--input", lake["plain"], "--targets", "y", "--output", lake["plain"],
                                "--output-format", "delta", "--mode", mode], capsys)
        assert code == 2 and "does not hold rankings" in err and err.count("\n") == 1
    assert DeltaTable(lake["plain"]).version() == before


# ----- writing with Spark's Delta writer (the worker) -----------------------------------------------------------------
def case_spark_writer(spark, root):
    """Path and catalog outputs through Spark's writer: create, append, rerun, relational rows, concurrent appends,
    foreign tables refused; what the tables hold afterwards."""
    from spark_fr.io.delta_table import run_records
    from spark_fr.io.writers import Publication

    out = f"{root}/ranked"
    first, second, again = make_ranking(1, "a"), make_ranking(2, "b"), make_ranking(3, "a")
    for r in (first, second, again):
        Publication(out, "delta", spark=spark).check().publish(r)
    path_rows = spark.read.format("delta").load(out).toPandas()
    history = [(r[0], r[1]) for r in spark.sql(f"DESCRIBE HISTORY delta.`{out}`").select("version", "operation")
               .orderBy("version").collect()]
    properties = {r[0]: r[1] for r in spark.sql(f"SHOW TBLPROPERTIES delta.`{out}`").collect()}
    records = run_records(out)
    # catalog tables: two- and three-part names of one table
    Publication(None, "delta", table="db.rankings", spark=spark).check().publish(first)
    Publication(None, "delta", table="spark_catalog.db.rankings", spark=spark).check().publish(again)
    table_rows = spark.table("db.rankings").toPandas()
    table_records = run_records(table="spark_catalog.db.rankings", spark=spark)
    # two runs write a new table at once: one creates it, the other appends; both land
    shared = f"{root}/shared"
    done = []

    def publish(seed):
        r = make_ranking(seed)
        Publication(shared, "delta", spark=spark).check().publish(r)
        done.append(r.run_id)

    threads = [threading.Thread(target=publish, args=(s,)) for s in (10, 11)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    shared_runs = set(spark.read.format("delta").load(shared).toPandas().run_id)
    # a table of an earlier spark_fr (the contract's nine columns, marked) gains level and lineage through Spark too
    from deltalake import DeltaTable, write_deltalake

    from spark_fr.io.writers import SCHEMA, arrow_table

    old, earlier = f"{root}/old", make_ranking(4)
    write_deltalake(old, arrow_table(earlier, SCHEMA))
    DeltaTable(old).alter.set_table_properties({"spark_fr.rankings": "true"}, raise_if_not_exists=False)
    Publication(old, "delta", spark=spark).check().publish(relational_ranking())
    old_rows = spark.read.format("delta").load(old).toPandas()
    # not ours: refused before any work
    refused = {}
    for name in ("db.features", "db.flat"):
        try:
            Publication(None, "delta", table=name, spark=spark).check()
        except InputError as err:
            refused[name] = str(err)
    return {"path_rows": path_rows, "history": history, "properties": properties, "records": records,
            "table_rows": table_rows, "table_records": table_records, "shared_runs": shared_runs, "done": done,
            "refused": refused, "ids": (first.run_id, second.run_id, again.run_id), "old_rows": old_rows,
            "old_earlier": earlier.run_id}


WRITER_TEST = "test_spark_writer_one_commit_per_run_reruns_replace_and_catalog_tables"


def test_spark_writer_one_commit_per_run_reruns_replace_and_catalog_tables(lake):
    """:func:`case_spark_writer`, started by the ``lake`` fixture."""
    from deltalake import DeltaTable

    from spark_fr.io.delta_table import CREATE_PROPERTIES

    got = lake["writer"].get()
    rows = got["path_rows"]
    assert list(rows.columns)[:9] == ["feature", "score", "target", "importance", "rank", "importance_std",
                                      "run_id", "created_at", "params"] and list(rows.columns)[9:] == ["level", "lineage"]
    counts = rows.groupby("run_id").size().to_dict()
    assert counts == {"a": 5, "b": 5}  # run a's rows replaced, not doubled
    a = rows[rows.run_id == "a"]
    assert set(a.params.map(lambda p: json.loads(p)["seed"])) == {3}  # the rerun's rows
    # one commit per run: CTAS (the first run), append, replaceWhere (the rerun)
    assert [op for _, op in got["history"]] == ["CREATE TABLE AS SELECT", "WRITE", "WRITE"]
    assert all(got["properties"][k] == v for k, v in CREATE_PROPERTIES.items())
    assert [r["run_id"] for r in got["records"]] == ["a", "b", "a"]
    assert got["records"][2]["run"]["params"]["seed"] == 3
    ranked = DeltaTable(str(lake["writer_root"] / "ranked"))
    assert len(ranked.to_pandas()) == len(rows)  # deltalake reads what Spark wrote
    assert set(got["table_rows"].run_id) == {"a"} and len(got["table_rows"]) == 5
    assert [r["run_id"] for r in got["table_records"]] == ["a", "a"]
    assert got["shared_runs"] == set(got["done"]) and len(got["done"]) == 2
    assert "--output-table db.features is a Delta table that does not hold rankings" in got["refused"]["db.features"]
    assert "--output-table db.flat is a parquet table, not a Delta table" in got["refused"]["db.flat"]
    old = got["old_rows"]
    assert list(old.columns)[-2:] == ["level", "lineage"] and old.run_id.nunique() == 2
    assert old[old.run_id == got["old_earlier"]].level.isna().all() and old.level.notna().any()


def case_job(spark, argv):
    """jobs/rank.py in the worker, under its Delta session: (exit code, standard error, the rows written)."""
    code, _, err = run_job(argv)
    rows = spark.table("db.ranked").toPandas() if code == 0 else None
    return code, err, rows


def test_the_job_from_a_catalog_table_to_a_catalog_table(delta, lake):
    args = ["--input-table", "db.features", "--version-as-of", "0", "--exclude", "id", "--targets", "y", "--trees",
            6,
            "--scores", "genie3", "--output-table", "spark_catalog.db.ranked", "--run-id", "d1"]
    code, err, rows = delta.run(case_job, args)
    assert code == 0, err
    assert set(rows.run_id) == {"d1"} and set(rows.feature) == {"region", "x1", "x2", "noise"}
    code, err, _ = delta.run(case_job, args[:-2] + ["--output-table", "db.flat"])
    assert code == 2 and "--output-table db.flat is a parquet table" in err


# ----- a killed run ----------------------------------------------------------------------------------------------------
def test_a_killed_run_leaves_the_table_unchanged(tmp_path):
    """SIGKILL (no clean-up at all) while the ranking is computed: the table's version and files are as before."""
    from deltalake import DeltaTable

    from spark_fr.io.writers import Publication

    out = tmp_path / "rankings"
    Publication(str(out), "delta").check().publish(make_ranking(1))
    before = (DeltaTable(str(out)).version(), sorted(p.name for p in out.rglob("*")))
    data = tmp_path / "data.parquet"  # read by pyarrow: the work starts before any JVM
    frame(3000).drop(columns=["id"]).to_parquet(data, index=False)
    env = _subprocess_env()
    env.pop("SPARK_FR_DRIVER_MAX_SECONDS", None)  # the work runs in the process itself: no JVM to wait for
    proc = subprocess.Popen([sys.executable, str(JOB), "--input", str(data), "--targets", "y", "--trees", "2000",
                             "--output", str(out), "--output-format", "delta", "--run-id", "killed"],
                            cwd=str(ROOT), env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    seen = []
    for line in proc.stderr:  # until the input is read: the work starts
        seen.append(line)
        if "input" in line:
            break
    os.killpg(proc.pid, signal.SIGKILL)  # the run and anything it started (a JVM)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, "".join(seen)
    assert (DeltaTable(str(out)).version(), sorted(p.name for p in out.rglob("*"))) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.parquet", "rankings"]  # no staging directory left


def test_a_table_of_ours_with_the_contracts_columns_only_gains_level_and_lineage(tmp_path):
    """A table an earlier spark_fr wrote (the contract's nine columns, marked) takes a plain and a relational run:
    the two columns are added (schema merge), null for the earlier rows; the earlier rows are kept."""
    from deltalake import DeltaTable, write_deltalake

    from spark_fr.io.writers import SCHEMA, Publication, arrow_table

    out = str(tmp_path / "old")
    earlier = make_ranking(1)
    write_deltalake(out, arrow_table(earlier, SCHEMA))
    DeltaTable(out).alter.set_table_properties({"spark_fr.rankings": "true"}, raise_if_not_exists=False)
    assert [f.name for f in DeltaTable(out).schema().fields] == list(SCHEMA.names)
    Publication(out, "delta").check().publish(make_ranking(2))
    Publication(out, "delta").check().publish(relational_ranking())
    rows = DeltaTable(out).to_pandas()
    assert list(rows.columns) == list(SCHEMA.names) + ["level", "lineage"] and rows.run_id.nunique() == 3
    assert rows[rows.run_id == earlier.run_id].level.isna().all()


def case_connect_reads_by_path(spark, path):
    """Under Spark Connect (no Delta in the local server): the session is asked, deltalake reads."""
    from spark_fr.io.delta_reader import spark_has_delta
    from spark_fr.io.readers import read_dataset

    ds = read_dataset(spark, path)
    return spark_has_delta(spark), [c.name for c in ds.columns], ds.df.count(), ds.extra["fingerprint"]["reader"]


CONNECT_TEST = "test_under_spark_connect_the_session_is_asked_and_deltalake_reads"


def test_under_spark_connect_the_session_is_asked_and_deltalake_reads(connect, lake):
    """:func:`case_connect_reads_by_path`, started by the ``lake`` fixture."""
    has_delta, names, n, reader = lake["connect"].get()
    assert not has_delta and names == LAKE_COLUMNS and n == 270 and reader == "deltalake (driver)"


def test_where_filters_parse_to_a_checked_tree_and_quoted_sql():
    from spark_fr.io import tables as T
    from spark_fr.io import where as W

    types = {"country": "string", "n": "bigint", "day": "date", "odd name": "double", "flag": "boolean"}
    tree = W.parse_filter("country = 'it''s' AND NOT (n >= -3 OR `odd name` <> 1.5e2) AND day NOT IN "
                          "(DATE '2026-01-01', '2026-02-01') AND flag IS NOT NULL AND flag = true")
    W.check_filter(tree, types, "t")
    assert W.columns_of(tree) == ["country", "n", "odd name", "day", "flag"]
    assert W.to_sql(W.bind(tree, types)) == (  # the five terms of the AND as a balanced tree
        "((((\"country\" = 'it''s') AND (NOT ((\"n\" >= -3) OR (\"odd name\" <> 150.0)))) AND ((\"day\" NOT IN "
        "(DATE '2026-01-01', DATE '2026-02-01')) AND (\"flag\" IS NOT NULL))) AND (\"flag\" = TRUE))")
    for text, message in [("n = 1 2", "expected AND, OR or the end at '2'"), ("day = DATE 'x'", "is not an ISO date"),
                          ("n IN ()", "expected a literal"), ("= 3", "expected a column name"),
                          ("day > 'tomorrow'", "'tomorrow' is not an ISO date"), ("flag = 1", "give a bool literal")]:
        with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
            W.check_filter(W.parse_filter(text), types, "t")
    assert T.parse_table_name("cat.`my db`.`t``x`") == ["cat", "my db", "t`x"]
    assert T.quoted_name(["cat", "my db", "t`x"]) == "`cat`.`my db`.`t``x`"


def test_a_session_spark_fr_starts_gets_delta_when_delta_spark_is_installed(monkeypatch):
    """The configuration spark_fr adds (the tests' Delta session uses the same function): Delta's jar for this
    pyspark, its extension and catalog, the session's own packages and extensions kept."""
    import pyspark

    from spark_fr.runtime import delta as D

    minor = ".".join(pyspark.__version__.split(".")[:2])
    conf = D.delta_conf("4.4.0", {"spark.jars.packages": "org.x:y:1", "spark.sql.extensions": "org.x.Ext"})
    assert conf == {"spark.jars.packages": f"org.x:y:1,io.delta:delta-spark_{minor}_2.13:4.4.0",
                    "spark.sql.extensions": f"org.x.Ext,{D.EXTENSION}", "spark.sql.catalog.spark_catalog": D.CATALOG}
    monkeypatch.setenv("SPARK_FR_DELTA", "0")
    assert D.installed_delta_version() is None and D.delta_conf() == {}
