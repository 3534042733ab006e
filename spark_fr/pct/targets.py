"""The grower's target backends behind one set of operations (numba overloads; no Spark).

Sketch
------
The node loop (:mod:`spark_fr.pct.grow`) and the split search (:mod:`spark_fr.pct.search`) are written once.
What depends on how the clustering targets are stored is a small set of operations on a backend's state,
chosen when numba compiles the loop, by the type of their first argument (so the choice costs nothing while a
tree grows; every backend compiles its own copy of the loop):

    new_state(targets, rows, nominal, config)   the state: DenseState for a dense Z (an n x K array),
                                                SparseState for SparseTargets (label-sparse CSR)
    moved_targets(tb)                           the target rows the node rows keep in node order (dense: Z;
                                                label-sparse: None)
    n_columns(tb)                               K
    node_totals(tb, nr, start, end)             NodeTotals (W, P, |S|^2) of the node's rows; their sums kept
    search_feature(tb, search, codes, f, nr, span, node, config)
                                                feature f over the node (after node_totals of the same node):
                                                its PresentCodes and, if it varies, its best test (h,
                                                threshold, missing_left); its histogram or buckets reset
    add_column_gain(tb, gains, f, nr, children, node)
                                                per-column reductions of a learned split
    children_gain(tb, gains, f, track, nr, children, node)
                                                the reduction over a fractional split's weighted rows
    end_node(tb)                                forget the node

Numba compiles, in place of an operation, the Python function of the backend's kernel (:func:`_operation`):
no wrapper between the loop and the backend. The dense backend is :mod:`spark_fr.pct.dense_targets`,
the label-sparse one :mod:`spark_fr.pct.sparse_targets`;
tests/pct/test_grow_sparse.py checks each operation of one against the other on random inputs. The two sum in
different orders, so they agree to rounding (each is pinned bit for bit by its own golden rankings).
"""
from __future__ import annotations

import inspect

from numba import types
from numba.extending import overload

from . import dense_targets as dense
from . import sparse_targets as sparse
from .jit import OVERLOAD, OVERLOAD_BORROWING

#: each backend's operations: the numba function of every operation name
BACKENDS = {
    "dense": {"new_state": dense.new_dense_state, "moved_targets": dense.dense_moved_targets,
              "n_columns": dense.dense_n_columns,
              "node_totals": dense.dense_node_totals, "search_feature": dense.dense_search_feature,
              "add_column_gain": dense.dense_column_gain, "children_gain": dense.dense_children_gain,
              "end_node": dense.dense_end_node},
    "sparse": {"new_state": sparse.new_sparse_state, "moved_targets": sparse.sparse_moved_targets,
               "n_columns": sparse.sparse_n_columns,
               "node_totals": sparse.sparse_node_totals, "search_feature": sparse.sparse_search_feature,
               "add_column_gain": sparse.sparse_column_gain, "children_gain": sparse.sparse_children_gain,
               "end_node": sparse.sparse_end_node},
}
#: the named-tuple classes of each backend (its targets and its state)
_CLASSES = {dense.DenseState: "dense", sparse.SparseTargets: "sparse", sparse.SparseState: "sparse"}


def backend_of(numba_type) -> str | None:
    """The backend a numba type belongs to: a 2-d array (dense targets), or a backend's named tuple."""
    if isinstance(numba_type, types.Array) and numba_type.ndim == 2:
        return "dense"
    return _CLASSES.get(getattr(numba_type, "instance_class", None))


def _operation(name: str, params: str, options: dict, doc: str):
    """An operation: a Python stub in whose place numba compiles, with ``options``, the Python function of the
    backend's kernel of the same name (chosen by the type of the first argument; its parameters are
    ``params``).

    Decision: the dense backend's kernel of the loop over candidate features (:data:`INLINED`) is inlined into
    it (numba IR, :func:`_inline_rule`), with the kernels it calls for the numeric best splitter (the fill, the
    scan); the others are called. A call passes every array of its named-tuple
    arguments by value (the dense state alone is 130 machine words): the three calls per node and feature pushed
    about 420 words on the stack, half of a feature's cost at the small nodes that most features are searched at
    (20,000 x 200 x 5 targets: two thirds of the searches are at nodes of fewer than 8 rows). Inlined, the grower
    alone (same trees to the bit) took 80 ms per tree against 92 (20,000 x 200, 5 targets, 14 candidates), 41
    against 44 (2,000 x 20,000, 3 classes, 141) and 413 against 482 (200,000 x 50, 3 targets, 7): minimums of
    alternated runs, load 1.3-1.6. The label-sparse backend is not inlined: numba's IR inliner mis-compiled its
    nominal search inlined into the split search (an index out of bounds); inlining every dense operation,
    including those the node loop calls (its state's allocation), crashed. The three operations of a feature
    (histogram, best test, reset) became one, ``search_feature``, when the small nodes got their own histogram
    (:func:`~spark_fr.pct.histogram.fill_small_histogram`): with the small fill and the numeric scan called, not
    inlined, the grower was no faster than with the 256-code histogram (ratio 0.99 of alternated runs in one
    process, 20,000 x 200 x 5); all inlined, 0.84-0.92.
    """
    def stub(*args):
        raise TypeError(f"{name} runs in numba-compiled code only")

    def typing(*args):
        backend = backend_of(args[0])
        return None if backend is None else BACKENDS[backend][name].py_func

    stub.__name__, stub.__qualname__, stub.__doc__ = name, name, f"{name}({params}): {doc}"
    typing.__signature__ = inspect.Signature([inspect.Parameter(p.strip(), inspect.Parameter.POSITIONAL_OR_KEYWORD)
                                              for p in params.split(",")])
    overload(stub, jit_options=options, inline=_inline_rule(name))(typing)
    return stub


#: the operations of the split search's loop over features, once per node and candidate feature: inlined into
#: it (numba IR) for the dense backend (see :func:`_operation`)
INLINED = ("search_feature",)


def _inline_rule(name: str):
    """numba's inlining rule of an operation (``inline=`` of ``overload``): ``"never"``, or, for the operations
    of :data:`INLINED`, a cost model that inlines the dense backend's kernel at the call (its first argument's type
    tells the backend)."""
    if name not in INLINED:
        return "never"

    def dense_only(expr, caller_info, callee_info):
        return backend_of(caller_info.typemap[expr.args[0].name]) == "dense"
    return dense_only


#: the operations: {name: (parameters, what it does)}; all but new_state borrow their arrays (spark_fr.pct.jit)
OPERATIONS = {
    "new_state": ("targets, rows, nominal, config",
                  "the backend's state for a tree grown on ``rows`` of ``targets`` (``nominal``: the features' kinds; "
                  "``config``: the tree's GrowConfig)"),
    "moved_targets": ("tb", "the dense target matrix whose rows the node rows keep in node order, or None"),
    "n_columns": ("tb", "K, the number of clustering columns"),
    "node_totals": ("tb, nr, start, end", "the NodeTotals of the node rows ``[start, end)``; their sums kept"),
    "search_feature": ("tb, search, codes, f, nr, span, node, config",
                       "feature f over the node rows ``span`` = (start, end) of totals ``node`` (after "
                       "node_totals): its "
                       "PresentCodes and, if it varies, its best test (h, threshold code or -1 for a nominal test, "
                       "missing_left; h = -inf if none; a nominal test's mask in ``search.mask``); its histogram "
                       "reset"),
    "add_column_gain": ("tb, gains, f, nr, children, node",
                        "add the per-column reductions of a learned split to ``gains[f]``"),
    "children_gain": ("tb, gains, f, track, nr, children, node",
                      "the reduction over a fractional split's weighted rows (its per-column ones added to "
                      "``gains[f]`` when ``track``)"),
    "end_node": ("tb", "forget the node (its present labels)"),
}
(new_state, moved_targets, n_columns, node_totals, search_feature, add_column_gain, children_gain,
 end_node) = (_operation(name, params, OVERLOAD if name in ("new_state", "moved_targets") else OVERLOAD_BORROWING,
                         doc)
              for name, (params, doc) in OPERATIONS.items())
