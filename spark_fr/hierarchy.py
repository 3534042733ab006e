"""Label hierarchies for hierarchical multi-label classification (HMLC): trees and DAGs.

Algorithm sketch
----------------
* A hierarchy is a list of labels and, per label, the indices of its parents (an empty list for a child
  of the virtual ``root``). Labels are kept in a topological order (parents before children), so every
  pass over the hierarchy is one loop.
* Clus writes a hierarchy in one of two forms (``@attribute class hierarchical <spec>``):

  - **tree paths** ``01,01/01,01/01/03``: every item is a label, its parent is the path without its last
    segment; the label's name is the whole path (data rows use the same paths). Parents may be listed
    after their children (Diatoms);
  - **DAG edges** ``root/GO0003674,GO0003674/GO0003824`` (HARFF separates with ``", "``): every item is a
    ``parent/child`` edge, ``root`` is the virtual top, labels are the term names.

  The form is recognised by its content: edges when some item starts with ``root/`` and every item has
  exactly one ``/``; paths otherwise.
* A row's label set (the most specific labels, joined by ``@``) becomes a 0/1 row closed under ancestors
  (the hierarchy constraint). ``?``, the empty string and ``root`` mean "unlabelled" (a row of NaN, which
  semi-supervised methods use).
* Label weights: ``w(l) = 1`` for the children of the root, else ``w0 * mean(w(parents))``
  (the virtual root counts as a parent of weight ``1 / w0`` when a label has other parents too).
* HMLC-Relief's normaliser is the largest weighted distance between the closures of two labels.
  For a tree it is one O(L) pass: the distance of labels a, b is ``s(a) + s(b) - 2 s(lca(a, b))`` with
  ``s(l)`` the weight of l's closure, so it suffices to keep, per label, the largest ``s`` below it.
  For a DAG the closures' pairwise distances are computed in blocks (``|F|^2 L`` work for |F| labels).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

#: values of a hierarchical class column that mean "no label" (semi-supervised HARFF uses ``root``)
UNLABELLED = frozenset({"", "?", "root"})
_BLOCK = 512


class HierarchyError(ValueError):
    """A malformed hierarchy specification or a label that is not in the hierarchy (one-line message).

    ``label`` is the unknown label, when that is the problem.
    """

    def __init__(self, message: str, label: str | None = None):
        super().__init__(message)
        self.label = label


@dataclass(frozen=True)
class Hierarchy:
    """A label hierarchy (tree or DAG).

    Parameters
    ----------
    labels : tuple of str
        Label names in topological order (every label after its parents).
    parents : tuple of tuple of int
        Parent indices per label; empty for the children of the virtual root.
    root_parent : tuple of bool
        Whether the virtual root is (also) a parent of the label.
    """

    labels: tuple
    parents: tuple
    root_parent: tuple = field(default=())

    def __post_init__(self):
        if not self.root_parent:
            object.__setattr__(self, "root_parent", tuple(len(p) == 0 for p in self.parents))

    # ----- construction -----------------------------------------------------------------------------------
    @classmethod
    def from_clus_spec(cls, spec: str) -> "Hierarchy":
        """Parse the class specification of a Clus ``hierarchical`` attribute (tree paths or DAG edges).

        Parameters
        ----------
        spec : str
            The text after the ``hierarchical`` keyword.

        Returns
        -------
        Hierarchy
        """
        items = [s.strip() for s in spec.split(",")]
        items = [s for s in items if s]
        if not items:
            raise HierarchyError("empty hierarchy specification")
        is_edges = any(s.startswith("root/") for s in items) and all(s.count("/") == 1 for s in items)
        if is_edges:
            return cls.from_edges([tuple(s.split("/")) for s in items])
        return cls.from_paths(items)

    @classmethod
    def from_paths(cls, paths) -> "Hierarchy":
        """A tree from label paths (``a``, ``a/b``, ``a/b/c``); missing intermediate paths are added."""
        known = []
        seen = set()
        for p in paths:
            parts = p.split("/")
            if any(not q for q in parts):
                raise HierarchyError(f"malformed label path '{p}'")
            for q in range(1, len(parts) + 1):
                name = "/".join(parts[:q])
                if name not in seen:
                    seen.add(name)
                    known.append(name)
        edges = [("root" if "/" not in n else n.rsplit("/", 1)[0], n) for n in known]
        return cls.from_edges(edges, order=known)

    @classmethod
    def from_edges(cls, edges, order=None) -> "Hierarchy":
        """A hierarchy from ``(parent, child)`` pairs; ``'root'`` is the virtual top.

        Parameters
        ----------
        edges : iterable of (str, str)
        order : list of str, optional
            Preferred order of the labels (first appearance otherwise); it is made topological.

        Returns
        -------
        Hierarchy
        """
        names: list = list(order or [])
        index = {n: i for i, n in enumerate(names)}
        parent_sets: dict = {}
        for e in edges:
            if len(e) != 2 or not e[0] or not e[1]:
                raise HierarchyError(f"malformed hierarchy edge '{'/'.join(e)}'")
            p, c = e
            if c == "root":
                raise HierarchyError(f"'root' cannot be a child (edge '{p}/{c}')")
            for n in (p, c):
                if n != "root" and n not in index:
                    index[n] = len(names)
                    names.append(n)
            parent_sets.setdefault(c, [])
            if p not in parent_sets[c]:
                parent_sets[c].append(p)
        for n in names:
            parent_sets.setdefault(n, ["root"])  # a label only ever seen as a parent hangs below the root
        # topological order (Kahn), stable in the given order
        pending = {n: sum(1 for p in parent_sets[n] if p != "root") for n in names}
        kids: dict = {}
        for n in names:
            for p in parent_sets[n]:
                if p != "root":
                    kids.setdefault(p, []).append(n)
        ready = [n for n in names if pending[n] == 0]
        topo = []
        pos = 0
        while pos < len(ready):
            n = ready[pos]
            pos += 1
            topo.append(n)
            for k in kids.get(n, ()):
                pending[k] -= 1
                if pending[k] == 0:
                    ready.append(k)
        if len(topo) != len(names):
            cyclic = next(n for n in names if pending[n] > 0)
            raise HierarchyError(f"the hierarchy has a cycle through label '{cyclic}'")
        new = {n: i for i, n in enumerate(topo)}
        parents = tuple(tuple(sorted(new[p] for p in parent_sets[n] if p != "root")) for n in topo)
        root_parent = tuple("root" in parent_sets[n] for n in topo)
        return cls(tuple(topo), parents, root_parent)

    # ----- structure --------------------------------------------------------------------------------------
    @cached_property
    def index(self) -> dict:
        """Label name -> index."""
        return {n: i for i, n in enumerate(self.labels)}

    @cached_property
    def children(self) -> tuple:
        """Child indices per label."""
        kids = [[] for _ in self.labels]
        for c, ps in enumerate(self.parents):
            for p in ps:
                kids[p].append(c)
        return tuple(tuple(k) for k in kids)

    @property
    def is_tree(self) -> bool:
        """True when every label has exactly one parent (the virtual root included)."""
        return all(len(p) + int(r) == 1 for p, r in zip(self.parents, self.root_parent))

    @cached_property
    def ancestors(self) -> tuple:
        """Proper ancestors of every label (sorted index tuples, the virtual root excluded)."""
        anc = []
        for ps in self.parents:
            s = set(ps)
            for p in ps:
                s.update(anc[p])
            anc.append(tuple(sorted(s)))
        return tuple(anc)

    @cached_property
    def depth(self) -> np.ndarray:
        """Length of the longest path from the root (children of the root: 1)."""
        d = np.zeros(len(self.labels), np.int64)
        for i, ps in enumerate(self.parents):
            d[i] = 1 + max((d[p] for p in ps), default=0)
        return d

    def weights(self, w0: float = 0.75) -> np.ndarray:
        """Label weights ``w(l) = w0 * mean(w(parents))``, 1 for the children of the root.

        Parameters
        ----------
        w0 : float
            Weight decay per level, in (0, 1].

        Returns
        -------
        ndarray (L,)
        """
        if not 0 < w0 <= 1:
            raise HierarchyError(f"the hierarchy weight w0 must be in (0, 1], not {w0}")
        w = np.zeros(len(self.labels))
        for i, (ps, at_root) in enumerate(zip(self.parents, self.root_parent)):
            vals = [w[p] for p in ps] + ([1.0 / w0] if at_root else [])
            w[i] = w0 * float(np.mean(vals))
        return w

    # ----- data -------------------------------------------------------------------------------------------
    def closure(self, label: str) -> tuple:
        """Indices of a label and all its ancestors."""
        try:
            i = self.index[label]
        except KeyError:
            raise HierarchyError(f"label '{label}' is not in the hierarchy", label) from None
        return (i, *self.ancestors[i])

    def label_sets(self, values) -> tuple:
        """The label rows of :meth:`label_matrix` as the positions of their ones.

        Returns
        -------
        (indptr int64 (n + 1,), indices int32 (nnz,), labelled bool (n,))
            Row r's labels (closed under ancestors, increasing) are ``indices[indptr[r]:indptr[r + 1]]``;
            an unlabelled row has none and ``labelled[r]`` False.
        """
        n = len(values)
        counts = np.zeros(n, np.int64)
        labelled = np.ones(n, bool)
        cache: dict = {}
        flat = []
        for r, v in enumerate(values):
            v = "" if v is None else v.strip()
            if v in UNLABELLED:
                labelled[r] = False
                continue
            cols = cache.get(v)
            if cols is None:
                cols = cache[v] = sorted({j for lab in v.split("@") if lab.strip() not in UNLABELLED
                                          for j in self.closure(lab.strip())})
            counts[r] = len(cols)
            flat.extend(cols)
        indptr = np.zeros(n + 1, np.int64)
        np.cumsum(counts, out=indptr[1:])
        return indptr, np.asarray(flat, np.int32), labelled

    def label_matrix(self, values) -> np.ndarray:
        """0/1 label rows closed under ancestors from '@'-joined label strings.

        Parameters
        ----------
        values : sequence of str or None
            One value per row, e.g. ``'11/02/01@11/02/02'``; None, ``'?'``, ``''`` or ``'root'`` is
            an unlabelled row (all NaN).

        Returns
        -------
        ndarray (n, L) float32
        """
        indptr, indices, labelled = self.label_sets(values)
        Y = np.zeros((len(values), len(self.labels)), np.float32)
        Y[np.repeat(np.arange(len(values)), np.diff(indptr)), indices] = 1.0
        Y[~labelled] = np.nan
        return Y

    def final_labels(self, Y) -> np.ndarray:
        """Labels that are the most specific label of some row (on, with no child on).

        Parameters
        ----------
        Y : ndarray (n, L)
            Label rows closed under ancestors (rows with NaN are ignored).

        Returns
        -------
        ndarray of int
            Sorted label indices.
        """
        Y = np.asarray(Y)
        Y = Y[~np.isnan(Y).any(axis=1)] > 0.5 if Y.size else np.zeros((0, len(self.labels)), bool)
        has_child_on = np.zeros_like(Y)
        for c, ps in enumerate(self.parents):
            for p in ps:
                has_child_on[:, p] |= Y[:, c]
        return np.nonzero((Y & ~has_child_on).any(axis=0))[0]

    def closure_weights(self, w: np.ndarray) -> np.ndarray:
        """``s(l)``: the total weight of a label's closure (the label and its ancestors)."""
        w = np.asarray(w, np.float64)
        return np.array([w[i] + w[list(a)].sum() for i, a in enumerate(self.ancestors)])

    def max_pair_distance(self, labels, w, squared: bool = False) -> float:
        """Largest weighted distance between the closures of two of the given labels.

        The distance of two label sets is ``sum_j w_j (s1_j - s2_j)^2`` (``squared``) or its square root.

        Parameters
        ----------
        labels : sequence of int
            Label indices (e.g. :meth:`final_labels`).
        w : ndarray (L,)
            Label weights.
        squared : bool
            Whether to drop the square root.

        Returns
        -------
        float
            0 for fewer than two labels.
        """
        labels = np.unique(np.asarray(labels, np.int64))
        if len(labels) < 2:
            return 0.0
        w = np.asarray(w, np.float64)
        best = self._max_pair_tree(labels, w) if self.is_tree else self._max_pair_dag(labels, w)
        best = max(best, 0.0)
        return float(best if squared else np.sqrt(best))

    def _max_pair_tree(self, labels: np.ndarray, w: np.ndarray) -> float:
        """O(L) dynamic programme: at each label as lowest common ancestor, the two deepest-weighted branches."""
        s = self.closure_weights(w)
        L = len(self.labels)
        given = np.zeros(L, bool)
        given[labels] = True
        below = np.where(given, s, -np.inf)  # largest s of a given label in the subtree (the label included)
        top2 = np.full((L, 2), -np.inf)  # per label: the two largest `below` among its children
        root_top2 = [-np.inf, -np.inf]
        for c in range(L - 1, -1, -1):  # children before parents (reverse topological order)
            ps = self.parents[c]
            b = below[c]
            if not np.isfinite(b):
                continue
            targets = [top2[ps[0]]] if ps else [root_top2]
            for t in targets:
                if b > t[0]:
                    t[1], t[0] = t[0], b
                elif b > t[1]:
                    t[1] = b
            if ps and b > below[ps[0]]:
                below[ps[0]] = b
        best = 0.0
        for v in range(L):
            a, b = top2[v]
            own = s[v] if given[v] else -np.inf  # v itself as one end of the pair
            cands = sorted([a, b, own], reverse=True)
            if np.isfinite(cands[1]):
                best = max(best, cands[0] + cands[1] - 2 * s[v])
        if np.isfinite(root_top2[1]):
            best = max(best, root_top2[0] + root_top2[1])
        return float(best)

    def _max_pair_dag(self, labels: np.ndarray, w: np.ndarray) -> float:
        """Pairwise closure distances in blocks: ``s_a + s_b - 2 w(cl(a) & cl(b))``."""
        C = np.zeros((len(labels), len(self.labels)))
        for r, f in enumerate(labels):
            C[r, [f, *self.ancestors[f]]] = 1.0
        Cw = C * w
        s = Cw.sum(axis=1)
        best = 0.0
        for i in range(0, len(labels), _BLOCK):
            d = s[i:i + _BLOCK, None] + s[None, :] - 2.0 * (Cw[i:i + _BLOCK] @ C.T)
            best = max(best, float(d.max()))
        return best
