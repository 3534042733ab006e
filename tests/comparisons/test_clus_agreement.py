"""Agreement of spark_fr's Genie3 and Symbolic rankings with CLUS, the reference PCT implementation.

Requirement: on ``mtr_enb`` and ``mlc_emotions``, with 100 random-forest trees, our Genie3 and Symbolic
rankings agree with CLUS's at least as well as two CLUS runs with different seeds agree with each other
(Spearman correlation over all features, top-5 overlap).

What is compared
----------------
* CLUS (``pyclus`` 1.0.2, Clus 2.12.8): RForest, 100 trees, ``SelectRandomSubspaces = SQRT``,
  ``MinimalWeight = 2.0`` (its default, read back from the ``.out`` file), ``SymbolicWeight = 0.5``,
  2 threads (rankings are identical for 1 and 2 threads), seeds ``CLUS_SEEDS``.
* spark_fr: ``ensemble='rf'``, 100 trees, ``max_features='sqrt'`` (ceil(sqrt(D)), the same count CLUS
  resolves: 3 for enb, 9 for emotions), ``min_samples_leaf=2`` (bootstrap-weighted, like CLUS'
  MinimalWeight), seeds ``OUR_SEEDS``. Symbolic with ``symbolic_weight=0.5`` (``0.5 ** depth``, CLUS'
  form). Our default Symbolic (``|E(N)| / |E_train|`` per node) is measured and printed, never asserted.
* MLC: this CLUS build picks ``Heuristic = Gain`` (information gain) for nominal targets by default,
  while the thesis (and spark_fr) use the normalised Gini / variance impurity. We set
  ``[Tree] Heuristic = VarianceReduction`` so both grow the same kind of trees. (With Gain, spark_fr vs
  file-order CLUS Genie3 is 0.78, against 0.80 with VarianceReduction.)

The statistics (why this test is fair, and can still fail)
----------------------------------------------------------
Every run of either program is one random draw of a ranking. Let ``rho(a, b)`` be the Spearman
correlation of the importance vectors of runs a and b (aligned by feature name) and ``ov(a, b)`` the
top-5 overlap ``|top5(a) & top5(b)| / 5``. "spark_fr agrees with CLUS as well as CLUS agrees with
itself" means ``E[rho(ours, clus)] >= E[rho(clus, clus')]``. We estimate both sides with all pairs:

    cross  = mean of rho(o, c) over the M x K (ours, CLUS) pairs
    within = mean of rho(c, c') over the K (K - 1) / 2 CLUS pairs

A plain ``cross >= within`` would fail half of the time for an implementation that draws from exactly
CLUS' distribution, and ``cross >= min(within pairs)`` has no controlled error rate. We therefore test the
null hypothesis "spark_fr runs and CLUS runs are exchangeable" (same distribution of rankings) with an
exact permutation test: pool the M + K runs, and for every way of labelling M of them "ours" compute the
same statistic ``S = cross - within``. The p-value is the fraction of labellings with ``S <= S_observed``
(ties count against us, so the test is conservative). Pairwise correlations that share a run are
dependent; the permutation test is exact anyway, because it only uses exchangeability. It fails
(one-sided) when spark_fr agrees with CLUS *worse* than CLUS agrees with itself; a spark_fr that is less
noisy than CLUS only raises ``cross`` and passes. With M = 4 and K = 6 there are C(10, 4) = 210
labellings; ALPHA = 0.005 fails only when S_observed is the lowest of all 210 (p = 1/210). Eight checks
(2 datasets x 2 scores x 2 measures) then give a correct implementation at most a ~4 % chance of failing.
All seeds are fixed, so the outcome is deterministic (no flakiness); that chance is paid only when a
random stream changes. ``test_the_comparison_rejects_a_weaker_ensemble`` shows the test can fail: Genie3
from 10 instead of 100 trees is rejected on emotions (0.60 vs 0.73, p = 1/210); so are, in a one-off check,
Symbolic with w = 1 (plain counts) and bagging instead of RF.

CLUS' rankings depend on the column order of the ARFF file
----------------------------------------------------------
In CLUS, the random subset of a node is evaluated in dataset order and the first best test wins, so on
exact ties (frequent with 0/1 labels in small nodes, and among enb's building-shape features, which are
functions of one another) the lowest-index attribute wins. On emotions, CLUS on the same data with the
feature columns reversed agrees with CLUS on the original order at Spearman 0.64 (Genie3) / 0.79
(Symbolic), against 0.86 / 0.88 between two seeds on the original order, and the importance ratio
(reversed / original) correlates with the column index at 0.95. spark_fr evaluates the features of a node
in a random order, so its ties are broken at random. Two CLUS runs on the same column order share this
bias, which inflates CLUS-vs-CLUS agreement with something no order-independent implementation can match
(on emotions, spark_fr vs file-order CLUS Genie3 is 0.80 against 0.85 between CLUS runs, p = 1/210).
The asserted comparison therefore gives each CLUS run its own seed *and* its own random column order
(same data, columns permuted, features matched by name). The file-order numbers are computed, printed and
recorded next to it.

The price is power on enb: CLUS' ranking of the five shape features there is mostly decided by column
order (CLUS vs CLUS Symbolic drops from 0.99 to 0.72, worst pair 0.38), so the shuffled comparison on enb
would not notice much. The enb deviation below shows up in the file-order comparison instead.

Known systematic difference (Symbolic on enb): tie-breaking by column order
---------------------------------------------------------------------------
spark_fr samples the candidate features of a node as CLUS does (the ``sqrt(D)`` sampled features are the
candidates even when some are constant in the node, which then may become a leaf; an earlier version
drew more features, as scikit-learn does, and grew about twice as many nodes on enb). What remains on enb
is the tie-breaking: five of its eight features (Relative_compactness, X1, X3, X4, X5) are functions of
the building shape, so they give exactly the same partitions, and CLUS gives every such tie to the
lowest column, Relative_compactness. spark_fr visits the candidates in a random order, so the credit is
shared among the shape features. Against file-order CLUS, enb Symbolic (``0.5 ** depth``) agrees at ~0.95
against ~0.99 between CLUS runs (which share the bias); against CLUS on shuffled columns spark_fr agrees
*better* than CLUS with itself. ``test_enb_symbolic_against_clus_in_file_order`` is a strict expected
failure for this: it starts failing once the two behaviours agree, so the marker gets removed.
"""
from __future__ import annotations

import itertools
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr

from tests.comparisons import clus_cache


TREES = 100
MIN_LEAF = 2.0  # CLUS [Model] MinimalWeight default (checked against the .out file below)
CLUS_SEEDS = (1, 2, 3, 4, 5, 6)
OUR_SEEDS = (1, 2, 3, 4)
TOP_K = 5
ALPHA = 0.005  # with C(10, 4) = 210 labellings: the observed statistic is the lowest of all

DATASETS = {
    "mtr_enb": {
        "arff": "mtr_enb/enb.arff",
        "n_features": 8,
        "clus": {"task": "mtr", "descriptive": "1-8", "target": "9-10"},
        "ours": {"targets": "Y1,Y2"},
    },
    "mlc_emotions": {
        "arff": "mlc_emotions/emotions.arff",
        "n_features": 72,
        # the thesis' (and spark_fr's) MLC impurity; this CLUS build defaults to Gain for nominal targets
        "clus": {"task": "mlc", "descriptive": "1-72", "target": "73-78",
                 "extra": {"Tree": {"Heuristic": "VarianceReduction"}}},
        "ours": {"labels_xml": "mlc_emotions/emotions.xml"},
    },
}
# (name shown in the table, CLUS ranking, our score key): the asserted scores
SCORES = (("genie3", "Genie3", "genie3"), ("symbolic_w0.5", "Symbolic", "symbolic"))

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("java") is None, reason="CLUS needs Java (java not on PATH)"),
]


# ----- helpers ----------------------------------------------------------------------------------------
def permute_arff_features(src: Path, dst: Path, n_features: int, seed: int) -> None:
    """Write ``src`` with its first ``n_features`` columns in a random order (same data, same names).

    Parameters
    ----------
    src, dst : Path
        Dense ARFF files (no quoted commas), descriptive attributes first.
    n_features : int
    seed : int
        Seed of the column permutation.
    """
    lines = src.read_text().splitlines()
    data_at = next(i for i, line in enumerate(lines) if line.strip().lower() == "@data")
    attr_at = [i for i in range(data_at) if lines[i].strip().lower().startswith("@attribute")]
    order = np.random.default_rng(seed).permutation(n_features)
    out = list(lines[:attr_at[0]])
    out += [lines[attr_at[j]] for j in order] + [lines[i] for i in attr_at[n_features:]]
    out += lines[attr_at[-1] + 1:data_at + 1]
    for line in lines[data_at + 1:]:
        if not line.strip() or line.startswith("%"):
            continue
        cells = line.split(",")
        out.append(",".join([cells[j] for j in order] + cells[n_features:]))
    dst.write_text("\n".join(out) + "\n")


def clus_task(task: dict, seed: int) -> dict:
    """``run_clus``'s task for one CLUS RForest run of the comparison."""
    return {**task, "ensemble": "RForest", "rankings": ["Genie3", "Symbolic"], "trees": TREES, "threads": 2,
            "seed": seed, "symbolic_weight": 0.5}


def clus_rankings(arff: Path, task: dict, seed: int, workdir: Path) -> dict:
    """CLUS RForest once (its recorded run, :mod:`tests.comparisons.clus_cache`); return ``{'Genie3': {feature:
    importance}, 'Symbolic': {...}}``.

    Also checks, from the ``.out`` file, that CLUS used the leaf size and subspace size spark_fr uses.
    """
    res = clus_cache.run(arff, clus_task(task, seed), workdir)
    assert res["returncode"] == 0, res["stdout_tail"]
    out = (workdir / "run.out").read_text()
    d = int(task["descriptive"].split("-")[1])
    assert re.search(r"^MinimalWeight = 2\.0$", out, re.M), "CLUS MinimalWeight is no longer 2.0"
    assert re.search(rf"^SelectRandomSubspaces = {math.ceil(math.sqrt(d))}$", out, re.M)
    return {key: {f: v[0] for f, v in res["rankings"][key]["scores"].items()} for key in ("Genie3", "Symbolic")}


def our_rankings(spark, path: Path, kwargs: dict, seed: int) -> dict:
    """Run spark_fr twice (Symbolic weight 0.5 and our default); return ``{score: {feature: importance}}``."""
    import spark_fr

    out = {}
    for weight, keep in ((0.5, {"genie3": "genie3", "symbolic": "symbolic"}), (None, {"symbolic": "symbolic_frac"})):
        table = spark_fr.rank(str(path), spark=spark, ensemble="rf", trees=TREES, max_features="sqrt",
                              min_samples_leaf=MIN_LEAF, scores=",".join(keep), seed=seed,
                              symbolic_weight=weight, **kwargs).to_pandas()
        table = table[table.target == "__all__"]
        for score, name in keep.items():
            sel = table[table.score == score]
            out[name] = dict(zip(sel.feature, sel.importance.astype(float)))
    return out


def spearman(a: dict, b: dict) -> float:
    """Spearman correlation of two importance dicts over all features (aligned by name)."""
    assert set(a) == set(b), set(a) ^ set(b)
    names = sorted(a)
    return float(spearmanr([a[f] for f in names], [b[f] for f in names])[0])


def top_overlap(a: dict, b: dict, k: int = TOP_K) -> float:
    """``|top_k(a) & top_k(b)| / k`` (ties inside an importance vector broken by name)."""
    def top(d):
        return {f for f, _ in sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))[:k]}

    return len(top(a) & top(b)) / k


def similarity_matrix(runs: list, measure) -> np.ndarray:
    """Pairwise similarities of a list of importance dicts (diagonal NaN)."""
    n = len(runs)
    sim = np.full((n, n), np.nan)
    for i, j in itertools.combinations(range(n), 2):
        sim[i, j] = sim[j, i] = measure(runs[i], runs[j])
    return sim


def cross_minus_within(sim: np.ndarray, group: tuple) -> tuple:
    """(cross, within) for a labelling: mean similarity group x rest, and mean within the rest."""
    rest = [i for i in range(sim.shape[0]) if i not in group]
    cross = float(sim[np.ix_(list(group), rest)].mean())
    within = float(np.mean([sim[i, j] for i, j in itertools.combinations(rest, 2)]))
    return cross, within


def exchangeability_p(sim: np.ndarray, n_ours: int) -> float:
    """One-sided exact permutation p-value of ``cross - within`` (runs ``0..n_ours-1`` are ours).

    The p-value is the fraction of the C(n, n_ours) labellings whose statistic is <= the observed one.
    """
    observed = np.subtract(*cross_minus_within(sim, tuple(range(n_ours))))
    stats = [np.subtract(*cross_minus_within(sim, g)) for g in itertools.combinations(range(sim.shape[0]), n_ours)]
    return float(np.mean(np.asarray(stats) <= observed + 1e-12))


def compare(ours: list, clus: list, measure) -> dict:
    """Agreement numbers for one (dataset, score, measure)."""
    sim = similarity_matrix(ours + clus, measure)
    m = len(ours)
    cross, within = cross_minus_within(sim, tuple(range(m)))
    clus_pairs = [sim[i, j] for i, j in itertools.combinations(range(m, sim.shape[0]), 2)]
    our_pairs = [sim[i, j] for i, j in itertools.combinations(range(m), 2)]
    return {"ours_vs_clus": cross, "clus_vs_clus": within, "clus_vs_clus_min": float(np.min(clus_pairs)),
            "ours_vs_ours": float(np.mean(our_pairs)), "ours_vs_clus_min": float(sim[:m, m:].min()),
            "p": exchangeability_p(sim, m)}


# ----- the runs (once per dataset) ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def agreement(spark, datasets, tmp_path_factory):
    """``agreement(name)`` -> measured numbers and raw rankings for that dataset (computed once)."""
    cache = {}

    def measure(name: str) -> dict:
        if name not in cache:
            cache[name] = _measure(spark, datasets, tmp_path_factory.mktemp(f"clus_{name}"), name)
        return cache[name]

    return measure


def _measure(spark, datasets: Path, work: Path, name: str) -> dict:
    cfg = DATASETS[name]
    arff = datasets / cfg["arff"]
    kwargs = {k: (str(datasets / v) if k == "labels_xml" else v) for k, v in cfg["ours"].items()}
    ours = [our_rankings(spark, arff, kwargs, s) for s in OUR_SEEDS]
    shuffled, original = [], []
    for s in CLUS_SEEDS:
        permuted = work / f"perm{s}" / arff.name
        permuted.parent.mkdir()
        permute_arff_features(arff, permuted, cfg["n_features"], seed=1000 + s)
        shuffled.append(clus_rankings(permuted, cfg["clus"], s, work / f"perm{s}"))
        original.append(clus_rankings(arff, cfg["clus"], s, work / f"orig{s}"))
    result = {"runs": {"ours": ours, "shuffled": shuffled, "original": original, "kwargs": kwargs}}
    for label, clus_key, our_key in SCORES + (("symbolic_default", "Symbolic", "symbolic_frac"),):
        for measure_name, fn in (("spearman", spearman), ("top5", top_overlap)):
            o = [r[our_key] for r in ours]
            result[(label, measure_name, "shuffled")] = compare(o, [r[clus_key] for r in shuffled], fn)
            result[(label, measure_name, "original")] = compare(o, [r[clus_key] for r in original], fn)
    _print_table(name, result)
    return result


def _print_table(name: str, result: dict) -> None:
    print(f"\n== {name}: spark_fr ({len(OUR_SEEDS)} seeds) vs CLUS ({len(CLUS_SEEDS)} seeds), {TREES} RF trees; "
          f"CLUS columns shuffled per run (asserted) or in file order (literal) ==")
    print(f"{'score':<17}{'measure':<9}{'CLUS cols':<10}{'ours-CLUS':>10}{'(min)':>7}{'CLUS-CLUS':>10}{'(min)':>7}"
          f"{'ours-ours':>10}{'p':>7}")
    for key in sorted(k for k in result if k != "runs"):
        label, measure_name, order = key
        r = result[key]
        print(f"{label:<17}{measure_name:<9}{order:<10}{r['ours_vs_clus']:>10.3f}{r['ours_vs_clus_min']:>7.3f}"
              f"{r['clus_vs_clus']:>10.3f}{r['clus_vs_clus_min']:>7.3f}{r['ours_vs_ours']:>10.3f}{r['p']:>7.3f}")


def _record(record_property, name: str, label: str, result: dict) -> None:
    for key, r in result.items():
        if key != "runs" and key[0] == label:
            for stat, value in r.items():
                record_property(f"{name}.{label}.{key[1]}.{key[2]}.{stat}", round(value, 4))


# ----- the tests -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,score", [(n, s[0]) for n in DATASETS for s in SCORES])
def test_agrees_with_clus_as_well_as_clus_with_itself(agreement, record_property, name, score):
    """spark_fr vs CLUS agreement is not significantly below CLUS vs CLUS (Spearman and top-5).

    CLUS runs each use their own seed and column order (see the module docstring); the file-order
    numbers are recorded next to them.
    """
    result = agreement(name)
    _record(record_property, name, score, result)
    failures = []
    for measure_name in ("spearman", "top5"):
        r = result[(score, measure_name, "shuffled")]
        if r["p"] <= ALPHA:
            failures.append(f"{measure_name}: spark_fr vs CLUS {r['ours_vs_clus']:.3f} < CLUS vs CLUS "
                            f"{r['clus_vs_clus']:.3f} (exchangeability p = {r['p']:.3f} <= {ALPHA})")
    assert not failures, f"{name} {score}: " + "; ".join(failures)


@pytest.mark.parametrize("name", list(DATASETS))
def test_default_symbolic_is_reported(agreement, record_property, name):
    """Our default Symbolic (|E(N)|/|E_train|) vs CLUS' 0.5**depth: measured and recorded, not compared."""
    result = agreement(name)
    _record(record_property, name, "symbolic_default", result)
    assert all(np.isfinite(v) for key, r in result.items() if key != "runs" for v in r.values())


def test_the_comparison_rejects_a_weaker_ensemble(agreement, spark, datasets):
    """Power check: the same procedure rejects spark_fr Genie3 from 10 trees instead of 100 (emotions).

    A 10-tree ranking is a noisier estimate of the same expected ranking; if the permutation test could
    not tell it from CLUS' 100-tree runs, it could not detect a real defect of that size either.
    """
    import spark_fr

    runs = agreement("mlc_emotions")["runs"]
    weak = []
    for seed in OUR_SEEDS:
        table = spark_fr.rank(str(datasets / DATASETS["mlc_emotions"]["arff"]), spark=spark, ensemble="rf", trees=10,
                              max_features="sqrt", min_samples_leaf=MIN_LEAF, scores="genie3", seed=seed,
                              **runs["kwargs"]).to_pandas()
        table = table[table.target == "__all__"]
        weak.append(dict(zip(table.feature, table.importance.astype(float))))
    r = compare(weak, [c["Genie3"] for c in runs["shuffled"]], spearman)
    print(f"\npower check (emotions, Genie3 from 10 trees): ours-CLUS {r['ours_vs_clus']:.3f}, "
          f"CLUS-CLUS {r['clus_vs_clus']:.3f}, p = {r['p']:.3f}")
    assert r["p"] <= ALPHA, r


def test_recorded_clus_runs_are_what_clus_computes(datasets, tmp_path):
    """The recorded CLUS runs the comparisons read are CLUS's output: one of them (enb, the first seed, its own
    column order) made again by CLUS here has the same rankings, to the bit, and the same settings echo."""
    cfg, seed = DATASETS["mtr_enb"], CLUS_SEEDS[0]
    permuted = tmp_path / "perm" / Path(cfg["arff"]).name
    permuted.parent.mkdir()
    permute_arff_features(datasets / cfg["arff"], permuted, cfg["n_features"], seed=1000 + seed)
    task = clus_task(cfg["clus"], seed)
    entry = clus_cache.recorded(clus_cache.key_of(clus_cache.inputs_of(permuted, task)))
    assert entry is not None, ("the comparisons' CLUS runs are not recorded for these inputs: "
                               "SPARK_FR_CLUS_RUNS=record python -m pytest -q tests/comparisons records them")
    live = clus_cache.run_live(permuted, task, tmp_path / "live")
    assert live["returncode"] == 0, live["stdout_tail"]
    assert live["rankings"] == entry["rankings"] and live["echo"] == entry["echo"]


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="known systematic difference: CLUS breaks exact ties between features by column "
                          "order, spark_fr at random (module docstring)")
def test_enb_symbolic_against_clus_in_file_order(agreement):
    """enb Symbolic against CLUS runs on the file's column order (where CLUS agrees with itself at ~0.99).

    Expected to fail as long as CLUS gives exact ties between the building-shape features to the first
    column (Relative_compactness) and spark_fr breaks them at random.
    """
    r = agreement("mtr_enb")[("symbolic_w0.5", "spearman", "original")]
    assert r["p"] > ALPHA, r
