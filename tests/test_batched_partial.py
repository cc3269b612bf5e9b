"""Partial steps of the batched engine: ``step(actions, active=mask)`` moves only the games in the mask.

The vector env steps the opponents' seats this way (and without observations
until the learner's turn), so these tests hold it to the rules engine, game by
game, under random masks and with observations skipped at random.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_batched import assert_unchanged, random_actions, snapshot
from test_batched_differential import _assert_same, _engine_game

from blackout_env import IllegalActionError, Rules
from blackout_env.batched import BatchedBlackout


@pytest.mark.parametrize(
    "preset, episode", [("standard", "hand"), ("jokers", "hand"), ("trump-must-break", "hand"), ("short", "match")]
)
def test_partial_steps_play_like_the_engine_in_every_game(preset: str, episode: str) -> None:
    rules = Rules.preset(preset)
    env = BatchedBlackout(rules, 5, episode=episode, seed=3)
    out = env.reset()
    engines = [_engine_game(env, g) for g in range(env.num_envs)]
    rng = np.random.default_rng(3)
    matches_ended = np.zeros(env.num_envs, dtype=int)
    for step in range(400):
        active = rng.random(env.num_envs) < 0.5
        actions = random_actions(out, rng)
        actions[~active] = -7  # ignored: games outside the mask may hold anything
        observe = bool(rng.random() < 0.5)
        out = env.step(actions, active=active, observe=observe)
        assert (out.observation is None) != observe and (out.action_mask is None) != observe
        if not observe:
            out = out._replace(observation=env.observe(), action_mask=env.action_mask())
        for g, game in enumerate(engines):
            if not active[g]:
                assert not out.rewards[g].any() and not out.done[g] and not env.hand_over[g]
                continue
            game.step(int(actions[g]))
            over = game.is_over or (episode == "hand" and env.hand_over[g])
            assert out.done[g] == over, f"step {step}, game {g}"
            if over:
                matches_ended[g] += 1
                engines[g] = _engine_game(env, g)
        _assert_same(env, out, engines, f"step {step}")
    assert matches_ended.sum() > 0, "the test should cross an automatic reset"


def test_games_outside_the_mask_keep_their_state() -> None:
    env = BatchedBlackout("standard", 6, seed=0)
    out = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(7):
        out = env.step(random_actions(out, rng))
    active = np.array([True, False, True, False, False, True])
    before = snapshot(env)
    env.step(random_actions(out, rng), active=active)
    for name, value in before.items():
        if value.shape[:1] == (6,) and name != "hand_over":
            np.testing.assert_array_equal(getattr(env, name)[~active], value[~active], err_msg=name)
    assert (env.action_count[active] == before["action_count"][active] + 1).all()


@pytest.mark.parametrize("kind", ["rules", "universal"])
@pytest.mark.parametrize("copy", [True, False])
def test_observation_after_unobserved_steps_equals_the_observed_step(kind: str, copy: bool) -> None:
    observed = BatchedBlackout("standard", 8, seed=5, observation=kind, copy=copy)
    skipped = BatchedBlackout("standard", 8, seed=5, observation=kind, copy=copy)
    out = observed.reset()
    skipped.reset()
    rng = np.random.default_rng(5)
    for _ in range(30):
        actions = random_actions(out, rng)
        out = observed.step(actions)
        quiet = skipped.step(actions, observe=False)
        assert quiet.observation is None and quiet.action_mask is None
        np.testing.assert_array_equal(quiet.rewards, out.rewards)
        np.testing.assert_array_equal(quiet.done, out.done)
        np.testing.assert_array_equal(quiet.current_player, out.current_player)
    np.testing.assert_array_equal(skipped.observe(), out.observation)
    np.testing.assert_array_equal(skipped.action_mask(), out.action_mask)


def test_an_illegal_action_inside_the_mask_names_the_game_and_moves_none() -> None:
    rules = Rules.preset("standard")
    env = BatchedBlackout(rules, 4, seed=0)
    out = env.reset()
    actions = random_actions(out, np.random.default_rng(0))
    actions[1] = 0  # a card while bidding
    before = snapshot(env)
    with pytest.raises(IllegalActionError, match="game 1: action 0"):
        env.step(actions, active=np.array([False, True, True, False]))
    assert_unchanged(env, before)
    # Outside the mask the same action is ignored.
    env.step(actions, active=np.array([True, False, True, True]))


@pytest.mark.parametrize(
    "active", [np.ones(3, dtype=bool), np.ones(4, dtype=np.int8), [1, 0, 1, 0], np.ones((4, 1), dtype=bool)]
)
def test_an_active_mask_of_the_wrong_shape_or_type_is_refused(active: object) -> None:
    env = BatchedBlackout("standard", 4, seed=0)
    out = env.reset()
    before = snapshot(env)
    with pytest.raises(ValueError, match=r"active: expected a bool mask of shape \(4,\)"):
        env.step(random_actions(out, np.random.default_rng(0)), active=active)
    assert_unchanged(env, before)


def test_observation_and_mask_before_reset_are_errors() -> None:
    with pytest.raises(RuntimeError, match="reset"):
        BatchedBlackout("standard", 2).observe()
    with pytest.raises(RuntimeError, match="reset"):
        BatchedBlackout("standard", 2).action_mask()


def test_observation_is_none_without_observations() -> None:
    env = BatchedBlackout("standard", 2, observations=False)
    env.reset()
    assert env.observe() is None


@pytest.mark.parametrize("preset, episode", [("short", "match"), ("jokers", "hand"), ("trump-must-break", "hand")])
def test_random_opponent_moves_of_some_games_are_legal_and_play_like_the_engine(preset: str, episode: str) -> None:
    # The vector env's fast path for random opponents: unchecked moves drawn for the moving games only,
    # and only their legal sets recomputed. Replayed through the rules engine (which refuses an illegal
    # move), every game must stay the engine's, legal sets and observations included.
    rules = Rules.preset(preset)
    env = BatchedBlackout(rules, 6, episode=episode, seed=5)
    env.reset()
    engines = [_engine_game(env, g) for g in range(env.num_envs)]
    rng = np.random.default_rng(5)
    matches_ended = 0
    for step in range(300):
        moving = np.flatnonzero(rng.random(env.num_envs) < 0.6)
        twin = np.random.default_rng()
        twin.bit_generator.state = rng.bit_generator.state
        drawn = env._random_actions(twin, moving)  # what _random_step will draw
        out = env._random_step(moving, rng)
        assert out.observation is None and out.action_mask is None
        out = out._replace(observation=env.observe(), action_mask=env.action_mask())
        for g, action in zip(moving.tolist(), drawn.tolist()):
            engines[g].step(action)
            if engines[g].is_over or (episode == "hand" and env.hand_over[g]):
                assert out.done[g], f"step {step}, game {g}"
                matches_ended += 1
                engines[g] = _engine_game(env, g)
        assert not out.done[np.setdiff1d(np.arange(env.num_envs), moving)].any()
        _assert_same(env, out, engines, f"step {step}")
    assert matches_ended > 0, "the test should cross an automatic reset"
