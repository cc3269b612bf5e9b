"""HeuristicBot: bids and plays by expected score from per-card win chances.

The model
---------
Everything the bot decides comes from one estimate: for each card, the chance
that it takes a trick. The estimate uses only the player's view: the cards it
cannot see (``unseen``: 52 or 54, less its own hand, the cards played and the
turned card), which seats are void in which suits, how many cards each seat
still holds, the bids and the tricks taken so far.

* **A card's chance to take a trick later** (used for bidding and for the rest
  of the hand). Let ``X`` be the number of unseen cards that outrank it in its
  suit (jokers included) that the other seats hold, binomially distributed with
  the chance that a given unseen card lies in another hand. A card is safe when
  ``X`` is at most its *guards*, the lower cards of its suit that the player can
  play first (so an ace is safe, a king needs one guard, a queen two); each
  missing guard divides the chance by five. A side-suit card must also survive
  being trumped in the round of its suit where it becomes master: an opponent
  ruffs when it holds fewer cards of the suit than that round and at least one
  trump (both from hypergeometric-like binomial estimates per seat, with known
  voids exact). Trumps, in addition, take tricks by ruffing: a void side suit
  is worth 0.1 of a trick and a singleton 0.05, credited to the lowest trumps
  (small, since the ruff risk above already favours the trump holder; these
  constants were tuned by duplicate-deal games against the previous version). Seats that already bid tell the rest: when the earlier bids exceed
  their share of the tricks, the uncertain chances shrink (and grow when they
  bid less), which is how the seat relative to the dealer enters.
* **One-card hands are computed exactly.** Each other seat holds one card drawn
  from the unseen ones. The leader's card of which ``k`` unseen cards beat it
  (higher cards of its suit; every trump when it is not a trump; jokers) wins
  with probability ``prod_{j=0}^{n-2} (u - k - j) / (u - j)`` with ``u`` unseen
  cards (50 with a turned card and 52 cards). A later seat sums the same
  product over every card the leader may lead.
* **The number of tricks** is the sum of independent per-card Bernoulli
  variables: its distribution comes from the Poisson-binomial recursion.
* **Bidding** chooses the bid with the highest expected score under the rules'
  ``hand_score`` (so every scoring house rule is respected); when the hook
  forbids it, the next best; ties go to the lower bid. In one-card hands this
  bids 1 exactly when ``EV(1) > EV(0)`` (with 10 + bid: when the chance exceeds
  10/21).
* **Play** scores each legal card by the expected hand score: the chance that
  it wins the current trick (it must beat the cards already played, then
  survive each later seat, which beats it if it holds a higher card of the led
  suit, or is void and holds trump, or holds a joker; a seat that still needs
  tricks is taken to beat it 70% of the time it can, one that has made its bid
  10%), combined with
  the trick distribution of the cards that remain. This reproduces the classic
  rules from one formula: while tricks are needed, win as cheaply as possible
  and cash established winners; once the bid is made, duck with the highest
  card that still loses and shed the dangerous high cards when someone else is
  winning; avoid leading a suit that a seat which can overtake is void in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from math import comb
from typing import TYPE_CHECKING

from blackout_env.agents.policies import Explanation, action_reasons
from blackout_env.game.cards import NUM_STANDARD_CARDS
from blackout_env.game.rules_logic import bid_range, led_suit_of, suit_led_after, trick_winner
from blackout_env.game.view import PlayerView

from ._heuristic_core import (
    _BEAT_WILLINGNESS_MADE,
    _BEAT_WILLINGNESS_NEEDING,
    _BID_SHRINK,
    _GUARD_DECAY,
    _RUFF_WILLINGNESS,
    _SINGLETON_RUFF_VALUE,
    _VOID_RUFF_VALUE,
    _beats,
    _binomial,
    _strength,
)
from .base import Bot

if TYPE_CHECKING:
    from blackout_env.game.rules import Rules

    from .heuristic_batch import BatchedHeuristic

__all__ = [
    "HeuristicBot",
    "trick_distribution",
    "expected_bid_scores",
    "one_card_win_probability",
    "card_win_probabilities",
]

_SUITS = (0, 1, 2, 3)


def trick_distribution(probabilities: Sequence[float]) -> list[float]:
    """The distribution of the number of tricks taken by independent cards (Poisson-binomial).

    ``result[t]`` is the chance of exactly ``t`` tricks when card ``i`` wins with
    probability ``probabilities[i]``.
    """
    dist = [1.0]
    for p in probabilities:
        q = 1.0 - p
        new = [0.0] * (len(dist) + 1)
        for t, mass in enumerate(dist):
            new[t] += mass * q
            new[t + 1] += mass * p
        dist = new
    return dist


def expected_bid_scores(view: PlayerView, distribution: Sequence[float]) -> list[float]:
    """Expected hand score of each bid 0..hand_size under the rules in force, for a trick distribution."""
    score = view.rules.hand_score
    won = view.tricks_won[view.player]
    return [
        sum(mass * score(bid, won + t) for t, mass in enumerate(distribution))
        for bid in bid_range(view.hand_size)
    ]


def _winning_card(trick: Sequence[tuple[int, int]], trump: int | None) -> tuple[int, int | None]:
    """The card winning a (partial) trick and the led suit."""
    winner = trick_winner(trick, trump)
    best = next(card for seat, card in trick if seat == winner)
    return best, led_suit_of(card for _, card in trick)


def one_card_win_probability(view: PlayerView, card: int) -> float:
    """The exact chance that ``card`` wins a one-card hand, every unseen card equally likely anywhere.

    The other seats each hold one of the ``u`` unseen cards. Played cards of the
    current trick are taken as they are. For the leader, with ``k`` unseen
    cards that beat ``card``, this is ``prod_{j=0}^{m-1} (u - k - j) / (u - j)``
    over the ``m`` seats still to play; a later seat averages that product over
    the card the leader leads.
    """
    n = view.num_players
    trump = view.trump
    pool = view.unseen_cards
    trick = view.current_trick
    order = [(view.leader + i) % n for i in range(n)]
    position = order.index(view.player)
    played = {seat for seat, _ in trick}
    before = [s for s in order[:position] if s not in played]
    after = len(order) - position - 1

    def none_beat(led: int | None, excluded: int | None) -> float:
        # Every other seat's card is drawn from the pool without replacement; none may beat ours.
        # Order matters only for jokers: the other joker beats ours only when played before it.
        after_beaters = sum(1 for c in pool if c != excluded and _beats(c, card, led, trump))
        before_beaters = after_beaters
        if card >= NUM_STANDARD_CARDS:
            before_beaters += sum(1 for c in pool if c != excluded and c >= NUM_STANDARD_CARDS)
        size = len(pool) - (excluded is not None)
        chance = 1.0
        for j in range(len(before) - (excluded is not None)):
            chance *= max(0, size - before_beaters - j) / (size - j)
        size -= len(before) - (excluded is not None)
        for j in range(after):
            chance *= max(0, size - after_beaters - j) / (size - j)
        return chance

    if trick:
        best, led = _winning_card(trick, trump)
        if not _beats(card, best, led, trump):
            return 0.0
        return none_beat(suit_led_after(led, card), None)
    if not before:
        return none_beat(suit_led_after(None, card), None)
    # The leader's card is unknown: average over every card it may lead.
    total = 0.0
    for lead in pool:
        led = suit_led_after(None, lead)
        if _beats(card, lead, led, trump):
            total += none_beat(suit_led_after(led, card), lead)
    return total / len(pool)


class _Table:
    """What the view says about where the unseen cards lie, as per-seat holding chances."""

    def __init__(self, view: PlayerView) -> None:
        self.view = view
        self.trump = view.trump
        n = view.num_players
        me = view.player
        self.opponents = [s for s in range(n) if s != me]
        pool = view.unseen_cards
        self.pool_size = len(pool)
        self.by_suit: list[list[int]] = [[], [], [], []]
        self.jokers = 0
        for c in pool:
            if c >= NUM_STANDARD_CARDS:
                self.jokers += 1
            else:
                self.by_suit[c // 13].append(c % 13)
        slots = {s: view.cards_left(s) for s in self.opponents}
        undealt = max(0, self.pool_size - sum(slots.values()))
        # Chance that seat s holds one given unseen card of suit x (index 4: a joker): the
        # card lies in one of the places that can hold it, each place equally likely: the
        # hand slots of the seats not known void in x, and the undealt cards.
        self.hold: dict[int, list[float]] = {s: [0.0] * 5 for s in self.opponents}
        for x in range(5):
            eligible = [s for s in self.opponents if x == 4 or x not in view.voids[s]]
            places = sum(slots[s] for s in eligible) + undealt
            for s in eligible:
                self.hold[s][x] = slots[s] / places if places else 0.0
        self._noruff: dict[int, list[float]] = {}

    def any_hold(self, x: int) -> float:
        """Chance that a given unseen card of suit ``x`` (4: joker) lies in another seat's hand."""
        return min(1.0, sum(self.hold[s][x] for s in self.opponents))

    def p_holds_some(self, seat: int, x: int, count: int) -> float:
        """Chance that ``seat`` holds at least one of ``count`` given unseen cards of suit ``x``."""
        if count <= 0:
            return 0.0
        return 1.0 - (1.0 - self.hold[seat][x]) ** count

    def p_void(self, seat: int, suit: int) -> float:
        if suit in self.view.voids[seat]:
            return 1.0
        return (1.0 - self.hold[seat][suit]) ** len(self.by_suit[suit])

    def higher_unseen(self, suit: int, rank: int) -> int:
        return sum(1 for r in self.by_suit[suit] if r > rank)

    def no_ruff(self, suit: int, round_of_suit: int) -> float:
        """Chance that nobody trumps the ``round_of_suit``-th round of a side suit."""
        by_round = self._noruff.get(suit)
        if by_round is None:
            by_round = self._noruff[suit] = self._no_ruff_by_round(suit)
        return by_round[min(len(by_round) - 1, round_of_suit - 1)]

    def _no_ruff_by_round(self, suit: int) -> list[float]:
        """:meth:`no_ruff` of every round of ``suit``: entry ``k`` is round ``k + 1`` (the last one also later rounds).

        An opponent ruffs round ``k + 1`` when it holds at most ``k`` of the ``m``
        unseen cards of the suit (binomial) and some trump; from round ``m + 1``
        on, every opponent is short.
        """
        trump = self.trump
        m = len(self.by_suit[suit])
        if trump is None and not self.jokers:
            return [1.0]
        seats = []  # (chance to hold at most k cards of the suit, for k = 0..m; chance to hold a trump)
        for seat in self.opponents:
            if suit in self.view.voids[seat]:
                short = [1.0] * (m + 1)
            else:
                p = self.hold[seat][suit]
                total, short = 0, []  # running sums: bit for bit sum() over y = 0..k
                for y in range(m + 1):
                    total += comb(m, y) * p**y * (1 - p) ** (m - y)
                    short.append(total)
            ruffers = 0.0
            if trump is not None and trump not in self.view.voids[seat]:
                ruffers = self.p_holds_some(seat, trump, len(self.by_suit[trump]))
            seats.append((short, ruffers))
        by_round = []
        for k in range(m + 1):
            chance = 1.0
            for short, ruffers in seats:
                chance *= 1.0 - _RUFF_WILLINGNESS * short[k] * ruffers
            by_round.append(chance)
        return by_round


def _future_chances(table: _Table, hand: Sequence[int], adjust: float = 1.0) -> dict[int, float]:
    """Each card's chance to take one of the tricks after the current one (see the module docstring)."""
    view = table.view
    trump = table.trump
    by_suit: list[list[int]] = [[], [], [], []]
    jokers_held = 0
    for c in hand:
        if c >= NUM_STANDARD_CARDS:
            jokers_held += 1
        else:
            by_suit[c // 13].append(c % 13)
    chances: dict[int, float] = {}
    for c in hand:
        if c >= NUM_STANDARD_CARDS:
            # Another joker played first to the same trick would beat it; rarely happens.
            chances[c] = 1.0 - 0.25 * table.any_hold(4) * table.jokers
            continue
        suit, rank = divmod(c, 13)
        guards = sum(1 for r in by_suit[suit] if r < rank)
        mine_higher = sum(1 for r in by_suit[suit] if r > rank)
        higher = table.higher_unseen(suit, rank)
        held = table.any_hold(suit)
        dist = _binomial(higher, held)
        joker_threat = 1.0 - table.any_hold(4) * table.jokers * 0.5 if table.jokers else 1.0
        side = trump is not None and suit != trump
        chance = 0.0
        for x, mass in enumerate(dist):
            if mass < 1e-9:
                continue
            top = 1.0 if x <= guards else _GUARD_DECAY ** (x - guards)
            if side:
                top *= table.no_ruff(suit, 1 + mine_higher + x)
            chance += mass * top
        chance *= joker_threat
        if chance < 0.95:
            chance = min(0.95, chance * adjust)
        chances[c] = chance
    if trump is not None and view.hand_size > 1 and by_suit[trump]:
        # Ruffing tricks from short side suits go to the lowest trumps not already winners.
        ruff = 0.0
        for suit in _SUITS:
            if suit == trump or len(table.by_suit[suit]) == 0:
                continue
            if not by_suit[suit]:
                ruff += _VOID_RUFF_VALUE
            elif len(by_suit[suit]) == 1:
                ruff += _SINGLETON_RUFF_VALUE
        for rank in sorted(by_suit[trump]):
            if ruff <= 0:
                break
            card = trump * 13 + rank
            extra = min(ruff, 0.85)
            chances[card] = 1.0 - (1.0 - chances[card]) * (1.0 - extra)
            ruff -= extra
    return chances


def _bid_adjustment(view: PlayerView) -> float:
    """Shrink (or grow) uncertain chances by how much the earlier bidders claimed."""
    earlier = [b for seat, b in enumerate(view.bids) if b is not None and seat != view.player]
    if not earlier or view.hand_size <= 1:
        return 1.0
    share = view.hand_size * len(earlier) / view.num_players
    excess = (sum(earlier) - share) / view.hand_size
    return min(1.25, max(0.6, 1.0 - _BID_SHRINK * excess))


def card_win_probabilities(view: PlayerView) -> dict[int, float]:
    """Each card in the player's hand: its estimated chance to take a trick this hand.

    One-card hands use :func:`one_card_win_probability`, exact; longer hands
    the model of the module docstring.
    """
    if view.hand_size == 1 and len(view.hand) == 1:
        return {c: one_card_win_probability(view, c) for c in view.hand}
    table = _Table(view)
    return _future_chances(table, view.hand, _bid_adjustment(view) if view.phase == "bid" else 1.0)


def _trick_chance(table: _Table, card: int) -> float:
    """The chance that ``card``, played now, wins the current trick."""
    view = table.view
    trump = table.trump
    trick = view.current_trick
    if trick:
        best, led = _winning_card(trick, trump)
        if not _beats(card, best, led, trump):
            return 0.0
    else:
        led = None
    if card >= NUM_STANDARD_CARDS:
        return 1.0  # no joker was played before it: the first joker wins
    suit, rank = divmod(card, 13)
    if led is None:
        led = suit
    n = view.num_players
    played_seats = {seat for seat, _ in trick}
    later = [(view.player + i) % n for i in range(1, n)]
    later = [s for s in later if s not in played_seats]
    chance = 1.0
    for seat in later:
        if suit == led:
            beat = table.p_holds_some(seat, suit, table.higher_unseen(suit, rank))
            if suit != trump and trump is not None:
                beat += table.p_void(seat, suit) * table.p_holds_some(seat, trump, len(table.by_suit[trump]))
        else:  # we trump a side suit: a seat overtrumps only when void in the led suit too
            beat = table.p_void(seat, led) * table.p_holds_some(seat, trump, table.higher_unseen(trump, rank))
        if table.jokers:
            beat += table.p_holds_some(seat, 4, table.jokers)
        bid = view.bids[seat]
        needs = bid is not None and view.tricks_won[seat] < bid <= view.tricks_won[seat] + view.tricks_left
        beat = min(1.0, beat) * (_BEAT_WILLINGNESS_NEEDING if needs else _BEAT_WILLINGNESS_MADE)
        chance *= 1.0 - beat
    return chance


class HeuristicBot(Bot):
    """Bids the expected-score-maximising number of tricks, then plays to make exactly that.

    Deterministic given the view (its generator is unused, kept for the common
    interface). See the module docstring for the model.
    """

    name = "heuristic"

    def act(self, view: PlayerView) -> int:
        legal = self._check_turn(view)
        if view.phase == "bid":
            return view.num_cards + self.suggest_bid(view)
        return self.choose_card(view, legal)

    def batched(self, rules: Rules) -> BatchedHeuristic | None:
        """This bot's decisions for many games of a batched engine at once (:class:`~blackout_env.agents.seating.Seat`).

        The same actions as :meth:`act` (``tests/test_heuristic_batch.py``); None for a subclass, whose
        choices the batched version would not follow.
        """
        if type(self) is not HeuristicBot:
            return None
        from .heuristic_batch import BatchedHeuristic  # (numpy and numba: imported when first asked for)

        return BatchedHeuristic(rules)

    def explain(self, view: PlayerView) -> Explanation:
        """The action :meth:`act` chooses and the expected hand score (points) of every legal action.

        A bid's value is :meth:`bid_values`' (the expected score of making that bid), a card's is
        :meth:`card_values`' (the expected score of the hand after playing it); the explanation's value
        is the chosen action's.
        """
        legal = self._check_turn(view)
        if view.phase == "bid":
            by_bid = self.bid_values(view)
            action = view.num_cards + self._best_bid(view, by_bid)
            values = {a: by_bid[a - view.num_cards] for a in legal}
            note = ("expected score of the hand (points) for each bid, from the heuristic's chance of each card "
                    "taking a trick; it bids the best one the rules permit (ties: the lower bid)")
        else:
            values = self.card_values(view, legal)
            action = self._best_card(view, legal, values)
            note = ("expected score of the hand (points) after each card, from its chance to take this trick "
                    "and the other cards' chances later; it plays the best (ties: the weakest card)")
        return Explanation(action, "heuristic", action_reasons(legal, values=values), values[action], note)

    # ----------------------------------------------------------------- bidding
    def bid_values(self, view: PlayerView) -> list[float]:
        """Expected hand score of each bid 0..hand_size from this view."""
        return expected_bid_scores(view, trick_distribution(list(card_win_probabilities(view).values())))

    def suggest_bid(self, view: PlayerView) -> int:
        """The bid this bot would make for the view's player: the permitted one with the best expected score.

        Works for any view in the bidding phase (a hint for front-ends); the bid
        the hook forbids is skipped once it is forbidden (``view.forbidden_bid``:
        on the dealer's turn, when every other seat has bid); ties go to the lower bid.
        """
        if view.phase != "bid":
            raise ValueError(f"suggest_bid: the hand is in the {view.phase!r} phase, not bidding")
        return self._best_bid(view, self.bid_values(view))

    @staticmethod
    def _best_bid(view: PlayerView, values: Sequence[float]) -> int:
        """The permitted bid with the best expected score in ``values`` (one per bid 0..hand_size); ties: the lower."""
        forbidden = view.forbidden_bid if view.is_dealer else None
        permitted = [b for b in bid_range(view.hand_size) if b != forbidden]
        best = permitted[0]
        for bid in permitted[1:]:
            if values[bid] > values[best] + 1e-12:
                best = bid
        return best

    # -------------------------------------------------------------------- play
    def card_values(self, view: PlayerView, legal: Sequence[int] | None = None) -> dict[int, float]:
        """Expected hand score of playing each legal card now."""
        legal = view.legal_actions if legal is None else legal
        table = _Table(view)
        hand = list(view.hand)
        future = _future_chances(table, hand) if len(hand) > 1 else {}
        score = view.rules.hand_score
        bid = view.bids[view.player]
        won = view.tricks_won[view.player]
        # Expected score given the tricks taken by the end of the current one.
        points = [score(bid, won + t) for t in range(len(hand) + 1)]
        values: dict[int, float] = {}
        for card in legal:
            rest = trick_distribution([future[c] for c in hand if c != card])
            p = _trick_chance(table, card)
            if_lose = sum(m * points[t] for t, m in enumerate(rest))
            if_win = sum(m * points[t + 1] for t, m in enumerate(rest))
            values[card] = p * if_win + (1.0 - p) * if_lose
        return values

    def choose_card(self, view: PlayerView, legal: Sequence[int]) -> int:
        """The legal card with the best expected hand score (ties: the weakest card)."""
        if len(legal) == 1:
            return int(legal[0])
        return self._best_card(view, legal, self.card_values(view, legal))

    @staticmethod
    def _best_card(view: PlayerView, legal: Sequence[int], values: Mapping[int, float]) -> int:
        """The legal card with the best expected hand score in ``values``; ties: the weakest card."""
        trump = view.trump
        return int(max(legal, key=lambda c: (round(values[c], 9), -_strength(c, trump))))
