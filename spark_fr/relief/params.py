"""Parameters of a Relief run: the Relief options of :mod:`spark_fr.options`, plus two internal settings."""
from __future__ import annotations

from ..options import MethodParams


class ReliefParams(MethodParams):
    """Relief settings; attributes as in :mod:`spark_fr.options` (``neighbours``, ``iterations``, ``sigma``,
    ``target_distance``, ``influence``, ``mode``, ``hmlc_w0``, ``hmlc_squared``, ``hmlc_normaliser``,
    ``per_target``, ``seed``) and:

    Attributes
    ----------
    shards : int
        The sampled instances are cut into this many shards; each shard's weights estimate the same
        quantity from fewer instances, and ``importance_std`` is their spread.
    broadcast_limit : int
        Rows x features above which ``mode='auto'`` picks tall mode.
    """

    method = "relief"
    internal = {"shards": 16, "broadcast_limit": 50_000_000}

    def n_iterations(self, n_rows: int) -> int:
        """m for ``n_rows`` rows (at least 1, at most n_rows)."""
        m = self.iterations
        if isinstance(m, float):
            m = int(round(m * n_rows))
        return max(1, min(int(m), n_rows))


class ReliefEParams(ReliefParams):
    """ReliefE settings; attributes as in :mod:`spark_fr.options` (``k``, ``update``, ``embed``, ``dimension``,
    ``embedder``, ``mlc_distance``, ``sample``, ``density_threshold``, ``iterations``, ``k_max``, ``mode``
    (Relief's ``--relief-mode``), ``seed``) and:

    Attributes
    ----------
    shards : int
        As Relief's: the sampled rows are cut into this many shards (``importance_std`` is their spread).
    transform_rows : int
        Rows per embedding transform call (about: the chunks are defined by the rows' content keys).
    broadcast_limit : int
        As Relief's: rows x features above which ``mode='auto'`` (``--relief-mode``) picks tall mode.
    """

    method = "reliefe"
    internal = {"shards": 16, "transform_rows": 4096, "broadcast_limit": 50_000_000}

    @property
    def adaptive(self) -> bool:
        return self.k == "adaptive"
