"""The rules engine: :class:`BlackoutGame`, a checked state machine.

Phases run bid -> play -> (hand scored, next deal) -> ... -> game_over. The
deal, the scoring of a finished hand and the next deal happen inside the
action that completes the last trick, so ``phase`` is always "bid", "play" or
"game_over". Every action is checked against :meth:`BlackoutGame.legal_actions`;
an illegal one raises :class:`IllegalActionError` and changes nothing.

Actions: card ``c`` (0..C-1, C = 52, or 54 with jokers) plays ``c``; ``C + k``
bids ``k``. The dealing protocol: with deck order ``d`` and hand size ``h``,
``d[k]`` goes to seat ``(dealer + 1 + k) % n`` for ``k < n * h``, and ``d[n * h]``,
when it exists, is the turned card.

History events (tuples, in order):
``("deal", round_index, dealer, hand_size, turned_card, trump, hands)``,
``("bid", seat, bid)``, ``("play", seat, card)``,
``("trick", winner, ((seat, card), ...))``,
``("round_end", round_index, hand_scores, totals)``, ``("game_over", winners)``.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._checks import check_seed
from .cards import NUM_STANDARD_CARDS, SUIT_NAMES, card_to_str, cards_to_str, counted, parse_card, suit_of
from .rules import Rules
from .rules_logic import (
    bid_range,
    card_facts,
    dealer_of_round,
    dealt_hands,
    dealt_to,
    first_to_act,
    forbidden_bid,
    illegal_action_reason,
    match_winners,
    playable_cards,
    suit_led_after,
    trick_winner,
    turned_card,
    voids_shown,
)
from .view import PlayerView

__all__ = [
    "BlackoutGame",
    "DeckOrder",
    "IllegalActionError",
    "SaveFileError",
    "action_to_str",
    "deck_order",
    "SAVE_FORMAT",
    "SAVE_VERSION",
]

SAVE_FORMAT = "blackout-game"
SAVE_VERSION = 1
_ORDERED_DECKS = {size: list(range(size)) for size in (52, 53, 54)}  # shuffled copies, never changed
_NEXT_SEAT = {n: tuple((seat + 1) % n for seat in range(n)) for n in range(1, 16)}  # [n][seat]: the seat to its left


class IllegalActionError(ValueError):
    """An action that the rules do not allow now. The game is left unchanged."""


class SaveFileError(ValueError):
    """A saved game that cannot be loaded: not JSON, wrong format, or impossible contents."""


def action_to_str(action: int, num_cards: int = NUM_STANDARD_CARDS) -> str:
    """An action in words: "play QS" or "bid 3"."""
    if action >= num_cards:
        return f"bid {action - num_cards}"
    return f"play {card_to_str(action)}"


class DeckOrder(list):
    """A deck order (a list of card ints) built by :func:`deck_order` for one dealer.

    It remembers the ``dealer`` (and ``num_players``) it deals its hands for: a
    :class:`BlackoutGame` refuses it in a round that another seat deals, or at a
    table of another size, where the same order would give the hands to other
    seats. Otherwise it is the plain list of cards.
    """

    def __init__(self, cards: Sequence[int], dealer: int, num_players: int) -> None:
        super().__init__(cards)
        self.dealer = dealer
        self.num_players = num_players

    def __reduce__(self) -> tuple:
        return (DeckOrder, (list(self), self.dealer, self.num_players))


def deck_order(
    hands: Sequence[Sequence[int | str]],
    dealer: int,
    turned_card: int | str | None = None,
    jokers: int = 0,
) -> DeckOrder:
    """The deck order that deals ``hands`` (one per seat) by the dealing protocol.

    ``hands[p]`` goes to seat ``p`` when ``dealer`` deals; ``turned_card`` (if
    given) follows the dealt cards, and the unused cards come last in ascending
    order. Cards may be ints or text ("QS"). Use it to set up an exact deal::

        order = deck_order([["AS"], ["KS"], ["2C"], ["3D"]], dealer=3, turned_card="5H")
        game = BlackoutGame(rules, first_dealer=3, decks=[order])

    The order remembers its dealer (a :class:`DeckOrder`): a game refuses it in a
    round that another seat deals.
    """
    n = len(hands)
    as_ints = [[parse_card(c) if isinstance(c, str) else int(c) for c in hand] for hand in hands]
    size = len(as_ints[0]) if as_ints else 0
    if any(len(hand) != size for hand in as_ints):
        raise ValueError(f"hands: every hand must hold the same number of cards, got sizes {[len(h) for h in as_ints]}")
    if not 0 <= dealer < n:
        raise ValueError(f"dealer: must be a seat 0..{n - 1}, got {dealer!r}")
    order: list[int] = []
    for k in range(n * size):
        order.append(as_ints[dealt_to(k, dealer, n)][k // n])
    if turned_card is not None:
        order.append(parse_card(turned_card) if isinstance(turned_card, str) else int(turned_card))
    deck_size = NUM_STANDARD_CARDS + jokers
    outside = [c for c in order if not 0 <= c < deck_size]
    if outside:
        raise ValueError(f"hands: {outside} are not cards of the {deck_size}-card deck")
    if len(set(order)) != len(order):
        twice = sorted({c for c in order if order.count(c) > 1})
        raise ValueError(f"hands and turned card: {cards_to_str(twice)} appear more than once")
    used = set(order)
    order += [c for c in range(deck_size) if c not in used]
    return DeckOrder(order, dealer, n)


def _deck_orders(rules: Rules, rng: np.random.Generator, decks: Any, dealers: Sequence[int]) -> list[list[int]]:
    """One validated deck order per round: the given ones, the rest shuffled from ``rng``.

    ``dealers[r]`` is the dealer of round ``r``: a :class:`DeckOrder` built for another is refused.
    """
    size = rules.deck_size
    rounds = len(rules.hand_sizes)
    # Every round is shuffled, given or not, so a round's deck depends only on the seed.
    ordered = _ORDERED_DECKS[size]
    shuffled = []
    for _ in range(rounds):
        # Shuffling a list draws what rng.permuted(np.arange(size)) draws (the same Fisher-Yates
        # swaps; a test holds it to that), without converting an array to a list.
        deck = ordered[:]
        rng.shuffle(deck)
        shuffled.append(deck)
    if decks is None:
        return shuffled
    if isinstance(decks, Mapping):
        items = list(decks.items())
    elif isinstance(decks, Sequence) or isinstance(decks, np.ndarray):
        items = list(enumerate(decks))
    else:
        raise ValueError(f"decks: expected a list of deck orders (one per round), got {type(decks).__name__}")
    for index, order in items:
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= index < rounds:
            raise ValueError(f"decks: round {index!r} does not exist (rounds 0..{rounds - 1})")
        if order is None:
            continue
        if isinstance(order, DeckOrder):
            _check_deck_dealer(order, int(index), dealers[int(index)], rules.num_players)
        shuffled[int(index)] = _check_deck(order, size, f"decks[{index}]")
    return shuffled


def _check_deck_dealer(order: DeckOrder, round_index: int, dealer: int, num_players: int, name: str = "") -> None:
    """Refuse a deck built by :func:`deck_order` for another dealer or table size than round ``round_index``'s."""
    name = name or f"decks[{round_index}]"
    if order.num_players != num_players:
        raise ValueError(
            f"{name}: the deck was built by deck_order for {order.num_players} players; "
            f"this game has {num_players}"
        )
    if order.dealer != dealer:
        raise ValueError(
            f"{name}: the deck was built by deck_order for dealer {order.dealer}, but round "
            f"{round_index} is dealt by seat {dealer}, so its hands would go to other seats; build it with "
            f"dealer={dealer}, or start the game with first_dealer set so that seat {order.dealer} deals round {round_index}"
        )


def _check_deck(order: Any, size: int, name: str) -> list[int]:
    if isinstance(order, (str, bytes)):
        raise ValueError(f"{name}: a deck order is a sequence of card ints, got the string {order!r:.80}")
    try:
        cards = [operator.index(c) for c in order]  # ints (numpy's too); not floats, numeric strings or bools
        if any(isinstance(c, (bool, np.bool_)) for c in order):
            raise TypeError
    except (TypeError, ValueError):
        shown = " ".join(repr(order).split())  # one line (numpy's repr breaks long arrays)
        raise ValueError(f"{name}: a deck order is a sequence of card ints, got {shown:.80}") from None
    if len(cards) != size or sorted(cards) != list(range(size)):
        counts: dict[int, int] = {}
        for c in cards:
            counts[c] = counts.get(c, 0) + 1
        problems = [f"{c} is not a card" for c in counts if not 0 <= c < size]
        problems += [f"card {c} appears {k} times" for c, k in counts.items() if k > 1 and 0 <= c < size]
        problems += [f"card {c} is missing" for c in range(size) if c not in counts]
        raise ValueError(
            f"{name} is not a permutation of the {size}-card deck (0..{size - 1}): " + "; ".join(problems[:3])
        )
    return cards


def legal_words(legal: Sequence[int], num_cards: int) -> str:
    """Legal actions in words: "none", "bids 0, 1, 3" or the cards ("AS 10H")."""
    if not legal:
        return "none"
    if legal[0] >= num_cards:
        return "bids " + ", ".join(str(a - num_cards) for a in legal)
    return cards_to_str(legal)


def illegal_action_message(view: PlayerView, action: int) -> str:
    """The error for an illegal ``action`` of the player to act in ``view``: who tried what, which rule
    forbids it (:func:`~blackout_env.game.rules_logic.illegal_action_reason`), what is legal.

    The engine's :class:`IllegalActionError` and the AEC env's (which plays on the compiled core) say the same.
    """
    reason = illegal_action_reason(view, action)
    who, num_cards, hand_size = f"player {view.current_player}", view.rules.num_cards, view.hand_size
    legal = legal_words(view.legal_actions, num_cards)
    if reason == "game_over":
        return f"the game is over: no action is legal (tried action {action}); legal: none"
    if reason == "not_an_action":
        return (
            f"{who} cannot take action {action}: actions run 0..{view.rules.num_actions - 1} "
            f"(cards 0..{num_cards - 1}, then bids); legal: {legal}"
        )
    card = card_to_str(action) if action < num_cards else None
    led = None if view.led_suit is None else SUIT_NAMES[view.led_suit]
    why = {
        "bidding_over": "bidding is over, it is time to play a card",
        "bid_too_high": f"bids run 0..{hand_size} with {counted(hand_size, 'card')}",
        "hook": f"the dealer may not make the bids total the {counted(hand_size, 'trick')} "
        f"(hook rule; the others bid {sum(bid for bid in view.bids if bid is not None)})",
        "bidding_not_over": "bidding is not over yet",
        "card_not_held": f"they do not hold {card}",
        "must_follow_suit": f"they must follow suit ({led} led)",
        "trump_not_broken": "trump may not be led until trump is broken (they hold other suits)",
    }[reason]
    return f"{who} cannot {action_to_str(action, num_cards)}: {why}; legal: {legal}"


class BlackoutGame:
    """One match of Blackout under a :class:`Rules`.

    Args:
        rules: a :class:`Rules`, a preset name, a YAML path or a mapping of
            overrides (default: the standard rules).
        seed: an int, None (fresh entropy) or a ``numpy.random.Generator``;
            it shuffles every deck not given in ``decks`` and draws a random
            first dealer.
        decks: deck orders, one per round (a list, where None entries are
            shuffled, or a mapping from round index to deck order).
        first_dealer: overrides the rules' first dealer (the dealer of round 0).
        start_round: the round to start at (scores start at zero); used to
            replay or search a single hand of a match.
    """

    def __init__(
        self,
        rules: Rules | str | Mapping[str, Any] | None = None,
        seed: int | np.random.Generator | None = None,
        decks: Any = None,
        *,
        first_dealer: int | None = None,
        start_round: int = 0,
    ) -> None:
        if rules.__class__ is not Rules:
            rules = Rules.resolve(rules)
        self.rules = rules
        self.num_players = n = rules.num_players
        self.num_cards = rules.num_cards
        self._must_break = rules.lead_trump == "broken"
        self._next_seat = _NEXT_SEAT[n]
        check_seed(seed)
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        if first_dealer is None:
            first_dealer = rules.first_dealer  # validated by Rules
            if first_dealer == "random":
                first_dealer = int(rng.integers(n))
        elif isinstance(first_dealer, bool) or not isinstance(first_dealer, (int, np.integer)) or not 0 <= first_dealer < n:
            raise ValueError(f"first_dealer: must be a seat 0..{n - 1}, got {first_dealer!r}")
        if start_round.__class__ is not int or not 0 <= start_round < len(rules.hand_sizes):
            raise ValueError(f"start_round: must be a round 0..{rules.num_rounds - 1}, got {start_round!r}")
        self.first_dealer = int(first_dealer)
        self.start_round = start_round
        dealers = [dealer_of_round(self.first_dealer, r, n) for r in range(rules.num_rounds)]
        self.decks = _deck_orders(rules, rng, decks, dealers)
        self.round_index = start_round
        self.scores = [0] * n
        self.round_scores: list[list[int]] = []
        self.round_bids: list[list[int]] = []
        self.round_tricks: list[list[int]] = []
        self.history: list[tuple] = []
        self.actions: list[int] = []
        self._deal()

    # ------------------------------------------------------------------ deal
    def _deal(self) -> None:
        rules = self.rules
        n = self.num_players
        r = self.round_index
        h = self.hand_size = rules.hand_sizes[r]
        self.dealer = dealer = dealer_of_round(self.first_dealer, r, n)
        deck = self.decks[r]
        self.hands = hands = dealt_hands(deck, dealer, n, h)
        turned, self.turned_card_held_by_dealer = turned_card(deck, n, h, rules.trump, rules.no_card_trump)
        if rules.trump == "turned":
            trump = None if turned is None else suit_of(turned)  # a turned joker: no trump
        else:
            trump = rules.trump_rule_suit(r)
        self.turned_card, self.trump = turned, trump
        self._trumps, self._follow_voids = card_facts(trump, self._must_break)
        self.phase = "bid"
        self.leader = self.current_player = first_to_act(dealer, n)
        self.bids: list[int | None] = [None] * n
        self.tricks_won = [0] * n
        self.current_trick: list[tuple[int, int]] = []
        self.led_suit: int | None = None
        self.trump_broken = False
        self.last_trick: list[tuple[int, int]] = []
        self.last_trick_winner: int | None = None
        self.played: list[list[int]] = [[] for _ in hands]
        self.voids: list[set[int]] = [set() for _ in hands]
        self._round_start = len(self.actions)
        self._bids_made = 0
        self._bid_total = 0
        self._tricks_done = 0
        self._legal: list[int] | None = None
        self.history.append(("deal", r, dealer, h, turned, trump, tuple(map(tuple, hands))))

    # ------------------------------------------------------------ legal moves
    def legal_actions(self) -> list[int]:
        """The current player's legal actions, ascending (empty when the game is over)."""
        return self._compute_legal()[:]  # a copy: the cached list checks the next step

    def _compute_legal(self) -> list[int]:
        """The cached legal actions (computed when needed); internal, not a copy."""
        legal = self._legal
        if legal is not None:
            return legal
        if self.phase == "play":
            legal = playable_cards(
                self.hands[self.current_player],
                self.led_suit,
                self.trump,
                leads=not self.current_trick,
                trump_broken=self.trump_broken,
                must_break=self._must_break,
            )
        elif self.phase == "bid":
            first = self.num_cards
            bids = bid_range(self.hand_size)
            legal = list(range(first + bids.start, first + bids.stop))
            forbidden = self.forbidden_bid
            if forbidden is not None:
                legal.remove(first + forbidden)
        else:
            legal = []
        self._legal = legal
        return legal

    @property
    def forbidden_bid(self) -> int | None:
        """The bid the hook forbids the dealer now (None when none is forbidden).

        See :func:`~blackout_env.game.rules_logic.forbidden_bid`.
        """
        if self.phase != "bid" or self._bids_made != self.num_players - 1:
            return None
        return forbidden_bid(self.hand_size, self._bid_total, hook=self.rules.hook)

    def nearest_permitted_bid(self, bid: int, prefer: str = "lower") -> int:
        """The standard ruling when the dealer names the forbidden bid: the nearest permitted one.

        On a tie (both neighbours permitted) ``prefer`` picks "lower" or "higher".
        A permitted bid is returned unchanged.
        """
        if prefer not in ("lower", "higher"):
            raise ValueError(f"prefer: must be 'lower' or 'higher', got {prefer!r}")
        if self.phase != "bid":
            raise IllegalActionError(f"no bid is legal now: the game is in the {self.phase} phase")
        permitted = [a - self.num_cards for a in self._compute_legal()]
        if bid in permitted:
            return bid
        sign = -1 if prefer == "lower" else 1
        return min(permitted, key=lambda k: (abs(k - bid), sign * (bid - k) > 0, k * -sign))

    # ----------------------------------------------------------------- actions
    def step(self, action: int) -> None:
        """Apply one action: card ``c`` plays ``c``; ``num_cards + k`` bids ``k``.

        Raises IllegalActionError (state unchanged) when the action is not legal now.
        """
        # This runs at every decision: the common case (an int, legal actions cached) costs no call.
        if action.__class__ is not int:
            action = self._coerce_action(action)
        legal = self._legal
        if legal is None:
            legal = self._compute_legal()
        if action not in legal:
            # At game over no seat is to act; any seat's view says the game is over.
            raise IllegalActionError(illegal_action_message(self.view(self.current_player or 0), action))
        self.actions.append(action)
        self._legal = None
        player = self.current_player
        if action >= self.num_cards:  # a bid
            tricks = action - self.num_cards
            self.bids[player] = tricks
            self._bid_total += tricks
            self._bids_made += 1
            self.history.append(("bid", player, tricks))
            if self._bids_made == self.num_players:
                self.phase = "play"
                self.current_player = self.leader
            else:
                self.current_player = self._next_seat[player]
            return
        # A card (the common case, so written out here rather than in a method of its own).
        card = action
        trick = self.current_trick
        led_suit = self.led_suit
        self.hands[player].remove(card)
        if led_suit is not None:  # following a named led suit: the voids it shows from the table
            shown = self._follow_voids[self.trump_broken][led_suit][card]
        else:  # leading, or following a led joker: this card may name the led suit
            shown = voids_shown(
                card,
                led_suit,
                self.trump,
                leads=not trick,
                trump_broken=self.trump_broken,
                must_break=self._must_break,
            )
            self.led_suit = suit_led_after(led_suit, card)
        if shown:  # most cards show nothing
            self.voids[player] |= shown
        if not self.trump_broken and card in self._trumps:  # once broken, trump stays broken
            self.trump_broken = True
        trick.append((player, card))
        self.played[player].append(card)
        self.history.append(("play", player, card))
        if len(trick) == self.num_players:
            self._finish_trick()
        else:
            self.current_player = self._next_seat[player]

    def bid(self, tricks: int) -> None:
        """The current player bids ``tricks``."""
        if isinstance(tricks, bool) or not isinstance(tricks, (int, np.integer)):
            raise IllegalActionError(
                f"player {self.current_player} cannot bid {tricks!r}: a bid is a whole number of tricks; "
                f"legal: {self._legal_words()}"
            )
        if not 0 <= tricks <= self.rules.max_bid:
            raise IllegalActionError(
                f"player {self.current_player} cannot bid {tricks}: bids run 0..{self.hand_size} this hand; "
                f"legal: {self._legal_words()}"
            )
        self.step(self.num_cards + int(tricks))

    def play(self, card: int | str) -> None:
        """The current player plays ``card`` (an int or text such as "QS")."""
        if isinstance(card, str):
            card = parse_card(card)
        if isinstance(card, bool) or not isinstance(card, (int, np.integer)) or not 0 <= card < self.num_cards:
            raise IllegalActionError(
                f"player {self.current_player} cannot play {card!r}: {card!r} is not a card of this deck "
                f"(0..{self.num_cards - 1}); legal: {self._legal_words()}"
            )
        self.step(int(card))

    def _coerce_action(self, action: Any) -> int:
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
                return int(action)
            raise IllegalActionError(
                f"player {self.current_player} cannot take action {action!r}: an action is an int, "
                f"got {type(action).__name__}; legal: {self._legal_words()}"
            )
        return int(action)

    def trick_winner(self, trick: Sequence[tuple[int, int]] | None = None) -> int:
        """The seat that wins a trick of (seat, card) (default: the current one, so far).

        The first joker wins; else the highest trump; else the highest card of the led
        suit (named by the first card that is not a joker): see
        :func:`~blackout_env.game.rules_logic.trick_winner`.
        """
        if trick is None:
            return trick_winner(self.current_trick, self.trump, self.led_suit)
        return trick_winner(trick, self.trump)

    def _finish_trick(self) -> None:
        trick = self.current_trick
        winner = trick_winner(trick, self.trump, self.led_suit)
        self.tricks_won[winner] += 1
        self.last_trick = trick
        self.last_trick_winner = winner
        self.history.append(("trick", winner, tuple(trick)))
        self.current_trick = []
        self.led_suit = None
        self._tricks_done += 1
        if self._tricks_done == self.hand_size:
            self._finish_round()
        else:
            self.leader = self.current_player = winner

    def _finish_round(self) -> None:
        score = self.rules.hand_score
        hand_scores = [score(bid, won) for bid, won in zip(self.bids, self.tricks_won)]
        totals = self.scores
        for seat, points in enumerate(hand_scores):
            totals[seat] += points
        self.round_scores.append(hand_scores)
        self.round_bids.append(list(self.bids))  # type: ignore[arg-type]
        self.round_tricks.append(self.tricks_won[:])
        self.history.append(("round_end", self.round_index, tuple(hand_scores), tuple(totals)))
        if self.round_index + 1 < self.rules.num_rounds:
            self.round_index += 1
            self._deal()
        else:
            self.phase = "game_over"
            self.current_player = None
            self._legal = []
            self.history.append(("game_over", tuple(self.winners())))

    # ------------------------------------------------------------------ queries
    @property
    def is_over(self) -> bool:
        return self.phase == "game_over"

    @property
    def num_rounds(self) -> int:
        return self.rules.num_rounds

    @property
    def round_actions(self) -> list[int]:
        """Every action of this hand so far (bids, then plays)."""
        return self.actions[self._round_start :]

    @property
    def tricks_left(self) -> int:
        """Tricks of this hand not yet won (the current one included)."""
        return self.hand_size - self._tricks_done

    def winners(self) -> list[int]:
        """Seats with the highest total (all of them share a tie); the leaders while the game runs."""
        return match_winners(self.scores)

    def view(self, player: int) -> PlayerView:
        """What ``player`` may know now: own hand and public information only."""
        if isinstance(player, bool) or not isinstance(player, (int, np.integer)) or not 0 <= player < self.num_players:
            raise ValueError(f"player: must be a seat 0..{self.num_players - 1}, got {player!r}")
        legal = tuple(self._compute_legal()) if player == self.current_player else ()
        return PlayerView(
            player=int(player),
            rules=self.rules,
            phase=self.phase,
            current_player=self.current_player,
            round_index=self.round_index,
            hand_size=self.hand_size,
            dealer=self.dealer,
            hand=tuple(self.hands[player]),
            trump=self.trump,
            turned_card=self.turned_card,
            turned_card_held_by_dealer=self.turned_card_held_by_dealer,
            bids=tuple(self.bids),
            tricks_won=tuple(self.tricks_won),
            current_trick=tuple(self.current_trick),
            leader=self.leader,
            led_suit=self.led_suit,
            last_trick=tuple(self.last_trick),
            last_trick_winner=self.last_trick_winner,
            played=tuple(tuple(cards) for cards in self.played),
            voids=tuple(frozenset(v) for v in self.voids),
            trump_broken=self.trump_broken,
            scores=tuple(self.scores),
            round_scores=tuple(tuple(s) for s in self.round_scores),
            legal_actions=legal,
            round_actions=tuple(self.actions[self._round_start :]),
        )

    # The card tables of the hand's trump (card_facts) are shared, read-only and rebuilt from the
    # trump: a pickle or deepcopy leaves them out.
    _CARD_TABLES = ("_trumps", "_follow_voids")

    def __getstate__(self) -> dict[str, Any]:
        return {key: value for key, value in self.__dict__.items() if key not in self._CARD_TABLES}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._trumps, self._follow_voids = card_facts(self.trump, self._must_break)

    def clone(self) -> BlackoutGame:
        """An independent copy of the whole state (hidden cards included)."""
        other = object.__new__(BlackoutGame)
        other.__dict__.update(self.__dict__)
        other.scores = self.scores[:]
        other.round_scores = [s[:] for s in self.round_scores]
        other.round_bids = [s[:] for s in self.round_bids]
        other.round_tricks = [s[:] for s in self.round_tricks]
        other.history = self.history[:]
        other.actions = self.actions[:]
        other.hands = [h[:] for h in self.hands]
        other.bids = self.bids[:]
        other.tricks_won = self.tricks_won[:]
        other.current_trick = self.current_trick[:]
        other.last_trick = self.last_trick[:]
        other.played = [p[:] for p in self.played]
        other.voids = [set(v) for v in self.voids]
        other._legal = None
        return other

    # ------------------------------------------------------------ explanations
    def _legal_words(self) -> str:
        return legal_words(self._compute_legal(), self.num_cards)

    # ------------------------------------------------------------------- saves
    def to_json(self) -> str:
        """The whole game as JSON text (rules, deck orders and actions); load with :meth:`from_json`."""
        data = {
            "format": SAVE_FORMAT,
            "version": SAVE_VERSION,
            "rules": self.rules.to_dict(),
            "first_dealer": self.first_dealer,
            "start_round": self.start_round,
            "decks": self.decks,
            "actions": self.actions,
            "state": self._saved_state(),
        }
        return json.dumps(data, separators=(",", ":"))

    def _saved_state(self) -> dict[str, Any]:
        """What a save records of the state now, which :meth:`from_json` checks the replayed game against."""
        return {"round_index": self.round_index, "phase": self.phase, "current_player": self.current_player,
                "scores": self.scores}

    @classmethod
    def from_json(cls, text: str | bytes) -> BlackoutGame:
        """Load a game saved by :meth:`to_json`; raises SaveFileError when it is corrupt or impossible."""
        try:
            data = json.loads(text)
        except (TypeError, ValueError) as error:
            raise SaveFileError(f"saved game is not valid JSON: {error}") from None
        except RecursionError:
            raise SaveFileError("saved game is not a saved game: its JSON nests too deeply") from None
        if not isinstance(data, dict) or data.get("format") != SAVE_FORMAT:
            raise SaveFileError(f"not a saved Blackout game (expected format {SAVE_FORMAT!r})")
        if type(data.get("version")) is not int or data["version"] != SAVE_VERSION:  # (true == 1 in Python)
            raise SaveFileError(
                f"saved game has format version {data.get('version')!r}; this version reads {SAVE_VERSION}"
            )
        missing = [k for k in ("rules", "first_dealer", "decks", "actions", "state") if k not in data]
        if missing:
            raise SaveFileError(f"saved game lacks {', '.join(missing)}")
        try:
            rules = Rules.from_dict(data["rules"])
            decks = data["decks"]
            # Every deck must be in the file: a missing one would be shuffled afresh, a different game.
            if not isinstance(decks, list) or len(decks) != rules.num_rounds or any(d is None for d in decks):
                raise SaveFileError(f"saved game: 'decks' must hold one deck order for each of the {rules.num_rounds} rounds")
            game = cls(rules, decks=decks, first_dealer=data["first_dealer"], start_round=data.get("start_round", 0))
        except SaveFileError:
            raise
        except (ValueError, TypeError) as error:
            raise SaveFileError(f"saved game is impossible: {error}") from None
        actions = data["actions"]
        if not isinstance(actions, list):
            raise SaveFileError("saved game: 'actions' must be a list of ints")
        for index, action in enumerate(actions):
            if isinstance(action, bool) or not isinstance(action, int):
                raise SaveFileError(f"saved game: action #{index} is {action!r}, not an int")
            try:
                game.step(action)
            except IllegalActionError as error:
                raise SaveFileError(f"saved game is impossible: action #{index}: {error}") from None
        state, expected = data["state"], game._saved_state()
        if not isinstance(state, dict) or any(state.get(k) != v for k, v in expected.items()):
            raise SaveFileError(
                f"saved game is inconsistent: its recorded state {state!r} differs from the replayed one {expected!r}"
            )
        return game

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BlackoutGame):
            return NotImplemented
        return (
            self.rules == other.rules
            and self.first_dealer == other.first_dealer
            and self.start_round == other.start_round
            and self.decks == other.decks
            and self.actions == other.actions
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"BlackoutGame(players={self.num_players}, round={self.round_index}/{self.num_rounds}, "
            f"hand_size={self.hand_size}, phase={self.phase!r}, current_player={self.current_player}, "
            f"scores={self.scores})"
        )
