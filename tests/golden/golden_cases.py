"""The golden rankings' cases, how one is run and how its result is fingerprinted and compared.

Shared by the test (tests/end_to_end/test_golden.py, which checks every case against tests/golden/rankings.json bit for
bit) and the recorder (jobs/golden.py, which runs that test in record mode); nothing here is written twice.

Sketch
------
    case        <- CASES[name]: the command line of jobs/rank.py (without the output), where its units run
                   (Spark tasks or the driver's threads) and the kind of session (classic or Spark Connect)
    inputs      <- the shared datasets in place, or seeded synthetic files written to the run's work folder
    run         <- jobs/rank.py in this process under the active session (tests/job_in_process.py), with
                   SPARK_FR_DRIVER_MAX_SECONDS chosen by the case
    fingerprint <- per (score, target, feature): rank, float.hex of importance and importance_std; the params
                   JSON with the machine's paths replaced by {datasets}, {root}, {work}; the path the run took
                   (run.json: session, executed_on, ensemble / Relief mode, encoded targets, relational engine)
    compare     <- None when identical, else a message with the first differing rows side by side

Bits can depend on the CPU (vectorised sums in the Relief and tree kernels): record and check on one
machine. :data:`LAYOUTS` says which cases are equal to which today (measured; tests/golden/README.md).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from tests.paths import DATASETS, JOB, ROOT

RECORDED = Path(__file__).resolve().parent / "rankings.json"

#: SPARK_FR_DRIVER_MAX_SECONDS per place: every unit as Spark tasks, or every unit on the driver's threads
WHERE = {"spark": "0", "driver": "1000000"}


@dataclass(frozen=True)
class Case:
    """One golden run.

    Attributes
    ----------
    args : tuple
        jobs/rank.py's arguments without the output; ``{datasets}`` is the shared datasets folder and
        ``{synthetic:NAME}`` a seeded file that :data:`SYNTHETIC` writes into the run's work folder.
    covers : str
        What the case pins (one line, for the report and the test's id list).
    where : str
        'spark' (every unit a Spark task) or 'driver' (every unit on the driver's threads).
    session : str
        'classic' (the suite's session) or 'connect' (the suite's Spark Connect worker).
    """

    args: tuple
    covers: str
    where: str = "spark"
    session: str = "classic"


def _d(path: str) -> str:
    return "{datasets}/" + path


BREAST = ("--input", _d("sklearn_breast_cancer/breast_cancer.csv"))
WINE = ("--input", _d("sklearn_wine/wine_data.csv"))
SLUMP = ("--input", _d("mtr_slump/slump.arff"), "--targets", "SLUMP_cm")
ENB = ("--input", _d("mtr_enb/enb.arff"), "--targets", "Y1,Y2")
EMOTIONS = ("--input", _d("mlc_emotions/emotions.arff"), "--labels-xml", _d("mlc_emotions/emotions.xml"))
MEDICAL = ("--input", _d("mlc_medical/medical.arff"), "--labels-xml", _d("mlc_medical/medical.xml"))
FUN = ("--input", _d("hmlc_cellcycle_FUN/cellcycle_FUN.train.arff"))
GO = ("--input", _d("hmlc_derisi_GO/derisi_GO.train.arff"))
ENRON_SSL = ("--input", _d("hmlc_enron_harff/enron-training_set.harff.zip") + ","
             + _d("hmlc_enron_harff/enron-unlabelled_set.harff.zip"), "--semi-supervised")
MISSING = ("--input", "{synthetic:missing.csv}", "--targets", "y")
RELATIONAL = ("--schema", "{synthetic:relational/schema.yaml}", "--trees", 6, "--cv-folds", 0, "--seed", 3)
RF_CLF = BREAST + ("--trees", 12, "--seed", 1)
RELIEF_WINE = WINE + ("--method", "relief", "--relief-neighbours", 10, "--seed", 1)
RELIEFE_BREAST = BREAST + ("--method", "reliefe", "--reliefe-embedder", "pca", "--reliefe-dimension", 4,
                         "--reliefe-k", 8, "--seed", 2)
MTR_ET = ENB + ("--ensemble", "extra_trees", "--trees", 10, "--per-target", "--symbolic-weight", 0.5, "--seed", 4)
SPARSE_TABLE = ("--targets", "y", "--trees", 8, "--scores", "symbolic,genie3,rf", "--seed", 5)

CASES = {
    # ensembles: every ensemble and score, every task type, both missing-value modes
    "ens_classification_rf": Case(RF_CLF, "rf, all three scores, classification (Spark tasks)"),
    "ens_classification_rf_driver": Case(RF_CLF, "the same run on the driver's threads", where="driver"),
    "ens_classification_rf_connect": Case(RF_CLF, "the same run under Spark Connect", session="connect"),
    "ens_regression_bagging": Case(SLUMP + ("--ensemble", "bagging", "--trees", 12, "--seed", 2),
                                   "bagging, regression"),
    "ens_mtr_extra_trees_per_target": Case(MTR_ET, "extra trees, MTR, per-target rankings, Symbolic w^depth"),
    "ens_mtr_extra_trees_partitioned": Case(MTR_ET + ("--ensemble-mode", "partitioned"),
                                            "the same run in partitioned (tall) mode"),
    "ens_mlc_rf_sparse_arff": Case(MEDICAL + ("--scores", "genie3,symbolic,rf", "--trees", 4, "--max-depth", 8,
                                              "--seed", 1), "MLC from a sparse ARFF file (1,449 word features)"),
    "ens_sparse_arff": Case(("--input", "{synthetic:table_sparse.arff}") + SPARSE_TABLE,
                            "a synthetic table written as sparse ARFF"),
    "ens_dense_arff": Case(("--input", "{synthetic:table_dense.arff}") + SPARSE_TABLE,
                           "the same table written as dense ARFF"),
    "ens_missing_fractional": Case(MISSING + ("--missing", "fractional", "--trees", 12, "--max-depth", 6,
                                              "--resample-constant-features", "--seed", 6),
                                   "missing values sent down both branches (--missing fractional), nominal"),
    "ens_missing_learned": Case(MISSING + ("--missing", "learned", "--ensemble", "bagging", "--trees", 12,
                                           "--seed", 6), "missing values as a block (--missing learned)"),
    "ens_ssl": Case(MISSING + ("--semi-supervised", "--trees", 10, "--seed", 7),
                    "semi-supervised ensemble (unlabelled rows, ssl weight 0.5)"),
    "ens_unsupervised": Case(("--input", _d("sklearn_iris/iris.csv"), "--task", "unsupervised", "--trees", 12,
                              "--seed", 8), "unsupervised ensemble (extra trees, bootstrap)"),
    "ens_hmlc_tree": Case(FUN + ("--trees", 3, "--max-depth", 6, "--seed", 9),
                          "HMLC, tree hierarchy (FunCat), label-sparse grower"),
    "ens_hmlc_dag": Case(GO + ("--trees", 3, "--max-depth", 6, "--scores", "symbolic,genie3", "--seed", 10),
                         "HMLC, DAG hierarchy (GO), label-sparse grower"),
    "ens_hmlc_ssl_dense_grower": Case(ENRON_SSL + ("--trees", 2, "--max-depth", 4, "--scores", "symbolic,genie3",
                                                   "--seed", 13),
                                      "semi-supervised HMLC ensemble (enron, unlabelled rows: the dense grower)"),
    # gradient-boosted PCTs (always on the driver)
    "boost_classification_3class": Case(WINE + ("--method", "boosting", "--trees", 8, "--seed", 11),
                                        "boosting, 3 classes (one tree per class and round), Newton leaves"),
    "boost_regression_mean_leaves": Case(SLUMP + ("--method", "boosting", "--trees", 8, "--boosting-leaf", "mean",
                                                  "--example-fraction", 0.7, "--seed", 12),
                                         "boosting, regression, mean leaves, example fraction 0.7"),
    # Relief
    "relief_classification_broadcast": Case(RELIEF_WINE + ("--relief-mode", "broadcast"),
                                            "Relief, broadcast mode (Spark tasks)"),
    "relief_classification_broadcast_driver": Case(RELIEF_WINE + ("--relief-mode", "broadcast"),
                                                   "the same run on the driver's threads", where="driver"),
    "relief_classification_tall": Case(RELIEF_WINE + ("--relief-mode", "tall"), "the same run in tall mode"),
    "relief_mlc_sigma_per_target_tall": Case(EMOTIONS + ("--method", "relief", "--relief-mode", "tall",
                                                         "--relief-sigma", 0.5, "--relief-iterations", 0.3,
                                                         "--relief-target-distance", "jaccard", "--per-target",
                                                         "--seed", 4),
                                             "Relief, MLC (Jaccard), neighbour weights, per target, tall mode"),
    "relief_regression_tall": Case(SLUMP + ("--method", "relief", "--relief-mode", "tall", "--seed", 2),
                                   "Relief, regression, tall mode"),
    "relief_hmlc_tree_hierarchy_normaliser": Case(FUN + ("--method", "relief", "--relief-iterations", 150,
                                                         "--relief-hmlc-normaliser", "hierarchy", "--seed", 5),
                                                  "Relief, HMLC tree hierarchy, the hierarchy's normaliser"),
    "relief_hmlc_dag_squared": Case(GO + ("--method", "relief", "--relief-iterations", 150, "--relief-hmlc-squared",
                                          "--seed", 6), "Relief, HMLC DAG hierarchy, squared distance (CLUS's)"),
    "relief_ssl_tall": Case(MISSING + ("--semi-supervised", "--method", "relief", "--relief-mode", "tall",
                                       "--relief-influence", "0.2,0.9", "--seed", 8),
                            "semi-supervised Relief, tall mode"),
    "relief_unsupervised": Case(("--input", _d("sklearn_iris/iris.csv"), "--task", "unsupervised", "--method",
                                 "relief", "--seed", 9), "unsupervised Relief"),
    # ReliefE
    "reliefe_classification_broadcast": Case(RELIEFE_BREAST + ("--relief-mode", "broadcast"),
                                             "ReliefE, input embedded (PCA), broadcast mode"),
    "reliefe_classification_tall": Case(RELIEFE_BREAST + ("--relief-mode", "tall"), "the same run in tall mode"),
    "reliefe_mlc_sparse_adaptive": Case(MEDICAL + ("--method", "reliefe", "--reliefe-embed", "target",
                                                   "--reliefe-embedder", "pca", "--reliefe-k", "adaptive",
                                                   "--reliefe-iterations", 300, "--seed", 1),
                                        "ReliefE, MLC on sparse input, target embedded, adaptive k"),
    # relational: the same schema through both engines
    "relational_local": Case(RELATIONAL + ("--engine", "local"),
                             "relational (to-one, to-many, two hops), the driver (numpy) engine"),
    "relational_spark": Case(RELATIONAL + ("--engine", "spark"), "the same schema, the Spark SQL engine"),
}

#: Pairs of cases that run the same data through two layouts or engines and give the same bits today (measured
#: on this machine, tests/golden/README.md; the test keeps them so in the recording). Not a pair because one
#: command line cannot choose it: the dense and the label-sparse tree growers on the same HMLC data agree only
#: to rounding (last bits, then near-tie splits flip); each keeps its own bits here (ens_hmlc_tree, ens_hmlc_dag:
#: label-sparse; ens_hmlc_ssl_dense_grower and every other tree case: dense).
LAYOUTS = (
    ("ens_classification_rf", "ens_classification_rf_driver"),          # Spark tasks / driver threads
    ("ens_classification_rf", "ens_classification_rf_connect"),         # classic / Spark Connect
    ("ens_mtr_extra_trees_per_target", "ens_mtr_extra_trees_partitioned"),  # broadcast / partitioned
    ("ens_dense_arff", "ens_sparse_arff"),                              # dense / sparse ARFF input
    ("relief_classification_broadcast", "relief_classification_broadcast_driver"),  # Spark tasks / driver
    ("relief_classification_broadcast", "relief_classification_tall"),  # Relief broadcast / tall
    ("reliefe_classification_broadcast", "reliefe_classification_tall"),  # ReliefE broadcast / tall
    ("relational_local", "relational_spark"),                           # relational local / Spark engine
)


# ----- synthetic inputs -----------------------------------------------------------------------------------
def missing_csv(path: Path) -> None:
    """400 rows: five numeric features with 8 % missing, a nominal one (5 % missing), a class with 25 % of
    the rows unlabelled (the class follows x0 and colour == red)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(20261123)
    n = 400
    x = rng.normal(size=(n, 5))
    colour = rng.choice(["red", "green", "blue", "grey"], size=n)
    y = np.where(x[:, 0] + (colour == "red") * 1.5 + 0.3 * rng.normal(size=n) > 0.5, "yes", "no").astype(object)
    x[rng.random((n, 5)) < 0.08] = np.nan
    y[rng.random(n) < 0.25] = None
    df = pd.DataFrame(x, columns=[f"x{i}" for i in range(5)])
    df["colour"] = np.where(rng.random(n) < 0.05, None, colour)
    df["y"] = y
    df.to_csv(path, index=False, na_rep="?")


def _sparse_table():
    """300 rows, 40 numeric features of which 85 % of the values are 0, a nominal feature and a class that
    follows f0, f1 and the nominal one; a few missing values."""
    import numpy as np

    rng = np.random.default_rng(20261201)
    n, d = 300, 40
    X = np.where(rng.random((n, d)) < 0.85, 0.0, np.round(rng.normal(size=(n, d)), 3))
    X[rng.random((n, d)) < 0.01] = np.nan
    shape = rng.choice(["round", "square", "flat"], size=n)
    score = np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]) + (shape == "flat") + 0.3 * rng.normal(size=n)
    y = np.where(score > 0.3, "pos", "neg")
    return X, shape, y


def _arff_header(d: int) -> list:
    return (["@relation golden_sparse"] + [f"@attribute f{j} numeric" for j in range(d)]
            + ["@attribute shape {round,square,flat}", "@attribute y {neg,pos}", "@data"])


def _value(v) -> str:
    return "?" if v != v else repr(float(v))


def dense_arff(path: Path) -> None:
    """:func:`_sparse_table` as a dense ARFF file."""
    X, shape, y = _sparse_table()
    lines = _arff_header(X.shape[1])
    lines += [",".join([*(_value(v) for v in row), s, c]) for row, s, c in zip(X, shape, y)]
    path.write_text("\n".join(lines) + "\n")


def sparse_arff(path: Path) -> None:
    """:func:`_sparse_table` as a sparse ARFF file (zeros left out; the nominal values always written)."""
    X, shape, y = _sparse_table()
    d = X.shape[1]
    lines = _arff_header(d)
    for row, s, c in zip(X, shape, y):
        cells = [f"{j} {_value(v)}" for j, v in enumerate(row) if v != 0]
        lines.append("{" + ",".join(cells + [f"{d} {s}", f"{d + 1} {c}"]) + "}")
    path.write_text("\n".join(lines) + "\n")


RELATIONAL_SCHEMA = """\
tables:
  customer: {source: customer.csv, key: customer_id, foreign_keys: {district_id: district}}
  district: {source: district.csv, key: district_id}
  trans: {source: trans.csv, key: trans_id, foreign_keys: {customer_id: customer}}
  card: {source: card.csv, key: card_id, foreign_keys: {customer_id: customer}}
target: {table: customer, column: label}
max_depth: 2
frequent_values: 3
"""


def relational(path: Path) -> None:
    """Four CSV tables and their schema (``path``): 150 customers whose class follows the mean amount of their
    grocery transactions (10 % of the labels flipped), a district (to-one), cards and transactions (to-many),
    noise elsewhere."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(20261202)
    n = 150
    district = pd.DataFrame({"district_id": np.arange(6), "population": rng.integers(1000, 9000, 6),
                             "region": rng.choice(["n", "s", "e"], 6)})
    customer = pd.DataFrame({"customer_id": np.arange(n), "age": rng.integers(18, 80, n),
                             "segment": rng.choice(["a", "b", "c"], n), "district_id": rng.integers(0, 6, n)})
    rows = []
    for c in range(n):
        for j in range(int(rng.integers(3, 12))):
            merchant = "grocery" if j < 2 else ["grocery", "travel", "fuel", "retail"][int(rng.integers(0, 4))]
            rows.append((len(rows), c, float(np.round(rng.uniform(1, 100), 2)), merchant, int(rng.integers(0, 24))))
    trans = pd.DataFrame(rows, columns=["trans_id", "customer_id", "amount", "merchant_type", "hour"])
    grocery = trans[trans.merchant_type == "grocery"].groupby("customer_id").amount.mean()
    high = customer.customer_id.map(grocery) > grocery.median()
    customer["label"] = np.where(high ^ (rng.random(n) < 0.1), "high", "low")
    card = pd.DataFrame({"card_id": np.arange(2 * n), "customer_id": rng.integers(0, n, 2 * n),
                         "limit": np.round(rng.uniform(100, 5000, 2 * n), 2), "kind": rng.choice(["gold", "classic"], 2 * n)})
    path.parent.mkdir(parents=True, exist_ok=True)
    for name, table in (("district", district), ("customer", customer), ("trans", trans), ("card", card)):
        table.to_csv(path.parent / f"{name}.csv", index=False)
    path.write_text(RELATIONAL_SCHEMA)


SYNTHETIC = {"missing.csv": missing_csv, "table_dense.arff": dense_arff, "table_sparse.arff": sparse_arff,
             "relational/schema.yaml": relational}


# ----- running a case -------------------------------------------------------------------------------------
def command_line(name: str, work: Path) -> list:
    """jobs/rank.py's arguments of case ``name``, its inputs written under ``work`` and its output there."""
    args = []
    for a in CASES[name].args:
        a = str(a).replace("{datasets}", str(DATASETS)).replace("{root}", str(ROOT))
        if a.startswith("{synthetic:"):
            file = a[len("{synthetic:"):-1]
            target = work / file
            if not target.exists():
                SYNTHETIC[file](target)
            a = str(target)
        args.append(a)
    return args + ["--output", str(work / name), "--output-format", "csv", "--log-level", "warning"]


def run_case(name: str, work: Path) -> dict:
    """Run case ``name`` in this process under the active session (classic or Connect); its fingerprint.

    Raises
    ------
    AssertionError
        The job failed (its exit code and the end of its standard error).
    """
    from tests.job_in_process import run_as_process

    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, SPARK_FR_DRIVER_MAX_SECONDS=WHERE[CASES[name].where])
    out = run_as_process(JOB, command_line(name, work), cwd=ROOT, env=env)
    if out["code"] != 0:
        tail = "\n".join(out["stderr"].strip().splitlines()[-5:])
        raise AssertionError(f"golden case {name}: jobs/rank.py exited {out['code']}:\n{tail}")
    return fingerprint(work / name, work)


def run_in_session(_session, name: str, work: str) -> dict:
    """:func:`run_case` as a Spark Connect worker calls it (tests/conftest.py's ``connect.run``)."""
    return run_case(name, Path(work))


# ----- fingerprints ---------------------------------------------------------------------------------------
def _hex(value) -> str:
    value = float(value)
    return "nan" if value != value else value.hex()


def _portable(value, work: Path):
    """``value`` with this machine's folders replaced by {datasets}, {root}, {work} (params hold paths)."""
    if isinstance(value, str):
        for path, name in ((work, "{work}"), (DATASETS, "{datasets}"), (ROOT, "{root}")):
            value = value.replace(str(path), name)
        return value
    if isinstance(value, list):
        return [_portable(v, work) for v in value]
    if isinstance(value, dict):
        return {k: _portable(v, work) for k, v in value.items()}
    return value


#: what run.json says of the path a run took (the layout or engine a case pins; absent keys are left out)
ROUTE = ("session", "executed_on", "ensemble_mode", "encoded_targets", "relief_mode", "reliefe_mode")


def route(run: dict) -> dict:
    """The keys of :data:`ROUTE` that ``run`` (run.json) has, and the relational engine."""
    out = {k: run[k] for k in ROUTE if k in run}
    if "relational" in run:
        out["relational_engine"] = run["relational"]["engine"]
    return out


def fingerprint(output: Path, work: Path) -> dict:
    """The fingerprint of a run's output folder (ranking.csv, run.json).

    Returns
    -------
    dict
        'rows': [[score, target, feature, rank, importance hex, importance_std hex], ...] sorted by (score,
        target, feature); 'params': the run's params with portable paths; 'route': :func:`route`.
    """
    import pandas as pd

    table = pd.read_csv(output / "ranking.csv", keep_default_na=True)
    rows = [[r.score, r.target, r.feature, int(r.rank), _hex(r.importance), _hex(r.importance_std)]
            for r in table.sort_values(["score", "target", "feature"]).itertuples(index=False)]
    return {"rows": rows, "params": _portable(json.loads(table["params"].iloc[0]), work),
            "route": route(json.loads((output / "run.json").read_text()))}


ROW_FIELDS = ("score", "target", "feature", "rank", "importance", "importance_std")


def _shown_row(row) -> str:
    if row is None:
        return "(absent)"
    value = lambda h: "nan" if h == "nan" else f"{float.fromhex(h):.17g} ({h})"  # noqa: E731
    return f"rank {row[3]}, importance {value(row[4])}, std {value(row[5])}"


def compare(name: str, recorded: dict, now: dict, shown: int = 5) -> str | None:
    """None when ``now`` is ``recorded`` bit for bit (rows and params); else a message naming the case, how
    many rows differ and the first ``shown`` of them, recorded and now, and the params that differ.

    Decision: a params key that the recording does not have (an option added since) is not a difference: a new
    option at its default changes no result (if it did, the rows differ). A recorded key that is missing or
    holds another value is one."""
    old = {tuple(r[:3]): r for r in recorded["rows"]}
    new = {tuple(r[:3]): r for r in now["rows"]}
    keys = sorted(set(old) | set(new))
    differ = [k for k in keys if old.get(k) != new.get(k)]
    params = sorted(k for k in recorded["params"] if recorded["params"][k] != now["params"].get(k, "(absent)"))
    path = {k: (v, now["route"].get(k, "(absent)")) for k, v in recorded["route"].items() if now["route"].get(k) != v}
    if not differ and not params and not path:
        return None
    lines = [f"golden case {name}: {len(differ)} of {len(keys)} rows differ from the recording"
             + (f"; params differ in {', '.join(params)}" if params else "")]
    if path:
        lines.append("  the run no longer takes the recorded path (run.json): "
                     + ", ".join(f"{k} {a!r} -> {b!r}" for k, (a, b) in path.items()))
    for k in differ[:shown]:
        lines.append(f"  {'/'.join(k)}:\n    recorded {_shown_row(old.get(k))}\n    now      {_shown_row(new.get(k))}")
    for k in params[:shown]:
        lines.append(f"  params[{k}]: recorded {recorded['params'].get(k, '(absent)')!r}, "
                     f"now {now['params'].get(k, '(absent)')!r}")
    return "\n".join(lines)


def largest_difference(a: dict, b: dict) -> float:
    """The largest relative difference of importance and importance_std between two fingerprints of the same
    rows (0.0: identical values; inf: different rows or a value only one side has)."""
    ka = {tuple(r[:3]): r for r in a["rows"]}
    kb = {tuple(r[:3]): r for r in b["rows"]}
    if set(ka) != set(kb):
        return float("inf")
    worst = 0.0
    for k, ra in ka.items():
        for i in (4, 5):
            x, y = ra[i], kb[k][i]
            if x == y:
                continue
            if "nan" in (x, y):
                return float("inf")
            x, y = float.fromhex(x), float.fromhex(y)
            worst = max(worst, abs(x - y) / max(abs(x), abs(y)))
    return worst


def load(path: Path = RECORDED) -> dict:
    """The recorded fingerprints {case: fingerprint}."""
    return json.loads(Path(path).read_text())


def save(results: dict, path: Path = RECORDED) -> None:
    """Write ``results`` as the recording at ``path``, over what it holds of the other cases (a subset can be
    recorded again); cases that are no longer in :data:`CASES` are left out."""
    path = Path(path)
    merged = {**(load(path) if path.exists() else {}), **results}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{\n" + ",\n".join(_case_text(k, v) for k, v in sorted(merged.items()) if k in CASES) + "\n}\n")


def _case_text(name: str, fp: dict) -> str:
    """One case of the recording as JSON: its params and route on one line each, then one line per row (a
    changed row is one line of a diff)."""
    rows = ",\n".join(json.dumps(r) for r in fp["rows"])
    return (f"{json.dumps(name)}: {{\n\"params\": {json.dumps(fp['params'], sort_keys=True)},\n"
            f"\"route\": {json.dumps(fp['route'], sort_keys=True)},\n\"rows\": [\n{rows}\n]}}")
