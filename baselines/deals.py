"""Hidden cards: drawing the unseen cards consistently with a view, and the deal that leads to it.

Every bot that searches over the cards it cannot see draws them here and rebuilds the
hand from them here:

- :class:`DealSampler` (and :func:`sample_deal`, one deal): many deals at a time,
  uniform among the consistent ones by rejection of shuffles, with a sequential
  sampler for the rest when voids make rejection rare (IS-MCTS, ``ppo+search``'s
  belief, the OpenSpiel bridge);
- :func:`sample_hands`: one deal, card by card, each card into a place that may hold
  it with Hall's condition checked for the rest, so it never dead-ends (close to
  uniform; the sampler's last resort, and the draw of ``search`` and ``ppo+rollout``,
  whose decisions were measured with it);
- :func:`initial_hands` and :func:`deal_deck`: the cards each seat was dealt and a
  deck order that deals them, from a view and the cards each seat holds now (the
  builders of a determinized hand: the engine game of ``search``, the batched games
  of ``ppo+rollout``, the OpenSpiel state; IS-MCTS writes its compiled state from
  the view directly, :meth:`~blackout_baselines.ismcts.SimState.from_view`).

A sample consists of the cards every seat holds now: the viewer keeps its hand;
each other seat gets as many unseen cards as it still holds, never a card of a suit
it has shown void in, plus any card shown to all (the dealer's shown card); the
other unseen cards are out of play.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from blackout_env.game.cards import NUM_STANDARD_CARDS
from blackout_env.game.engine import deck_order
from blackout_env.game.rules import Rules
from blackout_env.game.view import PlayerView

__all__ = ["DealSampler", "sample_deal", "sample_hands", "initial_hands", "deal_deck"]

_GROUPS = 5  # the four suits and the jokers


def _group(card: int) -> int:
    return 4 if card >= NUM_STANDARD_CARDS else card // 13


def _feasible(counts: Sequence[int], capacity: Sequence[int], eligible: Sequence[Sequence[bool]]) -> bool:
    """Hall's condition: every set of card groups fits in the places that may hold them."""
    groups = [g for g in range(_GROUPS) if counts[g]]
    for mask in range(1, 1 << len(groups)):
        chosen = [groups[i] for i in range(len(groups)) if mask >> i & 1]
        need = sum(counts[g] for g in chosen)
        room = sum(cap for h, cap in enumerate(capacity) if any(eligible[h][g] for g in chosen))
        if need > room:
            return False
    return True


def sample_hands(view: PlayerView, rng: np.random.Generator) -> list[list[int]]:
    """The cards every seat holds now, sampled consistently with ``view``.

    The player keeps its own hand; each other seat gets as many unseen cards as
    it holds, none of a suit it is known to be void in, plus any card shown to
    all (the dealer's last card under ``no_card_trump: dealer_last``). Cards are
    placed one by one into a random place that can hold them, checking with
    Hall's condition that the rest still fits, so a sample always exists.
    """
    n = view.num_players
    shown = view.shown_cards
    shown_set = {c for cards in shown for c in cards}
    pool = [c for c in view.unseen_cards if c not in shown_set]
    hands: list[list[int]] = [list(shown[s]) for s in range(n)]
    hands[view.player] = list(view.hand)
    seats = [s for s in range(n) if s != view.player]
    capacity = [view.cards_left(s) - len(shown[s]) for s in seats]
    capacity.append(len(pool) - sum(capacity))  # the cards out of play
    if capacity[-1] < 0 or any(c < 0 for c in capacity):
        raise ValueError("sample_hands: the view's card counts are inconsistent")
    eligible = [[g == 4 or g not in view.voids[s] for g in range(_GROUPS)] for s in seats]
    eligible.append([True] * _GROUPS)
    places: list[list[int]] = [[] for _ in capacity]
    order = [pool[i] for i in rng.permutation(len(pool))]
    constrained = any(not all(e) for e in eligible[:-1])
    if not constrained:
        start = 0
        for h, cap in enumerate(capacity):
            places[h] = order[start : start + cap]
            start += cap
    else:
        counts = [0] * _GROUPS
        for c in order:
            counts[_group(c)] += 1
        # Most constrained groups first, so that dead ends are rare and cheap to avoid.
        order.sort(key=lambda c: sum(e[_group(c)] for e in eligible))
        for card in order:
            g = _group(card)
            counts[g] -= 1
            options = [h for h in range(len(capacity)) if capacity[h] > 0 and eligible[h][g]]
            weights = np.array([capacity[h] for h in options], dtype=float)
            while True:
                pick = options[int(rng.choice(len(options), p=weights / weights.sum()))] if len(options) > 1 else options[0]
                capacity[pick] -= 1
                if len(options) == 1 or _feasible(counts, capacity, eligible):
                    break
                capacity[pick] += 1
                keep = [i for i, h in enumerate(options) if h != pick]
                options = [options[i] for i in keep]
                weights = weights[keep]
            places[pick].append(card)
    for seat, cards in zip(seats, places):
        hands[seat].extend(cards)
    return hands


def deal_deck(
    rules: Rules,
    dealer: int,
    hands: Sequence[Sequence[int]],
    turned_card: int | None = None,
    turned_card_held_by_dealer: bool = False,
) -> list[int]:
    """A deck order that deals ``hands`` (seat by seat) by the dealing protocol.

    ``d[k]`` goes to seat ``(dealer + 1 + k) % n`` for ``k < n * h``; the
    turned card, when given, goes to ``d[n * h]`` (or is the dealer's last card,
    ``d[n * h - 1]``, when held by the dealer); the other cards follow in order.
    """
    if len(hands) != rules.num_players:
        raise ValueError(f"deal_deck: expected {rules.num_players} hands, got {len(hands)}")
    ordered = [list(hand) for hand in hands]
    if turned_card_held_by_dealer and turned_card is not None:
        # The dealer's shown card is the last card dealt, so it goes last in the dealer's hand.
        ordered[dealer].remove(turned_card)
        ordered[dealer].append(turned_card)
        turned_card = None
    return deck_order(ordered, dealer, turned_card, jokers=rules.jokers)


def _mask(cards: Sequence[int]) -> int:
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


def _cards(mask: int) -> list[int]:
    cards = []
    while mask:
        low = mask & -mask
        cards.append(low.bit_length() - 1)
        mask ^= low
    return cards


class DealSampler:
    """Draws the cards every seat holds now, consistently with a view, many deals at a time.

    Each seat other than the viewer gets as many unseen cards as it still holds,
    never a card of a suit it has shown void in, plus any card shown to all (the
    dealer's shown card); the viewer keeps its hand; the other unseen cards are out
    of play. Deals are drawn uniformly among the consistent ones, by rejection of
    uniform shuffles (vectorized); when voids make that rare, the remainder comes
    from a sequential sampler (each constrained card goes to a place that may hold
    it, with chance proportional to the room left there; close to uniform), and
    from :func:`sample_hands` in the rare case that one
    dead-ends.
    """

    def __init__(self, view: PlayerView) -> None:
        self.view = view
        n = view.num_players
        me = view.player
        shown = view.shown_cards
        shown_set = {c for cards in shown for c in cards}
        self.pool_list = pool = [c for c in view.unseen_cards if c not in shown_set]
        self.pool = np.array(pool, dtype=np.int64)
        self.seats = seats = [s for s in range(n) if s != me]
        self.need = need = [view.cards_left(s) - len(shown[s]) for s in seats]
        out = len(pool) - sum(need)
        if out < 0 or any(k < 0 for k in need):
            raise ValueError("DealSampler: the view's card counts are inconsistent")
        self.fixed = [_mask(shown[s]) for s in range(n)]
        self.fixed[me] = _mask(view.hand)
        # places: the other seats in order, then "out of play"; eligible[place, group] (group 4: jokers)
        eligible = np.ones((len(seats) + 1, 5), dtype=bool)
        for place, seat in enumerate(seats):
            for suit in view.voids[seat]:
                eligible[place, suit] = False
        self.eligible = eligible
        self.constrained = not eligible.all()
        self.capacity = need + [out]
        # per unseen card, the places that may hold it (None: every place)
        homes = [None if eligible[:, g].all() else np.flatnonzero(eligible[:, g]).tolist() for g in range(5)]
        self.homes = [(card, homes[min(card // 13, 4)]) for card in pool]
        self.place_of_position = np.repeat(np.arange(len(seats) + 1), self.capacity)
        self.bounds = np.cumsum([0] + need)
        self.acceptance = 1.0

    def draw(self, count: int, np_rng: np.random.Generator, rng: random.Random) -> list[list[int]]:
        """``count`` deals, each a list of hand bitmasks by seat."""
        deals: list[list[int]] = []
        for _ in range(4):
            missing = count - len(deals)
            if missing <= 0:
                break
            batch = missing if not self.constrained else min(int(missing / max(self.acceptance, 0.01) * 1.3) + 8, 20000)
            deals.extend(self._shuffled(batch, np_rng)[:missing])
            if not self.constrained:
                break
        while len(deals) < count:
            deals.append(self._sequential(rng))
        return deals

    def _shuffled(self, batch: int, np_rng: np.random.Generator) -> list[list[int]]:
        cards = np_rng.permuted(np.broadcast_to(self.pool, (batch, len(self.pool))), axis=1)
        if self.constrained:
            groups = np.minimum(cards // 13, 4)
            ok = self.eligible[self.place_of_position, groups].all(axis=1)
            self.acceptance = 0.5 * self.acceptance + 0.5 * max(float(ok.mean()), 0.001)
            cards = cards[ok]
        bits = np.left_shift(np.uint64(1), cards.astype(np.uint64))
        # cards are distinct, so a sum of their bits is their union; seat i holds positions bounds[i]:bounds[i+1]
        sums = np.zeros((len(cards), len(self.pool) + 1), dtype=np.uint64)
        np.cumsum(bits, axis=1, out=sums[:, 1:])
        held = (sums[:, self.bounds[1:]] - sums[:, self.bounds[:-1]]).tolist()
        result = []
        for row in held:
            masks = self.fixed[:]
            for seat, mask in zip(self.seats, row):
                masks[seat] |= mask
            result.append(masks)
        return result

    def _sequential(self, rng: random.Random) -> list[int]:
        cards = self.homes
        for _ in range(10):
            room = self.capacity[:]
            held = [0] * len(room)
            free = []
            dead_end = False
            for card, home in cards:
                if home is None:
                    free.append(card)
                    continue
                options = [p for p in home if room[p]]
                total = sum(room[p] for p in options)
                if not total:
                    dead_end = True
                    break
                pick = rng.random() * total
                for place in options:
                    pick -= room[place]
                    if pick < 0:
                        break
                room[place] -= 1
                held[place] |= 1 << card
            if dead_end:
                continue
            rng.shuffle(free)
            start = 0
            for place, k in enumerate(room):
                held[place] |= _mask(free[start : start + k])
                start += k
            masks = self.fixed[:]
            for place, seat in enumerate(self.seats):
                masks[seat] |= held[place]
            return masks
        hands = sample_hands(self.view, np.random.default_rng(rng.getrandbits(63)))
        return [_mask(h) for h in hands]


def sample_deal(view: PlayerView, rng: random.Random, np_rng: np.random.Generator) -> list[list[int]]:
    """One deal drawn by :class:`DealSampler`: the cards every seat holds now, as sorted lists by seat."""
    masks = DealSampler(view).draw(1, np_rng, rng)[0]
    return [_cards(m) for m in masks]


def initial_hands(view: PlayerView, hands: Sequence[Sequence[int]]) -> list[list[int]]:
    """The cards each seat was dealt this hand, when seat ``s`` holds ``hands[s]`` now: those plus the cards it played."""
    return [list(hands[seat]) + list(view.played[seat]) for seat in range(view.num_players)]


