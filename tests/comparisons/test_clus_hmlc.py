"""HMLC PCT ensembles against CLUS (Clus-HMC random forests, ``pyclus`` 1.0.2 = Clus 2.12.8): Genie3 and
Symbolic rankings on the cellcycle FunCat tree and the derisi Gene Ontology DAG.

Requirement (the issue's): the mean Spearman correlation of our rankings with CLUS's is at least that of CLUS
runs with other seeds with each other, minus 0.05.

What CLUS computes for HMLC (its source, knowledge-technologies/clus; see spark_fr/tasks/hmlc.py)
-----------------------------------------------------------------------------------------------------
* Impurity: ``(1/L) sum_l w(l) Var(E, l)``, the *weighted* form, without the thesis' division by the label's
  training variance: our default since issue 23. The comparison asks for it through the user-facing option
  (``rank(hmlc_impurity='weighted')`` = ``--hmlc-impurity weighted``), so it keeps testing CLUS's form whatever
  the default. The thesis' normalised impurity (``--hmlc-impurity normalised``) is checked to fail the same
  comparison (below): it grows different trees.
* Label weights: ``WType = ExpAvgParentWeight`` (w0 times the *mean* of the parents' weights, ours) is set
  explicitly: CLUS' default ``ExpSumParentWeight`` sums the parents' weights, which differs on a DAG.
  ``WParam = 0.75`` = ``--hmlc-w0``.
* ``[Output] TrainErrors = No``: CLUS otherwise evaluates the forest on its training rows after the ranking
  (pooled precision-recall over all labels), which took longer than growing the trees and, on derisi, ran
  out of the default heap.
* Missing feature values: CLUS scores a test on the rows whose value is known and sends the others down
  both branches with fractional weights (``FindBestTest.findNumeric``, ``RowData.applyWeighted``; see
  spark_fr/pct/grow.py and spark_fr/pct/node_rows.py), so our ensembles run with ``--missing fractional`` (our default since issue 23). The
  ``learned`` rule (the block of missing values to the better side) is checked to fail the comparison on
  cellcycle (below).

Settings (both sides)
---------------------
Random forests, sqrt(D) features per node, Symbolic with ``0.5 ** depth`` (CLUS's form), leaves of at least
10 (bootstrap-weighted; CLUS ``MinimalWeight = 10``), each CLUS run with its own seed and its own random column
order of the same data (as in test_clus_agreement.py: CLUS gives exact ties to the lowest column).

Why leaves of 10, not 2: in fully grown HMLC trees most of the impurity reduction happens in nodes of a few
rows, where several features give the same partition; CLUS gives such ties to the lowest column, so its
Genie3 follows the column order: on cellcycle (file order, leaves of 2) the importance correlates with the
column index at -0.85 (Spearman), and CLUS runs on different column orders agree at only 0.13 (cellcycle) /
0.31 (derisi), a bar that no ranking can fail. With leaves of 10 CLUS agrees with itself at 0.84 / 0.70.

Data
----
* cellcycle_FUN train (1,628 rows, 77 features, 499 labels) as it is, with its missing feature values (6 %
  of the cells, in 94 % of the rows; up to 34 % of a column), and two random nominal features (6 and 8
  categories, independent of the labels: ``test_random_nominal_features_...``). (Until ``--missing fractional``
  existed, both sides got a copy with the column medians imputed: with the missing values, our ``learned`` rule
  agreed at Genie3 0.63 against CLUS-CLUS 0.84, the difference of the mean ranks correlating with the missing
  fraction at -0.62, as the block of missing values goes to the better side and credits the feature with it.)
* derisi_GO train (a DAG of 4,119 terms, 3,172 varying on the training rows), its first 800 rows, 50 trees:
  CLUS needs 49 s and 4.7 GB for 100 trees on all 1,605 rows, too long for the suite. It has no missing value,
  so ``--missing`` changes nothing there (fractional trees are learned ones to the bit without missing values).

Measured, cellcycle with its missing values (3 CLUS seeds x 3 of ours, as asserted; with 4 CLUS seeds in
brackets): ``--missing fractional`` Genie3 0.822 against 0.821 (0.828 / 0.838), Symbolic 0.835 against 0.804
(0.831 / 0.817); ``learned`` Genie3 0.638 (one seed, as asserted; 3 seeds 0.633), Symbolic 0.780. On the
median-imputed file (before): Genie3 0.846 against 0.844, Symbolic 0.827 against 0.818. derisi: Genie3 0.706
against 0.696, Symbolic 0.771 against 0.779 (4 CLUS seeds: 0.726 / 0.699, 0.783 / 0.776). The thesis'
normalised impurity: cellcycle Genie3 0.57, Symbolic 0.18 (imputed file 0.59 / 0.26), derisi 0.63 / 0.46.
With the two random nominal features (median-imputed file, 3 and 3 seeds, issue 23): cellcycle Genie3 0.842
against 0.838, Symbolic 0.829 against 0.793; Genie3 mean rank of rnd_nom6 / rnd_nom8 ours 76.3 / 28.3, CLUS
74.3 / 28.7 (the exhaustive subset search up to 8 categories that the greedy one replaced: 21.7 / 1.0).
"""
from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr

from tests.comparisons import clus_cache

CLUS_SEEDS = (1, 2, 3)
OUR_SEEDS = (1, 2, 3)
MIN_LEAF = 10
MARGIN = 0.05
RANK_MARGIN = 15  # of 79 cellcycle features

DATASETS = {
    "cellcycle": {"arff": "hmlc_cellcycle_FUN/cellcycle_FUN.train.arff", "n_features": 77, "type": "Tree",
                  "trees": 100, "rows": None, "noise": (6, 8)},
    "derisi": {"arff": "hmlc_derisi_GO/derisi_GO.train.arff", "n_features": 63, "type": "DAG", "trees": 50,
               "rows": 800, "noise": ()},
}
SCORES = (("genie3", "Genie3"), ("symbolic", "Symbolic"))

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("java") is None, reason="CLUS needs Java (java not on PATH)"),
]


def prepared_arff(src: Path, dst: Path, rows: int | None, noise: tuple = ()) -> Path:
    """``src`` with its first ``rows`` data rows (all: None) and a random nominal feature ``rnd_nom<k>`` of k
    categories for each k in ``noise`` (after the features, before the class)."""
    lines = src.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().lower() == "@data")
    data = [line.split(",") for line in lines[at + 1:] if line.strip() and not line.startswith("%")][:rows]
    rng = np.random.default_rng(23)
    codes = [rng.integers(0, k, len(data)) for k in noise]
    data = [r[:-1] + [f"c{c[i]}" for c in codes] + r[-1:] for i, r in enumerate(data)]
    head = lines[:at + 1]
    cls = max(i for i, line in enumerate(head) if line.strip().lower().startswith("@attribute"))
    head[cls:cls] = [f"@attribute rnd_nom{k} {{{','.join(f'c{j}' for j in range(k))}}}" for k in noise]
    dst.write_text("\n".join(head + [",".join(r) for r in data]) + "\n")
    return dst


def clus_rankings(arff: Path, cfg: dict, seed: int, workdir: Path) -> dict:
    """CLUS's rankings (its recorded run, :mod:`tests.comparisons.clus_cache`): ``{'Genie3': {...}, ...}``."""
    d = cfg["n_features"] + len(cfg["noise"])
    res = clus_cache.run(arff, {"task": "hmlc", "descriptive": f"1-{d}", "target": str(d + 1), "ensemble": "RForest",
                               "rankings": ["Genie3", "Symbolic"], "trees": cfg["trees"], "threads": 2, "seed": seed,
                               "symbolic_weight": 0.5, "hier_type": cfg["type"], "xmx": "4g",
                               "extra": {"Hierarchical": {"WType": "ExpAvgParentWeight", "WParam": 0.75},
                                         "Model": {"MinimalWeight": float(MIN_LEAF)},
                                         "Output": {"TrainErrors": "No"}}},
                         workdir)
    assert res["returncode"] == 0, res["stdout_tail"]
    out = (workdir / "run.out").read_text()
    assert "WType = ExpAvgParentWeight" in out and f"MinimalWeight = {float(MIN_LEAF)}" in out
    return {key: {f: v[0] for f, v in res["rankings"][key]["scores"].items()} for key in ("Genie3", "Symbolic")}


def our_rankings(spark, arff: Path, trees: int, seed: int, impurity: str, missing: str = "fractional") -> dict:
    import spark_fr

    with pytest.MonkeyPatch.context() as mp:
        # the trees grow in the driver process, as a user's run of this size does (conftest.py sends the
        # suite's small work to Spark tasks; test_hmlc_ensemble.py checks that Spark gives the same ranking)
        mp.delenv("SPARK_FR_DRIVER_MAX_SECONDS", raising=False)
        table = spark_fr.rank(str(arff), spark=spark, ensemble="rf", trees=trees, max_features="sqrt",
                              min_samples_leaf=MIN_LEAF, scores="genie3,symbolic", symbolic_weight=0.5,
                              seed=seed, hmlc_impurity=impurity, missing=missing).to_pandas()
    assert '"task": "hmlc"' in table.params.iloc[0] and f'"missing": "{missing}"' in table.params.iloc[0]
    table = table[table.target == "__all__"]
    return {clus_key: dict(zip(table[table.score == score].feature, table[table.score == score].importance))
            for score, clus_key in SCORES}


def spearman(a: dict, b: dict) -> float:
    assert set(a) == set(b), set(a) ^ set(b)
    names = sorted(a)
    return float(spearmanr([a[f] for f in names], [b[f] for f in names])[0])


def agreement(ours: list, clus: list, key: str) -> tuple:
    """(mean Spearman ours x CLUS, mean Spearman over the CLUS pairs)."""
    cross = np.mean([spearman(o[key], c[key]) for o in ours for c in clus])
    within = np.mean([spearman(a[key], b[key]) for a, b in itertools.combinations(clus, 2)])
    return float(cross), float(within)


@pytest.fixture(scope="module")
def runs(spark, datasets, tmp_path_factory):
    """``runs(name)`` -> (data file, CLUS rankings, our rankings with the weighted impurity and fractional missing
    values), computed once per dataset."""
    from tests.comparisons.test_clus_agreement import permute_arff_features

    cache = {}

    def get(name: str):
        if name not in cache:
            cfg = DATASETS[name]
            work = tmp_path_factory.mktemp(f"clus_hmlc_{name}")
            arff = prepared_arff(datasets / cfg["arff"], work / Path(cfg["arff"]).name, cfg["rows"], cfg["noise"])
            clus = []
            for s in CLUS_SEEDS:
                folder = work / f"clus{s}"
                folder.mkdir()
                permute_arff_features(arff, folder / arff.name, cfg["n_features"] + len(cfg["noise"]), seed=1000 + s)
                clus.append(clus_rankings(folder / arff.name, cfg, s, folder))
            ours = [our_rankings(spark, arff, cfg["trees"], s, "weighted") for s in OUR_SEEDS]
            cache[name] = (arff, clus, ours)
        return cache[name]

    return get


@pytest.mark.parametrize("name", list(DATASETS))
@pytest.mark.parametrize("score", [s[1] for s in SCORES])
def test_weighted_impurity_agrees_with_clus(runs, record_property, name, score):
    _, clus, ours = runs(name)
    cross, within = agreement(ours, clus, score)
    print(f"\n{name} {score}: ours-CLUS {cross:.3f}, CLUS-CLUS {within:.3f}")
    record_property(f"{name}.{score}.ours_vs_clus", round(cross, 4))
    record_property(f"{name}.{score}.clus_vs_clus", round(within, 4))
    assert cross >= within - MARGIN, (name, score, cross, within)


@pytest.mark.parametrize("name", list(DATASETS))
def test_the_comparison_rejects_the_normalised_impurity(runs, spark, name):
    """Power check: the thesis' normalised impurity is not CLUS's, and the test sees it.

    Dividing by the training variance gives a label seen in a handful of rows the weight of a common one, so
    the trees isolate rare labels; measured Symbolic 0.26 (cellcycle) / 0.46 (derisi) against CLUS.
    """
    arff, clus, _ = runs(name)
    normalised = [our_rankings(spark, arff, DATASETS[name]["trees"], OUR_SEEDS[0], "normalised")]
    cross, within = agreement(normalised, clus, "Symbolic")
    print(f"\n{name} Symbolic, normalised impurity: ours-CLUS {cross:.3f}, CLUS-CLUS {within:.3f}")
    assert cross < within - MARGIN, (name, cross, within)


def test_the_comparison_rejects_learned_missing_values(runs, spark):
    """Power check: our ``learned`` rule for missing feature values (the block goes to the better side of a test)
    is not CLUS's, and the test sees it on cellcycle; measured Genie3 0.64 against CLUS-CLUS 0.82."""
    arff, clus, _ = runs("cellcycle")
    learned = [our_rankings(spark, arff, DATASETS["cellcycle"]["trees"], OUR_SEEDS[0], "weighted", "learned")]
    cross, within = agreement(learned, clus, "Genie3")
    print(f"\ncellcycle Genie3, --missing learned: ours-CLUS {cross:.3f}, CLUS-CLUS {within:.3f}")
    assert cross < within - MARGIN, (cross, within)
def mean_rank(rankings: list, key: str, feature: str) -> float:
    """Mean over runs of the rank (1 = most important, ties averaged) of ``feature`` by score ``key``."""
    from scipy.stats import rankdata

    ranks = []
    for r in rankings:
        names = sorted(r[key])
        rk = rankdata([-r[key][f] for f in names], method="average")
        ranks.append(rk[names.index(feature)])
    return float(np.mean(ranks))


def test_random_nominal_features_get_no_more_credit_than_clus_gives_them(runs, record_property):
    """Random nominal features of 6 and 8 categories rank by our Genie3 no higher than by CLUS's (minus
    RANK_MARGIN): the nominal subset search is CLUS's greedy one. (The exhaustive search up to 8 categories that
    it replaced ranked them about 20th and 2nd of 82 on cellcycle, where CLUS ranks them about 78th and 40th.)
    Many categories still give a nominal feature more tests than a numeric one, in CLUS as here (docs/decisions.md,
    "Nominal tests"), so the bar is CLUS's rank, not the bottom."""
    _, clus, ours = runs("cellcycle")
    for k in DATASETS["cellcycle"]["noise"]:
        feature = f"rnd_nom{k}"
        mine, theirs = mean_rank(ours, "Genie3", feature), mean_rank(clus, "Genie3", feature)
        print(f"\n{feature} Genie3 mean rank: ours {mine:.1f}, CLUS {theirs:.1f}")
        record_property(f"{feature}.rank.ours", mine)
        record_property(f"{feature}.rank.clus", theirs)
        assert mine >= theirs - RANK_MARGIN, (feature, mine, theirs)
