"""ReliefE on Spark (seed paper [C]; spec methods-papers.md Sec. 3 and 4): Relief with neighbours found in a
learned low-dimensional embedding, for very wide, sparse inputs and large label spaces.

Algorithm sketch
----------------
    rows   <- CSR of the range-scaled features, in canonical order            spark_fr.relief.reliefe_data
    nu     <- representative cyclic sample of |nu| = 2048 rows                 spark_fr.relief.reliefe_sampling
    S      <- rows nu, L2-normalised; PrMS-sparsified when its density > 0.15  spark_fr.relief.prms
    d      <- TwoNN(S) (or given)                                              spark_fr.relief.twonn
    input embedded:  f <- embedder(d).fit(S) on the driver                     spark_fr.relief.embedders
                     E <- l2(f(every row, L2-normalised)) in Spark tasks, one call per transform chunk
                          (about 4096 rows, defined by the rows' content keys: transform_buckets)
    target embedded (MLC): g <- embedder(d_T).fit(T[nu]), d_T = TwoNN(T[nu]) or given; E_T <- l2(g(T))
    instances <- s rows in seeded-hash order (s = all rows by default), cut into shards (Relief's)
    per shard, in Spark tasks (the rows, E and E_T broadcast): the shard kernel     spark_fr.relief.shard
        over the embedded space (spark_fr.relief.embedded): neighbours by cosine on E (or Manhattan on the raw
        rows), k fixed or adaptive; updates on the ORIGINAL sparse rows (spark_fr.relief.sparse_update), plain
        sums per micro-block of 64 instances, exact merges
    w <- sum W / s (exact sums: the same bits for any partitioning); importance_std: spread over shards

That is **broadcast mode** (every row collected on the driver). **Tall mode** (``--relief-mode tall``, or auto
above ``broadcast_limit`` rows x features, as Relief) computes the same steps with the rows left in the
partitions: :mod:`spark_fr.relief.tall` with :mod:`spark_fr.relief.reliefe_blocks` (the run, either mode:
:mod:`spark_fr.relief.run`);
the embedders are fitted here (:func:`fit_embedders`) and the updates are the same shard kernel's (its
backend :data:`~spark_fr.relief.embedded.KnownNeighbours`), so both modes give bit-identical weights.

Decisions (the paper leaves them open or [R] differs; spec Sec. 5):
* **defaults** are the paper's headline settings: k = 15, |nu| = 2048, density threshold 0.15, automatic
  epsilon, s = |I|, d by TwoNN, the standard (ReliefF) update; the embedded space is the input for
  classification and the target for MLC (the paper's best MLC variant: raw input, UMAP-embedded target,
  cosine distance);
* **C2** (role of E): E only selects neighbours; every update reads the original rows (sparse stays sparse);
* **C1** (MLC update): Alg. 3, ``td/t - (d - td)/(1 - t)``; instances with t outside (0, 1) add nothing
  but count in s ([R]);
* **C4** (adaptive k): the largest gap (spec.adaptive_k), among every candidate or the ``--reliefe-k-max`` + 1
  nearest;  **C6** PrMS on |A_ij| (spec.prms);
  **C7** TwoNN without [R]'s clamp (spec.twonn);
* **C10**: instances without replacement in seeded-hash order, updates averaged over the k neighbours,
  weights divided by s;
* the embedder's input is the L2-normalised rows: the same geometry as the cosine distance used on E, and
  what [R] fits on; the embedding is fitted on the sparsified sample and applied to the unsparsified rows
  ([R]);
* the target embedding is fitted on the raw 0/1 label rows of the sample (as [R]);
* classes (or label sets) with fewer rows than k give all their rows ([R] lowers k for every class instead).
"""
from __future__ import annotations

import logging
import time

import numpy as np

from ..errors import InputError
from ..results import ScoreKey, ScoreResult
from ..runtime import warmups
from ..runtime.groups import contiguous_groups
from ..runtime.rng import Stream, derive_seed
from ..runtime.spark import run_units
from ..tasks.mlc import DISTANCES as LABEL_DISTANCES
from .accumulators import ReliefSums, combine_shards
from .broadcast import group_numbered
from .embedders import make_embedder, resolve_embedder, transform_chunk
from .params import ReliefEParams
from .prms import density, prms
from .reliefe_data import ReliefEData
from .embedded import EmbeddedSpace, sparse_rows
from .reliefe_sampling import cyclic_sample, target_value_ids
from .sampling import micro_blocks, sampled_shards
from .shard import relief_shard
from .sparse_update import T_COSINE, SparseRule
from .twonn import twonn_dimension

log = logging.getLogger(__name__)

#: seconds per (instance, row, embedding dimension or stored value) of the shard kernel, one core (estimate)
SECONDS_PER_EVALUATION = 2e-9


def resolve_spaces(params: ReliefEParams, mlc: bool) -> tuple:
    """(embed_input, embed_target, target distance name) of a run (``mlc``: the target is a label set);
    one-line errors for what cannot be."""
    embed = params.embed if params.embed != "auto" else ("target" if mlc else "input")
    if not mlc and embed in ("target", "both"):
        raise InputError(f"--reliefe-embed {embed} embeds a multi-label target; a classification target is one "
                         f"class (use input or none)")
    e_in, e_t = embed in ("input", "both"), embed in ("target", "both")
    dist = params.mlc_distance
    if not mlc:
        return e_in, e_t, None
    if dist == "auto":
        dist = "cosine" if e_t else "f1"
    if dist == "cosine" and not e_t:
        raise InputError("--reliefe-mlc-distance cosine compares embedded targets: add --reliefe-embed target "
                         "or both")
    if dist != "cosine" and e_t:
        raise InputError(f"--reliefe-embed {embed} compares the embedded targets by cosine distance; "
                         f"--reliefe-mlc-distance {dist} is for raw label sets (use --reliefe-embed input or none)")
    return e_in, e_t, dist


def k_summary(ks: np.ndarray) -> dict:
    """Summary of the neighbours used per (instance, class) (-1 = no candidates, left out)."""
    v = ks[ks >= 0]
    if v.size == 0:
        return {"count": 0}
    q = np.percentile(v, [25, 50, 75])
    return {"count": int(v.size), "min": int(v.min()), "p25": float(q[0]), "median": float(q[1]),
            "mean": float(v.mean()), "p75": float(q[2]), "max": int(v.max())}


def fit_dimension(S, given, max_dim: int) -> tuple:
    """(d, how): the given dimension (bounded by ``max_dim``) or TwoNN's on the sample S."""
    if given != "auto":
        return max(1, min(int(given), max_dim)), "given"
    return twonn_dimension(S, max_dim=max_dim), "twonn"


def transform_buckets(keys: np.ndarray, n_rows: int, chunk: int) -> np.ndarray:
    """The transform chunk of each row: ``key mod ceil(n_rows / chunk)``, so chunks hold about ``chunk`` rows
    and are defined by the rows' contents (both modes cut the same chunks, whatever the partitioning)."""
    n_buckets = max(1, -(-int(n_rows) // max(int(chunk), 1)))
    return (np.asarray(keys, np.uint64) % np.uint64(n_buckets)).astype(np.int64)


def embed_rows(spark, rows, keys, embedder, chunk: int, label: str) -> tuple:
    """(E, seconds, on_driver): l2(embedder.transform(rows)), one call per chunk of :func:`transform_buckets`
    (rows in canonical order inside), in Spark tasks when worth it."""
    n = rows.shape[0]
    bucket = transform_buckets(keys, n, chunk)
    order = np.argsort(bucket, kind="stable")
    cuts = np.searchsorted(bucket[order], np.arange(bucket.max() + 2 if n else 1))
    units = [(i, order[cuts[i]:cuts[i + 1]]) for i in range(len(cuts) - 1) if cuts[i + 1] > cuts[i]]

    def work(payload, group):
        X, f = payload
        return {i: transform_chunk(f, X[pos]) for i, pos in group}

    def plan(numbered, parallelism):
        return [numbered[g.start:g.stop] for g in contiguous_groups(len(numbered), max(1, min(len(numbered),
                                                                                             parallelism)))]

    est = n * 2e-4 if type(embedder).__module__.startswith("umap") else n * max(rows.shape[1], 1) * 1e-8
    res, seconds, early = run_units(spark, (rows, embedder), units, work, lambda a, b: {**a, **b}, {}, plan,
                                    estimated_seconds=est, size=lambda g: sum(p.size for _, p in g),
                                    label=label, description=f"spark_fr: ReliefE, {label}")
    E = None
    for i, pos in units:
        if E is None:
            E = np.zeros((n, res[i].shape[1]))
        E[pos] = res[i]
    return (E if E is not None else np.zeros((0, 0))), seconds, early == len(units)


def fit_embedders(Xnu, Tnu, params: ReliefEParams, spaces: tuple, embedder_name, info: dict, timings: dict) -> tuple:
    """(f, g): the input and target embedders (None when that space is not embedded), fitted on the driver on
    the cyclic sample's rows ``Xnu`` (CSR, range-scaled) and targets ``Tnu``, in sample order."""
    from scipy import sparse

    e_in, e_t, _ = spaces
    seed = params.seed
    f = g = None
    if e_in:
        t = time.perf_counter()
        S = sparse.csr_matrix(l2_rows_sparse(Xnu))
        dens = density(S)
        info["reliefe_sample_density"] = dens
        info["reliefe_sparsified"] = bool(dens > params.density_threshold)
        if dens > params.density_threshold:
            S = prms(S, np.random.default_rng(derive_seed(seed, 0, Stream.RELIEFE_PRMS)))
            info["reliefe_density_after"] = density(S)
        timings["reliefe_sparsify_s"] = time.perf_counter() - t
        t = time.perf_counter()
        d, how = fit_dimension(S, params.dimension, max(1, min(Xnu.shape[1], S.shape[0] - 2)))
        timings["reliefe_dimension_s"] = time.perf_counter() - t
        info["reliefe_dimension"], info["reliefe_dimension_from"] = d, how
        t = time.perf_counter()
        f = make_embedder(embedder_name, d, derive_seed(seed, 0, Stream.RELIEFE_EMBED), S.shape[0]).fit(S)
        timings["reliefe_embed_fit_s"] = time.perf_counter() - t
    if e_t:
        t = time.perf_counter()
        nu = Tnu.shape[0]
        dT, how = fit_dimension(Tnu, params.dimension, max(1, min(Tnu.shape[1], nu - 2)))
        info["reliefe_target_dimension"], info["reliefe_target_dimension_from"] = dT, how
        g = make_embedder(embedder_name, dT, derive_seed(seed, 1, Stream.RELIEFE_EMBED), nu).fit(Tnu)
        timings["reliefe_target_embed_fit_s"] = time.perf_counter() - t
    return f, g


def kernel_settings(params: ReliefEParams) -> dict:
    """The neighbour settings of the kernels: k, adaptive, k_max, abs_mean."""
    return {"k": 1 if params.adaptive else int(params.k), "adaptive": params.adaptive, "k_max": int(params.k_max),
            "abs_mean": params.update == "absmean"}


def sparse_rule(priors: np.ndarray, tkind: int, p: dict) -> SparseRule:
    """The sparse update rule of a run (``p``: :func:`kernel_settings`)."""
    return SparseRule(np.asarray(priors, np.float64), int(tkind), bool(p["abs_mean"]))


def class_priors(counts: np.ndarray) -> np.ndarray:
    """P(c) from the class counts (the same bits in both modes)."""
    counts = np.asarray(counts, np.float64)
    return counts / counts.sum()


def run_info(info: dict, ks: np.ndarray, mlc: bool, m: int, n_shards: int, params: ReliefEParams, mode: str,
             executed_on: str) -> dict:
    """The run's ReliefE record after the updates (both modes)."""
    info.update({"reliefe_mode": mode, "reliefe_instances": m, "reliefe_shards": n_shards,
                 "reliefe_k": params.k, "reliefe_update": params.update,
                 "reliefe_k_used": k_summary(ks), "executed_on": executed_on})
    if mlc:
        info["reliefe_skipped_instances"] = int((ks[:, 0] == 0).sum())
    return info


def _run_shard(payload: dict, rows: np.ndarray, p: dict) -> tuple:
    """(ReliefSums, ks) of one shard: micro-blocks of instances, plain sums inside, exact merges (``payload``:
    the SparseRows 'rows', 'n_classes', the SparseRule 'rule')."""
    total = ReliefSums.zeros(payload["rows"].nominal.size, 0)
    ks = []
    for a, b in micro_blocks(rows.size):
        space = EmbeddedSpace(payload["rows"], np.asarray(rows[a:b], np.int64), payload["n_classes"], p["k"],
                              p["adaptive"], p["k_max"])
        acc = relief_shard(space, payload["rule"])
        total.merge(ReliefSums.from_accumulators(acc))
        ks.append(acc.ks)
    return total, (np.vstack(ks) if ks else np.zeros((0, 1), np.int64))


def reliefe_weights(spark, data: ReliefEData, n_classes: int, params: ReliefEParams) -> tuple:
    """ReliefE weights of prepared rows, broadcast mode (the module sketch, after the rows are read).

    ``n_classes`` > 0: a classification target (class index per row); 0: label sets (MLC, 0/1 columns), the two
    target types :mod:`spark_fr.tasks` lets ReliefE rank.

    Returns
    -------
    (list of ScoreResult, info dict, timings dict)
    """
    timings = {}
    mlc = n_classes == 0
    spaces = resolve_spaces(params, mlc)
    e_in, e_t, dist = spaces
    n, D = data.n_rows, data.n_features
    if n < 2:
        raise InputError("ReliefE needs at least two rows with known targets")
    t = time.perf_counter()
    nu = cyclic_sample(target_value_ids(data.Y), data.keys, params.sample, params.seed)
    timings["reliefe_sampling_s"] = time.perf_counter() - t
    info, embedder_name = start_info(params, spaces, mlc, nu.size)
    f, g = fit_embedders(data.X[nu], data.Y[nu] if e_t else None, params, spaces, embedder_name, info, timings)
    E = np.zeros((n, 0))
    if f is not None:
        E, secs, here = embed_rows(spark, l2_rows_sparse(data.X), data.keys, f, params.transform_rows,
                                   "rows embedded")
        timings["reliefe_embed_transform_s"] = secs
        info["reliefe_embedding_on"] = "driver" if here else "spark"
        info["reliefe_dimension_used"] = int(E.shape[1])
    Yt, tkind = np.zeros((n, 0)), 0
    if g is not None:
        Yt, secs, _ = embed_rows(spark, data.Y, data.keys, g, params.transform_rows, "targets embedded")
        timings["reliefe_target_embed_transform_s"] = secs
        tkind = T_COSINE
    elif mlc:
        Yt, tkind = np.ascontiguousarray(np.nan_to_num(data.Y, nan=0.0)), LABEL_DISTANCES[dist]
    classes = np.zeros(n)
    priors = np.zeros(0)
    if not mlc:
        classes = np.ascontiguousarray(data.Y[:, 0])
        priors = class_priors(np.bincount(classes.astype(np.int64), minlength=n_classes))
    p = kernel_settings(params)
    payload = {"rows": sparse_rows(data.X, data.nominal, E, data.keys, classes, Yt), "n_classes": int(n_classes),
               "rule": sparse_rule(priors, tkind, p)}
    shards = sampled_shards(data.keys, params)
    m = sum(len(s) for s in shards)
    warmups.warm("reliefe")
    per_instance = n * max(E.shape[1], 1 if E.shape[1] else data.X.nnz / max(n, 1)) + \
        (15 if not params.adaptive else 30) * (n_classes or 1) * data.X.nnz / max(n, 1)

    def work(pl, group):
        return {i: _run_shard(pl, rows, p) for i, rows in group}

    def plan(numbered, parallelism):
        return group_numbered(numbered, parallelism, int(per_instance))

    res, seconds, early = run_units(spark, payload, list(enumerate(shards)), work, lambda a, b: {**a, **b}, {},
                                    plan, estimated_seconds=m * per_instance * SECONDS_PER_EVALUATION,
                                    size=lambda g: sum(len(r) for _, r in g), label="ReliefE instances",
                                    description=f"spark_fr: ReliefE, {m} instances in {len(shards)} shards")
    timings["reliefe_updates_s"] = seconds
    sums = [res[i][0] for i in range(len(shards))]
    ks = np.vstack([res[i][1] for i in range(len(shards))])
    out = combine_shards(sums, True)[0]
    run_info(info, ks, mlc, m, len(shards), params, "broadcast", "driver" if early == len(shards) else "spark")
    return [ScoreResult(ScoreKey("reliefe"), out.importance, out.std)], info, timings


def start_info(params: ReliefEParams, spaces: tuple, mlc: bool, sample_rows: int) -> tuple:
    """(info, embedder name): the run's record of the spaces and the cyclic sample (both modes)."""
    e_in, e_t, dist = spaces
    info = {"reliefe_embed_input": e_in, "reliefe_embed_target": e_t, "reliefe_sample_rows": int(sample_rows)}
    if mlc:
        info["reliefe_mlc_distance"] = dist
    name = resolve_embedder(params.embedder) if (e_in or e_t) else None
    info["reliefe_embedder"] = name
    return info, name


def l2_rows_sparse(X):
    """CSR rows scaled to unit L2 norm (zero rows stay zero)."""
    from scipy import sparse

    X = sparse.csr_matrix(X, dtype=np.float64, copy=True)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    scale = np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), 0.0)
    X.data *= np.repeat(scale, np.diff(X.indptr))
    return X
