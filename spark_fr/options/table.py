"""The option table: every option of spark_fr once (name, kind, default, help, group, methods, front ends).

Sketch
------
:data:`OPTIONS` is one declarative table of :class:`Option` rows; :data:`BY_NAME` looks them up. The front ends
take their options from it: the command line and configs (:mod:`.command_line`, :mod:`.config`), the keywords
of :func:`spark_fr.rank` (:func:`check_keywords`), the methods' parameter objects (:mod:`.params`) and the
Estimator's Params (:func:`estimator_options`).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from ..tasks.hmlc_impurities import DEFAULT_IMPURITY as HMLC_DEFAULT_IMPURITY
from ..tasks.hmlc_impurities import IMPURITIES as HMLC_IMPURITIES
from .kinds import (Choice, CountOrFraction, Flag, FoldCount, Integer, IntegerOrWord, Kind, Names, Pair, Real,
                    RealOrWord, Text, Word)


def _task_registry():
    """:mod:`spark_fr.tasks.registry`, imported on first use: it imports every task and their kernels (numba),
    which a relational generation in the driver never needs."""
    from ..tasks import registry

    return registry


JOB, API = "job", "api"


@dataclass(frozen=True)
class Option:
    """One option.

    Attributes
    ----------
    name : str
        Keyword of :func:`spark_fr.rank` and key of a YAML config; the flag is ``--name-with-dashes``.
    kind : Kind
    default : object
        None means "decided later" (e.g. by the ensemble type); the help says what.
    help : str
    group : str
        Section of ``--help``.
    methods : frozenset of str
        Ranking methods that use the option ('ensemble', 'relief', 'boosting'); empty for options of every run.
    field : str
        Attribute of the method's parameter object (default: ``name``).
    where : frozenset
        Front ends that accept it: JOB (command line and YAML), API (``rank()`` and the Estimator).
    estimator : str or None
        Name of the Estimator's Param (None: not a Param).
    default_help : str
        How ``--help`` states the default, when the value alone does not say it.
    """

    name: str
    kind: Kind
    default: object
    help: str
    group: str
    methods: frozenset = frozenset()
    field: str = ""
    where: frozenset = frozenset({JOB, API})
    estimator: str | None = ""
    default_help: str = ""

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def attribute(self) -> str:
        return self.field or self.name

    @property
    def param_name(self) -> str | None:
        """camelCase Param name of the Estimator (None when the option is not a Param)."""
        if self.estimator is None or API not in self.where:
            return None
        if self.estimator:
            return self.estimator
        head, *rest = self.name.split("_")
        return head + "".join(w.capitalize() for w in rest)


ENS, REL, BOOST = frozenset({"ensemble"}), frozenset({"relief"}), frozenset({"boosting"})
RELE = frozenset({"reliefe"})
BOTH = frozenset({"ensemble", "relief"})
TREES = ENS | BOOST  # options of every tree method
ALL = BOTH | BOOST | RELE
IO, TASK, ENSEMBLES, BOOSTING, RELIEF, RELIEFE, RUN = ("input and output", "task and method", "ensembles", "boosting",
                                                       "relief", "reliefe", "run")

OPTIONS = (
    # input and output
    Option("input", Text(), None, "ARFF (also zipped, HARFF), CSV, Parquet, Delta directory or .mat file; several ARFF, "
           "CSV or Parquet files (same columns) separated by commas", IO, where=frozenset({JOB}), estimator=None),
    Option("format", Choice(("auto", "arff", "csv", "parquet", "delta", "mat")), "auto",
           "input format", IO, default_help="from the file name", estimator=None),
    Option("labels_xml", Text(), None, "Mulan label file (multi-label classification)", IO, estimator=None),
    Option("input_table", Text(), None, "catalog table to rank, [catalog.]db.table (backquote parts with other "
           "characters); replaces --input", IO, estimator=None),
    # Decision: time travel is named as Spark's Delta reader options versionAsOf / timestampAsOf (and Delta SQL's
    # VERSION AS OF / TIMESTAMP AS OF); --version prints spark_fr's version (DESIGN.md). RENAMED keeps the old names.
    Option("version_as_of", Integer(lo=0, description="an integer >= 0"), None, "Delta input (path or catalog "
           "table): read this version of the table (time travel; Spark's versionAsOf)", IO, estimator=None,
           default_help="the latest"),
    Option("timestamp_as_of", Text(), None, "Delta input: read the version committed at or before this time (ISO "
           "date or date-time; UTC unless an offset is given; Spark's timestampAsOf)", IO, estimator=None,
           default_help="the latest"),
    Option("where", Text(), None, "Delta or catalog table input: rank only the rows matching this filter, e.g. "
           "\"country = 'SI' AND day >= DATE '2026-11-01'\" (comparisons, IN (...), IS [NOT] NULL, AND, OR, NOT; "
           "checked against the table's columns, never passed to SQL as text; filters on partition columns read "
           "only those partitions)", IO, estimator=None),
    Option("exclude", Names(), None, "columns that are neither features nor targets (ids, timestamps), "
           "comma-separated", IO, estimator=None),
    Option("duplicate_names", Choice(("error", "rename")), "error", "an input naming two columns alike (some "
           "yeast HMLC ARFF files do; CLUS reads them by position): refuse it, naming both positions, or rename the "
           "k-th occurrence of a name NAME__k (the next free number when the input has that name already), said in "
           "one warning line; every input format (a relational schema's tables: refused)", IO, estimator=None),
    Option("features_col", Text(), None, "vector column holding the features (Parquet/Delta input, a DataFrame)", IO),
    Option("targets", Names(), None, "target column(s), comma-separated; absent for unsupervised", IO,
           estimator="targetCols"),
    Option("output", Text(), None, "output directory (csv, parquet) or Delta table path", IO,
           where=frozenset({JOB}), estimator=None),
    Option("output_format", Choice(("csv", "parquet", "delta")), "csv", "output format", IO,
           where=frozenset({JOB}), estimator=None),
    Option("output_table", Text(), None, "catalog table of rankings, [catalog.]db.table: a Delta table spark_fr "
           "creates, or one it created before (needs a session with Delta Lake); replaces --output", IO,
           where=frozenset({JOB}), estimator=None),
    Option("mode", Choice(("overwrite", "error", "append")), None, "when the output exists: replace an earlier "
           "ranking written there, refuse, or append (Delta)", IO, where=frozenset({JOB}), estimator=None,
           default_help="overwrite; append for delta"),
    Option("plot", Text(), None, "write a PNG bar chart of the top features per score", IO,
           where=frozenset({JOB}), estimator=None),
    Option("config", Text(), None, "YAML file with any of these options (the command line wins); a relational schema "
           "(conf/relational/) may hold them too", IO, where=frozenset({JOB}), estimator=None),
    Option("schema", Text(), None, "relational data: a schema YAML of tables, keys, foreign keys and the target "
           "(conf/relational/); features are generated along foreign-key paths and ranked, with roll-ups to "
           "attributes and relations; replaces --input (--config with a schema file sets it)", IO,
           where=frozenset({JOB}), estimator=None),
    Option("relation_rollup", Choice(("node", "feature")), "node", "relational data: Symbolic and Genie3 of the "
           "relations by the thesis's node rule (a node's reward shared among the relations its test adds) or "
           "each feature's importance shared among its relations", IO, where=frozenset({JOB}), estimator=None),
    Option("max_features_generated", Integer(lo=1, description="a positive integer"), 10_000,
           "relational data: refuse, before generating, a schema whose foreign-key paths would generate more "
           "features than this (the count is estimated from the schema; the message gives it)", IO,
           where=frozenset({JOB}), estimator=None),
    Option("engine", Choice(("auto", "local", "spark")), "auto", "relational data: where the features are generated: "
           "'local' in the driver (numpy; no JVM for file sources), 'spark' with Spark SQL (any size, a cluster's "
           "executors), 'auto' local when every table is a local CSV/TSV, Parquet or Delta source or a DataFrame and "
           "together they fit the driver's memory (run.json records the engine and why)", IO,
           where=frozenset({JOB}), estimator=None),
    # task and method
    Option("task", Choice(lambda: ("auto",) + _task_registry().names()), "auto", "target type", TASK,
           default_help="inferred from the targets"),
    Option("semi_supervised", Flag(), False, "use rows with missing targets as unlabelled examples", TASK),
    Option("ssl_weight", RealOrWord(lo=0.0, hi=1.0, words=("auto",), description="a number in [0, 1]"), None,
           "semi-supervised ensembles: weight w of the targets in the impurity and the RF score's error (1 - w: "
           "the features); auto chooses w in 0, 0.1, ..., 1 by internal 4-fold cross-validation", TASK, ENS,
           default_help="0.5"),
    Option("method", Choice(("ensemble", "relief", "reliefe", "boosting")), "ensemble",
           "ranking method: PCT ensembles, the Relief family, ReliefE (Relief with neighbours in a learned "
           "embedding; classification and mlc), or gradient-boosted PCTs", TASK),
    Option("hmlc_w0", Real(lo=0.0, hi=1.0, lo_open=True, description="in (0, 1]"), 0.75,
           "hierarchy weights w(l) = w0 * mean(w(parents)) (HMLC)", TASK, BOTH),
    Option("hmlc_impurity", Choice(HMLC_IMPURITIES), HMLC_DEFAULT_IMPURITY,
           "HMLC trees: mean of w(l) Var(E,l) (the HMLC paper and CLUS), or of w(l) Var(E,l) / Var(E_train,l) "
           "(the thesis)", TASK, ENS),
    # ensembles
    Option("ensemble", Choice(("rf", "bagging", "extra_trees")), None, "ensemble of PCTs", ENSEMBLES, ENS,
           default_help="rf; extra_trees with bootstrap for unsupervised"),
    Option("trees", Integer(lo=1, description="a positive integer"), None,
           "number of trees (boosting: rounds, each one tree per class for 3 or more classes)", ENSEMBLES, TREES,
           estimator="numTrees", default_help="100; 50 for mlc and hmlc; 50 for boosting"),
    Option("scores", Names(choices=("symbolic", "genie3", "rf")), None,
           "comma list of symbolic, genie3, rf", ENSEMBLES, TREES,
           default_help="all three; genie3,rf for unsupervised; symbolic,genie3 for boosting"),
    Option("per_target", Flag(), False, "add one ranking per target (MTR, MLC)", ENSEMBLES, BOTH),
    Option("max_features", CountOrFraction(words=("sqrt", "log2", "all")), None,
           "features tried per node: sqrt, log2, all, a count or a fraction", ENSEMBLES, TREES,
           default_help="sqrt for rf, all otherwise; log2 for unsupervised; all for boosting"),
    Option("min_samples_leaf", Real(lo=1.0, description="a number >= 1"), 2.0, "minimal examples per leaf",
           ENSEMBLES, TREES),
    Option("max_depth", Integer(lo=0, description="an integer >= 0"), None, "maximal tree depth", ENSEMBLES,
           TREES, default_help="unlimited; 4 for boosting"),
    Option("bootstrap", Flag(negatable=True), None, "bootstrap the rows of each tree", ENSEMBLES, ENS,
           default_help="on for rf and bagging"),
    Option("resample_constant_features", Flag(), False,
           "at a node, draw other features in place of sampled ones that are constant there (scikit-learn's "
           "behaviour; default: the sampled features are the candidates and the node becomes a leaf if none can "
           "split it, as in the thesis and CLUS)", ENSEMBLES, TREES, field="resample_constant"),
    Option("missing", Choice(("fractional", "learned")), "fractional",
           "missing feature values at a test: fractional scores the test on the known values and sends them down "
           "both branches, weighted by the share of the known weight on each side, also when predicting (CLUS, the "
           "thesis); learned sends them as a block to the side that reduces the impurity most (as XGBoost; faster "
           "when many values are missing)",
           ENSEMBLES, ENS),
    Option("symbolic_weight", Real(lo=0.0, hi=1.0, lo_open=True, description="in (0, 1]"), None,
           "Symbolic score with w**depth per node instead of |E(N)|/|E|", ENSEMBLES, TREES,
           default_help="|E(N)|/|E|"),
    Option("max_samples", CountOrFraction(), None, "subbagging: about this many rows (a count, or a fraction of the "
           "rows) drawn with replacement per tree, instead of n", ENSEMBLES, ENS, default_help="n (the bootstrap)"),
    Option("max_oob_rows", Integer(lo=1, description="a positive integer"), 200_000,
           "out-of-bag rows the RF score of one tree evaluates at most (a seeded sample of them above that)",
           ENSEMBLES, ENS),
    Option("max_features_per_tree", CountOrFraction(), None,
           "random patches (wide mode): each tree uses only this many features (a count, or a fraction of the "
           "features), drawn per tree from the seed; the per-node subset (--max-features, resolved from all the "
           "features) is drawn within them", ENSEMBLES, ENS, default_help="all features"),
    Option("ensemble_mode", Choice(("auto", "broadcast", "partitioned")), "auto",
           "broadcast the encoded data to every task, or shuffle each tree group's rows to its task (data larger "
           "than one machine); auto: broadcast up to --max-broadcast-mb", ENSEMBLES, ENS),
    Option("max_broadcast_mb", Real(lo=0.0, lo_open=True, description="a positive number"), 1024.0,
           "largest encoded data (MB) that auto mode broadcasts (boosting: that it collects on the driver)",
           ENSEMBLES, TREES),
    Option("cv_folds", FoldCount(), None,
           "also estimate the ranking model's predictive performance by K-fold cross-validation (stratified by "
           "class; accuracy, RRMSE or micro-F1 against the majority class / training mean; in run.json's "
           "cross_validation); K times the trees; broadcast mode and boosting only; 0 = off", ENSEMBLES, TREES,
           default_help="0; 10 for relational data (--schema)"),
    # boosting
    Option("shrinkage", Real(lo=0.0, hi=1.0, lo_open=True, description="in (0, 1]"), 0.05,
           "boosting: learning rate, each tree's leaf values are multiplied by it", BOOSTING, BOOST),
    Option("example_fraction", Real(lo=0.0, hi=1.0, lo_open=True, description="in (0, 1]"), 0.8,
           "boosting: fraction of the rows each round's trees are grown on, drawn without replacement "
           "(stochastic gradient boosting; 1 = all rows)", BOOSTING, BOOST),
    Option("boosting_leaf", Choice(("newton", "mean")), "newton",
           "boosting: leaf values by one Newton step of the loss (Friedman; as scikit-learn) or the PCT "
           "prototype, the mean residual (the same for regression)", BOOSTING, BOOST, field="leaf_values"),
    # relief
    Option("relief_neighbours", Integer(lo=1, description="a positive integer"), 15,
           "number of neighbours k (per class for classification)", RELIEF, REL, field="neighbours"),
    Option("relief_iterations", CountOrFraction(), 1.0,
           "sampled instances m: a count (1000), or a fraction of the rows (0.25; 1.0 = all rows)", RELIEF, REL,
           field="iterations"),
    Option("relief_sigma", Real(lo=0.0, description="a finite number >= 0"), 0.0,
           "neighbour weights exp(-(sigma * rank)^2) (0: equal)", RELIEF, REL, field="sigma"),
    Option("relief_target_distance", Choice(("hamming", "jaccard", "f1", "subset")), "f1",
           "multi-label target distance", RELIEF, REL, field="target_distance"),
    Option("relief_influence", Pair(), (0.5, 1.0), "semi-supervised: influence w0,w1 of the unlabelled rows "
           "farthest from / closest to the labelled ones", RELIEF, REL, field="influence", default_help="0.5,1.0"),
    Option("relief_mode", Choice(("auto", "broadcast", "tall")), "auto",
           "Relief and ReliefE: broadcast the data (small) or the sampled instances (tall data; the same "
           "weights); auto: broadcast up to 50 million values (rows x features)", RELIEF, REL | RELE,
           field="mode"),
    Option("relief_hmlc_squared", Flag(), False, "HMLC target distance without the square root, as CLUS computes it",
           RELIEF, REL, field="hmlc_squared"),
    Option("relief_hmlc_normaliser", Choice(("data", "hierarchy", "sum")), "data",
           "HMLC distance divided by its maximum over pairs of the most specific labels of the data, over all "
           "labels of the hierarchy, or by sqrt(sum of all weights)", RELIEF, REL, field="hmlc_normaliser"),
    # reliefe (the ReliefE paper's defaults: spark_fr/relief/reliefe.py)
    Option("reliefe_k", IntegerOrWord(lo=1, words=("adaptive",), description="a positive integer"), 15,
           "neighbours per class (classification) or in all (MLC): a count, or adaptive (per sample and class: "
           "cut the sorted neighbour distances at their largest gap)", RELIEFE, RELE, field="k"),
    Option("reliefe_k_max", Integer(lo=0, description="an integer >= 0"), 0,
           "adaptive k: look for the largest gap among the k_max + 1 nearest candidates only (0: among all, the "
           "paper's rule; tall mode then keeps every row of the class as a candidate of each sampled row, so bound "
           "it on tall data)", RELIEFE, RELE, field="k_max"),
    Option("reliefe_update", Choice(("standard", "absmean")), "standard",
           "per-feature difference: mean over the neighbours of |x - neighbour| (ReliefF), or |x - mean of the "
           "neighbours| (absMean)", RELIEFE, RELE, field="update"),
    Option("reliefe_embed", Choice(("auto", "input", "target", "both", "none")), "auto",
           "which space is embedded: the input (neighbours by cosine distance in the embedding), the MLC target "
           "(label distance = cosine in its embedding), both, or none (Manhattan on the scaled input, the "
           "labels' --reliefe-mlc-distance)", RELIEFE, RELE, field="embed",
           default_help="input for classification, target for mlc (the paper's best)"),
    Option("reliefe_dimension", IntegerOrWord(lo=1, words=("auto",), description="a positive integer"), "auto",
           "dimension of the embedding(s): a number, or auto (TwoNN on the cyclic sample)", RELIEFE, RELE,
           field="dimension"),
    Option("reliefe_embedder", Choice(("auto", "umap", "pca", "random_projection")), "auto",
           "embedding method fitted on the cyclic sample (umap needs the reliefe extra, umap-learn)", RELIEFE,
           RELE, field="embedder", default_help="umap when umap-learn is installed, else pca (said in one line)"),
    Option("reliefe_mlc_distance", Choice(("auto", "cosine", "f1", "jaccard", "hamming", "subset")), "auto",
           "MLC target distance: cosine on the embedded target, or a distance of the label sets", RELIEFE, RELE,
           field="mlc_distance", default_help="cosine when the target is embedded, else f1"),
    Option("reliefe_sample", Integer(lo=2, description="an integer >= 2"), 2048,
           "rows of the representative cyclic sample the embedding and TwoNN are fitted on", RELIEFE, RELE,
           field="sample"),
    Option("reliefe_density_threshold", Real(lo=0.0, hi=1.0, description="in [0, 1]"), 0.15,
           "sparsify the cyclic sample with PrMS when its share of non-zero values exceeds this (1: never)",
           RELIEFE, RELE, field="density_threshold"),
    Option("reliefe_iterations", CountOrFraction(), 1.0,
           "sampled rows s whose neighbours update the weights: a count, or a fraction of the rows (1.0 = all, "
           "the paper's)", RELIEFE, RELE, field="iterations"),
    # run
    Option("seed", Integer(), 0, "random seed", RUN, ALL),
    Option("run_id", Word(), None, "the run's id (in every row and in the run record); a rerun with the same id "
           "replaces that run's rows in a Delta output instead of adding them again", RUN, estimator=None,
           default_help="a new random id"),
    Option("title", Text(), None, "title of the run (plots)", RUN, where=frozenset({API}), estimator=None),
    Option("hierarchy", Kind(), None, "HMLC from a table: a spark_fr.hierarchy.Hierarchy or a Clus class "
           "specification ('01,01/02,02' or 'root/a,a/b'); the single target is then a string column of "
           "'@'-joined labels", TASK, where=frozenset({API}), estimator=None),
    Option("master", Text(), None, "Spark master when started with python", RUN, where=frozenset({JOB}),
           estimator=None, default_help="local[*]"),
    Option("log_level", Choice(("debug", "info", "warning", "error")), "info", "log level", RUN,
           where=frozenset({JOB}), estimator=None),
    Option("mlflow_experiment", Text(), None, "log the run to this MLflow experiment (made when missing; the server "
           "is MLFLOW_TRACKING_URI's, or the Databricks workspace's): parameters, timings, cross-validated "
           "performance, the ranking table, run.json and the plot; needs the mlflow extra", RUN,
           where=frozenset({JOB}), estimator=None, default_help="off"),
)
BY_NAME = {o.name: o for o in OPTIONS}
#: options renamed, old name -> new name. Decision: rank()'s keywords keep the old names for one release with a
#: FutureWarning (check_keywords), as scikit-learn and pyspark deprecate; a config key or a command-line flag of an
#: old name is a one-line error naming the new one (a scheduled job fails at once rather than run otherwise).
RENAMED = {"version": "version_as_of", "timestamp": "timestamp_as_of"}
#: the release that drops the old names of RENAMED
RENAMED_UNTIL = "0.3"
GROUPS = (IO, TASK, ENSEMBLES, BOOSTING, RELIEF, RELIEFE, RUN)


def option(name: str) -> Option:
    """The option called ``name`` (dashes or underscores)."""
    return BY_NAME[name.replace("-", "_")]


def defaults(where: str = JOB) -> dict:
    """{name: default} of the options a front end accepts (None defaults included)."""
    return {o.name: o.default for o in OPTIONS if where in o.where}


def for_method(method: str) -> list:
    """The options of the parameter object of ``method``."""
    return [o for o in OPTIONS if method in o.methods]


def check_value(opt: Option, value, where: str = ""):
    """A typed value of ``opt`` checked (and normalised) by its kind; errors are prefixed by ``where``."""
    try:
        return opt.kind.coerce(value, opt)
    except InputError as err:
        raise InputError(f"{where}{err}") from None


def check_keywords(params: dict, where: str = API) -> dict:
    """Keyword arguments of :func:`spark_fr.rank` checked against the table (None = the default).

    Raises
    ------
    InputError
        An unknown keyword (with the closest known one) or a value of the wrong type or range.
    """
    out = {}
    for key, value in _renamed(params, where).items():
        opt = BY_NAME.get(key)
        if opt is None or where not in opt.where:
            known = sorted(o.name for o in OPTIONS if where in o.where)
            import difflib

            close = difflib.get_close_matches(key, known, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise InputError(f"unknown parameter '{key}'{hint}")
        if value is not None:
            out[key] = check_value(opt, value)
    return out


def _renamed(params: dict, where: str) -> dict:
    """``params`` with the old names of :data:`RENAMED` replaced by the new ones (rank()'s keywords: a
    FutureWarning each; both names given: a one-line error)."""
    if where != API or not any(k in RENAMED for k in params):
        return params
    import warnings

    out = dict(params)
    for old, new in RENAMED.items():
        if old not in out:
            continue
        value = out.pop(old)
        if out.get(new) is not None and value is not None:
            raise InputError(f"give {new}= (or its deprecated name {old}=), not both")
        warnings.warn(f"rank({old}=...) is deprecated and will be removed in spark_fr {RENAMED_UNTIL}: use "
                      f"{new}=... (Delta time travel)", FutureWarning, stacklevel=5)  # rank()'s caller
        if value is not None:
            out[new] = value
    return out


def estimator_options() -> list:
    """The options that are Params of the Estimator, with their camelCase names."""
    return [o for o in OPTIONS if o.param_name]
