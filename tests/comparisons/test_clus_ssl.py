"""Semi-supervised PCT ensembles against CLUS's SSL-PCT (``-forest -ssl``, ``[SemiSupervised]
SemiSupervisedMethod = PCT, PossibleWeights = 0.5``).

Data: ``mtr_jura`` (359 rows, 15 features, targets Cd, Co, Cu) with the targets of a seeded 70 % of the rows
removed (``?``). Both sides: random forests of 100 trees, sqrt(D) features per node, leaves of at least 2,
SSL weight 0.5, Genie3 and Symbolic (``0.5 ** depth``). Requirement (the issue's): the mean Spearman
correlation of our rankings with CLUS's is at least that of CLUS runs with other seeds with each other,
minus 0.05. Measured (3 + 3 seeds): Genie3 0.958 against 0.958, Symbolic 0.983 against 0.982.

The comparison can fail: our ranking with w = 0 (clustering on the features only) agrees with CLUS's
w = 0.5 at Genie3 0.44, Symbolic 0.85 (asserted below). With w = 1 (supervised) it agrees at 0.957 / 0.965:
on jura the features that cluster the rows are also those that predict the targets, so w matters little
between 0.5 and 1 for Genie3.

Unsupervised ranking is not compared here: CLUS's unsupervised Genie3 (Descriptive = Target = Clustering)
on jura ranks the high-variance concentrations first (Pb, Zn, Cu), as an unnormalised sum of squares would,
while ours (the thesis' normalised impurity) ranks the 0/1 indicator columns, whose normalised variance
one split removes, first: Spearman -0.12 against 0.99 between CLUS runs; the tree shapes (Symbolic) agree
at 0.88 against 0.93.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr

from tests.comparisons import clus_cache

SEEDS = (1, 2, 3)
TREES = 100

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("java") is None, reason="CLUS needs Java (java not on PATH)"),
]


def ssl_jura(datasets: Path, dst: Path) -> tuple:
    """jura with 70 % of the rows unlabelled; returns (path, feature names, target names)."""
    lines = (datasets / "mtr_jura/jura.arff").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().lower() == "@data")
    names = [line.split()[1] for line in lines[:at] if line.lower().startswith("@attribute")]
    rng = np.random.default_rng(0)
    rows = []
    for line in lines[at + 1:]:
        if not line.strip():
            continue
        cells = line.split(",")
        if rng.random() < 0.7:
            cells[-3:] = ["?"] * 3
        rows.append(",".join(cells))
    dst.write_text("\n".join(lines[:at + 1] + rows) + "\n")
    return dst, names[:-3], names[-3:]


@pytest.fixture(scope="module")
def clus_runs(datasets, tmp_path_factory):
    work = tmp_path_factory.mktemp("clus_ssl")
    path, features, targets = ssl_jura(datasets, work / "jura_ssl.arff")
    D = len(features)
    runs = []
    for seed in SEEDS:
        res = clus_cache.run(path, {"task": "ssl_mtr", "descriptive": f"1-{D}", "target": f"{D + 1}-{D + 3}",
                                    "ensemble": "RForest", "rankings": ["Genie3", "Symbolic"], "trees": TREES,
                                    "threads": 2, "seed": seed, "ssl_weight": 0.5, "symbolic_weight": 0.5},
                             work / f"s{seed}")
        assert res["returncode"] == 0, res["stdout_tail"]
        runs.append({k: {f: v[0] for f, v in res["rankings"][k]["scores"].items()} for k in ("Genie3", "Symbolic")})
    return path, features, targets, runs


def ours(spark, path, targets, seed, weight) -> dict:
    import spark_fr

    t = spark_fr.rank(str(path), targets=",".join(targets), task="mtr", semi_supervised=True, ssl_weight=weight,
                      ensemble="rf", trees=TREES, max_features="sqrt", min_samples_leaf=2.0, seed=seed,
                      scores="genie3,symbolic", symbolic_weight=0.5, spark=spark).to_pandas()
    return {key: dict(zip(t[t.score == s].feature, t[t.score == s].importance))
            for key, s in (("Genie3", "genie3"), ("Symbolic", "symbolic"))}


def rho(a: dict, b: dict, names) -> float:
    return float(spearmanr([a[f] for f in names], [b[f] for f in names])[0])


def test_ssl_rankings_agree_with_clus_ssl_pct(spark, clus_runs):
    path, features, targets, clus = clus_runs
    mine = [ours(spark, path, targets, seed, 0.5) for seed in SEEDS]
    report = {}
    for key in ("Genie3", "Symbolic"):
        within = np.mean([rho(clus[i][key], clus[j][key], features) for i in range(3) for j in range(i + 1, 3)])
        cross = np.mean([rho(m[key], c[key], features) for m in mine for c in clus])
        report[key] = (round(float(cross), 3), round(float(within), 3))
        assert cross >= within - 0.05, (key, cross, within)
    print("SSL ours-vs-CLUS, CLUS-vs-CLUS:", report)


def test_the_ssl_comparison_rejects_clustering_on_the_features_alone(spark, clus_runs):
    path, features, targets, clus = clus_runs
    mine = ours(spark, path, targets, SEEDS[0], 0.0)
    within = np.mean([rho(clus[0]["Genie3"], c["Genie3"], features) for c in clus[1:]])
    cross = np.mean([rho(mine["Genie3"], c["Genie3"], features) for c in clus])
    assert cross < within - 0.05, (cross, within)
