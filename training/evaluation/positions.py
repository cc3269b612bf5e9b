"""Obvious moves: a suite of positions every agent should get right, each proved when the suite loads.

A position is a hand dealt and played up to one seat's decision: the rules, the dealer,
every seat's cards as dealt (and the turned card), the actions so far, the acceptable
actions and a one-line reason; and optionally its round, when it is that hand of a match
under the rules' own schedule (else the rules deal this one hand). :func:`load_positions`
replays each in the engine and **verifies** it by exhaustive search: it enumerates every layout of the cards the acting
seat cannot see (every way to give the other seats hands of their sizes from the unseen
cards, respecting the voids they have shown; the rest stays undealt), and in each layout
plays every legal action out to the end of the hand, the other seats trying every legal
card. For an action ``a`` and layout ``L``, ``low(a, L)`` is the acting seat's worst hand
score over the others' plays and ``high(a, L)`` its best. The acceptable set ``S`` is
proved when

1. in every layout, every acceptable action's worst is at least every other action's
   best: ``low(s, L) >= high(a, L)`` (whatever the cards and the others do, nothing else
   could have scored more), and
2. every other legal action is strictly worse in some layout: ``low(s, L) > high(a, L)``
   for some ``s`` in ``S`` (an action as good everywhere belongs in ``S``).

So a position whose "obvious" answer is wrong, or right only for some layouts, cannot
enter the suite. The acting seat's own later choices would need a strategy that does not
see the hidden cards; the verifier avoids that question by accepting only positions where
they are forced: bids in a hand of one card, and plays with at most two cards in hand
(the last card is then forced). Searches are bounded (:data:`MAX_LAYOUTS` layouts, counted
with the voids shown: :func:`count_layouts`); a bid in a one-card hand with more layouts is
searched over one layout of each kind that its trick cannot tell apart (:func:`trick_kinds`).

Positions live in ``positions.yaml`` beside this module (shipped in the package); the
format is in docs/positions.md.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from blackout_env.agents.policies import spec_files
from blackout_env.game.cards import card_to_str, cards_to_str, deck, parse_card, parse_cards, suit_of
from blackout_env.game.engine import BlackoutGame
from blackout_env.game.rules import Rules, read_yaml_file
from blackout_env.game.rules_logic import card_power, dealer_of_round, first_to_act

__all__ = [
    "MAX_LAYOUTS", "SUITE_PATH", "Position", "PositionError", "PositionResult", "action_from_text", "action_text",
    "count_layouts", "judge", "layout_count", "trick_kinds", "load_positions", "run_suite", "search", "suite_digest", "verify",
]

SUITE_PATH = Path(__file__).resolve().parent / "positions.yaml"
"""The suite shipped with the package."""
MAX_LAYOUTS = 20_000
"""The most layouts of the unseen cards a position may have (its search must stay a fraction of a second)."""
_FIELDS = {"id", "players", "round", "rules", "dealer", "hands", "turned", "actions", "acceptable", "reason"}


class PositionError(ValueError):
    """A position that cannot enter the suite: the message names it and says why."""


def action_text(action: int, rules: Rules) -> str:
    """An action in words: ``bid 2`` or a card (``AS``)."""
    return f"bid {action - rules.num_cards}" if action >= rules.num_cards else card_to_str(action)


def action_from_text(text: str, rules: Rules) -> int:
    """``b2`` / ``bid 2`` for a bid, a card's text (``AS``, ``10H``) for a play."""
    words = str(text).strip().lower()
    if words.startswith("bid ") or (words.startswith("b") and words[1:].isdigit()):
        return rules.num_cards + int(words.removeprefix("bid ").removeprefix("b"))
    return parse_card(text)


# ------------------------------------------------------------------ positions
@dataclass(eq=False)
class Position:
    """One position of the suite (as written in the YAML file)."""

    id: str
    rules: Rules
    dealer: int
    hands: list[list[int]]
    """Each seat's cards as dealt."""
    turned: int | None
    actions: list[int]
    acceptable: list[int]
    reason: str
    round: int | None = None
    """The hand's index in the rules' schedule (the position is that hand of a match, scores so far zero),
    or None: the rules deal this one hand only."""
    lows_highs: dict[int, list[tuple[float, float]]] = field(default_factory=dict, repr=False)
    """After :func:`verify`: per legal action, (worst, best) hand score in each layout."""

    @classmethod
    def from_dict(cls, data: Any) -> Position:
        """A position from its YAML mapping; PositionError naming the field when it does not describe a deal."""
        if not isinstance(data, Mapping):
            raise PositionError(f"a position must be a mapping, got {type(data).__name__}")
        name = str(data.get("id", "?"))
        unknown = sorted(set(data) - _FIELDS)
        missing = sorted(_FIELDS - {"rules", "turned", "round"} - set(data))
        if unknown or missing:
            raise PositionError(f"position {name!r}: " + (f"unknown field {unknown[0]!r}" if unknown else f"no {missing[0]!r}"))
        for key in ("players", "dealer"):
            if isinstance(data[key], bool) or not isinstance(data[key], int):
                raise PositionError(f"position {name!r}: {key} must be a whole number, got {data[key]!r}")
        if not isinstance(data["hands"], list):
            raise PositionError(f"position {name!r}: hands must be a list of one hand per seat, got {data['hands']!r:.60}")
        try:
            hands = [parse_cards(hand) if isinstance(hand, str) else [parse_card(c) for c in hand] for hand in data["hands"]]
            hand_size = len(hands[0]) if hands else 0
            overrides = {**dict(data.get("rules") or {}), "num_players": int(data["players"])}
            round_index = data.get("round")
            if round_index is None:  # the rules deal this one hand (a schedule named in rules: is replaced)
                rules = Rules.preset("standard").replace(**{**overrides, "hand_sizes": [hand_size]})
            else:
                rules = Rules.preset("standard").replace(**overrides)
                last = rules.num_rounds - 1
                if isinstance(round_index, bool) or not isinstance(round_index, int) or not 0 <= round_index <= last:
                    raise PositionError(f"position {name!r}: round must be a hand 0..{last} of the rules' schedule, "
                                        f"got {round_index!r}")
                if hand_size != rules.hand_sizes[round_index]:
                    raise PositionError(f"position {name!r}: hands of {hand_size} cards, but round {round_index} "
                                        f"of the schedule deals {rules.hand_sizes[round_index]}")
            actions_text = data["actions"].split() if isinstance(data["actions"], str) else list(data["actions"] or [])
            acceptable_text = data["acceptable"].split() if isinstance(data["acceptable"], str) else list(data["acceptable"])
            position = cls(
                id=name, rules=rules, dealer=int(data["dealer"]), hands=hands,
                turned=None if data.get("turned") in (None, "") else parse_card(str(data["turned"])),
                actions=[action_from_text(a, rules) for a in actions_text],
                acceptable=[action_from_text(a, rules) for a in acceptable_text], reason=str(data["reason"]),
                round=round_index,
            )
        except PositionError:
            raise
        except (ValueError, TypeError, KeyError) as error:
            raise PositionError(f"position {name!r}: {error}") from None
        position._check_deal()
        return position

    def to_dict(self) -> dict[str, Any]:
        """The YAML mapping of this position."""
        base = Rules.preset("standard").replace(num_players=self.rules.num_players).to_dict()
        implied = ("num_players", "hand_sizes", "max_hand_size") if self.round is None else ("num_players",)
        overrides = {k: v for k, v in self.rules.to_dict().items() if base[k] != v and k not in implied}
        data: dict[str, Any] = {"id": self.id, "players": self.rules.num_players}
        if self.round is not None:
            data["round"] = self.round
        if overrides:
            data["rules"] = overrides
        data.update(
            dealer=self.dealer, hands=[cards_to_str(hand) for hand in self.hands],
            turned=None if self.turned is None else card_to_str(self.turned),
            actions=" ".join(_short(a, self.rules) for a in self.actions),
            acceptable=" ".join(_short(a, self.rules) for a in self.acceptable), reason=self.reason,
        )
        return data

    def _check_deal(self) -> None:
        n = self.rules.num_players
        if len(self.hands) != n:
            raise PositionError(f"position {self.id!r}: {len(self.hands)} hands for {n} players")
        if len({len(hand) for hand in self.hands}) != 1:
            raise PositionError(f"position {self.id!r}: the hands are of different sizes")
        dealt = [card for hand in self.hands for card in hand] + ([] if self.turned is None else [self.turned])
        if len(set(dealt)) != len(dealt):
            raise PositionError(f"position {self.id!r}: a card is dealt twice")
        if not 0 <= self.dealer < n:
            raise PositionError(f"position {self.id!r}: dealer must be a seat 0..{n - 1}")

    # --------------------------------------------------------------- game
    def deck_order(self) -> list[int]:
        """A deck order that deals these hands (and turns this card), as the engine deals: the rest in order."""
        n, size = self.rules.num_players, len(self.hands[0])
        order: list[int] = []
        for k in range(n * size):
            order.append(self.hands[(self.dealer + 1 + k) % n][k // n])
        if self.turned is not None:
            order.append(self.turned)
        rest = [card for card in deck(self.rules.jokers) if card not in set(order)]
        if self.turned is None and n * size < self.rules.deck_size:
            raise PositionError(f"position {self.id!r}: cards are left undealt, so one is turned: name it (turned)")
        return order + rest

    def game(self) -> BlackoutGame:
        """The game at the position: dealt, and the actions so far played (PositionError when one is illegal)."""
        try:
            if self.round is None:
                game = BlackoutGame(self.rules, decks=[self.deck_order()], first_dealer=self.dealer)
            else:  # the hand of a match: its first dealer is the one whose turn gives this hand to ``dealer``
                first = dealer_of_round(self.dealer, -self.round, self.rules.num_players)
                game = BlackoutGame(self.rules, seed=0, decks={self.round: self.deck_order()}, first_dealer=first,
                                    start_round=self.round)
            for action in self.actions:
                game.step(action)
        except PositionError:
            raise
        except ValueError as error:
            raise PositionError(f"position {self.id!r}: {error}") from None
        if game.round_scores:
            raise PositionError(f"position {self.id!r}: the hand is over; no decision is left")
        return game

    @cached_property
    def seat(self) -> int:
        """The acting seat."""
        return self.game().current_player

    def describe(self) -> str:
        """The position in words, from the acting seat's view."""
        game = self.game()
        seat, view = game.current_player, game.view(game.current_player)
        trump = "no trump" if view.trump is None else f"trump {'CDHS'[view.trump]}"
        of_match = "" if self.round is None else f" (hand {self.round + 1} of a {self.rules.num_rounds}-hand match)"
        words = [f"{self.rules.num_players} players, {game.hand_size}-card hand{of_match}, {trump}; player {seat} holds "
                 f"{cards_to_str(view.hand)}"]
        if game.phase == "bid":
            bids = [(s, b) for s, b in enumerate(view.bids) if b is not None]
            words.append("bids so far: " + (", ".join(f"player {s} {b}" for s, b in bids) if bids else "none")
                         + (", the dealer" if seat == game.dealer else ""))
        else:
            words.append(f"bid {view.bids[seat]}, won {view.tricks_won[seat]}")
            trick = ", ".join(f"player {s} {card_to_str(c)}" for s, c in view.current_trick)
            words.append(f"trick so far: {trick}" if trick else "to lead")
        return "; ".join(words)


def _short(action: int, rules: Rules) -> str:
    return f"b{action - rules.num_cards}" if action >= rules.num_cards else card_to_str(action)


# ------------------------------------------------------------------ the search
def _layouts(game: BlackoutGame, seat: int) -> tuple[list[int], list[int], Iterator[list[list[int]]], int]:
    """The unseen cards, the other seats, every layout of their hands consistent with the view, and how many there are."""
    view = game.view(seat)
    seen = set(view.hand) | {card for cards in game.played for card in cards} | {c for _, c in game.current_trick}
    if game.turned_card is not None:
        seen.add(game.turned_card)
    unseen = [card for card in deck(game.rules.jokers) if card not in seen]
    # A trump card the dealer holds (the dealer's last card names trump when none is turned) is known to all.
    shown = {s: [game.turned_card] for s in range(game.num_players) if s != seat and game.turned_card in game.hands[s]}
    others = [s for s in range(game.num_players) if s != seat and game.hands[s]]
    sizes = [len(game.hands[s]) - len(shown.get(s, [])) for s in others]

    def allowed(s: int, card: int) -> bool:
        suit = suit_of(card)
        return suit is None or suit not in view.voids[s]

    count = count_layouts(unseen, sizes, [view.voids[s] for s in others])

    def deal(index: int, pool: list[int]) -> Iterator[list[list[int]]]:
        if index == len(others):
            yield []
            return
        s = others[index]
        for hand in itertools.combinations([c for c in pool if allowed(s, c)], sizes[index]):
            rest = [c for c in pool if c not in hand]
            for tail in deal(index + 1, rest):
                yield [[*hand, *shown.get(s, [])], *tail]

    return unseen, others, deal(0, unseen), count


def count_layouts(unseen: Sequence[int], sizes: Sequence[int], voids: Sequence[Iterable[int]]) -> int:
    """How many ways there are to deal hands of ``sizes`` from ``unseen``, a seat never a card of a suit it is void in.

    The layouts :func:`search` enumerates (the cards left over stay undealt), counted without dealing
    them: suit by suit, each seat that may hold the suit takes ``k`` of its cards still free in
    ``comb(free, k)`` ways. The voids a hand has shown cut its layouts a great deal (at 7 players,
    where two cards stay undealt, they are what keeps a position's layouts within :data:`MAX_LAYOUTS`).
    """
    free_by_suit: dict[int | None, int] = {}
    for card in unseen:
        free_by_suit[suit_of(card)] = free_by_suit.get(suit_of(card), 0) + 1
    void_sets = [set(v) for v in voids]
    ways: dict[tuple[int, ...], int] = {tuple(sizes): 1}
    for suit, free in free_by_suit.items():
        stage: dict[tuple[tuple[int, ...], int], int] = {(needs, free): count for needs, count in ways.items()}
        for index, void in enumerate(void_sets):
            if suit is not None and suit in void:
                continue
            taken: dict[tuple[tuple[int, ...], int], int] = {}
            for (needs, left), count in stage.items():
                for k in range(min(needs[index], left) + 1):
                    key = (needs[:index] + (needs[index] - k,) + needs[index + 1:], left - k)
                    taken[key] = taken.get(key, 0) + count * math.comb(left, k)
            stage = taken
        ways = {}
        for (needs, _), count in stage.items():
            ways[needs] = ways.get(needs, 0) + count
    return ways.get(tuple(0 for _ in sizes), 0)


def trick_kinds(game: BlackoutGame, seat: int, unseen: Sequence[int], others: Sequence[int]) -> list[list[list[int]]] | None:
    """One layout of each kind that a one-card hand's trick cannot tell apart, for a bid there; None elsewhere.

    For a bid in a one-card hand without jokers, every later play is forced, so a layout matters to the
    acting seat only through whether its card ``c`` wins the trick: the card of highest
    :func:`~blackout_env.game.rules_logic.card_power` under the led suit, the suit of the leader's card (two
    standard cards have equal power only when neither can win). Two unseen cards are then interchangeable
    when they compare the same with ``c`` under every led suit and have the same suit (the suit counts only
    when some card's comparison depends on the led suit), and the seats after the leader count only as a
    multiset. Each kind is one layout: the leader's kind of card, then a multiset of kinds for the rest,
    each within the cards of its kind. Bids at 7 players (50 x 49 x ... x 45 layouts) are searched so.
    """
    if game.phase != "bid" or game.hand_size != 1 or game.rules.jokers:
        return None
    if any(game.turned_card in game.hands[s] for s in others):  # a trump card shown in a hand: not dealt freely
        return None
    (mine,) = game.hands[seat]

    def compare(card: int) -> tuple[int, ...]:
        return tuple(
            (card_power(card, led, game.trump) > card_power(mine, led, game.trump))
            - (card_power(card, led, game.trump) < card_power(mine, led, game.trump))
            for led in range(4)
        )

    by_led = any(len(set(compare(card))) > 1 for card in unseen)
    kinds: dict[tuple[Any, ...], list[int]] = {}
    for card in unseen:
        kinds.setdefault((suit_of(card) if by_led else None, compare(card)), []).append(card)
    pools = list(kinds.values())
    leader = first_to_act(game.dealer, game.num_players)
    rest = [s for s in others if s != leader]
    layouts = []
    for lead in range(len(pools)) if leader in others else [None]:
        for chosen in itertools.combinations_with_replacement(range(len(pools)), len(rest)):
            wanted = [*chosen] if lead is None else [lead, *chosen]
            if any(wanted.count(kind) > len(pools[kind]) for kind in set(wanted)):
                continue
            left = [list(pool) for pool in pools]
            cards = dict(zip(rest, (left[kind].pop() for kind in chosen)))
            if lead is not None:
                cards[leader] = left[lead].pop()
            layouts.append([[cards[s]] for s in others])
    return layouts


def _outcomes(game: BlackoutGame, seat: int) -> tuple[float, float]:
    """The acting seat's (worst, best) hand score from here over every play of the others (its own plays forced)."""
    if game.round_scores:  # the hand is over (the position's game starts at its hand: its scores are the first)
        score = game.round_scores[0][seat]
        return score, score
    legal = game.legal_actions()
    if game.phase == "bid" and game.current_player != seat:
        # Another seat's bid changes nothing that is played and no score but its own: one bid stands for all.
        legal = legal[:1]
    if game.current_player == seat and len(legal) != 1:
        raise PositionError("the acting seat has a second choice to make; the verifier only searches forced ones")
    low, high = math.inf, -math.inf
    for action in legal:
        child = game.clone()
        child.step(action)
        child_low, child_high = _outcomes(child, seat)
        low, high = min(low, child_low), max(high, child_high)
    return low, high


def layout_count(position: Position) -> int:
    """How many layouts of the unseen cards the acting seat's view leaves (:func:`count_layouts`)."""
    game = position.game()
    return _layouts(game, game.current_player)[3]


def search(position: Position, max_layouts: int = MAX_LAYOUTS) -> dict[int, list[tuple[float, float]]]:
    """Per legal action of the acting seat, its (worst, best) hand score in each layout of the unseen cards.

    PositionError when the position cannot be searched: a bid in a hand of more than one card,
    a play with more than two cards in hand, or more than ``max_layouts`` layouts (those that respect
    the voids shown, :func:`count_layouts`; default :data:`MAX_LAYOUTS`). A bid in a one-card hand with
    more is searched over one layout of each kind its trick cannot tell apart (:func:`trick_kinds`), when
    those are few enough: the same outcomes, fewer times over.
    """
    game = position.game()
    seat = game.current_player
    name = f"position {position.id!r}"
    if game.phase == "bid" and game.hand_size != 1:
        raise PositionError(f"{name}: a bid can be verified only in a hand of one card (later plays are choices)")
    if game.phase == "play" and len(game.hands[seat]) > 2:
        raise PositionError(f"{name}: a play can be verified only with at most two cards in hand")
    unseen, others, layouts, count = _layouts(game, seat)
    if count > max_layouts:
        kinds = trick_kinds(game, seat, unseen, others)
        if kinds is None or len(kinds) > max_layouts:
            raise PositionError(
                f"{name}: {count:,} layouts of the {len(unseen)} unseen cards; at most {max_layouts:,} are searched"
            )
        layouts = iter(kinds)
    legal = list(game.legal_actions())
    outcomes: dict[int, list[tuple[float, float]]] = {a: [] for a in legal}
    for layout in layouts:
        world = game.clone()
        for s, hand in zip(others, layout):
            world.hands[s] = sorted(hand)
        for action in legal:
            child = world.clone()
            child.step(action)
            try:
                outcomes[action].append(_outcomes(child, seat))
            except PositionError as error:
                raise PositionError(f"{name}: {error}") from None
    return outcomes


def judge(
    outcomes: Mapping[int, Sequence[tuple[float, float]]], acceptable: Sequence[int], words: Any = str
) -> str | None:
    """Whether the acceptable actions are proved by these (worst, best) scores per layout; None, or what is wrong.

    ``outcomes`` maps every legal action to its (worst, best) hand score in each layout (the
    layouts in the same order for every action); ``words(action)`` names an action.
    """
    accepted = set(acceptable)
    for good in acceptable:
        for other, scores in outcomes.items():
            if other in accepted:
                continue
            for (low, _), (_, high) in zip(outcomes[good], scores):
                if low < high:
                    return f"{words(other)} can score {high:g} where {words(good)} may score only {low:g}: the answer is not sure"
    for other, scores in outcomes.items():
        if other in accepted:
            continue
        if not any(low > high for good in acceptable for (low, _), (_, high) in zip(outcomes[good], scores)):
            return f"{words(other)} scores as much as the acceptable actions in every layout; list it as acceptable too"
    return None


def verify(position: Position) -> Position:
    """Prove the position's acceptable actions by exhaustive search (the module's rules 1 and 2); PositionError if not."""
    game = position.game()
    legal = list(game.legal_actions())
    name = f"position {position.id!r}"
    bad = [a for a in position.acceptable if a not in legal]
    if bad:
        raise PositionError(f"{name}: acceptable {action_text(bad[0], position.rules)} is not legal here")
    if not position.acceptable or set(position.acceptable) == set(legal):
        raise PositionError(f"{name}: the acceptable actions must be some of the legal ones, not none or all")
    outcomes = search(position)
    problem = judge(outcomes, position.acceptable, lambda action: action_text(action, position.rules))
    if problem is not None:
        raise PositionError(f"{name}: {problem}")
    position.lows_highs = outcomes
    return position


def load_positions(path: str | os.PathLike[str] | None = None) -> list[Position]:
    """Read a positions file (default: the shipped suite) and verify every position; PositionError on the first bad one."""
    path = SUITE_PATH if path is None else Path(path)
    data = read_yaml_file(path, "positions file", "a YAML file of positions", PositionError)
    if not isinstance(data, Mapping) or not isinstance(data.get("positions"), list):
        raise PositionError(f"{path}: expected a mapping with a 'positions' list")
    if not data["positions"]:
        raise PositionError(f"{path}: its 'positions' list is empty: a suite needs at least one position")
    try:
        positions = [Position.from_dict(entry) for entry in data["positions"]]
        ids = [p.id for p in positions]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise PositionError(f"position id {duplicates[0]!r} appears twice")
        for position in positions:
            verify(position)
    except PositionError as error:  # named by its file
        raise PositionError(f"{path}: {error}") from None
    return positions


def suite_digest(positions: Sequence[Position]) -> str:
    """A short hash of a suite's contents (which suite a score was measured on)."""
    text = yaml.safe_dump([p.to_dict() for p in positions], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


# ------------------------------------------------------------------ agents
@dataclass
class PositionResult:
    """One agent on the suite: how many positions it got right, and each failure in words."""

    agent: str
    passed: int
    total: int
    """The positions it was asked (those under rules it plays)."""
    failures: list[str]
    skipped: int = 0
    """Positions under rules the agent refuses to play (a specialist checkpoint), not counted."""

    @property
    def score(self) -> float:
        """The share of positions answered with an acceptable action."""
        return self.passed / self.total if self.total else math.nan


def run_suite(spec: Any, positions: Sequence[Position], seed: int = 0, name: str | None = None) -> PositionResult:
    """Ask the agent ``spec`` for its action at every position; its score and its failures in words."""
    from ..agents.policies import load_policy
    from .tournament import _policy_name, reseed, single_threaded_torch

    passed, failures, skipped = 0, [], 0
    cache: dict[Rules, Any] = {}
    for index, position in enumerate(positions):
        if position.rules not in cache:
            try:
                cache[position.rules] = load_policy(spec, position.rules, seed)
            except ValueError as error:
                said = str(error)
                for file in spec_files(spec) if isinstance(spec, str) else ():
                    said = said.replace(file, "")  # (a file under a folder called "rules" is not a rules refusal)
                if "rules" not in said.lower():  # an unknown spec or a bad file: not a matter of rules
                    raise
                cache[position.rules] = None
        policy = cache[position.rules]
        if policy is None:
            skipped += 1
            continue
        reseed(policy, seed, index)
        game = position.game()
        with single_threaded_torch():  # one view: torch's thread pool only waits, and stalls beside a busy core
            action = int(policy.act(game.view(game.current_player)))
        if action in position.acceptable:
            passed += 1
            continue
        rules = position.rules
        right = " or ".join(action_text(a, rules) for a in position.acceptable)
        failures.append(
            f"{position.id}: {position.describe()}. It played {action_text(action, rules)}; right: {right} "
            f"({position.reason})"
        )
    return PositionResult(name or _policy_name(spec) or str(spec), passed, len(positions) - skipped, failures, skipped)
