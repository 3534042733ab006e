"""Relational ranking end to end (spark_fr.rank_relational and jobs/rank.py with a schema): a planted relational
concept ranked first at the feature, attribute and relation levels; the roll-ups against slow references;
the output contract with ``level`` and ``lineage``; hostile names; bit-identical results for any partitioning."""
import json

import numpy as np
import pandas as pd
import pytest
from pyspark.sql import types as T

import spark_fr
from tests.conftest import CONTRACT, check_png, run_job
from spark_fr.errors import InputError
from spark_fr.relational.rollup import LEVELS, attributes_of
from tests.paths import ROOT

MERCHANTS = ["grocery", "travel", "fuel", "retail"]


def planted_tables(seed=0, n=300):
    """Customers whose class is decided by the mean amount of their transactions at one merchant type
    (grocery; 10 % of the labels flipped), with noise everywhere else: customer attributes, a district (to-one), cards (to-many) and the
    transactions' other columns."""
    rng = np.random.default_rng(seed)
    district = pd.DataFrame({"district_id": np.arange(8), "population": rng.integers(1000, 9000, 8).astype(float),
                             "region": rng.choice(["n", "s", "e"], 8)})
    customer = pd.DataFrame({"customer_id": np.arange(n), "age": rng.integers(18, 80, n).astype(float),
                             "segment": rng.choice(["a", "b", "c"], n), "district_id": rng.integers(0, 8, n)})
    rows = []
    for c in range(n):
        for j in range(int(rng.integers(4, 20))):
            merchant = "grocery" if j < 2 else MERCHANTS[int(rng.integers(0, 4))]
            rows.append((len(rows), c, float(np.round(rng.uniform(1, 100), 2)), merchant, int(rng.integers(0, 24))))
    trans = pd.DataFrame(rows, columns=["trans_id", "customer_id", "amount", "merchant_type", "hour"])
    grocery = trans[trans.merchant_type == "grocery"].groupby("customer_id").amount.mean()
    high = customer.customer_id.map(grocery) > grocery.median()
    flip = rng.random(n) < 0.1  # label noise: the trees grow past the planted split
    customer["label"] = np.where(high ^ flip, "high", "low")
    card = pd.DataFrame({"card_id": np.arange(2 * n), "customer_id": rng.integers(0, n, 2 * n),
                         "limit": rng.uniform(100, 5000, 2 * n), "kind": rng.choice(["gold", "classic"], 2 * n)})
    return {"customer": customer, "district": district, "trans": trans, "card": card}


PLANTED_SCHEMA = {
    "tables": {"customer": {"key": "customer_id", "foreign_keys": {"district_id": "district"}},
               "district": {"key": "district_id"},
               "trans": {"key": "trans_id", "foreign_keys": {"customer_id": "customer"}},
               "card": {"key": "card_id", "foreign_keys": {"customer_id": "customer"}}},
    "target": {"table": "customer", "id": "customer_id", "column": "label"},
    "max_depth": 2, "frequent_values": 4}


def spark_tables(spark, tables, partitions=None):
    out = {}
    for name, pdf in tables.items():
        df = spark.createDataFrame(pdf)
        out[name] = df.repartition(partitions) if partitions else df
    return out


@pytest.fixture(scope="module")
def planted(spark):
    tables = planted_tables()
    ranking = spark_fr.rank_relational(spark_tables(spark, tables), schema=PLANTED_SCHEMA, trees=30, seed=3,
                                       spark=spark)
    return tables, ranking


def rows(ranking, level, score="genie3"):
    t = ranking.to_pandas()
    return t[(t.level == level) & (t.score == score) & (t.target == "__all__")].sort_values("rank")


def test_planted_concept_ranks_first_at_every_level(planted):
    _, ranking = planted
    for score in ("genie3", "symbolic", "rf"):
        features = rows(ranking, "feature", score)
        best = json.loads(features.lineage.iloc[0])
        assert (best["table"], best["attribute"], best["condition"]) == ("trans", "amount",
                                                                        ["merchant_type", "grocery"]), score
        assert best["path"] == [{"direction": "many", "link": "trans.customer_id->customer", "table": "trans"}]
        attributes = rows(ranking, "attribute", score)
        # the concept reads two attributes (a conditional aggregate gives each half): they lead, in either order
        assert set(attributes.feature.iloc[:2]) == {"trans.amount", "trans.merchant_type"}, score
        relations = rows(ranking, "relation", score)
        planted_relations = {"trans.customer_id->customer", "trans.amount", "trans.merchant_type"}
        if score != "symbolic":
            assert set(relations.feature.iloc[:3]) == planted_relations, score
        else:  # Symbolic counts every node of the fully grown trees: their deep splits on the label noise use
            # the conditional hour features (trans.hour, same link), which come next to the planted three
            assert planted_relations <= set(relations.feature.iloc[:4])
            assert set(relations.feature.iloc[:4]) <= planted_relations | {"trans.hour"}


def test_output_table_levels_and_roll_ups_against_the_features(planted):
    _, ranking = planted
    t = ranking.to_pandas()
    assert list(t.columns) == CONTRACT + ["level", "lineage"]
    assert set(t.level) == set(LEVELS)
    assert ranking.metadata["cross_validation"]["folds"] == 10  # rank_relational's default (the others pass 0)
    for (level, score), g in t.groupby(["level", "score"]):
        assert sorted(g["rank"]) == list(range(1, len(g) + 1)), (level, score)
        assert np.all(np.diff(g.sort_values("rank").importance.to_numpy()) <= 1e-12)
    features = t[t.level == "feature"]
    lineage = {f: json.loads(s) for f, s in zip(features.feature, features.lineage)}
    for score in ("genie3", "symbolic", "rf"):
        imp = features[features.score == score].set_index("feature").importance
        # attributes: the sum of the importances of the features reading them (a condition counts half)
        expected = {}
        for f, lin in lineage.items():
            attrs = [f"{lin['table']}.{lin['attribute']}" if lin["attribute"] else f"{lin['table']}.*"]
            if lin["condition"]:
                attrs.append(f"{lin['table']}.{lin['condition'][0]}")
            for a in attrs:
                expected[a] = expected.get(a, 0.0) + imp[f] / len(attrs)
        got = t[(t.level == "attribute") & (t.score == score)].set_index("feature").importance
        assert got.to_dict() == pytest.approx(expected, rel=1e-9, abs=1e-12)
        relations = t[(t.level == "relation") & (t.score == score)].set_index("feature").importance
        # nothing lost or created by either roll-up
        assert relations.sum() == pytest.approx(imp.sum(), rel=1e-9)
        if score == "rf":  # no node rewards: each feature's importance shared among its relations
            shared = {}
            for f, lin in lineage.items():
                for r in lin["relations"]:
                    shared[r] = shared.get(r, 0.0) + imp[f] / len(lin["relations"])
            assert relations.to_dict() == pytest.approx(shared, rel=1e-9, abs=1e-12)


def test_feature_rule_option_and_its_difference_from_the_node_rule(spark, planted):
    tables, node = planted
    feature = spark_fr.rank_relational(spark_tables(spark, tables), schema=PLANTED_SCHEMA, trees=30, seed=3,
                                       spark=spark, relation_rollup="feature", cv_folds=0)  # CV: the fixture's
    a, b = node.to_pandas(), feature.to_pandas()
    same = ["feature", "score", "target", "importance", "rank"]
    for level in ("feature", "attribute"):
        pd.testing.assert_frame_equal(a[a.level == level][same].reset_index(drop=True),
                                      b[b.level == level][same].reset_index(drop=True))
    ra = a[(a.level == "relation") & (a.score == "genie3")].set_index("feature").importance
    rb = b[(b.level == "relation") & (b.score == "genie3")].set_index("feature").importance
    assert not np.allclose(ra.sort_index(), rb.sort_index())  # the rules differ ...
    assert ra.sum() == pytest.approx(rb.sum(), rel=1e-9)  # ... in how they share, not in what they share


def test_same_bits_for_any_partitioning_of_the_tables(spark, planted):
    tables, ranking = planted
    other = spark_fr.rank_relational(spark_tables(spark, tables, partitions=3), schema=PLANTED_SCHEMA, trees=30,
                                     seed=3, spark=spark, engine="spark",  # the fixture's: auto, the local engine
                                     cv_folds=0)  # the ranking is made before (and apart from) the fixture's CV
    cols = ["level", "feature", "score", "importance", "rank", "importance_std"]
    pd.testing.assert_frame_equal(ranking.to_pandas()[cols], other.to_pandas()[cols])


def test_hostile_names_run_end_to_end(spark):
    evil_col = "a`; DROP TABLE x; --"
    evil_table = "we\"ird`tab' le"
    rng = np.random.default_rng(1)
    n = 60
    target = pd.DataFrame({"id.x": np.arange(n), "y": np.where(np.arange(n) % 2 == 0, "p", "q")})
    child = pd.DataFrame({"k`": np.arange(4 * n), "fk'": np.repeat(np.arange(n), 4)})
    child[evil_col] = rng.normal(size=4 * n) + np.repeat(np.arange(n) % 2 == 0, 4) * 3.0
    schema = {"tables": {"t.1": {"key": "id.x"}, evil_table: {"key": "k`", "foreign_keys": {"fk'": "t.1"}}},
              "target": {"table": "t.1", "column": "y"}, "max_depth": 1}
    ranking = spark_fr.rank_relational(spark_tables(spark, {"t.1": target, evil_table: child}), schema=schema,
                                       trees=10, seed=0, spark=spark, cv_folds=0)
    assert rows(ranking, "attribute").feature.iloc[0] == f"{evil_table}.{evil_col}"
    assert f"{evil_table}.fk'->t.1" in set(rows(ranking, "relation").feature)
    assert spark.catalog.tableExists("x") is False


def test_mutagenesis_from_its_config_with_the_job(tmp_path, capsys, datasets):
    out = tmp_path / "mutagenesis"
    code, stdout, err = run_job(["--config", ROOT / "conf/relational/mutagenesis.yaml", "--method", "boosting",
                                 "--trees", "10", "--output", out, "--plot", tmp_path / "curve.png"], capsys)
    assert code == 0, err
    table = pd.read_csv(out / "ranking.csv")
    assert list(table.columns) == CONTRACT + ["level", "lineage"]
    assert set(table.score) == {"symbolic", "genie3"} and set(table.level) == set(LEVELS)
    run = json.loads((out / "run.json").read_text())
    assert run["relational"]["features"] == (table.level == "feature").sum() // 2
    assert run["params"]["method"] == "boosting" and run["params"]["trees"] == 10
    assert len(run["boosting"]["curve"]["tree_round"]) == 10
    assert (tmp_path / "curve.png").stat().st_size > 10_000
    assert "relations (top" in stdout
    cv = run["cross_validation"]  # 10 folds by default for relational data
    assert cv["folds"] == 10 and cv["metric"] == "accuracy" and cv["rows"] == 188
    assert cv["mean"] > cv["baseline"] + 0.05, cv  # better than the majority class (125 / 188)
    assert "cross-validated accuracy (10 folds)" in stdout


def test_financial_from_its_config_with_the_job(tmp_path, capsys, datasets):
    """The issue's command: bagging of 50 trees, 10-fold cross-validation, CSV output with the two new columns."""
    out = tmp_path / "financial"
    code, stdout, err = run_job(["--config", ROOT / "conf/relational/financial.yaml", "--output", out,
                                 "--output-format", "csv", "--plot", tmp_path / "financial.png"], capsys)
    assert code == 0, err
    table = pd.read_csv(out / "ranking.csv")
    assert list(table.columns) == CONTRACT + ["level", "lineage"]
    run = json.loads((out / "run.json").read_text())
    assert (run["params"]["ensemble"], run["params"]["trees"]) == ("bagging", 50)
    assert run["relational"]["tables"] == sorted(["loan", "account", "client", "disp", "card", "order", "district"])
    assert run["n_rows"] == 682
    cv = run["cross_validation"]
    assert cv["folds"] == 10 and cv["mean"] > cv["baseline"] + 0.05, cv
    relations = set(table[table.level == "relation"].feature)
    assert {"loan.account_id->account", "disp.client_id->client", "card.disp_id->disp"} <= relations
    features = table[table.level == "feature"]
    for lineage in features.lineage.head(50):
        lin = json.loads(lineage)
        assert set(lin) == {"path", "table", "attribute", "aggregates", "condition", "value", "relations"}
    check_png(tmp_path / "financial.png")


def test_bad_relational_options_fail_before_any_work(spark, tmp_path, capsys):
    code, _, err = run_job(["--config", ROOT / "conf/relational/financial.yaml", "--targets", "amount",
                            "--output", tmp_path / "o"], capsys)
    assert code == 2 and "--targets does not apply to relational data" in err
    code, _, err = run_job(["--schema", ROOT / "conf/relational/financial.yaml", "--input", "x.csv"], capsys)
    assert code == 2 and "not --input and --schema" in err
    code, _, err = run_job(["--config", ROOT / "conf/relational/financial.yaml", "--method", "boosting",
                            "--scores", "rf", "--output", tmp_path / "o"], capsys)
    assert code == 2 and "--scores rf is not available with --method boosting" in err
    assert not (tmp_path / "o").exists()
    with pytest.raises(InputError, match="needs a schema"):
        spark_fr.rank_relational({})


def test_attribute_of_a_count_and_of_a_conditional_feature(planted):
    _, ranking = planted
    t = ranking.to_pandas()
    lin = {f: json.loads(s) for f, s in zip(t.feature, t.lineage) if not f.count(".")}
    assert "trans.*" in set(t[t.level == "attribute"].feature)
    from types import SimpleNamespace

    count = SimpleNamespace(table="trans", attribute=None, condition=None)
    cond = SimpleNamespace(table="trans", attribute="amount", condition=("merchant_type", "fuel"))
    assert attributes_of(count) == {"trans.*": 1.0}
    assert attributes_of(cond) == {"trans.amount": 0.5, "trans.merchant_type": 0.5}
    assert lin


def test_boosting_same_bits_with_one_and_two_partitions(spark):
    """Relational boosting on the planted tables: every table and every shuffle in 1 partition, then in 2."""
    tables = planted_tables(seed=5, n=150)
    before = spark.conf.get("spark.sql.shuffle.partitions")
    results = []
    try:
        for parts in (1, 2):
            spark.conf.set("spark.sql.shuffle.partitions", str(parts))
            ranking = spark_fr.rank_relational(spark_tables(spark, tables, partitions=parts), schema=PLANTED_SCHEMA,
                                               method="boosting", trees=8, seed=2, spark=spark, engine="spark",
                                               cv_folds=0)  # the rankings and curves compared: made before any CV
            results.append(ranking)
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)
    cols = ["level", "feature", "score", "importance", "rank"]
    a, b = (r.to_pandas()[cols] for r in results)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert results[0].metadata["boosting"]["curve"] == results[1].metadata["boosting"]["curve"]
    best = rows(results[0], "feature").feature.iloc[0]
    assert best == "trans__amount__mean__merchant_type_grocery"


def test_relief_ranks_relational_data_with_the_feature_form(spark):
    tables = planted_tables(seed=9, n=120)
    ranking = spark_fr.rank_relational(spark_tables(spark, tables), schema=PLANTED_SCHEMA, method="relief",
                                       seed=1, spark=spark)
    t = ranking.to_pandas()
    assert set(t.score) == {"relief"} and set(t.level) == set(LEVELS)
    features = t[t.level == "feature"]
    imp = dict(zip(features.feature, features.importance))
    shared = {}
    for f, s in zip(features.feature, features.lineage):
        rel = json.loads(s)["relations"]
        for r in rel:
            shared[r] = shared.get(r, 0.0) + imp[f] / len(rel)
    got = t[t.level == "relation"].set_index("feature").importance.to_dict()
    assert got == pytest.approx(shared, rel=1e-9, abs=1e-12)
    assert rows(ranking, "feature", "relief").feature.iloc[0] == "trans__amount__mean__merchant_type_grocery"
