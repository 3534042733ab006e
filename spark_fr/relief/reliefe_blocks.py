"""ReliefE's rows left in partitions (tall mode, :mod:`spark_fr.relief.tall`): CSR blocks, their summary, the
cyclic sample, the embedded spaces, rows gathered by key, and the kernel calls of a job (no numba here).

Sketch
------
    blocks  <- the encoding pass's blocks as CSR (reliefe_data.sparse_block), rows without targets dropped
    summary <- reduce of per-block summaries: rows, missing values per feature (refused), non-zeros, class
               counts, counts of the first |nu| target values (sorted)
    nu      <- quotas of the cyclic sample per target value (from the counts), then a reduce of each block's
               bottom-quota rows per value (seeded hash, key): the |nu| sample rows on the driver, in sample
               order (reliefe_sampling.cyclic_sample on them)
    blocks  <- + E = l2(f(l2 rows)) and the MLC target rows (labels, or E_T = l2(g(T))), computed per block
               (PCA, random projection: row-by-row maps); UMAP: per transform chunk of reliefe.transform_buckets,
               the chunks' rows meeting in one task each (group_by_key), as broadcast mode cuts them
    a job's instances and neighbours: rows gathered by key (a pass keeping the rows with those keys)

Why the bits agree with broadcast mode: both modes compute each distance by the same function of the two rows
(CSR merge walk or the dot product of their embedding rows, which are the same bits: row-by-row transforms, or
the same UMAP chunk); candidates are ordered by (distance, key) and identical rows share their key and content;
the updates are the same shard kernel's in the same order inside the same micro-blocks.
"""
from __future__ import annotations

import numpy as np

from ..runtime.rng import Stream, derive_seed, hash_uniform
from . import reliefe as R
from .accumulators import ReliefSums
from .candidates import block_candidates
from .embedded import KnownNeighbours, SparseSearch, sparse_rows
from .embedders import transform_chunk
from .reliefe_sampling import cyclic_sample, target_value_ids
from .setup import labelled_rows
from .shard import relief_shard

#: embedders whose transform is a row-by-row map (computed where the rows are, in any batch)
ROW_WISE = ("pca", "random_projection")


# ----- rows of a block ------------------------------------------------------------------------------------
def take(block: dict, pos: np.ndarray) -> dict:
    """The rows ``pos`` of a block (CSR and arrays alike; every field is per row)."""
    return {name: v[pos] for name, v in block.items()}


def stack(blocks: list) -> dict:
    """Blocks of the same fields stacked (CSR and arrays alike)."""
    from scipy import sparse

    out = {}
    for name, v in blocks[0].items():
        parts = [b[name] for b in blocks]
        out[name] = sparse.vstack(parts, format="csr") if sparse.issparse(v) else np.concatenate(parts)
    return out


def labelled_block(block: dict) -> dict:
    """A CSR block (:func:`~spark_fr.relief.reliefe_data.sparse_block`) without its rows of unknown target."""
    keep = labelled_rows(block["Y"])
    out = {"X": block["X"][keep], "Y": np.asarray(block["Y"], np.float64)[keep], "keys": block["keys"][keep]}
    out["X"].sort_indices()
    return {**out, "missing": block["missing"], "dropped": int((~keep).sum())}


def value_rows(Y: np.ndarray) -> np.ndarray:
    """The target values as :func:`~spark_fr.relief.reliefe_sampling.target_value_ids` compares them."""
    return np.ascontiguousarray(np.nan_to_num(np.asarray(Y, np.float64), nan=-1.0))


# ----- summary and the cyclic sample ----------------------------------------------------------------------
def block_summary(block: dict, n_classes: int, size: int) -> dict:
    """Rows, dropped rows, missing values, non-zeros, class counts and the first ``size`` target values."""
    values, counts = np.unique(value_rows(block["Y"]), axis=0, return_counts=True)
    return {"rows": block["keys"].size, "dropped": block["dropped"], "missing": block["missing"],
            "nnz": int(block["X"].nnz), "values": values[:size], "counts": counts[:size],
            "classes": np.bincount(block["Y"][:, 0].astype(np.int64), minlength=n_classes) if n_classes else None}


def merge_summaries(a: dict, b: dict, size: int) -> dict:
    """Two summaries merged (a value beyond either side's first ``size`` is beyond the merged first ``size``)."""
    values, inv = np.unique(np.vstack([a["values"], b["values"]]), axis=0, return_inverse=True)
    counts = np.bincount(np.asarray(inv).reshape(-1), np.concatenate([a["counts"], b["counts"]]),
                         minlength=len(values)).astype(np.int64)
    return {"rows": a["rows"] + b["rows"], "dropped": a["dropped"] + b["dropped"],
            "missing": a["missing"] + b["missing"], "nnz": a["nnz"] + b["nnz"],
            "values": values[:size], "counts": counts[:size],
            "classes": None if a["classes"] is None else a["classes"] + b["classes"]}


def cyclic_quotas(counts: np.ndarray, size: int) -> np.ndarray:
    """Rows of each target value (in sorted order) in the cyclic sample of ``size`` rows (the round robin)."""
    counts = np.asarray(counts, np.int64)
    quota = np.zeros(counts.size, np.int64)
    left = int(size)
    r = 0
    while left > 0:
        active = np.flatnonzero(counts > r)
        if active.size == 0:
            break
        take_ = active[:left]
        quota[take_] += 1
        left -= take_.size
        r += 1
    return quota


def block_cyclic(block: dict, values: np.ndarray, quota: np.ndarray, seed: int) -> dict:
    """The block's rows that may be in the cyclic sample: per target value v, its bottom quota[v] rows by
    (seeded hash, key), with 'u' (the hash), 'vid' (v) and the rows' X, Y, keys."""
    index = {row.tobytes(): i for i, row in enumerate(values)}
    uniq, inv = np.unique(value_rows(block["Y"]), axis=0, return_inverse=True)
    vid = np.array([index.get(row.tobytes(), -1) for row in uniq], np.int64)[np.asarray(inv).reshape(-1)]
    u = hash_uniform(derive_seed(seed, 0, Stream.RELIEFE_CYCLIC), block["keys"])
    rows = {"X": block["X"], "Y": block["Y"], "keys": block["keys"], "u": u, "vid": vid}
    return bottom_per_value(take(rows, np.flatnonzero(vid >= 0)), quota)


def bottom_per_value(rows: dict, quota: np.ndarray) -> dict:
    """The rows of each value v with the quota[v] smallest (hash, key)."""
    order = np.lexsort((rows["keys"], rows["u"], rows["vid"]))
    vid = rows["vid"][order]
    starts = np.searchsorted(vid, vid, side="left")
    rank = np.arange(vid.size) - starts
    return take(rows, order[rank < quota[vid]])


def cyclic_rows(base, summary: dict, size: int, seed: int) -> tuple:
    """(X, Y) of the cyclic sample's rows in sample order, gathered from the blocks (at most ``size`` rows)."""
    quota = cyclic_quotas(summary["counts"], size)
    values = summary["values"]
    rows = base.map(lambda b: block_cyclic(b, values, quota, seed)) \
        .reduce(lambda a, b: bottom_per_value(stack([a, b]), quota))
    order = cyclic_sample(target_value_ids(rows["Y"]), rows["keys"], size, seed)
    return rows["X"][order], rows["Y"][order]


# ----- the embedded spaces, per block --------------------------------------------------------------------
def with_spaces(block: dict, f, g, mlc: bool) -> dict:
    """A block with its kernel arrays: CSR parts, E (input embedding or none), Yt (MLC target rows), classes."""
    X = block["X"]
    n = block["keys"].size
    E = transform_chunk(f, R.l2_rows_sparse(X)) if f is not None else np.zeros((n, 0))
    if g is not None:
        Yt = transform_chunk(g, block["Y"])
    elif mlc:
        Yt = np.nan_to_num(block["Y"], nan=0.0)
    else:
        Yt = np.zeros((n, 0))
    return {"X": X, "keys": block["keys"], "E": np.ascontiguousarray(E, np.float64),
            "Yt": np.ascontiguousarray(Yt, np.float64),
            "classes": np.ascontiguousarray(block["Y"][:, 0]) if not mlc else np.zeros(n)}


def spaces_blocks(base, f, g, mlc: bool, embedder_name, n_rows: int, chunk: int):
    """The blocks with their embedded spaces: per block for row-by-row embedders, else per transform chunk."""
    if embedder_name in ROW_WISE or (f is None and g is None):
        return base.map(lambda b: with_spaces(b, f, g, mlc))
    n_buckets = max(1, -(-n_rows // max(int(chunk), 1)))
    fields = ("X", "Y", "keys")

    def emit(b):
        bucket = R.transform_buckets(b["keys"], n_rows, chunk)
        rows = {name: b[name] for name in fields}
        return [(int(v), take(rows, np.flatnonzero(bucket == v))) for v in np.unique(bucket)]

    def chunk_block(_, parts):
        rows = stack(parts)
        rows = take(rows, np.argsort(rows["keys"], kind="stable"))
        rows["X"].sort_indices()
        yield with_spaces(rows, f, g, mlc)

    return base.group_by_key(emit, n_buckets, chunk_block)


# ----- gathering rows by key -----------------------------------------------------------------------------
KERNEL_FIELDS = ("X", "keys", "E", "Yt", "classes")


def rows_with_keys(block: dict, wanted: np.ndarray) -> dict:
    """One row per key of ``wanted`` (sorted) found in the block."""
    pos = np.flatnonzero(np.isin(block["keys"], wanted))
    _, first = np.unique(block["keys"][pos], return_index=True)
    return take({name: block[name] for name in KERNEL_FIELDS}, pos[first])


def gather(engine, blocks, wanted: np.ndarray) -> dict:
    """The rows with the keys ``wanted`` (sorted, distinct), one per key, sorted by key (identical rows share a
    key, so any copy does)."""
    bw = engine.broadcast(wanted)
    try:
        found = blocks.map(lambda b: rows_with_keys(b, bw.value)).filter(lambda r: r["keys"].size > 0).collect()
    finally:
        bw.destroy()
    rows = stack(found)
    _, first = np.unique(rows["keys"], return_index=True)
    rows = take(rows, first)
    rows["X"].sort_indices()
    return rows


def union_rows(a: dict, b: dict) -> dict:
    """Two gathered row sets with distinct keys, sorted by key."""
    rows = stack([a, b]) if b["keys"].size else a
    return take(rows, np.argsort(rows["keys"], kind="stable"))


def kernel_rows(rows: dict, nominal: np.ndarray):
    """:data:`~spark_fr.relief.embedded.SparseRows` of gathered rows or of a block (its kernel fields)."""
    return sparse_rows(rows["X"], nominal, rows["E"], rows["keys"], rows["classes"], rows["Yt"])


def candidates_of_block(block: dict, inst, n_classes: int, k1: int, nominal):
    """Relief's candidates (:func:`spark_fr.relief.candidates.block_candidates`) of one block: (distance, key,
    count) of the k1 best rows per instance and class (``inst``: SparseRows of the instances, in instance
    order), with empty payloads (ReliefE's updates read the gathered rows)."""
    return block_candidates(kernel_rows(block, nominal), inst, SparseSearch(int(k1), int(n_classes)))


# ----- a job's kernel calls ------------------------------------------------------------------------------
def candidate_count(params, summary: dict, n_classes: int, n: int) -> int:
    """k1: the candidates kept per instance and class (see the module sketch)."""
    if not params.adaptive:
        return int(params.k) + 1
    if params.k_max > 0:
        return int(params.k_max) + 2
    return int(np.max(summary["classes"])) if n_classes else n


def micro_block_updates(rows, rule, n_classes: int, chosen: tuple, ks_all: list) -> ReliefSums:
    """The exact sums of one micro-block's updates on the gathered rows (``rows``: SparseRows, keys sorted;
    ``chosen``: the instances' keys, their neighbours' keys and counts, :func:`chosen_neighbours`)."""
    ikeys, nkeys, counts = chosen
    inst = np.searchsorted(rows.keys, ikeys).astype(np.int64)
    nbrs = np.searchsorted(rows.keys, nkeys).astype(np.int64)
    nbrs = np.where(np.arange(nkeys.shape[2])[None, None, :] < counts[:, :, None], nbrs, 0)
    own = rows.classes[inst].astype(np.int64) if n_classes else np.zeros(inst.size, np.int64)
    acc = relief_shard(KnownNeighbours(rows, inst, own, np.ascontiguousarray(nbrs), np.ascontiguousarray(counts),
                                       int(n_classes)), rule)
    ks_all.append(acc.ks)
    return ReliefSums.from_accumulators(acc)
