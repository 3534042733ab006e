"""The wide suite's data: a seeded classification table with many features, as Parquet (one column per
feature) and as ARFF (the same values), both written once.

Sketch
------
Features ``x1 .. xp`` are uniform on [-1, 1], rounded to 3 decimals (float64, so that the ARFF file's text
parses to exactly the numbers of the Parquet file); ``planted`` of them, spread evenly over the columns,
decide the class::

    s = sum of the planted features;  class = c0 if s < -a, c2 if s > a, else c1;  5 % of the labels redrawn

with ``a = 0.4307 * sqrt(planted / 3)`` (the terciles of s for a normal approximation: three classes of
about the same size). Every planted feature moves s alike, so each is relevant and none dominates.
Rows are drawn in chunks of ``CHUNK`` from ``numpy.random.default_rng([seed, chunk])``. The Parquet file
is written with pyarrow (one float64 column per feature, then ``class``); the ARFF file as ``@attribute
xi numeric`` lines and the rows by pyarrow's CSV writer (C++, unquoted). Both go to temporary names, then
are renamed; a ``.truth.json`` side-car says what was written, and a matching side-car means reuse.
"""
from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path

import numpy as np

from .tall_data import planted_indices

CHUNK = 1000
LABEL_NOISE = 0.05
CLASSES = ("c0", "c1", "c2")


def chunk(seed: int, index: int, rows: int, features: int, planted: int) -> tuple:
    """One chunk of rows: features and class labels, from ``default_rng([seed, index])``.

    Parameters
    ----------
    seed, index : int
    rows, features, planted : int

    Returns
    -------
    tuple of (numpy.ndarray, numpy.ndarray)
        X ``(rows, features)`` float64, column-major; the class codes ``(rows,)`` int8 (0, 1, 2).
    """
    rng = np.random.default_rng([seed, index])
    X = np.round(rng.uniform(-1.0, 1.0, size=(features, rows)), 3).T
    s = X[:, planted_indices(features, planted)].sum(axis=1)
    a = 0.4307 * math.sqrt(planted / 3.0)
    y = np.where(s < -a, 0, np.where(s > a, 2, 1)).astype(np.int8)
    noisy = rng.random(rows) < LABEL_NOISE
    y[noisy] = rng.integers(0, len(CLASSES), size=int(noisy.sum()))
    return X, y


def _truth(rows, features, planted, seed) -> dict:
    return {"task": "cls", "n": rows, "p": features, "seed": seed, "chunk": CHUNK,
            "relevant": [f"x{i + 1}" for i in planted_indices(features, planted)], "target_names": ["class"],
            "classes": list(CLASSES), "descriptive": f"1-{features}", "target": str(features + 1),
            "generator": f"x ~ U(-1,1) rounded to 3 decimals; s = sum of the {planted} planted x; class c0 if "
                         f"s < -a, c2 if s > a, else c1 (a = 0.4307 sqrt({planted}/3)); "
                         f"{LABEL_NOISE:.0%} labels redrawn"}


def _arff_header(name: str, features: int) -> str:
    lines = [f"% {name}: see {name}.truth.json", f"@RELATION {name}", ""]
    lines += [f"@ATTRIBUTE x{i + 1} numeric" for i in range(features)]
    lines += ["@ATTRIBUTE class {" + ",".join(CLASSES) + "}", "", "@DATA", ""]
    return "\n".join(lines)


def make_wide(workdir: Path, rows: int, features: int, planted: int = 10, seed: int = 1) -> tuple:
    """Write the wide table as Parquet and ARFF once (reused when the side-car matches).

    Parameters
    ----------
    workdir : Path
    rows, features : int
    planted : int
        Relevant features (at most ``features``).
    seed : int

    Returns
    -------
    tuple of (Path, Path, dict)
        The Parquet file, the ARFF file and the side-car (``relevant``, ``target_names``, ``n``, ``p``;
        ``write_s`` when written now).
    """
    if not 1 <= planted <= features:
        raise ValueError(f"planted features ({planted}) must be between 1 and the features ({features})")
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    name = f"wide_{rows}x{features}_p{planted}_s{seed}"
    parquet, arff, truth_path = (workdir / f"{name}.parquet", workdir / f"{name}.arff",
                                 workdir / f"{name}.truth.json")
    truth = _truth(rows, features, planted, seed)
    if parquet.exists() and arff.exists() and truth_path.exists() and json.loads(truth_path.read_text()) == truth:
        return parquet, arff, truth
    workdir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    names = [f"x{i + 1}" for i in range(features)]
    schema = pa.schema([pa.field(n, pa.float64()) for n in names] + [pa.field("class", pa.string())])
    tmp_pq, tmp_arff = (p.with_name(f".{p.name}.{os.getpid()}.tmp") for p in (parquet, arff))
    labels = np.array(CLASSES, dtype=object)
    csv_options = pacsv.WriteOptions(include_header=False, quoting_style="none")
    with pq.ParquetWriter(tmp_pq, schema, use_dictionary=["class"]) as writer, open(tmp_arff, "wb") as text:
        text.write(_arff_header(name, features).encode())
        for index, start in enumerate(range(0, rows, CHUNK)):
            X, y = chunk(seed, index, min(CHUNK, rows - start), features, planted)
            table = pa.Table.from_arrays([pa.array(X[:, i]) for i in range(features)] + [pa.array(labels[y])],
                                         schema=schema)
            writer.write_table(table)
            pacsv.write_csv(table, text, write_options=csv_options)
    os.replace(tmp_pq, parquet)
    os.replace(tmp_arff, arff)
    truth_path.write_text(json.dumps(truth, indent=1))
    return parquet, arff, dict(truth, write_s=round(time.perf_counter() - t0, 2))
