"""The heuristic bot's constants and small card helpers, shared by :mod:`.heuristic` (one view at a time) and
:mod:`.heuristic_batch` (many games at once), so that neither imports the other's private names."""

from __future__ import annotations

from math import comb

from blackout_env.game.cards import NUM_STANDARD_CARDS
from blackout_env.game.rules_logic import card_power

_GUARD_DECAY = 0.2  # chance factor per higher card the player cannot cover with a guard
_RUFF_WILLINGNESS = 1.0  # an opponent able to ruff is assumed to ruff
_VOID_RUFF_VALUE = 0.1  # (tuned by duplicate A/B games) extra tricks a void side suit is worth to a trump holder
_SINGLETON_RUFF_VALUE = 0.05
_BEAT_WILLINGNESS_NEEDING = 0.7  # a later seat that still needs tricks beats us when it can
_BEAT_WILLINGNESS_MADE = 0.1  # one that has made (or busted) its bid mostly ducks
_BID_SHRINK = 0.35  # how strongly the earlier bids move our uncertain chances


def _beats(card: int, best: int, led: int | None, trump: int | None) -> bool:
    """Whether ``card`` played later outranks ``best`` (the trick's winning card so far, or the card led).

    By :func:`~blackout_env.game.rules_logic.card_power`: a higher power wins, an equal one
    (two jokers) stays with the card played first.
    """
    return card_power(card, led, trump) > card_power(best, led, trump)


def _binomial(count: int, p: float) -> list[float]:
    return [comb(count, x) * p**x * (1 - p) ** (count - x) for x in range(count + 1)]


def _strength(card: int, trump: int | None) -> int:
    """Order for tie-breaks: rank within the category of side suit, trump, joker."""
    if card >= NUM_STANDARD_CARDS:
        return 200 + card
    return (100 if card // 13 == trump else 0) + card % 13
