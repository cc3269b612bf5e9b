"""The IS-MCTS bot: its simulator (the compiled core) plays as the engine, its deals agree with the view, it sees views only."""

import random
import re

import numpy as np
import pytest
from blackout_baselines import ISMCTSBot, RandomBot, make_bot
from blackout_baselines.deals import DealSampler, sample_hands
from blackout_baselines.ismcts import SimState, seed_compiled
from blackout_baselines.search import determinize

from blackout_env import BlackoutGame, Rules, preset_names
from blackout_env.game.cards import NUM_STANDARD_CARDS

PRESETS = preset_names()


def random_moments(rules: Rules, count: int, seed: int):
    """Engine games stopped at a random moment of a random hand of random play."""
    rng = np.random.default_rng(seed)
    for index in range(count):
        start = int(rng.integers(rules.num_rounds))
        game = BlackoutGame(rules, seed=seed * 1000 + index, start_round=start)
        bot = RandomBot(index)
        actions = rules.num_players * (rules.hand_sizes[start] + 1)
        for _ in range(int(rng.integers(0, actions))):
            game.step(bot.act(game.view(game.current_player)))
        yield game


@pytest.mark.parametrize("preset", PRESETS)
def test_the_bitset_engine_plays_a_hand_exactly_as_the_engine_does(preset):
    rules = Rules.preset(preset)
    pick = random.Random(0)
    for game in random_moments(rules, 12, 1):
        round_index = game.round_index
        state = SimState.from_view(game.view(game.current_player), game.hands)
        while game.round_index == round_index and not game.is_over:
            legal = game.legal_actions()
            assert state.legal_actions() == legal
            assert state.current == game.current_player
            action = legal[int(pick.random() * len(legal))]
            game.step(action)
            over = state.step(action)
            assert over == (game.round_index != round_index or game.is_over)
        assert state.phase == "over"
        assert state.tricks_won == game.round_tricks[-1]
        assert state.hand_scores() == game.round_scores[-1]


@pytest.mark.parametrize("greedy", [False, True], ids=["random", "greedy"])
@pytest.mark.parametrize("preset", PRESETS)
def test_a_playout_is_a_legal_hand_of_the_engine(preset, greedy):
    rules = Rules.preset(preset)
    pick = random.Random(1)
    seed_compiled(1)
    for game in random_moments(rules, 12, 2):
        state = SimState.from_view(game.view(game.current_player), game.hands)
        actions: list[int] = []
        state.rollout(pick.random, actions, greedy=greedy)
        for action in actions:
            game.step(action)  # raises on an illegal action
        assert state.tricks_won == game.round_tricks[-1]
        assert state.hand_scores() == game.round_scores[-1]


@pytest.mark.parametrize("cards_played", [0, 1], ids=["lead", "follow"])
def test_a_random_playout_plays_every_legal_card_equally_often(cards_played):
    """Uniform random playouts: the first card of the playout, over many playouts from one position."""
    rules = Rules(num_players=4, hand_sizes=[10])
    game = BlackoutGame(rules, seed=4)
    for bid in (2, 3, 1, 2):
        game.bid(bid)
    for _ in range(cards_played):
        game.step(game.legal_actions()[0])
    legal = game.legal_actions()
    state = SimState.from_view(game.view(game.current_player), game.hands)
    pick = random.Random(3)
    seed_compiled(3)
    counts = dict.fromkeys(legal, 0)
    for _ in range(4000):
        actions: list[int] = []
        state.copy().rollout(pick.random, actions)
        counts[actions[0]] += 1
    expected = 4000 / len(legal)
    assert len(legal) > 1
    assert all(abs(count - expected) < 5 * expected**0.5 for count in counts.values()), counts


@pytest.mark.parametrize(
    "rules",
    [
        Rules(num_players=4, hand_sizes=[8], lead_trump="broken"),
        Rules(num_players=5, hand_sizes=[10]),
        Rules(num_players=4, hand_sizes=[13], no_card_trump="dealer_last"),
        Rules(num_players=3, hand_sizes=[6], jokers=2),
        Rules(num_players=7, hand_sizes=[7]),
    ],
    ids=["broken", "five", "dealer-last-shown", "jokers", "seven"],
)
def test_sampled_deals_agree_with_everything_the_view_shows(rules):
    rng, np_rng = random.Random(0), np.random.default_rng(0)
    for game in random_moments(rules, 25, 3):
        player = game.current_player
        view = game.view(player)
        for masks in DealSampler(view).draw(20, np_rng, rng):
            hands = [[c for c in range(rules.deck_size) if m >> c & 1] for m in masks]
            assert hands[player] == list(view.hand)
            placed = [c for seat, hand in enumerate(hands) if seat != player for c in hand]
            assert len(placed) == len(set(placed))
            assert set(placed) <= set(view.unseen_cards) | {view.turned_card}
            for seat in range(rules.num_players):
                assert len(hands[seat]) == view.cards_left(seat)
                assert not any(c < NUM_STANDARD_CARDS and c // 13 in view.voids[seat] for c in hands[seat])
                assert set(view.shown_cards[seat]) <= set(hands[seat])


def test_deals_with_voids_are_drawn_from_every_consistent_place():
    """Rejection keeps the draw uniform: a card no void excludes lands in every possible place."""
    rules = Rules(num_players=4, hand_sizes=[10])
    game = next(g for g in random_moments(rules, 200, 4) if sum(map(len, g.view(g.current_player).voids)) >= 2)
    view = game.view(game.current_player)
    sampler = DealSampler(view)
    deals = sampler.draw(400, np.random.default_rng(1), random.Random(1))
    card = next(c for c in view.unseen_cards if c // 13 not in set().union(*view.voids))
    holders = {next((s for s in range(4) if d[s] >> card & 1), None) for d in deals}
    expected = {s for s in range(4) if s != view.player and view.cards_left(s) > 0} | {None}
    assert holders == expected


def test_the_decision_depends_on_the_view_only():
    """Redeal the other players' hidden cards (consistently with the view): same view, same seed, same decision."""
    rules = Rules(num_players=4, hand_sizes=[10])
    rng = np.random.default_rng(5)
    checked = 0
    for game in random_moments(rules, 8, 5):
        player = game.current_player
        view = game.view(player)
        other = determinize(view, sample_hands(view, rng))
        assert other.hands != game.hands or view.tricks_left <= 1
        assert other.view(player) == view
        first = ISMCTSBot(seed=11, simulations=60).act(view)
        second = ISMCTSBot(seed=11, simulations=60).act(other.view(player))
        assert first == second
        checked += 1
    assert checked == 8


def test_the_same_seed_plays_the_same_hand():
    rules = Rules(num_players=4, hand_sizes=[6])

    def play(seed: int) -> list[int]:
        game = BlackoutGame(rules, seed=3)
        bots = [ISMCTSBot(seed=seed + s, simulations=40) for s in range(4)]
        while not game.is_over:
            game.step(bots[game.current_player].act(game.view(game.current_player)))
        return game.actions

    assert play(7) == play(7)


@pytest.mark.parametrize("preset", PRESETS)
def test_only_legal_actions_in_every_preset(preset):
    rules = Rules.preset(preset)
    bot = ISMCTSBot(seed=0, simulations=12)
    for game in random_moments(rules, 3, 6):
        round_index = game.round_index
        while game.round_index == round_index and not game.is_over:
            view = game.view(game.current_player)
            action = bot.act(view)
            assert action in view.legal_actions
            game.step(action)


def test_the_dealer_never_makes_the_forbidden_bid():
    rules = Rules(num_players=4, hand_sizes=[5])
    for seed in range(15):
        game = BlackoutGame(rules, seed=seed)
        for bid in (1, 2, 1):
            game.bid(bid)
        view = game.view(game.current_player)
        assert view.forbidden_bid == 1
        assert ISMCTSBot(seed=seed, simulations=30).act(view) != rules.num_cards + 1


@pytest.mark.parametrize(
    "options, message",
    [
        ({"simulations": 0}, "simulations"),
        ({"simulations": -5}, "simulations"),
        ({"simulations": 2.5}, "simulations"),
        ({"simulations": True}, "simulations"),
        ({"time_ms": 0}, "time_ms"),
        ({"time_ms": -1.0}, "time_ms"),
        ({"time_ms": "fast"}, "time_ms"),
        ({"exploration": -0.1}, "exploration"),
    ],
)
def test_bad_budgets_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        ISMCTSBot(**options)
    with pytest.raises(ValueError, match=message):
        make_bot("ismcts", **options)


@pytest.mark.parametrize(
    "spec",
    ["ismcts:tree=infoset", "ismcts:tree=path", "ismcts:objective=exact", "ismcts:objective=tricks", "ismcts:voids=0",
     "ismcts:split_by_hand=0", "ismcts:rollout=greedy", "ppo+search:rollout=greedy"],
)
def test_a_retired_option_is_refused_in_one_line_naming_its_retirement(spec):
    # (CHANGELOG.md: removed in issue 48; docs/archive.md keeps what they did and how they measured)
    from blackout_env.agents.policies import load_policy

    option = spec.split(":")[1].split("=")[0]
    with pytest.raises(ValueError, match=rf"^policy '{re.escape(spec)}': {option}: retired in issue 48, .*docs/archive.md\)$") as error:
        load_policy(spec)
    assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match=f"{option}: retired"):
        ISMCTSBot(**{option: 0})


def test_an_unknown_option_is_still_an_unexpected_argument():
    with pytest.raises(TypeError, match="unexpected keyword argument 'tress'"):
        ISMCTSBot(tress="path")


@pytest.mark.parametrize("spec, message", [
    ("ismcts:tress=1", r"^policy 'ismcts:tress=1': bot 'ismcts': unknown option 'tress'; its options: simulations, time_ms, "),
    ("ppo+search:tress=1", r"^policy 'ppo\+search:tress=1': unknown option 'tress'; its options: simulations, .* \(and checkpoint\)$"),
    ("heuristic:tress=1", r"^policy 'heuristic:tress=1': bot 'heuristic': unknown option 'tress'; it takes no options$"),
    ("ismcts:endgame=2,tress=1", r"^policy 'ismcts:endgame=2,tress=1': bot 'ismcts': unknown option 'tress'; "),
    ("ismcts:simulations=4,simulations=8", r"^policy 'ismcts:simulations=4,simulations=8': option 'simulations' is given twice$"),
    ("ppo:", r"^policy 'ppo:': nothing after ':' \(name a checkpoint or options there, or drop the colon\)$"),
])
def test_a_spec_with_an_unknown_or_repeated_option_says_which_and_lists_the_options(spec, message):
    from blackout_env.agents.policies import load_policy

    with pytest.raises(ValueError, match=message):
        load_policy(spec)


def test_a_bot_where_numba_cannot_be_imported_says_so(monkeypatch):
    import sys

    import blackout_baselines.ismcts as ismcts

    from blackout_env.batched import _compiled

    monkeypatch.setitem(sys.modules, "blackout_env.batched._kernels", None)  # the import raises ImportError
    monkeypatch.setattr(_compiled, "_KERNELS", [])
    monkeypatch.setattr(ismcts, "_KERNELS", [])
    with pytest.raises(ImportError, match=r"compiled with numba.*numba is a dependency"):
        ISMCTSBot(seed=0)


def test_a_time_budget_too_small_for_one_simulation_is_an_error():
    game = BlackoutGame(Rules(num_players=4, hand_sizes=[10]), seed=0)
    view = game.view(game.current_player)
    with pytest.raises(ValueError, match="too small for one simulation"):
        ISMCTSBot(seed=0, time_ms=1e-6).act(view)


def test_a_time_budget_runs_simulations_until_it_is_spent():
    game = BlackoutGame(Rules(num_players=4, hand_sizes=[10]), seed=0)
    view = game.view(game.current_player)
    bot = ISMCTSBot(seed=0, time_ms=30)
    assert bot.act(view) in view.legal_actions
    assert bot.last_simulations > 1


def test_the_budget_is_the_number_of_simulations():
    game = BlackoutGame(Rules(num_players=4, hand_sizes=[10]), seed=0)
    view = game.view(game.current_player)
    bot = ISMCTSBot(seed=0, simulations=123)
    values = bot.action_values(view)
    assert bot.last_simulations == 123
    assert sum(visits for visits, _ in values.values()) == 123
    assert set(values) == set(view.legal_actions)


def test_the_policy_spec_names_the_budget():
    from blackout_training.agents.policies import load_policy

    bot = load_policy("ismcts:simulations=200,exploration=0.5", seed=1)
    assert isinstance(bot, ISMCTSBot) and bot.simulations == 200 and bot.exploration == 0.5
    assert make_bot("ismcts", simulations=50).simulations == 50


def test_search_beats_random_play():
    """A sanity check of the search's direction: IS-MCTS at 150 simulations outscores random bots."""
    rules = Rules(num_players=4, hand_sizes=[5])
    total_search = total_random = 0
    for seed in range(6):
        game = BlackoutGame(rules, seed=seed)
        bots = [ISMCTSBot(seed=seed, simulations=150)] + [RandomBot(seed + s) for s in range(1, 4)]
        while not game.is_over:
            game.step(bots[game.current_player].act(game.view(game.current_player)))
        total_search += game.scores[0]
        total_random += sum(game.scores[1:]) / 3
    assert total_search > total_random


def test_the_greedy_playout_wins_cheaply_when_it_needs_a_trick_and_ducks_high_when_not():
    from blackout_baselines._ismcts_kernels import greedy_card

    from blackout_env.game.cards import parse_card, parse_cards
    from blackout_env.game.rules_logic import card_power, suit_led_after

    rules = Rules(num_players=4, hand_sizes=[10])
    trump, nc = 0, rules.num_cards  # trump clubs
    power_flat = np.array(
        [card_power(c, led, t) for t in (None, 0, 1, 2, 3) for led in (None, 0, 1, 2, 3) for c in range(nc)]
    )
    after = [[suit_led_after(led, c) for c in range(nc)] for led in (None, 0, 1, 2, 3)]
    led_after = np.array([[-1 if suit is None else suit for suit in row] for row in after])  # -1: no led suit yet
    legal = np.uint64(sum(1 << c for c in parse_cards("4H 9H QH AH")))
    led = 2  # hearts led, the 10 of hearts winning so far
    win = card_power(parse_card("10H"), led, trump)

    def card(want: bool, last: bool, led: int = led, win: int = win) -> int:
        return int(greedy_card(legal, power_flat, led_after, nc, trump, led, win, want, last)).bit_length() - 1

    assert card(want=True, last=True) == parse_card("QH")
    assert card(want=True, last=False) == parse_card("AH")
    assert card(want=False, last=False) == parse_card("9H")
    assert card(want=False, last=False, led=-1, win=-1) == parse_card("4H")


def test_the_greedy_playout_bids_its_aces_kings_and_high_trumps():
    from blackout_baselines._ismcts_kernels import SIDE_TRICKS, TRUMP_TRICKS, greedy_bid

    from blackout_env.game.cards import parse_cards

    hand = np.uint64(sum(1 << c for c in parse_cards("AS KS AH 10H 2H 5C")))
    # 0.85 (side ace) + 0.45 (side king) + 0.9 + 0.9 (trumps from the ten) + 0.35 (low trump) = 3.45
    assert greedy_bid(hand, 2, SIDE_TRICKS, TRUMP_TRICKS) == 3  # trump hearts
    # no trump: the aces of spades and hearts and the king of spades
    assert greedy_bid(hand, -1, SIDE_TRICKS, TRUMP_TRICKS) == 2


def test_a_prior_steers_the_root_visits():
    """With a heavy prior on one action, the simulations after the first visit of each go to it."""
    game = BlackoutGame(Rules(num_players=4, hand_sizes=[10]), seed=0)
    view = game.view(game.current_player)
    favourite = view.legal_actions[-1]
    bot = ISMCTSBot(seed=0, simulations=40, prior=lambda v: {favourite: 1.0}, prior_weight=100.0)
    values = bot.action_values(view)
    assert values[favourite][0] == 40 - (len(view.legal_actions) - 1)
    assert bot.act(view) == favourite


@pytest.mark.parametrize("options", [{"prior": 3}, {"prior_weight": -1.0}, {"prior_weight": "big"}])
def test_a_bad_prior_is_refused(options):
    with pytest.raises(ValueError, match="prior"):
        ISMCTSBot(**options)
