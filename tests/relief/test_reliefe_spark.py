"""ReliefE through spark_fr.rank on the suite's Spark session: madelon end to end (its 20 relevant features),
MLC with an embedded target, planted features of a wide sparse set, and the same weights for any
partitioning and against a single in-process kernel call."""
import os

import numpy as np
import pandas as pd
import pytest
from pyspark.ml.linalg import Vectors, VectorUDT
from pyspark.sql import types as T

import spark_fr
from spark_fr.errors import InputError

#: madelon's 20 relevant features (5 informative, 15 linear combinations; 1-based names of the .mat reader)
MADELON_RELEVANT = {f"x{i + 1}" for i in (28, 48, 64, 105, 128, 153, 241, 281, 318, 336, 338, 378, 433, 442, 451,
                                          453, 472, 475, 493, 498)}


def joint(r):
    t = r.to_pandas()
    return t[t.target == "__all__"].set_index("feature").importance


def test_madelon_end_to_end_finds_the_relevant_features(spark, datasets):
    r = spark_fr.rank(str(datasets / "reliefe_mat/madelon.mat"), method="reliefe", spark=spark, seed=1,
                      reliefe_iterations=300, reliefe_embedder="pca")
    w = joint(r)
    top = set(w.sort_values(ascending=False).index[:20])
    assert len(top & MADELON_RELEVANT) >= 15, sorted(top & MADELON_RELEVANT)
    m = r.metadata
    assert m["reliefe_dimension_from"] == "twonn" and 1 <= m["reliefe_dimension"] <= 498
    assert m["reliefe_embedder"] == "pca" and m["reliefe_embed_input"] and not m["reliefe_embed_target"]
    assert m["reliefe_instances"] == 300 and m["reliefe_k_used"]["max"] == 15 and m["reliefe_sample_rows"] == 2000
    for step in ("reliefe_sampling_s", "reliefe_dimension_s", "reliefe_embed_fit_s", "reliefe_embed_transform_s",
                 "reliefe_updates_s"):
        assert m["timings"][step] >= 0
    assert r.params["reliefe_k"] == 15 if "reliefe_k" in r.params else r.params["k"] == 15


def test_mlc_with_an_embedded_target_and_adaptive_k(spark, datasets):
    r = spark_fr.rank(str(datasets / "mlc_medical/medical.arff"), labels_xml=str(datasets / "mlc_medical/medical.xml"),
                      method="reliefe", spark=spark, reliefe_embed="target", reliefe_dimension="auto",
                      reliefe_k="adaptive", reliefe_iterations=150, reliefe_embedder="pca", seed=2)
    m = r.metadata
    assert m["reliefe_embed_target"] and m["reliefe_mlc_distance"] == "cosine"
    assert m["reliefe_target_dimension"] >= 1 and m["reliefe_k_used"]["count"] + m["reliefe_skipped_instances"] >= 1
    w = joint(r)
    assert np.isfinite(w).all() and (w != 0).sum() > 10


def wide_sparse(n=400, D=10_000, seed=0):
    """Three classes; features 0-5 carry the class (present, with a class-dependent value, in most rows of
    'their' class); the other 9,994 are sparse noise (1 % non-zero)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    rows = []
    for i in range(n):
        nz = {int(j): float(np.round(rng.random(), 3)) for j in rng.choice(np.arange(6, D), D // 100, replace=False)}
        for j in range(6):
            if j % 3 == y[i] and rng.random() < 0.85:
                nz[j] = 0.6 + 0.4 * rng.random()
        rows.append((Vectors.sparse(D, nz), f"c{y[i]}"))
    return rows


SCHEMA = T.StructType([T.StructField("features", VectorUDT()), T.StructField("y", T.StringType())])


@pytest.fixture(scope="module")
def wide_df(spark):
    return spark.createDataFrame(wide_sparse(), SCHEMA)


def test_planted_features_of_a_wide_sparse_set(spark, wide_df):
    r = spark_fr.rank(wide_df, targets="y", method="reliefe", spark=spark, seed=3,
                      reliefe_embedder="random_projection", reliefe_dimension=12, reliefe_k="adaptive",
                      reliefe_update="absmean")
    top = list(joint(r).sort_values(ascending=False).index[:6])
    assert set(top) == {f"features[{j}]" for j in range(6)}, top
    assert r.metadata["reliefe_dimension_from"] == "given" and r.metadata["reliefe_dimension"] == 12


def test_the_same_weights_for_any_partitioning(spark):
    df = spark.createDataFrame(wide_sparse(n=240, D=400, seed=5), SCHEMA)
    kw = dict(targets="y", method="reliefe", spark=spark, seed=3, reliefe_embedder="pca", reliefe_sample=100)
    wa = joint(spark_fr.rank(df.coalesce(1), **kw))
    wb = joint(spark_fr.rank(df.repartition(5), **kw))
    np.testing.assert_array_equal(wa.to_numpy(), wb[wa.index].to_numpy())      # bit-identical
    assert set(wa.sort_values(ascending=False).index[:6]) == {f"features[{j}]" for j in range(6)}


def test_spark_weights_equal_one_kernel_call_in_process(spark, wide_df):
    """The shards in Spark tasks (micro-blocks, exact sums) against the kernel run once over every instance."""
    from spark_fr.relief.params import ReliefEParams
    from spark_fr.relief.reliefe import reliefe_weights
    from spark_fr.relief.reliefe_data import ReliefEData
    from spark_fr.relief.embedded import EmbeddedSpace, sparse_rows
    from spark_fr.relief.shard import relief_shard
    from spark_fr.relief.sparse_update import SparseRule
    from spark_fr.relief.sampling import sample_order
    from scipy import sparse

    pdf = wide_df.limit(150).toPandas()
    X = sparse.csr_matrix(np.vstack([v.toArray()[:2000] for v in pdf.features]))
    y = pdf.y.str[1:].astype(float).to_numpy()[:, None]
    keys = np.arange(150, dtype=np.uint64) * np.uint64(7919)
    data = ReliefEData(X, y, keys, np.zeros(2000, bool))
    params = ReliefEParams(embed="none", k=5, iterations=100, seed=4)
    res, info, _ = reliefe_weights(spark, data, 3, params)
    inst = sample_order(keys, 4)[:100]
    priors = np.bincount(y[:, 0].astype(int), minlength=3) / 150
    rows = sparse_rows(X, np.zeros(2000, bool), np.zeros((150, 0)), keys, y[:, 0], np.zeros((150, 0)))
    acc = relief_shard(EmbeddedSpace(rows, inst.astype(np.int64), 3, 5, False, 0), SparseRule(priors, 0, False))
    np.testing.assert_allclose(res[0].importance, acc.W / acc.totals[2], rtol=0, atol=1e-12)
    assert info["executed_on"] == "spark" and res[0].name == "reliefe"


def test_other_tasks_and_bad_settings_are_one_line_errors(spark, datasets):
    with pytest.raises(InputError, match="--method reliefe does not support the task 'regression'.*ReliefE finds"):
        spark_fr.rank(str(datasets / "mtr_enb/enb.arff"), targets="Y1", method="reliefe", spark=spark)
    with pytest.raises(InputError, match="--reliefe-embed target embeds a multi-label target"):
        spark_fr.rank(str(datasets / "reliefe_mat/chess.mat"), method="reliefe", reliefe_embed="target", spark=spark)
    with pytest.raises(InputError, match="--reliefe-k must be adaptive or a positive integer"):
        spark_fr.rank(str(datasets / "reliefe_mat/chess.mat"), method="reliefe", reliefe_k=0, spark=spark)


def test_estimator_yaml_and_command_line_reach_the_same_options(spark, tmp_path):
    """The Estimator's Params and a YAML config are derived from the option table: the same run as rank()."""
    from spark_fr import options as O
    from spark_fr.estimator import FeatureRanker

    df = spark.createDataFrame(wide_sparse(n=120, D=60, seed=7), SCHEMA)
    kw = dict(reliefe_k="adaptive", reliefe_update="absmean", reliefe_embedder="random_projection",
              reliefe_dimension=5)
    direct = joint(spark_fr.rank(df, targets="y", method="reliefe", spark=spark, seed=2, **kw))
    model = FeatureRanker(targetCols=["y"], method="reliefe", reliefeK="adaptive", reliefeUpdate="absmean",
                          reliefeEmbedder="random_projection", reliefeDimension=5, seed=2, numTopFeatures=6).fit(df)
    t = model.ranking.to_pandas().set_index("feature").importance
    np.testing.assert_array_equal(t[direct.index].to_numpy(), direct.to_numpy())
    cfg = tmp_path / "reliefe.yaml"
    cfg.write_text("method: reliefe\nreliefe-k: adaptive\nreliefe_update: absmean\nreliefe-embedder: random_projection\n"
                   "reliefe-dimension: 5\nseed: 2\n")
    opts = O.load_config(str(cfg))
    assert opts == {"method": "reliefe", "reliefe_k": "adaptive", "reliefe_update": "absmean",
                    "reliefe_embedder": "random_projection", "reliefe_dimension": 5, "seed": 2}
    assert O.parse_command_line(["--method", "reliefe", "--reliefe-k", "adaptive", "--reliefe-dimension", "auto",
                                 "--reliefe-k", "7"])["reliefe_k"] == 7


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("SPARK_FR_TEST_UMAP") != "1",
                    reason="compiles umap-learn's numba code in the driver and every Python worker (about 12 min on "
                           "2 cores): SPARK_FR_TEST_UMAP=1 runs it")
def test_umap_fitted_on_the_driver_and_applied_in_spark_tasks(spark):
    """The paper's embedder (umap-learn, the test extra): the default when installed; its transform runs in
    Spark tasks on fixed chunks of rows, so the weights are the same for any partitioning. Slow: umap-learn's
    numba functions compile in the driver and in every Python worker (12 min at load 18 on 2 cores)."""
    df = spark.createDataFrame(wide_sparse(n=240, D=400, seed=5), SCHEMA)
    kw = dict(targets="y", method="reliefe", spark=spark, seed=3, reliefe_sample=120, reliefe_dimension=4)
    a = spark_fr.rank(df.coalesce(1), **kw)
    b = spark_fr.rank(df.repartition(3), **kw)
    wa, wb = joint(a), joint(b)
    np.testing.assert_array_equal(wa.to_numpy(), wb[wa.index].to_numpy())
    assert a.metadata["reliefe_embedder"] == "umap" and a.metadata["reliefe_embedding_on"] == "spark"
    assert len(set(wa.sort_values(ascending=False).index[:8]) & {f"features[{j}]" for j in range(6)}) >= 5
