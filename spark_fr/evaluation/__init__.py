"""Evaluating rankings: how similar two rankings are (the Fuzzy Jaccard Index), how rankings move between runs.

* :mod:`spark_fr.evaluation.similarity`: the Fuzzy Jaccard Index (FJI, thesis section 8) of two rankings, its
  curve over the top-k sets and the area under it (NumPy only).
* :mod:`spark_fr.evaluation.drift`: drift between runs of a rankings table (rank changes, features entering or
  leaving the top k, FJI curves, a heat map of ranks over runs).
"""
from .similarity import fji_area, fuzzy_jaccard_curve

__all__ = ["fuzzy_jaccard_curve", "fji_area"]
