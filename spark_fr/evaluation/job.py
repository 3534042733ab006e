"""Command line of ``jobs/evaluate.py``: is the ranking worth reading? (``spark-submit`` or plain ``python``)

Sketch
------
    options  <- defaults, a YAML config (--config), the command line (it wins)
                the evaluation's own options (below) + the input options and every ranking option of
                jobs/rank.py that the rankings do not set, reused from spark_fr.options (declared once there)
    outputs  <- --output and --plot checked before any work (spark_fr.evaluation.results, .plots)
    session  <- a lazy local session (started when Spark is first needed), or the active one (spark-submit)
    run      <- spark_fr.evaluation.evaluate(...) on --input [--test], or evaluate_suite(--suite)
    publish  <- the tables and run.json to --output, the plot to --plot (curves, or the CD diagram of a suite)
    print    <- the summary of the main measure(s) on standard output

Sessions, logging, one-line errors and exit codes are the runner's (:mod:`spark_fr.runner`), as for
``jobs/rank.py``: 0 success; 2 bad input (one line on standard error, nothing written); 1 any other failure (one
line); 130 interrupted; 143 terminated (SIGTERM).
"""
from __future__ import annotations

import logging
import time

from .. import options as O
from ..errors import InputError
from ..io.locations import locate
from .. import runner
from .protocol import PROTOCOLS, SET_BY_RANKINGS

log = logging.getLogger("spark_fr")

GROUP = "evaluation"


class Labelled(O.Kind):
    """Positive integers, comma-separated (or a list): the semi-supervised protocol's L values."""

    description = "positive integers, comma-separated"

    def coerce(self, value, opt):
        items = value.split(",") if isinstance(value, str) else value if isinstance(value, (list, tuple)) else [value]
        out = []
        for v in items:
            try:
                n = int(str(v).strip()) if not isinstance(v, bool) else -1
            except ValueError:
                self.fail(opt, value)
            if n < 1 or (isinstance(v, float) and not v.is_integer()):
                self.fail(opt, value)
            out.append(n)
        if not out:
            self.fail(opt, value)
        return out


#: the evaluation's own options (the input and ranking options come from spark_fr.options)
OWN = (
    O.Option("test", O.Text(), None, "test rows of a given split (Mulan's and the HMLC benchmarks' test files): the "
             "rankings are computed on --input, judged on these", GROUP),
    O.Option("suite", O.Choice(("mtr", "mlc", "hmlc", "classification")), None,
             "evaluate every shared dataset of this kind (../shared/datasets, or SPARK_FR_DATA) and compare the "
             "rankings over them (Friedman, Nemenyi CD diagram, Wilcoxon + Benjamini-Hochberg); replaces --input",
             GROUP),
    O.Option("rankings", O.Names(), "genie3-rf,symbolic-rf,rf-bagging,relief",
             "rankings to evaluate: <score>-<ensemble> (genie3, symbolic, rf x rf, bagging, extra_trees; "
             "rf-extra_trees needs bootstrapping, the unsupervised default), relief, reliefe, "
             "reliefe-absmean-adaptive, multisurf (scikit-rebate's, an outside peer), laplace (the Laplacian Score, "
             "an outside baseline), or all (not rf-extra_trees, the ReliefE ones, multisurf, laplace); the uniform "
             "baseline is always added",
             GROUP),
    O.Option("protocol", O.Choice(PROTOCOLS), "auto", "splits: random 2/3-1/3 splits; train-test: --input / --test; "
             "cv: cross-validation (stratified); ssl: cross-validation keeping --labelled L labels in the training "
             "part; unsupervised: 1NN on the top features predicting all features", GROUP,
             default_help="ssl with --labelled, unsupervised for --task unsupervised, train-test with --test, cv for "
                          "classification, else splits"),
    O.Option("splits", O.Integer(lo=1, description="a positive integer"), 10, "random splits, or cross-validation "
             "folds", GROUP),
    O.Option("neighbours", O.Integer(lo=1, description="a positive integer"), None, "k of the weighted kNN", GROUP,
             default_help="5 MTR and regression, 15 MLC, 10 HMLC, 20 classification, 40 SSL, 1 unsupervised"),
    O.Option("labelled", Labelled(), None, "semi-supervised protocol: labelled training rows L (several: "
             "50,100,200)", GROUP),
    O.Option("top_features", O.Integer(lo=1, description="a positive integer"), 16, "unsupervised protocol: the 1NN "
             "uses the top this many features", GROUP),
    O.Option("curves", O.Flag(), False, "also the error curves over the top 1, 2, 4, ... features and their areas "
             "(au_r<measure>)", GROUP),
    O.Option("curve_learner", O.Choice(("auto", "knn", "sklearn")), "auto", "the curves' learner: the protocol's kNN "
             "on the top features, or scikit-learn's (LogisticRegression for classification, RandomForestClassifier"
             " for MLC, as the ReliefE paper)", GROUP, default_help="sklearn for classification and MLC, else knn"),
    O.Option("curve_features", Labelled(), None, "the curves' feature counts, e.g. 1,2,4,8,16,32,50,64,100,128 "
             "(those above the number of features D are left out; D is always added)", GROUP,
             default_help="1, 2, 4, ..., D"),
    O.Option("similarity", O.Flag(negatable=True), True, "compute the area under the Fuzzy Jaccard curve of every "
             "pair of rankings (similarity.csv)", GROUP),
    O.Option("knn_mode", O.Choice(("auto", "driver", "spark")), "auto", "where the neighbour searches run", GROUP,
             default_help="the driver for small work, Spark tasks for large"),
    O.Option("output", O.Text(), None, "folder for evaluation.csv, summary.csv, comparison.csv, curves.csv, "
             "similarity.csv, importances.csv and run.json", GROUP),
    O.Option("plot", O.Text(), None, "PNG: the CD diagram of a suite, the curves with --curves, else the main measure "
             "per split", GROUP),
)
#: options of jobs/rank.py reused as they are declared in spark_fr.options
REUSED_IO = ("input", "format", "labels_xml", "exclude", "features_col", "targets", "task", "config", "seed",
             "master", "log_level")
#: jobs/rank.py's options the evaluation never passes on (set by the rankings, or about a ranking's outputs)
NOT_PASSED = set(SET_BY_RANKINGS) | {"per_target", "cv_folds"}


def options() -> list:
    """Every option of the job: its own, the reused input options, and the rankings' options."""
    reused = [O.BY_NAME[n] for n in REUSED_IO]
    ranking = [o for o in O.OPTIONS if o.group in (O.TASK, O.ENSEMBLES, O.BOOSTING, O.RELIEF) and O.JOB in o.where
               and O.API in o.where and o.name not in NOT_PASSED and o.name not in REUSED_IO]
    return list(OWN) + reused + ranking


DESCRIPTION = ("Is the ranking worth reading? Rank the training part of every split with spark_fr, judge each ranking "
               "by weighted kNN on the test part against the uniform baseline (the thesis's protocols), with Wilcoxon "
               "+ Benjamini-Hochberg, curves and CD diagrams.")
EPILOG = ("Examples:\n  python jobs/evaluate.py --input ../shared/datasets/mtr_enb/enb.arff --targets Y1,Y2 "
          "--splits 10 --output out/enb-eval --plot out/enb-eval.png\n"
          "  python jobs/evaluate.py --suite mtr --output out/mtr-suite --plot out/mtr-suite.png\n"
          "Every option of jobs/rank.py that the rankings do not set (--trees, --max-features, --hmlc-impurity, "
          "--relief-neighbours, ...) is passed to every ranking it applies to.")


def check_options(opts: dict, given: dict, config: dict) -> dict:
    """The combinations of options the evaluation refuses before any work (one-line :class:`InputError`)."""
    if opts.get("suite") and opts.get("input"):
        raise InputError("give --input (one dataset) or --suite (every shared dataset of a kind), not both")
    if not opts.get("suite") and not opts.get("input"):
        raise InputError("--input is required (on the command line or in --config), or --suite mtr|mlc|hmlc|"
                         "classification")
    if opts.get("suite"):
        for name in ("test", "targets", "labels_xml"):
            if opts.get(name):
                raise InputError(f"--suite names its datasets and their targets; leave out --{name.replace('_', '-')}")
    if opts.get("plot") and opts.get("output"):
        plot, out = locate(opts["plot"], "--plot").path, locate(opts["output"], "--output").path
        if plot == out or plot.startswith(out + "/"):
            raise InputError(f"--plot {opts['plot']} is inside --output {opts['output']}, which is written as a whole; "
                             f"put it beside (e.g. {opts['output'].rstrip('/')}.png)")
    return opts


def _keywords(opts: dict) -> dict:
    """evaluate()'s keywords from the options: the evaluation's, the reader's and the given ranking options."""
    own = {o.name for o in OWN} - {"test", "suite", "output", "plot"}
    kw = {k: opts[k] for k in own if opts.get(k) is not None}
    for name in ("format", "labels_xml", "exclude", "features_col", "seed", "task", "targets"):
        if opts.get(name) is not None:
            kw[name] = opts[name]
    ranking = {o.name for o in options()} - {o.name for o in OWN} - set(REUSED_IO)
    for name in ranking:
        if opts.get(name) is not None and opts[name] != O.BY_NAME[name].default:
            kw[name] = opts[name]
    return kw


def run(opts: dict, given: set = frozenset()) -> int:
    """The evaluation job's work, from resolved options; returns the exit code."""
    from .plots import check_plot_path
    from .results import check_output
    from .run import evaluate, evaluate_suite

    t0 = time.perf_counter()
    if opts.get("output"):
        check_output(opts["output"])
    if opts.get("plot"):
        check_plot_path(opts["plot"])
    starting = runner.session(opts, JOB.app_name)
    kw = _keywords(opts)
    if opts.get("suite"):
        kw.pop("targets", None)
        result = evaluate_suite(opts["suite"], spark=starting, **kw)
    else:
        result = evaluate(opts["input"], test=opts.get("test"), spark=starting, **kw)
    for r in result.runs:
        r["process_s"] = time.perf_counter() - t0
    if opts.get("output"):
        log.info("wrote %s", result.write(opts["output"]))
    if opts.get("plot"):
        result.plot(opts["plot"])
        log.info("wrote %s", opts["plot"])
    print(result.to_text())
    log.info("done in %.1f s", time.perf_counter() - t0)
    return 0


JOB = runner.Job("jobs/evaluate.py", DESCRIPTION, EPILOG, tuple(options()), run, check_options,
                 app_name="spark_fr evaluate")


def build_parser():
    """The command line (every value defaults to None, so that a config file can fill it)."""
    return JOB.parser()


def main(argv=None) -> int:
    """``jobs/evaluate.py``: the evaluation run by :func:`spark_fr.runner.main` (exit codes in the module
    docstring)."""
    return runner.main(JOB, argv)


def console() -> None:
    """The console script ``spark-fr-evaluate`` (and ``python -m spark_fr.evaluation.job``): :func:`main` as
    ``jobs/evaluate.py`` runs it."""
    runner.console(JOB)


if __name__ == "__main__":
    runner.console(JOB)
