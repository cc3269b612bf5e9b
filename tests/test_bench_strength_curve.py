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
    with pytest.raises(ValueError, match="--init-epochs: passes over the --init-dataset, which is not given"):
        main(["--config", str(TINY), "--init-epochs", "2", "--out-dir", str(tmp_path)])
    assert not any(tmp_path.iterdir())


@pytest.fixture
def pinned_clones(tmp_path, monkeypatch):
    """A short-rules heuristic dataset in a fresh Minari root, and the real clone with its time pinned to 0.6 s
    (so that the minutes of a warm run are exact): the list of each clone's (dataset, network widths)."""
    pytest.importorskip("minari")
    import dataclasses

    from blackout_training.datasets import DatasetConfig, cloning, create_dataset

    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    create_dataset("blackout/short/heuristic-v0", DatasetConfig(policy="heuristic", rules="short", episodes=8,
                                                                path="batched", batch=8))
    real, calls = cloning.clone_for_run, []

    def pinned(config, dataset, *args, **kwargs):
        calls.append((dataset, list(config.model.hidden_sizes)))
        return dataclasses.replace(real(config, dataset, *args, **kwargs), seconds=0.6)

    monkeypatch.setattr(cloning, "clone_for_run", pinned)
    return calls


def test_init_dataset_trains_each_config_warm_started_too_with_the_clones_time_counted(tmp_path, pinned_clones, capsys):
    out, figures = tmp_path / "curves", tmp_path / "curve.json"
    args = ["--config", str(TINY), "--init-dataset", "blackout/short/heuristic-v0", "--init-epochs", "1",
            "--minutes", "0.005", "0.02", "0.03", "--deals", "3", "--workers", "1", "--out-dir", str(out),
            "--json", str(figures), "--set", "ppo.total_steps=100000", "--set", "eval.every_updates=0"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    result = json.loads(figures.read_text())
    cold, warm = result["runs"]
    assert (cold["name"], warm["name"]) == ("tiny", "tiny-init")
    assert pinned_clones == [("blackout/short/heuristic-v0", [32, 32])]
    assert [p["minutes"] for p in cold["points"]] == [0.005, 0.02, 0.03]
    # The clone took 0.01 minutes: no network at 0.005; PPO from the clone for 0.01 and 0.02 minutes.
    assert warm["clone_s"] == 0.6 and [p["minutes"] for p in warm["points"]] == [0.02, 0.03]
    assert (out / "tiny-init" / "checkpoint-0.01min.pt").is_file() and (out / "tiny-init" / "checkpoint-0.02min.pt").is_file()
    assert all(p["elapsed_s"] >= 0.6 for p in warm["points"])
    config = yaml.safe_load((out / "tiny-init" / "config.yaml").read_text())
    assert config["model"]["init_checkpoint"] == str(out / "tiny-init-clone.pt")
    assert ("tiny-init at 0.02 min", "tiny at 0.02 min") in {(c["a"], c["b"]) for c in result["comparisons"]}
    assert "the clone took 0.01 min" in printed

    # Run again: the clone and both trainings are reused.
    assert main(args) == 0
    assert len(pinned_clones) == 1 and capsys.readouterr().out.count("already holds this training") == 2


def test_init_dataset_of_another_table_is_refused_before_any_training(tmp_path, monkeypatch):
    pytest.importorskip("minari")
    from blackout_training.datasets import DatasetConfig, create_dataset

    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    create_dataset("blackout/standard/random-v0", DatasetConfig(policy="random", episodes=1))
    out = tmp_path / "curves"
    with pytest.raises(ValueError, match="is not this run's"):
        main(["--config", str(TINY), "--init-dataset", "blackout/standard/random-v0", "--out-dir", str(out)])
    with pytest.raises(ValueError, match="--init-epochs"):
        main(["--config", str(TINY), "--init-dataset", "blackout/standard/random-v0", "--init-epochs", "0",
              "--out-dir", str(out)])
    assert not out.exists()


def test_init_dataset_clone_is_made_again_when_its_record_is_corrupt_or_the_clone_would_differ(tmp_path, pinned_clones,
                                                                                              capsys):
    out = tmp_path / "curves"
    args = ["--config", str(TINY), "--init-dataset", "blackout/short/heuristic-v0", "--init-epochs", "1",
            "--minutes", "0.02", "--deals", "2", "--workers", "1", "--out-dir", str(out),
            "--set", "ppo.total_steps=100000", "--set", "eval.every_updates=0"]
    calls = pinned_clones
    assert main(args) == 0 and [widths for _, widths in calls] == [[32, 32]]
    record = out / "tiny-init-clone.json"

    # A record that cannot be read (an interrupted write, an edit): the clone is made again, PPO from it trained again.
    record.write_text("{not json", encoding="utf-8")
    capsys.readouterr()
    assert main(args) == 0 and [widths for _, widths in calls] == [[32, 32]] * 2
    assert capsys.readouterr().out.count("already holds this training") == 1  # (the cold run only)
    assert json.loads(record.read_text())["seconds"] == 0.6

    # Another network: the old clone cannot start it; a new clone of the run's network is made.
    assert main([*args, "--set", "model.hidden_sizes=[16]"]) == 0
    assert [widths for _, widths in calls] == [[32, 32]] * 2 + [[16]]
    from blackout_training.agents.policy_net import load_checkpoint

    assert load_checkpoint(out / "tiny-init-clone.pt")[0].spec()["hidden_sizes"] == [16]
