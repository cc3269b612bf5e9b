"""The search bot: sampled deals agree with the view, rebuilt games match it, choices are legal and seeded."""

import numpy as np
import pytest
from blackout_baselines import HeuristicBot, RandomBot, SearchBot
from blackout_baselines.deals import sample_hands
from blackout_baselines.search import determinize, playout_card

from blackout_env import BlackoutGame, Rules


def random_positions(rules: Rules, count: int, seed: int):
    """Games stopped at random moments of random play (voids appear as play goes on)."""
    rng = np.random.default_rng(seed)
    for index in range(count):
        game = BlackoutGame(rules, seed=seed * 1000 + index)
        bot = RandomBot(index)
        for _ in range(int(rng.integers(0, rules.num_players * rules.hand_sizes[0]))):
            game.step(bot.act(game.view(game.current_player)))
        yield game


@pytest.mark.parametrize(
    "rules",
    [
        Rules(num_players=4, hand_sizes=[8], lead_trump="broken"),
        Rules(num_players=5, hand_sizes=[10], no_card_trump="dealer_last", jokers=0),
        Rules(num_players=4, hand_sizes=[13], no_card_trump="dealer_last"),
        Rules(num_players=3, hand_sizes=[6], jokers=2),
    ],
    ids=["broken", "five", "dealer-last-shown", "jokers"],
)
def test_sampled_hands_agree_with_everything_the_view_shows(rules):
    rng = np.random.default_rng(0)
    for game in random_positions(rules, 25, 1):
        player = game.current_player
        view = game.view(player)
        hands = sample_hands(view, rng)
        assert hands[player] == list(view.hand)
        placed = [c for seat, hand in enumerate(hands) if seat != player for c in hand]
        assert len(placed) == len(set(placed)) and set(placed) <= set(view.unseen_cards) | {view.turned_card}
        for seat in range(rules.num_players):
            assert len(hands[seat]) == view.cards_left(seat)
            assert not any(c < 52 and c // 13 in view.voids[seat] for c in hands[seat])
            assert set(view.shown_cards[seat]) <= set(hands[seat])


def test_a_determinized_game_is_the_view_with_the_sampled_hands():
    rules = Rules(num_players=4, hand_sizes=[9], lead_trump="broken")
    rng = np.random.default_rng(3)
    for game in random_positions(rules, 20, 2):
        player = game.current_player
        view = game.view(player)
        hands = sample_hands(view, rng)
        rebuilt = determinize(view, hands)
        assert [sorted(h) for h in rebuilt.hands] == [sorted(h) for h in hands]
        again = rebuilt.view(player)
        for field in ("hand", "trump", "turned_card", "bids", "tricks_won", "current_trick", "played", "voids",
                      "legal_actions", "round_actions", "dealer", "leader"):
            assert getattr(again, field) == getattr(view, field), field


def test_search_bot_is_reproducible_from_its_seed_and_legal():
    rules = Rules(num_players=4, hand_sizes=[6])
    for game in random_positions(rules, 8, 4):
        view = game.view(game.current_player)
        first = SearchBot(seed=5, samples=3).act(view)
        assert first in view.legal_actions
        assert SearchBot(seed=5, samples=3).act(view) == first


def test_search_values_come_from_playouts_of_every_legal_action():
    game = BlackoutGame(Rules(num_players=4, hand_sizes=[5]), seed=8)
    view = game.view(game.current_player)
    values = SearchBot(seed=1, samples=4).action_values(view)
    assert set(values) == set(view.legal_actions)
    score = view.rules.hand_score
    possible = {score(bid, t) for bid in range(6) for t in range(6)}
    assert all(min(possible) <= v <= max(possible) for v in values.values())


def test_a_time_budget_still_gives_a_legal_action():
    game = BlackoutGame(Rules(num_players=3, hand_sizes=[4]), seed=2)
    bot = SearchBot(seed=0, time_limit_ms=20)
    while not game.is_over:
        seat = game.current_player
        action = bot.act(game.view(seat)) if seat == 0 else HeuristicBot().act(game.view(seat))
        game.step(action)


def test_bad_budgets_are_refused():
    with pytest.raises(ValueError, match="samples"):
        SearchBot(samples=-1)
    with pytest.raises(ValueError, match="bid_samples"):
        SearchBot(bid_samples=0)
    with pytest.raises(ValueError, match="time_limit_ms"):
        SearchBot(time_limit_ms=0)


def test_one_card_bids_are_the_heuristics_exact_ones():
    rules = Rules(num_players=5, hand_sizes=[1])
    for seed in range(10):
        game = BlackoutGame(rules, seed=seed)
        while game.phase == "bid":
            view = game.view(game.current_player)
            action = SearchBot(seed=0, samples=1).act(view)
            assert action == HeuristicBot().act(view)
            game.step(action)


def test_playout_policy_is_legal_to_the_end_of_the_hand():
    for game in random_positions(Rules(num_players=5, hand_sizes=[7], jokers=1, lead_trump="broken"), 10, 5):
        while game.phase == "bid":
            game.step(game.legal_actions()[0])
        while not game.is_over:
            game.step(playout_card(game))  # the engine rejects any illegal card


@pytest.mark.parametrize(
    "rules",
    [Rules(num_players=4, hand_sizes=[10]), Rules(num_players=5, hand_sizes=[9], jokers=2), Rules(no_card_trump="none")],
    ids=["standard", "jokers", "no-trump"],
)
def test_the_strongest_later_card_decides_whether_a_card_is_sure_to_win_as_beats_does(rules):
    from blackout_baselines._heuristic_core import _beats
    from blackout_baselines.search import _strongest_later

    from blackout_env.game.rules_logic import card_power, playable_cards, suit_led_after

    checked = 0
    for game in random_positions(rules, 60, 11):
        while game.phase == "bid":
            game.step(game.legal_actions()[0])
        if game.is_over:
            continue
        n, seat, trick = game.num_players, game.current_player, game.current_trick
        later = [(seat + i) % n for i in range(1, n - len(trick))]
        led = game.led_suit
        for card in game.legal_actions():
            this_led = suit_led_after(led, card)
            beaten = any(
                _beats(other, card, this_led, game.trump)
                for s in later
                for other in playable_cards(game.hands[s], this_led, game.trump, leads=False, trump_broken=True,
                                            must_break=False)
            )
            assert (_strongest_later(game, later, this_led) > card_power(card, this_led, game.trump)) == beaten
            checked += 1
    assert checked > 100
