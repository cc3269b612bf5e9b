"""The observation encoder: one flat float32 vector per player, from a :class:`PlayerView` only.

Every environment (AEC, Gym), the batched engine and the trained policies use
this one encoding. It is seat-relative: wherever a block has one row per seat,
row 0 is the observer and row ``j`` is the seat ``j`` places to the observer's
left (clockwise), i.e. absolute seat ``(observer + j) % n``.

Notation: ``n`` players, ``C`` card actions (52, or 54 with jokers; card ``c``
is column ``c``; with one joker column 53 is always 0), ``B`` the largest hand
of the match (``rules.max_bid``), ``R`` hands in the match. Blocks, in order
(``observation_layout(rules)`` gives offsets, sizes and bounds in code):

=============================  ===========  ======  ============================================
block                          size         bounds  meaning
=============================  ===========  ======  ============================================
hand                           C            0..1    1 where the observer holds card c
trump                          5            0..1    one-hot: clubs, diamonds, hearts, spades, no trump
turned_card                    C            0..1    one-hot of the turned card (all 0 when none)
turned_card_held_by_dealer     1            0..1    1 when no card was left to turn and the dealer's last card was shown
phase                          3            0..1    one-hot: bid, play, game over
hand_size                      1            0..1    hand size / B
tricks_left                    1            0..1    tricks not yet won this hand (current one included) / B
round_index                    1            0..1    round index / max(R - 1, 1)
position                       n            0..1    one-hot bidding position: 0 = dealer's left (bids first) .. n-1 = dealer
to_act                         n            0..1    one-hot relative seat to act (all 0 when the game is over)
leader                         n            0..1    one-hot relative seat that leads (or led) the current trick
bids                           n x (B + 2)  0..1    per seat one-hot: column 0 = not yet bid, column 1 + k = bid k
tricks_won                     n            0..1    per seat, tricks won this hand / B
bid_impossible                 n            0..1    per seat, 1 when its bid can no longer be made
current_trick                  n x C        0..1    per seat, one-hot of its card in the current trick
led_suit                       5            0..1    one-hot: clubs, diamonds, hearts, spades, none (no card or only a joker led)
last_trick                     n x C        0..1    per seat, one-hot of its card in the previous trick of this hand
last_trick_winner              n            0..1    one-hot relative seat that won the previous trick (all 0 when none)
played                         n x C        0..1    per seat, cards it played this hand (current trick included)
voids                          n x 4        0..1    per seat, suits (C D H S) it has shown it does not hold
trump_broken                   1            0..1    1 once a trump has been played this hand
scores                         n            -1..1   per seat, match total / score_scale(rules)
=============================  ===========  ======  ============================================

Scaled values are ``float32(numerator / denominator)`` (the exact quotient
rounded once to float32; float32 division of the same ints gives the same
bits). ``score_scale(rules)`` is the sum over the match's hands of the largest
absolute hand score the rules allow with that hand size, so the bounds hold
under every scoring rule.

The action mask (``action_mask(view)``) is int8 of size ``rules.num_actions``
with 1 exactly at the view's legal actions (all 0 when it is not the
observer's turn).

The universal observation (``observation="universal"`` in every environment;
:mod:`blackout_env.game.universal`) is built from this one: the same blocks sized for
7 seats, 54 cards and hands up to 18, with the absent seats' rows 0, then the
seats present and a rules block. It has one size for every rule set.

``encode(view)`` is the reference. The compiled encoder
(:mod:`blackout_env.batched._encoding`) writes the same vectors for every game of
the batched engine, and for the one game of the AEC env (which plays on the
compiled core as a batch of one); tests compare them value for value.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from .rules import Rules
from .view import PlayerView

__all__ = [
    "Block",
    "action_mask",
    "block_slices",
    "encode",
    "encode_into",
    "observation_bounds",
    "observation_layout",
    "observation_size",
    "score_scale",
]

PHASES = ("bid", "play", "game_over")
NO_SUIT = 4
"""Column of "no trump" in ``trump`` and of "none" in ``led_suit``."""


class Block(NamedTuple):
    """One block of the observation vector: ``obs[offset : offset + size]``, reshaped to ``shape``."""

    name: str
    offset: int
    size: int
    low: float
    high: float
    shape: tuple[int, ...]
    description: str


def score_scale(rules: Rules) -> int:
    """Divisor of the ``scores`` block: the largest absolute match total the rules allow.

    The sum, over the hands of the match, of the largest ``|hand_score(bid, tricks)|``
    with ``0 <= bid, tricks <= hand size``; at least 1.
    """
    return max(rules.largest_match_total(), 1)


def _block_specs(n: int, c: int, b: int) -> list[tuple[str, tuple[int, ...], float, float, str]]:
    """The blocks for ``n`` seats, ``c`` card columns and hands up to ``b`` (also sizes the universal layout)."""
    return [
        ("hand", (c,), 0.0, 1.0, "1 where the observer holds card c"),
        ("trump", (5,), 0.0, 1.0, "one-hot: clubs, diamonds, hearts, spades, no trump"),
        ("turned_card", (c,), 0.0, 1.0, "one-hot of the turned card (all 0 when none)"),
        ("turned_card_held_by_dealer", (1,), 0.0, 1.0, "1 when the dealer's last card was shown to name trump"),
        ("phase", (3,), 0.0, 1.0, "one-hot: bid, play, game over"),
        ("hand_size", (1,), 0.0, 1.0, "hand size / max hand size"),
        ("tricks_left", (1,), 0.0, 1.0, "tricks not yet won this hand / max hand size"),
        ("round_index", (1,), 0.0, 1.0, "round index / max(rounds - 1, 1)"),
        ("position", (n,), 0.0, 1.0, "one-hot bidding position: 0 = dealer's left .. n-1 = dealer"),
        ("to_act", (n,), 0.0, 1.0, "one-hot relative seat to act (all 0 at game over)"),
        ("leader", (n,), 0.0, 1.0, "one-hot relative seat that leads (or led) the current trick"),
        ("bids", (n, b + 2), 0.0, 1.0, "per seat one-hot: column 0 = not yet bid, column 1 + k = bid k"),
        ("tricks_won", (n,), 0.0, 1.0, "per seat, tricks won this hand / max hand size"),
        ("bid_impossible", (n,), 0.0, 1.0, "per seat, 1 when its bid can no longer be made"),
        ("current_trick", (n, c), 0.0, 1.0, "per seat, one-hot of its card in the current trick"),
        ("led_suit", (5,), 0.0, 1.0, "one-hot: clubs, diamonds, hearts, spades, none"),
        ("last_trick", (n, c), 0.0, 1.0, "per seat, one-hot of its card in the previous trick of this hand"),
        ("last_trick_winner", (n,), 0.0, 1.0, "one-hot relative seat that won the previous trick"),
        ("played", (n, c), 0.0, 1.0, "per seat, cards it played this hand"),
        ("voids", (n, 4), 0.0, 1.0, "per seat, suits it has shown it does not hold"),
        ("trump_broken", (1,), 0.0, 1.0, "1 once a trump has been played this hand"),
        ("scores", (n,), -1.0, 1.0, "per seat, match total / score_scale(rules)"),
    ]


def laid_out(specs: Sequence[tuple[str, tuple[int, ...], float, float, str]]) -> tuple[Block, ...]:
    """The blocks of ``specs`` (name, shape, low, high, description), laid end to end from offset 0."""
    blocks = []
    offset = 0
    for name, shape, low, high, description in specs:
        size = int(np.prod(shape))
        blocks.append(Block(name, offset, size, low, high, shape, description))
        offset += size
    return tuple(blocks)


@lru_cache(maxsize=64)
def _layout(rules: Rules) -> tuple[Block, ...]:
    return laid_out(_block_specs(rules.num_players, rules.num_cards, rules.max_bid))


def observation_layout(rules: Rules | str | None = None) -> list[Block]:
    """The blocks of the observation, in order: name, offset, size, low, high, shape, description."""
    return list(_layout(Rules.resolve(rules)))


def observation_size(rules: Rules | str | None = None) -> int:
    """Length of the observation vector under these rules."""
    last = _layout(Rules.resolve(rules))[-1]
    return last.offset + last.size


def block_slices(rules: Rules | str | None = None) -> dict[str, slice]:
    """``{block name: slice}`` for slicing observations (works on the last axis of a batch too)."""
    return {b.name: slice(b.offset, b.offset + b.size) for b in _layout(Rules.resolve(rules))}


def layout_bounds(layout: Sequence[Block], size: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-element (low, high) float32 arrays of a vector of ``size`` laid out in ``layout``'s blocks (read-only)."""
    low = np.zeros(size, dtype=np.float32)
    high = np.zeros(size, dtype=np.float32)
    for block in layout:
        low[block.offset : block.offset + block.size] = block.low
        high[block.offset : block.offset + block.size] = block.high
    low.flags.writeable = False
    high.flags.writeable = False
    return low, high


@lru_cache(maxsize=64)
def _bounds(rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    return layout_bounds(_layout(rules), observation_size(rules))


def observation_bounds(rules: Rules | str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per-element (low, high) float32 arrays of the observation (read-only; copy to modify)."""
    return _bounds(Rules.resolve(rules))


class _Offsets:
    """Block offsets and constants of one rule set, as attributes for a fast encoder."""

    def __init__(self, rules: Rules) -> None:
        for block in _layout(rules):
            setattr(self, block.name, block.offset)
        self.size = observation_size(rules)
        self.n = rules.num_players
        self.c = rules.num_cards
        self.bid_width = rules.max_bid + 2
        self.max_bid = rules.max_bid
        self.last_round = max(rules.num_rounds - 1, 1)
        self.score_scale = score_scale(rules)


@lru_cache(maxsize=64)
def _offsets(rules: Rules) -> _Offsets:
    return _Offsets(rules)


def encode(view: PlayerView) -> np.ndarray:
    """The observation of ``view.player``: a new float32 vector of ``observation_size(view.rules)``."""
    out = np.zeros(_offsets(view.rules).size, dtype=np.float32)
    _fill(view, out)
    return out


def encode_into(view: PlayerView, out: np.ndarray) -> np.ndarray:
    """Write the observation of ``view`` into ``out`` (float32, right size; overwritten) and return it."""
    o = _offsets(view.rules)
    if not isinstance(out, np.ndarray) or out.dtype != np.float32 or out.shape != (o.size,):
        got = f"{out.dtype} array of shape {out.shape}" if isinstance(out, np.ndarray) else type(out).__name__
        raise ValueError(f"encode_into: out must be a float32 array of shape ({o.size},), got {got}")
    out.fill(0.0)
    _fill(view, out)
    return out


def _fill(view: PlayerView, out: np.ndarray) -> None:
    """Set the non-zero entries of the observation into a zeroed ``out``."""
    o = _offsets(view.rules)
    n = o.n
    c = o.c
    me = view.player
    ones: list[int] = []  # positions set to 1, written with one fancy assignment
    add = ones.append

    ones.extend(o.hand + card for card in view.hand)
    add(o.trump + (NO_SUIT if view.trump is None else view.trump))
    if view.turned_card is not None:
        add(o.turned_card + view.turned_card)
    if view.turned_card_held_by_dealer:
        add(o.turned_card_held_by_dealer)
    add(o.phase + PHASES.index(view.phase))
    out[o.hand_size] = view.hand_size / o.max_bid
    out[o.tricks_left] = view.tricks_left / o.max_bid
    out[o.round_index] = view.round_index / o.last_round
    add(o.position + (me - view.dealer - 1) % n)
    if view.current_player is not None:
        add(o.to_act + (view.current_player - me) % n)
    add(o.leader + (view.leader - me) % n)

    impossible = view.bid_impossible
    for rel in range(n):
        seat = (me + rel) % n
        bid = view.bids[seat]
        add(o.bids + rel * o.bid_width + (0 if bid is None else 1 + bid))
        won = view.tricks_won[seat]
        if won:
            out[o.tricks_won + rel] = won / o.max_bid
        if impossible[seat]:
            add(o.bid_impossible + rel)
        base = o.played + rel * c
        ones.extend(base + card for card in view.played[seat])
        base = o.voids + rel * 4
        ones.extend(base + suit for suit in view.voids[seat])
        score = view.scores[seat]
        if score:
            out[o.scores + rel] = score / o.score_scale

    for seat, card in view.current_trick:
        add(o.current_trick + ((seat - me) % n) * c + card)
    add(o.led_suit + (NO_SUIT if view.led_suit is None else view.led_suit))
    for seat, card in view.last_trick:
        add(o.last_trick + ((seat - me) % n) * c + card)
    if view.last_trick_winner is not None:
        add(o.last_trick_winner + (view.last_trick_winner - me) % n)
    if view.trump_broken:
        add(o.trump_broken)
    out[ones] = 1.0


def action_mask(view: PlayerView) -> np.ndarray:
    """int8 mask of size ``rules.num_actions``: 1 at the view's legal actions, else 0."""
    mask = np.zeros(view.rules.num_actions, dtype=np.int8)
    if view.legal_actions:
        mask[list(view.legal_actions)] = 1
    return mask
