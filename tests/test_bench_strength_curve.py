"""``blackout bench strength-curve``: train each config once, evaluate its networks at each minute, pair them by deal."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from blackout_training.bench.strength_curve import main, paired

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "configs" / "train" / "tiny.yaml"


def test_paired_differences_are_taken_deal_by_deal():
    a, b = np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.0, 1.0, 2.0, 3.0])
    result = paired(a, b)
    assert result == {"mean": 1.0, "low": 1.0, "high": 1.0}  # the same gap on every deal: no spread
    assert paired(a, b[::-1])["low"] < paired(a, b[::-1])["mean"] < paired(a, b[::-1])["high"]


def test_two_configs_are_trained_evaluated_on_the_same_deals_plotted_and_reused(tmp_path, capsys):
    other = tmp_path / "tiny-oracle.yaml"
    data = yaml.safe_load(TINY.read_text())
    data["model"]["critic"] = "oracle"
    other.write_text(yaml.safe_dump(data))
    out, figures = tmp_path / "curves", tmp_path / "curve.json"
    args = ["--config", str(TINY), "--config", str(other), "--minutes", "0.01", "0.02", "--deals", "3",
            "--workers", "1", "--out-dir", str(out), "--json", str(figures), "--set", "ppo.total_steps=100000",
            "--set", "eval.every_updates=0"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    result = json.loads(figures.read_text())
    assert [run["name"] for run in result["runs"]] == ["tiny", "tiny-oracle"]
    for run in result["runs"]:
        assert [p["minutes"] for p in run["points"]] == [0.01, 0.02]
        first, second = run["points"]
        assert 0 < first["decisions"] < second["decisions"] and len(first["per_deal_difference"]) == 3
        assert first["low"] <= first["mean"] <= first["high"]
    pairs = {(c["a"], c["b"]) for c in result["comparisons"]}
    assert ("tiny-oracle at 0.01 min", "tiny at 0.02 min") in pairs and ("tiny-oracle at 0.01 min", "tiny at 0.01 min") in pairs
    assert (out / "strength_curve.png").stat().st_size > 0
    assert "paired by deal" in printed and "tiny-oracle" in printed

    # Run again: the trainings are reused (same config, every checkpoint there) and give the same figures.
    stamp = (out / "tiny" / "checkpoint-0.01min.pt").stat().st_mtime_ns
    assert main(args) == 0
    assert "already holds this training" in capsys.readouterr().out
    assert (out / "tiny" / "checkpoint-0.01min.pt").stat().st_mtime_ns == stamp
    assert json.loads(figures.read_text())["runs"] == result["runs"]


def test_bad_arguments_are_refused_before_any_training(tmp_path):
    with pytest.raises(ValueError, match="two configs named 'tiny'"):
        main(["--config", str(TINY), "--config", str(TINY), "--out-dir", str(tmp_path)])
    with pytest.raises(ValueError, match="--minutes"):
        main(["--config", str(TINY), "--minutes", "0", "--out-dir", str(tmp_path)])
    with pytest.raises(ValueError, match="--deals"):
        main(["--config", str(TINY), "--deals", "1", "--out-dir", str(tmp_path)])
    assert not any(tmp_path.iterdir())
