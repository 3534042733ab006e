"""Rank features with spark_fr: ``spark-submit jobs/rank.py --input ... [options]`` or ``python jobs/rank.py``.

Run ``python jobs/rank.py --help`` for the options (the command-line contract of DESIGN.md).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

from spark_fr.cli import main  # noqa: E402
from spark_fr.runner import exit_process  # noqa: E402

if __name__ == "__main__":
    # a run that ended before it needed Spark, or was interrupted or terminated, does not wait for the JVM's
    # start or the driver's worker threads (spark_fr.runner.exit_process)
    exit_process(main())
