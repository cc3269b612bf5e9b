"""The IS-MCTS playouts, compiled: one determinized hand played out on the compiled core's one-game state.

Imported by :mod:`blackout_baselines.ismcts` when a bot is made (it imports numba). The
rules are the compiled core's (:mod:`blackout_env.batched._kernels`: ``step_one`` is the
batched engine's ``advance_game`` and ``legal_game`` on a batch of one); what is here is
the playout policy: uniformly random legal actions, or the greedy bid and card.
"""

from __future__ import annotations

import numba
import numpy as np

from blackout_env.batched import _kernels as core
from blackout_env.game.cards import NUM_STANDARD_CARDS

# The greedy bid's likely tricks in one suit, by the suit's 13-bit slice of the hand: as a side suit (aces and
# kings), as trump (the ten and up, and lower trumps a little).
_SLICES = range(1 << 13)
SIDE_TRICKS = np.array([0.85 * (m >> 12 & 1) + 0.45 * (m >> 11 & 1) for m in _SLICES])
TRUMP_TRICKS = np.array([0.9 * (m >> 8).bit_count() + 0.35 * (m & 255).bit_count() for m in _SLICES])


@numba.njit(cache=True, inline="always")
def _count(bits):
    count = 0
    while bits:
        bits &= bits - np.uint64(1)
        count += 1
    return count


@numba.njit(cache=True)
def greedy_bid(hand, trump, side, trumps):
    """The greedy playout's bid (tricks): aces and kings of side suits, and trumps from the ten up, count as tricks."""
    tricks = float(_count(hand >> np.uint64(NUM_STANDARD_CARDS)))  # jokers
    for suit in range(4):
        cards = np.int64((hand >> np.uint64(13 * suit)) & np.uint64(8191))
        tricks += trumps[cards] if suit == trump else side[cards]
    return np.int64(tricks + 0.5)


@numba.njit(cache=True)
def greedy_card(legal, power_flat, led_after, num_cards, trump, led, win_power, want, last):
    """The greedy playout's card (as its bit) among ``legal`` (two or more cards).

    A seat that still needs tricks plays its strongest card, or, last to play, the
    cheapest card that wins; if none can win the trick, its weakest. A seat that
    needs no more tricks plays its strongest card that loses to the trick so far
    (of power ``win_power``; -1 before the first card), else its weakest (leading: its weakest).
    Power is the core's table of :func:`blackout_env.game.rules_logic.card_power`, with the led suit
    once the card is played (the core's ``led_after``: a card that would lead counts in its own suit).
    """
    zero = np.uint64(0)
    strongest = weakest = cheapest_win = best_loser = zero
    strongest_p, weakest_p, cheapest_p, loser_p = -2, 10**6, 10**6, -2
    m = legal
    while m:
        bit = m & (~m + np.uint64(1))
        m ^= bit
        card = core._lowest(bit)
        suit = np.int64(led_after[led + 1, card])
        p = np.int64(power_flat[((trump + 1) * 5 + suit + 1) * num_cards + card])
        if p > strongest_p:
            strongest_p, strongest = p, bit
        if p < weakest_p:
            weakest_p, weakest = p, bit
        if p > win_power:
            if p < cheapest_p:
                cheapest_p, cheapest_win = p, bit
        elif p > loser_p:
            loser_p, best_loser = p, bit
    if want:
        if cheapest_win:
            return cheapest_win if last else strongest
        return weakest
    if win_power >= 0 and best_loser:
        return best_loser
    return weakest


# ------------------------------------------------------------------ the exact endgame
_MIX = np.uint64(0x9E3779B97F4A7C15)
_SEAT_BITS = 5  # a solved value packs each seat's final tricks won in 5 bits (hands of up to 31 tricks)


@numba.njit(cache=True, inline="always")
def _pack_won(won, n):
    value = np.int64(0)
    for seat in range(n):
        value |= np.int64(won[0, seat]) << np.int64(_SEAT_BITS * seat)
    return value


@numba.njit(cache=True, inline="always")
def _position_key(s, n):
    """A 64-bit hash of a position between tricks: every hand, bid and trick won, the leader and trump broken
    (with the rules' tables, these decide the rest of the hand). Never 0 (an empty slot)."""
    key = np.uint64(s.leader[0] + 8 * s.trump_broken[0])
    for seat in range(n):
        key = (key ^ np.uint64(s.hands[0, seat])) * _MIX
        key = (key ^ np.uint64((s.bids[0, seat] + 1) * 64 + s.tricks_won[0, seat])) * _MIX
    key ^= key >> np.uint64(29)
    return key | np.uint64(1)


@numba.njit(cache=True, inline="always")
def _enter(stack, depth, t, keys, counts, moves, best, ints):
    """Open the position ``stack[depth]`` for :func:`solve`: True with its value in ``best[depth]`` when it needs
    no search (the hand is over, or the position is in the table); else its frame (the cards to try, the seat's
    bid and the best score it can still reach, the table slot) is set and False returned."""
    s = core.unpack_words(stack[depth])
    n = t.num_players[0]
    size, done = np.int64(s.hand_size[0]), np.int64(s.tricks_done[0])
    if done == size:
        best[depth] = _pack_won(s.tricks_won, n)
        return True
    counts[0] += 1
    key = np.uint64(0)
    slot = np.int64(0)
    if s.trick_size[0] == 0:
        key = _position_key(s, n)
        slot = np.int64(key & np.uint64(keys.size - 1))
        if keys[slot] == key:
            counts[1] += 1
            best[depth] = -1 - slot  # (the caller reads values[slot])
            return True
    seat = np.int64(s.current_player[0])
    bid, won = np.int64(s.bids[0, seat]), np.int64(s.tricks_won[0, seat])
    reach = np.int64(-(2**62))  # the best score this seat can still reach
    for more in range(size - done + 1):
        reach = max(reach, np.int64(t.hand_score[bid, won + more]))
    live = np.uint64(0)  # the cards not yet played, and those in the trick: a card between two held cards
    for other in range(n):
        live |= np.uint64(s.hands[0, other])
        if s.trick_cards[0, other] >= 0:
            live |= np.uint64(1) << np.uint64(s.trick_cards[0, other])
    moves[depth, 0] = np.uint64(s.legal_cards[0])  # the cards still to try
    moves[depth, 1] = np.uint64(s.legal_cards[0])
    moves[depth, 2] = live
    moves[depth, 3] = key
    ints[depth, 0] = seat
    ints[depth, 1] = bid
    ints[depth, 2] = reach
    ints[depth, 3] = slot
    ints[depth, 4] = np.int64(-(2**62))  # the best score found
    best[depth] = 0
    return False


@numba.njit(cache=True)
def solve(state, tables, stack, keys, values, counts):
    """Solve the hand of ``state`` (a one-game state of words, in the play phase) exactly and write the result
    into it: every seat's final tricks won, the hand over.

    Max-n: each seat, in turn, plays the card that gives it the highest hand score (the rules'
    ``hand_score``) knowing every hand, and expects the others to do the same. Cards are tried lowest
    first; ties go to the first card tried; a seat stops trying cards once one gives it the best score it
    can still reach; of two cards of a suit with no live card between them (none in a hand or the trick),
    a seat that may play both tries the higher only (the same card for the rest of the hand), and of two
    jokers one. A value is every seat's final tricks won, :data:`_SEAT_BITS` a seat. Positions between
    tricks go to the transposition table ``keys``/``values`` (a power of two in size, always replaced; its
    keys hold no trump or rules, so it is cleared for another hand). ``stack`` has a row, of the state's
    size, per card left to play plus one; ``counts`` adds [positions searched, table hits]. Iterative,
    not recursive (numba's cache cannot load a recursive function).
    """
    t = core.unpack_tables_inline(tables)
    n = t.num_players[0]
    rows = stack.shape[0]
    moves = np.zeros((rows, 4), dtype=np.uint64)
    ints = np.zeros((rows, 5), dtype=np.int64)
    best = np.zeros(rows, dtype=np.int64)
    joker_bits = np.uint64(t.joker_bits[0])
    stack[0, :] = state
    depth = 0
    if _enter(stack, 0, t, keys, counts, moves, best, ints):
        value = best[0] if best[0] >= 0 else values[-1 - best[0]]
    else:
        while True:
            m, legal = moves[depth, 0], moves[depth, 1]
            pruned = ints[depth, 4] == ints[depth, 2]
            card = -1
            while m and not pruned:
                bit = m & (~m + np.uint64(1))
                m ^= bit
                if bit & joker_bits:
                    if m & joker_bits:  # two jokers in hand: the same card for the rest of the hand
                        continue
                else:
                    # the next live card of its suit above it: if the seat may play that too, they are the same card
                    c = core._lowest(bit)
                    above = np.uint64(t.suit_bits[c // 13 + 1]) & moves[depth, 2] & ~((bit << np.uint64(1)) - np.uint64(1))
                    if above and (above & (~above + np.uint64(1))) & legal:
                        continue
                card = core._lowest(bit)
                break
            moves[depth, 0] = m
            if card >= 0:  # search the child
                child = stack[depth + 1]
                child[:] = stack[depth]
                core.step_one(core.unpack_words(child), t, card)
                if not _enter(stack, depth + 1, t, keys, counts, moves, best, ints):
                    depth += 1
                    continue
                value = best[depth + 1] if best[depth + 1] >= 0 else values[-1 - best[depth + 1]]
            else:  # every card tried: this position's value goes to its parent
                value = best[depth]
                key = moves[depth, 3]
                if key:
                    keys[ints[depth, 3]] = key
                    values[ints[depth, 3]] = value
                if depth == 0:
                    break
                depth -= 1
            seat = ints[depth, 0]
            score = np.int64(t.hand_score[ints[depth, 1], (value >> np.int64(_SEAT_BITS * seat)) & np.int64(31)])
            if score > ints[depth, 4]:
                ints[depth, 4] = score
                best[depth] = value
    s = core.unpack_words(state)
    for seat in range(n):
        s.tricks_won[0, seat] = (value >> np.int64(_SEAT_BITS * seat)) & np.int64(31)
    s.tricks_done[0] = s.hand_size[0]
    s.trick_size[0] = 0
    for seat in range(n):
        s.trick_cards[0, seat] = core.NONE


@numba.njit(cache=True)
def playout(state, tables, draws, greedy, endgame, stack, keys, values, counts):
    """Play the hand of ``state`` (the core's one-game state) to its end: random or greedy actions, and with
    ``endgame`` > 0 the last ``endgame`` tricks (once the bids are in) solved exactly (:func:`solve`, with
    ``stack``, ``keys``, ``values``, ``counts``).

    Random: a bid is ``draws[k]`` (uniform in [0, 1), drawn by the caller) times the number of legal
    bids, rounded down, among the legal bids in order; a card is numba's ``np.random.random()`` times
    the number of legal cards among them in order (no draw when only one card is legal).
    Greedy: :func:`greedy_bid` (the legal bid nearest to it, the lower on a tie) and :func:`greedy_card`.
    """
    s = core.unpack_words(state)
    t = core.unpack_tables_inline(tables)
    n, num_cards = t.num_players[0], t.num_cards[0]
    current, phase, bids, won = s.current_player, s.phase, s.bids, s.tricks_won
    hand_size, done, forbidden_out = s.hand_size, s.tricks_done, s.forbidden_bid
    trump, led_suit, trick_size = s.trump, s.led_suit, s.trick_size
    legal_cards, hands = s.legal_cards, s.hands
    power_flat = t.power_flat
    drawn = 0
    while done[0] < hand_size[0]:
        seat = current[0]
        if endgame and phase[0] == core.PLAY and hand_size[0] - done[0] <= endgame:
            solve(state, tables, stack, keys, values, counts)
            return
        if phase[0] == core.BID:
            size = hand_size[0]
            forbidden = forbidden_out[0]
            if greedy:
                estimate = greedy_bid(hands[0, seat], trump[0], SIDE_TRICKS, TRUMP_TRICKS)
                tricks, distance = -1, 10**6
                for bid in core.bid_range(size):
                    if bid != forbidden and abs(bid - estimate) < distance:
                        tricks, distance = bid, abs(bid - estimate)
            else:
                tricks = core.random_bid(draws[drawn], size, forbidden)
                drawn += 1
            action = num_cards + tricks
        else:
            legal = legal_cards[0]
            if legal & (legal - np.uint64(1)):  # more than one card
                if greedy:
                    win_power = max(np.int64(-1), core.trick_best(s, t, 0) >> 6)
                    legal = greedy_card(
                        legal, power_flat, t.led_after, num_cards, trump[0], np.int64(led_suit[0]), win_power,
                        bids[0, seat] > won[0, seat], trick_size[0] == n - 1,
                    )
                else:  # pick one at random
                    for _ in range(np.int64(np.random.random() * _count(legal))):
                        legal &= legal - np.uint64(1)
            action = core._lowest(legal)
        core.step_one(s, t, action)


@numba.njit(cache=True)
def seed(value):
    """Seed numba's random numbers (the random playouts' card draws)."""
    np.random.seed(value)


core.key_caches_on(globals(), core.CORE_SOURCES)  # the playouts inline the core's step


@numba.njit(cache=True)
def playable_each(leads, hands, follow_bits, break_bits, joker_bits, standard_bits):
    """The legal cards of each hand of ``hands`` (bitsets) at one moment of a trick: the compiled core's
    ``rules_logic.playable_bits``, once per hand (the play model's likelihood over many deals)."""
    legal = np.empty_like(hands)
    for i in range(hands.size):
        legal[i] = core._playable(leads, hands[i], follow_bits, break_bits, joker_bits, standard_bits)
    return legal
