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
