"""Training over a distribution of tables: many rule sets at once, one universal network.

:class:`TablesVecEnv` is a :class:`~blackout_training.ppo.vec_env.VecEnv` made of
``groups`` batched engines (:class:`~blackout_training.ppo.vec_env.BatchedVecEnv`),
each playing its own rules with universal observations, masks and actions
(:mod:`blackout_env.game.universal`); one ``step`` steps them all and concatenates
their games. Each group draws its rules from ``tables`` (group ``i`` from entry
``i % len(tables)``) when it starts, and draws again every time its matches end:
every match under given rules lasts the same number of decisions, so all games
of a group finish together and the group restarts with new rules at that step.

An entry of ``tables`` is a preset name or a rules YAML file (always that
table), ``"preset"`` (a preset drawn per match, at a player count drawn from
3..7 where its hand sizes allow), ``"random"`` (a random valid rule set per
match: :func:`random_rules`), ``"wide"`` (a random valid rule set over every
option's whole documented range, a quarter of them per-trick tables:
:func:`wide_rules`) or ``"per-trick"`` (one of the per-trick family only, where
points per trick taken outweigh the bid: :func:`per_trick_rules`) or ``"long-hands"`` (one with a hand
longer than any preset's, 11 cards or more at 3 or 4 players, half of them per-trick: :func:`long_hand_rules`). Seats are padded to ``MAX_PLAYERS`` columns in the
per-seat arrays (an absent seat never acts and scores 0); ``players`` holds
each game's table size.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from blackout_env import PlayerView, Rules, RulesError, preset_names
from blackout_env.game.universal import MAX_PLAYERS

from ..evaluation.held_out import held_out_table
from .returns import hand_scale
from .vec_env import BatchedVecEnv, GameBatch

if TYPE_CHECKING:
    from blackout_env.batched import BatchedBlackout

__all__ = [
    "DRAWN_TABLES", "TablesVecEnv", "check_table", "draw_rules", "long_hand_rules", "match_steps", "per_trick_rules",
    "random_rules", "wide_rules",
]

DRAWN_TABLES = ("preset", "random", "wide", "per-trick", "long-hands")
"""Entries of ``env.tables`` that draw a new rule set for every match."""
# Scoring coefficients a random table draws from (each independently), around the presets' values.
SCORING_CHOICES = {
    "exact_bonus": (5, 10, 10, 20),
    "points_per_bid": (0, 1, 1, 2),
    "miss_points": (0, 0, -5, -10),
    "miss_points_per_trick": (0, 0, -1, -2),
    "points_per_trick": (0, 0, 0, 1),
}
RANDOM_MAX_HAND = 13
"""The largest hand of a random table's pattern (a long hand schedule is long to play)."""


def random_rules(rng: np.random.Generator) -> Rules:
    """A random valid rule set: 3..7 players, 0..2 jokers, every trump, lead and hook rule, varied scoring and hands."""
    players = int(rng.integers(3, 8))
    jokers = int(rng.choice([0, 0, 1, 2]))
    full = (52 + jokers) // players
    pattern = str(rng.choice(["down", "up", "up-down", "down-up", "short", "standard", "long"]))
    return Rules(
        num_players=players,
        hand_sizes=pattern,
        max_hand_size=int(rng.integers(1, min(full, RANDOM_MAX_HAND) + 1)),
        hook=bool(rng.random() < 0.7),
        trump=str(rng.choice(["turned", "turned", "none", "rotating"])),
        no_card_trump=str(rng.choice(["none", "dealer_last"])),
        lead_trump=str(rng.choice(["any", "broken"])),
        jokers=jokers,
        first_dealer="random",
        **{name: int(rng.choice(values)) for name, values in SCORING_CHOICES.items()},
    )


WIDE_PER_TRICK = 0.25
"""The share of ``"wide"`` tables drawn from the per-trick family (points per trick taken outweigh the bid)."""


def wide_rules(rng: np.random.Generator) -> Rules:
    """A random valid rule set over every option's whole range: hands up to what the deck deals, scoring -10..20.

    The same function as the held-out tables (:func:`~blackout_training.evaluation.held_out.held_out_table`),
    on training's own stream: ``rng`` is the run's ``default_rng``, which never carries the held-out spawn key.
    """
    return held_out_table(rng, per_trick=bool(rng.random() < WIDE_PER_TRICK))


def per_trick_rules(rng: np.random.Generator) -> Rules:
    """A random valid rule set of the per-trick family (as :func:`wide_rules`, on training's stream)."""
    return held_out_table(rng, per_trick=True)


LONG_HAND = 11
"""A ``"long-hands"`` table deals at least one hand of this many cards (longer than any preset's: 3 or 4 players)."""
LONG_HANDS_PER_TRICK = 0.5
"""The share of ``"long-hands"`` tables drawn from the per-trick family."""


def long_hand_rules(rng: np.random.Generator) -> Rules:
    """A random valid rule set (as :func:`wide_rules`, half of them per-trick) with a hand of at least ``LONG_HAND`` cards.

    Drawn until one has such a hand (about one draw in six), on training's stream.
    """
    while True:
        rules = held_out_table(rng, per_trick=bool(rng.random() < LONG_HANDS_PER_TRICK))
        if max(rules.hand_sizes) >= LONG_HAND:
            return rules


def draw_rules(table: str, rng: np.random.Generator) -> Rules:
    """The rules of one match for an entry of ``env.tables`` (see the module docstring)."""
    if table == "random":
        return random_rules(rng)
    if table == "wide":
        return wide_rules(rng)
    if table == "per-trick":
        return per_trick_rules(rng)
    if table == "long-hands":
        return long_hand_rules(rng)
    if table == "preset":
        rules = Rules.preset(str(rng.choice(preset_names())))
        try:
            return rules.replace(num_players=int(rng.integers(3, 8)))
        except RulesError:  # its hands do not fit that table: the preset's own players
            return rules
    return Rules.resolve(table)


def check_table(table: str) -> None:
    """Raise ValueError naming ``table`` when it is neither one of ``DRAWN_TABLES`` nor valid rules."""
    if table in DRAWN_TABLES:
        return
    try:
        Rules.resolve(table)
    except (RulesError, ValueError) as error:
        raise ValueError(f"table {table!r}: {error} (or one of {', '.join(DRAWN_TABLES)})") from None


def match_steps(rules: Rules) -> int:
    """Decisions in one match: every seat bids, then plays its hand, in every hand."""
    return rules.decisions_per_match


class TablesVecEnv:
    """Several batched engines with different rules, universal observations, stepped together (see the module).

    Args:
        tables: entries as in the module docstring.
        num_envs: games in all; split evenly into ``groups``.
        groups: batched engines (each with one table at a time).
        rules: the reference rules (the run's ``env.rules``), kept as ``rules``.
    """

    observation = "universal"
    num_players = MAX_PLAYERS

    def __init__(self, tables: list[str], num_envs: int, groups: int, rules: Rules) -> None:
        if not tables:
            raise ValueError("tables: name at least one table")
        for table in tables:
            check_table(table)
        if groups < 1 or num_envs % groups:
            raise ValueError(f"num_envs ({num_envs}) must be a positive multiple of the table groups ({groups})")
        self.tables = list(tables)
        self.num_envs = num_envs
        self.rules = rules
        self.group_size = num_envs // groups
        self.groups: list[BatchedVecEnv] = []
        self._steps_left: list[int] = []
        self.players = np.zeros(num_envs, dtype=np.int64)
        self.hand_scales = np.ones(num_envs, dtype=np.float32)  # each game's table's hand_scale (env.reward_norm)
        self._rng = np.random.default_rng(0)

    def _start_group(self, i: int) -> GameBatch:
        rules = draw_rules(self.tables[i % len(self.tables)], self._rng)
        group = BatchedVecEnv(rules, self.group_size, "universal")
        batch = group.reset(seed=int(self._rng.integers(2**31)))
        if i < len(self.groups):
            self.groups[i], self._steps_left[i] = group, match_steps(rules)
        else:
            self.groups.append(group)
            self._steps_left.append(match_steps(rules))
        self.players[self._slice(i)] = rules.num_players
        self.hand_scales[self._slice(i)] = hand_scale(rules)
        return batch

    def _slice(self, i: int) -> slice:
        return slice(i * self.group_size, (i + 1) * self.group_size)

    def reset(self, seed: int, decks: np.ndarray | None = None) -> GameBatch:
        """New tables and matches in every group (fixed ``decks`` do not fit several tables: a ValueError)."""
        if decks is not None:
            raise ValueError("decks: a table distribution deals its own decks (one rule set per group)")
        self._rng = np.random.default_rng(seed)
        self.groups, self._steps_left = [], []
        count = self.num_envs // self.group_size
        return self._concat([self._start_group(i) for i in range(count)], [None] * count)

    def step(self, actions: np.ndarray) -> GameBatch:
        """One universal action per game; a group whose matches all ended restarts with a new table."""
        actions = np.asarray(actions)
        steps, fresh = [], []
        for i, group in enumerate(self.groups):
            steps.append(group.step(actions[self._slice(i)]))
            self._steps_left[i] -= 1
            # The matches ended (all at once, in this step): the next decisions belong to a new table.
            fresh.append(self._start_group(i) if self._steps_left[i] == 0 else None)
        return self._concat(steps, fresh)

    def _concat(self, steps: list[GameBatch], fresh: list[GameBatch | None]) -> GameBatch:
        def padded(x: np.ndarray) -> np.ndarray:
            return np.pad(x, ((0, 0), (0, MAX_PLAYERS - x.shape[1])))

        shown = [step if new is None else new for step, new in zip(steps, fresh)]
        return GameBatch(
            current_player=np.concatenate([b.current_player for b in shown]),
            observation=np.concatenate([b.observation for b in shown]),
            action_mask=np.concatenate([b.action_mask for b in shown]),
            rewards=np.concatenate([padded(b.rewards) for b in steps]),
            hand_over=np.concatenate([b.hand_over for b in steps]),
            bid_made=np.concatenate([padded(b.bid_made) for b in steps]),
        )

    def view(self, game: int, player: int) -> PlayerView:
        """What ``player`` may know in game ``game`` (its own table's view; for baseline-bot opponents)."""
        return self.groups[game // self.group_size].view(game % self.group_size, player)

    def engines(self) -> list[tuple[int, BatchedBlackout]]:
        """Each group's batched engine (its own table's rules and actions) with the index of its first game."""
        return [(i * self.group_size, group.engine) for i, group in enumerate(self.groups)]

    def hidden_hands(self, player: np.ndarray) -> np.ndarray:
        """For the oracle critic (training only): every other seat's hand, clockwise from ``player`` in each game,
        in the universal layout that every table shares
        (:func:`~blackout_training.agents.policy_net.universal_oracle_inputs`)."""
        player = np.asarray(player)
        return np.concatenate([group.hidden_hands(player[self._slice(i)]) for i, group in enumerate(self.groups)])

    def table_rules(self) -> list[Rules]:
        """The rules each group plays now."""
        return [group.rules for group in self.groups]
