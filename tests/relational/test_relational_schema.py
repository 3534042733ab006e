"""Relational schema parsing and validation (one-line errors naming the table or column), sources (headerless
TSV, nested JSON explode), and the example configs on the shared datasets."""
import json
import logging

import pandas as pd
import pytest

from spark_fr.errors import InputError
from spark_fr.relational import generate_features, load_schema
from spark_fr.relational.checks import check_data, column_kinds
from spark_fr.relational.sources import load_tables
from tests.paths import ROOT

CONF = ROOT / "conf" / "relational"


def base(**extra):
    cfg = {"tables": {"a": {"key": "k"}, "b": {"key": "k", "foreign_keys": {"fk": "a"}}},
           "target": {"table": "a", "column": "y"}}
    cfg.update(extra)
    return cfg


def raises(match, fn, *args, **kw):
    with pytest.raises(InputError, match=match) as info:
        fn(*args, **kw)
    assert "\n" not in str(info.value)
    return str(info.value)


@pytest.mark.parametrize("cfg, match", [
    (base(tables={"a": {"key": "k"}, "b": {"foreign_keys": {"fk": "zz"}}}), "table 'b'.*'fk'.*missing table 'zz'"),
    (base(target={"table": "nope", "column": "y"}), "unknown table 'nope'"),
    (base(target={"table": "a"}), "target.*needs 'table' and 'column'"),
    (base(max_depth=-1), "max_depth"),
    (base(frequent_values="5"), "frequent_values"),
    (base(aggregates={"numeric": ["median"]}), "aggregates.numeric: unknown aggregate 'median'"),
    (base(aggregates={"outer": ["mode"]}), "aggregates.outer: unknown aggregate 'mode'"),
    (base(tables={"a": {"key": "k", "types": {"x": "text"}}}), "table 'a': column 'x' has type 'text'"),
    (base(tables={"a": {"key": "k", "foreign_keys": {"k": "a"}}}), "table 'a': the key 'k' is also a foreign key"),
    (base(tables={"a": {"key": "k"}, "b": {"explode": {"table": "c", "column": "x"}}}),
     "table 'b': explode names the missing table 'c'"),
    (base(tables={"a": {"source": "x.csv", "catalog": "db.t"}}), "table 'a': give one of"),
    (base(tables={"a": {"source": "x.xls", "format": "excel"}}), "table 'a': format must be"),
    (base(colour="red"), "unknown key 'colour'"),
    ({"tables": [], "target": {"table": "a", "column": "y"}}, "'tables' is empty"),
])
def test_schema_errors_are_one_line_and_name_the_culprit(cfg, match):
    raises(match, load_schema, cfg)


def test_yaml_paths_variables_and_base_dir(tmp_path, monkeypatch):
    (tmp_path / "conf").mkdir()
    cfg = tmp_path / "conf" / "s.yaml"
    cfg.write_text("tables:\n  a: {source: data/a.csv, key: k}\n  b: {source: '${DATA}/b.parquet', key: k}\n"
                   "  c: {catalog: db.c, key: k}\ntarget: {table: a, column: y}\n")
    monkeypatch.setenv("DATA", "/elsewhere")
    s = load_schema(str(cfg))
    assert s.tables["a"].source.path == str(tmp_path / "conf" / "data" / "a.csv")
    assert s.tables["b"].source.path == "/elsewhere/b.parquet"
    assert s.tables["c"].source.catalog == "db.c"
    assert s.max_depth == 2 and s.frequent_values == 5 and s.aggregates.outer == ("mean", "min", "max")
    assert load_schema(str(cfg), base_dir=str(tmp_path)).tables["a"].source.path == str(tmp_path / "data" / "a.csv")
    assert load_schema(str(cfg), variables={"DATA": "/v"}).tables["b"].source.path == "/v/b.parquet"
    cfg.write_text("base_dir: ..\ntables:\n  a: {source: data/a.csv, key: k}\ntarget: {table: a, column: y}\n")
    assert load_schema(str(cfg)).tables["a"].source.path == str(tmp_path / "data" / "a.csv")
    cfg.write_text("tables:\n  a: {source: '${NOPE_X}/a.csv'}\ntarget: {table: a, column: y}\n")
    raises(r"unknown variable \$\{NOPE_X\}", load_schema, str(cfg))
    cfg.write_text("tables: [\n")
    raises("not valid YAML", load_schema, str(cfg))
    raises("schema file not found", load_schema, str(tmp_path / "missing.yaml"))


def test_generated_keys_and_explode_defaults():
    s = load_schema({"tables": {"m": {"source": "d.json"}, "atom": {"explode": {"table": "m", "column": "atoms"}}},
                     "target": {"table": "m", "column": "y"}})
    assert s.tables["m"].generated_key and s.tables["m"].key == "m_id" and s.target.id == "m_id"
    atom = s.tables["atom"]
    assert atom.key == "atom_id" and atom.foreign_keys[0].column == "m_id" and atom.foreign_keys[0].table == "m"


@pytest.fixture(scope="module")
def ab(spark):
    a = spark.createDataFrame([(1, "p", 1.0), (2, "q", 2.0), (3, "p", None)], "k int, y string, x double")
    b = spark.createDataFrame([(1, 1), (2, 1), (3, 7), (4, None)], "k int, fk int")
    return a, b


def test_data_errors_name_table_and_column(spark, ab):
    a, b = ab
    s = load_schema(base())
    frames = {"a": a, "b": b}
    raises("table 'a': unknown key column 'kk'", column_kinds, load_schema(base(tables={
        "a": {"key": "kk"}, "b": {"key": "k", "foreign_keys": {"fk": "a"}}})), frames)
    raises("table 'b': unknown foreign-key column 'zz'", column_kinds, load_schema(base(tables={
        "a": {"key": "k"}, "b": {"key": "k", "foreign_keys": {"zz": "a"}}})), frames)
    raises("table 'a': unknown column 'w' in types", column_kinds, load_schema(base(tables={
        "a": {"key": "k", "types": {"w": "numeric"}}, "b": {"key": "k", "foreign_keys": {"fk": "a"}}})), frames)
    raises("target: table 'a' has no column 'nope'", column_kinds,
           load_schema(base(target={"table": "a", "column": "nope"})), frames)
    dup = spark.createDataFrame([(1, "p"), (1, "q")], "k int, y string")
    raises("table 'a': key 'k' is not unique", check_data, s, {"a": dup, "b": b})
    nul = spark.createDataFrame([(1, "p"), (None, "q")], "k int, y string")
    raises("table 'a': key 'k' is missing in 1 of 2 rows", check_data, s, {"a": nul, "b": b})
    raises("a DataFrame was given for the unknown table 'c'", load_tables, spark, s, {"a": a, "c": b})
    raises("table 'b' has no source and no DataFrame", load_tables, spark, s, {"a": a})


def test_dangling_foreign_keys_are_a_warning_with_their_share(spark, ab, caplog):
    a, b = ab
    with caplog.at_level(logging.WARNING, logger="spark_fr.relational.checks"):
        shares = check_data(load_schema(base()), {"a": a, "b": b})
    assert shares[("b", "fk")] == pytest.approx(1 / 3)  # 7 has no parent; the null key is not counted
    assert "table 'b': 33.3% of the foreign keys 'fk' (1 rows) have no row in 'a'" in caplog.text


def test_kinds_inferred_declared_and_ids(spark, ab):
    a, b = ab
    s = load_schema(base(tables={"a": {"key": "k", "types": {"x": "nominal"}},
                                 "b": {"key": "k", "foreign_keys": {"fk": "a"}}}))
    kinds = column_kinds(s, {"a": a, "b": b})
    assert kinds == {"a": {"y": "nominal", "x": "nominal"}, "b": {}}


def test_headerless_tsv_and_nested_json(spark, tmp_path):
    (tmp_path / "t.tsv").write_text("1\t2015-03-24\tM\t3.5\n2\t2016-01-02\tW\t?\n3\t\tM\t7\n")
    molecules = [{"w": 1.5, "y": 1, "atoms": [{"e": "c", "bonds": [{"t": 1}, {"t": 2}]}, {"e": "h", "bonds": []}]},
                 {"w": 2.0, "y": 0, "atoms": []},
                 {"w": 0.5, "y": 1, "atoms": [{"e": "o", "bonds": [{"t": 7}]}]}]
    (tmp_path / "m.json").write_text(json.dumps(molecules, indent=1))
    cfg = {"tables": {
        "t": {"source": "t.tsv", "columns": ["id", "day", "f", "v"], "key": "id"},
        "m": {"source": "m.json", "key": None},
        "atom": {"explode": {"table": "m", "column": "atoms"}},
        "bond": {"explode": {"table": "atom", "column": "bonds"}, "types": {"t": "nominal"}}},
        "target": {"table": "m", "column": "y"}}
    s = load_schema(cfg, base_dir=str(tmp_path))
    frames = load_tables(spark, s)
    t = frames["t"].toPandas()
    assert list(t.columns) == ["id", "day", "f", "v"]
    assert str(frames["t"].schema["day"].dataType) == "DateType()" and t.v.isna().tolist() == [False, True, False]
    atoms = frames["atom"].toPandas().sort_values("atom_id")
    m = frames["m"].toPandas()
    assert m.m_id.is_unique and len(m) == 3
    first = m.m_id[m.w == 1.5].iloc[0]
    assert atoms.atom_id.tolist()[:2] == [f"{first}:0", f"{first}:1"] and atoms.e.tolist()[:2] == ["c", "h"]
    bonds = frames["bond"].toPandas()
    assert sorted(bonds.bond_id) == sorted([f"{first}:0:0", f"{first}:0:1", f"{m.m_id[m.w == 0.5].iloc[0]}:0:0"])
    g = generate_features(spark, s)
    pdf = g.frame.toPandas().set_index("m_id")
    assert pdf.at[first, "atom__count"] == 2 and pdf.at[first, "atom__bond__count__max"] == 2
    empty = m.m_id[m.w == 2.0].iloc[0]
    assert pdf.at[empty, "atom__count"] == 0 and pd.isna(pdf.at[empty, "atom__bond__count__max"])


def test_keys_of_tables_nothing_points_to_are_not_checked(spark):
    """A repeated key in a leaf table changes no feature: no error (and no shuffle of the largest table)."""
    from spark_fr.relational.checks import check_data as check

    s = load_schema({"tables": {"a": {"key": "k"}, "b": {"key": "k", "foreign_keys": {"fk": "a"}}},
                     "target": {"table": "a", "column": "y"}})
    a = spark.createDataFrame([(1, "p"), (2, "q")], "k int, y string")
    b = spark.createDataFrame([(7, 1), (7, 2), (None, 2)], "k int, fk int")
    assert check(s, {"a": a, "b": b}) == {("b", "fk"): 0.0}
