"""The heuristic bot for thousands of games at once: :class:`BatchedHeuristic`.

``BatchedHeuristic(rules).act(engine)`` returns, for every game of a
:class:`~blackout_env.batched.BatchedBlackout`, the action that
:class:`~blackout_baselines.heuristic.HeuristicBot` would take from the acting
seat's view, read from the engine's arrays instead of one
:class:`~blackout_env.game.view.PlayerView` per game. The decisions are identical,
not approximately equal: every probability of the heuristic's model (see
:mod:`blackout_baselines.heuristic`) is computed with the same float64
operations in the same order, as array operations over the games. Sums that
the heuristic accumulates one term at a time are accumulated one term at a time
here too (never ``np.sum``, whose pairwise order rounds differently), and
powers come from Python's own ``**`` through lookup tables, since numpy's
``power`` may use a different ``pow`` than the C library's.

Games are grouped by the number of cards the acting seat holds, so every array
in a group has exact sizes. Every decision is computed here, one-card hands
(the exact one-card model) included; a play with one legal card takes it, as
the heuristic does.
"""

from __future__ import annotations

from functools import lru_cache
from math import comb
from typing import Any

import numpy as np

from blackout_env.game.cards import NUM_STANDARD_CARDS
from blackout_env.game.rules import Rules
from blackout_env.game.rules_logic import CANNOT_WIN, bid_range, card_powers, suit_led_after

from . import _heuristic_core as _h

__all__ = ["BatchedHeuristic"]

_MAX_EXPONENT = 15  # counts of unseen cards of one suit (at most 13) and of jokers (2)
_NONE = -1
_BEATS_CARDS = NUM_STANDARD_CARDS + 2  # every card, jokers included


def _bits_to_bool(bits: np.ndarray, width: int) -> np.ndarray:
    """uint64 card sets (any shape) -> bool array with a last axis of ``width`` cards (bit c = card c)."""
    flat = np.ascontiguousarray(bits, dtype=np.uint64).reshape(-1)
    unpacked = np.unpackbits(flat.view(np.uint8).reshape(-1, 8), axis=1, count=width, bitorder="little")
    return unpacked.reshape(*bits.shape, width).view(bool)


class _BinomialRows:
    """``heuristic._binomial(count, p)`` for every count 0..13, by Python's own floats, cached per ``p``.

    ``rows(p)`` has shape ``p.shape + (14, 14)``: entry ``[count, x]`` is the chance of ``x``
    successes in ``count`` trials (0.0 for ``x > count``).
    """

    def __init__(self) -> None:
        self._rows: dict[float, list[list[float]]] = {}

    def rows(self, base: np.ndarray) -> np.ndarray:
        unique, inverse = np.unique(base, return_inverse=True)
        cache = self._rows
        if len(cache) > 100_000:
            cache.clear()
        table = []
        for value in unique.tolist():
            row = cache.get(value)
            if row is None:
                row = cache[value] = [_h._binomial(count, value) + [0.0] * (13 - count) for count in range(14)]
            table.append(row)
        return np.array(table, dtype=np.float64).reshape(-1, 14, 14)[inverse.reshape(base.shape)]


@lru_cache(maxsize=8)
def _short_table(max_slots: int, places: int) -> np.ndarray:
    """``[slots, places, m, k]``: the heuristic's chance that a seat holding ``slots`` of ``places``
    holds at most ``k`` of ``m`` unseen cards of a suit (``_Table._no_ruff_by_round``'s running
    sums, computed by the same Python code; ``k > m`` repeats ``k = m``)."""
    table = np.zeros((max_slots, places, 14, 14))
    for s in range(max_slots):
        for pl in range(places):
            p = s / pl if pl else 0.0
            for m in range(14):
                total, short = 0, []
                for y in range(m + 1):
                    total += comb(m, y) * p**y * (1 - p) ** (m - y)
                    short.append(total)
                table[s, pl, m] = short + [short[-1]] * (13 - m)
    table.flags.writeable = False
    return table


@lru_cache(maxsize=4)
def _beats_table(num_cards: int) -> np.ndarray:
    """``[trump + 1, led + 1, best, card]``: :func:`blackout_baselines._heuristic_core._beats`, asked once per case.

    Built from the heuristic's own function, so the trick-power fact stays in one place.
    """
    table = np.zeros((5, 5, num_cards, num_cards), dtype=bool)
    for trump in range(-1, 4):
        for led in range(-1, 4):
            for best in range(num_cards):
                table[trump + 1, led + 1, best] = [
                    _h._beats(card, best, None if led < 0 else led, None if trump < 0 else trump)
                    for card in range(num_cards)
                ]
    table.flags.writeable = False
    return table


def _beats(card: np.ndarray, best: np.ndarray, led: np.ndarray, trump: np.ndarray) -> np.ndarray:
    """:func:`blackout_baselines._heuristic_core._beats` on arrays (broadcast; NONE = -1 for no led suit / no trump)."""
    table = _beats_table(_BEATS_CARDS)
    return table[np.asarray(trump) + 1, np.asarray(led) + 1, best, card]


@lru_cache(maxsize=1)
def _power_table() -> np.ndarray:
    """``[trump + 1, led + 1, card]``: :func:`~blackout_env.game.rules_logic.card_powers` (index 0: none)."""
    suits = (None, 0, 1, 2, 3)
    return np.array([[card_powers(led, trump) for led in suits] for trump in suits], dtype=np.int64)


@lru_cache(maxsize=1)
def _lead_suits() -> np.ndarray:
    """``[card]``: the led suit once ``card`` leads a trick (:func:`~blackout_env.game.rules_logic.suit_led_after`; a joker: none)."""
    return np.array([_NONE if (s := suit_led_after(None, c)) is None else s for c in range(_BEATS_CARDS)], dtype=np.int64)


class _State:
    """What the acting seat of each game may know, as arrays: the heuristic's ``_Table`` for many games."""

    def __init__(self, owner: BatchedHeuristic, engine: Any, g: np.ndarray) -> None:
        rules = owner.rules
        n, C = rules.num_players, rules.num_cards
        self.g = g
        G = len(g)
        me = engine.current_player[g].astype(np.int64)
        self.me = me
        self.hand_size = engine.hand_size[g].astype(np.int64)
        self.trump = engine.trump[g].astype(np.int64)
        self.phase = engine.phase[g]
        self.bids = engine.bids[g].astype(np.int64)
        self.tricks_won = engine.tricks_won[g].astype(np.int64)
        self.trick_cards = engine.trick_cards[g].astype(np.int64)
        self.leader = engine.leader[g].astype(np.int64)
        self.led_suit = engine.led_suit[g].astype(np.int64)
        rows = np.arange(G)
        self.hand = _bits_to_bool(engine.hands[g, me], C)
        self.legal = _bits_to_bool(engine.legal_cards[g], C)
        self.forbidden = engine.forbidden_bid[g].astype(np.int64)
        played = _bits_to_bool(engine.played[g], C)  # (G, n, C)
        known = self.hand | played.any(axis=1)
        turned = engine.turned_card[g].astype(np.int64)
        has_turned = turned >= 0
        known[rows[has_turned], turned[has_turned]] = True
        unseen = ~known
        unseen[:, rules.deck_size :] = False  # a one-joker deck has no card 53 (the card actions still go to 53)
        self.unseen_ranks = unseen[:, :NUM_STANDARD_CARDS].reshape(G, 4, 13)
        self.unseen_count = self.unseen_ranks.sum(axis=2)  # m per suit
        self.jokers = unseen[:, NUM_STANDARD_CARDS:].sum(axis=1)
        self.pool_size = unseen.sum(axis=1)
        self.unseen = unseen
        # unseen cards of each suit ranked above each rank: higher_unseen(suit, rank)
        above = np.cumsum(self.unseen_ranks[:, :, ::-1], axis=2)[:, :, ::-1]
        self.higher_unseen = np.concatenate([above[:, :, 1:], np.zeros((G, 4, 1), dtype=above.dtype)], axis=2)
        slots = self.hand_size[:, None] - played.sum(axis=2)  # cards_left per seat
        is_opp = np.arange(n)[None, :] != me[:, None]
        self.is_opp = is_opp
        voids = engine.voids[g]
        void = np.zeros((G, n, 5), dtype=bool)
        for x in range(4):
            void[:, :, x] = (voids >> x) & 1
        self.void = void
        undealt = np.maximum(0, self.pool_size - np.where(is_opp, slots, 0).sum(axis=1))
        eligible = is_opp[:, :, None] & ~void
        places = np.where(eligible, slots[:, :, None], 0).sum(axis=1) + undealt[:, None]  # (G, 5)
        # hold[s][x] is slots / places when seat s may hold suit x (and places > 0), else 0.0:
        # the (slots, places) pair indexes tables built with the heuristic's own Python floats.
        ok = eligible & (places[:, None, :] > 0)
        self.slot_key = np.where(ok, slots[:, :, None], 0)
        self.place_key = np.where(ok, places[:, None, :], 0)
        self.hold = owner.hold_table[self.slot_key, self.place_key]  # (G, n, 5)
        total = np.zeros((G, 5))
        for s in range(n):  # sum() over the opponents in seat order; our own seat adds 0.0
            total = total + self.hold[:, s, :]
        self.any_hold = np.minimum(1.0, total)
        self.owner = owner
        self._no_ruff = None

    def no_ruff(self) -> np.ndarray:
        """``_Table.no_ruff`` of every side suit and round: ``(G, 4, 14)``, index min(m, round - 1)."""
        if self._no_ruff is not None:
            return self._no_ruff
        owner = self.owner
        G = len(self.g)
        n = self.is_opp.shape[1]
        trump = np.maximum(self.trump, 0)
        rows = np.arange(G)
        m_trump = self.unseen_count[rows, trump]
        by_round = np.ones((G, 4, 14))
        m = self.unseen_count
        for seat in range(n):
            opp = self.is_opp[:, seat]
            sk, pk = self.slot_key[:, seat, :4], self.place_key[:, seat, :4]  # (G, 4)
            short = owner.short_table[sk, pk, m]  # (G, 4, 14)
            short = np.where(self.void[:, seat, :4, None], 1.0, short)
            trump_void = self.void[rows, seat, trump]
            holds_trump = 1.0 - owner.miss_table[
                self.slot_key[rows, seat, trump], self.place_key[rows, seat, trump], m_trump
            ]
            ruffers = np.where(trump_void | (m_trump <= 0), 0.0, holds_trump)
            factor = 1.0 - _h._RUFF_WILLINGNESS * short * ruffers[:, None, None]
            by_round = np.where(opp[:, None, None], by_round * factor, by_round)
        self._no_ruff = by_round
        return by_round


class BatchedHeuristic:
    """:class:`~blackout_baselines.heuristic.HeuristicBot`'s decisions for many games of a batched engine at once.

    Args:
        rules: the engine's rules (a :class:`Rules`, a preset name or a YAML path).

    ``act(engine, games=None)`` returns an int64 array: the action of the acting
    seat in each game (or in each game of ``games``), equal to
    ``HeuristicBot().act(engine.view(game, engine.current_player[game]))``.
    """

    name = "heuristic"

    def __init__(self, rules: Rules | str | Any) -> None:
        self.rules = rules = Rules.resolve(rules)
        self._binomials = _BinomialRows()
        max_slots = rules.max_bid + 1
        places = rules.deck_size + 1
        E = _MAX_EXPONENT + 1
        hold = np.zeros((max_slots, places))
        miss = np.zeros((max_slots, places, E))
        for s in range(max_slots):
            for p in range(places):
                h = s / p if p else 0.0
                hold[s, p] = h
                miss[s, p] = [(1.0 - h) ** k for k in range(E)]
        self.hold_table, self.miss_table = hold, miss
        self.short_table = _short_table(max_slots, places)
        self.decay_table = np.array([_h._GUARD_DECAY**k for k in range(14)])
        self.score_table = np.array(
            [[rules.hand_score(bid, won) for won in range(rules.max_bid + 1)] for bid in range(rules.max_bid + 1)],
            dtype=np.float64,
        )

    # ----------------------------------------------------------------- public
    def act(self, engine: Any, games: Any = None) -> np.ndarray:
        """The heuristic's action for the acting seat of every game (or of ``games``)."""
        if engine.rules != self.rules:
            raise ValueError("BatchedHeuristic.act: the engine's rules differ from the rules this bot was built for")
        g = np.arange(engine.num_envs) if games is None else np.asarray(games, dtype=np.int64).reshape(-1)
        actions = np.zeros(len(g), dtype=np.int64)
        if not len(g):
            return actions
        C = self.rules.num_cards
        bidding = engine.phase[g] == 0
        legal_cards = engine.legal_cards[g]
        # one legal card: play it (the heuristic does the same without computing anything)
        single = ~bidding & ((legal_cards & (legal_cards - np.uint64(1))) == 0)
        if single.any():
            bits = legal_cards[single]
            actions[single] = np.log2(bits.astype(np.float64)).astype(np.int64)
        rest = ~single
        if rest.any():
            state = _State(self, engine, g[rest])
            out = np.zeros(int(rest.sum()), dtype=np.int64)
            count = state.hand.sum(axis=1)
            bid_rows = state.phase == 0
            for size in np.unique(count).tolist():
                in_group = count == size
                for is_bid in (True, False):
                    rows = np.flatnonzero(in_group & (bid_rows == is_bid))
                    if not len(rows):
                        continue
                    if is_bid:
                        out[rows] = C + self._bids(state, rows, size)
                    else:
                        out[rows] = self._plays(state, rows, size)
            actions[rest] = out
        return actions

    # ---------------------------------------------------------------- the model
    def _cards(self, state: _State, rows: np.ndarray, size: int) -> np.ndarray:
        """The hand of each game in ``rows``, ascending: ``(len(rows), size)``."""
        return np.nonzero(state.hand[rows])[1].reshape(len(rows), size)

    def _future(self, state: _State, rows: np.ndarray, cards: np.ndarray, adjust: np.ndarray) -> np.ndarray:
        """:func:`heuristic._future_chances` of the cards ``(R, L)`` in games ``rows``."""
        R, L = cards.shape
        r = np.arange(R)[:, None]
        trump = state.trump[rows][:, None]
        joker = cards >= NUM_STANDARD_CARDS
        suit = np.where(joker, 0, cards // 13)
        rank = cards % 13
        same = (suit[:, :, None] == suit[:, None, :]) & ~joker[:, :, None] & ~joker[:, None, :]
        guards = (same & (rank[:, None, :] < rank[:, :, None])).sum(axis=2)
        mine_higher = (same & (rank[:, None, :] > rank[:, :, None])).sum(axis=2)
        higher = state.higher_unseen[rows[:, None], suit, rank]
        any_hold = state.any_hold[rows]  # (R, 5)
        jokers = state.jokers[rows][:, None]
        any_joker = any_hold[:, 4:5]
        joker_threat = np.where(jokers > 0, 1.0 - any_joker * jokers * 0.5, 1.0)
        side = (trump >= 0) & (suit != trump)
        no_ruff = state.no_ruff()[rows] if bool(side.any()) else None
        m = state.unseen_count[rows[:, None], suit]
        x = np.arange(int(higher.max(initial=0)) + 1)
        X = len(x)
        mass = self._binomials.rows(any_hold[:, :4])[:, :, :, :X][r, suit, higher]  # (R, L, X)
        valid = (x <= higher[:, :, None]) & ~(mass < 1e-9)
        below = x <= guards[:, :, None]
        top = np.where(below, 1.0, self.decay_table[np.clip(x - guards[:, :, None], 0, 13)])
        if no_ruff is not None:
            index = np.minimum(np.minimum(m[:, :, None], mine_higher[:, :, None] + x), 13)
            ruffed = top * no_ruff[r[:, :, None], suit[:, :, None], index]
            top = np.where(side[:, :, None], ruffed, top)
        # chance += mass * top over x in order, skipping the negligible masses (adding 0.0 changes nothing)
        chance = np.add.accumulate(np.where(valid, mass * top, 0.0), axis=2)[:, :, -1]
        chance = chance * joker_threat
        chance = np.where(chance < 0.95, np.minimum(0.95, chance * adjust[:, None]), chance)
        chance = np.where(joker, 1.0 - 0.25 * any_joker * jokers, chance)
        # ruffing tricks of short side suits, credited to the lowest trumps
        own_trump = ~joker & (suit == trump)
        ruffing = (trump[:, 0] >= 0) & (state.hand_size[rows] > 1) & own_trump.any(axis=1)
        if ruffing.any():
            ruff = np.zeros(R)
            own_count = np.stack([((suit == s) & ~joker).sum(axis=1) for s in range(4)], axis=1)
            unseen_count = state.unseen_count[rows]
            for s in range(4):
                counts = (trump[:, 0] != s) & (unseen_count[:, s] > 0)
                ruff = np.where(counts & (own_count[:, s] == 0), ruff + _h._VOID_RUFF_VALUE, ruff)
                ruff = np.where(counts & (own_count[:, s] == 1), ruff + _h._SINGLETON_RUFF_VALUE, ruff)
            for i in range(L):  # the hand is ascending: trumps in rank order
                apply = ruffing & own_trump[:, i] & (ruff > 0)
                extra = np.minimum(ruff, 0.85)
                chance[:, i] = np.where(apply, 1.0 - (1.0 - chance[:, i]) * (1.0 - extra), chance[:, i])
                ruff = np.where(apply, ruff - extra, ruff)
        return chance

    @staticmethod
    def _distribution(chances: np.ndarray) -> np.ndarray:
        """:func:`heuristic.trick_distribution` over the last axis (cards in order): ``(..., L + 1)``."""
        L = chances.shape[-1]
        dist = np.zeros((*chances.shape[:-1], L + 1))
        dist[..., 0] = 1.0
        for i in range(L):
            p = chances[..., i : i + 1]
            q = 1.0 - p
            new = dist * q
            new[..., 1:] += dist[..., :-1] * p
            dist = new
        return dist

    def _bids(self, state: _State, rows: np.ndarray, size: int) -> np.ndarray:
        """:meth:`HeuristicBot.suggest_bid` for games ``rows`` whose hands hold ``size`` cards."""
        if size == 1:
            return self._best_bid(state, rows, size, self._one_card_chance(state, rows)[:, None])
        n = self.rules.num_players
        me = state.me[rows]
        bids = state.bids[rows]
        hand_size = state.hand_size[rows]
        others = (np.arange(n)[None, :] != me[:, None]) & (bids >= 0)
        earlier = others.sum(axis=1)
        total = np.where(others, bids, 0).sum(axis=1)
        share = (hand_size * earlier) / n
        excess = (total - share) / hand_size
        adjust = np.minimum(1.25, np.maximum(0.6, 1.0 - _h._BID_SHRINK * excess))
        adjust = np.where((earlier == 0) | (hand_size <= 1), 1.0, adjust)
        cards = self._cards(state, rows, size)
        return self._best_bid(state, rows, size, self._future(state, rows, cards, adjust))

    def _best_bid(self, state: _State, rows: np.ndarray, size: int, chances: np.ndarray) -> np.ndarray:
        """The permitted bid with the best expected score (ties: the lower) from the cards' chances."""
        R = len(rows)
        dist = self._distribution(chances)  # (R, size + 1)
        won = state.tricks_won[rows, state.me[rows]]
        bids = bid_range(size)
        values = np.zeros((R, len(bids)))
        for bid in bids:
            value = np.zeros(R)
            for t in range(size + 1):  # tricks still to take
                value = value + dist[:, t] * self.score_table[bid, won + t]
            values[:, bid] = value
        permitted = np.array(bids)[None, :] != state.forbidden[rows][:, None]
        best = np.argmax(permitted, axis=1)
        best_value = values[np.arange(R), best]
        for bid in bids:
            better = permitted[:, bid] & (values[:, bid] > best_value + 1e-12)
            best = np.where(better, bid, best)
            best_value = np.where(better, values[:, bid], best_value)
        return best

    def _one_card_chance(self, state: _State, rows: np.ndarray) -> np.ndarray:
        """:func:`heuristic.one_card_win_probability` of the one card held, before the trick starts."""
        n = self.rules.num_players
        C = self.rules.num_cards
        R = len(rows)
        r = np.arange(R)[:, None]
        card = np.nonzero(state.hand[rows])[1]
        trump = state.trump[rows]
        pool = state.unseen[rows]  # (R, C)
        pool_size = state.pool_size[rows]
        pool_jokers = state.jokers[rows]
        before = (state.me[rows] - state.leader[rows]) % n  # seats that play first
        after = n - before - 1
        card_joker = card >= NUM_STANDARD_CARDS
        own_suit = np.where(card_joker, _NONE, card // 13)
        c = np.arange(C)[None, :]
        # unseen cards that beat ours when suit `led` was led: [led + 1] (index 0: none led)
        beaters = np.stack(
            [(pool & _beats(c, card[:, None], np.full((R, 1), led), trump[:, None])).sum(axis=1) for led in range(-1, 4)],
            axis=1,
        )

        def none_beat(after_beaters: np.ndarray, excluded: bool) -> np.ndarray:
            # no other seat's card, drawn from the pool without replacement, beats ours
            before_beaters = after_beaters + np.where(card_joker, pool_jokers, 0)[:, None] * 1
            size = pool_size[:, None] - excluded
            first = before[:, None] - excluded
            chance = np.ones(after_beaters.shape)
            for j in range(n - 1):
                factor = np.maximum(0, size - before_beaters - j) / (size - j)
                chance = np.where(j < first, chance * factor, chance)
            size = size - first
            for j in range(n - 1):
                factor = np.maximum(0, size - after_beaters - j) / (size - j)
                chance = np.where(j < after[:, None], chance * factor, chance)
            return chance

        leading = none_beat(beaters[r, own_suit[:, None] + 1], False)[:, 0]
        # a later seat averages over the card led, in the pool's order
        lead_suit = _lead_suits()[c]
        counts = pool & _beats(card[:, None], c, lead_suit, trump[:, None])
        led = np.where(lead_suit >= 0, lead_suit, own_suit[:, None])
        lead_beats = _beats(c, card[:, None], led, trump[:, None])  # the led card is not in the other hands
        chance = none_beat(beaters[r, led + 1] - lead_beats, True)
        total = np.zeros(R)
        for lead in range(C):
            total = np.where(counts[:, lead], total + chance[:, lead], total)
        return np.where(before == 0, leading, total / pool_size)

    def _trick_chance(self, state: _State, rows: np.ndarray, cards: np.ndarray) -> np.ndarray:
        """:func:`heuristic._trick_chance` of each card ``(R, L)`` played now in games ``rows``."""
        n = self.rules.num_players
        R, L = cards.shape
        r = np.arange(R)[:, None]
        trump = state.trump[rows][:, None]
        trick_cards = state.trick_cards[rows]
        me = state.me[rows]
        # the led suit (the core's), and a card wins the trick so far when its power is above the highest in
        # the trick (the winner's, rules_logic.trick_winner; before the first card, below every power)
        led = state.led_suit[rows]
        powers = _power_table()[trump[:, 0] + 1, led + 1]  # (R, cards)
        win_power = np.where(trick_cards >= 0, powers[r, np.maximum(trick_cards, 0)], CANNOT_WIN - 1).max(axis=1)
        can_win = powers[r, cards] > win_power[:, None]
        joker = cards >= NUM_STANDARD_CARDS
        suit = np.where(joker, 0, cards // 13)
        rank = cards % 13
        led = np.where(led[:, None] >= 0, led[:, None], suit)
        jokers = state.jokers[rows][:, None]
        g = rows[:, None]  # rows of the state's arrays
        m_trump = state.unseen_count[rows, np.maximum(trump[:, 0], 0)][:, None]
        m_suit = state.unseen_count[g, suit]
        bids = state.bids[rows]
        won = state.tricks_won[rows]
        tricks_left = state.hand_size[rows] - won.sum(axis=1)
        higher_own = state.higher_unseen[g, suit, rank]
        higher_trump = state.higher_unseen[g, np.maximum(trump, 0), rank]
        follows = suit == led
        chance = np.ones((R, L))
        for i in range(1, n):
            seat = (me + i) % n
            later = trick_cards[np.arange(R), seat] < 0
            keys_s = state.slot_key[rows, seat]  # (R, 5)
            keys_p = state.place_key[rows, seat]
            void = state.void[rows, seat]

            trump_x = np.maximum(trump, 0)
            miss = self.miss_table

            def holds_some(x: Any, count: np.ndarray) -> np.ndarray:  # _Table.p_holds_some
                value = 1.0 - miss[keys_s[r, x], keys_p[r, x], np.clip(count, 0, _MAX_EXPONENT)]  # noqa: B023
                return np.where(count <= 0, 0.0, value)

            def p_void(x: np.ndarray, count: np.ndarray) -> np.ndarray:  # _Table.p_void
                value = miss[keys_s[r, x], keys_p[r, x], np.clip(count, 0, _MAX_EXPONENT)]  # noqa: B023
                return np.where(void[r, x], 1.0, value)  # noqa: B023

            follow_beat = holds_some(suit, higher_own)
            side = (trump >= 0) & (suit != trump)
            follow_beat = np.where(
                side, follow_beat + p_void(suit, m_suit) * holds_some(trump_x, m_trump), follow_beat
            )
            led_count = state.unseen_count[g, led]
            ruff_beat = p_void(led, led_count) * holds_some(trump_x, higher_trump)
            beat = np.where(follows, follow_beat, ruff_beat)
            beat = np.where(jokers > 0, beat + holds_some(4, jokers), beat)
            bid = bids[np.arange(R), seat][:, None]
            taken = won[np.arange(R), seat][:, None]
            needs = (bid >= 0) & (taken < bid) & (bid <= taken + tricks_left[:, None])
            willing = np.where(needs, _h._BEAT_WILLINGNESS_NEEDING, _h._BEAT_WILLINGNESS_MADE)
            beat = np.minimum(1.0, beat) * willing
            chance = np.where(later[:, None], chance * (1.0 - beat), chance)
        chance = np.where(joker, 1.0, chance)
        return np.where(can_win, chance, 0.0)

    def _plays(self, state: _State, rows: np.ndarray, size: int) -> np.ndarray:
        """:meth:`HeuristicBot.choose_card` for games ``rows`` whose acting seats hold ``size`` (> 1) cards."""
        R = len(rows)
        r = np.arange(R)[:, None]
        cards = self._cards(state, rows, size)
        future = self._future(state, rows, cards, np.ones(R))
        # Only the legal cards are valued: column k of (R, J) is the k-th legal card of the hand (padded
        # with the last one, whose value is then computed twice and never chosen over the first).
        legal = np.take_along_axis(state.legal[rows], cards, axis=1)  # (R, L)
        count = legal.sum(axis=1)
        J = int(count.max())
        order = np.argsort(~legal, axis=1, kind="stable")[:, :J]  # legal positions first, in hand order
        column_ok = np.arange(J)[None, :] < count[:, None]
        position = np.where(column_ok, order, order[r, count[:, None] - 1])
        chosen = cards[r, position]  # (R, J)
        # rest[:, k]: the trick distribution of the other cards, in hand order
        rest = np.zeros((R, J, size))
        rest[:, :, 0] = 1.0
        for i in range(size):
            p = future[:, i][:, None, None]
            new = rest * (1.0 - p)
            new[:, :, 1:] += rest[:, :, :-1] * p
            skip = position == i
            new[skip] = rest[skip]
            rest = new
        me = state.me[rows]
        bid = state.bids[rows, me]
        won = state.tricks_won[rows, me]
        points = self.score_table[bid[:, None], np.minimum(won[:, None] + np.arange(size + 1), self.rules.max_bid)]
        if_lose = rest[:, :, 0] * points[:, 0:1]
        if_win = rest[:, :, 0] * points[:, 1:2]
        for t in range(1, size):  # sum() over t, one term at a time
            if_lose = if_lose + rest[:, :, t] * points[:, t : t + 1]
            if_win = if_win + rest[:, :, t] * points[:, t + 1 : t + 2]
        p = self._trick_chance(state, rows, chosen)
        values = p * if_win + (1.0 - p) * if_lose
        return chosen[np.arange(R), self._best(values, column_ok, chosen, state.trump[rows])]

    @staticmethod
    def _best(values: np.ndarray, ok: np.ndarray, cards: np.ndarray, trump: np.ndarray) -> np.ndarray:
        """The column the heuristic picks: highest ``round(value, 9)``, then the weakest card, then the first.

        A value more than 2e-9 below the best rounds lower; when the near-best values are all
        equal, the weakest of them wins; otherwise Python's own ``round`` decides.
        """
        masked = np.where(ok, values, -np.inf)
        top = masked.max(axis=1)
        near = ok & (masked >= top[:, None] - 2e-9)
        joker = cards >= NUM_STANDARD_CARDS
        strength = np.where(joker, 200 + cards, np.where(cards // 13 == trump[:, None], 100, 0) + cards % 13)
        choice = np.argmin(np.where(near, strength, 1 << 20), axis=1)  # first of the weakest
        unequal = np.flatnonzero((near & (masked != top[:, None])).any(axis=1))
        for k in unequal.tolist():
            t = int(trump[k])
            columns = np.flatnonzero(near[k]).tolist()
            choice[k] = max(
                columns,
                key=lambda c: (round(float(values[k, c]), 9), -_h._strength(int(cards[k, c]), None if t < 0 else t)),
            )
        return choice
