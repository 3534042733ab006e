"""Relational sources that used to give silently wrong features (issue "No silent wrong result on the new
surfaces", class 1), with both engines: integer keys beyond 2^53, a malformed value in a numeric or date column,
standard deviations and means of finite values that overflowed, keys of different types compared differently by
the checks and the joins, infinite source values and empty target tables reported under names the user cannot
fix. Also the typing rule (spark_fr.io.csv_types) and the key plan (spark_fr.relational.keys) on their own."""
import logging
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from spark_fr.errors import InputError
from spark_fr.io import csv_types as CT
from spark_fr.relational import generate_features, load_schema
from spark_fr.relational.keys import BIGINT, DECIMAL, DOUBLE, TEXT, key_plan
from spark_fr.relational.rank import rank_relational

ENGINES = ["local", "spark"]


def schema_with(folder: Path, files: dict, tx=None, cust=None, depth=1, header=False) -> dict:
    """A customer <- transaction schema over files written into ``folder``."""
    for name, text in files.items():
        p = folder / name
        if callable(text):
            text(p)
        else:
            p.write_text(text)
    cust_spec = {"source": str(folder / "cust.tsv"), "key": "cid",
                 **({} if header else {"columns": ["cid", "cls", "v", "when"]}), **(cust or {})}
    tx_spec = {"source": str(folder / "tx.tsv"), "key": "tid", "foreign_keys": {"cid": "cust"},
               **({} if header else {"columns": ["tid", "cid", "amount"]}), **(tx or {})}
    return {"tables": {"cust": cust_spec, "tx": tx_spec}, "target": {"table": "cust", "column": "cls"},
            "max_depth": depth}


CUST = "".join(f"{i}\t{'ab'[i % 2]}\t{i * 0.5}\t2021-01-{i + 1:02d}\n" for i in range(1, 9))
TX = "".join(f"{i}\t{i % 8 + 1}\t{i * 1.5}\n" for i in range(30))


def generate(spark, cfg, engine):
    return rows_of(generate_features(None if engine == "local" else spark, cfg, engine=engine))


def rows_of(g):
    """A generation and its features as pandas, sorted by id."""
    pdf = g.pandas if g.pandas is not None else g.frame.toPandas()
    return g, pdf.sort_values(g.id).reset_index(drop=True)


# --- the typing rule and the key plan -----------------------------------------------------------------------
@pytest.mark.parametrize("counts,typed,declared,expected", [
    (CT.Counts(10, 10, 10, 10, 10), True, None, (CT.BIGINT, None)),
    (CT.Counts(10, 10, 10, 9, 10), True, None, (CT.DECIMAL, None)),
    (CT.Counts(10, 10, 10, 9, 9), True, None, (CT.DOUBLE, None)),
    (CT.Counts(10, 10, 10, 10, 10), False, None, (CT.DOUBLE, None)),  # flat tables: doubles as before
    (CT.Counts(10, 10, 4), True, None, (CT.DOUBLE, None)),
    (CT.Counts(10, 9), True, None, (None, CT.NOT_A_NUMBER)),  # a decimal comma among numbers
    (CT.Counts(10, 5), False, None, (None, CT.NOT_A_NUMBER)),
    (CT.Counts(10, 4), True, None, (CT.STRING, None)),  # mostly text: nominal
    (CT.Counts(10, 0, dates=10), True, None, (CT.DATE, None)),
    (CT.Counts(10, 0, dates=10), False, None, (CT.STRING, None)),
    (CT.Counts(10, 0, dates=9), True, None, (None, CT.NOT_A_DATE)),  # an impossible date
    (CT.Counts(10, 9), True, "nominal", (CT.STRING, None)),  # a declared type wins
    (CT.Counts(10, 1), True, "numeric", (None, CT.NOT_A_NUMBER)),
    (CT.Counts(10, 0, dates=10), True, "date", (CT.DATE, None)),
    (CT.Counts(10, 9), True, "id", (CT.STRING, None)),  # ids are never an error
    (CT.Counts(10, 10, 10, 10, 10), True, "id", (CT.BIGINT, None)),
    (CT.Counts(0, 0), True, None, (CT.STRING, None)),
])
def test_column_type(counts, typed, declared, expected):
    assert CT.column_type(counts, typed, declared) == expected


def test_key_plan_compares_each_group_of_linked_columns_in_one_type():
    schema = load_schema({"tables": {
        "a": {"key": "k", "foreign_keys": {"b_id": "b"}}, "b": {"key": "k"},
        "c": {"key": "k", "foreign_keys": {"a_id": "a", "d_id": "d"}}, "d": {"key": "k"},
        "e": {"key": "k", "foreign_keys": {"d_id": "d"}}},
        "target": {"table": "a", "column": "y"}})
    types = {("a", "k"): "bigint", ("a", "b_id"): "string", ("b", "k"): "double",
             ("c", "k"): "int", ("c", "a_id"): "int", ("c", "d_id"): "decimal(38,0)", ("d", "k"): "bigint",
             ("e", "k"): "string", ("e", "d_id"): "bigint"}
    plan = key_plan(schema, types)
    assert plan[("a", "b_id")] is None and plan[("b", "k")] == TEXT  # a text column: all as text
    assert plan[("a", "k")] is None and plan[("c", "a_id")] == BIGINT  # integers: bigint (a.k is one)
    assert plan[("c", "d_id")] is None and plan[("d", "k")] == DECIMAL and plan[("e", "d_id")] == DECIMAL
    assert plan[("e", "k")] is None and plan[("c", "k")] is None  # nothing points at them
    types[("b", "k")] = "double"
    types[("a", "b_id")] = "int"
    assert key_plan(schema, types)[("a", "b_id")] == DOUBLE
    types[("a", "b_id")] = "date"
    with pytest.raises(InputError, match="table 'a' column 'b_id' \\(date\\) and table 'b' column 'k' \\(double\\)"):
        key_plan(schema, types)


# --- integer keys beyond 2^53 --------------------------------------------------------------------------------
@pytest.mark.parametrize("header", [False, True])
def test_integer_keys_beyond_2_53_join_their_own_rows(spark, tmp_path, header):
    """2^53 + 1 is not a double: read as one, it became 2^53 and joined the other customer's transactions."""
    big = 2 ** 53
    cust = f"{big}\ta\t1.5\t2021-01-01\n{big + 2}\tb\t2.5\t2021-01-02\n1\ta\t3.5\t2021-01-03\n"
    tx = f"1\t{big + 1}\t10\n2\t{big + 2}\t20\n3\t{big}\t11\n4\t1\t5\n"
    if header:
        cust, tx = "cid\tcls\tv\twhen\n" + cust, "tid\tcid\tamount\n" + tx
    cfg = schema_with(tmp_path, {"cust.tsv": cust, "tx.tsv": tx}, header=header)
    g, pdf = rows_of(generate_features(spark, cfg))
    assert g.engine == "spark"  # the local engine leaves such integers to Spark (auto: the Spark engine's run)
    assert pdf["cid"].tolist() == [1, big, big + 2] and pdf["cid"].dtype == np.int64
    assert pdf["tx__count"].tolist() == [1, 1, 1]  # 2^53 + 1 dangles; 2^53 has only its own transaction
    assert pdf["tx__amount__sum"].tolist() == [5.0, 11.0, 20.0]


# --- a malformed value in a numeric or date column ------------------------------------------------------------
MALFORMED = {
    "decimal_comma": ({"tx.tsv": TX.replace("\t4.5\n", "\t4,5\n")}, {},
                      "tx.tsv line 4: column 'amount': '4,5' is not a number (the column is otherwise numeric)"),
    "impossible_date": ({"cust.tsv": CUST.replace("2021-01-03", "2021-02-30")}, {},
                        "cust.tsv line 2: column 'when': '2021-02-30' is not a date (yyyy-MM-dd) (the column is "
                        "otherwise dates)"),
    "declared_numeric": ({"tx.tsv": TX.replace("\t4.5\n", "\tabc\n")}, {"tx": {"types": {"amount": "numeric"}}},
                         "tx.tsv line 4: column 'amount': 'abc' is not a number (the schema declares it numeric)"),
    "declared_date": ({"cust.tsv": CUST.replace("2021-01-05", "soon")},
                      {"cust": {"types": {"when": "date"}}},
                      "cust.tsv line 4: column 'when': 'soon' is not a date (yyyy-MM-dd) (the schema declares it"),
    "short_row": ({"tx.tsv": TX.replace("3\t4\t4.5\n", "3\t4\n")}, {},
                  "tx.tsv line 4: expected 3 fields (as in the column names given), found 2"),
    "infinite": ({"tx.tsv": TX.replace("\t4.5\n", "\t-1e999\n")}, {},
                 "tx.tsv line 4: column 'amount' holds an infinite value (-inf), written '-1e999'"),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_value_that_does_not_fit_its_column_is_named_with_its_file_line_and_column(spark, tmp_path, engine, case):
    files, specs, message = MALFORMED[case]
    cfg = schema_with(tmp_path, {"cust.tsv": CUST, "tx.tsv": TX, **files},
                      tx=specs.get("tx"), cust=specs.get("cust"))
    with pytest.raises(InputError) as err:
        generate(spark, cfg, engine)
    assert message in str(err.value) and str(tmp_path) in str(err.value)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_declared_nominal_type_takes_a_numeric_looking_column_as_it_is(spark, tmp_path, engine):
    cfg = schema_with(tmp_path, {"cust.tsv": CUST, "tx.tsv": TX.replace("\t4.5\n", "\t4,5\n")},
                      tx={"types": {"amount": "nominal"}})
    g, pdf = generate(spark, cfg, engine)
    assert "tx__amount__mode" in pdf.columns and "tx__amount__mean" not in pdf.columns
    assert pdf.loc[pdf.cid == 4, "tx__amount__mode"].iloc[0] in {"4,5", "16.5", "28.5"}


# --- overflow ------------------------------------------------------------------------------------------------
def _exact_std(values):
    xs = [Fraction(v) for v in values]
    m = sum(xs) / len(xs)
    var = sum((x - m) ** 2 for x in xs) / (len(xs) - 1)
    return math.sqrt(var) if var < Fraction(10) ** 300 else math.sqrt(var / Fraction(2) ** 1200) * 2.0 ** 600


GROUPS = {1: [1e308, 1.0], 2: [1.7e308, 1.7e308, 1.0], 3: [-1.5e308, 1.0e308, 3.0], 4: [2.5, 4.0]}


@pytest.fixture(scope="module", params=[True, False], ids=["sorted", "fixed-point"])
def overflow_runs(request, spark, tmp_path_factory):
    """(count_distinct, {engine: its sorted features}) of the groups above: each engine's run made once, read by
    both engines' tests (each compares its own with the other's)."""
    count_distinct = request.param
    rows = [(i, c, v) for i, (c, v) in enumerate((c, v) for c, vs in GROUPS.items() for v in vs)]
    tx = "".join(f"{i}\t{c}\t{v!r}\n" for i, c, v in rows)
    aggs = ["count", "mean", "std", "sum"] + (["count_distinct"] if count_distinct else [])
    cfg = schema_with(tmp_path_factory.mktemp("overflow"), {"cust.tsv": CUST, "tx.tsv": tx})
    cfg["aggregates"] = {"numeric": aggs}
    return count_distinct, {engine: generate(spark, cfg, engine)[1] for engine in ENGINES}


@pytest.mark.parametrize("engine", ENGINES)
def test_means_and_standard_deviations_of_finite_values_are_finite(overflow_runs, engine):
    """{1e308, 1}: the squared deviations overflowed to inf (sorted path); the sum of {1.7e308, 1.7e308, 1} too,
    and the mean from it. Both are now within a few ulps of the exact values, the same bits in both engines."""
    count_distinct, runs = overflow_runs
    pdf = runs[engine]
    by = pdf.set_index("cid")
    for c, vs in GROUPS.items():
        if c == 4 and not count_distinct:
            continue  # fixed point on the column's grid 2^(1024 - 96): values this far below the largest vanish
        mean = float(sum(Fraction(v) for v in vs) / len(vs))
        assert by.loc[c, "tx__amount__mean"] == pytest.approx(mean, rel=1e-15), c
        assert by.loc[c, "tx__amount__std"] == pytest.approx(_exact_std(vs), rel=1e-14), c
    assert np.isinf(by.loc[2, "tx__amount__sum"])  # the sum itself is beyond the largest double
    other = runs["spark" if engine == "local" else "local"]
    for col in ("tx__amount__mean", "tx__amount__std"):
        assert np.array_equal(pdf[col].to_numpy().view(np.int64), other[col].to_numpy().view(np.int64)), col


def test_a_generated_feature_that_overflows_is_reported_with_its_lineage(tmp_path):
    tx = "".join(f"{i}\t{i % 8 + 1}\t{1.7e308!r}\n" for i in range(30))
    cfg = schema_with(tmp_path, {"cust.tsv": CUST, "tx.tsv": tx})
    cfg["aggregates"] = {"numeric": ["sum"]}
    with pytest.raises(InputError) as err:
        rank_relational(schema=cfg, trees=3, engine="local", cv_folds=0)
    text = str(err.value)
    assert "'tx__amount__sum' (sum of column 'amount' of table 'tx'" in text and "scale them down" in text
    assert str(tmp_path / "tx.tsv") in text


# --- keys of different types ----------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_keys_of_different_types_are_checked_as_they_are_joined(spark, tmp_path, engine, caplog):
    """A text foreign key against integer keys: the check reported 100 % dangling where one row in 31 was."""
    def parquet(path):
        pd.DataFrame({"tid": np.arange(31), "cid": [str(i % 8 + 1) for i in range(30)] + ["X17"],
                      "amount": np.arange(31) * 1.5}).to_parquet(path.with_suffix(".parquet"))

    cfg = schema_with(tmp_path, {"cust.tsv": CUST, "tx.tsv": parquet}, tx={"source": str(tmp_path / "tx.parquet")})
    del cfg["tables"]["tx"]["columns"]
    with caplog.at_level(logging.WARNING, logger="spark_fr.relational.checks"):
        g, pdf = generate(spark, cfg, engine)
    assert "3.2% of the foreign keys 'cid' (1 rows) have no row in 'cust'" in caplog.text
    assert pdf["tx__count"].sum() == 30 and pdf["tx__count"].tolist() == [4, 4, 4, 4, 4, 4, 3, 3]


# --- infinite and empty sources are named as the user knows them ------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_an_infinite_source_value_names_the_table_and_column(spark, tmp_path, engine):
    def parquet(path):
        pd.DataFrame({"tid": np.arange(30), "cid": np.arange(30) % 8 + 1,
                      "amount": [1.0] * 29 + [-np.inf]}).to_parquet(path.with_suffix(".parquet"))

    cfg = schema_with(tmp_path, {"cust.tsv": CUST, "tx.tsv": parquet}, tx={"source": str(tmp_path / "tx.parquet")})
    del cfg["tables"]["tx"]["columns"]
    with pytest.raises(InputError, match=r"table 'tx' \(.*tx.parquet\): column 'amount' holds an infinite value"):
        generate(spark, cfg, engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_empty_target_table_is_named_when_ranked(spark, tmp_path, engine):
    """Generating gives an empty feature table (as a query would); ranking it names the target table (it said
    "the input has no rows" of a temporary file)."""
    cfg = schema_with(tmp_path, {"cust.tsv": "", "tx.tsv": TX})
    assert generate(spark, cfg, engine)[1].shape == (0, 11)
    with pytest.raises(InputError, match=r"the target table 'cust' has no rows \(.*cust.tsv\)"):
        rank_relational(schema=cfg, trees=3, engine=engine, cv_folds=0, spark=spark)


def test_an_empty_child_table_is_a_table_without_rows(spark, tmp_path):
    """An empty headerless file is a table without rows (its columns have no values: text)."""
    cfg = schema_with(tmp_path, {"cust.tsv": CUST, "tx.tsv": ""})
    (g, pdf), (g2, pdf2) = (generate(spark, cfg, engine) for engine in ENGINES)
    assert g.features == g2.features and "tx__amount__mode" in g.features
    assert pdf["tx__count"].tolist() == pdf2["tx__count"].tolist() == [0] * 8
    assert pdf["tx__amount__mode"].isna().all() and pdf2["tx__amount__mode"].isna().all()


def test_a_string_column_declared_numeric_names_its_first_bad_value(spark, tmp_path):
    """Spark's cast failed late with [CAST_INVALID_INPUT] and no table or column."""
    def parquet(path):
        pd.DataFrame({"tid": np.arange(30), "cid": np.arange(30) % 8 + 1,
                      "amount": ["1.5"] * 28 + ["x", "2"]}).to_parquet(path.with_suffix(".parquet"))

    cfg = schema_with(tmp_path, {"cust.tsv": CUST, "tx.tsv": parquet},
                      tx={"source": str(tmp_path / "tx.parquet"), "types": {"amount": "numeric"}})
    del cfg["tables"]["tx"]["columns"]
    with pytest.raises(InputError, match=r"table 'tx' \(.*\): column 'amount' is declared numeric but holds 'x'"):
        generate(spark, cfg, "auto")


def test_rank_relational_refuses_options_of_flat_tables_before_reading_anything(tmp_path):
    cfg = schema_with(tmp_path, {})  # no file exists: the options are checked first
    for name in ("targets", "labels_xml", "format", "features_col"):
        with pytest.raises(InputError, match=f"rank_relational does not take {name}="):
            rank_relational(schema=cfg, **{name: "y"})
    with pytest.raises(InputError, match="--max-features-generated must be a positive integer"):
        rank_relational(schema=cfg, max_features_generated=0)


def test_json_text_values_are_typed_as_csv_values_are(spark, tmp_path):
    """Spark's JSON reader makes a field text when one value is text ("0,5"): the same rule as for CSV applies,
    to nested elements too; quoted numbers and yyyy-MM-dd dates become numbers and dates."""
    import json

    mols = [{"w": 1.5 + i, "day": f"2021-01-{i + 1:02d}", "y": "ab"[i % 2],
             "atoms": [{"charge": f"{0.1 * j:.1f}", "el": "c"} for j in range(3)]} for i in range(10)]
    cfg = {"tables": {"m": {"source": str(tmp_path / "m.json")}, "atom": {"explode": {"table": "m", "column": "atoms"}}},
           "target": {"table": "m", "column": "y"}, "max_depth": 1}

    def run(change=None):
        data = json.loads(json.dumps(mols))
        if change:
            change(data)
        (tmp_path / "m.json").write_text(json.dumps(data))
        return generate_features(spark, cfg, engine="spark")

    types = dict(run().frame.dtypes)
    assert types["day"] == "double" and types["atom__charge__mean"] == "double" and types["atom__el__mode"] == "string"
    with pytest.raises(InputError, match=r"table 'atom' \(the elements of m.atoms in .*m.json\): column 'charge': "
                                         r"'0,5' is not a number"):
        run(lambda d: d[3]["atoms"][1].update(charge="0,5"))
    with pytest.raises(InputError, match=r"table 'm' \(.*m.json\): column 'day': '2021-02-30' is not a date"):
        run(lambda d: d[2].update(day="2021-02-30"))
