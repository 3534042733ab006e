"""The relational suite's synthetic schema: customers -> accounts -> transactions (the fact table), and each
customer's district, written as Parquet in bounded memory with its spark_fr schema YAML and a planted label.

Sketch
------
Four tables, sized by the fact table's ``rows`` (default 10^7)::

    districts     (DISTRICTS rows)   district_id, region (nominal, 8 values), avg_salary, unemployment
    customers     (rows / 100)       customer_id, district_id -> districts, age, segment (nominal, 4), label
    accounts      (rows / 50)        account_id, customer_id -> customers, account_type (nominal, 3), opened_year
    transactions  (rows)             transaction_id, account_id -> accounts, merchant_type (nominal, 8), amount

Every customer has at least one account (the first ``customers`` accounts are one each; the others go to
random customers); every transaction goes to a uniformly random account (about 50 per account, 100 per
customer). ``merchant_type`` is drawn with the fixed probabilities of :data:`MERCHANT_P` (the planted type,
:data:`PLANTED_TYPE`, is the most frequent, so it is one of the schema's ``frequent_values`` and gets the
conditional aggregates of both peers).

**The label** (``customers.label``, ``high`` / ``low``) is decided by the mean amount of a customer's
transactions at the planted merchant type, over all the customer's accounts: ``high`` when it is above
:data:`THRESHOLD` (50), ``low`` otherwise (and for a customer with no such transaction). Each customer
has a hidden level ``mu`` (40 or 60, half each) and its planted-type amounts are ``N(mu, 15^2)``, so the
label almost always equals the hidden level but is computed from the written amounts exactly. Amounts at
other merchant types are log-normal with mean about 55, the same for every customer, so the customer's
overall mean amount says little. Age, segment, account type, opening year and the district are noise.

The transactions are written row group by row group (:data:`ROW_GROUP` rows, each from
``numpy.random.default_rng([seed, group])``), so 10^7 rows need about 100 MB while they are written; the
per-customer sums that decide the label are accumulated on the way, and the customers table is written last.
``merchant_type`` and the other nominal columns are Arrow dictionary columns (pandas reads them as
categories, Spark as strings). Everything goes into ``workdir/relational_<rows>_s<seed>/`` (temporary
names, then renamed) with ``schema.yaml`` (``max_depth`` 2: three tables deep, every path of the schema)
and ``truth.json``; a folder whose ``truth.json`` matches is reused.
"""
from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import numpy as np

ROW_GROUP = 1_000_000
DISTRICTS = 50
MERCHANTS = ("grocery", "fuel", "restaurant", "online", "travel", "pharmacy", "electronics", "clothing")
MERCHANT_P = (0.25, 0.15, 0.15, 0.12, 0.10, 0.09, 0.08, 0.06)
PLANTED_TYPE = "grocery"
THRESHOLD = 50.0
LEVELS = (40.0, 60.0)
PLANTED_SD = 15.0
REGIONS = ("north", "south", "east", "west", "centre", "coast", "hills", "capital")
SEGMENTS = ("retail", "premium", "student", "business")
ACCOUNT_TYPES = ("checking", "savings", "credit")
MAX_DEPTH = 2

SCHEMA = """# Synthetic relational benchmark data (jobs/benchmarks/relational_data.py): customers -> accounts ->
# transactions ({rows} rows), customers -> districts; predict customers.label (planted: the mean amount of a
# customer's '{planted}' transactions above {threshold}).
tables:
  customers:
    source: customers.parquet
    key: customer_id
    types: {{label: nominal}}
    foreign_keys: {{district_id: districts}}
  accounts:
    source: accounts.parquet
    key: account_id
    foreign_keys: {{customer_id: customers}}
  transactions:
    source: transactions.parquet
    key: transaction_id
    foreign_keys: {{account_id: accounts}}
  districts:
    source: districts.parquet
    key: district_id
target: {{table: customers, id: customer_id, column: label}}
max_depth: {depth}
frequent_values: 5
"""


def sizes(rows: int) -> dict:
    """Rows of each table for a fact table of ``rows`` rows.

    Parameters
    ----------
    rows : int

    Returns
    -------
    dict
        ``districts``, ``customers`` (rows / 100, at least 10), ``accounts`` (rows / 50, at least the
        customers), ``transactions``.
    """
    customers = max(10, rows // 100)
    return {"districts": DISTRICTS, "customers": customers, "accounts": max(customers, rows // 50),
            "transactions": rows}


def _dictionary(codes: np.ndarray, values: tuple):
    import pyarrow as pa

    return pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int8)), pa.array(list(values)))


def _write(path: Path, columns: dict) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table(columns), path)


def _truth(rows: int, seed: int) -> dict:
    return {"rows": rows, "seed": seed, "sizes": sizes(rows), "row_group": ROW_GROUP, "planted_type": PLANTED_TYPE,
            "threshold": THRESHOLD, "levels": list(LEVELS), "planted_sd": PLANTED_SD, "max_depth": MAX_DEPTH,
            "merchants": list(MERCHANTS), "merchant_p": list(MERCHANT_P),
            "label": f"high if the mean amount of the customer's {PLANTED_TYPE} transactions > {THRESHOLD}, else low"}


def make_relational(workdir: Path, rows: int = 10_000_000, seed: int = 1) -> tuple:
    """Write the synthetic tables and their schema once (reused when ``truth.json`` matches).

    Parameters
    ----------
    workdir : Path
    rows : int
        Rows of the fact table (transactions); at least 100.
    seed : int

    Returns
    -------
    tuple of (Path, dict)
        The ``schema.yaml`` path and the truth (``sizes``, ``planted_type``, ``threshold``, ``labels``: how
        many customers are ``high`` and ``low``, ``write_s`` when written now).
    """
    if rows < 100:
        raise ValueError(f"the fact table needs at least 100 rows, not {rows}")
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = workdir / f"relational_{rows}_s{seed}"
    truth = _truth(rows, seed)
    if (folder / "truth.json").exists():
        old = json.loads((folder / "truth.json").read_text())
        if {k: old.get(k) for k in truth} == truth:
            return folder / "schema.yaml", old
    t0 = time.perf_counter()
    tmp = folder.with_name(f".{folder.name}.{os.getpid()}.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    n = sizes(rows)
    n_c, n_a = n["customers"], n["accounts"]
    dims = np.random.default_rng([seed, 1_000_000])
    _write(tmp / "districts.parquet", {
        "district_id": pa.array(np.arange(DISTRICTS, dtype=np.int64)),
        "region": _dictionary(dims.integers(0, len(REGIONS), DISTRICTS), REGIONS),
        "avg_salary": pa.array(np.round(dims.normal(30_000, 5_000, DISTRICTS), 0)),
        "unemployment": pa.array(np.round(dims.uniform(2, 12, DISTRICTS), 2))})
    customer_of_account = np.concatenate([np.arange(n_c), dims.integers(0, n_c, n_a - n_c)]).astype(np.int64)
    _write(tmp / "accounts.parquet", {
        "account_id": pa.array(np.arange(n_a, dtype=np.int64)),
        "customer_id": pa.array(customer_of_account),
        "account_type": _dictionary(dims.integers(0, len(ACCOUNT_TYPES), n_a), ACCOUNT_TYPES),
        "opened_year": pa.array(dims.integers(1995, 2025, n_a).astype(np.float64))})
    level = np.asarray(LEVELS)[dims.integers(0, len(LEVELS), n_c)]
    planted_code = MERCHANTS.index(PLANTED_TYPE)
    sums, counts = np.zeros(n_c), np.zeros(n_c, dtype=np.int64)
    schema = pa.schema([("transaction_id", pa.int64()), ("account_id", pa.int64()),
                        ("merchant_type", pa.dictionary(pa.int8(), pa.string())), ("amount", pa.float64())])
    with pq.ParquetWriter(tmp / "transactions.parquet", schema) as writer:
        for group, start in enumerate(range(0, rows, ROW_GROUP)):
            m = min(ROW_GROUP, rows - start)
            rng = np.random.default_rng([seed, group])
            account = rng.integers(0, n_a, m)
            merchant = rng.choice(len(MERCHANTS), size=m, p=MERCHANT_P)
            amount = rng.lognormal(3.8, 0.6, m)
            planted = merchant == planted_code
            cust = customer_of_account[account[planted]]
            amount[planted] = level[cust] + rng.normal(0.0, PLANTED_SD, planted.sum())
            amount = np.round(amount, 2)
            sums += np.bincount(cust, weights=amount[planted], minlength=n_c)
            counts += np.bincount(cust, minlength=n_c)
            writer.write_table(pa.Table.from_arrays(
                [pa.array(np.arange(start, start + m, dtype=np.int64)), pa.array(account.astype(np.int64)),
                 _dictionary(merchant, MERCHANTS), pa.array(amount)], schema=schema), row_group_size=ROW_GROUP)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(counts > 0, sums / np.maximum(counts, 1), -np.inf)
    high = mean > THRESHOLD
    _write(tmp / "customers.parquet", {
        "customer_id": pa.array(np.arange(n_c, dtype=np.int64)),
        "district_id": pa.array(dims.integers(0, DISTRICTS, n_c).astype(np.int64)),
        "age": pa.array(dims.integers(18, 90, n_c).astype(np.float64)),
        "segment": _dictionary(dims.integers(0, len(SEGMENTS), n_c), SEGMENTS),
        "label": pa.array(np.where(high, "high", "low"))})
    (tmp / "schema.yaml").write_text(SCHEMA.format(rows=rows, planted=PLANTED_TYPE, threshold=THRESHOLD,
                                                   depth=MAX_DEPTH))
    truth["labels"] = {"high": int(high.sum()), "low": int(n_c - high.sum())}
    truth["hidden_level_agrees"] = round(float(np.mean(high == (level > THRESHOLD))), 4)
    (tmp / "truth.json").write_text(json.dumps(truth, indent=1))
    if folder.exists():
        shutil.rmtree(folder)
    os.replace(tmp, folder)
    return folder / "schema.yaml", dict(truth, write_s=round(time.perf_counter() - t0, 2))
