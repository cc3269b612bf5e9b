"""The rule facts, stated on the functions that define them, and the tables built from them."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from blackout_env import BlackoutGame, Rules, deck_order
from blackout_env.batched import NONE, BatchedBlackout
from blackout_env.game.cards import CLUBS, DIAMONDS, HEARTS, JOKER_1, JOKER_2, SPADES, parse_card, parse_cards, suit_of
from blackout_env.game.rules_logic import (
    CANNOT_WIN,
    REWARDS,
    bid_out_of_reach,
    bid_range,
    card_facts,
    card_power,
    dealer_of_round,
    dealt_hands,
    dealt_to,
    decisions_per_hand,
    first_to_act,
    forbidden_bid,
    illegal_action_reason,
    is_trump,
    led_suit_of,
    match_places,
    match_winners,
    playable_bits,
    playable_cards,
    seat_rewards,
    suit_led_after,
    trick_winner,
    turned_card,
    voids_shown,
    win_shares,
)

SUITS_OR_NONE = (None, CLUBS, DIAMONDS, HEARTS, SPADES)


def trick(*cards: str) -> list[tuple[int, int]]:
    """(seat, card) pairs, seats 0, 1, 2, ... in the order played."""
    return list(enumerate(parse_cards(" ".join(cards))))


# ------------------------------------------------------------------- the hook
def test_dealer_cannot_make_bids_total_tricks():
    assert forbidden_bid(hand_size=5, others_total=3, hook=True) == 2
    assert forbidden_bid(hand_size=5, others_total=5, hook=True) == 0
    assert forbidden_bid(hand_size=5, others_total=0, hook=True) == 5


def test_nothing_is_forbidden_when_the_others_already_bid_more_than_the_tricks():
    assert forbidden_bid(hand_size=3, others_total=4, hook=True) is None


def test_without_the_hook_the_dealer_may_bid_anything():
    assert all(forbidden_bid(5, total, hook=False) is None for total in range(20))


def test_the_engine_the_view_and_the_batched_engine_forbid_the_same_bid():
    rules = Rules(num_players=4, hand_sizes=[5])
    game = BlackoutGame(rules, seed=0)
    for bid in (1, 0, 2):
        game.bid(bid)
    assert game.forbidden_bid == game.view(game.dealer).forbidden_bid == 2
    assert rules.num_cards + 2 not in game.legal_actions()
    batched = BatchedBlackout(rules, num_envs=1, observations=False)
    batched.reset(seed=0)
    for bid in (1, 0, 2):
        step = batched.step(np.array([rules.num_cards + bid]))
    assert step.action_mask[0, rules.num_cards + 2] == 0 and step.action_mask[0, rules.num_cards + 1] == 1


def test_a_bid_is_out_of_reach_once_overtaken_or_when_too_few_tricks_remain():
    assert bid_out_of_reach(bid=1, tricks_won=2, tricks_left=3)
    assert bid_out_of_reach(bid=3, tricks_won=0, tricks_left=2)
    assert not bid_out_of_reach(bid=2, tricks_won=0, tricks_left=2)
    assert not bid_out_of_reach(bid=0, tricks_won=0, tricks_left=0)
    bids, won = np.array([1, 3, 2]), np.array([2, 0, 0])
    assert bid_out_of_reach(bids, won, 2).tolist() == [True, True, False]


# ------------------------------------------------------------- following suit
def test_a_player_holding_the_led_suit_must_follow_it():
    hand = parse_cards("2C 9C AH KS")
    assert playable_cards(hand, CLUBS, HEARTS, leads=False, trump_broken=False, must_break=False) == parse_cards("2C 9C")


def test_a_player_without_the_led_suit_may_play_anything():
    hand = parse_cards("2C 9C AH")
    assert playable_cards(hand, SPADES, HEARTS, leads=False, trump_broken=False, must_break=True) == hand


def test_a_joker_may_be_played_to_any_trick():
    hand = [*parse_cards("2C AH"), JOKER_1]
    assert playable_cards(hand, CLUBS, HEARTS, leads=False, trump_broken=False, must_break=False) == [
        parse_card("2C"),
        JOKER_1,
    ]


def test_after_a_led_joker_any_card_may_follow():
    hand = parse_cards("2C AH")
    assert playable_cards(hand, None, HEARTS, leads=False, trump_broken=False, must_break=False) == hand


def test_trump_may_not_be_led_before_it_is_broken_unless_the_leader_holds_only_trump():
    hand = parse_cards("2C KH AH")
    unbroken = dict(leads=True, trump_broken=False, must_break=True)
    assert playable_cards(hand, None, HEARTS, **unbroken) == parse_cards("2C")
    assert playable_cards(hand, None, HEARTS, leads=True, trump_broken=True, must_break=True) == hand
    assert playable_cards(hand, None, HEARTS, leads=True, trump_broken=False, must_break=False) == hand
    only_trump = [*parse_cards("KH AH"), JOKER_2]  # jokers are not another suit
    assert playable_cards(only_trump, None, HEARTS, **unbroken) == only_trump


def test_the_bitset_rule_of_the_fast_paths_is_playable_cards():
    rng = np.random.default_rng(0)
    suit_bits = [sum(1 << c for c in range(s * 13, s * 13 + 13)) for s in range(4)]
    jokers, standard = (1 << JOKER_1) | (1 << JOKER_2), (1 << 52) - 1
    for _ in range(3000):
        hand = sorted(int(c) for c in rng.choice(54, size=int(rng.integers(1, 14)), replace=False))
        led, trump = rng.choice(SUITS_OR_NONE), rng.choice(SUITS_OR_NONE)
        leads, broken, must_break = (bool(x) for x in rng.integers(2, size=3))
        expected = playable_cards(hand, None if leads else led, trump, leads=leads, trump_broken=broken, must_break=must_break)
        follow = suit_bits[led] if led is not None and not leads else 0
        breaks = suit_bits[trump] if leads and must_break and trump is not None and not broken else 0
        bits = playable_bits(leads, sum(1 << c for c in hand), follow, breaks, jokers, standard)
        assert bits == sum(1 << c for c in expected), (hand, led, trump, leads, broken, must_break)


# ------------------------------------------------------------------ the trick
def test_the_first_card_that_is_not_a_joker_names_the_led_suit():
    assert led_suit_of(parse_cards("5D 2C")) == DIAMONDS
    assert led_suit_of([JOKER_1, *parse_cards("5D 2C")]) == DIAMONDS
    assert led_suit_of([JOKER_1]) is None and led_suit_of([]) is None
    assert suit_led_after(None, JOKER_2) is None
    assert suit_led_after(SPADES, parse_card("2C")) == SPADES


def test_trumps_are_cards_of_the_trump_suit_only():
    assert is_trump(parse_card("2H"), HEARTS)
    assert not is_trump(parse_card("AS"), HEARTS)
    assert not is_trump(JOKER_1, HEARTS) and not is_trump(JOKER_1, None)
    assert not any(is_trump(card, None) for card in range(52))


def test_a_joker_beats_a_trump_beats_the_led_suit_beats_the_other_suits():
    led, trump = CLUBS, HEARTS
    joker, two_of_trump, ace_led, two_led, ace_other = JOKER_1, *parse_cards("2H AC 2C AS")
    powers = [card_power(c, led, trump) for c in (joker, two_of_trump, ace_led, two_led)]
    assert powers == sorted(powers, reverse=True) and len(set(powers)) == 4
    assert card_power(ace_other, led, trump) == CANNOT_WIN
    assert card_power(JOKER_1, led, trump) == card_power(JOKER_2, led, trump)


def test_the_highest_card_of_the_led_suit_wins_without_trump():
    assert trick_winner(trick("5C", "KC", "AS", "2C"), trump=None) == 1


def test_the_highest_trump_wins():
    assert trick_winner(trick("AC", "2H", "5H", "KC"), trump=HEARTS) == 2


def test_the_first_of_two_jokers_wins():
    played = [(0, parse_card("AH")), (1, JOKER_2), (2, JOKER_1), (3, parse_card("KH"))]
    assert trick_winner(played, trump=HEARTS) == 1


def test_after_a_led_joker_the_joker_still_wins():
    played = [(0, JOKER_1), (1, parse_card("2C")), (2, parse_card("AC"))]
    assert trick_winner(played, trump=SPADES) == 0


def test_the_engine_takes_its_trick_winner_from_the_rule():
    rules = Rules(num_players=4, hand_sizes=[1], first_dealer=3)
    game = BlackoutGame(rules, decks=[deck_order([["AC"], ["2H"], ["5H"], ["KC"]], dealer=3, turned_card="9H")])
    for bid in (0, 0, 0, 0):
        game.bid(bid)
    for card in ("AC", "2H", "5H", "KC"):
        game.play(card)
    assert game.last_trick_winner == trick_winner(game.last_trick, game.trump) == 2


def test_the_trick_goes_to_the_first_card_of_highest_power_in_every_trick():
    rng = np.random.default_rng(0)
    for _ in range(2000):
        cards = rng.choice(54, size=int(rng.integers(1, 8)), replace=False).tolist()
        played = list(zip(rng.permutation(7).tolist(), cards))
        trump = SUITS_OR_NONE[int(rng.integers(5))]
        led = next((card // 13 for card in cards if card < 52), None)
        powers = [card_power(card, led, trump) for card in cards]
        assert trick_winner(played, trump) == played[powers.index(max(powers))][0]
        assert trick_winner(played, trump, led_suit=led) == played[powers.index(max(powers))][0]  # as the engine asks


def test_every_seat_with_the_highest_total_wins_the_match():
    assert match_winners([3, 10, 10, -2]) == [1, 2]
    assert match_winners((-5, -9, -1)) == [2]
    assert match_winners([0, 0, 0]) == [0, 1, 2]
    for totals in ([3, 10, 10, -2], [-5, -9, -5, -5, 1, 1, -5], [4]):
        assert match_winners(totals) == np.flatnonzero(win_shares(totals)).tolist()


def test_equal_totals_share_the_better_place_and_the_next_place_is_skipped():
    assert match_places([30, 41, 30, 12]) == [2, 1, 2, 4]
    assert match_places([0, 0, 0]) == [1, 1, 1]
    for totals in ([3, 10, 10, -2], [-5, -9, -5, -5, 1, 1, -5]):
        places = match_places(totals)
        assert [seat for seat, place in enumerate(places) if place == 1] == match_winners(totals)


def test_one_games_match_win_shares_equal_the_array_form():
    for totals in ([3, 10, 10, -2], (0, 0, 0), [7], [-5, -9, -5, -5, 1, 1, -5], [2**40, 2**40 - 1]):
        shares = win_shares(totals)
        expected = np.asarray(totals) == max(totals)
        expected = expected / expected.sum()
        assert shares.dtype == expected.dtype and shares.tolist() == expected.tolist()
    assert win_shares([[1, 2], [3, 3]]).tolist() == [[0.0, 1.0], [0.5, 0.5]]  # several games: the array form


# -------------------------------------------------------------------- voids
def test_not_following_the_led_suit_shows_a_void_in_it():
    assert voids_shown(parse_card("2H"), CLUBS, SPADES, leads=False, trump_broken=False, must_break=False) == {CLUBS}
    assert voids_shown(parse_card("2C"), CLUBS, SPADES, leads=False, trump_broken=False, must_break=False) == set()


def test_a_joker_shows_no_void():
    for led in SUITS_OR_NONE:
        assert voids_shown(JOKER_1, led, HEARTS, leads=led is None, trump_broken=False, must_break=True) == set()


def test_leading_unbroken_trump_shows_a_void_in_every_other_suit_when_trump_must_break():
    ah = parse_card("AH")
    assert voids_shown(ah, None, HEARTS, leads=True, trump_broken=False, must_break=True) == {CLUBS, DIAMONDS, SPADES}
    assert voids_shown(ah, None, HEARTS, leads=True, trump_broken=True, must_break=True) == set()
    assert voids_shown(ah, None, HEARTS, leads=True, trump_broken=False, must_break=False) == set()
    # After a led joker the trump names the suit but does not lead: nothing is shown.
    assert voids_shown(ah, None, HEARTS, leads=False, trump_broken=False, must_break=True) == set()



def test_the_card_tables_of_the_engine_and_encoder_equal_the_rule_functions():
    for trump, must_break in itertools.product(SUITS_OR_NONE, (False, True)):
        trumps, follow_voids = card_facts(trump, must_break)
        for card in range(JOKER_2 + 1):
            assert (card in trumps) == is_trump(card, trump)
            for broken, led in itertools.product((False, True), (CLUBS, DIAMONDS, HEARTS, SPADES)):
                shown = voids_shown(card, led, trump, leads=False, trump_broken=broken, must_break=must_break)
                assert follow_voids[broken][led][card] == shown

# ----------------------------------------------------------- illegal actions
def test_every_illegal_action_is_named_by_the_rule_it_breaks():
    rules = Rules(num_players=3, hand_sizes=[2, 3], first_dealer=2, lead_trump="broken")  # bids run to 3
    hands = [["2C", "AH"], ["3C", "KS"], ["4C", "QS"]]
    game = BlackoutGame(rules, decks=[deck_order(hands, dealer=2, turned_card="5H")])
    c = rules.num_cards

    def reason(action: int) -> str | None:
        return illegal_action_reason(game.view(game.current_player), action)

    assert reason(parse_card("2C")) == "bidding_not_over"
    assert reason(c + 3) == "bid_too_high"
    assert reason(rules.num_actions) == "not_an_action" and reason(-1) == "not_an_action"
    assert reason(c + 1) is None
    game.bid(1)
    game.bid(0)
    assert reason(c + 1) == "hook"
    game.bid(0)
    assert reason(c + 0) == "bidding_over"
    assert reason(parse_card("3C")) == "card_not_held"
    assert reason(parse_card("AH")) == "trump_not_broken"
    assert reason(parse_card("2C")) is None
    game.play("2C")
    assert reason(parse_card("KS")) == "must_follow_suit"


def test_no_action_is_legal_once_the_game_is_over():
    game = BlackoutGame(Rules(num_players=3, hand_sizes=[1]), seed=1)
    while not game.is_over:
        game.step(game.legal_actions()[0])
    assert illegal_action_reason(game.view(0), 0) == "game_over"


# ------------------------------------------------------------------ rewards
def test_score_rewards_are_the_hand_scores():
    assert seat_rewards("score", [11, 0, 13]).tolist() == [11.0, 0.0, 13.0]


def test_zero_sum_rewards_subtract_the_mean_of_the_others_and_sum_to_zero():
    rewards = seat_rewards("zero_sum", [12, 0, 10, -2])
    assert rewards.tolist() == pytest.approx([12 - 8 / 3, 0 - 20 / 3, 10 - 10 / 3, -2 - 22 / 3])
    assert rewards.sum() == pytest.approx(0.0)


def test_win_rewards_share_one_among_the_leaders_at_the_end_only():
    assert seat_rewards("win", [0, 0, 0], totals=[30, 12, 30], episode_over=True).tolist() == [0.5, 0.0, 0.5]
    assert seat_rewards("win", [0, 0, 0], totals=[30, 12, 30], episode_over=False).tolist() == [0.0, 0.0, 0.0]


def test_rewards_of_many_games_at_once_and_float_scores_keep_their_dtype():
    scores = np.array([[11, 0, 13], [0, 12, 0]], dtype=np.float32)
    zero_sum = seat_rewards("zero_sum", scores)
    assert zero_sum.dtype == np.float32 and zero_sum.shape == (2, 3)
    assert zero_sum[1].tolist() == pytest.approx([-6.0, 12.0, -6.0])
    wins = seat_rewards("win", scores, totals=np.array([[5, 9, 1], [4, 4, 4]]), episode_over=np.array([True, True]))
    assert wins[0].tolist() == [0.0, 1.0, 0.0] and wins[1].tolist() == pytest.approx([1 / 3, 1 / 3, 1 / 3])


def test_an_unknown_reward_mode_is_refused_naming_the_modes():
    with pytest.raises(ValueError, match="reward: must be one of score, zero_sum, win; got 'points'"):
        seat_rewards("points", [1, 2, 3])
    assert REWARDS == ("score", "zero_sum", "win")


# ------------------------------------------------- the batched engine's tables
TABLE_RULES = [
    Rules(num_players=4),
    Rules(num_players=3, hook=False, jokers=2, lead_trump="broken"),
    Rules(num_players=5, jokers=1, hand_sizes="up", max_hand_size="full"),
]


@pytest.mark.parametrize("rules", TABLE_RULES, ids=["standard", "jokers-broken-no-hook", "one-joker"])
def test_the_batched_tables_equal_the_rule_functions_on_every_input(rules):
    tables = BatchedBlackout(rules, num_envs=1, observations=False)._t
    power = tables.power_flat.reshape(5, 5, rules.num_cards)  # [trump + 1, led + 1, card]

    def batched(value):
        return NONE if value is None else value

    cards = range(rules.num_cards)
    must_break = rules.lead_trump == "broken"
    for (t, trump), (k, led), card in itertools.product(enumerate(SUITS_OR_NONE), enumerate(SUITS_OR_NONE), cards):
        assert power[t, k, card] == card_power(card, led, trump)
        assert tables.is_trump[t, card] == is_trump(card, trump)
        assert tables.led_after[k, card] == batched(suit_led_after(led, card))
        for leads, broken in itertools.product((False, True), repeat=2):
            shown = voids_shown(card, led, trump, leads=leads, trump_broken=broken, must_break=must_break)
            flags = tables.voids_shown[int(leads), int(broken), t, k, card]
            assert {suit for suit in range(4) if flags >> suit & 1} == shown
    assert tables.suit_or_none[0] == NONE  # no card turned: no trump
    assert all(tables.suit_or_none[card + 1] == batched(suit_of(card)) for card in cards)  # a joker: no trump
    for size, total in itertools.product(range(rules.max_bid + 1), range(rules.num_players * rules.max_bid + 1)):
        assert tables.forbidden_bid[size, total] == batched(forbidden_bid(size, total, hook=rules.hook))


def test_card_k_of_the_deck_goes_to_the_kth_seat_after_the_dealer():
    # 4 players, dealer 2: the deal starts at seat 3 and goes round clockwise.
    assert [dealt_to(k, 2, 4) for k in range(8)] == [3, 0, 1, 2, 3, 0, 1, 2]
    assert dealt_to(np.arange(4), np.int64(3), 4).tolist() == [0, 1, 2, 3]
    deck = list(range(52))
    hands = dealt_hands(deck, dealer=2, num_players=4, hand_size=2)
    assert hands == [[1, 5], [2, 6], [3, 7], [0, 4]]
    for k in range(8):
        assert deck[k] in hands[dealt_to(k, 2, 4)]
    # deck_order inverts the protocol: the hands it is given are the hands dealt.
    wanted = [parse_cards("AS 2C"), parse_cards("KS 3C"), parse_cards("QS 4C")]
    assert dealt_hands(deck_order(wanted, dealer=1), 1, 3, 2) == [sorted(hand) for hand in wanted]


def test_the_dealers_left_bids_first_and_leads_the_first_trick():
    assert [first_to_act(dealer, 4) for dealer in range(4)] == [1, 2, 3, 0]
    assert first_to_act(np.array([0, 4]), 5).tolist() == [1, 0]
    for dealer in range(4):
        game = BlackoutGame(Rules(num_players=4, hand_sizes=[3], first_dealer=dealer), seed=0)
        assert game.current_player == game.leader == first_to_act(dealer, 4)
        for _ in range(4):  # the dealer bids last
            bidder = game.current_player
            game.step(game.legal_actions()[0])
        assert bidder == dealer
        assert game.phase == "play" and game.current_player == first_to_act(dealer, 4)


def test_the_card_after_the_deal_is_turned_up_to_name_trump():
    deck = list(range(52))
    assert turned_card(deck, 4, 5, "turned", "no_trump") == (20, False)
    assert turned_card(deck, 4, 5, "turned", "dealer_last") == (20, False)  # a card is left: it is turned
    assert turned_card(deck, 4, 5, "none", "dealer_last") == (None, False)  # trump named by the rules


def test_with_no_card_left_the_dealers_last_card_names_trump_under_dealer_last():
    deck = list(range(52))
    assert turned_card(deck, 4, 13, "turned", "no_trump") == (None, False)
    assert turned_card(deck, 4, 13, "turned", "dealer_last") == (51, True)
    # The dealer gets the last card dealt, and keeps it: the engine shows it and lets it name trump.
    rules = Rules(num_players=4, hand_sizes=[13], no_card_trump="dealer_last", first_dealer=1)
    game = BlackoutGame(rules, decks=[deck])
    assert dealt_to(51, 1, 4) == 1 and 51 in game.hands[1]
    assert (game.turned_card, game.turned_card_held_by_dealer, game.trump) == (51, True, SPADES)


def test_a_bid_names_any_number_of_tricks_from_none_to_all():
    assert list(bid_range(0)) == [0]
    assert list(bid_range(3)) == [0, 1, 2, 3]
    game = BlackoutGame(Rules(num_players=4, hand_sizes=[3], hook=False), seed=0)
    assert game.legal_actions() == [game.num_cards + bid for bid in bid_range(3)]
    assert Rules(num_players=4, hand_sizes=[1, 5, 2]).num_actions == 52 + len(bid_range(5))


def test_decisions_per_match_counts_every_bid_and_card():
    assert decisions_per_hand(4, 10) == 4 + 40  # every seat bids once and plays ten cards
    rules = Rules(num_players=3, hand_sizes=[1, 2, 3])
    assert rules.decisions_per_match == 3 * 2 + 3 * 3 + 3 * 4
    game = BlackoutGame(rules, seed=0)
    while game.phase != "game_over":
        game.step(game.legal_actions()[-1])
    assert len(game.actions) == rules.decisions_per_match


def test_the_batched_deal_tables_equal_the_rule_functions():
    for rules in (*TABLE_RULES, Rules(num_players=4, hand_sizes=[13, 12], no_card_trump="dealer_last")):
        tables = BatchedBlackout(rules, num_envs=1, observations=False)._t
        n, positions = rules.num_players, list(range(rules.deck_size))
        for dealer in range(n):
            assert tables.first_to_act[dealer] == first_to_act(dealer, n)
            assert tables.deal_seat[dealer].tolist() == [dealt_to(k, dealer, n) for k in positions]
        for r, size in enumerate(rules.hand_sizes):
            position, held = turned_card(positions, n, size, rules.trump, rules.no_card_trump)
            assert (tables.turned_position[r], tables.turned_held[r]) == (NONE if position is None else position, held)
        # The kernels mirror bid_range: the first bidder may bid every number of tricks of the hand.
        first = BatchedBlackout(rules, num_envs=1, seed=0).reset()
        bids = np.flatnonzero(first.action_mask[0][rules.num_cards:])
        assert bids.tolist() == list(bid_range(rules.hand_sizes[0]))


def test_the_deal_passes_one_seat_left_each_hand_in_the_engine_and_the_batched_engine():
    rules = Rules.preset("standard").replace(first_dealer=2)
    batched = BatchedBlackout(rules, num_envs=1, seed=0, observations=False)
    batched.reset()
    game = BlackoutGame(rules, decks=batched.decks[0].tolist())
    for round_index in range(3):
        assert game.dealer == int(batched.dealer[0]) == dealer_of_round(2, round_index, 4) == (2 + round_index) % 4
        while game.round_index == round_index:
            action = game.legal_actions()[0]
            game.step(action)
            batched.step(np.array([action]))
    # Counting back from a hand's dealer gives the match's first dealer, for ints and arrays alike.
    assert dealer_of_round(1, -5, 4) == 0
    assert dealer_of_round(np.array([0, 3], dtype=np.int8), np.array([1, -1]), 4).tolist() == [1, 2]
