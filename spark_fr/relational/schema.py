"""The relational schema: tables, keys, foreign keys, the target and the generation options.

Sketch
------
A schema is a YAML file or a dict (the same keys)::

    base_dir: ../..                      # optional: where relative paths resolve (relative to this file)
    tables:
      loan:
        source: ../shared/datasets/rel_financial_pkdd99/fin_loan.tsv
        columns: [loan_id, account_id, granted_date, amount, duration, payments, status]   # headerless file
        key: loan_id
        types: {granted_date: date, status: nominal}
        foreign_keys: {account_id: account}          # child column -> parent table (its key)
      molecule: {source: data.json}                  # no key: a generated one (molecule_id)
      atom: {explode: {table: molecule, column: atoms}}   # nested JSON children
    target: {table: loan, id: loan_id, column: status}
    max_depth: 2
    frequent_values: 5
    aggregates: {numeric: [...], nominal: [...], date: [...], outer: [...], outer_nominal: [...],
                 conditional: [...]}

:func:`load_schema` parses it into frozen dataclasses and checks everything that can be checked without
data (every error is one line naming the table or column, raised as :class:`spark_fr.errors.InputError`).
Checks against the data (columns exist, keys unique, dangling foreign keys) are in
:mod:`spark_fr.relational.checks`.

Decisions
---------
* **Paths.** ``${NAME}`` in a path is replaced by ``variables[NAME]`` (an argument of :func:`load_schema`),
  else by the environment variable ``NAME``; an unknown name is an error. A relative path then resolves
  against, in this order: the ``base_dir`` argument; the file's ``base_dir:`` key (itself relative to the
  YAML file's directory); the YAML file's directory; the working directory (dict schemas). The configs in
  ``conf/relational/`` say ``base_dir: ../..`` so that their paths read relative to the project root.
* **Keys.** A table without ``key`` gets a generated key column ``<table>_id`` (a free name), numbered by
  row position (see :mod:`spark_fr.relational.sources`). An ``explode`` child gets a generated key
  ``<table>_id`` and a foreign key ``<parent>_id`` to its parent (override with ``key:`` and
  ``explode: {parent_column: ...}``); both are deterministic: the parent key and the array position.
* **Types.** ``numeric``, ``nominal``, ``date`` or ``id`` (not an attribute). Undeclared columns are
  inferred from the Spark type (numbers numeric; strings and booleans nominal; dates and timestamps date;
  arrays, structs and maps skipped); key and foreign-key columns are ids.
* **Aggregates.** ``count`` in a type's list means the number of related rows (one feature per path, not
  per attribute: per attribute it would repeat the same numbers); ``share`` means the share of each of the
  ``frequent_values`` most frequent values among the non-missing values. ``outer`` (default mean, min,
  max) aggregates a numeric inner result at an outer to-many hop (a chain of two to-many hops), and
  ``outer_nominal`` (default mode) a nominal one (a mode). ``conditional`` (default count, mean, sum):
  aggregates of numeric attributes restricted to the rows whose nominal attribute (same table) holds one
  of its frequent values.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from ..errors import InputError
from ..io.locations import local_path, locate, scheme_of
from ..options import JOB, OPTIONS, SCHEMA_KEYS
from ..options.config import read_yaml

KINDS = ("numeric", "nominal", "date", "id")
FORMATS = ("auto", "csv", "tsv", "parquet", "delta", "json")
NUMERIC_AGGREGATES = ("count", "count_distinct", "mean", "min", "max", "sum", "std")
NOMINAL_AGGREGATES = ("count", "count_distinct", "mode", "share")
OUTER_AGGREGATES = ("mean", "min", "max", "sum", "std", "count_distinct")
OUTER_NOMINAL_AGGREGATES = ("mode", "count_distinct")
CONDITIONAL_AGGREGATES = ("count", "mean", "min", "max", "sum")
DEFAULT_AGGREGATES = {
    "numeric": ("count", "count_distinct", "mean", "min", "max", "sum", "std"),
    "nominal": ("count", "count_distinct", "mode", "share"),
    "date": ("count", "count_distinct", "mean", "min", "max"),
    "outer": ("mean", "min", "max"),
    "outer_nominal": ("mode",),
    "conditional": ("count", "mean", "sum"),
}
ALLOWED_AGGREGATES = {"numeric": NUMERIC_AGGREGATES, "nominal": NOMINAL_AGGREGATES, "date": NUMERIC_AGGREGATES,
                      "outer": OUTER_AGGREGATES, "outer_nominal": OUTER_NOMINAL_AGGREGATES,
                      "conditional": CONDITIONAL_AGGREGATES}
_VAR = re.compile(r"\$\{([^}]*)\}")


@dataclass(frozen=True)
class ForeignKey:
    """A column of a child table that holds the key of a parent table (a to-one link from the child).

    Attributes
    ----------
    column : str
        The child's column.
    table : str
        The parent table (the link points at its key).
    """

    column: str
    table: str


@dataclass(frozen=True)
class Source:
    """Where a table's rows come from.

    Attributes
    ----------
    kind : {'path', 'catalog', 'explode', 'frame'}
        A file or directory, a catalog table, the elements of a parent's array column, or a DataFrame the
        caller passes.
    path : str or None
        Resolved path (kind 'path').
    format : str
        One of :data:`FORMATS` ('auto': from the extension or layout).
    columns : tuple of str or None
        Column names of a headerless CSV/TSV file.
    separator : str or None
        CSV field separator (default: tab for ``.tsv``, else comma).
    catalog : str or None
        ``db.table`` (kind 'catalog').
    parent, array_column, parent_column : str or None
        Kind 'explode': the parent table, its array column, and the name of the child's foreign-key column.
    """

    kind: str
    path: str | None = None
    format: str = "auto"
    columns: tuple | None = None
    separator: str | None = None
    catalog: str | None = None
    parent: str | None = None
    array_column: str | None = None
    parent_column: str | None = None


@dataclass(frozen=True)
class TableSpec:
    """One table of the schema.

    Attributes
    ----------
    name : str
    source : Source
    key : str
        The key column (declared, or the name of the generated one).
    generated_key : bool
        Whether the key is generated when the table is loaded.
    types : dict
        Declared column kinds ({column: kind}); the others are inferred.
    foreign_keys : tuple of ForeignKey
    """

    name: str
    source: Source
    key: str
    generated_key: bool = False
    types: dict = field(default_factory=dict)
    foreign_keys: tuple = ()


@dataclass(frozen=True)
class TargetSpec:
    """The examples (rows of ``table``, identified by ``id``) and the class column."""

    table: str
    id: str
    column: str


@dataclass(frozen=True)
class AggregateSpec:
    """Aggregate names per attribute kind and per position (see the module's notes)."""

    numeric: tuple = DEFAULT_AGGREGATES["numeric"]
    nominal: tuple = DEFAULT_AGGREGATES["nominal"]
    date: tuple = DEFAULT_AGGREGATES["date"]
    outer: tuple = DEFAULT_AGGREGATES["outer"]
    outer_nominal: tuple = DEFAULT_AGGREGATES["outer_nominal"]
    conditional: tuple = DEFAULT_AGGREGATES["conditional"]

    def for_kind(self, kind: str) -> tuple:
        """The innermost aggregates of an attribute of ``kind`` ('numeric', 'nominal' or 'date')."""
        return getattr(self, kind)


@dataclass(frozen=True)
class RelationalSchema:
    """A validated relational schema.

    Attributes
    ----------
    tables : dict
        {name: TableSpec}, in the order given (the order features are generated in).
    target : TargetSpec
    max_depth : int
        Longest foreign-key path (hops, to-one hops included); 0 = the target table only.
    frequent_values : int
        How many most frequent values of a nominal attribute get a share feature and a condition.
    aggregates : AggregateSpec
    origin : str
        Where the schema came from (a file path or 'dict'), for messages.
    """

    tables: dict
    target: TargetSpec
    max_depth: int = 2
    frequent_values: int = 5
    aggregates: AggregateSpec = AggregateSpec()
    origin: str = "dict"

    def table(self, name: str) -> TableSpec:
        """The table called ``name`` (an error naming it when there is none)."""
        try:
            return self.tables[name]
        except KeyError:
            raise InputError(f"{self.origin}: unknown table '{name}'") from None


def load_schema(source, *, base_dir: str | None = None, variables: dict | None = None) -> RelationalSchema:
    """Parse and check a relational schema.

    Parameters
    ----------
    source : str, dict or RelationalSchema
        A YAML file path, or the same content as a dict; a RelationalSchema is returned as it is.
    base_dir : str, optional
        Directory that relative source paths resolve against (see the module's notes).
    variables : dict, optional
        Values of ``${NAME}`` in paths (before the environment).

    Returns
    -------
    RelationalSchema

    Raises
    ------
    InputError
        One line naming the file, table or column at fault.
    """
    if isinstance(source, RelationalSchema):
        return source
    origin, cfg, file_dir = "schema", source, None
    if isinstance(source, (str, os.PathLike)):
        origin, cfg, file_dir = str(source), _read_yaml(str(source)), _directory_of(str(source))
    if not isinstance(cfg, dict):
        raise InputError(f"{origin}: a relational schema must be a mapping with 'tables' and 'target'")
    if origin != "schema":  # a file may also hold ranking options (a jobs/rank.py --config): they are not ours
        cfg = {k: v for k, v in cfg.items()
               if k in SCHEMA_KEYS or not any(JOB in o.where and str(k).replace("-", "_") == o.name for o in OPTIONS)}
    _only(cfg, SCHEMA_KEYS, origin)
    root = _root(cfg, base_dir, file_dir, origin)
    raw_tables = cfg.get("tables")
    if isinstance(raw_tables, list):
        items = []
        for t in raw_tables:
            if not isinstance(t, dict) or "name" not in t:
                raise InputError(f"{origin}: every entry of 'tables' needs a 'name'")
            items.append((t["name"], {k: v for k, v in t.items() if k != "name"}))
    elif isinstance(raw_tables, dict):
        items = list(raw_tables.items())
    else:
        raise InputError(f"{origin}: 'tables' must be a mapping of table names to their descriptions")
    if not items:
        raise InputError(f"{origin}: 'tables' is empty")
    names = [str(n) for n, _ in items]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InputError(f"{origin}: table '{dup[0]}' is declared twice")
    tables = {}
    for name, spec in items:
        tables[str(name)] = _table(str(name), spec, root, variables, origin)
    _check_links(tables, origin)
    target = _target(cfg.get("target"), tables, origin)
    max_depth = _int(cfg.get("max_depth", 2), "max_depth", origin, 0)
    frequent = _int(cfg.get("frequent_values", 5), "frequent_values", origin, 0)
    return RelationalSchema(tables, target, max_depth, frequent, _aggregates(cfg.get("aggregates"), origin), origin)


# --- parts ----------------------------------------------------------------------------------------------------


def _directory_of(path: str) -> str:
    """The directory of a schema file (a URI's parent for a remote one: relative table paths resolve there)."""
    loc = locate(path, "--schema")
    return loc.parent().path if not loc.local else os.path.dirname(loc.path)


def _read_yaml(path: str):
    from ..io.files import driver_file

    return read_yaml(driver_file(path, "--schema"), path, "schema file")


def _only(cfg: dict, allowed: set, where: str) -> None:
    for key in cfg:
        if key not in allowed:
            raise InputError(f"{where}: unknown key '{key}' (expected one of {', '.join(sorted(allowed))})")


def _root(cfg: dict, base_dir, file_dir, origin: str) -> str:
    if base_dir is not None:
        return _joined(os.getcwd(), str(base_dir))
    start = file_dir or os.getcwd()
    if cfg.get("base_dir") is not None:
        return _joined(start, str(cfg["base_dir"]))
    return start


def expand(text: str, variables: dict | None, where: str) -> str:
    """``text`` with every ``${NAME}`` replaced (``variables`` first, then the environment)."""
    def sub(m):
        name = m.group(1)
        if variables and name in variables:
            return str(variables[name])
        if name in os.environ:
            return os.environ[name]
        raise InputError(f"{where}: unknown variable ${{{name}}} (pass it in variables= or the environment)")

    return _VAR.sub(sub, text)


def _path(text, root: str, variables, where: str) -> str:
    return _joined(root, expand(str(text), variables, where))


def _joined(root: str, p: str) -> str:
    """A path of the schema resolved (:mod:`spark_fr.io.locations`): a URI as it is (a ``file:`` URI as its local
    path), an absolute path as it is, a relative one against ``root`` (a directory, or a remote directory's URI)."""
    if scheme_of(p) is not None:
        return local_path(p)
    if os.path.isabs(p):
        return os.path.normpath(p)
    if scheme_of(root) is not None:
        import posixpath
        from urllib.parse import urlsplit

        parts = urlsplit(root)
        head = f"{parts.scheme}://{parts.netloc}" if root[len(parts.scheme) + 1:].startswith("//") else f"{parts.scheme}:"
        return head + posixpath.normpath(posixpath.join(parts.path or "/", p))
    return os.path.normpath(os.path.join(root, p))


def _names(value, what: str, where: str) -> tuple:
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",")]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, (str, int)) for v in value):
        raise InputError(f"{where}: '{what}' must be a list of column names")
    return tuple(str(v) for v in value)


def _table(name: str, spec, root: str, variables, origin: str) -> TableSpec:
    where = f"{origin}: table '{name}'"
    if isinstance(spec, str):
        spec = {"source": spec}
    if not isinstance(spec, dict):
        raise InputError(f"{where}: must be a mapping (source, key, types, foreign_keys)")
    _only(spec, {"source", "format", "columns", "separator", "header", "catalog", "explode", "key", "types",
                 "foreign_keys"}, where)
    given = [k for k in ("source", "catalog", "explode") if spec.get(k) is not None]
    if len(given) > 1:
        raise InputError(f"{where}: give one of source, catalog or explode, not {' and '.join(given)}")
    fmt = str(spec.get("format", "auto")).lower()
    if fmt not in FORMATS:
        raise InputError(f"{where}: format must be one of {', '.join(FORMATS)}, not '{fmt}'")
    columns = _names(spec["columns"], "columns", where) if spec.get("columns") is not None else None
    if columns is not None and len(set(columns)) < len(columns):
        raise InputError(f"{where}: a name appears twice in 'columns'")
    fks = _foreign_keys(spec.get("foreign_keys"), where)
    key = spec.get("key")
    if not given:
        source = Source("frame")  # the caller passes the DataFrame
    elif given[0] == "source":
        source = Source("path", _path(spec["source"], root, variables, where), fmt, columns,
                        spec.get("separator"))
    elif given[0] == "catalog":
        source = Source("catalog", catalog=str(spec["catalog"]))
    else:
        ex = spec["explode"]
        if not isinstance(ex, dict) or not ex.get("table") or not ex.get("column"):
            raise InputError(f"{where}: explode needs 'table' (the parent) and 'column' (its array column)")
        _only(ex, {"table", "column", "parent_column"}, f"{where}: explode")
        parent = str(ex["table"])
        parent_column = str(ex.get("parent_column") or f"{parent}_id")
        source = Source("explode", parent=parent, array_column=str(ex["column"]), parent_column=parent_column)
        if parent_column not in {fk.column for fk in fks}:
            fks = fks + (ForeignKey(parent_column, parent),)
    generated = key is None
    key = f"{name}_id" if generated else str(key)
    types = spec.get("types") or {}
    if not isinstance(types, dict):
        raise InputError(f"{where}: 'types' must be a mapping of column names to kinds")
    types = {str(c): str(k).lower() for c, k in types.items()}
    for c, k in types.items():
        if k not in KINDS:
            raise InputError(f"{where}: column '{c}' has type '{k}'; expected one of {', '.join(KINDS)}")
    cols = {fk.column for fk in fks}
    if key in cols:
        raise InputError(f"{where}: the key '{key}' is also a foreign key")
    return TableSpec(name, source, key, generated, types, fks)


def _foreign_keys(value, where: str) -> tuple:
    if value is None:
        return ()
    if isinstance(value, dict):
        pairs = list(value.items())
    elif isinstance(value, list):
        pairs = []
        for fk in value:
            if not isinstance(fk, dict) or "column" not in fk or "table" not in fk:
                raise InputError(f"{where}: each foreign key needs 'column' and 'table'")
            pairs.append((fk["column"], fk["table"]))
    else:
        raise InputError(f"{where}: 'foreign_keys' must map child columns to parent tables")
    cols = [str(c) for c, _ in pairs]
    dup = sorted({c for c in cols if cols.count(c) > 1})
    if dup:
        raise InputError(f"{where}: column '{dup[0]}' has two foreign keys")
    return tuple(ForeignKey(str(c), str(t)) for c, t in pairs)


def _check_links(tables: dict, origin: str) -> None:
    for t in tables.values():
        src = t.source
        if src.kind == "explode" and src.parent not in tables:
            raise InputError(f"{origin}: table '{t.name}': explode names the missing table '{src.parent}'")
        for fk in t.foreign_keys:
            if fk.table not in tables:
                raise InputError(f"{origin}: table '{t.name}': foreign key '{fk.column}' points at the missing "
                                 f"table '{fk.table}'")
        if src.kind == "explode":
            seen, p = {t.name}, tables[src.parent]
            while p.source.kind == "explode":
                if p.name in seen:
                    raise InputError(f"{origin}: table '{t.name}': explode chain loops through '{p.name}'")
                seen.add(p.name)
                p = tables[p.source.parent]


def _target(value, tables: dict, origin: str) -> TargetSpec:
    if not isinstance(value, dict) or not value.get("table") or not value.get("column"):
        raise InputError(f"{origin}: 'target' needs 'table' and 'column' (and optionally 'id')")
    _only(value, {"table", "id", "column"}, f"{origin}: target")
    table = str(value["table"])
    if table not in tables:
        raise InputError(f"{origin}: target: unknown table '{table}'")
    ident = str(value.get("id") or tables[table].key)
    column = str(value["column"])
    if column == ident:
        raise InputError(f"{origin}: target: the column '{column}' is also the id")
    return TargetSpec(table, ident, column)


def _int(value, what: str, origin: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise InputError(f"{origin}: '{what}' must be an integer >= {low}, not {value!r}")
    return value


def _aggregates(value, origin: str) -> AggregateSpec:
    if value is None:
        return AggregateSpec()
    if not isinstance(value, dict):
        raise InputError(f"{origin}: 'aggregates' must map {', '.join(DEFAULT_AGGREGATES)} to lists")
    _only(value, set(DEFAULT_AGGREGATES), f"{origin}: aggregates")
    out = {}
    for kind, names in value.items():
        names = () if names is None else _names(names, f"aggregates.{kind}", origin)
        for n in names:
            if n not in ALLOWED_AGGREGATES[kind]:
                raise InputError(f"{origin}: aggregates.{kind}: unknown aggregate '{n}' (expected one of "
                                 f"{', '.join(ALLOWED_AGGREGATES[kind])})")
        out[kind] = tuple(dict.fromkeys(names))
    return AggregateSpec(**out)
