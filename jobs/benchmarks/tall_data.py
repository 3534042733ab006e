"""The tall suite's data: a seeded multi-target regression (MTR) table written as Parquet, row group by row
group, so that 10^7 rows never sit in memory at once.

Sketch
------
Features ``x1 .. xp`` are uniform on [-1, 1] (float32, as trees and scikit-learn use them); ``planted`` of
them, spread evenly over the columns (never just the first ones, so a tie broken by column order cannot
look like a discovery), drive every target::

    t_j = sum_i w_ji * x_(planted i) + N(0, 0.1^2),   w_ji = 1 + ((i + j) mod planted) / planted

(weights between 1 and 2, a different order for every target; float64). So each target alone (the
single-target peer, Spark MLlib, uses ``t1``) has the same planted features as the joint ranking. Row
group ``g`` is drawn from ``numpy.random.default_rng([seed, g])`` with a fixed ``ROW_GROUP`` rows, so the
table depends only on (rows, features, targets, planted, seed), not on memory; it is written to a
temporary name, then renamed, with a ``.truth.json`` side-car, and reused when the side-car matches.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np

#: rows per Parquet row group and per generated chunk (about 20 MB of float32 at 50 features)
ROW_GROUP = 100_000
NOISE = 0.1


def planted_indices(features: int, planted: int) -> list:
    """0-based columns of the planted features, spread evenly: the middle of ``planted`` equal slices.

    Parameters
    ----------
    features, planted : int
        ``1 <= planted <= features``.

    Returns
    -------
    list of int
        Increasing, distinct.
    """
    return [(2 * i + 1) * features // (2 * planted) for i in range(planted)]


def target_weights(targets: int, planted: int) -> np.ndarray:
    """``w[j, i] = 1 + ((i + j) mod planted) / planted``: every planted feature matters to every target.

    Parameters
    ----------
    targets, planted : int

    Returns
    -------
    numpy.ndarray
        ``(targets, planted)`` float64, values in [1, 2).
    """
    i, j = np.meshgrid(np.arange(planted), np.arange(targets))
    return 1.0 + ((i + j) % planted) / planted


def chunk(seed: int, group: int, rows: int, features: int, targets: int, planted: int) -> tuple:
    """One row group: its features and targets, from ``default_rng([seed, group])``.

    Parameters
    ----------
    seed, group : int
    rows, features, targets, planted : int
        ``rows`` of this group (the last group may be short).

    Returns
    -------
    tuple of numpy.ndarray
        X ``(rows, features)`` float32 uniform on [-1, 1], column-major (each column is contiguous, as
        Parquet writes it); Y ``(rows, targets)`` float64.
    """
    rng = np.random.default_rng([seed, group])
    X = rng.random((features, rows), dtype=np.float32).T
    X *= 2
    X -= 1
    Y = X[:, planted_indices(features, planted)].astype(np.float64) @ target_weights(targets, planted).T
    Y += rng.normal(0.0, NOISE, size=Y.shape)
    return X, Y


def _truth(rows, features, targets, planted, seed) -> dict:
    names = [f"x{i + 1}" for i in planted_indices(features, planted)]
    return {"task": "mtr", "format": "parquet", "n": rows, "p": features, "targets": targets, "seed": seed,
            "row_group": ROW_GROUP, "relevant": names, "target_names": [f"t{j + 1}" for j in range(targets)],
            "generator": f"x ~ U(-1,1) float32; t_j = sum_i w_ji x_(planted i) + N(0, {NOISE}^2), "
                         f"w_ji = 1 + ((i + j) mod {planted}) / {planted}"}


def make_tall(workdir: Path, rows: int, features: int, targets: int, planted: int = 5, seed: int = 1) -> tuple:
    """Write the tall table once (reused when its side-car matches); return (Parquet path, truth dict).

    Parameters
    ----------
    workdir : Path
    rows, features, targets : int
    planted : int
        Relevant features (at most ``features``).
    seed : int

    Returns
    -------
    tuple of (Path, dict)
        ``workdir/tall_<rows>x<features>x<targets>_p<planted>.parquet`` and its side-car (``relevant``,
        ``target_names``, ``n``, ``p``, ``write_s`` when it was written now).
    """
    if not 1 <= planted <= features:
        raise ValueError(f"planted features ({planted}) must be between 1 and the features ({features})")
    name = f"tall_{rows}x{features}x{targets}_p{planted}_s{seed}"
    path, truth_path = workdir / f"{name}.parquet", workdir / f"{name}.truth.json"
    truth = _truth(rows, features, targets, planted, seed)
    if path.exists() and truth_path.exists() and json.loads(truth_path.read_text()) == truth:
        return path, truth
    import pyarrow as pa
    import pyarrow.parquet as pq

    workdir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    schema = pa.schema([pa.field(f"x{i + 1}", pa.float32()) for i in range(features)]
                       + [pa.field(t, pa.float64()) for t in truth["target_names"]])
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with pq.ParquetWriter(tmp, schema, use_dictionary=False) as writer:  # random floats: no repeats
        for group, start in enumerate(range(0, rows, ROW_GROUP)):
            X, Y = chunk(seed, group, min(ROW_GROUP, rows - start), features, targets, planted)
            columns = [pa.array(X[:, i]) for i in range(features)] + [pa.array(Y[:, j]) for j in range(targets)]
            writer.write_table(pa.Table.from_arrays(columns, schema=schema), row_group_size=ROW_GROUP)
    os.replace(tmp, path)
    truth_path.write_text(json.dumps(truth, indent=1))
    return path, dict(truth, write_s=round(time.perf_counter() - t0, 2))
