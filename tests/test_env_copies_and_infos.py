"""Copies of running envs continue the same game; infos keep one type per key; terminal masks are all ones."""

from __future__ import annotations

import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest

import blackout_env
from blackout_env import BlackoutGymEnv, env, raw_env
from blackout_env.envs.aec import INFO_KEYS
from blackout_env.envs.registration import GYM_IDS

COPIES = {
    "deepcopy": copy.deepcopy,
    "pickle": lambda original: pickle.loads(pickle.dumps(original)),
}


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def aec_state(e) -> tuple:
    """Everything a user of the AEC env can read, as comparable plain data."""
    raw = e.unwrapped
    observations = [raw.observe(agent) for agent in raw.possible_agents]
    return (
        raw.game.to_json(),
        raw.agent_selection,
        list(raw.agents),
        [(o["observation"].tobytes(), o["action_mask"].tobytes()) for o in observations],
        dict(raw.rewards),
        dict(raw._cumulative_rewards),
        dict(raw.terminations),
        dict(raw.truncations),
        {agent: dict(info) for agent, info in raw.infos.items()},
    )


@pytest.mark.parametrize("how", COPIES)
@pytest.mark.parametrize("kwargs", [{}, {"episode": "hand", "reward": "zero_sum"}, {"illegal_action": "penalize"}])
def test_a_copy_of_a_running_aec_env_continues_the_same_game_independently(how, kwargs):
    original = env(rules={"num_players": 3, "hand_sizes": [3, 2]}, **kwargs)
    original.reset(seed=7)
    rng = np.random.default_rng(1)
    for _ in range(5):
        original.step(random_legal(original.observe(original.agent_selection)["action_mask"], rng))
    twin = COPIES[how](original)
    assert aec_state(twin) == aec_state(original)
    for agent in original.agent_iter():
        assert twin.agent_selection == agent
        observation, reward, termination, truncation, info = original.last()
        twin_last = twin.last()
        assert np.array_equal(twin_last[0]["observation"], observation["observation"])
        assert np.array_equal(twin_last[0]["action_mask"], observation["action_mask"])
        assert twin_last[1:] == (reward, termination, truncation, info)
        action = None if termination or truncation else random_legal(observation["action_mask"], rng)
        original.step(action)
        twin.step(action)
        assert aec_state(twin) == aec_state(original)
    assert not twin.agents


@pytest.mark.parametrize("how", COPIES)
def test_a_copy_of_a_running_aec_env_is_independent(how):
    original = raw_env()
    original.reset(seed=2)
    rng = np.random.default_rng(0)
    for _ in range(3):
        original.step(random_legal(original.observe(original.agent_selection)["action_mask"], rng))
    before = aec_state(original)
    twin = COPIES[how](original)
    for _ in range(10):
        twin.step(random_legal(twin.observe(twin.agent_selection)["action_mask"], rng))
    assert aec_state(original) == before
    twin.reset(seed=99)
    assert aec_state(original) == before


@pytest.mark.parametrize("how", COPIES)
def test_a_copys_spaces_draw_their_own_random_streams(how):
    original = raw_env()
    original.reset(seed=2)
    twin = COPIES[how](original)
    space = original.action_space(original.agents[0])
    space.seed(0)
    expected = [space.sample() for _ in range(3)]
    space.seed(0)
    twin.action_space(twin.agents[0]).seed(1)
    twin.action_space(twin.agents[0]).sample()
    assert [space.sample() for _ in range(3)] == expected


@pytest.mark.parametrize("how", COPIES)
@pytest.mark.parametrize("env_id", ["blackout/Blackout-v0", "blackout/BlackoutHand-v0"])
def test_a_copy_of_a_running_gym_env_continues_the_same_episode(how, env_id):
    original = gym.make(env_id, rules="short")
    observation, info = original.reset(seed=4)
    rng = np.random.default_rng(3)
    observation, *_ = original.step(random_legal(info["action_mask"], rng))
    twin = COPIES[how](original)
    assert twin.unwrapped.game.to_json() == original.unwrapped.game.to_json()
    done = False
    while not done:
        action = random_legal(original.unwrapped.action_masks(), rng)
        a, b = original.step(action), twin.step(action)
        assert np.array_equal(a[0], b[0]) and a[1:4] == b[1:4]
        assert a[4].keys() == b[4].keys()
        for key in a[4]:
            assert np.array_equal(a[4][key], b[4][key]), key
        done = a[2] or a[3]
    # Independent: the copy's episode is over, the original's too; a reset of one leaves the other.
    twin.reset(seed=5)
    assert twin.unwrapped.game.to_json() != original.unwrapped.game.to_json()


def check_flat_info(info: dict, types: dict) -> None:
    for key, value in info.items():
        assert not isinstance(value, (dict, list, tuple)) and value is not None, (key, value)
        kind = (type(value), np.shape(value))
        assert types.setdefault(key, kind) == kind, (key, types[key], kind)


@pytest.mark.parametrize("illegal_action", ["raise", "penalize"])
@pytest.mark.parametrize("episode", ["match", "hand"])
def test_aec_infos_keep_one_type_per_key_and_terminal_masks_are_all_ones(episode, illegal_action):
    e = env(rules="short", episode=episode, illegal_action=illegal_action)
    rng = np.random.default_rng(0)
    types: dict = {}
    for episode_seed in range(4):
        e.reset(seed=episode_seed)
        for _agent in e.agent_iter():
            observation, _, termination, truncation, info = e.last()
            assert tuple(info) == INFO_KEYS
            check_flat_info(info, types)
            mask = observation["action_mask"]
            if termination or truncation:
                assert mask.dtype == np.int8 and mask.all(), "a terminal mask is all ones"
                e.step(None)
                continue
            assert mask.any()
            # Now and then an illegal action (a card while bidding, a bid while playing, a card not held).
            if illegal_action == "penalize" and rng.random() < 0.02:
                e.step(int(np.flatnonzero(mask == 0)[0]))
            else:
                e.step(random_legal(mask, rng))
        assert not e.agents


def test_info_values_before_a_bid_and_before_any_finished_hand():
    e = raw_env()
    e.reset(seed=0)
    info = e.infos["player_0"]
    assert info["bid"] == -1 and info["last_hand_round"] == -1 and info["last_hand_bid"] == -1
    assert info["last_hand_tricks"] == -1 and info["last_hand_score"] == 0 and info["illegal_action"] is False


def test_gym_action_masks_are_all_ones_at_the_end_of_an_episode():
    environment = BlackoutGymEnv(rules="short", opponents="random", episode="hand")
    _, info = environment.reset(seed=0)
    rng = np.random.default_rng(0)
    terminated = False
    while not terminated:
        _, _, terminated, _, info = environment.step(random_legal(info["action_mask"], rng))
    assert info["action_mask"].all() and environment.action_masks().all()


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("env_id", sorted(GYM_IDS))
def test_make_vec_steps_every_registered_id_with_legal_and_illegal_actions(env_id, mode):
    envs = gym.make_vec(f"blackout_env:{env_id}", num_envs=4, vectorization_mode=mode, rules="short")
    try:
        _, infos = envs.reset(seed=0)
        rng = np.random.default_rng(0)
        keys = set(infos)
        dtypes = {key: (value.dtype, value.shape) for key, value in infos.items()}
        ends = illegal = 0
        for _ in range(250):
            masks = infos["action_mask"].astype(bool)
            assert masks.any(axis=1).all(), "every sub-env has a legal action (all ones at the end)"
            actions = np.array([random_legal(mask, rng) for mask in masks])
            wrong = rng.random(4) < 0.03  # a random action from the whole space: mostly illegal
            actions[wrong] = rng.integers(envs.single_action_space.n, size=int(wrong.sum()))
            illegal += int(wrong.sum())
            _, rewards, terminated, truncated, infos = envs.step(actions)
            assert set(infos) == keys
            assert {key: (value.dtype, value.shape) for key, value in infos.items()} == dtypes
            assert rewards.dtype == np.float64 and np.isfinite(rewards).all()
            ends += int(terminated.sum())
        assert ends > 0 and illegal > 0
        assert infos["bid"].dtype.kind == "i" and infos["last_hand_score"].dtype.kind == "i"
    finally:
        envs.close()


def test_every_registered_id_is_in_the_registry():
    for env_id in GYM_IDS:
        assert env_id in gym.registry
    assert blackout_env.register_envs() is None  # idempotent


def test_import_works_with_a_pettingzoo_that_has_no_registry(monkeypatch):
    # PettingZoo < 1.27 (pinned by e.g. AgileRL) has neither pettingzoo.register nor aec_registry.
    import importlib

    import pettingzoo

    from blackout_env.envs import registration

    monkeypatch.delattr(pettingzoo, "aec_registry", raising=False)
    monkeypatch.delattr(pettingzoo, "register", raising=False)
    importlib.reload(registration).register_envs()
    e = blackout_env.env()
    e.reset(seed=0)
    assert e.agent_selection == "player_1"
