"""The one Relief shard kernel: the accumulators of a micro-block of sampled instances (numba, no Spark).

Algorithm sketch
----------------
Relief and ReliefE, broadcast and tall mode, all run this loop; only the neighbourhood (where the neighbours
come from, :mod:`spark_fr.relief.neighbourhood`) and the update rule differ::

    for each group of instances (dense rows: 8 at a time, their d_X to every row in one pass; else 1)
        for each instance q (skipped when its class is missing)
            search q's neighbours                      all rows / merged candidates / embedded space
            for each class c (or the one group of rows)
                N  <- q's neighbours of class c         in (distance, row key) order
                acc += update(q, N)                     ReliefF / RReliefF (dense), ReliefE (sparse rows)
            iterations += 1

Backends: dense scaled rows (:mod:`spark_fr.relief.dense`, Relief's broadcast mode), merged candidates of the
data blocks (:mod:`spark_fr.relief.candidates`, Relief's tall mode), sparse rows and their embedded space
(:mod:`spark_fr.relief.embedded`, ReliefE: every row, or the neighbours tall mode chose). The accumulators
(:data:`spark_fr.relief.accumulators.Accumulators`) are plain sums inside one call; callers pass one
micro-block of instances (:mod:`spark_fr.relief.sampling`) and merge the calls exactly.
"""
from __future__ import annotations

from numba import njit

from .accumulators import ITERATIONS, zero_accumulators
from .neighbourhood import dims, neighbours, new_scratch, own_class, search, start_group, update


@njit(cache=True, nogil=True)
def relief_shard(space, rule):
    """The accumulators of the instances of ``space`` (see the module sketch).

    Parameters
    ----------
    space : a neighbourhood backend (named tuple; :mod:`spark_fr.relief.neighbourhood`)
        The rows or candidates, the instances and the neighbour search's settings.
    rule : an update rule (named tuple: :class:`spark_fr.relief.update.DenseRule` or
        :class:`spark_fr.relief.sparse_update.SparseRule`)

    Returns
    -------
    Accumulators
    """
    m, C, D, T, G = dims(space)
    acc = zero_accumulators(m, C, D, T)
    s = new_scratch(space, rule)
    for q0 in range(0, m, G):
        g_n = min(G, m - q0)
        start_group(space, s, q0, g_n)
        for q in range(q0, q0 + g_n):
            own = own_class(space, q)
            if own != own:
                continue
            search(space, s, q)
            for c in range(C):
                found = neighbours(space, s, q, c)
                acc.ks[q, c] = update(rule, space, s, q, c, own, found, acc)
            acc.totals[ITERATIONS] += 1.0
    return acc
