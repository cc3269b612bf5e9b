"""Cards: integers, text and suits.

A card is an int. Cards 0..51 are ``suit * 13 + rank`` with suits in the order
clubs, diamonds, hearts, spades (0..3) and rank 0 = "2" up to 12 = "A".
Jokers, when the rules use them, are 52 ("JK1") and 53 ("JK2"); a joker has
no suit.

Text forms: ``"AS"``, ``"10H"`` (also ``"TH"``), ``"2C"``, ``"JK1"``.
Parsing accepts either case and the suit symbols ``♣♦♥♠``.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "counted",
    "CLUBS",
    "DIAMONDS",
    "HEARTS",
    "SPADES",
    "SUITS",
    "SUIT_NAMES",
    "SUIT_SYMBOLS",
    "RANKS",
    "NUM_STANDARD_CARDS",
    "JOKER_1",
    "JOKER_2",
    "suit_of",
    "rank_of",
    "make_card",
    "is_joker",
    "card_to_str",
    "parse_card",
    "parse_cards",
    "cards_to_str",
    "deck",
    "sort_hand",
]

CLUBS, DIAMONDS, HEARTS, SPADES = 0, 1, 2, 3
SUITS = "CDHS"
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
SUIT_SYMBOLS = "♣♦♥♠"
RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
NUM_STANDARD_CARDS = 52
JOKER_1 = 52
JOKER_2 = 53

_RANK_LOOKUP = {text: rank for rank, text in enumerate(RANKS)}
_RANK_LOOKUP["T"] = 8
_SUIT_LOOKUP = {letter: suit for suit, letter in enumerate(SUITS)}
_SUIT_LOOKUP.update({symbol: suit for suit, symbol in enumerate(SUIT_SYMBOLS)})
_JOKER_LOOKUP = {"JK1": JOKER_1, "JK2": JOKER_2}


def suit_of(card: int) -> int | None:
    """The suit 0..3 of a card, or None for a joker."""
    return None if card >= NUM_STANDARD_CARDS else card // 13


def rank_of(card: int) -> int | None:
    """The rank 0 ("2") .. 12 ("A") of a card, or None for a joker."""
    return None if card >= NUM_STANDARD_CARDS else card % 13


def make_card(suit: int, rank: int) -> int:
    """The card of a suit 0..3 and rank 0..12."""
    if not (0 <= suit < 4 and 0 <= rank < 13):
        raise ValueError(f"no card has suit {suit!r} and rank {rank!r} (suit 0..3, rank 0..12)")
    return suit * 13 + rank


def is_joker(card: int) -> bool:
    """Whether a card is one of the two jokers."""
    return card >= NUM_STANDARD_CARDS


def card_to_str(card: int) -> str:
    """Text form of a card: "AS", "10H", "2C", "JK1"."""
    if card == JOKER_1:
        return "JK1"
    if card == JOKER_2:
        return "JK2"
    if not isinstance(card, int) or not 0 <= card < NUM_STANDARD_CARDS:
        raise ValueError(f"{card!r} is not a card (cards are ints 0..53)")
    return RANKS[card % 13] + SUITS[card // 13]


def parse_card(text: str) -> int:
    """Parse "AS", "10h", "TH", "q♠" or "JK1" into a card int.

    Raises ValueError naming the string when it is not a card.
    """
    if not isinstance(text, str):
        raise ValueError(f"{text!r} is not a card string")
    cleaned = text.strip().upper()
    if cleaned in _JOKER_LOOKUP:
        return _JOKER_LOOKUP[cleaned]
    if len(cleaned) >= 2:
        rank = _RANK_LOOKUP.get(cleaned[:-1])
        suit = _SUIT_LOOKUP.get(cleaned[-1])
        if rank is not None and suit is not None:
            return suit * 13 + rank
    raise ValueError(
        f"{text!r} is not a card: write rank then suit, e.g. 'AS', '10H', 'TH', 'q♠', or 'JK1'"
    )


def parse_cards(text: str) -> list[int]:
    """Parse cards separated by spaces or commas."""
    return [parse_card(part) for part in text.replace(",", " ").split()]


def cards_to_str(cards: Iterable[int]) -> str:
    """Space-separated text of several cards."""
    return " ".join(card_to_str(card) for card in cards)


def deck(jokers: int = 0) -> list[int]:
    """The cards of a deck with 0, 1 or 2 jokers, in order."""
    if jokers not in (0, 1, 2):
        raise ValueError(f"jokers must be 0, 1 or 2, got {jokers!r}")
    return list(range(NUM_STANDARD_CARDS + jokers))


def sort_hand(cards: Iterable[int], trump: int | None = None) -> list[int]:
    """Cards sorted for display: by suit (trump last), high rank first, jokers at the end."""

    def key(card: int) -> tuple[int, int]:
        if card >= NUM_STANDARD_CARDS:
            return (5, card)
        suit = card // 13
        return (4 if suit == trump else suit, -(card % 13))

    return sorted(cards, key=key)


def counted(number: int, word: str) -> str:
    """A count in words, for messages: ``counted(1, "trick")`` -> "1 trick", ``counted(3, "card")`` -> "3 cards"."""
    return f"{number} {word}{'' if number == 1 else 's'}"
