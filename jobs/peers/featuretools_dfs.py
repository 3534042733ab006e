"""featuretools peer of the relational benchmark: deep feature synthesis (DFS) on a spark_fr relational schema.

    python jobs/peers/featuretools_dfs.py conf/relational/financial.yaml result.json [--max-depth 2]

Reads the same schema YAML that spark_fr reads (parsed by spark_fr's own
:func:`spark_fr.relational.schema.load_schema`, loaded without the rest of spark_fr so that neither pyspark
nor the package's start-up is counted here), loads every table with pandas as a pandas user would (headerless
CSV/TSV under the schema's ``columns``, CSV with a header, Parquet through pyarrow, or a Delta table through the
``deltalake`` package), types the columns by
spark_fr's rules, builds a featuretools ``EntitySet`` with the same keys and foreign keys (an n-n link table
is an ordinary table with two foreign keys, as in spark_fr), runs ``ft.dfs`` for the schema's target table
and writes the feature matrix as Parquet (``--matrix``, default ``features.parquet`` next to OUTPUT), so the
work is materialised. Prints ``rows x features`` and writes ``{"rows", "features", "feature_names" (first
50), "matrix", "import_s" (interpreter and imports), "read_s" (reading and typing the tables), "entityset_s"
(the EntitySet, its relationships and interesting values), "dfs_s" (listing and computing the features),
"write_s", "frames_s" (from the frames in memory to the written matrix: the EntitySet, DFS and the write, what a
notebook user with the tables already in pandas waits for), "max_depth", "agg_primitives", "where_primitives", "no_counterpart", "interesting_values",
"featuretools_version", "like_spark_fr", "dropped_definitions"}`` to OUTPUT.

Typing (spark_fr's rules, :mod:`spark_fr.relational.checks` and ``sources.read_headerless``): the missing
markers of spark_fr's CSV reader are missing; declared ``types`` win; otherwise a column whose known values
all parse as numbers is numeric (featuretools ``Double``), one whose values are all ``yyyy-mm-dd`` dates is
a date, any other nominal (``Categorical``). Keys, foreign keys and the target id are ids (featuretools
index and foreign keys), columns declared ``id`` and the target column are left out (``ignore_columns``).
**Dates become days since 1970-01-01 (``Double``)**, as spark_fr aggregates them: featuretools' MIN, MAX
and MEAN take numbers only, and with no transform primitives a featuretools ``Datetime`` column would give
no feature at all; SUM and STD are not applied to them (spark_fr's date aggregates are count, count
distinct, mean, min, max).

Aggregates: the schema's lists map to featuretools' aggregation primitives where featuretools has them:

=====================================  ==================================================================
spark_fr                               featuretools
=====================================  ==================================================================
count (rows of a to-many hop)          ``count``
numeric/date mean, min, max, sum, std  ``mean``, ``min``, ``max``, ``sum``, ``std`` (sample std, as Spark)
nominal count_distinct                 ``num_unique``
nominal mode                           ``mode`` (categories sorted: the smallest value on ties, as spark_fr)
conditional count, mean, sum, ...      ``where_primitives`` over ``interesting_values``: per nominal
                                       column its ``frequent_values`` most frequent values, ties broken
                                       by the smaller value (spark_fr's choice), set explicitly
outer mean/min/max, outer mode         no separate list: DFS stacks every primitive at every level
numeric/date count_distinct            none (featuretools' ``num_unique`` takes categories only)
nominal share of frequent values       none (no "share of value" primitive; not emulated)
=====================================  ==================================================================

No transform primitives (``trans_primitives=[]``): spark_fr generates none. ``max_depth`` is the schema's
(or ``--max-depth``). The depths count differently: spark_fr counts foreign-key hops (a to-one hop is one),
featuretools counts stacked primitives (a direct feature is one, and one aggregation may span several
to-many hops: ``MEAN(transactions.amount)`` of a customer through its accounts). DFS as it is therefore
also generates what spark_fr does not (aggregations over several to-many hops at once, aggregates of the
target table's siblings through a parent, every primitive stacked on every other). ``--like-spark-fr``
keeps only the shapes spark_fr generates: it lists DFS's definitions (``features_only=True``), drops the
aggregations that span several to-many hops and the stacked aggregations whose outer primitive is not in the
schema's ``outer`` (numeric) or ``outer_nominal`` (nominal) list, then computes the rest with
``ft.calculate_feature_matrix``. featuretools runs on one core (its ``n_jobs`` needs dask.distributed).
"""
from __future__ import annotations

import time

T0 = time.perf_counter()  # before the imports: they are part of the run

import importlib.util  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import types  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
#: spark_fr's CSV missing markers (``spark_fr.io.csv.MISSING_MARKERS``; a test checks they agree)
MISSING_MARKERS = ("", "?", "na", "nan", "+nan", "-nan", "null", "none", "n/a")
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
#: spark_fr aggregate -> featuretools aggregation primitive, by attribute kind (None: no counterpart)
PRIMITIVES = {
    "numeric": {"count": "count", "count_distinct": None, "mean": "mean", "min": "min", "max": "max",
                "sum": "sum", "std": "std"},
    "date": {"count": "count", "count_distinct": None, "mean": "mean", "min": "min", "max": "max",
             "sum": "sum", "std": "std"},
    "nominal": {"count": "count", "count_distinct": "num_unique", "mode": "mode", "share": None},
    "conditional": {"count": "count", "mean": "mean", "min": "min", "max": "max", "sum": "sum"},
    "outer": {"mean": "mean", "min": "min", "max": "max", "sum": "sum", "std": "std", "count_distinct": None},
    "outer_nominal": {"mode": "mode", "count_distinct": "num_unique"},
}


def load_schema_module():
    """spark_fr's ``relational/schema.py`` (and ``errors.py``), without importing the package itself.

    Returns
    -------
    module
        ``spark_fr.relational.schema``; ``spark_fr`` and ``spark_fr.relational`` are registered as bare
        namespace modules (their ``__init__`` would import pyspark).
    """
    if "spark_fr.relational.schema" in sys.modules:  # already imported (a test process): the same classes
        return sys.modules["spark_fr.relational.schema"]
    pkg = ROOT / "spark_fr"
    for name, path in (("spark_fr", pkg), ("spark_fr.relational", pkg / "relational")):
        if name not in sys.modules:
            mod = types.ModuleType(name)
            mod.__path__ = [str(path)]
            sys.modules[name] = mod
    spec = importlib.util.spec_from_file_location("spark_fr.relational.schema", pkg / "relational" / "schema.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


# --- reading and typing -----------------------------------------------------------------------------------


def _format(path: str, fmt: str) -> str:
    if fmt != "auto":
        return fmt
    low = path.lower().rstrip("/")
    for ext, f in ((".tsv", "tsv"), (".tsv.gz", "tsv"), (".csv", "csv"), (".csv.gz", "csv"), (".parquet", "parquet")):
        if low.endswith(ext):
            return f
    if Path(path).is_dir():
        return "delta" if (Path(path) / "_delta_log").is_dir() else "parquet"
    raise SystemExit(f"{path}: format not supported by this peer (CSV, TSV, Parquet or Delta)")


def read_table(spec) -> "pandas.DataFrame":
    """One table of the schema as pandas reads it; CSV values are typed by :func:`type_text_columns`.

    Parameters
    ----------
    spec : TableSpec
        A table with a path source (explode and catalog tables are not supported by this peer).

    Returns
    -------
    pandas.DataFrame
    """
    import pandas as pd

    src = spec.source
    if src.kind != "path":
        raise SystemExit(f"table '{spec.name}': source kind '{src.kind}' is not supported by this peer "
                         f"(files only: CSV, TSV, Parquet, Delta)")
    fmt = _format(src.path, src.format)
    # Arrow's dates become datetime64 columns, not objects holding datetime.date, which pandas and woodwork
    # take for text: featuretools then made them categories (WHERE issued_date = 2017-05-17), as it does not
    # for the same dates read from CSV, and spark_fr reads them as dates from every format
    if fmt == "parquet":
        import pyarrow.parquet as pq

        return pq.read_table(src.path).to_pandas(date_as_object=False)
    if fmt == "delta":
        from deltalake import DeltaTable

        return DeltaTable(src.path).to_pyarrow_table().to_pandas(date_as_object=False)
    sep = src.separator or ("\t" if fmt == "tsv" else ",")
    raw = pd.read_csv(src.path, sep=sep, header=None if src.columns else 0, names=list(src.columns or []) or None,
                      dtype=str, keep_default_na=False, na_filter=False)
    return type_text_columns(raw)


def type_text_columns(raw):
    """spark_fr's typing of text columns: missing markers, then numbers, then ``yyyy-mm-dd`` dates, else text.

    Parameters
    ----------
    raw : pandas.DataFrame
        Every column a string column.

    Returns
    -------
    pandas.DataFrame
        Numeric columns as float64, date columns as ``datetime64``, the others as strings (missing: None).
    """
    import pandas as pd

    out = {}
    for name in raw.columns:
        text = raw[name].str.strip()
        text = text.where(~text.str.lower().isin(MISSING_MARKERS))
        known = text.notna().sum()
        numbers = pd.to_numeric(text, errors="coerce")
        if known and numbers.notna().sum() == known:
            out[name] = numbers.astype("float64")
            continue
        dates = pd.to_datetime(text.where(text.str.match(DATE_PATTERN, na=False)), format="%Y-%m-%d",
                               errors="coerce")
        out[name] = dates if known and dates.notna().sum() == known else text
    return pd.DataFrame(out)


def column_kinds(schema, name: str, df) -> dict:
    """``{column: kind}`` of a table's attributes by spark_fr's rules (ids and unusable columns left out)."""
    import pandas as pd

    spec = schema.tables[name]
    ids = {spec.key} | {fk.column for fk in spec.foreign_keys}
    if name == schema.target.table:
        ids |= {schema.target.id, schema.target.column}
    kinds = {}
    for col in df.columns:
        declared = spec.types.get(col)
        if col in ids or declared == "id":
            continue
        dtype = df[col].dtype
        if declared:
            kinds[col] = declared
        elif pd.api.types.is_bool_dtype(dtype):
            kinds[col] = "nominal"
        elif pd.api.types.is_numeric_dtype(dtype):
            kinds[col] = "numeric"
        elif pd.api.types.is_datetime64_any_dtype(dtype):
            kinds[col] = "date"
        elif pd.api.types.is_object_dtype(dtype) or isinstance(dtype, pd.CategoricalDtype) or \
                pd.api.types.is_string_dtype(dtype):
            kinds[col] = "nominal"
    return kinds


def days_since_epoch(series):
    """A date column as days since 1970-01-01 (float64; text is parsed as ``yyyy-mm-dd``), as spark_fr does."""
    import numpy as np
    import pandas as pd

    if not pd.api.types.is_datetime64_any_dtype(series.dtype):
        series = pd.to_datetime(series, format="%Y-%m-%d", errors="coerce")
    series = series.dt.tz_localize(None) if getattr(series.dt, "tz", None) is not None else series
    return (series - pd.Timestamp("1970-01-01")) / np.timedelta64(1, "D")


def sorted_categories(series):
    """A nominal column as a pandas categorical of strings in sorted order (spark_fr casts nominal values to
    strings): featuretools' MODE takes the first of the tied values in category order, which is then the
    smallest value, spark_fr's choice."""
    import pandas as pd

    if isinstance(series.dtype, pd.CategoricalDtype):
        cat = series.cat.rename_categories([str(c) for c in series.cat.categories])
    else:
        cat = series.astype(str).where(series.notna()).astype("category")
    return cat.cat.reorder_categories(sorted(cat.cat.categories))


def frequent_values(series, k: int) -> list:
    """The ``k`` most frequent non-missing values, ties broken by the smaller value (spark_fr's choice)."""
    counts = series.dropna().astype(str).value_counts()
    return sorted(counts.index, key=lambda v: (-counts[v], v))[:k]


def id_column(series):
    """A key or foreign-key column as featuretools joins it: int64 when every value is a whole number."""
    import numpy as np
    import pandas as pd

    if pd.api.types.is_integer_dtype(series.dtype):
        return series
    if pd.api.types.is_float_dtype(series.dtype):
        if series.notna().all() and np.all(np.mod(series.to_numpy(), 1) == 0):
            return series.astype("int64")
        return series
    return series.astype(str).where(series.notna())


# --- the entity set and DFS --------------------------------------------------------------------------------


def build_entityset(schema):
    """Read and type every table and build the EntitySet.

    Returns
    -------
    tuple
        ``(EntitySet, {table: {column: kind}}, ignore_columns, read_s)``.
    """
    import featuretools as ft
    import pandas as pd

    t0 = time.perf_counter()
    frames, kinds = {}, {}
    for name, spec in schema.tables.items():
        df = read_table(spec)
        if spec.generated_key and spec.key not in df.columns:
            df.insert(0, spec.key, range(len(df)))
        kinds[name] = column_kinds(schema, name, df)
        for col, kind in kinds[name].items():
            if kind == "date":
                df[col] = days_since_epoch(df[col])
            elif kind == "numeric":
                df[col] = pd.to_numeric(df[col], errors="coerce").astype("float64")
            else:
                df[col] = sorted_categories(df[col])
        for col in [spec.key] + [fk.column for fk in spec.foreign_keys]:
            df[col] = id_column(df[col])
        frames[name] = df
    read_s = time.perf_counter() - t0
    es = ft.EntitySet(id="schema")
    ignore = {}
    for name, spec in schema.tables.items():
        df = frames[name]
        logical = {col: ("Categorical" if kind == "nominal" else "Double") for col, kind in kinds[name].items()}
        fk_cols = [fk.column for fk in spec.foreign_keys]
        others = [c for c in df.columns if c not in kinds[name] and c != spec.key and c not in fk_cols]
        for c in others:  # typed as text so woodwork does not guess (the target is never a feature)
            logical[c] = "Unknown"
        if others or fk_cols:  # ids are never features in spark_fr; DFS would copy foreign keys as features
            ignore[name] = others + fk_cols
        es.add_dataframe(dataframe_name=name, dataframe=df, index=spec.key, logical_types=logical)
    for name, spec in schema.tables.items():
        for fk in spec.foreign_keys:
            es.add_relationship(fk.table, schema.tables[fk.table].key, name, fk.column)
    return es, kinds, ignore, read_s


def primitives(schema) -> tuple:
    """featuretools' aggregation and where primitives for the schema's aggregates, and what has no counterpart.

    Returns
    -------
    tuple of (list, list, list)
        ``agg_primitives``, ``where_primitives``, ``["kind.aggregate", ...]`` without a counterpart.
    """
    aggs, where, missing = [], [], []
    for kind in ("numeric", "nominal", "date", "outer", "outer_nominal", "conditional"):
        for name in getattr(schema.aggregates, kind):
            prim = PRIMITIVES[kind].get(name)
            if prim is None:
                missing.append(f"{kind}.{name}")
            elif kind == "conditional":
                where.append(prim) if prim not in where else None
            elif prim not in aggs:
                aggs.append(prim)
    return aggs, where, missing


def date_options(kinds: dict, aggs: list) -> dict:
    """``primitive_options`` keeping SUM and STD off the date columns (spark_fr's date aggregates lack them)."""
    dates = {t: [c for c, k in cols.items() if k == "date"] for t, cols in kinds.items()}
    dates = {t: cols for t, cols in dates.items() if cols}
    return {p: {"ignore_columns": dates} for p in ("sum", "std") if p in aggs and dates}


def like_spark_fr(features: list, schema) -> tuple:
    """The DFS definitions whose shape spark_fr also generates (see the module docstring).

    A definition is kept when every feature it is built from (its bases and ``where`` clauses, recursively)
    passes: an aggregation spans one to-many hop; no hop walks straight back over the relationship just
    walked (spark_fr's paths never do: ``districts.COUNT(customers)`` from a customer is dropped); a stacked
    aggregation's primitive is in the schema's ``outer`` list (``outer_nominal`` over a nominal value); a
    ``where`` clause tests a column of the aggregated table itself and only at the innermost aggregation
    (spark_fr's conditional aggregates).

    Parameters
    ----------
    features : list of featuretools.FeatureBase
    schema : RelationalSchema

    Returns
    -------
    tuple of (list, int)
        The kept definitions and how many were dropped.
    """
    from featuretools.feature_base import AggregationFeature, IdentityFeature

    outer = {PRIMITIVES["outer"].get(n) for n in schema.aggregates.outer}
    outer_nominal = {PRIMITIVES["outer_nominal"].get(n) for n in schema.aggregates.outer_nominal}

    def stacked(f) -> bool:
        return any(isinstance(b, AggregationFeature) for b in _walk(f))

    def ok(f, came_by) -> bool:
        rels = [r for _, r in f.relationship_path]
        if isinstance(f, AggregationFeature) and len(rels) > 1:
            return False
        for r in rels:
            if came_by is not None and r == came_by:
                return False
            came_by = r
        if isinstance(f, AggregationFeature):
            base = f.base_features[0]
            if stacked(base):
                allowed = outer_nominal if "category" in base.column_schema.semantic_tags else outer
                if f.primitive.name not in allowed or f.where is not None:
                    return False
            if f.where is not None and not all(isinstance(b, IdentityFeature) for b in f.where.base_features):
                return False
        return all(ok(b, came_by) for b in f.base_features)

    kept = [f for f in features if ok(f, None)]
    return kept, len(features) - len(kept)


def _walk(f):
    yield f
    for b in f.base_features:
        yield from _walk(b)


def run(schema_path: str, output: str, matrix: str | None, max_depth: int | None, like: bool) -> dict:
    """Build the EntitySet, run DFS, write the feature matrix; the facts of the run (module docstring)."""
    import dataclasses

    schema_mod = load_schema_module()
    schema = schema_mod.load_schema(schema_path)
    if max_depth is not None:
        schema = dataclasses.replace(schema, max_depth=max_depth)
    import featuretools as ft

    t0 = time.perf_counter()
    warnings.filterwarnings("ignore", category=FutureWarning)  # pandas' groupby deprecations, once per feature
    warnings.filterwarnings("ignore", category=UserWarning, module="woodwork")
    es, kinds, ignore, read_s = build_entityset(schema)
    t1 = time.perf_counter()
    interesting = {}
    if schema.aggregates.conditional and schema.frequent_values > 0:
        for name, cols in kinds.items():
            values = {c: frequent_values(es[name][c], schema.frequent_values) for c, k in cols.items()
                      if k == "nominal" and c != schema.target.column}
            values = {c: v for c, v in values.items() if v}
            if values:
                es.add_interesting_values(dataframe_name=name, values=values)
                interesting[name] = values
    aggs, where, missing = primitives(schema)
    t2 = time.perf_counter()
    options = dict(entityset=es, target_dataframe_name=schema.target.table, agg_primitives=aggs,
                   trans_primitives=[], where_primitives=where, max_depth=schema.max_depth,
                   ignore_columns=ignore or None, primitive_options=date_options(kinds, aggs) or None)
    dropped = 0
    if like:
        defs = ft.dfs(features_only=True, **options)
        defs, dropped = like_spark_fr(defs, schema)
        fm = ft.calculate_feature_matrix(defs, entityset=es)
    else:
        fm, defs = ft.dfs(**options)
    t3 = time.perf_counter()
    target_col = es[schema.target.table][schema.target.column]
    fm.insert(0, schema.target.column, target_col.reindex(fm.index).astype(str).to_numpy())
    path = matrix or str(Path(output).resolve().parent / "features.parquet")
    fm.reset_index().to_parquet(path, index=False)
    t4 = time.perf_counter()
    n_features = fm.shape[1] - 1
    print(f"{fm.shape[0]} rows x {n_features} features")
    return {"rows": int(fm.shape[0]), "features": int(n_features), "feature_names": list(fm.columns[1:51]),
            "matrix": path, "import_s": round(t0 - T0, 3), "read_s": round(read_s, 3),
            "entityset_s": round(t2 - t0 - read_s, 3),
            "dfs_s": round(t3 - t2, 3), "write_s": round(t4 - t3, 3), "frames_s": round(t4 - t0 - read_s, 3),
            "max_depth": schema.max_depth,
            "agg_primitives": aggs, "where_primitives": where, "no_counterpart": missing,
            "interesting_values": interesting, "like_spark_fr": like, "dropped_definitions": dropped,
            "featuretools_version": ft.__version__}


def main(argv=None) -> int:
    """Command line: ``SCHEMA.yaml OUTPUT [--max-depth D] [--matrix PATH] [--like-spark-fr]``."""
    import argparse

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("schema", help="a spark_fr relational schema (YAML) whose tables are CSV/TSV/Parquet files")
    ap.add_argument("output", help="result JSON file")
    ap.add_argument("--max-depth", type=int, help="DFS max_depth (default: the schema's max_depth)")
    ap.add_argument("--matrix", help="feature matrix Parquet file (default: features.parquet next to OUTPUT)")
    ap.add_argument("--like-spark-fr", action="store_true",
                    help="keep only the feature shapes spark_fr generates (see the description)")
    a = ap.parse_args(argv)
    result = run(a.schema, a.output, a.matrix, a.max_depth, a.like_spark_fr)
    Path(a.output).write_text(json.dumps(result, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
