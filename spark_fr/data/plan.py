"""The encoding plan: from column statistics to everything the per-batch encoder needs (driver side).

Sketch
------
* Features (:func:`feature_bins`): lossless codes for numeric columns with <= 255 distinct values; for
  the others, exact quantiles of the hash-selected sample (Spark's ``approxQuantile`` merges
  per-partition sketches, so its answer can move with the partitioning; a hash-selected sample cannot).
  Nominal columns get one code per category (the rarest beyond 254 share one). A feature is usable when it
  has at least two distinct values (missing counted as a value).
* Relief scaling (:func:`feature_scaling`): numeric features to [0, 1] by their range.
* Targets (:func:`target_columns`): what the statistics say about each target column, for the target
  type to infer, check and encode (:mod:`spark_fr.tasks`).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from ..scaling import unit_range
from ..tasks import TargetColumn, TargetEncoder
from .binning import OTHER_CATEGORY, FeatureBins, cut_matrix, nominal_bins, numeric_bins, quantile_bins

log = logging.getLogger(__name__)

QUANTILE_PROBS = np.arange(1, 255) / 255.0


@dataclass
class EncodingPlan:
    """Everything the per-batch encoder needs (shipped to Spark tasks).

    Attributes
    ----------
    features, targets : list of ColumnInfo
        With internal column names (see :func:`spark_fr.data.columns.safe_select`).
    feature_categories : list
        Category lists of nominal features read from strings (None for the others).
    bins : list of FeatureBins
    zero_codes : list of int or None
        Code of the value 0 of each feature held in a vector column (its implicit entries); None for the others.
    scale_offset, scale_width, scale_half : ndarray (D,)
        Numeric scaling for Relief: ``(x * half - offset) / width`` (see :mod:`spark_fr.scaling`).
    target_encoder : TargetEncoder
        The target type's encoder of the target columns.
    vector_size : int
    outputs : tuple of str
        'codes' (trees) and/or 'scaled' (Relief); 'sparse_targets': the targets in the encoder's compact form
        (:meth:`~spark_fr.tasks.TargetEncoder.encode_compact`).
    """

    features: list
    targets: list
    feature_categories: list
    bins: list
    zero_codes: list
    scale_offset: np.ndarray
    scale_width: np.ndarray
    scale_half: np.ndarray
    target_encoder: TargetEncoder
    vector_size: int
    outputs: tuple

    def dense_numeric(self) -> np.ndarray:
        """Indices of the numeric features held in ordinary columns (encoded as one matrix)."""
        return np.array([f for f, c in enumerate(self.features) if c.index is None and c.kind == "numeric"],
                        np.int64)

    def cut_matrix(self) -> tuple:
        """The padded cuts of :meth:`dense_numeric`'s bins (computed once per process)."""
        cached = self.__dict__.get("_cuts")
        if cached is None:
            cached = cut_matrix([self.bins[f] for f in self.dense_numeric()])
            self.__dict__["_cuts"] = cached
        return cached


def nominal_categories(name: str, declared, counts: dict | None) -> list:
    """The categories of a nominal column: declared ones, else the observed ones (at most 255)."""
    if declared is not None:
        return list(declared)
    counts = counts or {}
    cats = sorted(counts)
    if len(cats) > 255:
        keep = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:254]
        log.warning("nominal column '%s' has %d categories; the %d rarest share the code '%s'",
                    name, len(cats), len(cats) - 254, OTHER_CATEGORY)
        cats = sorted(k for k, _ in keep) + [OTHER_CATEGORY]
    return cats


def quantile_cuts(values: np.ndarray, presorted: bool = False) -> np.ndarray:
    """Exact quantiles (1/255 ... 254/255) of each column of the hash-selected sample (rows x columns): a matrix
    (254 x columns).

    The same as ``np.quantile(known values, QUANTILE_PROBS, method="inverted_cdf")`` per column (the
    ``ceil(n q) - 1``-th smallest known value), for all columns with one sort. A column without known values gets
    no cut (NaN: no cut, :func:`spark_fr.data.binning.quantile_bins`). ``presorted``: the columns of ``values`` are
    sorted already (NaN last: :meth:`~spark_fr.data.stats.RowSample.matrix` with ``sort``, as the bins read it).
    """
    if presorted:
        V = values
    else:
        V = np.array(values, np.float64, order="F")
        V.sort(axis=0)  # NaN last; column by column
    m, k = V.shape
    if not m:
        return np.full((QUANTILE_PROBS.size, k), np.nan)
    # the columns without a missing value (the last, largest value known) share their quantiles' rows: V[rows]
    cuts = V[_quantile_rows(np.full(1, m))[:, 0]]
    holed = np.flatnonzero(np.isnan(V[-1]))
    if holed.size:  # the others: their known values' own rows; a column without known values: NaN
        H = np.asfortranarray(V[:, holed])
        rows = _quantile_rows((~np.isnan(H)).sum(axis=0))
        # H[rows[q, j], j] read from H's column-major buffer (np.take_along_axis took twice as long)
        cuts[:, holed] = H.ravel(order="F")[rows + np.arange(holed.size, dtype=np.int64)[None, :] * m]
    return cuts


def _quantile_rows(n: np.ndarray) -> np.ndarray:
    """The rows (QUANTILE_PROBS x columns) of the quantiles of sorted columns of ``n`` known values each: the
    ``ceil(n q) - 1``-th, within ``[0, n - 1]``."""
    return np.clip(np.ceil(QUANTILE_PROBS[:, None] * n[None, :]).astype(np.int64) - 1, 0, np.maximum(n - 1, 0))


def feature_bins(features: list, fstats: list, sample=None) -> tuple:
    """Bins, category lists and usability of the features.

    Parameters
    ----------
    features : list of ColumnInfo
    fstats : list of ColumnStats
    sample : RowSample, optional
        The hash-selected rows: quantile bins for high-cardinality numeric columns (trees); without it
        (Relief only), such columns get a single placeholder bin.

    Returns
    -------
    (bins, feature_categories, usable)
    """
    bins: list[FeatureBins | None] = [None] * len(features)
    categories = [None] * len(features)
    usable = np.zeros(len(features), bool)
    many = [f for f, (c, s) in enumerate(zip(features, fstats))
            if c.kind != "nominal" and s.n_known and s.distinct is None]
    if many:  # quantile bins, all at once (without a sample: no cut)
        if sample is not None:
            cuts = quantile_cuts(sample.matrix(many, sort=True), presorted=True)
        else:
            cuts = np.empty((0, len(many)))
        quantiles = dict(zip(many, quantile_bins([features[f].name for f in many], cuts,
                                                 np.array([fstats[f].vmin for f in many], np.float64),
                                                 np.array([fstats[f].vmax for f in many], np.float64))))
    for f, (c, s) in enumerate(zip(features, fstats)):
        if c.kind == "nominal":
            if c.index is None:
                cats = nominal_categories(c.name, c.categories, s.counts)
                categories[f] = cats
                present = sum(1 for k in (s.counts or {}) if (s.counts or {})[k] > 0)
            else:
                cats = list(c.categories)
                present = len(s.distinct) if s.distinct is not None else 256
            bins[f] = nominal_bins(c.name, cats if cats else ["?"])
            usable[f] = present + (1 if s.n_missing else 0) >= 2
        elif s.n_known == 0:
            bins[f] = numeric_bins(c.name, np.zeros(1), None, np.nan, np.nan)
        elif s.distinct is not None:
            bins[f] = numeric_bins(c.name, s.distinct, None, s.vmin, s.vmax)
            usable[f] = s.distinct.size + (1 if s.n_missing else 0) >= 2
        else:
            bins[f] = quantiles[f]
            usable[f] = True
    return bins, categories, usable


def feature_scaling(features: list, fstats: list) -> tuple:
    """(offset, width, half) of the Relief scaling of each feature (identity for nominal ones)."""
    lo = np.array([0.0 if c.kind == "nominal" or not np.isfinite(s.vmin) else s.vmin
                   for c, s in zip(features, fstats)])
    hi = np.array([0.0 if c.kind == "nominal" or not np.isfinite(s.vmax) else s.vmax
                   for c, s in zip(features, fstats)])
    return unit_range(lo, hi)


def target_columns(targets: list, tstats: list) -> list:
    """The :class:`spark_fr.tasks.TargetColumn` of each target, from its type and statistics."""
    out = []
    for c, s in zip(targets, tstats):
        cats = None
        if c.kind == "nominal":
            cats = list(c.categories) if c.categories is not None else sorted(s.counts or {})
        out.append(TargetColumn(c.name, c.kind, cats, s.distinct if c.kind == "numeric" else None, s.n_known,
                                s.vmin, s.vmax, dict(s.counts or {})))
    return out
