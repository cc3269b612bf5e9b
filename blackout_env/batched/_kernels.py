"""The compiled core: the batched engine's per-move work and its observation encoder, compiled with numba.

Imported when the first :class:`~blackout_env.batched.BatchedBlackout`, AEC env or
IS-MCTS bot is built (numba is a dependency; ``import blackout_env`` does not import it).

The state of a game is one list of fields, :data:`GAME_FIELDS` (name, type,
shape after the game axis): :func:`new_state` lays any number of games out in one
array (a byte array with each field of its own type for the batched engine, or
64-bit words for one game), and every kernel takes that array and reads its
fields by name (:func:`unpack_bytes` / :func:`unpack_words` give the named tuple
:data:`GameState` of views; :func:`state_views` the same from Python). The
rules' tables are one array too, laid out from :data:`TABLE_FIELDS`
(``blackout_env.batched.game_tables``, built from :mod:`blackout_env.game.rules_logic`
by running its functions over every input; :func:`unpack_tables`). So a kernel
takes ``(state, tables, ...)``, as pgx's ``step(state, action)``.

One function per step of :mod:`blackout_env.game.engine` (deal, legal cards, bid,
play, trick winner, finish trick, finish hand; named after the engine method
that calls it), each a loop over the games of that state (the encoder's block
offsets read from :func:`blackout_env.game.encoding.observation_layout`). A move is
:func:`advance_game` and :func:`legal_game`, written for game ``g`` of a :data:`GameState`:
:func:`advance` and :func:`compute_legal` run them over a batch, :func:`step_game`
over one game (the IS-MCTS simulator's state, :func:`one_game`)
and :func:`env_step` over the AEC env's one game (with :func:`encode_row`, the
observation of one game, which :func:`encode` runs over a batch), so the batched
engine, the AEC env and the search step one code. They are inlined
(``inline="always"``) into kernels compiled without numba's reference counting
(``_nrt=False``: these kernels allocate nothing); with it, each inlined call
would count a reference to each of its arrays, which made the batch loop
several times slower. Trick power and its
tie-break, the led suit after a card, whether a card is trump, voids shown, the
hook's forbidden bid, the suit a turned card names, the bust test, the seat each
deck card is dealt to, who acts first and where the turned card lies are table
lookups (the trick's best card so far, :func:`trick_best`, by power and tie-break); the dealer of a
round is mirrored inline, marked with the function it mirrors; the legal cards and the bids are
``rules_logic.playable_bits`` (``playable_cards`` on bitsets) and ``bid_range`` compiled. The differential
tests (``tests/test_batched_differential.py``, ``tests/test_batched.py``) play
the same deals and actions through the engine and these kernels and compare
states, observations and masks exactly.

Each kernel is compiled on first use and cached on disk (``cache=True``), so a
machine pays the compile time once (docs/batched.md has the figures). numba keys a
cached kernel on its own file only, not on the functions it inlines from other
files, so :func:`key_caches_on` widens the key of every kernel here and in the
IS-MCTS playouts to the content of :data:`CORE_SOURCES` too: an edit of the core
recompiles every kernel that inlines it.

The encoder walks each seat's ``played_order`` (the cards in trick order, kept
alongside the ``played`` bitsets) because a loop whose length is the same for
every seat costs less than a walk over a bitset.
"""

from __future__ import annotations

import collections
import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

import numba
import numba.extending
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.caching import FunctionCache, IndexDataCacheFile
from numba.core.dispatcher import Dispatcher
from numba.np.arrayobj import make_array, populate_array

from ..game import cards, rules_logic

CORE_SOURCES = (Path(cards.__file__), Path(rules_logic.__file__), Path(__file__))
"""The files whose code or constants the compiled core inlines (the kernels here, the IS-MCTS playouts)."""


class _SourcesKeyedCache(FunctionCache):
    """numba's disk cache of one kernel, whose entries are fresh only for the same content of some source files.

    numba's own key is the content of the kernel's file; a kernel that inlines a
    function of another file (``advance_game`` in the IS-MCTS playouts,
    ``rules_logic.playable_bits`` here) would otherwise load the machine code of
    that function's old text.
    """

    def __init__(self, py_func: Any, digest: str):
        super().__init__(py_func)
        stamp = (self._impl.locator.get_source_stamp(), digest)
        self._cache_file = IndexDataCacheFile(self._cache_path, self._impl.filename_base, stamp)


def key_caches_on(namespace: dict[str, Any], sources: Iterable[Path]) -> None:
    """Key the disk cache of every kernel in ``namespace`` (a module's globals) on the content of ``sources`` too.

    Called at the end of each kernel module, before any kernel is compiled (they compile on first call).
    """
    digest = hashlib.sha256(b"".join(hashlib.sha256(path.read_bytes()).digest() for path in sources)).hexdigest()
    for kernel in list(namespace.values()):
        if isinstance(kernel, Dispatcher) and kernel._cache.cache_path:
            kernel._cache = _SourcesKeyedCache(kernel.py_func, digest)  # as Dispatcher.enable_caching, widened

NONE = -1
BID, PLAY, GAME_OVER = 0, 1, 2  # the phases (the observation has a column for each)

# Index of the lowest set bit: _DEBRUIJN[((x & -x) * _MAGIC) >> 58] (a 64-bit de Bruijn sequence).
_MAGIC = np.uint64(0x03F79D71B4CB0A89)
_DEBRUIJN = np.zeros(64, dtype=np.int64)
for _bit in range(64):
    _DEBRUIJN[((1 << _bit) * 0x03F79D71B4CB0A89 & (2**64 - 1)) >> 58] = _bit
del _bit



# ------------------------------------------------------------------ the state
class Field(NamedTuple):
    """One field of a game's state: its name, its type in the batched engine, its shape after the game axis."""

    name: str
    dtype: type
    dims: tuple[str, ...] = ()
    """Each a name of STATE_DIMS: "seats", "tricks" (room for the tricks of a hand), "moves" (room for actions)."""
    fill: int = 0
    """The value of a fresh state."""


GAME_FIELDS = (
    Field("current_player", np.int8),  # the seat to act (NONE once the game is over)
    Field("phase", np.int8),  # BID, PLAY or GAME_OVER
    Field("leader", np.int8),
    Field("dealer", np.int8),
    Field("round_index", np.int8),
    Field("hand_size", np.int8),
    Field("trump", np.int8, fill=NONE),
    Field("turned_card", np.int8, fill=NONE),
    Field("turned_card_held_by_dealer", np.bool_),
    Field("bids_made", np.int8),
    Field("bid_total", np.int16),
    Field("tricks_done", np.int8),
    Field("trick_size", np.int8),
    Field("led_suit", np.int8, fill=NONE),
    Field("trump_broken", np.bool_),
    Field("last_trick_leader", np.int8, fill=NONE),
    Field("last_trick_winner", np.int8, fill=NONE),
    Field("legal_cards", np.uint64),  # the acting seat's (bitset), written by legal_game
    Field("forbidden_bid", np.int8, fill=NONE),  # the dealer's hooked bid, written by legal_game
    Field("action_count", np.int16),
    Field("round_start", np.int16),  # action_count when the hand was dealt
    Field("hands", np.uint64, ("seats",)),  # bitsets: bit c = card c
    Field("bids", np.int8, ("seats",), NONE),
    Field("tricks_won", np.int8, ("seats",)),  # (just after the bids: a search reads both in one slice)
    Field("trick_cards", np.int8, ("seats",), NONE),
    Field("last_trick", np.int8, ("seats",), NONE),
    Field("played", np.uint64, ("seats",)),
    Field("voids", np.uint8, ("seats",)),  # 4-bit suit flags
    Field("scores", np.int32, ("seats",)),
    Field("played_order", np.int8, ("seats", "tricks"), NONE),  # the cards each seat played, in trick order
    Field("actions", np.int8, ("moves",)),  # every action taken, in order
)
"""The compiled core's state of a game, one field a line: what the step, the legal moves and the encoder
read and write. Adding a field is one line here (and the code that uses it): the batched engine, the AEC
env and the IS-MCTS simulator all hold their games in :func:`new_state`'s layout."""

@numba.extending.intrinsic
def _field_view(typingctx, state, start, shape, dtype):  # (unannotated: numba's typing signature)
    """The field at item ``start`` of ``state``: an array of ``dtype`` and ``shape`` (a tuple), C order, made
    without the run-time checks of a slice, a view and a reshape (about 130 ns a state of 31 fields)."""
    result = types.Array(dtype.instance_type, len(shape), "C")

    def codegen(context, builder, signature, arguments):
        source_value, start_value, shape_value, _ = arguments
        source = make_array(signature.args[0])(context, builder, source_value)
        source_item = context.get_abi_sizeof(context.get_data_type(signature.args[0].dtype))
        offset = builder.mul(start_value, context.get_constant(types.intp, source_item))
        data = builder.gep(builder.bitcast(source.data, ir.IntType(8).as_pointer()), [offset])
        item = context.get_abi_sizeof(context.get_data_type(result.dtype))
        shapes = cgutils.unpack_tuple(builder, shape_value, len(shape))
        strides, stride = [], context.get_constant(types.intp, item)
        for extent in reversed(shapes):
            strides.insert(0, stride)
            stride = builder.mul(stride, extent)
        view = make_array(result)(context, builder)
        populate_array(view, data=builder.bitcast(data, view.data.type), shape=shapes, strides=strides,
                       itemsize=context.get_constant(types.intp, item), meminfo=None)
        return view._getvalue()

    return result(state, start, shape, dtype), codegen


def _word_type(dtype: type) -> type:
    return np.uint64 if dtype is np.uint64 else np.int64


class Layout:
    """A struct laid out in one array from a field list: its head (the sizes of its dims, then where each field
    starts), then the fields.

    ``new(...)`` makes one (a byte array, each field of its own type, or with ``words=True`` an int64 array,
    every field 64 bits wide: one game read item by item from Python), ``views`` gives its fields to Python by
    name, ``unpack_bytes`` / ``unpack_words`` (compiled, inlined) give them to a kernel by name.
    """

    def __init__(self, name: str, fields: tuple[Field, ...], dims: tuple[str, ...], lead: str | None = None):
        self.fields, self.dims, self.lead = fields, dims, lead
        self.type = collections.namedtuple(name, [field.name for field in fields])
        self.type.__module__ = __name__  # (pickled by reference, as this module's GameState and RuleTables)
        self.head = len(dims) + len(fields)
        # A call in the batch kernels, paid once a batch (numba's inlining of it into each of them cost
        # seconds of compile time); inlined into the one-game kernels, which Python calls once a move (a
        # call there cost a search about 10%).
        self.unpack_bytes = numba.njit(self._compiled_unpack(words=False))
        self.unpack_bytes_inline = numba.njit(inline="always")(self._compiled_unpack(words=False))
        self.unpack_words = numba.njit(inline="always")(self._compiled_unpack(words=True))

    def _shape(self, field: Field) -> tuple[str | int, ...]:
        return ((self.lead,) if self.lead else ()) + field.dims

    def new(self, words: bool = False, **sizes: int) -> np.ndarray:
        """A fresh struct of these ``sizes`` (one per dim), every field at its fresh value."""
        starts, end = [], self.head
        for field in self.fields:
            count = int(np.prod([sizes[dim] if isinstance(dim, str) else dim for dim in self._shape(field)], dtype=np.int64))
            if words:
                starts.append(end)
                end += count
            else:  # in bytes, each field 8-byte aligned
                starts.append(end * 8 if not starts else end)
                end = starts[-1] + -(-count * np.dtype(field.dtype).itemsize // 8) * 8
        array = np.zeros(end, dtype=np.int64 if words else np.uint8)
        head = array[: self.head] if words else array[: self.head * 8].view(np.int64)
        head[:] = [*(sizes[dim] for dim in self.dims), *starts]
        for field, values in zip(self.fields, self.views(array)):
            values[...] = field.fill
        return array

    def views(self, array: np.ndarray) -> Any:
        """Every field of ``array`` (made by :meth:`new`) as a numpy view, by name."""
        words = array.dtype == np.int64
        head = array[: self.head] if words else array[: self.head * 8].view(np.int64)
        sizes = dict(zip(self.dims, head[: len(self.dims)].tolist()))
        views = []
        for i, field in enumerate(self.fields):
            shape = tuple(sizes[dim] if isinstance(dim, str) else dim for dim in self._shape(field))
            dtype = np.dtype(_word_type(field.dtype) if words else field.dtype)
            start = int(head[len(self.dims) + i])
            count = int(np.prod(shape, dtype=np.int64)) * (1 if words else dtype.itemsize)
            views.append(array[start : start + count].view(dtype).reshape(shape))
        return self.type(*views)

    def starts(self, array: np.ndarray) -> Any:
        """Where each field of a struct of 64-bit words starts (its item index), by name: Python reads one
        game's fields item by item (an ``array.array`` of the same memory is as fast as a list)."""
        return self.type(*array[len(self.dims) : self.head].tolist())

    def _compiled_unpack(self, words: bool) -> Any:
        # numba cannot build a named tuple from a field list, so the list writes the function
        lines = [
            "def unpack(array):",
            f"    head = _field_view(array, 0, ({self.head},), np.int64)",
            "    " + ", ".join(self.dims) + " = " + ", ".join(f"head[{i}]" for i in range(len(self.dims))),
        ]
        for i, field in enumerate(self.fields):
            dtype = np.dtype(_word_type(field.dtype) if words else field.dtype)
            shape = ", ".join(str(dim) for dim in self._shape(field))
            lines.append(f"    {field.name} = _field_view(array, head[{len(self.dims) + i}], ({shape},), np.{dtype.name})")
        lines.append(f"    return {self.type.__name__}(" + ", ".join(field.name for field in self.fields) + ")")
        namespace = {"np": np, self.type.__name__: self.type, "_field_view": _field_view}
        exec("\n".join(lines) + "\n", namespace)
        return namespace["unpack"]


STATE = Layout("GameState", GAME_FIELDS, ("games", "seats", "tricks", "moves"), lead="games")
GameState = STATE.type
GameState.__doc__ = "Every field of GAME_FIELDS by name: arrays with a leading game axis (a batch, or one game)."
unpack_bytes = STATE.unpack_bytes
"""The fields of a byte state (:func:`new_state`; the batched engine's) by name, as views: a kernel's first read."""
unpack_words = STATE.unpack_words
"""The fields of a state of 64-bit words (one game: the AEC env's, a search's) by name, as views."""


def new_state(games: int, seats: int, tricks: int, moves: int, words: bool = False) -> np.ndarray:
    """A fresh state of ``games`` games in one array (:class:`Layout`): bytes, each field of its GAME_FIELDS
    type (the batched engine's: small types, many games), or with ``words=True`` 64-bit words (one game)."""
    return STATE.new(words, games=games, seats=seats, tricks=tricks, moves=moves)


def state_views(state: np.ndarray) -> GameState:
    """Every field of ``state`` (:func:`new_state`) as a numpy view, by name (shapes: games, then the field's dims)."""
    return STATE.views(state)


def field_starts(state: np.ndarray) -> GameState:
    """Where each field of a one-game state of words starts (its item index), by name."""
    return STATE.starts(state)


TABLE_FIELDS = (
    Field("num_players", np.int64, (1,)),
    Field("num_cards", np.int64, (1,)),
    Field("max_bid", np.int64, (1,)),
    Field("must_break", np.bool_, (1,)),  # trump may not be led before it is broken
    Field("standard_bits", np.uint64, (1,)),  # the 52 standard cards (bitset)
    Field("joker_bits", np.uint64, (1,)),
    Field("suit_bits", np.uint64, (5,)),  # [suit + 1]: the cards of a suit; [0] (no suit): none
    Field("power_flat", np.int16, ("powers",)),  # [((trump + 1) * 5 + led + 1) * num_cards + card]: card_power
    Field("trick_key_low", np.int32, ("seats", "seats")),  # [leader, seat]: the tie-break of trick_winner
    Field("led_after", np.int8, (5, "cards")),  # [led + 1, card]: suit_led_after
    Field("is_trump", np.bool_, (5, "cards")),  # [trump + 1, card]
    Field("voids_shown", np.uint8, (2, 2, 5, 5, "cards")),  # [leads, trump_broken, trump + 1, led + 1, card]
    Field("suit_or_none", np.int8, ("cards_or_none",)),  # [card + 1]: suit_of (NONE for a joker or no card)
    Field("forbidden_bid", np.int8, ("counts", "totals")),  # [hand_size, bid_total]: the hook (NONE: none)
    Field("hand_score", np.int32, ("counts", "counts")),  # [bid, tricks won]: Rules.hand_score
    Field("hand_sizes", np.int8, ("rounds",)),
    Field("rule_trump", np.int8, ("rounds",)),  # the trump suit the rules name for each round (NONE: none)
    Field("turned_position", np.int64, ("rounds",)),  # the deck position of the turned card (NONE: none)
    Field("turned_held", np.bool_, ("rounds",)),  # the dealer holds the turned card (dealer_last)
    Field("deal_seat", np.int64, ("seats", "deck")),  # [dealer, k]: dealt_to
    Field("first_to_act", np.int8, ("seats",)),  # [dealer]
)
"""The rules' tables, built from :mod:`blackout_env.game.rules_logic` (``blackout_env.batched.engine._Tables``), one field a line."""

TABLES = Layout(
    "RuleTables", TABLE_FIELDS, ("seats", "cards", "cards_or_none", "powers", "counts", "totals", "rounds", "deck")
)
RuleTables = TABLES.type
RuleTables.__doc__ = "Every table of TABLE_FIELDS by name."
unpack_tables = TABLES.unpack_bytes
"""The rules' tables (``blackout_env.batched.game_tables``) by name, as views: a batch kernel's first read of them."""
unpack_tables_inline = TABLES.unpack_bytes_inline
"""The same, inlined: for the one-game kernels."""


# The encoder's blocks, in the order of the ``offsets`` argument of encode (see BatchedEncoder).
ENCODER_BLOCKS = (
    "hand",
    "trump",
    "turned_card",
    "turned_card_held_by_dealer",
    "phase",
    "hand_size",
    "tricks_left",
    "round_index",
    "position",
    "to_act",
    "leader",
    "bids",
    "tricks_won",
    "bid_impossible",
    "current_trick",
    "led_suit",
    "last_trick",
    "last_trick_winner",
    "played",
    "voids",
    "trump_broken",
    "scores",
)
(
    HAND, TRUMP, TURNED, HELD, PHASE, HAND_SIZE, TRICKS_LEFT, ROUND, POSITION, TO_ACT, LEADER, BIDS,
    TRICKS_WON, BID_IMPOSSIBLE, CURRENT_TRICK, LED_SUIT, LAST_TRICK, LAST_WINNER, PLAYED, VOIDS,
    TRUMP_BROKEN, SCORES,
) = range(len(ENCODER_BLOCKS))


@numba.njit(cache=True, inline="always")
def _lowest(bits):
    """Index of the lowest set bit of a non-zero uint64."""
    low = bits & (~bits + np.uint64(1))
    return _DEBRUIJN[(low * _MAGIC) >> np.uint64(58)]


@numba.njit(cache=True, inline="always")
def _set_cards(row, base, bits, one):
    """row[base + c] = one for every card c in the set ``bits``."""
    while bits:
        row[base + _lowest(bits)] = one
        bits &= bits - np.uint64(1)


# ---------------------------------------------------------------- encoder
@numba.njit(cache=True, inline="always")
def block_offsets(offsets):
    """The encoder's block offsets (an array in ENCODER_BLOCKS' order) as a tuple, for :func:`encode_row`."""
    return (
        offsets[HAND], offsets[TRUMP], offsets[TURNED], offsets[HELD], offsets[PHASE], offsets[HAND_SIZE],
        offsets[TRICKS_LEFT], offsets[ROUND], offsets[POSITION], offsets[TO_ACT], offsets[LEADER], offsets[BIDS],
        offsets[TRICKS_WON], offsets[BID_IMPOSSIBLE], offsets[CURRENT_TRICK], offsets[LED_SUIT], offsets[LAST_TRICK],
        offsets[LAST_WINNER], offsets[PLAYED], offsets[VOIDS], offsets[TRUMP_BROKEN], offsets[SCORES],
    )


@numba.njit(cache=True, inline="always")
def encode_row(row, g, me, offsets, wrap, sizes, scaled, s):
    """Seat ``me``'s observation of game ``g``, written into ``row`` (float32): the one compiled builder.

    :func:`encode` runs it over the batched engine's games (the acting seat of each), :func:`env_step` and
    :func:`env_observe` on the AEC env's one game (any seat; ``current_player`` -1: nobody to act, the
    game is over). ``offsets``: :func:`block_offsets`' tuple (read once, kept in registers: a store into
    the observation could otherwise alias an offsets array); ``sizes``: (n, num_cards, bid_width, no_suit,
    score_scale); ``scaled``: (per_max_bid, per_round, impossible); ``s``: the state (:data:`GameState`).

    ``wrap[k]`` is ``k % n`` for ``k < 3n`` (a lookup is cheaper than an integer division).
    ``impossible[((bid + 1) * (max_bid + 1) + won) * (max_bid + 1) + left]``: the bid_impossible entry
    (0. for no bid yet).
    """
    n, num_cards, bid_width, no_suit, score_scale = sizes
    per_max_bid, per_round, impossible = scaled
    current_player, hands, trump, turned_card, phase, dealer, leader = (
        s.current_player, s.hands, s.trump, s.turned_card, s.phase, s.dealer, s.leader
    )
    bids, tricks_won, hand_size, tricks_done, round_index, trick_cards, led_suit = (
        s.bids, s.tricks_won, s.hand_size, s.tricks_done, s.round_index, s.trick_cards, s.led_suit
    )
    last_trick, last_trick_winner, played_order, voids, trump_broken, scores = (
        s.last_trick, s.last_trick_winner, s.played_order, s.voids, s.trump_broken, s.scores
    )
    counts = per_max_bid.shape[0]  # max_bid + 1
    (
        o_hand, o_trump, o_turned, o_held, o_phase, o_hand_size, o_tricks_left, o_round, o_position, o_to_act,
        o_leader, o_bids, o_won, o_impossible, o_trick, o_led, o_last, o_winner, o_played, o_voids, o_broken,
        o_scores,
    ) = offsets
    row[:] = 0.0
    _set_cards(row, o_hand, hands[g, me], np.float32(1.0))
    row[o_trump + (no_suit if trump[g] < 0 else trump[g])] = 1.0
    if turned_card[g] >= 0:
        row[o_turned + turned_card[g]] = 1.0
    if s.turned_card_held_by_dealer[g]:
        row[o_held] = 1.0
    row[o_phase + phase[g]] = 1.0
    done = np.int64(tricks_done[g])
    left = np.int64(hand_size[g]) - done
    row[o_hand_size] = per_max_bid[hand_size[g]]
    row[o_tricks_left] = per_max_bid[left]
    row[o_round] = per_round[round_index[g]]
    row[o_position + wrap[me - dealer[g] - 1 + 2 * n]] = 1.0
    if current_player[g] >= 0:
        row[o_to_act + wrap[current_player[g] - me + n]] = 1.0
    if leader[g] >= 0:
        row[o_leader + wrap[leader[g] - me + n]] = 1.0
    for j in range(n):
        seat = wrap[me + j]
        bid = np.int64(bids[g, seat])
        won = np.int64(tricks_won[g, seat])
        row[o_bids + j * bid_width + bid + 1] = 1.0  # column 0: not yet bid
        row[o_won + j] = per_max_bid[won]
        row[o_impossible + j] = impossible[((bid + 1) * counts + won) * counts + left]
        card = trick_cards[g, seat]
        if card >= 0:
            row[o_trick + j * num_cards + card] = 1.0
        card = last_trick[g, seat]
        if card >= 0:
            row[o_last + j * num_cards + card] = 1.0
        # The cards the seat played this hand, in trick order (played_order, -1 where it has not played
        # in the current trick yet, which goes to its first voids cell, written just after): the same
        # count for every seat, so the loop's end is predictable, unlike a walk over a bitset.
        spare = o_voids + j * 4
        for k in range(done + 1):
            card = played_order[g, seat, k]
            row[o_played + j * num_cards + card if card >= 0 else spare] = 1.0
        void = voids[g, seat]
        for suit in range(4):
            row[o_voids + j * 4 + suit] = np.float32(void >> suit & 1)
        # as encode(): the total divided in float64, rounded once to float32
        row[o_scores + j] = np.float32(scores[g, seat] / score_scale)
    row[o_led + (no_suit if led_suit[g] < 0 else led_suit[g])] = 1.0
    if last_trick_winner[g] >= 0:
        row[o_winner + wrap[last_trick_winner[g] - me + n]] = 1.0
    if trump_broken[g]:
        row[o_broken] = 1.0


@numba.njit(cache=True, _nrt=False)
def encode(out, state, offsets, wrap, n, num_cards, bid_width, no_suit, per_max_bid, per_round, score_scale, impossible):
    """BatchedEncoder.encode: the acting seat's observation of game ``g`` of ``state`` into ``out[g]``, for every
    game (:func:`encode_row`). Compiled without reference counting, as ``advance``: it allocates nothing."""
    s = unpack_bytes(state)
    sizes = (n, num_cards, bid_width, no_suit, score_scale)
    scaled = (per_max_bid, per_round, impossible)
    blocks = block_offsets(offsets)
    for g in range(out.shape[0]):
        encode_row(out[g], g, np.int64(s.current_player[g]), blocks, wrap, sizes, scaled, s)


# ------------------------------------------------------------------- step
bid_range = numba.njit(cache=True, inline="always")(rules_logic.bid_range)
"""rules_logic.bid_range compiled: the bids of a hand, for every kernel here and the IS-MCTS playouts."""
_playable = numba.njit(cache=True, inline="always")(rules_logic.playable_bits)
"""rules_logic.playable_bits compiled: the legal cards of legal_game (the batched engine and the IS-MCTS simulator)."""


@numba.njit(cache=True, inline="always")
def action_legal(action, num_cards, legal_cards, phase, hand_size, forbidden_bid):
    """Whether ``action`` is legal in a game with these legal cards, phase, hand size and forbidden bid."""
    if action < 0:
        return False
    if action < num_cards:
        return (legal_cards >> np.uint64(action)) & np.uint64(1) != 0
    tricks = action - num_cards  # bids from 0; an action past the last bid is above every hand size
    return phase == BID and tricks < len(bid_range(hand_size)) and tricks != forbidden_bid


@numba.njit(cache=True)
def check_actions(state, tables, actions, games):
    """How many of games ``games`` got an action that is illegal (0: all legal)."""
    s, t = unpack_bytes(state), unpack_tables(tables)
    num_cards = t.num_cards[0]
    bad = 0
    for g in games:
        if not action_legal(actions[g], num_cards, s.legal_cards[g], s.phase[g], s.hand_size[g], s.forbidden_bid[g]):
            bad += 1
    return bad


@numba.njit(cache=True, inline="always")
def trick_best(s, t, g):
    """The best card of game ``g``'s trick so far (rules_logic.trick_winner's) as its key, card_power * 64 +
    trick_key_low (the tie-break): ``>> 6`` is its power, ``& 7`` its seat; below -2**61 before the first card."""
    row = ((np.int64(s.trump[g]) + 1) * 5 + np.int64(s.led_suit[g]) + 1) * t.num_cards[0]
    first, best = np.int64(s.leader[g]), np.int64(-(2**62))
    for seat in range(t.num_players[0]):
        card = np.int64(s.trick_cards[g, seat])
        if card >= 0:
            best = max(best, np.int64(t.power_flat[row + card]) * 64 + t.trick_key_low[first, seat])
    return best


@numba.njit(cache=True, inline="always")
def advance_game(s, t, g, action):
    """Record ``action`` and apply it in game ``g`` of ``s`` (:data:`GameState`) under the rules' tables ``t``
    (:data:`RuleTables`): the engine's bid, play and finish trick. True when its hand is over.

    The one step of the compiled core: :func:`advance` runs it over a batch, the IS-MCTS simulator
    (:func:`step_game`, and its playouts) and the AEC env on one game.
    """
    n, num_cards = t.num_players[0], t.num_cards[0]
    voids_shown, led_after, is_trump = t.voids_shown, t.led_after, t.is_trump
    current_player, phase, leader, bids, bids_made, bid_total, hands, played, played_order, voids = (
        s.current_player, s.phase, s.leader, s.bids, s.bids_made, s.bid_total, s.hands, s.played, s.played_order,
        s.voids,
    )
    led_suit, trump, trump_broken, trick_cards, trick_size, tricks_won, tricks_done, hand_size = (
        s.led_suit, s.trump, s.trump_broken, s.trick_cards, s.trick_size, s.tricks_won, s.tricks_done, s.hand_size,
    )
    action_count = s.action_count
    s.actions[g, action_count[g]] = action
    action_count[g] += 1
    seat = np.int64(current_player[g])
    if action >= num_cards:  # a bid (BlackoutGame.bid)
        tricks = action - num_cards
        bids[g, seat] = tricks
        bid_total[g] += tricks
        bids_made[g] += 1
        if bids_made[g] == n:
            phase[g] = PLAY
            current_player[g] = leader[g]
        else:
            phase[g] = BID
            current_player[g] = seat + 1 if seat + 1 < n else 0  # (seat + 1) % n without a division
        return False
    # a card (BlackoutGame.play)
    card = action
    bit = np.uint64(1) << np.uint64(card)
    hands[g, seat] &= ~bit
    played[g, seat] |= bit
    played_order[g, seat, tricks_done[g]] = card
    led = np.int64(led_suit[g])
    suit = np.int64(trump[g])
    voids[g, seat] |= voids_shown[np.int64(trick_size[g] == 0), np.int64(trump_broken[g]), suit + 1, led + 1, card]
    led_suit[g] = led_after[led + 1, card]
    trump_broken[g] |= is_trump[suit + 1, card]
    trick_cards[g, seat] = card
    size = trick_size[g] + 1
    trick_size[g] = size
    if size != n:
        current_player[g] = seat + 1 if seat + 1 < n else 0
        return False
    current_player[g] = seat
    first = np.int64(leader[g])
    winner = trick_best(s, t, g) & 7  # the trick's end
    tricks_won[g, winner] += 1
    for seat in range(n):
        s.last_trick[g, seat] = trick_cards[g, seat]
        trick_cards[g, seat] = NONE
    s.last_trick_leader[g] = first
    s.last_trick_winner[g] = winner
    trick_size[g] = 0
    led_suit[g] = NONE
    done = tricks_done[g] + 1
    tricks_done[g] = done
    leader[g] = winner
    current_player[g] = winner
    return done == hand_size[g]


@numba.njit(cache=True, _nrt=False)
def advance(state, tables, actions, games, over):
    """:func:`advance_game` in games ``games`` (ascending) of ``state`` with their ``actions``: the games whose hand is
    over go to ``over``, and their count is returned.
    """
    s, t = unpack_bytes(state), unpack_tables(tables)
    count = 0
    for g in games:
        if advance_game(s, t, g, actions[g]):
            over[count] = g
            count += 1
    return count


@numba.njit(cache=True, inline="always")
def legal_game(s, t, g):
    """The acting seat's legal cards (bitset) and the dealer's forbidden bid (NONE: none) in game ``g`` of ``s``."""
    hand = s.hands[g, s.current_player[g]]
    suit_bits = t.suit_bits
    legal = np.uint64(0)
    forbidden = NONE
    if s.phase[g] == PLAY:
        leads = s.trick_size[g] == 0
        follow = suit_bits[0] if leads else suit_bits[s.led_suit[g] + 1]  # suit_bits[0]: no suit, no card
        breaks = suit_bits[s.trump[g] + 1] if t.must_break[0] and leads and not s.trump_broken[g] else suit_bits[0]
        legal = _playable(leads, hand, follow, breaks, t.joker_bits[0], t.standard_bits[0])
    elif s.bids_made[g] == t.num_players[0] - 1:
        forbidden = t.forbidden_bid[s.hand_size[g], s.bid_total[g]]
    s.legal_cards[g] = legal
    s.forbidden_bid[g] = forbidden


@numba.njit(cache=True, _nrt=False)
def compute_legal(state, tables, games):
    """BatchedBlackout._compute_legal: :func:`legal_game` in games ``games`` of ``state``."""
    s, t = unpack_bytes(state), unpack_tables(tables)
    for g in games:
        legal_game(s, t, g)


@numba.njit(cache=True, inline="always")
def mask_row(row, num_cards, legal_cards, phase, hand_size, forbidden_bid):
    """One game's action mask: 1 at the legal cards, and at bids 0..hand size less the forbidden one while bidding."""
    row[:] = 0
    _set_cards(row, 0, legal_cards, np.int8(1))
    if phase == BID:
        for k in bid_range(hand_size):
            if k != forbidden_bid:
                row[num_cards + k] = 1


@numba.njit(cache=True)
def action_mask(state, tables, mask):
    """_action_mask: :func:`mask_row` for every game of ``state``."""
    s = unpack_bytes(state)
    num_cards = unpack_tables(tables).num_cards[0]
    for g in range(mask.shape[0]):
        mask_row(mask[g], num_cards, s.legal_cards[g], s.phase[g], s.hand_size[g], s.forbidden_bid[g])
    return mask


@numba.njit(cache=True, inline="always")
def random_bid(draw, hand_size, forbidden):
    """The bid (tricks) of a uniform ``draw`` in [0, 1): its place in the bid_range less ``forbidden`` (NONE: none)."""
    hooked = forbidden != NONE
    tricks = np.int64(draw * (len(bid_range(hand_size)) - np.int64(hooked)))
    if hooked and tricks >= forbidden:
        tricks += 1
    return tricks


@numba.njit(cache=True)
def random_actions(state, tables, uniform, games):
    """_random_actions for games ``games`` from their ``uniform`` draws: the r-th legal card, or a bid."""
    s = unpack_bytes(state)
    num_cards = unpack_tables(tables).num_cards[0]
    phase, legal_cards, hand_size, forbidden_bid = s.phase, s.legal_cards, s.hand_size, s.forbidden_bid
    actions = np.empty(len(games), dtype=np.int64)
    for i in range(len(games)):
        g = games[i]
        if phase[g] == PLAY:
            rest = legal_cards[g]
            count = 0
            bits = rest
            while bits:
                bits &= bits - np.uint64(1)
                count += 1
            rank = np.int64(uniform[i] * count)
            for _ in range(rank):
                rest &= rest - np.uint64(1)
            actions[i] = _lowest(rest)
        else:
            actions[i] = num_cards + random_bid(uniform[i], hand_size[g], forbidden_bid[g])
    return actions


@numba.njit(cache=True)
def finish_hands(state, tables, games, round_scores, last_hand_bids, last_hand_tricks):
    """_finish_hands for games ``games``: the hand scores (games x seats, int32), added to the totals."""
    s = unpack_bytes(state)
    hand_score = unpack_tables(tables).hand_score
    n = s.bids.shape[1]
    hand_scores = np.empty((len(games), n), dtype=np.int32)
    for i in range(len(games)):
        g = games[i]
        r = s.round_index[g]
        for seat in range(n):
            bid = s.bids[g, seat]
            won = s.tricks_won[g, seat]
            last_hand_bids[g, seat] = bid
            last_hand_tricks[g, seat] = won
            score = hand_score[bid, won]
            hand_scores[i, seat] = score
            s.scores[g, seat] += score
            round_scores[g, r, seat] = score
    return hand_scores


# ------------------------------------------------------------- deal, shuffle
@numba.njit(cache=True)
def shuffle(uniform, size):
    """BatchedBlackout._shuffle from its ``uniform`` draws (positions x decks): Fisher-Yates, stopped after the drawn positions."""
    count = uniform.shape[1]
    decks = np.empty((count, size), dtype=np.int8)
    for row in range(count):
        for card in range(size):
            decks[row, card] = card
    # Position by position over all decks: each deck still takes its swaps in order, and the draws of one
    # position are read in memory order (deck by deck they are a column of ``uniform``, one cache line each).
    for position in range(uniform.shape[0]):
        draws = uniform[position]
        left = size - position
        for row in range(count):
            # swap position with a card drawn uniformly from positions position..size-1
            drawn = position + np.int64(draws[row] * left)
            card = decks[row, position]
            decks[row, position] = decks[row, drawn]
            decks[row, drawn] = card
    return decks


@numba.njit(cache=True, inline="always")
def deal_game(s, t, g, deck, dealer, turned_trump):
    """Deal round ``round_index`` in game ``g`` of ``s`` from ``deck`` by ``dealer``: deck card k goes to seat
    deal_seat[dealer, k], k < n * hand size.

    The rule facts come as the batched engine's tables (built from rules_logic): ``deal_seat`` (dealt_to),
    ``first_to_act``, ``turned_position`` and ``turned_held`` (turned_card, per round).
    """
    n = t.num_players[0]
    hands, played_order = s.hands, s.played_order
    r = np.int64(s.round_index[g])
    cards = np.int64(t.hand_sizes[r])
    for seat in range(n):
        hands[g, seat] = 0
    for k in range(n * cards):
        hands[g, t.deal_seat[dealer, k]] |= np.uint64(1) << np.uint64(deck[k])
    s.hand_size[g] = cards
    s.dealer[g] = dealer
    if not turned_trump:  # the rules name the suit of each hand
        s.turned_card[g] = NONE
        s.turned_card_held_by_dealer[g] = False
        s.trump[g] = t.rule_trump[r]
    else:
        position = t.turned_position[r]
        turned = np.int64(deck[position]) if position >= 0 else NONE
        # dealer_last: the dealer's last dealt card is shown and names trump
        s.turned_card_held_by_dealer[g] = t.turned_held[r]
        s.turned_card[g] = turned
        s.trump[g] = t.suit_or_none[turned + 1]  # a turned joker (or no card): no trump
    start = t.first_to_act[dealer]
    s.phase[g] = BID
    s.leader[g] = start
    s.current_player[g] = start
    s.bids_made[g] = 0
    s.bid_total[g] = 0
    s.tricks_done[g] = 0
    s.trick_size[g] = 0
    s.led_suit[g] = NONE
    s.trump_broken[g] = False
    s.last_trick_leader[g] = NONE
    s.last_trick_winner[g] = NONE
    for seat in range(n):
        s.bids[g, seat] = NONE
        s.tricks_won[g, seat] = 0
        s.trick_cards[g, seat] = NONE
        s.last_trick[g, seat] = NONE
        s.played[g, seat] = 0
        s.voids[g, seat] = 0
        for k in range(played_order.shape[2]):
            played_order[g, seat, k] = NONE
    s.round_start[g] = s.action_count[g]


@numba.njit(cache=True)
def deal(state, tables, games, turned_trump, decks, first_dealer):
    """BatchedBlackout._deal: :func:`deal_game` in games ``games`` of ``state``, from their decks of the round."""
    s, t = unpack_bytes(state), unpack_tables(tables)
    for g in games:
        r = np.int64(s.round_index[g])
        dealer = (np.int64(first_dealer[g]) + r) % t.num_players[0]  # mirrors rules_logic.dealer_of_round
        deal_game(s, t, g, decks[g, r], dealer, turned_trump)


# -------------------------------------------------------------- one game
# One game, for the AEC env (one game of a match) and for a search that steps one determinized hand at a
# time (the IS-MCTS simulator): new_state(1, ..., words=True), the batch's state for a batch of one in 64-bit
# words (Python reads and writes its items at each field's start, field_starts), under the batch's tables.


def one_game(seats: int, tricks: int) -> np.ndarray:
    """A fresh one-game state of ``seats`` seats with room for hands of ``tricks`` tricks (and their actions)."""
    return new_state(1, seats, tricks, seats * (tricks + 1), words=True)


@numba.njit(cache=True, inline="always")
def step_one(s, t, action):
    """advance_game, then legal_game, for the one game of ``s``; True when the hand is over."""
    over = advance_game(s, t, 0, action)
    legal_game(s, t, 0)
    return over


@numba.njit(cache=True, _nrt=False)
def step_game(state, tables, action):
    """Apply ``action`` (legal) in the one game of ``state`` and compute the next legal set; True when the hand is over."""
    return step_one(unpack_words(state), unpack_tables_inline(tables), action)


@numba.njit(cache=True, _nrt=False)
def legal_of_game(state, tables):
    """Compute the legal set of the one game of ``state`` (after it was written from outside)."""
    legal_game(unpack_words(state), unpack_tables_inline(tables), 0)


# ------------------------------------------------------------ the AEC env
# The AEC env's game is a one-game state with room for its largest hand and one more trick (a finished
# hand is observed too). Its observation is encode_row's on that game; the encoder's inputs come in one
# int64 array (the block offsets in ENCODER_BLOCKS' order, ENV_SIZES, then encode_row's ``wrap``) and one
# float32 array (the scaled counts 0..max bid, the scaled rounds, then the bid_impossible table): numba
# reads the type of every array argument at every call, so few arrays cost less.
ENV_SIZES = ("bid_width", "no_suit", "score_scale", "counts", "rounds")
ILLEGAL, MOVED, TRICK_OVER, HAND_OVER = -1, 0, 1, 2
"""What env_step returns."""


@numba.njit(cache=True, inline="always")
def _env_observe(s, t, encoding, floats, row, mask, observer):
    """The acting seat's mask into ``mask`` and seat ``observer``'s observation into ``row``."""
    num_cards = t.num_cards[0]
    mask_row(mask, num_cards, s.legal_cards[0], s.phase[0], s.hand_size[0], s.forbidden_bid[0])
    o = len(ENCODER_BLOCKS)
    bid_width, no_suit, score_scale, counts, rounds = (
        encoding[o], encoding[o + 1], encoding[o + 2], encoding[o + 3], encoding[o + 4]
    )
    encode_row(
        row, 0, observer, block_offsets(encoding), encoding[o + len(ENV_SIZES) :],
        (t.num_players[0], num_cards, bid_width, no_suit, score_scale),
        (floats[:counts], floats[counts : counts + rounds], floats[counts + rounds :]), s,
    )


@numba.njit(cache=True, _nrt=False)
def env_step(state, tables, encoding, floats, row, mask, action):
    """The AEC env's move: ``action`` in the one game of ``state``, if legal.

    Returns ILLEGAL (nothing changed), HAND_OVER (the env scores the hand, then deals or ends), or
    TRICK_OVER or MOVED, after which ``mask`` holds the next seat's legal actions and ``row`` its observation.
    """
    s, t = unpack_words(state), unpack_tables_inline(tables)
    num_cards = t.num_cards[0]
    if not action_legal(action, num_cards, s.legal_cards[0], s.phase[0], s.hand_size[0], s.forbidden_bid[0]):
        return ILLEGAL
    if step_one(s, t, action):
        return HAND_OVER
    _env_observe(s, t, encoding, floats, row, mask, np.int64(s.current_player[0]))
    return TRICK_OVER if action < num_cards and s.trick_size[0] == 0 else MOVED


@numba.njit(cache=True, _nrt=False)
def env_deal(state, tables, encoding, floats, row, mask, deck, dealer, turned_trump):
    """The AEC env's deal: :func:`deal_game` of round ``round_index`` (written from outside) from ``deck`` by
    ``dealer``, then the first seat's legal set, mask and observation (as :func:`env_observe`)."""
    s, t = unpack_words(state), unpack_tables_inline(tables)
    deal_game(s, t, 0, deck, dealer, turned_trump)
    legal_game(s, t, 0)
    _env_observe(s, t, encoding, floats, row, mask, np.int64(s.current_player[0]))


@numba.njit(cache=True, _nrt=False)
def env_observe(state, tables, encoding, floats, row, mask, observer):
    """The legal set of the one game of ``state`` (after it was written from outside), the acting seat's mask
    into ``mask`` and seat ``observer``'s observation into ``row``."""
    s, t = unpack_words(state), unpack_tables_inline(tables)
    legal_game(s, t, 0)
    _env_observe(s, t, encoding, floats, row, mask, np.int64(observer))


key_caches_on(globals(), CORE_SOURCES)
