"""Bad input: a clear one-line error naming the file, column, row or option, exit code 2, nothing written."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import run_job


def expect_error(args, capsys, tmp_path, *fragments):
    out_dir = tmp_path / "out"
    code, out, err = run_job(list(args) + ["--output", out_dir, "--trees", 5], capsys)
    errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert code == 2, err[-3000:]
    assert len(errors) == 1, err[-3000:]
    for frag in fragments:
        assert frag in errors[0], errors[0]
    assert not out_dir.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")], "temporary output left behind"
    return errors[0]


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


ARFF_HEAD = "@relation t\n@attribute a numeric\n@attribute b {x,y}\n@attribute c numeric\n@data\n"


@pytest.mark.parametrize("args,fragment", [
    (["--trees", "0"], "--trees must be a positive integer"),
    (["--max-features", "lots"], "--max-features must be"),
    (["--scores", "genie3,shap"], "--scores must be"),
    (["--min-samples-leaf", "0"], "--min-samples-leaf must be a number >= 1"),
    (["--symbolic-weight", "2"], "--symbolic-weight must be in (0, 1]"),
    (["--ensemble", "extra_trees", "--scores", "rf"], "--scores rf needs out-of-bag rows, and extra_trees without "
                                                     "bootstrapping has none"),
    (["--ensemble", "extra_trees", "--scores", "genie3,rf"], "add --bootstrap or leave rf out of --scores"),
    (["--ssl-weight", "0.3"], "--ssl-weight applies to semi-supervised ranking: add --semi-supervised"),
    (["--semi-supervised", "--ssl-weight", "1.5"], "--ssl-weight must be auto or a number in [0, 1], not 1.5"),
    (["--semi-supervised", "--ssl-weight", "most"], "--ssl-weight must be auto or a number in [0, 1], not 'most'"),
])
def test_bad_parameters(spark, datasets, tmp_path, capsys, args, fragment):
    out_dir = tmp_path / "out"
    code, _, err = run_job(["--input", datasets / "mtr_enb/enb.arff", "--targets", "Y1,Y2",
                            "--output", out_dir] + args, capsys)
    assert code == 2
    assert fragment in [ln for ln in err.splitlines() if ln.startswith("error:")][0]
    assert not out_dir.exists()


def test_constant_and_all_missing_features_rank_last_with_zero_importance(spark, tmp_path):
    import spark_fr

    rng = np.random.default_rng(0)
    n = 300
    pdf = pd.DataFrame({"x": rng.normal(size=n), "const": 3.0, "gone": np.nan, "flat": "same",
                        "noise": rng.normal(size=n)})
    pdf["y"] = 2 * pdf.x + rng.normal(size=n) * 0.1
    ranking = spark_fr.rank(spark.createDataFrame(pdf), targets="y", trees=20, seed=1, spark=spark)
    t = ranking.to_pandas()
    for score, g in t.groupby("score"):
        g = g.set_index("feature")
        assert g.loc["x", "rank"] == 1
        for dead in ("const", "gone", "flat"):
            assert g.loc[dead, "importance"] == 0.0
            assert g.loc[dead, "rank"] >= 3
            assert np.isnan(g.loc[dead, "importance_std"])
    assert sorted(ranking.metadata["unusable_features"]) == ["const", "flat", "gone"]


@pytest.mark.parametrize("args,fragment", [
    (["--method", "relief", "--relief-neighbours", "0"], "--relief-neighbours must be a positive integer"),
    (["--method", "relief", "--relief-iterations", "0"], "--relief-iterations as a count must be >= 1"),
    (["--method", "relief", "--relief-iterations", "lots"], "--relief-iterations must be a count or a fraction"),
    (["--method", "relief", "--relief-influence", "0.9,0.1"], "--relief-influence must be w0,w1"),
    (["--method", "relief", "--hmlc-w0", "0"], "--hmlc-w0 must be in (0, 1]"),
    (["--method", "relief", "--task", "hmlc"], "HMLC needs a label hierarchy"),
    (["--method", "relief", "--task", "unsupervised"], "--task unsupervised takes no --targets"),
    (["--task", "unsupervised"], "--task unsupervised takes no --targets"),
    (["--semi-supervised", "--task", "unsupervised"], "--semi-supervised needs targets; --task unsupervised has none"),
    (["--per-target", "--task", "unsupervised"], "--per-target needs targets; --task unsupervised has none"),
])
def test_bad_relief_parameters(spark, datasets, tmp_path, capsys, args, fragment):
    out_dir = tmp_path / "out"
    code, _, err = run_job(["--input", datasets / "mtr_enb/enb.arff", "--targets", "Y1,Y2",
                            "--output", out_dir] + args, capsys)
    assert code == 2, err[-2000:]
    assert fragment in [ln for ln in err.splitlines() if ln.startswith("error:")][0]
    assert not out_dir.exists()


# ----- the Python API: typed checks with one-line errors, as on the command line ---------------------------
@pytest.mark.parametrize("call,fragment", [
    (lambda df: ("rank", (123,), {}), "data must be a path, a list of paths, a Spark DataFrame or a pandas DataFrame, not int"),
    (lambda df: ("rank", (df,), {"targets": "y", "seed": 1.5}), "--seed must be an integer, not 1.5"),
    (lambda df: ("rank", (df,), {"targets": "y", "max_depth": True}), "--max-depth must be an integer >= 0, not True"),
    (lambda df: ("rank", (df,), {"targets": "y", "trees": "10"}), "--trees must be a positive integer, not '10'"),
    (lambda df: ("rank", (df,), {"targets": "y", "per_target": "no"}), "--per-target must be true or false"),
    (lambda df: ("rank", (df,), {"targets": "y", "relief_sigma": float("nan")}), "--relief-sigma must be"),
    (lambda df: ("rank", (df,), {"targets": "y", "treez": 5}), "unknown parameter 'treez' (did you mean 'trees'?)"),
    (lambda df: ("rank", (df,), {"targets": 7}), "--targets must be a comma list of names, not 7"),
    (lambda df: ("FeatureRanker", (), {"numTopFeatures": -3}), "numTopFeatures must be a positive integer, not -3"),
    (lambda df: ("FeatureRanker", (), {"maxDepth": True}), "maxDepth must be an integer >= 0, not True"),
    (lambda df: ("FeatureRanker", (), {"seed": 1.5}), "seed must be an integer, not 1.5"),
    (lambda df: ("FeatureRanker", (), {"numTress": 5}), "unknown parameter(s) of FeatureRanker: numTress"),
])
def test_the_api_checks_its_arguments(spark, call, fragment):
    import spark_fr
    from spark_fr import FeatureRanker
    from spark_fr.errors import InputError

    df = spark.createDataFrame(pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [1.0, 0.0, 1.0]}))
    what, args, kwargs = call(df)
    fn = spark_fr.rank if what == "rank" else FeatureRanker
    with pytest.raises(InputError) as info:
        fn(*args, **kwargs)
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_an_estimator_without_targets_says_so(spark):
    from spark_fr import FeatureRanker
    from spark_fr.errors import InputError

    df = spark.createDataFrame(pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [1.0, 0.0, 1.0]}))
    with pytest.raises(InputError, match="no target: set labelCol"):
        FeatureRanker(numTrees=3).fit(df)


def test_a_failure_inside_spark_is_explained_in_one_line(monkeypatch):
    """Out of memory in the driver: say so and what to set; the JVM gone: say so; anything else: one line."""
    from spark_fr import runner
    from spark_fr.runtime import session

    monkeypatch.setattr(session, "jvm_log_tail", lambda: "")
    java = RuntimeError("An error occurred while calling o41.collectToPython.\n: java.lang.OutOfMemoryError: Java "
                        "heap space\n\tat java.base/java.util.Arrays.copyOf(Arrays.java:3537)")
    msg = runner.failure_message(java)
    assert "ran out of memory (java.lang.OutOfMemoryError: Java heap space)" in msg and "SPARK_FR_DRIVER_MEMORY" in msg
    assert "python jobs/rank.py" in msg and "python jobs/evaluate.py" in runner.failure_message(java, "jobs/evaluate.py")
    monkeypatch.setattr(session, "jvm_log_tail", lambda: "...\njava.lang.OutOfMemoryError: Java heap space\n...")
    assert "ran out of memory" in runner.failure_message(ConnectionRefusedError(111, "Connection refused"))
    monkeypatch.setattr(session, "jvm_log_tail", lambda: "")
    assert "stopped unexpectedly" in runner.failure_message(ConnectionRefusedError(111, "Connection refused"))
    other = runner.failure_message(KeyError("x\ny"))
    assert other.startswith("unexpected failure: ") and "\n" not in other and "--log-level debug" in other
