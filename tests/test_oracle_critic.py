"""``model.critic: oracle``: a value head that reads the hidden hands while training, and a policy that never does."""

from __future__ import annotations

import csv
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
    table_oracle_inputs,
    universal_oracle_inputs,
)
from blackout_training.cli import main
from blackout_training.ppo.config import ConfigError, load_config
from blackout_training.ppo.tables import TablesVecEnv
from blackout_training.ppo.vec_env import BatchedVecEnv, EngineVecEnv

from blackout_env import BlackoutGame, Rules
from blackout_env.envs.gym_env import BlackoutGymEnv
from blackout_env.game import encoding
from blackout_env.game.universal import (
    MAX_PLAYERS,
    UNIVERSAL_CARDS,
    rules_actions,
    universal_action_mask,
    universal_size,
)

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


def test_the_universal_oracle_inputs_pad_the_other_seats_to_six_rows_of_54_cards():
    rules = Rules.preset("jokers").replace(num_players=3)
    hands = np.array([[1 << 0 | 1 << 52, 1 << 53 | 1 << 51, 1 << 7]], dtype=np.uint64)
    row = universal_oracle_inputs(hands, np.array([1])).reshape(MAX_PLAYERS - 1, UNIVERSAL_CARDS)
    assert row.dtype == np.uint8
    assert [list(np.flatnonzero(seat)) for seat in row] == [[7], [0, 52], [], [], [], []]  # seats 2, 0; no seat 3..6
    assert oracle_size(rules, "universal") == oracle_size(Rules.preset("standard"), "universal") == 6 * 54
    # The same hands as the rules-sized inputs, in the same order: only the padding differs.
    for rules in (Rules.preset("jokers").replace(num_players=3), Rules.preset("standard").replace(num_players=3)):
        small = table_oracle_inputs(hands & np.uint64((1 << rules.num_cards) - 1), np.array([1]), rules)
        wide = table_oracle_inputs(hands & np.uint64((1 << rules.num_cards) - 1), np.array([1]), rules, "universal")
        assert np.array_equal(wide.reshape(6, 54)[:2, : rules.num_cards], small.reshape(2, rules.num_cards))
        assert not wide.reshape(6, 54)[2:].any() and not wide.reshape(6, 54)[:, rules.num_cards :].any()


def hidden_rows_match_the_hands(env, batch, players) -> None:
    """Every game's universal oracle inputs hold, row by row and card by card, the hand of each seat after the
    acting one (clockwise), as the engine deals it to that seat's view; the rows past the table are 0."""
    hidden = env.hidden_hands(batch.current_player)
    assert hidden.dtype == np.uint8 and hidden.shape == (env.num_envs, (MAX_PLAYERS - 1) * UNIVERSAL_CARDS)
    rows = hidden.reshape(env.num_envs, MAX_PLAYERS - 1, UNIVERSAL_CARDS)
    for game in range(env.num_envs):
        n, player = int(players[game]), int(batch.current_player[game])
        for k in range(MAX_PLAYERS - 1):
            expected = np.zeros(UNIVERSAL_CARDS, dtype=np.uint8)
            if k < n - 1:
                expected[list(env.view(game, (player + 1 + k) % n).hand)] = 1
            assert np.array_equal(rows[game, k], expected), (game, k)


def random_legal_actions(batch, rng) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(mask)) for mask in batch.action_mask])


UNIVERSAL_TABLES = [("jokers", 3, 2), ("jokers", 4, 2), ("jokers", 5, 1), ("short", 6, 2), ("short", 7, 1),
                    ("standard", 7, 0), ("up-and-down", 5, 0)]


@pytest.mark.parametrize("adapter", [BatchedVecEnv, EngineVecEnv])
@pytest.mark.parametrize(("preset", "players", "jokers"), UNIVERSAL_TABLES)
def test_universal_oracle_inputs_are_the_engines_hidden_hands_at_every_table_size(adapter, preset, players, jokers):
    rules = Rules.preset(preset).replace(num_players=players, jokers=jokers)
    env = adapter(rules, 3, "universal")
    batch, rng = env.reset(seed=players), np.random.default_rng(players)
    if adapter is EngineVecEnv:  # the reference engine's own hands, not only its views
        hidden = env.hidden_hands(batch.current_player).reshape(3, MAX_PLAYERS - 1, UNIVERSAL_CARDS)
        for game, state in enumerate(env.games):
            seats = [(state.current_player + 1 + k) % players for k in range(players - 1)]
            assert [set(np.flatnonzero(row)) for row in hidden[game, : players - 1]] == [set(state.hands[s]) for s in seats]
    for _ in range(3 * players):
        hidden_rows_match_the_hands(env, batch, np.full(3, players))
        batch = env.step(random_legal_actions(batch, rng))


def test_a_table_distribution_shows_every_tables_hidden_hands_in_the_universal_layout():
    env = TablesVecEnv(["short", "jokers", "random", "preset"], 8, 4, Rules.preset("short"))
    batch, rng = env.reset(seed=2), np.random.default_rng(2)
    first_group = env.groups[0]
    for _ in range(60):  # past the end of the short table's match (56 decisions): that group has a new table
        hidden_rows_match_the_hands(env, batch, env.players)
        batch = env.step(random_legal_actions(batch, rng))
    assert env.groups[0] is not first_group  # (a group starts a new batched engine with its next table)
    hidden_rows_match_the_hands(env, batch, env.players)


@pytest.mark.parametrize("observation", ["rules", "universal"])
def test_the_policy_and_the_view_value_never_read_the_oracle_inputs(observation):
    rules = Rules.preset("short")
    torch.manual_seed(0)
    net = make_model(rules, [32], "cards", 8, observation, oracle=True)
    env = BatchedVecEnv(rules, 8, observation)
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


def shipped_copy(checkpoint: Path, out: Path, model, obs: torch.Tensor) -> Path:
    """``export_policy`` of ``checkpoint``: no oracle weight left, the same play and view value as ``model`` on ``obs``."""
    shipped = export_policy(checkpoint, out)
    small, _, saved = load_checkpoint(shipped)
    assert small.oracle_size == 0 and not any(key.startswith("oracle_") for key in saved["model_state"])
    with torch.no_grad():
        assert torch.equal(small.logits(obs), model.logits(obs)) and torch.equal(small.get_value(obs), model.get_value(obs))
    return shipped


def plays_from_views(bot, rules) -> None:
    """A whole game of ``bot`` in every seat through ``act(view)`` (a view holds no other seat's hand), every action legal."""
    game = BlackoutGame(rules, seed=3)
    while not game.is_over:
        view = game.view(game.current_player)
        assert not hasattr(view, "hands")
        action = bot.act(view)
        assert action in game.legal_actions()
        game.step(action)


def test_an_oracle_run_trains_and_ships_a_network_that_plays_from_the_view_alone(tmp_path):
    out = tmp_path / "runs"
    assert main(["train", "--config", str(TINY), "--set", f"run.out_dir={out}", "--set", "model.critic=oracle",
                 "--set", "ppo.total_steps=600", "--set", "eval.final_deals=2"]) == 0
    model, rules, payload = load_checkpoint(out / "tiny" / "checkpoint.pt")
    assert model.oracle_size == oracle_size(rules) and payload["oracle_size"] == model.oracle_size
    obs = torch.from_numpy(BatchedVecEnv(rules, 4).reset(seed=2).observation)
    shipped = shipped_copy(out / "tiny" / "checkpoint.pt", tmp_path / "shipped.pt", model, obs)

    # It plays through act(view) and through the Gym env's observation.
    bot = load_policy(f"ppo:{shipped}", "short", seed=0)
    plays_from_views(bot, "short")
    env = BlackoutGymEnv(rules="short", opponents="random")
    obs, info = env.reset(seed=4)
    assert obs.shape == (encoding.observation_size(rules),)
    done = False
    while not done:
        action = int(bot.act_batch(obs[None], env.action_masks()[None])[0])
        obs, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated


def test_an_oracle_critic_trains_with_the_universal_observation_and_a_table_distribution():
    config = load_config(ROOT / "configs" / "train" / "generalist.yaml", ["model.critic=oracle"])
    assert config.model.critic == "oracle" and config.env.tables and config.env.observation == "universal"
    assert load_config(TINY, ["model.critic=oracle", "env.observation=universal"]).model.critic == "oracle"
    with pytest.raises(ConfigError, match="model.critic"):
        load_config(TINY, ["model.critic=omniscient"])


def test_an_oracle_run_over_several_tables_resumes_and_ships_a_network_that_plays_from_the_view_alone(tmp_path):
    out = tmp_path / "runs"
    args = ["train", "--config", str(TINY), "--set", f"run.out_dir={out}", "--set", "model.critic=oracle",
            "--set", "env.observation=universal", "--set", "env.tables=[short, jokers, random, preset]",
            "--set", "env.table_groups=4", "--set", "eval.final_deals=2", "--set", "eval.every_updates=100"]
    assert main([*args, "--set", "ppo.total_steps=500"]) == 0
    run_dir = out / "tiny"
    first = read_rows(run_dir / "metrics.csv")
    assert main([*args, "--set", "ppo.total_steps=900", "--resume"]) == 0
    rows = read_rows(run_dir / "metrics.csv")
    assert rows[: len(first)] == first and len(rows) > len(first)
    for row in rows:
        assert all(np.isfinite(float(row[key])) for key in ("policy_loss", "value_loss", "entropy", "approx_kl"))

    model, rules, payload = load_checkpoint(run_dir / "checkpoint.pt")
    assert model.observation == "universal" and model.oracle_size == oracle_size(rules, "universal") == 6 * 54
    assert payload["oracle_size"] == model.oracle_size and payload["extra"]["update"] == len(rows)
    obs = torch.from_numpy(BatchedVecEnv(Rules.preset("jokers"), 4, "universal").reset(seed=2).observation)
    assert obs.shape[1] == universal_size()
    shipped = shipped_copy(run_dir / "checkpoint.pt", tmp_path / "shipped.pt", model, obs)

    # Both the training checkpoint and the shipped copy play from a view alone, at tables of any size.
    for path in (run_dir / "checkpoint.pt", shipped):
        for table in (Rules.preset("jokers").replace(num_players=5), Rules.preset("short").replace(num_players=7)):
            bot = load_policy(f"ppo:{path}", table, seed=0)
            plays_from_views(bot, table)
    jokers = Rules.preset("jokers")  # and from the Gym env's universal observation (its actions stay the rules' own)
    env = BlackoutGymEnv(rules=jokers, opponents="random", observation="universal")
    obs, info = env.reset(seed=4)
    done = False
    while not done:
        mask = universal_action_mask(env.action_masks()[None], jokers)
        action = int(rules_actions(bot.act_batch(obs[None], mask), jokers)[0])
        obs, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as file:
        return list(csv.DictReader(file))


def test_checkpoint_minutes_keep_the_network_at_each_mark(tmp_path):
    out = tmp_path / "runs"
    assert main(["train", "--config", str(TINY), "--set", f"run.out_dir={out}", "--set", "ppo.total_steps=100000",
                 "--set", "run.time_limit_minutes=0.05", "--set", "run.checkpoint_minutes=[0.01, 0.02]",
                 "--set", "eval.final_deals=0"]) == 0
    run_dir = out / "tiny"
    first, second = (load_checkpoint(run_dir / f"checkpoint-{m}min.pt")[2]["extra"] for m in ("0.01", "0.02"))
    assert 0.6 <= first["elapsed_s"] <= second["elapsed_s"] and 1.2 <= second["elapsed_s"]
    # Each mark keeps the network of the first update that ends past it; on a loaded machine one slow update can pass
    # both marks, and then both files hold that network (saved once past the second mark too).
    assert first["global_step"] <= second["global_step"]
    if first["global_step"] == second["global_step"]:
        assert first["elapsed_s"] >= 1.2
    with pytest.raises(ConfigError, match=r"run.checkpoint_minutes\[0\]"):
        load_config(TINY, ["run.checkpoint_minutes=[0]"])
