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
its numba functions; the operation is looked up when a kernel is compiled for that type (the first argument
of every operation selects the backend).
"""
from __future__ import annotations

from numba import njit
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


def _operation(name: str, doc: str):
    """A backend operation: a Python stub whose numba implementation is the one registered for the type of its
    first argument (the backend)."""
    def stub(*args):
        raise NotImplementedError(f"{name} runs in numba-compiled code only")

    stub.__name__, stub.__qualname__, stub.__doc__ = name, name, doc

    @overload(stub)
    def _implementation(*args):
        fn = _lookup(args[0], name)
        if fn is None:
            return None

        def impl(*args):
            return fn(*args)
        return impl
    return stub


dims = _operation("dims", "(m, C, D, T, G) of a backend (see the module sketch).")
new_scratch = _operation("new_scratch", "The backend's buffers for one kernel call.")
start_group = _operation("start_group", "Instances q0 .. q0 + g_n - 1 are next.")
own_class = _operation("own_class", "Class of instance q (NaN: skipped).")
search = _operation("search", "Find instance q's neighbours.")
neighbours = _operation("neighbours", "Instance q's neighbours of class c, as the update rule reads them.")
update = _operation("update", "Add instance q's neighbours of class c to the accumulators (the rule's form); "
                              "returns the neighbours used.")
candidate_group = _operation("candidate_group", "Instances whose distances to a block are computed in one pass.")
group_distances = _operation("group_distances", "dists[g, j]: the distance of instance q0 + g to row j of the block.")
with_payload = _operation("with_payload", "The candidates found, with what the update needs of them.")


@njit(cache=True, nogil=True)
def nothing(space, s, q):
    """``search`` of a backend that has nothing to do there."""


@njit(cache=True, nogil=True)
def nothing_yet(space, s, q0, g_n):
    """``start_group`` of a backend that has nothing to do there."""


@njit(cache=True, nogil=True)
def row_class(space, q):
    """``own_class`` of a backend with ``rows`` (their ``classes``), ``instances`` (row positions) and ``n_classes``:
    the class of instance q's row (0 without classes)."""
    if space.n_classes > 0:
        return space.rows.classes[space.instances[q]]
    return 0.0
