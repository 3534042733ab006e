"""spark_fr peer given a Spark DataFrame, as a notebook user calls it: ``spark_fr.rank(df, ...)``.

    python jobs/peers/spark_fr_dataframe.py wide.parquet OUT_DIR --targets class --trees 100 \
        --scores genie3,symbolic --seed 1

Starts a local Spark session first as ``jobs/rank.py`` would (``spark_fr.runtime.session.get_spark``:
``--master``, default ``local[*]``), makes the DataFrame in Spark: the table read with ``spark.read.parquet``
and filtered on a non-null target (which keeps every row: a notebook's DataFrame after its own steps, whose rows
only Spark's pipeline can give; a plain file scan a reader could take from its files), runs one small job of its
own (a range collected as Arrow, as a notebook's session has run jobs before), then ranks the DataFrame with
``spark_fr.rank(df, targets=..., trees=..., scores=..., seed=...)`` and writes the ranking into OUT_DIR
(``ranking.csv`` and ``run.json``, as ``jobs/rank.py --output OUT_DIR --output-format csv`` does, so that the
benchmark reads it the same way). Prints the seconds of the session (the imports, the session, the
DataFrame's definition and the warm-up: what a notebook user has already paid), of ``rank`` (from the
DataFrame to the ranking) and the run's own phases (``statistics_s``, ``encoding_s``, ``trees_s``, ...: the
``timings`` of ``run.json``). spark_fr is imported from this repository.
"""
from __future__ import annotations

import time

T0 = time.perf_counter()  # before the imports: session_s covers them

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def parse_args(argv=None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("table", help="a Parquet file or directory, read with spark.read.parquet")
    ap.add_argument("output", help="the output directory (ranking.csv and run.json)")
    ap.add_argument("--targets", required=True, help="target columns, comma-separated")
    ap.add_argument("--trees", type=int, default=100, help="trees (default 100)")
    ap.add_argument("--scores", default="genie3,symbolic", help="scores (default genie3,symbolic)")
    ap.add_argument("--seed", type=int, default=1, help="seed (default 1)")
    ap.add_argument("--master", default="local[*]", help="Spark master (default local[*])")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    """Rank the table given as a Spark DataFrame; write the ranking and the timings."""
    args = parse_args(argv)
    import spark_fr
    from spark_fr.runtime.session import get_spark

    spark = get_spark(master=args.master, app_name="spark_fr dataframe", quiet=True)
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.read.parquet(args.table).where(" and ".join(f"`{t}` is not null" for t in args.targets.split(",")))
    spark.range(1 << 16).selectExpr("id", "cast(id as double) / 7 as x").toArrow()  # warm-up: not the table
    t1 = time.perf_counter()
    ranking = spark_fr.rank(df, targets=args.targets, trees=args.trees, scores=args.scores, seed=args.seed,
                            spark=spark)
    t2 = time.perf_counter()
    ranking.write(args.output, format="csv")
    timings = json.loads((Path(args.output) / "run.json").read_text()).get("timings", {})
    print(f"session {t1 - T0:.1f} s, rank {t2 - t1:.1f} s; " + ", ".join(
        f"{k} {v:.1f}" for k, v in timings.items() if isinstance(v, (int, float))))
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
