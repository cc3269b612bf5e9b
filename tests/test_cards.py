"""Cards: ints 0..51 (suit * 13 + rank, suits C D H S), jokers 52 and 53, and their text forms."""

import pytest

from blackout_env.game.cards import (
    JOKER_1,
    JOKER_2,
    card_to_str,
    cards_to_str,
    deck,
    is_joker,
    make_card,
    parse_card,
    parse_cards,
    rank_of,
    sort_hand,
    suit_of,
)


def test_card_numbering_is_suit_times_13_plus_rank():
    assert parse_card("2C") == 0
    assert parse_card("AC") == 12
    assert parse_card("2D") == 13
    assert parse_card("AS") == 51
    assert make_card(3, 10) == parse_card("QS") == 49
    assert suit_of(49) == 3 and rank_of(49) == 10


@pytest.mark.parametrize(
    "text, card",
    [
        ("AS", 51),
        ("as", 51),
        ("10H", 2 * 13 + 8),
        ("TH", 2 * 13 + 8),
        ("th", 2 * 13 + 8),
        ("q♠", 3 * 13 + 10),
        ("K♥", 2 * 13 + 11),
        ("7♦", 1 * 13 + 5),
        ("J♣", 9),
        (" 2c ", 0),
        ("JK1", JOKER_1),
        ("jk2", JOKER_2),
    ],
)
def test_parse_accepts_either_case_ten_as_t_and_suit_symbols(text, card):
    assert parse_card(text) == card


@pytest.mark.parametrize("text", ["", "A", "1S", "11H", "AX", "10", "JK3", "ZZZ", "A S", "♠Q"])
def test_malformed_card_string_is_a_value_error_naming_it(text):
    with pytest.raises(ValueError) as info:
        parse_card(text)
    assert repr(text) in str(info.value)


def test_non_string_is_rejected_by_parse():
    with pytest.raises(ValueError, match="not a card string"):
        parse_card(12)  # type: ignore[arg-type]


def test_every_card_prints_and_parses_back():
    for card in deck(jokers=2):
        assert parse_card(card_to_str(card)) == card
    assert card_to_str(parse_card("TH")) == "10H"


@pytest.mark.parametrize("bad", [-1, 54, 60])
def test_printing_a_non_card_is_a_value_error(bad):
    with pytest.raises(ValueError, match=str(bad)):
        card_to_str(bad)


def test_jokers_have_no_suit_or_rank():
    assert is_joker(JOKER_1) and is_joker(JOKER_2) and not is_joker(51)
    assert suit_of(JOKER_1) is None and rank_of(JOKER_2) is None


def test_make_card_rejects_out_of_range_suits_and_ranks():
    with pytest.raises(ValueError, match="suit 4"):
        make_card(4, 0)
    with pytest.raises(ValueError, match="rank 13"):
        make_card(0, 13)


def test_several_cards_parse_and_print_with_spaces_or_commas():
    assert parse_cards("AS, 10h JK1") == [51, 34, 52]
    assert cards_to_str([51, 34, 52]) == "AS 10H JK1"


def test_decks_hold_52_53_or_54_cards():
    assert len(deck()) == 52 and len(deck(1)) == 53 and len(deck(2)) == 54
    with pytest.raises(ValueError, match="jokers"):
        deck(3)


def test_hands_sort_by_suit_with_trump_last_and_jokers_at_the_end():
    hand = parse_cards("JK1 2H AS KC AH 3C")
    assert cards_to_str(sort_hand(hand, trump=2)) == "KC 3C AS AH 2H JK1"
