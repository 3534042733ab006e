"""Partitioned mode: the same ranking as broadcast mode bit for bit, for any partitioning, equal to a local
reference that grows the same bootstrap samples, with repeated rows, unlabelled rows, missing values,
subbagging and a capped out-of-bag sample; and the automatic choice of the mode."""
import logging
import math

import numpy as np
import pandas as pd
import pytest

import spark_fr

COLS = ["feature", "score", "target", "importance", "rank", "importance_std"]


def frame(n=500, seed=0, task="mtr"):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 7))
    X[rng.random(X.shape) < 0.05] = np.nan
    pdf = pd.DataFrame(X, columns=[f"f{i}" for i in range(7)])
    pdf["colour"] = np.array(["red", "green", "blue", "grey"])[rng.integers(0, 4, n)]
    x0, x1 = np.nan_to_num(X[:, 0]), np.nan_to_num(X[:, 1])
    if task == "classification":
        pdf["y1"] = np.where(x0 + (pdf.colour == "red") > 0.3, "yes", np.where(x1 > 0, "maybe", "no"))
    elif task == "mlc":
        pdf["y1"] = (x0 > 0).astype(float)
        pdf["y2"] = ((x1 > 0.2) | (pdf.colour == "blue")).astype(float)
    else:
        pdf["y1"] = 2 * x0 + (pdf.colour == "red") + rng.normal(0, 0.2, n)
        pdf["y2"] = x1 * np.nan_to_num(X[:, 2]) + rng.normal(0, 0.2, n)
    pdf = pd.concat([pdf, pdf.iloc[:30], pdf.iloc[:5]], ignore_index=True)  # rows that occur 2 and 3 times
    pdf.loc[pdf.index[-45:-40], [c for c in ("y1", "y2") if c in pdf]] = np.nan  # rows without a target
    return pdf


def targets(task):
    return "y1" if task == "classification" else "y1,y2"


def ranking(df, task, mode, **kw):
    r = spark_fr.rank(df, targets=targets(task), task=task, trees=12, seed=5, per_target=task != "classification",
                      ensemble_mode=mode, spark=df.sparkSession, **kw)
    return r.to_pandas()[COLS], r.metadata


@pytest.mark.parametrize("task,missing", [("mtr", "learned"), ("classification", "learned"), ("mlc", "learned"),
                                          ("mtr", "fractional")])
def test_partitioned_mode_gives_exactly_the_broadcast_ranking(spark, task, missing, caplog, monkeypatch):
    df = spark.createDataFrame(frame(task=task))
    a, meta_a = ranking(df, task, "broadcast", missing=missing)
    monkeypatch.setenv("SPARK_FR_PROGRESS_SECONDS", "0.002")  # a line every 2 ms: several while a job runs
    with caplog.at_level(logging.INFO, logger="spark_fr.progress"):
        b, meta_b = ranking(df.repartition(3), task, "partitioned", missing=missing)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert meta_a["ensemble_mode"] == "broadcast" and meta_b["ensemble_mode"] == "partitioned"
    assert meta_b["repeated_rows"] == 30 and meta_a["n_rows"] == meta_b["n_rows"] == 530
    check_encoding_progress(caplog, 8 + len(targets(task).split(",")))  # f0..f6, colour and the targets


def check_encoding_progress(caplog, columns: int) -> None:
    """Partitioned mode's encoding (the first job over the blocks left distributed) reported against the fixed
    total of its columns, as broadcast mode's encoding does."""
    lines = [(r.progress, r.getMessage()) for r in caplog.records
             if r.name == "spark_fr.progress" and r.progress["label"] == "encoding"]
    states = [s for s, _ in lines]
    assert states and {(s["total"], s["unit"]) for s in states} == {(columns, "columns")}, lines
    assert [s["done"] for s in states] == sorted(s["done"] for s in states)
    assert states[-1]["final"] and states[-1]["done"] == columns
    assert lines[-1][1].startswith(f"encoding: {columns} / {columns} columns (100 %), ")


def test_subbagging_and_a_capped_oob_sample_agree_across_modes_and_partitionings(spark):
    df = spark.createDataFrame(frame(n=800, seed=1))
    kw = {"max_samples": 150, "max_oob_rows": 90}
    a, _ = ranking(df, "mtr", "broadcast", **kw)
    for parts in (1, 4):
        b, _ = ranking(df.repartition(parts), "mtr", "partitioned", **kw)
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    full, _ = ranking(df, "mtr", "broadcast")
    assert not np.allclose(full.importance, a.importance)  # the options did change the ensemble


def test_partitioned_mode_equals_a_local_reference_of_the_same_bootstrap_samples(spark):
    """Trees grown here, one by one, from the encoded rows, the task fitted to them and the same counts."""
    from spark_fr import tasks
    from spark_fr.data.prepare import encode
    from spark_fr.data.schema import resolve
    from spark_fr.ensemble.bagging import Bagging
    from spark_fr.ensemble.params import EnsembleParams
    from spark_fr.io.readers import read_dataset
    from spark_fr.pct import scores as S
    from spark_fr.pct.config import grow_config
    from spark_fr.pct.tree import grow
    from spark_fr.runtime.rng import Stream, derive_seed

    pdf = frame(n=300, seed=2)
    df = spark.createDataFrame(pdf)
    ds = read_dataset(spark, df)
    enc = encode(ds, resolve(ds, ["y1", "y2"]))
    lab = ~np.all(np.isnan(enc.Y), axis=1)
    fitted = tasks.get("mtr").fit(enc.Y[lab], ["y1", "y2"])
    Y = fitted.targets(enc.Y[lab])
    codes, keys = np.ascontiguousarray(enc.codes[:, lab]), enc.row_keys[lab]
    lower, upper, _ = enc.bin_arrays()
    params = EnsembleParams(trees=6, seed=5, scores="symbolic,genie3")
    bagging = Bagging.of(params, int(lab.sum()))
    sym, gen = [], []
    for t in range(6):
        w = bagging.counts(t, keys)
        tree = grow(codes, enc.nominal, lower, upper, fitted.clustering_matrix(Y), w,
                    grow_config(max_features=params.features_per_node(codes.shape[0]),
                                seed=derive_seed(5, t, Stream.GROW), missing=params.missing))
        sym.append(S.symbolic(tree, codes.shape[0], codes.shape[1]))
        gen.append(S.genie3(tree, codes.shape[0]))
    got = spark_fr.rank(df.repartition(2), targets="y1,y2", trees=6, seed=5, scores="symbolic,genie3",
                        ensemble_mode="partitioned", spark=spark).to_pandas().set_index(["score", "feature"])
    names = enc.feature_names
    for score, trees in (("symbolic", sym), ("genie3", gen)):
        mean = np.array([math.fsum(col) for col in np.array(trees).T]) / 6  # the correctly rounded sum
        np.testing.assert_array_equal(got.loc[score].loc[names].importance.to_numpy(), mean)


def test_automatic_mode_choice(spark, tmp_path):
    from tests.conftest import run_job

    pdf = frame(n=300, seed=3)
    path = tmp_path / "d.parquet"
    pdf.to_parquet(path)
    import json

    for budget, expected in ((1024, "broadcast"), (0.01, "partitioned")):
        out = tmp_path / f"o{expected}"
        code, _, err = run_job(["--input", path, "--targets", "y1,y2", "--trees", 4, "--max-broadcast-mb", budget,
                                "--output", out])
        assert code == 0, err
        assert json.loads((out / "run.json").read_text())["ensemble_mode"] == expected

