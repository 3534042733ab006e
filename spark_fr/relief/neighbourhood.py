"""The neighbourhood interface of the Relief shard kernel: the operations a backend provides (numba, no Spark).

Sketch
------
:func:`spark_fr.relief.shard.relief_shard` is written once; where the neighbours come from is a backend, a
named tuple of arrays whose type selects, at compile time, the implementation of each operation below
(numba's ``@overload``: every backend compiles its own copy of the kernel, no run-time dispatch)::

    dims(space)                     -> (m instances, C classes or 1, D features, T per-target, G group size)
    new_scratch(space, rule)        -> the backend's buffers (a named tuple)
    start_group(space, s, q0, g_n)  instances q0 .. q0+g_n-1 are next (dense rows: their d_X in one pass)
    own_class(space, q)             -> class of instance q (NaN: the instance is skipped; 0 without classes)
    search(space, s, q)             find instance q's neighbours (all classes at once where the backend can)
    neighbours(space, s, q, c)      -> what the update needs of q's neighbours of class c (count, rows, ...)
    update(rule, space, s, q, c, own, found, acc)
                                    -> the update rule (dense Relief, sparse ReliefE) adds them to ``acc``;
                                       returns the neighbours used (-1: none)

Tall mode searches each data block for candidates with one kernel too
(:func:`spark_fr.relief.candidates.block_candidates`), over a block backend (dense :data:`Rows
<spark_fr.relief.dense.Rows>`, sparse :data:`SparseRows <spark_fr.relief.embedded.SparseRows>`)::

    candidate_group(block)                       -> instances whose distances are computed in one pass
    group_distances(block, inst, search, q0, g_n, dists)
                                                 dists[g, j] = distance of instance q0 + g to row j
    with_payload(block, inst, search, found)     -> Candidates: found = (dist, keys, rows, counts) plus what
                                                    the update needs of the candidates (dense: d_i, d_C, ...)

Backends: :mod:`spark_fr.relief.dense` (every scaled row: broadcast mode), :mod:`spark_fr.relief.candidates`
(tall mode's merged candidates of the data blocks), :mod:`spark_fr.relief.embedded` (ReliefE's sparse rows and
embedded space: every row, or neighbours already chosen). Update rules: :mod:`spark_fr.relief.update` (Relief)
and :mod:`spark_fr.relief.sparse_update` (ReliefE). A backend module calls :func:`register` with its type and
its numba functions; the operation is looked up when a kernel is compiled for that type.
"""
from __future__ import annotations

from numba.extending import overload

#: named-tuple class -> {operation name: numba function}
_REGISTRY: dict = {}


def register(cls, **ops) -> None:
    """Make ``cls`` (a named tuple class) a backend: ``ops`` maps operation names to numba functions."""
    _REGISTRY.setdefault(cls, {}).update(ops)


def _lookup(numba_type, name: str):
    """The numba function of operation ``name`` for a named tuple's numba type (None: not a backend)."""
    ops = _REGISTRY.get(getattr(numba_type, "instance_class", None))
    return None if ops is None else ops.get(name)


def dims(space):
    """(m, C, D, T, G) of a backend (see the module sketch)."""
    raise NotImplementedError("numba only")


def new_scratch(space, rule):
    """The backend's buffers for one kernel call."""
    raise NotImplementedError("numba only")


def start_group(space, s, q0, g_n):
    """Instances q0 .. q0 + g_n - 1 are next."""
    raise NotImplementedError("numba only")


def own_class(space, q):
    """Class of instance q (NaN: skipped)."""
    raise NotImplementedError("numba only")


def search(space, s, q):
    """Find instance q's neighbours."""
    raise NotImplementedError("numba only")


def neighbours(space, s, q, c):
    """Instance q's neighbours of class c, as the update rule reads them."""
    raise NotImplementedError("numba only")


def update(rule, space, s, q, c, own, found, acc):
    """Add instance q's neighbours of class c to the accumulators (the rule's form); the neighbours used."""
    raise NotImplementedError("numba only")


@overload(dims)
def _dims(space):
    fn = _lookup(space, "dims")
    return None if fn is None else (lambda space: fn(space))


@overload(new_scratch)
def _new_scratch(space, rule):
    fn = _lookup(space, "new_scratch")
    return None if fn is None else (lambda space, rule: fn(space, rule))


@overload(start_group)
def _start_group(space, s, q0, g_n):
    fn = _lookup(space, "start_group")
    return None if fn is None else (lambda space, s, q0, g_n: fn(space, s, q0, g_n))


@overload(own_class)
def _own_class(space, q):
    fn = _lookup(space, "own_class")
    return None if fn is None else (lambda space, q: fn(space, q))


@overload(search)
def _search(space, s, q):
    fn = _lookup(space, "search")
    return None if fn is None else (lambda space, s, q: fn(space, s, q))


@overload(neighbours)
def _neighbours(space, s, q, c):
    fn = _lookup(space, "neighbours")
    return None if fn is None else (lambda space, s, q, c: fn(space, s, q, c))


@overload(update)
def _update(rule, space, s, q, c, own, found, acc):
    fn = _lookup(rule, "update")
    return None if fn is None else (lambda rule, space, s, q, c, own, found, acc: fn(rule, space, s, q, c, own,
                                                                                      found, acc))


def candidate_group(block):
    """Instances whose distances to a block are computed in one pass."""
    raise NotImplementedError("numba only")


def group_distances(block, inst, search, q0, g_n, dists):
    """dists[g, j]: the distance of instance q0 + g to row j of the block."""
    raise NotImplementedError("numba only")


def with_payload(block, inst, search, found):
    """The candidates found, with what the update needs of them."""
    raise NotImplementedError("numba only")


@overload(candidate_group)
def _candidate_group(block):
    fn = _lookup(block, "candidate_group")
    return None if fn is None else (lambda block: fn(block))


@overload(group_distances)
def _group_distances(block, inst, search, q0, g_n, dists):
    fn = _lookup(block, "group_distances")
    return None if fn is None else (lambda block, inst, search, q0, g_n, dists: fn(block, inst, search, q0, g_n,
                                                                                  dists))


@overload(with_payload)
def _with_payload(block, inst, search, found):
    fn = _lookup(block, "with_payload")
    return None if fn is None else (lambda block, inst, search, found: fn(block, inst, search, found))
