"""The local relational engine (spark_fr.relational.local) against the Spark engine on a whole run: the same
columns, order, lineage and values bit for bit (NaN/null positions included) on financial (headerless TSV files
that both engines read, an n-n link); the engine choice; what a local run loads. The two engines' operations one
by one (the shop schema of test_relational_generate, random tables with nulls, ties, dates, a self-reference):
tests/relational/test_relational_executors.py; the same ranking either way: the golden rankings' relational pair
(tests/end_to_end/test_golden.py). ``random_tables``, ``with_sources`` and ``shop_files`` write the tables those use."""
import datetime as dt
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from spark_fr.relational import generate_features, load_schema
from spark_fr.relational.local_sources import local_possible
from tests.relational.test_relational_generate import CITY, CUSTOMER, ITEM, ORDERS, PRODUCT, SCHEMAS, shop_schema
from tests.paths import ROOT

FINANCIAL = ROOT / "conf" / "relational" / "financial.yaml"
MUTAGENESIS = ROOT / "conf" / "relational" / "mutagenesis.yaml"
SHOP_ROWS = {"customer": CUSTOMER, "city": CITY, "orders": ORDERS, "item": ITEM, "product": PRODUCT}


def _text(v):
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return ""
    if isinstance(v, (dt.date, pd.Timestamp)):
        return v.isoformat()[:10]
    if isinstance(v, float):
        return repr(v)
    return str(v)


def write_tsv(folder: Path, name: str, rows, columns) -> dict:
    """A headerless TSV file of ``rows``; the schema's source entry for it."""
    path = folder / f"t{abs(hash(name)) % 10 ** 8}.tsv"
    path.write_text("".join("\t".join(_text(v) for v in row) + "\n" for row in rows))
    return {"source": str(path), "columns": list(columns)}


def with_sources(cfg: dict, folder: Path, rows: dict, columns: dict) -> dict:
    cfg = json.loads(json.dumps(cfg))
    for name, spec in cfg["tables"].items():
        spec.update(write_tsv(folder, name, rows[name], columns[name]))
    return cfg


def shop_files(cfg, folder):
    columns = {n: [c.split()[0] for c in SCHEMAS[n].split(", ")] for n in SCHEMAS}
    return with_sources(cfg, folder, {n: SHOP_ROWS[n] for n in cfg["tables"]}, columns)


def assert_identical(spark, cfg, check=True, tables=None, local=None):
    """Both engines on ``cfg`` (and the DataFrames ``tables``); every column bit-identical; returns the local
    result (``local``: the local engine's result already made, e.g. by engine auto)."""
    loc = local or generate_features(spark if tables else None, cfg, tables, engine="local", check=check)
    assert loc.engine == "local" and loc.frame is None
    sp = generate_features(spark, cfg, tables, engine="spark", check=check)
    assert sp.engine == "spark"
    s = sp.frame.toPandas()
    lo = loc.pandas
    assert list(s.columns) == list(lo.columns)
    assert sp.lineage == loc.lineage
    assert [p.hops for p in sp.paths] == [p.hops for p in loc.paths]
    s = s.sort_values(sp.id, kind="stable").reset_index(drop=True)
    lo = lo.sort_values(sp.id, kind="stable").reset_index(drop=True)
    for c in s.columns:
        a, b = s[c].to_numpy(), lo[c].to_numpy()
        if s[c].dtype == object or lo[c].dtype == object:
            assert s[c].dtype == object and lo[c].dtype == object, c
            na = [v is None or (isinstance(v, float) and np.isnan(v)) for v in a]
            nb = [v is None or (isinstance(v, float) and np.isnan(v)) for v in b]
            assert na == nb, c
            assert [v for v, m in zip(a, na) if not m] == [v for v, m in zip(b, nb) if not m], c
        else:
            a, b = a.astype(np.float64), b.astype(np.float64)
            assert np.array_equal(np.isnan(a), np.isnan(b)), c
            m = ~np.isnan(a)
            assert np.array_equal(a[m].view(np.int64), b[m].view(np.int64)), (c, a[m], b[m])
    return loc


#: values with ties, signed zeros, negative, tiny (subnormal) and ordinary magnitudes
TIES = [0.5, 1.0, 3.0, -2.25, 0.1, 0.2, 0.3, 1e-3, 7.0, 0.0, -0.0, 5e-324, -3e-200]


def random_tables(seed: int):
    """Small random tables at depth 2 (target <- child <- grand, target -> other, other <- target): missing
    values, ties, signed zeros, dates, nominal integers, dangling and missing keys (empty groups), an
    all-missing column, numbers from subnormal to 1.5e307 (the sums' derived bounds then overflow: the sorted
    path, as Spark takes it)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 30))

    def maybe(values, p=0.15):
        return [None if rng.random() < p else v for v in values]

    def dates(k):
        return maybe([dt.date(2000, 1, 1) + dt.timedelta(days=int(d)) for d in rng.integers(-4000, 9000, k)])

    def ties(k):
        return maybe([float(v) for v in rng.choice(TIES, k)])

    def wide(k, top=300):  # signed, magnitudes 1e-300 .. 1e`top`
        return maybe([float(s * m * 10.0 ** e) for s, m, e in
                      zip(rng.choice([-1.0, 1.0], k), rng.random(k), rng.integers(-300, top + 1, k))])

    def normal(k):
        return maybe([float(v) for v in rng.normal(0, 1e3, k) * rng.random(k)])

    q = int(rng.integers(1, 6))
    other = list(zip(range(1, q + 1), normal(q), maybe(rng.choice(["s", "t"], q).tolist())))
    tgt = list(zip(range(1, n + 1), maybe(rng.choice(["yes", "no", "maybe"], n).tolist(), 0.1), normal(n),
                   maybe(rng.choice(["x", "y", "z", "w"], n).tolist()), dates(n),
                   maybe([int(v) for v in rng.integers(1, q + 2, n)], 0.2),  # to-one, some dangling
                   maybe([int(v) for v in rng.integers(0, 4, n)], 0.1)))  # nominal integers
    m = int(rng.integers(0, 50))
    child = list(zip(range(100, 100 + m), maybe([int(v) for v in rng.integers(1, n + 3, m)], 0.05), ties(m),
                     wide(m, 20), maybe(rng.choice(["a", "b", "c"], m).tolist()),
                     dates(m), [None] * m))
    g = int(rng.integers(12, 60))
    z = wide(g)
    z[:2] = [1.5e307, -1.2e307]  # bound x rows overflows: sums on the sorted path (inner and outer)
    grand = list(zip(range(1000, 1000 + g), maybe([int(v) for v in rng.integers(100, 100 + max(m, 1) + 2, g)], 0.05),
                     z, maybe(rng.choice(["p", "q", "r"], g).tolist())))
    rows = {"t": tgt, "child": child, "grand": grand, "other": other}
    columns = {"t": ["tid", "label", "x", "c", "d", "oid", "level"],
               "child": ["cid", "tid", "v", "u", "w", "when", "blank"], "grand": ["gid", "cid", "z", "e"],
               "other": ["oid", "val", "kind"]}
    cfg = {"tables": {"t": {"key": "tid", "foreign_keys": {"oid": "other"}, "types": {"level": "nominal"}},
                      "child": {"key": "cid", "foreign_keys": {"tid": "t"}},
                      "grand": {"key": "gid", "foreign_keys": {"cid": "child"}},
                      "other": {"key": "oid"}},
           "target": {"table": "t", "column": "label"}, "max_depth": 2, "frequent_values": int(rng.integers(1, 3)),
           "aggregates": {"numeric": ["count", "count_distinct", "mean", "min", "max", "sum", "std"],
                          "nominal": ["count", "count_distinct", "mode", "share"],
                          "date": ["count", "mean", "max", "std"],
                          "conditional": ["count", "mean", "sum", "min"],
                          "outer": ["mean", "max", "sum", "std", "count_distinct"],
                          "outer_nominal": ["mode", "count_distinct"]}}
    return cfg, rows, columns


@pytest.fixture(scope="module")
def financial_auto():
    """Financial generated with engine auto and no session (the local engine): both tests below read it."""
    return generate_features(None, str(FINANCIAL))


def test_financial_identical(spark, financial_auto):
    loc = assert_identical(spark, str(FINANCIAL), local=financial_auto)
    assert len(loc.pandas) == 682


def test_auto_rule(tmp_path, spark, financial_auto):
    fin = load_schema(str(FINANCIAL))
    assert local_possible(fin)
    assert not local_possible(fin, max_cells=1000)  # too large
    assert not local_possible(fin, memory=1e6)  # the driver's memory decides too
    assert not local_possible(load_schema(str(MUTAGENESIS)))  # nested JSON: Spark
    got = financial_auto
    assert got.engine == "local" and "GB available" in got.engine_reason  # auto: never touches the session
    cfg = shop_files(shop_schema(), tmp_path)
    frames = {n: spark.createDataFrame(SHOP_ROWS[n], SCHEMAS[n]) for n in SHOP_ROWS}
    assert local_possible(load_schema(cfg), frames)  # DataFrames given: collected (test_relational_local_sources)
    parquet = json.loads(json.dumps(cfg))
    pd.DataFrame(PRODUCT, columns=["product_id", "category"]).to_parquet(tmp_path / "p.parquet")
    parquet["tables"]["product"] = {"key": "product_id", "source": str(tmp_path / "p.parquet")}
    assert local_possible(load_schema(parquet))  # Parquet: read in the driver too (test_relational_local_parquet)
    assert not local_possible(load_schema(parquet), max_cells=1)


def test_local_engine_loads_no_kernels_and_no_jvm():
    """A relational generation in the driver (financial from files, engine auto, as jobs/peers and a user's
    script call it) imports neither numba (the trees' kernels) nor pyspark.ml nor spark_fr.api, and starts no
    JVM: on small inputs those imports were more than half of the whole run (the featuretools ratio)."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from spark_fr.relational import generate_features\n"
            f"got = generate_features(None, {str(FINANCIAL)!r})\n"
            "assert got.engine == 'local' and len(got.pandas) == 682, got.engine_reason\n"
            "print(sorted(m for m in ('numba', 'pyspark.ml', 'spark_fr.api', 'spark_fr.tasks.base')"
            " if m in sys.modules))\n"
            "from pyspark import SparkContext\n"
            "assert SparkContext._gateway is None and SparkContext._active_spark_context is None\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"  # and no gateway: no JVM was launched


def test_numbers_spark_parses_otherwise_fall_back_to_spark(tmp_path, spark):
    cfg = {"tables": {"a": {"key": "k"}}, "target": {"table": "a", "column": "y"}}
    cfg = with_sources(cfg, tmp_path, {"a": [(1, 1, "1d"), (2, 0, "2")]}, {"a": ["k", "y", "x"]})
    assert local_possible(load_schema(cfg))
    assert generate_features(spark, cfg).engine == "spark"
    from spark_fr.errors import InputError

    with pytest.raises(InputError, match="local"):
        generate_features(None, cfg, engine="local")
