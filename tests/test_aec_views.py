"""The AEC env's views and errors come from its one game (the compiled core): equal to the engine's, every step."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from blackout_env import BlackoutGame, IllegalActionError, Rules
from blackout_env.envs.aec import raw_env
from blackout_env.game.rules import preset_names


def assert_views_equal_the_engine(environment, engine, rules):
    for seat, agent in enumerate(environment.possible_agents):
        view = environment.view(agent)
        expected = dataclasses.replace(engine.view(seat), rules=rules)
        assert view == expected, (seat, view, expected)
        assert repr(view) == repr(expected)  # the same types too: ints, not numpy ints


def assert_errors_equal_the_engine(environment, engine, rng):
    """An illegal action is refused by both, in the same words, and changes nothing."""
    legal = engine.legal_actions()
    illegal = [a for a in range(environment.num_actions) if a not in legal]
    action = int(rng.choice(illegal))
    with pytest.raises(IllegalActionError) as expected:
        engine.step(action)
    with pytest.raises(IllegalActionError) as refused:
        environment.step(action)
    assert str(refused.value) == str(expected.value)


@pytest.mark.parametrize("preset", preset_names())
def test_every_view_and_error_of_a_match_equals_the_engine(preset):
    rules = Rules.preset(preset)
    environment = raw_env(rules=rules)
    rng = np.random.default_rng(len(preset))
    environment.reset(seed=int(rng.integers(1 << 30)))
    played = environment.game
    engine = BlackoutGame(rules, decks=played.decks, first_dealer=played.first_dealer)
    while True:
        assert_views_equal_the_engine(environment, engine, rules)
        if engine.phase == "game_over":
            break
        if rng.random() < 0.1:
            assert_errors_equal_the_engine(environment, engine, rng)
        action = int(rng.choice(engine.legal_actions()))
        engine.step(action)
        environment.step(action)
    assert all(environment.terminations.values())


@pytest.mark.parametrize("preset", preset_names())
def test_a_one_hand_episode_ends_on_the_table_of_a_match_whose_last_hand_it_is(preset):
    # The engine deals on after a hand; the episode's last view is the finished hand, as at a match's end.
    rules = Rules.preset(preset)
    environment = raw_env(rules=rules, episode="hand")
    rng = np.random.default_rng(len(preset))
    round_index = int(rng.integers(rules.num_rounds))
    environment.reset(seed=int(rng.integers(1 << 30)), options={"round": round_index})
    played = environment.game
    ending = rules.replace(hand_sizes=list(rules.hand_sizes[: round_index + 1]))
    engine = BlackoutGame(
        ending, decks=played.decks[: round_index + 1], first_dealer=played.first_dealer, start_round=round_index
    )
    while True:
        assert_views_equal_the_engine(environment, engine, rules)
        if engine.phase == "game_over":
            break
        action = int(rng.choice(engine.legal_actions()))
        engine.step(action)
        environment.step(action)
    assert all(environment.terminations.values())
