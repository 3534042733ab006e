"""spark_fr: feature ranking for structured outputs (PCT ensembles, Relief) at Spark scale.

>>> import spark_fr
>>> ranking = spark_fr.rank("enb.arff", targets="Y1,Y2", trees=100, seed=1)   # doctest: +SKIP
>>> ranking.to_pandas().head()                                                # doctest: +SKIP
"""
import importlib.util as _importlib_util

if _importlib_util.find_spec("pyspark") is None:  # not a dependency (docs/install.md): say which install brings it
    # (found, not imported: a run on files never imports pyspark, a tenth of a second of every job's start)
    raise ImportError("spark_fr needs pyspark: pip install 'spark_fr[spark]' (a Spark runtime's own pyspark, or "
                      "pyspark-client for Spark Connect, does too)")

from .runtime import numba_cache as _numba_cache  # noqa: E402

_numba_cache.install()  # before any kernel is defined: one numba cache rule for a zip (--py-files) and a wheel

from .errors import InputError  # noqa: E402
from .runtime.logs import set_verbosity  # noqa: E402
from .version import __version__  # noqa: E402


def __getattr__(name):
    # rank and Ranking on first use: they pull in pyspark.ml and pandas, which the relational local engine and
    # the jobs' argument checks do not need (imports are most of a small run's time)
    if name == "rank":
        from .api import rank

        return rank
    if name == "Ranking":
        from .ranking import Ranking

        return Ranking
    # the pyspark.ml Estimator is imported on first use (it pulls in pyspark.ml)
    if name == "rank_relational":  # relational data (imports the relational package on first use)
        from .relational.rank import rank_relational

        return rank_relational
    if name == "compare_runs":  # drift between runs of a rankings table (spark_fr.evaluation.drift)
        from .evaluation.drift import compare_runs

        return compare_runs
    if name == "sklearn":  # the scikit-learn selector (spark_fr.sklearn.FeatureRanker; needs scikit-learn)
        import importlib

        return importlib.import_module(f"{__name__}.sklearn")
    if name in ("FeatureRanker", "FeatureRankingModel"):
        from . import estimator

        return getattr(estimator, name)
    raise AttributeError(name)


__all__ = ["rank", "rank_relational", "Ranking", "InputError", "set_verbosity", "compare_runs", "FeatureRanker", "FeatureRankingModel", "__version__"]
