"""``model.critic: oracle``: a value head that reads the hidden hands while training, and a policy that never does."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from blackout_training.agents.policies import load_policy
from blackout_training.agents.policy_net import (
    export_policy,
    load_checkpoint,
    make_model,
    oracle_inputs,
    oracle_size,
)
from blackout_training.cli import main
from blackout_training.ppo.config import ConfigError, load_config
from blackout_training.ppo.vec_env import BatchedVecEnv, EngineVecEnv

from blackout_env import BlackoutGame, Rules
from blackout_env.envs.gym_env import BlackoutGymEnv
from blackout_env.game import encoding

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "configs" / "train" / "tiny.yaml"


def test_the_oracle_inputs_are_the_other_seats_hands_clockwise_from_the_acting_seat():
    rules = Rules.preset("standard")
    hands = np.array([[1 << 0 | 1 << 51, 1 << 5, 1 << 12 | 1 << 13, 1 << 40]], dtype=np.uint64)
    row = oracle_inputs(hands, np.array([2]), rules.num_cards).reshape(3, rules.num_cards)
    assert row.dtype == np.uint8 and row.shape == (3, 52)
    assert [list(np.flatnonzero(seat)) for seat in row] == [[40], [0, 51], [5]]  # seats 3, 0, 1
    assert oracle_size(rules) == 3 * 52


@pytest.mark.parametrize("adapter", [BatchedVecEnv, EngineVecEnv])
def test_both_adapters_show_the_hands_the_engine_holds(adapter):
    rules = Rules.preset("short")
    env = adapter(rules, 3)
    batch = env.reset(seed=5)
    for _ in range(4):
        hidden = env.hidden_hands(batch.current_player).reshape(3, rules.num_players - 1, rules.num_cards)
        for game in range(3):
            player = int(batch.current_player[game])
            for k in range(rules.num_players - 1):
                seat = (player + 1 + k) % rules.num_players
                assert set(np.flatnonzero(hidden[game, k])) == set(env.view(game, seat).hand)
        batch = env.step(np.array([np.flatnonzero(m)[0] for m in batch.action_mask]))


def test_the_policy_and_the_view_value_never_read_the_oracle_inputs():
    rules = Rules.preset("short")
    torch.manual_seed(0)
    net = make_model(rules, [32], "cards", 8, oracle=True)
    env = BatchedVecEnv(rules, 8)
    batch = env.reset(seed=1)
    obs, mask = torch.from_numpy(batch.observation), torch.from_numpy(batch.action_mask).bool()
    actions = torch.tensor([int(np.flatnonzero(m)[0]) for m in batch.action_mask])
    hidden = torch.from_numpy(env.hidden_hands(batch.current_player))
    _, logprob, entropy, values = net.get_action_and_value(obs, mask, actions, critic_inputs=hidden)
    _, logprob2, entropy2, values2 = net.get_action_and_value(obs, mask, actions, critic_inputs=1 - hidden)
    _, logprob3, _, view = net.get_action_and_value(obs, mask, actions)
    assert torch.equal(logprob, logprob2) and torch.equal(logprob, logprob3) and torch.equal(entropy, entropy2)
    assert torch.equal(values[:, 1], values2[:, 1]) and torch.equal(values[:, 1], view)  # the view critic
    assert not torch.equal(values[:, 0], values2[:, 0])  # the oracle critic reads them


def test_an_oracle_run_trains_and_ships_a_network_that_plays_from_the_view_alone(tmp_path):
    out = tmp_path / "runs"
    assert main(["train", "--config", str(TINY), "--set", f"run.out_dir={out}", "--set", "model.critic=oracle",
                 "--set", "ppo.total_steps=600", "--set", "eval.final_deals=2"]) == 0
    model, rules, payload = load_checkpoint(out / "tiny" / "checkpoint.pt")
    assert model.oracle_size == oracle_size(rules) and payload["oracle_size"] == model.oracle_size
    shipped = export_policy(out / "tiny" / "checkpoint.pt", tmp_path / "shipped.pt")
    small, _, saved = load_checkpoint(shipped)
    assert small.oracle_size == 0 and not any(key.startswith("oracle_") for key in saved["model_state"])
    with torch.no_grad():  # the same play and view value as the trained network
        obs = torch.from_numpy(BatchedVecEnv(rules, 4).reset(seed=2).observation)
        assert torch.equal(small.logits(obs), model.logits(obs)) and torch.equal(small.get_value(obs), model.get_value(obs))

    # It plays through act(view) (a view holds no other seat's hand) and through the Gym env's observation.
    bot = load_policy(f"ppo:{shipped}", "short", seed=0)
    game = BlackoutGame("short", seed=3)
    while not game.is_over:
        view = game.view(game.current_player)
        assert not hasattr(view, "hands")
        action = bot.act(view)
        assert action in game.legal_actions()
        game.step(action)
    env = BlackoutGymEnv(rules="short", opponents="random")
    obs, info = env.reset(seed=4)
    assert obs.shape == (encoding.observation_size(rules),)
    done = False
    while not done:
        action = int(bot.act_batch(obs[None], env.action_masks()[None])[0])
        obs, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated


def test_an_oracle_critic_needs_the_rules_sized_observation():
    with pytest.raises(ConfigError, match="model.critic: 'oracle'"):
        load_config(ROOT / "configs" / "train" / "generalist.yaml", ["model.critic=oracle"])
    with pytest.raises(ConfigError, match="model.critic"):
        load_config(TINY, ["model.critic=omniscient"])


def test_checkpoint_minutes_keep_the_network_at_each_mark(tmp_path):
    out = tmp_path / "runs"
    assert main(["train", "--config", str(TINY), "--set", f"run.out_dir={out}", "--set", "ppo.total_steps=100000",
                 "--set", "run.time_limit_minutes=0.05", "--set", "run.checkpoint_minutes=[0.01, 0.02]",
                 "--set", "eval.final_deals=0"]) == 0
    run_dir = out / "tiny"
    first, second = (load_checkpoint(run_dir / f"checkpoint-{m}min.pt")[2]["extra"] for m in ("0.01", "0.02"))
    assert 0.6 <= first["elapsed_s"] <= second["elapsed_s"] and 1.2 <= second["elapsed_s"]
    assert first["global_step"] < second["global_step"]
    with pytest.raises(ConfigError, match=r"run.checkpoint_minutes\[0\]"):
        load_config(TINY, ["run.checkpoint_minutes=[0]"])
