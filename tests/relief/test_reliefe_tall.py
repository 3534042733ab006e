"""ReliefE's tall mode (the rows left in partitions, the sampled instances broadcast) against broadcast mode:
bit-identical weights and spreads for classification (input embedded, or no embedding with adaptive k) and MLC
(raw label sets, embedded target), for one and several partitions; planted features found in tall mode."""
import numpy as np
import pandas as pd
import pytest
from pyspark.ml.linalg import Vectors, VectorUDT
from pyspark.sql import types as T

import spark_fr

COLS = ["feature", "target", "importance", "importance_std"]


def rank(df, mode, **kw):
    r = spark_fr.rank(df, method="reliefe", relief_mode=mode, **kw)
    t = r.to_pandas()
    return t[COLS].sort_values(["target", "feature"]).reset_index(drop=True), r.metadata


def wide_rows(n, D, seed, labels=0):
    """Sparse rows; features 0-5 carry the class (or labels 0-2 when ``labels`` > 0), the rest is 2 % noise;
    the first 12 rows are repeated (identical rows share their content key)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        y = int(rng.integers(0, 3))
        nz = {int(j): float(np.round(rng.random(), 2)) for j in rng.choice(np.arange(6, D), D // 50, replace=False)}
        for j in range(6):
            if j % 3 == y and rng.random() < 0.85:
                nz[j] = 0.6 + 0.4 * rng.random()
        if labels:
            lab = [int(y == c or (c >= 3 and rng.random() < 0.3)) for c in range(labels)]
            out.append((Vectors.sparse(D, nz), *lab))
        else:
            out.append((Vectors.sparse(D, nz), f"c{y}"))
    return out + out[:12]


def frame(spark, n=200, D=300, seed=0, labels=0):
    fields = [T.StructField("features", VectorUDT())]
    if labels:
        fields += [T.StructField(f"l{c}", T.IntegerType()) for c in range(labels)]
    else:
        fields.append(T.StructField("y", T.StringType()))
    return spark.createDataFrame(wide_rows(n, D, seed, labels), T.StructType(fields))


def mixed_frame(spark, n=220, seed=1):
    """Numeric features (half of the values 0) and a nominal one; the class follows f0 and 'colour'."""
    rng = np.random.default_rng(seed)
    X = np.where(rng.random((n, 6)) < 0.5, 0.0, np.round(rng.random((n, 6)), 2))
    pdf = pd.DataFrame(X, columns=[f"f{i}" for i in range(6)])
    pdf["colour"] = np.array(["red", "green", "blue"])[rng.integers(0, 3, n)]
    pdf["y"] = np.where((pdf.f0 > 0.4) | (pdf.colour == "red"), "a", "b")
    pdf = pd.concat([pdf, pdf.iloc[:10]], ignore_index=True)
    return spark.createDataFrame(pdf)


CASES = {
    "classification, input embedded (pca)":
        (lambda s: frame(s), dict(targets="y", reliefe_embedder="pca", reliefe_sample=90, reliefe_k=5,
                                  reliefe_iterations=150)),
    "classification, no embedding, adaptive k":
        (lambda s: mixed_frame(s), dict(targets="y", reliefe_embed="none", reliefe_k="adaptive",
                                        reliefe_update="absmean")),
    "mlc, raw label sets (f1)":
        (lambda s: frame(s, labels=5, seed=2), dict(targets="l0,l1,l2,l3,l4", task="mlc", reliefe_embed="input",
                                                   reliefe_embedder="random_projection", reliefe_dimension=8,
                                                   reliefe_mlc_distance="f1", reliefe_k=6)),
    "mlc, embedded target (pca)":
        (lambda s: frame(s, labels=5, seed=3), dict(targets="l0,l1,l2,l3,l4", task="mlc", reliefe_embed="target",
                                                   reliefe_embedder="pca", reliefe_dimension=3, reliefe_k=4,
                                                   reliefe_iterations=120)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_tall_mode_equals_broadcast_mode_bit_for_bit(spark, case):
    make, kw = CASES[case]
    df = make(spark)
    kw = dict(spark=spark, seed=4, **kw)
    ref, meta_b = rank(df.coalesce(1), "broadcast", **kw)
    for parts in (1, 4):
        got, meta_t = rank(df.repartition(parts), "tall", **kw)
        pd.testing.assert_frame_equal(ref, got, check_exact=True)
        assert meta_t["reliefe_mode"] == "tall" and meta_b["reliefe_mode"] == "broadcast"
        for key in ("reliefe_k_used", "reliefe_instances", "reliefe_sample_rows", "reliefe_dimension",
                    "reliefe_target_dimension", "reliefe_skipped_instances", "reliefe_density"):
            assert meta_t.get(key) == meta_b.get(key), key
    assert (ref.importance != 0).any() and (ref.importance_std > 0).any()


def test_planted_features_in_tall_mode(spark):
    df = frame(spark, n=260, D=400, seed=7).repartition(3)
    got, meta = rank(df, "tall", spark=spark, targets="y", seed=2, reliefe_embedder="random_projection",
                     reliefe_dimension=10, reliefe_k=8)
    w = got[got.target == "__all__"].set_index("feature").importance
    assert set(w.sort_values(ascending=False).index[:6]) == {f"features[{j}]" for j in range(6)}
    assert meta["reliefe_mode"] == "tall" and meta["executed_on"] == "spark"
    assert meta["reliefe_instances"] == 272 and meta["reliefe_k_used"]["max"] == 8


def test_umap_path_transforms_the_chunks_broadcast_mode_transforms(spark, monkeypatch):
    """Tall mode's path for embedders whose transform depends on the batch (UMAP): rows shuffled to their
    transform chunk (content keys), one call per chunk in key order, as broadcast mode's embed_rows calls it.
    A batch-dependent embedder (projection plus the batch's mean row) stands in for UMAP, whose numba code
    takes minutes to compile (tests/relief/test_reliefe_spark.py runs UMAP itself with SPARK_FR_TEST_UMAP=1)."""
    from scipy import sparse

    from spark_fr.relief.reliefe import embed_rows, l2_rows_sparse
    from spark_fr.relief.reliefe_blocks import spaces_blocks
    from spark_fr.runtime.engine import engine_for

    class BatchMean:
        def __init__(self, R):
            self.R = R

        def transform(self, X):
            P = np.asarray(X @ self.R)
            return P + P.mean(axis=0)

    rng = np.random.default_rng(5)
    n, D = 300, 20
    X = sparse.random(n, D, density=0.3, format="csr", random_state=6)
    keys = rng.integers(0, 2 ** 63, n).astype(np.uint64)
    keys[-10:] = keys[:10]
    X = sparse.vstack([X[:-10], X[:10]], format="csr")
    Y = rng.integers(0, 2, (n, 1)).astype(float)
    part = rng.integers(0, 4, n)
    f = BatchMean(rng.normal(size=(D, 3)))

    def blocks(units):
        return [{"X": X[part == u], "Y": Y[part == u], "keys": keys[part == u]} for u in units]

    base = engine_for(spark).from_units(list(range(4)), blocks, 4)
    got = spaces_blocks(base, f, None, False, "umap", n, 64).collect()
    assert len(got) == -(-n // 64)                                   # one block per chunk
    E_tall = {int(k): e for b in got for k, e in zip(b["keys"], b["E"])}
    order = np.argsort(keys, kind="stable")                           # broadcast mode's canonical order
    monkeypatch.setenv("SPARK_FR_DRIVER_MAX_SECONDS", "1000")        # its chunks on the driver (no pickling)
    E, _, _ = embed_rows(spark, l2_rows_sparse(X[order]), keys[order], f, 64, "test")
    np.testing.assert_array_equal(np.vstack([E_tall[int(k)] for k in keys[order]]), E)
    assert sum(b["keys"].size for b in got) == n


@pytest.mark.parametrize("adaptive,k_max", [(False, 0), (True, 0), (True, 1), (True, 3)])
def test_merged_block_candidates_give_broadcast_modes_neighbours(adaptive, k_max):
    """Kernels only: candidates of random blocks merged in a random order, then chosen_neighbours, against
    broadcast mode's search over every row (neighbour_rows, or sorted_candidates and gap_k), per instance and
    class; rows repeated and distances tied (a coarse embedding)."""
    from scipy import sparse

    from spark_fr.relief.adaptive_k import gap_k
    from spark_fr.relief.embedders import l2_rows
    from spark_fr.relief.candidates import block_candidates, chosen_neighbours, merge
    from spark_fr.relief.embedded import SparseSearch, distances_from, sparse_rows
    from spark_fr.relief.neighbours import neighbour_rows, sorted_candidates

    rng = np.random.default_rng(11 + k_max)
    n, C, k = 90, 3, 4
    E = l2_rows(rng.integers(-2, 3, (n, 3)).astype(float))
    E[60:70] = E[:10]
    keys = np.sort(rng.integers(0, 2 ** 63, n).astype(np.uint64))
    keys[60:70] = keys[:10]
    order = np.argsort(keys, kind="stable")
    E, keys = np.ascontiguousarray(E[order]), keys[order]
    classes = rng.integers(0, C, n).astype(float)
    classes[np.argsort(order)[60:70]] = classes[np.argsort(order)[:10]]  # copies share the class
    for i in range(n):  # identical keys: identical rows
        first = np.flatnonzero(keys == keys[i])[0]
        E[i], classes[i] = E[first], classes[first]
    X = sparse.csr_matrix((n, 2))
    nominal = np.zeros(2, bool)
    everything = sparse_rows(X, nominal, E, keys, classes, np.zeros((n, 0)))
    inst = rng.choice(n, 25, replace=False).astype(np.int64)
    k1 = (k_max + 2 if k_max else n) if adaptive else k + 1
    part = rng.integers(0, 4, n)
    cands = []
    for u in rng.permutation(4):
        rows = np.flatnonzero(part == u)
        block = sparse_rows(X[rows], nominal, E[rows], keys[rows], classes[rows], np.zeros((rows.size, 0)))
        instances = sparse_rows(X[inst], nominal, E[inst], keys[inst], classes[inst], np.zeros((inst.size, 0)))
        cands.append(block_candidates(block, instances, SparseSearch(k1, C)))
    merged = cands[0]
    for c_ in cands[1:]:
        merged = merge(merged, c_)
    nkeys, counts = chosen_neighbours(keys[inst], merged, k, adaptive, k_max)
    dist = np.empty(n)
    for q, r in enumerate(inst):
        distances_from(everything, r, dist)
        idx, cnt = neighbour_rows(dist, keys, r, k, classes, C)
        for c in range(C):
            if adaptive:
                rows, vals = sorted_candidates(dist, r, classes, c)
                want = rows[:gap_k(vals, rows.size, k_max)]
            else:
                want = idx[c][:cnt[c]]
            assert counts[q, c] == want.size
            np.testing.assert_array_equal(nkeys[q, c, :want.size], keys[want])


def test_all_constant_features_with_pca_give_zero_weights_in_both_modes(spark):
    """Issue 37 (8): every feature constant made the PCA embedder's ARPACK fail ('ARPACK error -9'). The
    embedding now has no columns (neighbours by L1 on the raw rows) and every weight is 0, as Relief gives a
    constant feature; broadcast mode (rows embedded on the driver) and tall mode (in Spark tasks) agree."""
    pdf = pd.DataFrame({"a": 1.0, "b": 5.0, "c": 0.0, "y": ["p", "q"] * 30})
    df = spark.createDataFrame(pdf)
    kw = dict(spark=spark, seed=1, targets="y", reliefe_embedder="pca")
    ref, meta_b = rank(df.coalesce(1), "broadcast", **kw)
    got, meta_t = rank(df.repartition(3), "tall", **kw)
    pd.testing.assert_frame_equal(ref, got, check_exact=True)
    assert (ref.importance == 0).all() and ref.feature.nunique() == 3
    assert meta_b["reliefe_dimension_used"] == meta_t["reliefe_dimension_used"] == 0
    assert meta_t["executed_on"] == "spark"
