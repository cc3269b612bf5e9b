"""The batched heuristic decides exactly as HeuristicBot.act does, game by game, under every preset."""

from __future__ import annotations

import numpy as np
import pytest
from blackout_baselines.heuristic import HeuristicBot
from blackout_baselines.heuristic_batch import BatchedHeuristic

from blackout_env import Rules
from blackout_env.batched import BatchedBlackout
from blackout_env.game.rules import preset_names

GAMES = 24
STEPS = 36


def _compare_along_random_games(rules: Rules, episode: str, seed: int) -> int:
    """Steps games with a mix of heuristic and random actions; at every step every game's
    batched action must equal HeuristicBot.act on that game's view. Returns the decisions compared."""
    engine = BatchedBlackout(rules, GAMES, episode=episode, observations=False, seed=seed)
    engine.reset(seed=seed)
    batched = BatchedHeuristic(rules)
    bot = HeuristicBot()
    rng = np.random.default_rng(seed)
    compared = 0
    for step in range(STEPS):
        actions = batched.act(engine)
        for game in range(GAMES):
            view = engine.view(game, int(engine.current_player[game]))
            expected = bot.act(view)
            assert actions[game] == expected, (
                f"step {step}, game {game}, {view.phase}, hand {view.hand}, trick {view.current_trick}: "
                f"batched {actions[game]}, HeuristicBot {expected}"
            )
            compared += 1
        # half the games follow the heuristic (its usual states), half play at random (odd states)
        engine.step(np.where(rng.random(GAMES) < 0.5, actions, engine.random_actions(rng)))
    return compared


@pytest.mark.parametrize("preset", preset_names())
def test_batched_heuristic_decides_as_heuristic_bot_under_every_preset(preset: str) -> None:
    rules = Rules.preset(preset)
    # whole matches (games in step) and single hands drawn at random (every hand size at once)
    assert _compare_along_random_games(rules, "match", seed=3) == GAMES * STEPS
    assert _compare_along_random_games(rules, "hand", seed=4) == GAMES * STEPS


@pytest.mark.parametrize(("preset", "players"), [("standard", 3), ("jokers", 5), ("trump-must-break", 6), ("standard", 7)])
def test_batched_heuristic_decides_as_heuristic_bot_at_every_table_size(preset: str, players: int) -> None:
    rules = Rules.preset(preset).replace(num_players=players, max_hand_size="full")
    assert _compare_along_random_games(rules, "hand", seed=players) == GAMES * STEPS


def test_batched_heuristic_decides_as_heuristic_bot_with_one_joker() -> None:
    # one joker: the card actions still run to 53 (num_cards 54), but the deck has no card 53, which
    # must never count as unseen (it did: two jokers feared instead of one, a different bid)
    for players in (4, 5):
        rules = Rules.preset("jokers").replace(jokers=1, num_players=players, max_hand_size="full")
        assert rules.num_cards == 54 and rules.deck_size == 53
        assert _compare_along_random_games(rules, "hand", seed=players) == GAMES * STEPS


def test_batched_heuristic_decides_as_heuristic_bot_on_random_rule_sets() -> None:
    # the tables a generalist trains on (every trump, lead, hook and scoring rule, 0 to 2 jokers, 3 to 7 seats)
    from blackout_training.ppo.tables import random_rules

    rng = np.random.default_rng(11)
    for seed in range(8):
        assert _compare_along_random_games(random_rules(rng), "hand", seed=seed) == GAMES * STEPS


def test_batched_heuristic_bids_one_card_hands_from_the_exact_model() -> None:
    # one-card hands are bid from the exact one-card model, for the leader and for later seats
    rules = Rules.preset("short")  # 1-2-3-2-1
    engine = BatchedBlackout(rules, 64, episode="hand", observations=False, seed=7)
    engine.reset(seed=7, rounds=np.zeros(64, dtype=np.int64))
    batched = BatchedHeuristic(rules)
    bot = HeuristicBot()
    for _ in range(rules.num_players):
        actions = batched.act(engine)
        expected = [bot.act(engine.view(g, int(engine.current_player[g]))) for g in range(64)]
        assert actions.tolist() == expected
        engine.step(actions)


def test_batched_heuristic_acts_for_a_subset_of_games() -> None:
    engine = BatchedBlackout("standard", 16, observations=False, seed=1)
    engine.reset(seed=1)
    batched = BatchedHeuristic("standard")
    games = np.array([3, 0, 11])
    assert batched.act(engine, games).tolist() == batched.act(engine)[games].tolist()
    assert batched.act(engine, np.array([], dtype=np.int64)).shape == (0,)


def test_batched_heuristic_refuses_an_engine_with_other_rules() -> None:
    engine = BatchedBlackout("jokers", 4, observations=False, seed=1)
    engine.reset(seed=1)
    with pytest.raises(ValueError, match="rules differ"):
        BatchedHeuristic("standard").act(engine)
