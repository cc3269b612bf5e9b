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
:mod:`blackout_env.universal`) is built from this one: the same blocks sized for
7 seats, 54 cards and hands up to 18, with the absent seats' rows 0, then the
seats present and a rules block. It has one size for every rule set.

``encode(view)`` is the reference. The environments use :class:`TableEncoder`,
which keeps every seat's vector current from the game's public events (one
precomputed write per bid or card) and equals ``encode(game.view(seat))``
after every action; the batched engine computes the same vectors with array
operations.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from .rules import Rules
from .rules_logic import bid_out_of_reach, card_facts, suit_led_after, voids_shown
from .view import PlayerView

__all__ = [
    "Block",
    "TableEncoder",
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


@lru_cache(maxsize=64)
def _layout(rules: Rules) -> tuple[Block, ...]:
    blocks = []
    offset = 0
    for name, shape, low, high, description in _block_specs(rules.num_players, rules.num_cards, rules.max_bid):
        size = int(np.prod(shape))
        blocks.append(Block(name, offset, size, low, high, shape, description))
        offset += size
    return tuple(blocks)


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


@lru_cache(maxsize=64)
def _bounds(rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    size = observation_size(rules)
    low = np.zeros(size, dtype=np.float32)
    high = np.zeros(size, dtype=np.float32)
    for block in _layout(rules):
        low[block.offset : block.offset + block.size] = block.low
        high[block.offset : block.offset + block.size] = block.high
    low.flags.writeable = False
    high.flags.writeable = False
    return low, high


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


class TableEncoder:
    """The observations of every seat of one game, kept current from the game's public events.

    ``encode(game.view(p))`` rebuilds a vector from scratch; the environments
    instead call :meth:`sync` after each action, which reads only the events
    appended to ``game.history`` since the last call and updates the changed
    entries of every seat's row. Row ``p`` of :attr:`obs` equals
    ``encode(game.view(p))`` after every sync (a test checks it over random
    games of every rule set). The only private fact it reads is each seat's
    own hand from the deal event, and it writes that into that seat's row only.

    ``sync(game, stop_after_hand=True)`` stops at the end of the current hand
    and marks the rows as "game over" (phase and seat to act), which is how a
    one-hand episode ends while the engine has already dealt the next hand.
    """

    def __init__(self, rules: Rules) -> None:
        # The tables are built once per rule set and shared, read-only, by every encoder and copy.
        self.__dict__.update(_encoder_tables(rules))
        self.obs = np.zeros((self._o.n, self._o.size), dtype=np.float32)
        """Row ``p`` is seat ``p``'s observation (a view; copy a row before keeping it)."""
        self._make_views()
        self.reset()

    def _build_tables(self, rules: Rules) -> None:
        """Set the read-only tables of this rule set as attributes (see :func:`_encoder_tables`)."""
        self.rules = rules
        o = self._o = _offsets(rules)
        n, c, size = o.n, o.c, o.size
        self._trick_block = slice(o.current_trick, o.current_trick + n * c)
        self._last_block = slice(o.last_trick, o.last_trick + n * c)
        rows = np.arange(n) * size
        # rel[s][p]: where seat s sits relative to observer p.
        rel = [(s - np.arange(n)) % n for s in range(n)]

        def per_seat(offset: int, width: int = 1) -> list[np.ndarray]:
            # Flat positions, one per observer row, of seat s's entry in a per-seat block.
            return [rows + offset + rel[s] * width for s in range(n)]

        # Hot paths write with ndarray.put and index arrays built here once: adding an
        # offset to an index array at every step costs more than the write itself.
        play_at = [np.concatenate(pair) for pair in zip(per_seat(o.current_trick, c), per_seat(o.played, c))]
        to_act_at = per_seat(o.to_act)
        bid_at = per_seat(o.bids, o.bid_width)

        def move(seat: int, clear: list, mark: list) -> tuple[np.ndarray, np.ndarray]:
            # One put for a whole action: clear, mark, and pass the turn to the left.
            clear = [*clear, to_act_at[seat]]
            mark = [*mark, to_act_at[(seat + 1) % n]]
            positions = np.concatenate([np.atleast_1d(x) for x in clear + mark]).astype(np.intp)
            values = np.concatenate([np.zeros(np.size(x), np.float32) for x in clear] + [np.ones(np.size(x), np.float32) for x in mark])
            return positions, values

        # _play_moves[seat][card]: the card leaves the hand, enters the trick and the played cards.
        self._play_moves = [
            [move(s, [int(rows[s]) + o.hand + card], [play_at[s] + card]) for card in range(c)] for s in range(n)
        ]
        # _bid_moves[seat][bid]: "not yet bid" becomes the bid.
        self._bid_moves = [[move(s, [bid_at[s]], [bid_at[s] + 1 + k]) for k in range(rules.max_bid + 1)] for s in range(n)]
        self._won_at = per_seat(o.tricks_won)
        self._impossible_at = per_seat(o.bid_impossible)
        self._void_at = per_seat(o.voids, 4)
        self._score_at = per_seat(o.scores)
        zeros, ones = np.zeros(n, dtype=np.float32), np.ones(n, dtype=np.float32)
        # _to_act_moves[old][new]: (positions, values) that move the "to act" marks; index n means nobody.
        # _seat_marks[s]: the (row, relative seat) one-hot block that marks seat s in every row.
        self._seat_marks = [np.eye(n, dtype=np.float32)[rel[s]] for s in range(n)]
        self._no_led_suit = np.eye(5, dtype=np.float32)[NO_SUIT]
        none = (np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float32))
        marks = [(to_act_at[seat], zeros) for seat in range(n)] + [none]
        self._to_act_moves = [
            [
                (np.concatenate([marks[old][0], marks[new][0]]), np.concatenate([marks[old][1], marks[new][1] + 1]))
                if new < n
                else marks[old]
                for new in range(n + 1)
            ]
            for old in range(n + 1)
        ]
        led_columns = rows[:, None] + o.led_suit + np.arange(5)[None, :]
        # _led_from_none[suit]: clear "none" and set the suit, in every row.
        self._led_from_none = [
            (np.concatenate([led_columns[:, NO_SUIT], led_columns[:, suit]]), np.concatenate([zeros, ones]))
            for suit in range(4)
        ]
        self._leader_at = per_seat(o.leader)
        # Bidding position of each observer row when seat d deals.
        self._position_at = [rows + o.position + (np.arange(n) - d - 1) % n for d in range(n)]
        self._not_yet_bid = [o.bids + j * o.bid_width for j in range(n)]
        self._held_by_dealer_rule = rules.trump == "turned" and rules.no_card_trump == "dealer_last"
        self._must_break = rules.lead_trump == "broken"
        self._next_seat = [(seat + 1) % n for seat in range(n)]  # [seat]: the seat to its left
        self._rows = rows
        # Every row at the start of a hand, before the deal's own entries: bidding, nobody has bid, no led suit.
        self._fresh_hand = np.zeros((n, size), dtype=np.float32)
        self._fresh_hand[:, o.phase] = 1.0
        self._fresh_hand[:, self._not_yet_bid] = 1.0
        self._fresh_hand[:, o.led_suit + NO_SUIT] = 1.0
        # The deal's entries as Python ints, gathered into one put: per column, its position in every row.
        self._row_starts = rows.tolist()
        self._position_at_list = [positions.tolist() for positions in self._position_at]
        self._leader_at_list = [positions.tolist() for positions in self._leader_at]
        self._score_at_list = [positions.tolist() for positions in self._score_at]
        # _trick_marks[winner][leads]: last trick's winner marked in every row, the led suit back to "none",
        # and (when another trick follows) the winner marked as the leader and the seat to act.
        led_none = (led_columns, np.tile(self._no_led_suit, (n, 1)))
        self._trick_marks = []
        for winner in range(n):
            marks = self._seat_marks[winner]
            winner_block = (rows[:, None] + o.last_trick_winner + np.arange(n)[None, :], marks)
            leader_block = (rows[:, None] + o.leader + np.arange(n)[None, :], marks)
            to_act_block = (rows[:, None] + o.to_act + np.arange(n)[None, :], marks)
            self._trick_marks.append(
                [
                    tuple(np.concatenate([a.reshape(-1) for a in part]) for part in zip(*blocks))
                    for blocks in ((winner_block, led_none), (winner_block, led_none, leader_block, to_act_block))
                ]
            )
        self._won_and_left_at = [np.concatenate([self._won_at[s], rows + o.tricks_left]) for s in range(n)]
        # _won_and_left_values[(won, left)]: the winner's tricks won and the tricks left, scaled, in every row.
        self._won_and_left_values = {
            (won, left): np.array([won / o.max_bid] * n + [left / o.max_bid] * n, dtype=np.float32)
            for won in range(1, rules.max_bid + 1)
            for left in range(rules.max_bid)
        }
        self._void_marks = [[self._void_at[s] + suit for suit in range(4)] for s in range(n)]
        # _lead_moves[seat][card]: the card's move when it names the trick's led suit (see suit_led_after).
        self._lead_moves = [
            [
                move
                if (suit := suit_led_after(None, card)) is None
                else tuple(np.concatenate(pair) for pair in zip(move, self._led_from_none[suit]))
                for card, move in enumerate(moves)
            ]
            for moves in self._play_moves
        ]

    def __deepcopy__(self, memo: dict) -> TableEncoder:
        # An independent copy of the rows and the game's progress that shares the read-only
        # tables (cheap enough for search); ``_flat`` must be a view of the copy's own rows.
        twin = object.__new__(type(self))
        memo[id(self)] = twin
        shared = _encoder_tables(self.rules)
        for key, value in self.__dict__.items():
            if key not in self._VIEWS:
                twin.__dict__[key] = value if key in shared or key in self._CARD_TABLES else copy.deepcopy(value, memo)
        twin._make_views()
        return twin

    def __getstate__(self) -> dict:
        return {key: value for key, value in self.__dict__.items() if key not in self._VIEWS}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._make_views()

    # The card tables of the hand's trump (card_facts): read-only, shared by a copy.
    _CARD_TABLES = ("_trumps", "_follow_voids")

    # Views of ``obs`` (rebuilt, not copied: a copy's views must show the copy's own rows).
    _VIEWS = ("_flat", "rows", "_trick_entries", "_last_entries")

    def _make_views(self) -> None:
        self._flat = self.obs.reshape(-1)
        self.rows = list(self.obs)
        """``rows[p]`` is ``obs[p]`` (the same memory), in a list: quicker to reach than by indexing ``obs``."""
        self._trick_entries = self.obs[:, self._trick_block]
        self._last_entries = self.obs[:, self._last_block]

    def reset(self) -> None:
        """Forget the game: the next :meth:`sync` reads the history from its start."""
        self.obs.fill(0.0)
        self._cursor = 0
        self._totals = [0] * self._o.n
        self._to_act: int | None = None
        self._stopped = False

    # -------------------------------------------------------------- events
    def sync(self, game, stop_after_hand: bool = False) -> bool:
        """Apply the events of ``game.history`` not yet seen; return True when a hand ended.

        With ``stop_after_hand`` the events after the end of a hand are left unread
        and the rows show the finished hand as over.
        """
        if self._stopped:
            return False
        history = game.history
        end = len(history)
        hand_ended = False
        cursor = self._cursor
        while cursor < end:
            event = history[cursor]
            cursor += 1
            kind = event[0]
            if kind == "play":
                self._play(event[1], event[2])
            elif kind == "bid":
                self._bid(event[1], event[2])
            elif kind == "trick":
                self._trick(event[1])
            elif kind == "deal":
                self._deal(event)
            elif kind == "round_end":
                self._round_end(event[3])
                hand_ended = True
                if stop_after_hand:
                    self._game_over()
                    self._stopped = True
                    break
            elif kind == "game_over":
                self._game_over()
        self._cursor = cursor
        if not self._stopped and game.current_player != self._to_act:
            self._set_to_act(game.current_player)
        return hand_ended

    def _set_to_act(self, seat: int | None) -> None:
        old = self._to_act
        if seat == old:
            return
        n = self._o.n
        positions, values = self._to_act_moves[n if old is None else old][n if seat is None else seat]
        self._flat.put(positions, values)
        self._to_act = seat

    def _deal(self, event: tuple) -> None:
        _, round_index, dealer, hand_size, turned, trump, hands = event
        o = self._o
        self.obs[...] = self._fresh_hand
        self._to_act = None
        self._hand_size = hand_size
        self._tricks_done = 0
        self._trump = trump
        self._trumps, self._follow_voids = card_facts(trump, self._must_break)
        self._broken = False
        self._led: int | None = None
        self._trick_len = 0
        self._bids: list[int | None] = [None] * o.n
        self._won = [0] * o.n
        self._voids: list[set[int]] = [set() for _ in range(o.n)]
        self._impossible = [False] * o.n
        # Everything else the deal writes, in one put: each seat's own hand, then the columns set in every row.
        starts = self._row_starts
        positions = [start + o.hand + card for start, hand in zip(starts, hands) for card in hand]
        columns = [o.trump + (NO_SUIT if trump is None else trump)]
        if turned is not None:
            columns.append(o.turned_card + turned)
            if self._held_by_dealer_rule and hand_size * o.n == self.rules.deck_size:
                columns.append(o.turned_card_held_by_dealer)
        positions += [start + column for column in columns for start in starts]
        positions += self._position_at_list[dealer]
        positions += self._leader_at_list[(dealer + 1) % o.n]
        values = [1.0] * len(positions)
        for column, value in (
            (o.hand_size, hand_size / o.max_bid),
            (o.tricks_left, hand_size / o.max_bid),
            (o.round_index, round_index / o.last_round),
        ):
            positions += [start + column for start in starts]
            values += [value] * o.n
        for seat, total in enumerate(self._totals):
            if total:
                positions += self._score_at_list[seat]
                values += [total / o.score_scale] * o.n
        self._flat.put(positions, values)

    def _bid(self, seat: int, bid: int) -> None:
        if self._to_act != seat:  # only when reading several events at once
            self._set_to_act(seat)
        self._flat.put(*self._bid_moves[seat][bid])
        self._to_act = self._next_seat[seat]
        self._bids[seat] = bid
        if None not in self._bids:
            o = self._o
            self.obs[:, o.phase] = 0.0
            self.obs[:, o.phase + 1] = 1.0

    def _play(self, seat: int, card: int) -> None:
        flat = self._flat
        if self._to_act != seat:  # only when reading several events at once
            self._set_to_act(seat)
        led_before = self._led
        if led_before is not None:  # following a named led suit: the voids it shows from the table
            flat.put(*self._play_moves[seat][card])
            shown = self._follow_voids[self._broken][led_before][card]
        else:
            if (led := suit_led_after(None, card)) is not None:
                flat.put(*self._lead_moves[seat][card])  # the move and the led suit, in one write
                self._led = led
            else:
                flat.put(*self._play_moves[seat][card])
            shown = voids_shown(
                card, None, self._trump, leads=self._trick_len == 0, trump_broken=self._broken, must_break=self._must_break
            )
        self._to_act = self._next_seat[seat]
        if shown:
            voids = self._voids[seat]
            for suit in shown:
                if suit not in voids:
                    voids.add(suit)
                    flat.put(self._void_marks[seat][suit], 1.0)
        if not self._broken and card in self._trumps:
            self._broken = True
            self.obs[:, self._o.trump_broken] = 1.0
        self._trick_len += 1

    def _trick(self, winner: int) -> None:
        won = self._won
        won[winner] += 1
        self._last_entries[...] = self._trick_entries
        self._trick_entries.fill(0.0)
        self._led = None
        self._trick_len = 0
        self._tricks_done += 1
        left = self._hand_size - self._tricks_done
        # After the last trick the engine keeps that trick's leader; otherwise the winner leads.
        flat = self._flat
        flat.put(*self._trick_marks[winner][left > 0])
        if left:
            self._to_act = winner
        flat.put(self._won_and_left_at[winner], self._won_and_left_values[won[winner], left])
        impossible = self._impossible
        for seat, bid in enumerate(self._bids):
            if not impossible[seat] and bid_out_of_reach(bid, won[seat], left):  # once out of reach, always
                impossible[seat] = True
                flat.put(self._impossible_at[seat], 1.0)

    def _round_end(self, totals: tuple[int, ...]) -> None:
        self._totals = list(totals)
        scale = self._o.score_scale
        flat = self._flat
        for seat, total in enumerate(totals):
            flat[self._score_at[seat]] = total / scale

    def _game_over(self) -> None:
        o = self._o
        self.obs[:, o.phase : o.phase + 3] = 0.0
        self.obs[:, o.phase + 2] = 1.0
        self._set_to_act(None)


@lru_cache(maxsize=64)
def _encoder_tables(rules: Rules) -> dict:
    """The tables of a :class:`TableEncoder` for these rules (index arrays, precomputed writes), built once.

    Every encoder of the rule set, and every copy of one, shares them: they are
    read, never written.
    """
    builder = object.__new__(TableEncoder)
    builder._build_tables(rules)
    return builder.__dict__
