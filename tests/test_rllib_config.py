"""The RLlib backend's config and its messages when Ray is missing: no Ray needed to run these."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from blackout_training.agents.policies import load_policy
from blackout_training.cli import main
from blackout_training.ppo.config import ConfigError, config_from_dict, load_config

CONFIGS = Path(__file__).resolve().parents[1] / "configs" / "train"


def test_the_algo_defaults_to_the_native_ppo_and_the_rllib_config_selects_rllib():
    assert config_from_dict({}).algo == "ppo"
    config = load_config(CONFIGS / "rllib.yaml")
    assert config.algo == "rllib_ppo"
    assert config.rllib.address is None and config.rllib.env == "batched"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"algo": "sac"}, "algo: must be one of ppo, rllib_ppo, ppo_ray, got 'sac'"),
        ({"rllib": {"env": "vector"}}, "rllib.env: must be 'batched' or 'aec'"),
        ({"rllib": {"num_env_runners": -1}}, "rllib.num_env_runners: must be >= 0"),
        ({"rllib": {"num_cpus": 0}}, "rllib.num_cpus: must be positive"),
        ({"rllib": {"address": " "}}, "rllib.address: must be HOST:PORT"),
        ({"rllib": {"runners": 2}}, "unknown config key 'rllib.runners'"),
        ({"algo": "rllib_ppo", "model": {"critic": "oracle"}}, "model.critic: 'oracle' trains with algo: ppo or ppo_ray"),
    ],
)
def test_bad_rllib_settings_are_clear_errors(data, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        config_from_dict(data)


def test_ray_address_is_only_for_the_ray_backends(capsys):
    assert main(["train", "--config", str(CONFIGS / "tiny.yaml"), "--ray-address", "127.0.0.1:6379"]) == 2
    assert "--ray-address: only for algo ppo_ray or rllib_ppo" in capsys.readouterr().err


def test_without_ray_train_the_rllib_policy_and_bench_give_a_one_line_install_hint(monkeypatch, tmp_path, capsys):
    # import ray (and any ray.x, even one an earlier test imported) raises ImportError, as when it is not installed
    for name in ["ray", *(name for name in sys.modules if name.startswith("ray."))]:
        monkeypatch.setitem(sys.modules, name, None)
    for name in [name for name in sys.modules if name.startswith("blackout_training.rllib.")]:
        monkeypatch.delitem(sys.modules, name)  # as in a fresh process: these modules import ray when first imported
    code = main(["train", "--config", str(CONFIGS / "tiny.yaml"), "--set", "algo=rllib_ppo",
                 "--set", f"run.out_dir={tmp_path}"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith("blackout train: error: algo rllib_ppo needs Ray RLlib") and 'pip install "blackout-rl[rllib]"' in err
    assert not (tmp_path / "tiny").exists()
    with pytest.raises(ValueError, match=r"the policy rllib:PATH needs Ray RLlib, which is not installed"):
        load_policy(f"rllib:{tmp_path}")
    assert main(["bench", "rllib", "--decisions", "10"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("blackout bench: error: blackout bench rllib needs Ray RLlib") and len(err.splitlines()) == 1


def test_the_rllib_benchmark_checks_its_options_before_starting_ray(capsys):
    assert main(["bench", "rllib", "--runners", "0"]) == 2
    assert "--runners: each count must be at least 1" in capsys.readouterr().err
