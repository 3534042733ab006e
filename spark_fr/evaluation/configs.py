"""The rankings an evaluation compares: named configurations of :func:`spark_fr.rank` (no Spark here).

A name is ``<score>-<ensemble>`` for the PCT ensembles (the thesis's and the HMLC paper's pairs), a Relief method,
or an outside baseline:

==========================  ============================================================
``genie3-rf``               Genie3 of a random forest of PCTs
``symbolic-rf``             Symbolic of a random forest
``rf-rf``                   the RF (out-of-bag permutation) score of a random forest
``genie3-bagging``, ``symbolic-bagging``, ``rf-bagging``      the same of bagging
``genie3-extra_trees``, ``symbolic-extra_trees``              of extra trees
``rf-extra_trees``          the RF score of extra trees: only with bootstrapping (the unsupervised default, or
                            ``--bootstrap``), else spark_fr.rank refuses it (no out-of-bag rows); not in ``all``
``relief``                  the Relief family for the task (``--method relief``; URelief for unsupervised)
``reliefe``                 ReliefE (``--method reliefe``) with the paper's headline settings (spark_fr's defaults:
                            k = 15, the standard update, |nu| = 2048, TwoNN's dimension, UMAP when umap-learn is
                            installed); classification and MLC only; not in ``all``
``reliefe-absmean-adaptive``  the paper's highlighted variant: ``--reliefe-update absmean --reliefe-k adaptive``;
                            not in ``all``
``multisurf``               scikit-rebate's MultiSURF (:mod:`spark_fr.evaluation.multisurf`): the ReliefE paper's
                            Relief peer, an outside ranking computed in the evaluation on each split's training
                            rows; classification only; not in ``all``
``laplace``                 the Laplacian Score (He et al. 2005, :mod:`spark_fr.evaluation.laplace`): an outside
                            unsupervised baseline computed in the evaluation, not by spark_fr.rank; not in ``all``
``all``                     every spark_fr ranking above that runs on any task (not ``rf-extra_trees``, the
                            ReliefE ones, ``multisurf``, ``laplace``)
==========================  ============================================================

Configurations that share an ensemble (the same keywords but for their one score) are computed by one
:func:`spark_fr.rank` call asking for all their scores (:func:`rank_calls`): a tree ensemble's trees do not depend on
which scores are computed from them (each score draws from its own random stream,
:class:`spark_fr.runtime.rng.Stream`), so ``genie3-rf`` is the same ranking whether or not ``rf-rf`` is asked for
too, at a third of the cost.

The Laplacian Score sees the training rows' features only (scaled to [0, 1] by their range, as the kNN judge sees
them), whatever the task; ``{name: {'method': 'laplace', 'neighbours': k, 'width': t}}`` sets its graph (default k = 5,
t = 1, scikit-feature's heat-kernel settings). MultiSURF sees the training rows' features in their own units (skrebate
scales them itself) and their classes; ``{name: {'method': 'multisurf', 'max_rows': n}}`` raises its row limit
(:data:`spark_fr.evaluation.multisurf.MAX_ROWS`, an n x n distance matrix).

Python callers may also pass ``{name: {rank() keywords}}`` for rankings of their own (e.g.
``{'genie3-et-log2': {'ensemble': 'extra_trees', 'scores': ['genie3'], 'max_features': 'log2'}}``); one score
each, they share their ensemble's call by the same rule. :func:`with_ensemble_options` gives the named
configurations of one ensemble settings of a protocol's own (the HMLC suite's extra trees with sqrt(D) features
per node, :mod:`spark_fr.evaluation.suite`).
"""
from __future__ import annotations

from ..errors import InputError
from .laplace import NEIGHBOURS, WIDTH
from .multisurf import MAX_ROWS

ENSEMBLES = ("rf", "bagging", "extra_trees")
#: the named configurations: name -> rank() keywords of one score
NAMED = {f"{score}-{ens}": {"method": "ensemble", "ensemble": ens, "scores": [score]}
         for ens in ENSEMBLES for score in ("genie3", "symbolic", "rf")}
NAMED["relief"] = {"method": "relief"}
NAMED["reliefe"] = {"method": "reliefe"}
NAMED["reliefe-absmean-adaptive"] = {"method": "reliefe", "reliefe_update": "absmean", "reliefe_k": "adaptive"}
NAMED["multisurf"] = {"method": "multisurf"}
NAMED["laplace"] = {"method": "laplace"}
#: what ``all`` names: the spark_fr rankings that run on every task (rf-extra_trees needs bootstrapping; ReliefE is
#: for classification and MLC; MultiSURF and the Laplacian Score are outside rankings)
ALL = tuple(n for n in NAMED if n not in ("rf-extra_trees", "reliefe", "reliefe-absmean-adaptive", "multisurf",
                                          "laplace"))
#: rankings computed in the evaluation itself, not by spark_fr.rank: method -> their keywords (with defaults)
LOCAL_METHODS = {"laplace": {"neighbours": NEIGHBOURS, "width": WIDTH}, "multisurf": {"max_rows": MAX_ROWS}}
#: the baselines every evaluation adds: equal weights (the thesis's non-informed ranking), a random order (the
#: unsupervised protocol's top-16 baseline)
BASELINES = ("uniform", "random")
#: the default rankings of the job
DEFAULT = ("genie3-rf", "symbolic-rf", "rf-bagging", "relief")


def resolve_rankings(rankings) -> dict:
    """{name: rank() keywords} of the requested rankings (names, 'all', or a dict of custom ones).

    Raises
    ------
    InputError
        An unknown name (with the known ones), a baseline's name, or an empty list.
    """
    if rankings is None:
        rankings = DEFAULT
    if isinstance(rankings, dict):
        out = {}
        for name, kw in rankings.items():
            if name in BASELINES:
                raise InputError(f"'{name}' is a baseline every evaluation adds; give the ranking another name")
            if kw is None and name in NAMED:
                kw = NAMED[name]
            if not isinstance(kw, dict):
                raise InputError(f"ranking '{name}': give a dict of spark_fr.rank keywords, not {type(kw).__name__}")
            _check_local(name, kw)
            out[str(name)] = dict(kw)
        if not out:
            raise InputError("no ranking to evaluate")
        return out
    names = [rankings] if isinstance(rankings, str) else list(rankings)
    names = [n.strip() for item in names for n in str(item).split(",") if n.strip()]
    if not names:
        raise InputError("--rankings needs at least one name")
    out = {}
    for n in names:
        if n == "all":
            out.update({k: dict(NAMED[k]) for k in ALL})
        elif n in NAMED:
            out[n] = dict(NAMED[n])
        elif n in BASELINES:
            raise InputError(f"--rankings: '{n}' is a baseline every evaluation adds; name rankings only")
        else:
            raise InputError(f"--rankings: unknown ranking '{n}'; expected {', '.join(NAMED)} or all")
    return out


def with_ensemble_options(configs: dict, options: dict, given=()) -> dict:
    """``configs`` with ``options[ensemble]`` (rank() keywords) added to every ensemble configuration of that ensemble.

    Keywords a configuration sets itself, and those in ``given`` (the options the caller passes to every ranking),
    are kept: a setting of the command line wins over a protocol's.
    """
    out = {}
    for name, kw in configs.items():
        kw = dict(kw)
        extra = options.get(kw.get("ensemble")) if kw.get("method", "ensemble") == "ensemble" else None
        for k, v in (extra or {}).items():
            if k not in kw and k not in given:
                kw[k] = v
        out[name] = kw
    return out


def _check_local(name: str, kw: dict) -> None:
    """A ranking computed in the evaluation takes its own keywords only (one-line error otherwise)."""
    method = kw.get("method")
    if method not in LOCAL_METHODS:
        return
    unknown = sorted(set(kw) - {"method"} - set(LOCAL_METHODS[method]))
    if unknown:
        raise InputError(f"ranking '{name}': the {method} ranking takes {', '.join(LOCAL_METHODS[method])}, not "
                         f"{', '.join(unknown)}")


def local_keywords(kw: dict) -> dict:
    """The keywords of a ranking computed in the evaluation, defaults filled in."""
    return {**LOCAL_METHODS[kw["method"]], **{k: v for k, v in kw.items() if k != "method"}}


def rank_calls(configs: dict) -> list:
    """The :func:`spark_fr.rank` calls that compute ``configs``: [(keywords, {score: ranking name})].

    Ensemble configurations of one score whose other keywords are equal become one call with the union of their
    scores (the first configuration of a score keeps it when two ask for the same); every other configuration is
    a call of its own (its first score, or the method's only one, names it).
    """
    calls: dict = {}
    singles = []
    for name, kw in configs.items():
        scores = kw.get("scores")
        if kw.get("method") == "ensemble" and isinstance(scores, (list, tuple)) and len(scores) == 1:
            rest = {k: v for k, v in kw.items() if k != "scores"}
            key = repr(sorted(rest.items()))
            entry = calls.setdefault(key, ({**rest, "scores": []}, {}))
            if scores[0] not in entry[1]:
                entry[0]["scores"].append(scores[0])
                entry[1][scores[0]] = name
                continue
        singles.append((dict(kw), {None: name}))
    return list(calls.values()) + singles
