"""The HMLC suite's data: a seeded synthetic set with a DAG label hierarchy (Clus HMC ARFF), and what the
suite needs to know of any Clus ``hierarchical`` ARFF file.

Sketch
------
The hierarchy has ``LEVELS`` levels holding the shares ``LEVEL_SHARES`` of the ``labels`` labels (1,000:
10, 40, 150, 300, 500), named ``h<level>_<j>``. Label j of level d > 1 has a *primary* parent in level d - 1
(``level_{d-1}[j * n_{d-1} // n_d]``, so every label above the last level has a child), and with probability
``EXTRA_PARENT`` one more parent drawn from all the labels of the levels above: a DAG, acyclic because
parents are always shallower. The level-1 labels hang below the virtual ``root``.

Features ``x1 .. xp`` are uniform on [-1, 1], rounded to 3 decimals; ``planted`` of them, spread evenly
over the columns (as in the wide and tall suites), decide the labels. Every row makes ``WALKS`` walks down
the primary tree: walk w starts at the level-1 label chosen by the planted feature ``f(w, 1)`` and at each
level d moves to the child chosen by ``f(w, d)``: with ``c`` children, child ``floor((x + 1) / 2 * c)``, and
``f(w, d) = planted[(w + WALKS (d - 1)) mod planted]``. A walk picks a random child instead with
probability ``NOISE`` and stops early (below level 2) with probability ``STOP`` per level. A row's label
set is the walks' last labels (duplicates and ancestors of another dropped), joined by ``@``; closed under
ancestors (every path to the root, through every parent) a row has about 30 positive labels of 1,000.

The ARFF file is Clus' HMC format: ``@ATTRIBUTE class hierarchical root/h1_000,...,h1_000/h2_000,...``, one
``parent/child`` edge per item, parents before children, so both CLUS (``[Hierarchical] Type = DAG``,
``HSeparator = /``) and spark_fr (DAG edges: some item starts with ``root/``, every item has one ``/``)
read it. Rows are drawn in chunks of ``CHUNK`` from ``numpy.random.default_rng([seed, 1, chunk])``, the
hierarchy from ``default_rng([seed, 0])``; the rows are written by pyarrow's CSV writer (unquoted) to a
temporary name, then renamed. A ``.truth.json`` side-car holds the generator's parameters (``spec``), the
planted features and the label statistics; a side-car with the same ``spec`` means reuse.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np

from .tall_data import planted_indices

CHUNK = 5000
LEVELS = 5
LEVEL_SHARES = (0.01, 0.04, 0.15, 0.30, 0.50)
EXTRA_PARENT = 0.3
WALKS = 5
NOISE = 0.05
STOP = 0.15
MIN_LABELS = 20
CLASS = "class"


# ----- any Clus HMC ARFF file --------------------------------------------------------------------------------
def hierarchy_kind(spec: str) -> str:
    """``DAG`` or ``Tree``: how a Clus class specification lists its hierarchy, by spark_fr's rule.

    Parameters
    ----------
    spec : str
        The text after ``hierarchical``.

    Returns
    -------
    str
        ``DAG`` when the items are ``parent/child`` edges (some item starts with ``root/`` and every item
        has exactly one ``/``), else ``Tree`` (label paths).
    """
    items = [s.strip() for s in spec.split(",") if s.strip()]
    return "DAG" if any(s.startswith("root/") for s in items) and all(s.count("/") == 1 for s in items) else "Tree"


def read_hmlc_header(path: Path) -> dict:
    """What the suite needs of a Clus HMC ARFF file's header.

    Parameters
    ----------
    path : Path
        An ARFF file with one ``hierarchical`` attribute; attribute names without spaces.

    Returns
    -------
    dict
        ``target`` (the class attribute's name), ``features`` (the other attributes), ``kind`` (``Tree`` or
        ``DAG``) and ``labels`` (the number of labels of the hierarchy).

    Raises
    ------
    ValueError
        If the file has no ``hierarchical`` attribute, or more than one.
    """
    features, targets = [], []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            parts = line.strip().split(None, 2)
            if not parts:
                continue
            key = parts[0].lower()
            if key == "@data":
                break
            if key == "@attribute" and len(parts) == 3:
                kind = parts[2].split(None, 1)
                if kind[0].lower() == "hierarchical":
                    targets.append((parts[1], kind[1] if len(kind) > 1 else ""))
                else:
                    features.append(parts[1])
    if len(targets) != 1:
        raise ValueError(f"{path}: {len(targets)} hierarchical attributes, expected 1")
    name, spec = targets[0]
    items = [s.strip() for s in spec.split(",") if s.strip()]
    kind = hierarchy_kind(spec)
    labels = {c for s in items for c in s.split("/")} - {"root"} if kind == "DAG" else set(items)
    return {"target": name, "features": features, "kind": kind, "labels": len(labels)}


# ----- the synthetic DAG ------------------------------------------------------------------------------------
def level_sizes(labels: int) -> list:
    """Labels per level: the shares :data:`LEVEL_SHARES` of ``labels``, at least one each, summing to it.

    Parameters
    ----------
    labels : int
        At least :data:`MIN_LABELS`.

    Returns
    -------
    list of int
    """
    sizes = [max(1, round(labels * share)) for share in LEVEL_SHARES[:-1]]
    return sizes + [labels - sum(sizes)]


class Dag:
    """The synthetic label DAG.

    Parameters
    ----------
    labels : int
    seed : int

    Attributes
    ----------
    names : list of str
        ``h<level>_<j>``, level by level (a topological order).
    level : numpy.ndarray
        The level (1-based) of every label.
    parents : list of list of int
        Parents per label (the primary one first); empty for level 1.
    children_start, children : numpy.ndarray
        The primary children of label i are ``children[children_start[i]:children_start[i + 1]]``.
    closure : numpy.ndarray
        ``(labels, labels)`` bool: ``closure[i, j]`` when j is i or one of its ancestors.
    """

    def __init__(self, labels: int, seed: int):
        rng = np.random.default_rng([seed, 0])
        sizes = level_sizes(labels)
        starts = np.concatenate([[0], np.cumsum(sizes)])
        self.names = [f"h{d + 1}_{j:03d}" for d, n in enumerate(sizes) for j in range(n)]
        self.level = np.repeat(np.arange(1, LEVELS + 1), sizes)
        self.parents = [[] for _ in range(sizes[0])]
        primary = np.full(labels, -1)
        for d in range(1, LEVELS):
            for j in range(sizes[d]):
                p = int(starts[d - 1] + j * sizes[d - 1] // sizes[d])
                ps = [p]
                if rng.random() < EXTRA_PARENT and starts[d] > 1:
                    extra = int(rng.integers(0, starts[d] - 1))
                    ps.append(extra if extra < p else extra + 1)  # any shallower label but the primary one
                primary[starts[d] + j] = p
                self.parents.append(ps)
        order = np.argsort(primary, kind="stable")
        order = order[primary[order] >= 0]
        self.children = order
        self.children_start = np.searchsorted(primary[order], np.arange(labels + 1))
        self.closure = np.eye(labels, dtype=bool)
        for i, ps in enumerate(self.parents):
            for p in ps:
                self.closure[i] |= self.closure[p]

    def edges(self) -> list:
        """The ``parent/child`` items of the Clus specification, parents before children."""
        return [f"{self.names[p] if p >= 0 else 'root'}/{self.names[i]}"
                for i, ps in enumerate(self.parents) for p in (ps or [-1])]

    def walk(self, X: np.ndarray, planted: list, rng) -> np.ndarray:
        """The walks' last labels for every row (see the module sketch).

        Parameters
        ----------
        X : numpy.ndarray
            ``(rows, features)``.
        planted : list of int
            The planted columns.
        rng : numpy.random.Generator

        Returns
        -------
        numpy.ndarray
            ``(rows, WALKS)`` label indices.
        """
        rows, k = X.shape[0], len(planted)
        out = np.empty((rows, WALKS), dtype=np.int64)
        n1 = int((self.level == 1).sum())  # level 1 is labels 0 .. n1 - 1
        for w in range(WALKS):
            u = (X[:, planted[w % k]] + 1.0) / 2.0
            cur = np.minimum((u * n1).astype(np.int64), n1 - 1)
            cur = np.where(rng.random(rows) < NOISE, rng.integers(0, n1, rows), cur)
            alive = np.ones(rows, dtype=bool)
            for d in range(2, LEVELS + 1):
                start, stop = self.children_start[cur], self.children_start[cur + 1]
                count = stop - start
                alive &= (count > 0) & (rng.random(rows) >= (STOP if d > 2 else 0.0))
                u = (X[:, planted[(w + WALKS * (d - 1)) % k]] + 1.0) / 2.0
                pick = np.minimum((u * count).astype(np.int64), np.maximum(count - 1, 0))
                noisy = rng.random(rows) < NOISE
                pick = np.where(noisy, (rng.random(rows) * count).astype(np.int64), pick)
                nxt = self.children[np.minimum(start + pick, len(self.children) - 1)]
                cur = np.where(alive, nxt, cur)
            out[:, w] = cur
        return out

    def label_sets(self, ends: np.ndarray) -> tuple:
        """Row label sets from the walks' ends: duplicates and ancestors of another end dropped.

        Parameters
        ----------
        ends : numpy.ndarray
            ``(rows, WALKS)`` label indices.

        Returns
        -------
        tuple of (list of str, numpy.ndarray)
            The ``@``-joined most specific labels per row, and the number of positive labels per row after
            closing under ancestors.
        """
        rows = ends.shape[0]
        keep = np.ones(ends.shape, dtype=bool)
        for i in range(WALKS):
            for j in range(WALKS):
                if i == j:
                    continue
                same = ends[:, i] == ends[:, j]
                keep[:, i] &= ~(same & (j < i))                               # a duplicate of an earlier end
                keep[:, i] &= ~(~same & self.closure[ends[:, j], ends[:, i]])  # an ancestor of another end
        positives = np.zeros(rows, dtype=np.int64)
        texts = []
        names = self.names
        for r in range(rows):
            labs = sorted(int(x) for x in ends[r, keep[r]])
            positives[r] = int(np.logical_or.reduce(self.closure[labs], axis=0).sum())
            texts.append("@".join(names[x] for x in labs))
        return texts, positives


def _spec(rows: int, features: int, labels: int, planted: int, seed: int) -> dict:
    return {"task": "hmlc", "n": rows, "p": features, "labels": labels, "planted": planted, "seed": seed,
            "chunk": CHUNK, "levels": level_sizes(labels), "extra_parent": EXTRA_PARENT, "walks": WALKS,
            "noise": NOISE, "stop": STOP}


def make_hmlc(workdir: Path, rows: int, features: int, labels: int, planted: int = 10, seed: int = 1) -> tuple:
    """Write the synthetic DAG set once (reused when the side-car's ``spec`` matches).

    Parameters
    ----------
    workdir : Path
    rows, features : int
    labels : int
        At least :data:`MIN_LABELS`.
    planted : int
        Relevant features, between 1 and ``features``.
    seed : int

    Returns
    -------
    tuple of (Path, dict)
        The ARFF file and its side-car: ``spec``, ``relevant`` (the planted features), ``target_names``,
        ``edges``, ``positives_mean`` / ``_min`` / ``_max`` (labels per row after closure), ``label_set_mean``
        (labels written per row); ``write_s`` when written now.
    """
    if not 1 <= planted <= features:
        raise ValueError(f"planted features ({planted}) must be between 1 and the features ({features})")
    if labels < MIN_LABELS:
        raise ValueError(f"the synthetic hierarchy needs at least {MIN_LABELS} labels, not {labels}")
    import pyarrow as pa
    import pyarrow.csv as pacsv

    spec = _spec(rows, features, labels, planted, seed)
    name = f"hmlc_dag_{rows}x{features}_l{labels}_p{planted}_s{seed}"
    arff, truth_path = workdir / f"{name}.arff", workdir / f"{name}.truth.json"
    if arff.exists() and truth_path.exists():
        truth = json.loads(truth_path.read_text())
        if truth.get("spec") == spec:
            return arff, truth
    workdir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    dag = Dag(labels, seed)
    cols = planted_indices(features, planted)
    edges = dag.edges()
    header = [f"% {name}: see {name}.truth.json", f"@RELATION {name}", ""]
    header += [f"@ATTRIBUTE x{i + 1} numeric" for i in range(features)]
    header += [f"@ATTRIBUTE {CLASS} hierarchical " + ",".join(edges), "", "@DATA", ""]
    names = [f"x{i + 1}" for i in range(features)] + [CLASS]
    csv_options = pacsv.WriteOptions(include_header=False, quoting_style="none")
    tmp = arff.with_name(f".{arff.name}.{os.getpid()}.tmp")
    positives, written = [], []
    with open(tmp, "wb") as text:
        text.write("\n".join(header).encode())
        for index, start in enumerate(range(0, rows, CHUNK)):
            rng = np.random.default_rng([seed, 1, index])
            n = min(CHUNK, rows - start)
            X = np.round(rng.uniform(-1.0, 1.0, size=(features, n)), 3).T
            sets, pos = dag.label_sets(dag.walk(X, cols, rng))
            positives.append(pos)
            written.append([s.count("@") + 1 for s in sets])
            table = pa.Table.from_arrays([pa.array(X[:, i]) for i in range(features)] + [pa.array(sets)],
                                         names=names)
            pacsv.write_csv(table, text, write_options=csv_options)
    os.replace(tmp, arff)
    pos = np.concatenate(positives)
    truth = {"spec": spec, "task": "hmlc", "n": rows, "p": features, "kind": "DAG", "labels": labels,
             "edges": len(edges), "relevant": [f"x{i + 1}" for i in cols], "target_names": [CLASS],
             "descriptive": f"1-{features}", "target": str(features + 1),
             "positives_mean": round(float(pos.mean()), 2), "positives_min": int(pos.min()),
             "positives_max": int(pos.max()), "label_set_mean": round(float(np.concatenate(written).mean()), 2),
             "generator": f"x ~ U(-1,1) rounded to 3 decimals; {WALKS} walks per row down the primary tree of a "
                          f"{LEVELS}-level DAG (levels {level_sizes(labels)}, {EXTRA_PARENT:.0%} of the labels with "
                          f"a second parent), each level's child chosen by a planted feature's quantile "
                          f"({NOISE:.0%} random, {STOP:.0%} early stops below level 2)"}
    truth_path.write_text(json.dumps(truth, indent=1))
    return arff, dict(truth, write_s=round(time.perf_counter() - t0, 2))
