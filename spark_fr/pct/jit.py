"""How the grower's numba kernels are compiled: three sets of options, used as ``@njit(**KERNEL)`` (no Spark).

Sketch
------
Every kernel of :mod:`spark_fr.pct` is compiled with :data:`KERNEL` (cached, without the GIL, numpy's error
model); small helpers are inlined into their callers with :data:`INLINE`; the kernels of the split search,
which run once per node and feature and only read and write arrays their caller owns, are compiled with
:data:`BORROWING` (no reference counting).

Why: a tree's state travels as named tuples of arrays (:mod:`spark_fr.pct.targets`). A numba function
increfs every array of its arguments on entry and decrefs them on return, and numba's reference-count pruning
removes these pairs only when no call that may raise stands between them: an atomic increment and decrement
per array, per call. With the node's state in named tuples and the search written in layers (node loop, split
search, target backend, histogram, scan), that is a few hundred atomic operations per node and feature: the
first version of the one grow loop was 1.45x slower than the two growers it replaced (1e5 x 50 x 3, full depth).

Decision: the split search's kernels borrow. They allocate nothing and return no array that is not one of
their arguments (numba refuses to compile either without its runtime), and return none of their arguments
(tests/pct/test_grow_memory.py reads them), so every array they touch is held by a caller that counts references;
growing trees of every kind with numba's allocation counts on frees every allocation once (the same test
module). A kernel called by a borrowing one is compiled without reference counting too (numba passes the
option down to the callees that do not set it). Option ``_nrt`` is numba's own (not in its documentation;
numba's tests use it): a numba without it refuses these options when the kernels compile, loudly.

Decision: numpy's error model everywhere (``error_model="numpy"``): a float division by zero gives inf or NaN
instead of raising ZeroDivisionError. No kernel divides by zero on any input it accepts (the recorded trees and
the golden rankings are unchanged to the bit), and without a possible exception after each division the
reference counts of the other kernels are pruned too.
"""
from __future__ import annotations

#: every kernel of the grower
KERNEL = {"cache": True, "nogil": True, "error_model": "numpy"}
#: a small helper inlined (numba IR) into its callers
INLINE = dict(KERNEL, inline="always")
#: the split search's kernels: they read and write arrays their caller holds, allocate nothing, return no array
BORROWING = dict(KERNEL, _nrt=False)
#: the options of an ``@overload`` implementation (numba compiles it with these; it is never cached by itself)
OVERLOAD = {"nogil": True, "error_model": "numpy"}
#: the overload implementation of a borrowing operation
OVERLOAD_BORROWING = dict(OVERLOAD, _nrt=False)
