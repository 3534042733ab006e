"""Parameters of a PCT ensemble: the ensemble options of :mod:`spark_fr.options`, and what follows from them.

Defaults follow the thesis (100 random-forest trees, at least 2 examples per leaf, sqrt(D) features per
node). Bootstrapping defaults to on for rf and bagging and off for extra trees; the RF score needs it.
"""
from __future__ import annotations

import logging
import math

from ..errors import InputError
from ..options import MethodParams
from .patches import patch_size

log = logging.getLogger(__name__)


#: the defaults of the options whose default depends on the task (a target type's ``ensemble_defaults``
#: replaces them; see conf/defaults.yaml)
GENERAL_DEFAULTS = {"ensemble": "rf", "trees": 100, "scores": ["symbolic", "genie3", "rf"], "max_features": None,
                    "bootstrap": None, "cv_folds": 0}


def features_per_node(max_features, n_features: int) -> int:
    """``--max-features`` (sqrt, log2, all, a count or a fraction) resolved for D features (1 <= k <= D)."""
    mf = max_features
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


class EnsembleParams(MethodParams):
    """Ensemble settings; attributes as in :mod:`spark_fr.options` (``ensemble``, ``trees``, ``scores``,
    ``per_target``, ``max_features``, ``min_samples_leaf``, ``max_depth``, ``bootstrap``,
    ``resample_constant``, ``missing``, ``symbolic_weight``, ``ssl_weight``, ``seed``).

    Options the user leaves unset take the general defaults (:data:`GENERAL_DEFAULTS`) until the task is
    known; :meth:`for_task` then applies the target type's recommended settings to them.
    """

    method = "ensemble"

    def _derive(self) -> None:
        self.unset = sorted(k for k in GENERAL_DEFAULTS if getattr(self, k) is None)
        for k in self.unset:
            value = GENERAL_DEFAULTS[k]
            setattr(self, k, list(value) if isinstance(value, list) else value)
        if self.bootstrap is None:
            self.bootstrap = self.ensemble != "extra_trees"

    def for_task(self, target_type) -> "EnsembleParams":
        """These parameters with the target type's ``ensemble_defaults`` for the options left unset."""
        values = {k: v for k, v in self.to_dict().items() if k not in self.unset}
        values.update({k: v for k, v in target_type.ensemble_defaults.items() if k in self.unset})
        out = EnsembleParams(**values)
        out.unset = self.unset
        out.check()
        return out

    def check(self) -> None:
        """The RF score needs out-of-bag rows: asked for explicitly without bootstrapping, it is an error; by
        default it is left out. Something must remain."""
        scores = self.effective_scores()
        if "rf" in self.scores and "rf" not in scores:
            if "scores" not in self.unset:
                raise InputError(f"--scores rf needs out-of-bag rows, and {self.ensemble} without bootstrapping "
                                 f"has none: add --bootstrap or leave rf out of --scores")
            log.info("the RF score is not computed: %s without bootstrapping has no out-of-bag rows",
                     self.ensemble)
        if not scores:
            raise InputError("no score left to compute: the RF score needs bootstrapping (--bootstrap)")

    def patch_size(self, n_features: int) -> int | None:
        """Features of each tree's random patch (None: every tree sees all ``n_features``)."""
        return patch_size(self.max_features_per_tree, n_features)

    @property
    def splitter(self) -> str:
        return "random" if self.ensemble == "extra_trees" else "best"

    def features_per_node(self, n_features: int) -> int:
        """Resolve ``max_features`` for D features (at least 1, at most D)."""
        mf = self.max_features
        if mf is None:
            mf = "sqrt" if self.ensemble == "rf" else "all"
        return features_per_node(mf, n_features)

    def effective_scores(self) -> list:
        """Scores that can be computed: the RF score needs out-of-bag rows, i.e. bootstrapping."""
        return [s for s in self.scores if s != "rf" or self.bootstrap]


#: boosting's defaults for the options shared with the ensembles (spec methods-papers.md Sec. 2.3: the ISMIS
#: paper's 50 trees; its grid had depth {2, 4, 6, 8}, depth > 2 being enough; it found sqrt(D) features per
#: node too few, so every feature is tried)
BOOSTING_DEFAULTS = {"trees": 50, "scores": ["symbolic", "genie3"], "max_features": "all", "max_depth": 4,
                     "cv_folds": 0}


class BoostingParams(MethodParams):
    """Gradient boosting settings; attributes as in :mod:`spark_fr.options` (``trees`` = rounds, ``scores``,
    ``max_features``, ``min_samples_leaf``, ``max_depth``, ``resample_constant``, ``symbolic_weight``,
    ``max_broadcast_mb``, ``shrinkage``, ``example_fraction``, ``leaf_values``, ``seed``).

    Options left unset take :data:`BOOSTING_DEFAULTS` (``--shrinkage`` 0.05 and ``--example-fraction`` 0.8
    are the options' own defaults; see :mod:`spark_fr.ensemble.boosting` for why).
    """

    method = "boosting"

    def _derive(self) -> None:
        self.unset = sorted(k for k in BOOSTING_DEFAULTS if getattr(self, k) is None)
        for k in self.unset:
            value = BOOSTING_DEFAULTS[k]
            setattr(self, k, list(value) if isinstance(value, list) else value)

    def check(self) -> None:
        """Boosting has Symbolic and Genie3 only: a boosted model has no out-of-bag rows of its own."""
        if "rf" in self.scores:
            raise InputError("--scores rf is not available with --method boosting (the rounds are fitted on "
                             "each other's residuals, there is no out-of-bag error to permute); use symbolic,genie3")

    def features_per_node(self, n_features: int) -> int:
        """Resolve ``max_features`` for D features (at least 1, at most D)."""
        return features_per_node(self.max_features, n_features)
