"""ReliefE on Spark, tall mode: the rows stay in partitions (sparse), the sampled instances are broadcast.

Algorithm sketch
----------------
Broadcast mode (:mod:`spark_fr.relief.reliefe`) collects every row on the driver; tall mode computes the same
things where the rows are, with Relief's tall machinery (:mod:`spark_fr.relief.tall`: Parts of
:mod:`spark_fr.runtime.engine`, bottom-m sample, chunks of instances, candidate merge), so the weights are
bit-identical to broadcast mode's, for any partitioning::

    blocks  <- the encoding pass's blocks as CSR (reliefe_data.sparse_block), rows without targets dropped,
               persisted
    summary <- reduce of per-block summaries: rows, missing values per feature (refused), non-zeros, class
               counts, counts of the first |nu| target values (sorted)
    nu      <- quotas of the cyclic sample per target value (from the counts), then a reduce of each block's
               bottom-quota rows per value (seeded hash, key): the |nu| sample rows on the driver, in sample
               order (reliefe_sampling.cyclic_sample on them)
    f, g    <- embedders fitted on the driver (reliefe.fit_embedders)
    blocks  <- + E = l2(f(l2 rows)) and the MLC target rows (labels, or E_T = l2(g(T))), computed per block
               (PCA, random projection: row-by-row maps); UMAP: per transform chunk of reliefe.transform_buckets,
               the chunks' rows meeting in one task each (group_by_key), as broadcast mode cuts them; persisted
    sample  <- reduce of per-block bottom-m (hash, key) keys                     the same m instances
    for each chunk of instances (bounded memory, micro-block aligned):
        rows of the instances gathered by key (a pass keeping the rows with those keys)
        cands <- blocks.map(k1 best (distance, key) per instance and class).reduce(Relief's merge)
        neighbours <- drop one candidate with the instance's key, first k (or the gap rule's k)
        rows of the neighbours gathered by key; updates on the ORIGINAL sparse rows, per micro-block of 64
        instances (the shard kernel over KnownNeighbours, the same updates as broadcast mode), exact sums
    w <- sum W / s (reliefe.combine)

k1 = k + 1 for a fixed k; adaptive k: k_max + 2 (``--reliefe-k-max``, the capped search), or every row of the
class when k_max = 0 (the paper's rule looks at every gap: exact, but the merged candidates of a job then hold a
distance per row and instance, so a job holds few instances; a warning says so on large data).

Why the bits agree: both modes compute each distance by the same function of the two rows (CSR merge walk or
the dot product of their embedding rows, which are the same bits: row-by-row transforms, or the same UMAP
chunk); candidates are ordered by (distance, key) and identical rows share their key and content; the
updates are the same calls in the same order inside the same micro-blocks.
"""
from __future__ import annotations

import logging
import time

import numpy as np

from ..errors import InputError
from ..results import ScoreKey, ScoreResult
from ..runtime.engine import engine_for
from ..runtime.progress import Progress
from ..runtime.rng import Stream, derive_seed, hash_uniform
from ..tasks.mlc import DISTANCES as LABEL_DISTANCES
from . import reliefe as R
from .accumulators import ReliefSums, combine_shards
from .candidates import block_candidates, chosen_neighbours, merge
from .embedded import KnownNeighbours, SparseSearch, sparse_rows
from .embedders import transform_chunk
from .reliefe_data import check_missing, sparse_block
from .shard import relief_shard
from .sparse_update import T_COSINE
from .reliefe_sampling import cyclic_sample, target_value_ids
from .sampling import micro_blocks, shard_bounds
from .setup import labelled_rows
from .tall import block_bottom, instances_per_job, merge_bottom

log = logging.getLogger(__name__)

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


# ----- the run ---------------------------------------------------------------------------------------------
def reliefe_tall(spark, blocks, feature_names: list, nominal: np.ndarray, n_classes: int, params) -> tuple:
    """ReliefE weights with the rows left in partitions (see the module sketch).

    Parameters
    ----------
    spark : SparkSession
    blocks : Parts of dict
        The encoding pass's blocks (:func:`spark_fr.data.blocks.block_parts`).
    feature_names : list of str
    nominal : ndarray of bool (D,)
    n_classes : int
        > 0: classification; 0: MLC.
    params : ReliefEParams

    Returns
    -------
    (list of ScoreResult, info dict, timings dict, rows used, rows dropped, density)
    """
    engine = engine_for(spark)
    timings = {}
    mlc = n_classes == 0
    spaces = R.resolve_spaces(params, mlc)
    _, _, dist = spaces
    D = len(feature_names)
    nominal = np.asarray(nominal, bool)
    size, seed = int(params.sample), params.seed
    t = time.perf_counter()
    kept = blocks.map(sparse_block).map(labelled_block).persist()
    cached = [kept]
    try:
        summary = kept.map(lambda b: block_summary(b, n_classes, size)) \
            .reduce(lambda a, b: merge_summaries(a, b, size))
        check_missing(summary["missing"], feature_names)
        n = int(summary["rows"])
        if n < 2:
            raise InputError("ReliefE needs at least two rows with known targets")
        base = kept.filter(lambda b: b["keys"].size > 0).map(lambda b: {n_: b[n_] for n_ in ("X", "Y", "keys")})
        Xnu, Ynu = cyclic_rows(base, summary, size, seed)
        timings["reliefe_sampling_s"] = time.perf_counter() - t
        info, embedder_name = R.start_info(params, spaces, mlc, Xnu.shape[0])
        f, g = R.fit_embedders(Xnu, Ynu if spaces[1] else None, params, spaces, embedder_name, info, timings)
        t = time.perf_counter()
        sblocks = spaces_blocks(base, f, g, mlc, embedder_name, n, params.transform_rows).persist()
        cached.append(sblocks)
        dims = sblocks.map(lambda b: (b["keys"].size, b["E"].shape[1], b["Yt"].shape[1])).collect()
        if f is not None:
            timings["reliefe_embed_transform_s"] = time.perf_counter() - t
            info["reliefe_embedding_on"] = "spark"
            info["reliefe_dimension_used"] = int(max(d[1] for d in dims))
        if g is not None:
            timings["reliefe_target_embed_transform_s"] = time.perf_counter() - t
        kept.unpersist()
        cached.remove(kept)
        tkind = T_COSINE if g is not None else (LABEL_DISTANCES[dist] if mlc else 0)
        priors = R.class_priors(summary["classes"]) if not mlc else np.zeros(0)
        m = params.n_iterations(n)
        sample = sblocks.map(lambda b: block_bottom(b, seed, m, ("keys",))) \
            .reduce(lambda a, b: merge_bottom(a, b, m))
        t = time.perf_counter()
        sums, ks = instance_updates(engine, sblocks, sample["keys"], summary, params, nominal, n_classes, priors,
                                    int(tkind), max(d[1] for d in dims), n)
        timings["reliefe_updates_s"] = time.perf_counter() - t
    finally:
        for parts in cached:
            parts.unpersist()
    out = combine_shards(sums, True)[0]
    R.run_info(info, ks, mlc, m, len(sums), params, "tall", "spark")
    return ([ScoreResult(ScoreKey("reliefe"), out.importance, out.std)], info, timings, n, int(summary["dropped"]),
            float(summary["nnz"]) / max(1, n * D))


def candidate_count(params, summary: dict, n_classes: int, n: int) -> int:
    """k1: the candidates kept per instance and class (see the module sketch)."""
    if not params.adaptive:
        return int(params.k) + 1
    if params.k_max > 0:
        return int(params.k_max) + 2
    return int(np.max(summary["classes"])) if n_classes else n


def job_chunks(shards: list, per_chunk: int) -> list:
    """The candidate jobs: consecutive micro-blocks (of every shard, in instance order) up to ``per_chunk``
    instances each; a list of lists of (shard, start, end)."""
    chunks, cur, size = [], [], 0
    for s_, (a, b) in enumerate(shards):
        for a0, b0 in micro_blocks(b - a):
            if cur and size + (b0 - a0) > per_chunk:
                chunks.append(cur)
                cur, size = [], 0
            cur.append((s_, a + a0, a + b0))
            size += b0 - a0
    return chunks + ([cur] if cur else [])


def instance_updates(engine, sblocks, ikeys_all, summary, params, nominal, n_classes, priors, tkind, d_embed,
                     n) -> tuple:
    """(ReliefSums per shard, ks): the updates of the sampled instances, chunk by chunk (module sketch)."""
    p = R.kernel_settings(params)
    m = ikeys_all.size
    C = max(n_classes, 1)
    D = nominal.size
    k1 = candidate_count(params, summary, n_classes, n)
    k_used = k1 - 1 if params.adaptive else p["k"]
    per_row = max(d_embed, summary["nnz"] / max(n, 1), 1.0)
    # bounded memory: the candidates of a job, and the rows gathered for its updates
    per_chunk = min(instances_per_job(C * k1), instances_per_job(C * (k_used + 1) * per_row))
    if params.adaptive and not params.k_max and k1 > 10_000:
        log.warning("adaptive k with --reliefe-k-max 0 (the paper's rule, every gap) keeps all %d rows of a class as "
                    "candidates of each sampled row in tall mode: %d sampled rows per job; --reliefe-k-max 100 "
                    "bounds it", k1, per_chunk)
    shards = shard_bounds(m, params.shards)
    chunks = job_chunks(shards, per_chunk)
    log.info("ReliefE (tall mode): %d instances in %d jobs, %d candidates per class, %d rows", m, len(chunks),
             k1, n)
    sums = [ReliefSums.zeros(D, 0) for _ in shards]
    ks_all = []
    with Progress(m, "ReliefE instances") as progress, \
            engine.describe(f"spark_fr: ReliefE, {m} instances (tall mode)"):
        for chunk in chunks:
            c0, c1 = chunk[0][1], chunk[-1][2]
            ikeys = np.ascontiguousarray(ikeys_all[c0:c1])
            rows = gather(engine, sblocks, np.unique(ikeys))
            inst = kernel_rows(take(rows, np.searchsorted(rows["keys"], ikeys)), nominal)
            bi = engine.broadcast(inst)
            try:
                with engine.tracked(progress, c1 - c0):
                    cands = sblocks.map(lambda blk: candidates_of_block(blk, bi.value, n_classes, k1, nominal)) \
                        .reduce(merge)
            finally:
                bi.destroy()
            nkeys, counts = chosen_neighbours(ikeys, cands, p["k"], p["adaptive"], p["k_max"])
            used = np.arange(nkeys.shape[2])[None, None, :] < counts[:, :, None]
            more = np.setdiff1d(np.unique(nkeys[used]), rows["keys"])
            if more.size:
                rows = union_rows(rows, gather(engine, sblocks, more))
            local = kernel_rows(rows, nominal)
            rule = R.sparse_rule(priors, tkind, p)
            for s_, a, b in chunk:
                sums[s_].merge(micro_block_updates(local, rule, n_classes, (ikeys[a - c0:b - c0],
                                                   nkeys[a - c0:b - c0], counts[a - c0:b - c0]), ks_all))
    return sums, np.vstack(ks_all) if ks_all else np.zeros((0, C), np.int64)


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
