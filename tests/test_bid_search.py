"""``bid_search``: the IS-MCTS bot's bids scored on shared sampled deals, greedy play then an exact endgame."""

import numpy as np
import pytest
from blackout_baselines import ISMCTSBot, make_bot
from blackout_baselines.deals import sample_hands
from blackout_baselines.search import determinize

from blackout_env import BlackoutGame, Rules


def first_bid_views(rules: Rules, count: int, seed: int = 0):
    """The first bidder's view of ``count`` fresh hands."""
    for index in range(count):
        game = BlackoutGame(rules, seed=seed * 1000 + index)
        yield game.view(game.current_player)


@pytest.mark.parametrize("bid_search", [-1, 7, 2.5, True, "3"])
def test_a_bad_bid_search_is_refused(bid_search):
    with pytest.raises(ValueError, match="bid_search"):
        ISMCTSBot(bid_search=bid_search)
    with pytest.raises(ValueError, match="bid_search"):
        make_bot("ismcts", bid_search=bid_search)


def test_every_bid_is_scored_on_the_same_number_of_deals_and_the_best_mean_is_played():
    rules = Rules(num_players=4, hand_sizes=[5])
    for view in first_bid_views(rules, 4, seed=1):
        bot = ISMCTSBot(seed=7, simulations=120, bid_search=3)
        values = bot.action_values(view)
        assert sorted(values) == sorted(view.legal_actions)
        deals = {visits for visits, _ in values.values()}
        assert deals == {120 // len(view.legal_actions)}
        assert bot.last_simulations == sum(visits for visits, _ in values.values())
        assert bot.last_solved > 0  # the last three tricks of every playout were solved
        best = max(mean for _, mean in values.values())
        chosen = ISMCTSBot(seed=7, simulations=120, bid_search=3).act(view)
        assert values[chosen][1] == best


def test_a_one_card_hand_bids_one_with_the_top_trump_and_none_with_a_low_side_card():
    rules = Rules(num_players=3, hand_sizes=[1])
    seen = set()
    for seed in range(3000):
        game = BlackoutGame(rules, seed=seed)
        if game.trump is None:
            continue
        view = game.view(game.current_player)
        (card,) = view.hand
        if card == 13 * game.trump + 12:  # the ace of trump: it takes the trick whatever is played
            want = 1
        elif card // 13 != game.trump and card % 13 == 0:  # the two of a side suit: it can take no trick
            want = 0
        else:
            continue
        action = ISMCTSBot(seed=seed, simulations=60, bid_search=1).act(view)
        assert action - rules.num_cards == want
        seen.add(want)
        if seen == {0, 1}:
            return
    pytest.fail("no hand with the ace of trump and one with a low side card in 3000 deals")


def test_card_decisions_are_searched_in_the_tree_as_before():
    rules = Rules(num_players=4, hand_sizes=[4])
    checked = 0
    for index in range(20):
        game = BlackoutGame(rules, seed=index)
        while game.phase == "bid":
            game.step(min(game.view(game.current_player).legal_actions))
        view = game.view(game.current_player)
        if len(view.legal_actions) == 1:
            continue
        plain, searching = ISMCTSBot(seed=index, simulations=60), ISMCTSBot(seed=index, simulations=60, bid_search=3)
        assert plain.act(view) == searching.act(view)
        assert plain.last_simulations == searching.last_simulations == 60 and searching.last_solved == 0
        checked += 1
    assert checked >= 5


def test_with_bid_search_the_bid_depends_on_the_view_only():
    rules = Rules(num_players=4, hand_sizes=[5])
    rng = np.random.default_rng(2)
    for view in first_bid_views(rules, 5, seed=3):
        other = determinize(view, sample_hands(view, rng))
        assert other.view(view.player) == view
        first = ISMCTSBot(seed=3, simulations=60, bid_search=2).act(view)
        second = ISMCTSBot(seed=3, simulations=60, bid_search=2).act(other.view(view.player))
        assert first == second


def test_a_time_budget_scores_every_bid_on_whole_batches_of_deals():
    rules = Rules(num_players=4, hand_sizes=[5])
    view = next(first_bid_views(rules, 1, seed=5))
    bot = ISMCTSBot(seed=1, time_ms=15, bid_search=2)
    assert bot.act(view) in view.legal_actions
    assert bot.last_simulations > 0 and bot.last_simulations % (8 * len(view.legal_actions)) == 0
