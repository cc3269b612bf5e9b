"""The rules of Blackout (Oh Hell, Oh Heck, Up and Down the River, Nomination Whist).

The game in words
-----------------
Three to seven players play a match of several hands. Before each hand the
dealer deals the same number of cards to every player, one at a time, starting
with the player on the dealer's left; the hand size changes from hand to hand
(for example 10, 9, ..., 1). The next card of the deck is turned face up and
its suit is trump for the hand (house rules: no trump at all, or a fixed
rotation of trump suits; when no card is left to turn there is no trump, or
the dealer's last dealt card is shown and names trump).

Each player, starting on the dealer's left and ending with the dealer, bids
how many tricks they will take. Under the hook rule the dealer may not make
the bids add up to the number of tricks, so at least one player must miss.

The player on the dealer's left leads the first trick. Players must follow
the suit led when they can; otherwise they may play any card. The highest
trump wins the trick, or the highest card of the suit led when no trump was
played. The winner leads the next trick. Under the "trump must break" rule a
player may not lead trump until a trump has been played to an earlier trick
of the hand, unless they hold nothing but trump.

Only an exact bid scores: by default 10 points plus the bid; a miss scores 0
(house rules: minus a flat amount, or minus the size of the miss; points per
trick taken). With jokers, a joker may be played to any trick and wins it
(the first of two jokers played wins); a led joker names no suit, the next
card played does; a turned joker means no trump.

The deal passes to the left after every hand. When the last hand has been
scored the highest total wins; equal totals share the win.

This module holds :class:`Rules`, the frozen value with every option, its
validation, the presets in ``configs/rules/*.yaml`` and YAML round-trips. The
rules of play themselves (the dealer's hook, following suit, trick power and
the trick's winner, the voids a card shows, why an action is illegal, the
reward modes) are functions of :mod:`blackout_env.game.rules_logic`, one per fact.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from .._checks import check_choice
from .cards import NUM_STANDARD_CARDS, SUIT_NAMES
from .rules_logic import bid_range, decisions_per_hand

__all__ = ["Rules", "RulesError", "PATTERNS", "MATCH_LENGTHS", "preset_names", "hand_schedule", "read_yaml_file"]


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a mapping that gives one key twice (PyYAML keeps the last silently)."""


def _unique_key_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    _check_unique_keys(loader, node, deep)
    return loader.construct_mapping(node, deep=deep)


def _check_unique_keys(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool) -> None:
    """A ConstructorError at a key given twice in ``node``, or in a mapping merged into it inline.

    Each node is checked once: PyYAML rewrites a mapping that merges others in place (the merged keys
    beside its own, which may override them), so an anchor merged again later must not be read twice.
    """
    checked = loader.__dict__.setdefault("_checked_mappings", set())
    if id(node) in checked:
        return
    checked.add(id(node))
    seen = set()
    merges = 0
    for key_node, value_node in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *anchor`: the merged keys may be given again here
            merges += 1
            if merges > 1:
                raise yaml.constructor.ConstructorError(
                    None, None, "the merge key '<<' is given twice (give a list: <<: [*a, *b])", key_node.start_mark
                )
            sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
            for source in sources:
                if isinstance(source, yaml.MappingNode):
                    _check_unique_keys(loader, source, deep)
            continue
        if key_node.tag == "tag:yaml.org,2002:value":  # (the key "=", which PyYAML reads as a value key)
            key = "="
        else:
            key = loader.construct_object(key_node, deep=deep)
        try:
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the key {key!r} is given twice (which one was meant?)", key_node.start_mark
                )
            seen.add(key)
        except TypeError:  # an unhashable key: the constructor says so
            pass


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _unique_key_mapping)


def read_yaml_file(path: str | os.PathLike[str], what: str, expected: str, error: type[Exception]) -> Any:
    """The YAML document in file ``path``, or ``error`` with one line naming it when it cannot be read or parsed.

    ``what`` names the file in the message ("rules file"), ``expected`` says what it should be ("a
    YAML file of rules options"). A YAML syntax error is reported as its line, column and problem
    (PyYAML's own message spans several lines).
    """
    path = Path(path)
    try:
        return yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)  # noqa: S506 - a safe loader
    except FileNotFoundError:
        raise error(f"{what} {str(path)!r} does not exist") from None
    except IsADirectoryError:
        raise error(f"{what} {str(path)!r} is a folder, not {expected}") from None
    except UnicodeDecodeError as problem:
        raise error(
            f"{what} {str(path)!r} is not UTF-8 text (byte {problem.start}: {problem.reason}); it should be {expected}"
        ) from None
    except OSError as problem:
        raise error(f"{what} {str(path)!r} cannot be read: {problem.strerror or problem}") from None
    except yaml.YAMLError as problem:
        raise error(f"{what} {str(path)!r} is not valid YAML: {_yaml_problem(problem)}") from None
    except (ValueError, TypeError) as problem:  # a value PyYAML parses but cannot build (a date of month 13)
        raise error(f"{what} {str(path)!r} is not valid YAML: {problem}") from None


def _yaml_problem(problem: yaml.YAMLError) -> str:
    """PyYAML's error in one line: "line L, column C: PROBLEM" where it says where."""
    mark = getattr(problem, "problem_mark", None)
    text = getattr(problem, "problem", None) or str(problem)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return where + " ".join(str(text).split())

PATTERNS = ("down", "up", "up-down", "down-up")
MATCH_LENGTHS = {
    "short": (1, 2, 3, 2, 1),
    "standard": (1, 2, 3, 4, 5, 4, 3, 2, 1),
    "long": (1, 2, 3, 4, 5, 6, 7, 6, 5, 4, 3, 2, 1),
}
TRUMP_MODES = ("turned", "none", "rotating")
NO_CARD_TRUMP_MODES = ("none", "dealer_last")
LEAD_TRUMP_MODES = ("any", "broken")
# Rotating trump: hearts, diamonds, clubs, spades, then a no-trump hand.
ROTATING_TRUMPS = (2, 1, 0, 3, None)
DEFAULT_MAX_HAND_SIZE = 10
"""The largest hand of a pattern when ``max_hand_size`` is not given (fewer if the deck runs out)."""
MAX_HANDS = 127
"""The most hands a match may have: the batched engine counts hands in int8."""
MAX_MATCH_TOTAL = 2**31 - 1
"""The largest absolute match total any rules may reach: the batched engine adds scores in int32."""
SCORING_FIELDS = ("exact_bonus", "points_per_bid", "miss_points", "miss_points_per_trick", "points_per_trick")


class RulesError(ValueError):
    """A rules option that is missing, of the wrong type, or impossible."""


def hand_schedule(pattern: str, maximum: int) -> tuple[int, ...]:
    """The hand sizes of a pattern: ``down`` 10..1, ``up`` 1..10, ``up-down``, ``down-up``."""
    down = tuple(range(maximum, 0, -1))
    up = tuple(range(1, maximum + 1))
    if pattern == "down":
        return down
    if pattern == "up":
        return up
    if pattern == "up-down":
        return up + down[1:]
    if pattern == "down-up":
        return down + up[1:]
    raise RulesError(f"hand_sizes: unknown pattern {pattern!r}; allowed: {', '.join(PATTERNS)}")


def _presets_dirs() -> list[Path]:
    # The presets ship inside the package (configs/rules is a link to them in a checkout),
    # so a plain `pip install` finds them too.
    dirs = [Path(__file__).resolve().parent / "presets"]
    extra = os.environ.get("BLACKOUT_RULES_DIR")
    if extra:
        dirs.insert(0, Path(extra))
    return [d for d in dirs if d.is_dir()]


def preset_names() -> list[str]:
    """Names of the rule presets shipped in ``configs/rules``."""
    names: set[str] = set()
    for directory in _presets_dirs():
        names.update(p.stem for p in directory.glob("*.yaml"))
    return sorted(names)


def _check_int(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    # numpy integers are accepted (and stored as int) so rules can come from arrays.
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise RulesError(f"{name}: expected an integer, got {value!r}")
    value = int(value)
    if low is not None and value < low or high is not None and value > high:
        bounds = f"in {low}..{high}" if high is not None else f">= {low}"
        raise RulesError(f"{name}: must be {bounds}, got {value}")
    return value


@dataclass(frozen=True)
class Rules:
    """Every option of a Blackout match. Frozen; validated on construction.

    ``hand_sizes`` may be given as an explicit list of hand sizes, as a pattern
    (``"down"``, ``"up"``, ``"up-down"``, ``"down-up"``) that runs to
    ``max_hand_size`` (a number, or ``"full"`` = deck size // players), or as a
    named match length (``"short"`` 1-2-3-2-1, ``"standard"`` 1..5..1,
    ``"long"`` 1..7..1). It is always stored as a tuple, one size per hand.

    Without ``max_hand_size`` a pattern runs from 10, or from as many cards as
    the deck gives every player when that is fewer (``min(10, deck size //
    players)``: 8 for 6 players, 7 for 7, jokers counted in the deck); the
    value used is stored. A ``max_hand_size`` given explicitly that the deck
    cannot deal is an error.

    Scores must fit every engine: a match has at most ``MAX_HANDS`` (127)
    hands, and the largest absolute match total the scoring values allow
    (:meth:`largest_match_total`) is at most ``2**31 - 1`` (the batched engine
    keeps scores in int32).
    """

    num_players: int = 4
    """Players at the table, 3..7."""
    hand_sizes: tuple[int, ...] = "down"  # type: ignore[assignment]
    """Cards per player in each hand, one entry per hand (see the class docstring)."""
    max_hand_size: int | str | None = None
    """The largest hand of a pattern: a number, "full" (deck size // players), or None
    (the default: min(10, deck size // players)); stored as the number used. A list of
    sizes or a match length does not read it (nor check it: a rules file written for 4
    players, its default 10 included, still reads at 7)."""
    hook: bool = True
    """The dealer may not bid so that the bids total the number of tricks."""
    trump: str = "turned"
    """"turned": the turned card names trump; "none": no trump all game;
    "rotating": hearts, diamonds, clubs, spades, no trump, by hand."""
    no_card_trump: str = "none"
    """When every card is dealt: "none" (no trump) or "dealer_last" (the dealer's
    last dealt card is shown to all and names trump)."""
    lead_trump: str = "any"
    """"any": trump may be led at any time; "broken": only once a trump was played
    to an earlier trick of the hand, unless the leader holds only trump."""
    exact_bonus: int = 10
    """Points for making the bid exactly."""
    points_per_bid: int = 1
    """Points per bid trick when the bid is made exactly (10 + bid: 10 and 1)."""
    miss_points: int = 0
    """Flat points for a missed bid (e.g. -10)."""
    miss_points_per_trick: int = 0
    """Points per trick of the miss, |bid - taken| (e.g. -1)."""
    points_per_trick: int = 0
    """Points per trick taken, made or missed (e.g. 1)."""
    jokers: int = 0
    """Jokers in the deck: 0, 1 or 2."""
    first_dealer: int | str = 0
    """The dealer of the first hand: a seat, or "random" (drawn from the game's seed)."""

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "num_players", _check_int("num_players", self.num_players, 3, 7))
        set_(self, "jokers", _check_int("jokers", self.jokers, 0, 2))
        deck_size = NUM_STANDARD_CARDS + self.jokers
        full = deck_size // self.num_players

        maximum = self.max_hand_size
        # Kept (outside the compared fields) so replace(num_players=...) re-derives the default or "full".
        set_(self, "_max_given", maximum is not None)
        set_(self, "_max_full", isinstance(maximum, str) and maximum == "full")
        if maximum is None:
            maximum = min(DEFAULT_MAX_HAND_SIZE, full)
        elif self._max_full:
            maximum = full
        else:
            try:
                maximum = _check_int("max_hand_size", maximum, 1)
            except RulesError as error:
                raise RulesError(f'{error} (or "full" = deck size // players, or none for the default)') from None
        set_(self, "max_hand_size", maximum)  # the number used, "full" included
        spec = self.hand_sizes
        # The pattern is kept (outside the compared fields) so replace(num_players=...)
        # can re-derive the schedule, e.g. "full" for another table size.
        set_(self, "_hand_spec", spec if isinstance(spec, str) else None)
        if isinstance(spec, str):
            if spec in MATCH_LENGTHS:
                sizes = MATCH_LENGTHS[spec]
            elif spec in PATTERNS:
                if maximum * self.num_players > deck_size:
                    raise RulesError(
                        f"max_hand_size: {self.num_players} players x {maximum} cards = "
                        f"{maximum * self.num_players} > {deck_size} cards in the deck; "
                        f'use at most {full} or "full"'
                    )
                sizes = hand_schedule(spec, maximum)
            else:
                allowed = ", ".join(PATTERNS + tuple(MATCH_LENGTHS))
                raise RulesError(f"hand_sizes: unknown pattern {spec!r}; allowed: {allowed}, or a list")
        elif isinstance(spec, (list, tuple, np.ndarray)):
            sizes = tuple(spec)
        else:
            raise RulesError(f"hand_sizes: expected a pattern name or a list of sizes, got {spec!r}")
        if not sizes:
            raise RulesError("hand_sizes: a match needs at least one hand")
        if len(sizes) > MAX_HANDS:
            raise RulesError(f"hand_sizes: a match has at most {MAX_HANDS} hands, got {len(sizes)}")
        checked = []
        for size in sizes:
            size = _check_int("hand_sizes", size, 1)
            checked.append(size)
            if size * self.num_players > deck_size:
                raise RulesError(
                    f"hand_sizes: {self.num_players} players x {size} cards = "
                    f"{size * self.num_players} > {deck_size} cards in the deck "
                    f"(at most {full} cards each)"
                )
        set_(self, "hand_sizes", tuple(checked))

        if not isinstance(self.hook, bool):
            raise RulesError(f"hook: expected true or false, got {self.hook!r}")
        check_choice("trump", self.trump, TRUMP_MODES, RulesError)
        check_choice("no_card_trump", self.no_card_trump, NO_CARD_TRUMP_MODES, RulesError)
        check_choice("lead_trump", self.lead_trump, LEAD_TRUMP_MODES, RulesError)
        for name in SCORING_FIELDS:
            set_(self, name, _check_int(name, getattr(self, name), -MAX_MATCH_TOTAL, MAX_MATCH_TOTAL))
        largest = self.largest_match_total()
        if largest > MAX_MATCH_TOTAL:
            values = ", ".join(f"{name}={getattr(self, name)}" for name in SCORING_FIELDS if getattr(self, name))
            raise RulesError(
                f"scoring: with {values} a match total can reach {largest:,} points over its "
                f"{self.num_rounds} hands; the most any engine holds is {MAX_MATCH_TOTAL:,} (int32): "
                "use smaller scoring values"
            )
        if self.first_dealer != "random":
            try:
                set_(self, "first_dealer", _check_int("first_dealer", self.first_dealer, 0, self.num_players - 1))
            except RulesError as error:
                raise RulesError(f"{error} (or \"random\")") from None

    def __deepcopy__(self, memo: dict) -> Rules:
        return self  # frozen and validated: a copy would be equal in every way

    # ------------------------------------------------------------------ derived
    @property
    def deck_size(self) -> int:
        """Cards in the deck: 52 plus the jokers."""
        return NUM_STANDARD_CARDS + self.jokers

    @property
    def num_cards(self) -> int:
        """Card actions: 52, or 54 with jokers (bid actions start here)."""
        return NUM_STANDARD_CARDS + (2 if self.jokers else 0)

    @property
    def num_rounds(self) -> int:
        """Hands in a match."""
        return len(self.hand_sizes)

    @property
    def max_bid(self) -> int:
        """The largest hand size of the match, the largest possible bid."""
        return max(self.hand_sizes)

    @property
    def num_actions(self) -> int:
        """Size of the action space: card actions then bids 0..max hand size (:func:`~blackout_env.game.rules_logic.bid_range`)."""
        return self.num_cards + len(bid_range(self.max_bid))

    @property
    def decisions_per_match(self) -> int:
        """Actions in one match: every seat bids, then plays its hand, in every hand (:func:`~blackout_env.game.rules_logic.decisions_per_hand`)."""
        return sum(decisions_per_hand(self.num_players, size) for size in self.hand_sizes)

    def largest_match_total(self) -> int:
        """The largest absolute match total these rules allow.

        The sum, over the hands of the match, of the largest ``|hand_score(bid, tricks)|``
        with ``0 <= bid, tricks <= hand size``.
        """
        largest = {
            size: max(abs(self.hand_score(bid, won)) for bid in range(size + 1) for won in range(size + 1))
            for size in set(self.hand_sizes)
        }
        return sum(largest[size] for size in self.hand_sizes)

    def hand_score(self, bid: int, tricks: int) -> int:
        """Points for one hand of a player who bid ``bid`` and took ``tricks``."""
        if bid == tricks:
            score = self.exact_bonus + self.points_per_bid * bid
        else:
            score = self.miss_points + self.miss_points_per_trick * abs(bid - tricks)
        return score + self.points_per_trick * tricks

    def trump_rule_suit(self, round_index: int) -> int | None:
        """Trump fixed by the rules alone for a hand (rotating or none); None otherwise."""
        if self.trump == "rotating":
            return ROTATING_TRUMPS[round_index % len(ROTATING_TRUMPS)]
        return None

    # -------------------------------------------------------------- load / save
    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Rules:
        """Rules from a mapping of field names; an unknown key is an error."""
        if not isinstance(data, Mapping):
            raise RulesError(f"rules: expected a mapping of options, got {type(data).__name__}")
        known = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k != "description"}
        unknown = sorted(set(values) - known)
        if unknown:
            raise RulesError(f"unknown rules option {unknown[0]!r}; known options: {', '.join(sorted(known))}")
        return cls(**values)

    def replace(self, **changes: Any) -> Rules:
        """A copy with some options changed (validated; unknown names rejected)."""
        data = self.to_dict()
        spec = getattr(self, "_hand_spec", None)
        if "hand_sizes" not in changes and spec is not None:
            # A pattern follows the new table: "full" with 5 players is 10..1, not 13..1.
            data["hand_sizes"] = spec
        if "max_hand_size" not in changes:
            if not getattr(self, "_max_given", True):
                data["max_hand_size"] = None  # the default follows the new table: 7 cards for 7 players
            elif getattr(self, "_max_full", False):
                data["max_hand_size"] = "full"  # so does "full": 10 cards for 5 players
        data.update(changes)
        return Rules.from_dict(data)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (hand sizes as a list), loadable by :meth:`from_dict`."""
        data = dataclasses.asdict(self)
        data["hand_sizes"] = list(self.hand_sizes)
        return data

    @classmethod
    def from_yaml(cls, path: str | os.PathLike[str]) -> Rules:
        """Rules from a YAML file of options (unknown keys are rejected)."""
        path = Path(path)
        data = read_yaml_file(path, "rules file", "a YAML file of rules options", RulesError)
        if data is None:  # (an empty or cut file would otherwise play the default rules unnoticed)
            raise RulesError(f"rules file {str(path)!r} holds no options (it is empty or only comments); "
                             "write {} for the default rules")
        try:
            return cls.from_dict(data)
        except RulesError as error:
            raise RulesError(f"{path}: {error}") from None

    def to_yaml(self, path: str | os.PathLike[str] | None = None) -> str:
        """The rules as YAML text; also written to ``path`` when given."""
        text = yaml.safe_dump(self.to_dict(), sort_keys=False, default_flow_style=None)
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    @classmethod
    def preset(cls, name: str) -> Rules:
        """A named preset from ``configs/rules`` (e.g. "standard", "no-trump")."""
        for directory in _presets_dirs():
            path = directory / f"{name}.yaml"
            if path.is_file():
                return cls.from_yaml(path)
        raise RulesError(f"unknown rules preset {name!r}; presets: {', '.join(preset_names())}")

    @classmethod
    def resolve(cls, spec: Rules | str | os.PathLike[str] | Mapping[str, Any] | None) -> Rules:
        """Rules from a Rules, a preset name, a YAML path, or a mapping of overrides on the default."""
        if spec is None:
            return cls()
        if isinstance(spec, Rules):
            return spec
        if isinstance(spec, Mapping):
            return cls.from_dict(spec)
        if isinstance(spec, (str, os.PathLike)):
            text = os.fspath(spec)
            if text.endswith((".yaml", ".yml")) or os.sep in text:
                return cls.from_yaml(text)
            return cls.preset(text)
        raise RulesError(f"rules: expected a Rules, a preset name, a YAML path or a mapping, got {spec!r}")

    # ------------------------------------------------------------------ words
    def describe(self) -> str:
        """The rules in words, one line per option."""
        sizes = ", ".join(str(s) for s in self.hand_sizes)
        lines = [
            f"Players: {self.num_players}, deck of {self.deck_size} cards"
            + (f" ({self.jokers} joker{'s' if self.jokers > 1 else ''})" if self.jokers else ""),
            f"Hands: {self.num_rounds} ({sizes} cards)",
        ]
        if self.first_dealer == "random":
            lines.append("First dealer: drawn at random; the deal passes to the left")
        else:
            lines.append(f"First dealer: seat {self.first_dealer}; the deal passes to the left")
        lines.append(
            "Dealer's hook: the dealer may not bid so that the bids total the tricks"
            if self.hook
            else "Dealer's hook: off (the dealer may bid anything)"
        )
        if self.trump == "turned":
            lines.append("Trump: the suit of the card turned after the deal")
            if self.no_card_trump == "none":
                lines.append("When no card is left to turn: no trump")
            else:
                lines.append("When no card is left to turn: the dealer's last card is shown and names trump")
        elif self.trump == "none":
            lines.append("Trump: none, all game")
        else:
            names = [SUIT_NAMES[s] if s is not None else "no trump" for s in ROTATING_TRUMPS]
            lines.append("Trump: rotates by hand: " + ", ".join(names))
        lines.append(
            "Leading trump: only once trump is broken, unless holding only trump"
            if self.lead_trump == "broken"
            else "Leading trump: any time"
        )
        made = f"{self.exact_bonus}"
        if self.points_per_bid:
            made += f" + {self.points_per_bid} x bid" if self.points_per_bid != 1 else " + bid"
        miss = str(self.miss_points) if self.miss_points or not self.miss_points_per_trick else ""
        if self.miss_points_per_trick:
            term = f"{self.miss_points_per_trick} x (tricks missed by)"
            miss = f"{miss} + {term}" if miss else term
        lines.append(f"Exact bid scores: {made}; a miss scores: {miss}")
        if self.points_per_trick:
            lines.append(f"Plus {self.points_per_trick} point(s) per trick taken")
        if self.jokers:
            lines.append(
                "Jokers: may be played to any trick and win it (the first of two wins); "
                "a led joker names no suit; a turned joker means no trump"
            )
        lines.append("Winner: the highest total after the last hand; equal totals share the win")
        return "\n".join(lines)
