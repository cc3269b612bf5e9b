"""The universal observation: one fixed-size vector for every rule set the engine accepts.

The rules-sized observation of :mod:`blackout_env.game.encoding` changes its size and
the meaning of its columns with the table (seats, cards, the largest hand) and
says nothing about the rules in force. The universal observation serves one
policy for every table: the same blocks, sized for the largest table the engine
accepts (``MAX_PLAYERS`` = 7 seats, ``UNIVERSAL_CARDS`` = 54 card columns,
``MAX_HAND`` = 18, the largest hand: 54 cards // 3 players), then the seats
present and a rules block.

It is built from the rules-sized vector, never encoded separately:
:func:`universal_observation` scatters every entry of the rules-sized layout into
its slot (card ``c`` stays column ``c``; relative seat ``j`` stays row ``j``;
bid ``k`` stays column ``1 + k``), rescales the three per-hand counts to
``MAX_HAND`` (``hand_size``, ``tricks_left``, ``tricks_won``: count / 18) and
writes the rules block, which depends only on the rules and on the hand being
played (read back from the vector's ``round_index``). The environments and the
batched engine all call this one function, so their universal observations
agree bit for bit whenever their rules-sized ones do.

Blocks after the rules-sized ones (``universal_layout()`` gives offsets, sizes
and bounds in code):

=============================  ====  ======  ===================================================
block                          size  bounds  meaning
=============================  ====  ======  ===================================================
seat_present                   7     0..1    1 for the relative seats at the table (rows 0..n-1)
num_players                    5     0..1    one-hot: 3, 4, 5, 6, 7 players
hook                           1     0..1    1 when the dealer's hook is on
trump_rule                     3     0..1    one-hot: turned card, no trump, rotating
no_card_trump_dealer_last      1     0..1    1 when the dealer's last card names trump if none is left to turn
lead_trump_broken              1     0..1    1 when trump may be led only once broken
jokers                         3     0..1    one-hot: 0, 1, 2 jokers
scoring                        5     -1..1   exact_bonus, points_per_bid, miss_points, miss_points_per_trick,
                                             points_per_trick, divided by the largest absolute one
max_hand                       1     0..1    the largest hand of the match / 18
hands_to_come                  18    0..1    column h - 1: hands of h cards still to come after this one / hands in the match
match_position                 1     0..1    (hands dealt so far, this one included) / hands in the match
=============================  ====  ======  ===================================================

Absent seats (rows ``n..6`` of every per-seat block) are all 0, and
``seat_present`` says which rows are real. The scores stay "match total /
score_scale(rules)" and the scoring coefficients are scaled by their largest
absolute value: only their ratios change which play is best. The action space
stays the rules' own (the engine's actions); :func:`universal_action_mask` and
:func:`rules_actions` translate to and from the fixed universal action space
(``UNIVERSAL_NUM_ACTIONS`` = 73: card ``c`` is action ``c``, bid ``k`` is
action ``54 + k``) for a policy that acts at every table.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .._checks import check_choice
from .cards import NUM_STANDARD_CARDS
from .encoding import Block, _block_specs, laid_out, layout_bounds, observation_layout, observation_size
from .rules import LEAD_TRUMP_MODES, NO_CARD_TRUMP_MODES, SCORING_FIELDS, TRUMP_MODES, Rules

__all__ = [
    "MAX_HAND",
    "MAX_PLAYERS",
    "OBSERVATIONS",
    "UNIVERSAL_CARDS",
    "UNIVERSAL_NUM_ACTIONS",
    "observation_kind",
    "rules_actions",
    "universal_action_mask",
    "universal_actions",
    "universal_bounds",
    "universal_columns",
    "universal_layout",
    "universal_observation",
    "universal_size",
]

OBSERVATIONS = ("rules", "universal")
"""The observation kinds every environment accepts: the rules-sized layout (default) or the universal one."""
MIN_PLAYERS = 3
MAX_PLAYERS = 7
MAX_JOKERS = 2
UNIVERSAL_CARDS = NUM_STANDARD_CARDS + MAX_JOKERS
MAX_HAND = (NUM_STANDARD_CARDS + MAX_JOKERS) // MIN_PLAYERS
"""The largest hand any rules allow: the whole deck with two jokers shared by three players."""
UNIVERSAL_NUM_ACTIONS = UNIVERSAL_CARDS + MAX_HAND + 1
RESCALED = ("hand_size", "tricks_left", "tricks_won")
"""Blocks holding a count / largest hand: rescaled from the rules' largest hand to MAX_HAND."""


def observation_kind(observation: str) -> str:
    """``observation`` checked: "rules" or "universal" (a ValueError names the choices)."""
    return check_choice("observation", observation, OBSERVATIONS)


def _rules_block_specs() -> list[tuple[str, tuple[int, ...], float, float, str]]:
    return [
        ("seat_present", (MAX_PLAYERS,), 0.0, 1.0, "1 for the relative seats at the table"),
        ("num_players", (MAX_PLAYERS - MIN_PLAYERS + 1,), 0.0, 1.0, "one-hot: 3, 4, 5, 6, 7 players"),
        ("hook", (1,), 0.0, 1.0, "1 when the dealer's hook is on"),
        ("trump_rule", (len(TRUMP_MODES),), 0.0, 1.0, "one-hot: turned card, no trump, rotating"),
        ("no_card_trump_dealer_last", (1,), 0.0, 1.0, "1 when the dealer's last card names trump if none is turned"),
        ("lead_trump_broken", (1,), 0.0, 1.0, "1 when trump may be led only once broken"),
        ("jokers", (MAX_JOKERS + 1,), 0.0, 1.0, "one-hot: 0, 1, 2 jokers"),
        ("scoring", (len(SCORING_FIELDS),), -1.0, 1.0, "the five scoring coefficients / the largest absolute one"),
        ("max_hand", (1,), 0.0, 1.0, "the largest hand of the match / 18"),
        ("hands_to_come", (MAX_HAND,), 0.0, 1.0, "per hand size 1..18, hands still to come / hands in the match"),
        ("match_position", (1,), 0.0, 1.0, "hands dealt so far (this one included) / hands in the match"),
    ]


@lru_cache(maxsize=1)
def _universal_layout() -> tuple[Block, ...]:
    return laid_out(_block_specs(MAX_PLAYERS, UNIVERSAL_CARDS, MAX_HAND) + _rules_block_specs())


def universal_layout() -> list[Block]:
    """The blocks of the universal observation, in order (the same for every rule set)."""
    return list(_universal_layout())


def universal_size() -> int:
    """Length of the universal observation (the same for every rule set)."""
    last = _universal_layout()[-1]
    return last.offset + last.size


@lru_cache(maxsize=1)
def universal_bounds() -> tuple[np.ndarray, np.ndarray]:
    """Per-element (low, high) float32 arrays of the universal observation (read-only)."""
    return layout_bounds(_universal_layout(), universal_size())


class _ColumnMap:
    """Where each entry of one rule set's observation goes in the universal one, and its rules block."""

    def __init__(self, rules: Rules) -> None:
        target = {block.name: block for block in _universal_layout()}
        copy_src: list[np.ndarray] = []
        copy_dst: list[np.ndarray] = []
        scaled_src: list[np.ndarray] = []
        scaled_dst: list[np.ndarray] = []
        for block in observation_layout(rules):
            to = target[block.name]
            rows, width = (1, block.shape[0]) if len(block.shape) == 1 else block.shape
            to_width = to.shape[0] if len(to.shape) == 1 else to.shape[1]
            row, column = np.divmod(np.arange(block.size), width)
            src = block.offset + np.arange(block.size)
            dst = to.offset + row * to_width + column
            (scaled_src if block.name in RESCALED else copy_src).append(src)
            (scaled_dst if block.name in RESCALED else copy_dst).append(dst)
        copy_src, copy_dst = np.concatenate(copy_src), np.concatenate(copy_dst)
        # The copies as contiguous runs (a slice copy is cheaper than fancy indexing), and the columns
        # nothing is copied to, as runs to clear.
        self.copy_runs = _runs(copy_dst, copy_src)
        untouched = np.setdiff1d(np.arange(universal_size()), copy_dst)
        self.zero_runs = [(start, length) for start, _, length in _runs(untouched, untouched)]
        self.scaled_src, self.scaled_dst = np.concatenate(scaled_src), np.concatenate(scaled_dst)
        self.max_bid = rules.max_bid
        layout = {block.name: block for block in observation_layout(rules)}
        self.round_column = layout["round_index"].offset
        self.last_round = max(rules.num_rounds - 1, 1)
        self.rules_size = observation_size(rules)

        # The rules block: the same for every hand except hands_to_come and match_position.
        n = rules.num_players
        constant = np.zeros(universal_size(), dtype=np.float64)

        def put(name: str, values) -> None:
            block = target[name]
            constant[block.offset : block.offset + block.size] = values

        put("seat_present", np.arange(MAX_PLAYERS) < n)
        put("num_players", np.arange(MIN_PLAYERS, MAX_PLAYERS + 1) == n)
        put("hook", float(rules.hook))
        put("trump_rule", np.array(TRUMP_MODES) == rules.trump)
        put("no_card_trump_dealer_last", float(rules.no_card_trump == NO_CARD_TRUMP_MODES[1]))
        put("lead_trump_broken", float(rules.lead_trump == LEAD_TRUMP_MODES[1]))
        put("jokers", np.arange(MAX_JOKERS + 1) == rules.jokers)
        coefficients = np.array([getattr(rules, name) for name in SCORING_FIELDS], dtype=np.float64)
        largest = np.abs(coefficients).max()
        put("scoring", coefficients / largest if largest else coefficients)
        put("max_hand", rules.max_bid / MAX_HAND)
        self.constant_columns = np.flatnonzero(constant)
        self.constant_values = constant[self.constant_columns].astype(np.float32)

        rounds = rules.num_rounds
        to_come, position = target["hands_to_come"], target["match_position"]
        self.per_hand_columns = np.r_[to_come.offset : to_come.offset + to_come.size, position.offset]
        per_hand = np.zeros((rounds, to_come.size + 1), dtype=np.float64)
        for r in range(rounds):
            for size in rules.hand_sizes[r + 1 :]:
                per_hand[r, size - 1] += 1
            per_hand[r, : to_come.size] /= rounds
            per_hand[r, -1] = (r + 1) / rounds
        self.per_hand_values = per_hand.astype(np.float32)


def _runs(dst: np.ndarray, src: np.ndarray) -> list[tuple[int, int, int]]:
    """``(dst start, src start, length)`` of the runs where both index arrays count up by one."""
    breaks = np.flatnonzero((np.diff(dst) != 1) | (np.diff(src) != 1)) + 1
    starts, ends = np.r_[0, breaks], np.r_[breaks, len(dst)]
    return [(int(dst[a]), int(src[a]), int(b - a)) for a, b in zip(starts, ends)]


@lru_cache(maxsize=256)
def _column_map(rules: Rules) -> _ColumnMap:
    return _ColumnMap(rules)


def universal_columns(rules: Rules) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where every column of the rules' own observation lands in the universal one.

    Returns ``(source, destination, scale)``, one entry per
    rules-sized column: ``universal[destination] == scale * rules_sized[source]`` for every
    observation :func:`universal_observation` makes (``scale`` is ``max_bid / MAX_HAND`` for the
    rescaled counts, 1 elsewhere). The universal columns that no entry names hold the rules block,
    absent seats and card columns these rules lack. A network's first layer carries over with it:
    ``W_universal[:, destination] = W_rules[:, source] / scale`` reads the same value.
    """
    columns = _column_map(rules)
    copy_src = np.concatenate([np.arange(src, src + length) for _, src, length in columns.copy_runs])
    copy_dst = np.concatenate([np.arange(dst, dst + length) for dst, _, length in columns.copy_runs])
    source = np.concatenate([copy_src, columns.scaled_src])
    destination = np.concatenate([copy_dst, columns.scaled_dst])
    scale = np.concatenate([np.ones(len(copy_src)), np.full(len(columns.scaled_src), columns.max_bid / MAX_HAND)])
    order = np.argsort(source, kind="stable")
    return source[order], destination[order], scale[order]


def universal_observation(
    observation: np.ndarray, rules: Rules, out: np.ndarray | None = None, reuse: bool = False
) -> np.ndarray:
    """The universal observation of rules-sized observations (one vector, or a batch with one per row).

    ``observation`` is float32 ``(observation_size(rules),)`` or ``(batch, observation_size(rules))``
    as :func:`blackout_env.game.encoding.encode` and the batched engine make them; ``out`` (float32, the
    universal shape) is overwritten and returned when given, else a new array is. ``reuse=True``
    promises that ``out`` holds an earlier result for the same rules and nothing else wrote to it:
    its columns that are always 0 under these rules are then not cleared again (a buffer reused at
    every step, as the batched engine does).
    """
    columns = _column_map(rules)
    observation = np.asarray(observation)
    single = observation.ndim == 1
    batch = observation[None, :] if single else observation
    if batch.ndim != 2 or batch.shape[1] != columns.rules_size:
        raise ValueError(
            f"universal_observation: expected observations of size {columns.rules_size} for these rules, "
            f"got shape {observation.shape}"
        )
    shape = (batch.shape[0], universal_size())
    if out is None:
        result = np.empty(shape, dtype=np.float32)
        reuse = False
    else:
        result = out[None, :] if single else out
        if result.dtype != np.float32 or result.shape != shape:
            raise ValueError(f"universal_observation: out must be float32 of shape {shape}, got {out.dtype} {out.shape}")
    if not reuse:
        for start, length in columns.zero_runs:
            result[:, start : start + length] = 0.0
    for start, source, length in columns.copy_runs:
        result[:, start : start + length] = batch[:, source : source + length]
    # count / max_bid -> count / MAX_HAND: the counts are small integers, recovered exactly.
    counts = np.rint(batch[:, columns.scaled_src].astype(np.float64) * columns.max_bid)
    result[:, columns.scaled_dst] = counts / MAX_HAND
    result[:, columns.constant_columns] = columns.constant_values
    hand = np.rint(batch[:, columns.round_column].astype(np.float64) * columns.last_round).astype(np.intp)
    result[:, columns.per_hand_columns] = columns.per_hand_values[hand]
    return result[0] if single else result


@lru_cache(maxsize=256)
def _action_columns(rules: Rules) -> np.ndarray:
    """Universal action of each of the rules' actions: cards keep their number, bid k is 54 + k."""
    actions = np.arange(rules.num_actions)
    return np.where(actions < rules.num_cards, actions, actions - rules.num_cards + UNIVERSAL_CARDS)


@lru_cache(maxsize=256)
def _rules_action_table(rules: Rules) -> np.ndarray:
    table = np.full(UNIVERSAL_NUM_ACTIONS, -1, dtype=np.int64)
    table[_action_columns(rules)] = np.arange(rules.num_actions)
    return table


def universal_action_mask(mask: np.ndarray, rules: Rules) -> np.ndarray:
    """Rules-sized int8 masks (one, or a batch) in the universal action space (``UNIVERSAL_NUM_ACTIONS``)."""
    mask = np.asarray(mask)
    result = np.zeros((*mask.shape[:-1], UNIVERSAL_NUM_ACTIONS), dtype=np.int8)
    result[..., _action_columns(rules)] = mask
    return result


def universal_actions(actions: np.ndarray, rules: Rules) -> np.ndarray:
    """The rules' actions as universal actions (card c stays c, bid k becomes 54 + k)."""
    return _action_columns(rules)[np.asarray(actions)]


def rules_actions(actions: np.ndarray, rules: Rules, missing: int | None = None) -> np.ndarray:
    """Universal actions as the rules' actions.

    A universal action these rules do not have (or one outside the universal space) is a ValueError,
    or becomes ``missing`` when that is given (for a caller that reports illegal actions itself).
    """
    actions = np.asarray(actions)
    if missing is not None:
        inside = (actions >= 0) & (actions < UNIVERSAL_NUM_ACTIONS)
        return np.where(inside, _rules_action_table(rules)[np.where(inside, actions, 0)], missing)
    if actions.size and (actions.min() < 0 or actions.max() >= UNIVERSAL_NUM_ACTIONS):
        raise ValueError(f"universal actions are 0..{UNIVERSAL_NUM_ACTIONS - 1}, got {actions.min()}..{actions.max()}")
    result = _rules_action_table(rules)[actions]
    if actions.size and result.min() < 0:
        bad = int(actions.reshape(-1)[np.flatnonzero(result.reshape(-1) < 0)[0]])
        raise ValueError(f"universal action {bad} does not exist under these rules ({rules.num_cards} cards, bids 0..{rules.max_bid})")
    return result
