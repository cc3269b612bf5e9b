"""The batched engine plays exactly like the rules engine.

The same deck orders and the same actions go through :class:`BlackoutGame`
(one engine game per batched game, started from the batched game's decks and
first dealer) and through :class:`BatchedBlackout`; after every step the acting
seat, the mask, the observation (bit for bit, against ``encoding.encode`` of the
engine's view), every seat's view, the trick winners, the hand scores, the
rewards and the totals must agree, across automatic resets. With
``observation="universal"`` the batched observation must equal
``universal_observation`` of the engine's rules-sized vector, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rule_strategies import any_rules

from blackout_env import BlackoutGame, Rules, preset_names
from blackout_env.batched import BatchedBlackout
from blackout_env.game.encoding import encode
from blackout_env.game.universal import universal_observation, universal_size

NUM_GAMES = 4


def _engine_game(env: BatchedBlackout, game: int) -> BlackoutGame:
    """A fresh engine game from the batched game's deck orders, first dealer and first hand."""
    return BlackoutGame(
        env.rules,
        decks=env.decks[game].tolist(),
        first_dealer=int(env.first_dealer[game]),
        start_round=int(env.start_round[game]),
    )


def _expected_rewards(game: BlackoutGame, reward: str, episode_over: bool) -> np.ndarray:
    """Rewards of the hand that just ended in ``game``, by the AEC env's definitions."""
    n = game.num_players
    hand = np.array(game.round_scores[-1], dtype=np.float64)
    if reward == "score":
        return hand
    if reward == "zero_sum":
        return hand - (hand.sum() - hand) / (n - 1)
    if not episode_over:
        return np.zeros(n)
    winners = game.winners()
    return np.array([1.0 / len(winners) if seat in winners else 0.0 for seat in range(n)])


def _assert_same(env: BatchedBlackout, out, engines: list[BlackoutGame], where: str) -> None:
    for g, game in enumerate(engines):
        here = f"{where}, game {g}"
        seat = game.current_player
        assert out.current_player[g] == seat, here
        legal = np.zeros(env.num_actions, dtype=np.int8)
        legal[game.legal_actions()] = 1
        np.testing.assert_array_equal(out.action_mask[g], legal, err_msg=here)
        expected = encode(game.view(seat))
        if env.observation == "universal":
            expected = universal_observation(expected, env.rules)
            assert out.observation.shape[1] == universal_size(), here
        np.testing.assert_array_equal(out.observation[g], expected, err_msg=here)
        for player in range(game.num_players):
            assert env.view(g, player) == game.view(player), f"{here}, view of seat {player}"
            hand_bits = sum(1 << card for card in game.hands[player])
            assert int(env.hands[g, player]) == hand_bits, f"{here}, hand of seat {player}"
        assert env.last_trick_winner[g] == (-1 if game.last_trick_winner is None else game.last_trick_winner), here
        assert env.scores[g].tolist() == game.scores, here


def play_lockstep(
    rules: Rules, *, episode: str, reward: str, seed: int, resets: int = 1, observation: str = "rules"
) -> int:
    """Random legal play in both engines until every game has been reset ``resets`` times; returns steps."""
    env = BatchedBlackout(rules, NUM_GAMES, episode=episode, reward=reward, seed=seed, observation=observation)
    out = env.reset()
    engines = [_engine_game(env, g) for g in range(NUM_GAMES)]
    _assert_same(env, out, engines, "after reset")
    rng = np.random.default_rng(seed)
    matches_ended = np.zeros(NUM_GAMES, dtype=int)
    hand_totals = np.zeros((NUM_GAMES, rules.num_players))
    step = 0
    while matches_ended.min() < resets:
        step += 1
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in out.action_mask])
        out = env.step(actions)
        for g, game in enumerate(engines):
            here = f"step {step}, game {g}"
            rounds_before = len(game.round_scores)
            events_before = len(game.history)
            game.step(int(actions[g]))
            hand_ended = len(game.round_scores) != rounds_before
            for event in game.history[events_before:]:
                if event[0] == "trick" and not hand_ended:
                    assert env.last_trick_winner[g] == event[1], f"{here}: trick winner"
            episode_over = game.is_over or (episode == "hand" and hand_ended)
            assert env.hand_over[g] == hand_ended, here
            if hand_ended:
                assert env.last_hand_bids[g].tolist() == game.round_bids[-1], here
                assert env.last_hand_tricks[g].tolist() == game.round_tricks[-1], here
                expected = _expected_rewards(game, reward, episode_over)
                np.testing.assert_allclose(out.rewards[g], expected, rtol=1e-6, err_msg=here)
                hand_totals[g] += game.round_scores[-1]
                if not episode_over:  # (a finished episode is already reset in the batched engine)
                    assert env.round_scores[g, rounds_before].tolist() == game.round_scores[-1], here
            else:
                assert not out.rewards[g].any(), here
            assert out.done[g] == episode_over, here
            if episode_over:
                # The total is the sum of the episode's hands; the game is already reset to a new episode.
                assert game.scores == hand_totals[g].tolist(), here
                hand_totals[g] = 0
                matches_ended[g] += 1
                engines[g] = _engine_game(env, g)
        _assert_same(env, out, engines, f"step {step}")
    return step


@pytest.mark.parametrize("preset", preset_names())
def test_every_preset_plays_like_the_engine_across_a_reset(preset: str) -> None:
    rules = Rules.preset(preset)
    if rules.num_rounds > 12:  # the longest matches: one full match each (kept fast)
        play_lockstep(rules, episode="match", reward="score", seed=1)
    else:
        play_lockstep(rules, episode="match", reward="score", seed=1, resets=2)


@pytest.mark.parametrize("reward", ["score", "zero_sum", "win"])
@pytest.mark.parametrize("episode", ["match", "hand"])
def test_episodes_and_rewards_follow_the_engine(episode: str, reward: str) -> None:
    play_lockstep(Rules.preset("short").replace(num_players=3), episode=episode, reward=reward, seed=7, resets=2)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rules=any_rules(max_size=6),
    episode=st.sampled_from(["match", "hand"]),
    reward=st.sampled_from(["score", "zero_sum", "win"]),
    seed=st.integers(0, 2**16),
)
def test_random_rules_play_like_the_engine(rules: Rules, episode: str, reward: str, seed: int) -> None:
    play_lockstep(rules, episode=episode, reward=reward, seed=seed)


@pytest.mark.parametrize("preset", preset_names())
def test_every_preset_gives_the_engines_universal_observation(preset: str) -> None:
    play_lockstep(Rules.preset(preset), episode="match", reward="score", seed=2, observation="universal")


@pytest.mark.parametrize("episode", ["match", "hand"])
def test_universal_observation_follows_the_engine_across_hand_episodes(episode: str) -> None:
    play_lockstep(Rules.preset("short").replace(num_players=7), episode=episode, reward="score", seed=3,
                  resets=2, observation="universal")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=any_rules(max_size=4), episode=st.sampled_from(["match", "hand"]), seed=st.integers(0, 2**16))
def test_random_rules_give_the_engines_universal_observation(rules: Rules, episode: str, seed: int) -> None:
    play_lockstep(rules, episode=episode, reward="score", seed=seed, observation="universal")


def test_fixed_decks_deal_exactly_the_engine_hands() -> None:
    rules = Rules.preset("standard")
    rng = np.random.default_rng(3)
    decks = rng.permuted(np.tile(np.arange(rules.deck_size), (NUM_GAMES, rules.num_rounds, 1)), axis=2)
    env = BatchedBlackout(rules, NUM_GAMES, seed=0)
    out = env.reset(decks=decks)
    engines = [BlackoutGame(rules, decks=decks[g].tolist()) for g in range(NUM_GAMES)]
    _assert_same(env, out, engines, "fixed decks")
    np.testing.assert_array_equal(env.decks, decks)


def test_an_encoder_block_the_batched_encoder_does_not_know_stops_construction(monkeypatch) -> None:
    from blackout_env.batched import _encoding as _batched_encoding
    from blackout_env.game import encoding

    layout = encoding.observation_layout("standard")
    last = layout[-1]
    extra = encoding.Block("new_feature", last.offset + last.size, 1, 0.0, 1.0, (1,), "a block added later")
    monkeypatch.setattr(_batched_encoding, "observation_layout", lambda rules: layout + [extra])
    with pytest.raises(ValueError, match=r"out of date.*\['new_feature'\]"):
        BatchedBlackout("standard", 2)
    monkeypatch.setattr(_batched_encoding, "observation_layout", lambda rules: layout[:-1])
    with pytest.raises(ValueError, match=r"no longer has the blocks \['scores'\]"):
        BatchedBlackout("standard", 2)
