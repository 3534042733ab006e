"""The example configs in conf/ run on the shared datasets (with fewer trees: the command line wins)."""
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
