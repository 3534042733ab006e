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
* Ensembles (trees): by default (``--hmlc-impurity weighted``) the impurity of the HMLC paper and CLUS

      impu(E) = (1/L) sum_l w(l) Var(E, l)

  i.e. the 0/1 label columns with ``alpha_l = w(l) / L``, L = all labels of the hierarchy (the paper writes
  ``sum_j w_j var_j(E)``; methods-thesis.md Sec. 2.3 took it for an OCR error). ``--hmlc-impurity
  normalised`` gives the thesis' form (Ch. 2/3), ``(1/L) sum_l w(l) Var(E, l) / Var(E_train, l)``, i.e.
  ``alpha_l = w(l) / (L * Var(E_train, l))`` (why it is not the default: below).
  A label that is constant on the training rows (one that never occurs: frequent in a GO DAG, 947 of
  derisi_GO's 4,119 labels) cannot be improved and gets weight 0; its column is left out of the clustering
  and prototype matrices altogether (the grower's cost is per column), and its prediction is its constant
  value. Only "every label constant" is an error.
  Prototype: the label frequencies; prediction ``p >= 0.5`` (closed under ancestors by construction: a
  parent's frequency is at least its child's). RF-score error: the weighted Hamming loss
  ``sum_l w(l) err_l / sum_l w(l)``, ``err_l`` the error rate of label l, over the labels with known values
  (:meth:`FittedHMLC.combine`; the thesis' Eq. 3.2 without its garbled normaliser, which a relative
  error increase does not see anyway).
  Per label (``--per-target``): Genie3 is ``w(l)`` times the reduction of label l's variance (normalised
  variance with the thesis' form; ``per_target_scale = L``), so the joint Genie3 is the mean of the
  per-label ones, as for MTR and MLC; the RF score is the relative increase of the label's error rate.
  Semi-supervised ensembles mix the target impurity in its normalised scale against the features': the
  weighted form is scaled by ``normalised_scale`` (the factor that gives the training set the normalised
  form's value ``sum_l w(l) / L``), the normalised one is used as it is (``normalised_scale() = 1``).
* Label-sparse form (hierarchies of at least ``SPARSE_MIN_COLUMNS`` labels): the encoder's
  :meth:`~HierarchyEncoder.encode_compact` gives :class:`~spark_fr.tasks.sparse_columns.SparseLabels` straight
  from the label strings; the trees then cluster on :class:`~spark_fr.tasks.sparse_columns.SparseColumns`
  (``sqrt(alpha_l) * y_l``, uncentred), the prototypes are leaf label frequencies and the RF score compares
  label sets (:meth:`FittedHMLC.predicted_sets`). Same fit, prototypes and errors as the dense form, bit for bit.

Why the weighted impurity is the default (issue 23)
---------------------------------------------------
Dividing by the training variance gives a label seen in a handful of rows the weight of a common one, so the
trees chase rare labels (deeper trees, about twice the time) and the rankings are not CLUS's. Measured on the
shared sets (random forests, 50 trees, sqrt features, leaves of 10; 3 seeds each; Spearman with CLUS's
Genie3 / Symbolic against CLUS with itself; the tables of issue 23's HMLC report):

    cellcycle (imputed)  weighted 0.77 / 0.74, normalised 0.54 / 0.25, CLUS-CLUS 0.73 / 0.70
    derisi_GO            weighted 0.81 / 0.88, normalised 0.54 / 0.53, CLUS-CLUS 0.82 / 0.89
    Diatoms              weighted 0.79 / 0.57, normalised 0.68 / 0.34, CLUS-CLUS 0.78 / 0.55
    enron                weighted 0.66 / 0.49, normalised 0.56 / 0.36, CLUS-CLUS 0.66 / 0.49

and by the HMLC paper's protocol (weighted 10NN on the test split, pooled AUPRC) the two forms' Genie3
rankings are within 0.003 of each other, and the weighted form's Symbolic is clearly better: with leaves of 2
(the default), Symbolic - uniform weights = +0.032 (weighted) against -0.038 (normalised) on Diatoms, +0.007
against -0.003 on cellcycle, +0.075 against +0.067 on enron, +0.002 against +0.001 on derisi_GO.
``normalised`` stays available (the thesis' experiments).

Why HMLC Genie3 is nearly flat (issue 23)
-----------------------------------------
Genie3 sums ``h*(N) = |E| impu(E) - sum |E_k| impu(E_k)`` over a tree's internal nodes; the sum telescopes
to ``|D| impu(D) - sum_leaves |E_leaf| impu(E_leaf)``, so a fully grown tree hands out almost all of the
training impurity, and with hundreds of weakly predictable labels most of it is removed in small nodes (with
leaves of 2, 42-64 % of the total Genie3 comes from nodes of fewer than 32 bagged rows, 66-86 % from nodes
below 128), where several features fit the noise equally well and the sqrt(F) random candidates take turns.
So 84-95 % of the features are needed for 95 % of the total on the yeast sets (cellcycle 95 %, derisi 84 %),
CLUS's Genie3 included (cellcycle 92-94 %, derisi 84 %), and Genie3-weighted kNN is no better than uniform
there, for CLUS's Genie3 either (cellcycle imputed: +0.003 CLUS, +0.002 ours; derisi +0.001 / +0.002): the
expression features are about equally (un)informative. Where features differ (Diatoms, enron) Genie3 is
concentrated and beats uniform weights by 0.035 and 0.08, as CLUS's does. Not defects, then: the data, and
the score's sum over fully grown trees (larger leaves, ``--min-samples-leaf 10``, make it a little less flat
and a little better). Two real causes were found and fixed or handed on: many-valued nominal features had an
advantage CLUS's search does not give (spark_fr.pct.subsets: the subset search is now CLUS's greedy one), and
missing feature values (cellcycle: CLUS's Genie3 penalises features with many missing values, Spearman with
the missing share -0.46 against +0.15 here: CLUS's fractional rule, issue 23's ``--missing``). Neither the
train+valid union (cellcycle on train alone: the same) nor the label weights (``--hmlc-w0`` 0.5 / 0.75 / 1:
the same) changed the picture.

What CLUS does (Clus 2.12.8 = ``pyclus`` 1.0.2; its source, knowledge-technologies/clus)
---------------------------------------------------------------------------------------
* Impurity: ``WHTDStatistic`` (a ``RegressionStatBinaryNomiss``) gives ``SVarS = (1/L) sum_l c_l (n_l -
  n_l^2 / n)`` with clustering weights c_l; in HMC mode ``ClusStatManager.initClusteringWeights`` sets
  c_l = w(l) and returns before the ``Normalize`` (1 / training variance) weights other tasks get. So CLUS's
  HMC impurity is the *weighted* form above (our default), not the thesis' normalised one.
* Weights (``HierNodeWeights``): ``WParam`` = w0 (default 0.75). Trees: ``w0 ** depth`` with depth 0 below the
  root, the same as ours. DAGs: ``WType`` ExpSumParentWeight (CLUS's default) ``w0 * sum(w(parents))``,
  ExpAvgParentWeight ``w0 * mean(w(parents))`` (ours, the spec's), ExpMin/ExpMax, NoWeight; the virtual root
  counts as a parent of weight ``1 / w0`` in all of them, as here. Comparisons set ExpAvgParentWeight.
* Genie3 sums the reductions of that SVarS over the internal nodes (``calculateGENI3value``: the node's
  SVarS minus its children's, on the bagged rows), the definition used here; its per-target columns are the
  unweighted per-label reductions.
* Missing feature values: CLUS evaluates a split on the rows whose value is known and sends the others down
  both branches with fractional weights; spark_fr sends them as a block to the better side. On cellcycle (6 %
  missing cells) this alone drops Genie3 agreement with CLUS from 0.85 (values imputed) to 0.63.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from .base import EvaluationDefaults, ReliefTarget, TargetEncoder, TargetType, TaskError
from .hmlc_impurities import DEFAULT_IMPURITY, IMPURITIES  # the impurities' names (options reads them without numba)
from .distances import T_HMLC, T_HMLC_SQUARED
from .measures import NotComputed
from .mlc import FittedMLC
from . import sparse_columns
from .sparse_columns import SparseColumns, SparseLabels, worth_sparse

log = logging.getLogger(__name__)


@dataclass
class FittedHMLC(FittedMLC):
    """HMLC fitted to its training label matrix (see the module docstring).

    The clustering and prototype columns are the labels that vary on the training rows (``kept``); the
    others are predicted as their constant training value.

    Attributes (besides :class:`~spark_fr.tasks.base.FittedTask`'s)
    ----------
    label_weights : ndarray (L,)
        Hierarchy weights w(l).
    kept : ndarray of int (K,)
        Labels that vary on the training rows (the clustering and prototype columns, in this order).
    constant_prediction : ndarray (L,)
        The prediction of every label at the training prototype (used for the labels not kept).
    impurity_form : {'weighted', 'normalised'}
        The impurity the task was fitted with (:func:`fit_hierarchy`).
    """

    label_weights: np.ndarray = field(default_factory=lambda: np.zeros(0))
    kept: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    constant_prediction: np.ndarray = field(default_factory=lambda: np.zeros(0))
    impurity_form: str = DEFAULT_IMPURITY

    def raw_columns(self, Y):
        if isinstance(Y, SparseLabels):
            Y = Y.to_dense()
        return np.array(np.asarray(Y, dtype=np.float64)[:, self.kept])

    def clustering_input(self, Y):
        """Label-sparse columns ``sqrt(alpha_l) * y_l`` when the labels are complete and come as
        :class:`SparseLabels`, or are many and sparse (:func:`~spark_fr.tasks.sparse_columns.worth_sparse`);
        else the dense clustering matrix."""
        if isinstance(Y, SparseLabels) and Y.labelled.all():
            return Y.select(self.kept, np.sqrt(self.alpha))
        C = self.raw_columns(Y)
        if worth_sparse(C):
            return SparseColumns.from_dense(C, np.sqrt(self.alpha))
        return super().clustering_input(Y)

    def prototype_columns(self, Y):
        """The kept labels; as :class:`SparseColumns` (ones) when they come as complete :class:`SparseLabels`."""
        if isinstance(Y, SparseLabels) and Y.labelled.all():
            return Y.select(self.kept)
        return super().prototype_columns(Y)

    def predicted_sets(self, frequencies: SparseColumns) -> SparseColumns:
        """:meth:`predict` in label-sparse form: per node (row of ``frequencies``: its kept labels' frequencies,
        :func:`spark_fr.pct.tree.leaf_label_frequencies`), the labels predicted 1, over all L labels."""
        n_nodes = frequencies.shape[0]
        rows = np.repeat(np.arange(n_nodes), np.diff(frequencies.indptr))
        on = frequencies.values >= 0.5
        always = np.flatnonzero(self.constant_prediction >= 0.5)  # labels constant 1 on the training rows
        node = np.concatenate([rows[on], np.repeat(np.arange(n_nodes), always.size)])
        label = np.concatenate([self.kept[frequencies.indices[on]], np.tile(always, n_nodes)])
        order = np.lexsort((label, node))
        indptr = np.zeros(n_nodes + 1, np.int64)
        np.cumsum(np.bincount(node, minlength=n_nodes), out=indptr[1:])
        return SparseColumns(indptr, label[order].astype(np.int64), np.ones(label.size), len(self.target_names))

    def predict(self, prototypes):
        P = np.asarray(prototypes, dtype=np.float64)
        out = np.repeat(self.constant_prediction[None, :], P.shape[0], axis=0)
        out[:, self.kept] = P >= 0.5
        return out

    def predictive_measure(self):
        """Not computed (:mod:`spark_fr.tasks.measures`: the pooled precision-recall curve is not implemented)."""
        return NotComputed("not computed for hmlc in this version (its measure, the area under the pooled "
                           "precision-recall curve, is not implemented)")

    def combine(self, errors):
        """The weighted Hamming loss: the w(l)-weighted mean of the per-label error rates over the labels
        with known values (NaN when there is none)."""
        e = np.asarray(errors, dtype=np.float64)
        known = ~np.isnan(e)
        w = self.label_weights[known]
        return float(np.dot(w, e[known]) / w.sum()) if known.any() and w.sum() > 0 else float("nan")

    def default_errors(self):
        """Per label, the error rate of predicting the training frequency thresholded at 0.5."""
        p = np.asarray(self.train_frequency, np.float64)
        return np.where(p >= 0.5, 1.0 - p, p)

    def normalised_scale(self):
        """1 for the normalised impurity; for the weighted one, the factor that gives the training set the
        normalised impurity's value ``sum_l w(l) / L`` (its scale against the features in SSL trees)."""
        if self.impurity_form == "normalised":
            return 1.0
        w = self.label_weights[self.kept]
        return float(w.sum() / np.dot(w, self.train_variance[self.kept]))

    @property
    def train_frequency(self) -> np.ndarray:
        """Frequency of every label on the training rows (L,)."""
        p = self.constant_prediction.copy()
        p[self.kept] = self.center
        return p


def fit_hierarchy(name: str, moments, target_names: list, label_weights=None,
                  impurity: str = DEFAULT_IMPURITY) -> FittedHMLC:
    """Fit the HMLC impurity from the moments of the label columns (see the module docstring).

    Parameters
    ----------
    name : str
    moments : ColumnMoments
        Moments of the L label columns over the training rows.
    target_names : list of str
        The L labels.
    label_weights : ndarray (L,), optional
        Hierarchy weights w(l) (default: ones).
    impurity : {'weighted', 'normalised'}
        ``(1/L) sum_l w(l) Var(E, l)`` (the HMLC paper and CLUS; the default) or
        ``(1/L) sum_l w(l) Var(E, l) / Var(E_train, l)`` (the thesis).

    Raises
    ------
    TaskError
        No labelled row, or every label constant on the labelled rows.
    """
    L = len(target_names)
    if not np.any(moments.count > 0):
        raise TaskError("no row has a label set: there is nothing to rank features against")
    w = np.ones(L) if label_weights is None else np.asarray(label_weights, np.float64)
    if w.shape != (L,):
        raise TaskError(f"{w.shape[0]} label weights for {L} labels")
    var = moments.var
    varies = var > 0
    if not varies.any():
        raise TaskError("every label of the hierarchy is constant on the labelled rows; there is nothing to "
                        "rank features against")
    constant = [target_names[j] for j in np.flatnonzero(~varies)]
    if constant:
        log.info("%d of %d labels are constant on the labelled rows (weight 0), e.g. %s", len(constant), L,
                 ", ".join(constant[:5]))
    kept = np.flatnonzero(varies).astype(np.int64)
    mean = np.nan_to_num(np.asarray(moments.mean, np.float64))
    if impurity not in IMPURITIES:
        raise TaskError(f"unknown HMLC impurity '{impurity}'; expected one of {', '.join(IMPURITIES)}")
    alpha = w[kept] / (L * var[kept]) if impurity == "normalised" else w[kept] / L
    return FittedHMLC(name, list(target_names), mean[kept], alpha, kept.copy(), np.full(L, float(L)), var, None,
                      constant, None, label_weights=w, kept=kept,
                      constant_prediction=np.where(varies, 0.0, (mean >= 0.5).astype(np.float64)),
                      impurity_form=impurity)


class HierarchyEncoder(TargetEncoder):
    """The ancestor-closed 0/1 label matrix of a column of '@'-joined label sets."""

    def __init__(self, hierarchy):
        super().__init__(list(hierarchy.labels), [None])
        self.hierarchy = hierarchy
        #: whether the ensembles keep the label matrix as SparseLabels (decided here, on the driver)
        self.sparse = len(hierarchy.labels) >= sparse_columns.SPARSE_MIN_COLUMNS

    def encode(self, columns, n_rows):
        return np.asarray(self.hierarchy.label_matrix(columns[0]), dtype=np.float64)

    def stored_columns(self):
        """Label-sparse: about two most specific labels per row with their ancestors (an estimate: the data
        are not encoded yet), a stored label costing about a dense column."""
        if not self.sparse:
            return super().stored_columns()
        closure = 1.0 + float(np.mean([len(a) for a in self.hierarchy.ancestors]))
        return min(2.0 * closure, float(len(self.names)))

    @property
    def compact_form(self):
        return "label_sets" if self.sparse else "dense"

    def encode_compact(self, columns, n_rows):
        if not self.sparse:
            return self.encode(columns, n_rows)
        indptr, indices, labelled = self.hierarchy.label_sets(columns[0])
        return SparseLabels(indptr, indices, labelled, len(self.names))

    def label_weights(self, w0):
        return np.asarray(self.hierarchy.weights(w0), np.float64)


class HMLC(TargetType):
    """Label sets over a hierarchy (see the module docstring)."""

    name = "hmlc"
    inference_priority = 10
    #: thesis Ch. 5 (HMLC paper): random forests; rankings saturate at about 10-50 trees
    ensemble_defaults = {"trees": 50}
    evaluation = EvaluationDefaults(neighbours=10, prediction="labels", measure="pooled_auprc", protocol="splits")
    methods = frozenset({"ensemble", "relief"})

    def __init__(self, impurity: str = DEFAULT_IMPURITY):
        if impurity not in IMPURITIES:
            raise TaskError(f"unknown HMLC impurity '{impurity}'; expected one of {', '.join(IMPURITIES)}")
        #: the ensembles' impurity, 'weighted' (the HMLC paper, CLUS) or 'normalised' (the thesis)
        self.impurity_form = impurity

    def with_impurity(self, impurity: str) -> "HMLC":
        """This type with another ensemble impurity (see the module docstring)."""
        return HMLC(impurity)

    def for_params(self, params):
        impurity = getattr(params, "hmlc_impurity", None) or self.impurity_form
        return self if impurity == self.impurity_form else self.with_impurity(impurity)

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

    def fit_from_moments(self, moments, target_names, classes=None, label_weights=None):
        return fit_hierarchy(self.name, moments, target_names, label_weights, self.impurity_form)

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
