"""The universal observation: one size for every rule set, absent seats marked, the rules in the vector,
and one network trained on one table (or on many) that acts at every other table."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from blackout_training.agents.card_features import CardFeatures
from blackout_training.agents.policy_net import CheckpointError, load_checkpoint, load_policy_bot
from blackout_training.ppo.config import ConfigError, load_config
from blackout_training.ppo.returns import hand_scale
from blackout_training.ppo.tables import TablesVecEnv, draw_rules, match_steps, random_rules
from blackout_training.ppo.trainer import train

import blackout_env
from blackout_env import BlackoutGame, Rules, preset_names
from blackout_env.batched import BatchedBlackout
from blackout_env.envs.vector_env import BlackoutVectorEnv
from blackout_env.game import encoding
from blackout_env.game.universal import (
    MAX_HAND,
    MAX_PLAYERS,
    UNIVERSAL_NUM_ACTIONS,
    rules_actions,
    universal_action_mask,
    universal_actions,
    universal_bounds,
    universal_layout,
    universal_observation,
    universal_size,
)

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
GENERALIST = ROOT / "configs" / "train" / "generalist.yaml"
TABLES = [Rules.preset(name) for name in preset_names()] + [
    Rules.preset("short").replace(num_players=players) for players in range(3, 8)
]
BLOCKS = {block.name: block for block in universal_layout()}


def table_id(rules: Rules) -> str:
    return f"{rules.num_players}p-{len(rules.hand_sizes)}h-{rules.jokers}j"


def universal_block(vector: np.ndarray, name: str) -> np.ndarray:
    block = BLOCKS[name]
    return vector[block.offset : block.offset + block.size].reshape(block.shape)


def random_states(rules: Rules, seed: int, count: int = 12) -> list:
    """Views of the seat to act along one random game (bidding, playing, across hands)."""
    rng = np.random.default_rng(seed)
    game = BlackoutGame(rules, seed=seed)
    views = []
    while game.phase != "game_over" and len(views) < count * 4:
        views.append(game.view(game.current_player))
        game.step(int(rng.choice(game.legal_actions())))
    views.append(game.view(0))
    return views[:: max(1, len(views) // count)] + [views[-1]]


# ------------------------------------------------------------------ one size
@pytest.mark.parametrize("rules", TABLES, ids=table_id)
def test_the_universal_observation_has_one_size_at_every_table(rules: Rules):
    env = blackout_env.env(rules=rules, observation="universal")
    env.reset(seed=0)
    observation = env.observe(env.agent_selection)["observation"]
    assert observation.shape == (universal_size(),) == env.observation_space("player_0")["observation"].shape
    batched = BatchedBlackout(rules, 2, seed=0, observation="universal").reset()
    assert batched.observation.shape == (2, universal_size())
    gym_env = gym.make("blackout/Blackout-v0", rules=rules, observation="universal", opponents="random")
    gym_observation, _ = gym_env.reset(seed=0)
    assert gym_observation.shape == gym_env.observation_space.shape == (universal_size(),)
    assert gym_env.observation_space.contains(gym_observation)
    vector_env = gym.make_vec("blackout/Blackout-v0", num_envs=3, vectorization_mode="vector_entry_point",
                              rules=rules, observation="universal", opponents="random")
    vector_observation, _ = vector_env.reset(seed=0)
    assert vector_observation.shape == vector_env.observation_space.shape == (3, universal_size())
    assert vector_env.single_observation_space.contains(vector_observation[0])


def test_the_rules_sized_observation_stays_the_default():
    env = blackout_env.env(rules="standard")
    env.reset(seed=0)
    assert env.observe("player_0")["observation"].shape == (encoding.observation_size("standard"),)
    assert BatchedBlackout("standard", 2, seed=0).reset().observation.shape == (2, 838)


def test_an_unknown_observation_kind_is_refused_naming_the_choices():
    for make in (
        lambda: blackout_env.env(observation="fixed"),
        lambda: BatchedBlackout("standard", 2, observation="fixed"),
        lambda: gym.make("blackout/Blackout-v0", observation="fixed"),
        lambda: BlackoutVectorEnv(2, observation="fixed"),
    ):
        with pytest.raises(ValueError, match="observation: must be one of rules, universal; got 'fixed'"):
            make()


# ---------------------------------------------------------------- the scatter
@pytest.mark.parametrize(
    "rules",
    [Rules.preset("short").replace(num_players=3), Rules.preset("jokers"), Rules(num_players=7, hand_sizes=[7, 3])],
    ids=table_id,
)
def test_every_rules_sized_entry_lands_in_its_universal_slot(rules: Rules):
    for view in random_states(rules, seed=5):
        small = encoding.encode(view)
        big = universal_observation(small, rules)
        for block in encoding.observation_layout(rules):
            mine = small[block.offset : block.offset + block.size].reshape(block.shape)
            slot = universal_block(big, block.name)
            expected = np.zeros_like(slot)
            if block.name in ("hand_size", "tricks_left", "tricks_won"):  # counts: / largest hand -> / 18
                mine = (np.rint(mine.astype(np.float64) * rules.max_bid) / MAX_HAND).astype(np.float32)
            expected[tuple(slice(0, size) for size in block.shape)] = mine
            np.testing.assert_array_equal(slot, expected, err_msg=block.name)


@pytest.mark.parametrize("players", range(3, 8))
def test_seats_beyond_the_table_are_marked_absent_and_empty(players: int):
    rules = Rules.preset("short").replace(num_players=players)
    for view in random_states(rules, seed=players):
        vector = universal_observation(encoding.encode(view), rules)
        assert universal_block(vector, "seat_present").tolist() == [1.0] * players + [0.0] * (MAX_PLAYERS - players)
        for block in encoding.observation_layout(rules):
            if block.shape[0] == players and block.name not in ("trump", "phase", "led_suit"):
                assert not universal_block(vector, block.name)[players:].any(), block.name
        assert universal_block(vector, "num_players").argmax() == players - 3


def test_the_rules_block_says_the_rules_in_force():
    standard = Rules.preset("standard")
    game = BlackoutGame(standard, seed=0)
    vector = universal_observation(encoding.encode(game.view(game.current_player)), standard)
    assert universal_block(vector, "hook")[0] == 1 and universal_block(vector, "trump_rule").tolist() == [1, 0, 0]
    assert universal_block(vector, "jokers").tolist() == [1, 0, 0]
    np.testing.assert_allclose(universal_block(vector, "scoring"), [1.0, 0.1, 0, 0, 0])
    np.testing.assert_allclose(universal_block(vector, "max_hand"), [10 / 18])
    # first hand of 10..1: one hand each of 9..1 cards still to come, out of 10
    np.testing.assert_allclose(universal_block(vector, "hands_to_come"), [0.1] * 9 + [0.0] * 9)
    np.testing.assert_allclose(universal_block(vector, "match_position"), [0.1])

    rules = Rules.preset("minus-scoring").replace(hook=False, lead_trump="broken", jokers=2, trump="rotating")
    vector = universal_observation(encoding.encode(BlackoutGame(rules, seed=0).view(0)), rules)
    assert universal_block(vector, "hook")[0] == 0 and universal_block(vector, "lead_trump_broken")[0] == 1
    assert universal_block(vector, "jokers").tolist() == [0, 0, 1]
    assert universal_block(vector, "trump_rule").tolist() == [0, 0, 1]
    coefficients = np.array([getattr(rules, name) for name in
                             ("exact_bonus", "points_per_bid", "miss_points", "miss_points_per_trick", "points_per_trick")])
    np.testing.assert_allclose(universal_block(vector, "scoring"), coefficients / np.abs(coefficients).max())


def test_the_last_hand_has_no_hands_to_come():
    rules = Rules.preset("short")
    game = BlackoutGame(rules, seed=1, start_round=rules.num_rounds - 1)
    vector = universal_observation(encoding.encode(game.view(game.current_player)), rules)
    assert not universal_block(vector, "hands_to_come").any()
    assert universal_block(vector, "match_position")[0] == 1.0


@pytest.mark.parametrize("seed", range(4))
def test_universal_observations_stay_within_their_bounds(seed: int):
    low, high = universal_bounds()
    rules = random_rules(np.random.default_rng(seed))
    for view in random_states(rules, seed):
        vector = universal_observation(encoding.encode(view), rules)
        assert vector.dtype == np.float32 and (vector >= low).all() and (vector <= high).all()


def test_a_batch_is_converted_row_by_row():
    rules = Rules.preset("jokers")
    batch = np.stack([encoding.encode(view) for view in random_states(rules, seed=2)])
    together = universal_observation(batch, rules)
    for row, vector in zip(batch, together):
        np.testing.assert_array_equal(universal_observation(row, rules), vector)


def test_an_observation_of_other_rules_is_refused():
    with pytest.raises(ValueError, match="expected observations of size 838 for these rules, got shape"):
        universal_observation(np.zeros(700, np.float32), Rules.preset("standard"))


# ------------------------------------------------------------------ actions
def test_universal_actions_map_cards_to_cards_and_bids_past_the_54_cards():
    rules = Rules.preset("standard")  # 52 cards, bids 0..10 are actions 52..62
    assert universal_actions(np.array([0, 51, 52, 62]), rules).tolist() == [0, 51, 54, 64]
    assert rules_actions(np.array([0, 51, 54, 64]), rules).tolist() == [0, 51, 52, 62]
    mask = np.zeros(rules.num_actions, np.int8)
    mask[[3, 52, 55]] = 1
    assert np.flatnonzero(universal_action_mask(mask, rules)).tolist() == [3, 54, 57]
    assert universal_action_mask(mask, rules).shape == (UNIVERSAL_NUM_ACTIONS,)


def test_a_universal_action_the_rules_do_not_have_is_refused():
    with pytest.raises(ValueError, match="universal action 52 does not exist under these rules"):
        rules_actions(np.array([3, 52]), Rules.preset("standard"))  # a joker at a table without jokers
    with pytest.raises(ValueError, match="universal actions are 0..72"):
        rules_actions(np.array([73]), Rules.preset("standard"))
    # a caller that reports illegal actions itself gets a marker instead
    assert rules_actions(np.array([3, 52, 73, -1, 54]), Rules.preset("standard"), missing=-1).tolist() == [3, -1, -1, -1, 52]


# --------------------------------------------------------------- card features
@pytest.mark.parametrize("rules", [Rules.preset("standard"), Rules.preset("jokers").replace(num_players=5)],
                         ids=table_id)
def test_the_card_features_read_the_same_facts_from_the_universal_observation(rules: Rules):
    sized, universal = CardFeatures(rules), CardFeatures(None, "universal")
    n, c = rules.num_players, rules.num_cards
    for view in random_states(rules, seed=3):
        small = torch.from_numpy(encoding.encode(view))[None, :]
        big = torch.from_numpy(universal_observation(encoding.encode(view), rules))[None, :]
        expected, got = sized(small)[0], universal(big)[0]
        torch.testing.assert_close(got[:c, : 12 + n - 1], expected)
        assert not got[:, 12 + n - 1 :].any()  # the absent seats show no void
        if c == 52:
            assert not got[52:, 1].any()  # no joker is unseen at a table without jokers


# ------------------------------------------------------------------ training
def tiny(out_dir, *overrides: str) -> list[str]:
    return [
        f"run.out_dir={out_dir}", "run.progress_bar=false", "run.threads=1", "env.num_envs=8",
        "ppo.rollout_steps=8", "ppo.total_steps=128", "model.hidden_sizes=[16]", "model.card_width=4",
        "eval.every_updates=0", "eval.final_deals=0", "model.init_checkpoint=null", *overrides,
    ]  # (a tiny network of its own: the generalist config starts from the specialist's shape)


@pytest.fixture(scope="module")
def one_table_policy(tmp_path_factory):
    """A universal "cards" network trained for two updates on the short 4-player table only."""
    out = tmp_path_factory.mktemp("one-table")
    config = load_config(ROOT / "configs" / "train" / "tiny.yaml",
                         tiny(out, "env.observation=universal", "run.name=short-only"))
    result = train(config, log=lambda *_: None)
    return result.checkpoint


@pytest.mark.parametrize("rules", TABLES, ids=table_id)
def test_a_policy_trained_on_one_table_acts_legally_at_every_other(one_table_policy, rules: Rules):
    bot = load_policy_bot(one_table_policy, rules, greedy=False, seed=0)
    env = blackout_env.env(rules=rules, episode="hand")  # "raise": an illegal action would fail the test
    env.reset(seed=1)
    for agent in env.agent_iter():
        _, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else bot.act(env.unwrapped.view(agent)))
    assert env.unwrapped.game.round_scores


@pytest.mark.parametrize("rules", [Rules.preset("jokers"), Rules.preset("short").replace(num_players=6)], ids=table_id)
def test_the_vector_envs_universal_observation_is_the_scatter_of_its_rules_sized_one(rules: Rules):
    universal = BlackoutVectorEnv(4, rules, opponents="random", observation="universal", learner_seat="random", seed=3)
    sized = BlackoutVectorEnv(4, rules, opponents="random", learner_seat="random", seed=3)
    (obs_u, info_u), (obs_r, info_r) = universal.reset(), sized.reset()
    rng = np.random.default_rng(0)
    for _ in range(40):
        assert np.array_equal(obs_u, universal_observation(obs_r, rules))
        assert np.array_equal(info_u["action_mask"], info_r["action_mask"])  # the rules' own actions either way
        actions = (rng.random(info_r["action_mask"].shape) * info_r["action_mask"]).argmax(axis=1)
        obs_u, reward_u, _, _, info_u = universal.step(actions)
        obs_r, reward_r, _, _, info_r = sized.step(actions)
        assert np.array_equal(reward_u, reward_r)


@pytest.mark.parametrize("observation", ["rules", "universal"])
def test_a_universal_policy_plays_as_a_batched_opponent_in_either_vector_env(one_table_policy, observation):
    rules = Rules.preset("jokers").replace(num_players=5)
    bot = load_policy_bot(one_table_policy, rules, greedy=False, seed=0)
    calls = []
    act_batch = bot.act_batch
    bot.act_batch = lambda obs, mask: calls.append((obs.shape, mask.shape)) or act_batch(obs, mask)
    envs = BlackoutVectorEnv(6, rules, opponents=bot, observation=observation, seed=1)
    _, info = envs.reset()
    rng = np.random.default_rng(2)
    for _ in range(30):  # an illegal opponent action would raise
        _, _, _, _, info = envs.step((rng.random(info["action_mask"].shape) * info["action_mask"]).argmax(axis=1))
    assert calls and all(shapes == ((shapes[0][0], universal_size()), (shapes[0][0], UNIVERSAL_NUM_ACTIONS))
                         for shapes in calls)


def test_a_rules_sized_batch_only_opponent_is_refused_by_a_universal_vector_env():
    class BatchOnly:
        def act_batch(self, obs, mask):
            return mask.argmax(axis=1)

    with pytest.raises(ValueError, match="reads the rules-sized observation and has no act\\(view\\)"):
        BlackoutVectorEnv(2, "standard", opponents=BatchOnly(), observation="universal")


def test_a_rules_sized_checkpoint_refuses_other_rules_naming_the_universal_alternative():
    with pytest.raises(CheckpointError, match=r'other rules.*observation="universal".*configs/train/generalist.yaml'):
        load_checkpoint(ROOT / "training" / "agents" / "checkpoints" / "ppo_standard_4p.pt", "short")
    model, _, _ = load_checkpoint(ROOT / "training" / "agents" / "checkpoints" / "ppo_standard_4p.pt", "standard")
    assert model.observation == "rules"


def test_a_universal_checkpoint_loads_for_any_rules(one_table_policy):
    for rules in ("standard", "jokers", {"num_players": 7, "hand_sizes": [3]}):
        model, trained, payload = load_checkpoint(one_table_policy, rules)
        assert model.observation == "universal" and payload["observation"] == "universal"
        assert trained == Rules.preset("short")


def test_the_generalist_config_loads_and_a_tiny_run_trains_and_evaluates_per_rules(tmp_path):
    config = load_config(GENERALIST)
    assert config.env.observation == "universal" and config.env.tables and len(config.eval.rules) > 1
    tiny_config = load_config(GENERALIST, tiny(tmp_path, "env.table_groups=4", "eval.final_deals=1",
                                                  "eval.rules=[short, jokers]", "run.name=g"))
    result = train(tiny_config, log=lambda *_: None)
    assert result.global_step >= 128
    assert set(result.final_eval["per_rules"]) == {"short", "jokers"}
    rows = (result.run_dir / "eval.csv").read_text().splitlines()
    assert rows[0].split(",")[3] == "rules" and {row.split(",")[3] for row in rows[1:]} == {"short", "jokers"}
    assert (result.run_dir / "learning_curve.png").is_file()


# ------------------------------------------------------------ table distribution
def test_each_group_plays_its_table_and_draws_a_new_one_when_its_matches_end():
    tables = TablesVecEnv(["random", "short"], num_envs=6, groups=3, rules=Rules.preset("standard"))
    batch = tables.reset(seed=4)
    assert batch.observation.shape == (6, universal_size()) and batch.action_mask.shape == (6, UNIVERSAL_NUM_ACTIONS)
    assert batch.rewards.shape == (6, MAX_PLAYERS)
    first = tables.table_rules()
    assert first[1] == Rules.preset("short")
    assert tables.players.tolist() == [r.num_players for r in first for _ in range(2)]
    assert tables.hand_scales.tolist() == pytest.approx([hand_scale(r) for r in first for _ in range(2)])  # reward_norm
    rng = np.random.default_rng(0)
    steps = match_steps(first[1])
    for _ in range(steps):
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in batch.action_mask])
        batch = tables.step(actions)
        # absent seats never score
        for game, players in enumerate(tables.players):
            assert not batch.rewards[game, players:].any()
    assert batch.hand_over[2:4].all()  # the short group's matches all ended in this step...
    assert tables.groups[1].engine.round_index[:].tolist() == [0, 0]  # ...and a new match started


def test_drawn_tables_cover_3_to_7_players_and_presets():
    rng = np.random.default_rng(0)
    drawn = [draw_rules(table, rng) for table in ["random", "preset"] * 40]
    assert {rules.num_players for rules in drawn} == set(range(3, 8))
    assert any(rules.jokers for rules in drawn) and any(not rules.hook for rules in drawn)


def test_fixed_decks_are_refused_by_a_table_distribution():
    tables = TablesVecEnv(["random"], num_envs=2, groups=1, rules=Rules.preset("standard"))
    with pytest.raises(ValueError, match="decks: a table distribution deals its own decks"):
        tables.reset(seed=0, decks=np.zeros((2, 1, 52)))


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["env.observation=rules"], "env.tables: a network for several tables needs env.observation: universal"),
        (["ppo.rollout_steps=0"], "ppo.rollout_steps: with env.tables"),
        (["env.table_groups=5"], "env.table_groups: must be positive and divide env.num_envs"),
        (["env.tables=[standard, nonsense]"], "env.tables: table 'nonsense': unknown rules preset"),
        (["env.observation=square"], "env.observation: must be 'rules' or 'universal'"),
        (["algo=rllib_ppo"], "the universal observation trains with algo: ppo or ppo_ray, not rllib_ppo"),
    ],
)
def test_a_bad_table_distribution_is_refused_naming_the_key(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_config(GENERALIST, overrides)


def test_evaluating_other_rules_needs_the_universal_observation():
    with pytest.raises(ConfigError, match="eval.rules: 'short' differs from env.rules"):
        load_config(ROOT / "configs" / "train" / "tiny.yaml", ["eval.rules=[short]", "env.rules=standard"])


def test_pool_mode_seats_bots_at_their_own_table_in_a_table_distribution(tmp_path):
    config = load_config(GENERALIST, tiny(tmp_path, "env.table_groups=4", "opponents.mode=pool",
                                          "opponents.bot_fraction=1.0", "opponents.latest_fraction=0.0",
                                          "opponents.bots=[random]", "run.name=pool"))
    result = train(config, log=lambda *_: None)
    assert result.global_step > 0


@pytest.mark.parametrize("copy", [True, False])
def test_the_batched_universal_observation_is_right_after_the_caller_scribbled_on_an_earlier_one(copy: bool):
    env = BatchedBlackout("short", 3, seed=0, observation="universal", copy=copy)
    out = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(12):
        if copy:
            out.observation[:] = 7.0  # the caller owns a copied observation and may write into it
        out = env.step(env.random_actions(rng))
        for game in range(3):
            seat = int(out.current_player[game])
            expected = universal_observation(encoding.encode(env.view(game, seat)), env.rules)
            np.testing.assert_array_equal(out.observation[game], expected)


def test_zero_sum_rewards_of_a_padded_table_count_only_its_own_seats():
    from blackout_training.ppo.returns import hand_rewards

    scores = np.zeros((1, 2, MAX_PLAYERS), dtype=np.float32)
    scores[0, 0, :3] = [10, 0, 12]  # a 3-player table: the mean of the other two seats
    scores[0, 1, :4] = [11, 0, 0, 13]  # a 4-player table: the mean of the other three
    rewards = hand_rewards(scores, "zero_sum", 1.0, players=np.array([[3, 4]]))
    np.testing.assert_allclose(rewards[0, 0, :3], [10 - 6, 0 - 11, 12 - 5])
    np.testing.assert_allclose(rewards[0, 1, :4], [11 - 13 / 3, 0 - 8, 0 - 8, 13 - 11 / 3])
