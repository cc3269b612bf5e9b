"""The observation encoder of :mod:`blackout_env.encoding`, as array operations over many games.

One function per block of ``observation_layout(rules)``, each producing the
same values as :func:`blackout_env.encoding.encode` for the acting seat of
every game. The layout is read from the encoder, never copied: a block the
batched encoder does not know (or one it knows that the encoder dropped) stops
construction with a message, and the differential test compares every value.

Speed (a step writes ``num_envs x observation_size`` floats, so memory traffic
is what counts): the 0/1 entries, which are nearly all of the vector, are built
in a ``uint8`` buffer a quarter of the float32 size, which is cleared whole and
then written: one-hot blocks as one scatter of the positions of their ones (a
missing one, such as no turned card, points at a cell of the first dense block,
written afterwards), bitsets (hand, played cards, voids) unpacked in place. One
conversion then writes the float32 observation (the caller's array: no second
copy), and the few scaled blocks (hand size, tricks, round, scores) are
looked up in float32 tables into it. Nothing is carried from one step to the
next: every call rebuilds every entry, so the encoder has no state to keep in
sync (copies and pickles of the engine stay exact).

With ``compiled=True`` the same values come from one numba loop over games
(:func:`blackout_env._batched_kernels.encode`), which clears each row and
writes its entries straight into the float32 array; it reads the block
offsets and widths from the same layout and the same scaled-value tables.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ._compiled import kernels
from .encoding import NO_SUIT, observation_layout, score_scale
from .rules import Rules
from .rules_logic import bid_out_of_reach

if TYPE_CHECKING:  # pragma: no cover
    from .batched import BatchedBlackout, _Tables

__all__ = ["BatchedEncoder"]


class BatchedEncoder:
    """Writes the acting seat's observation of every game into a float32 array (``out`` or its own buffer)."""

    def __init__(self, rules: Rules, num_envs: int, tables: _Tables, compiled: bool = False) -> None:
        self.rules = rules
        self._t = tables
        self.compiled = compiled
        layout = observation_layout(rules)
        self.size = layout[-1].offset + layout[-1].size
        self.num_envs = num_envs
        self.out = np.zeros((num_envs, self.size), dtype=np.float32)
        """The encoder's own float32 buffer (what :meth:`encode` fills when given no ``out``)."""
        # The 0/1 entries of the last observations (scaled blocks hold 0 here); the compiled loop needs none.
        self.bits = np.zeros((0 if compiled else num_envs, self.size), dtype=np.uint8)
        one_hot, bit_blocks, scaled = self._one_hot_blocks(), self._bit_blocks(), self._scaled_blocks()
        known = set(one_hot) | set(bit_blocks) | set(scaled)
        unknown = [block.name for block in layout if block.name not in known]
        dropped = sorted(known - {block.name for block in layout})
        if unknown or dropped:
            raise ValueError(
                "the batched observation encoder is out of date with blackout_env.encoding: "
                + (f"it does not know the blocks {unknown}" if unknown else "")
                + ("; " if unknown and dropped else "")
                + (f"the encoder no longer has the blocks {dropped}" if dropped else "")
            )
        # A missing one is written to a cell of a 0/1 dense block, which that block then overwrites.
        spare = next(block.offset for block in layout if block.name in bit_blocks)
        # Where a "none" (-1) goes in blocks that have a column for it (no trump, no led suit).
        none_column = {"trump": NO_SUIT, "led_suit": NO_SUIT}
        self._ones: list[tuple[Callable[[], np.ndarray], np.ndarray, int, np.ndarray | None]] = []
        # Blocks are kept as column ranges, not as views: a copy or pickle of the engine copies
        # each array separately, and a view kept here would then write into a detached copy.
        self._bit_writes: list[tuple[Callable[[np.ndarray], None], slice, tuple[int, ...]]] = []
        self._scaled: list[tuple[Callable[[np.ndarray], None], slice, tuple[int, ...]]] = []
        column = 0
        for block in layout:
            if block.name in one_hot:
                rows, width = (1, block.shape[0]) if len(block.shape) == 1 else block.shape
                # where[j * (width + 1) + k + 1]: the cell of row j's one at k (k = -1, none: the spare cell)
                where = block.offset + np.arange(rows)[:, None] * width + np.arange(-1, width)
                where[:, 0] = where[:, 1 + none_column[block.name]] if block.name in none_column else spare
                # Per-seat blocks: row j's entries start at j * (width + 1) in ``where``.
                row_starts = np.arange(rows) * (width + 1) + 1 if len(block.shape) > 1 else None
                self._ones.append((one_hot[block.name], where.ravel(), column, row_starts))
                column += rows
            elif block.name in bit_blocks:
                columns = slice(block.offset, block.offset + block.size)
                self._bit_writes.append((bit_blocks[block.name], columns, block.shape))
            else:
                self._scaled.append((scaled[block.name], slice(block.offset, block.offset + block.size), block.shape))
        # Flat cells of this step's ones, one column per one-hot row.
        self._cells = np.zeros((0 if compiled else num_envs, column), dtype=np.intp)
        max_bid = rules.max_bid
        # Scaled values exactly as encode() computes them: Python division, rounded once to float32.
        self._per_max_bid = np.array([k / max_bid for k in range(max_bid + 1)], dtype=np.float32)
        last_round = max(rules.num_rounds - 1, 1)
        self._per_round = np.array([r / last_round for r in range(rules.num_rounds)], dtype=np.float32)
        self._score_scale = score_scale(rules)
        suit_flags = np.arange(16, dtype=np.uint8)[:, None] >> np.arange(4, dtype=np.uint8) & 1
        self._void_bytes = np.ascontiguousarray(suit_flags).view(np.uint32).ravel()  # 16 sets -> 4 bytes of 0/1
        n = rules.num_players
        # _rotation[me, j]: the absolute seat j places to the left of seat me
        self._rotation = (np.arange(n)[:, None] + np.arange(n)) % n
        # _relative_seats[(seat + 1) * n + me]: seat relative to observer me; -1 (no seat) stays -1
        self._relative_seats = np.concatenate([np.full(n, -1), ((np.arange(n)[:, None] - np.arange(n)) % n).ravel()])
        self._games = np.arange(num_envs)
        self._row_starts = (self._games * self.size)[:, None]
        self._seat_rows = (self._games * rules.num_players)[:, None]
        if compiled:
            self._compiled_arguments(layout)

    def _compiled_arguments(self, layout: list) -> None:
        """What the compiled loop reads besides the state: block offsets and widths, the bust table."""
        names = kernels().ENCODER_BLOCKS  # (imports numba: only for compiled=True)

        blocks = {block.name: block for block in layout}
        if set(blocks) != set(names):  # pragma: no cover - the check above names the blocks
            raise ValueError("the compiled observation encoder is out of date with blackout_env.encoding")
        self._offsets = np.array([blocks[name].offset for name in names], dtype=np.int64)
        self._num_cards = blocks["hand"].shape[0]
        self._bid_width = blocks["bids"].shape[1]
        # The bid_impossible entry of every (bid + 1, won, left), flat: rules_logic.bid_out_of_reach on
        # every count of one hand; 0 in the first rows (no bid yet, bid -1).
        counts = np.arange(self.rules.max_bid + 1)
        reach = bid_out_of_reach(counts[:, None, None], counts[None, :, None], counts[None, None, :])
        impossible = np.zeros((counts.size + 1, counts.size, counts.size), dtype=np.float32)
        impossible[1:] = reach
        self._impossible = impossible.ravel()

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

    def _bit_blocks(self) -> dict[str, Callable[[np.ndarray], None]]:
        """Dense blocks of 0/1 entries, written into the uint8 buffer."""
        return {
            "hand": self._hand,
            "turned_card_held_by_dealer": self._turned_card_held_by_dealer,
            "bid_impossible": self._bid_impossible,
            "played": self._played,
            "voids": self._voids,
            "trump_broken": self._trump_broken,
        }

    def _scaled_blocks(self) -> dict[str, Callable[[np.ndarray], None]]:
        """Dense blocks of scaled values, written into the float32 observation."""
        return {
            "hand_size": self._hand_size,
            "tricks_left": self._tricks_left,
            "round_index": self._round_index,
            "tricks_won": self._tricks_won,
            "scores": self._scores,
        }

    def encode(self, env: BatchedBlackout, out: np.ndarray | None = None) -> np.ndarray:
        """The acting seat's observation in every game, written into ``out`` (default: the encoder's buffer)."""
        out = self.out if out is None else out
        if self.compiled:
            return kernels().encode(
                out, self._offsets, env.num_players, self._num_cards, self._bid_width, NO_SUIT,
                self._per_max_bid, self._per_round, self._score_scale, self._impossible, env.current_player,
                env.hands, env.trump, env.turned_card, env.turned_card_held_by_dealer, env.phase, env.dealer,
                env.leader, env.bids, env.tricks_won, env.hand_size, env.tricks_done, env.round_index,
                env.trick_cards, env.led_suit, env.last_trick, env.last_trick_winner, env.played_order, env.voids,
                env.trump_broken, env.scores,
            )
        self.env = env
        self.me = env.current_player.astype(np.intp)
        # seats[g, j]: the absolute seat j places to the observer's left (row j of per-seat blocks)
        self._flat_seats = self._seat_rows + self._rotation.take(self.me, axis=0)
        self._relative_cache: dict[str, np.ndarray] = {}
        cells = self._cells
        for positions, where, start, row_starts in self._ones:
            if row_starts is None:
                cells[:, start] = where.take(positions().astype(np.intp) + 1)
            else:
                cells[:, start : start + len(row_starts)] = where.take(positions() + row_starts)
        cells += self._row_starts
        bits = self.bits
        bits.fill(0)
        bits.reshape(-1)[cells] = 1  # (fancy assignment: 3x faster than ndarray.put here)
        for write, columns, shape in self._bit_writes:
            write(bits[:, columns].reshape((self.num_envs, *shape)))
        np.copyto(out, bits)
        for write, columns, shape in self._scaled:
            write(out[:, columns].reshape((self.num_envs, *shape)))
        return out

    # ----------------------------------------------------------- helpers
    def _relative(self, name: str) -> np.ndarray:
        """The env's (games, seats) array ``name`` reordered to observer-first, clockwise."""
        cached = self._relative_cache.get(name)
        if cached is None:
            cached = self._relative_cache[name] = getattr(self.env, name).ravel()[self._flat_seats]
        return cached

    def _relative_seat(self, seat: np.ndarray) -> np.ndarray:
        """Absolute seats as seats relative to the observer; NONE stays -1."""
        return self._relative_seats.take((seat.astype(np.intp) + 1) * self.env.num_players + self.me)

    @staticmethod
    def _bits(out: np.ndarray, bits: np.ndarray) -> None:
        """out[..., c] = bit c of the uint64 ``bits`` (one set per row of out)."""
        # Unpacking the whole flat byte array is about 2x faster than unpacking along an axis with a count.
        unpacked = np.unpackbits(np.ascontiguousarray(bits).view(np.uint8), bitorder="little")
        out[...] = unpacked.reshape(*bits.shape, 64)[..., : out.shape[-1]].reshape(out.shape)

    # ------------------------------------------------ one-hot blocks: positions of the ones
    def _trump(self) -> np.ndarray:
        return self.env.trump  # no trump (-1): the NO_SUIT column

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
        return self.env.led_suit  # no led suit (-1): the NO_SUIT column

    def _last_trick(self) -> np.ndarray:
        return self._relative("last_trick")

    def _last_trick_winner(self) -> np.ndarray:
        return self._relative_seat(self.env.last_trick_winner)

    # ------------------------------------------------------------ dense blocks
    def _hand(self, out: np.ndarray) -> None:
        self._bits(out, self.env.hands.reshape(-1).take(self._seat_rows[:, 0] + self.me))

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
        out[...] = (bids >= 0) & bid_out_of_reach(bids, won, left)

    def _played(self, out: np.ndarray) -> None:
        self._bits(out, self._relative("played"))

    def _voids(self, out: np.ndarray) -> None:
        # Each 4-bit void set looks up its 4 bytes as one uint32 (3x faster than unpacking a 1-byte axis).
        out[...] = self._void_bytes[self._relative("voids")].view(np.uint8).reshape(out.shape)

    def _trump_broken(self, out: np.ndarray) -> None:
        out[:, 0] = self.env.trump_broken

    def _scores(self, out: np.ndarray) -> None:
        out[...] = self._relative("scores") / self._score_scale
