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
