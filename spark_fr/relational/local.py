"""Relational feature generation in the driver (pandas / numpy), without Spark: the *local engine*.

The same features as :func:`spark_fr.relational.generate.generate_features` (names, order, lineage and
values bit for bit) for inputs that fit the driver, without starting the JVM.

Algorithm sketch
----------------
The plan is the Spark engine's: paths from :func:`enumerate_paths`, values walked innermost first, and at
every to-many hop the aggregates planned by ``plan.innermost`` / ``plan.outer`` themselves (the
same :class:`Value` bookkeeping, bounds and grid exponents from ``plan.derived``, names and lineage), which
hand them to a recorder (:class:`~spark_fr.relational.hop_group.HopGroup`), which the Spark engine runs too, per
partition (:mod:`spark_fr.relational.partition_hop`). Only the execution differs:

* **Reading** (:mod:`spark_fr.relational.local_sources`, which also holds the engine choice
  :func:`~spark_fr.relational.local_sources.choose_engine`): CSV/TSV files with or without a header line by
  pyarrow's CSV reader typed as Spark's reader types them (:mod:`spark_fr.relational.local_csv`), Parquet files,
  Delta tables and the caller's DataFrames through Arrow (:mod:`spark_fr.relational.local_arrow`); generated keys
  number the rows as read (:mod:`spark_fr.relational.row_keys`).
* **Profiles** (``generate._profile``): a table's rows, the largest ``|x|`` of each numeric or date
  attribute over its prepared values, its frequent nominal values; the bounds give the grid exponents.
* **Aggregating** a hop (:mod:`spark_fr.relational.local_kernels`): ``sum``, ``mean`` and ``std`` of a
  value with a grid use the numpy mirrors of the Spark engine's fixed-point arithmetic
  (:func:`spark_fr.relational.exact.limb_sums_numpy` and the words from them; mean = that sum / the number of non-missing
  values): the same bits. A value without a grid (no finite bound, e.g. the sum of values near the largest
  double, or one whose distinct count sorts it anyway) takes, as in Spark, the sorted path: each group's
  sorted values added *sequentially* from 0.0, the fold Spark runs (``array_sort`` + ``aggregate``).
  count, count_distinct, min, max, mode, shares and conditions follow ``aggregates.py``.
* **Joins** drop null keys first (a null never matches in Spark).

The walk itself (joins, empty groups, count-like fills) mirrors ``generate._path_frame`` with arrays; it is
not shared code.

Decisions
---------
* Anything whose Spark result we cannot reproduce exactly raises :class:`Unsupported`, and ``engine='auto'``
  then runs Spark: catalog tables, nested JSON (``explode``), JSON sources, partitioned Parquet directories,
  Delta tables with reader features ``deltalake`` cannot read (and generated keys on those it reads only through
  its query engine), CSV files whose quoting or escapes Spark may parse otherwise, values Spark parses as
  numbers but a plain decimal pattern does not (``1d``, ``Infinity``, hex), NaN, integers beyond 2^53,
  timestamps, decimals, nominal attributes of type double that are not small integers (Java's double
  formatting), dates declared on string columns, and keys compared as text (:mod:`spark_fr.relational.keys`)
  that are non-integral numbers.
* Numeric nulls are NaN here (no NaN can come from a supported source).
"""
from __future__ import annotations

import os

import numpy as np
import pandas as pd

from ..errors import InputError
from . import exact as X
from . import keys as KEYS
from . import local_kernels as K
from .hop_group import HopGroup
from .lineage import FeatureLineage, relations_of
from .local_sources import choose_engine, load_local_tables, spark_types
from .local_table import LocalTable, Unsupported, missing
from .naming import Names, feature_name
from .paths import MANY, enumerate_paths
from .plan import Profile, Value, innermost, out_kind, outer
from .width import check_width

# --- checks -----------------------------------------------------------------------------------------------


def check_local(schema, tables: dict, plan: dict) -> dict:
    """:func:`spark_fr.relational.checks.check_data` on local tables (same errors, same warnings), the keys
    compared as ``plan`` (:func:`spark_fr.relational.keys.key_plan`) says; as there, only the keys a join reads
    are checked (the target's, and those foreign keys point at)."""
    import logging

    from .checks import referenced_tables, repeated_key

    log = logging.getLogger("spark_fr.relational.checks")
    referenced = referenced_tables(schema)
    for name, spec in schema.tables.items():
        if name not in referenced:
            continue
        keys = [spec.key]
        if name == schema.target.table and schema.target.id != spec.key:
            keys.append(schema.target.id)
        table = tables[name]
        rows = table.rows
        for k in keys:
            a = _key(table, k, plan.get((name, k)))
            known = a[~missing(a)]
            nn = len(known)
            if nn < rows:
                raise InputError(f"{schema.origin}: table '{name}': key '{k}' is missing in {rows - nn} of {rows} rows")
            d = _distinct(known)
            if d < nn:
                raise repeated_key(schema, name, k, nn - d, plan.get((name, k)))
    shares = {}
    for name, spec in schema.tables.items():
        for fk in spec.foreign_keys:
            parent = schema.tables[fk.table]
            child = _key(tables[name], fk.column, plan.get((name, fk.column)))
            child = child[~missing(child)]
            keys = _key(tables[fk.table], parent.key, plan.get((fk.table, parent.key)))
            n = len(child)
            dangling = int((~pd.Series(child).isin(keys[~missing(keys)])).sum())
            share = dangling / n if n else 0.0
            shares[(name, fk.column)] = share
            if share > 0:
                log.warning("%s: table '%s': %.1f%% of the foreign keys '%s' (%d rows) have no row in '%s'",
                            schema.origin, name, 100 * share, fk.column, dangling, fk.table)
    return shares


def _distinct(known: np.ndarray) -> int:
    """The number of distinct values of a column without nulls (numbers and dates sorted: hashing 10^7
    distinct keys costs several times more)."""
    if known.dtype == object:
        return len(pd.unique(known))
    if len(known) == 0:
        return 0
    s = np.sort(known.astype(np.float64) + 0.0 if known.dtype.kind == "f" else known)
    return int(np.count_nonzero(s[1:] != s[:-1])) + 1


# --- preparing --------------------------------------------------------------------------------------------


class _Prepared:
    def __init__(self, frame, attrs, fks):
        self.frame = frame  # {column: numpy array, or a NominalColumn for nominal values}: __k, __f0.., a0..
        self.rows = len(frame["__k"])
        self.attrs = attrs  # attribute -> (internal column, kind)
        self.fks = fks


def _value(table: LocalTable, column: str, kind: str):
    """A column as the Spark engine's prepared value: numbers float64 (NaN null), nominal values strings
    factorized once (a :class:`~spark_fr.relational.local_kernels.NominalColumn`; numbers formatted as Spark
    casts them), dates days since 1970-01-01 (float64)."""
    a = table.columns[column]
    t = table.types[column]
    if kind == "numeric":
        if t not in ("double", "long"):
            raise Unsupported(f"column '{column}' declared numeric but holds {t}")
        return a.astype(np.float64)
    if kind == "nominal":
        if t in ("string", "boolean"):
            if column in table.dictionaries:
                return K.NominalColumn.from_dictionary(*table.dictionaries[column])
            return K.NominalColumn(a)
        if t == "long":  # Spark casts an integer to its decimal digits
            codes, uniques = pd.factorize(a, use_na_sentinel=True)
            return K.NominalColumn.from_dictionary(codes, np.array([str(int(u)) for u in uniques], dtype=object))
        if t == "double":
            arr = a.astype(np.float64)
            ok = np.isnan(arr) | ((arr == np.round(arr)) & (np.abs(arr) < 1e7))
            if not ok.all():
                raise Unsupported(f"column '{column}': nominal doubles that are not small integers")
            return K.NominalColumn(np.array([None if np.isnan(v) else f"{int(v)}.0" if v != 0 or not np.signbit(v)
                                             else "-0.0" for v in arr], dtype=object))
        raise Unsupported(f"column '{column}': nominal {t}")
    if t != "date":
        raise Unsupported(f"column '{column}': date kind on {t}")
    return _days(a)


def _days(a: np.ndarray) -> np.ndarray:
    days = a.astype("datetime64[D]").astype(np.int64).astype(np.float64)
    days[np.isnat(a)] = np.nan
    return days


def _key(table: LocalTable, column: str, as_type: str | None = None) -> np.ndarray:
    """A key column as the joins compare it (:func:`spark_fr.relational.checks.key_value` in numpy): numbers
    float64, dates days, else objects; ``as_type`` text: the digits of integers, ``yyyy-MM-dd`` dates."""
    t = table.types[column]
    a = table.columns[column]
    if as_type == KEYS.TEXT and t != "string" and t != "boolean":
        known = ~missing(a)
        out = np.full(len(a), None, dtype=object)
        if t == "date":
            out[known] = np.datetime_as_string(a[known], unit="D")
            return out
        x = a[known].astype(np.float64)
        if not ((x == np.rint(x)) & (np.abs(x) < 2.0 ** 53)).all():
            raise Unsupported(f"column '{column}': non-integral numbers compared as text")
        out[known] = [str(int(v)) for v in x]
        return out
    if t in ("double", "long"):
        return a.astype(np.float64)
    if t == "date":
        return _days(a)
    return a


def key_types_local(tables: dict, schema) -> dict:
    """{(table, column): Spark type name} of every key and foreign key of local tables."""
    return {(t, c): {"long": "bigint"}.get(tables[t].types[c], tables[t].types[c]) for t, c in KEYS.key_columns(schema)}


def _prepare(spec, table: LocalTable, kinds: dict, plan: dict) -> _Prepared:
    cols = {"__k": _key(table, spec.key, plan.get((spec.name, spec.key)))}
    fks = {}
    for i, fk in enumerate(spec.foreign_keys):
        fks[fk.column] = f"__f{i}"
        cols[f"__f{i}"] = _key(table, fk.column, plan.get((spec.name, fk.column)))
    attrs = {}
    for j, (attr, kind) in enumerate(kinds.items()):
        attrs[attr] = (f"a{j}", kind)
        cols[f"a{j}"] = _value(table, attr, kind)
    return _Prepared(cols, attrs, fks)


def _frequent(table: _Prepared, k: int) -> dict:
    """generate._nominal_values' frequent values: {nominal attribute: its k most frequent non-missing values,
    ties broken by the smaller value (UTF-8 byte order, as Spark sorts strings)}."""
    out = {}
    for a, (c, kind) in table.attrs.items():
        if kind != "nominal":
            continue
        if k <= 0:
            out[a] = []
            continue
        col = table.frame[c]
        counts = np.bincount(col.codes[col.codes >= 0], minlength=len(col.values))
        order = np.lexsort((np.arange(len(counts)), -counts))  # most frequent first, then the smaller value
        out[a] = [col.values[i] for i in order[:k] if counts[i] > 0]
    return out


def _profile(table: _Prepared, k: int):
    """:func:`spark_fr.relational.generate._profile` of a local table: its rows, the largest ``|x|`` of every
    numeric or date attribute (None when it has no value), the frequent values of the nominal ones. Domains are
    None: they only choose how Spark computes a mode or a distinct count, not the result."""
    bounds = {}
    for a, (c, kind) in table.attrs.items():
        if kind == "nominal":
            continue
        x = np.asarray(table.frame[c], dtype=np.float64)
        x = x[~np.isnan(x)]
        b = float(np.max(np.abs(x))) if len(x) else None
        bounds[a] = b if b is not None and X.grid_exponent(b) is not None else None
    nominal = [a for a, (_, kind) in table.attrs.items() if kind == "nominal"]
    return Profile(table.rows, bounds, _frequent(table, k), {a: None for a in nominal})


# --- aggregating one hop ----------------------------------------------------------------------------------


class _LocalContext:
    """generate._Context for the local engine: profiles of local tables, recorded aggregates."""

    def __init__(self, schema, prepared):
        self.schema = schema
        self.prepared = prepared
        self._profiles = {}
        self._n = 0

    def profile_of(self, table: str):
        if table not in self._profiles:
            self._profiles[table] = _profile(self.prepared[table], self.schema.frequent_values)
        return self._profiles[table]

    def new_col(self) -> str:
        self._n += 1
        return f"v{self._n}"

    def new_group(self):
        return HopGroup()


# --- the walk ---------------------------------------------------------------------------------------------


def _group_index(keys):
    """(group codes of non-null ``keys``, mask of non-null, unique group keys)."""
    s = pd.Series(keys)
    ok = s.notna().to_numpy()
    codes, uniques = pd.factorize(s[ok], sort=False)
    return codes.astype(np.int64), ok, np.asarray(uniques, dtype=object if s.dtype == object else None)


def _plain(a):
    """A value column as the result holds it: a NominalColumn as an object array."""
    return a.objects() if isinstance(a, K.NominalColumn) else a


def _rows(a, mask):
    return a.take(mask) if isinstance(a, K.NominalColumn) else a[mask]


def _lookup(left_keys, right_keys, right_values: dict):
    """Left join on keys: for each left key, the values of the right row with that key (right keys unique)."""
    rk = pd.Series(right_keys)
    index = pd.Index(rk)
    lk = pd.Series(left_keys)
    pos = index.get_indexer(lk)
    pos[lk.isna().to_numpy()] = -1
    out = {}
    for c, v in right_values.items():
        if isinstance(v, K.NominalColumn):
            out[c] = v.take(pos)
            continue
        if v.dtype == object:
            r = np.array([None] * len(pos), dtype=object)
        else:
            r = np.full(len(pos), np.nan)
        m = pos >= 0
        r[m] = v[pos[m]]
        out[c] = r
    return out


def generate_local(schema, check: bool = True, max_features: int | None = None, tables: dict | None = None):
    """Generate the features of ``schema`` in the driver (a parsed schema whose sources are local files, or
    DataFrames in ``tables``).

    Returns
    -------
    (pandas.DataFrame, list of FeatureLineage, list of paths)

    Raises
    ------
    Unsupported
        The input holds something the local engine cannot reproduce exactly (then use the Spark engine).
    """
    from .checks import column_kinds

    tables = load_local_tables(schema, tables)
    kinds = column_kinds(schema, {n: spark_types(t.types) for n, t in tables.items()})
    target = schema.target
    target_kind = kinds[target.table].get(target.column)
    kinds[target.table] = {c: k for c, k in kinds[target.table].items() if c != target.column}
    check_width(schema, kinds, max_features)
    plan = KEYS.key_plan(schema, key_types_local(tables, schema))
    if check:
        check_local(schema, tables, plan)
    prepared = {n: _prepare(schema.tables[n], tables[n], kinds[n], plan) for n in schema.tables}
    paths = enumerate_paths(schema)
    ctx = _LocalContext(schema, prepared)

    base = tables[target.table]
    tkeys = prepared[target.table].frame["__k"]
    names = Names([target.id, target.column])
    if target_kind == "nominal":
        y = _value(base, target.column, "nominal").objects()
    else:
        y = base.columns[target.column]
    out = {target.id: base.columns[target.id], target.column: y}
    lineage = []
    for attr, (col, kind) in prepared[target.table].attrs.items():
        name = names.unique(feature_name([], attr, []))
        out[name] = _plain(prepared[target.table].frame[col])
        lineage.append(FeatureLineage(name, (), target.table, attr, (), None,
                                      relations_of((), target.table, attr, None), out_kind(kind)))
    for path in (p for p in paths if p.hops):
        link, cols, values = _path_frame(path, ctx)
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
            arr = _plain(got[v.col])
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


def _path_frame(path, ctx: _LocalContext):
    """(link keys, {value column: array}, values) of one path: generate._path_frame's walk with arrays; the
    aggregates of each hop are planned by ``plan.innermost`` / ``plan.outer`` (values, bounds, grids, names)
    and computed by :class:`~spark_fr.relational.hop_group.HopGroup`."""
    hops = path.hops
    s = len(hops)
    last = ctx.prepared[path.table]
    values = [Value(ctx.new_col(), out_kind(kind), attr) for attr, (_, kind) in last.attrs.items()]
    raw = {v.attribute: v for v in values}
    kinds = {attr: kind for attr, (_, kind) in last.attrs.items()}
    link = last.frame[_link_col(last, hops[-1])]
    cols = {v.col: last.frame[last.attrs[v.attribute][0]] for v in values}
    aggregated = False
    for i in range(s, 0, -1):
        hop = hops[i - 1]
        into_parent = hops[i - 2] if i >= 2 else None
        parent = ctx.prepared[path.tables()[i - 1]]
        if hop.direction == MANY:
            if aggregated:
                group, values = outer(values, ctx)
            else:
                group, values = innermost(values, raw, kinds, path, i == s, ctx)
                aggregated = True
            if not values:
                return None, {}, []
            g, ok, uniques = _group_index(link)
            cols = group.run({c: _rows(a, ok) for c, a in cols.items()}, g, len(uniques))
            link = uniques
            if i >= 2 and into_parent.direction == MANY:
                got = _lookup(parent.frame["__k"], link, cols)
                link = parent.frame[_link_col(parent, into_parent)]
                cols = _filled(got, values)
        else:
            got = _lookup(parent.frame[parent.fks[hop.link.column]], link, cols)
            link = parent.frame[_link_col(parent, into_parent)]
            cols = _filled(got, values)
    return link, cols, values


def _filled(cols, values):
    out = dict(cols)
    for v in values:
        if v.count_like:
            a = out[v.col].astype(np.float64)
            out[v.col] = np.where(np.isnan(a), 0.0, a)
    return out


# --- entry points -----------------------------------------------------------------------------------------


def try_local(schema, tables, check: bool, forced: bool = False, max_features: int | None = None) -> tuple:
    """((pandas frame, lineage, paths) from the local engine, or None when it does not apply; the reason) for
    :func:`spark_fr.relational.generate.generate_features`, which wraps them in its GeneratedTable. ``forced``
    (``engine='local'``): an input the local engine cannot reproduce exactly is an error instead."""
    import logging

    log = logging.getLogger(__name__)
    if forced:
        reason = "engine='local'"
    else:
        choice = choose_engine(schema, tables)
        if choice.engine != "local":
            log.info("relational: Spark engine (%s)", choice.reason)
            return None, choice.reason
        reason = choice.reason
    try:
        frame, lineage, paths = generate_local(schema, check=check, max_features=max_features, tables=tables)
    except Unsupported as e:
        if forced:
            raise InputError(f"{schema.origin}: engine='local' cannot reproduce this input exactly: {e}") from None
        log.info("relational: local engine not applicable (%s); using Spark", e)
        return None, f"the local engine cannot reproduce this input exactly ({e})"
    log.info("relational: generated in the driver (local engine: %s), %d features", reason, len(lineage))
    return (frame, lineage, paths), reason


def write_parquet(df, path: str) -> None:
    """Write a local result (:attr:`GeneratedTable.pandas`, or part of it) as one Parquet file: strings stay
    strings, other columns become doubles with NaN as null (the Spark engine's column types)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

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
        import tempfile

        from ..runtime.signals import deferred

        df = g.pandas.drop(columns=[g.id]) if self.drop_id else g.pandas
        with deferred():  # a SIGTERM (spark_fr.runtime.signals) between making the folder and noting it waits
            self._dir = tempfile.mkdtemp(prefix="spark_fr_relational_")
        path = os.path.join(self._dir, "features.parquet")
        try:
            write_parquet(df, path)
        except BaseException:  # __exit__ is not called when __enter__ fails (an error, an interruption)
            self.__exit__()
            raise
        return path

    def __exit__(self, *exc):
        if self._dir is not None:
            import shutil

            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
        return False
