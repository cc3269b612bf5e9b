"""The batched engine: thousands of Blackout games stepped at once, the project's compiled core.

:class:`BatchedBlackout` holds ``num_envs`` games as arrays (one row per game,
one state in one array, each field a view of it) and advances all of them with one call, pgx/EnvPool
style. The per-move work (deal, legal actions, bid, play, trick winner, finish
trick, finish hand) and the observation encoder are numba-compiled loops over
the games (:mod:`blackout_env.batched._kernels`), which mirror
:mod:`blackout_env.game.engine` function by function and read lookup tables built
from :mod:`blackout_env.game.rules_logic`; differential tests play the same deals and
actions through both and compare them state by state. This class holds the
state, checks input, draws random numbers and hands the arrays to the kernels.
numba is a dependency of the package; it is imported on the first engine built,
not by ``import blackout_env``.

==============================  ==========================================================
``reset(seed, decks, rounds)``  start a fresh episode in every game; returns a :class:`BatchStep`
``step(actions)``               one action per game (an int array of shape ``(num_envs,)``)
``step(actions, active=mask)``  a partial step: only the games in ``mask`` advance
``observe()``                   the acting seats' observations now (after steps with ``observe=False``)
``action_mask()``               the acting seats' legal actions now (likewise)
``random_actions(rng)``         a uniformly random legal action in every game
``view(game, player)``          the engine's :class:`~blackout_env.game.view.PlayerView` of one game
``to_game(game)``               the match so far, replayed in a :class:`~blackout_env.game.engine.BlackoutGame`
==============================  ==========================================================

Both ``reset`` and ``step`` return a :class:`BatchStep` ``(current_player, observation,
action_mask, rewards, done)``, one row per game (its fields give their dtypes and shapes). The
observation is bit for bit :func:`blackout_env.game.encoding.encode` of the acting seat's view (with
``observation="universal"``, :func:`blackout_env.game.universal.universal_observation` of it).

Actions are those of the engine: card ``c`` (``0..C-1``) plays ``c``, ``C + k`` bids ``k``.

A partial step, ``step(actions, active=mask)`` with a bool ``mask`` of shape
``(num_envs,)``, advances only the games where ``mask`` is true; the others keep
their state, their actions are ignored (not even checked), their ``rewards``
are 0 and ``done`` false. ``step(..., observe=False)`` skips the observation
and the mask (both are None in that step), and ``observe()`` and
``action_mask()`` build them later: a caller that steps some seats without
looking (random opponents, in :mod:`blackout_env.envs.vector_env`) encodes once.

Rewards (``"score"``, ``"zero_sum"``, ``"win"``; times ``reward_scale``) and episodes (``"match"``,
``"hand"``) are the AEC env's (:func:`~blackout_env.game.rules_logic.seat_rewards`); a ``"hand"`` episode
plays one hand of the match, drawn uniformly per game unless ``reset(rounds=...)`` fixes it, with scores
starting at zero, as the engine's ``start_round`` (with ``"win"`` rewards the hand's best scores win).

Automatic reset: a game whose episode ends in a step is reset within that step.
Its ``rewards`` and ``done`` in that step belong to the finished episode; its
``current_player``, ``observation`` and ``action_mask`` are already those of
the first bid of the new episode (the same convention as pgx and EnvPool).
New episodes take their deck orders from the batched engine's random generator
(seeded by ``seed``; only the cards dealt and turned are shuffled, the rest of
the deck is never seen); ``reset(decks=...)`` fixes the deals of the first episode
of every game. Every deck order in use is readable in ``decks``
(``(num_envs, num_rounds, deck_size)``), and ``first_dealer`` and
``start_round`` hold each game's first dealer and first hand, so any game can
be replayed in the engine (``to_game``).

Copies: ``copy.deepcopy`` and pickle give an exact, independent copy (same
games, same random stream): stepped with the same actions, a copy returns
the same ``BatchStep`` fields as the original.

Memory: the constructor estimates what ``num_envs`` games need
(:func:`bytes_per_game`) and refuses, with the figure, a batch larger than
the memory available.

Bad input (actions of the wrong shape or dtype, an illegal action in any game,
a deck order that is not a permutation) raises a ``ValueError`` (an
:class:`~blackout_env.game.engine.IllegalActionError` for illegal actions) naming
the game and the action, and no game is advanced.
"""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from .._checks import check_choice, check_number, check_seed
from ..game.cards import NUM_STANDARD_CARDS, suit_of
from ..game.encoding import PHASES, observation_size
from ..game.engine import (
    BlackoutGame,
    DeckOrder,
    IllegalActionError,
    _check_deck,
    _check_deck_dealer,
    illegal_action_message,
)
from ..game.rules import Rules
from ..game.rules_logic import (
    REWARDS,
    bid_range,
    card_power,
    dealer_of_round,
    dealt_to,
    first_to_act,
    forbidden_bid,
    is_trump,
    seat_rewards,
    suit_led_after,
    trick_winner,
    turned_card,
    voids_shown,
)
from ..game.universal import observation_kind, universal_observation, universal_size
from ..game.view import PlayerView
from ._compiled import kernels, numba_available
from ._encoding import BatchedEncoder

__all__ = ["BatchedBlackout", "BatchStep", "EPISODES", "REWARDS", "numba_available"]

EPISODES = ("match", "hand")

BID, PLAY = 0, 1
"""Values of ``phase``: every game is bidding or playing (a finished match is reset at once)."""
NONE = -1
"""No card, no suit, no seat, no bid: the batched spelling of the engine's None."""


def bytes_per_game(rules: Rules, observations: bool = True) -> int:
    """About how many bytes of memory one game of the batched engine takes, step temporaries included.

    An upper estimate: the state arrays, the observation buffer, its copies and the
    per-step arrays (masks, random-action scores) that grow with the number of games.
    """
    n, rounds, max_bid = rules.num_players, rules.num_rounds, rules.max_bid
    max_actions = rules.decisions_per_match
    state = rounds * rules.deck_size + 4 * rounds * n + n * max_bid + max_actions + 32 * n + 64
    per_step = 10 * rules.num_actions + 8 * n + 64  # masks (int8), action scores (float64), rewards
    encoder = 4 * 4 * observation_size(rules) + 2 * 8 * 64 if observations else 0  # buffer + 3 copies, cells
    return state + per_step + encoder


def _check_memory(rules: Rules, num_envs: int, observations: bool) -> None:
    """Refuse, with the figure, a batch that cannot fit in this machine's memory."""
    needed = num_envs * bytes_per_game(rules, observations)
    available = _available_memory()
    if available is not None and needed > available:
        raise ValueError(
            f"num_envs: {num_envs:,} games need about {needed / 2**30:,.1f} GiB "
            f"({bytes_per_game(rules, observations):,} bytes per game), more than the "
            f"{available / 2**30:,.1f} GiB of memory available; use fewer games"
        )


def _available_memory() -> int | None:
    """Bytes of memory available now (Linux), else the physical memory, else None (unknown)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # pragma: no cover - platforms without sysconf
        return None



def action_array(actions: Any, num_envs: int) -> np.ndarray:
    """``actions`` as an int64 array of one action per game, or a ValueError naming what is wrong."""
    array = np.asarray(actions)
    if array.shape != (num_envs,):
        raise ValueError(f"actions: expected shape ({num_envs},), one action per game; got {array.shape}")
    if array.dtype.kind not in "iu":
        raise ValueError(f"actions: expected integer actions, got dtype {array.dtype}")
    return array.astype(np.int64)

class BatchStep(NamedTuple):
    """What :meth:`BatchedBlackout.reset` and :meth:`BatchedBlackout.step` return (one row per game)."""

    current_player: np.ndarray
    """int8 ``(num_envs,)``: the seat to act."""
    observation: np.ndarray | None
    """float32 ``(num_envs, observation_size)``: the acting seat's observation, or None when disabled."""
    action_mask: np.ndarray | None
    """int8 ``(num_envs, num_actions)``: 1 at the acting seat's legal actions (None after ``step(observe=False)``)."""
    rewards: np.ndarray
    """float32 ``(num_envs, num_players)``: per seat, earned in this step."""
    done: np.ndarray
    """bool ``(num_envs,)``: an episode ended in this step (the game was reset or moved to the next hand)."""


def _none_to(value: int | None) -> int:
    """The batched spelling of a suit, card or bid that may be None: NONE for None."""
    return NONE if value is None else value


class _Tables:
    """Lookup tables of one rule set: every per-card or per-count fact the steps need."""

    def __init__(self, rules: Rules) -> None:
        num_cards = rules.num_cards
        max_bid = rules.max_bid
        cards = np.arange(num_cards)
        card_bit = np.left_shift(np.uint64(1), np.arange(64, dtype=np.uint64))
        # suit_bits[suit + 1]: the cards of a suit; index 0 (no suit) holds none
        self.suit_bits = np.zeros(5, dtype=np.uint64)
        for suit in range(4):
            self.suit_bits[suit + 1] = np.bitwise_or.reduce(card_bit[suit * 13 : suit * 13 + 13])
        self.standard_bits = np.bitwise_or.reduce(card_bit[:NUM_STANDARD_CARDS])
        self.joker_bits = np.uint64(0)
        for card in range(NUM_STANDARD_CARDS, num_cards):
            self.joker_bits |= card_bit[card]
        # The rule facts, evaluated on every input by the functions of blackout_env.game.rules_logic; the
        # index of a suit, led suit or trump is its value + 1 (0: NONE, no suit).
        suits = (None, 0, 1, 2, 3)
        # power_flat[((trump + 1) * 5 + led + 1) * num_cards + card]: card_power (the first of equal powers
        # wins: see trick_key_low)
        self.power_flat = np.array(
            [[[card_power(card, led, trump) for card in cards.tolist()] for led in suits] for trump in suits],
            dtype=np.int16,
        ).ravel()
        # led_after[led + 1, card]: the led suit once the card is played (NONE while only jokers are in)
        self.led_after = np.array(
            [[_none_to(suit_led_after(led, card)) for card in cards.tolist()] for led in suits], dtype=np.int8
        )
        # suit_or_none[card + 1]: the suit of a card, NONE for a joker or for no card (NONE)
        self.suit_or_none = np.array([NONE] + [_none_to(suit_of(card)) for card in cards.tolist()], dtype=np.int8)
        # is_trump[trump + 1, card]: the card is a trump (and breaks trump when played)
        self.is_trump = np.array([[is_trump(card, trump) for card in cards.tolist()] for trump in suits])
        # voids_shown[leads, trump_broken, trump + 1, led + 1, card]: 4-bit flags (bit s: suit s)
        must_break = rules.lead_trump == "broken"
        self.voids_shown = np.zeros((2, 2, 5, 5, num_cards), dtype=np.uint8)
        for leads, broken, (t, trump), (led_index, led), card in itertools.product(
            (False, True), (False, True), enumerate(suits), enumerate(suits), cards.tolist()
        ):
            shown = voids_shown(card, led, trump, leads=leads, trump_broken=broken, must_break=must_break)
            self.voids_shown[int(leads), int(broken), t, led_index, card] = sum(1 << suit for suit in shown)
        # trick_key_low[leader, seat]: the low 6 bits of a card's trick key, power * 64 + this: of equal
        # powers (only two jokers) the card that trick_winner prefers ranks higher (the first played, asked of
        # trick_winner with two jokers), then the seat, so the key's largest value names the winner.
        n = rules.num_players
        order = (np.arange(n)[None, :] - np.arange(n)[:, None]) % n  # order[leader, seat]: 0 = led
        first_wins_ties = trick_winner([(0, NUM_STANDARD_CARDS), (1, NUM_STANDARD_CARDS + 1)], None) == 0
        self.trick_key_low = (((7 - order) if first_wins_ties else order) * 8 + np.arange(n)).astype(np.int32)
        # forbidden_bid[hand_size, bid_total]: the dealer's forbidden bid (NONE: none), read at the dealer's bid
        max_total = rules.num_players * max_bid
        self.forbidden_bid = np.array(
            [
                [_none_to(forbidden_bid(size, total, hook=rules.hook)) for total in range(max_total + 1)]
                for size in range(max_bid + 1)
            ],
            dtype=np.int8,
        )
        self.hand_score = np.array(
            [[rules.hand_score(bid, won) for won in range(max_bid + 1)] for bid in range(max_bid + 1)],
            dtype=np.int32,
        )
        self.hand_sizes = np.array(rules.hand_sizes, dtype=np.int8)
        # The deal: deal_seat[dealer, k] (dealt_to) the seat that gets deck card k; first_to_act[dealer] the seat
        # that bids first and leads.
        deck_positions = range(rules.deck_size)
        self.deal_seat = np.array([[dealt_to(k, dealer, n) for k in deck_positions] for dealer in range(n)], dtype=np.int64)
        self.first_to_act = np.array([first_to_act(dealer, n) for dealer in range(n)], dtype=np.int8)
        # turned_position[round]: the deck position of the turned card (turned_card asked of a deck whose card
        # k is k; NONE when none is turned), turned_held[round]: the dealer holds it (dealer_last)
        turned = [
            turned_card(deck_positions, n, size, rules.trump, rules.no_card_trump) for size in rules.hand_sizes
        ]
        self.turned_position = np.array([_none_to(position) for position, _ in turned], dtype=np.int64)
        self.turned_held = np.array([held for _, held in turned], dtype=bool)
        rounds = np.arange(rules.num_rounds)
        self.rule_trump = np.array(
            [NONE if (s := rules.trump_rule_suit(int(r))) is None else s for r in rounds], dtype=np.int8
        )


_GAME_TABLES: dict[Rules, np.ndarray] = {}


def game_tables(rules: Rules) -> np.ndarray:
    """The tables of ``rules`` for the compiled core's kernels, in one array (``_kernels.TABLE_FIELDS``).

    The tables of :class:`_Tables`, laid out by the core's field list; built once per rules value and shared
    (read-only) by the batched engines, AEC envs and searches of these rules.
    """
    tables = _GAME_TABLES.get(rules)
    if tables is None:
        t = _Tables(rules)
        n, max_bid = rules.num_players, rules.max_bid
        tables = kernels().TABLES.new(
            seats=n, cards=rules.num_cards, cards_or_none=rules.num_cards + 1, powers=25 * rules.num_cards,
            counts=max_bid + 1, totals=n * max_bid + 1, rounds=rules.num_rounds, deck=rules.deck_size,
        )
        values = {"num_players": n, "num_cards": rules.num_cards, "max_bid": max_bid,
                  "must_break": rules.lead_trump == "broken"}
        for name, view in zip(kernels().RuleTables._fields, kernels().TABLES.views(tables)):
            view[...] = values[name] if name in values else getattr(t, name)
        tables.flags.writeable = False
        _GAME_TABLES[rules] = tables
    return tables


def bits_to_cards(bits: int) -> tuple[int, ...]:
    """The cards of a bitset (bit c = card c), ascending."""
    return tuple(card for card in range(bits.bit_length()) if bits >> card & 1)


def one_game_view(
    g: Sequence[int], at: Any, rules: Rules, seat: int, round_scores: Sequence[Sequence[int]]
) -> PlayerView:
    """Seat ``seat``'s :class:`PlayerView` of a one-game state of words (``_kernels.one_game``).

    ``g`` holds the state's words (an ``array.array`` or a list), ``at`` where each field starts
    (``_kernels.field_starts``) and ``round_scores`` the match's finished hands; the legal actions are read
    from the state's ``legal_cards`` and ``forbidden_bid``. The AEC env's view of its game, and
    :meth:`BatchedBlackout.view` of one game copied out of the batch.
    """
    n, tricks = rules.num_players, g[2]  # (the state's head: its games, seats, tricks and moves)
    current, leader, last_leader = g[at.current_player], g[at.leader], g[at.last_trick_leader]
    trump, turned, led, last_winner = g[at.trump], g[at.turned_card], g[at.led_suit], g[at.last_trick_winner]
    played = [at.played_order + s * tricks for s in range(n)]  # each seat's cards in trick order
    legal: tuple[int, ...] = ()
    if seat == current and g[at.phase] == PLAY:
        legal = bits_to_cards(g[at.legal_cards])
    elif seat == current:
        forbidden = g[at.forbidden_bid]
        legal = tuple(rules.num_cards + k for k in bid_range(g[at.hand_size]) if k != forbidden)
    return PlayerView(
        player=seat,
        rules=rules,
        phase=PHASES[g[at.phase]],  # (the core's BID, PLAY, GAME_OVER: 0, 1, 2)
        current_player=None if current < 0 else current,
        round_index=g[at.round_index],
        hand_size=g[at.hand_size],
        dealer=g[at.dealer],
        hand=bits_to_cards(g[at.hands + seat]),
        trump=None if trump < 0 else trump,
        turned_card=None if turned < 0 else turned,
        turned_card_held_by_dealer=bool(g[at.turned_card_held_by_dealer]),
        bids=tuple(None if bid < 0 else bid for bid in g[at.bids : at.bids + n]),
        tricks_won=tuple(g[at.tricks_won : at.tricks_won + n]),
        current_trick=tuple(((leader + k) % n, g[at.trick_cards + (leader + k) % n]) for k in range(g[at.trick_size])),
        leader=leader,
        led_suit=None if led < 0 else led,
        last_trick=() if last_leader < 0 else tuple(
            ((last_leader + k) % n, g[at.last_trick + (last_leader + k) % n]) for k in range(n)
        ),
        last_trick_winner=None if last_winner < 0 else last_winner,
        played=tuple(tuple(g[start : start + g[at.played + s].bit_count()]) for s, start in enumerate(played)),
        voids=tuple(frozenset(suit for suit in range(4) if bits >> suit & 1) for bits in g[at.voids : at.voids + n]),
        trump_broken=bool(g[at.trump_broken]),
        scores=tuple(g[at.scores : at.scores + n]),
        round_scores=tuple(map(tuple, round_scores)),
        legal_actions=legal,
        round_actions=tuple(g[at.actions + g[at.round_start] : at.actions + g[at.action_count]]),
    )


class BatchedBlackout:
    """``num_envs`` Blackout matches under one :class:`Rules`, stepped together.

    Args:
        rules: a :class:`Rules`, a preset name, a YAML path or a mapping of overrides.
        num_envs: how many games.
        episode: ``"match"`` or ``"hand"`` (see the module docstring).
        reward: ``"score"``, ``"zero_sum"`` or ``"win"``.
        reward_scale: every reward is multiplied by it.
        observations: build observations (False skips them for fast rollouts).
        copy: return a fresh observation array every step (the encoder writes
            it directly, reusing an earlier one that nobody holds any more: as
            fast as False); with False the observation is a read-only buffer
            that the next step overwrites (copy it to keep it). Masks, rewards
            and the rest are always fresh arrays.
        seed: seeds the generator that shuffles the decks (and draws random first dealers).
        observation: ``"rules"`` (the rules-sized vector) or ``"universal"`` (one size for every
            rule set, :mod:`blackout_env.game.universal`); the actions and masks are the rules' own either way.

    The first engine built on a machine compiles the kernels (docs/batched.md has the time),
    then they are cached on disk.

    The state of every game is public, one row per game (seats absolute, NONE = -1):
    ``round_index``, ``first_dealer``, ``dealer``, ``hand_size``, ``phase`` (BID 0 / PLAY 1),
    ``current_player``, ``leader``, ``hands`` (uint64 bitsets per seat: bit c = card c),
    ``bids``, ``tricks_won``, ``trick_cards`` (card per seat in the current trick),
    ``trick_size``, ``led_suit``, ``trump``, ``turned_card``, ``turned_card_held_by_dealer``,
    ``trump_broken``, ``last_trick`` (card per seat), ``last_trick_leader``,
    ``last_trick_winner``, ``played`` (bitsets), ``voids`` (4-bit suit flags), ``scores``,
    ``round_scores`` (per round), ``decks``, ``start_round``. Treat them as read-only.
    The acting seat's legal moves are :attr:`legal_cards` (uint64 bitsets) and
    :attr:`forbidden_bid` (the dealer's hooked bid, NONE when no bid is hooked), kept
    current by every step; :meth:`action_mask` spreads them into one row per game.
    After each step, ``hand_over`` marks the games that finished a hand in it, and
    ``last_hand_bids`` / ``last_hand_tricks`` hold each game's last finished hand
    (read them before the next step; the hand's own arrays already show the next deal).
    """

    def __init__(
        self,
        rules: Rules | str | Any = None,
        num_envs: int = 1024,
        *,
        episode: str = "match",
        reward: str = "score",
        reward_scale: float = 1.0,
        observations: bool = True,
        copy: bool = True,
        seed: int | np.random.Generator | None = None,
        observation: str = "rules",
    ) -> None:
        self.rules = rules = Rules.resolve(rules)
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs: expected a positive int, got {num_envs!r}")
        check_choice("episode", episode, EPISODES)
        check_choice("reward", reward, REWARDS)
        reward_scale = check_number("reward_scale", reward_scale)
        if rules.deck_size > 64:  # pragma: no cover - a deck has at most 54 cards
            raise ValueError("the batched engine holds hands as 64-bit sets: at most 64 cards")
        check_seed(seed)
        _check_memory(rules, int(num_envs), bool(observations))
        self.num_envs = num_envs = int(num_envs)
        self.num_players = n = rules.num_players
        self.num_cards = rules.num_cards
        self.num_actions = rules.num_actions
        self.episode = episode
        self.reward = reward
        self.reward_scale = reward_scale
        self.observations = bool(observations)
        self.copy = bool(copy)
        self._t = _Tables(rules)
        self._tables = game_tables(rules)  # the same tables in the core's layout, for the kernels
        self._rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        self._games = np.arange(num_envs)
        self.observation = observation_kind(observation)
        self.observation_size = universal_size() if self.observation == "universal" else observation_size(rules)
        self._encoder = BatchedEncoder(rules, num_envs) if self.observations else None
        # The universal vectors are scattered from the rules-sized ones (the same function as the envs').
        self._universal = np.zeros((num_envs, universal_size()), np.float32) if self.observation == "universal" else None
        self._universal_filled = False
        self._spare_observations: list[np.ndarray] = []

        rounds, deck_size, max_bid = rules.num_rounds, rules.deck_size, rules.max_bid
        max_actions = rules.decisions_per_match
        b = num_envs
        self.decks = np.broadcast_to(np.arange(deck_size, dtype=np.int8), (b, rounds, deck_size)).copy()
        self.first_dealer = np.zeros(b, dtype=np.int8)
        self.start_round = np.zeros(b, dtype=np.int8)
        # Every game's state in one array (the compiled core's layout, GAME_FIELDS), each field a public view of it
        self._state = kernels().new_state(b, n, max_bid, max_actions)
        self._set_views()
        one = kernels().new_state(1, n, max_bid, max_actions, words=True)  # one game's layout in words (view)
        self._one_head, self._one_at = one[: kernels().STATE.head].tolist(), kernels().field_starts(one)
        self.round_scores = np.zeros((b, rounds, n), dtype=np.int32)
        # What the last step finished: which games ended a hand, and that hand's bids and tricks.
        self.hand_over = np.zeros(b, dtype=bool)
        self.last_hand_bids = np.full((b, n), NONE, dtype=np.int8)
        self.last_hand_tricks = np.full((b, n), NONE, dtype=np.int8)
        self._started = False

    def _set_views(self) -> None:
        """Each field of the state as an attribute (its view of ``_state``; the legal moves private, read
        through the read-only :attr:`legal_cards` and :attr:`forbidden_bid`)."""
        self._fields = views = kernels().state_views(self._state)
        for name, view in zip(views._fields, views):
            setattr(self, f"_{name}" if name in ("legal_cards", "forbidden_bid") else name, view)

    def __getstate__(self) -> dict[str, Any]:
        # copy.deepcopy and pickle give an exact, independent copy (the encoder rebuilds its
        # views of the observation buffer; the fields' views of the state are made again); the pool of
        # spare observation arrays is not copied.
        views = {f"_{name}" if name in ("legal_cards", "forbidden_bid") else name for name in kernels().GameState._fields}
        views.add("_fields")
        state = {key: value for key, value in self.__dict__.items() if key not in views}
        state["_spare_observations"] = []
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._set_views()

    # ------------------------------------------------------------------ reset
    def reset(self, seed: int | None = None, decks: Any = None, rounds: Any = None) -> BatchStep:
        """Start a new episode in every game and return the first decision of each.

        Args:
            seed: reseeds the deck generator (None keeps the current one).
            decks: deck orders for every game's match, shape ``(num_envs, num_rounds, deck_size)``;
                each row a permutation of the deck. None shuffles them.
            rounds: with ``episode="hand"``, the hand each game plays first (``(num_envs,)`` ints);
                None draws them.
        """
        check_seed(seed, generator=False)
        fixed = None if decks is None else self._check_decks(decks)
        start = None if rounds is None else self._check_rounds(rounds)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._new_matches(self._games, fixed, start)
        self.hand_over = np.zeros(self.num_envs, dtype=bool)
        self._started = True
        rewards = np.zeros((self.num_envs, self.num_players), dtype=np.float32)
        return self._observe(rewards, np.zeros(self.num_envs, dtype=bool))

    def _check_decks(self, decks: Any) -> np.ndarray:
        rules = self.rules
        shape = (self.num_envs, rules.num_rounds, rules.deck_size)
        if not isinstance(decks, np.ndarray):
            self._check_deck_dealers(decks)  # before the array forgets the dealer a DeckOrder was built for
        array = np.asarray(decks)
        if array.shape != shape:
            raise ValueError(f"decks: expected shape {shape} (games, rounds, cards), got {array.shape}")
        if array.dtype.kind not in "iu":
            raise ValueError(f"decks: deck orders are card ints, got dtype {array.dtype}")
        ok = (np.sort(array, axis=2) == np.arange(rules.deck_size)).all(axis=2)
        if not ok.all():
            game, round_index = (int(i) for i in np.argwhere(~ok)[0])
            # the engine's check and message; sorted, so that the problems are named in card order
            name = f"decks: game {game}, round {round_index}"
            _check_deck(np.sort(array[game, round_index]).tolist(), rules.deck_size, name)
        return array.astype(np.int8)

    def _check_deck_dealers(self, decks: Any) -> None:
        """Refuse a :class:`DeckOrder` (``deck_order``'s result) built for another dealer than its round's, as the engine does."""
        if not isinstance(decks, Sequence) or isinstance(decks, (str, bytes)):
            return  # the shape check names what it is
        n = self.num_players
        for game, orders in enumerate(decks):
            if not isinstance(orders, Sequence) or isinstance(orders, (str, bytes)):
                continue
            for round_index, order in enumerate(orders):
                if not isinstance(order, DeckOrder):
                    continue
                name = f"decks: game {game}, round {round_index}"
                if self.rules.first_dealer == "random":
                    raise ValueError(
                        f"{name}: the deck was built by deck_order for dealer {order.dealer}, but first_dealer "
                        f"'random' draws each game's dealers at reset: give plain deck orders, or rules with a "
                        f"first_dealer seat"
                    )
                dealer = int(dealer_of_round(self.rules.first_dealer, round_index, n))
                _check_deck_dealer(order, round_index, dealer, n, name)

    def _check_rounds(self, rounds: Any) -> np.ndarray:
        if self.episode != "hand":
            raise ValueError("reset: rounds is for episode='hand' (a match starts at round 0)")
        array = np.asarray(rounds)
        if array.shape != (self.num_envs,) or array.dtype.kind not in "iu":
            raise ValueError(f"rounds: expected {self.num_envs} ints (one per game), got {array.dtype} {array.shape}")
        outside = np.flatnonzero((array < 0) | (array >= self.rules.num_rounds))
        if outside.size:
            game = int(outside[0])
            raise ValueError(
                f"rounds: game {game} asks for round {array[game]}; rounds run 0..{self.rules.num_rounds - 1}"
            )
        return array.astype(np.int8)

    def _new_matches(self, g: np.ndarray, decks: np.ndarray | None = None, start: np.ndarray | None = None) -> None:
        """Start a new episode in games ``g``: first dealer, first hand, deck orders, zero scores, the deal."""
        if not g.size:
            return
        rules = self.rules
        if rules.first_dealer == "random":
            self.first_dealer[g] = self._rng.integers(self.num_players, size=len(g))
        else:
            self.first_dealer[g] = rules.first_dealer
        if start is None:
            start = self._rng.integers(rules.num_rounds, size=len(g)) if self.episode == "hand" else 0
        self.start_round[g] = start
        if decks is not None:
            self.decks[g] = decks
        elif self.episode == "hand":
            # Only the hand to be played needs a fresh deck (the other rows stay valid permutations).
            needed = self.num_players * int(self._t.hand_sizes[self.start_round[g]].max()) + 1
            self.decks[g, self.start_round[g]] = self._shuffle(len(g), needed)
        else:
            for round_index, hand_size in enumerate(rules.hand_sizes):
                self.decks[g, round_index] = self._shuffle(len(g), self.num_players * hand_size + 1)
        self.round_index[g] = self.start_round[g]
        self.scores[g] = 0
        self.round_scores[g] = 0
        self.action_count[g] = 0
        self._deal(g)

    def _shuffle(self, count: int, needed: int) -> np.ndarray:
        """``count`` deck orders whose first ``needed`` cards are a uniformly random sequence.

        Fisher-Yates, stopped once the cards to be dealt and turned are drawn: the
        rest of the deck is never seen, so shuffling it would only cost time.
        """
        size = self.rules.deck_size
        uniform = self._rng.random((min(needed, size), count))
        return kernels().shuffle(uniform, size)

    # ------------------------------------------------------------------- deal
    def _deal(self, g: np.ndarray) -> None:
        """Deal round ``round_index`` in games ``g``: d[k] goes to seat (dealer + 1 + k) % n, k < n*h."""
        if not g.size:
            return
        kernels().deal(self._state, self._tables, g, self.rules.trump == "turned", self.decks, self.first_dealer)

    # ------------------------------------------------------------ legal moves
    def _compute_legal(self, g: np.ndarray | None = None) -> None:
        """The acting seats' legal cards (bitsets) and the dealer's forbidden bids, in games ``g`` (None: all).

        The legal cards are :func:`~blackout_env.game.rules_logic.playable_cards` written as bitset
        operations (a table over every hand would not fit); the differential test holds them equal.
        After a partial step only the games that moved need them again.
        """
        kernels().compute_legal(self._state, self._tables, self._games if g is None else g)

    def _action_mask(self) -> np.ndarray:
        """int8 mask of the acting seats' legal actions: the legal cards, then bids ``0..hand_size`` less the forbidden one."""
        mask = np.empty((self.num_envs, self.num_actions), dtype=np.int8)
        return kernels().action_mask(self._state, self._tables, mask)

    def random_actions(self, rng: np.random.Generator | None = None) -> np.ndarray:
        """A uniformly random legal action in every game (int64), drawn from the legal sets directly.

        Much cheaper than sampling from the mask: one random number per game.
        """
        return self._random_actions(self._rng if rng is None else rng)

    def _random_actions(self, rng: np.random.Generator, g: np.ndarray | None = None) -> np.ndarray:
        """A uniformly random legal action in games ``g`` (None: every game), one random number each."""
        games = self._games if g is None else g
        return kernels().random_actions(self._state, self._tables, rng.random(len(games)), games)

    # ------------------------------------------------------------------- step
    def step(self, actions: Any, active: Any = None, *, observe: bool = True) -> BatchStep:
        """Apply one action in every game; returns the next decision of each (see :class:`BatchStep`).

        Args:
            actions: one action per game, ints of shape ``(num_envs,)``.
            active: None (every game moves), or a bool mask of shape ``(num_envs,)``: only those
                games move; the others' actions are ignored and their state is left as it is.
            observe: False leaves ``observation`` and ``action_mask`` None in the result
                (see :meth:`observe` and :meth:`action_mask`).

        Raises ValueError (IllegalActionError for an illegal action) naming the first bad game;
        then no game has changed.
        """
        if not self._started:
            raise RuntimeError("call reset() before step()")
        moving = self._check_active(active)
        actions = self._check_actions(actions, moving)
        return self._advance(actions, moving, observe)

    def _random_step(self, moving: np.ndarray, rng: np.random.Generator) -> BatchStep:
        """Games ``moving`` (indices) play a uniformly random legal action; unobserved, as ``step(observe=False)``.

        The fast path of random opponents: the actions are drawn for the moving games only and are
        legal by construction (no check), and only the moving games' legal sets are recomputed.
        """
        actions = np.zeros(self.num_envs, dtype=np.int64)
        actions[moving] = self._random_actions(rng, moving)
        return self._advance(actions, moving, observe=False)

    def _advance(self, actions: np.ndarray, moving: np.ndarray | None, observe: bool) -> BatchStep:
        """Apply checked (or legal by construction) ``actions`` in games ``moving`` (None: every game)."""
        hands_over = self._apply_actions(actions, self._games if moving is None else moving)
        rewards = np.zeros((self.num_envs, self.num_players), dtype=np.float32)
        done = np.zeros(self.num_envs, dtype=bool)
        self.hand_over = np.zeros(self.num_envs, dtype=bool)
        self.hand_over[hands_over] = True
        if hands_over.size:
            hand_scores = self._finish_hands(hands_over)
            if self.episode == "hand":
                episode_over = np.ones(hands_over.size, dtype=bool)
            else:
                episode_over = self.round_index[hands_over] + 1 == self.rules.num_rounds
            rewards[hands_over] = self._rewards(hands_over, hand_scores, episode_over)
            done[hands_over[episode_over]] = True
            self._new_matches(hands_over[episode_over])
            next_hand = hands_over[~episode_over]
            self.round_index[next_hand] += 1
            self._deal(next_hand)
        return self._observe(rewards, done, observe, moving)

    def _apply_actions(self, actions: np.ndarray, moving: np.ndarray) -> np.ndarray:
        """Record and apply the moves of games ``moving`` (indices, ascending); returns the games whose hand is over.

        One kernel: record the action, bid (after the dealer's bid the leader plays) or play a card
        (voids shown, led suit, trump broken), and when a trick is complete the winner takes it and leads.
        """
        over = np.empty(len(moving), dtype=np.int64)
        count = kernels().advance(self._state, self._tables, actions, moving, over)
        return over[:count]

    def _check_active(self, active: Any) -> np.ndarray | None:
        """The indices of the games that move (None: all of them)."""
        if active is None:
            return None
        mask = np.asarray(active)
        if mask.shape != (self.num_envs,) or mask.dtype != bool:
            raise ValueError(
                f"active: expected a bool mask of shape ({self.num_envs},), one per game; got {mask.dtype} {mask.shape}"
            )
        return np.flatnonzero(mask)

    def _check_actions(self, actions: Any, moving: np.ndarray | None = None) -> np.ndarray:
        array = action_array(actions, self.num_envs)
        games = self._games if moving is None else moving
        if not kernels().check_actions(self._state, self._tables, array, games):
            return array  # all legal
        # Name the first illegal action (the games that do not move may hold any action).
        inside = (array[games] >= 0) & (array[games] < self.num_actions)
        legal = np.zeros(len(games), dtype=bool)
        legal[inside] = self._action_mask()[games[inside], array[games[inside]]] == 1
        bad = games[~legal]
        game = int(bad[0])
        action = int(array[game])
        why = illegal_action_message(self.view(game, int(self.current_player[game])), action)  # the engine's words
        more = f" ({bad.size - 1} other games also got illegal actions)" if bad.size > 1 else ""
        raise IllegalActionError(f"game {game}: action {action}: {why}{more}; no game was advanced")

    def _finish_hands(self, g: np.ndarray) -> np.ndarray:
        """Score the finished hands of games ``g``; returns the hand scores (games x seats)."""
        return kernels().finish_hands(
            self._state, self._tables, g, self.round_scores, self.last_hand_bids, self.last_hand_tricks
        )

    def _rewards(self, g: np.ndarray, hand_scores: np.ndarray, episode_over: np.ndarray) -> np.ndarray:
        """Per-seat rewards of games ``g`` whose hand just ended (``episode_over``: the episode ends with it)."""
        rewards = seat_rewards(self.reward, hand_scores, self.scores[g], episode_over)
        return (rewards * self.reward_scale).astype(np.float32)

    # ---------------------------------------------------------------- observe
    def _observe(
        self, rewards: np.ndarray, done: np.ndarray, observe: bool = True, moved: np.ndarray | None = None
    ) -> BatchStep:
        self._compute_legal(moved)
        if not observe:
            return BatchStep(self.current_player.copy(), None, None, rewards, done)
        return BatchStep(self.current_player.copy(), self.observe(), self._action_mask(), rewards, done)

    def observe(self) -> np.ndarray | None:
        """The acting seat's observation in every game now, as ``step`` returns it (None without observations)."""
        if not self._started:
            raise RuntimeError("call reset() before observe()")
        if self._encoder is None:
            return None
        if self._universal is not None:
            # The universal vectors are scattered from the rules-sized ones (the envs' function). An
            # array handed out before may have been written to: only the engine's own buffer is reused.
            rules_sized = self._encoder.encode(self)
            if self.copy:
                return universal_observation(rules_sized, self.rules, out=self._free_observation())
            observation = universal_observation(
                rules_sized, self.rules, out=self._universal, reuse=self._universal_filled
            ).view()
            self._universal_filled = True
        elif self.copy:
            return self._encoder.encode(self, self._free_observation())
        else:
            # The buffer is the encoder's own (rewritten by every step): hand it out read-only.
            observation = self._encoder.encode(self).view()
        observation.flags.writeable = False
        return observation

    def action_mask(self) -> np.ndarray:
        """The acting seat's legal actions in every game now, int8 ``(num_envs, num_actions)``, as ``step`` returns them."""
        if not self._started:
            raise RuntimeError("call reset() before action_mask()")
        return self._action_mask()

    def _free_observation(self) -> np.ndarray:
        """An observation array nobody else holds any more if there is one, else a new one.

        Large fresh arrays cost page faults on every step; an earlier observation that
        only this pool still references (the caller dropped it, or copied it into its
        own storage) is safe to overwrite and much cheaper.
        """
        for spare in self._spare_observations:
            # References: the pool's list, this loop's variable and getrefcount's argument.
            if sys.getrefcount(spare) == 3:
                return spare
        fresh = np.empty((self.num_envs, self.observation_size), dtype=np.float32)
        if len(self._spare_observations) < 4:
            self._spare_observations.append(fresh)
        return fresh

    # -------------------------------------------------------------- inspection
    @property
    def legal_cards(self) -> np.ndarray:
        """The cards the acting seat may play now in every game, uint64 ``(num_envs,)`` bitsets (bit c = card c), read-only.

        Zero in a game that is bidding; together with :attr:`forbidden_bid` this is
        what :meth:`action_mask` spreads out (bots read the bits without the mask).
        """
        view = self._legal_cards.view()
        view.flags.writeable = False
        return view

    @property
    def forbidden_bid(self) -> np.ndarray:
        """The bid the acting seat may not make now in every game (the dealer's hook), int8 ``(num_envs,)``, read-only.

        NONE (-1) where no bid is forbidden: a seat that is not the dealer, a
        table without the hook rule, or a game that is playing cards.
        """
        view = self._forbidden_bid.view()
        view.flags.writeable = False
        return view

    def to_game(self, game: int) -> BlackoutGame:
        """Game ``game``'s match so far, replayed in the rules engine (for checks, bots and display)."""
        game = self._check_game(game)
        replay = BlackoutGame(
            self.rules,
            decks=self.decks[game].tolist(),
            first_dealer=int(self.first_dealer[game]),
            start_round=int(self.start_round[game]),
        )
        for action in self.actions[game, : self.action_count[game]].tolist():
            replay.step(action)
        return replay

    def view(self, game: int, player: int) -> PlayerView:
        """What ``player`` may know in game ``game``: the engine's :class:`PlayerView`, built from the arrays."""
        game = self._check_game(game)
        n = self.num_players
        if isinstance(player, bool) or not isinstance(player, (int, np.integer)) or not 0 <= player < n:
            raise ValueError(f"player: must be a seat 0..{n - 1}, got {player!r}")
        words = self._one_head.copy()  # the game as a one-game state of words, read as the AEC env reads its own
        for values in self._fields:
            words += values[game : game + 1].ravel().tolist()
        round_scores = self.round_scores[game, self.start_round[game] : self.round_index[game]].tolist()
        return one_game_view(words, self._one_at, self.rules, int(player), round_scores)

    def _check_game(self, game: Any) -> int:
        if isinstance(game, bool) or not isinstance(game, (int, np.integer)) or not 0 <= game < self.num_envs:
            raise ValueError(f"game: must be an index 0..{self.num_envs - 1}, got {game!r}")
        return int(game)

    def __repr__(self) -> str:
        return (
            f"BatchedBlackout(num_envs={self.num_envs}, players={self.num_players}, "
            f"rounds={self.rules.num_rounds}, episode={self.episode!r}, reward={self.reward!r})"
        )
