"""The Relief family (Relief, RReliefF, the structured-output variants, ReliefE) on Spark.

The methods register their numba warm-up here (:mod:`spark_fr.runtime.warmups`): one for Relief and ReliefE.
"""
from ..runtime import warmups

warmups.register("relief", "spark_fr.relief.warmup", "warm_up_kernels")
warmups.register("reliefe", "spark_fr.relief.warmup", "warm_up_kernels")
