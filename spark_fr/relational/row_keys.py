"""Generated keys: a table without a key gets one that numbers its rows as read, the same in both engines.

Definition
----------
The generated key of a table (the schema gives no ``key:`` and the table has no ``<table>_id`` column) is a
``bigint``: the row's position, from 0, in the table as read:

* **a path source**: its files in path order (a file; a directory's files sorted by path; a Delta table's
  snapshot files sorted by path), each file's rows in order; a header line and blank lines are not rows, and
  neither are rows a Delta deletion vector removes;
* **a DataFrame** given by the caller: its rows in its partitions' order (the order ``collect`` returns). The
  frame must give the same rows in the same order each time it is computed: a file scan does, the result of a
  shuffle (a join, a ``groupBy``) may not: give such a table a key.

Decision (issue 25): the position, not a hash of the row's content. A hash does not depend on how the rows are
read, but equal rows get equal keys (a link table listing a pair twice would have a repeated key, and the target
table could not hold two equal examples), and it is nothing a user can look up; the position is what pandas gives
a frame (a ``RangeIndex``), what the featuretools peer generates, and it says where the row is ("row 17 of
customers.csv, counting from 0"). The children of a nested column (``explode``) keep their own generated key,
``"<parent key>:<position in the array>"`` (:mod:`spark_fr.relational.sources`): it depends on the data only.

The local engine reads rows in exactly that order and numbers them (:func:`local_positions`). The Spark engine
(:func:`spark_positions`) cannot rely on a partition's order (Spark packs file splits into partitions largest
first), so it recovers the position:

* files: every row is tagged, in the scan's own stage, with ``input_file_name()``, ``input_file_block_start()``
  and ``monotonically_increasing_id()``; one small aggregation counts the rows of each (file, block) and finds its
  smallest id; the driver orders the files by path and the blocks by their offset and gives each block the
  position of its first row; a row's key is its id minus its block's smallest id plus that position (a map
  over the blocks). The rows of one block are consecutive in one partition, so their ids are consecutive, and
  the scan splits the files the same way in every job of the run.
* DataFrames: ``spark_partition_id()`` and the id; the rows per partition give each partition's first position;
  a row's key is its id minus ``partition << 33`` plus that position (what ``zipWithIndex`` computes).

The key costs that one small job, so the Spark engine computes it only where it is read (the target table, a table
a foreign key or a nested child points at: :func:`keys_read`); elsewhere the column is null and nothing reads it.
"""
from __future__ import annotations

import numpy as np


def local_positions(rows: int) -> np.ndarray:
    """The generated key of a local table of ``rows`` rows, read in the order of the definition."""
    return np.arange(rows, dtype=np.int64)


def keys_read(schema) -> set:
    """The tables whose key something reads: the target, and every table a foreign key or an ``explode`` child
    points at."""
    out = {schema.target.table}
    for spec in schema.tables.values():
        out |= {fk.table for fk in spec.foreign_keys}
        if spec.source.kind == "explode":
            out.add(spec.source.parent)
    return out


def _path_order(uri: str) -> str:
    """A file of ``input_file_name()`` as the local readers sort it (a local path: the path itself)."""
    from urllib.parse import unquote, urlparse

    if uri.startswith("file:"):
        import os

        return os.path.normpath(unquote(urlparse(uri).path))
    return uri


def spark_positions(df, key: str, files: bool):
    """``df`` with the column ``key``: the generated key of the definition (one small Spark job).

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        A table as read from its source (``files``) or as the caller gave it.
    key : str
        The new column's name.
    files : bool
        Number the rows in file order (a path source) rather than in the frame's partition order.
    """
    from pyspark.sql import functions as F

    from ..data.columns import qcol

    names = [f.name for f in df.schema.fields]
    tag, block, ident = (_free(names, n) for n in ("__file", "__block", "__id"))
    ident_col = F.monotonically_increasing_id().alias(ident)
    if files:
        start = F.input_file_block_start() if hasattr(F, "input_file_block_start") else F.expr(
            "input_file_block_start()")
        tagged = df.select("*", F.input_file_name().alias(tag), start.alias(block), ident_col)
        rows = tagged.groupBy(tag, block).agg(F.count(F.lit(1)).alias("n"), F.min(ident).alias("m")).collect()
        rows = sorted(rows, key=lambda r: (_path_order(r[0] or ""), r[1]))
        where = F.concat_ws("#", F.col(tag), F.col(block).cast("string"))
        labels = [f"{r[0]}#{r[1]}" for r in rows]
    else:
        tagged = df.select("*", F.spark_partition_id().alias(tag), ident_col)
        rows = sorted(tagged.groupBy(tag).agg(F.count(F.lit(1)).alias("n"), F.min(ident).alias("m")).collect(),
                      key=lambda r: r[0])
        where = F.col(tag)
        labels = [r[0] for r in rows]
    first, shift = 0, []
    for label, r in zip(labels, rows):
        shift += [F.lit(label), F.lit(first - r["m"])]
        first += r["n"]
    value = F.col(ident) + F.element_at(F.create_map(*shift), where) if shift else F.lit(None)
    return tagged.select(*[qcol(n) for n in names], value.cast("bigint").alias(key))


def _free(names: list, base: str) -> str:
    taken = {n.lower() for n in names}
    while base.lower() in taken:
        base += "_"
    return base
