"""The full-information state: every hand and everything public, as one flat float32 vector.

For centralised critics, oracle (perfect-information) inputs and search: the
AEC env's ``state()`` and ``state_space``, the Gym env's ``state()``. It is
never part of a player's observation.

Layout (absolute seats: seat 0 first, then clockwise; ``n`` players, ``C``
card actions, 52 or 54 with jokers):

=========  ========================  =====  =============================================================
block      shape                     range  what
=========  ========================  =====  =============================================================
hands      n x C                     0..1   row ``s``: 1 at every card seat ``s`` holds now
table      observation_size(rules)   as an  the observation of seat 0 (:mod:`blackout_env.game.encoding`): the
                                     obs    public table (trump, turned card, phase, bids, tricks, current
                                            and last trick, cards played, voids, scores, round, the seat to
                                            act); its ``hand`` block repeats row 0 of ``hands``
=========  ========================  =====  =============================================================

``state_layout(rules)`` gives the blocks with offsets: ``hands`` first, then the
observation's blocks under the names ``table.<block>`` (so
``table.bids`` is seat 0's view of the bids: seat 0 first, then clockwise,
which is the absolute seat order). The cards still in the deck (neither dealt
nor turned) are not part of the state: nobody can know them, and the game
never reveals them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .encoding import Block, encode, layout_bounds, observation_layout
from .rules import Rules
from .view import PlayerView

__all__ = ["encode_state", "hands_vector", "state_bounds", "state_layout", "state_size"]


def state_layout(rules: Rules | str | None = None) -> list[Block]:
    """The blocks of the state vector, in order (see the module docstring)."""
    rules = Rules.resolve(rules)
    n, c = rules.num_players, rules.num_cards
    hands = Block("hands", 0, n * c, 0.0, 1.0, (n, c), "per seat (absolute), 1 at every card it holds")
    table = [
        block._replace(name=f"table.{block.name}", offset=block.offset + n * c) for block in observation_layout(rules)
    ]
    return [hands, *table]


def state_size(rules: Rules | str | None = None) -> int:
    """Length of the state vector under these rules."""
    last = state_layout(rules)[-1]
    return last.offset + last.size


def state_bounds(rules: Rules | str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per-element (low, high) float32 arrays of the state (fresh arrays)."""
    low, high = layout_bounds(state_layout(rules), state_size(rules))
    return low.copy(), high.copy()


def hands_vector(rules: Rules, hands: Sequence[Sequence[int]]) -> np.ndarray:
    """The ``hands`` block: float32 ``n * C``, row ``s`` 1 at every card seat ``s`` holds."""
    n, c = rules.num_players, rules.num_cards
    if len(hands) != n:
        raise ValueError(f"hands: expected one hand per seat ({n}), got {len(hands)}")
    block = np.zeros(n * c, dtype=np.float32)
    for seat, hand in enumerate(hands):
        block[seat * c + np.asarray(hand, dtype=np.intp)] = 1.0
    return block


def encode_state(hands: Sequence[Sequence[int]], seat0_view: PlayerView) -> np.ndarray:
    """The state vector from every seat's hand and seat 0's view of the table (the reference)."""
    return np.concatenate([hands_vector(seat0_view.rules, hands), encode(seat0_view)])
