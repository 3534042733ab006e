"""spark_fr peer of the relational benchmark: ``generate_features`` on a relational schema, written as Parquet.

    python jobs/peers/spark_fr_relational.py conf/relational/financial.yaml result.json [--max-depth 2]

Calls ``spark_fr.relational.generate_features(spark, SCHEMA, engine=ENGINE)`` (``--engine``, default
``auto``; with the schema's ``max_depth`` or ``--max-depth``; the data checks on unless ``--no-check``) and
writes the result (id, target, features) as Parquet (``--matrix``, default ``features.parquet/`` next to
OUTPUT), so that the whole plan runs. Under ``auto``, local inputs that fit the driver (financial's
headerless TSV, the synthetic set's Parquet) go to the local engine (``spark_fr.relational.local``): the JVM
is never started (the session is a lazy ``SessionStart``, started
only if the local engine turns the input down) and the pandas result is written as one Parquet file in that
directory. Otherwise a local Spark session starts as ``python jobs/rank.py`` does
(``spark_fr.runtime.session.get_spark``: ``--master``, default ``local[*]``; loopback; the driver gets half
of the machine's memory, or ``SPARK_FR_DRIVER_MEMORY``). Prints ``rows x features`` and writes ``{"rows",
"features", "feature_names" (first 50), "spark_start_s" (imports and session; local engine: imports only),
"generate_s" (planning, data checks, frequent values; local engine: all the work), "write_s" (the plan
itself; local: the Parquet file), "max_depth", "master", "spark_version" (None when local), "aggregates",
"engine" ("local" or "spark")}`` to OUTPUT. spark_fr is imported from this repository, not from an
installed copy.

``--dataframes`` starts the session first (``get_spark``, counted in ``spark_start_s``), reads every table of
the schema with ``spark.read.parquet`` and passes them as DataFrames (``tables=``), as a notebook user with
tables in memory calls it: under ``auto``, DataFrames that fit the driver are collected (Arrow) to the local engine.
Before the clock of ``frames_s`` starts, the session runs one small job of its own
(:func:`warm_up`: a range collected as Arrow, which touches none of the tables), as a notebook's session has
run jobs before the user asks for features. ``engine_reason`` (why that engine) goes into OUTPUT too,
``session_s``: the session's start, the DataFrames' definition and the warm-up (what a notebook user has already
paid), and ``frames_s``: from the DataFrames to the written features (``generate_s`` + ``write_s``; featuretools'
peer reports the same from its pandas frames).

``--common-aggregates`` keeps only the schema's aggregates that featuretools also has (see
``featuretools_dfs.py``): it drops the count of distinct values of numeric and date attributes and the
share of frequent values of nominal ones (:data:`NO_FEATURETOOLS_COUNTERPART`).
"""
from __future__ import annotations

import time

T0 = time.perf_counter()  # before the imports: spark_start_s covers them

import json  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

#: spark_fr aggregates, by position, that featuretools' deep feature synthesis has no primitive for
NO_FEATURETOOLS_COUNTERPART = {"numeric": ("count_distinct",), "date": ("count_distinct",), "nominal": ("share",),
                               "outer": ("count_distinct",)}


def common_aggregates(aggregates):
    """``aggregates`` (an ``AggregateSpec``) without :data:`NO_FEATURETOOLS_COUNTERPART`."""
    import dataclasses

    return dataclasses.replace(aggregates, **{kind: tuple(a for a in getattr(aggregates, kind) if a not in drop)
                                              for kind, drop in NO_FEATURETOOLS_COUNTERPART.items()})


def run(schema_path: str, output: str, matrix: str | None, max_depth: int | None, master: str, check: bool,
        common: bool = False, engine: str = "auto", dataframes: bool = False) -> dict:
    """Generate and write the features; the facts of the run (see the module docstring)."""
    import dataclasses

    from spark_fr.relational import generate_features, load_schema
    from spark_fr.relational.local_sources import local_possible

    schema = load_schema(schema_path)
    if max_depth is not None:
        schema = dataclasses.replace(schema, max_depth=max_depth)
    if common:
        schema = dataclasses.replace(schema, aggregates=common_aggregates(schema.aggregates))
    tables, session_s = None, None
    if dataframes:
        from spark_fr.runtime.session import get_spark

        t = time.perf_counter()
        spark = get_spark(master=master, app_name="spark_fr relational", quiet=True)
        tables = {n: spark.read.parquet(spec.source.path) for n, spec in schema.tables.items()}
        warm_up(spark)
        session_s = round(time.perf_counter() - t, 3)
    elif engine == "local" or (engine == "auto" and local_possible(schema)):  # the local engine will likely take it: the JVM starts only if it does not
        from spark_fr.runtime.session import SessionStart

        spark = SessionStart(lazy=True, master=master, app_name="spark_fr relational", quiet=True)
    else:
        from spark_fr.runtime.session import get_spark

        spark = get_spark(master=master, app_name="spark_fr relational", quiet=True)
    t1 = time.perf_counter()
    gen = generate_features(spark, schema, tables, check=check, engine=engine)
    t2 = time.perf_counter()
    path = matrix or str(Path(output).resolve().parent / "features.parquet")
    if gen.engine == "local":
        import shutil

        from spark_fr.relational.local import write_parquet

        if Path(path).is_dir():
            shutil.rmtree(path)
        elif Path(path).exists():
            Path(path).unlink()
        Path(path).mkdir(parents=True)
        write_parquet(gen.pandas, str(Path(path) / "part-00000.parquet"))  # a directory, as Spark writes it
        t3 = time.perf_counter()
        rows = len(gen.pandas)
        facts = {"master": "driver (local engine)", "spark_version": None}
        if dataframes:
            spark.stop()
    else:
        spark = spark.result() if hasattr(spark, "result") else spark
        spark.sparkContext.setLogLevel("ERROR")
        gen.frame.write.mode("overwrite").parquet(path)
        t3 = time.perf_counter()
        rows = spark.read.parquet(path).count()  # from the files' footers
        facts = {"master": spark.sparkContext.master, "spark_version": spark.version}
    print(f"{rows} rows x {len(gen.features)} features ({gen.engine} engine)")
    result = {"rows": rows, "features": len(gen.features), "feature_names": gen.features[:50], "matrix": path,
              "spark_start_s": round(t1 - T0, 3), "generate_s": round(t2 - t1, 3), "write_s": round(t3 - t2, 3),
              "max_depth": schema.max_depth, **facts, "aggregates": dataclasses.asdict(schema.aggregates),
              "engine": gen.engine, "engine_reason": gen.engine_reason, "dataframes": dataframes,
              "session_s": session_s, "frames_s": round(t3 - t1, 3) if dataframes else None}
    if gen.engine == "spark":
        spark.stop()
    return result


def warm_up(spark) -> None:
    """One small job on a new session, as a notebook's session has run before: 2^16 numbers of a range
    collected as Arrow (the path DataFrames take to the local engine). It reads none of the benchmark's tables."""
    spark.range(1 << 16).selectExpr("id", "cast(id as double) / 7 as x").toArrow()


def main(argv=None) -> int:
    """Command line: ``SCHEMA.yaml OUTPUT [--max-depth D] [--matrix PATH] [--master URL] [--no-check]``."""
    import argparse

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("schema", help="a spark_fr relational schema (YAML)")
    ap.add_argument("output", help="result JSON file")
    ap.add_argument("--max-depth", type=int, help="longest foreign-key path (default: the schema's max_depth)")
    ap.add_argument("--matrix", help="feature table, a Parquet directory (default: features.parquet next to OUTPUT)")
    ap.add_argument("--master", default="local[*]", help="Spark master (default local[*])")
    ap.add_argument("--no-check", dest="check", action="store_false", help="skip the key and foreign-key checks")
    ap.add_argument("--engine", choices=("auto", "spark", "local"), default="auto",
                    help="generate_features' engine (default auto)")
    ap.add_argument("--dataframes", action="store_true",
                    help="pass the tables as DataFrames read with spark.read.parquet (the session starts first)")
    ap.add_argument("--common-aggregates", action="store_true",
                    help="only the aggregates featuretools also has (see the description)")
    a = ap.parse_args(argv)
    result = run(a.schema, a.output, a.matrix, a.max_depth, a.master, a.check, a.common_aggregates, a.engine,
                 a.dataframes)
    Path(a.output).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
