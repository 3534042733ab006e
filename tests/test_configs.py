"""The example configs in conf/ run on the shared datasets (with fewer trees: the command line wins)."""
import json
import os
from pathlib import Path

import pytest
import yaml

from test_end_to_end import run_job

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "conf").glob("*.yaml"))


def test_defaults_match_the_command_line_defaults():
    from spark_fr.cli import DEFAULTS
    from spark_fr.ensemble.params import EnsembleParams

    d = yaml.safe_load((ROOT / "conf" / "defaults.yaml").read_text())
    p = EnsembleParams()
    assert d["trees"] == DEFAULTS["trees"] == p.trees
    assert d["ensemble"] == DEFAULTS["ensemble"] == p.ensemble
    assert d["scores"] == p.scores and d["min_samples_leaf"] == p.min_samples_leaf
    assert d["seed"] == DEFAULTS["seed"] == p.seed


@pytest.mark.parametrize("config", [c for c in CONFIGS if c.name != "defaults.yaml"], ids=lambda p: p.stem)
def test_example_config_runs(spark, config, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "out"
    code, _, err = run_job(["--config", config, "--trees", 8, "--output", out, "--plot", tmp_path / "p.png"],
                           capsys)
    assert code == 0, err[-2000:]
    run = json.loads((out / "run.json").read_text())
    cfg = yaml.safe_load(config.read_text())
    assert run["params"]["trees"] == 8
    assert run["params"]["ensemble"] == cfg.get("ensemble", "rf")
    assert any(f.name.startswith("ranking.") for f in out.iterdir())
