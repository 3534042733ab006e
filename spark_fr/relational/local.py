"""The relational walk's operations over numpy arrays in the driver, without Spark: the *local engine*.

The same features as the Spark engine (:mod:`spark_fr.relational.spark_executor`; names, order, lineage and
values bit for bit) for inputs that fit the driver, without starting the JVM: both run the one walk of
:mod:`spark_fr.relational.walk` (paths, planning, joins, fills, names and lineage); this module only executes its
operations over arrays (``tests/relational/test_relational_executors.py`` runs each against the Spark engine's).

Sketch
------
* **Reading** (:mod:`spark_fr.relational.local_sources`, which also holds the engine choice
  :func:`~spark_fr.relational.local_sources.choose_engine`): CSV/TSV files with or without a header line by
  pyarrow's CSV reader typed as Spark's reader types them (:mod:`spark_fr.relational.local_csv`), Parquet files,
  Delta tables and the caller's DataFrames through Arrow (:mod:`spark_fr.relational.local_arrow`); generated keys
  number the rows as read (:mod:`spark_fr.relational.row_keys`).
* **Preparing**: a table is {internal column: array}: keys as the joins compare them (:func:`key_array`), numbers
  and dates float64 (NaN null), nominal values factorized once (:class:`~spark_fr.relational.local_kernels.NominalColumn`).
* **Profiles** (:meth:`LocalExecutor.table_pass`, :meth:`LocalExecutor.nominal_values`): a table's rows, its keys'
  non-null and distinct values, its foreign keys without a parent, the largest ``|x|`` of each numeric or date
  attribute over its prepared values, the frequent and distinct values of its nominal attributes.
* **Aggregating** a hop (:class:`~spark_fr.relational.hop_group.HopGroup` over the kernels of
  :mod:`spark_fr.relational.local_kernels`, which the Spark engine runs per partition too): ``sum``, ``mean`` and
  ``std`` of a value with a grid use the numpy mirrors of the fixed-point arithmetic of
  :mod:`spark_fr.relational.exact`; a value without a grid takes, as in Spark, the sorted path (each group's sorted
  values added *sequentially* from 0.0). count, count_distinct, min, max, mode, shares and conditions follow
  ``aggregates.py``.
* **Joins** look the frame's link up in the parent's column; null keys never match (as in Spark).

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
* Decision: the profile's measures run one after the other (``small_jobs`` 1): they are numpy work, not the
  latency of Spark's small jobs; a table's prepared columns are made before its keys are checked (the Spark
  engine's order), so an input holding both a value the local engine cannot reproduce and a bad key is handed
  to Spark (``engine='auto'``), which names the key.
"""
from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..errors import InputError
from . import keys as KEYS
from . import local_kernels as K
from .checks import TablePass
from .hop_group import HopGroup
from .local_sources import choose_engine, load_local_tables, spark_types
from .local_table import LocalTable, Unsupported, missing
from .plan import DOMAIN_LIMIT
from .walk import walk


class LocalFrame(NamedTuple):
    """A path's frame in the driver: the link of every row, and {value column: array or NominalColumn}."""

    link: np.ndarray
    cols: dict


class LocalExecutor:
    """The walk's operations over numpy arrays (see the module's notes).

    Parameters
    ----------
    schema : RelationalSchema
    tables : dict, optional
        {table name: DataFrame} replacing the schema's sources (collected, or read from their files).

    Raises
    ------
    Unsupported
        A source the local engine cannot reproduce exactly (then use the Spark engine).
    """

    small_jobs = 1

    def __init__(self, schema, tables: dict | None = None):
        self.schema = schema
        self.tables = load_local_tables(schema, tables)

    # --- what the kinds and the key plan read ---

    def column_types(self) -> dict:
        """{table: a stand-in with ``.schema``} (:func:`~spark_fr.relational.checks.column_kinds` reads it)."""
        return {n: spark_types(t.types) for n, t in self.tables.items()}

    def key_types(self) -> dict:
        """{(table, column): Spark type name} of every key and foreign key."""
        return {(t, c): {"long": "bigint"}.get(self.tables[t].types[c], self.tables[t].types[c])
                for t, c in KEYS.key_columns(self.schema)}

    def check_declared(self) -> None:
        """Nothing: the readers refused a value that does not fit its declared column (naming its file line)."""

    # --- preparing and profiling ---

    def prepare(self, name: str, keys: dict, values: dict) -> dict:
        """Table ``name`` as {internal column: array}: ``{internal: (key column, compared as)}`` and
        ``{internal: (attribute, kind)}``."""
        table = self.tables[name]
        cols = {col: key_array(table, column, as_type) for col, (column, as_type) in keys.items()}
        cols.update({col: value_array(table, attr, kind) for col, (attr, kind) in values.items()})
        return cols

    def table_pass(self, name: str, table, plan: dict, keys, links, values) -> TablePass:
        """:func:`spark_fr.relational.checks.table_pass` over arrays: the rows of table ``name``, the non-null
        and distinct values of ``keys``, the non-null foreign keys of ``links`` and those without a parent row,
        the largest ``|x|`` of each ``(attribute, kind)`` of ``values`` (prepared ``table``)."""
        source = self.tables[name]
        counted = {}
        for k in keys:
            a = key_array(source, k, plan.get((name, k)))
            known = a[~missing(a)]
            counted[k] = (len(known), _distinct(known))
        dangling = {}
        for fk in links:
            pk = self.schema.tables[fk.table].key
            child = key_array(source, fk.column, plan.get((name, fk.column)))
            child = child[~missing(child)]
            parent = key_array(self.tables[fk.table], pk, plan.get((fk.table, pk)))
            dangling[fk.column] = (len(child), int((~pd.Series(child).isin(parent[~missing(parent)])).sum()))
        largest = {}
        for a, _ in values:
            x = np.asarray(table.frame[table.attrs[a][0]], dtype=np.float64)
            x = x[~np.isnan(x)]
            largest[a] = float(np.max(np.abs(x))) if len(x) else None
        return TablePass(source.rows, counted, dangling, largest)

    def nominal_values(self, table, k: int) -> tuple:
        """({nominal attribute: its k most frequent non-missing values, ties broken by the smaller value (UTF-8
        byte order, as Spark sorts strings)}, {nominal attribute: its sorted distinct non-missing values, or None
        when there are more than DOMAIN_LIMIT})."""
        frequent, domains = {}, {}
        for a, (c, kind) in table.attrs.items():
            if kind != "nominal":
                continue
            col = table.frame[c]
            counts = np.bincount(col.codes[col.codes >= 0], minlength=len(col.values))
            present = np.flatnonzero(counts)
            domains[a] = tuple(col.values[present]) if len(present) <= DOMAIN_LIMIT else None
            order = np.lexsort((np.arange(len(counts)), -counts))  # most frequent first, then the smaller value
            frequent[a] = [col.values[i] for i in order[:k] if counts[i] > 0] if k > 0 else []
        return frequent, domains

    def groups(self, largest: dict):
        """The hops' groups of aggregates: :class:`~spark_fr.relational.hop_group.HopGroup` (no value read here
        is NaN)."""
        return HopGroup

    # --- the walk ---

    def start(self, table, link: str, columns: dict) -> LocalFrame:
        """A path's first frame: ``link`` of ``table`` and ``{value: internal column}``."""
        return LocalFrame(table.frame[link], {v: table.frame[c] for v, c in columns.items()})

    def aggregate(self, frame: LocalFrame, group) -> LocalFrame:
        """The frame grouped by its link (null links form no group): one row per link, the group's columns."""
        g, ok, uniques = _group_index(frame.link)
        return LocalFrame(uniques, group.run({c: _rows(a, ok) for c, a in frame.cols.items()}, g, len(uniques)))

    def join(self, frame: LocalFrame, parent, on: str, link: str) -> LocalFrame:
        """The rows of ``parent`` with the values of the frame's row whose link equals their ``on`` (a left join;
        the frame's links are unique); their ``link`` becomes the link."""
        return LocalFrame(parent.frame[link], _lookup(parent.frame[on], frame.link, frame.cols))

    def fill(self, frame: LocalFrame, values) -> LocalFrame:
        """Count-like values of empty groups (NaN) as 0."""
        cols = dict(frame.cols)
        for v in values:
            if v.count_like:
                a = cols[v.col].astype(np.float64)
                cols[v.col] = np.where(np.isnan(a), 0.0, a)
        return LocalFrame(frame.link, cols)

    # --- the result ---

    def target(self, name: str, table, key: tuple, kind, columns: list) -> "_Result":
        """The result's start: the target's id, class (strings when ``kind`` is nominal) and own attributes
        ``columns`` ([(feature, internal column)]); its key is the prepared ``__k`` (``key`` compared so)."""
        target = self.schema.target
        base = self.tables[name]
        y = value_array(base, target.column, "nominal").objects() if kind == "nominal" else base.columns[target.column]
        out = {target.id: base.columns[target.id], target.column: y}
        for feature, col in columns:
            out[feature] = _plain(table.frame[col])
        return _Result(table.frame["__k"], out)

    def attach(self, result: "_Result", frame: LocalFrame, features: list) -> "_Result":
        """``result`` with the frame's values looked up by the target key: ``features`` [(name, Value)]."""
        got = _lookup(result.keys, frame.link, frame.cols)
        for name, v in features:
            arr = _plain(got[v.col])
            if v.count_like:
                arr = np.where(np.isnan(arr.astype(np.float64)), 0.0, arr).astype(np.float64)
            result.out[name] = arr
        return result

    def finish(self, result: "_Result") -> pd.DataFrame:
        """The result as a pandas DataFrame: the target id, the target column, the features."""
        return pd.DataFrame(result.out, columns=list(result.out))


class _Result(NamedTuple):
    keys: np.ndarray  # the target table's keys, as the joins compare them
    out: dict  # {output column: array}, in order


# --- columns as the Spark engine prepares them ------------------------------------------------------------


def value_array(table: LocalTable, column: str, kind: str):
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


def key_array(table: LocalTable, column: str, as_type: str | None = None) -> np.ndarray:
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


def _distinct(known: np.ndarray) -> int:
    """The number of distinct values of a column without nulls (numbers and dates sorted: hashing 10^7
    distinct keys costs several times more)."""
    if known.dtype == object:
        return len(pd.unique(known))
    if len(known) == 0:
        return 0
    s = np.sort(known.astype(np.float64) + 0.0 if known.dtype.kind == "f" else known)
    return int(np.count_nonzero(s[1:] != s[:-1])) + 1


# --- grouping and joining arrays --------------------------------------------------------------------------


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


# --- entry points -----------------------------------------------------------------------------------------


def generate_local(schema, check: bool = True, max_features: int | None = None, tables: dict | None = None):
    """Generate the features of ``schema`` in the driver (a parsed schema whose sources are local files, or
    DataFrames in ``tables``): the walk of :mod:`spark_fr.relational.walk` over a :class:`LocalExecutor`.

    Returns
    -------
    (pandas.DataFrame, list of FeatureLineage, list of paths)

    Raises
    ------
    Unsupported
        The input holds something the local engine cannot reproduce exactly (then use the Spark engine).
    """
    return walk(LocalExecutor(schema, tables), schema, check, max_features)


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
        try:  # a SIGTERM that waited for the folder to be noted is raised as the deferred section ends: in here
            with deferred():  # a SIGTERM (spark_fr.runtime.signals) between making the folder and noting it waits
                self._dir = tempfile.mkdtemp(prefix="spark_fr_relational_")
            path = os.path.join(self._dir, "features.parquet")
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
