"""ReliefE's rows on the driver, sparse: the encoded blocks turned into CSR where they are encoded (no numba).

Sketch
------
    blocks <- the encoding pass (spark_fr.data.blocks): scaled features (numeric to [0, 1] by the range,
              nominal as category index), targets Y, content keys; in the driver (small input) or in Spark
              tasks, where each block's dense scaled array becomes CSR at once, so only the non-zeros travel
    rows   <- blocks stacked and sorted by content key (the canonical order: nothing depends on partitioning)
    rows without any known target are dropped (supervised ranking)

Decisions:
* a missing feature value has no place in the sparse geometry (cosine, Manhattan on CSR): ReliefE refuses
  it with a one-line error naming the column (``--method relief`` handles missing values);
* MLC labels missing in a row that has other labels count as absent (0).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data.blocks import block_parts, encode_blocks
from ..errors import InputError
from .setup import RowCounts, labelled_rows


@dataclass
class ReliefEData(RowCounts):
    """The rows ReliefE works on (canonical order).

    Attributes
    ----------
    X : scipy.sparse.csr_matrix (n, D)
        Range-scaled features, indices sorted per row.
    Y : ndarray (n, T)
        Class index (T = 1) or 0/1 labels.
    keys : ndarray of uint64 (n,)
        Content keys (equal for identical rows).
    nominal : ndarray of bool (D,)
    n_dropped : int
        Rows left out for lack of a known target.
    """

    X: object
    Y: np.ndarray
    keys: np.ndarray
    nominal: np.ndarray
    n_dropped: int = 0


def sparse_block(block: dict) -> dict:
    """A block with its scaled features as CSR and the count of missing values per feature."""
    from scipy import sparse

    S = block["scaled"]
    missing = np.isnan(S).sum(axis=0)
    X = sparse.csr_matrix(np.where(np.isnan(S), 0.0, S))
    X.sort_indices()
    return {"X": X, "Y": block["Y"], "keys": block["keys"], "missing": missing}


def collect_sparse(prep, spark=None) -> list:
    """The CSR blocks of a prepared input (encoded in the driver or in Spark tasks)."""
    if prep.local:
        return [sparse_block(b) for b in encode_blocks(prep.batches, prep.plan)]
    return block_parts(prep, spark).map(sparse_block).collect()


def check_missing(missing: np.ndarray, feature_names: list) -> None:
    """One-line error naming the first feature column with missing values (``missing``: counts per feature)."""
    if np.any(missing > 0):
        j = int(np.flatnonzero(missing > 0)[0])
        raise InputError(f"feature column '{feature_names[j]}' has {int(missing[j])} missing values: --method "
                         f"reliefe needs complete features (use --method relief, which handles missing values)")


def build_reliefe_data(blocks: list, feature_names: list, nominal: np.ndarray, n_targets: int) -> ReliefEData:
    """Stack the blocks in canonical order, refuse missing feature values, drop rows without targets."""
    from scipy import sparse

    D = len(feature_names)
    check_missing(np.sum([b["missing"] for b in blocks], axis=0) if blocks else np.zeros(D), feature_names)
    if not blocks:
        X, Y, keys = sparse.csr_matrix((0, D)), np.zeros((0, n_targets)), np.zeros(0, np.uint64)
    else:
        X = sparse.vstack([b["X"] for b in blocks], format="csr")
        Y = np.vstack([np.asarray(b["Y"], np.float64) for b in blocks])
        keys = np.concatenate([b["keys"] for b in blocks])
    order = np.argsort(keys, kind="stable")
    X, Y, keys = X[order], Y[order], keys[order]
    keep = labelled_rows(Y)
    if not keep.all():
        X, Y, keys = X[keep], Y[keep], keys[keep]
    X = sparse.csr_matrix(X)
    X.sort_indices()
    return ReliefEData(X, Y, keys, np.asarray(nominal, bool), int((~keep).sum()))
