"""What Relief works on, set up the same way by both modes (no Spark).

Sketch
------
Relief's input is a set of blocks of rows (dicts of arrays: scaled features ``X``, targets ``Y``, content
``keys``): one block holding every row in broadcast mode, the encoded Spark partitions in tall mode. Both
modes run the same steps on their blocks; only how the per-block results are combined differs (a local
call, or a Spark reduce):

1. :func:`select_rows`: supervised runs drop rows without any known target; semi-supervised runs keep them
   as unlabelled rows; unsupervised runs use every row.
2. :func:`summarize` (mergeable): rows, labelled rows, and the target type's summary (ranges, class
   counts, HMLC final labels).
3. :meth:`ReliefSetup.target`: the target type's Relief target for a block, encoded against the summary of
   all blocks; :func:`encode_targets` adds its matrix ``Yt`` and the class per row.
4. Semi-supervised runs (thesis Alg. 3.2): every unlabelled row's d_X to its nearest labelled row
   (:func:`labelled_distances`) and its influence, the line through (largest distance, w0) and (smallest,
   w1) (:func:`influence_from_distances`); labelled rows have influence 1.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..tasks import TaskError
from .distances import nearest_labelled_distance


class RowCounts:
    """``n_rows`` and ``n_features`` of a record whose ``X`` is (rows, features) (ReliefData, ReliefEData)."""

    @property
    def n_rows(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]


@dataclass
class ReliefData(RowCounts):
    """Arrays for broadcast mode's kernel (every row).

    Attributes
    ----------
    X : float64 (n, D)
    keys : uint64 (n,)
    target : ReliefTarget
    nominal : bool (D,)
    n_values : float64 (D,)
    labelled : bool (n,)
    influence : float64 (n,)
    """

    X: np.ndarray
    keys: np.ndarray
    target: object
    nominal: np.ndarray
    n_values: np.ndarray
    labelled: np.ndarray
    influence: np.ndarray

    def block(self, rows: np.ndarray | None = None) -> dict:
        """The rows (all, not copied, by default) as a block (the fields of :data:`spark_fr.relief.dense.Rows`)."""
        t = self.target
        classes = np.asarray(t.classes if t.classes is not None else np.zeros(self.n_rows), np.float64)
        out = {"X": self.X, "keys": self.keys, "Yt": t.values, "labelled": self.labelled,
               "influence": self.influence, "classes": classes}
        return {name: np.ascontiguousarray(v if rows is None else v[rows]) for name, v in out.items()}


def labelled_rows(Y: np.ndarray) -> np.ndarray:
    """Rows with at least one known target value (every row when there is no target)."""
    if Y.shape[1] == 0:
        return np.ones(Y.shape[0], bool)
    return ~np.all(np.isnan(Y), axis=1)


def select_rows(block: dict, supervised: bool, semi_supervised: bool) -> dict:
    """Step 1: the rows Relief uses, with ``labelled`` (X, Y, keys, labelled)."""
    m = block["keys"].size
    lab = labelled_rows(block["Y"]) if supervised else np.ones(m, bool)
    keep = lab if supervised and not semi_supervised else np.ones(m, bool)
    return {"X": np.ascontiguousarray(block["scaled"][keep]), "Y": block["Y"][keep], "keys": block["keys"][keep],
            "labelled": lab[keep]}


@dataclass
class BlockSummary:
    """Step 2: rows, labelled rows and the target summary of some blocks (merges in any order)."""

    n_rows: int
    n_labelled: int
    targets: object

    def merge(self, other: "BlockSummary") -> "BlockSummary":
        self.n_rows += other.n_rows
        self.n_labelled += other.n_labelled
        if self.targets is not None:
            self.targets.merge(other.targets)
        return self


@dataclass
class ReliefSetup:
    """What every block needs to know about the run (shipped to Spark tasks in tall mode).

    Attributes
    ----------
    target_type : TargetType
    params : ReliefParams
    semi_supervised : bool
        ``--semi-supervised`` was given.
    nominal, n_values : ndarray (D,)
        Feature types and category counts.
    n_classes : int
        Classes of a classification target (0 otherwise).
    hierarchy : Hierarchy or None
    """

    target_type: object
    params: object
    semi_supervised: bool
    nominal: np.ndarray
    n_values: np.ndarray
    n_classes: int = 0
    hierarchy: object = None

    def select(self, block: dict) -> dict:
        return select_rows(block, self.target_type.supervised, self.semi_supervised)

    def summarize(self, block: dict) -> BlockSummary:
        tt = self.target_type
        targets = tt.summarize(block["Y"], self.hierarchy, self.n_classes) if tt.supervised else None
        return BlockSummary(int(block["keys"].size), int(block["labelled"].sum()), targets)

    def uses_influence(self, summary: BlockSummary) -> bool:
        """Whether the run is really semi-supervised: some rows are unlabelled (and the task has targets)."""
        return self.semi_supervised and self.target_type.supervised and summary.n_labelled < summary.n_rows

    def target(self, Y: np.ndarray, summary: BlockSummary):
        """Step 3: the Relief target of rows ``Y`` (a :class:`TaskError` becomes an :class:`InputError`)."""
        try:
            return self.target_type.relief_target(Y, self.params, summary=summary.targets,
                                                  semi_supervised=self.uses_influence(summary),
                                                  n_classes=self.n_classes or None, hierarchy=self.hierarchy)
        except TaskError as err:
            raise InputError(str(err)) from None


def check_rows(summary: BlockSummary, setup: ReliefSetup) -> None:
    """Relief needs two rows with known targets, and some labelled rows when semi-supervised."""
    if setup.semi_supervised and setup.target_type.supervised and summary.n_labelled == 0:
        raise InputError("--semi-supervised needs some rows with known targets (use --task unsupervised)")
    if summary.n_rows < 2:
        raise InputError("Relief needs at least two rows with known targets")


def encode_targets(block: dict, target) -> dict:
    """Step 3: the block with the target matrix ``Yt`` and the class of every row (NaN = none)."""
    classes = target.classes if target.classes is not None else np.zeros(block["keys"].size)
    return {"X": block["X"], "keys": block["keys"], "Yt": np.ascontiguousarray(target.values),
            "labelled": block["labelled"], "influence": np.ones(block["keys"].size),
            "classes": np.asarray(classes, np.float64)}


def labelled_distances(block: dict, labelled_X: np.ndarray, nominal, n_values) -> np.ndarray:
    """Step 4: d_X from each unlabelled row of the block to its nearest labelled row (NaN for labelled rows)."""
    unl = np.flatnonzero(~block["labelled"])
    d = np.full(block["keys"].size, np.nan)
    if unl.size:
        allx = np.vstack([block["X"], labelled_X])
        lab_rows = np.arange(block["X"].shape[0], allx.shape[0])
        d[unl] = nearest_labelled_distance(allx, unl, lab_rows, nominal, n_values)
    return d


def influence_from_distances(d: np.ndarray, w0: float, w1: float, lo: float | None = None,
                             hi: float | None = None) -> np.ndarray:
    """Influence of unlabelled rows from their distance to the labelled data (farthest w0, closest w1).

    ``lo`` and ``hi`` are the smallest and largest such distance over all unlabelled rows (default: over
    ``d``; given when ``d`` holds one block of them).
    """
    if d.size == 0:
        return d
    lo = float(d.min()) if lo is None else float(lo)
    hi = float(d.max()) if hi is None else float(hi)
    if hi - lo <= 0:
        return np.full(d.size, w1)
    return w1 + (d - lo) * (w0 - w1) / (hi - lo)


def with_influence(block: dict, d: np.ndarray, lo: float, hi: float, influence: tuple) -> dict:
    """Step 4: the block with the influence of its unlabelled rows set from their distances ``d``."""
    unl = ~block["labelled"]
    out = dict(block)
    out["influence"] = np.ones(block["keys"].size)
    out["influence"][unl] = influence_from_distances(d[unl], influence[0], influence[1], lo=lo, hi=hi)
    return out


def distance_range(d: np.ndarray) -> tuple:
    """(smallest, largest) known distance of a block ((inf, -inf) if none)."""
    return float(np.nanmin(d, initial=np.inf)), float(np.nanmax(d, initial=-np.inf))


def build_relief_data(encoded_block: dict, setup: ReliefSetup) -> tuple:
    """Broadcast mode: the steps of the module sketch on one block holding every row.

    Parameters
    ----------
    encoded_block : dict
        ``scaled`` features, targets ``Y`` and content ``keys`` of all rows (canonical order).
    setup : ReliefSetup

    Returns
    -------
    (ReliefData, target summary of the rows used, number of rows dropped)
    """
    block = setup.select(encoded_block)
    summary = setup.summarize(block)
    check_rows(summary, setup)
    target = setup.target(block["Y"], summary)
    rblock = encode_targets(block, target)
    if setup.uses_influence(summary):
        d = labelled_distances(rblock, rblock["X"][rblock["labelled"]], setup.nominal, setup.n_values)
        lo, hi = distance_range(d)
        rblock = with_influence(rblock, d, lo, hi, setup.params.influence)
    data = ReliefData(rblock["X"], rblock["keys"], target, np.asarray(setup.nominal, bool),
                      np.asarray(setup.n_values, np.float64), rblock["labelled"], rblock["influence"])
    return data, summary, int(encoded_block["keys"].size - block["keys"].size)
