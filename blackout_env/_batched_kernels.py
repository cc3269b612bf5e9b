"""The compiled core: the batched engine's per-move work and its observation encoder, compiled with numba.

Imported when the first :class:`~blackout_env.batched.BatchedBlackout`, AEC env or
IS-MCTS bot is built (numba is a dependency; ``import blackout_env`` does not import it).

One function per step of :mod:`blackout_env.engine` (deal, legal cards, bid,
play, trick winner, finish trick, finish hand; named after the engine method
that calls it), each a loop over games, over the struct-of-arrays state of
:class:`~blackout_env.batched.BatchedBlackout` and the lookup tables of its
``_Tables`` (built from :mod:`blackout_env.rules_logic` by running its functions
over every input; the encoder's block offsets read from
:func:`blackout_env.encoding.observation_layout`). A move is
:func:`advance_game` and :func:`legal_game`, written for one game ``g``:
:func:`advance` and :func:`compute_legal` run them over a batch, :func:`step_game`
over one game held in one array (the IS-MCTS simulator's state, ``ONE_*`` below)
and :func:`env_step` over the AEC env's one game (with :func:`encode_row`, the
observation of one game, which :func:`encode` runs over a batch), so the batched
engine, the AEC env and the search step one code. They are inlined
(``inline="always"``) into kernels compiled without numba's reference counting
(``_nrt=False``: these kernels allocate nothing); with it, each inlined call
would count a reference to each of its arrays, which made the batch loop
several times slower. Trick power and its
tie-break, the led suit after a card, whether a card is trump, voids shown, the
hook's forbidden bid, the suit a turned card names, the bust test, the seat each
deck card is dealt to, who acts first and where the turned card lies are table
lookups; the dealer of a round and the bid range (0..hand size) are mirrored
inline, each marked with the function it mirrors; the legal cards are
``rules_logic.playable_bits`` (``playable_cards`` on bitsets) compiled. The differential
tests (``tests/test_batched_differential.py``, ``tests/test_batched.py``) play
the same deals and actions through the engine and these kernels and compare
states, observations and masks exactly.

Each kernel is compiled on first use and cached on disk (``cache=True``), so a
machine pays the compile time once (docs/batched.md has the figures). numba keys a
cached kernel on its own file only, not on the functions it inlines from other
files, so :func:`key_caches_on` widens the key of every kernel here and in the
IS-MCTS playouts to the content of :data:`CORE_SOURCES` too: an edit of the core
recompiles every kernel that inlines it.

The encoder walks each seat's ``played_order`` (the cards in trick order, kept
alongside the ``played`` bitsets) because a loop whose length is the same for
every seat costs less than a walk over a bitset.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numba
import numpy as np
from numba.core.caching import FunctionCache, IndexDataCacheFile
from numba.core.dispatcher import Dispatcher

from . import cards, rules_logic

CORE_SOURCES = (Path(cards.__file__), Path(rules_logic.__file__), Path(__file__))
"""The files whose code or constants the compiled core inlines (the kernels here, the IS-MCTS playouts)."""


class _SourcesKeyedCache(FunctionCache):
    """numba's disk cache of one kernel, whose entries are fresh only for the same content of some source files.

    numba's own key is the content of the kernel's file; a kernel that inlines a
    function of another file (``advance_game`` in the IS-MCTS playouts,
    ``rules_logic.playable_bits`` here) would otherwise load the machine code of
    that function's old text.
    """

    def __init__(self, py_func: Any, digest: str):
        super().__init__(py_func)
        stamp = (self._impl.locator.get_source_stamp(), digest)
        self._cache_file = IndexDataCacheFile(self._cache_path, self._impl.filename_base, stamp)


def key_caches_on(namespace: dict[str, Any], sources: Iterable[Path]) -> None:
    """Key the disk cache of every kernel in ``namespace`` (a module's globals) on the content of ``sources`` too.

    Called at the end of each kernel module, before any kernel is compiled (they compile on first call).
    """
    digest = hashlib.sha256(b"".join(hashlib.sha256(path.read_bytes()).digest() for path in sources)).hexdigest()
    for kernel in list(namespace.values()):
        if isinstance(kernel, Dispatcher) and kernel._cache.cache_path:
            kernel._cache = _SourcesKeyedCache(kernel.py_func, digest)  # as Dispatcher.enable_caching, widened

NONE = -1
BID, PLAY, GAME_OVER = 0, 1, 2  # the phases (the observation has a column for each)

# Index of the lowest set bit: _DEBRUIJN[((x & -x) * _MAGIC) >> 58] (a 64-bit de Bruijn sequence).
_MAGIC = np.uint64(0x03F79D71B4CB0A89)
_DEBRUIJN = np.zeros(64, dtype=np.int64)
for _bit in range(64):
    _DEBRUIJN[((1 << _bit) * 0x03F79D71B4CB0A89 & (2**64 - 1)) >> 58] = _bit
del _bit

# The encoder's blocks, in the order of the ``offsets`` argument of encode (see BatchedEncoder).
ENCODER_BLOCKS = (
    "hand",
    "trump",
    "turned_card",
    "turned_card_held_by_dealer",
    "phase",
    "hand_size",
    "tricks_left",
    "round_index",
    "position",
    "to_act",
    "leader",
    "bids",
    "tricks_won",
    "bid_impossible",
    "current_trick",
    "led_suit",
    "last_trick",
    "last_trick_winner",
    "played",
    "voids",
    "trump_broken",
    "scores",
)
(
    HAND, TRUMP, TURNED, HELD, PHASE, HAND_SIZE, TRICKS_LEFT, ROUND, POSITION, TO_ACT, LEADER, BIDS,
    TRICKS_WON, BID_IMPOSSIBLE, CURRENT_TRICK, LED_SUIT, LAST_TRICK, LAST_WINNER, PLAYED, VOIDS,
    TRUMP_BROKEN, SCORES,
) = range(len(ENCODER_BLOCKS))


@numba.njit(cache=True, inline="always")
def _lowest(bits):
    """Index of the lowest set bit of a non-zero uint64."""
    low = bits & (~bits + np.uint64(1))
    return _DEBRUIJN[(low * _MAGIC) >> np.uint64(58)]


@numba.njit(cache=True, inline="always")
def _set_cards(row, base, bits, one):
    """row[base + c] = one for every card c in the set ``bits``."""
    while bits:
        row[base + _lowest(bits)] = one
        bits &= bits - np.uint64(1)


# ---------------------------------------------------------------- encoder
@numba.njit(cache=True, inline="always")
def block_offsets(offsets):
    """The encoder's block offsets (an array in ENCODER_BLOCKS' order) as a tuple, for :func:`encode_row`."""
    return (
        offsets[HAND], offsets[TRUMP], offsets[TURNED], offsets[HELD], offsets[PHASE], offsets[HAND_SIZE],
        offsets[TRICKS_LEFT], offsets[ROUND], offsets[POSITION], offsets[TO_ACT], offsets[LEADER], offsets[BIDS],
        offsets[TRICKS_WON], offsets[BID_IMPOSSIBLE], offsets[CURRENT_TRICK], offsets[LED_SUIT], offsets[LAST_TRICK],
        offsets[LAST_WINNER], offsets[PLAYED], offsets[VOIDS], offsets[TRUMP_BROKEN], offsets[SCORES],
    )


@numba.njit(cache=True, inline="always")
def encode_row(row, g, me, offsets, wrap, sizes, scaled, game):
    """Seat ``me``'s observation of game ``g``, written into ``row`` (float32): the one compiled builder.

    :func:`encode` runs it over the batched engine's games (the acting seat of each), :func:`env_step` and
    :func:`env_observe` on the AEC env's one game (any seat; ``current_player`` -1: nobody to act, the
    game is over). ``offsets``: :func:`block_offsets`' tuple (read once, kept in registers: a store into
    the observation could otherwise alias an offsets array); ``sizes``: (n, num_cards, bid_width, no_suit,
    score_scale); ``scaled``: (per_max_bid, per_round, impossible); ``game``: the state arrays in the order
    of :func:`encode`'s arguments, from ``current_player`` on (tuples: numba inlines a function of at most
    28 arguments).

    ``wrap[k]`` is ``k % n`` for ``k < 3n`` (a lookup is cheaper than an integer division).
    ``impossible[((bid + 1) * (max_bid + 1) + won) * (max_bid + 1) + left]``: the bid_impossible entry
    (0. for no bid yet).
    """
    n, num_cards, bid_width, no_suit, score_scale = sizes
    per_max_bid, per_round, impossible = scaled
    (
        current_player, hands, trump, turned_card, held, phase, dealer, leader, bids, tricks_won, hand_size,
        tricks_done, round_index, trick_cards, led_suit, last_trick, last_trick_winner, played_order, voids,
        trump_broken, scores,
    ) = game
    counts = per_max_bid.shape[0]  # max_bid + 1
    (
        o_hand, o_trump, o_turned, o_held, o_phase, o_hand_size, o_tricks_left, o_round, o_position, o_to_act,
        o_leader, o_bids, o_won, o_impossible, o_trick, o_led, o_last, o_winner, o_played, o_voids, o_broken,
        o_scores,
    ) = offsets
    row[:] = 0.0
    _set_cards(row, o_hand, hands[g, me], np.float32(1.0))
    row[o_trump + (no_suit if trump[g] < 0 else trump[g])] = 1.0
    if turned_card[g] >= 0:
        row[o_turned + turned_card[g]] = 1.0
    if held[g]:
        row[o_held] = 1.0
    row[o_phase + phase[g]] = 1.0
    done = np.int64(tricks_done[g])
    left = np.int64(hand_size[g]) - done
    row[o_hand_size] = per_max_bid[hand_size[g]]
    row[o_tricks_left] = per_max_bid[left]
    row[o_round] = per_round[round_index[g]]
    row[o_position + wrap[me - dealer[g] - 1 + 2 * n]] = 1.0
    if current_player[g] >= 0:
        row[o_to_act + wrap[current_player[g] - me + n]] = 1.0
    if leader[g] >= 0:
        row[o_leader + wrap[leader[g] - me + n]] = 1.0
    for j in range(n):
        seat = wrap[me + j]
        bid = np.int64(bids[g, seat])
        won = np.int64(tricks_won[g, seat])
        row[o_bids + j * bid_width + bid + 1] = 1.0  # column 0: not yet bid
        row[o_won + j] = per_max_bid[won]
        row[o_impossible + j] = impossible[((bid + 1) * counts + won) * counts + left]
        card = trick_cards[g, seat]
        if card >= 0:
            row[o_trick + j * num_cards + card] = 1.0
        card = last_trick[g, seat]
        if card >= 0:
            row[o_last + j * num_cards + card] = 1.0
        # The cards the seat played this hand, in trick order (played_order, -1 where it has not played
        # in the current trick yet, which goes to its first voids cell, written just after): the same
        # count for every seat, so the loop's end is predictable, unlike a walk over a bitset.
        spare = o_voids + j * 4
        for k in range(done + 1):
            card = played_order[g, seat, k]
            row[o_played + j * num_cards + card if card >= 0 else spare] = 1.0
        void = voids[g, seat]
        for suit in range(4):
            row[o_voids + j * 4 + suit] = np.float32(void >> suit & 1)
        # as encode(): the total divided in float64, rounded once to float32
        row[o_scores + j] = np.float32(scores[g, seat] / score_scale)
    row[o_led + (no_suit if led_suit[g] < 0 else led_suit[g])] = 1.0
    if last_trick_winner[g] >= 0:
        row[o_winner + wrap[last_trick_winner[g] - me + n]] = 1.0
    if trump_broken[g]:
        row[o_broken] = 1.0


@numba.njit(cache=True, _nrt=False)
def encode(
    out, offsets, wrap, n, num_cards, bid_width, no_suit, per_max_bid, per_round, score_scale, impossible,
    observer, current_player, hands, trump, turned_card, held, phase, dealer, leader, bids, tricks_won, hand_size,
    tricks_done, round_index, trick_cards, led_suit, last_trick, last_trick_winner, played_order, voids,
    trump_broken, scores,
):
    """BatchedEncoder.encode: seat ``observer[g]``'s observation of game ``g`` into ``out[g]``, for every game
    (:func:`encode_row`). Compiled without reference counting, as ``advance``: it allocates nothing."""
    sizes = (n, num_cards, bid_width, no_suit, score_scale)
    scaled = (per_max_bid, per_round, impossible)
    game = (
        current_player, hands, trump, turned_card, held, phase, dealer, leader, bids, tricks_won, hand_size,
        tricks_done, round_index, trick_cards, led_suit, last_trick, last_trick_winner, played_order, voids,
        trump_broken, scores,
    )
    blocks = block_offsets(offsets)
    for g in range(out.shape[0]):
        encode_row(out[g], g, np.int64(observer[g]), blocks, wrap, sizes, scaled, game)


# ------------------------------------------------------------------- step
@numba.njit(cache=True, inline="always")
def action_legal(action, num_cards, num_actions, legal_cards, phase, hand_size, forbidden_bid):
    """Whether ``action`` is legal in a game with these legal cards, phase, hand size and forbidden bid."""
    if action < 0 or action >= num_actions:
        return False
    if action < num_cards:
        return (legal_cards >> np.uint64(action)) & np.uint64(1) != 0
    tricks = action - num_cards  # bids 0..hand size: mirrors rules_logic.bid_range
    return phase == BID and tricks <= hand_size and tricks != forbidden_bid


@numba.njit(cache=True)
def check_actions(actions, games, num_cards, num_actions, legal_cards, phase, hand_size, forbidden_bid):
    """How many of games ``games`` got an action that is illegal (0: all legal)."""
    bad = 0
    for g in games:
        if not action_legal(actions[g], num_cards, num_actions, legal_cards[g], phase[g], hand_size[g], forbidden_bid[g]):
            bad += 1
    return bad


@numba.njit(cache=True, inline="always")
def advance_game(
    g, action, n, num_cards, record, action_count, current_player, phase, leader, bids, bids_made,
    bid_total, hands, played, played_order, voids, led_suit, trump, trump_broken, trick_cards, trick_size,
    tricks_won, tricks_done, hand_size, last_trick, last_trick_leader, last_trick_winner, tables,
):
    """Record ``action`` and apply it in game ``g``: the engine's bid, play and finish trick. True when its hand is over.

    The one step of the compiled core: :func:`advance` runs it over a batch, the IS-MCTS simulator
    (:func:`step_game`, and its playouts) on one game. ``tables``: voids_shown, led_after, is_trump,
    power_flat and trick_key_low (one argument: numba inlines a function of at most 28 arguments).
    """
    voids_shown, led_after, is_trump, power_flat, trick_key_low = tables
    record[g, action_count[g]] = action
    action_count[g] += 1
    seat = np.int64(current_player[g])
    if action >= num_cards:  # a bid (BlackoutGame.bid)
        tricks = action - num_cards
        bids[g, seat] = tricks
        bid_total[g] += tricks
        bids_made[g] += 1
        if bids_made[g] == n:
            phase[g] = PLAY
            current_player[g] = leader[g]
        else:
            phase[g] = BID
            current_player[g] = seat + 1 if seat + 1 < n else 0  # (seat + 1) % n without a division
        return False
    # a card (BlackoutGame.play)
    card = action
    bit = np.uint64(1) << np.uint64(card)
    hands[g, seat] &= ~bit
    played[g, seat] |= bit
    played_order[g, seat, tricks_done[g]] = card
    led = np.int64(led_suit[g])
    suit = np.int64(trump[g])
    voids[g, seat] |= voids_shown[np.int64(trick_size[g] == 0), np.int64(trump_broken[g]), suit + 1, led + 1, card]
    led_suit[g] = led_after[led + 1, card]
    trump_broken[g] |= is_trump[suit + 1, card]
    trick_cards[g, seat] = card
    size = trick_size[g] + 1
    trick_size[g] = size
    if size != n:
        current_player[g] = seat + 1 if seat + 1 < n else 0
        return False
    current_player[g] = seat
    # The trick's end: the winner ranks by power, then by order of play (trick_key_low: the tie-break
    # of rules_logic.trick_winner)
    first = np.int64(leader[g])
    row = (suit + 1) * 5 + np.int64(led_suit[g]) + 1
    best = np.int64(-(2**62))
    for s in range(n):
        key = np.int64(power_flat[row * num_cards + trick_cards[g, s]]) * 64 + trick_key_low[first, s]
        if key > best:
            best = key
    winner = best & 7
    tricks_won[g, winner] += 1
    for s in range(n):
        last_trick[g, s] = trick_cards[g, s]
        trick_cards[g, s] = NONE
    last_trick_leader[g] = first
    last_trick_winner[g] = winner
    trick_size[g] = 0
    led_suit[g] = NONE
    done = tricks_done[g] + 1
    tricks_done[g] = done
    leader[g] = winner
    current_player[g] = winner
    return done == hand_size[g]


@numba.njit(cache=True, _nrt=False)
def advance(
    actions, games, over, n, num_cards, record, action_count, current_player, phase, leader, bids, bids_made,
    bid_total, hands, played, played_order, voids, led_suit, trump, trump_broken, trick_cards, trick_size,
    tricks_won, tricks_done, hand_size, last_trick, last_trick_leader, last_trick_winner,
    voids_shown, led_after, is_trump, power_flat, trick_key_low,
):
    """:func:`advance_game` in games ``games`` (ascending) with their ``actions``: the games whose hand is over go
    to ``over``, and their count is returned.
    """
    tables = (voids_shown, led_after, is_trump, power_flat, trick_key_low)
    count = 0
    for g in games:
        if advance_game(
            g, actions[g], n, num_cards, record, action_count, current_player, phase, leader, bids, bids_made,
            bid_total, hands, played, played_order, voids, led_suit, trump, trump_broken, trick_cards, trick_size,
            tricks_won, tricks_done, hand_size, last_trick, last_trick_leader, last_trick_winner, tables,
        ):
            over[count] = g
            count += 1
    return count


_playable = numba.njit(cache=True, inline="always")(rules_logic.playable_bits)
"""rules_logic.playable_bits compiled: the legal cards of legal_game (the batched engine and the IS-MCTS simulator)."""


@numba.njit(cache=True, inline="always")
def legal_game(
    g, n, must_break, legal_cards, forbidden_out, current_player, hands, led_suit, trump, trump_broken,
    trick_size, phase, bids_made, hand_size, bid_total, suit_bits, joker_bits, standard_bits, forbidden_bid,
):
    """The acting seat's legal cards (bitset) and the dealer's forbidden bid (NONE: none) in game ``g``."""
    hand = hands[g, current_player[g]]
    legal = np.uint64(0)
    forbidden = NONE
    if phase[g] == PLAY:
        leads = trick_size[g] == 0
        follow = suit_bits[0] if leads else suit_bits[led_suit[g] + 1]  # suit_bits[0]: no suit, no card
        breaks = suit_bits[trump[g] + 1] if must_break and leads and not trump_broken[g] else suit_bits[0]
        legal = _playable(leads, hand, follow, breaks, joker_bits, standard_bits)
    elif bids_made[g] == n - 1:
        forbidden = forbidden_bid[hand_size[g], bid_total[g]]
    legal_cards[g] = legal
    forbidden_out[g] = forbidden


@numba.njit(cache=True, _nrt=False)
def compute_legal(
    games, n, must_break, legal_cards, forbidden_out, current_player, hands, led_suit, trump, trump_broken,
    trick_size, phase, bids_made, hand_size, bid_total, suit_bits, joker_bits, standard_bits, forbidden_bid,
):
    """BatchedBlackout._compute_legal: :func:`legal_game` in games ``games``."""
    for g in games:
        legal_game(
            g, n, must_break, legal_cards, forbidden_out, current_player, hands, led_suit, trump, trump_broken,
            trick_size, phase, bids_made, hand_size, bid_total, suit_bits, joker_bits, standard_bits, forbidden_bid,
        )


@numba.njit(cache=True, inline="always")
def mask_row(row, num_cards, legal_cards, phase, hand_size, forbidden_bid):
    """One game's action mask: 1 at the legal cards, and at bids 0..hand size less the forbidden one while bidding."""
    row[:] = 0
    _set_cards(row, 0, legal_cards, np.int8(1))
    if phase == BID:
        for k in range(hand_size + 1):  # mirrors rules_logic.bid_range
            if k != forbidden_bid:
                row[num_cards + k] = 1


@numba.njit(cache=True)
def action_mask(mask, num_cards, legal_cards, phase, hand_size, forbidden_bid):
    """_action_mask: :func:`mask_row` for every game."""
    for g in range(mask.shape[0]):
        mask_row(mask[g], num_cards, legal_cards[g], phase[g], hand_size[g], forbidden_bid[g])
    return mask


@numba.njit(cache=True)
def random_actions(uniform, games, num_cards, legal_cards, phase, hand_size, forbidden_bid):
    """_random_actions for games ``games`` from their ``uniform`` draws: the r-th legal card, or a bid."""
    actions = np.empty(len(games), dtype=np.int64)
    for i in range(len(games)):
        g = games[i]
        if phase[g] == PLAY:
            rest = legal_cards[g]
            count = 0
            bits = rest
            while bits:
                bits &= bits - np.uint64(1)
                count += 1
            rank = np.int64(uniform[i] * count)
            for _ in range(rank):
                rest &= rest - np.uint64(1)
            actions[i] = _lowest(rest)
        else:
            hooked = forbidden_bid[g] != NONE
            # uniform over bids 0..hand size (mirrors rules_logic.bid_range), stepping over the forbidden one
            tricks = np.int64(uniform[i] * (hand_size[g] + 1 - np.int64(hooked)))
            if hooked and tricks >= forbidden_bid[g]:
                tricks += 1
            actions[i] = num_cards + tricks
    return actions


@numba.njit(cache=True)
def finish_hands(games, hand_score, bids, tricks_won, scores, round_scores, round_index, last_hand_bids, last_hand_tricks):
    """_finish_hands for games ``games``: the hand scores (games x seats, int32), added to the totals."""
    n = bids.shape[1]
    hand_scores = np.empty((len(games), n), dtype=np.int32)
    for i in range(len(games)):
        g = games[i]
        r = round_index[g]
        for s in range(n):
            bid = bids[g, s]
            won = tricks_won[g, s]
            last_hand_bids[g, s] = bid
            last_hand_tricks[g, s] = won
            score = hand_score[bid, won]
            hand_scores[i, s] = score
            scores[g, s] += score
            round_scores[g, r, s] = score
    return hand_scores


# ------------------------------------------------------------- deal, shuffle
@numba.njit(cache=True)
def shuffle(uniform, size):
    """BatchedBlackout._shuffle from its ``uniform`` draws (positions x decks): Fisher-Yates, stopped after the drawn positions."""
    count = uniform.shape[1]
    decks = np.empty((count, size), dtype=np.int8)
    for row in range(count):
        for card in range(size):
            decks[row, card] = card
    # Position by position over all decks: each deck still takes its swaps in order, and the draws of one
    # position are read in memory order (deck by deck they are a column of ``uniform``, one cache line each).
    for position in range(uniform.shape[0]):
        draws = uniform[position]
        left = size - position
        for row in range(count):
            # swap position with a card drawn uniformly from positions position..size-1
            drawn = position + np.int64(draws[row] * left)
            card = decks[row, position]
            decks[row, position] = decks[row, drawn]
            decks[row, drawn] = card
    return decks


@numba.njit(cache=True)
def deal(
    games, n, turned_trump, turned_position, turned_held, deal_seat, first_to_act, hand_sizes, rule_trump,
    suit_or_none, decks, round_index, first_dealer,
    hands, hand_size, dealer, turned_card, held, trump, phase, leader, current_player, bids, bids_made, bid_total,
    tricks_won, tricks_done, trick_cards, trick_size, led_suit, trump_broken, last_trick, last_trick_leader,
    last_trick_winner, played, played_order, voids, round_start, action_count,
):
    """BatchedBlackout._deal for games ``games``: deck card k goes to seat deal_seat[dealer, k], k < n * hand size.

    The rule facts come as the batched engine's tables (built from rules_logic): ``deal_seat`` (dealt_to),
    ``first_to_act``, ``turned_position`` and ``turned_held`` (turned_card, per round).
    """
    for g in games:
        r = np.int64(round_index[g])
        cards = np.int64(hand_sizes[r])
        first = (np.int64(first_dealer[g]) + r) % n  # mirrors rules_logic.dealer_of_round
        deck = decks[g, r]
        dealt = n * cards
        for s in range(n):
            hands[g, s] = 0
        for k in range(dealt):
            hands[g, deal_seat[first, k]] |= np.uint64(1) << np.uint64(deck[k])
        hand_size[g] = cards
        dealer[g] = first
        if not turned_trump:  # the rules name the suit of each hand
            turned_card[g] = NONE
            held[g] = False
            trump[g] = rule_trump[r]
        else:
            position = turned_position[r]
            turned = np.int64(deck[position]) if position >= 0 else NONE
            held[g] = turned_held[r]  # dealer_last: the dealer's last dealt card is shown and names trump
            turned_card[g] = turned
            trump[g] = suit_or_none[turned + 1]  # a turned joker (or no card): no trump
        start = first_to_act[first]
        phase[g] = BID
        leader[g] = start
        current_player[g] = start
        bids_made[g] = 0
        bid_total[g] = 0
        tricks_done[g] = 0
        trick_size[g] = 0
        led_suit[g] = NONE
        trump_broken[g] = False
        last_trick_leader[g] = NONE
        last_trick_winner[g] = NONE
        for s in range(n):
            bids[g, s] = NONE
            tricks_won[g, s] = 0
            trick_cards[g, s] = NONE
            last_trick[g, s] = NONE
            played[g, s] = 0
            voids[g, s] = 0
            for k in range(played_order.shape[2]):
                played_order[g, s, k] = NONE
        round_start[g] = action_count[g]


# -------------------------------------------------------------- one game
# One game in one int64 array, for the AEC env (one game of a match) and for a search that steps one
# determinized hand at a time (the IS-MCTS simulator): the batch's state arrays as a batch of one. The
# scalars (ONE_SCALARS), per-seat blocks of n entries (ONE_SEAT_BLOCKS, in order), the cards played by seat
# and trick (n x capacity) and the actions (n x (capacity + 1)); "legal_cards" and "forbidden_bid" are
# legal_game's output, "capacity" the most tricks the array has room for. The step never reads the
# dealer, the turned card, whether the dealer holds it, the round and the scores: the observation does. The rules' tables go in a second int64 array (see game_tables in
# blackout_env.batched): ONE_TABLE_SCALARS, then suit_bits (5 entries), voids_shown, led_after, is_trump,
# power_flat, trick_key_low and forbidden_bid, flattened, with the batch's shapes.
ONE_SCALARS = (
    "current_player", "phase", "leader", "bids_made", "bid_total", "led_suit", "trump", "trump_broken",
    "trick_size", "tricks_done", "hand_size", "last_trick_leader", "last_trick_winner", "action_count",
    "legal_cards", "forbidden_bid", "capacity", "dealer", "turned_card", "held", "round_index",
)
ONE_SEAT_BLOCKS = ("hands", "bids", "tricks_won", "trick_cards", "played", "voids", "last_trick", "scores")
O_SCORES_BLOCK = ONE_SEAT_BLOCKS.index("scores")
ONE_TABLE_SCALARS = ("num_players", "num_cards", "must_break", "joker_bits", "standard_bits", "max_bid")
(
    O_CURRENT, O_PHASE, O_LEADER, O_BIDS_MADE, O_BID_TOTAL, O_LED, O_TRUMP, O_BROKEN, O_TRICK_SIZE, O_DONE,
    O_HAND_SIZE, O_LAST_LEADER, O_LAST_WINNER, O_ACTION_COUNT, O_LEGAL, O_FORBIDDEN, O_CAPACITY, O_DEALER, O_TURNED,
    O_HELD, O_ROUND,
) = range(len(ONE_SCALARS))


def one_game_size(n: int, capacity: int) -> int:
    """The length of the one-game array of ``n`` seats with room for ``capacity`` tricks."""
    return len(ONE_SCALARS) + len(ONE_SEAT_BLOCKS) * n + n * capacity + n * (capacity + 1)


# game_arrays' tuple: advance_game's arguments after the game and the action, then legal_game's others
GAME_ARRAYS = (
    "num_players", "num_cards", "record", "action_count", "current_player", "phase", "leader", "bids", "bids_made",
    "bid_total", "hands", "played", "played_order", "voids", "led_suit", "trump", "trump_broken", "trick_cards",
    "trick_size", "tricks_won", "tricks_done", "hand_size", "last_trick", "last_trick_leader", "last_trick_winner",
    "tables", "must_break", "legal_cards", "forbidden_out", "suit_bits", "joker_bits", "standard_bits",
    "forbidden_bid",
)
(
    A_N, A_NUM_CARDS, A_RECORD, A_ACTION_COUNT, A_CURRENT, A_PHASE, A_LEADER, A_BIDS, A_BIDS_MADE, A_BID_TOTAL,
    A_HANDS, A_PLAYED, A_PLAYED_ORDER, A_VOIDS, A_LED, A_TRUMP, A_BROKEN, A_TRICK_CARDS, A_TRICK_SIZE, A_WON, A_DONE,
    A_HAND_SIZE, A_LAST_TRICK, A_LAST_LEADER, A_LAST_WINNER, A_TABLES, A_MUST_BREAK, A_LEGAL, A_FORBIDDEN,
    A_SUIT_BITS, A_JOKER_BITS, A_STANDARD_BITS, A_FORBIDDEN_BID,
) = range(len(GAME_ARRAYS))


@numba.njit(cache=True, inline="always")
def game_arrays(state, tables):
    """The one game's arrays as the batch's for a batch of one (views of ``state``) and the rules' tables (GAME_ARRAYS)."""
    n = tables[0]
    num_cards = tables[1]
    max_bid = tables[5]
    table_bits = tables.view(np.uint64)
    t = len(ONE_TABLE_SCALARS)
    suit_bits = table_bits[t : t + 5]
    t += 5
    voids_shown = tables[t : t + 100 * num_cards].reshape((2, 2, 5, 5, num_cards))
    t += 100 * num_cards
    led_after = tables[t : t + 5 * num_cards].reshape((5, num_cards))
    t += 5 * num_cards
    is_trump = tables[t : t + 5 * num_cards].reshape((5, num_cards))
    t += 5 * num_cards
    power_flat = tables[t : t + 25 * num_cards]
    t += 25 * num_cards
    trick_key_low = tables[t : t + n * n].reshape((n, n))
    t += n * n
    forbidden_bid = tables[t : t + (max_bid + 1) * (n * max_bid + 1)].reshape((max_bid + 1, n * max_bid + 1))
    s = len(ONE_SCALARS)
    capacity = state[O_CAPACITY]
    seats = state[s : s + len(ONE_SEAT_BLOCKS) * n].reshape((len(ONE_SEAT_BLOCKS), 1, n))
    bits = state.view(np.uint64)
    hands = bits[s : s + n].reshape((1, n))
    played = bits[s + 4 * n : s + 5 * n].reshape((1, n))
    s += len(ONE_SEAT_BLOCKS) * n
    played_order = state[s : s + n * capacity].reshape((1, n, capacity))
    s += n * capacity
    record = state[s : s + n * (capacity + 1)].reshape((1, n * (capacity + 1)))
    return (
        n, num_cards, record, state[O_ACTION_COUNT : O_ACTION_COUNT + 1], state[O_CURRENT : O_CURRENT + 1],
        state[O_PHASE : O_PHASE + 1], state[O_LEADER : O_LEADER + 1], seats[1], state[O_BIDS_MADE : O_BIDS_MADE + 1],
        state[O_BID_TOTAL : O_BID_TOTAL + 1], hands, played, played_order, seats[5], state[O_LED : O_LED + 1],
        state[O_TRUMP : O_TRUMP + 1], state[O_BROKEN : O_BROKEN + 1], seats[3], state[O_TRICK_SIZE : O_TRICK_SIZE + 1],
        seats[2], state[O_DONE : O_DONE + 1], state[O_HAND_SIZE : O_HAND_SIZE + 1], seats[6],
        state[O_LAST_LEADER : O_LAST_LEADER + 1], state[O_LAST_WINNER : O_LAST_WINNER + 1],
        (voids_shown, led_after, is_trump, power_flat, trick_key_low), tables[2] != 0, bits[O_LEGAL : O_LEGAL + 1],
        state[O_FORBIDDEN : O_FORBIDDEN + 1], suit_bits, table_bits[3], table_bits[4], forbidden_bid,
    )


@numba.njit(cache=True, inline="always")
def legal_one(a):
    """legal_game for the one game of ``a`` (game_arrays' tuple)."""
    legal_game(
        0, a[A_N], a[A_MUST_BREAK], a[A_LEGAL], a[A_FORBIDDEN], a[A_CURRENT], a[A_HANDS], a[A_LED], a[A_TRUMP],
        a[A_BROKEN], a[A_TRICK_SIZE], a[A_PHASE], a[A_BIDS_MADE], a[A_HAND_SIZE], a[A_BID_TOTAL], a[A_SUIT_BITS],
        a[A_JOKER_BITS], a[A_STANDARD_BITS], a[A_FORBIDDEN_BID],
    )


@numba.njit(cache=True, inline="always")
def step_one(a, action):
    """advance_game, then legal_game, for the one game of ``a`` (game_arrays' tuple); True when the hand is over."""
    over = advance_game(
        0, action, a[A_N], a[A_NUM_CARDS], a[A_RECORD], a[A_ACTION_COUNT], a[A_CURRENT], a[A_PHASE], a[A_LEADER],
        a[A_BIDS], a[A_BIDS_MADE], a[A_BID_TOTAL], a[A_HANDS], a[A_PLAYED], a[A_PLAYED_ORDER], a[A_VOIDS], a[A_LED],
        a[A_TRUMP], a[A_BROKEN], a[A_TRICK_CARDS], a[A_TRICK_SIZE], a[A_WON], a[A_DONE], a[A_HAND_SIZE],
        a[A_LAST_TRICK], a[A_LAST_LEADER], a[A_LAST_WINNER], a[A_TABLES],
    )
    legal_one(a)
    return over


@numba.njit(cache=True, _nrt=False)
def step_game(state, tables, action):
    """Apply ``action`` (legal) in the one game of ``state`` and compute the next legal set; True when the hand is over."""
    return step_one(game_arrays(state, tables), action)


@numba.njit(cache=True, _nrt=False)
def legal_of_game(state, tables):
    """Compute the legal set of the one game of ``state`` (after it was written from outside)."""
    legal_one(game_arrays(state, tables))


# ------------------------------------------------------------ the AEC env
# The AEC env's game is a one-game array with room for its largest hand and one more trick (a finished
# hand is observed too). Its observation is encode_row's on that game; the encoder's inputs come in one
# int64 array (the block offsets in ENCODER_BLOCKS' order, ENV_SIZES, then encode_row's ``wrap``) and one
# float32 array (the scaled counts 0..max bid, the scaled rounds, then the bid_impossible table): numba
# reads the type of every array argument at every call, so few arrays cost less.
ENV_SIZES = ("bid_width", "no_suit", "score_scale", "counts", "rounds")
ILLEGAL, MOVED, TRICK_OVER, HAND_OVER = -1, 0, 1, 2
"""What env_step returns."""


@numba.njit(cache=True, inline="always")
def _env_observe(state, a, encoding, floats, row, mask, observer):
    """The acting seat's mask into ``mask`` and seat ``observer``'s observation into ``row``."""
    mask_row(mask, a[A_NUM_CARDS], a[A_LEGAL][0], a[A_PHASE][0], a[A_HAND_SIZE][0], a[A_FORBIDDEN][0])
    o = len(ENCODER_BLOCKS)
    n = a[A_N]
    bid_width, no_suit, score_scale, counts, rounds = (
        encoding[o], encoding[o + 1], encoding[o + 2], encoding[o + 3], encoding[o + 4]
    )
    scores = len(ONE_SCALARS) + O_SCORES_BLOCK * n
    encode_row(
        row, 0, observer, block_offsets(encoding), encoding[o + len(ENV_SIZES) :],
        (n, a[A_NUM_CARDS], bid_width, no_suit, score_scale),
        (floats[:counts], floats[counts : counts + rounds], floats[counts + rounds :]),
        (
            a[A_CURRENT], a[A_HANDS], a[A_TRUMP], state[O_TURNED : O_TURNED + 1], state[O_HELD : O_HELD + 1], a[A_PHASE],
            state[O_DEALER : O_DEALER + 1], a[A_LEADER], a[A_BIDS], a[A_WON], a[A_HAND_SIZE], a[A_DONE],
            state[O_ROUND : O_ROUND + 1], a[A_TRICK_CARDS], a[A_LED], a[A_LAST_TRICK], a[A_LAST_WINNER],
            a[A_PLAYED_ORDER], a[A_VOIDS], a[A_BROKEN], state[scores : scores + n].reshape((1, n)),
        ),
    )


@numba.njit(cache=True, _nrt=False)
def env_step(state, tables, encoding, floats, row, mask, action):
    """The AEC env's move: ``action`` in the one game of ``state``, if legal.

    Returns ILLEGAL (nothing changed), HAND_OVER (the env scores the hand, then deals or ends), or
    TRICK_OVER or MOVED, after which ``mask`` holds the next seat's legal actions and ``row`` its observation.
    """
    a = game_arrays(state, tables)
    if not action_legal(action, a[A_NUM_CARDS], a[A_NUM_CARDS] + tables[5] + 1, a[A_LEGAL][0], state[O_PHASE],
                        state[O_HAND_SIZE], state[O_FORBIDDEN]):
        return ILLEGAL
    if step_one(a, action):
        return HAND_OVER
    _env_observe(state, a, encoding, floats, row, mask, np.int64(state[O_CURRENT]))
    return TRICK_OVER if action < a[A_NUM_CARDS] and state[O_TRICK_SIZE] == 0 else MOVED


@numba.njit(cache=True, _nrt=False)
def env_observe(state, tables, encoding, floats, row, mask, observer):
    """The legal set of the one game of ``state`` (after it was written from outside), the acting seat's mask
    into ``mask`` and seat ``observer``'s observation into ``row``."""
    a = game_arrays(state, tables)
    legal_one(a)
    _env_observe(state, a, encoding, floats, row, mask, np.int64(observer))


key_caches_on(globals(), CORE_SOURCES)
