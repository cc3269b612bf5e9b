"""The screens of ``blackout play``, as text, from known deals (no terminal needed)."""

from __future__ import annotations

import numpy as np
import pytest
from blackout_training.play import screen

from blackout_env import BlackoutGame, Rules, preset_names
from blackout_env.game.cards import parse_card
from blackout_env.game.engine import deck_order
from blackout_env.game.scoresheet import score_sheet

NAMES = ["P0 you", "P1 heuristic", "P2 search"]


def seat_row(text: str | list[str], name: str) -> str:
    """The table line of one seat (it starts with the to-act marker and the seat's name)."""
    lines = text.splitlines() if isinstance(text, str) else text
    return next(line for line in lines if line[2:].startswith(name))


def game_with(hands: list[str], turned: str | None, **rules) -> BlackoutGame:
    options = {"num_players": len(hands), "hand_sizes": [len(hands[0].split())]} | rules
    return BlackoutGame(Rules(**options), decks=[deck_order([hand.split() for hand in hands], dealer=0, turned_card=turned)])


def test_hand_is_sorted_by_suit_with_trump_last_and_numbered_in_that_order():
    game = game_with(["2S AC 10H KC", "3C 4C 5C 6C", "7C 8C 9C JC"], turned="QS")
    view = game.view(0)
    assert [screen.card_to_str(c) for c in screen.hand_order(view)] == ["AC", "KC", "10H", "2S"]
    text = screen.render_hand(view, unicode=False)
    assert "clubs           1) AC  2) KC" in text
    assert "hearts          3) 10H" in text
    assert "spades (trump)  4) 2S" in text


def test_table_shows_hand_trump_turned_card_bids_tricks_and_scores():
    game = game_with(["AC KC", "3C 4C", "7C 8C"], turned="QS")
    game.bid(1)
    view = game.view(2)
    text = screen.render_table(view, NAMES, unicode=False)
    assert text.splitlines()[0] == "Hand 1 of 1: 2 cards each, dealer P0 you"
    assert "Trump: spades (turned card QS)" in text
    p1 = seat_row(text, "P1 heuristic")
    assert p1.split() == ["P1", "heuristic", "1", "0", "0"]
    assert "Bids so far: 1 (1 of 3 seats) for 2 tricks" in text
    assert seat_row(text, "P2 search").startswith(">")
    assert "P0 you (D)" in text


def test_current_trick_is_shown_by_seat_and_a_seat_that_trumped_in_is_marked():
    # P1 leads clubs; P2 has no club and trumps in with a spade.
    game = game_with(["AH KH", "3C 4C", "2S 8D"], turned="QS")
    for bid in (0, 0, 1):
        game.bid(bid)
    game.play("3C")
    game.play("2S")
    text = screen.render_table(game.view(0), NAMES, unicode=False)
    assert "Trick 1 of 2, led by P1 heuristic: clubs" in text
    p1 = seat_row(text, "P1 heuristic")
    p2 = seat_row(text, "P2 search")
    assert p1.rstrip().endswith("3C")
    assert p2.rstrip().endswith("2S  trumped in")


def test_following_the_trump_suit_led_is_not_trumping_in():
    game = game_with(["AH KH", "3S 4C", "2S 8D"], turned="QS")
    for bid in (0, 0, 1):
        game.bid(bid)
    game.play("3S")
    game.play("2S")
    assert "trumped in" not in screen.render_table(game.view(0), NAMES)


def test_bo_marks_a_seat_once_its_bid_can_no_longer_be_made():
    game = game_with(["AC KC", "3C 4C", "7C 8C"], turned="QS")
    for bid in (2, 0, 1):  # P1 bids 2, P2 bids 0, dealer P0 bids 1
        game.bid(bid)
    game.play("3C")  # P1 leads; P2 and P0 follow; P0's ace wins
    game.play("7C")
    assert "b/o" not in screen.render_table(game.view(0), NAMES)
    game.play("AC")
    lines = screen.render_table(game.view(0), NAMES).splitlines()
    p1 = seat_row(lines, "P1 heuristic")
    p2 = seat_row(lines, "P2 search")
    assert "b/o" in p1  # bid 2 with one trick left and none taken
    assert "b/o" not in p2


def test_bid_total_line_says_whether_the_table_is_over_or_under():
    game = game_with(["AC KC", "3C 4C", "7C 8C"], turned="QS")
    for bid in (2, 1, 1):
        game.bid(bid)
    assert screen.bid_total_line(game.view(0)) == "Bids total 4 for 2 tricks (overbid by 2: someone must miss)"
    game = game_with(["AC KC", "3C 4C", "7C 8C"], turned="QS")
    for bid in (0, 0, 1):
        game.bid(bid)
    assert screen.bid_total_line(game.view(0)) == "Bids total 1 for 2 tricks (underbid by 1)"


def test_dealer_sees_the_forbidden_bid_crossed_out_with_the_reason():
    game = game_with(["AC KC", "3C 4C", "7C 8C"], turned="QS")
    game.bid(1)
    game.bid(0)  # the dealer (P0) may not bid 1: 1 + 0 + 1 = 2 tricks
    view = game.view(0)
    text = screen.render_bid_options(view, suggestion=2, unicode=False)
    assert text.splitlines()[0] == "Bids: 0 ~~1~~ 2"
    assert "1 is not allowed: the dealer may not make the bids total the 2 tricks (the others bid 1" in text
    assert "Suggested bid: 2" in text
    assert screen.render_bid_options(view, unicode=True).splitlines()[0] == "Bids: 0 1\u0336 2"


def test_no_bid_is_crossed_out_before_the_dealer_or_without_the_hook():
    game = game_with(["AC KC", "3C 4C", "7C 8C"], turned="QS")
    assert screen.render_bid_options(game.view(1), unicode=False).splitlines() == ["Bids: 0 1 2"]
    game = game_with(["AC KC", "3C 4C", "7C 8C"], turned="QS", hook=False)
    game.bid(1)
    game.bid(0)
    assert "~~" not in screen.render_bid_options(game.view(0), unicode=False)
    assert screen.forbidden_bid_reason(game.view(0)) is None


def test_turn_screen_while_bidding_holds_table_hand_and_bid_options():
    game = game_with(["AC KC", "3C 4C", "7C 8C"], turned="QS")
    text = screen.render_turn(game.view(1), NAMES, suggestion=0, unicode=False)
    assert "Trump: spades" in text and "Your hand:" in text and "Suggested bid: 0" in text


def test_a_card_that_does_not_follow_suit_is_explained():
    game = game_with(["AH 2C", "3C 4C", "2S 8D"], turned="QS")
    for bid in (0, 0, 1):
        game.bid(bid)
    game.play("3C")
    game.play("8D")
    view = game.view(0)
    assert screen.explain_illegal_card(view, parse_card("AH")) == (
        "you must follow suit: clubs were led and you hold 2C"
    )
    assert screen.explain_illegal_card(view, parse_card("2C")) is None
    assert screen.explain_illegal_card(view, parse_card("KD")) == "you do not hold KD"


def test_leading_unbroken_trump_is_explained_when_trump_must_break():
    # P1 leads the first trick holding a spade (trump) and a club.
    game = game_with(["3C 4C", "AS 2C", "2H 8D"], turned="QS", lead_trump="broken")
    for bid in (0, 0, 1):
        game.bid(bid)
    view = game.view(1)
    assert view.current_player == 1
    assert screen.explain_illegal_card(view, parse_card("AS")) == (
        "trump (spades) may not be led until trump is broken, and you hold other suits: 2C"
    )
    text = screen.render_table(view, NAMES, unicode=False)
    assert "trump not broken yet" in text


def test_last_trick_names_each_seat_card_and_the_winner():
    text = screen.render_last_trick([(1, parse_card("3C")), (2, parse_card("2S")), (0, parse_card("AC"))], 2, NAMES)
    assert text == "Last trick: P1 heuristic 3C, P2 search 2S, P0 you AC; taken by P2 search"


def _play_out(game: BlackoutGame, bids_by_round: list[list[int]]) -> None:
    """Bid as given (in bidding order) and play the first legal card until the end."""
    for bids in bids_by_round:
        for bid in bids:
            game.bid(bid)
        round_index = game.round_index
        while not game.is_over and game.round_index == round_index:
            game.step(game.legal_actions()[0])


def test_score_sheet_lists_each_hand_with_bid_taken_points_and_bo_for_a_miss():
    game = game_with(["AC", "3C", "7C"], turned="QS")
    assert "(no hand has been scored yet)" in score_sheet(game, NAMES)
    _play_out(game, [[0, 0, 0]])  # the dealer's ace takes the trick: P0 misses
    text = score_sheet(game, NAMES)
    row = next(line for line in text.splitlines() if line.strip().startswith("1 "))
    assert "0/1 b/o 0" in row and row.count("0/0 10") == 2
    assert text.splitlines()[-2].split() == ["total", "0", "10", "10"]
    assert text.splitlines()[-1] == f"winners (tie): {NAMES[1]}, {NAMES[2]}"


def test_final_screen_names_the_winner():
    game = game_with(["AC", "3C", "7C"], turned="QS")
    _play_out(game, [[0, 1, 1]])  # P1 bid 0 and made it; P2 and P0 bid 1, only P0 took a trick
    text = screen.render_final(game, NAMES)
    assert text.splitlines()[-1] == "P0 you wins with 11 points."


def test_final_screen_lets_equal_totals_share_the_win():
    game = game_with(["AC", "3C", "7C"], turned="QS")
    _play_out(game, [[0, 0, 0]])
    assert screen.render_final(game, NAMES).splitlines()[-1] == "P1 heuristic and P2 search share the win with 10 points each."


def test_hand_result_marks_made_and_missed_bids():
    text = screen.render_hand_result([1, 0, 2], [1, 1, 0], [11, 0, 0], [11, 0, 5], NAMES)
    lines = text.splitlines()
    assert "bid 1, took 1  made +11  total 11" in lines[1]
    assert "bid 0, took 1  b/o  +0  total 0" in lines[2]


def test_events_are_told_in_words():
    game = game_with(["AC", "3C", "7C"], turned="QS")
    assert screen.describe_event(game.history[0], NAMES, unicode=False) == (
        "--- Hand 1: P0 you deals 1 card each; turned card QS; trump: spades ---"
    )
    assert screen.describe_event(("bid", 1, 2), NAMES) == "P1 heuristic bids 2"
    assert screen.describe_event(("play", 2, parse_card("10H")), NAMES) == "P2 search plays 10H"
    trick = ((1, parse_card("3C")), (2, parse_card("7C")), (0, parse_card("AC")))
    assert screen.describe_event(("trick", 0, trick), NAMES) == "P0 you takes the trick (3C 7C AC)"


@pytest.mark.parametrize("preset", preset_names())
def test_every_screen_renders_through_a_whole_match_of_every_preset(preset):
    """Random legal play under each preset; every turn screen renders and every illegal card is explained."""
    rules = Rules.resolve(preset)
    rng = np.random.default_rng(0)
    game = BlackoutGame(rules, seed=1)
    names = [f"P{seat}" for seat in range(rules.num_players)]
    while not game.is_over:
        view = game.view(game.current_player)
        text = screen.render_turn(view, names, suggestion=0)
        assert f"Hand {view.round_index + 1} of {rules.num_rounds}" in text
        assert [f"{n}) " in text for n in range(1, len(view.hand) + 1)] == [True] * len(view.hand)
        if view.phase == "play":
            for card in view.hand:
                assert (screen.explain_illegal_card(view, card) is None) == (card in view.legal_actions)
        legal = game.legal_actions()
        game.step(legal[int(rng.integers(len(legal)))])
    assert "Game over." in screen.render_final(game, names)
