"""The ReliefE suite's wide data: a seeded, sparse classification matrix with planted features, as a MATLAB
``.mat`` file in the layout of the ReliefE authors' data sets (``input_space``, ``target_space``), written once.

Sketch
------
ReliefE is made for very wide, sparse inputs (bag-of-words and tf-idf matrices, the paper's data), so the
set is sparse: each of the ``features - planted`` noise features is non-zero in a row with probability
``DENSITY`` (2 %), its value uniform on (0, 1] rounded to 3 decimals; the ``planted`` features (spread
evenly over the columns, :func:`tall_data.planted_indices`) are dense, uniform on [0, 1] rounded alike, and
decide the class::

    s = sum of the planted features - planted / 2;  class = 0 if s < -a, 2 if s > a, else 1;
    5 % of the labels redrawn

with ``a = 0.4307 * sqrt(planted / 12)`` (the terciles of s for a normal approximation: three classes of
about the same size). Rows are drawn in chunks of ``CHUNK`` from ``numpy.random.default_rng([seed, chunk])``.
The matrix is written as ``scipy.sparse.csc_matrix`` (float64) with :func:`scipy.io.savemat` to a temporary
name, then renamed; a ``.truth.json`` side-car says what was written, and a matching side-car means reuse.
Every peer reads this one file: ``jobs/rank.py`` (``.mat`` input), the authors' ``reliefe`` (``loadmat``).
"""
from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path

import numpy as np

from .tall_data import planted_indices

CHUNK = 500
DENSITY = 0.02
LABEL_NOISE = 0.05
CLASSES = 3


def chunk(seed: int, index: int, rows: int, features: int, planted: int):
    """One chunk of rows: a CSR matrix and the class codes, from ``default_rng([seed, index])``.

    Parameters
    ----------
    seed, index : int
    rows, features, planted : int

    Returns
    -------
    tuple of (scipy.sparse.csr_matrix, numpy.ndarray)
        X ``(rows, features)`` float64; the classes ``(rows,)`` int64 (0, 1, 2).
    """
    import scipy.sparse as sp

    rng = np.random.default_rng([seed, index])
    mask = rng.random((rows, features)) < DENSITY
    cols = planted_indices(features, planted)
    mask[:, cols] = False
    r, c = np.nonzero(mask)
    values = np.round(rng.uniform(0.001, 1.0, size=r.size), 3)
    P = np.round(rng.uniform(0.0, 1.0, size=(rows, planted)), 3)
    r = np.concatenate([r, np.repeat(np.arange(rows), planted)])
    c = np.concatenate([c, np.tile(cols, rows)])
    values = np.concatenate([values, P.ravel()])
    X = sp.csr_matrix((values, (r, c)), shape=(rows, features))
    X.eliminate_zeros()                                         # a planted value rounded to 0 is not stored
    s = P.sum(axis=1) - planted / 2.0
    a = 0.4307 * math.sqrt(planted / 12.0)
    y = np.where(s < -a, 0, np.where(s > a, 2, 1)).astype(np.int64)
    noisy = rng.random(rows) < LABEL_NOISE
    y[noisy] = rng.integers(0, CLASSES, size=int(noisy.sum()))
    return X, y


def _truth(rows, features, planted, seed) -> dict:
    return {"task": "cls", "n": rows, "p": features, "seed": seed, "chunk": CHUNK, "density": DENSITY,
            "relevant": [f"x{i + 1}" for i in planted_indices(features, planted)], "target_names": ["class"],
            "generator": f"noise features non-zero with probability {DENSITY}, values U(0,1] rounded to 3 decimals; "
                         f"{planted} planted features dense U(0,1); s = their sum - {planted}/2; class 0 if s < -a, "
                         f"2 if s > a, else 1 (a = 0.4307 sqrt({planted}/12)); {LABEL_NOISE:.0%} labels redrawn"}


def make_reliefe_wide(workdir: Path, rows: int, features: int, planted: int = 10, seed: int = 1) -> tuple:
    """Write the sparse wide set as a ``.mat`` file once (reused when the side-car matches).

    Parameters
    ----------
    workdir : Path
    rows, features : int
    planted : int
        Relevant features (at most ``features``).
    seed : int

    Returns
    -------
    tuple of (Path, dict)
        The ``.mat`` file and the side-car (``relevant``, ``target_names``, ``n``, ``p``, ``density``;
        ``nnz`` and ``write_s`` when written now).
    """
    if not 1 <= planted <= features:
        raise ValueError(f"planted features ({planted}) must be between 1 and the features ({features})")
    import scipy.io
    import scipy.sparse as sp

    name = f"reliefe_wide_{rows}x{features}_p{planted}_s{seed}"
    mat, truth_path = workdir / f"{name}.mat", workdir / f"{name}.truth.json"
    truth = _truth(rows, features, planted, seed)
    if mat.exists() and truth_path.exists() and json.loads(truth_path.read_text()) == truth:
        return mat, truth
    workdir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    parts = [chunk(seed, index, min(CHUNK, rows - start), features, planted)
             for index, start in enumerate(range(0, rows, CHUNK))]
    X = sp.vstack([p[0] for p in parts]).tocsc()
    y = np.concatenate([p[1] for p in parts])
    tmp = mat.with_name(f".{mat.name}.{os.getpid()}.tmp.mat")
    scipy.io.savemat(tmp, {"input_space": X, "target_space": y[None, :]}, do_compression=False)
    os.replace(tmp, mat)
    truth_path.write_text(json.dumps(truth, indent=1))
    return mat, dict(truth, nnz=int(X.nnz), write_s=round(time.perf_counter() - t0, 2))
