"""The local engine's CSV/TSV reader (spark_fr.relational.local_csv) against the Spark engine's reader
(spark_fr.io.csv.read_csv, typed as relational tables are): the same types and values, column for column, on
random columns of every kind (missing markers, signs, spaces, leading zeros, dates, quoted fields, CRLF, blank
and whitespace lines, declared types), headered and headerless; the same one-line errors; the inputs it leaves
to Spark; both engines' tables prepared and profiled the same bit for bit (tests/relational/relational_twin.py) from
headered CSV files (quoted, a directory of files in two column orders, gzip); its fast path against its general
path."""
import csv
import datetime as dt
import gzip
import json
import math

import numpy as np
import pyarrow as pa
import pytest

from spark_fr.errors import InputError
from spark_fr.io.csv import read_csv
from spark_fr.relational import generate_features, load_schema
from spark_fr.relational.local_csv import _by_values, _fast_numeric, _Locator, read_csv_local
from spark_fr.relational.local_sources import choose_engine
from spark_fr.relational.local_table import Unsupported
from tests.relational.test_relational_generate import CITY, CUSTOMER, ITEM, ORDERS, PRODUCT, SCHEMAS, shop_schema
from tests.relational.relational_twin import prepare_both
from tests.relational.test_relational_local import _text

MISSING = ["", "?", "NA", "nan", "NULL", " ", "n/a", "None"]
TOKENS = {  # column scenario -> (tokens, declared type)
    "ints": (["1", "-2", "007", "+5", "0", "-0", "42", " 3 ", "9007199254740992"], None),
    "plain_ints": (["1", "2", "300", "-4", "0"], None),
    "floats": (["1.5", "-2.25", ".5", "5.", "1e3", "-0.0", "3", " 2.5 ", "\t4.5", "+.5E-2", "1.7976931348623157e308",
                "4.9e-324"], None),
    "plain_floats": (["1.5", "-2.25", "0.125", "3", "10.75"], None),
    "dates": (["2021-02-03", "2020-02-29", "1999-12-31", " 2001-01-01 ", "1969-07-20"], None),
    "text": (["a", " b ", "x y", "A", "é", "1", "tab\there"], None),
    "nominal_numbers": (["1", "2.5", "3", "x", " 7 "], "nominal"),
    "declared_numeric": (["1", "2", "-3", "4"], "numeric"),
    "declared_date": (["2021-01-01", "2022-12-31"], "date"),
    "id_text": (["17", "A17", "3"], "id"),
    "id_numbers": (["17", "18.5", "3"], "id"),
    "all_missing": ([], None),
}


def _column(rng, tokens, n, p_missing):
    return [rng.choice(MISSING) if not tokens or rng.random() < p_missing else rng.choice(tokens) for _ in range(n)]


def random_csv(rng, n=40, sep=","):
    """{column: values as written}, the declared types and the CSV lines (a header first)."""
    cols = {}
    for name, (tokens, _) in TOKENS.items():
        cols[name] = _column(rng, tokens, n, 0.0 if name.startswith("plain") else 0.2)
    declared = {name: d for name, (_, d) in TOKENS.items() if d}
    if sep == "\t":
        cols["text"] = [v.replace("\t", " ") for v in cols["text"]]
        cols["floats"] = [v.replace("\t", "") for v in cols["floats"]]
    return cols, declared


def write_rows(path, cols, sep=",", header=True, quote=(), blank_lines=True, crlf=False):
    names = list(cols)
    end = "\r\n" if crlf else "\n"
    lines = [sep.join(names)] if header else []
    for i in range(len(cols[names[0]])):
        fields = [f'"{cols[c][i]}"' if c in quote else cols[c][i] for c in names]
        lines.append(sep.join(fields))
        if blank_lines and i % 13 == 5:
            lines += ["", "   "]
    path.write_text(end.join(lines) + end, encoding="utf-8")


def _python(value, kind):
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if kind == "date":
        return value if isinstance(value, dt.date) else value.astype(dt.date)
    if kind == "double":
        return (float(value), math.copysign(1.0, value))
    if kind == "long":
        return int(value)
    return str(value)


def assert_same_table(spark_df, local):
    types = {f.name: f.dataType.simpleString() for f in spark_df.schema.fields}
    assert {c: {"bigint": "long"}.get(t, t) for c, t in types.items()} == local.types
    rows = spark_df.collect()
    assert len(rows) == local.rows
    for c, t in local.types.items():
        a = [_python(r[c], t) for r in rows]
        b = [_python(v, t) if not (t == "date" and np.isnat(v)) else None for v in local.columns[c]]
        assert a == b, c


@pytest.mark.parametrize("seed", [3])
def test_random_columns_typed_as_spark_reads_them(spark, tmp_path, seed):
    rng = np.random.default_rng(seed)
    cols, declared = random_csv(rng)
    path = tmp_path / "t.csv"
    write_rows(path, cols, quote=("text", "dates"), crlf=True)
    local = read_csv_local(str(path), ",", None, declared)
    assert_same_table(read_csv(spark, str(path), ",", typed=True, declared=declared).df, local)
    assert local.types["plain_ints"] == "long" and local.types["dates"] == "date"
    assert local.types["text"] == "string" and local.types["all_missing"] == "string"
    # headerless, tab-separated, the same values
    tsv = tmp_path / "t.tsv"
    cols, declared = random_csv(rng, sep="\t")
    write_rows(tsv, cols, sep="\t", header=False)
    local = read_csv_local(str(tsv), "\t", list(cols), declared)
    assert_same_table(read_csv(spark, str(tsv), "\t", columns=list(cols), typed=True, declared=declared).df, local)


def _error(fn):
    with pytest.raises(InputError) as e:
        fn()
    assert "\n" not in str(e.value)
    return str(e.value)


@pytest.mark.parametrize("case", ["typo", "fields", "infinite", "date typo"])
def test_errors_are_the_spark_readers(spark, tmp_path, case):
    path = tmp_path / "bad.csv"
    body = {"typo": "k,x\n1,2.5\n2,3\n3,4\n4,4;5\n5,6\n",
            "fields": "k,x\n1,2\n\n2,3,4\n3,4\n",
            "infinite": "k,x\n1,2.5\n2,1e999\n",
            "date typo": "k,x\n1,2021-01-01\n2,2021-02-30\n3,2021-03-01\n"}[case]
    path.write_text(body)
    local = _error(lambda: read_csv_local(str(path), ",", None, {"k": "id"}))
    remote = _error(lambda: read_csv(spark, str(path), ",", typed=True, declared={"k": "id"}))
    assert local == remote
    assert str(path) in local and " line " in local


@pytest.mark.parametrize("body", ['k,x\n1,"a\\"b"\n', 'k,x\n1,"a""b"\n', 'k,x\n1,"a"b\n', 'k,x\n1,"a\nb"\n',
                                  'k,x\n1, "a"\n', 'k,x\n1,a\\b\n'])
def test_quotes_and_escapes_spark_may_read_otherwise_are_left_to_it(tmp_path, body):
    path = tmp_path / "q.csv"
    path.write_text(body)
    with pytest.raises(Unsupported):
        read_csv_local(str(path), ",", None, {})


def test_fast_path_equals_the_general_path():
    rng = np.random.default_rng(7)
    for _ in range(30):
        n = int(rng.integers(1, 60))
        if rng.random() < 0.5:
            values = [str(int(v)) for v in rng.integers(-10 ** 6, 10 ** 6, n)]
        else:
            values = [repr(float(v)) for v in rng.normal(0, 10.0 ** rng.integers(-3, 8), n)]
        s = pa.chunked_array([pa.array(values[: n // 2], pa.string()), pa.array(values[n // 2:], pa.string())])
        fast = _fast_numeric(s)
        if fast is None:  # all integral doubles: the general path alone decides
            continue
        slow = _by_values(s, None, _Locator([], {}, "x", None))
        assert fast[1] == slow[1]
        assert np.array_equal(np.asarray(fast[0]).view(np.int64), np.asarray(slow[0]).view(np.int64))


# --- features: both engines on headered CSV ---------------------------------------------------------------------


def shop_csv(cfg, folder):
    """The shop tables as headered CSV: customers quoted as csv.QUOTE_NONNUMERIC writes them, orders as a directory
    of two files with their columns in two orders, items gzip'd."""
    cfg = json.loads(json.dumps(cfg))
    rows = {"customer": CUSTOMER, "city": CITY, "orders": ORDERS, "item": ITEM, "product": PRODUCT}
    names = {n: [c.split()[0] for c in SCHEMAS[n].split(", ")] for n in SCHEMAS}
    for name, spec in cfg["tables"].items():
        text = [[_text(v) for v in r] for r in rows[name]]
        if name == "orders":
            folder.joinpath("orders").mkdir()
            order = names[name][::-1]
            for i, part in enumerate((text[:4], text[4:])):
                cols = names[name] if i == 0 else order
                body = [[r[names[name].index(c)] for c in cols] for r in part]
                folder.joinpath("orders", f"part-{i}.csv").write_text(
                    "\n".join(",".join(r) for r in [cols] + body) + "\n")
            spec["source"] = str(folder / "orders")
            spec["format"] = "csv"
            continue
        path = folder / (f"{name}.csv" + (".gz" if name == "item" else ""))
        with (gzip.open(path, "wt", newline="") if name == "item" else open(path, "w", newline="")) as fh:
            w = csv.writer(fh, quoting=csv.QUOTE_NONNUMERIC if name == "customer" else csv.QUOTE_MINIMAL)
            w.writerow(names[name])
            w.writerows(text)
        spec["source"] = str(path)
    return cfg


def test_shop_tables_as_headered_csv_identical(spark, tmp_path):
    cfg = shop_csv(shop_schema(), tmp_path)
    choice = choose_engine(load_schema(cfg))
    assert choice.engine == "local", choice.reason
    prepare_both(spark, cfg)
    assert generate_features(None, cfg).engine == "local"


def test_an_escaped_quote_sends_auto_to_spark_and_local_refuses(tmp_path):
    cfg = {"tables": {"a": {"key": "k", "source": str(tmp_path / "a.csv")}}, "target": {"table": "a", "column": "y"}}
    (tmp_path / "a.csv").write_text('k,y,x\n1,p,"a\\"b"\n2,q,c\n')
    with pytest.raises(InputError, match="cannot reproduce this input exactly"):
        generate_features(None, cfg, engine="local")
