"""Random inputs for :func:`spark_fr.pct.grow.grow_tree` and a recorder of its exact outputs.

The fixture ``tests/pct/grow_trees.npz`` holds the node arrays that the grower of main (before the
split-search helpers were factored out of ``grow_tree``) produced on :func:`case` ``0 .. N_CASES - 1``;
``tests/pct/test_grow_helpers.py`` checks that the current grower reproduces them bit for bit. Re-recorded once
since, on purpose (issue 23): nominal tests became CLUS's greedy search for any number of categories (it was
exhaustive up to 8); the 41 cases that changed all have a nominal feature of 3 or more categories searched by
the best splitter, the other 79 were bit-identical. The inputs are
regenerated from their seeds (a digest of them is stored too, so a change of NumPy's generator shows as such,
not as a grower difference). Record again only with a grower known to be equivalent::

    python tests/pct/grow_cases.py tests/pct/grow_trees.npz
"""
from __future__ import annotations

import hashlib
import sys

import numpy as np

N_CASES = 120
OUTPUTS = ("feature", "threshold", "missing_left", "mask", "left", "right", "weight", "depth", "gain",
           "leaf_of_row", "column_gain")


def case(i: int) -> dict:
    """Random data and grower parameters number ``i``: numeric and nominal features (<= 8 and > 8
    categories), missing feature codes, missing target values, tied targets, bootstrap weights, best and
    random splitters, max_features < D, resample_constant both ways, track_columns."""
    rng = np.random.default_rng(20_260_000 + i)
    n = int(rng.integers(30, 240))
    D = int(rng.integers(2, 9))
    K = int(rng.integers(1, 5))
    nominal = rng.random(D) < 0.4
    X = np.empty((D, n), np.uint8)
    lower = np.zeros((D, 255))
    upper = np.zeros((D, 255))
    for f in range(D):
        kind = rng.random()
        if nominal[f]:
            n_cat = int(rng.integers(2, 9)) if kind < 0.5 else int(rng.integers(9, 15))
        else:
            n_cat = int(rng.integers(2, 6)) if kind < 0.3 else int(rng.integers(6, 60))
            edges = np.cumsum(rng.random(2 * n_cat) + 0.01)
            lower[f, :n_cat] = edges[0::2]
            upper[f, :n_cat] = edges[1::2]
        X[f] = rng.integers(0, n_cat, n)
        if rng.random() < 0.1:
            X[f] = X[f, 0]  # constant
        p_missing = (0.0, 0.0, 0.1, 0.3)[int(rng.integers(0, 4))]
        X[f, rng.random(n) < p_missing] = 255
    kind = int(rng.integers(0, 3))
    if kind == 0:  # generic floats, different scales
        Z = rng.standard_normal((n, K)) * (rng.random(K) * 3 + 0.1)
        Z += np.where(X[0] == 255, 0.5, X[0] * 0.1)[:, None]
    elif kind == 1:  # class-like one-hot columns: many exact ties
        Z = (rng.integers(0, 2, (n, K)) - 0.5) * 0.7
    else:  # few distinct values
        Z = rng.integers(-2, 3, (n, K)) / 3.0
    if rng.random() < 0.4:
        Z[rng.random((n, K)) < 0.15] = np.nan
    wkind = int(rng.integers(0, 3))
    if wkind == 0:
        w = np.ones(n)
    elif wkind == 1:  # bootstrap-like counts, about a third out of bag
        w = np.minimum(rng.integers(0, 3, n), rng.integers(0, 4, n)).astype(float)
    else:
        w = rng.integers(0, 2, n).astype(float)
    params = dict(
        min_leaf=float((1.0, 2.0, 3.0, 5.0, 2.5)[int(rng.integers(0, 5))]),
        max_depth=int((-1, -1, 3, 6)[int(rng.integers(0, 4))]),
        max_features=int((D, D + 3, 1, max(1, int(np.sqrt(D))), max(1, D // 2))[int(rng.integers(0, 5))]),
        splitter=int(rng.random() < 0.4),
        track_columns=bool(rng.random() < 0.5),
        seed=int(rng.integers(0, 2**63)),
        resample_constant=bool(rng.random() < 0.5),
    )
    return dict(X=np.ascontiguousarray(X), nominal=nominal, lower=lower, upper=upper,
                Z=np.ascontiguousarray(Z), w=w, params=params)


def input_digest(c: dict) -> str:
    h = hashlib.sha256()
    for key in ("X", "nominal", "lower", "upper", "Z", "w"):
        h.update(np.ascontiguousarray(c[key]).tobytes())
    h.update(repr(sorted(c["params"].items())).encode())
    return h.hexdigest()[:16]


def run(c: dict) -> dict:
    """grow_tree on a case; the used part of every output array."""
    from spark_fr.pct.config import grow_config
    from spark_fr.pct.grow import grow_tree
    from spark_fr.pct.histogram import Codes

    p = c["params"]
    rows = np.flatnonzero(c["w"] > 0).astype(np.int64)
    config = grow_config(**dict(p, splitter=("best", "random")[p["splitter"]]))
    out = grow_tree(Codes(c["X"], c["nominal"], c["lower"], c["upper"]), c["Z"], c["w"], rows, config)
    n_nodes = out.n_nodes
    arrays = [a[:n_nodes] for a in out.nodes[:9]] + [out.leaf_of_row, out.column_gain]
    return dict(zip(OUTPUTS, arrays), rows=rows)


def record(path: str) -> None:
    """Run every case; per output, the arrays of all cases concatenated (raveled) with their offsets."""
    import spark_fr.pct.grow as g

    results = [run(case(i)) for i in range(N_CASES)]
    arrays = {"digest": np.array([input_digest(case(i)) for i in range(N_CASES)])}
    for name in results[0]:
        parts = [r[name].ravel() for r in results]
        arrays[name] = np.concatenate(parts)
        arrays[name + "_offsets"] = np.cumsum([0] + [p.size for p in parts])
    np.savez_compressed(path, **arrays)
    print(f"recorded {N_CASES} trees with {g.__file__} into {path}")


def load(path: str) -> list[dict]:
    """The recorded outputs of every case (raveled arrays) and the digest of its inputs."""
    with np.load(path) as data:
        names = [k for k in data.files if k != "digest" and not k.endswith("_offsets")]
        out = []
        for i in range(N_CASES):
            rec = {"digest": str(data["digest"][i])}
            for name in names:
                o = data[name + "_offsets"]
                rec[name] = data[name][o[i]:o[i + 1]]
            out.append(rec)
    return out


if __name__ == "__main__":
    record(sys.argv[1])
