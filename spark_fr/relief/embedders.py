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
* PCA (:class:`PCAEmbedder`: a full SVD, or ARPACK on a sparse sample, centred implicitly and never made
  dense) and Gaussian random projection (:class:`RandomProjection`) need numpy and scipy only (scikit-learn
  is not a dependency of spark_fr); both are row-by-row maps, computed as CSR times dense products so that a
  row's embedding has the same bits in any batch of rows (tall mode transforms the rows where they are).
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
                         random_state=seed, low_memory=True, n_jobs=1)
    if name == "pca":
        return PCAEmbedder(d, seed)
    if name == "random_projection":
        return RandomProjection(d, seed)
    raise ValueError(f"unknown embedder {name!r}")


class PCAEmbedder:
    """PCA (numpy / scipy only): the top-d right singular vectors of the centred sample.

    A dense sample (or one :func:`dense_if_small` makes dense) goes through a full SVD; a sparse one, when d is a
    small share of its rows, through ARPACK (``scipy.sparse.linalg.svds``) on the implicitly centred matrix, never
    made dense; otherwise (TwoNN often asks for hundreds of components of a 2048-row sample) through the
    eigenvectors of the centred m x m Gram matrix (:func:`gram_components`: exact, seconds where ARPACK took
    minutes: 312 s for d = 622 of a 2048 x 20000 sample). Signs follow
    scikit-learn's ``svd_flip`` (the largest |loading| of each component is positive), so the embedding is
    deterministic. ``transform(X) = (X - mean) V^T`` row by row.

    Components of a (numerically) zero singular value are left out (:func:`numerical_zero`): a sample of rank
    r < d gives r components, and a sample whose rows are all equal (every feature constant in it) gives none,
    with one log line; ``transform`` then gives rows of no columns, which ReliefE's kernels read as "no
    embedding" (the input's neighbours by L1 distance on the features; an embedded target puts every two
    targets at distance 1, so no instance adds anything and every weight is 0).
    """

    def __init__(self, d: int, seed: int):
        self.d, self.seed = int(d), int(seed)

    def fit(self, X):
        from scipy import sparse

        X = dense_if_small(X)
        m, F = X.shape
        self.mean_ = np.asarray(X.mean(axis=0), np.float64).ravel()
        if rows_all_equal(X):
            log.warning("PCA embedding: the %d rows it is fitted on are all equal (nothing varies in them): it has "
                        "no components, and ReliefE does without it (input: neighbours by L1 distance on the "
                        "features; target: every two targets at distance 1)", m)
            self.components_ = np.zeros((0, F))
            return self
        if sparse.issparse(X):
            Vt, s = sparse_components(sparse.csr_matrix(X, dtype=np.float64), self.mean_, self.d, self.seed)
        else:
            _, s, Vt = np.linalg.svd(np.asarray(X, np.float64) - self.mean_, full_matrices=False)
            Vt, s = Vt[:max(1, min(self.d, Vt.shape[0]))], s[:max(1, min(self.d, Vt.shape[0]))]
        Vt = Vt[s > numerical_zero(s, m, F)]
        big = np.argmax(np.abs(Vt), axis=1)
        Vt = Vt * np.sign(Vt[np.arange(Vt.shape[0]), big])[:, None]
        self.components_ = np.ascontiguousarray(Vt)
        return self

    def transform(self, X):
        return np.asarray(as_csr(X) @ self.components_.T) - self.mean_ @ self.components_.T


#: a sparse PCA uses ARPACK up to this share of the sample's rows as components, the Gram matrix above
ARPACK_SHARE = 0.05


def sparse_components(X, mu: np.ndarray, d: int, seed: int) -> tuple:
    """(Vt, s): the top right singular vectors (rows, by decreasing singular value) of the centred CSR sample
    ``X - 1 mu^T`` and their singular values: ARPACK on the implicitly centred matrix when ``d`` is a small share
    of the rows, else the Gram matrix (:func:`gram_components`, which leaves out zero singular values)."""
    from scipy.sparse.linalg import LinearOperator, svds

    m, F = X.shape
    k = max(1, min(d, min(m, F) - 1))
    if k > ARPACK_SHARE * m:
        Vt = gram_components(X, mu, k)
        return Vt, np.ones(Vt.shape[0])
    op = LinearOperator((m, F), dtype=np.float64,
                        matvec=lambda v: X @ v - mu @ v, rmatvec=lambda u: X.T @ u - mu * u.sum(),
                        matmat=lambda V: X @ V - np.outer(np.ones(m), mu @ V),
                        rmatmat=lambda U: X.T @ U - np.outer(mu, U.sum(axis=0)))
    v0 = np.random.default_rng(seed).random(min(m, F))
    _, s, Vt = svds(op, k=k, v0=v0)
    order = np.argsort(-s)
    return Vt[order], s[order]


def numerical_zero(s: np.ndarray, m: int, F: int) -> float:
    """The largest singular value of an m x F matrix that counts as zero (numpy's ``matrix_rank`` tolerance:
    ``max(s) max(m, F) eps``; and at least 0).

    Decision: PCA keeps only components of a non-zero singular value. The others are arbitrary directions of
    the sample's null space: they map every sample row to rounding noise, which the L2 normalisation of the
    embedding would blow up to unit length, and rows outside the sample to meaningless values."""
    return float(s.max()) * max(m, F) * np.finfo(np.float64).eps if s.size else 0.0


def rows_all_equal(X) -> bool:
    """Whether every row of X (dense or scipy sparse, at least one row) equals the first one, exactly: the
    centred sample is then zero and has no principal components (ARPACK fails on it: 'starting vector is
    zero'). Compared with the first row, not the mean (a mean of equal values may differ in its last bit)."""
    from scipy import sparse

    if X.shape[0] == 0:
        return True
    if sparse.issparse(X):
        X = sparse.csr_matrix(X, dtype=np.float64)
        first = X[0]
        return (X - sparse.csr_matrix(np.ones((X.shape[0], 1))) @ first).count_nonzero() == 0
    X = np.asarray(X, np.float64)
    return bool(np.array_equal(X, np.broadcast_to(X[:1], X.shape)))


def gram_components(X, mu: np.ndarray, k: int) -> np.ndarray:
    """The top-k right singular vectors (rows) of the centred sparse ``X - 1 mu^T`` (m x F), from the
    eigenvectors of its m x m Gram matrix ``G = X X^T - a 1^T - 1 a^T + (mu . mu)``, ``a = X mu``:
    ``v_i = (X - 1 mu^T)^T u_i / sqrt(lambda_i)``. Components of a (numerically) zero singular value are left
    out, so a sample of rank r < k gives r components."""
    a = np.asarray(X @ mu).ravel()
    G = np.asarray((X @ X.T).toarray()) - a[:, None] - a[None, :] + float(mu @ mu)
    lam, U = np.linalg.eigh((G + G.T) / 2)
    order = np.argsort(-lam, kind="stable")[:k]
    lam, U = lam[order], U[:, order]
    keep = lam > max(float(lam[0]) if lam.size else 0.0, 0.0) * 1e-10
    lam, U = lam[keep], U[:, keep]
    if lam.size == 0:
        return np.zeros((0, X.shape[1]))
    V = (np.asarray(X.T @ U) - np.outer(mu, U.sum(axis=0))) / np.sqrt(lam)
    return np.ascontiguousarray(V.T)


class RandomProjection:
    """Gaussian random projection: X R with R ~ N(0, 1/d), F x d, from the seed (row by row)."""

    def __init__(self, d: int, seed: int):
        self.d, self.seed = int(d), int(seed)

    def fit(self, X):
        self.R_ = np.random.default_rng(self.seed).normal(0.0, 1.0 / np.sqrt(self.d), (X.shape[1], self.d))
        return self

    def transform(self, X):
        return np.asarray(as_csr(X) @ self.R_)


def as_csr(X):
    """X as CSR: scipy's CSR times dense product works row by row, so a row's embedding has the same bits in
    any batch of rows (a dense BLAS product may sum in another order for another batch size)."""
    from scipy import sparse

    return X if sparse.issparse(X) and X.format == "csr" else sparse.csr_matrix(X, dtype=np.float64)


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
