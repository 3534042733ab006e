"""spark_fr.data.rowkeys: the row hashes and content keys mixed in numba kernels give, bit for bit, what a slow
Python reference of their definition (FNV-1a steps over each value's bits, then SplitMix64's mix) gives: for
empty and one-row batches, NaN, -0.0, nulls, integers, strings, Arrow arrays sliced at an offset, codes that are
not contiguous, and a statistics matrix of any layout holding any subset of the columns in any order."""
import hashlib
import struct

import numpy as np
import pyarrow as pa
import pytest

from spark_fr.data.columns import BatchValues
from spark_fr.data.rowkeys import _NULL_STRING, content_keys, raw_row_hashes
from spark_fr.data.schema import ColumnInfo
from spark_fr.runtime.rng import _mix64_int

MASK = (1 << 64) - 1
PRIME, OFFSET = 0x100000001B3, 0xCBF29CE484222325


def float_bits(v) -> int:
    """The bits hashed for a number: one NaN, 0.0 for -0.0, null = NaN."""
    if v is None or v != v:
        v = float("nan")
    return struct.unpack("<Q", struct.pack("<d", float(v) + 0.0))[0]


def string_bits(s) -> int:
    return int(_NULL_STRING) if s is None else int.from_bytes(hashlib.blake2b(s.encode(), digest_size=8).digest(),
                                                              "little")


def step(h: int, bits: int) -> int:
    h = ((h ^ bits) * PRIME) & MASK
    return h ^ (h >> 29)


def reference_row_hashes(batch, columns) -> np.ndarray:
    """raw_row_hashes of dense numeric and nominal columns, row by row in Python."""
    out = []
    for r in range(batch.num_rows):
        h = OFFSET
        for c in columns:
            v = batch.column(c.column)[r].as_py()
            h = step(h, float_bits(v) if c.kind == "numeric" else string_bits(v))
        out.append(_mix64_int(h))
    return np.array(out, np.uint64).view(np.int64)


def reference_content_keys(parts, Y) -> np.ndarray:
    m = Y.shape[0]
    out = []
    for r in range(m):
        h = OFFSET
        for arr in parts:
            if arr.dtype == np.uint8:
                for f in range(arr.shape[0]):
                    h = ((h ^ int(arr[f, r])) * PRIME) & MASK
            else:
                for f in range(arr.shape[1]):
                    h = step(h, float_bits(arr[r, f]))
        for j in range(Y.shape[1]):
            h = step(h, float_bits(Y[r, j]))
        out.append(_mix64_int(h))
    return np.array(out, np.uint64)


def awkward_batch(rng, n: int) -> pa.RecordBatch:
    x = rng.normal(size=n)
    x[rng.random(n) < 0.2] = np.nan
    x[rng.random(n) < 0.2] = -0.0
    x[rng.random(n) < 0.1] = 0.0
    k = pa.array([None if rng.random() < 0.25 else int(v) for v in rng.integers(-3, 3, n)], pa.int64())
    z = pa.array([None if rng.random() < 0.3 else float(v) for v in rng.normal(size=n)], pa.float64())
    s = pa.array([None if rng.random() < 0.2 else str(v) for v in rng.choice(["red", "", "blü", "x y"], n)])
    b = pa.array([None if rng.random() < 0.2 else bool(v) for v in rng.integers(0, 2, n)])
    return pa.RecordBatch.from_arrays([pa.array(x), k, s, z, b], ["x", "k", "s", "z", "b"])


COLUMNS = [ColumnInfo("x", "numeric", None, "x"), ColumnInfo("k", "numeric", None, "k"),
           ColumnInfo("s", "nominal", None, "s"), ColumnInfo("z", "numeric", None, "z"),
           ColumnInfo("b", "numeric", None, "b")]


def matrix(bv, held: list, order: str) -> np.ndarray:
    """The statistics pass's matrix of the logical columns ``held`` (in that order), C or Fortran layout."""
    M = np.empty((bv.n_rows, len(held)), order=order)
    for j, i in enumerate(held):
        M[:, j] = bv.dense(i)
    return M


@pytest.mark.parametrize("rows, offset", [(0, 0), (1, 0), (1, 5), (37, 0), (37, 11), (300, 123)])
def test_row_hashes_equal_the_reference_with_the_matrix_or_column_by_column(rows, offset):
    rng = np.random.default_rng(rows + offset)
    whole = awkward_batch(rng, rows + offset + 7)
    batch = whole.slice(offset, rows)  # an Arrow slice: every buffer read from a non-zero offset
    want = reference_row_hashes(batch, COLUMNS)
    np.testing.assert_array_equal(raw_row_hashes(BatchValues(batch, COLUMNS), 5), want)
    numeric = [0, 1, 3, 4]
    for held in (numeric, [4, 0, 3, 1], [1], [3, 4], [0, 4]):  # runs split by the string column or not held
        for order in ("C", "F"):
            bv = BatchValues(batch, COLUMNS)
            pos = {i: j for j, i in enumerate(held)}
            got = raw_row_hashes(bv, 5, matrix(bv, held, order), pos)
            np.testing.assert_array_equal(got, want, err_msg=f"{held} {order}")
    bv = BatchValues(batch, COLUMNS)  # only the first columns hashed: the matrix's later columns are not mixed
    np.testing.assert_array_equal(raw_row_hashes(bv, 2, matrix(bv, numeric, "F"), {0: 0, 1: 1, 3: 2, 4: 3}),
                                  reference_row_hashes(batch, COLUMNS[:2]))


@pytest.mark.parametrize("rows", [0, 1, 29])
def test_content_keys_equal_the_reference_for_codes_of_any_layout(rows):
    rng = np.random.default_rng(rows)
    codes = rng.integers(0, 256, (6, 2 * rows)).astype(np.uint8)
    scaled = rng.normal(size=(rows, 3))
    Y = rng.normal(size=(rows, 2))
    if rows:
        scaled[0, 1], Y[0, 0], Y[-1, 1] = -0.0, np.nan, -0.0
    for c in (codes[:, ::2], codes[::2, 1::2], np.asfortranarray(codes[:, :rows]), codes[:0, :rows]):
        for parts in ([c], [c, scaled], [scaled, c]):
            want = reference_content_keys(parts, Y)
            before = [p.copy() for p in parts]
            np.testing.assert_array_equal(content_keys(parts, Y), want)
            for p, q in zip(parts, before):  # the kernels write only their own hash array
                np.testing.assert_array_equal(p, q)
