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
