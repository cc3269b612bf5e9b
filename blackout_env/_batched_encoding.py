"""The observation encoder of :mod:`blackout_env.encoding`, as array operations over many games.

One writer per block of ``observation_layout(rules)``, each producing the same
values as :func:`blackout_env.encoding.encode` for the acting seat of every
game. The layout is read from the encoder, never copied: a block the batched
writer does not know (or a block it writes that the encoder dropped) stops
construction with a message, and the differential test compares every value.
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

_BID, _PLAY = 0, 1


class BatchedEncoder:
    """Writes the acting seat's observation of every game into one reused float32 buffer."""

    def __init__(self, rules: Rules, num_envs: int, tables: _Tables) -> None:
        self.rules = rules
        self._t = tables
        layout = observation_layout(rules)
        self.size = layout[-1].offset + layout[-1].size
        self.out = np.zeros((num_envs, self.size), dtype=np.float32)
        self._blocks = []
        writers = self._writers()
        unknown = [block.name for block in layout if block.name not in writers]
        dropped = sorted(set(writers) - {block.name for block in layout})
        if unknown or dropped:
            raise ValueError(
                "the batched observation encoder is out of date with blackout_env.encoding: "
                + (f"it does not know the blocks {unknown}" if unknown else "")
                + ("; " if unknown and dropped else "")
                + (f"the encoder no longer has the blocks {dropped}" if dropped else "")
            )
        for block in layout:
            view = self.out[:, block.offset : block.offset + block.size].reshape((num_envs, *block.shape))
            if not np.shares_memory(view, self.out):  # pragma: no cover - slicing a row never copies
                raise AssertionError(f"block {block.name} is not a view of the observation buffer")
            self._blocks.append((writers[block.name], view))
        max_bid = rules.max_bid
        # Scaled values exactly as encode() computes them: Python division, rounded once to float32.
        self._per_max_bid = np.array([k / max_bid for k in range(max_bid + 1)], dtype=np.float32)
        last_round = max(rules.num_rounds - 1, 1)
        self._per_round = np.array([r / last_round for r in range(rules.num_rounds)], dtype=np.float32)
        self._score_scale = score_scale(rules)
        self._seat_offsets = np.arange(rules.num_players)
        self._rows = np.arange(num_envs)[:, None]

    def _writers(self) -> dict[str, Callable[[np.ndarray], None]]:
        return {
            "hand": self._hand,
            "trump": self._trump,
            "turned_card": self._turned_card,
            "turned_card_held_by_dealer": self._turned_card_held_by_dealer,
            "phase": self._phase,
            "hand_size": self._hand_size,
            "tricks_left": self._tricks_left,
            "round_index": self._round_index,
            "position": self._position,
            "to_act": self._to_act,
            "leader": self._leader,
            "bids": self._bids,
            "tricks_won": self._tricks_won,
            "bid_impossible": self._bid_impossible,
            "current_trick": self._current_trick,
            "led_suit": self._led_suit,
            "last_trick": self._last_trick,
            "last_trick_winner": self._last_trick_winner,
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
        self.seats = (self.me[:, None] + self._seat_offsets) % env.num_players
        for writer, view in self._blocks:
            writer(view)
        return self.out

    # ----------------------------------------------------------- helpers
    def _relative(self, per_seat: np.ndarray) -> np.ndarray:
        """A (games, seats) array reordered to observer-first, clockwise."""
        return per_seat[self._rows, self.seats]

    def _relative_seat(self, seat: np.ndarray) -> np.ndarray:
        """Absolute seats as seats relative to the observer; NONE stays -1."""
        return np.where(seat < 0, -1, (seat.astype(np.int64) - self.me) % self.env.num_players)

    @staticmethod
    def _one_hot(out: np.ndarray, index: np.ndarray) -> None:
        """out[..., k] = 1 where k == index (index -1: all zero)."""
        np.equal(index[..., None], np.arange(out.shape[-1]), out=out, casting="unsafe")

    @staticmethod
    def _bits(out: np.ndarray, bits: np.ndarray) -> None:
        """out[..., c] = bit c of the uint64 ``bits`` (one set per row of out)."""
        unpacked = np.unpackbits(bits.view(np.uint8).reshape(*bits.shape, 8), axis=-1, bitorder="little")
        out[...] = unpacked.reshape(out.shape[:-1] + (64,))[..., : out.shape[-1]]

    def _cards(self, out: np.ndarray, cards: np.ndarray) -> None:
        """out[..., c] = 1 where c is the card (NONE: all zero)."""
        self._bits(out, self._t.card_bit_or_none[cards + 1])

    # ------------------------------------------------------------ blocks
    def _hand(self, out: np.ndarray) -> None:
        env = self.env
        self._bits(out, env.hands[self._rows[:, 0], self.me])

    def _trump(self, out: np.ndarray) -> None:
        trump = self.env.trump
        self._one_hot(out, np.where(trump < 0, NO_SUIT, trump))

    def _turned_card(self, out: np.ndarray) -> None:
        self._cards(out, self.env.turned_card)

    def _turned_card_held_by_dealer(self, out: np.ndarray) -> None:
        out[:, 0] = self.env.turned_card_held_by_dealer

    def _phase(self, out: np.ndarray) -> None:
        # Batched games are always bidding or playing: a finished match is reset in the same step.
        self._one_hot(out, np.where(self.env.phase == _BID, 0, 1))

    def _hand_size(self, out: np.ndarray) -> None:
        out[:, 0] = self._per_max_bid[self.env.hand_size]

    def _tricks_left(self, out: np.ndarray) -> None:
        out[:, 0] = self._per_max_bid[self.env.hand_size - self.env.tricks_done]

    def _round_index(self, out: np.ndarray) -> None:
        out[:, 0] = self._per_round[self.env.round_index]

    def _position(self, out: np.ndarray) -> None:
        env = self.env
        self._one_hot(out, (self.me - env.dealer - 1) % env.num_players)

    def _to_act(self, out: np.ndarray) -> None:
        # The observer is the seat to act.
        out[...] = 0
        out[:, 0] = 1

    def _leader(self, out: np.ndarray) -> None:
        self._one_hot(out, self._relative_seat(self.env.leader))

    def _bids(self, out: np.ndarray) -> None:
        # Column 0: not yet bid; column 1 + k: bid k.
        self._one_hot(out, self._relative(self.env.bids) + 1)

    def _tricks_won(self, out: np.ndarray) -> None:
        out[...] = self._per_max_bid[self._relative(self.env.tricks_won)]

    def _bid_impossible(self, out: np.ndarray) -> None:
        env = self.env
        bids = self._relative(env.bids)
        won = self._relative(env.tricks_won)
        left = (env.hand_size - env.tricks_done)[:, None]
        out[...] = (bids >= 0) & ((won > bids) | (won + left < bids))

    def _current_trick(self, out: np.ndarray) -> None:
        self._cards(out, self._relative(self.env.trick_cards))

    def _led_suit(self, out: np.ndarray) -> None:
        led = self.env.led_suit
        self._one_hot(out, np.where(led < 0, NO_SUIT, led))

    def _last_trick(self, out: np.ndarray) -> None:
        self._cards(out, self._relative(self.env.last_trick))

    def _last_trick_winner(self, out: np.ndarray) -> None:
        self._one_hot(out, self._relative_seat(self.env.last_trick_winner))

    def _played(self, out: np.ndarray) -> None:
        self._bits(out, self._relative(self.env.played))

    def _voids(self, out: np.ndarray) -> None:
        voids = self._relative(self.env.voids)
        out[...] = np.unpackbits(voids[..., None], axis=-1, bitorder="little")[..., :4]

    def _trump_broken(self, out: np.ndarray) -> None:
        out[:, 0] = self.env.trump_broken

    def _scores(self, out: np.ndarray) -> None:
        out[...] = self._relative(self.env.scores) / self._score_scale
