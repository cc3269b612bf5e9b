"""The compiled observation encoder of :mod:`blackout_env.encoding`: every game of the batched engine, or one game.

The values come from one compiled loop over games
(:func:`blackout_env._batched_kernels.encode`), which clears each row and writes
its entries straight into the float32 observation. What the loop reads besides
the engine's state is built here: the block offsets and widths, read from
:func:`blackout_env.encoding.observation_layout` (never copied: a block the
kernel does not know, or one it knows that the layout dropped, stops
construction with a message), and the scaled values and the bust test as
tables computed by the reference's own functions. Nothing is carried from one
step to the next, so copies and pickles of the engine stay exact; the
differential tests compare every value with :func:`blackout_env.encoding.encode`.

:class:`GameEncoder` serves one :class:`~blackout_env.engine.BlackoutGame` (the
AEC env's): it keeps that game's state in one int64 array, in step with the
game's public events as they are appended, and writes any seat's observation
with the same compiled loop, run on that game as a batch of one
(``_batched_kernels.encode_game``).
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING, Any

import numpy as np

from ._compiled import kernels
from .encoding import NO_SUIT, observation_layout, score_scale
from .rules import Rules
from .rules_logic import bid_out_of_reach, card_facts, first_to_act, suit_led_after, turned_card, voids_shown

if TYPE_CHECKING:  # pragma: no cover
    from .batched import BatchedBlackout

__all__ = ["BatchedEncoder", "GameEncoder"]

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
                "the compiled observation encoder is out of date with blackout_env.encoding: "
                + (f"it does not know the blocks {unknown}" if unknown else "")
                + ("; " if unknown and dropped else "")
                + (f"the encoder no longer has the blocks {dropped}" if dropped else "")
            )
        self._offsets = np.array([blocks[name].offset for name in names], dtype=np.int64)
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
        return kernels().encode(
            self.out if out is None else out, self._offsets, env.num_players, self._num_cards, self._bid_width,
            NO_SUIT, self._per_max_bid, self._per_round, self._score_scale, self._impossible, env.current_player,
            env.current_player, env.hands, env.trump, env.turned_card, env.turned_card_held_by_dealer, env.phase, env.dealer,
            env.leader, env.bids, env.tricks_won, env.hand_size, env.tricks_done, env.round_index,
            env.trick_cards, env.led_suit, env.last_trick, env.last_trick_winner, env.played_order, env.voids,
            env.trump_broken, env.scores,
        )


_PLAY, _GAME_OVER = 1, 2  # the phase columns of the observation ("bid" is 0)


class GameEncoder:
    """Every seat's observation of one game, from the compiled encoder, kept in step with the game's events.

    The state the compiled loop reads is one int64 array (the layout of
    ``_batched_kernels.GAME_SCALARS`` and ``GAME_SEAT_BLOCKS``), updated by
    :meth:`sync` from the events appended to ``game.history`` since the last
    call, with the rule functions the engine itself calls; :meth:`observe` then
    writes a seat's observation, equal to ``encode(game.view(seat))`` (a test
    checks it over random games of every rule set). The only private fact it
    reads is each seat's own hand from the deal event, and the compiled loop
    writes only the observer's hand.

    ``sync(game, stop_after_hand=True)`` stops at the end of the current hand and
    shows it as over (phase "game over", nobody to act): how a one-hand episode
    ends while the engine has already dealt the next hand.
    """

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self._encoder = BatchedEncoder(rules, 1)
        self._must_break = rules.lead_trump == "broken"
        self.num_players = n = rules.num_players
        # The layout of the array, read from the kernels' module (its one definition): the scalars' places
        # (self._g_NAME), where each per-seat block starts (self._NAME_at), and the played cards (one column
        # more than the hand's tricks: a finished hand is encoded too).
        k = kernels()
        start = k.GAME_STATE_START
        for i, name in enumerate(k.GAME_SCALARS):
            setattr(self, f"_g_{name}", start + i)
        scalars = start + len(k.GAME_SCALARS)
        for i, name in enumerate(k.GAME_SEAT_BLOCKS):
            setattr(self, f"_{name}_at", scalars + i * n)
        self._played_at = scalars + len(k.GAME_SEAT_BLOCKS) * n
        self._tricks_per_seat = rules.max_bid + 1
        e = self._encoder
        sizes = {
            "num_players": n, "num_cards": e._num_cards, "bid_width": e._bid_width, "no_suit": NO_SUIT,
            "score_scale": e._score_scale, "counts": len(e._per_max_bid), "rounds": len(e._per_round),
        }
        prefix = [*e._offsets.tolist(), *(sizes[name] for name in k.GAME_SIZES)]
        # An array.array (item writes at list speed) with a numpy view of the same memory for the compiled loop.
        self._state = array("q", prefix + [0] * (self._played_at + n * self._tricks_per_seat - start))
        self._make_view()
        self._floats = np.concatenate([e._per_max_bid, e._per_round, e._impossible]).astype(np.float32)
        self._row = np.zeros(self._encoder.size, dtype=np.float32)
        self.reset()

    def _make_view(self) -> None:
        self._state_array = np.frombuffer(self._state, dtype=np.int64)

    def __getstate__(self) -> dict:
        return {key: value for key, value in self.__dict__.items() if key != "_state_array"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._make_view()

    def __deepcopy__(self, memo: dict) -> GameEncoder:
        # The game's state and progress are copied; the rules and the encoder's read-only tables are shared.
        twin = object.__new__(type(self))
        memo[id(self)] = twin
        twin.__dict__.update(self.__dict__)
        twin._state = array("q", self._state)
        twin._row = self._row.copy()
        twin._make_view()
        return twin

    def reset(self) -> None:
        """Forget the game: the next :meth:`sync` reads the history from its start."""
        self._cursor = 0
        self._stopped = False
        self._trick_len = 0
        self._bids_made = 0
        state = self._state
        for seat in range(self.num_players):
            state[self._scores_at + seat] = 0
        state[self._g_current_player] = -1

    def sync(self, game: Any, stop_after_hand: bool = False) -> bool:
        """Apply the events of ``game.history`` not yet read; return True when a hand ended.

        With ``stop_after_hand`` the events after the end of a hand are left unread
        and the hand shows as over.
        """
        if self._stopped:
            return False
        history = game.history
        hand_ended = False
        cursor = self._cursor
        while cursor < len(history):
            event = history[cursor]
            cursor += 1
            kind = event[0]
            if kind == "play":
                self._play(event[1], event[2])
            elif kind == "bid":
                self._bid(event[1], event[2])
            elif kind == "trick":
                self._trick(event[1])
            elif kind == "deal":
                self._deal(event, game)
            elif kind == "round_end":
                self._state[self._scores_at : self._scores_at + self.num_players] = array("q", event[3])
                hand_ended = True
                if stop_after_hand:
                    self._game_over()
                    self._stopped = True
                    break
            elif kind == "game_over":
                self._game_over()
        self._cursor = cursor
        if not self._stopped:
            self._state[self._g_current_player] = -1 if game.current_player is None else game.current_player
        return hand_ended

    def observe(self, seat: int) -> np.ndarray:
        """Seat ``seat``'s observation now: the encoder's buffer (copy it before keeping it)."""
        kernels().encode_game(self._row, self._floats, self._state_array, seat)
        return self._row

    def _deal(self, event: tuple, game: Any) -> None:
        _, round_index, dealer, hand_size, turned, trump, hands = event
        rules, n, state = self.rules, self.num_players, self._state
        state[self._g_round_index] = round_index
        state[self._g_dealer] = dealer
        state[self._g_hand_size] = hand_size
        state[self._g_turned_card] = -1 if turned is None else turned
        state[self._g_held] = turned_card(game.decks[round_index], n, hand_size, rules.trump, rules.no_card_trump)[1]
        state[self._g_trump] = -1 if trump is None else trump
        state[self._g_phase] = 0
        state[self._g_leader] = first_to_act(dealer, n)
        state[self._g_tricks_done] = 0
        state[self._g_led_suit] = -1
        state[self._g_last_trick_winner] = -1
        state[self._g_trump_broken] = 0
        for seat, hand in enumerate(hands):
            state[self._hands_at + seat] = sum(1 << card for card in hand)
        none, zero = array("q", [-1] * n), array("q", [0] * n)
        for start, values in ((self._bids_at, none), (self._tricks_won_at, zero), (self._trick_cards_at, none),
                              (self._last_trick_at, none), (self._voids_at, zero)):
            state[start : start + n] = values
        state[self._played_at :] = array("q", [-1] * (n * self._tricks_per_seat))
        self._trump = trump
        self._trumps, self._follow_voids = card_facts(trump, self._must_break)
        self._led: int | None = None
        self._broken = False
        self._trick_len = 0
        self._bids_made = 0

    def _bid(self, seat: int, bid: int) -> None:
        self._state[self._bids_at + seat] = bid
        self._bids_made += 1
        if self._bids_made == self.num_players:
            self._state[self._g_phase] = _PLAY

    def _play(self, seat: int, card: int) -> None:
        state = self._state
        led = self._led
        if led is not None:  # following a named led suit: the voids it shows from the table, as the engine reads it
            shown = self._follow_voids[self._broken][led][card]
        else:
            shown = voids_shown(
                card, None, self._trump, leads=self._trick_len == 0, trump_broken=self._broken, must_break=self._must_break
            )
            if (led := suit_led_after(None, card)) is not None:
                self._led = led
                state[self._g_led_suit] = led
        if shown:
            at = self._voids_at + seat
            voids = state[at]
            for suit in shown:
                voids |= 1 << suit
            state[at] = voids
        if not self._broken and card in self._trumps:  # once broken, trump stays broken
            self._broken = True
            state[self._g_trump_broken] = 1
        state[self._hands_at + seat] &= ~(1 << card)
        state[self._played_at + seat * self._tricks_per_seat + state[self._g_tricks_done]] = card
        state[self._trick_cards_at + seat] = card
        self._trick_len += 1

    def _trick(self, winner: int) -> None:
        state, n = self._state, self.num_players
        state[self._tricks_won_at + winner] += 1
        state[self._last_trick_at : self._last_trick_at + n] = state[self._trick_cards_at : self._trick_cards_at + n]
        state[self._trick_cards_at : self._trick_cards_at + n] = array("q", [-1] * n)
        state[self._g_last_trick_winner] = winner
        state[self._g_led_suit] = -1
        self._led = None
        self._trick_len = 0
        done = state[self._g_tricks_done] + 1
        state[self._g_tricks_done] = done
        if done < state[self._g_hand_size]:  # after the hand's last trick the engine keeps its leader
            state[self._g_leader] = winner

    def _game_over(self) -> None:
        self._state[self._g_phase] = _GAME_OVER
        self._state[self._g_current_player] = -1
