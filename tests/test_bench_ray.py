"""``blackout bench ray``: its arguments and configs are checked before anything trains (no Ray needed here)."""

from __future__ import annotations

from pathlib import Path

import pytest
from blackout_training.bench import ray as bench_ray
from blackout_training.ppo.config import ConfigError

ROOT = Path(__file__).resolve().parents[1]


def test_an_rllib_config_that_rllib_cannot_train_is_refused_before_the_native_run(monkeypatch):
    def no_training(*args, **kwargs):
        raise AssertionError("a run trained before the RLlib config was checked")

    monkeypatch.setattr(bench_ray, "_train", no_training)
    # The main job has the oracle critic, which RLlib's module does not have.
    with pytest.raises(ConfigError, match=r"--rllib-runners: .*model.critic: 'oracle'.*--set model.critic=view"):
        bench_ray.main(["--config", str(ROOT / "configs" / "train" / "default.yaml"), "--rllib-runners", "1",
                        "--seconds", "1"])
