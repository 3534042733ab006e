"""spark_fr.data.stats (and the encoding of spark_fr.data.blocks): the statistics pass and the encoding report
progress against a fixed total, the input's columns, in Spark tasks and on the driver; a quick pass stays out of
the log. (The statistics themselves: tests/data/test_encoding.py and the golden rankings.)"""
import logging

import numpy as np
import pandas as pd

from spark_fr.data.prepare import encode
from spark_fr.data.schema import resolve
from spark_fr.io.readers import read_dataset

COLUMNS = 120  # a small wide frame: 120 features and the target


def wide(spark):
    rng = np.random.default_rng(0)
    pdf = pd.DataFrame(rng.normal(size=(200, COLUMNS)), columns=[f"x{i}" for i in range(COLUMNS)])
    return spark.createDataFrame(pdf.assign(y=rng.normal(size=200))).repartition(3).cache()


def progress_of(spark, df, caplog, **kw) -> dict:
    """{label: [progress states]} of an encoding of ``df`` (target y)."""
    caplog.clear()
    ds = read_dataset(spark, df)
    with caplog.at_level(logging.INFO, logger="spark_fr.progress"):
        encode(ds, resolve(ds, "y"), spark=spark, **kw)
    out = {}
    for r in caplog.records:
        if r.name == "spark_fr.progress":
            out.setdefault(r.progress["label"], []).append((r.progress, r.getMessage()))
    return out


def test_statistics_and_encoding_report_against_the_columns(spark, caplog, monkeypatch):
    """The statistics pass, the encoding and (a small input) the DataFrame's collection to the driver report
    against the fixed total of the columns."""
    df = wide(spark)
    monkeypatch.setenv("SPARK_FR_PROGRESS_SECONDS", "0.002")  # a line every 2 ms: several per pass
    for where in ({"local_limit": 0}, {}):  # Spark tasks, then the DataFrame collected and the driver's batches
        lines = progress_of(spark, df, caplog, **where)
        # Spark's passes (and the collection to the driver, a Spark job) last longer than a line's 2 ms: they
        # report. The driver's batches over 200 rows may end before the first line once their kernels are compiled
        # (a brief pass logs nothing, as asserted below): what they report must still count against the total.
        spark_passes = ("statistics", "encoding") if where else ("collecting",)
        expected = sorted(set(spark_passes) | set(lines))
        assert set(lines) <= {"statistics", "encoding"} | ({"collecting"} if not where else set()), sorted(lines)
        for label in expected:
            assert label in lines, (where, label, sorted(lines))
            states = [s for s, _ in lines[label]]
            assert {(s["total"], s["unit"]) for s in states} == {(COLUMNS + 1, "columns")}, (where, label)
            assert [s["done"] for s in states] == sorted(s["done"] for s in states)
            assert states[-1]["final"] and states[-1]["done"] == COLUMNS + 1
            assert lines[label][-1][1].startswith(f"{label}: 121 / 121 columns (100 %), ")
            assert all(m.startswith(f"{label}: ") and " / 121 columns (" in m for _, m in lines[label])
    monkeypatch.delenv("SPARK_FR_PROGRESS_SECONDS")  # 5 s: these passes end before their first line
    assert progress_of(spark, df, caplog, local_limit=0) == {}


def awkward_table(rows: int = 300) -> pd.DataFrame:
    """Numbers with NaN, nulls and infinities, few and many distinct values, integers, strings, booleans, an
    all-missing column; target y."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=rows)
    x[rng.random(rows) < 0.1] = np.nan
    x[:3] = [np.inf, -np.inf, np.inf]
    few = rng.integers(0, 40, rows) / 4.0  # at most 40 distinct values: kept as a set
    few[rng.random(rows) < 0.2] = np.nan
    ints = pd.array(rng.integers(-5, 500, rows), dtype="Int64")  # about 300 distinct: more than 255
    ints[rng.random(rows) < 0.15] = pd.NA
    words = np.array(["a", "b", "c d", "é", ""], dtype=object)[rng.integers(0, 5, rows)]
    words[rng.random(rows) < 0.2] = None
    flags = pd.array(rng.random(rows) < 0.3, dtype="boolean")
    flags[rng.random(rows) < 0.1] = pd.NA
    return pd.DataFrame({"x": x, "few": few, "ints": ints, "words": words, "flags": flags,
                         "none": np.full(rows, np.nan), "zero": np.zeros(rows), "y": rng.normal(size=rows)})


def reference_stats(pdf: pd.DataFrame, kinds: dict) -> dict:
    """{column: (n_known, n_missing, min, max, distinct or None, counts or None)}: the obvious way, per column."""
    from spark_fr.data.stats import MAX_DISTINCT

    out = {}
    for name, kind in kinds.items():
        col = pdf[name]
        if kind == "nominal":
            texts = [None if pd.isna(v) else str(bool(v)).lower() if isinstance(v, (bool, np.bool_)) else str(v)
                     for v in col]
            known = [t for t in texts if t is not None]
            counts = {t: known.count(t) for t in set(known)}
            out[name] = (len(known), len(texts) - len(known), np.inf, -np.inf, (), counts)
            continue
        v = np.array([np.nan if pd.isna(a) else float(a) for a in col])
        known = v[~np.isnan(v)]
        distinct = np.unique(known)
        out[name] = (known.size, v.size - known.size, known.min() if known.size else np.inf,
                     known.max() if known.size else -np.inf,
                     tuple(distinct) if distinct.size <= MAX_DISTINCT else None, None)
    return out


def test_statistics_equal_a_slow_reference_for_any_partitioning(spark):
    """Every statistic of every column, and the hash-selected sample, as the obvious per-column computation
    gives them, whatever the partitioning, in Spark tasks and from the driver's batches."""
    import pyarrow as pa

    from spark_fr.data.columns import BatchValues
    from spark_fr.data.prepare import column_statistics
    from spark_fr.data.rowkeys import raw_row_hashes

    pdf = awkward_table()
    base = spark.createDataFrame(pdf)
    frames = {"one part": base.coalesce(1), "7 parts by words": base.repartition(7, "words")}
    k = 50
    for label, df in frames.items():
        ds = read_dataset(spark, df)
        spec = resolve(ds, "y")
        columns = spec.features + spec.targets
        kinds = {c.name: c.kind for c in columns}
        assert kinds["words"] == kinds["flags"] == "nominal" and kinds["ints"] == "numeric"
        expected = reference_stats(pdf, kinds)
        source, cols = ds.batch_source().narrow(columns)
        # the sample's reference: the k rows with the smallest hash of their feature values, in one batch
        table = pa.Table.from_pandas(pdf[[c.name for c in columns]], preserve_index=False)
        batch = table.rename_columns([c.column for c in cols]).combine_chunks().to_batches()[0]
        hashes = raw_row_hashes(BatchValues(batch, cols), len(spec.features))
        keep = np.argsort(hashes, kind="stable")[:k]
        numeric = [i for i, c in enumerate(columns) if c.kind == "numeric"]
        sample = np.array([[np.nan if pd.isna(a) else float(a) for a in pdf[columns[i].name].to_numpy()[keep]]
                           for i in numeric]).T
        for local in (False, True):
            stats, _ = column_statistics(spark, source, ds, cols, len(spec.features), k, local)
            assert stats.n_rows == len(pdf), (label, local)
            for c, s in zip(columns, stats.columns):
                got = (s.n_known, s.n_missing, s.vmin, s.vmax,
                       None if s.distinct is None else tuple(s.distinct), s.counts)
                if c.kind == "nominal":
                    got = got[:4] + ((),) + got[5:]
                assert got == expected[c.name], (label, local, c.name)
            order = np.argsort(stats.sample.hashes, kind="stable")
            assert np.array_equal(stats.sample.hashes[order], hashes[keep]), (label, local)
            assert stats.sample.columns == numeric
            np.testing.assert_array_equal(stats.sample.values[order], sample, err_msg=f"{label} {local}")
