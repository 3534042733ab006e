"""Hierarchical multi-label classification (HMLC): one column of label sets over a tree or DAG hierarchy.

Sketch
------
* Inference: a Clus ``hierarchical`` class attribute (or a string column given a ``hierarchy=``).
* Encoding: a row's most specific labels (joined by ``@``) become a 0/1 row over all labels of the
  hierarchy, closed under ancestors (:meth:`spark_fr.hierarchy.Hierarchy.label_matrix`); an unlabelled
  row (``?``, empty, ``root``) is a row of NaN.
* Relief: the weighted Euclidean distance ``sqrt(sum_j w_j (s1_j - s2_j)^2)`` with the hierarchy weights
  ``w(l) = w0 * mean(w(parents))`` (``--hmlc-w0``), divided by a normaliser (``--relief-hmlc-normaliser``):
  'data' (default) its largest value between the closures of two labels that are the most specific label
  of some training row, 'hierarchy' the same over all labels (the thesis), 'sum' the distance between all
  labels and none (``sqrt(sum_j w_j)``, a bound that holds for any two rows). Trees take one O(L) pass,
  DAGs a blockwise pairwise computation. ``--relief-hmlc-squared`` drops the square root, as CLUS does.
  No per-label Relief ranking.
* Ensembles: not yet (the issue "PCT ensembles for hierarchies, partial labels and no labels").
"""
from __future__ import annotations

import numpy as np

from .base import ReliefTarget, TargetEncoder, TargetType, TaskError
from .distances import T_HMLC, T_HMLC_SQUARED


class HierarchyEncoder(TargetEncoder):
    """The ancestor-closed 0/1 label matrix of a column of '@'-joined label sets."""

    def __init__(self, hierarchy):
        super().__init__(list(hierarchy.labels), [None])
        self.hierarchy = hierarchy

    def encode(self, columns, n_rows):
        return np.asarray(self.hierarchy.label_matrix(columns[0]), dtype=np.float64)

    def label_weights(self, w0):
        return np.asarray(self.hierarchy.weights(w0), np.float64)


class HMLC(TargetType):
    """Label sets over a hierarchy (see the module docstring)."""

    name = "hmlc"
    inference_priority = 10
    methods = frozenset({"relief"})

    def claims(self, columns, labels_xml):
        return any(c.kind == "hierarchical" for c in columns)

    def check(self, columns):
        if len(columns) != 1 or columns[0].kind != "hierarchical":
            raise TaskError("HMLC needs a label hierarchy: one Clus 'hierarchical' class attribute, or a string "
                            "column of '@'-joined labels with hierarchy=")

    def encoder(self, columns, hierarchy=None):
        if hierarchy is None:
            raise TaskError("HMLC needs a label hierarchy")
        return HierarchyEncoder(hierarchy)

    def summarize(self, Y, hierarchy=None, n_classes=0):
        summary = super().summarize(Y, hierarchy, n_classes)
        Y = np.asarray(Y, dtype=np.float64)
        if hierarchy is not None and Y.size:
            rows = ~np.isnan(Y).any(axis=1)
            if rows.any():
                summary.finals = set(int(i) for i in hierarchy.final_labels(Y[rows]))
        return summary

    def relief_target(self, Y, params, *, summary=None, semi_supervised=False, n_classes=None, hierarchy=None):
        if hierarchy is None:
            raise TaskError("HMLC needs a label hierarchy")
        Y = np.asarray(Y, dtype=np.float64)
        summary = summary or self.summarize(Y, hierarchy)
        squared = bool(params.hmlc_squared)
        w = np.asarray(hierarchy.weights(params.hmlc_w0), np.float64)
        if params.hmlc_normaliser == "sum":
            norm = float(w.sum()) if squared else float(np.sqrt(w.sum()))
        else:
            labels = sorted(summary.finals) if params.hmlc_normaliser == "data" else range(len(hierarchy.labels))
            norm = hierarchy.max_pair_distance(labels, w, squared=squared)
        kind = T_HMLC_SQUARED if squared else T_HMLC
        return ReliefTarget(kind, Y.copy(), w, float(norm) if norm > 0 else 1.0)
