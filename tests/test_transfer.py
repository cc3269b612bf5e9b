"""A rules-sized network carried over to the universal observation acts exactly as before at its table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from blackout_training.agents.policy_net import SPECIALIST_CHECKPOINT, load_checkpoint, make_model, save_checkpoint
from blackout_training.ppo.config import load_config
from blackout_training.ppo.trainer import train
from blackout_training.ppo.transfer import universal_from_rules

from blackout_env import BlackoutGame, Rules
from blackout_env.game import encoding
from blackout_env.game.universal import (
    universal_action_mask,
    universal_actions,
    universal_columns,
    universal_observation,
)

ROOT = Path(__file__).resolve().parents[1]


def states(rules: Rules, seed: int) -> list:
    """Every view of the seat to act along one random match."""
    rng = np.random.default_rng(seed)
    game = BlackoutGame(rules, seed=seed)
    views = []
    while game.phase != "game_over":
        views.append(game.view(game.current_player))
        game.step(int(rng.choice(game.legal_actions())))
    return views


@pytest.mark.parametrize("preset", ["standard", "jokers", "short"])
def test_universal_columns_say_where_every_rules_sized_entry_lands(preset):
    rules = Rules.preset(preset)
    source, destination, scale = universal_columns(rules)
    assert np.array_equal(np.sort(source), np.arange(encoding.observation_size(rules)))
    for view in states(rules, seed=2)[::7]:
        rules_sized = encoding.encode(view)
        universal = universal_observation(rules_sized, rules)
        np.testing.assert_allclose(universal[destination], scale * rules_sized[source], atol=1e-6)


@pytest.mark.parametrize("arch", ["cards", "mlp"])
@pytest.mark.parametrize("preset", ["standard", "jokers"])
def test_the_carried_over_network_gives_the_same_policy_and_value_at_its_table(arch, preset):
    rules = Rules.preset(preset)
    torch.manual_seed(0)
    model = make_model(rules, [24, 24], arch, card_width=6)
    for parameter in model.parameters():  # weights far from their small initial values
        torch.nn.init.normal_(parameter, std=0.3)
    universal = universal_from_rules(model, rules)
    assert universal.observation == "universal"
    views = states(rules, seed=1)
    rules_obs = torch.as_tensor(np.stack([encoding.encode(view) for view in views]))
    universal_obs = torch.as_tensor(universal_observation(rules_obs.numpy(), rules))
    masks = np.stack([encoding.action_mask(view) for view in views])
    universal_masks = np.stack([universal_action_mask(mask, rules) for mask in masks])
    with torch.no_grad():
        before = torch.log_softmax(model.logits(rules_obs, torch.as_tensor(masks)), dim=1)
        after = torch.log_softmax(universal.logits(universal_obs, torch.as_tensor(universal_masks)), dim=1)
        values = model.get_value(rules_obs), universal.get_value(universal_obs)
    columns = torch.as_tensor(universal_actions(np.arange(rules.num_actions), rules).astype(np.int64))
    legal = torch.as_tensor(masks.astype(bool))
    torch.testing.assert_close(after[:, columns][legal], before[legal], atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(values[1], values[0], atol=1e-4, rtol=1e-4)


def test_the_shipped_specialist_carried_over_picks_the_same_actions():
    model, rules, _ = load_checkpoint(SPECIALIST_CHECKPOINT)
    universal = universal_from_rules(model, rules)
    views = states(rules, seed=3)
    rules_obs = torch.as_tensor(np.stack([encoding.encode(view) for view in views]))
    masks = np.stack([encoding.action_mask(view) for view in views])
    universal_masks = np.stack([universal_action_mask(mask, rules) for mask in masks])
    with torch.no_grad():
        before = model.greedy_action(rules_obs, torch.as_tensor(masks)).numpy()
        after = universal.greedy_action(torch.as_tensor(universal_observation(rules_obs.numpy(), rules)),
                                        torch.as_tensor(universal_masks)).numpy()
    assert np.array_equal(after, universal_actions(before, rules))


def test_a_universal_network_cannot_be_carried_over_again():
    rules = Rules.preset("standard")
    with pytest.raises(ValueError, match="already reads the universal observation"):
        universal_from_rules(make_model(rules, [8], "mlp", observation="universal"), rules)


def test_a_network_for_other_rules_is_refused_naming_both_action_counts():
    jokers = make_model(Rules.preset("jokers"), [8], "mlp")
    with pytest.raises(ValueError, match=f"{jokers.num_actions} actions, the rules {Rules.preset('standard').num_actions}"):
        universal_from_rules(jokers, Rules.preset("standard"))


@pytest.mark.parametrize("critic", ["view", "oracle"])
def test_a_universal_run_starts_from_a_rules_sized_checkpoint(tmp_path, critic):
    rules = Rules.preset("short")
    torch.manual_seed(0)
    specialist = make_model(rules, [16], "cards", card_width=4, oracle=critic == "oracle")
    path = save_checkpoint(tmp_path / "specialist.pt", specialist, rules)
    messages: list[str] = []
    config = load_config(ROOT / "configs" / "train" / "tiny.yaml", [
        f"run.out_dir={tmp_path}", "run.name=carried", "run.progress_bar=false", "run.threads=1",
        "env.rules=short", "env.observation=universal", "env.num_envs=8", "ppo.rollout_steps=8",
        "ppo.total_steps=64", "model.hidden_sizes=[16]", "model.arch=cards", "model.card_width=4",
        f"model.init_checkpoint={path}", "eval.every_updates=0", "eval.final_deals=0", "ppo.lr=1e-9",
        f"model.critic={critic}",
    ])
    result = train(config, log=messages.append)
    assert any("starting from the weights" in message for message in messages)
    trained, _, _ = load_checkpoint(result.checkpoint, "jokers")  # universal: plays other tables too
    expected = universal_from_rules(specialist, rules)
    assert expected.oracle_size == 0  # (the rules-sized oracle critic reads another layout: not carried)
    assert trained.oracle_size == (6 * 54 if critic == "oracle" else 0)  # ... a universal oracle run starts a fresh one
    for key, value in expected.state_dict().items():  # a learning rate of 1e-9 barely moves a weight
        torch.testing.assert_close(trained.state_dict()[key], value, atol=1e-5, rtol=0)


def test_a_network_for_another_table_size_is_refused_naming_the_input_sizes():
    five = Rules.preset("standard").replace(num_players=5)
    standard = Rules.preset("standard")
    network = make_model(five, [8], "mlp")
    with pytest.raises(ValueError, match=f"reads {network.observation_size} inputs.*has {encoding.observation_size(standard)}"):
        universal_from_rules(network, standard)
