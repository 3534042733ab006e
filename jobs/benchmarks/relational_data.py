"""The relational suite's data: a synthetic schema (customers -> accounts -> transactions, the fact table, and
each customer's district; optionally an n-n link table without a key between customers and bank branches),
written as Parquet in bounded memory with its spark_fr schema YAML and a planted label; and any schema's tables
converted to the other input formats a user has (:func:`make_formats`).

Sketch
------
Four tables, sized by the fact table's ``rows`` (default 10^7)::

    districts     (DISTRICTS rows)   district_id, region (nominal, 8 values), avg_salary, unemployment
    customers     (rows / 100)       customer_id, district_id -> districts, age, segment (nominal, 4), label
    accounts      (rows / 50)        account_id, customer_id -> customers, account_type (nominal, 3), opened_year
    transactions  (rows)             transaction_id, account_id -> accounts, merchant_type (nominal, 8), amount

With ``link=True`` two more tables: ``branches`` (:data:`BRANCHES` rows: branch_id, city (nominal, 12 values),
staff) and ``customer_branch`` (rows / 50: customer_id -> customers, branch_id -> branches, since_year), which
has **no key** (spark_fr generates one; nothing refers to it) and may list a pair twice, as link tables do.

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
categories, Spark as strings). Everything goes into ``workdir/relational_<rows>_s<seed>[_link]/`` (temporary
names, then renamed) with ``schema.yaml`` (``max_depth`` 2: three tables deep, every path of the schema)
and ``truth.json``; a folder whose ``truth.json`` matches is reused.

**Formats** (:func:`make_formats`): the tables of a schema (synthetic, or financial's headerless TSV files)
read once as spark_fr types them and written again as headered CSV (``csv``), headerless TSV with the schema's
``columns:`` (``tsv``), Parquet and Delta (through ``deltalake``), each with its schema YAML in
``<folder>/<format>/`` (reused when present). Text is written by pyarrow (quotes only where needed, numbers in
their shortest form), so each format holds the same values; ``dataframe`` is the Parquet schema, which the
peers load as DataFrames (spark_fr) or pandas frames (featuretools).
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
BRANCHES = 200
CITIES = ("prague", "brno", "ostrava", "plzen", "liberec", "olomouc", "usti", "hradec", "pardubice", "zlin",
          "kladno", "most")
#: the input formats of :func:`make_formats` (``dataframe``: the Parquet files, loaded as frames by the peers)
FORMATS = ("csv", "tsv", "parquet", "delta", "dataframe")

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
{link}target: {{table: customers, id: customer_id, column: label}}
max_depth: {depth}
frequent_values: 5
"""
LINK = """  customer_branch:       # n-n link, no key
    source: customer_branch.parquet
    foreign_keys: {customer_id: customers, branch_id: branches}
  branches:
    source: branches.parquet
    key: branch_id
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


def _truth(rows: int, seed: int, link: bool = False) -> dict:
    n = sizes(rows)
    if link:
        n = {**n, "branches": BRANCHES, "customer_branch": max(n["customers"], rows // 50)}
    return {"rows": rows, "seed": seed, "sizes": n, "link": link, "row_group": ROW_GROUP, "planted_type": PLANTED_TYPE,
            "threshold": THRESHOLD, "levels": list(LEVELS), "planted_sd": PLANTED_SD, "max_depth": MAX_DEPTH,
            "merchants": list(MERCHANTS), "merchant_p": list(MERCHANT_P),
            "label": f"high if the mean amount of the customer's {PLANTED_TYPE} transactions > {THRESHOLD}, else low"}


def make_relational(workdir: Path, rows: int = 10_000_000, seed: int = 1, link: bool = False) -> tuple:
    """Write the synthetic tables and their schema once (reused when ``truth.json`` matches).

    Parameters
    ----------
    workdir : Path
    rows : int
        Rows of the fact table (transactions); at least 100.
    seed : int
    link : bool
        Add the keyless link table ``customer_branch`` and ``branches``.

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

    folder = workdir / f"relational_{rows}_s{seed}{'_link' if link else ''}"
    truth = _truth(rows, seed, link)
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
    if link:
        _write(tmp / "branches.parquet", {
            "branch_id": pa.array(np.arange(BRANCHES, dtype=np.int64)),
            "city": _dictionary(dims.integers(0, len(CITIES), BRANCHES), CITIES),
            "staff": pa.array(dims.integers(3, 60, BRANCHES).astype(np.float64))})
        m = truth["sizes"]["customer_branch"]
        who = np.concatenate([np.arange(n_c), dims.integers(0, n_c, m - n_c)]).astype(np.int64)
        _write(tmp / "customer_branch.parquet", {
            "customer_id": pa.array(who), "branch_id": pa.array(dims.integers(0, BRANCHES, m).astype(np.int64)),
            "since_year": pa.array(dims.integers(1995, 2025, m).astype(np.float64))})
    (tmp / "schema.yaml").write_text(SCHEMA.format(rows=rows, planted=PLANTED_TYPE, threshold=THRESHOLD,
                                                   depth=MAX_DEPTH, link=LINK if link else ""))
    truth["labels"] = {"high": int(high.sum()), "low": int(n_c - high.sum())}
    truth["hidden_level_agrees"] = round(float(np.mean(high == (level > THRESHOLD))), 4)
    (tmp / "truth.json").write_text(json.dumps(truth, indent=1))
    if folder.exists():
        shutil.rmtree(folder)
    os.replace(tmp, folder)
    return folder / "schema.yaml", dict(truth, write_s=round(time.perf_counter() - t0, 2))


# --- formats ------------------------------------------------------------------------------------------------


def _typed_arrow(table) -> "pyarrow.Table":
    """A table read by spark_fr's local readers (a LocalTable) as Arrow columns of its types."""
    import pyarrow as pa

    arrays = {}
    for name, t in table.types.items():
        a = table.columns[name]
        if t == "long":
            miss = np.isnan(a) if a.dtype.kind == "f" else np.zeros(len(a), bool)
            arrays[name] = pa.array(np.where(miss, 0, a).astype(np.int64), pa.int64(), mask=miss)
        elif t == "double":
            arrays[name] = pa.array(a, pa.float64(), mask=np.isnan(a))
        elif t == "date":
            arrays[name] = pa.array(a, pa.date32())
        else:
            arrays[name] = pa.array(list(a), pa.string())
    return pa.table(arrays)


def _read_typed(schema, name: str):
    """One table of a parsed schema as spark_fr types it (no generated key added)."""
    from spark_fr.relational.local_arrow import read_delta_local, read_parquet_local
    from spark_fr.relational.local_csv import read_csv_local
    from spark_fr.relational.sources import declared_types, format_of

    src = schema.tables[name].source
    fmt = format_of(src.path, src.format)
    if fmt in ("csv", "tsv"):
        sep = src.separator or ("\t" if fmt == "tsv" else ",")
        return read_csv_local(src.path, sep, list(src.columns) if src.columns else None, declared_types(schema, name))
    if fmt == "delta":
        return read_delta_local(src.path, name)
    return read_parquet_local(src.path, name)


def _write_text(table, path: Path, header: bool) -> None:
    """CSV with a header line (``header``) or headerless TSV, as pandas' ``to_csv`` writes plain values: nothing
    quoted, or every string quoted when some value needs it (it holds the separator, a quote or a line break)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    sep = "," if header else "\t"
    for style in ("none", "needed"):
        try:
            with pa.OSFile(str(path), "wb") as fh:
                if header:
                    fh.write((sep.join(table.column_names) + "\n").encode())
                pacsv.write_csv(table, fh, pacsv.WriteOptions(include_header=False, delimiter=sep,
                                                              quoting_style=style))
            return
        except pa.ArrowInvalid:
            continue
    raise ValueError(f"{path}: cannot be written as text")


def make_formats(schema_path: Path, formats=FORMATS, folder: Path | None = None) -> dict:
    """The tables of ``schema_path`` in each of ``formats`` (see the module's notes), written once.

    Parameters
    ----------
    schema_path : Path
        A spark_fr schema whose sources are local CSV/TSV, Parquet or Delta tables.
    formats : iterable of str
        From :data:`FORMATS`.
    folder : Path, optional
        Where the formats go (default: the schema's folder).

    Returns
    -------
    dict
        {format: schema YAML path}; the source's own format (and ``dataframe``, the Parquet one) included.
    """
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq
    import yaml

    from spark_fr.relational.schema import load_schema
    from spark_fr.relational.sources import format_of

    schema = load_schema(str(schema_path))
    cfg = yaml.safe_load(Path(schema_path).read_text())
    folder = Path(folder or Path(schema_path).parent)
    own = {format_of(t.source.path, t.source.format) for t in schema.tables.values()}
    own = own.pop() if len(own) == 1 else None
    out, typed = {}, {}
    for fmt in formats:
        stored = "parquet" if fmt == "dataframe" else fmt
        if stored == own and not (stored in ("csv", "tsv") and any(
                bool(t.source.columns) != (stored == "tsv") for t in schema.tables.values())):
            out[fmt] = Path(schema_path)
            continue
        target = folder / stored
        if (target / "schema.yaml").exists():
            out[fmt] = target / "schema.yaml"
            continue
        tmp = folder / f".{stored}.{os.getpid()}.tmp"
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        new = {k: v for k, v in cfg.items() if k != "base_dir"}
        new["tables"] = {}
        for name, spec in schema.tables.items():
            if name not in typed:
                typed[name] = _typed_arrow(_read_typed(schema, name))
            table = typed[name]
            entry = {k: v for k, v in cfg["tables"][name].items() if k not in ("source", "columns", "format")}
            if stored in ("csv", "tsv"):
                _write_text(table, tmp / f"{name}.{stored}", stored == "csv")
                entry["source"] = str(target / f"{name}.{stored}")
                if stored == "tsv":
                    entry["columns"] = list(table.column_names)
            elif stored == "parquet":
                pq.write_table(table, tmp / f"{name}.parquet")
                entry["source"] = str(target / f"{name}.parquet")
            elif stored == "delta":
                from deltalake import write_deltalake

                write_deltalake(str(tmp / name), table)
                entry.update(source=str(target / name), format="delta")
            else:
                raise ValueError(f"unknown format {fmt!r}")
            new["tables"][name] = entry
        (tmp / "schema.yaml").write_text(f"# {fmt} copy of {schema_path} (jobs/benchmarks/relational_data.py)\n"
                                         + yaml.safe_dump(new, sort_keys=False))
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
        out[fmt] = target / "schema.yaml"
    return out
