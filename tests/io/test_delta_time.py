"""Issue 37 (6, 7, 10): one time-zone rule for both Delta readers, ``--timestamp-as-of`` before the first commit, and
the inputs that used to fail badly (a percent-escape in a Delta path, a ``--where`` of thousands of terms or deep
nesting, an integer beyond 64 bits, ``1e400``).

Spark's Delta reader (the ``delta`` worker session, tests/conftest.py) is the truth: a time without a zone, in a
``--where`` literal or a timestamp partition value of the log, is read in the session's time zone. The
``deltalake`` path (the suite's session, no Delta jars) must give the same rows and the same instants, under a
session zone of Asia/Kolkata while this process's own zone (``TZ``) is America/Los_Angeles, and with no session zone
in a JVM whose default zone is Asia/Kolkata (Spark's default: the JVM's, which a JVM started with ``TZ`` takes from
it). No mocks."""
import contextlib
import os
import time

import numpy as np
import pandas as pd
import pytest

from spark_fr.errors import InputError

from tests.conftest import collected, run_job

ZONE = "Asia/Kolkata"  # the session's zone in these tests (UTC+5:30, no DST)
MACHINE = "America/Los_Angeles"  # this process's own zone meanwhile (what a naive datetime meant to pyspark)
#: filters whose rows depend on the zone a naive time is read in (the same text is Spark SQL, for the truth)
FILTERS = ["hour >= TIMESTAMP '2026-03-01 02:00:00'",
           "at < '2026-03-01 03:30:00'",
           "hour IN (TIMESTAMP '2026-03-01 01:00:00', TIMESTAMP '2026-03-01 04:00:00') OR at >= DATE '2026-03-02'",
           "at >= TIMESTAMP '2026-02-28T22:00:00Z' AND x1 > 0"]


@contextlib.contextmanager
def zones(spark, session_zone, machine_zone):
    """The session's time zone and this process's own (``TZ``, what ``time.mktime`` uses), put back after."""
    before_session, before_tz = spark.conf.get("spark.sql.session.timeZone"), os.environ.get("TZ")
    spark.conf.set("spark.sql.session.timeZone", session_zone)
    os.environ["TZ"] = machine_zone
    time.tzset()
    try:
        yield
    finally:
        spark.conf.set("spark.sql.session.timeZone", before_session)
        if before_tz is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = before_tz
        time.tzset()


def frame(n=240, seed=3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    pdf = pd.DataFrame({"id": np.arange(n, dtype=np.int64), "x1": rng.normal(size=n), "x2": rng.normal(size=n)})
    pdf["y"] = np.where(pdf.x1 > 0, "yes", "no")
    return pdf


def rows_of(df):
    """(id, hour, at) of a Spark DataFrame, the times as microseconds since 1970 UTC (no zone in the way)."""
    from pyspark.sql import functions as F

    got = df.select("id", F.unix_micros("hour").alias("hour"), F.unix_micros("at").alias("at")).collect()
    return sorted((r["id"], r["hour"], r["at"]) for r in got)


def read_each(spark, path):
    """spark_fr's rows of ``path`` unfiltered and under each of :data:`FILTERS`, and the unfiltered read's reader."""
    from spark_fr.io.readers import read_dataset

    rows, reader = [], None
    for f in [None] + FILTERS:
        ds = read_dataset(spark, path, where=f)
        rows.append(rows_of(ds.df))
        reader = ds.extra["fingerprint"]["reader"] if f is None else reader
    return rows, reader


# ----- the tables, written by Spark in the worker, and what Spark's reader reads -------------------------------------
def case_time_tables(spark, root):
    """Write the tables with Spark in a session zone of Asia/Kolkata (this process's own zone America/Los_Angeles).

    ``utc``: Delta's default partition values ('2026-02-28T20:30:00.000000Z'), directories in Kolkata's wall
    clock; ``naive``: naive partition values (utcTimestampPartitionValues off, written in UTC); ``mapped``: the same
    with column mapping (deltalake's engine reads it)."""
    paths = {name: f"{root}/{name}" for name in ("utc", "naive", "mapped")}
    with zones(spark, ZONE, MACHINE):
        df = spark.createDataFrame(frame()).selectExpr(
            "*", "timestamp'2026-03-01 00:00:00' + make_interval(0, 0, 0, 0, cast(id % 6 AS int), 0, 0) AS hour",
            "timestamp'2026-03-01 00:00:00' + make_interval(0, 0, 0, 0, 0, cast(id * 7 AS int), 0) AS at")
        df.write.format("delta").partitionBy("hour").save(paths["utc"])
        spark.conf.set("spark.databricks.delta.write.utcTimestampPartitionValues", "false")
        try:
            with zones(spark, "UTC", MACHINE):
                df.write.format("delta").partitionBy("hour").save(paths["naive"])
                (df.writeTo(f"delta.`{paths['mapped']}`").using("delta").partitionedBy("hour")
                 .tableProperty("delta.columnMapping.mode", "name").create())
        finally:
            spark.conf.unset("spark.databricks.delta.write.utcTimestampPartitionValues")
    return paths


def case_time_truth(spark, paths):
    """Read the tables in a session zone of Asia/Kolkata (this process's own zone America/Los_Angeles) with
    Spark's reader: Spark's rows for each filter (the truth), and spark_fr's; ``paths`` holds :func:`case_time_tables`'
    tables and tables written elsewhere (``deltalake``: deltalake)."""
    out = {}
    with zones(spark, ZONE, MACHINE):
        for name, path in paths.items():
            table = spark.read.format("delta").load(path)
            ours, reader = read_each(spark, path)
            out[name] = {"truth": [rows_of(table)] + [rows_of(table.where(f)) for f in FILTERS],
                         "ours": ours, "reader": reader}
        out["log"] = {name: _partition_values(paths[name]) for name in ("utc", "naive")}
    out["paths"] = paths
    return out


def _partition_values(path):
    from deltalake import DeltaTable

    return sorted({p["hour"] for p in DeltaTable(path).partitions()})


def by_deltalake(root) -> str:
    """A table written by ``deltalake`` (naive partition values, directories escaped as ``hour=2026-03-01%2000...``)."""
    import pyarrow as pa
    from deltalake import write_deltalake

    pdf = frame(seed=4)
    base = pd.Timestamp("2026-03-01", tz="UTC")
    pdf["hour"] = base + pd.to_timedelta(pdf.id % 6, unit="h")
    pdf["at"] = base + pd.to_timedelta(pdf.id * 7, unit="min")
    path = f"{root}/by_deltalake"
    write_deltalake(path, pa.Table.from_pandas(pdf, preserve_index=False), partition_by=["hour"])
    return path


@pytest.fixture(scope="module")
def timed(delta, tmp_path_factory, request):
    """The tables and Spark's reads of them. Work later tests need starts ahead, so that the worker works while this
    process runs tests (each test waits for its part): the worker's :func:`case_edges` (the ``edges`` fixture) while
    this process runs the deltalake tests."""
    root = tmp_path_factory.mktemp("timed")
    paths = {**delta.run(case_time_tables, str(root)), "deltalake": by_deltalake(root)}
    tables = delta.run(case_time_truth, paths)
    if collected(request, fixture="edges"):
        tables["edges"] = delta.start(case_edges, str(tmp_path_factory.mktemp("edges")), paths)
    return tables


# ----- 6: one time-zone rule --------------------------------------------------------------------------------------
def test_the_tables_hold_both_kinds_of_partition_value(timed):
    assert timed["log"]["utc"][0] == "2026-02-28T18:30:00.000000Z"  # Kolkata's midnight, in UTC
    assert timed["log"]["naive"][0] == "2026-02-28 18:30:00"  # naive (written in UTC): read in the reader's zone


@pytest.mark.parametrize("name", ["utc", "naive", "mapped", "deltalake"])
def test_spark_fr_on_sparks_reader_keeps_sparks_rows(timed, name):
    table = timed[name]
    assert table["reader"] == "spark"
    assert table["ours"] == table["truth"]
    assert len({len(rows) for rows in table["truth"]}) > 2  # the filters keep different rows


@pytest.mark.parametrize("name", ["utc", "naive", "mapped", "deltalake"])
def test_the_deltalake_path_gives_sparks_rows_and_times_under_another_zone(spark, timed, name):
    """The suite's session (no Delta jars: deltalake reads) with the session zone Asia/Kolkata and this process
    in America/Los_Angeles: every table, every filter, the same rows and the same instants as Spark's reader."""
    path = timed["paths"][name]
    with zones(spark, ZONE, MACHINE):
        got, reader = read_each(spark, path)
    assert reader == ("deltalake (driver)" if name == "mapped" else "deltalake")
    for f, mine, truth in zip([None] + FILTERS, got, timed[name]["truth"]):
        assert mine == truth, f



@contextlib.contextmanager
def jvm_zone(spark, zone):
    """No session zone set (as jobs/rank.py starts its session) in a JVM whose default zone is ``zone``, and this
    process's ``TZ`` ``zone``: what a process started with ``TZ=zone`` has (the JVM takes its default zone from
    ``TZ``). Spark's session zone is then the JVM's default zone, read when asked (``spark.sql.session.timeZone``'s
    default is ``TimeZone.getDefault``). The session zone, the JVM's default zone and ``TZ`` are put back after."""
    key, zones_of_java = "spark.sql.session.timeZone", spark._jvm.java.util.TimeZone
    before_session, before_default, before_tz = spark.conf.get(key), zones_of_java.getDefault(), os.environ.get("TZ")
    spark.conf.unset(key)
    zones_of_java.setDefault(zones_of_java.getTimeZone(zone))
    os.environ["TZ"] = zone
    time.tzset()
    try:
        yield
    finally:
        zones_of_java.setDefault(before_default)
        spark.conf.set(key, before_session)
        if before_tz is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = before_tz
        time.tzset()


def test_with_no_session_zone_the_deltalake_path_reads_in_the_jvms_zone(spark, timed):
    """The JVM's default zone Asia/Kolkata (as ``TZ=Asia/Kolkata`` gives a JVM started with it) and no session zone
    set (as jobs/rank.py starts its session): the deltalake path reads naive literals and naive partition values in
    the JVM's zone, Kolkata, as Spark's reader did in the worker (in a session zone of Kolkata).

    Decision: this runs in the suite's session (its zone unset, its JVM's default zone set) rather than in a second
    process started with ``TZ``: spark_fr asks the session for every time's instant (``try_cast`` in the session,
    :mod:`spark_fr.io.delta_times`), and the session's zone with none set is ``TimeZone.getDefault`` of its JVM,
    read at each query, so both check the same rule; the process cost a Python and a JVM start."""
    with jvm_zone(spark, ZONE):
        zone = spark.conf.get("spark.sql.session.timeZone")
        got = {name: read_each(spark, timed["paths"][name])[0] for name in ("utc", "naive", "mapped", "deltalake")}
    assert zone == ZONE
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"  # put back
    for name, rows in got.items():
        for f, mine, truth in zip([None] + FILTERS, rows, timed[name]["truth"]):
            assert mine == truth, (name, f)


# ----- 7 and 10: the same one line from both readers, before any work ------------------------------------------
MANY = " OR ".join(f"id = {i}" for i in range(0, 3000, 3))  # 1,000 terms: ids 0, 3, 6, ...
DEEP = "(" * 60 + "x1 > 0" + ")" * 60 + " AND NOT NOT (id < 100)"  # allowed, deeper than deltalake's engine takes
BAD = ["x1 > 99999999999999999999", "x1 > 1e400", "(" * 65 + "x1 > 0" + ")" * 65]


def _error(fn):
    try:
        fn()
    except InputError as err:
        return str(err)
    return None


def case_edges(spark, root, paths):
    """In the Delta session: a percent-escape in an input and an output path (Spark's reader and writer take it
    literally), --timestamp-as-of before the first commit (path and catalog table), the filters of issue 37's item
    10."""
    from spark_fr.io.delta_table import run_records
    from spark_fr.io.readers import read_dataset
    from spark_fr.io.writers import Publication
    from tests.io.test_delta_lake import make_ranking

    out = {}
    source = f"{root}/in%41q"
    spark.createDataFrame(frame(40)).write.format("delta").save(source)
    spark.createDataFrame(frame(60)).write.format("delta").mode("overwrite").save(source)
    out["escaped_input"] = [len(read_dataset(spark, source, version=v).df.collect()) for v in (0, 1)]
    out["escaped_source"] = source
    out["escaped_before_first"] = _error(lambda: read_dataset(spark, source, timestamp="2000-01-01"))
    target = f"{root}/out%41q"
    for seed in (1, 2):
        Publication(target, "delta", spark=spark).check().publish(make_ranking(seed))
    out["escaped_output"] = {"runs": len(run_records(target, spark=spark)), "listing": sorted(os.listdir(root))}
    out["before_first"] = _error(lambda: read_dataset(spark, paths["utc"], timestamp="2000-01-01"))
    spark.sql("CREATE DATABASE IF NOT EXISTS tz")
    spark.sql(f"CREATE TABLE IF NOT EXISTS tz.hours USING delta LOCATION '{paths['utc']}'")
    out["catalog_before_first"] = _error(lambda: read_dataset(spark, None, table="tz.hours", timestamp="2000-01-01"))
    out["first_commit"] = spark.sql(f"DESCRIBE HISTORY delta.`{paths['utc']}`").selectExpr(
        "min(unix_millis(timestamp))").collect()[0][0]
    out["filters"] = {f: sorted(r["id"] for r in read_dataset(spark, paths["utc"], where=f).df.select("id").collect())
                      for f in (MANY, DEEP)}
    out["bad"] = [_error(lambda f=f: read_dataset(spark, paths["utc"], where=f)) for f in BAD]
    return out


@pytest.fixture(scope="module")
def edges(timed, request):
    """:func:`case_edges`' answers (started by the ``timed`` fixture). Once the worker is done, the Connect
    session's reads (:func:`case_connect_rows`) start, so that they run while this process runs the tests that
    follow (``timed['connect_rows']``)."""
    answers = timed["edges"].get()
    if collected(request, CONNECT_TEST):
        timed["connect_rows"] = request.getfixturevalue("connect").start(
            case_connect_rows, {n: timed["paths"][n] for n in CONNECT_TABLES})
    return answers


def test_a_timestamp_before_the_first_commit_is_one_line_on_both_readers_and_a_catalog_table(spark, timed, edges):
    from spark_fr.io.readers import read_dataset

    from deltalake import DeltaTable

    def shown(ms):
        return pd.Timestamp(ms, unit="ms", tz="UTC").strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"

    path = timed["paths"]["utc"]
    # a path's versions are pinned by deltalake (the commit's own timestamp, commitInfo); a catalog table's by
    # DESCRIBE HISTORY (Delta's commit file time): each message names the time its reader goes by
    first = shown(min(DeltaTable(path).history(), key=lambda c: c["version"])["timestamp"])
    expected = f"{path}: no version at --timestamp-as-of 2000-01-01 (the first commit is at {first})"
    assert edges["before_first"] == expected  # Spark's reader (the version pinned by deltalake)
    assert _error(lambda: read_dataset(spark, path, timestamp="2000-01-01")) == expected  # deltalake's path
    assert edges["catalog_before_first"] == (f"--input-table tz.hours: no version at --timestamp-as-of 2000-01-01 "
                                             f"(the first commit is at {shown(edges['first_commit'])})")
    assert "no version at --timestamp-as-of 2000-01-01 (the first commit is at 20" in edges["escaped_before_first"]
    # at or after the first commit it still reads: the version of that moment
    assert read_dataset(spark, path, timestamp=first).extra["fingerprint"]["delta_version"] == 0


def test_the_job_refuses_a_timestamp_before_the_first_commit(timed, capsys):
    code, _, err = run_job(["--input", timed["paths"]["naive"], "--targets", "y", "--exclude", "id",
                            "--timestamp-as-of", "1999-12-31T23:00:00Z", "--trees", 4], capsys)
    assert code == 2 and "no version at --timestamp-as-of 1999-12-31T23:00:00Z (the first commit is at" in err


def test_a_percent_escape_in_a_delta_path(spark, edges, tmp_path, capsys):
    """Spark's reader and writer take '%41' literally (the table at exactly that path, two runs appended, nothing at
    'outAq'); deltalake, which would read it as 'A', refuses it in one line before any work, writing nothing."""
    from spark_fr.io.readers import read_dataset
    from spark_fr.io.writers import Publication

    assert edges["escaped_input"] == [40, 60]
    assert edges["escaped_output"]["runs"] == 2 and "out%41q" in edges["escaped_output"]["listing"]
    assert not {"outAq", "inAq"} & set(edges["escaped_output"]["listing"])
    target = tmp_path / "rankings%41"
    with pytest.raises(InputError) as err:
        Publication(str(target), "delta").check()
    assert "holds a percent-escape ('%41')" in str(err.value) and "\n" not in str(err.value)
    data = tmp_path / "data.parquet"
    frame(60).to_parquet(data, index=False)
    code, _, err = run_job(["--input", data, "--targets", "y", "--trees", 4, "--output", target,
                            "--output-format", "delta"], capsys)
    assert code == 2 and "holds a percent-escape ('%41')" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.parquet"]
    message = _error(lambda: read_dataset(spark, edges["escaped_source"]))  # an input there, read by deltalake
    assert message.startswith(f"{edges['escaped_source']}: the path holds a percent-escape ('%41')")


def test_where_of_a_thousand_terms_and_deep_nesting_on_both_readers(spark, timed, edges):
    """1,000 OR-ed terms and 60 nested parentheses: the same rows from Spark's reader, from deltalake's engine (the
    filter too deep for DataFusion is applied by Spark) and from Spark reading the files."""
    from spark_fr.io.readers import read_dataset

    pdf = frame()
    expected = {MANY: sorted(pdf.id[pdf.id % 3 == 0]), DEEP: sorted(pdf.id[(pdf.x1 > 0) & (pdf.id < 100)])}
    for f in (MANY, DEEP):
        assert edges["filters"][f] == expected[f]
        for name in ("utc", "mapped"):
            got = read_dataset(spark, timed["paths"][name], where=f).df.select("id").collect()
            assert sorted(r["id"] for r in got) == expected[f], name


def test_bad_filters_are_the_same_one_line_on_both_readers(spark, timed, edges, capsys):
    from spark_fr.io.readers import read_dataset

    for f, spark_reader in zip(BAD, edges["bad"]):
        for name in ("utc", "mapped"):
            assert _error(lambda: read_dataset(spark, timed["paths"][name], where=f)) == spark_reader
        assert "\n" not in spark_reader
    assert "the integer 99999999999999999999 (position 6) does not fit in 64 bits" in edges["bad"][0]
    assert "the number 1e400 (position 6) is beyond the range of a double" in edges["bad"][1]
    assert "nest more than 64 levels deep" in edges["bad"][2] and "the limit is 64" in edges["bad"][2]
    code, _, err = run_job(["--input", timed["paths"]["mapped"], "--targets", "y", "--trees", 4,
                            "--where", "x2 < -99999999999999999999"], capsys)
    assert code == 2 and "the integer -99999999999999999999 (position 6) does not fit in 64 bits" in err


def test_a_partitioned_table_under_a_path_with_a_space_reads_on_the_deltalake_path(spark, tmp_path):
    """deltalake's file URIs percent-encode the table's own path ('my%20lake'), which Spark reads literally: the data
    files are the table's path joined with the log's paths, decoded."""
    import pyarrow as pa
    from deltalake import write_deltalake

    from spark_fr.io.readers import read_dataset

    path = str(tmp_path / "my lake 100%zz")  # a space, and a '%' that is no escape (deltalake serves it)
    pdf = frame(50)
    pdf["region"] = np.where(pdf.id % 2 == 0, "eu west", "us")
    write_deltalake(path, pa.Table.from_pandas(pdf, preserve_index=False), partition_by=["region"])
    ds = read_dataset(spark, path, where="region = 'eu west'")
    assert ds.extra["fingerprint"]["reader"] == "deltalake"
    assert sorted(r["id"] for r in ds.df.select("id").collect()) == list(range(0, 50, 2))


def case_connect_rows(spark, paths):
    from spark_fr.io.readers import read_dataset

    with zones(spark, ZONE, MACHINE):
        return {name: [rows_of(read_dataset(spark, p, where=f).df) for f in [None] + FILTERS]
                for name, p in paths.items()}


CONNECT_TEST, CONNECT_TABLES = "test_under_spark_connect_the_same_rule", ("utc", "mapped", "deltalake")


def test_under_spark_connect_the_same_rule(connect, timed):
    """A Spark Connect session (no Delta in its server: deltalake reads) in Asia/Kolkata: Spark's rows and times
    (the reads started by the ``edges`` fixture)."""
    started = timed.get("connect_rows")  # by the ``edges`` fixture; else here
    got = (started.get() if started is not None else
           connect.run(case_connect_rows, {n: timed["paths"][n] for n in CONNECT_TABLES}))
    assert set(got) == set(CONNECT_TABLES)
    for name, rows in got.items():
        assert rows == timed[name]["truth"], name
