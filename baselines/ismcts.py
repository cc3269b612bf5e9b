"""ISMCTSBot: information-set Monte Carlo tree search (IS-MCTS) on one hand of Blackout.

The algorithm is single-observer IS-MCTS (SO-ISMCTS) of Cowling, Powley and
Whitehouse, "Information Set Monte Carlo Tree Search" (IEEE TCIAIG 4(2), 2012),
with each node the information set of the seat to act there:

1. **Determinize.** Each simulation samples the cards every other seat holds
   now, consistently with the acting player's view (:class:`~blackout_baselines.deals.DealSampler`): each
   seat gets exactly as many unseen cards as it still holds, never a card of a
   suit it has shown void in, the dealer keeps a card shown to everyone (the
   dealer's last card under ``no_card_trump: dealer_last``), and the rest of the
   unseen cards are out of play. Deals are drawn uniformly among the consistent
   ones by rejection; when many voids make that rare, a sequential sampler
   (close to uniform) supplies the rest.
2. **Select.** From the root (the player's information set) the simulation walks
   down the tree. Every action in Blackout is public (bids and cards played are
   seen by all), so what a seat knows at a node is the sequence of actions since
   the decision plus its own hand: a node of the searching player is keyed by the
   actions alone (its hand is the same in every determinization), a node of
   another seat by the actions and that seat's hand in the determinization (as
   OpenSpiel's IS-MCTS keys nodes by the acting player's information state). A
   node is found by its path from the root, which holds the other seats' hands it
   passed, so the searching player's later nodes are split by those hands too.
   At a node, the determinized game gives the legal actions
   (the dealer's hook included, the follow-suit rule with the sampled hand);
   keyed this way, they are the same in every determinization reaching the
   node, so once each is tried the child with the highest
   ``mean + c * sqrt(ln(parent visits) / visits)`` is followed (UCB1, as
   OpenSpiel's IS-MCTS does). The mean is the hand score of the seat that chose
   the action, scaled to 0..1 by the rules' lowest and highest score of the hand.
3. **Expand** one legal action not in the tree yet (chosen at random), then
   **play out** the hand with random legal actions (bids included, for seats that
   have not bid) on the compiled core, and **back up** every seat's score: each
   node adds the score of the seat that acted into it.
4. After the budget, play the root's most visited action (ties: higher mean).

Bids are actions of the tree like cards, so the bid is searched with the play
that follows it.

Why single-observer, not multiple-observer: MO-ISMCTS (one tree per player)
exists for *partially observable moves*, where players see different things
about one action (a card passed face down). Every action of Blackout is seen by
all, so each player's tree would have exactly the nodes of the single tree and
MO-ISMCTS would only repeat SO-ISMCTS's bookkeeping. Why the other seats'
nodes are split by their hands: textbook SO-ISMCTS pools another seat's
statistics over all determinizations, and every determinization holds the
searching player's *true* hand, so in the tree the other seats learn to play
against that hand as if they could see it. Split by their own hand, their nodes
hold only what they could know (and, being rarely revisited, they choose almost
at random below the root). Against OpenSpiel's IS-MCTS, the split tree scored
higher in each of three comparisons (within noise); pooled SO-ISMCTS, OpenSpiel's
node keys and other objectives were options until issue 48 (docs/archive.md).

Speed: the simulations run on the compiled core, not on
:class:`~blackout_env.game.engine.BlackoutGame`: a determinized hand is the batched engine's
state for a batch of one, in one array (:class:`SimState`), stepped by the batched
engine's own step (``blackout_env.batched._kernels.step_game``: ``advance_game`` and
``legal_game``), and a playout is one compiled loop over that step
(:mod:`blackout_baselines._ismcts_kernels`); the tree walk stays in Python.
tests/test_ismcts.py checks the simulator against the engine action by action on
random hands of every preset.

Budget: ``simulations`` per decision (reproducible from the seed), or
``time_ms`` milliseconds per decision (machine-dependent).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from blackout_env.agents.policies import Explanation, action_reasons
from blackout_env.batched import game_tables
from blackout_env.batched._compiled import kernels
from blackout_env.game.engine import BlackoutGame
from blackout_env.game.rules import Rules
from blackout_env.game.rules_logic import bid_range
from blackout_env.game.view import PlayerView

from .base import Bot
from .deals import DealSampler, _cards, _mask

if TYPE_CHECKING:
    from .belief import BidModel

__all__ = ["ISMCTSBot", "SimState", "Endgame", "DEFAULT_EXPLORATION", "RETIRED_OPTIONS"]

DEFAULT_EXPLORATION = 0.35
"""UCB exploration constant on scores scaled to 0..1 (0.15, 0.35 and 0.7 were within noise of each other
against OpenSpiel's IS-MCTS; see docs/ismcts.md)."""

RETIRED_OPTIONS = {
    "tree": "nodes are found by their path from the root (tree=infoset, OpenSpiel's node keys, was no better)",
    "split_by_hand": "another seat's nodes are split by its hand (split_by_hand=0, pooled SO-ISMCTS, was no better)",
    "objective": "a simulation backs up the scaled hand score (objective=exact or tricks was no better)",
    "voids": "deals respect the voids shown (voids=0, as OpenSpiel's resampling, was no better)",
    "rollout": "playouts are random (rollout=greedy was no better)",
}
"""ISMCTSBot's options retired in issue 48 (used by no default, config or shipped spec, and measured no
better; docs/archive.md): what stands instead of each."""


class _Tables:
    """Per-rules tables of the simulator, built once per rules value: the compiled core's and the score tables."""

    def __init__(self, rules: Rules) -> None:
        core, kernels = _kernels()
        self.rules = rules
        self.num_cards = rules.num_cards
        self.game = game_tables(rules)
        """The compiled core's tables of these rules (``blackout_env.batched.game_tables``)."""
        self.step = core.step_game
        self.legal = core.legal_of_game
        self.playout = kernels.playout
        self._one_game, self._field_starts = core.one_game, core.field_starts
        self._fresh: dict[int, tuple[np.ndarray, Any]] = {}
        self.bid_phase, self.play_phase = core.BID, core.PLAY
        self._scores: dict[int, tuple[list[list[float]], list[list[int]]]] = {}

    def fresh(self, hand_size: int) -> tuple[np.ndarray, Any]:
        """A fresh one-game state for hands of ``hand_size`` (a copy) and where its fields start (built once a size)."""
        cached = self._fresh.get(hand_size)
        if cached is None:
            state = self._one_game(self.rules.num_players, hand_size)
            cached = self._fresh[hand_size] = (state, self._field_starts(state))
        return cached[0].copy(), cached[1]

    def scores(self, hand_size: int) -> tuple[list[list[float]], list[list[int]]]:
        """(scaled, raw): the hand score of (bid, tricks) for this hand size, scaled to 0..1 and as points."""
        cached = self._scores.get(hand_size)
        if cached is None:
            raw = [[self.rules.hand_score(b, t) for t in range(hand_size + 1)] for b in bid_range(hand_size)]
            low = min(min(row) for row in raw)
            high = max(max(row) for row in raw)
            span = float(high - low) or 1.0
            scaled = [[(v - low) / span for v in row] for row in raw]
            cached = self._scores[hand_size] = (scaled, raw)
        return cached


_TABLES: dict[Rules, _Tables] = {}


def _load_model(option: str, kind: Any, path: str) -> Any:
    """A bid or play model file named by a search option, a ``ValueError`` naming the option if it cannot be used."""
    try:
        return kind.load(path)
    except ValueError as error:
        raise ValueError(f"{option}: {error}") from None


def _tables(rules: Rules) -> _Tables:
    tables = _TABLES.get(rules)
    if tables is None:
        tables = _TABLES[rules] = _Tables(rules)
    return tables


_KERNELS: list = []


def _kernels() -> tuple:
    """(the compiled core, the playout kernels), imported on first use (they import numba) and compiled now."""
    if not _KERNELS:
        core = kernels()
        from . import _ismcts_kernels

        _KERNELS.append((core, _ismcts_kernels))
        # compile (or load from numba's cache) every kernel a search calls: a hand of one card, played out
        game = BlackoutGame(Rules(num_players=3, hand_sizes=[1]), seed=0)
        state = SimState.from_view(game.view(game.current_player), game.hands)
        state.copy().step(state.legal_actions()[0])
        for greedy in (False, True):
            state.copy().rollout(random.Random(0).random, greedy=greedy)
        state.copy().rollout(random.Random(0).random, endgame=1)
        _ismcts_kernels.seed(0)  # (each search seeds numba's generator again)
    return _KERNELS[0]


_NO_DRAWS = np.zeros(0)


class Endgame:
    """Scratch space of the exact endgame solver (``_ismcts_kernels.solve``) for hands of one state size:
    a stack of states, the transposition table (``2**table_bits`` positions) and the counts of positions
    searched and found in the table."""

    def __init__(self, state_size: int, cards: int, table_bits: int = 16) -> None:
        self.stack = np.zeros((cards + 1, state_size), dtype=np.int64)
        self.keys = np.zeros(1 << table_bits, dtype=np.uint64)
        self.values = np.zeros(1 << table_bits, dtype=np.int64)
        self.counts = np.zeros(2, dtype=np.int64)

    def clear(self) -> None:
        """Forget the table's positions (another hand: trump and rules are not in its keys)."""
        self.keys.fill(0)


_NO_ENDGAME = Endgame(1, 0, table_bits=0)


class SimState:
    """One hand of Blackout on the compiled core: the state a simulation steps (no history, no checks).

    The state is the compiled core's one-game state (``v``: the batched engine's state for a batch
    of one in 64-bit words, ``blackout_env.batched._kernels.one_game``; ``at``: where each of its fields
    starts, by name), stepped by the batched engine's own step
    (``step_game``: ``advance_game`` and ``legal_game``). Built from a view and the hands of every
    seat (:meth:`from_view`); actions are the engine's (card ``c``, bid ``num_cards + k``). Only the
    acting seat's legal actions are ever applied, so :meth:`step` does not check them.
    """

    __slots__ = ("t", "n", "v", "at")

    @classmethod
    def from_view(cls, view: PlayerView, hands: Sequence[Sequence[int]]) -> SimState:
        """The state of ``view``'s hand with seat ``s`` holding ``hands[s]`` now."""
        t = _tables(view.rules)
        n = view.num_players
        v, at = t.fresh(view.hand_size)
        bids = [-1 if b is None else b for b in view.bids]
        made = sum(b is not None for b in view.bids)
        trick = [-1] * n
        for seat, card in view.current_trick:
            trick[seat] = card
        v[at.current_player], v[at.leader] = view.current_player, view.leader
        v[at.phase] = t.bid_phase if made < n else t.play_phase
        v[at.bids_made], v[at.bid_total] = made, sum(b for b in bids if b >= 0)
        v[at.led_suit] = -1 if view.led_suit is None else view.led_suit
        v[at.trump] = -1 if view.trump is None else view.trump
        v[at.trump_broken], v[at.trick_size] = view.trump_broken, len(view.current_trick)
        v[at.tricks_done], v[at.hand_size] = sum(view.tricks_won), view.hand_size
        v[at.hands : at.hands + n] = [_mask(h) for h in hands]
        v[at.bids : at.bids + n] = bids
        v[at.tricks_won : at.tricks_won + n] = view.tricks_won
        v[at.trick_cards : at.trick_cards + n] = trick
        state = cls()
        state.t, state.n, state.v, state.at = t, n, v, at
        t.legal(v, t.game)
        return state

    def copy(self) -> SimState:
        """An independent copy."""
        other = SimState.__new__(SimState)
        other.t, other.n, other.v, other.at = self.t, self.n, self.v.copy(), self.at
        return other

    @property
    def hands(self) -> list[int]:
        """Every seat's hand as a bitmask."""
        return self.v[self.at.hands : self.at.hands + self.n].tolist()

    @property
    def bids(self) -> list[int]:
        """Every seat's bid (-1: not yet)."""
        return self.v[self.at.bids : self.at.bids + self.n].tolist()

    @property
    def tricks_won(self) -> list[int]:
        return self.v[self.at.tricks_won : self.at.tricks_won + self.n].tolist()

    @property
    def current(self) -> int:
        return int(self.v[self.at.current_player])

    @property
    def tricks_done(self) -> int:
        return int(self.v[self.at.tricks_done])

    @property
    def hand_size(self) -> int:
        return int(self.v[self.at.hand_size])

    @property
    def phase(self) -> str:
        v, at = self.v, self.at
        if v[at.bids_made] < self.n:
            return "bid"
        return "play" if v[at.tricks_done] < v[at.hand_size] else "over"

    def legal_cards(self) -> int:
        """The current seat's legal cards as a bitmask (the core's ``legal_game``: ``rules_logic.playable_bits``)."""
        return int(self.v[self.at.legal_cards])

    def legal_actions(self) -> list[int]:
        """The current seat's legal actions, ascending (empty when the hand is over)."""
        v, at = self.v, self.at
        if v[at.bids_made] < self.n:
            base = self.t.num_cards
            allowed = bid_range(int(v[at.hand_size]))
            bids = list(range(base + allowed.start, base + allowed.stop))
            forbidden = int(v[at.forbidden_bid])
            if forbidden >= 0:
                bids.remove(base + forbidden)
            return bids
        return _cards(int(v[at.legal_cards]))

    def step(self, action: int) -> bool:
        """Apply the current seat's (legal) action; True when the hand is over."""
        return self.t.step(self.v, self.t.game, action)

    def hand_scores(self) -> list[int]:
        """Every seat's score for the hand (once it is over), by the rules' ``hand_score``."""
        score = self.t.rules.hand_score
        return [score(b, w) for b, w in zip(self.bids, self.tricks_won)]

    def rollout(
        self, rand: Callable[[], float], record: list[int] | None = None, greedy: bool = False,
        endgame: int = 0, scratch: Endgame | None = None,
    ) -> None:
        """Play the hand out with uniformly random legal actions, or greedily (``_ismcts_kernels.playout``).

        Random: each bid still to make takes one ``rand()`` (uniform in [0, 1), drawn here in order), each
        card with a choice one of numba's random numbers (seeded by :func:`seed_compiled`). Greedy: a seat
        yet to bid bids its count of likely winners, and plays by the greedy card rule. With ``endgame``
        > 0, the last ``endgame`` tricks (once the bids are in) are solved exactly instead
        (:meth:`solve`). With ``record``, the actions taken are appended to it (none for solved tricks).
        """
        v, t, at = self.v, self.t, self.at
        start = int(v[at.action_count])
        missing = self.n - int(v[at.bids_made])
        draws = np.array([rand() for _ in range(missing)]) if missing > 0 and not greedy else _NO_DRAWS
        if endgame and scratch is None:
            scratch = Endgame(v.size, self.n * self.hand_size)
        e = scratch or _NO_ENDGAME
        t.playout(v, t.game, draws, greedy, endgame, e.stack, e.keys, e.values, e.counts)
        if record is not None:
            record.extend(v[at.actions + start : at.actions + int(v[at.action_count])].tolist())


    def solve(self, scratch: Endgame | None = None) -> None:
        """Play the rest of the hand (the bids in) exactly: max-n, each seat maximising its own hand score
        knowing every hand (``_ismcts_kernels.solve``); the seats' tricks won are the result."""
        if self.phase != "play":
            raise ValueError(f"solve: the hand must be in its play phase (every bid in), not {self.phase!r}")
        e = scratch or Endgame(self.v.size, self.n * self.hand_size)
        _kernels()[1].solve(self.v, self.t.game, e.stack, e.keys, e.values, e.counts)


def seed_compiled(value: int) -> None:
    """Seed the random numbers of the playouts' cards (numba's generator)."""
    _kernels()[1].seed(value)


class _Node:
    """A node of the tree; its statistics are those of the action into it.

    ``children`` maps actions to nodes. A node where another seat acts maps ``-1 - hand``
    (that seat's hand as a bitmask) to a node whose children are that seat's actions:
    one information set per hand.
    """

    __slots__ = ("children", "visits", "total", "untried", "tried")

    def __init__(self) -> None:
        self.children: dict[int, _Node] = {}
        self.visits = 0
        self.total = 0.0
        self.untried: list[int] | None = None
        """An information set's legal actions not in the tree yet (None: not visited)."""
        self.tried = 0
        """How often an action was chosen here (the parent's count in UCB)."""


def _most_visited(root: _Node, legal: Sequence[int]) -> int:
    """The legal action of the root with the most visits (ties: the higher mean); the bot's choice after a search."""
    children = root.children
    best = max(legal, key=lambda a: (children[a].visits, children[a].total / children[a].visits)
               if a in children else (0, 0.0))
    return int(best)


class ISMCTSBot(Bot):
    """IS-MCTS with random playouts on the compiled core (see the module docstring).

    Args:
        seed: seeds the determinizations, expansions and playouts.
        simulations: simulations per decision (default 500), when ``time_ms`` is not given.
        time_ms: when given, search for this many milliseconds per decision instead;
            an error if not even one simulation fits.
        exploration: the UCB constant ``c`` on scores scaled to 0..1.
        prior: a function of the view giving a probability per legal action (e.g.
            a trained policy's); at the root, the action's UCB value gets
            ``prior_weight * probability / (visits + 1)`` (progressive bias: it
            steers the first simulations and fades as they accumulate).
        prior_weight: the weight of the prior, in scaled score units (0..1).
        prior_margin: when given (a number >= 0, in scaled score units; needs a prior), play the
            prior's most probable action unless the search's choice has a mean more than this much
            higher (a network's greedy action overruled only where the search is clearly better);
            by default the most visited action is played. Once ``endgame`` solves every trick left,
            ``endgame_margin`` replaces it.
        margin_scale: what ``prior_margin`` is a fraction of: ``"hand"`` (default), the hand's whole score
            range (the scaled score's unit); ``"stake"``, the points the seat can still win or lose in the
            hand once its bid is in (the spread of its hand score over the tricks it may still take,
            ``Rules.hand_score``): late in a hand, where little is left to gain, a small sure gain found by
            the search (a point a trick) is not held back by a margin sized for the whole hand.
        endgame: once the bids are in and at most this many tricks are left, a simulation's playout is
            the exact max-n solution of its determinized deal (:meth:`SimState.solve`: each seat plays for
            its own hand score knowing every hand) instead of random play; 0 (default): off.
        endgame_margin: with ``endgame`` and ``prior_margin``, the margin (as ``prior_margin``, on the same scale)
            once ``endgame`` solves every trick left: None (default) means 0. There every simulation ends in an
            exact solution of its sampled deal instead of a random playout, so the playouts' noise, which the
            margin guards against, is gone (the means still vary with the deals sampled, and a solution sees
            every hand); ``endgame_margin=0.1`` with ``prior_margin=0.1`` is one margin throughout, as every
            search played before 2026-12-07. Refused without ``endgame`` or ``prior_margin`` (it would do nothing).
        bid_search: when > 0, a bid is not searched in the tree: every legal bid is played out on the same
            sampled deals (``simulations`` playouts in all, the deals shared by the bids), the seats bidding
            after it bid their likely winners (the greedy rule), the cards are played by the greedy rule
            until this many tricks are left and the rest is solved exactly (max-n, as ``endgame``); the bid
            with the best mean scaled score is played (with ``prior_margin``, the prior's favourite unless
            beaten by more). 0 (default): bids are tree actions like cards.
        belief: how the other seats' hands are drawn: ``"uniform"`` (default), every deal consistent with the
            view alike; ``"bids"``, those deals weighted by the chance of the bids the other seats made with
            them (:class:`~blackout_baselines.belief.Belief`, the shipped bid model); ``"play"``, by the chance of
            the cards they played this hand (the shipped play model, :mod:`~blackout_baselines.play_model`);
            ``"bids+play"``, by both; or the path of a bid model file (``blackout belief fit``), weighted by
            that model.
        play_model: the path of a play model file (``blackout belief fit --kind play``) that ``belief`` ``"play"``
            or ``"bids+play"`` weighs by instead of the shipped one (None: the shipped one).
        bid_model: the path of a bid model file (``blackout belief fit``) that ``belief`` ``"bids"`` or ``"bids+play"``
            weighs by instead of the shipped one (None: the shipped one).

    The options of :data:`RETIRED_OPTIONS` are refused with a ``ValueError`` naming the retirement.
    """

    name = "ismcts"

    def __init__(
        self,
        seed: int | None = None,
        simulations: int = 500,
        time_ms: float | None = None,
        exploration: float = DEFAULT_EXPLORATION,
        prior: Callable[[PlayerView], Mapping[int, float]] | None = None,
        prior_weight: float = 1.0,
        prior_margin: float | None = None,
        margin_scale: str = "hand",
        endgame: int = 0,
        endgame_margin: float | None = None,
        bid_search: int = 0,
        belief: str = "uniform",
        play_model: str | None = None,
        bid_model: str | None = None,
        **retired: Any,
    ) -> None:
        for option in retired:
            if option not in RETIRED_OPTIONS:
                raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument {option!r}")
            raise ValueError(f"{option}: retired in issue 48, {RETIRED_OPTIONS[option]} (docs/archive.md)")
        super().__init__(seed)
        if isinstance(simulations, bool) or not isinstance(simulations, (int, np.integer)) or simulations < 1:
            raise ValueError(f"simulations: must be a positive whole number of simulations per decision, got {simulations!r}")
        if time_ms is not None and (
            isinstance(time_ms, bool) or not isinstance(time_ms, (int, float, np.integer, np.floating))
            or not 0 < time_ms < math.inf
        ):
            raise ValueError(f"time_ms: must be a positive finite number of milliseconds per decision, got {time_ms!r}")
        # (UCB squares it: beyond 1e150 the square is infinite, and infinity times log(1) = 0 is NaN)
        if isinstance(exploration, bool) or not isinstance(exploration, (int, float)) or not 0 <= exploration <= 1e150:
            raise ValueError(f"exploration: must be a finite number >= 0 (at most 1e150), got {exploration!r}")
        self.simulations = int(simulations)
        self.time_ms = None if time_ms is None else float(time_ms)
        self.exploration = float(exploration)
        if prior is not None and not callable(prior):
            raise ValueError(f"prior: must be a function of a view, got {prior!r}")
        if isinstance(prior_weight, bool) or not isinstance(prior_weight, (int, float)) or not 0 <= prior_weight < math.inf:
            raise ValueError(f"prior_weight: must be a finite number >= 0, got {prior_weight!r}")
        if prior_margin is not None and (
            isinstance(prior_margin, bool) or not isinstance(prior_margin, (int, float)) or not 0 <= prior_margin < math.inf
        ):
            raise ValueError(f"prior_margin: must be a finite number >= 0 (or none), got {prior_margin!r}")
        if prior_margin is not None and prior is None:
            raise ValueError("prior_margin: keeps the prior's most probable action, so it needs a prior (ppo+search)")
        self.prior = prior
        self.prior_weight = float(prior_weight)
        self.prior_margin = None if prior_margin is None else float(prior_margin)
        if margin_scale not in ("hand", "stake"):
            raise ValueError(f"margin_scale: must be 'hand' or 'stake', got {margin_scale!r}")
        self.margin_scale = margin_scale
        if isinstance(endgame, bool) or not isinstance(endgame, (int, np.integer)) or not 0 <= endgame <= 8:
            raise ValueError(f"endgame: must be a whole number of tricks from 0 (off) to 8, got {endgame!r}")
        self.endgame = int(endgame)
        if endgame_margin is not None:
            if isinstance(endgame_margin, bool) or not isinstance(endgame_margin, (int, float)) or not endgame_margin >= 0:
                raise ValueError(f"endgame_margin: must be a number >= 0, got {endgame_margin!r}")
            if not self.endgame or self.prior_margin is None:
                raise ValueError(f"endgame_margin: the margin once the endgame solver decides every trick left, so it "
                                 f"needs endgame > 0 and a prior_margin; got endgame={self.endgame}, "
                                 f"prior_margin={self.prior_margin}")
        self.endgame_margin = 0.0 if endgame_margin is None else float(endgame_margin)
        if isinstance(bid_search, bool) or not isinstance(bid_search, (int, np.integer)) or not 0 <= bid_search <= 6:
            raise ValueError(f"bid_search: must be a whole number of tricks from 0 (off) to 6, got {bid_search!r}")
        self.bid_search = int(bid_search)
        named = "'uniform', 'bids', 'play', 'bids+play' or the path of a bid model file (.json)"
        if not isinstance(belief, str):
            raise ValueError(f"belief: must be {named}, got {belief!r}")
        self.belief = belief
        from .belief import BidModel, default_model  # (numba: imported with the search)
        from .play_model import PlayModel, default_play_model

        self.bid_model: BidModel | None = None
        """The bid model the determinizations are weighted by (None: not by the bids)."""
        self.play_model: PlayModel | None = None
        """The play model the determinizations are weighted by (None: not by the play)."""
        for option, path, model, uses in (("bid_model", bid_model, "bid", "bids"), ("play_model", play_model, "play", "play")):
            if path is not None and (belief not in (uses, "bids+play") or not isinstance(path, str)):
                raise ValueError(f"{option}: the path of a {model} model file, with belief '{uses}' or 'bids+play'; "
                                 f"got {option}={path!r} with belief={belief!r}")
        if belief in ("bids", "bids+play"):
            self.bid_model = default_model() if bid_model is None else _load_model("bid_model", BidModel, bid_model)
        if belief in ("play", "bids+play"):
            self.play_model = default_play_model() if play_model is None else _load_model("play_model", PlayModel, play_model)
        elif belief not in ("uniform", "bids"):
            if not belief.endswith(".json"):
                raise ValueError(f"belief: must be {named}, got {belief!r}")
            self.bid_model = _load_model("belief", BidModel, belief)
        _kernels()  # import (and compile, or load from numba's cache) now, not inside a timed decision
        self.last_simulations = 0
        """Simulations run for the last decision."""
        self.last_solved = 0
        """Positions the endgame solver searched for the last decision (0 without ``endgame``)."""
        self.last_prior: dict[int, float] | None = None
        """The prior's probability of each legal action at the last decision searched (None without a prior)."""

    def act(self, view: PlayerView) -> int:
        legal = self._check_turn(view)
        if len(legal) == 1:
            return int(legal[0])
        return self._choose(self.search(view), view, legal)

    def _choose(self, root: _Node, view: PlayerView, legal: Sequence[int]) -> int:
        """The most visited action, or with ``prior_margin`` the prior's favourite unless that is beaten by more."""
        action = _most_visited(root, legal)
        if self.prior_margin is None or self.last_prior is None:
            return action
        own = max(legal, key=lambda a: self.last_prior[a])
        mine, theirs = root.children.get(own), root.children.get(action)
        if own != action and mine is not None and mine.visits and theirs is not None and theirs.visits:
            if theirs.total / theirs.visits - mine.total / mine.visits <= self._margin(view):
                return int(own)
        return action

    def _margin(self, view: PlayerView) -> float:
        """``prior_margin`` (``endgame_margin`` once ``endgame`` solves every trick left) in scaled score units,
        for ``margin_scale="stake"`` times the share of the hand's score range the seat still has at stake (the
        whole range while it bids)."""
        margin = self._margin_share(view)
        if self.margin_scale == "hand" or view.phase != "play":
            return margin
        row = _tables(view.rules).scores(view.hand_size)[0][view.bids[view.player]]  # the search's scaled scores
        won = view.tricks_won[view.player]
        reachable = row[won:won + view.tricks_left + 1]
        return margin * (max(reachable) - min(reachable))

    def _margin_share(self, view: PlayerView) -> float:
        """``endgame_margin`` once ``endgame`` solves every trick left (every simulation then ends in an exact solution
        of its deal, not a random playout), else ``prior_margin``."""
        return self.endgame_margin if self._solved(view) else float(self.prior_margin)

    def _solved(self, view: PlayerView) -> bool:
        """Whether every simulation from ``view`` ends in the endgame solver (at most ``endgame`` tricks left)."""
        return bool(self.endgame) and view.phase == "play" and view.tricks_left <= self.endgame

    def explain(self, view: PlayerView) -> Explanation:
        """The action :meth:`act` chooses, from one search as :meth:`act` runs it, and the root's statistics.

        Per legal action: its visits and mean scaled score (None when never tried), and with a prior
        its probability. A single legal action is played without a search. The explanation's value is
        the chosen action's mean.
        """
        legal = self._check_turn(view)
        if len(legal) == 1:
            return Explanation(int(legal[0]), "mcts", action_reasons(legal), None, "the only legal action: no search")
        root = self.search(view)
        action = self._choose(root, view, legal)
        tried = {a: root.children[a] for a in legal if a in root.children and root.children[a].visits}
        visits = {a: tried[a].visits if a in tried else 0 for a in legal}
        means = {a: child.total / child.visits for a, child in tried.items()}
        scale = "mean hand score scaled to 0..1 (the hand's lowest to highest score)"
        note = f"visits and {scale} of each action after {self.last_simulations} simulations; it plays the most visited"
        if self.prior_margin is not None:
            note += f", unless the prior's favourite is within {self._margin(view):.3g} of its mean"
            exact = ", endgame_margin: every trick left is solved exactly" if self._solved(view) else ""
            if self.margin_scale == "stake" and view.phase == "play":
                note += f" ({self._margin_share(view):g} of the points still at stake{exact})"
        if self.last_prior is not None:
            note += " (probability: the guiding policy's prior)"
        return Explanation(action, "mcts", action_reasons(legal, self.last_prior, means, visits), means.get(action), note)

    def action_values(self, view: PlayerView) -> dict[int, tuple[int, float]]:
        """Per legal action at the root: (visits, mean scaled score) after a search."""
        self._check_turn(view)
        root = self.search(view)
        return {a: (c.visits, c.total / c.visits) for a, c in root.children.items() if c.visits}

    def search(self, view: PlayerView) -> _Node:
        """Run the budget's simulations from ``view`` and return the root of the tree."""
        rng = random.Random(int(self.rng.integers(2**62)))
        rand = rng.random
        np_rng = np.random.default_rng(rng.getrandbits(63))
        seed_compiled(rng.getrandbits(32))
        n = view.num_players
        root_state = SimState.from_view(view, [view.hand if s == view.player else () for s in range(n)])
        scaled = root_state.t.scores(view.hand_size)[0]
        sampler = DealSampler(view)
        belief = None
        if self.bid_model is not None or self.play_model is not None:
            from .belief import Belief

            belief = Belief(view, self.bid_model, play=self.play_model)

        def draw(count: int) -> list[list[int]]:
            """``count`` deals of the other seats' hands, uniform or by the belief."""
            if belief is None:
                return sampler.draw(count, np_rng, rng)
            return belief.draw(sampler, count, np_rng, rng)

        self.last_prior = None
        if self.prior is not None:
            probabilities = self.prior(view)
            self.last_prior = {a: float(probabilities.get(a, 0.0)) for a in view.legal_actions}
        if self.bid_search and view.phase == "bid":
            return self._search_bids(view, root_state, scaled, draw)
        c = self.exploration
        me = view.player
        log = math.log
        sqrt = math.sqrt
        root = _Node()
        root.untried = list(view.legal_actions)
        bias = None
        if self.last_prior is not None:
            bias = {a: self.prior_weight * self.last_prior[a] for a in view.legal_actions}
        deadline = None if self.time_ms is None else time.perf_counter() + self.time_ms / 1000.0
        t, at = root_state.t, root_state.at  # bound once: the loop below reads the core's state directly
        step, playout, game = t.step, t.playout, t.game
        at_hands, at_current, at_made, at_bids = at.hands, at.current_player, at.bids_made, at.bids
        assert at.tricks_won == at_bids + n  # the bids, then the tricks won: one slice reads both
        budget = self.simulations
        endgame = self.endgame
        scratch = Endgame(root_state.v.size, n * view.hand_size) if endgame else _NO_ENDGAME
        stack, keys, values, counts = scratch.stack, scratch.keys, scratch.values, scratch.counts
        deals: list[list[int]] = []
        done = 0
        while True:
            # --- determinize: a copy of the root's state with the next deal's hands (deals are drawn in batches)
            if not deals:
                deals = draw(budget if deadline is None else 32)
                deals.reverse()
            state = root_state.copy()
            v = state.v
            # The root's seat to act is the searching player, whose hand (and so legal set) is the same in every
            # determinization: the copied legal set stands.
            v[at_hands : at_hands + n] = deals.pop()
            node = root
            path: list[tuple[_Node, int]] = []  # (node entered, seat that chose the action into it)
            # --- select with UCB among the information set's actions; expand one
            over = False  # (the root is a decision: its hand is not over)
            while not over:
                seat = int(v[at_current])
                if seat != me:
                    # this seat's information set in this determinization: its hand joins the key
                    key = -1 - int(v[at_hands + seat])
                    own = node.children.get(key)
                    if own is None:
                        own = node.children[key] = _Node()
                    node = own
                # an information set of the seat to act: the same legal actions in every determinization
                untried = node.untried
                if untried is None:
                    untried = node.untried = state.legal_actions()
                if untried:  # expand a random untried action
                    action = untried.pop(int(rand() * len(untried)))
                    child = node.children[action] = _Node()
                else:
                    best_value = -1.0
                    spread = c * c * log(node.tried)
                    if bias is None or node is not root:
                        for a, child in node.children.items():
                            visits = child.visits
                            value = child.total / visits + sqrt(spread / visits)
                            if value > best_value:
                                best_value, action = value, a
                    else:  # the root, with the prior's progressive bias
                        for a, child in node.children.items():
                            visits = child.visits
                            value = child.total / visits + sqrt(spread / visits) + bias[a] / (visits + 1)
                            if value > best_value:
                                best_value, action = value, a
                    child = node.children[action]
                node.tried += 1
                path.append((child, seat))
                over = step(v, game, action)
                node = child
                if not child.visits:  # just expanded: leave the tree
                    break
            # --- play out at random (SimState.rollout, inlined), back every seat's scaled score up the path
            missing = n - int(v[at_made])
            draws = np.array([rand() for _ in range(missing)]) if missing else _NO_DRAWS
            playout(v, game, draws, False, endgame, stack, keys, values, counts)
            both = v[at_bids : at_bids + 2 * n].tolist()
            rewards = [scaled[b][w] for b, w in zip(both[:n], both[n:])]
            for visited, chooser in path:
                visited.visits += 1
                visited.total += rewards[chooser]
            done += 1
            if deadline is None:
                if done >= budget:
                    break
            elif time.perf_counter() >= deadline:
                if done == 1:
                    self._too_short(view)
                break
        self.last_simulations = done
        self.last_solved = int(counts[0])
        return root

    def _search_bids(
        self, view: PlayerView, root_state: SimState, scaled: list[list[float]], draw: Callable[[int], list[list[int]]],
    ) -> _Node:
        """``bid_search``: every legal bid played out on the same sampled deals (greedy bids and play, the last
        ``bid_search`` tricks solved exactly); a root whose children hold each bid's playouts and scaled scores."""
        legal = list(view.legal_actions)
        n, me = view.num_players, view.player
        t, at = root_state.t, root_state.at
        step, playout, game = t.step, t.playout, t.game
        at_hands, at_bids = at.hands, at.bids
        scratch = Endgame(root_state.v.size, n * view.hand_size)
        stack, keys, values, counts = scratch.stack, scratch.keys, scratch.values, scratch.counts
        root = _Node()
        root.untried = []
        for a in legal:
            root.children[a] = _Node()
        deadline = None if self.time_ms is None else time.perf_counter() + self.time_ms / 1000.0
        budget = max(1, self.simulations // len(legal)) if deadline is None else None
        dealt = 0
        while budget is None or dealt < budget:
            for hands in draw(8 if budget is None else budget):
                for a in legal:
                    state = root_state.copy()
                    v = state.v
                    v[at_hands : at_hands + n] = hands
                    step(v, game, a)
                    playout(v, game, _NO_DRAWS, True, self.bid_search, stack, keys, values, counts)
                    node = root.children[a]
                    node.visits += 1
                    node.total += scaled[int(v[at_bids + me])][int(v[at_bids + n + me])]
                dealt += 1
            if deadline is not None and time.perf_counter() >= deadline:
                break
        root.visits = root.tried = dealt * len(legal)
        self.last_simulations = dealt * len(legal)
        self.last_solved = int(counts[0])
        return root

    def _too_short(self, view: PlayerView) -> None:
        raise ValueError(
            f"time_ms={self.time_ms:g} is too small for one simulation of this decision "
            f"(player {view.player}, {view.phase} phase, {len(view.legal_actions)} legal actions): "
            "give more milliseconds, or a number of simulations"
        )
