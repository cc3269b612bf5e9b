"""The bots: made by name, always legal, reproducible from a seed, blind to hidden cards."""

import numpy as np
import pytest
from blackout_baselines import BOTS, HeuristicBot, RandomBot, SearchBot, make_bot
from blackout_baselines.deals import deal_deck, sample_hands
from blackout_baselines.search import determinize
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blackout_env import BlackoutGame, Rules, preset_names


def play_match(game: BlackoutGame, bots, max_actions: int | None = None) -> list[int]:
    """Play with one bot per seat, checking every chosen action is legal; the actions taken."""
    actions = []
    while not game.is_over and (max_actions is None or len(actions) < max_actions):
        seat = game.current_player
        view = game.view(seat)
        action = bots[seat].act(view)
        assert type(action) is int and action in view.legal_actions
        game.step(action)
        actions.append(action)
    return actions


def test_make_bot_knows_random_heuristic_search_and_ismcts():
    for name in ("random", "heuristic", "search", "ismcts"):
        bot = make_bot(name, seed=1)
        assert bot.name == name and isinstance(bot.rng, np.random.Generator)
    assert set(BOTS) == {"random", "heuristic", "search", "ismcts"}


def test_make_bot_rejects_an_unknown_name_or_option():
    with pytest.raises(ValueError, match="unknown bot 'alphazero'.*random, heuristic, search"):
        make_bot("alphazero")
    with pytest.raises(ValueError, match="bot 'heuristic'"):
        make_bot("heuristic", samples=3)
    with pytest.raises(ValueError, match="samples: must be a positive integer"):
        make_bot("search", samples=0)


@pytest.mark.parametrize("preset", preset_names())
def test_random_and_heuristic_bots_play_every_preset_legally(preset):
    rules = Rules.preset(preset)
    bots = [HeuristicBot() if seat % 2 == 0 else RandomBot(seat) for seat in range(rules.num_players)]
    game = BlackoutGame(rules, seed=7)
    play_match(game, bots)
    assert game.is_over


@pytest.mark.parametrize("preset", preset_names())
def test_search_bot_plays_every_preset_legally(preset):
    # The first two hands of each preset (a tiny budget keeps it fast).
    rules = Rules.preset(preset)
    rules = rules.replace(hand_sizes=list(rules.hand_sizes[-2:]))
    bots = [SearchBot(seed=seat, samples=2) if seat == 0 else HeuristicBot() for seat in range(rules.num_players)]
    game = BlackoutGame(rules, seed=3)
    play_match(game, bots)
    assert game.is_over


rules_strategy = st.builds(
    lambda players, sizes, hook, trump, no_card, lead, jokers, miss, per_trick, bonus: Rules(
        num_players=players,
        hand_sizes=[min(s, (52 + jokers) // players) for s in sizes],
        hook=hook,
        trump=trump,
        no_card_trump=no_card,
        lead_trump=lead,
        jokers=jokers,
        miss_points=miss,
        miss_points_per_trick=per_trick,
        exact_bonus=bonus,
    ),
    players=st.integers(3, 7),
    sizes=st.lists(st.integers(1, 18), min_size=1, max_size=3),
    hook=st.booleans(),
    trump=st.sampled_from(["turned", "none", "rotating"]),
    no_card=st.sampled_from(["none", "dealer_last"]),
    lead=st.sampled_from(["any", "broken"]),
    jokers=st.integers(0, 2),
    miss=st.sampled_from([0, -10]),
    per_trick=st.sampled_from([0, -1]),
    bonus=st.sampled_from([10, 5]),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rules_strategy, seed=st.integers(0, 2**31))
def test_bots_choose_only_legal_actions_under_random_rules(rules, seed):
    bots = [HeuristicBot() if seat % 2 else RandomBot(seed + seat) for seat in range(rules.num_players)]
    play_match(BlackoutGame(rules, seed=seed), bots)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rules_strategy, seed=st.integers(0, 2**31))
def test_search_bot_chooses_only_legal_actions_under_random_rules(rules, seed):
    rules = rules.replace(hand_sizes=[min(rules.hand_sizes[0], 5)])
    bots = [SearchBot(seed=seed, samples=2)] + [HeuristicBot() for _ in range(rules.num_players - 1)]
    play_match(BlackoutGame(rules, seed=seed), bots)


@pytest.mark.parametrize("name", ["random", "heuristic", "search"])
def test_identical_seeds_give_identical_matches(name):
    rules = Rules(num_players=3, hand_sizes=[4, 2])

    def run(seed):
        bots = [make_bot(name, seed=seed + seat, **({"samples": 2} if name == "search" else {})) for seat in range(3)]
        return play_match(BlackoutGame(rules, seed=5), bots)

    assert run(11) == run(11)
    if name == "random":
        assert run(11) != run(12)


def test_reseeding_a_bot_replays_its_choices():
    game = BlackoutGame(Rules(hand_sizes=[6]), seed=2)
    view = game.view(game.current_player)
    bot = RandomBot(0)
    first = [bot.act(view) for _ in range(20)]
    bot.seed(0)
    assert [bot.act(view) for _ in range(20)] == first


def test_random_bot_batch_picks_uniformly_among_legal_actions():
    bot = RandomBot(4)
    mask = np.zeros((3000, 6), dtype=np.int8)
    mask[:, [1, 4]] = 1
    mask[0] = [0, 0, 0, 0, 0, 1]
    actions = bot.act_batch(np.zeros((3000, 2), np.float32), mask)
    assert actions[0] == 5 and set(actions[1:]) == {1, 4}
    assert 0.45 < np.mean(actions[1:] == 1) < 0.55
    with pytest.raises(ValueError, match="row 1 has no legal action"):
        bot.act_batch(None, np.array([[1, 0], [0, 0]]))


def test_a_bot_asked_to_act_out_of_turn_says_so():
    game = BlackoutGame(Rules(hand_sizes=[3]), seed=1)
    other = (game.current_player + 1) % 4
    with pytest.raises(ValueError, match=f"player {other} has no legal action"):
        HeuristicBot().act(game.view(other))


def swapped_game(game: BlackoutGame, player: int, rng: np.random.Generator) -> BlackoutGame:
    """The same hand and actions, with the other seats' hidden cards dealt differently (consistently)."""
    view = game.view(player)
    return determinize(view, sample_hands(view, rng))


@pytest.mark.parametrize("name", ["random", "heuristic", "search"])
@pytest.mark.parametrize("players", [3, 4, 6])
def test_bots_decide_the_same_when_hidden_cards_are_swapped(name, players):
    rules = Rules(num_players=players, hand_sizes=[5], lead_trump="broken")
    rng = np.random.default_rng(players)
    checked = 0
    for seed in range(6):
        game = BlackoutGame(rules, seed=seed)
        filler = [RandomBot(seed + s) for s in range(players)]
        for _ in range(int(rng.integers(0, players * 5))):
            seat = game.current_player
            game.step(filler[seat].act(game.view(seat)))
        player = game.current_player
        other = swapped_game(game, player, rng)
        view, other_view = game.view(player), other.view(player)
        assert view.hand == other_view.hand and view.round_actions == other_view.round_actions
        hidden = [tuple(game.hands[s]) for s in range(players) if s != player]
        other_hidden = [tuple(other.hands[s]) for s in range(players) if s != player]
        checked += hidden != other_hidden
        kwargs = {"samples": 3} if name == "search" else {}
        assert make_bot(name, seed=9, **kwargs).act(view) == make_bot(name, seed=9, **kwargs).act(other_view)
    assert checked >= 3  # the swap really changed the other hands in most positions


def test_swapping_hidden_cards_at_the_deal_uses_the_dealing_protocol():
    # Deck order d, hand size h: d[k] goes to seat (dealer + 1 + k) % n for k < n*h; d[n*h] is turned.
    rules = Rules(num_players=4, hand_sizes=[3])
    hands = [[0, 1, 2], [13, 14, 15], [26, 27, 28], [39, 40, 41]]
    deck = deal_deck(rules, 0, hands, turned_card=51)
    assert deck[:13] == [13, 26, 39, 0, 14, 27, 40, 1, 15, 28, 41, 2, 51]
    game = BlackoutGame(rules, decks=[deck], first_dealer=0)
    assert game.hands == [hands[0], hands[1], hands[2], hands[3]] and game.turned_card == 51
    swapped = [hands[0], hands[2], hands[3], hands[1]]
    other = BlackoutGame(rules, decks=[deal_deck(rules, 0, swapped, turned_card=51)], first_dealer=0)
    assert other.hands == swapped
    for name in ("heuristic", "random"):
        assert make_bot(name, seed=2).act(game.view(1)) == make_bot(name, seed=2).act(other.view(1))
