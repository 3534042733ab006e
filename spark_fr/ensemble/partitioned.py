"""PCT-ensemble ranking on Spark, partitioned mode: no task, and not the driver, ever holds the whole table.

Algorithm sketch
----------------
    blocks  <- the encoding pass's blocks (codes, targets, content keys), rows with a known target, persisted
    moments <- three reductions over the blocks: largest magnitudes, exact sums, exact squared deviations
               (the first encodes the blocks: "encoding: 40 / 121 columns ...", as broadcast mode's encoding)
    fitted  <- the target type fitted from the moments (as broadcast mode fits it: the same bits)
    copies  <- content keys that occur more than once, with their multiplicity (bucketed by key, reduced)
    groups  <- trees 0..N-1 cut into G contiguous groups (a few per core)
    for each block, each group g:  the rows some tree of g grows on or evaluates (spark_fr.ensemble.bagging),
        decided from (seed, tree, row key) alone -- for every copy of a repeated row at once, so a group gets
        all copies of a row or none; with random patches (wide mode) only the columns of the union of
        g's trees' patches (spark_fr.ensemble.patches), and groups small enough for that to be a saving
    shuffle the rows to their group (one task per group: Parts.group_by_key); in each group's task:
        sort by content key, give copies their distinct keys     -> the canonical order of broadcast mode
        grow and score the group's trees                          (spark_fr.ensemble.trees, the same code)
    sums    <- exact merge of the groups' score sums; scores <- sums / N

Every tree sees the rows it would see in broadcast mode, in the same order, with the same bootstrap counts,
targets and bins, and evaluates the same out-of-bag sample; so partitioned mode gives exactly the ranking of
broadcast mode, and the same ranking for any partitioning. Memory: a group's task holds the rows its trees
use (all rows for bootstrapped trees in groups of a few; about ``trees per group * --max-samples`` rows with
subbagging) times the columns its trees use; the driver holds only the moments and the list of repeated keys.
The distributed steps are :class:`~spark_fr.runtime.engine.Parts` operations, so the same code runs on RDDs
(classic sessions) and on DataFrames (Spark Connect: ``mapInArrow`` + ``repartition`` by group).
"""
from __future__ import annotations

import contextlib
import logging
import time

import numpy as np

from ..data.blocks import block_parts, codes_of_rows, encoding_progress
from ..data.rowkeys import distinct_keys, occurrence_keys
from ..runtime.engine import engine_for
from ..runtime.groups import contiguous_groups
from ..runtime.progress import Progress
from ..tasks.base import ColumnMoments
from ..tasks.sparse_columns import SparseLabels, stack_rows
from .aggregate import ScoreAccumulator
from .bagging import Bagging
from .params import EnsembleParams
from .patches import patches_union
from .spark import warm_trees
from .trees import TreeData, score_tree_group

log = logging.getLogger(__name__)

#: buckets of the repeated-key search (a shuffle of 8 bytes per distinct row)
KEY_BUCKETS = 16


def labelled_block(b: dict) -> dict:
    """The rows of a block with at least one known target (codes, Y, content keys)."""
    Y = b["Y"]
    if isinstance(Y, SparseLabels):
        keep = Y.labelled
        return {"codes": codes_of_rows(b["codes"], keep), "Y": Y[keep], "keys": b["keys"][keep]}
    keep = ~np.all(np.isnan(Y), axis=1) if Y.shape[1] else np.ones(b["m"], bool)
    return {"codes": codes_of_rows(b["codes"], keep), "Y": np.ascontiguousarray(Y[keep]),
            "keys": b["keys"][keep]}


def clustering_block(b: dict) -> dict:
    """Every row of a block, its ``Y`` followed by its feature values (semi-supervised, unsupervised)."""
    return {"codes": b["codes"], "Y": np.ascontiguousarray(np.hstack([b["Y"], b["scaled"]])), "keys": b["keys"]}


# ----- moments of the targets ---------------------------------------------------------------------------
def target_moments(blocks, target_type, classes, first=None) -> tuple:
    """(ColumnMoments of the task's moment columns, number of rows), from three passes over the blocks; the first
    runs in the context manager ``first`` (it encodes the blocks, persisted for the others: the encoding's
    progress, :func:`spark_fr.data.blocks.encoding_progress`)."""
    with first or contextlib.nullcontext():
        top, n_rows = blocks.map(lambda b: target_type.column_maxabs(b["Y"], classes)) \
            .reduce(lambda a, b: (np.fmax(a[0], b[0]), a[1] + b[1]))
    scale = target_type.column_scale(np.nan_to_num(top))
    first = blocks.map(lambda b: target_type.column_partial_sums(b["Y"], classes, scale)) \
        .reduce(lambda a, b: a.merge(b))
    c = first.counts
    mean = np.where(c > 0, first.sums.value() / np.where(c > 0, c, 1.0), 0.0)
    second = blocks.map(lambda b: target_type.column_partial_sums(b["Y"], classes, scale, mean)) \
        .reduce(lambda a, b: a.merge(b))
    return ColumnMoments.from_passes(first, second, scale), int(n_rows)


# ----- repeated rows --------------------------------------------------------------------------------------
def repeated_keys(blocks) -> tuple:
    """(sorted content keys that occur more than once, their multiplicities), found bucket by bucket."""
    def by_bucket(b):
        u, c = np.unique(b["keys"], return_counts=True)
        bucket = (u % np.uint64(KEY_BUCKETS)).astype(np.int64)
        for k in range(KEY_BUCKETS):
            sel = bucket == k
            if sel.any():
                yield k, (u[sel], c[sel])

    def repeated(bucket, parts):
        keys = np.concatenate([p[0] for p in parts])
        counts = np.concatenate([p[1] for p in parts])
        u, inv = np.unique(keys, return_inverse=True)
        total = np.bincount(inv, weights=counts).astype(np.int64)
        many = total > 1
        if many.any():
            yield u[many], total[many]

    found = blocks.group_by_key(by_bucket, KEY_BUCKETS, repeated).collect()
    if not found:
        return np.empty(0, np.uint64), np.empty(0, np.int64)
    keys = np.concatenate([f[0] for f in found])
    mult = np.concatenate([f[1] for f in found])
    order = np.argsort(keys)
    return keys[order], mult[order]


def multiplicities(keys: np.ndarray, rep_keys: np.ndarray, rep_mult: np.ndarray) -> np.ndarray:
    """How many times the content of each row occurs in the whole table."""
    m = np.ones(keys.shape[0], np.int64)
    if rep_keys.size:
        pos = np.minimum(np.searchsorted(rep_keys, keys), rep_keys.size - 1)
        hit = rep_keys[pos] == keys
        m[hit] = rep_mult[pos[hit]]
    return m


def group_rows(keys: np.ndarray, mult: np.ndarray, trees, bagging: Bagging, evaluate: bool) -> np.ndarray:
    """Mask of the rows (each with all its copies) that some tree of the group uses."""
    used = bagging.used_by(trees, keys, evaluate)
    for k in range(1, int(mult.max(initial=1))):
        more = mult > k
        if more.any():
            used[more] |= bagging.used_by(trees, occurrence_keys(keys[more], k), evaluate)
    return used


# ----- the run ---------------------------------------------------------------------------------------------
def plan_groups(n_trees: int, parallelism: int, groups_per_core: int = 2, n_features: int = 1,
                patch: int | None = None) -> list:
    """Tree groups of partitioned mode: a few per core (each group ships its rows once); with random patches
    of ``patch`` of the ``n_features`` features, at most about ``n_features / (4 * patch)`` trees per group, so
    that a group's union of patches stays well below all the columns."""
    n_groups = max(1, parallelism * groups_per_core)
    if patch is not None:
        per_group = max(1, n_features // (4 * patch))
        n_groups = max(n_groups, -(-n_trees // per_group))
    return contiguous_groups(n_trees, n_groups)


def rank_trees_partitioned(spark, prep, params: EnsembleParams, target_type=None, on_features: bool = False,
                           relations=None) -> tuple:
    """Grow and score ``params.trees`` trees in partitioned mode (see the module sketch).

    Parameters
    ----------
    spark : SparkSession
    prep : spark_fr.data.prepare.PreparedInput
        The prepared input (its encoding pass is run here, distributed).
    params : EnsembleParams
    target_type : TargetType, optional
        The run's type (default: the prepared one); with ``on_features``, one whose ``Y`` is followed by the
        feature values (:mod:`spark_fr.tasks.semi_supervised`), and every row is used.
    on_features : bool
    relations : FeatureRelations, optional
        A relational input's relations of every feature (adds the relation-level scores, see :class:`TreeData`).

    Returns
    -------
    results : list of ScoreResult
    info : dict
    """
    engine = engine_for(spark)
    t0 = time.perf_counter()
    target_type, enc = target_type or prep.target_type, prep.encoder
    warm_trees(params, enc.compact_form == "label_sets")
    classes = enc.classes
    bins = prep.plan.bins
    nominal = np.array([b.nominal for b in bins], bool)
    from ..data.binning import stack_bins

    lower, upper, _ = stack_bins(bins)
    blocks = block_parts(prep, spark).map(clustering_block if on_features else labelled_block) \
        .filter(lambda b: b["keys"].size > 0).persist()
    rep = None
    try:
        with engine.describe("spark_fr: target moments (partitioned mode)"):
            moments, n_rows = target_moments(blocks, target_type, classes, first=encoding_progress(prep, spark))
        fitted = target_type.fit_from_moments(moments, enc.names, classes, enc.label_weights(params.hmlc_w0))
        if n_rows < prep.n_rows and not on_features:
            log.warning("%d rows without any known target value are not used (supervised ranking)",
                        prep.n_rows - n_rows)
        with engine.describe("spark_fr: repeated rows (partitioned mode)"):
            rep_keys, rep_mult = repeated_keys(blocks)
        bagging = Bagging.of(params, n_rows)
        D = len(bins)
        patch = params.patch_size(D)
        groups = plan_groups(params.trees, engine.parallelism(), n_features=D, patch=patch)
        columns = [None if patch is None else patches_union(params.seed, trees, D, patch) for trees in groups]
        evaluate = "rf" in params.effective_scores()
        rep = engine.broadcast((rep_keys, rep_mult))

        def emit(b):
            mult = multiplicities(b["keys"], *rep.value)
            for g, trees in enumerate(groups):
                sel = group_rows(b["keys"], mult, trees, bagging, evaluate)
                if sel.any():
                    codes = b["codes"][:, sel] if columns[g] is None else b["codes"][np.ix_(columns[g], sel)]
                    yield g, {"codes": codes, "Y": b["Y"][sel], "keys": b["keys"][sel]}

        def grow(g, parts):  # the rows of group g (a group without rows is never called: its trees add zeros)
            keys = np.concatenate([p["keys"] for p in parts])
            order = np.argsort(keys, kind="stable")
            codes = np.ascontiguousarray(np.hstack([p["codes"] for p in parts])[:, order])
            Y = fitted.targets(stack_rows([p["Y"] for p in parts])[order])
            cols = columns[g]
            sub = (nominal, lower, upper) if cols is None else (nominal[cols], lower[cols], upper[cols])
            data = TreeData(codes, *sub, fitted.clustering_input(Y), Y,
                            fitted.prototype_columns(Y), distinct_keys(keys[order]), fitted, bagging=bagging,
                            n_total=n_rows, feature_ids=cols, n_features_all=D, relations=relations)
            data.with_row_major_for(params)
            yield score_tree_group(data, params, groups[g])

        log.info("growing %d trees (%s) in %d groups, partitioned mode: %d rows, rate %.3g, OOB sample %.3g",
                 params.trees, params.ensemble, len(groups), n_rows, bagging.rate, bagging.oob_p)
        description = (f"spark_fr: {params.trees} trees ({params.ensemble}) in {len(groups)} groups "
                       f"(partitioned mode)")
        with Progress(params.trees, "trees") as progress, engine.describe(description), \
                engine.tracked(progress, params.trees, len(groups)):
            total = blocks.group_by_key(emit, len(groups), grow).fold(ScoreAccumulator(), lambda a, b: a.merge(b))
        total.n_trees = params.trees  # trees of a group without rows scored zero everywhere
    finally:
        blocks.unpersist()
        if rep is not None:
            rep.destroy()
    info = {"ensemble_mode": "partitioned", "tree_groups": len(groups), "rows_used": n_rows,
            "group_columns_max": max(D if c is None else int(c.size) for c in columns),
            "repeated_rows": int(rep_keys.size), "trees_s": time.perf_counter() - t0}
    return total.results(), info
