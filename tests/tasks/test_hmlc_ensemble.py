"""HMLC with PCT ensembles (spark_fr.tasks.hmlc): the impurity, the weighted Hamming loss, the grower's gain
and the three scores against plain-loop references on random trees and DAGs; planted label branches; the
cellcycle FunCat benchmark end to end, the same for any partitioning.

The references are written from the definitions (methods-papers.md 1.2, methods-thesis.md Sec. 2.3 and 4.3),
not from the code:

    impu(E)  = (1/L) sum_l w(l) Var(E, l)                          (weighted: the HMLC paper, CLUS; the default)
    impu(E)  = (1/L) sum_l w(l) Var(E, l) / Var(E_train, l)        (normalised: the thesis; 0 for a label
                                                                    constant on E_train)
    Err(S)   = sum_l w(l) * (1/|S|) sum_{x in S} [y_l(x) != yhat_l(x)]  /  sum_l w(l)
    yhat_l   = [frequency of l in the leaf >= 0.5]
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import spark_fr
from spark_fr import tasks
from spark_fr.hierarchy import Hierarchy
from spark_fr.pct import scores as pct_scores
from spark_fr.pct.route import permutation
from spark_fr.pct.config import grow_config
from spark_fr.pct.tree import grow, leaf_prototypes
from spark_fr.runtime.rng import Stream, derive_seed, poisson1_counts

COLS = ["feature", "score", "target", "importance", "rank", "importance_std"]


# ----- random hierarchies and label sets ---------------------------------------------------------------------
def random_tree(rng, n: int) -> Hierarchy:
    """A random tree as Clus paths (several roots), listed in random order."""
    paths = []
    for i in range(n):
        parent = paths[rng.integers(len(paths))] if paths and rng.random() < 0.8 else None
        paths.append(f"{parent}/{i}" if parent else str(i))
    return Hierarchy.from_clus_spec(",".join(rng.permutation(paths)))


def random_dag(rng, n: int) -> Hierarchy:
    """A random DAG as Clus edges (up to three parents per term)."""
    edges = []
    for i in range(n):
        k = rng.integers(0, min(i, 3) + 1)
        parents = rng.choice(i, size=k, replace=False) if k else []
        edges += [(f"t{p}", f"t{i}") for p in parents] or [("root", f"t{i}")]
    return Hierarchy.from_clus_spec(", ".join(f"{p}/{c}" for p, c in rng.permutation(edges)))


def hierarchy_of(kind: str, rng, n: int = 14) -> Hierarchy:
    h = random_tree(rng, n) if kind == "tree" else random_dag(rng, n)
    assert h.is_tree == (kind == "tree") or kind == "dag"
    return h


def random_label_sets(h: Hierarchy, rng, n: int, unlabelled: float = 0.0) -> np.ndarray:
    """Rows of 1-3 random most specific labels, closed under ancestors; some labels never occur."""
    names = list(h.labels)
    leaves = [j for j in range(len(names)) if not h.children[j]]
    rare = set(rng.choice(leaves, size=min(2, len(leaves) - 1), replace=False))  # labels that never occur
    pool = [j for j in range(len(names)) if j not in rare]
    values = []
    for _ in range(n):
        picks = rng.choice(pool, size=rng.integers(1, 4), replace=False)
        values.append("@".join(names[j] for j in picks))
    Y = np.asarray(h.label_matrix(values), np.float64)
    Y[rng.random(n) < unlabelled] = np.nan
    return Y


def fit(h: Hierarchy, Y: np.ndarray, w0: float = 0.75, impurity: str | None = None):
    """The registry's HMLC type (the default impurity), or the one with ``impurity``, fitted to Y."""
    hmlc = tasks.get("hmlc") if impurity is None else tasks.get("hmlc").with_impurity(impurity)
    return hmlc.fit(Y, list(h.labels), None, h.weights(w0))


# ----- plain-loop references ----------------------------------------------------------------------------------
def ref_weights(h: Hierarchy, w0: float) -> list:
    """w(l) = 1 below the virtual root, else w0 * mean(w(parents)) (the root counting 1 / w0), by recursion."""
    memo = {}

    def weight(j):
        if j not in memo:
            vals = [weight(p) for p in h.parents[j]] + ([1.0 / w0] if h.root_parent[j] else [])
            memo[j] = w0 * sum(vals) / len(vals)
        return memo[j]

    return [weight(j) for j in range(len(h.labels))]


def ref_variance(column, weights) -> float:
    """Weighted biased variance of the known values of one column (loops)."""
    tot = s = 0.0
    for v, c in zip(column, weights):
        if v == v:
            tot += c
            s += c * v
    if tot <= 0:
        return 0.0
    mean = s / tot
    return sum(c * (v - mean) ** 2 for v, c in zip(column, weights) if v == v) / tot


def ref_impurity(Y_train, Y, weights, w, form: str = "weighted") -> float:
    """(1/L) sum_l w(l) Var(E, l), divided by Var(E_train, l) in the normalised form, over the labels that vary
    on the training rows."""
    L = Y_train.shape[1]
    ones = [1.0] * Y_train.shape[0]
    total = 0.0
    for j in range(L):
        v_train = ref_variance(Y_train[:, j], ones)
        if v_train > 0:
            total += w[j] * ref_variance(Y[:, j], weights) / (v_train if form == "normalised" else 1.0)
    return total / L


def ref_predictions(freq) -> list:
    return [1.0 if p >= 0.5 else 0.0 for p in freq]


def ref_weighted_hamming(Y, P, w) -> float:
    """sum_l w(l) * (error rate of l over the rows with a known label set) / sum_l w(l)."""
    num = den = 0.0
    for j in range(Y.shape[1]):
        known = [i for i in range(Y.shape[0]) if Y[i, j] == Y[i, j]]
        if not known:
            continue
        rate = sum(1.0 for i in known if Y[i, j] != P[i, j]) / len(known)
        num += w[j] * rate
        den += w[j]
    return num / den


# ----- the task's pieces --------------------------------------------------------------------------------------
@pytest.mark.parametrize("form", ["weighted", "normalised"])
@pytest.mark.parametrize("kind", ["tree", "dag"])
@pytest.mark.parametrize("seed", range(4))
def test_impurity_equals_the_definition(kind, seed, form):
    rng = np.random.default_rng(seed)
    h = hierarchy_of(kind, rng)
    w0 = float(rng.choice([0.5, 0.75, 1.0]))
    w = ref_weights(h, w0)
    np.testing.assert_allclose(h.weights(w0), w, rtol=1e-12)
    Y = random_label_sets(h, rng, 80)
    task = fit(h, Y, w0, form)
    for _ in range(5):
        rows = rng.choice(80, size=rng.integers(2, 60), replace=False)
        counts = rng.integers(0, 4, rows.size).astype(float)
        counts[0] = 1.0
        expected = ref_impurity(Y, Y[rows], counts, w, form)
        assert task.impurity(Y[rows], counts) == pytest.approx(expected, rel=1e-10, abs=1e-14)
        # the grower's form: the weighted column variances of the clustering matrix, summed
        Z = task.clustering_matrix(Y[rows])
        zvar = sum(ref_variance(Z[:, k], counts) for k in range(Z.shape[1]))
        assert zvar == pytest.approx(expected, rel=1e-9, abs=1e-14)
    # labels constant on the training rows are left out of the clustering matrix, the others kept
    varies = Y.std(axis=0) > 0
    assert not varies.all()  # random_label_sets leaves some labels out
    assert task.clustering_matrix(Y).shape == (80, int(varies.sum()))
    assert set(task.constant_targets) == {h.labels[j] for j in np.flatnonzero(~varies)}
    # the training set itself: every varying label contributes w(l) Var(E_train, l) / L, or w(l) / L normalised
    assert task.impurity(Y) == pytest.approx(ref_impurity(Y, Y, np.ones(80), w, form))
    if form == "normalised":
        assert task.impurity(Y) == pytest.approx(sum(w[j] for j in np.flatnonzero(varies)) / Y.shape[1])


@pytest.mark.parametrize("kind", ["tree", "dag"])
def test_the_default_impurity_is_the_weighted_one_and_a_run_chooses(kind):
    """CLUS's and the HMLC paper's form (1/L) sum_l w(l) Var(E, l) is the registry's type and the option's
    default; a run's hmlc_impurity selects either form (HMLC.for_params)."""
    from spark_fr import options

    rng = np.random.default_rng(50)
    h = hierarchy_of(kind, rng)
    w = ref_weights(h, 0.75)
    Y = random_label_sets(h, rng, 70)
    hmlc = tasks.get("hmlc")
    assert hmlc.impurity_form == "weighted" == options.option("hmlc_impurity").default
    assert hmlc.for_params(object()) is hmlc
    assert hmlc.for_params(type("Params", (), {"hmlc_impurity": "weighted"})()) is hmlc
    normalised = hmlc.for_params(type("Params", (), {"hmlc_impurity": "normalised"})())
    assert normalised.impurity_form == "normalised"
    task = hmlc.fit(Y, list(h.labels), None, h.weights(0.75))
    L = Y.shape[1]
    for _ in range(4):
        rows = rng.choice(70, size=rng.integers(2, 50), replace=False)
        counts = rng.integers(1, 4, rows.size).astype(float)
        expected = sum(w[j] * ref_variance(Y[rows, j], counts) for j in range(L)) / L
        assert task.impurity(Y[rows], counts) == pytest.approx(expected, rel=1e-10, abs=1e-14)
        Z = task.clustering_matrix(Y[rows])
        assert sum(ref_variance(Z[:, k], counts) for k in range(Z.shape[1])) == pytest.approx(expected, rel=1e-9)
    # in SSL trees it is scaled to the normalised impurity's training value, sum of w(l) / L over varying labels
    varies = Y.std(axis=0) > 0
    assert task.impurity(Y) * task.normalised_scale() == pytest.approx(sum(np.array(w)[varies]) / L)
    assert hmlc.impurity_form == "weighted"  # the registry's type is unchanged
    with pytest.raises(tasks.TaskError, match="unknown HMLC impurity 'gini'"):
        hmlc.with_impurity("gini")


@pytest.mark.parametrize("kind", ["tree", "dag"])
@pytest.mark.parametrize("seed", range(4))
def test_weighted_hamming_loss_equals_the_definition(kind, seed):
    rng = np.random.default_rng(100 + seed)
    h = hierarchy_of(kind, rng)
    w = ref_weights(h, 0.75)
    Y = random_label_sets(h, rng, 60)
    task = fit(h, Y)
    # predictions from the frequencies of random subsets of rows (leaf prototypes)
    protos, preds = [], []
    for _ in range(60):
        sub = rng.choice(60, size=rng.integers(1, 8), replace=False)
        freq = [float(np.mean(Y[sub, j])) for j in range(Y.shape[1])]
        protos.append(task.prototype_columns(Y[sub]).mean(axis=0))
        preds.append(ref_predictions(freq))
    P = task.predict(np.array(protos))
    np.testing.assert_array_equal(P, np.array(preds))
    # predictions are closed under ancestors
    for j, anc in enumerate(h.ancestors):
        for a in anc:
            assert np.all(P[:, a] >= P[:, j])
    assert task.error(Y, P) == pytest.approx(ref_weighted_hamming(Y, P, w), rel=1e-12)
    # rows without a label set are not counted
    Yu = Y.copy()
    Yu[::3] = np.nan
    assert task.error(Yu, P) == pytest.approx(ref_weighted_hamming(Yu, P, w), rel=1e-12)
    # per label: the error rate; default model: the training frequency thresholded
    np.testing.assert_allclose(task.target_errors(Y, P), (Y != P).mean(axis=0))
    p = Y.mean(axis=0)
    np.testing.assert_allclose(task.default_errors(), np.minimum(p, 1 - p))


def test_fitting_needs_one_varying_label():
    h = Hierarchy.from_clus_spec("A,A/a1,B")
    Y = h.label_matrix(["A", "A", "A"]).astype(float)  # A always on, a1 and B never: all constant
    with pytest.raises(tasks.TaskError, match="every label of the hierarchy is constant"):
        fit(h, Y)
    with pytest.raises(tasks.TaskError, match="no row has a label set"):
        fit(h, np.full((3, 3), np.nan))
    task = fit(h, h.label_matrix(["A/a1", "A", "A"]).astype(float))  # only a1 varies: fine
    assert list(task.kept) == [h.index["A/a1"]]
    P = task.predict(np.array([[0.2], [0.7]]))
    col = h.index
    np.testing.assert_array_equal(P[:, col["A"]], [1, 1])  # constant labels predicted as they always are
    np.testing.assert_array_equal(P[:, col["B"]], [0, 0])
    np.testing.assert_array_equal(P[:, col["A/a1"]], [0, 1])


# ----- the grower and the scores on HMLC targets --------------------------------------------------------------
def make_features(rng, n, D=4, n_values=7):
    from spark_fr.data.binning import fit_bins, stack_bins

    X = rng.integers(0, n_values, (n, D)) * 0.5
    bins = [fit_bins(X[:, f], nominal=False) for f in range(D)]
    codes = np.ascontiguousarray(np.stack([b.encode(X[:, f]) for f, b in enumerate(bins)]))
    lower, upper, _ = stack_bins(bins)
    return codes, np.zeros(D, bool), lower, upper


def brute_best_gain(codes, Y_train, Y, w, wl, min_leaf, form):
    """Largest |E| impu(E) - |E_L| impu(E_L) - |E_R| impu(E_R) over all tests ``code <= t`` (loops)."""
    rows = np.flatnonzero(w > 0)
    P = w[rows].sum() * ref_impurity(Y_train, Y[rows], w[rows], wl, form)
    best = -np.inf
    for f in range(codes.shape[0]):
        c = codes[f, rows]
        for t in np.unique(c)[:-1]:
            left, right = rows[c <= t], rows[c > t]
            if w[left].sum() < min_leaf or w[right].sum() < min_leaf:
                continue
            h = P - w[left].sum() * ref_impurity(Y_train, Y[left], w[left], wl, form) \
                - w[right].sum() * ref_impurity(Y_train, Y[right], w[right], wl, form)
            best = max(best, h)
    return best, P


def node_rows(tree, codes, rows):
    """{node: rows reaching it} by a Python walk (numeric tests, no missing values)."""
    out = {}
    for r in rows:
        node = 0
        while True:
            out.setdefault(node, []).append(r)
            f = tree.feature[node]
            if f < 0:
                break
            node = tree.left[node] if codes[f, r] <= tree.threshold[node] else tree.right[node]
    return {k: np.array(v) for k, v in out.items()}


@pytest.mark.parametrize("form", ["weighted", "normalised"])
@pytest.mark.parametrize("kind", ["tree", "dag"])
@pytest.mark.parametrize("seed", range(3))
def test_the_grower_gain_is_the_impurity_reduction(kind, seed, form):
    rng = np.random.default_rng(200 + seed)
    h = hierarchy_of(kind, rng, 10)
    wl = ref_weights(h, 0.75)
    n = 50
    Y = random_label_sets(h, rng, n)
    codes, nominal, lower, upper = make_features(rng, n)
    task = fit(h, Y, impurity=form)
    w = rng.integers(0, 3, n).astype(float)
    Z = task.clustering_matrix(Y)
    stump = grow(codes, nominal, lower, upper, Z, w, grow_config(min_leaf=2, max_depth=1))
    best, P = brute_best_gain(codes, Y, Y, w, wl, 2.0, form)
    assert stump.gain[0] == pytest.approx(best, rel=1e-9, abs=1e-12 * P)
    # every node of a full tree: h*(N) is the reduction of its bagged rows' impurity
    tree = grow(codes, nominal, lower, upper, Z, w, grow_config(min_leaf=1))
    reach = node_rows(tree, codes, np.flatnonzero(w > 0))
    assert tree.internal.size > 2
    for node in tree.internal:
        r, rl, rr = reach[node], reach[tree.left[node]], reach[tree.right[node]]
        h_ref = (w[r].sum() * ref_impurity(Y, Y[r], w[r], wl, form)
                 - w[rl].sum() * ref_impurity(Y, Y[rl], w[rl], wl, form)
                 - w[rr].sum() * ref_impurity(Y, Y[rr], w[rr], wl, form))
        assert tree.gain[node] == pytest.approx(h_ref, rel=1e-8, abs=1e-10)


@pytest.mark.parametrize("form", ["weighted", "normalised"])
@pytest.mark.parametrize("kind", ["tree", "dag"])
def test_scores_of_one_tree_match_their_definitions(kind, form):
    rng = np.random.default_rng(7 if kind == "tree" else 8)
    h = hierarchy_of(kind, rng, 12)
    wl = np.array(ref_weights(h, 0.75))
    n = 240
    Y = random_label_sets(h, rng, n)
    codes, nominal, lower, upper = make_features(rng, n, D=5)
    # labels follow feature 0 a little, so trees split and OOB errors move
    flip = (codes[0] > 3) & (rng.random(n) < 0.5)
    Y[flip] = np.maximum(Y[flip], h.label_matrix([h.labels[-1]] * int(flip.sum())))
    task = fit(h, Y, impurity=form)
    seed = derive_seed(5, 0)
    w = poisson1_counts(seed, np.arange(n, dtype=np.uint64))
    tree = grow(codes, nominal, lower, upper, task.clustering_matrix(Y), w,
                grow_config(max_features=3, seed=seed, track_columns=True))
    D = codes.shape[0]
    gen = pct_scores.genie3(tree, D)
    per_t = pct_scores.genie3_per_target(tree, task.column_target, task.per_target_scale)
    assert per_t.shape == (len(h.labels), D)
    np.testing.assert_allclose(per_t.mean(axis=0), gen, rtol=1e-9, atol=1e-12)  # joint = mean over labels
    # per label: w(l) times the reduction of label l's variance (normalised: divided by its training
    # variance), summed over the nodes per feature
    reach = node_rows(tree, codes, np.flatnonzero(w > 0))
    expected = np.zeros_like(per_t)
    for node in tree.internal:
        r, rl, rr = reach[node], reach[tree.left[node]], reach[tree.right[node]]
        for j in range(len(h.labels)):
            vt = ref_variance(Y[:, j], np.ones(n))
            if vt > 0:
                red = (w[r].sum() * ref_variance(Y[r, j], w[r]) - w[rl].sum() * ref_variance(Y[rl, j], w[rl])
                       - w[rr].sum() * ref_variance(Y[rr, j], w[rr]))
                expected[j, tree.feature[node]] += wl[j] * red / (vt if form == "normalised" else 1.0)
    np.testing.assert_allclose(per_t, expected, rtol=1e-8, atol=1e-10)
    # RF score: every OOB row re-predicted with the same permutation, errors by the reference loss
    XR = np.ascontiguousarray(codes.T)
    joint, per_rf = pct_scores.permutation_scores(tree, XR, Y, task.prototype_columns(Y), w, task, seed, True)
    oob = np.flatnonzero(w == 0)
    proto = leaf_prototypes(tree, task.prototype_columns(Y), w, task.default_prototype())
    base = ref_weighted_hamming(Y[oob], task.predict(proto[tree.apply(XR, oob)]), wl)
    base_t = (Y[oob] != task.predict(proto[tree.apply(XR, oob)])).mean(axis=0)
    used = set(tree.feature[tree.internal])
    assert 0 in used
    for f in range(D):
        if f not in used:
            assert joint[f] == 0.0 and not per_rf[:, f].any()
            continue
        perm = permutation(np.uint64(derive_seed(seed, f, Stream.PERMUTATION)), oob.size)
        leaves = tree.apply_permuted(XR, oob, oob[perm], f)
        pred = task.predict(proto[leaves])
        err = ref_weighted_hamming(Y[oob], pred, wl)
        assert joint[f] == pytest.approx((err - base) / max(base, 1.0 / (oob.size * Y.shape[1])), abs=1e-12)
        err_t = (Y[oob] != pred).mean(axis=0)
        np.testing.assert_allclose(per_rf[:, f], (err_t - base_t) / np.maximum(base_t, 1.0 / oob.size), atol=1e-12)


# ----- planted label branches ----------------------------------------------------------------------------------
TREE = "A,A/a1,A/a2,B,B/b1,B/b2"
DAG = "root/A, root/B, A/C, B/C, A/D, C/E"


def planted_frame(kind: str, n: int = 500, D: int = 8, seed: int = 11) -> pd.DataFrame:
    """x0 decides the top branch (tree) / the deepest label (DAG); x1 and x2 the labels below; the rest noise."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, D))
    if kind == "tree":
        top = np.where(X[:, 0] > 0.5, "A", "B")
        lab = np.where(top == "A", np.where(X[:, 1] > 0.5, "A/a1", "A/a2"), np.where(X[:, 2] > 0.5, "B/b1", "B/b2"))
    else:
        lab = np.where(X[:, 0] > 0.5, "E", np.where(X[:, 1] > 0.5, "D", "B"))
        lab = np.where((X[:, 2] > 0.7) & (lab != "E"), np.char.add(lab.astype(str), "@C"), lab)
    pdf = pd.DataFrame(X, columns=[f"x{i}" for i in range(D)])
    pdf["labels"] = lab
    return pdf


@pytest.mark.parametrize("kind", ["tree", "dag"])
@pytest.mark.parametrize("ensemble", ["rf", "bagging", "extra_trees"])
def test_planted_features_rank_first_with_every_score(spark, kind, ensemble):
    df = spark.createDataFrame(planted_frame(kind))
    scores = "symbolic,genie3" + (",rf" if ensemble != "extra_trees" else "")
    kw = {"bootstrap": True} if ensemble == "extra_trees" else {}
    t = spark_fr.rank(df, targets="labels", hierarchy=TREE if kind == "tree" else DAG, trees=20, seed=3,
                      ensemble=ensemble, scores=scores, spark=spark, **kw).to_pandas()
    assert '"task": "hmlc"' in t.params.iloc[0]
    for score in scores.split(","):
        sel = t[(t.score == score) & (t.target == "__all__")].sort_values("rank")
        assert set(sel.feature[:3]) == {"x0", "x1", "x2"}, (score, list(sel.feature))
        assert sel.feature.iloc[0] == "x0", (score, list(sel.feature))


def test_per_label_rankings_find_each_labels_features(spark):
    """Per label (--per-target): A and B are decided by x0; a1 and a2 by x0 and x1, b1 and b2 by x0 and x2."""
    df = spark.createDataFrame(planted_frame("tree", n=600))
    t = spark_fr.rank(df, targets="labels", hierarchy=TREE, trees=20, seed=4, per_target=True, spark=spark,
                      scores="genie3,rf").to_pandas()
    assert set(t.target) == {"__all__", "A", "B", "A/a1", "A/a2", "B/b1", "B/b2"}
    for score in ("genie3", "rf"):
        def top(label, k):
            sel = t[(t.score == score) & (t.target == label)].sort_values("rank")
            return set(sel.feature[:k])

        assert top("A", 1) == top("B", 1) == {"x0"}, score
        assert top("A/a1", 2) == top("A/a2", 2) == {"x0", "x1"}, score
        assert top("B/b1", 2) == top("B/b2", 2) == {"x0", "x2"}, score


# ----- cellcycle (FunCat tree, 499 labels) end to end ----------------------------------------------------------
def cellcycle_frame(datasets, rows: int | None = None):
    """The cellcycle training ARFF as (pandas frame with a string label column, hierarchy spec)."""
    path = datasets / "hmlc_cellcycle_FUN" / "cellcycle_FUN.train.arff"
    lines = path.read_text().splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.strip().lower() == "@data")
    attrs = [ln.split(None, 2) for ln in lines[:at] if ln.lower().startswith("@attribute")]
    spec = attrs[-1][2].split(None, 1)[1]
    data = [ln.split(",") for ln in lines[at + 1:] if ln.strip()][:rows]
    pdf = pd.DataFrame([[np.nan if v == "?" else float(v) for v in r[:-1]] for r in data],
                       columns=[a[1] for a in attrs[:-1]])
    pdf["class"] = [r[-1] for r in data]
    return pdf, spec


def test_cellcycle_end_to_end(spark, datasets):
    path = datasets / "hmlc_cellcycle_FUN" / "cellcycle_FUN.train.arff"
    r = spark_fr.rank(str(path), method="ensemble", spark=spark, trees=6, seed=2, scores="symbolic,genie3,rf")
    t = r.to_pandas()
    assert r.params["task"] == "hmlc"
    features = [ln.split()[1] for ln in path.read_text().splitlines()
                if ln.lower().startswith("@attribute")][:-1]
    assert set(t.score) == {"symbolic", "genie3", "rf"} and set(t.target) == {"__all__"}
    for score, sel in t.groupby("score"):
        assert sorted(sel.feature) == sorted(features)
        assert sorted(sel["rank"]) == list(range(1, len(features) + 1))
        assert np.isfinite(sel.importance).all()
    for score in ("symbolic", "genie3"):
        assert (t[t.score == score].importance > 0).mean() > 0.5  # trees of 1,628 rows use most of the 77 features


def test_cellcycle_is_bit_identical_for_any_partitioning_and_mode(spark, datasets):
    pdf, spec = cellcycle_frame(datasets, rows=400)
    df = spark.createDataFrame(pdf)
    kw = dict(targets="class", hierarchy=spec, trees=3, seed=7, per_target=True, scores="symbolic,genie3,rf",
              spark=spark)
    a = spark_fr.rank(df.repartition(1), **kw).to_pandas()[COLS]
    assert a.target.nunique() == 500  # the joint ranking and one per label
    for parts, mode in ((3, "broadcast"), (2, "partitioned")):
        b = spark_fr.rank(df.repartition(parts), ensemble_mode=mode, **kw).to_pandas()[COLS]
        pd.testing.assert_frame_equal(a, b, check_exact=True)


@pytest.mark.parametrize("missing", [0.0, 0.2])
def test_leaf_prototypes_are_the_sequential_sums_bit_for_bit(missing):
    """Leaf prototypes (wide label matrices make them a large part of the RF score) are the weighted means of
    the rows below each node, summed row after row as np.add.at does: the same bits as the reference."""
    rng = np.random.default_rng(3)
    n, P = 300, 120
    codes, nominal, lower, upper = make_features(rng, n)
    C = (rng.random((n, P)) < 0.3).astype(float) * rng.uniform(0.5, 2.0, P)
    C[rng.random(C.shape) < missing] = np.nan
    C[codes[0] > 4, :10] = np.nan  # a region without known values in some columns
    w = rng.poisson(1.0, n).astype(float)
    tree = grow(codes, nominal, lower, upper, np.nan_to_num(C[:, :6]), w, grow_config(min_leaf=1))
    default = rng.normal(size=P)
    rows = np.flatnonzero(tree.leaf_of_row >= 0)
    known = ~np.isnan(C[rows])
    num = np.zeros((tree.n_nodes, P))
    den = np.zeros((tree.n_nodes, P))
    np.add.at(num, tree.leaf_of_row[rows], np.where(known, C[rows], 0.0) * w[rows, None])
    np.add.at(den, tree.leaf_of_row[rows], np.where(known, w[rows, None], 0.0))
    for node in sorted(tree.internal, key=lambda k: -tree.depth[k]):
        num[node] = num[tree.left[node]] + num[tree.right[node]]
        den[node] = den[tree.left[node]] + den[tree.right[node]]
    expected = np.empty_like(num)
    for node in sorted(range(tree.n_nodes), key=lambda k: tree.depth[k]):
        up = default if node == 0 else expected[[p for p in tree.internal if node in (tree.left[p], tree.right[p])][0]]
        with np.errstate(invalid="ignore"):
            expected[node] = np.where(den[node] > 0, num[node] / np.where(den[node] > 0, den[node], 1.0), up)
    np.testing.assert_array_equal(leaf_prototypes(tree, C, w, default), expected)
