"""Parameters of a PCT ensemble and their validation (one-line errors that name the option)."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

ENSEMBLES = ("rf", "bagging", "extra_trees")
SCORES = ("symbolic", "genie3", "rf")


class ParamError(ValueError):
    """An invalid ranking parameter (the message names the option)."""


@dataclass
class EnsembleParams:
    """Ensemble settings; defaults follow the thesis (100 trees, min 2 examples per leaf, RF with sqrt(D)).

    Attributes
    ----------
    ensemble : {'rf', 'bagging', 'extra_trees'}
    trees : int
    scores : list of str
        Any of 'symbolic', 'genie3', 'rf'.
    max_features : str, int or float or None
        Features tried per node: 'sqrt', 'log2', 'all', a count (int >= 1) or a fraction in (0, 1].
        None = the ensemble's default ('sqrt' for rf, 'all' for bagging and extra_trees).
    min_samples_leaf : float
        Minimal (bootstrap-weighted) number of examples in a leaf.
    max_depth : int or None
    bootstrap : bool or None
        None = the ensemble's default (on for rf and bagging, off for extra_trees).
    symbolic_weight : float or None
        None = ``|E(N)|/|E_train|``; a weight w in (0, 1] = ``w ** depth``.
    per_target : bool
    seed : int
    resample_constant : bool
        At a node, skip sampled features that are constant there and draw others (scikit-learn's
        behaviour). Default False: the sampled features are the candidates, as in the thesis and CLUS.
    """

    ensemble: str = "rf"
    trees: int = 100
    scores: list = field(default_factory=lambda: ["symbolic", "genie3", "rf"])
    max_features: object = None
    min_samples_leaf: float = 2.0
    max_depth: int | None = None
    bootstrap: bool | None = None
    symbolic_weight: float | None = None
    per_target: bool = False
    seed: int = 0
    resample_constant: bool = False

    def __post_init__(self):
        if self.ensemble not in ENSEMBLES:
            raise ParamError(f"--ensemble must be one of {', '.join(ENSEMBLES)}, not '{self.ensemble}'")
        if isinstance(self.scores, str):
            self.scores = [s.strip() for s in self.scores.split(",") if s.strip()]
        bad = [s for s in self.scores if s not in SCORES]
        if bad or not self.scores:
            raise ParamError(f"--scores must be a comma list of {', '.join(SCORES)}, not '{','.join(self.scores)}'")
        if not isinstance(self.trees, int) or isinstance(self.trees, bool) or self.trees < 1:
            raise ParamError(f"--trees must be a positive integer, not {self.trees!r}")
        if not self.min_samples_leaf >= 1:
            raise ParamError(f"--min-samples-leaf must be >= 1, not {self.min_samples_leaf!r}")
        if self.max_depth is not None and self.max_depth < 0:
            raise ParamError(f"--max-depth must be >= 0, not {self.max_depth!r}")
        if self.symbolic_weight is not None and not 0 < self.symbolic_weight <= 1:
            raise ParamError(f"--symbolic-weight must be in (0, 1], not {self.symbolic_weight!r}")
        if self.bootstrap is None:
            self.bootstrap = self.ensemble != "extra_trees"
        self.max_features = _parse_max_features(self.max_features)

    @property
    def splitter(self) -> str:
        return "random" if self.ensemble == "extra_trees" else "best"

    def features_per_node(self, n_features: int) -> int:
        """Resolve ``max_features`` for D features (at least 1, at most D)."""
        mf = self.max_features
        if mf is None:
            mf = "sqrt" if self.ensemble == "rf" else "all"
        if mf == "all":
            k = n_features
        elif mf == "sqrt":
            k = math.ceil(math.sqrt(n_features))
        elif mf == "log2":
            k = math.ceil(math.log2(n_features)) if n_features > 1 else 1
        elif isinstance(mf, float):
            k = math.ceil(mf * n_features)
        else:
            k = int(mf)
        return max(1, min(n_features, k))

    def effective_scores(self) -> list:
        """Scores that can be computed: the RF score needs out-of-bag rows, i.e. bootstrapping."""
        return [s for s in self.scores if s != "rf" or self.bootstrap]

    def to_dict(self) -> dict:
        return asdict(self)


def _parse_max_features(mf):
    if mf is None or mf in ("sqrt", "log2", "all"):
        return mf
    if isinstance(mf, str):
        try:
            mf = float(mf) if any(c in mf for c in ".eE") else int(mf)
        except ValueError:
            raise ParamError(f"--max-features must be sqrt, log2, all, a count or a fraction, not '{mf}'")
    if isinstance(mf, bool):
        raise ParamError(f"--max-features must be sqrt, log2, all, a count or a fraction, not {mf!r}")
    if isinstance(mf, float):
        if mf.is_integer() and mf > 1:
            return int(mf)
        if not 0 < mf <= 1:
            raise ParamError(f"--max-features as a fraction must be in (0, 1], not {mf}")
        return mf
    if isinstance(mf, int):
        if mf < 1:
            raise ParamError(f"--max-features as a count must be >= 1, not {mf}")
        return mf
    raise ParamError(f"--max-features must be sqrt, log2, all, a count or a fraction, not {mf!r}")
