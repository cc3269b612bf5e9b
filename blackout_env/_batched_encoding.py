"""The observation encoder of :mod:`blackout_env.encoding`, as array operations over many games.

One function per block of ``observation_layout(rules)``, each producing the
same values as :func:`blackout_env.encoding.encode` for the acting seat of
every game. The layout is read from the encoder, never copied: a block the
batched encoder does not know (or one it knows that the encoder dropped) stops
construction with a message, and the differential test compares every value.

Speed: the buffer is reused from step to step. One-hot blocks are given as the
positions of their ones; the ones of the previous step are cleared and the new
ones set with two scatters (a missing one, such as no turned card, points at a
dense cell that is written afterwards). Dense blocks are written whole: bitsets
(hand, played cards) are unpacked, scalars looked up in float32 tables.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from .encoding import NO_SUIT, observation_layout, score_scale
from .rules import Rules

if TYPE_CHECKING:  # pragma: no cover
    from .batched import BatchedBlackout, _Tables

__all__ = ["BatchedEncoder"]


class BatchedEncoder:
    """Writes the acting seat's observation of every game into one reused float32 buffer."""

    def __init__(self, rules: Rules, num_envs: int, tables: _Tables) -> None:
        self.rules = rules
        self._t = tables
        layout = observation_layout(rules)
        self.size = layout[-1].offset + layout[-1].size
        self.out = np.zeros((num_envs, self.size), dtype=np.float32)
        self._flat = self.out.reshape(-1)
        one_hot, dense = self._one_hot_blocks(), self._dense_blocks()
        known = set(one_hot) | set(dense)
        unknown = [block.name for block in layout if block.name not in known]
        dropped = sorted(known - {block.name for block in layout})
        if unknown or dropped:
            raise ValueError(
                "the batched observation encoder is out of date with blackout_env.encoding: "
                + (f"it does not know the blocks {unknown}" if unknown else "")
                + ("; " if unknown and dropped else "")
                + (f"the encoder no longer has the blocks {dropped}" if dropped else "")
            )
        # A missing one is written to a dense cell, which its dense block then overwrites.
        spare = next(block.offset for block in layout if block.name in dense)
        self._ones: list[tuple[Callable[[], np.ndarray], np.ndarray, int, np.ndarray | None]] = []
        self._dense: list[tuple[Callable[[np.ndarray], None], np.ndarray]] = []
        column = 0
        for block in layout:
            if block.name in one_hot:
                rows, width = (1, block.shape[0]) if len(block.shape) == 1 else block.shape
                # where[j * (width + 1) + k + 1]: the cell of row j's one at k (k = -1, none: the spare cell)
                where = block.offset + np.arange(rows)[:, None] * width + np.arange(-1, width)
                where[:, 0] = spare
                # Per-seat blocks: row j's entries start at j * (width + 1) in ``where``.
                row_starts = np.arange(rows) * (width + 1) + 1 if len(block.shape) > 1 else None
                self._ones.append((one_hot[block.name], where.ravel(), column, row_starts))
                column += rows
            else:
                view = self.out[:, block.offset : block.offset + block.size].reshape((num_envs, *block.shape))
                if not np.shares_memory(view, self.out):  # pragma: no cover - slicing a row never copies
                    raise AssertionError(f"block {block.name} is not a view of the observation buffer")
                self._dense.append((dense[block.name], view))
        # Cells of this step's ones and of the previous step's (cleared first); two buffers, swapped.
        self._cells = np.zeros((num_envs, column), dtype=np.int64)
        self._previous_cells = np.zeros((num_envs, column), dtype=np.int64)
        max_bid = rules.max_bid
        # Scaled values exactly as encode() computes them: Python division, rounded once to float32.
        self._per_max_bid = np.array([k / max_bid for k in range(max_bid + 1)], dtype=np.float32)
        last_round = max(rules.num_rounds - 1, 1)
        self._per_round = np.array([r / last_round for r in range(rules.num_rounds)], dtype=np.float32)
        self._score_scale = score_scale(rules)
        self._seat_offsets = np.arange(rules.num_players)
        self._games = np.arange(num_envs)
        self._row_starts = (self._games * self.size)[:, None]
        self._seat_rows = (self._games * rules.num_players)[:, None]

    def _one_hot_blocks(self) -> dict[str, Callable[[], np.ndarray]]:
        return {
            "trump": self._trump,
            "turned_card": self._turned_card,
            "phase": self._phase,
            "position": self._position,
            "to_act": self._to_act,
            "leader": self._leader,
            "bids": self._bids,
            "current_trick": self._current_trick,
            "led_suit": self._led_suit,
            "last_trick": self._last_trick,
            "last_trick_winner": self._last_trick_winner,
        }

    def _dense_blocks(self) -> dict[str, Callable[[np.ndarray], None]]:
        return {
            "hand": self._hand,
            "turned_card_held_by_dealer": self._turned_card_held_by_dealer,
            "hand_size": self._hand_size,
            "tricks_left": self._tricks_left,
            "round_index": self._round_index,
            "tricks_won": self._tricks_won,
            "bid_impossible": self._bid_impossible,
            "played": self._played,
            "voids": self._voids,
            "trump_broken": self._trump_broken,
            "scores": self._scores,
        }

    def encode(self, env: BatchedBlackout) -> np.ndarray:
        """The acting seat's observation in every game (the reused buffer, overwritten each call)."""
        self.env = env
        self.me = env.current_player.astype(np.int64)
        # seats[g, j]: the absolute seat j places to the observer's left (row j of per-seat blocks)
        seats = (self.me[:, None] + self._seat_offsets) % env.num_players
        self._flat_seats = self._seat_rows + seats
        self._relative_cache: dict[str, np.ndarray] = {}
        cells, self._previous_cells = self._previous_cells, self._cells
        for positions, where, start, row_starts in self._ones:
            if row_starts is None:
                cells[:, start] = where.take(positions().astype(np.intp) + 1)
            else:
                cells[:, start : start + len(row_starts)] = where.take(positions() + row_starts)
        cells += self._row_starts
        self._flat[self._previous_cells.ravel()] = 0.0
        self._flat[cells.ravel()] = 1.0
        self._cells = cells
        for write, view in self._dense:
            write(view)
        return self.out

    # ----------------------------------------------------------- helpers
    def _relative(self, name: str) -> np.ndarray:
        """The env's (games, seats) array ``name`` reordered to observer-first, clockwise."""
        cached = self._relative_cache.get(name)
        if cached is None:
            cached = self._relative_cache[name] = getattr(self.env, name).ravel()[self._flat_seats]
        return cached

    def _relative_seat(self, seat: np.ndarray) -> np.ndarray:
        """Absolute seats as seats relative to the observer; NONE stays -1."""
        return np.where(seat < 0, -1, (seat.astype(np.int64) - self.me) % self.env.num_players)

    @staticmethod
    def _bits(out: np.ndarray, bits: np.ndarray) -> None:
        """out[..., c] = bit c of the uint64 ``bits`` (one set per row of out)."""
        width = out.shape[-1]
        unpacked = np.unpackbits(bits.view(np.uint8).reshape(*bits.shape, 8), axis=-1, count=width, bitorder="little")
        out[...] = unpacked.reshape(out.shape)

    # ------------------------------------------------ one-hot blocks: positions of the ones
    def _trump(self) -> np.ndarray:
        trump = self.env.trump
        return np.where(trump < 0, NO_SUIT, trump)

    def _turned_card(self) -> np.ndarray:
        return self.env.turned_card

    def _phase(self) -> np.ndarray:
        # Batched games are always bidding or playing: a finished match is reset in the same step.
        return self.env.phase  # BID 0, PLAY 1: the columns of "bid" and "play"

    def _position(self) -> np.ndarray:
        env = self.env
        return (self.me - env.dealer - 1) % env.num_players

    def _to_act(self) -> np.ndarray:
        return np.zeros(len(self.me), dtype=np.int64)  # the observer is the seat to act

    def _leader(self) -> np.ndarray:
        return self._relative_seat(self.env.leader)

    def _bids(self) -> np.ndarray:
        # Column 0: not yet bid; column 1 + k: bid k.
        return self._relative("bids") + 1

    def _current_trick(self) -> np.ndarray:
        return self._relative("trick_cards")

    def _led_suit(self) -> np.ndarray:
        led = self.env.led_suit
        return np.where(led < 0, NO_SUIT, led)

    def _last_trick(self) -> np.ndarray:
        return self._relative("last_trick")

    def _last_trick_winner(self) -> np.ndarray:
        return self._relative_seat(self.env.last_trick_winner)

    # ------------------------------------------------------------ dense blocks
    def _hand(self, out: np.ndarray) -> None:
        self._bits(out, self.env.hands[self._games, self.me])

    def _turned_card_held_by_dealer(self, out: np.ndarray) -> None:
        out[:, 0] = self.env.turned_card_held_by_dealer

    def _hand_size(self, out: np.ndarray) -> None:
        out[:, 0] = self._per_max_bid[self.env.hand_size]

    def _tricks_left(self, out: np.ndarray) -> None:
        out[:, 0] = self._per_max_bid[self.env.hand_size - self.env.tricks_done]

    def _round_index(self, out: np.ndarray) -> None:
        out[:, 0] = self._per_round[self.env.round_index]

    def _tricks_won(self, out: np.ndarray) -> None:
        out[...] = self._per_max_bid[self._relative("tricks_won")]

    def _bid_impossible(self, out: np.ndarray) -> None:
        env = self.env
        bids = self._relative("bids")
        won = self._relative("tricks_won")
        left = (env.hand_size - env.tricks_done)[:, None]
        out[...] = (bids >= 0) & ((won > bids) | (won + left < bids))

    def _played(self, out: np.ndarray) -> None:
        self._bits(out, self._relative("played"))

    def _voids(self, out: np.ndarray) -> None:
        voids = self._relative("voids")
        out[...] = np.unpackbits(voids[..., None], axis=-1, count=4, bitorder="little")

    def _trump_broken(self, out: np.ndarray) -> None:
        out[:, 0] = self.env.trump_broken

    def _scores(self, out: np.ndarray) -> None:
        out[...] = self._relative("scores") / self._score_scale
