"""The ReliefE authors' package (PyPI ``reliefe`` 0.18, [R]) as a peer of the ReliefE benchmark.

    RELIEFE_PYTHON jobs/peers/reliefe_peer.py data.mat result.json --neighbours 15 --embedding input

Runs in [R]'s own virtual environment (it needs numba and umap-learn 0.5.12, and this script imports only
the standard library at the top, like every peer):
``python -m venv V && V/bin/pip install --no-deps reliefe==0.18 && V/bin/pip install umap-learn==0.5.12 scipy
scikit-learn numba``. Reads a ReliefE ``.mat`` file (``input_space``, ``target_space``) with
``scipy.io.loadmat``, fits ``ReliefE(k=--neighbours, num_iter=1.0, embedding_based_distances=...)`` as a user
of the package does (``--embedding input``: its UMAP embedding of the input, ``none``: ReliefF with Manhattan
distance on range-scaled features) and writes ``{"order": [x1 .. xD by weight, highest first], "read_s",
"algo_s": the fit, "reliefe_timed": [R]'s own step times, "embedding_used": whether [R] kept the embedding
(it drops it when its latent-dimension estimate is not below the input's width)}``.

[R] 0.18 needs :func:`import_reliefe`'s shim with today's scikit-learn (np.matrix handed to ``normalize`` and
``euclidean_distances``); ``jobs/reliefe_parity.py`` uses the same function.
"""
from __future__ import annotations

import sys
import time

from _common import order_by_importance, peer_parser, write_result


def import_reliefe():
    """[R]'s ``ReliefE`` class, patched to run with scikit-learn >= 1.6.

    reliefe 0.18 passes ``np.matrix`` to scikit-learn's ``normalize`` (its PrMS step) and
    ``euclidean_distances`` (its latent-dimension estimate), which scikit-learn >= 1.6 refuses; they get an
    ndarray instead, nothing else changes.

    Returns
    -------
    type
        ``reliefe.ReliefE``.
    """
    import types

    import numpy as np
    import reliefe.reliefe_classes as rc
    from reliefe import ReliefE
    from sklearn.metrics.pairwise import euclidean_distances
    from sklearn.preprocessing import normalize

    def _arr(X):
        return np.asarray(X) if isinstance(X, np.matrix) else X

    rc.normalize = lambda X, *a, **k: normalize(_arr(X), *a, **k)
    rc.metrics = types.SimpleNamespace(pairwise=types.SimpleNamespace(
        euclidean_distances=lambda X, *a, **k: euclidean_distances(_arr(X), *a, **k)))
    return ReliefE


def rank(mat: str, neighbours: int, embedding: str) -> dict:
    """Read the ``.mat`` file, fit [R]'s ReliefE, order the features by weight.

    Parameters
    ----------
    mat : str
        A ReliefE ``.mat`` file: ``input_space`` (n x D, sparse or dense), ``target_space`` (the n classes).
    neighbours : int
        ``k``.
    embedding : str
        ``input`` (``embedding_based_distances=True``, UMAP) or ``none``.

    Returns
    -------
    dict
        See the module docstring.
    """
    import logging

    import numpy as np
    import scipy.io
    import scipy.sparse as sp

    logging.getLogger().setLevel(logging.WARNING)              # reliefe sets INFO on import
    ReliefE = import_reliefe()
    logging.getLogger().setLevel(logging.WARNING)
    t0 = time.perf_counter()
    data = scipy.io.loadmat(mat)
    X = sp.csr_matrix(data["input_space"], dtype=np.float64)
    target = data["target_space"]
    y = np.asarray(target.todense() if sp.issparse(target) else target).ravel()
    y = np.unique(y, return_inverse=True)[1].astype(np.int64)
    t1 = time.perf_counter()
    model = ReliefE(k=neighbours, num_iter=1.0, embedding_based_distances=(embedding == "input"), verbose=False)
    model.fit(X, y)
    t2 = time.perf_counter()
    names = [f"x{i + 1}" for i in range(X.shape[1])]
    order = order_by_importance(names, model.feature_importances_)
    return {"order": [names[i] for i in order], "read_s": t1 - t0, "algo_s": t2 - t1,
            "reliefe_timed": {k: float(v) for k, v in model.timed.items()},
            "embedding_used": bool(model.embedding_based_distances)}


def main(argv=None) -> int:
    """Command line: ``MAT OUTPUT [--neighbours K] [--embedding input|none]``."""
    ap = peer_parser(__doc__, "ReliefE .mat file (input_space, target_space)")
    ap.add_argument("--neighbours", type=int, default=15, help="k (default 15)")
    ap.add_argument("--embedding", choices=("input", "none"), default="input",
                    help="input: [R]'s UMAP embedding of the input (default); none: ReliefF, Manhattan distance")
    a = ap.parse_args(argv)
    write_result(a.output, rank(a.arff, a.neighbours, a.embedding))
    return 0


if __name__ == "__main__":
    sys.exit(main())
