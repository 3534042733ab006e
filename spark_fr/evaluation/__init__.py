"""Evaluating rankings: is a ranking worth reading (the thesis's protocols), how similar two rankings are (the Fuzzy
Jaccard Index), how rankings move between runs.

* :func:`evaluate` (:mod:`spark_fr.evaluation.run`): rank the training part of every split with
  :func:`spark_fr.rank`, judge each ranking by weighted kNN on the test part against the uniform baseline
  (:mod:`.protocol`, :mod:`.knn`, :mod:`.metrics`), with statistics (:mod:`.statistics`), top-f curves
  (:mod:`.curves`) and plots (:mod:`.plots`); :func:`evaluate_suite` runs every shared dataset of a kind and
  compares over datasets. ``jobs/evaluate.py`` is its command line (:mod:`.job`).
* :mod:`spark_fr.evaluation.similarity`: the Fuzzy Jaccard Index (FJI, thesis section 8) of two rankings, its
  curve over the top-k sets and the area under it (NumPy only).
* :mod:`spark_fr.evaluation.drift`: drift between runs of a rankings table (rank changes, features entering or
  leaving the top k, FJI curves, a heat map of ranks over runs).
"""
from .similarity import fji_area, fuzzy_jaccard_curve

__all__ = ["evaluate", "evaluate_suite", "Evaluation", "fuzzy_jaccard_curve", "fji_area"]


def __getattr__(name):
    # the protocols import the readers and the kernels: on first use only
    if name in ("evaluate", "evaluate_suite"):
        from . import run

        return getattr(run, name)
    if name == "Evaluation":
        from .results import Evaluation

        return Evaluation
    raise AttributeError(name)
