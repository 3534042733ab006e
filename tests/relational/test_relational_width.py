"""The width estimate of a relational schema (spark_fr.relational.width) against what generation produces, and
the refusal of schemas whose width explodes (issue: a schema at depth 30 grew past 4 GB with no output)."""
import dataclasses
import itertools

import pytest

from spark_fr.errors import InputError
from spark_fr.relational import generate_features, load_schema
from spark_fr.relational.paths import enumerate_paths
from spark_fr.relational.width import check_width, estimate_width
from tests.relational.test_relational_generate import shop_schema
from tests.relational.test_relational_local import shop_files

ALL_AGGREGATES = {"numeric": ["count", "count_distinct", "mean", "min", "max", "sum", "std"],
                  "nominal": ["count", "count_distinct", "mode", "share"], "date": ["count", "min", "max"],
                  "conditional": ["count", "sum", "mean"], "outer": ["mean", "min", "max", "count_distinct"],
                  "outer_nominal": ["mode", "count_distinct"]}


def _kinds(schema):
    """The attribute kinds generation uses (the target column left out of the target table)."""
    from spark_fr.relational.checks import column_kinds
    from spark_fr.relational.local_sources import load_local_tables, spark_types

    tables = load_local_tables(schema)
    kinds = column_kinds(schema, {n: spark_types(t.types) for n, t in tables.items()})
    kinds[schema.target.table].pop(schema.target.column, None)
    return kinds


@pytest.mark.parametrize("depth", [0, 1, 2, 3])
@pytest.mark.parametrize("aggregates", [None, ALL_AGGREGATES], ids=["default", "all"])
def test_estimate_is_the_number_of_generated_features(tmp_path, depth, aggregates):
    """With one frequent value per nominal attribute (each has at least one), the count is exact."""
    cfg = shop_schema(max_depth=depth, frequent_values=1, **({"aggregates": aggregates} if aggregates else {}))
    schema = load_schema(shop_files(cfg, tmp_path))
    generated = generate_features(None, schema, engine="local")
    est = estimate_width(schema, _kinds(schema))
    assert est.features == len(generated.lineage)
    assert est.paths == len(enumerate_paths(schema))


def test_estimate_bounds_the_features_when_values_are_few(tmp_path):
    """frequent_values above a nominal attribute's distinct values: an upper bound, never below."""
    schema = load_schema(shop_files(shop_schema(max_depth=2, frequent_values=50), tmp_path))
    generated = generate_features(None, schema, engine="local")
    assert estimate_width(schema, _kinds(schema)).features >= len(generated.lineage)


def _cyclic(depth: int, self_reference=True, twins=2):
    """A schema with a self-reference and ``twins`` links between two tables (paths multiply with depth)."""
    tables = {"c": {"source": "c.tsv", "columns": ["id", "ref", "a", "n", "y"], "key": "id",
                    "foreign_keys": {"ref": "c"} if self_reference else {}},
              "o": {"source": "o.tsv", "columns": ["oid", *[f"c{i}" for i in range(twins)], "v", "k"], "key": "oid",
                    "foreign_keys": {f"c{i}": "c" for i in range(twins)}}}
    return load_schema({"tables": tables, "target": {"table": "c", "column": "y"}, "max_depth": depth})


KINDS = {"c": {"a": "numeric", "n": "nominal"}, "o": {"v": "numeric", "k": "nominal"}}


@pytest.mark.parametrize("self_reference,twins", list(itertools.product([True, False], [1, 2, 3])))
def test_paths_are_counted_as_enumerate_paths_lists_them(self_reference, twins):
    for depth in range(0, 7):
        schema = _cyclic(depth, self_reference, twins)
        assert estimate_width(schema, KINDS).paths == len(enumerate_paths(schema)), depth


def test_a_deep_cyclic_schema_is_refused_with_its_estimate_before_anything_is_generated():
    schema = _cyclic(30)
    est = estimate_width(schema, KINDS)  # counted, not listed: enumerate_paths would not finish here
    assert est.paths > 10 ** 9 and est.features > 10 ** 12
    with pytest.raises(InputError) as err:
        check_width(schema, KINDS, 10_000)
    text = str(err.value)
    assert "max_depth 30 would generate about" in text and "--max-features-generated" in text
    assert f"{float(est.features):.2e}" in text
    small = dataclasses.replace(schema, max_depth=1)
    assert check_width(small, KINDS, 10_000).features == estimate_width(small, KINDS).features
    assert check_width(schema, KINDS, None).features == est.features  # no limit: only counted
