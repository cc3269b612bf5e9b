"""The IS-MCTS playouts, compiled: one determinized hand played out on the compiled core's one-game state.

Imported by :mod:`blackout_baselines.ismcts` when a bot is made (it imports numba). The
rules are the compiled core's (:mod:`blackout_env._batched_kernels`: ``step_one`` is the
batched engine's ``advance_game`` and ``legal_game`` on a batch of one); what is here is
the playout policy: uniformly random legal actions, or the greedy bid and card.
"""

from __future__ import annotations

import numba
import numpy as np

from blackout_env import _batched_kernels as core
from blackout_env.cards import NUM_STANDARD_CARDS

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
def greedy_card(legal, power_flat, num_cards, trump, led, win_power, want, last):
    """The greedy playout's card (as its bit) among ``legal`` (two or more cards).

    A seat that still needs tricks plays its strongest card, or, last to play, the
    cheapest card that wins; if none can win the trick, its weakest. A seat that
    needs no more tricks plays its strongest card that loses to the trick so far,
    else its weakest (leading: its weakest). Power is the core's table of
    :func:`blackout_env.rules_logic.card_power` (a card that would lead counts in its own suit).
    """
    zero = np.uint64(0)
    strongest = weakest = cheapest_win = best_loser = zero
    strongest_p, weakest_p, cheapest_p, loser_p = -2, 10**6, 10**6, -2
    m = legal
    while m:
        bit = m & (~m + np.uint64(1))
        m ^= bit
        card = core._lowest(bit)
        suit = led if led >= 0 or card >= NUM_STANDARD_CARDS else card // 13
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


@numba.njit(cache=True, _nrt=False)
def playout(state, tables, draws, greedy):
    """Play the hand of ``state`` (the core's one-game state) to its end: random or greedy actions.

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
    trump, led_suit, trick_cards, trick_size = s.trump, s.led_suit, s.trick_cards, s.trick_size
    legal_cards, hands = s.legal_cards, s.hands
    power_flat = t.power_flat
    drawn = 0
    while done[0] < hand_size[0]:
        seat = current[0]
        if phase[0] == core.BID:
            size = hand_size[0]
            forbidden = forbidden_out[0]
            if greedy:
                estimate = greedy_bid(hands[0, seat], trump[0], SIDE_TRICKS, TRUMP_TRICKS)
                tricks, distance = -1, 10**6
                for bid in range(size + 1):  # bids 0..hand size: mirrors rules_logic.bid_range
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
                    led = np.int64(led_suit[0])
                    row = ((trump[0] + 1) * 5 + led + 1) * num_cards
                    win_power = -1
                    for other in range(n):
                        if trick_cards[0, other] >= 0:
                            win_power = max(win_power, np.int64(power_flat[row + trick_cards[0, other]]))
                    legal = greedy_card(
                        legal, power_flat, num_cards, trump[0], led, win_power, bids[0, seat] > won[0, seat],
                        trick_size[0] == n - 1,
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
