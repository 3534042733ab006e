"""Golden rankings: record the exact output of a fixed set of runs, and check a later version against it.

Used to prove that a change which should not change results (a refactoring, a faster kernel that keeps
the arithmetic) leaves every ranking bit-identical::

    python jobs/golden.py record tests/golden/rankings.json      # on the version before the change
    python jobs/golden.py check  tests/golden/rankings.json      # after: one line per case, exit 1 if any differs

Every case runs ``jobs/rank.py``'s entry point in this process (one local Spark session, ``local[2]``) on
the shared datasets or on a seeded synthetic table, writes its output, reads the ranking table back and
keeps, per (score, target, feature), the rank and the exact bits of ``importance`` and ``importance_std``
(as ``float.hex``), plus the ``params`` JSON. The cases cover every task type with ensembles and Relief,
every score, per-target rankings, the three ensembles, broadcast and tall Relief, semi-supervised and
unsupervised Relief, sparse input, missing values and nominal features, and a Delta output.

Bits can differ between CPUs (the Relief distance sum is vectorised), so compare runs on one machine.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
D = ROOT.parent / "shared" / "datasets"
sys.path.insert(0, str(ROOT))

# name -> command-line arguments (the output options are added by the runner)
CASES = {
    "ens_classification_rf_all_scores": ["--input", D / "sklearn_breast_cancer/breast_cancer.csv", "--trees", 30,
                                         "--seed", 1],
    "ens_regression_bagging": ["--input", D / "mtr_slump/slump.arff", "--targets", "SLUMP_cm", "--ensemble",
                               "bagging", "--trees", 30, "--seed", 2],
    "ens_mtr_rf_per_target": ["--input", D / "mtr_enb/enb.arff", "--targets", "Y1,Y2", "--trees", 40, "--seed", 1,
                              "--per-target"],
    "ens_mlc_extra_trees_bootstrap": ["--input", D / "mlc_emotions/emotions.arff", "--labels-xml",
                                      D / "mlc_emotions/emotions.xml", "--ensemble", "extra_trees", "--bootstrap",
                                      "--trees", 20, "--seed", 3, "--per-target"],
    "ens_mtr_nominal_extra_trees": ["--input", D / "mtr_sf1/sf1.arff", "--targets", "c-class,m-class,x-class",
                                    "--ensemble", "extra_trees", "--scores", "symbolic,genie3", "--trees", 30,
                                    "--symbolic-weight", 0.5, "--seed", 4],
    "ens_mlc_mixed_bagging": ["--input", D / "mlc_flags/flags.arff", "--labels-xml", D / "mlc_flags/flags.xml",
                              "--ensemble", "bagging", "--max-features", 0.5, "--min-samples-leaf", 3,
                              "--trees", 25, "--seed", 5],
    "ens_mlc_sparse": ["--input", D / "mlc_medical/medical.arff", "--labels-xml", D / "mlc_medical/medical.xml",
                       "--scores", "genie3,symbolic", "--trees", 8, "--seed", 1],
    "ens_classification_missing_nominal": ["--input", "{synthetic}", "--targets", "y", "--trees", 30,
                                           "--max-depth", 6, "--resample-constant-features", "--seed", 6],
    "relief_classification_broadcast": ["--input", D / "sklearn_wine/wine_data.csv", "--method", "relief",
                                        "--relief-neighbours", 10, "--seed", 1],
    "relief_regression_tall": ["--input", D / "mtr_slump/slump.arff", "--targets", "SLUMP_cm", "--method",
                               "relief", "--relief-mode", "tall", "--seed", 2],
    "relief_mtr_per_target": ["--input", D / "mtr_atp1d/atp1d.arff", "--targets",
                              "LBL+ALLminpA+fut_001,LBL+ALLminp0+fut_001,LBL+aDLminpA+fut_001,"
                              "LBL+aCOminpA+fut_001,LBL+aFLminpA+fut_001,LBL+aUAminpA+fut_001",
                              "--method", "relief", "--relief-iterations", 100, "--per-target", "--seed", 3],
    "relief_mlc_f1_sigma_per_target": ["--input", D / "mlc_emotions/emotions.arff", "--labels-xml",
                                       D / "mlc_emotions/emotions.xml", "--method", "relief", "--relief-sigma", 0.5,
                                       "--per-target", "--seed", 4],
    "relief_mlc_jaccard_tall": ["--input", D / "mlc_emotions/emotions.arff", "--labels-xml",
                                D / "mlc_emotions/emotions.xml", "--method", "relief", "--relief-target-distance",
                                "jaccard", "--relief-mode", "tall", "--relief-iterations", 0.3, "--seed", 4],
    "relief_hmlc_tree": ["--input", D / "hmlc_cellcycle_FUN/cellcycle_FUN.train.arff", "--method", "relief",
                         "--relief-iterations", 300, "--seed", 5],
    "relief_hmlc_dag_hierarchy_normaliser": ["--input", D / "hmlc_derisi_GO/derisi_GO.train.arff", "--method",
                                             "relief", "--relief-iterations", 200, "--relief-hmlc-normaliser",
                                             "hierarchy", "--seed", 6],
    "relief_hmlc_ssl_enron": ["--input", f"{D / 'hmlc_enron_harff/enron-training_set.harff.zip'},"
                                         f"{D / 'hmlc_enron_harff/enron-unlabelled_set.harff.zip'}",
                              "--semi-supervised", "--method", "relief", "--relief-iterations", 200, "--seed", 7],
    "relief_ssl_tall_synthetic": ["--input", "{synthetic}", "--targets", "y", "--semi-supervised", "--method",
                                  "relief", "--relief-mode", "tall", "--relief-influence", "0.2,0.9", "--seed", 8],
    "relief_unsupervised": ["--input", D / "sklearn_iris/iris.csv", "--task", "unsupervised", "--method",
                            "relief", "--seed", 9],
    "delta_output_mtr": ["--input", D / "mtr_jura/jura.arff", "--targets", "Cd,Co,Cu", "--trees", 20, "--seed", 10,
                         "--output-format", "delta"],
}


def synthetic_csv(path: Path) -> Path:
    """A seeded table with missing values, a nominal feature and some unlabelled rows."""
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
    return path


def read_output(out: Path, fmt: str):
    import pandas as pd

    if fmt == "delta":
        from deltalake import DeltaTable

        return DeltaTable(str(out)).to_pandas()
    return pd.read_csv(out / "ranking.csv", keep_default_na=True)


def fingerprint(table) -> dict:
    """{'rows': [[score, target, feature, rank, importance hex, std hex], ...], 'params': ...}."""
    rows = []
    for r in table.sort_values(["score", "target", "feature"]).itertuples(index=False):
        std = float(r.importance_std)
        rows.append([r.score, r.target, r.feature, int(r.rank), float(r.importance).hex(),
                     "nan" if std != std else std.hex()])
    return {"rows": rows, "params": json.loads(table["params"].iloc[0])}


def run_case(name: str, args: list, work: Path) -> dict:
    from spark_fr.cli import main

    args = [str(a) for a in args]
    if "{synthetic}" in args:
        args[args.index("{synthetic}")] = str(synthetic_csv(work / "synthetic.csv"))
    fmt = args[args.index("--output-format") + 1] if "--output-format" in args else "csv"
    out = work / name
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(args + ["--output", str(out), "--master", "local[2]", "--log-level", "warning"])
    if code != 0:
        raise SystemExit(f"{name}: exit {code}: {err.getvalue().strip().splitlines()[-1:]}")
    result = fingerprint(read_output(out, fmt))
    for key, value in result["params"].items():  # the temporary directory differs between runs
        if isinstance(value, str) and str(work) in value:
            result["params"][key] = value.replace(str(work), "{work}")
    return result


def compare(name: str, old: dict, new: dict) -> str:
    if old["rows"] == new["rows"]:
        diff = sorted(k for k in set(old["params"]) | set(new["params"]) if old["params"].get(k) != new["params"].get(k))
        same = f"; params differ in {', '.join(diff)}" if diff else ""
        return f"{name}: identical ({len(new['rows'])} rows){same}"
    if len(old["rows"]) != len(new["rows"]):
        return f"{name}: DIFFERENT ({len(old['rows'])} rows recorded, {len(new['rows'])} now)"
    diff = [(a, b) for a, b in zip(old["rows"], new["rows"]) if a != b]
    a, b = diff[0]
    return f"{name}: DIFFERENT in {len(diff)} rows, e.g. {a} -> {b}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("action", choices=("record", "check"))
    ap.add_argument("path", help="golden JSON file")
    ap.add_argument("--cases", help="comma list of case names (default: all)")
    args = ap.parse_args(argv)
    names = args.cases.split(",") if args.cases else list(CASES)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    golden = json.loads(Path(args.path).read_text()) if args.action == "check" else {}
    results, failed = {}, 0
    with tempfile.TemporaryDirectory(prefix="spark_fr_golden_") as tmp:
        for name in names:
            t0 = time.perf_counter()
            results[name] = run_case(name, CASES[name], Path(tmp))
            took = time.perf_counter() - t0
            if args.action == "check":
                line = compare(name, golden[name], results[name]) if name in golden else f"{name}: not recorded"
                failed += "identical" not in line
                print(f"{line} [{took:.1f} s]", flush=True)
            else:
                print(f"{name}: {len(results[name]['rows'])} rows [{took:.1f} s]", flush=True)
    if args.action == "record":
        Path(args.path).parent.mkdir(parents=True, exist_ok=True)
        Path(args.path).write_text(json.dumps(results, indent=0, sort_keys=True) + "\n")
        print(f"recorded {len(results)} cases in {args.path}")
        return 0
    print(f"{len(names) - failed} of {len(names)} cases identical")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
