"""Relational ranking scores: the importance of *relations* (links and attributes) from the trees' nodes.

Sketch (thesis Ch. 9, spec methods-thesis.md Sec. 7.2)
------------------------------------------------------
Every feature f of a relational table uses a set of relations rel(f) (the links along its foreign-key path
and the attributes it reads; :mod:`spark_fr.relational.lineage`). For one tree, with v(N) the node's
reward (Symbolic: ``|E(N)| / |E_train|`` or ``w^depth``; Genie3: ``h*(N)``)::

    for every internal node N with parent P (none at the root):
        new(N) = rel(f(N)) - rel(f(P))          (the root: rel(f(N)))
        if new(N) is empty: new(N) = rel(f(N))   (a test that adds no relation: all of its own share)
        imp(r) += v(N) / |new(N)|  for r in new(N)

summed (bagging: averaged) over the trees, exactly like the feature scores. This is the thesis's rule, "a
node's reward is shared equally among the relations its feature adds" (``P[r | f(parent N)]``), for trees
on generated features: a relational tree's child refines its parent's feature, so the relations "added"
are those the child's test uses and its parent's test did not.

The other form, ``feature``: ``imp(r) = sum_f imp(f) |{r} & rel(f)| / |rel(f)|`` (each feature's importance
shared equally among all of its relations: the ISMIS paper's ``1[r in N] / s(N)`` with s(N) the
relations in the test, and the AI paper's ``1/steps(N)``). It needs only the feature importances, so it
also serves the RF and Relief scores, which have no node rewards.

Decisions
---------
* **Empty new part**: the thesis leaves ``0 / 0`` undefined (its worked example only has reused relations next
  to new ones). A test that adds no relation to its parent's shares its reward among all of its own
  relations, so that, as in the feature form, the relation importances of a tree sum to its feature
  importances (nothing is lost or created by the roll-up).
* Both forms are linear in the node rewards, so the ensemble's mean and the boosting sum commute with them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: how node rewards become relation importances (option ``relation_rollup``)
ROLLUPS = ("node", "feature")


@dataclass(frozen=True)
class FeatureRelations:
    """The relations each feature uses, as a sparse incidence (features x relations).

    Attributes
    ----------
    names : tuple of str
        The relations, in output order.
    indptr : ndarray of int64 (D + 1,)
    indices : ndarray of int64
        Feature f uses the relations ``indices[indptr[f]:indptr[f + 1]]`` (sorted, distinct).
    features : tuple of str
        The features' names (empty: unnamed).
    """

    names: tuple
    indptr: np.ndarray
    indices: np.ndarray
    features: tuple = ()

    @classmethod
    def from_sets(cls, sets, names=None, features=()) -> "FeatureRelations":
        """From one iterable of relation names per feature; ``names`` fixes the relations' order (default:
        sorted); ``features`` names the features."""
        sets = [sorted(set(s)) for s in sets]
        names = tuple(sorted({r for s in sets for r in s})) if names is None else tuple(names)
        index = {r: i for i, r in enumerate(names)}
        unknown = sorted({r for s in sets for r in s if r not in index})
        if unknown:
            raise ValueError(f"relation(s) {', '.join(unknown[:3])} not in the relation names")
        indptr = np.zeros(len(sets) + 1, np.int64)
        indptr[1:] = np.cumsum([len(s) for s in sets])
        indices = np.array([index[r] for s in sets for r in sorted(s, key=index.get)], np.int64)
        return cls(names, indptr, indices, tuple(features))

    @property
    def n_features(self) -> int:
        return int(self.indptr.shape[0] - 1)

    @property
    def n_relations(self) -> int:
        return len(self.names)

    def of(self, feature: int) -> np.ndarray:
        """The relation indices of one feature."""
        return self.indices[self.indptr[feature]:self.indptr[feature + 1]]

    def for_features(self, names) -> "FeatureRelations":
        """The incidence of the features called ``names``, in that order (the same relations).

        Raises
        ------
        KeyError
            A name this incidence does not hold.
        """
        where = {f: i for i, f in enumerate(self.features)}
        rows = [where[n] for n in names]
        sets = [[self.names[r] for r in self.of(i)] for i in rows]
        return FeatureRelations.from_sets(sets, self.names, names)

    def __repr__(self) -> str:  # run parameters print it: keep it short
        return f"FeatureRelations({self.n_features} features, {self.n_relations} relations)"


def node_rewards(tree, score: str, n_rows: int, weight: float | None = None) -> np.ndarray:
    """v(N) of every node of ``tree`` for ``score`` ('symbolic' or 'genie3'); 0 at the leaves."""
    nodes = tree.internal
    out = np.zeros(tree.n_nodes)
    if score == "genie3":
        out[nodes] = tree.gain[nodes]
    elif weight is None:
        out[nodes] = tree.weight[nodes] / float(n_rows)
    else:
        out[nodes] = float(weight) ** tree.depth[nodes].astype(np.float64)
    return out


def parents(tree) -> np.ndarray:
    """The parent of every node (-1 at the root)."""
    out = np.full(tree.n_nodes, -1, np.int64)
    nodes = tree.internal
    out[tree.left[nodes]] = nodes
    out[tree.right[nodes]] = nodes
    return out


def relation_scores(tree, rewards: np.ndarray, relations: FeatureRelations,
                    feature_ids: np.ndarray | None = None) -> np.ndarray:
    """One tree's relation importances by the node rule (module sketch).

    Parameters
    ----------
    tree : Tree
    rewards : ndarray (n_nodes,)
        v(N) (:func:`node_rewards`).
    relations : FeatureRelations
        Over the input's features.
    feature_ids : ndarray of int, optional
        The input's index of each feature the tree's tests refer to (default: the same index).

    Returns
    -------
    ndarray (n_relations,)
    """
    out = np.zeros(relations.n_relations)
    nodes = tree.internal
    if nodes.size == 0:
        return out
    feature = tree.feature.astype(np.int64)
    if feature_ids is not None:
        feature = np.where(feature >= 0, np.asarray(feature_ids, np.int64)[np.maximum(feature, 0)], -1)
    parent = parents(tree)
    for node in nodes:
        mine = relations.of(int(feature[node]))
        if mine.size == 0:
            continue
        p = parent[node]
        new = mine if p < 0 else np.setdiff1d(mine, relations.of(int(feature[p])), assume_unique=True)
        if new.size == 0:
            new = mine
        out[new] += rewards[node] / new.size
    return out


def share_by_feature(importance: np.ndarray, relations: FeatureRelations) -> np.ndarray:
    """Relation importances by the feature rule: each feature's importance shared equally among its relations.

    ``importance`` has the features on its last axis; the result has the relations there instead.
    """
    importance = np.asarray(importance, np.float64)
    sizes = np.diff(relations.indptr)
    rows = np.repeat(np.arange(relations.n_features), sizes)
    share = np.where(sizes > 0, 1.0 / np.maximum(sizes, 1), 0.0)
    matrix = np.zeros((relations.n_features, relations.n_relations))
    np.add.at(matrix, (rows, relations.indices), share[rows])
    return importance @ matrix
