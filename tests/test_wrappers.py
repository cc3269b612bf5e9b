"""ActingSeatRewards: each seat receives, at its own decisions, everything it earned; nothing is lost."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test

import blackout_env
from blackout_env import IllegalActionError
from blackout_env.envs.wrappers import ActingSeatRewards


def play_crediting_the_actor(env, seed: int) -> tuple[dict[str, float], list[str]]:
    """Random legal play, crediting each step's rewards to the seat that acted only (Tianshou's rule).

    Returns what each seat received and the order of the end decisions. Checks on the way that no
    other seat is ever paid in a step and that nobody is terminated before the last end decision.
    """
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    received = dict.fromkeys(env.possible_agents, 0.0)
    end_decisions = []
    for agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            assert all(env.terminations.values())
            env.step(None)
            continue
        mask = observation["action_mask"]
        if env.unwrapped.game.phase == "game_over" or env.unwrapped._done:
            assert mask.all(), "an end decision's mask is all ones"
            end_decisions.append(agent)
        env.step(int(rng.choice(np.flatnonzero(mask))))
        for other, reward in env.rewards.items():
            if other != agent:
                assert reward == 0.0, f"{other} was paid on {agent}'s move"
        received[agent] += env.rewards[agent]
    return received, end_decisions


@pytest.mark.parametrize("seed", range(3))
def test_each_seat_receives_its_match_score_at_its_own_decisions(seed: int) -> None:
    env = ActingSeatRewards(blackout_env.env(rules={"hand_sizes": [4, 3, 2, 1]}))
    received, end_decisions = play_crediting_the_actor(env, seed)
    game = env.unwrapped.game
    assert received == {agent: float(score) for agent, score in zip(env.possible_agents, game.scores)}
    assert len(end_decisions) == 3 and len(set(end_decisions)) == 3  # every seat but the last mover


def test_without_the_wrapper_crediting_the_actor_loses_most_of_the_reward() -> None:
    env = blackout_env.env(rules={"hand_sizes": [4, 3, 2, 1]})
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    credited = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
        credited[agent] += env.rewards[agent]
    scores = env.unwrapped.game.scores
    assert sum(credited.values()) < sum(scores)  # the reason for the wrapper


@pytest.mark.parametrize("reward", ["zero_sum", "win"])
@pytest.mark.parametrize("episode", ["match", "hand"])
def test_every_reward_mode_is_delivered_in_full(reward: str, episode: str) -> None:
    rules = {"num_players": 5, "hand_sizes": [3, 2, 1]}
    plain = blackout_env.env(rules=rules, reward=reward, episode=episode)
    wrapped = ActingSeatRewards(blackout_env.env(rules=rules, reward=reward, episode=episode))
    # The plain env's total per seat, the PettingZoo way (last() before each move).
    rng = np.random.default_rng(4)
    plain.reset(seed=4)
    expected = dict.fromkeys(plain.possible_agents, 0.0)
    for agent in plain.agent_iter():
        observation, reward_so_far, terminated, truncated, _ = plain.last()
        expected[agent] += reward_so_far
        if terminated or truncated:
            plain.step(None)
            continue
        plain.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    received, _ = play_crediting_the_actor(wrapped, 4)
    assert received == pytest.approx(expected)
    assert any(value != 0 for value in received.values())


def test_the_wrapped_env_passes_the_pettingzoo_api_test() -> None:
    api_test(ActingSeatRewards(blackout_env.env(rules={"hand_sizes": [2, 1]})), num_cycles=200)


def test_an_illegal_action_raises_and_leaves_what_is_owed_unchanged() -> None:
    env = ActingSeatRewards(blackout_env.env())
    env.reset(seed=0)
    before = (dict(env._pending), env.agent_selection, dict(env.rewards))
    with pytest.raises(IllegalActionError):
        env.step(0)  # a card while bidding
    assert (dict(env._pending), env.agent_selection, dict(env.rewards)) == before


def test_an_end_decision_takes_any_action_of_the_space_or_none_and_nothing_else() -> None:
    env = ActingSeatRewards(blackout_env.env(rules={"hand_sizes": [1]}))
    env.reset(seed=1)
    while not env._ending:
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    with pytest.raises(ValueError, match="end decision"):
        env.step(10_000)
    with pytest.raises(ValueError, match="end decision"):
        env.step("bid")
    env.step(None)
    env.step(5)
    env.step(np.int64(0))
    assert all(env.terminations.values())
