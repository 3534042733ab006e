"""Rank features with spark_fr: ``spark-submit jobs/rank.py --input ... [options]`` or ``python jobs/rank.py``.

Run ``python jobs/rank.py --help`` for the options (the command-line contract of DESIGN.md).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

from spark_fr.cli import abandoned_start, main, settle_abandoned_starts  # noqa: E402
from spark_fr.runtime.session import remove_jvm_log  # noqa: E402

if __name__ == "__main__":
    code = main()
    # the run failed before it needed Spark: do not wait for the JVM to finish starting; interrupted or
    # terminated (130, 143; everything was cleaned up): do not wait for the driver's worker threads either
    if abandoned_start() or code in (130, 143):
        settle_abandoned_starts()  # a JVM launch under way finishes (and removes its temporary folder) first
        sys.stdout.flush()
        sys.stderr.flush()
        remove_jvm_log()
        os._exit(code)
    sys.exit(code)
