"""Bad input: a clear one-line error naming the file, column, row or option, exit code 2, nothing written."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from test_end_to_end import JOB, _subprocess_env, run_job


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


def test_missing_input_file(spark, tmp_path, capsys):
    expect_error(["--input", tmp_path / "nope.arff"], capsys, tmp_path, "input not found", "nope.arff")


def test_unknown_target_column(spark, datasets, tmp_path, capsys):
    expect_error(["--input", datasets / "mtr_enb/enb.arff", "--targets", "Y1,Y9"], capsys, tmp_path,
                 "target column 'Y9' not found", "Relative_compactness")


def test_missing_target_for_a_csv(spark, tmp_path, capsys):
    f = write(tmp_path / "d.csv", "a,b\n1,2\n3,4\n")
    expect_error(["--input", f], capsys, tmp_path, "no target given", "--targets")


def test_target_that_is_all_missing(spark, tmp_path, capsys):
    f = write(tmp_path / "d.arff", ARFF_HEAD + "".join(f"{i},x,?\n" for i in range(20)))
    expect_error(["--input", f, "--targets", "c"], capsys, tmp_path, "target column 'c' has no known values")


def test_single_class(spark, tmp_path, capsys):
    f = write(tmp_path / "d.arff", ARFF_HEAD + "".join(f"{i},x,{i % 3}\n" for i in range(20)))
    expect_error(["--input", f, "--targets", "b"], capsys, tmp_path, "'b' has a single class 'x'")


def test_constant_regression_target(spark, tmp_path, capsys):
    f = write(tmp_path / "d.arff", ARFF_HEAD + "".join(f"{i},x,5\n" for i in range(20)))
    expect_error(["--input", f, "--targets", "c"], capsys, tmp_path, "target column 'c' is constant")


def test_non_numeric_text_in_a_numeric_csv_column(spark, tmp_path, capsys):
    rows = [f"{i},{i * 0.5},{i % 2}" for i in range(30)]
    rows[17] = "17,eight point five,1"
    f = write(tmp_path / "d.csv", "a,b,y\n" + "\n".join(rows) + "\n")
    expect_error(["--input", f, "--targets", "y"], capsys, tmp_path, "d.csv line 19", "column 'b'",
                 "'eight point five' is not a number")


def test_csv_row_with_the_wrong_number_of_fields(spark, tmp_path, capsys):
    rows = [f"{i},{i * 0.5},{i % 2}" for i in range(30)]
    rows[4] = "4,2.0"
    f = write(tmp_path / "d.csv", "a,b,y\n" + "\n".join(rows) + "\n")
    expect_error(["--input", f, "--targets", "y"], capsys, tmp_path, "d.csv line 6", "expected 3 fields")


def test_empty_table(spark, tmp_path, capsys):
    f = write(tmp_path / "d.csv", "a,b,y\n")
    expect_error(["--input", f, "--targets", "y"], capsys, tmp_path, "no rows")
    g = write(tmp_path / "e.arff", ARFF_HEAD)
    expect_error(["--input", g, "--targets", "c"], capsys, tmp_path, "no rows")
    h = write(tmp_path / "f.csv", "")
    expect_error(["--input", h, "--targets", "y"], capsys, tmp_path, "empty")


def test_malformed_arff_line_reports_its_line_number(spark, tmp_path, capsys):
    rows = [f"{i},{'xy'[i % 2]},{i * 0.1}" for i in range(40)]
    rows[30] = "30,z,3.0"
    f = write(tmp_path / "d.arff", ARFF_HEAD + "\n".join(rows) + "\n")
    expect_error(["--input", f, "--targets", "c"], capsys, tmp_path, "d.arff line 36", "attribute 'b'", "'z'")
    rows[30] = "30,x"
    g = write(tmp_path / "g.arff", ARFF_HEAD + "\n".join(rows) + "\n")
    expect_error(["--input", g, "--targets", "c"], capsys, tmp_path, "g.arff line 36", "expected 3 values")


def test_malformed_arff_header(spark, tmp_path, capsys):
    f = write(tmp_path / "d.arff", "@relation t\n@attribute a numeric\n@attribute a numeric\n@data\n1,2\n")
    expect_error(["--input", f], capsys, tmp_path, "d.arff line 3", "duplicate")


@pytest.mark.parametrize("args,fragment", [
    (["--trees", "0"], "--trees must be a positive integer"),
    (["--max-features", "lots"], "--max-features must be"),
    (["--scores", "genie3,shap"], "--scores must be"),
    (["--min-samples-leaf", "0"], "--min-samples-leaf must be >= 1"),
    (["--symbolic-weight", "2"], "--symbolic-weight must be in (0, 1]"),
    (["--ensemble", "extra_trees", "--scores", "rf"], "RF score needs bootstrapping"),
])
def test_bad_parameters(spark, datasets, tmp_path, capsys, args, fragment):
    out_dir = tmp_path / "out"
    code, _, err = run_job(["--input", datasets / "mtr_enb/enb.arff", "--targets", "Y1,Y2",
                            "--output", out_dir] + args, capsys)
    assert code == 2
    assert fragment in [ln for ln in err.splitlines() if ln.startswith("error:")][0]
    assert not out_dir.exists()


def test_unknown_option_in_config(spark, tmp_path, capsys):
    cfg = write(tmp_path / "c.yaml", "input: x.arff\ntreez: 5\n")
    code, _, err = run_job(["--config", cfg], capsys)
    assert code == 2 and "unknown option 'treez'" in err


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


def test_error_in_a_real_process_has_exit_code_2_and_one_line(datasets, tmp_path):
    out = tmp_path / "o"
    r = subprocess.run([sys.executable, str(JOB), "--input", str(datasets / "mtr_enb/enb.arff"),
                        "--targets", "nope", "--output", str(out)], capture_output=True, text=True,
                       env=_subprocess_env(), timeout=300)
    assert r.returncode == 2
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    assert lines == ["error: target column 'nope' not found in " + str(datasets / "mtr_enb/enb.arff") +
                     "; columns are: Relative_compactness, X1, X3, X4, X5, X6, X7, X8, Y1, Y2"]
    assert "Traceback" not in r.stderr and not out.exists()


@pytest.mark.parametrize("args,fragment", [
    (["--method", "relief", "--relief-neighbours", "0"], "--relief-neighbours must be a positive integer"),
    (["--method", "relief", "--relief-iterations", "0"], "--relief-iterations as a count must be >= 1"),
    (["--method", "relief", "--relief-iterations", "lots"], "--relief-iterations must be a count or a fraction"),
    (["--method", "relief", "--relief-influence", "0.9,0.1"], "--relief-influence must be w0,w1"),
    (["--method", "relief", "--hmlc-w0", "0"], "--hmlc-w0 must be in (0, 1]"),
    (["--method", "relief", "--task", "hmlc"], "HMLC needs a label hierarchy"),
    (["--semi-supervised"], "--semi-supervised is available with --method relief"),
    (["--method", "relief", "--task", "unsupervised"], "--task unsupervised takes no --targets"),
    (["--task", "unsupervised"], "--task unsupervised is available with --method relief"),
])
def test_bad_relief_parameters(spark, datasets, tmp_path, capsys, args, fragment):
    out_dir = tmp_path / "out"
    code, _, err = run_job(["--input", datasets / "mtr_enb/enb.arff", "--targets", "Y1,Y2",
                            "--output", out_dir] + args, capsys)
    assert code == 2, err[-2000:]
    assert fragment in [ln for ln in err.splitlines() if ln.startswith("error:")][0]
    assert not out_dir.exists()


def test_hierarchical_label_not_in_the_hierarchy(spark, tmp_path, capsys):
    head = "@relation t\n@attribute x numeric\n@attribute z numeric\n@attribute class hierarchical A,A/a1,B\n@data\n"
    rows = [f"{i * 0.1},{i % 3},{'A/a1' if i % 2 else 'B'}" for i in range(30)]
    rows[21] = "2.1,0,B@A/a7"
    f = write(tmp_path / "h.arff", head + "\n".join(rows) + "\n")
    expect_error(["--input", f, "--method", "relief"], capsys, tmp_path, "h.arff line 27", "column 'class'",
                 "label 'A/a7' is not in the hierarchy")
    g = write(tmp_path / "cyc.arff", head.replace("A,A/a1,B", "root/A,A/B,B/A") + "\n".join(rows[:3]) + "\n")
    expect_error(["--input", g, "--method", "relief"], capsys, tmp_path, "cyc.arff", "cycle")


def test_several_arff_inputs_must_declare_the_same_attributes(spark, tmp_path, capsys):
    a = write(tmp_path / "a.arff", ARFF_HEAD + "1,x,0.5\n2,y,0.7\n")
    b = write(tmp_path / "b.arff", ARFF_HEAD.replace("@attribute c numeric", "@attribute c2 numeric") + "3,x,0.1\n")
    expect_error(["--input", f"{a},{b}", "--targets", "c"], capsys, tmp_path, "b.arff", "attribute 'c2' differs",
                 "a.arff")
    code, _, err = run_job(["--input", f"{a},{tmp_path / 'none.arff'}", "--targets", "c", "--output",
                            tmp_path / "o2"], capsys)
    assert code == 2 and err.strip().splitlines()[-1] == f"error: input not found: {tmp_path / 'none.arff'}"
