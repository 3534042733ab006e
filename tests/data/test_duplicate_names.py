"""``--duplicate-names error|rename``: an input naming two columns alike, for every input format.

The rule (spark_fr.data.names) on its own, then each format with small files made here: the second column
named ``x`` carries the planted signal and the first is noise, so a ranking that puts the renamed column first
shows the values were read by position under the right name. Every input also holds an original column
``x__2``, so the repeat must become ``x__3`` (no column ends up under another's name).
"""
import json
import logging

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import spark_fr
from spark_fr.data.names import deduplicate, renamed_warning
from spark_fr.errors import InputError
from spark_fr.io.arff import ArffError, read_header
from spark_fr.io.readers import read_dataset

from tests.conftest import run_job, top

N = 120
HINT = "pass --duplicate-names rename to read the repeat as 'x__3'"


def planted(seed=0):
    """Columns x (noise), x (signal), x__2 (noise) and the class y of the second x."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (N, 3)).round(4)
    y = np.where(X[:, 1] > 0.5, "b", "a")
    return X, y


def rank(source, **kw):
    kw = {"trees": 8, "seed": 1, "scores": "genie3", "duplicate_names": "rename", **kw}
    return spark_fr.rank(source, **kw)


def check_renamed(ranking, caplog, signal="x__3", features=("x", "x__2", "x__3")):
    table = ranking.to_pandas()
    assert set(table.feature) == set(features)
    assert top(table, "genie3", k=1) == [signal]
    assert ranking.metadata["renamed_columns"] == {"x__3": "x"}
    assert ranking.metadata["params"]["duplicate_names"] == "rename"
    lines = [r.getMessage() for r in caplog.records if "renamed (--duplicate-names rename)" in r.getMessage()]
    assert len(lines) == 1 and "'x' (" in lines[0] and "-> 'x__3'" in lines[0], lines


# ----- the rule ------------------------------------------------------------------------------------------------
def test_the_kth_occurrence_becomes_name__k_and_never_takes_a_name_the_input_has():
    assert deduplicate(["a", "b"], "rename", source="s") == (["a", "b"], [])
    names, renamed = deduplicate(["x", "y", "x", "x", "y"], "rename", source="s")
    assert names == ["x", "y", "x__2", "x__3", "y__2"]
    assert [(r.name, r.new_name, r.first, r.position) for r in renamed] == [
        ("x", "x__2", 0, 2), ("x", "x__3", 0, 3), ("y", "y__2", 1, 4)]
    # x__2 and x__3 exist (the later x__2 too): the repeats take the next free numbers; a repeated x__2 is renamed
    names, _ = deduplicate(["x", "x", "x__3", "x", "x__2", "x__2"], "rename", source="s")
    assert names == ["x", "x__4", "x__3", "x__5", "x__2", "x__2__2"]
    assert len(set(names)) == len(names)
    # without case (Spark's default): 'A' and 'a' are one name; a free number is free without case too
    assert deduplicate(["A", "a", "A__2"], "rename", source="s", case_sensitive=False)[0] == ["A", "a__3", "A__2"]
    assert deduplicate(["A", "a"], "rename", source="s")[0] == ["A", "a"]


def test_error_names_the_input_the_name_and_both_positions():
    with pytest.raises(InputError) as err:
        deduplicate(["x", "y", "x__2", "x"], "error", source="f.csv line 1")
    assert str(err.value) == ("f.csv line 1: duplicate column name 'x' (columns 1 and 4); pass --duplicate-names "
                              "rename to read the repeat as 'x__3'")
    with pytest.raises(InputError, match=r"duplicate column name 'a' \(columns 1 and 2\) \(as 'A': Spark compares"):
        deduplicate(["A", "a"], "error", source="f", case_sensitive=False)
    with pytest.raises(InputError, match="--duplicate-names must be one of error, rename, not 'keep'"):
        deduplicate(["x"], "keep", source="f")


def test_one_warning_line_lists_each_renaming_once():
    _, renamed = deduplicate(["x", "x", "y", "y"], "rename", source="s")
    line = renamed_warning("in.csv", renamed + renamed)  # e.g. the same header in two files
    assert line == ("in.csv: names given twice, renamed (--duplicate-names rename): 'x' (column 2) -> 'x__2', "
                    "'y' (column 4) -> 'y__2'")
    assert "\n" not in line and renamed_warning("in.csv", []) is None


# ----- ARFF: dense, sparse, hierarchical, Mulan ------------------------------------------------------------------
ARFF_HEADER = "@relation d\n@attribute x numeric\n@attribute x numeric\n@attribute x__2 numeric\n"


def dense_arff(path):
    X, y = planted()
    rows = "".join(f"{a},{b},{c},{t}\n" for (a, b, c), t in zip(X, y))
    path.write_text(ARFF_HEADER + "@attribute y {a,b}\n@data\n" + rows)
    return path


def test_arff_dense_error_and_rename(spark, tmp_path, caplog):
    f = dense_arff(tmp_path / "d.arff")
    with pytest.raises(ArffError) as err:
        read_header(str(f))
    assert str(err.value) == ("d.arff line 3: duplicate attribute name 'x' (attributes 1 and 2; the first on "
                              f"line 2); {HINT}")
    assert [a.name for a in read_header(str(f), "rename").attributes] == ["x", "x__3", "x__2", "y"]
    caplog.set_level(logging.WARNING)
    check_renamed(rank(str(f), spark=spark, targets="y"), caplog)


def test_arff_sparse(spark, tmp_path, caplog):
    X, y = planted(1)
    rows = "".join("{" + f"0 {a},1 {b},2 {c},3 {t}" + "}\n" for (a, b, c), t in zip(X, y))
    f = tmp_path / "s.arff"
    f.write_text(ARFF_HEADER + "@attribute y {a,b}\n@data\n" + rows)
    with pytest.raises(InputError, match=f"s.arff line 3: duplicate attribute name 'x'.*{HINT}"):
        read_dataset(spark, str(f), targets=["y"])
    caplog.set_level(logging.WARNING)
    ranking = rank(str(f), spark=spark, targets="y")
    assert ranking.metadata["n_features"] == 3
    check_renamed(ranking, caplog)


def test_arff_hierarchical_class(spark, tmp_path, caplog):
    X, y = planted(2)
    labels = np.where(y == "b", "A/B", "C")
    rows = "".join(f"{a},{b},{c},{t}\n" for (a, b, c), t in zip(X, labels))
    f = tmp_path / "h.arff"
    f.write_text(ARFF_HEADER + "@attribute class hierarchical A,A/B,C\n@data\n" + rows)
    with pytest.raises(InputError, match=HINT):
        spark_fr.rank(str(f), spark=spark, trees=2)
    caplog.set_level(logging.WARNING)
    ranking = rank(str(f), spark=spark)
    assert ranking.metadata["params"]["task"] == "hmlc"
    check_renamed(ranking, caplog)


def test_mulan_arff_with_a_label_file(spark, tmp_path, caplog):
    X, y = planted(3)
    rows = "".join(f"{a},{b},{c},{int(t == 'b')},{int(a > 0.5)}\n" for (a, b, c), t in zip(X, y))
    f = tmp_path / "m.arff"
    f.write_text(ARFF_HEADER + "@attribute l1 {0,1}\n@attribute l2 {0,1}\n@data\n" + rows)
    xml = tmp_path / "m.xml"
    xml.write_text('<labels xmlns="http://mulan.sourceforge.net/labels"><label name="l1"/><label name="l2"/>'
                   '</labels>')
    with pytest.raises(InputError, match=HINT):
        read_dataset(spark, str(f), labels_xml=str(xml))
    caplog.set_level(logging.WARNING)
    ranking = rank(str(f), spark=spark, labels_xml=str(xml), per_target=True)
    assert ranking.metadata["params"]["task"] == "mlc"
    table = ranking.to_pandas()
    assert top(table, "genie3", "l1", k=1) == ["x__3"] and top(table, "genie3", "l2", k=1) == ["x"]


# ----- CSV / TSV -------------------------------------------------------------------------------------------------
def delimited(path, sep, names=("x", "x", "x__2", "y")):
    X, y = planted(4)
    pdf = pd.DataFrame({f"c{i}": X[:, i] for i in range(3)} | {"y": y})
    pdf.columns = list(names)
    pdf.to_csv(path, sep=sep, index=False)
    return path


@pytest.mark.parametrize("name,sep", [("d.csv", ","), ("d.tsv", "\t")])
def test_csv_and_tsv(spark, tmp_path, caplog, name, sep):
    f = delimited(tmp_path / name, sep)
    with pytest.raises(InputError) as err:
        read_dataset(spark, str(f))
    assert str(err.value) == f"{f} line 1: duplicate column name 'x' (columns 1 and 2); {HINT}"
    caplog.set_level(logging.WARNING)
    check_renamed(rank(str(f), spark=spark, targets="y"), caplog)


def test_csv_names_differing_in_case_and_several_files(spark, tmp_path, caplog):
    d = tmp_path / "parts"
    d.mkdir()
    for i in range(2):
        delimited(d / f"p{i}.csv", ",", names=("x", "X", "x__2", "y"))
    caplog.set_level(logging.WARNING)
    ranking = rank(str(d), spark=spark, targets="y")
    assert top(ranking.to_pandas(), "genie3", k=1) == ["X__3"]
    lines = [r.getMessage() for r in caplog.records if "--duplicate-names rename" in r.getMessage()]
    assert len(lines) == 1 and "'X' (column 2) -> 'X__3'" in lines[0]  # one line for both files


# ----- Parquet, DataFrames, vector columns -------------------------------------------------------------------------
def parquet_table(seed=5):
    X, y = planted(seed)
    return pa.Table.from_arrays([pa.array(X[:, 0]), pa.array(X[:, 1]), pa.array(X[:, 2]), pa.array(y)],
                                names=["x", "x", "x__2", "y"])


def test_parquet_local_files_are_read_by_position(spark, tmp_path, caplog):
    d = tmp_path / "pq"
    d.mkdir()
    t = parquet_table()
    pq.write_table(t.slice(0, 60), d / "a.parquet")
    pq.write_table(t.slice(60), d / "b.parquet")
    with pytest.raises(InputError) as err:
        read_dataset(spark, str(d))
    assert str(err.value).endswith(f"a.parquet: duplicate column name 'x' (columns 1 and 2); {HINT}")
    caplog.set_level(logging.WARNING)
    check_renamed(rank(str(d), spark=spark, targets="y"), caplog)


def test_parquet_that_spark_must_read_is_a_clear_error(spark, tmp_path):
    part = tmp_path / "pq" / "k=1"
    part.mkdir(parents=True)
    pq.write_table(parquet_table(), part / "a.parquet")
    with pytest.raises(InputError) as err:
        read_dataset(spark, str(tmp_path / "pq"), duplicate_names="rename")
    message = str(err.value)
    assert "a.parquet: duplicate column name 'x' (columns 1 and 2): Spark cannot read a Parquet file" in message
    assert "local file without partition directories" in message and "\n" not in message


def test_dataframe_with_a_name_twice(spark, caplog):
    X, y = planted(6)
    pdf = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "y": y})
    df = spark.createDataFrame(pdf).toDF("x", "x", "x__2", "y")
    with pytest.raises(InputError) as err:
        spark_fr.rank(df, spark=spark, targets="y", trees=2)
    assert str(err.value) == f"DataFrame: duplicate column name 'x' (columns 1 and 2); {HINT}"
    caplog.set_level(logging.WARNING)
    check_renamed(rank(df, spark=spark, targets="y"), caplog)


def test_vector_elements_named_alike(spark, caplog):
    from pyspark.ml.feature import VectorAssembler

    X, y = planted(7)
    pdf = pd.DataFrame({"x": X[:, 0], "x__2": X[:, 2], "y": y})
    pdf["s"] = X[:, 1]
    df = spark.createDataFrame(pdf)
    # the vector's elements are named x (noise), x (the signal, as VectorAssembler names a column given twice)
    df = VectorAssembler(inputCols=["x", "s"], outputCol="v").transform(df)
    meta = df.schema["v"].metadata
    meta["ml_attr"]["attrs"]["numeric"][1]["name"] = "x"
    df = df.select("x__2", df["v"].alias("v", metadata=meta), "y")
    with pytest.raises(InputError) as err:
        spark_fr.rank(df, spark=spark, targets="y", trees=2)
    assert str(err.value) == ("DataFrame: duplicate feature name 'x' (features 2 and 3: element 0 of the vector "
                              f"column 'v' and element 1 of the vector column 'v'); {HINT}")
    caplog.set_level(logging.WARNING)
    check_renamed(rank(df, spark=spark, targets="y"), caplog, features=("x__2", "x", "x__3"))


# ----- the job, and relational schemas ---------------------------------------------------------------------------
def test_job_option_and_run_record(spark, tmp_path, capsys):
    f = dense_arff(tmp_path / "j.arff")
    code, _, err = run_job(["--input", f, "--targets", "y", "--trees", "4", "--output", tmp_path / "out"], capsys)
    assert code != 0 and f"line 3: duplicate attribute name 'x'" in err and HINT in err
    assert not (tmp_path / "out").exists()
    code, _, err = run_job(["--input", f, "--targets", "y", "--trees", "4", "--output", tmp_path / "out",
                            "--duplicate-names", "rename"], capsys)
    assert code == 0, err
    run = json.loads((tmp_path / "out" / "run.json").read_text())
    assert run["renamed_columns"] == {"x__3": "x"} and run["params"]["duplicate_names"] == "rename"
    assert set(pd.read_csv(tmp_path / "out" / "ranking.csv").feature) == {"x", "x__2", "x__3"}


def test_relational_tables_naming_a_column_twice_are_refused(spark, tmp_path):
    from spark_fr.relational import generate_features
    from spark_fr.relational.rank import rank_relational

    (tmp_path / "cust.csv").write_text("cid,cls,v,v\n" + "".join(f"{i},{'ab'[i % 2]},{i},{-i}\n" for i in range(8)))
    (tmp_path / "tx.parquet").parent.mkdir(exist_ok=True)
    pq.write_table(pa.Table.from_arrays([pa.array(range(20)), pa.array([i % 8 for i in range(20)]),
                                         pa.array([1.0] * 20), pa.array([2.0] * 20)],
                                        names=["tid", "cid", "amount", "amount"]), tmp_path / "tx.parquet")
    schema = {"tables": {"cust": {"source": str(tmp_path / "cust.csv"), "key": "cid"},
                         "tx": {"source": str(tmp_path / "tx.parquet"), "key": "tid", "foreign_keys": {"cid": "cust"}}},
              "target": {"table": "cust", "column": "cls"}, "max_depth": 1}
    with pytest.raises(InputError, match="rank_relational does not take duplicate_names=: the schema names"):
        rank_relational(schema=schema, spark=spark, duplicate_names="rename")
    remedy = "the schema refers to columns by name: rename one of them in the source"
    with pytest.raises(InputError, match=r"cust.csv line 1: duplicate column name 'v' \(columns 3 and 4\); " + remedy):
        generate_features(spark, schema, engine="spark")
    schema["tables"]["cust"]["source"] = str(tmp_path / "cust.tsv")
    (tmp_path / "cust.tsv").write_text("".join(f"{i}\t{'ab'[i % 2]}\t{i}\n" for i in range(8)))
    schema["tables"]["cust"]["columns"] = ["cid", "cls", "v"]
    for engine in ("local", "spark"):
        with pytest.raises(InputError, match=r"tx.parquet: duplicate column name 'amount' \(columns 3 and 4\); "
                                             + remedy):
            generate_features(None if engine == "local" else spark, schema, engine=engine)
    frames = {"tx": spark.createDataFrame([(1, 1, 1.0, 2.0)], ["tid", "cid", "amount", "amount"])}
    with pytest.raises(InputError, match=r"table 'tx': duplicate column name 'amount' \(columns 3 and 4\); " + remedy):
        generate_features(spark, schema, frames, engine="spark")
