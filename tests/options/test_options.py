"""The option table and what is derived from it: the parser, YAML configs, rank()'s keywords, the parameter
objects and the Estimator's Params agree, and every kind of value is checked the same way everywhere."""
import math

import pytest

from spark_fr import options as O
from spark_fr.ensemble.params import EnsembleParams
from spark_fr.errors import InputError
from spark_fr.relief.params import ReliefParams


def test_every_option_is_on_the_command_line_and_in_yaml_or_api():
    parser = O.build_parser()
    dests = {a.dest for a in parser._actions}
    for opt in O.OPTIONS:
        assert (opt.name in dests) == (O.JOB in opt.where), opt.name
        assert opt.group in O.GROUPS
        if opt.default is not None:
            O.check_value(opt, opt.default)  # every default passes its own check (raises otherwise)


@pytest.mark.parametrize("name,text,value", [
    ("trees", "12", 12), ("min_samples_leaf", "3", 3.0), ("max_features", "sqrt", "sqrt"),
    ("max_features", "0.5", 0.5), ("max_features", "7", 7), ("max_features", "7.0", 7),
    ("relief_iterations", "1.0", 1.0), ("relief_iterations", "1", 1), ("relief_influence", "0.2,0.9", (0.2, 0.9)),
    ("scores", "genie3, rf", ["genie3", "rf"]), ("targets", "a,b", ["a", "b"]), ("seed", "-4", -4),
    ("symbolic_weight", "1", 1.0), ("hmlc_w0", "0.5", 0.5), ("task", "mtr", "mtr"),
    ("missing", "fractional", "fractional"),
])
def test_command_line_text_is_parsed(name, text, value):
    opt = O.option(name)
    assert opt.kind.parse(text, opt) == value


@pytest.mark.parametrize("name,value,fragment", [
    ("trees", 0, "--trees must be a positive integer, not 0"),
    ("trees", True, "not True"), ("trees", "10", "not '10'"), ("trees", 2.5, "not 2.5"),
    ("seed", 1.5, "--seed must be an integer"), ("max_depth", -1, "--max-depth must be an integer >= 0"),
    ("min_samples_leaf", math.inf, "--min-samples-leaf must be a number >= 1, not inf"),
    ("min_samples_leaf", 0.5, "not 0.5"), ("relief_sigma", math.nan, "--relief-sigma must be a finite number"),
    ("relief_sigma", -1.0, "not -1.0"), ("symbolic_weight", 0.0, "--symbolic-weight must be in (0, 1]"),
    ("hmlc_w0", 1.5, "--hmlc-w0 must be in (0, 1]"), ("bootstrap", "false", "--bootstrap must be true or false"),
    ("per_target", 1, "--per-target must be true or false, not 1"), ("ensemble", "forest", "one of rf, bagging"),
    ("scores", "genie3,shap", "--scores must be a comma list of symbolic, genie3, rf, not 'genie3,shap'"),
    ("scores", "", "a non-empty comma list"), ("targets", [1, 2], "--targets must be a comma list of names"),
    ("max_features", "lots", "--max-features must be sqrt, log2, all, a count or a fraction"),
    ("max_features", 1.5, "--max-features as a fraction must be in (0, 1]"),
    ("max_features", 0, "--max-features as a count must be >= 1"),
    ("relief_iterations", 0, "--relief-iterations as a count must be >= 1"),
    ("relief_iterations", math.inf, "--relief-iterations must be a count or a fraction"),
    ("relief_influence", "0.9,0.1", "--relief-influence must be w0,w1 with 0 <= w0 <= w1 <= 1"),
    ("relief_influence", [0.1, math.nan], "--relief-influence must be"), ("input", "", "a non-empty string"),
    ("missing", "impute", "--missing must be one of fractional, learned"),
])
def test_bad_values_are_one_line_errors_naming_the_option(name, value, fragment):
    with pytest.raises(InputError) as info:
        O.check_value(O.option(name), value)
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_yaml_config(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("input: a.arff\ntrees: 12\nscores: [genie3, rf]\nrelief-influence: [0.2, 0.8]\nmax_depth: null\n")
    assert O.load_config(str(cfg)) == {"input": "a.arff", "trees": 12, "scores": ["genie3", "rf"],
                                       "relief_influence": (0.2, 0.8)}
    for text, fragment in [("treez: 3\n", "unknown option 'treez'"), ("trees: '3'\n", "c.yaml: --trees must be"),
                           ("master: 4\n", "--master must be a non-empty string"), ("[1\n", "not valid YAML"),
                           ("title: x\n", "unknown option 'title'"), ("config: other.yaml\n", "unknown option")]:
        cfg.write_text(text)
        with pytest.raises(InputError, match=fragment):
            O.load_config(str(cfg))
    with pytest.raises(InputError, match="config file not found"):
        O.load_config(str(tmp_path / "none.yaml"))


def test_command_line_errors_are_one_line_without_usage():
    for argv, fragment in [(["--trees", "x"], "--trees must be a positive integer, not 'x'"),
                           (["--ensemble", "forest"], "--ensemble must be one of"),
                           (["--per-target", "yes"], "unrecognized arguments: yes"),
                           (["--bootstrap", "--no-bootstrap"], "not allowed with argument")]:
        with pytest.raises(InputError) as info:
            O.parse_command_line(argv)
        assert fragment in str(info.value) and "usage:" not in str(info.value)
    assert O.parse_command_line(["--no-bootstrap", "--trees", "3"]) == {"bootstrap": False, "trees": 3}


@pytest.mark.parametrize("argv", [["--relief-iter", "5"], ["--tree", "5"], ["--reliefe-emb", "none"]])
def test_abbreviated_options_are_refused(argv):
    """argparse would take '--tree' for --trees (and '--relief-iter' for --relief-iterations): a typo or an old
    abbreviation must not silently set another option."""
    with pytest.raises(InputError) as info:
        O.parse_command_line(argv)
    assert f"unrecognized arguments: {argv[0]}" in str(info.value) and "\n" not in str(info.value)


def test_keywords_of_rank():
    assert O.check_keywords({"trees": 5, "seed": None}) == {"trees": 5}
    with pytest.raises(InputError, match="unknown parameter 'tres' \\(did you mean 'trees'\\?\\)"):
        O.check_keywords({"tres": 5})
    with pytest.raises(InputError, match="unknown parameter 'output'"):
        O.check_keywords({"output": "x"})  # a job option, not one of rank()


def test_parameter_objects_are_derived_from_the_table():
    ens = {o.attribute for o in O.for_method("ensemble")}
    assert set(EnsembleParams().to_dict()) == ens
    assert set(ReliefParams().to_dict()) == {o.attribute for o in O.for_method("relief")} | {"shards",
                                                                                            "broadcast_limit"}
    p = EnsembleParams.from_options({"trees": 7, "resample_constant_features": True, "relief_neighbours": 3})
    assert p.trees == 7 and p.resample_constant and p.bootstrap  # rf bootstraps by default
    assert p.missing == "fractional" and EnsembleParams.from_options({"missing": "learned"}).missing == "learned"
    assert EnsembleParams(ensemble="extra_trees").bootstrap is False
    assert ReliefParams.from_options({"relief_neighbours": 4, "relief_influence": "0.1,0.2"}).influence == (0.1, 0.2)
    with pytest.raises(InputError, match="--relief-neighbours must be a positive integer"):
        ReliefParams(neighbours=0)
    with pytest.raises(InputError, match="unknown ensemble parameter"):
        EnsembleParams(neighbours=3)


def test_estimator_params_are_derived_from_the_table():
    from spark_fr import FeatureRanker

    ranker = FeatureRanker()
    names = {p.name for p in ranker.params}
    from spark_fr.estimator import STAGE_OPTIONS

    expected = {o.param_name for o in O.estimator_options()} | {o.name for o in STAGE_OPTIONS}
    assert {o.name for o in STAGE_OPTIONS} == {"labelCol", "outputCol", "hierarchy", "numTopFeatures", "selectionScore",
                                                "labelType", "selectionMode", "selectionThreshold"}
    assert names == expected
    assert {"numTrees", "targetCols", "reliefNeighbours", "maxFeatures", "seed"} <= names
    assert ranker.getOrDefault("minSamplesLeaf") == O.option("min_samples_leaf").default
    assert not ranker.isDefined("numTrees")  # its default depends on the task (spark_fr.rank resolves it)
    ranker.setParams(numTrees=7, reliefInfluence=[0.1, 0.3])
    assert ranker.rank_keywords() == {"trees": 7, "relief_influence": (0.1, 0.3)}
    ranker.setParams(missing="fractional")
    assert ranker.rank_keywords()["missing"] == "fractional"


def test_defaults_yaml_lists_every_job_option():
    text = O.defaults_yaml()
    for opt in O.OPTIONS:
        if O.JOB in opt.where and opt.name != "config":
            assert f"\n{opt.name}: " in text, opt.name


# ----- --version is the version; time travel has names of its own (issue 35, 1) ---------------------------------
def _jobs():
    from spark_fr import cli
    from spark_fr.evaluation import drift_job, job

    return {"rank": cli.JOB, "evaluate": job.JOB, "drift": drift_job.JOB}


@pytest.mark.parametrize("name", ["rank", "evaluate", "drift"])
def test_version_prints_the_package_version_and_exits_0(name, capsys):
    import tomllib
    from pathlib import Path

    from spark_fr import runner
    from spark_fr.version import __version__

    with pytest.raises(SystemExit) as done:
        runner.main(_jobs()[name], ["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"spark_fr {__version__}\n"
    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "spark_fr.version.__version__"}


@pytest.mark.parametrize("argv, line", [
    (["--version", "0"], "error: --version 0: Delta time travel is --version-as-of 0 now; --version alone prints "
                         "spark_fr's version (see jobs/rank.py --help)"),
    (["--version=0"], "error: --version 0: Delta time travel is --version-as-of 0 now; --version alone prints "
                      "spark_fr's version (see jobs/rank.py --help)"),
    (["--timestamp", "2026-11-26"], "error: --timestamp 2026-11-26: Delta time travel is --timestamp-as-of "
                                    "2026-11-26 now; --version alone prints spark_fr's version (see jobs/rank.py "
                                    "--help)"),
])
def test_the_old_time_travel_flags_are_one_line_naming_the_new_ones(argv, line, capsys):
    """``--version 0`` used to read version 0: it must neither print the version and exit 0 (a scheduled run would
    silently do nothing) nor read the latest version."""
    from spark_fr import runner

    code = runner.main(_jobs()["rank"], ["--input", "lake/features", "--targets", "y", *argv])
    assert code == 2 and capsys.readouterr().err.strip().splitlines() == [line]


def test_time_travel_options_are_named_as_spark_names_them():
    parsed = O.parse_command_line(["--version-as-of", "3", "--timestamp-as-of", "2026-11-26"])
    assert parsed == {"version_as_of": 3, "timestamp_as_of": "2026-11-26"}
    assert "version" not in O.BY_NAME and "timestamp" not in O.BY_NAME


def test_rank_keeps_its_old_time_travel_keywords_for_one_release_with_a_future_warning(spark, tmp_path):
    """rank(version=0) reads version 0 as before, with a FutureWarning naming version_as_of (scikit-learn's and
    pyspark's way to rename); both names at once are one line."""
    import pandas as pd
    from deltalake import write_deltalake

    import spark_fr

    path = str(tmp_path / "lake")
    frame = pd.DataFrame({"x1": [float(i % 7) for i in range(40)], "x2": [float(i % 3) for i in range(40)]})
    frame["y"] = frame.x1 * 2.0
    write_deltalake(path, frame)
    write_deltalake(path, frame.assign(y=frame.x2), mode="append")
    with pytest.warns(FutureWarning, match=r"rank\(version=\.\.\.\) is deprecated .* use version_as_of="):
        old = spark_fr.rank(path, targets="y", version=0, trees=4, scores="genie3", spark=spark)
    new = spark_fr.rank(path, targets="y", version_as_of=0, trees=4, scores="genie3", spark=spark)
    assert old.metadata["n_rows"] == new.metadata["n_rows"] == 40
    assert old.metadata["params"]["version_as_of"] == 0 and old.metadata["input_fingerprint"]["delta_version"] == 0
    pd.testing.assert_frame_equal(old.to_pandas()[["feature", "importance", "rank"]],
                                  new.to_pandas()[["feature", "importance", "rank"]])
    with pytest.raises(InputError, match=r"give version_as_of= \(or its deprecated name version=\), not both"):
        spark_fr.rank(path, targets="y", version=0, version_as_of=1, spark=spark)
