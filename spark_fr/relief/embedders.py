"""ReliefE's embedders: fitted on the cyclic sample on the driver, applied to every row (no Spark here).

Sketch
------
    embedder <- make_embedder(name, d, seed)     'umap' (umap-learn, the paper's), 'pca', 'random_projection';
                                                  'auto' = umap when umap-learn is importable, else pca, said in
                                                  one log line
    embedder.fit(sample)                           dense or CSR rows (L2-normalised by the caller)
    E <- l2_rows(embedder.transform(rows))         per fixed-size chunk of rows (see ``TRANSFORM_ROWS``)

Decisions:
* UMAP as the paper describes it: umap-learn's defaults (n_neighbors 15, min_dist 0.1, Euclidean) except
  n_components = d and **random init** (the paper's; [R] passes spectral and n_neighbors = k), with
  ``random_state`` from the run's seed (umap-learn is then deterministic, single-threaded);
* UMAP's transform of a batch of new rows depends on the batch (negative sampling over it), so rows are
  transformed in fixed chunks of the canonical row order: the embedding depends on the data and the seed,
  never on the Spark partitioning;
* PCA: scikit-learn's PCA (ARPACK on a sparse sample, so the sample is centred implicitly and never made
  dense; a sample dense and small enough is made dense, :func:`dense_if_small`); random projection:
  scikit-learn's GaussianRandomProjection; both are row-by-row maps.
"""
from __future__ import annotations

import logging

import numpy as np

from ..errors import InputError

log = logging.getLogger(__name__)

EMBEDDERS = ("auto", "umap", "pca", "random_projection")

#: rows per transform call (UMAP's transform of a batch depends on the batch: the chunks are fixed)
TRANSFORM_ROWS = 4096


def umap_available() -> bool:
    """Whether umap-learn can be imported."""
    try:
        import umap  # noqa: F401
    except Exception:  # noqa: BLE001 - a broken install counts as absent
        return False
    return True


def resolve_embedder(name: str) -> str:
    """The embedder 'auto' stands for here ('umap' if umap-learn is importable, else 'pca'; said in one line)."""
    if name == "umap" and not umap_available():
        raise InputError("--reliefe-embedder umap needs umap-learn (pip install 'spark_fr[reliefe]'); "
                         "or use --reliefe-embedder pca")
    if name != "auto":
        return name
    if umap_available():
        return "umap"
    log.warning("umap-learn is not installed: ReliefE embeds with PCA instead of UMAP "
                "(pip install 'spark_fr[reliefe]' for the paper's embedder)")
    return "pca"


def make_embedder(name: str, d: int, seed: int, n_sample: int):
    """An unfitted embedder of dimension ``d`` (scikit-learn style fit / transform).

    Parameters
    ----------
    name : str
        'umap', 'pca' or 'random_projection' (resolved, see :func:`resolve_embedder`).
    d : int
    seed : int
        Random state.
    n_sample : int
        Rows it will be fitted on (UMAP's n_neighbors must be below it).
    """
    seed = int(seed) % (2 ** 32)
    if name == "umap":
        import umap

        return umap.UMAP(n_components=d, n_neighbors=max(2, min(15, n_sample - 1)), min_dist=0.1, init="random",
                         random_state=seed, low_memory=True)
    if name == "pca":
        return _PCA(d, seed)
    if name == "random_projection":
        from sklearn.random_projection import GaussianRandomProjection

        return GaussianRandomProjection(n_components=d, random_state=seed)
    raise ValueError(f"unknown embedder {name!r}")


class _PCA:
    """scikit-learn's PCA on a dense sample, ARPACK (implicit centring) on a sparse one."""

    def __init__(self, d: int, seed: int):
        self.d, self.seed = d, seed

    def fit(self, X):
        from scipy import sparse
        from sklearn.decomposition import PCA

        X = dense_if_small(X)
        is_sparse = sparse.issparse(X)
        d = min(self.d, min(X.shape) - (1 if is_sparse else 0))
        self.model = PCA(n_components=max(1, d), svd_solver="arpack" if is_sparse else "full",
                         random_state=self.seed)
        self.model.fit(X)
        return self

    def transform(self, X):
        return self.model.transform(X)


#: a sparse sample is made dense for PCA and TwoNN when it has at most this many cells and is this dense
DENSE_CELLS, DENSE_SHARE = 2 ** 25, 0.3


def dense_if_small(X):
    """X as a dense array when it is sparse but dense enough and small enough that dense algebra is faster."""
    from scipy import sparse

    if sparse.issparse(X):
        cells = X.shape[0] * X.shape[1]
        if cells and cells <= DENSE_CELLS and X.nnz / cells >= DENSE_SHARE:
            return X.toarray()
    return X


def l2_rows(E: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (zero rows stay zero), float64, C order."""
    E = np.asarray(E, np.float64)
    norms = np.sqrt((E * E).sum(axis=1, keepdims=True))
    return np.ascontiguousarray(np.where(norms > 0, E / np.where(norms > 0, norms, 1.0), 0.0))


def transform_chunk(embedder, rows) -> np.ndarray:
    """The L2-normalised embedding of one chunk of rows (dense or CSR)."""
    return l2_rows(embedder.transform(rows))
