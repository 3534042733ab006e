"""Is the ranking worth reading? ``spark-submit jobs/evaluate.py --input ... [options]`` or ``python jobs/evaluate.py``.

Ranks the training part of every split with spark_fr and judges each ranking by weighted kNN on the test part
against the uniform baseline (the thesis's protocols). Run ``python jobs/evaluate.py --help`` for the options;
:mod:`spark_fr.evaluation` for the definitions.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

from spark_fr.evaluation.job import main  # noqa: E402
from spark_fr.runner import exit_process  # noqa: E402

if __name__ == "__main__":
    exit_process(main())  # as jobs/rank.py's
