"""spark_fr in a running session (the Relief and ReliefE benchmarks' ``spark_fr_warm``): what a notebook user
waits for.

    python jobs/peers/spark_fr_warm.py data.arff --targets y --params '{"relief_neighbours": 10}' result.json
    python jobs/peers/spark_fr_warm.py madelon.mat --targets class --method reliefe result.json

One Python process starts a local Spark session (``spark_fr.runtime.session.get_spark``), then calls
``spark_fr.rank(ARFF, targets=..., method=METHOD, spark=spark, **PARAMS)`` ``--calls`` times (2) and
reports the last call: the first pays for the session's first jobs and the numba compilation of the
workers, the last is the time of one more ranking in a session that is already running. ``--method`` is
``relief`` (default) or ``reliefe``; the score read back and the algorithm's timing have the method's name.
Writes ``{"order": [features, by the joint rank of the method's score], "spark_start_s": start-up including
imports, "first_call_s", "call_s": the last call, "algo_s": its ``relief_s`` (``reliefe_s``) timing,
"spark_fr_timings": all its timings}``. spark_fr is imported from this repository, not from an installed copy.
"""
from __future__ import annotations

import time

T0 = time.perf_counter()  # before the imports: spark_start_s covers them

import json  # noqa: E402
import logging  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from _common import peer_parser, write_result  # noqa: E402


def rank_warm(arff: str, targets: str, params: dict, calls: int, method: str = "relief") -> dict:
    """Start Spark, rank ``calls`` times in the same session, report the last call.

    Parameters
    ----------
    arff : str
    targets : str
        Comma-separated target columns.
    params : dict
        Keywords of :func:`spark_fr.rank` (``relief_neighbours``, ``relief_iterations``, ``seed``,
        ``relief_mode``, ...).
    calls : int
        How many times to rank (at least 1).
    method : str
        ``relief`` or ``reliefe``: the method, its score and its timing ``<method>_s``.

    Returns
    -------
    dict
        See the module docstring.
    """
    logging.basicConfig(level=logging.WARNING)
    import spark_fr
    from spark_fr.runtime.session import get_spark

    spark = get_spark()
    spark.sparkContext.setLogLevel("ERROR")
    started = time.perf_counter() - T0
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        ranking = spark_fr.rank(arff, targets=targets, method=method, spark=spark, **params)
        times.append(time.perf_counter() - t)
    df = ranking.to_pandas()
    df = df[(df["score"] == method) & (df["target"] == "__all__")].sort_values("rank")
    timings = ranking.metadata.get("timings", {})
    spark.stop()
    return {"order": list(df["feature"]), "spark_start_s": started, "first_call_s": times[0], "call_s": times[-1],
            "algo_s": timings.get(f"{method}_s"), "spark_fr_timings": timings}


def main(argv=None) -> int:
    """Command line: ``ARFF --targets T [--method M] [--params JSON] [--calls N] OUTPUT``."""
    ap = peer_parser(__doc__, "input of spark_fr.rank (ARFF, CSV, Parquet, ...)")
    ap.add_argument("--targets", required=True, help="comma-separated target columns")
    ap.add_argument("--params", type=json.loads, default={}, help="JSON object of spark_fr.rank keywords")
    ap.add_argument("--method", choices=("relief", "reliefe"), default="relief", help="default relief")
    ap.add_argument("--calls", type=int, default=2, help="rank() calls in the session, the last reported (default 2)")
    a = ap.parse_args(argv)
    if a.calls < 1:
        ap.error("--calls must be at least 1")
    write_result(a.output, rank_warm(a.arff, a.targets, a.params, a.calls, a.method))
    return 0


if __name__ == "__main__":
    sys.exit(main())
