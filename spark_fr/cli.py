"""Command line of ``jobs/rank.py`` (``spark-submit`` or plain ``python``), with YAML configs.

Every option can come from ``--config FILE.yaml`` (same names, dashes or underscores); the command line
wins. Exit codes: 0 success, 2 bad input or parameters (one line on standard error, nothing written),
1 an unexpected failure.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
import time

from .errors import InputError, one_line

log = logging.getLogger("spark_fr")

DEFAULTS = {
    "format": "auto", "task": "auto", "method": "ensemble", "seed": 0, "output_format": "csv", "log_level": "info",
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (options default to None so that a config file can fill them)."""
    p = argparse.ArgumentParser(
        prog="jobs/rank.py",
        description="Rank the features of a table for predicting structured targets (spark_fr).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Options can also be given in a YAML file (--config); the command line wins.\n"
               "Example: python jobs/rank.py --input ../shared/datasets/mtr_enb/enb.arff --targets Y1,Y2 "
               "--output out/enb")
    io_ = p.add_argument_group("input and output")
    io_.add_argument("--input", help="ARFF (also zipped, HARFF), CSV, Parquet, Delta directory or .mat file; several "
                                     "ARFF or Parquet files (same attributes) separated by commas")
    io_.add_argument("--format", choices=["auto", "arff", "csv", "parquet", "delta", "mat"],
                     help="input format (default: from the file name)")
    io_.add_argument("--labels-xml", help="Mulan label file (multi-label classification)")
    io_.add_argument("--features-col", help="vector column holding the features (Parquet/Delta input)")
    io_.add_argument("--targets", help="target column(s), comma-separated; absent for unsupervised")
    io_.add_argument("--output", help="output directory (csv, parquet) or Delta table path")
    io_.add_argument("--output-format", choices=["csv", "parquet", "delta"], help="default: csv")
    io_.add_argument("--mode", choices=["overwrite", "error", "append"],
                     help="when the output exists (default: overwrite; append for delta)")
    io_.add_argument("--plot", help="write a PNG bar chart of the top features per score")
    io_.add_argument("--config", help="YAML file with any of these options")
    task = p.add_argument_group("task and method")
    task.add_argument("--task", choices=["auto", "classification", "regression", "mtr", "mlc", "hmlc",
                                         "unsupervised"], help="default: inferred from the targets")
    task.add_argument("--semi-supervised", action="store_true", default=None,
                      help="use rows with missing targets as unlabelled examples")
    task.add_argument("--method", choices=["ensemble", "relief", "reliefe"], help="default: ensemble")
    ens = p.add_argument_group("ensembles")
    ens.add_argument("--ensemble", choices=["rf", "bagging", "extra_trees"], help="default: rf")
    ens.add_argument("--trees", type=int, help="number of trees (default 100)")
    ens.add_argument("--scores", help="comma list of symbolic, genie3, rf (default: all three)")
    ens.add_argument("--per-target", action="store_true", default=None,
                     help="add one ranking per target (MTR, MLC)")
    ens.add_argument("--max-features", help="features tried per node: sqrt, log2, all, a count or a fraction "
                                            "(default: sqrt for rf, all otherwise)")
    ens.add_argument("--min-samples-leaf", type=float, help="minimal examples per leaf (default 2)")
    ens.add_argument("--max-depth", type=int, help="maximal tree depth (default: unlimited)")
    boot = ens.add_mutually_exclusive_group()
    boot.add_argument("--bootstrap", dest="bootstrap", action="store_true", default=None,
                      help="bootstrap the rows of each tree (default: on for rf and bagging)")
    boot.add_argument("--no-bootstrap", dest="bootstrap", action="store_false")
    ens.add_argument("--resample-constant-features", action="store_true", default=None,
                     help="at a node, draw other features in place of sampled ones that are constant there "
                          "(scikit-learn's behaviour; default: the sampled features are the candidates and the "
                          "node becomes a leaf if none can split it, as in the thesis and CLUS)")
    ens.add_argument("--symbolic-weight", type=float,
                     help="Symbolic score with w**depth per node instead of |E(N)|/|E|")
    rel = p.add_argument_group("relief")
    rel.add_argument("--relief-neighbours", type=int, help="number of neighbours k (default 15; per class for "
                                                           "classification)")
    rel.add_argument("--relief-iterations",
                     help="sampled instances m: a count (1000), or a fraction of the rows (0.25; 1.0 = all rows, "
                          "the default)")
    rel.add_argument("--relief-sigma", type=float, help="neighbour weights exp(-(sigma * rank)^2) (default 0: equal)")
    rel.add_argument("--relief-target-distance", choices=["hamming", "jaccard", "f1", "subset"],
                     help="multi-label target distance (default f1)")
    rel.add_argument("--relief-influence", help="semi-supervised: influence w0,w1 of the unlabelled rows farthest "
                                                "from / closest to the labelled ones (default 0.5,1.0)")
    rel.add_argument("--relief-mode", choices=["auto", "broadcast", "tall"],
                     help="broadcast the data (small) or the sampled instances (tall data); default auto")
    rel.add_argument("--hmlc-w0", type=float, help="hierarchy weights w(l) = w0 * mean(w(parents)) (default 0.75)")
    rel.add_argument("--relief-hmlc-squared", action="store_true", default=None,
                     help="HMLC target distance without the square root, as CLUS computes it")
    rel.add_argument("--relief-hmlc-normaliser", choices=["data", "hierarchy", "sum"],
                     help="HMLC distance divided by its maximum over pairs of the most specific labels of the "
                          "data (default), over all labels of the hierarchy, or by sqrt(sum of all weights)")
    run = p.add_argument_group("run")
    run.add_argument("--seed", type=int, help="random seed (default 0)")
    run.add_argument("--master", help="Spark master when started with python (default local[*])")
    run.add_argument("--log-level", choices=["debug", "info", "warning", "error"], help="default: info")
    return p


def _load_config(path: str) -> dict:
    import yaml

    if not os.path.exists(path):
        raise InputError(f"config file not found: {path}")
    try:
        with open(path) as fh:
            cfg = yaml.safe_load(fh) or {}
    except yaml.YAMLError as err:
        raise InputError(f"{path}: not valid YAML ({one_line(err)})") from None
    if not isinstance(cfg, dict):
        raise InputError(f"{path}: a config file must be a mapping of option names to values")
    out = {}
    valid = {a.dest for a in build_parser()._actions}
    for k, v in cfg.items():
        key = str(k).replace("-", "_")
        if key not in valid or key in ("config", "help"):
            raise InputError(f"{path}: unknown option '{k}'")
        if isinstance(v, list):
            v = ",".join(str(x) for x in v)
        out[key] = v
    return out


def resolve_options(argv=None) -> dict:
    """Merge defaults, the YAML config and the command line (the command line wins)."""
    args = build_parser().parse_args(argv)
    given = {k: v for k, v in vars(args).items() if v is not None}
    cfg = _load_config(given["config"]) if given.get("config") else {}
    opts = {**DEFAULTS, **cfg, **given}
    if not opts.get("input"):
        raise InputError("--input is required (on the command line or in --config)")
    return opts


def _setup_logging(level: str) -> None:
    logging.basicConfig(level=getattr(logging, level.upper()), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    for noisy in ("py4j", "numba", "matplotlib"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def run(opts: dict) -> int:
    """Run a ranking job from resolved options; returns the exit code."""
    from .api import rank
    from .session import get_spark

    t0 = time.perf_counter()
    spark = get_spark(master=opts.get("master"), app_name="spark_fr rank")
    if opts.get("log_level") != "debug":
        spark.sparkContext.setLogLevel("ERROR")
    from .api import COMMON_PARAMS, ENSEMBLE_PARAMS, RELIEF_PARAMS

    method_keys = ENSEMBLE_PARAMS if opts["method"] == "ensemble" else RELIEF_PARAMS
    params = {k: opts.get(k) for k in (COMMON_PARAMS - {"title"}) | method_keys}
    params = {k: v for k, v in params.items() if v is not None}
    ranking = rank(opts["input"], targets=opts.get("targets"), task=opts["task"], method=opts["method"],
                   spark=spark, title=opts["input"], **params)
    plot_tmp = None
    if opts.get("plot"):
        plot_tmp = opts["plot"] + f".tmp-{os.getpid()}.png"
        ranking.plot(plot_tmp)
    try:
        if opts.get("output"):
            path = ranking.write(opts["output"], format=opts["output_format"], mode=opts.get("mode"))
            log.info("wrote %s (%s)", path, opts["output_format"])
        if plot_tmp:
            os.replace(plot_tmp, opts["plot"])
            log.info("wrote %s", opts["plot"])
    finally:
        if plot_tmp and os.path.exists(plot_tmp):
            os.remove(plot_tmp)
    print(ranking.summary(10))
    log.info("done in %.1f s", time.perf_counter() - t0)
    return 0


def main(argv=None) -> int:
    """Entry point: parse options, run, and turn bad input into a one-line error with exit code 2."""
    try:
        opts = resolve_options(argv)
    except InputError as err:
        print(f"error: {one_line(err)}", file=sys.stderr)
        return 2
    _setup_logging(opts.get("log_level", "info"))
    try:
        return run(opts)
    except (InputError, FileNotFoundError) as err:
        print(f"error: {one_line(err)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # an unexpected failure: keep the traceback in the log, one line on stderr
        log.debug("unexpected failure", exc_info=True)
        if opts.get("log_level") == "debug":
            raise
        print(f"error: unexpected failure: {one_line(err)} (rerun with --log-level debug for details)",
              file=sys.stderr)
        return 1
