"""The fact table's pass and nominal values from one scan (:func:`spark_fr.relational.profiles.fused_pass`): the
same rows, foreign-key counts, largest values, frequent values and domains as the two separate jobs
(:func:`spark_fr.relational.checks.table_pass` and :func:`spark_fr.relational.profiles.nominal_values`), for
random tables with missing and dangling values, ties, more values than a domain holds, and any partitioning."""
import numpy as np
import pytest
from pyspark.sql import functions as F

from spark_fr.relational.checks import key_types, table_pass
from spark_fr.relational.keys import key_plan
from spark_fr.relational.plan import DOMAIN_LIMIT
from spark_fr.relational.profiles import fused_pass, nominal_values
from spark_fr.relational.schema import load_schema

SCHEMA = {"tables": {"p": {"key": "pid"}, "f": {"key": "fid", "foreign_keys": {"pid": "p", "qid": "p"}}},
          "target": {"table": "p", "column": "label"}}


def _fact(spark, seed: int, rows: int, partitions: int):
    """A fact table of ``rows`` random rows: two foreign keys (missing and dangling values), a nominal column
    with a few values (ties, missing), one with more than DOMAIN_LIMIT values, one always missing, a number and
    a date (missing values)."""
    rng = np.random.default_rng(seed)
    data = []
    for i in range(rows):
        pid = None if rng.random() < 0.1 else int(rng.integers(0, 12))  # parents 0..9: 10 and 11 dangle
        qid = None if rng.random() < 0.3 else int(rng.integers(5, 9))
        color = None if rng.random() < 0.2 else str(rng.choice(["red", "blue", "green", "Blue", "é"]))
        code = f"c{int(rng.integers(0, DOMAIN_LIMIT + 20)):03d}"
        x = None if rng.random() < 0.1 else float(rng.normal(0, 10) * 10 ** int(rng.integers(-3, 4)))
        day = None if rng.random() < 0.1 else f"2020-0{int(rng.integers(1, 10))}-1{int(rng.integers(0, 10))}"
        data.append((i, pid, qid, color, code, None, x, day))
    df = spark.createDataFrame(data, "fid long, pid long, qid long, color string, code string, none string, "
                                     "x double, day string").withColumn("day", F.to_date("day"))
    return df.repartition(partitions)


def _compare(spark, fact, k: int):
    parent = spark.createDataFrame([(i, "y" if i % 2 else "n") for i in range(10)], "pid long, label string")
    frames = {"p": parent, "f": fact}
    schema = load_schema(SCHEMA)
    plan = key_plan(schema, key_types(schema, frames))
    links = schema.tables["f"].foreign_keys
    values = [("x", F.col("x")), ("day", F.unix_date("day").cast("double"))]
    nominal = [(c, F.col(c)) for c in ("color", "code", "none")]
    fused, fused_values = fused_pass(schema, "f", frames, plan, links, values, nominal, k)
    apart = table_pass(schema, "f", frames, plan, (), links, values)
    apart_values = nominal_values(fact, [(c, c) for c, _ in nominal], k)
    assert fused == apart
    assert fused_values == apart_values
    return fused, fused_values


@pytest.mark.parametrize("seed,rows,partitions,k", [(1, 400, 1, 5), (2, 700, 4, 3), (3, 300, 3, 0)])
def test_fused_pass_equals_the_two_jobs(spark, seed, rows, partitions, k):
    passed, (frequent, domains) = _compare(spark, _fact(spark, seed, rows, partitions), k)
    # the measures are those of the table, not of its exploded pairs
    assert passed.rows == rows
    assert passed.links["pid"][0] < rows and passed.links["pid"][1] > 0  # missing and dangling values seen
    assert domains["code"] is None and domains["none"] == () and frequent["none"] == []
    assert len(frequent["color"]) == min(k, 5) and set(domains["color"]) == {"red", "blue", "green", "Blue", "é"}


def test_fused_pass_of_an_empty_table(spark):
    passed, (frequent, domains) = _compare(spark, _fact(spark, 4, 50, 2).where(F.lit(False)), 5)
    assert (passed.rows, passed.links, passed.largest) == (0, {"pid": (0, 0), "qid": (0, 0)},
                                                           {"x": None, "day": None})
    assert frequent == {"color": [], "code": [], "none": []} and domains == {"color": (), "code": (), "none": ()}
