"""Encoding rows into column blocks (inside Spark tasks or on the driver) and collecting them.

Sketch
------
One ``mapInArrow`` pass encodes each Arrow batch into a block (:func:`encode_batch`): feature codes
(D x m, uint8) for trees and/or scaled features (m x D, float64) for Relief, the targets ``Y`` (m x T,
float64, from the target type's encoder) and a 64-bit content key per row (:mod:`spark_fr.data.rowkeys`).
:func:`collect_encoded` gathers the blocks on the driver and **sorts the rows by key**: the row order, and
so every tree and every random choice made from the order, no longer depends on how the input was
partitioned. :func:`block_rdd` leaves the blocks distributed instead (Relief's tall mode).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from .binning import stack_bins
from .columns import BatchValues, category_indices, numeric_array
from .plan import EncodingPlan
from .rowkeys import content_keys, distinct_keys

BLOCK_SCHEMA = pa.schema([("codes", pa.binary()), ("scaled", pa.binary()), ("targets", pa.binary()),
                          ("keys", pa.binary()), ("m", pa.int64()), ("t", pa.int64())])
BLOCK_DDL = "codes binary, scaled binary, targets binary, keys binary, m long, t long"
_EMPTY = b""


def encode_features(batch, plan: EncodingPlan) -> tuple:
    """(codes (D, m) uint8 or None, scaled (m, D) float64 or None) of one Arrow batch."""
    m = batch.num_rows
    D = len(plan.features)
    bv = BatchValues(batch, plan.features, plan.feature_categories, plan.vector_size)
    codes = scaled = None
    if "codes" in plan.outputs:
        codes = np.empty((D, m), np.uint8)
        for f, c in enumerate(plan.features):
            if c.index is None:
                codes[f] = plan.bins[f].encode(bv.dense(f))
            else:
                codes[f] = plan.zero_codes[f]
                rows, vals = bv.sparse(f)
                codes[f, rows] = plan.bins[f].encode(vals)
    if "scaled" in plan.outputs:
        scaled = np.empty((m, D))
        for f, c in enumerate(plan.features):
            v = bv.values(f)
            if c.kind == "nominal":
                scaled[:, f] = v
            elif plan.scale_half[f] == 1.0:
                scaled[:, f] = (v - plan.scale_offset[f]) / plan.scale_width[f]
            else:
                scaled[:, f] = (v * plan.scale_half[f] - plan.scale_offset[f]) / plan.scale_width[f]
    return codes, scaled


def encode_targets(batch, plan: EncodingPlan) -> np.ndarray:
    """``Y`` (m, T) of one Arrow batch: each target column extracted by its kind, then the task's encoder."""
    enc = plan.target_encoder
    tv = BatchValues(batch, plan.targets, enc.categories, plan.vector_size)
    columns = []
    for j, c in enumerate(plan.targets):
        if c.kind == "hierarchical":
            columns.append(tv.strings(j).to_pylist())
        elif c.kind == "nominal":
            columns.append(category_indices(batch.column(c.column), enc.categories[j]))
        else:
            columns.append(numeric_array(batch.column(c.column)))
    return enc.encode(columns, batch.num_rows)


def encode_batch(batch, plan: EncodingPlan) -> dict:
    """Encode one Arrow batch: {'codes', 'scaled', 'Y', 'keys'} (absent outputs are None)."""
    codes, scaled = encode_features(batch, plan)
    Y = encode_targets(batch, plan)
    keys = content_keys([a for a in (codes, scaled) if a is not None], Y)
    return {"codes": codes, "scaled": scaled, "Y": Y, "keys": keys}


def _encode_partition(batches, plan: EncodingPlan):
    for batch in batches:
        if batch.num_rows == 0:
            continue
        out = encode_batch(batch, plan)
        yield pa.RecordBatch.from_arrays(
            [pa.array([out["codes"].tobytes() if out["codes"] is not None else _EMPTY], pa.binary()),
             pa.array([out["scaled"].tobytes() if out["scaled"] is not None else _EMPTY], pa.binary()),
             pa.array([out["Y"].tobytes()], pa.binary()), pa.array([out["keys"].tobytes()], pa.binary()),
             pa.array([batch.num_rows], pa.int64()), pa.array([out["Y"].shape[1]], pa.int64())],
            schema=BLOCK_SCHEMA)


def encoding_function(plan: EncodingPlan):
    """The ``mapInArrow`` function that encodes a partition into blocks."""
    def fn(batches):
        return _encode_partition(batches, plan)

    return fn


def decode_block(row, n_features: int) -> dict:
    """The arrays of one encoded block (a row of the encoding pass's output)."""
    m, T, D = int(row["m"]), int(row["t"]), n_features
    return {"codes": np.frombuffer(row["codes"], np.uint8).reshape(D, m) if row["codes"] else None,
            "scaled": np.frombuffer(row["scaled"], np.float64).reshape(m, D) if row["scaled"] else None,
            "Y": np.frombuffer(row["targets"], np.float64).reshape(m, T),
            "keys": np.frombuffer(row["keys"], np.uint64), "m": m}


@dataclass
class EncodedData:
    """The encoded training data on the driver (rows in canonical order).

    Attributes
    ----------
    feature_names : list of str
    bins : list of FeatureBins
    nominal : ndarray of bool (D,)
    codes : ndarray of uint8 (D, n) or None
        Bin codes for the trees (when asked for).
    scaled : ndarray of float64 (n, D) or None
        Features for Relief (when asked for): numeric ones scaled to [0, 1] by their range, nominal ones as
        category indices; NaN = missing.
    usable : ndarray of bool (D,)
        False for features with fewer than two distinct values (missing counted as a value).
    Y : ndarray (n, T)
        Targets as the target type encodes them; NaN = missing.
    row_keys : ndarray of uint64 (n,)
        Stable, distinct row ids (content keys made distinct for repeated rows).
    content_keys : ndarray of uint64 (n,)
        Content hash of each row (equal for identical rows).
    prepared : PreparedInput
        What the encoding came from (target type and encoder, statistics, hierarchy, timings).
    encoded_on : str
        'driver' (small input collected once) or 'executors' (encoded by Spark tasks).
    """

    feature_names: list
    bins: list
    nominal: np.ndarray
    codes: np.ndarray | None
    scaled: np.ndarray | None
    usable: np.ndarray
    Y: np.ndarray
    row_keys: np.ndarray
    content_keys: np.ndarray
    prepared: object
    encoded_on: str = "driver"
    timings: dict = field(default_factory=dict)

    @property
    def n_rows(self) -> int:
        return self.Y.shape[0]

    @property
    def n_features(self) -> int:
        return len(self.feature_names)

    @property
    def n_values(self) -> np.ndarray:
        """Number of categories of each nominal feature (1 for numeric ones)."""
        return feature_value_counts(self.bins)

    def bin_arrays(self):
        """(lower, upper, thresholds) as (D, 255) arrays."""
        return stack_bins(self.bins)


def feature_value_counts(bins) -> np.ndarray:
    """Number of categories of each nominal feature (1 for numeric ones)."""
    return np.array([len(b.categories) if b.nominal else 1 for b in bins], dtype=np.float64)


def collect_encoded(prep, feature_names: list) -> EncodedData:
    """Encode a :class:`spark_fr.data.prepare.PreparedInput` and collect it on the driver in canonical order."""
    t0 = time.perf_counter()
    plan = prep.plan
    fn = encoding_function(plan)
    if prep.local:
        table = pa.Table.from_batches(list(fn(iter(prep.batches))), schema=BLOCK_SCHEMA)
    else:
        table = prep.narrow.mapInArrow(fn, BLOCK_DDL).toArrow()
    D = len(plan.features)
    blocks = [decode_block(row, D) for row in table.to_pylist()]
    T = blocks[0]["Y"].shape[1] if blocks else len(prep.encoder.names)
    keys = np.concatenate([b["keys"] for b in blocks]) if blocks else np.empty(0, np.uint64)
    Y = np.vstack([b["Y"] for b in blocks]) if blocks else np.empty((0, T))
    order = np.argsort(keys, kind="stable")
    content = keys[order]
    codes = scaled = None
    if "codes" in plan.outputs:
        codes = np.ascontiguousarray(np.hstack([b["codes"] for b in blocks])[:, order])
    if "scaled" in plan.outputs:
        scaled = np.ascontiguousarray(np.vstack([b["scaled"] for b in blocks])[order])
    Y = np.ascontiguousarray(Y[order])
    prep.timings["encoding_s"] = time.perf_counter() - t0
    bins = plan.bins
    return EncodedData(feature_names, bins, np.array([b.nominal for b in bins], bool), codes, scaled, prep.usable, Y,
                       distinct_keys(content), content, prep, "driver" if prep.local else "executors",
                       prep.timings)


def block_rdd(prep):
    """The encoded blocks left distributed: an RDD of dicts of arrays (see :func:`decode_block`)."""
    D = len(prep.plan.features)
    return prep.narrow.mapInArrow(encoding_function(prep.plan), BLOCK_DDL).rdd.map(lambda row: decode_block(row, D))
