"""A driver batch's numeric columns as one matrix, made by the statistics pass and read again by the encoding.

Sketch
------
On the driver (an input small enough to be collected: :mod:`spark_fr.data.prepare`) the statistics pass turns
each Arrow batch's numeric columns into one column-major float64 matrix M (:meth:`BatchValues.dense_matrix
<spark_fr.data.columns.BatchValues.dense_matrix>`), and the encoding pass later needs the same matrix of the
same batches. :func:`remember` keeps M beside its batch while the batch lives; :func:`remembered_columns` hands
M's columns to any later reader of that batch's values.

Decision: M is kept when its columns are stored as float64 (M then costs what they cost in the batch, so the
driver holds at most twice the input's numeric data until the encoding ends); a batch with a float32 or integer
column among them (M wider than the batch) keeps nothing and is read again. M is not made read-only: the kernels
that read it would compile a second, read-only specialisation (no reader writes to it). Giving the batch back
with its columns as views of M instead (no memory added) cost more than it saved: Arrow builds a column from a
buffer in ~8 us, 0.17 s for a batch of 20,000 columns, where the copy it spares is 0.1 s warm. Measured on the
2,000 x 20,000 table (two row groups): the encoding's two copies of the batches' columns cost 0.2 s warm,
0.3-0.6 s in a new process (its fresh pages).
"""
from __future__ import annotations

import weakref

import numpy as np
import pyarrow as pa

#: {id of a batch: ({column name: its column in M}, M)}, each entry dropped when its batch is (Arrow batches are
#: not hashable: keyed by id, with a finalizer)
_REMEMBERED: dict = {}


def remember(batch: pa.RecordBatch, names: list, M: np.ndarray) -> None:
    """Keep M (``M[:, j]``: the values of the batch's column ``names[j]``, as :meth:`BatchValues.dense` reads
    them) for later reads of the batch's columns, when they are all float64 (module sketch)."""
    if not names or batch.num_rows == 0 or M.shape != (batch.num_rows, len(names)) or id(batch) in _REMEMBERED:
        return
    schema = batch.schema  # made anew by each call: once (20,000 columns)
    at = {n: k for k, n in enumerate(schema.names)}
    types = schema.types
    if any(at.get(n) is None or not pa.types.is_float64(types[at[n]]) for n in names):
        return
    _REMEMBERED[id(batch)] = ({n: j for j, n in enumerate(names)}, M)
    weakref.finalize(batch, _REMEMBERED.pop, id(batch), None)


def remembered_columns(batch: pa.RecordBatch, names: list) -> np.ndarray | None:
    """The matrix of the batch's columns ``names`` (rows x len(names), column-major; a view of M when they are
    consecutive in it, else a copy), or None when :func:`remember` kept no M for the batch or not all of them
    are in it."""
    entry = _REMEMBERED.get(id(batch))
    if entry is None or not names:
        return None
    at, M = entry
    js = [at.get(n) for n in names]
    if any(j is None for j in js):
        return None
    if js == list(range(js[0], js[0] + len(js))):
        return M[:, js[0]:js[0] + len(js)]
    return np.asfortranarray(M[:, js])
