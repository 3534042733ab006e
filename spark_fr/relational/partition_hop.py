"""The Spark engine's to-many hop computed by the local engine's kernels, one partition of groups at a time.

Algorithm sketch
----------------
A hop's aggregates are planned once (``plan.innermost`` / ``plan.outer``) into a :class:`PartitionHop`, which
records them as :class:`~spark_fr.relational.hop_group.HopGroup` does. :meth:`PartitionHop.apply` then:

1. keeps the group key (rows with a null key form no group that any join could match: they are dropped) and
   the value columns the aggregates read;
2. hash-partitions the rows by the key (``repartition``), so that every group lies whole in one partition;
3. runs :meth:`HopGroup.run <spark_fr.relational.hop_group.HopGroup.run>` on each partition's rows in a Python
   worker (``mapInArrow``): the key is dictionary-encoded into group indices, strings become
   :class:`~spark_fr.relational.local_kernels.NominalColumn` through their Arrow dictionary, numbers float64
   arrays (null as NaN);
4. returns one row per group: the key, then the added columns (numbers as doubles, modes as strings).

Every aggregate of a group depends only on the group's rows as a set (sums on a grid are exact, the sorted path
sorts first, modes and distinct counts count), so the result is the local engine's, bit for bit, whatever the
partitioning. Spark's own ``groupBy`` of the same aggregates (:class:`spark_fr.relational.aggregates.GroupAggregates`)
generates one wide aggregation per hop (hundreds of buffer fields, too many for whole-stage code generation,
plus object aggregates for modes and distinct counts); here the shuffle carries the raw rows once and numpy does
the rest.

Decision: a value that may hold NaN keeps Spark's own aggregation (:func:`applies`): the kernels read NaN as a
missing value, Spark as a number.
"""
from __future__ import annotations

import math
from functools import partial

import numpy as np

from .hop_group import HopGroup

#: rows per Arrow batch a partition's result is sent back in
RESULT_BATCH_ROWS = 1 << 16


def applies(largest: dict) -> bool:
    """Whether the kernels reproduce Spark's aggregates of a table whose pass measured ``largest`` ({attribute:
    the largest ``|x|``, None without values}): not when a value is NaN (Spark orders NaN above every number)."""
    return not any(b is not None and math.isnan(b) for b in largest.values())


class PartitionHop(HopGroup):
    """:class:`~spark_fr.relational.hop_group.HopGroup` whose :meth:`apply` takes a Spark frame, as
    :class:`spark_fr.relational.aggregates.GroupAggregates` does."""

    def apply(self, frame, key):
        """``frame`` grouped by the column ``key`` (a Column, aliased): the key and the added columns.

        Parameters
        ----------
        frame : pyspark.sql.DataFrame
            The rows: the key's column and the value columns the aggregates read.
        key : pyspark.sql.Column
            The group key, aliased (e.g. ``F.col("__l").alias("__g")``).

        Returns
        -------
        pyspark.sql.DataFrame
            One row per non-null key: the key, then one column per added aggregate in order (doubles, or
            strings for modes).
        """
        from pyspark.sql import functions as F
        from pyspark.sql import types as T

        rows = frame.select(key, *[F.col(c) for c in self.columns_read()])
        name = rows.columns[0]
        key_type = rows.schema[0].dataType
        if isinstance(key_type, (T.DoubleType, T.FloatType)):  # -0.0 and 0.0 are one group in Spark
            rows = rows.withColumn(name, (F.col(name) + F.lit(0.0)).cast(key_type))
        rows = rows.where(F.col(name).isNotNull())
        fields = [T.StructField(name, key_type)]
        for entry in self.entries:
            out = T.StringType() if entry.output_kind == "nominal" else T.DoubleType()
            fields.append(T.StructField(entry.alias, out))
        rows = rows.repartition(_partitions(rows), F.col(name))
        return rows.mapInArrow(partial(_aggregate_partition, self, name), T.StructType(fields))


def _partitions(frame) -> int:
    """The number of partitions a hop's rows are hashed into: the session's ``spark.sql.shuffle.partitions``
    (200 when it is not a number), given explicitly so that adaptive execution does not coalesce them into
    fewer, unequal ones (three tasks on two cores take as long as four)."""
    try:
        return max(int(frame.sparkSession.conf.get("spark.sql.shuffle.partitions")), 1)
    except (ValueError, TypeError):
        return 200


def _aggregate_partition(group: HopGroup, key: str, batches):
    """The groups of one partition (Arrow batches of the key and value columns) as Arrow batches."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from . import local_kernels as K

    batches = [b for b in batches if b.num_rows]
    if not batches:
        return
    table = pa.Table.from_batches(batches).combine_chunks()
    encoded = pc.dictionary_encode(table.column(key)).combine_chunks()
    g = encoded.indices.to_numpy().astype(np.int64)
    uniques = encoded.dictionary
    cols = {}
    for name in table.column_names:
        if name == key:
            continue
        a = table.column(name).combine_chunks()
        if pa.types.is_string(a.type) or pa.types.is_large_string(a.type):
            d = pc.dictionary_encode(a)
            codes = d.indices.fill_null(-1).to_numpy().astype(np.int64)
            cols[name] = K.NominalColumn.from_dictionary(codes, d.dictionary.to_numpy(zero_copy_only=False))
        else:
            cols[name] = a.cast(pa.float64()).fill_null(np.nan).to_numpy()
    out = group.run(cols, g, len(uniques))
    arrays, names = [uniques], [key]
    for entry in group.entries:
        v = out[entry.alias]
        if entry.output_kind == "nominal":
            arrays.append(pa.array(v, type=pa.string()))
        else:
            v = np.asarray(v, dtype=np.float64)
            arrays.append(pa.array(v, type=pa.float64(), mask=np.isnan(v)))
        names.append(entry.alias)
    result = pa.Table.from_arrays(arrays, names=names)
    yield from result.to_batches(max_chunksize=RESULT_BATCH_ROWS)
