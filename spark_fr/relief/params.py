"""Parameters of a Relief run and their validation (one-line errors that name the option)."""
from __future__ import annotations

from dataclasses import asdict, dataclass

from ..tasks import HMLC_NORMALISERS, MLC_DISTANCES

MODES = ("auto", "broadcast", "tall")


class ReliefParamError(ValueError):
    """An invalid Relief parameter (the message names the option)."""


@dataclass
class ReliefParams:
    """Relief settings.

    Attributes
    ----------
    neighbours : int
        k, the number of nearest neighbours (per class for ReliefF). Default 15 (the thesis' choice for
        MTR, MLC and HMLC).
    iterations : int or float
        m: an int is a number of sampled instances; a float in (0, 1] is a fraction of the rows (1.0 = all
        rows, the default: every row is used once, the most accurate estimate).
    sigma : float
        Neighbour weights ``exp(-(sigma * rank)^2)``; 0 = equal weights (default).
    target_distance : str
        MLC target distance: hamming, jaccard, f1 (default) or subset.
    influence : tuple of float
        (w0, w1) of semi-supervised Relief: an unlabelled row's influence goes linearly from w0 (the row
        farthest from the labelled data) to w1 (the closest); labelled rows have influence 1.
    hmlc_w0 : float
        Hierarchy weight factor: w(label) = w0 * mean(w(parents)), top-level labels 1.
    hmlc_squared : bool
        HMLC target distance without the square root (as CLUS computes it).
    hmlc_normaliser : str
        What the HMLC distance is divided by (see :func:`spark_fr.tasks.relief_target`): 'data' (the
        largest distance between the closures of two most specific labels of the training rows; default),
        'hierarchy' (the same over all labels of the hierarchy, the thesis' definition) or 'sum' (the
        distance between the full label set and the empty one, a cheap upper bound).
    shards : int
        The sampled instances are cut into this many shards; each shard's weights estimate the same
        quantity from fewer instances, and ``importance_std`` is their spread.
    mode : str
        'broadcast' (the data is broadcast, instances sharded over tasks), 'tall' (instances broadcast, data
        partitions scanned for candidate neighbours) or 'auto' (broadcast up to ``broadcast_limit`` values).
    broadcast_limit : int
        Rows x features above which 'auto' picks tall mode.
    per_target : bool
        Also rank per target (MTR, MLC).
    seed : int
    """

    neighbours: int = 15
    iterations: object = 1.0
    sigma: float = 0.0
    target_distance: str = "f1"
    influence: tuple = (0.5, 1.0)
    hmlc_w0: float = 0.75
    hmlc_squared: bool = False
    hmlc_normaliser: str = "data"
    shards: int = 16
    mode: str = "auto"
    broadcast_limit: int = 50_000_000
    per_target: bool = False
    seed: int = 0

    def __post_init__(self):
        if isinstance(self.neighbours, bool) or not isinstance(self.neighbours, int) or self.neighbours < 1:
            raise ReliefParamError(f"--relief-neighbours must be a positive integer, not {self.neighbours!r}")
        self.iterations = parse_iterations(self.iterations)
        if not self.sigma >= 0:
            raise ReliefParamError(f"--relief-sigma must be >= 0, not {self.sigma!r}")
        if self.target_distance not in MLC_DISTANCES:
            raise ReliefParamError(f"--relief-target-distance must be one of {', '.join(MLC_DISTANCES)}, "
                                   f"not '{self.target_distance}'")
        if isinstance(self.influence, str):
            try:
                self.influence = tuple(float(v) for v in self.influence.split(","))
            except ValueError:
                raise ReliefParamError(f"--relief-influence must be 'w0,w1', not '{self.influence}'") from None
        w = tuple(self.influence)
        if len(w) != 2 or not (0 <= w[0] <= w[1] <= 1):
            raise ReliefParamError(f"--relief-influence must be w0,w1 with 0 <= w0 <= w1 <= 1, not {self.influence}")
        self.influence = (float(w[0]), float(w[1]))
        if not 0 < self.hmlc_w0 <= 1:
            raise ReliefParamError(f"--hmlc-w0 must be in (0, 1], not {self.hmlc_w0!r}")
        if self.hmlc_normaliser not in HMLC_NORMALISERS:
            raise ReliefParamError(f"--relief-hmlc-normaliser must be one of {', '.join(HMLC_NORMALISERS)}, "
                                   f"not '{self.hmlc_normaliser}'")
        if self.mode not in MODES:
            raise ReliefParamError(f"--relief-mode must be one of {', '.join(MODES)}, not '{self.mode}'")
        if not isinstance(self.shards, int) or self.shards < 1:
            raise ReliefParamError(f"relief shards must be a positive integer, not {self.shards!r}")

    def n_iterations(self, n_rows: int) -> int:
        """m for ``n_rows`` rows (at least 1, at most n_rows)."""
        m = self.iterations
        if isinstance(m, float):
            m = int(round(m * n_rows))
        return max(1, min(int(m), n_rows))

    def to_dict(self) -> dict:
        d = asdict(self)
        d["influence"] = list(self.influence)
        return d


def parse_iterations(value):
    """m as given: an int count, or a float fraction in (0, 1] ('1.0' and 1.0 mean all rows, '1' one row)."""
    if isinstance(value, bool):
        raise ReliefParamError(f"--relief-iterations must be a count or a fraction, not {value!r}")
    if isinstance(value, str):
        text = value.strip()
        try:
            value = float(text) if any(c in text for c in ".eE") else int(text)
        except ValueError:
            raise ReliefParamError(f"--relief-iterations must be a count or a fraction, not '{value}'") from None
    if isinstance(value, float):
        if value.is_integer() and value > 1:
            return int(value)
        if not 0 < value <= 1:
            raise ReliefParamError(f"--relief-iterations as a fraction must be in (0, 1], not {value}")
        return value
    if isinstance(value, int):
        if value < 1:
            raise ReliefParamError(f"--relief-iterations as a count must be >= 1, not {value}")
        return value
    raise ReliefParamError(f"--relief-iterations must be a count or a fraction, not {value!r}")
