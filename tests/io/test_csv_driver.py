"""spark_fr.io.csv_driver: the driver's CSV reader gives exactly the table of Spark's (spark_fr.io.csv.read_csv) --
the same columns (names, order, kinds, renamings, the layout's target), the same values (numbers bit for bit,
trimmed text, nulls) and the same one-line errors -- on random hostile CSV texts (missing markers in any case,
spaced, hex and suffixed numbers, infinities, dates, mixed columns, quoted separators, blank and whitespace lines,
CRLF and CR line ends, a byte-order mark, '#' lines, a data line equal to the header, repeated names, directories
of parts in two column orders, gzip) and on every CSV of the shared datasets; what it leaves to Spark; the rule of
when it reads (local, within prepare's local_limit)."""
import gzip
import inspect
import math
import os

import numpy as np
import pyarrow as pa
import pytest

from spark_fr.errors import InputError
from spark_fr.io import csv as C
from spark_fr.io import csv_driver as D
from spark_fr.io.readers import read_dataset
from tests.paths import DATASETS

MARKERS = ["", "?", "NA", "na", "nA", "NaN", "nan", "-NaN", "+nan", "NULL", "null", "None", "NONE", "n/a", "N/A",
           " ? ", " NA ", '""']
NUMBERS = ["1", "-2.5e3", " 1e3 ", "0x1p3", ".5", "5.", "+7", "1d", "2F", "-0x1.8p1", "1E5", "  4  ", "\t3", "007",
           "-0.0", "4.9e-324", "1.7976931348623157e308", '"1.5"', '" 2 "', "12345678901234567890"]
TEXT = ["red", " blue ", "x y", "é", "Ω", "a;b", "1x", "-", "#hash", "'q'", '"a,b"', '"x"', '" y "', "tab\tin",
        "2021-02-03", " 2020-02-29 ", "2021-02-30", "1_000", "0x10", '"1,5"']
INFINITE = ["Infinity", "-inf", "INF", "1e999", "+Infinity"]


def _column(rng, kind: str, n: int) -> list:
    def pick(tokens):
        return tokens[int(rng.integers(len(tokens)))]

    if kind == "numeric":
        return [pick(MARKERS) if rng.random() < 0.2 else pick(NUMBERS) for _ in range(n)]
    if kind == "nominal":
        return [pick(MARKERS) if rng.random() < 0.2 else pick(TEXT + NUMBERS[:3]) for _ in range(n)]
    if kind == "missing":
        return [pick(MARKERS) for _ in range(n)]
    if kind == "typo":  # mostly numbers, one text: the Spark reader's error, at its line
        out = [pick(NUMBERS) for _ in range(n)]
        out[int(rng.integers(n))] = pick(TEXT[:6])
        return out
    if kind == "infinite":
        out = [pick(NUMBERS) for _ in range(n)]
        out[int(rng.integers(n))] = pick(INFINITE)
        return out
    raise ValueError(kind)


def random_csv(rng, n: int) -> str:
    """A random hostile CSV text (module docstring)."""
    kinds = ["numeric", "nominal", "numeric", "missing"] + (["typo"] if rng.random() < 0.15 else []) + \
        (["infinite"] if rng.random() < 0.15 else []) + ["nominal"] * int(rng.integers(0, 3))
    rng.shuffle(kinds)
    names = [f"c{i}" for i in range(len(kinds))]
    if rng.random() < 0.3:
        names[0] = '"a,b"'
    if rng.random() < 0.2 and len(names) > 2:
        names[1] = names[2].upper()  # C2 and c2: a repeat for Spark's case-insensitive names
    cols = [_column(rng, k, n) for k in kinds]
    lines = [",".join(names)]
    for i in range(n):
        lines.append(",".join(c[i] for c in cols))
        r = rng.random()
        if r < 0.08:
            lines.append(["", "   ", "\t", " \t "][int(rng.integers(4))])
        elif r < 0.085:
            lines.append("#" + ",".join(["x"] * len(names))[1:])
        elif r < 0.088:
            lines.append(lines[0])
    if rng.random() < 0.05:
        lines.insert(int(rng.integers(2, len(lines))), ",".join(["1"] * (len(names) + 1)))
    end = ["\n", "\r\n", "\r"][int(rng.integers(3))]
    text = end.join(lines) + (end if rng.random() < 0.8 else "")
    return ("\ufeff" if rng.random() < 0.2 else "") + ("\n  \n" if rng.random() < 0.1 else "") + text


def _read(fn):
    try:
        return "ok", fn()
    except InputError as err:
        assert "\n" not in str(err)
        return "error", str(err)


def _bits(values: list) -> list:
    return [None if v is None else (math.copysign(1.0, v), v) if isinstance(v, float) else v for v in values]


def assert_same(spark, path, rows_in_order=True, **kw):
    """Read ``path`` with both readers: equal datasets or equal errors. Returns 'spark' when the driver left the
    input to Spark, else 'error' or 'ok'."""
    spark_side = _read(lambda: C.read_csv(spark, path, **kw))
    try:
        driver_side = _read(lambda: D.read_csv_driver(path, **kw))
    except D.NotPlain:
        return "spark"
    assert spark_side[0] == driver_side[0], (path, spark_side, driver_side)
    if spark_side[0] == "error":
        assert driver_side[1] == spark_side[1]
        return "error"
    s, d = spark_side[1], driver_side[1]
    assert [(c.name, c.kind, c.column, c.index) for c in d.columns] == \
        [(c.name, c.kind, c.column, c.index) for c in s.columns]
    assert (d.default_target, d.class_column, d.extra["renamed"], d.source) == \
        (s.default_target, s.class_column, s.extra["renamed"], s.source)
    st, dt = s.df.toArrow(), d.batches.table
    assert st.column_names == dt.column_names
    for name in st.column_names:
        a, b = st.column(name), dt.column(name)
        assert pa.types.is_floating(a.type) == pa.types.is_floating(b.type), name
        x, y = _bits(a.to_pylist()), _bits(b.to_pylist())
        if not rows_in_order:
            x, y = sorted(x, key=repr), sorted(y, key=repr)
        assert x == y, (path, name)
    return "ok"


def test_random_hostile_csv_texts_read_alike(spark, tmp_path):
    rng = np.random.default_rng(35)
    seen = []
    for i in range(12):
        path = tmp_path / f"r{i}.csv"
        text = random_csv(rng, int(rng.integers(1, 30)))
        with open(path, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        rename = {"duplicate_names": "rename"} if i % 2 else {}
        seen.append(assert_same(spark, str(path), **rename))
    assert seen.count("spark") <= 3 and seen.count("error") >= 2 and seen.count("ok") >= 5, seen


def test_parts_in_two_orders_gzip_and_a_list_read_alike(spark, tmp_path):
    rng = np.random.default_rng(7)
    d = tmp_path / "parts"
    d.mkdir()
    head = "a,b,t,y"
    body = [f"{rng.normal():.3f},{NUMBERS[i % 14]},{TEXT[i % 10]},{'yes' if i % 3 else 'no'}" for i in range(30)]
    (d / "part-0.csv").write_text("\n".join([head] + body[:15]) + "\n")
    reordered = ["y,t,b,a"] + [",".join(reversed(r.split(","))) for r in body[15:]]
    with gzip.open(d / "part-1.csv.gz", "wt") as fh:
        fh.write("\n".join(reordered) + "\n")
    (d / "_SUCCESS").write_text("")
    assert assert_same(spark, str(d), rows_in_order=False) == "ok"
    assert assert_same(spark, [str(d / "part-1.csv.gz"), str(d / "part-0.csv")], rows_in_order=False) == "ok"
    # the layouts read_csv knows by their first line: scikit-learn's CSV, a headerless line of numbers
    (tmp_path / "sk.csv").write_text("4,2,setosa,virginica\n1.0,2.0,0\n1.5,NA,1\n2.0,3.0,?\n2.5,3.5,1\n")
    (tmp_path / "sk_bad.csv").write_text("3,1,a,b\n1.0,0\n2.0,2\n3.0,1\n")
    (tmp_path / "digits.csv").write_text("0,0,5,1\n0,1,0,2\n1,0,0,0\n")
    got = [assert_same(spark, str(tmp_path / name)) for name in ("sk.csv", "sk_bad.csv", "digits.csv")]
    assert got == ["ok", "error", "ok"]


@pytest.mark.parametrize("body,why", [
    ('k,x\n1,"a\\"b"\n', "backslashes"), ('k,x\n1,"a""b"\n', "quotes inside values"),
    ('k,x\n1,"a"b\n', "quotes inside values"), ('k,x\n1,"a\nb"\n', "quotes inside values"),
    ('k,x\n1, "a"\n', "quotes inside values"), ('\ufeff\nk,x\n1,2\n', "byte-order mark"),
    ('k,x\n1,\ufeff2\n', "byte-order mark"), ('k,x\n1,"2\n', "quotes inside values")])
def test_what_spark_may_parse_otherwise_is_left_to_it(tmp_path, body, why):
    path = tmp_path / "q.csv"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(D.NotPlain, match=why):
        D.read_csv_driver(str(path))


def test_the_rule_local_and_within_prepares_local_limit(tmp_path, monkeypatch):
    from spark_fr.data.prepare import prepare

    assert D.DRIVER_LIMIT == inspect.signature(prepare).parameters["local_limit"].default
    path = tmp_path / "t.csv"
    path.write_text("a,y\n1,x\n2,y\n")
    with pytest.raises(D.NotPlain, match="is a URI"):
        D.read_csv_driver("s3a://bucket/t.csv")
    monkeypatch.setattr(D, "DRIVER_LIMIT", os.path.getsize(path) - 1)
    with pytest.raises(D.NotPlain, match="more than the driver reads"):
        D.read_csv_driver(str(path))
    monkeypatch.setattr(D, "DRIVER_LIMIT", os.path.getsize(path))
    ds = D.read_csv_driver(str(path))
    assert ds.df is None and ds.batches.table.column("a").to_pylist() == [1.0, 2.0]


def test_read_dataset_reads_small_local_csv_in_the_driver(tmp_path):
    """No session at all: a session the read touched would fail here."""
    path = tmp_path / "t.csv"
    path.write_text("a,b,y\n1,red,x\n2,NA,y\n 3 ,blue,x\n")
    ds = read_dataset(None, str(path))
    assert ds.df is None and [(c.name, c.kind) for c in ds.columns] == \
        [("a", "numeric"), ("b", "nominal"), ("y", "nominal")]
    assert ds.batches.table.column("b").to_pylist() == ["red", None, "blue"]
    assert ds.extra["fingerprint"]["files"] == 1


def _dataset_files():
    out = []
    for root, _, names in os.walk(DATASETS):
        out += [os.path.join(root, n) for n in names if n.lower().endswith((".csv", ".csv.gz", ".tsv"))
                and os.path.getsize(os.path.join(root, n)) < 1_000_000]
    return sorted(out)


def test_the_datasets_hold_small_csv_files():
    assert len(_dataset_files()) >= 10


@pytest.mark.parametrize("path", _dataset_files(), ids=lambda p: os.path.basename(p))
def test_every_small_csv_of_the_datasets_reads_alike(spark, path):
    got = assert_same(spark, path)
    assert got != "spark" or "/sklearn_" not in path, path  # scikit-learn's files are plain: the driver reads them
