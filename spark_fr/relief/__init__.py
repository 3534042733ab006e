"""The Relief family (Relief, RReliefF, the structured-output variants, ReliefE) on Spark.

The methods register their numba warm-up here (:mod:`spark_fr.runtime.warmups`): one for Relief, one for ReliefE.
"""
from ..runtime import warmups

# compile_seconds: CPU seconds from an empty numba cache, measured on a 2-core machine (2026-11-29), rounded up
warmups.register("relief", "spark_fr.relief.warmup", "warm_up_relief", compile_seconds=45)
warmups.register("reliefe", "spark_fr.relief.warmup", "warm_up_reliefe", compile_seconds=45)
