"""The example configs in conf/ run on the shared datasets (with fewer trees: the command line wins)."""
import json
import os
from pathlib import Path

import pytest
import yaml

from test_end_to_end import run_job

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "conf").glob("*.yaml"))


def test_defaults_yaml_states_the_real_defaults():
    from spark_fr.cli import DEFAULTS
    from spark_fr.ensemble.params import EnsembleParams
    from spark_fr.relief.params import ReliefParams

    d = yaml.safe_load((ROOT / "conf" / "defaults.yaml").read_text())
    p = EnsembleParams()
    r = ReliefParams()
    assert (d["trees"], d["ensemble"], d["scores"], d["min_samples_leaf"]) == (p.trees, p.ensemble, p.scores,
                                                                                p.min_samples_leaf)
    assert d["seed"] == DEFAULTS["seed"] == p.seed == r.seed
    assert (d["relief_neighbours"], d["relief_iterations"], d["relief_sigma"], d["relief_target_distance"]) == \
        (r.neighbours, r.iterations, r.sigma, r.target_distance)
    assert [float(x) for x in d["relief_influence"].split(",")] == list(r.influence)
    assert (d["relief_mode"], d["hmlc_w0"]) == (r.mode, r.hmlc_w0)
    assert (d["relief_hmlc_squared"], d["relief_hmlc_normaliser"]) == (r.hmlc_squared, r.hmlc_normaliser)


@pytest.mark.parametrize("config", [c for c in CONFIGS if c.name != "defaults.yaml"], ids=lambda p: p.stem)
def test_example_config_runs(spark, config, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "out"
    code, _, err = run_job(["--config", config, "--trees", 8, "--output", out, "--plot", tmp_path / "p.png"],
                           capsys)
    assert code == 0, err[-2000:]
    run = json.loads((out / "run.json").read_text())
    cfg = yaml.safe_load(config.read_text())
    if cfg.get("method", "ensemble") == "ensemble":
        assert run["params"]["trees"] == 8
        assert run["params"]["ensemble"] == cfg.get("ensemble", "rf")
    else:
        assert run["params"]["method"] == cfg["method"]
    assert any(f.name.startswith("ranking.") for f in out.iterdir())
