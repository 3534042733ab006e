"""Spark MLlib peer of the tall benchmark: ``pyspark.ml`` RandomForestRegressor's feature importances.

    python jobs/peers/mllib_forest.py tall.parquet result.json --targets 3 --target t1 --trees 100 --max-depth 5

Starts a Spark session the way ``python jobs/rank.py`` does (``--master``, default ``local[*]``; loopback;
the driver gets half of the machine's memory, at least 2 GB, or ``SPARK_FR_DRIVER_MEMORY``; the workers
run this interpreter), reads the Parquet table with ``spark.read.parquet``, puts the features (the first
``--features`` columns; default all but the last ``--targets``) into one vector column with
``VectorAssembler`` and fits ``RandomForestRegressor(labelCol=--target, numTrees=T, maxDepth=D,
featureSubsetStrategy="sqrt", minInstancesPerNode=L, subsamplingRate=R, maxBins=B, seed=S)``. MLlib's
trees take one label column, so only one target is used (multi-target regression is not available in
MLlib); the other parameters stay at MLlib's defaults (``maxBins`` 32, bootstrap on, impurity variance).
Writes ``{"order": [features, most important first], "importance": {feature: featureImportances value},
"target": the label used, "spark_start_s", "read_s" (reading and assembling, counted), "fit_s",
"spark_version"}``.
"""
from __future__ import annotations

import time

T0 = time.perf_counter()  # before the imports: spark_start_s covers them

import os  # noqa: E402
import sys  # noqa: E402

from _common import order_by_importance, peer_parser, write_result  # noqa: E402


def driver_memory() -> str:
    """Half of the machine's physical memory, at least 2 GB (or ``SPARK_FR_DRIVER_MEMORY``): spark_fr's rule."""
    env = os.environ.get("SPARK_FR_DRIVER_MEMORY")
    if env:
        return env
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return f"{max(2, int(total / 2 ** 30 / 2))}g"


def start_spark(master: str):
    """A Spark session configured as spark_fr's ``python jobs/rank.py`` configures its own.

    Parameters
    ----------
    master : str
        A Spark master URL (``local[*]``, ``local[2]``, ``local-cluster[2,1,4096]``, ...).

    Returns
    -------
    pyspark.sql.SparkSession
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("mllib_forest").master(master)
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = builder.config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
    spark = (builder.config("spark.ui.showConsoleProgress", "false").config("spark.sql.shuffle.partitions", "8")
             .config("spark.driver.memory", driver_memory()).getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def rank(path: str, features: int | None, targets: int, target: str | None, trees: int, max_depth: int, seed: int,
         master: str, min_instances: int = 2, subsampling_rate: float = 1.0, max_bins: int = 32) -> dict:
    """Fit MLlib's forest on one target and order the features by ``featureImportances``.

    Parameters
    ----------
    path : str
        A Parquet table: numeric features, then the targets.
    features : int or None
        Leading feature columns (None: all but the last ``targets``).
    targets : int
        Target columns after the features.
    target : str or None
        The label column (None: the first target).
    trees, max_depth, seed : int
        ``numTrees``, ``maxDepth``, ``seed``.
    master : str
    min_instances : int
        ``minInstancesPerNode``.
    subsampling_rate : float
        ``subsamplingRate`` (fraction of the rows per tree).
    max_bins : int
        ``maxBins``.

    Returns
    -------
    dict
        See the module docstring.
    """
    spark = start_spark(master)
    from pyspark.ml.feature import VectorAssembler
    from pyspark.ml.regression import RandomForestRegressor

    t0 = time.perf_counter()
    df = spark.read.parquet(path)
    names = df.columns
    p = len(names) - targets if features is None else features
    feature_names, target_names = names[:p], names[p:p + targets]
    label = target or target_names[0]
    if label not in target_names:
        raise SystemExit(f"--target {label} is not one of the target columns {', '.join(target_names)}")
    data = VectorAssembler(inputCols=feature_names, outputCol="features").transform(df).select("features", label)
    n_rows = data.count()
    t1 = time.perf_counter()
    model = RandomForestRegressor(featuresCol="features", labelCol=label, numTrees=trees, maxDepth=max_depth,
                                  featureSubsetStrategy="sqrt", minInstancesPerNode=min_instances,
                                  subsamplingRate=subsampling_rate, maxBins=max_bins, seed=seed).fit(data)
    t2 = time.perf_counter()
    imp = model.featureImportances.toArray()
    order = order_by_importance(feature_names, imp)
    result = {"order": [feature_names[i] for i in order],
              "importance": {feature_names[i]: float(imp[i]) for i in order}, "target": label, "rows": n_rows,
              "spark_start_s": round(t0 - T0, 3), "read_s": round(t1 - t0, 3), "fit_s": round(t2 - t1, 3),
              "spark_version": spark.version}
    spark.stop()
    return result


def main(argv=None) -> int:
    """Command line: ``PARQUET OUTPUT [--features P] [--targets K] [--target NAME] [--trees T] ...``."""
    ap = peer_parser(__doc__, "Parquet table, features first, targets last")
    ap.add_argument("--features", type=int, help="leading feature columns (default: all but the targets)")
    ap.add_argument("--targets", type=int, default=1, help="target columns after the features (default 1)")
    ap.add_argument("--target", help="the label column (default: the first target)")
    ap.add_argument("--trees", type=int, default=100, help="numTrees (default 100)")
    ap.add_argument("--max-depth", type=int, default=5, help="maxDepth (default 5, MLlib's default; at most 30)")
    ap.add_argument("--seed", type=int, default=1, help="seed (default 1)")
    ap.add_argument("--min-instances-per-node", type=int, default=2,
                    help="minInstancesPerNode (default 2, spark_fr's --min-samples-leaf)")
    ap.add_argument("--subsampling-rate", type=float, default=1.0, help="subsamplingRate (default 1.0)")
    ap.add_argument("--max-bins", type=int, default=32, help="maxBins (default 32, MLlib's default)")
    ap.add_argument("--master", default="local[*]", help="Spark master (default local[*])")
    a = ap.parse_args(argv)
    write_result(a.output, rank(a.arff, a.features, a.targets, a.target, a.trees, a.max_depth, a.seed, a.master,
                                a.min_instances_per_node, a.subsampling_rate, a.max_bins))
    return 0


if __name__ == "__main__":
    sys.exit(main())
