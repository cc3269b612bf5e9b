"""The compiled observation encoder of :mod:`blackout_env.game.encoding`: every game of the batched engine, or one game.

The values come from one compiled loop over games
(:func:`blackout_env.batched._kernels.encode`), which clears each row and writes
its entries straight into the float32 observation. What the loop reads besides
the engine's state is built here: the block offsets and widths, read from
:func:`blackout_env.game.encoding.observation_layout` (never copied: a block the
kernel does not know, or one it knows that the layout dropped, stops
construction with a message), and the scaled values and the bust test as
tables computed by the reference's own functions. Nothing is carried from one
step to the next, so copies and pickles of the engine stay exact; the
differential tests compare every value with :func:`blackout_env.game.encoding.encode`.

The AEC env's one game runs on the compiled core too (a one-game state); its
observations come from the same loop, run on that game as a batch of one
(``_kernels.env_step`` and ``env_observe``, with the inputs of
:func:`one_game_encoding`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..game.encoding import NO_SUIT, observation_layout, score_scale
from ..game.rules import Rules
from ..game.rules_logic import bid_out_of_reach
from ._compiled import kernels

if TYPE_CHECKING:  # pragma: no cover
    from .engine import BatchedBlackout

__all__ = ["BatchedEncoder", "one_game_encoding"]

class BatchedEncoder:
    """Writes the acting seat's observation of every game into a float32 array (``out`` or its own buffer)."""

    def __init__(self, rules: Rules, num_envs: int) -> None:
        self.rules = rules
        layout = observation_layout(rules)
        self.size = layout[-1].offset + layout[-1].size
        self.num_envs = num_envs
        self.out = np.zeros((num_envs, self.size), dtype=np.float32)
        """The encoder's own float32 buffer (what :meth:`encode` fills when given no ``out``)."""
        names = kernels().ENCODER_BLOCKS
        blocks = {block.name: block for block in layout}
        unknown = [name for name in blocks if name not in names]
        dropped = [name for name in names if name not in blocks]
        if unknown or dropped:
            raise ValueError(
                "the compiled observation encoder is out of date with blackout_env.game.encoding: "
                + (f"it does not know the blocks {unknown}" if unknown else "")
                + ("; " if unknown and dropped else "")
                + (f"the encoder no longer has the blocks {dropped}" if dropped else "")
            )
        self._offsets = np.array([blocks[name].offset for name in names], dtype=np.int64)
        self._wrap = np.arange(3 * rules.num_players) % rules.num_players  # the kernel's k % n, for k < 3n
        self._num_cards = blocks["hand"].shape[0]
        self._bid_width = blocks["bids"].shape[1]
        max_bid = rules.max_bid
        # Scaled values exactly as encode() computes them: Python division, rounded once to float32.
        self._per_max_bid = np.array([k / max_bid for k in range(max_bid + 1)], dtype=np.float32)
        last_round = max(rules.num_rounds - 1, 1)
        self._per_round = np.array([r / last_round for r in range(rules.num_rounds)], dtype=np.float32)
        self._score_scale = score_scale(rules)
        # The bid_impossible entry of every (bid + 1, won, left), flat: rules_logic.bid_out_of_reach on
        # every count of one hand; 0 in the first rows (no bid yet, bid -1).
        counts = np.arange(max_bid + 1)
        reach = bid_out_of_reach(counts[:, None, None], counts[None, :, None], counts[None, None, :])
        impossible = np.zeros((counts.size + 1, counts.size, counts.size), dtype=np.float32)
        impossible[1:] = reach
        self._impossible = impossible.ravel()

    def encode(self, env: BatchedBlackout, out: np.ndarray | None = None) -> np.ndarray:
        """The acting seat's observation in every game, written into ``out`` (default: the encoder's buffer)."""
        out = self.out if out is None else out
        kernels().encode(
            out, env._state, self._offsets, self._wrap, env.num_players, self._num_cards, self._bid_width, NO_SUIT,
            self._per_max_bid, self._per_round, self._score_scale, self._impossible,
        )
        return out


_ONE_GAME: dict[Rules, tuple[np.ndarray, np.ndarray]] = {}


def one_game_encoding(rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    """The encoder's inputs for one game on the compiled core (the AEC env's), built once per rules value.

    (ints, floats): the block offsets and sizes of :class:`BatchedEncoder` as one int64 array
    (``_kernels.ENCODER_BLOCKS``' order, ``ENV_SIZES``, then the seat wrap-around table) and its scaled values and
    bust test as one float32 array (read by ``_kernels.env_step`` and ``env_observe``).
    """
    cached = _ONE_GAME.get(rules)
    if cached is None:
        e = BatchedEncoder(rules, 1)
        sizes = {
            "bid_width": e._bid_width, "no_suit": NO_SUIT, "score_scale": e._score_scale,
            "counts": len(e._per_max_bid), "rounds": len(e._per_round),
        }
        ints = np.array(
            [*e._offsets.tolist(), *(sizes[name] for name in kernels().ENV_SIZES), *e._wrap.tolist()], dtype=np.int64
        )
        floats = np.concatenate([e._per_max_bid, e._per_round, e._impossible]).astype(np.float32)
        cached = _ONE_GAME[rules] = (ints, floats)
    return cached
