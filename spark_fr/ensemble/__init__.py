"""PCT ensembles (bagging, random forests, extra trees) and gradient boosting on Spark, with their scores.

The methods register their numba warm-ups here (:mod:`spark_fr.runtime.warmups`): a run warms what it needs.
"""
from ..runtime import warmups

# compile_seconds: CPU seconds from an empty numba cache, measured on a 2-core machine (2026-11-29), rounded up
warmups.register("ensemble", "spark_fr.ensemble.spark", "warm_up_kernels", options=("missing", "scores"),
                 compile_seconds=30)
warmups.register("label_sets", "spark_fr.ensemble.spark", "warm_up_label_sets", options=("missing", "scores"),
                 compile_seconds=25, method="ensemble")  # trees on label-sparse targets (HMLC), when a run's are
warmups.register("boosting", "spark_fr.ensemble.boosting", "warm_up_kernels", compile_seconds=40)
