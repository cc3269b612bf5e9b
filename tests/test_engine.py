"""The rules engine, scenario by scenario, as the rules state them.

Deals are set up with ``deck_order``, which builds the deck order that deals
given hands by the dealing protocol (seat left of the dealer first, one card
at a time, then the turned card).
"""

import numpy as np
import pytest
from game_helpers import snapshot

from blackout_env import BlackoutGame, IllegalActionError, Rules, deck_order
from blackout_env.game.cards import CLUBS, DIAMONDS, HEARTS, SPADES, parse_card, parse_cards


def game_with_hands(hands, turned=None, dealer=0, **options):
    """A one-hand game that deals ``hands`` (text, one per seat) with ``turned`` as the turned card."""
    hands = [parse_cards(h) for h in hands]
    options.setdefault("num_players", len(hands))
    options.setdefault("hand_sizes", [len(hands[0])])
    rules = Rules(first_dealer=dealer, **options)
    order = deck_order(hands, dealer=dealer, turned_card=turned, jokers=rules.jokers)
    return BlackoutGame(rules, decks=[order])


def bid_all(game, *bids):
    for tricks in bids:
        game.bid(tricks)


def play_all(game, *cards):
    for card in cards:
        game.play(card)


def bid_actions(game, *bids):
    return [game.num_cards + k for k in bids]


# --------------------------------------------------------------------- dealing
def test_deal_follows_the_dealing_protocol():
    rules = Rules(num_players=4, hand_sizes=[2], first_dealer=1)
    order = list(range(52))
    game = BlackoutGame(rules, decks=[order])
    # d[k] goes to seat (dealer + 1 + k) % n: seat 2 gets d[0], d[4]; seat 1 (dealer) gets d[3], d[7].
    assert game.hands == [[2, 6], [3, 7], [0, 4], [1, 5]]
    assert game.turned_card == 8 and game.trump == CLUBS


def test_deck_order_builds_a_deal_from_hands():
    game = game_with_hands(["AS KS", "2C 3C", "4D 5D", "6H 7H"], turned="QH", dealer=2)
    assert game.hands == [parse_cards("KS AS"), parse_cards("2C 3C"), parse_cards("4D 5D"), parse_cards("6H 7H")]
    assert game.turned_card == parse_card("QH") and game.trump == HEARTS


def test_a_deck_built_for_another_dealer_is_refused_naming_both_dealers():
    order = deck_order([["2C"], ["3D"], ["4H"], ["AS"]], dealer=3, turned_card="5S")
    message = r"decks\[0\]: the deck was built by deck_order for dealer 3, but round 0 is dealt by seat 0"
    with pytest.raises(ValueError, match=message):
        BlackoutGame(Rules(num_players=4, hand_sizes=[1]), decks=[order])
    # In a round that seat 3 deals, the same deck gives seat 3 the ace of spades.
    game = BlackoutGame(Rules(num_players=4, hand_sizes=[1]), decks=[order], first_dealer=3)
    assert game.hands[3] == [parse_card("AS")] and game.turned_card == parse_card("5S")
    # A plain list carries no dealer and is dealt as it is, as before; so is a saved game.
    assert BlackoutGame(Rules(num_players=4, hand_sizes=[1]), decks=[list(order)]).hands[0] == [parse_card("AS")]
    assert BlackoutGame.from_json(game.to_json()) == game
    with pytest.raises(ValueError, match="built by deck_order for 4 players; this game has 3"):
        BlackoutGame(Rules(num_players=3, hand_sizes=[1]), decks=[order], first_dealer=0)


def test_deck_order_rejects_duplicate_cards_and_uneven_hands():
    with pytest.raises(ValueError, match="AS appear more than once"):
        deck_order([["AS"], ["AS"], ["2C"]], dealer=0)
    with pytest.raises(ValueError, match="same number of cards"):
        deck_order([["AS"], ["KS", "QS"], ["2C"]], dealer=0)


def test_same_seed_same_game_and_different_seeds_differ():
    a, b, c = BlackoutGame(seed=5), BlackoutGame(seed=5), BlackoutGame(seed=6)
    assert a.decks == b.decks and a.hands == b.hands
    assert a.decks != c.decks


@pytest.mark.parametrize("jokers", [0, 1, 2])
def test_a_seed_deals_numpys_permutations_of_the_deck_round_after_round(jokers):
    # The engine shuffles lists for speed; a seed must keep dealing the games it always dealt.
    rules = Rules(jokers=jokers, first_dealer=0)
    rng = np.random.default_rng(11)
    expected = [rng.permuted(np.arange(rules.deck_size)).tolist() for _ in rules.hand_sizes]
    assert BlackoutGame(rules, seed=11).decks == expected
    assert BlackoutGame(rules, seed=np.random.default_rng(11)).decks == expected


def test_given_decks_are_used_and_missing_rounds_are_shuffled():
    rules = Rules(num_players=3, hand_sizes=[1, 1])
    first = list(range(51, -1, -1))
    game = BlackoutGame(rules, seed=1, decks=[first, None])
    assert game.decks[0] == first and sorted(game.decks[1]) == list(range(52))
    assert BlackoutGame(rules, seed=1, decks={1: first}).decks[1] == first


@pytest.mark.parametrize(
    "decks, words",
    [
        ([list(range(51)) + [0]], "card 0 appears 2 times; card 51 is missing"),
        ([list(range(53))], "52 is not a card"),
        ([["AS"] * 52], "sequence of card ints"),
        ([[str(c) for c in range(52)]], "sequence of card ints"),
        ([[float(c) for c in range(52)]], "sequence of card ints"),
        ([np.arange(52, dtype=float)], r"sequence of card ints, got array\(\[ ?0\., 1\., 2\.[^\n]*$"),
        (["0123"], "got the string"),
        ({3: list(range(52))}, "round 3 does not exist"),
        (7, "expected a list of deck orders"),
    ],
)
def test_bad_deck_orders_are_rejected_clearly(decks, words):
    with pytest.raises(ValueError, match=words):
        BlackoutGame(Rules(num_players=3, hand_sizes=[1]), decks=decks)


def test_no_card_left_to_turn_means_no_trump():
    game = BlackoutGame(Rules(num_players=4, hand_sizes=[13], trump="turned", no_card_trump="none"), seed=0)
    assert game.turned_card is None and game.trump is None


def test_no_card_left_to_turn_with_dealer_last_shows_the_dealers_last_card():
    rules = Rules(num_players=4, hand_sizes=[13], no_card_trump="dealer_last", first_dealer=2)
    game = BlackoutGame(rules, seed=0)
    last = game.decks[0][51]
    assert game.turned_card == last and game.trump == last // 13
    assert last in game.hands[2]  # the dealer keeps it, and everyone has seen it
    assert game.view(0).shown_cards[2] == (last,)
    assert game.view(0).turned_card_held_by_dealer


def test_a_turned_joker_means_no_trump():
    game = game_with_hands(["AS", "KS", "QS"], turned="JK1", jokers=1)
    assert game.turned_card == parse_card("JK1") and game.trump is None


def test_rotating_trump_runs_hearts_diamonds_clubs_spades_no_trump():
    rules = Rules(num_players=3, hand_sizes=[1] * 7, trump="rotating")
    game = BlackoutGame(rules, seed=3)
    seen = []
    while not game.is_over:
        if not seen or seen[-1][0] != game.round_index:
            seen.append((game.round_index, game.trump, game.turned_card))
        game.step(game.legal_actions()[0])
    assert [trump for _, trump, _ in seen] == [HEARTS, DIAMONDS, CLUBS, SPADES, None, HEARTS, DIAMONDS]
    assert all(turned is None for _, _, turned in seen)


def test_no_trump_all_game():
    game = BlackoutGame(Rules(trump="none"), seed=1)
    while not game.is_over:
        assert game.trump is None and game.turned_card is None
        game.step(game.legal_actions()[0])


# ------------------------------------------------------------- dealer and turn
def test_dealer_rotates_clockwise_and_the_dealers_left_bids_and_leads_first():
    rules = Rules(num_players=5, hand_sizes=[1] * 7, first_dealer=3)
    game = BlackoutGame(rules, seed=0)
    dealers, first_bidders, first_leaders = [], [], []
    while not game.is_over:
        dealers.append(game.dealer)
        first_bidders.append(game.current_player)
        for _ in range(5):
            game.step(game.legal_actions()[0])
        first_leaders.append(game.current_player)
        for _ in range(5):
            game.step(game.legal_actions()[0])
    assert dealers == [3, 4, 0, 1, 2, 3, 4]
    assert first_bidders == [(d + 1) % 5 for d in dealers]
    assert first_leaders == first_bidders


def test_bids_go_clockwise_and_the_dealer_bids_last():
    game = BlackoutGame(Rules(num_players=4, first_dealer=1), seed=0)
    order = []
    while game.phase == "bid":
        order.append(game.current_player)
        game.step(game.legal_actions()[-1])
    assert order == [2, 3, 0, 1]


def test_first_dealer_random_is_drawn_from_the_seed():
    rules = Rules(num_players=5, first_dealer="random")
    dealers = {BlackoutGame(rules, seed=s).dealer for s in range(40)}
    assert dealers == {0, 1, 2, 3, 4}
    assert BlackoutGame(rules, seed=11).dealer == BlackoutGame(rules, seed=11).dealer
    assert BlackoutGame(rules, seed=11, first_dealer=2).dealer == 2


# ------------------------------------------------------------------- the hook
def dealer_bids_after(others, hand_size=5, hook=True):
    rules = Rules(num_players=4, hand_sizes=[hand_size], hook=hook)
    game = BlackoutGame(rules, seed=0)
    bid_all(game, *others)
    assert game.current_player == game.dealer
    return game


def test_hook_five_cards_others_bid_five_dealer_cannot_bid_zero():
    game = dealer_bids_after([2, 2, 1])
    assert game.forbidden_bid == 0
    assert game.legal_actions() == bid_actions(game, 1, 2, 3, 4, 5)


def test_hook_others_bid_three_dealer_cannot_bid_two():
    game = dealer_bids_after([1, 0, 2])
    assert game.forbidden_bid == 2
    assert game.legal_actions() == bid_actions(game, 0, 1, 3, 4, 5)
    assert game.view(game.dealer).forbidden_bid == 2


def test_hook_others_bid_seven_with_five_cards_any_dealer_bid_is_allowed():
    game = dealer_bids_after([3, 2, 2])
    assert game.forbidden_bid is None
    assert game.legal_actions() == bid_actions(game, 0, 1, 2, 3, 4, 5)


def test_hook_off_the_dealer_may_bid_anything():
    game = dealer_bids_after([1, 0, 2], hook=False)
    assert game.forbidden_bid is None
    assert game.legal_actions() == bid_actions(game, 0, 1, 2, 3, 4, 5)
    game.bid(2)
    assert sum(game.bids) == 5


def test_hook_binds_only_the_dealer():
    game = BlackoutGame(Rules(num_players=4, hand_sizes=[5]), seed=0)
    game.bid(5)
    assert game.forbidden_bid is None
    assert game.legal_actions() == bid_actions(game, 0, 1, 2, 3, 4, 5)


def test_the_dealer_naming_the_forbidden_bid_is_refused_with_the_reason():
    game = dealer_bids_after([1, 0, 2])
    before = snapshot(game)
    with pytest.raises(IllegalActionError) as info:
        game.bid(2)
    message = str(info.value)
    assert "player 0 cannot bid 2" in message
    assert "hook" in message and "the others bid 3" in message
    assert "legal: bids 0, 1, 3, 4, 5" in message
    assert snapshot(game) == before


@pytest.mark.parametrize(
    "others, named, prefer, ruling",
    [
        ([1, 0, 2], 2, "lower", 1),
        ([1, 0, 2], 2, "higher", 3),
        ([2, 2, 1], 0, "lower", 1),  # 0 forbidden: the only neighbour is 1
        ([0, 0, 0], 5, "lower", 4),  # 5 forbidden: the only neighbour is 4
        ([0, 0, 0], 5, "higher", 4),
        ([1, 0, 2], 4, "lower", 4),  # a permitted bid stands
    ],
)
def test_nearest_permitted_bid_ruling(others, named, prefer, ruling):
    game = dealer_bids_after(others)
    assert game.nearest_permitted_bid(named, prefer=prefer) == ruling


def test_nearest_permitted_bid_needs_a_bidding_phase_and_a_known_preference():
    game = dealer_bids_after([1, 0, 2])
    with pytest.raises(ValueError, match="prefer"):
        game.nearest_permitted_bid(2, prefer="middle")
    game.bid(0)
    with pytest.raises(IllegalActionError, match="play phase"):
        game.nearest_permitted_bid(2)


# ------------------------------------------------------------------- following
def test_players_must_follow_suit_when_they_can():
    game = game_with_hands(["AS 2C", "KS 3C", "4D 5C"], turned="2H", dealer=2)
    bid_all(game, 0, 0, 0)
    game.play("2C")
    assert game.legal_actions() == parse_cards("3C")
    before = snapshot(game)
    with pytest.raises(IllegalActionError) as info:
        game.play("KS")
    assert str(info.value) == "player 1 cannot play KS: they must follow suit (clubs led); legal: 3C"
    assert snapshot(game) == before


def test_a_player_who_cannot_follow_may_play_anything_and_shows_a_void():
    game = game_with_hands(["AS 2C", "KS 3C", "4D 5D"], turned="2H", dealer=2)
    bid_all(game, 0, 0, 0)
    play_all(game, "2C", "3C")
    assert game.legal_actions() == parse_cards("4D 5D")
    game.play("5D")
    assert CLUBS in game.view(0).voids[2]


def test_highest_trump_wins_else_highest_of_the_led_suit():
    game = game_with_hands(["2S 9C", "AS 3H", "KS 4H", "QS 5D"], turned="2H", dealer=3)
    bid_all(game, 0, 0, 0, 0)
    play_all(game, "9C", "3H", "4H", "5D")  # two trumps: the higher wins
    assert game.tricks_won == [0, 0, 1, 0]
    assert game.current_player == 2  # the winner leads
    play_all(game, "KS", "QS", "2S", "AS")
    assert game.tricks_won == [0, 1, 1, 0]


def test_off_suit_cards_never_win_without_trump():
    game = game_with_hands(["2C", "AS", "AD"], turned=None, dealer=2, trump="none")
    bid_all(game, 0, 0, 0)
    play_all(game, "2C", "AS", "AD")
    assert game.tricks_won == [1, 0, 0]


def test_the_last_trick_and_its_winner_are_kept():
    game = game_with_hands(["2C 3C", "4C 5C", "6C 7C"], turned="2H", dealer=2)
    bid_all(game, 0, 0, 0)
    play_all(game, "2C", "4C", "6C")
    assert game.last_trick == [(0, parse_card("2C")), (1, parse_card("4C")), (2, parse_card("6C"))]
    assert game.last_trick_winner == 2
    assert game.view(1).last_trick_winner == 2


# ------------------------------------------------------------- trump must break
def test_trump_may_not_be_led_before_it_is_broken():
    game = game_with_hands(["AH 3C 4C", "KC 9D 10D", "6H 7H 8D"], turned="2H", dealer=2, lead_trump="broken")
    bid_all(game, 0, 0, 0)
    assert game.legal_actions() == parse_cards("3C 4C")
    before = snapshot(game)
    with pytest.raises(IllegalActionError) as info:
        game.play("AH")
    assert "trump may not be led until trump is broken" in str(info.value)
    assert snapshot(game) == before
    # Seat 2 cannot follow clubs and trumps: trump is broken for the next lead.
    play_all(game, "3C", "KC", "6H")
    assert game.trump_broken and game.current_player == 2
    assert game.legal_actions() == parse_cards("8D 7H")


def test_a_leader_holding_only_trump_may_lead_trump():
    game = game_with_hands(["AH KH", "2C 3C", "4D 5D"], turned="2H", dealer=2, lead_trump="broken")
    bid_all(game, 0, 0, 0)
    assert not game.trump_broken
    assert game.legal_actions() == parse_cards("KH AH")
    game.play("AH")
    # Leading unbroken trump shows the leader holds nothing else.
    assert game.view(1).voids[0] == {CLUBS, DIAMONDS, SPADES}


def test_a_leader_holding_only_trump_and_a_joker_may_lead_either():
    game = game_with_hands(["AH JK1", "2C 3C", "4D 5D"], turned="2H", dealer=2, lead_trump="broken", jokers=2)
    bid_all(game, 0, 0, 0)
    assert game.legal_actions() == [parse_card("AH"), parse_card("JK1")]


def test_trump_may_be_led_any_time_by_default():
    game = game_with_hands(["AH 3C", "2C 4C", "4D 5D"], turned="2H", dealer=2)
    bid_all(game, 0, 0, 0)
    assert game.legal_actions() == parse_cards("3C AH")


# ---------------------------------------------------------------------- jokers
def test_a_joker_may_be_played_to_any_trick_and_wins_it():
    game = game_with_hands(["AS 2C", "KS JK1", "QS 3D"], turned="5H", dealer=2, jokers=2)
    bid_all(game, 0, 0, 0)
    game.play("AS")
    assert game.legal_actions() == [parse_card("KS"), parse_card("JK1")]  # may play it while able to follow
    play_all(game, "JK1", "QS")
    assert game.tricks_won == [0, 1, 0]


def test_the_first_of_two_jokers_wins():
    game = game_with_hands(["JK2 2C", "JK1 3C", "AH 4C"], turned="5H", dealer=2, jokers=2)
    bid_all(game, 0, 0, 0)
    play_all(game, "JK2", "JK1", "AH")
    assert game.tricks_won == [1, 0, 0]


def test_a_led_joker_names_no_suit_and_the_next_card_does():
    game = game_with_hands(["JK1 2C", "3D 3C", "4D 4C"], turned="5H", dealer=2, jokers=1)
    bid_all(game, 0, 0, 0)
    game.play("JK1")
    assert game.led_suit is None
    assert game.legal_actions() == parse_cards("3C 3D")
    game.play("3D")
    assert game.led_suit == DIAMONDS
    assert game.legal_actions() == parse_cards("4D")
    game.play("4D")
    assert game.tricks_won == [1, 0, 0]


def test_with_one_joker_the_deck_has_53_cards_and_54_card_actions():
    game = BlackoutGame(Rules(num_players=3, hand_sizes=[17], jokers=1), seed=0)
    assert sorted(game.decks[0]) == list(range(53))
    dealt = [c for hand in game.hands for c in hand] + [game.turned_card]
    assert len(set(dealt)) == 52 and set(dealt) <= set(range(53))
    assert game.num_cards == 54 and game.legal_actions()[0] == 54


# --------------------------------------------------------------------- scoring
@pytest.mark.parametrize(
    "options, expected",
    [
        ({}, [11, 10, 0]),
        ({"miss_points": -10}, [11, 10, -10]),
        ({"miss_points_per_trick": -1}, [11, 10, -1]),
        ({"points_per_bid": 0, "points_per_trick": 1}, [11, 10, 0]),
    ],
)
def test_hand_scores_follow_the_scoring_rules(options, expected):
    # Seat 0 bids 1 and takes the trick; seat 1 bids 0 and takes none; seat 2 (dealer) bids 1, takes none.
    game = game_with_hands(["AS", "2C", "3D"], turned="2H", dealer=2, **options)
    bid_all(game, 1, 0, 1)
    play_all(game, "AS", "2C", "3D")
    assert game.round_scores == [expected] and game.scores == expected
    assert game.round_bids == [[1, 0, 1]] and game.round_tricks == [[1, 0, 0]]


def test_scores_accumulate_over_the_match_and_the_highest_total_wins():
    rules = Rules(num_players=3, hand_sizes=[1, 1], trump="none")
    decks = [
        deck_order([parse_cards("AS"), parse_cards("2C"), parse_cards("3D")], dealer=0),
        deck_order([parse_cards("4S"), parse_cards("5S"), parse_cards("6S")], dealer=1),
    ]
    game = BlackoutGame(rules, decks=decks)
    bid_all(game, 0, 0, 0)  # seats 1, 2, then dealer 0 (hook: cannot bid 1)
    play_all(game, "2C", "3D", "AS")  # seat 1 leads 2C and wins: 0 bid 0 took 0... seat 0 discards
    assert game.round_scores[0] == [10, 0, 10]
    assert game.round_index == 1 and game.dealer == 1 and game.current_player == 2
    bid_all(game, 0, 0)
    game.bid(0)  # dealer seat 1: others bid 0, one card: 1 is forbidden
    play_all(game, "6S", "4S", "5S")
    assert game.round_scores[1] == [10, 10, 0]
    assert game.scores == [20, 10, 10]
    assert game.is_over and game.phase == "game_over" and game.current_player is None
    assert game.winners() == [0]
    assert game.history[-1] == ("game_over", (0,))


def test_equal_totals_share_the_win():
    game = game_with_hands(["AC", "2C", "3C"], turned=None, dealer=0, trump="none")
    bid_all(game, 0, 0, 0)  # seats 1 and 2 bid 0 and make it; dealer 0 bids 0 and takes the trick
    play_all(game, "2C", "3C", "AC")
    assert game.scores == [0, 10, 10]
    assert game.winners() == [1, 2]


# ----------------------------------------------------------- illegal actions
def test_the_reasons_count_one_card_and_one_trick_in_the_singular():
    game = BlackoutGame(Rules(num_players=3, hand_sizes=[2, 1], trump="none"), seed=1, start_round=1)
    assert game.hand_size == 1 and game.rules.max_bid == 2
    with pytest.raises(IllegalActionError, match="bids run 0..1 with 1 card;"):
        game.step(game.num_cards + 2)
    game.bid(0)
    game.bid(0)
    with pytest.raises(IllegalActionError, match="the dealer may not make the bids total the 1 trick "):
        game.bid(1)


def test_illegal_actions_name_the_player_action_reason_and_legal_actions():
    game = game_with_hands(["AS 2C", "KS 3C", "4D 5C"], turned="2H", dealer=2)
    cases = [
        (lambda: game.play("AS"), "player 0 cannot play AS: bidding is not over yet; legal: bids 0, 1, 2"),
        (lambda: game.bid(3), "player 0 cannot bid 3: bids run 0..2 this hand; legal: bids 0, 1, 2"),
        (lambda: game.step(500), "player 0 cannot take action 500: actions run 0..54 (cards 0..51, then bids); legal: bids 0, 1, 2"),
        (lambda: game.step(-1), "player 0 cannot take action -1"),
        (lambda: game.step("AS"), "player 0 cannot take action 'AS': an action is an int, got str; legal: bids"),
        (lambda: game.bid(99), "player 0 cannot bid 99: bids run 0..2 this hand"),
        (lambda: game.bid(1.0), "player 0 cannot bid 1.0: a bid is a whole number of tricks; legal: bids"),
        (lambda: game.play(60), "player 0 cannot play 60: 60 is not a card of this deck (0..51); legal: bids"),
        (lambda: game.play("ZZ"), "'ZZ' is not a card"),
    ]
    before = snapshot(game)
    for attempt, words in cases:
        with pytest.raises(ValueError) as info:
            attempt()
        assert words in str(info.value)
        assert snapshot(game) == before
    bid_all(game, 0, 0, 0)
    before = snapshot(game)
    for attempt, words in [
        (lambda: game.bid(1), "player 0 cannot bid 1: bidding is over, it is time to play a card; legal: 2C AS"),
        (lambda: game.play("KS"), "player 0 cannot play KS: they do not hold KS; legal: 2C AS"),
    ]:
        with pytest.raises(IllegalActionError, match=words):
            attempt()
        assert snapshot(game) == before


def test_no_action_is_legal_after_the_game():
    game = game_with_hands(["AS", "2C", "3D"], turned="2H", dealer=2)
    bid_all(game, 0, 0, 0)
    play_all(game, "AS", "2C", "3D")
    assert game.legal_actions() == []
    with pytest.raises(IllegalActionError, match="the game is over"):
        game.step(0)


def test_numpy_integer_actions_are_accepted():
    game = BlackoutGame(seed=0)
    game.step(np.int64(game.legal_actions()[0]))
    assert len(game.actions) == 1 and type(game.actions[0]) is int


def test_legal_actions_returns_a_copy():
    game = BlackoutGame(seed=0)
    game.legal_actions().clear()
    assert game.legal_actions()


# ------------------------------------------------------------------- the view
def test_a_view_holds_the_players_hand_and_public_facts_only():
    game = game_with_hands(["AS 2C", "KS 3C", "4D 5D"], turned="2H", dealer=2)
    bid_all(game, 1, 0)
    view = game.view(2)
    assert view.hand == tuple(parse_cards("4D 5D"))
    assert view.bids == (1, 0, None)
    assert view.is_dealer and view.is_my_turn and view.position == 2
    assert view.forbidden_bid == 1
    assert view.legal_actions == tuple(bid_actions(game, 0, 2))
    assert game.view(0).legal_actions == ()
    assert game.view(0).position == 0
    game.bid(0)
    play_all(game, "2C", "3C", "5D")
    view = game.view(1)
    assert view.played == ((parse_card("2C"),), (parse_card("3C"),), (parse_card("5D"),))
    assert view.voids[2] == {CLUBS}
    assert view.tricks_won == (0, 1, 0) and view.tricks_left == 1
    # Seat 1 bid 0 and took one: impossible; seat 0 bid 1, one trick left: still possible.
    assert view.bid_impossible == (False, True, False)
    assert view.cards_left(0) == 1
    assert parse_card("AS") in view.unseen_cards and parse_card("2H") not in view.unseen_cards
    assert parse_card("KS") not in view.unseen_cards  # seat 1's own card


def test_a_bid_is_impossible_when_too_few_tricks_remain():
    game = game_with_hands(["AS 2C", "KS 3C", "4D 5D"], turned="2H", dealer=2)
    bid_all(game, 0, 2, 1)
    play_all(game, "AS", "KS", "4D")  # seat 0 takes it: seat 1 (bid 2) cannot reach 2 now
    assert game.view(0).bid_impossible == (True, True, False)


def test_view_rejects_a_seat_that_does_not_exist():
    with pytest.raises(ValueError, match="seat 0..3, got 4"):
        BlackoutGame(seed=0).view(4)


# --------------------------------------------------------------------- history
def test_history_logs_deal_bids_plays_tricks_and_round_scores():
    game = game_with_hands(["AS", "2C", "3D"], turned="2H", dealer=2)
    bid_all(game, 1, 0, 1)
    play_all(game, "AS", "2C", "3D")
    kinds = [event[0] for event in game.history]
    assert kinds == ["deal", "bid", "bid", "bid", "play", "play", "play", "trick", "round_end", "game_over"]
    deal = game.history[0]
    assert deal[:6] == ("deal", 0, 2, 1, parse_card("2H"), HEARTS)
    assert deal[6] == ((parse_card("AS"),), (parse_card("2C"),), (parse_card("3D"),))
    assert game.history[7] == ("trick", 0, ((0, parse_card("AS")), (1, parse_card("2C")), (2, parse_card("3D"))))
    assert game.history[8] == ("round_end", 0, (11, 10, 0), (11, 10, 0))


def test_clone_is_independent():
    game = BlackoutGame(seed=2)
    copy = game.clone()
    copy.step(copy.legal_actions()[0])
    assert game.actions == [] and copy.actions != []
    assert copy != game


def test_start_round_plays_one_hand_of_a_match():
    game = BlackoutGame(Rules(), seed=0, start_round=9)
    assert game.hand_size == 1 and game.round_index == 9 and game.dealer == 9 % 4
    while not game.is_over:
        game.step(game.legal_actions()[0])
    assert len(game.round_scores) == 1


@pytest.mark.parametrize("kwargs, words", [({"first_dealer": 4}, "seat 0..3"), ({"start_round": 10}, "round 0..9")])
def test_constructor_checks_first_dealer_and_start_round(kwargs, words):
    with pytest.raises(ValueError, match=words):
        BlackoutGame(seed=0, **kwargs)


def test_trump_is_the_suit_of_the_turned_card():
    # Suits are 0..3 in the order C D H S.
    game = game_with_hands(["AS", "2C", "3D"], turned="9S", dealer=2)
    assert game.trump == SPADES and game.view(1).trump == SPADES


def test_a_game_pickles_mid_hand_and_plays_on_identically():
    import pickle

    game = BlackoutGame(Rules.preset("jokers"), seed=8)
    for _ in range(15):
        game.step(game.legal_actions()[-1])
    data = pickle.dumps(game)
    assert b"_follow_voids" not in data  # the shared card tables are rebuilt from the trump, not saved
    copy = pickle.loads(data)
    assert copy == game and snapshot(copy) == snapshot(game)
    while not game.is_over:
        action = game.legal_actions()[0]
        game.step(action)
        copy.step(action)
    assert snapshot(copy) == snapshot(game)
