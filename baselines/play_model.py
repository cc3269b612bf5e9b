"""Inferred hidden cards from the play: a play model learned from self-play, as weights on sampled deals.

A card played says something about the cards its seat held beside it: a seat that
follows low under a card it could beat probably holds nothing higher there; a seat
that needs tricks and leads a small side card probably has no ace to lead. The play
model reads each card played this hand as a choice among the seat's legal cards at
that moment, in four classes that every rule set shares:

- following: the **lowest card that would win** the trick so far, **another winning
  card**, the **highest card that would not win**, **another card that would not**
  (winning: beating the trick's best card by ``card_power``; cards are ordered by
  power, then rank, then card number);
- leading: the **highest card of a side suit** held, **another side card**, the
  **highest trump** held (jokers count as trumps here), **another trump**.

:class:`PlayModel` is the chance of each class given the situation: leading, following
the led suit or not; the seat's bid still needing tricks, made, or lost; last to play
or not; and which of the four classes the seat's legal cards offer. Within a class
every card is alike, so a card's chance is its class's chance over the cards in that
class. The table is counted from a policy's own plays in self-play (the true hands
give the classes; ``blackout belief fit --kind play``), smoothed toward the same
situation without the bid state and the seat's place, and every class kept above a
floor, so that no deal the view allows gets weight zero when the model is wrong.

Given a deal of the hidden cards (as :class:`~blackout_baselines.deals.DealSampler`
draws them: a hand bitmask per seat), :func:`play_likelihood` is the model's chance of
the cards every other seat played this hand, each seat holding then its cards now
plus those it played since. All of it is computed for many deals at once (numpy over
the deals, one pass over the cards played); :class:`~blackout_baselines.belief.Belief`
weighs the sampler's deals by it.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from blackout_env import BlackoutGame, PlayerView, Rules
from blackout_env.game.cards import NUM_STANDARD_CARDS
from blackout_env.game.rules_logic import card_powers, first_to_act, is_trump, suit_led_after, trick_winner

from ._ismcts_kernels import playable_each
from ._model_file import load_counts, save_counts

__all__ = ["DEFAULT_PLAY_MODEL", "CLASSES", "SITUATIONS", "PlayEvent", "PlayModel", "play_events", "play_likelihood",
           "play_records"]

DEFAULT_PLAY_MODEL = Path(__file__).with_name("play_model.json")
"""The play model fitted to the shipped ``ppo``'s plays (``blackout belief fit --kind play``)."""

FORMAT = "blackout-play-model"

CLASSES = 4
"""The classes of a card played (see the module docstring), each index the same for leading and following."""

_KINDS = 3  # leading, following the led suit (or holding it), not holding it
_NEEDS = 3  # the bid still needs tricks, is made, is lost
_AVAILABLE = 1 << CLASSES  # which classes the legal cards offer
SITUATIONS = _KINDS * _NEEDS * 2 * _AVAILABLE
"""Situations of the table: (kind, need, last to play, classes offered), flattened."""

_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_ALL = np.uint64((1 << 54) - 1)
_SUITS = [np.uint64(((1 << 13) - 1) << (13 * s)) for s in range(4)]
_JOKERS = np.uint64(3 << NUM_STANDARD_CARDS)
_STANDARD = np.uint64((1 << NUM_STANDARD_CARDS) - 1)


@dataclass(frozen=True)
class PlayEvent:
    """One card played this hand, with what everyone saw when it was played."""

    seat: int
    card: int
    leads: bool
    last: bool
    """The trick's last card."""
    need: int
    """0: the seat's bid needed more tricks then; 1: it was made; 2: it was lost (more tricks than bid)."""
    follow: np.uint64
    """The cards of the led suit (0 while leading or when no suit is led yet)."""
    blocked: np.uint64
    """The trumps while trump may not be led (trump must break, not broken yet), else 0."""
    winners: np.uint64
    """Following: the cards that would beat the trick's best card so far."""
    below: np.uint64
    """The cards ordered below this one: following, lower power (then rank, then card number); leading, of
    its suit (trumps and jokers as one group) and lower rank (then card number)."""
    group: np.uint64
    """Leading: the cards of this card's group (its suit; trumps and jokers together)."""
    trump_group: np.uint64
    """The trumps and the jokers."""


def _bits(cards) -> int:
    mask = 0
    for card in cards:
        mask |= 1 << card
    return mask


_BITS = np.left_shift(np.uint64(1), np.arange(NUM_STANDARD_CARDS + 2, dtype=np.uint64))
_RANKS = np.array([c % 13 for c in range(NUM_STANDARD_CARDS)] + [13, 13])


def _mask(selected: np.ndarray) -> np.uint64:
    """The bitmask of the cards where ``selected`` (a boolean per card) is true."""
    return np.bitwise_or.reduce(_BITS[: len(selected)][selected], initial=_ZERO)


def play_events(view: PlayerView) -> list[PlayEvent]:
    """Every card played this hand so far, in order, from the view's public history (``round_actions``)."""
    return _events(view, [a for a in view.round_actions if a < view.num_cards])


def _events(view: PlayerView, plays: list[int]) -> list[PlayEvent]:
    rules = view.rules
    n = view.num_players
    trump = view.trump
    cards = rules.num_cards
    must_break = rules.lead_trump == "broken"
    is_trumps = np.array([c >= NUM_STANDARD_CARDS or is_trump(c, trump) for c in range(cards)])
    trumps = _mask(is_trumps)
    ranks = _RANKS[:cards]
    index = np.arange(cards)
    groups = [_mask((np.arange(cards) // 13 == s) & ~is_trumps) for s in range(4)]
    leader = first_to_act(view.dealer, n)
    trick: list[tuple[int, int]] = []
    led: int | None = None
    won = [0] * n
    broken = False
    events = []
    for card in plays:
        seat = (leader + len(trick)) % n
        bid = view.bids[seat]
        need = 0 if bid is None or won[seat] < bid else (1 if won[seat] == bid else 2)
        if not trick:
            group = trumps if is_trumps[card] else groups[card // 13]
            below = _mask(ranks * 64 + index < ranks[card] * 64 + card) & group
            blocked = trumps & _STANDARD if must_break and trump is not None and not broken else _ZERO
            event = PlayEvent(seat, card, True, False, need, _ZERO, blocked, _ZERO, below, group, trumps)
        else:
            powers = np.array(card_powers(led, trump)[:cards])
            order = (powers * 16 + ranks) * 64 + index  # ties (other suits) broken by the card
            best = powers[dict(trick)[trick_winner(trick, trump, led)]]
            follow = _ZERO if led is None else _SUITS[led]
            event = PlayEvent(seat, card, False, len(trick) == n - 1, need, follow, _ZERO,
                              _mask(powers > best), _mask(order < order[card]), _ZERO, trumps)
        events.append(event)
        led = suit_led_after(led, card)
        broken = broken or is_trump(card, trump)
        trick.append((seat, card))
        if len(trick) == n:
            won[trick_winner(trick, trump, led)] += 1
            leader, trick, led = trick_winner(trick, trump, led), [], None
    return events


def _popcount(x: np.ndarray) -> np.ndarray:
    return np.bitwise_count(x).astype(np.int64)


def event_classes(event: PlayEvent, held: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For hands ``held`` (bitmasks: the seat's cards when it played, the card included): the situation
    index, the played card's class, and how many of the seat's legal cards share that class."""
    card_bit = _ONE << np.uint64(event.card)
    if event.leads:
        legal = playable_each(True, held, _ZERO, event.blocked, _JOKERS, _STANDARD)
        side = legal & ~event.trump_group
        trumps = legal & event.trump_group
        suits = sum(((side & s) != _ZERO).astype(np.int64) for s in _SUITS)
        counts = [suits, _popcount(side) - suits, (trumps != _ZERO).astype(np.int64), None]
        counts[3] = _popcount(trumps) - counts[2]
        top = (legal & event.group & ~event.below & ~card_bit) == _ZERO
        trump_card = bool(event.trump_group & card_bit)
        klass = np.where(top, 2 if trump_card else 0, 3 if trump_card else 1)
        kind = np.zeros(len(held), dtype=np.int64)
    else:
        following = (held & event.follow) != _ZERO
        legal = playable_each(False, held, event.follow, _ZERO, _JOKERS, _STANDARD)
        win = legal & event.winners
        lose = legal & ~event.winners
        any_win = (win != _ZERO).astype(np.int64)
        any_lose = (lose != _ZERO).astype(np.int64)
        counts = [any_win, _popcount(win) - any_win, any_lose, _popcount(lose) - any_lose]
        if event.winners & card_bit:
            klass = np.where((win & event.below) == _ZERO, 0, 1)
        else:
            klass = np.where((lose & ~event.below & ~card_bit) == _ZERO, 2, 3)
        kind = np.where(following, 1, 2)
    available = sum((counts[k] > 0).astype(np.int64) << k for k in range(CLASSES))
    situation = ((kind * _NEEDS + event.need) * 2 + int(event.last)) * _AVAILABLE + available
    share = np.choose(klass, counts)
    return situation, klass, np.maximum(share, 1)


class PlayModel:
    """The chance of each class of card played given the situation, from counted plays.

    ``counts[situation, class]`` are the plays seen; each row is smoothed toward the pooled
    row of its kind and classes offered (``smoothing``), every class offered kept above
    ``floor``, and the classes not offered given zero.
    """

    def __init__(self, counts: np.ndarray, smoothing: float = 5.0, floor: float = 0.02, source: str = "") -> None:
        counts = np.asarray(counts, dtype=float)
        with np.errstate(over="ignore"):  # counts near 1e308 sum to inf (and the table to NaN): refused
            total = counts.sum()
        if (counts.shape != (SITUATIONS, CLASSES) or not np.isfinite(counts).all() or (counts < 0).any()
                or not np.isfinite(total)):
            raise ValueError(f"PlayModel: counts must be finite, >= 0, of a finite sum and of shape {(SITUATIONS, CLASSES)}")
        if not (math.isfinite(smoothing) and smoothing > 0 and 0 < floor < 1):
            raise ValueError(f"PlayModel: smoothing must be finite and > 0 and floor in (0, 1), got {smoothing}, {floor}")
        self.counts, self.smoothing, self.floor, self.source = counts, float(smoothing), float(floor), source
        available = np.arange(SITUATIONS) % _AVAILABLE
        offered = ((available[:, None] >> np.arange(CLASSES)) & 1).astype(float)
        kind = np.arange(SITUATIONS) // (_NEEDS * 2 * _AVAILABLE)
        pooled = np.zeros((_KINDS, _AVAILABLE, CLASSES))
        np.add.at(pooled, (kind, available), counts)
        prior = (pooled[kind, available] + 1.0) * offered
        prior /= np.maximum(prior.sum(axis=1, keepdims=True), 1e-12)
        rows = counts.sum(axis=1, keepdims=True)
        table = (counts + self.smoothing * prior) / (rows + self.smoothing)
        table = np.maximum(table, self.floor) * offered
        self.table = table / np.maximum(table.sum(axis=1, keepdims=True), 1e-12)
        """``table[situation, class]``: the smoothed chance of the class (0 for a class not offered)."""

    @classmethod
    def fit(cls, records, source: str = "", **options: float) -> PlayModel:
        """Count ``(situation, class)`` records (:func:`play_records`) into a model."""
        counts = np.zeros((SITUATIONS, CLASSES))
        for situation, klass in records:
            counts[situation, klass] += 1
        return cls(counts, source=source, **options)

    def save(self, path: str | Path) -> None:
        save_counts(path, FORMAT, self)

    @classmethod
    def load(cls, path: str | Path = DEFAULT_PLAY_MODEL) -> PlayModel:
        """A saved model; a clear error for a missing, foreign or corrupt file."""
        return load_counts(cls, path, FORMAT, "play model")


_DEFAULT: PlayModel | None = None


def default_play_model() -> PlayModel:
    """The shipped model (``DEFAULT_PLAY_MODEL``), loaded once."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = PlayModel.load(DEFAULT_PLAY_MODEL)
    return _DEFAULT


def play_likelihood(view: PlayerView, model: PlayModel, hands: np.ndarray,
                    events: list[PlayEvent] | None = None) -> np.ndarray:
    """Per deal (``hands[deal, seat]``: the cards each seat holds now, as bitmasks), the model's chance
    of the cards the seats other than the viewer played this hand."""
    events = play_events(view) if events is None else events
    likelihood = np.ones(len(hands))
    later = [0] * view.num_players  # the cards each seat played after the event at hand
    for event in reversed(events):
        later[event.seat] |= 1 << event.card
        if event.seat == view.player:
            continue
        held = hands[:, event.seat] | np.uint64(later[event.seat])
        situation, klass, share = event_classes(event, held)
        likelihood *= model.table[situation, klass] / share
    return likelihood


def play_records(bot, rules: Rules, hands: int, seed: int = 0) -> list[tuple[int, int]]:
    """``(situation, class)`` of every card played in ``hands`` fresh hands in which ``bot`` (any object
    with ``act(view)``) makes every decision; each hand is a random round of the rules."""
    rng = random.Random(seed)
    records = []
    for index in range(hands):
        game = BlackoutGame(rules, seed=seed * 1_000_003 + index, start_round=rng.randrange(rules.num_rounds))
        while game.phase == "bid":
            game.step(bot.act(game.view(game.current_player)))
        if game.phase != "play":
            continue
        dealt = [_bits(hand) for hand in game.hands]
        plays: list[int] = []
        view = game.view(game.current_player)
        for _ in range(rules.num_players * view.hand_size):
            view = game.view(game.current_player)
            plays.append(bot.act(view))
            game.step(plays[-1])
        played = [0] * rules.num_players  # the cards each seat played before the event at hand
        for event in _events(view, plays):
            held = np.array([dealt[event.seat] & ~played[event.seat]], dtype=np.uint64)
            situation, klass, _ = event_classes(event, held)
            records.append((int(situation[0]), int(klass[0])))
            played[event.seat] |= 1 << event.card
    return records
