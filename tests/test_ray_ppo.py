"""Distributed native PPO (``algo: ppo_ray``): samplers in Ray actors on a local multi-node Ray cluster.

Needs Ray (the ``rllib`` extra); the tests that start Ray are skipped without it. The
tests that need no Ray running come first: the address test needs this process not yet
connected (the shared two-node cluster is started by the first test that uses it).
"""

from __future__ import annotations

import csv
import importlib.util
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from blackout_training.agents.policies import load_policy
from blackout_training.cli import main
from blackout_training.evaluation.tournament import evaluate_against
from blackout_training.ppo.config import ConfigError, load_config
from blackout_training.ppo.trainer import SamplerLostError, train

from blackout_env import Rules

TINY = str(Path(__file__).resolve().parents[1] / "configs" / "train" / "tiny.yaml")
needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs Ray (the rllib extra)")
COMPARED = ("global_step", "policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction", "explained_variance",
            "hand_score", "bid_made_rate")


def tiny(out_dir: Path, *overrides: str):
    """The tiny run, distributed, without a time limit (so the annealed learning rate depends on decisions only)."""
    return load_config(TINY, [f"run.out_dir={out_dir}", "algo=ppo_ray", "run.time_limit_minutes=0",
                              "eval.every_updates=0", "eval.final_deals=0", "ray.start_timeout_s=300", *overrides])


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


# ------------------------------------------------------- bad input, before any Ray runs here
def test_without_ray_the_distributed_trainer_says_what_to_install(monkeypatch, tmp_path, capsys):
    for name in ["ray", *(name for name in sys.modules if name.startswith("ray."))]:
        monkeypatch.setitem(sys.modules, name, None)  # import ray raises ImportError, as when it is not installed
    code = main(["train", "--config", TINY, "--set", "algo=ppo_ray", "--set", f"run.out_dir={tmp_path}"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith("blackout train: error: algo ppo_ray needs Ray") and 'pip install "blackout-rl[rllib]"' in err
    assert not (tmp_path / "tiny").exists()


@needs_ray
def test_a_ray_address_where_nothing_answers_is_a_clear_error_within_seconds(tmp_path, capsys):
    import ray

    if ray.is_initialized():
        pytest.skip("this process is already connected to Ray (the test runs before the cluster tests)")
    code = main(["train", "--config", TINY, "--set", "algo=ppo_ray", "--set", f"run.out_dir={tmp_path}",
                 "--ray-address", "127.0.0.1:9"])
    assert code == 2
    err = capsys.readouterr().err
    assert "Ray address (--ray-address, ray.address or rllib.address) '127.0.0.1:9': no Ray cluster answers there" in err
    assert not (tmp_path / "tiny").exists()


def test_bad_ray_settings_are_refused_naming_the_key():
    for override, message in [("ray.num_samplers=0", "ray.num_samplers: must be at least 1"),
                              ("ray.sampler_cpus=0", "ray.sampler_cpus: must be positive"),
                              ("ray.workers=2", "unknown config key 'ray.workers'")]:
        with pytest.raises(ConfigError, match=message):
            load_config(TINY, ["algo=ppo_ray", override])


@needs_ray
def test_the_workers_of_a_ray_started_here_run_at_the_trainers_priority():
    """Ray nices its workers to 15 by default: beside one busy process the samplers got a few percent of a core."""
    script = """
import os, ray
from blackout_training.ppo.ray_cluster import connect_ray

@ray.remote(num_cpus=1)
def niceness():
    return os.nice(0)

assert connect_ray(None, 1, what="test", needs_rllib=False)
print(ray.get(niceness.remote()), os.nice(0), "RAY_worker_niceness" in os.environ)
ray.shutdown()
"""
    env = {key: value for key, value in os.environ.items() if key != "RAY_worker_niceness"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    worker, driver, left_set = done.stdout.split()[-3:]
    assert worker == driver and left_set == "False"


# ------------------------------------------------------------- on a two-node Ray cluster
@pytest.fixture(scope="module")
def cluster():
    """Ray's multi-node test cluster on this machine: two nodes of 2 CPUs; this process joins it."""
    pytest.importorskip("ray")
    import ray
    from ray.cluster_utils import Cluster

    local = Cluster(initialize_head=True, head_node_args={"num_cpus": 2})
    local.add_node(num_cpus=2)
    ray.init(address=local.address, log_to_driver=False)
    yield local
    ray.shutdown()
    local.shutdown()


UNIVERSAL_TABLES = ("env.observation=universal", "env.tables=[short, jokers]", "env.table_groups=2")


@pytest.mark.parametrize(("critic", "tables"), [("view", ()), ("oracle", ()), ("oracle", UNIVERSAL_TABLES)],
                         ids=["view", "oracle", "oracle-tables"])
def test_one_sampler_trains_exactly_as_the_native_trainer_and_its_checkpoint_plays(cluster, tmp_path, critic, tables):
    steps = ["ppo.total_steps=768", "ray.num_samplers=1", f"model.critic={critic}", *tables]
    native = train(tiny(tmp_path, *steps, "algo=ppo", "run.name=native"), log=lambda *_: None)
    distributed = train(tiny(tmp_path, *steps, "run.name=ray"), log=lambda *_: None)
    assert distributed.updates == native.updates == 3
    for path in ("config.yaml", "metrics.csv", "eval.csv", "checkpoint.pt", "tensorboard"):
        assert (distributed.run_dir / path).exists(), path
    ours, theirs = read_csv(distributed.run_dir / "metrics.csv"), read_csv(native.run_dir / "metrics.csv")
    assert [{k: row[k] for k in COMPARED} for row in ours] == [{k: row[k] for k in COMPARED} for row in theirs]
    rules = Rules.resolve("short")
    bot = load_policy(f"ppo:{distributed.checkpoint}", rules)
    assert evaluate_against(bot, "random", rules, 2, seed=0)["deals"] == 2


def test_samplers_spread_over_the_nodes_and_a_league_trains(cluster, tmp_path):
    lines: list[str] = []
    config = tiny(tmp_path, "ray.num_samplers=2", "ppo.total_steps=600", "opponents.mode=pool",
                  "opponents.snapshot_every_updates=1", "opponents.bot_fraction=0.3", "opponents.bots=[random]")
    result = train(config, log=lines.append)
    assert any("2 samplers on 2 Ray node(s)" in line for line in lines), lines
    rows = read_csv(result.run_dir / "metrics.csv")
    # Two samplers of 16 games x 16 steps; in a league only the learner's seats are data.
    assert 0 < int(rows[0]["global_step"]) < 2 * 16 * 16
    import torch

    pool = torch.load(result.checkpoint, weights_only=False)["extra"]["pool"]
    assert len(pool) == min(len(rows), config.opponents.pool_size) >= 2  # a snapshot a update, sent to both samplers


def test_more_samplers_than_free_cpus_is_refused_before_anything_is_written(cluster, tmp_path):
    with pytest.raises(ConfigError, match=r"ray.num_samplers: 9 samplers of 1 CPU each need 9 CPUs, but .* has 4 free"):
        train(tiny(tmp_path, "ray.num_samplers=9"), log=lambda *_: None)
    assert not (tmp_path / "tiny").exists()


def test_a_sampler_that_dies_stops_the_run_with_its_updates_saved_and_resume_goes_on(cluster, tmp_path):
    config = tiny(tmp_path, "ray.num_samplers=2", "ppo.total_steps=1536", "run.checkpoint_every_updates=100")

    def kill_a_sampler(record: dict) -> None:
        if record["update"] == 2:
            os.kill(record["samplers"][1]["pid"], signal.SIGKILL)

    with pytest.raises(SamplerLostError, match=r"sampler 1 of 2 died .* after update 2 .*--resume"):
        train(config, log=lambda *_: None, on_update=kill_a_sampler)
    import torch

    assert torch.load(tmp_path / "tiny" / "checkpoint.pt", weights_only=False)["extra"]["update"] == 2
    result = train(config, resume=True, log=lambda *_: None)
    rows = read_csv(result.run_dir / "metrics.csv")
    assert [int(row["update"]) for row in rows] == list(range(1, result.updates + 1))
    assert result.global_step >= 1536 and result.updates > 2
