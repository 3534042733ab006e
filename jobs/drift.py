"""Compare runs of a rankings table: ``spark-submit jobs/drift.py --table T [--last N | --runs A,B] [options]``.

Rank changes, features entering and leaving the top K, the Fuzzy Jaccard Index of the top-k sets and its area,
a heat map (``--plot``), and exit code 3 when the drift (1 - area under the Fuzzy Jaccard curve) is above
``--fail-above`` (a scheduler's alert). Run ``python jobs/drift.py --help`` for the options;
:mod:`spark_fr.evaluation.drift` for the definitions.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

from spark_fr.evaluation.drift_job import main  # noqa: E402
from spark_fr.runner import exit_process  # noqa: E402

if __name__ == "__main__":
    exit_process(main())  # as jobs/rank.py's
