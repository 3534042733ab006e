"""PCT ensembles (bagging, random forests, extra trees) and gradient boosting on Spark, with their scores.

The methods register their numba warm-ups here (:mod:`spark_fr.runtime.warmups`): a run warms what it needs.
"""
from ..runtime import warmups

warmups.register("ensemble", "spark_fr.ensemble.spark", "warm_up_kernels", options=("missing",))
warmups.register("boosting", "spark_fr.ensemble.boosting", "warm_up_kernels")
