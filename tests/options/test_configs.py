"""The example configs in conf/ run on the shared datasets (with fewer trees: the command line wins); the configs
shipped inside the package (spark_fr/configs/) run by name (``--config scheduled``)."""
import json

import pytest
import yaml

from tests.conftest import run_job
from tests.paths import ROOT

CONFIGS = sorted((ROOT / "conf").glob("*.yaml"))


def test_defaults_yaml_is_the_option_table():
    """conf/defaults.yaml is generated from spark_fr/options/, and loading it gives the table's defaults."""
    from spark_fr import options
    from spark_fr.ensemble.params import EnsembleParams
    from spark_fr.relief.params import ReliefParams

    path = ROOT / "conf" / "defaults.yaml"
    assert path.read_text() == options.defaults_yaml(), "regenerate conf/defaults.yaml from options.defaults_yaml()"
    loaded = options.load_config(str(path))
    table = {k: v for k, v in options.defaults().items() if v is not None and k != "config"}
    assert {k: (list(v) if isinstance(v, tuple) and k == "scores" else v) for k, v in table.items()} == loaded
    assert EnsembleParams.from_options(loaded).to_dict() == EnsembleParams().to_dict()
    assert ReliefParams.from_options(loaded).to_dict() == ReliefParams().to_dict()


@pytest.mark.parametrize("config", [c for c in CONFIGS if c.name != "defaults.yaml"], ids=lambda p: p.stem)
def test_example_config_runs(spark, config, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "out"
    code, _, err = run_job(["--config", config, "--trees", 8, "--output", out, "--plot", tmp_path / "p.png"],
                           capsys)
    assert code == 0, err[-2000:]
    cfg = yaml.safe_load(config.read_text())
    if cfg.get("output_format") == "delta":  # rows appended to a Delta table: the run's params are in its rows
        from deltalake import DeltaTable

        rows = DeltaTable(str(out)).to_pandas()
        assert rows.run_id.nunique() == 1
        run = {"params": json.loads(rows.params.iloc[0])}
    else:
        run = json.loads((out / "run.json").read_text())
        assert any(f.name.startswith("ranking.") for f in out.iterdir())
    if cfg.get("method", "ensemble") == "ensemble":
        assert run["params"]["trees"] == 8
        assert run["params"]["ensemble"] == cfg.get("ensemble", "rf")
    else:
        assert run["params"]["method"] == cfg["method"]


# ----- configs shipped inside the package: --config NAME (issue 35, 1) --------------------------------------------
ENB = ROOT.parent / "shared" / "datasets" / "mtr_enb" / "enb.arff"
#: options whose values are locations: a shipped config holds none (from a wheel they could only be this checkout's)
PATH_OPTIONS = {"input", "input_table", "labels_xml", "output", "output_table", "plot", "schema", "config",
                "mlflow_experiment", "master"}


def test_the_shipped_configs_are_the_package_data_and_hold_no_location():
    from spark_fr import options

    shipped = options.shipped_configs()
    assert sorted(shipped) == sorted(p.stem for p in (ROOT / "spark_fr" / "configs").glob("*.yaml")) != []
    for name, path in shipped.items():
        loaded = options.load_config(path)
        assert loaded and not PATH_OPTIONS & set(loaded), (name, sorted(PATH_OPTIONS & set(loaded)))


def test_a_bare_name_is_a_shipped_config_an_existing_file_wins_and_an_unknown_name_is_one_line(tmp_path,
                                                                                               monkeypatch):
    from spark_fr import options
    from spark_fr.errors import InputError

    monkeypatch.chdir(tmp_path)
    assert options.config_path("scheduled") == str(ROOT / "spark_fr" / "configs" / "scheduled.yaml")
    for given in ("conf/x.yaml", "x.yaml", "x.yml", "s3a://b/scheduled", "./scheduled"):
        assert options.config_path(given) == given  # a path: read (or refused) as that path
    (tmp_path / "scheduled").write_text("trees: 3\n")
    assert options.config_path("scheduled") == "scheduled"  # the user's file wins
    with pytest.raises(InputError) as err:
        options.config_path("nightly")
    assert str(err.value) == ("--config nightly: no such file, and not a config shipped with spark_fr (scheduled); "
                              "give a YAML file's path or one of those names")


def test_the_rank_job_runs_a_shipped_config_by_its_name(spark, tmp_path, capsys, monkeypatch):
    """``--config scheduled`` from any folder (no conf/ beside it), the data and the table given with it; without an
    input it is the one-line error of a missing --input, and an unknown name is one line (exit code 2)."""
    from deltalake import DeltaTable

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SPARK_FR_DRIVER_MAX_SECONDS", raising=False)  # small work on the driver, as users run it
    code, _, err = run_job(["--config", "nightly", "--input", ENB], capsys)
    assert code == 2 and err.strip().splitlines() == [
        "error: --config nightly: no such file, and not a config shipped with spark_fr (scheduled); give a YAML "
        "file's path or one of those names"]
    code, _, err = run_job(["--config", "scheduled"], capsys)
    assert code == 2 and err.strip().splitlines()[0].startswith("error: --input is required")
    out = tmp_path / "rankings"
    code, _, err = run_job(["--config", "scheduled", "--input", ENB, "--targets", "Y1,Y2", "--trees", 8, "--output",
                            out], capsys)
    assert code == 0, err[-2000:]
    rows = DeltaTable(str(out)).to_pandas()  # the config's output_format: delta
    params = json.loads(rows.params.iloc[0])
    assert set(rows.score) == {"genie3", "rf"} and params["trees"] == 8 and params["seed"] == 1


def test_a_config_key_of_an_old_name_is_one_line_naming_the_new_one(tmp_path):
    from spark_fr import options
    from spark_fr.errors import InputError

    path = tmp_path / "old.yaml"
    path.write_text("version: 3\n")
    with pytest.raises(InputError) as err:
        options.load_config(str(path))
    assert str(err.value) == (f"{path}: option 'version' is now 'version_as_of' (--version-as-of: Delta time travel; "
                              f"--version prints spark_fr's version)")
