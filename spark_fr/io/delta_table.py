"""Delta tables of rankings: how spark_fr proves a table is its own, creates one, and commits to one.

A run may append to or overwrite a Delta table only when the table is **proven** to hold spark_fr's rankings:

* its columns are the ranking table's, by name **and type** (:data:`spark_fr.io.writers.SCHEMA`, or with a
  relational ranking's ``level`` and ``lineage``), in order; and
* it carries spark_fr's **mark**, the table property ``spark_fr.rankings = true`` (:data:`MARK`), which spark_fr
  sets when it creates the table. A table property is kept by every later commit (appends, overwrites) and any
  Delta writer can set it: Spark SQL (``ALTER TABLE delta.`PATH` SET TBLPROPERTIES ('spark_fr.rankings' =
  'true')``, or ``DeltaTableBuilder.property``) as well as the ``deltalake`` package.

Every commit spark_fr makes also records, in its commit information, ``spark_fr.run_id`` and
``spark_fr.version`` (provenance in ``DESCRIBE HISTORY``; the mark is the table property).

Decisions
---------
* **Tables without the mark are refused**, also when their columns and types are the ranking's. That covers a
  foreign table that merely looks like ours and the tables written by spark_fr before the mark existed:
  they cannot be told apart, so the one-line error says how to adopt such a table
  (:func:`adopt_hint`: the exact property to set), after which spark_fr appends to it as to its own.
* **Creating a table takes two commits**: ``deltalake`` 1.6.6 refuses a table property it does not know in a
  data commit (``write_deltalake(configuration=...)`` fails for ``spark_fr.*`` keys), so version 0 creates the
  table with the mark (:meth:`deltalake.DeltaTable.create` with ``raise_if_key_not_exists=False``) and version
  1 holds the ranking. For a local path both are made in a hidden sibling directory that is then renamed into
  place (an empty directory is filled: the data files first, the ``_delta_log`` last), so a reader never sees
  the table without its first ranking, and a failed or interrupted run leaves nothing. A remote table
  (``s3://`` ...) is created in place: a run that fails between the two commits leaves an empty table of
  ours, to which the next run appends.
"""
from __future__ import annotations

import os
import shutil
import uuid

import pyarrow as pa

from ..errors import one_line
from ..version import __version__

#: the table property that marks a Delta table of spark_fr's rankings, and its value
MARK = "spark_fr.rankings"
MARK_VALUE = "true"


def delta_types(schema: pa.Schema) -> list:
    """``[(column, Delta type name)]`` of an Arrow schema, as Delta stores it ('string', 'integer', ...)."""
    from deltalake import Schema

    return [(f.name, _type_name(f.type)) for f in Schema.from_arrow(schema).fields]


def _type_name(delta_type) -> str:
    return str(getattr(delta_type, "type", delta_type))


def adopt_hint(path: str) -> str:
    """How a user makes an existing table of rankings spark_fr's (one line)."""
    return (f"if it holds rankings of an earlier spark_fr, adopt it by setting its table property {MARK}={MARK_VALUE} "
            f"(Spark SQL: ALTER TABLE delta.`{path}` SET TBLPROPERTIES ('{MARK}' = '{MARK_VALUE}'); deltalake: "
            f"DeltaTable('{path}').alter.set_table_properties({{'{MARK}': '{MARK_VALUE}'}}, raise_if_not_exists=False))")


def exists(path: str) -> bool:
    """Whether a Delta table is at ``path`` (a local ``_delta_log``, or one ``deltalake`` opens)."""
    if "://" not in path or path.startswith("file://"):
        return os.path.isdir(os.path.join(path.removeprefix("file://"), "_delta_log"))
    from deltalake import DeltaTable

    try:
        DeltaTable(path)
        return True
    except Exception:  # deltalake's own error types: no table there
        return False


def problem(path: str, schemas: list) -> str | None:
    """Why the Delta table at ``path`` is not proven to be spark_fr's (None: it is).

    Parameters
    ----------
    path : str
    schemas : list of pyarrow.Schema
        The schemas a table of rankings may have (the contract's; a relational ranking's).

    Returns
    -------
    str or None
        The reason, to follow "--output PATH " in a one-line message.
    """
    from deltalake import DeltaTable

    try:
        table = DeltaTable(path)
        got = [(f.name, _type_name(f.type)) for f in table.schema().fields]
        configuration = dict(table.metadata().configuration or {})
    except Exception as err:  # deltalake raises its own error types
        return f"is not a readable Delta table ({one_line(err)})"
    expected = [delta_types(s) for s in schemas]
    if got not in expected:
        names = [n for n, _ in got]
        same_names = next((e for e in expected if [n for n, _ in e] == names), None)
        if same_names is None:
            shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
            return f"is a Delta table that does not hold rankings (columns {shown}); choose another table"
        column, theirs, ours = next((n, t, o) for (n, t), (_, o) in zip(got, same_names) if t != o)
        return (f"is a Delta table that does not hold rankings: it has the ranking's column names, but column "
                f"'{column}' is {theirs}, a ranking's is {ours}; choose another table")
    if configuration.get(MARK) != MARK_VALUE:
        return (f"is a Delta table with the ranking's columns but without spark_fr's mark (the table property "
                f"{MARK}), so spark_fr does not write to it; choose another table, or, "
                f"{adopt_hint(path)}")
    return None


def commit_properties(run_id: str):
    """The commit information spark_fr adds to each of its commits."""
    from deltalake import CommitProperties

    return CommitProperties(custom_metadata={"spark_fr.run_id": str(run_id), "spark_fr.version": __version__})


def create(path: str, table: pa.Table, run_id: str) -> bool:
    """Create a marked table of rankings at ``path`` holding ``table`` (see the module's decisions).

    Returns
    -------
    bool
        True if this call created it; False if a table appeared there meanwhile (another run's: the caller
        then appends to it after checking it).
    """
    local = "://" not in path or path.startswith("file://")
    if not local:
        return _create_in_place(path, table, run_id)
    path = path.removeprefix("file://")
    parent = os.path.dirname(path)
    os.makedirs(parent, exist_ok=True)
    staging = os.path.join(parent, f".{os.path.basename(path)}.tmp-{uuid.uuid4().hex[:8]}")
    try:
        _create_in_place(staging, table, run_id)
        if not os.path.lexists(path):
            try:
                os.rename(staging, path)
                return True
            except OSError:  # another run created it at the same moment
                return False
        if os.path.isdir(path) and not os.listdir(path):
            return _fill_empty_directory(staging, path)
        return False
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _create_in_place(path: str, table: pa.Table, run_id: str) -> bool:
    from deltalake import DeltaTable, write_deltalake

    try:
        DeltaTable.create(path, table.schema, mode="error", configuration={MARK: MARK_VALUE},
                          commit_properties=commit_properties(run_id), raise_if_key_not_exists=False)
    except Exception as err:  # deltalake's error types: a table is there already
        if "exist" in str(err).lower():
            return False
        raise
    write_deltalake(path, table, mode="append", commit_properties=commit_properties(run_id))
    return True


def _fill_empty_directory(staging: str, path: str) -> bool:
    """Move a staged table into an empty directory (kept: it may be a mount point): its data files, then its log.
    False (and the moved files taken back out) if another table appeared there first."""
    moved = []
    for name in sorted(os.listdir(staging)):
        if name != "_delta_log":
            os.rename(os.path.join(staging, name), os.path.join(path, name))
            moved.append(name)
    try:
        os.rename(os.path.join(staging, "_delta_log"), os.path.join(path, "_delta_log"))
        return True
    except OSError:
        for name in moved:  # our own data files, referenced by no log: take them away again
            target = os.path.join(path, name)
            shutil.rmtree(target, ignore_errors=True) if os.path.isdir(target) else os.remove(target)
        return False


def write(path: str, table: pa.Table, mode: str, run_id: str) -> None:
    """Append ``table`` to (or overwrite with it) the table of ours at ``path`` in one commit; the table's
    properties, its mark among them, are kept."""
    from deltalake import write_deltalake

    write_deltalake(path, table, mode=mode, commit_properties=commit_properties(run_id))
