"""Relational feature generation in the driver (pandas / numpy), without Spark: the *local engine*.

The same features as :func:`spark_fr.relational.generate.generate_features` (names, order, lineage and
values bit for bit) for small inputs, without starting the JVM.

Algorithm sketch
----------------
The plan is the Spark engine's (``generate.py``: paths from :func:`enumerate_paths`, values walked innermost
first, the same :class:`_Value` bookkeeping, names and lineage); only the execution differs:

* **Reading**: headerless CSV/TSV sources (``columns:``) are read by a driver-side scanner that types the
  columns as :func:`spark_fr.relational.sources.read_headerless` does (missing markers, space trim, double
  when every known value is a plain decimal number, date when every one is ``yyyy-MM-dd``, else string).
* **Aggregating** a hop: the child rows are sorted by (group, value); ``sum``, ``mean`` and ``std`` add
  each group's sorted values *sequentially* from 0.0 (a row-wise ``np.cumsum`` over a zero-padded matrix per
  bucket of similar group sizes), which is the fold the Spark engine runs (``array_sort`` + ``aggregate``):
  the same bits. count, count_distinct, min, max, mode, shares and conditions follow ``aggregates.py``.
* **Joins** drop null keys first (a null never matches in Spark).

Decisions
---------
* Anything whose Spark result we cannot reproduce exactly raises :class:`Unsupported`, and the engine
  choice (:func:`local_possible`) then keeps Spark: DataFrames or catalog tables from the caller, nested JSON
  (``explode``), Parquet, Delta, JSON and headered CSV sources, generated keys, gzip'd or quoted files,
  values Spark parses as numbers but a plain decimal pattern does not (``1d``, ``Infinity``, hex), infinite
  numbers, nominal attributes of type double that are not small integers (Java's double formatting),
  dates declared on string columns, and keys whose types differ from their foreign keys'.
* Numeric nulls are NaN here (no NaN can come from a supported source).
"""
from __future__ import annotations

import datetime as _dt
import os
import re

import numpy as np
import pandas as pd

from ..errors import InputError
from . import aggregates as AN
from .lineage import FeatureLineage, relations_of
from .naming import Names, feature_name
from .paths import MANY, enumerate_paths

#: total size on disk (bytes) of the sources below which ``engine='auto'`` generates locally
LOCAL_MAX_BYTES = 64 << 20

_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_LOOSE = re.compile(r"(?i)^[+-]?(inf|infinity|nan|0x.*|.*[0-9.][dfDF])$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SPARK_TRIM = "".join(chr(i) for i in range(33))


class Unsupported(Exception):
    """The local engine cannot reproduce the Spark result exactly for this input."""


# --- engine choice ----------------------------------------------------------------------------------------


def local_possible(schema, tables=None, max_bytes: int = LOCAL_MAX_BYTES) -> bool:
    """True when every source is a local headerless CSV/TSV file (``columns:``), no DataFrame is given, no
    key is generated, and the sources weigh below ``max_bytes`` together."""
    if tables:
        return False
    total = 0
    for spec in schema.tables.values():
        src = spec.source
        if src.kind != "path" or not src.columns or "://" in src.path or not os.path.isfile(src.path):
            return False
        if _format(src) not in ("csv", "tsv") or src.path.lower().endswith(".gz"):
            return False
        if spec.generated_key and spec.key not in src.columns:
            return False
        total += os.path.getsize(src.path)
    return total < max_bytes


def _format(src) -> str:
    from .sources import format_of

    try:
        return format_of(src.path, src.format)
    except InputError:
        return "?"


# --- reading ----------------------------------------------------------------------------------------------


class LocalTable:
    """A table read in the driver: ``df`` (numbers float64 with NaN for null, dates as datetime.date objects,
    strings as objects with None) and ``types`` {column: 'double' | 'date' | 'string'} (the Spark types)."""

    def __init__(self, df, types):
        self.df = df
        self.types = types


def read_headerless_local(path: str, columns: list, sep: str) -> LocalTable:
    """:func:`spark_fr.relational.sources.read_headerless` in the driver (see the module's notes)."""
    from ..io.csv import MISSING_MARKERS

    with open(path, "rb") as fh:
        raw = fh.read()
    if b'"' in raw or b"\\" in raw or b"\x00" in raw:
        raise Unsupported(f"{path}: quotes or escapes")
    text = raw.decode("utf-8")
    if text.startswith("\ufeff"):
        raise Unsupported(f"{path}: byte-order mark")
    n = len(columns)
    markers = set(MISSING_MARKERS)
    cols = [[] for _ in range(n)]
    for line in re.split(r"\r\n|\n|\r", text):
        if line == "":
            continue
        fields = line.split(sep)
        for i in range(n):
            v = fields[i] if i < len(fields) else None
            if v is not None:
                v = v.strip(" ")
                if v.lower() in markers:
                    v = None
            cols[i].append(v)
    data, types = {}, {}
    for name, values in zip(columns, cols):
        known = [v for v in values if v is not None]
        stripped = [v.strip(_SPARK_TRIM) for v in known]
        if known and all(_NUMBER.match(v) for v in stripped):
            arr = np.array([np.nan if v is None else float(v.strip(_SPARK_TRIM)) for v in values], dtype=np.float64)
            if np.isinf(arr).any():
                raise Unsupported(f"{path}: column '{name}': infinite numbers")
            data[name], types[name] = arr, "double"
            continue
        if any(_LOOSE.match(v) for v in stripped):
            raise Unsupported(f"{path}: column '{name}': numbers Spark may parse differently")
        if known and all(_DATE.match(v) and _iso_date(v) for v in known):
            data[name] = pd.Series([None if v is None else _iso_date(v) for v in values], dtype=object)
            types[name] = "date"
            continue
        data[name], types[name] = pd.Series(values, dtype=object), "string"
    return LocalTable(pd.DataFrame(data, columns=columns), types)


def _iso_date(v: str):
    try:
        return _dt.date.fromisoformat(v)
    except ValueError:
        return None


_EPOCH = _dt.date(1970, 1, 1)


def _spark_types(types: dict):
    """A stand-in with ``.schema.fields`` for :func:`spark_fr.relational.checks.column_kinds` (pure Python
    type objects: no JVM)."""
    from pyspark.sql import types as T

    by = {"double": T.DoubleType(), "date": T.DateType(), "string": T.StringType()}

    class _Frame:
        schema = T.StructType([T.StructField(c, by[t]) for c, t in types.items()])

    return _Frame()


def load_local_tables(schema) -> dict:
    """{table: LocalTable} for a schema whose sources :func:`local_possible` accepts."""
    from .sources import format_of

    out = {}
    for name, spec in schema.tables.items():
        src = spec.source
        if src.kind != "path" or not src.columns:
            raise Unsupported(f"table '{name}': source not supported locally")
        if not os.path.exists(src.path):
            raise InputError(f"{schema.origin}: table '{name}': input not found: {src.path}")
        fmt = format_of(src.path, src.format)
        if fmt not in ("csv", "tsv"):
            raise Unsupported(f"table '{name}': format {fmt}")
        sep = src.separator or ("\t" if fmt == "tsv" else ",")
        out[name] = read_headerless_local(src.path, list(src.columns), sep)
        if spec.generated_key and spec.key not in out[name].df.columns:
            raise Unsupported(f"table '{name}': generated key")
    return out


# --- checks -----------------------------------------------------------------------------------------------


def check_local(schema, tables: dict) -> dict:
    """:func:`spark_fr.relational.checks.check_data` on local tables (same errors, same warnings)."""
    import logging

    log = logging.getLogger("spark_fr.relational.checks")
    for name, spec in schema.tables.items():
        keys = [spec.key]
        if name == schema.target.table and schema.target.id != spec.key:
            keys.append(schema.target.id)
        df = tables[name].df
        rows = len(df)
        for k in keys:
            s = df[k]
            nn = int(s.notna().sum())
            if nn < rows:
                raise InputError(f"{schema.origin}: table '{name}': key '{k}' is missing in {rows - nn} of {rows} rows")
            d = int(s.nunique(dropna=True))
            if d < nn:
                raise InputError(f"{schema.origin}: table '{name}': key '{k}' is not unique ({nn - d} repeated values)")
    shares = {}
    for name, spec in schema.tables.items():
        for fk in spec.foreign_keys:
            parent = schema.tables[fk.table]
            child = tables[name].df[fk.column].dropna()
            keys = set(tables[fk.table].df[parent.key].dropna())
            n = len(child)
            dangling = int((~child.isin(keys)).sum())
            share = dangling / n if n else 0.0
            shares[(name, fk.column)] = share
            if share > 0:
                log.warning("%s: table '%s': %.1f%% of the foreign keys '%s' (%d rows) have no row in '%s'",
                            schema.origin, name, 100 * share, fk.column, dangling, fk.table)
    return shares


# --- preparing --------------------------------------------------------------------------------------------


class _Prepared:
    def __init__(self, frame, attrs, fks):
        self.frame = frame  # DataFrame: __k, __f0.., a0..
        self.attrs = attrs  # attribute -> (internal column, kind)
        self.fks = fks


def _value(table: LocalTable, column: str, kind: str):
    s = table.df[column]
    t = table.types[column]
    if kind == "numeric":
        if t != "double":
            raise Unsupported(f"column '{column}' declared numeric but holds {t}")
        return s.to_numpy(dtype=np.float64)
    if kind == "nominal":
        if t == "string":
            return s.astype(object).where(s.notna(), None).to_numpy(dtype=object)
        if t == "double":
            arr = s.to_numpy(dtype=np.float64)
            ok = np.isnan(arr) | ((arr == np.round(arr)) & (np.abs(arr) < 1e7))
            if not ok.all():
                raise Unsupported(f"column '{column}': nominal doubles that are not small integers")
            return np.array([None if np.isnan(v) else f"{int(v)}.0" if v != 0 or not np.signbit(v) else "-0.0"
                             for v in arr], dtype=object)
        raise Unsupported(f"column '{column}': nominal {t}")
    if t != "date":
        raise Unsupported(f"column '{column}': date kind on {t}")
    return np.array([np.nan if v is None else float((v - _EPOCH).days) for v in s], dtype=np.float64)


def _key(table: LocalTable, column: str):
    t = table.types[column]
    s = table.df[column]
    return t, (s.to_numpy(dtype=np.float64) if t == "double" else s.to_numpy(dtype=object))


def _prepare(spec, table: LocalTable, kinds: dict, key_types: dict) -> _Prepared:
    t, k = _key(table, spec.key)
    key_types[(spec.name, spec.key)] = t
    cols = {"__k": k}
    fks = {}
    for i, fk in enumerate(spec.foreign_keys):
        fks[fk.column] = f"__f{i}"
        ft, cols[f"__f{i}"] = _key(table, fk.column)
        key_types[(spec.name, fk.column)] = ft
    attrs = {}
    for j, (attr, kind) in enumerate(kinds.items()):
        attrs[attr] = (f"a{j}", kind)
        cols[f"a{j}"] = _value(table, attr, kind)
    return _Prepared(pd.DataFrame(cols), attrs, fks)


def _frequent(table: _Prepared, k: int) -> dict:
    out = {}
    if k <= 0:
        return out
    for a, (c, kind) in table.attrs.items():
        if kind != "nominal":
            continue
        vals = [v for v in table.frame[c] if v is not None]
        counts: dict = {}
        for v in vals:
            counts[v] = counts.get(v, 0) + 1
        out[a] = [v for v, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0].encode("utf-8")))[:k]]
    return out


# --- aggregation kernels ----------------------------------------------------------------------------------


def _seq_sums(groups: np.ndarray, values: np.ndarray, n_groups: int):
    """Per group: (sum added sequentially from 0.0 in the given order, count) of ``values`` (already sorted
    within each group, groups contiguous and ascending)."""
    sums = np.full(n_groups, np.nan)
    counts = np.bincount(groups, minlength=n_groups)
    if len(values) == 0:
        return sums, counts
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    pos = np.arange(len(values)) - starts[groups]
    nonempty = np.flatnonzero(counts)
    lengths = counts[nonempty]
    # buckets of similar lengths keep the padded matrices small
    bucket = np.ceil(np.log2(np.maximum(lengths, 1))).astype(int)
    for b in np.unique(bucket):
        gs = nonempty[bucket == b]
        width = int(counts[gs].max())
        mat = np.zeros((len(gs), width + 1))
        row_of = np.full(n_groups, -1)
        row_of[gs] = np.arange(len(gs))
        sel = row_of[groups] >= 0
        mat[row_of[groups[sel]], pos[sel] + 1] = values[sel]
        sums[gs] = np.cumsum(mat, axis=1)[:, -1]
    return sums, counts


def _numeric_aggs(names, g, x, n_groups):
    """{name: array over groups} for numeric values ``x`` (NaN = null) of rows in groups ``g``."""
    ok = ~np.isnan(x)
    g2, x2 = g[ok], x[ok]
    order = np.lexsort((x2, g2))
    g2, x2 = g2[order], x2[order]
    out = {}
    need_sum = any(n in ("sum", "mean", "std") for n in names)
    if need_sum:
        sums, cnt = _seq_sums(g2, x2, n_groups)
    else:
        cnt = np.bincount(g2, minlength=n_groups)
    for name in names:
        if name == "sum":
            out[name] = sums
        elif name == "mean":
            with np.errstate(invalid="ignore", divide="ignore"):
                out[name] = np.where(cnt > 0, sums / np.maximum(cnt, 1), np.nan)
        elif name == "std":
            mean = np.where(cnt > 0, sums / np.maximum(cnt, 1), np.nan)
            d = x2 - mean[g2]
            sq, _ = _seq_sums(g2, d * d, n_groups)
            with np.errstate(invalid="ignore", divide="ignore"):
                out[name] = np.where(cnt > 1, np.sqrt(sq / np.maximum(cnt - 1, 1)), np.nan)
        elif name in ("min", "max"):
            r = np.full(n_groups, np.nan)
            if len(x2):
                starts = np.concatenate([[0], np.cumsum(cnt)[:-1]])
                ne = cnt > 0
                idx = starts[ne] if name == "min" else (starts + cnt - 1)[ne]
                r[ne] = x2[idx]
            out[name] = r
        elif name == "count_distinct":
            if len(x2):
                z = np.where(x2 == 0, 0.0, x2)  # -0.0 and 0.0 are one value
                new = np.ones(len(z), bool)
                new[1:] = (g2[1:] != g2[:-1]) | (z[1:] != z[:-1])
                out[name] = np.bincount(g2[new], minlength=n_groups).astype(np.int64)
            else:
                out[name] = np.zeros(n_groups, np.int64)
        elif name == "mode":
            out[name] = _mode(g2, list(x2), n_groups, numeric=True)
        else:
            raise Unsupported(f"aggregate {name}")
    return out


def _mode(g, vals, n_groups, numeric=False):
    counts: dict = {}
    for gi, v in zip(g, vals):
        d = counts.setdefault(int(gi), {})
        key = 0.0 if numeric and v == 0 else v
        d[key] = d.get(key, 0) + 1
    if numeric:
        r = np.full(n_groups, np.nan)
        for gi, d in counts.items():
            r[gi] = min(d.items(), key=lambda kv: (-kv[1], kv[0]))[0]
        return r
    r = np.array([None] * n_groups, dtype=object)
    for gi, d in counts.items():
        r[gi] = min(d.items(), key=lambda kv: (-kv[1], kv[0].encode("utf-8")))[0]
    return r


def _nominal_aggs(name, g, x, n_groups, level=None):
    ok = np.array([v is not None for v in x], dtype=bool)
    g2 = g[ok]
    x2 = x[ok]
    if name == "count_distinct":
        df = pd.DataFrame({"g": g2, "v": x2})
        r = np.zeros(n_groups, np.int64)
        if len(df):
            c = df.drop_duplicates().groupby("g").size()
            r[c.index.to_numpy()] = c.to_numpy()
        return r
    if name == "mode":
        return _mode(g2, x2, n_groups)
    if name == "share":
        cnt = np.bincount(g2, minlength=n_groups)
        hit = np.bincount(g2[x2 == level], minlength=n_groups) if len(x2) else np.zeros(n_groups, np.int64)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(cnt > 0, hit / np.maximum(cnt, 1), np.nan)
    raise Unsupported(f"aggregate {name} of a nominal value")


# --- the walk ---------------------------------------------------------------------------------------------


def _group_index(keys):
    """(group codes of non-null ``keys``, mask of non-null, unique group keys)."""
    s = pd.Series(keys)
    ok = s.notna().to_numpy()
    codes, uniques = pd.factorize(s[ok], sort=False)
    return codes.astype(np.int64), ok, np.asarray(uniques, dtype=object if s.dtype == object else None)


def _lookup(left_keys, right_keys, right_values: dict):
    """Left join on keys: for each left key, the values of the right row with that key (right keys unique)."""
    rk = pd.Series(right_keys)
    index = pd.Index(rk)
    lk = pd.Series(left_keys)
    pos = index.get_indexer(lk)
    pos[lk.isna().to_numpy()] = -1
    out = {}
    for c, v in right_values.items():
        if v.dtype == object:
            r = np.array([None] * len(pos), dtype=object)
        else:
            r = np.full(len(pos), np.nan)
        m = pos >= 0
        r[m] = v[pos[m]]
        out[c] = r
    return out


def generate_local(schema, check: bool = True):
    """Generate the features of ``schema`` in the driver (a parsed schema whose sources are local files).

    Returns
    -------
    (pandas.DataFrame, list of FeatureLineage, list of paths)

    Raises
    ------
    Unsupported
        The input holds something the local engine cannot reproduce exactly (then use the Spark engine).
    """
    from .checks import column_kinds
    from .generate import _Value, _out_kind

    tables = load_local_tables(schema)
    kinds = column_kinds(schema, {n: _spark_types(t.types) for n, t in tables.items()})
    if check:
        check_local(schema, tables)
    target = schema.target
    target_kind = kinds[target.table].get(target.column)
    kinds[target.table] = {c: k for c, k in kinds[target.table].items() if c != target.column}
    key_types: dict = {}
    prepared = {n: _prepare(schema.tables[n], tables[n], kinds[n], key_types) for n in schema.tables}
    for name, spec in schema.tables.items():
        for fk in spec.foreign_keys:
            if key_types[(name, fk.column)] != key_types[(fk.table, schema.tables[fk.table].key)]:
                raise Unsupported(f"table '{name}': foreign key '{fk.column}' and its key differ in type")
    paths = enumerate_paths(schema)
    cache: dict = {}

    def frequent_of(table):
        if table not in cache:
            cache[table] = _frequent(prepared[table], schema.frequent_values)
        return cache[table]

    counter = [0]

    def new_col():
        counter[0] += 1
        return f"v{counter[0]}"

    base = tables[target.table]
    tkeys = _key(base, schema.tables[target.table].key)[1]
    names = Names([target.id, target.column])
    ycol = base.df[target.column]
    if target_kind == "nominal":
        y = _value(base, target.column, "nominal")
    else:
        y = ycol.to_numpy()
    out = {target.id: base.df[target.id].to_numpy(), target.column: y}
    lineage = []
    for attr, (col, kind) in prepared[target.table].attrs.items():
        name = names.unique(feature_name([], attr, []))
        out[name] = prepared[target.table].frame[col].to_numpy()
        lineage.append(FeatureLineage(name, (), target.table, attr, (), None,
                                      relations_of((), target.table, attr, None), _out_kind(kind)))
    for path in (p for p in paths if p.hops):
        link, cols, values = _path_frame(path, schema, prepared, frequent_of, new_col, _Value, _out_kind)
        if not values:
            continue
        got = _lookup(tkeys, link, cols)
        labels = [h.label for h in path.hops]
        for v in values:
            suffix = None if v.condition is None else f"{v.condition[0]}_{v.condition[1]}"
            aggs = list(v.aggregates)
            if v.level is not None:
                aggs[0] = f"share_{v.level}"
            name = names.unique(feature_name(labels, v.attribute, aggs, suffix))
            arr = got[v.col]
            if v.count_like:
                arr = np.where(np.isnan(arr.astype(np.float64)), 0.0, arr).astype(np.float64)
            out[name] = arr
            lineage.append(FeatureLineage(name, path.hops, path.table, v.attribute, tuple(reversed(v.aggregates)),
                                          v.condition, relations_of(path.hops, path.table, v.attribute, v.condition),
                                          v.kind, v.level))
    frame = pd.DataFrame(out, columns=list(out))
    return frame, lineage, paths


def _link_col(table, hop):
    if hop is not None and hop.direction == MANY:
        return table.fks[hop.link.column]
    return "__k"


def _path_frame(path, schema, prepared, frequent_of, new_col, _Value, _out_kind):
    """(link keys, {value column: array}, values) of one path, as generate._path_frame."""
    hops = path.hops
    s = len(hops)
    last = prepared[path.table]
    values = [_Value(new_col(), _out_kind(kind), attr) for attr, (_, kind) in last.attrs.items()]
    raw = {v.attribute: v for v in values}
    kinds = {attr: kind for attr, (_, kind) in last.attrs.items()}
    link = last.frame[_link_col(last, hops[-1])].to_numpy()
    cols = {v.col: last.frame[last.attrs[v.attribute][0]].to_numpy() for v in values}
    aggregated = False
    for i in range(s, 0, -1):
        hop = hops[i - 1]
        into_parent = hops[i - 2] if i >= 2 else None
        parent = prepared[path.tables()[i - 1]]
        if hop.direction == MANY:
            g, ok, uniques = _group_index(link)
            n_groups = len(uniques)
            sub = {c: a[ok] for c, a in cols.items()}
            if aggregated:
                cols, values = _outer(values, sub, g, n_groups, schema, new_col)
            else:
                cols, values = _innermost(values, raw, kinds, path, i == s, sub, g, n_groups, schema,
                                          frequent_of, new_col, _Value)
                aggregated = True
            if not values:
                return None, {}, []
            link = uniques
            if i >= 2 and into_parent.direction == MANY:
                got = _lookup(parent.frame["__k"].to_numpy(), link, cols)
                link = parent.frame[_link_col(parent, into_parent)].to_numpy()
                cols = _filled(got, values)
        else:
            got = _lookup(parent.frame[parent.fks[hop.link.column]].to_numpy(), link, cols)
            link = parent.frame[_link_col(parent, into_parent)].to_numpy()
            cols = _filled(got, values)
    return link, cols, values


def _filled(cols, values):
    out = dict(cols)
    for v in values:
        if v.count_like:
            a = out[v.col].astype(np.float64)
            out[v.col] = np.where(np.isnan(a), 0.0, a)
    return out


def _innermost(values, raw, kinds, path, last_hop, cols, g, n_groups, schema, frequent_of, new_col, _Value):
    aggs = schema.aggregates
    out_cols, out = {}, []

    def add(arr, value):
        out_cols[value.col] = arr
        out.append(value)

    wants_count = any("count" in aggs.for_kind(k) for k in set(kinds.values())) or not kinds
    if last_hop and wants_count:
        add(np.bincount(g, minlength=n_groups).astype(np.float64),
            _Value(new_col(), "numeric", None, ("count",), count_like=True))
    need_frequent = (("share" in aggs.nominal and any(k == "nominal" for k in kinds.values()))
                     or (aggs.conditional and any(k == "nominal" for k in kinds.values())))
    frequent = frequent_of(path.table) if need_frequent else {}
    for v in values:
        kind = kinds[v.attribute]
        x = cols[v.col]
        if kind == "nominal":
            for name in aggs.for_kind(kind):
                if name == "count":
                    continue
                if name == "share":
                    for level in frequent.get(v.attribute, []):
                        add(_nominal_aggs("share", g, x, n_groups, level),
                            _Value(new_col(), "numeric", v.attribute, ("share",), level=level))
                    continue
                add(_nominal_aggs(name, g, x, n_groups),
                    _Value(new_col(), AN.output_kind(name), v.attribute, (name,),
                           count_like=name in AN.COUNT_LIKE))
        else:
            names = [n for n in aggs.for_kind(kind) if n not in ("count", "share")]
            res = _numeric_aggs(names, g, x.astype(np.float64), n_groups)
            for name in aggs.for_kind(kind):
                if name in ("count", "share"):
                    continue
                add(res[name], _Value(new_col(), AN.output_kind(name), v.attribute, (name,),
                                      count_like=name in AN.COUNT_LIKE))
    for cattr, levels in frequent.items():
        cvals = cols[raw[cattr].col]
        for level in levels:
            cond = np.array([c == level for c in cvals], dtype=bool)  # a null condition is not true
            if "count" in aggs.conditional:
                add(np.bincount(g[cond], minlength=n_groups).astype(np.float64),
                    _Value(new_col(), "numeric", None, ("count",), (cattr, level), count_like=True))
            for v in values:
                if kinds[v.attribute] == "nominal":
                    continue
                names = [n for n in aggs.conditional if n != "count"]
                if not names:
                    continue
                x = np.where(cond, cols[v.col].astype(np.float64), np.nan)
                res = _numeric_aggs(names, g, x, n_groups)
                for name in names:
                    add(res[name], _Value(new_col(), "numeric", v.attribute, (name,), (cattr, level)))
    return out_cols, out


def _outer(values, cols, g, n_groups, schema, new_col):
    from .generate import _Value

    aggs = schema.aggregates
    out_cols, out = {}, []
    for v in values:
        names = aggs.outer if v.kind == "numeric" else aggs.outer_nominal
        x = cols[v.col]
        if v.kind == "numeric":
            res = _numeric_aggs(list(names), g, x.astype(np.float64), n_groups)
        else:
            res = {n: _nominal_aggs(n, g, x, n_groups) for n in names}
        for name in names:
            nv = _Value(new_col(), AN.output_kind(name), v.attribute, v.aggregates + (name,), v.condition,
                        v.level, name in AN.COUNT_LIKE)
            out_cols[nv.col] = res[name]
            out.append(nv)
    return out_cols, out


# --- entry points -----------------------------------------------------------------------------------------


def try_local(schema, tables, check: bool, forced: bool = False):
    """A GeneratedTable from the local engine, or None when it does not apply (``forced``: raise instead)."""
    import logging

    from .generate import GeneratedTable

    if not forced and not local_possible(schema, tables):
        return None
    if tables:
        raise InputError("engine='local' reads the schema's sources itself: DataFrames cannot be given")
    try:
        frame, lineage, paths = generate_local(schema, check=check)
    except Unsupported as e:
        if forced:
            raise InputError(f"{schema.origin}: engine='local' cannot reproduce this input exactly: {e}") from None
        logging.getLogger(__name__).info("relational: local engine not applicable (%s); using Spark", e)
        return None
    logging.getLogger(__name__).info("relational: generated in the driver (local engine), %d features", len(lineage))
    return GeneratedTable(None, lineage, schema.target.id, schema.target.column, paths, pandas=frame,
                          engine="local")


class ranking_input:
    """See :meth:`spark_fr.relational.generate.GeneratedTable.ranking_input`."""

    def __init__(self, generated, drop_id: bool = True):
        self.generated = generated
        self.drop_id = drop_id
        self._dir = None

    def __enter__(self):
        g = self.generated
        if g.pandas is None:
            return g.frame.drop(g.id) if self.drop_id else g.frame
        import shutil  # noqa: F401
        import tempfile

        import pyarrow as pa
        import pyarrow.parquet as pq

        df = g.pandas.drop(columns=[g.id]) if self.drop_id else g.pandas
        self._dir = tempfile.mkdtemp(prefix="spark_fr_relational_")
        path = os.path.join(self._dir, "features.parquet")
        arrays, fields = [], []
        for c in df.columns:
            a = df[c].to_numpy()
            if a.dtype == object:
                arr = pa.array([None if v is None else str(v) for v in a], type=pa.string())
            else:
                a = a.astype(np.float64)
                arr = pa.array(a, type=pa.float64(), mask=np.isnan(a))
            arrays.append(arr)
            fields.append(pa.field(c, arr.type))
        pq.write_table(pa.Table.from_arrays(arrays, schema=pa.schema(fields)), path)
        return path

    def __exit__(self, *exc):
        if self._dir is not None:
            import shutil

            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
        return False
