# noqa: D212, D415
"""
# Blackout

| Creation           | `blackout_env.env()`, or `pettingzoo.make("aec", "blackout/Blackout-v0")` after `import blackout_env` |
|--------------------|--------------------------------------------------------------------------------------------|
| Actions            | Discrete                                                                                   |
| Parallel API       | No (turn based)                                                                            |
| Manual Control     | No (`blackout play` is the human front-end)                                                |
| Agents             | `agents = ['player_0', ..., 'player_{n-1}']`, n = 3..7 (4 by default)                      |
| Action Shape       | ()                                                                                         |
| Action Values      | Discrete(C + B + 1): 63 with the standard rules (C = 52 cards, B = 10)                      |
| Observation Shape  | {"observation": (observation_size(rules),), "action_mask": (C + B + 1,)}: (838,) and (63,) |
| Observation Values | observation in [-1, 1] (scores) and [0, 1] (the rest); action_mask in {0, 1}               |

Blackout (Oh Hell, Up and Down the River, Nomination Whist) is a trick-taking
game for 3 to 7 players. Before each hand every player bids how many tricks
they will take; only an exact bid scores (10 + bid by default). Under the
dealer's hook the dealer, bidding last, may not make the bids add up to the
number of tricks. Players must follow suit; the highest trump, else the
highest card of the suit led, wins the trick. A match is a series of hands of
changing sizes (10 cards down to 1 by default); the highest total wins. Every
house rule of ``blackout_env.Rules`` is available through the ``rules``
argument.

### Arguments

``` python
blackout_env.env(rules=None, episode="match", reward="score", reward_scale=1.0,
                 illegal_action="raise", illegal_reward=-1.0, render_mode=None,
                 render_seat=None, spectator=False, observation="rules")
```

`rules`: a `Rules`, a preset name (`"standard"`, `"trump-must-break"`, ...), a
YAML path, or a mapping of options (e.g. `{"num_players": 5, "hook": False}`).

`episode`: `"match"` (every hand of the rules) or `"hand"` (one hand; which
one is `reset(options={"round": k})`, else drawn uniformly from the match's
hands with the env's seed, so hand sizes vary).

`reward`: `"score"` (each seat's hand score when the hand ends), `"zero_sum"`
(hand score minus the mean of the other seats' hand scores), or `"win"` (at
the end of the episode, 1 / number of winners to each seat with the highest
total, 0 to the rest). Every reward is multiplied by `reward_scale`.

`illegal_action`: `"raise"` (an `IllegalActionError` naming the action and the
legal ones; nothing changes, the env stays usable) or `"penalize"` (as
PettingZoo's `TerminateIllegalWrapper`: the episode ends, the offender gets
`illegal_reward` and the others 0). An action of the wrong type or outside
the action space always raises.

`observation`: `"rules"` (the rules-sized vector of `blackout_env.game.encoding`)
or `"universal"` (one fixed size for every rule set, with the rules in force;
`blackout_env.game.universal`). The action space is the rules' own either way.

`render_mode`: `"ansi"` (returns the text table), `"human"` (prints it, and
is drawn by `reset()` and after every `step()` that acts, as PettingZoo and
Gymnasium expect) or `"rgb_array"` (returns an image). The table is seen by
`render_seat` (default: the seat to act), or by a spectator with every hand
face up (`spectator=True`; `spectator` must be True or False).

`reset(seed=None, options=None)`: `seed` an int >= 0 or None; `options`
`{"decks": [...]}` (deck orders, one per round), `{"deck": [...]}` (the
first hand's), `{"round": k}` (hand episodes), `{"first_dealer": seat}`. A bad
seed, a bad value or an unknown option is a ValueError naming it (and the
known options), and the env is left as it was.

### Observation Space

The observation is a dictionary with an `"observation"` element, the flat
float32 vector of `blackout_env.game.encoding` (seat-relative: the observing
player first, then clockwise; the block layout is in that module's docstring
and in `blackout_env.game.encoding.observation_layout(rules)`), and an
`"action_mask"` element. It is built from what that player may know only.
With `observation="universal"` the vector is the universal one instead
(`blackout_env.game.universal.universal_size()` = 1523 floats for every rule set).

#### Legal Actions Mask

`"action_mask"` is an int8 vector of size `num_actions`, 1 at every legal
action of the seat to act (every bid the dealer's hook allows, every card the
follow-suit and trump rules allow), all 0 for the other seats.

Terminal-mask convention (as pgx): once the episode has ended (terminated,
or ended by an illegal action under `"penalize"`), every agent's mask is all
ones, so a masked sampler never divides by zero; the action taken then is
`None` (PettingZoo's dead step) and nothing is played. The Gym env and the
vector envs follow the same convention.

### Action Space

Action `c` for `c < C` plays card `c` (`card = suit * 13 + rank`, suits
C D H S, rank 0 = "2" .. 12 = "A"; jokers 52 and 53); action `C + k` bids `k`
tricks, `k = 0..B` (B = the largest hand of the match).

### Rewards

See `reward` above. With `"score"` and `"zero_sum"` rewards arrive at the
step that completes each hand; with `"win"` at the end of the episode. The
illegal-move penalty replaces them when `illegal_action="penalize"`.

#### Infos

Deterministic and public. Every agent's info has the same keys, in this order,
with one type per key at every step of every episode (flat numbers only, so
Gymnasium's vector envs, Tianshou and TorchRL can stack them):

| key | type | value |
|---|---|---|
| `seat` | int | the agent's seat |
| `round` | int | the hand's index in the match (the finished one on the step that ends the episode) |
| `hand_size` | int | cards per player in that hand |
| `bid` | int | the agent's bid in that hand, -1 before it bids |
| `tricks_won` | int | tricks the agent has taken in that hand |
| `score` | int | the agent's match total |
| `hand_over` | bool | True on the step that completed a hand |
| `last_hand_round` | int | the last finished hand's index, -1 before any hand has finished |
| `last_hand_bid` | int | the agent's bid in it (-1 before any) |
| `last_hand_tricks` | int | the tricks it took in it (-1 before any) |
| `last_hand_score` | int | what it scored in it (0 before any) |
| `illegal_action` | bool | True for the agent whose illegal action ended the episode (`"penalize"`) |

The keys are `blackout_env.envs.aec.INFO_KEYS`.

### State

`env.state()` is the full-information state, for centralised critics, oracle
inputs and search, and `env.state_space` its `Box`: a flat float32 vector
with every seat's hand (`n x C`, absolute seats) followed by seat 0's
observation of the table. Layout: `blackout_env.game.state.state_layout(rules)`.
It is never part of any observation.

### Copies

`copy.deepcopy(env)` and a pickle round trip copy a running env with its game:
the copy continues the same episode (same observations, masks, rewards,
infos and random stream) and is independent of the original (what search and
MCTS need). An env that was never reset copies as one never reset.

### Version History

* v0: Initial release (blackout-rl 0.1.0), with flat infos of one type per
  key (earlier development builds had `bid` None before bidding and a
  `last_hand` dict), all-ones masks at the end, errors for unknown reset
  options, `state()`, and copies that continue the game.
"""

from __future__ import annotations

import copy
from array import array
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .._checks import check_choice, check_number, check_seed
from ..batched import EPISODES, game_tables
from ..batched._compiled import kernels
from ..batched._encoding import one_game_encoding
from ..batched.engine import bits_to_cards, one_game_view
from ..game.encoding import observation_bounds, observation_size
from ..game.engine import BlackoutGame, DeckOrder, IllegalActionError, _check_deck, illegal_action_message
from ..game.render import render_image, render_text, seat_name
from ..game.rules import Rules
from ..game.rules_logic import REWARDS, dealer_of_round, seat_rewards
from ..game.state import hands_vector, state_bounds
from ..game.universal import observation_kind, universal_bounds, universal_observation
from ..game.view import PlayerView

__all__ = ["env", "raw_env", "EPISODES", "REWARDS", "ILLEGAL_ACTIONS"]

ILLEGAL_ACTIONS = ("raise", "penalize")
RESET_OPTIONS = ("decks", "deck", "round", "first_dealer")
API_TEST_OPTION = "options"
"""The placeholder option of PettingZoo's api_test, ignored (any other unknown option is an error)."""
NO_BID = -1
"""``info["bid"]`` before the seat has bid (and ``last_hand_*`` before any hand has ended)."""
NO_LAST_HAND = {"last_hand_round": -1, "last_hand_bid": -1, "last_hand_tricks": -1, "last_hand_score": 0}
INFO_KEYS = (
    "seat", "round", "hand_size", "bid", "tricks_won", "score", "hand_over",
    *NO_LAST_HAND, "illegal_action",
)
"""The keys of every agent's info, in order, at every step of every episode."""


def env(**kwargs: Any) -> AECEnv:
    """The Blackout AEC environment wrapped with PettingZoo's OrderEnforcingWrapper.

    Keyword arguments are those of :class:`raw_env`. Out-of-range and illegal
    actions are checked by the environment itself with an error that names the
    action and the legal ones (PettingZoo's AssertOutOfBoundsWrapper would
    only say "action is not in action space", and vanishes under ``python -O``).
    """
    return with_wrappers(raw_env(**kwargs))


def with_wrappers(environment: AECEnv) -> AECEnv:
    """``environment`` behind the PettingZoo wrappers that :func:`env` puts around ``raw_env``.

    ``blackout bench aec`` puts its do-nothing env behind the same ones, so
    that its ``env()`` ratio compares like with like.
    """
    return wrappers.OrderEnforcingWrapper(environment)


class raw_env(AECEnv):  # noqa: N801 - PettingZoo's naming convention
    """Blackout as a PettingZoo AEC environment (see the module docstring)."""

    metadata = {
        "name": "blackout_v0",
        "render_modes": ["ansi", "human", "rgb_array"],
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        rules: Rules | str | Mapping[str, Any] | None = None,
        episode: str = "match",
        reward: str = "score",
        reward_scale: float = 1.0,
        illegal_action: str = "raise",
        illegal_reward: float = -1.0,
        render_mode: str | None = None,
        render_seat: int | None = None,
        spectator: bool = False,
        observation: str = "rules",
    ) -> None:
        super().__init__()
        self.rules = Rules.resolve(rules)
        self.episode = check_choice("episode", episode, EPISODES)
        self.reward_mode = check_choice("reward", reward, REWARDS)
        self.reward_scale = check_number("reward_scale", reward_scale)
        self.illegal_action = check_choice("illegal_action", illegal_action, ILLEGAL_ACTIONS)
        self.illegal_reward = check_number("illegal_reward", illegal_reward)
        self.observation_kind = observation_kind(observation)
        self._universal = self.observation_kind == "universal"
        if render_mode is not None:
            check_choice("render_mode", render_mode, tuple(self.metadata["render_modes"]))
        self.render_mode = render_mode
        n = self.rules.num_players
        if render_seat is not None and (
            isinstance(render_seat, bool) or not isinstance(render_seat, (int, np.integer)) or not 0 <= render_seat < n
        ):
            raise ValueError(f"render_seat: must be a seat 0..{n - 1} or None (the seat to act), got {render_seat!r}")
        self.render_seat = render_seat
        if not isinstance(spectator, (bool, np.bool_)):
            raise ValueError(f"spectator: expected True or False, got {spectator!r}")
        self.spectator = bool(spectator)

        self.possible_agents = [seat_name(seat) for seat in range(n)]
        self._seat_of = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        self.num_actions = self.rules.num_actions
        low, high = universal_bounds() if self.observation_kind == "universal" else observation_bounds(self.rules)
        observation_space = spaces.Dict(
            {
                "observation": spaces.Box(low=low.copy(), high=high.copy(), dtype=np.float32),
                "action_mask": spaces.Box(low=0, high=1, shape=(self.num_actions,), dtype=np.int8),
            }
        )
        action_space = spaces.Discrete(self.num_actions)
        # One space object per agent, returned as the same object on every call.
        self.observation_spaces = {agent: observation_space for agent in self.possible_agents}
        self.action_spaces = {agent: action_space for agent in self.possible_agents}
        state_low, state_high = state_bounds(self.rules)
        self.state_space = spaces.Box(low=state_low, high=state_high, dtype=np.float32)
        """The space of :meth:`state`: every hand and the public table (see ``blackout_env.game.state``)."""
        self._start_compiled()
        self._decks: list[list[int]] | None = None  # the episode's deck orders, one per round (None before reset)
        self._moves: list[int] = []
        self._np_random: np.random.Generator | None = None
        self._np_random_seed: int | None = None

    # -------------------------------------------------------------- copies
    def __getstate__(self) -> dict[str, Any]:
        # The whole env, game included, rather than its constructor's arguments (as EzPickle would):
        # copy.deepcopy or a pickle round trip of a started env continues the same game.
        return {key: value for key, value in self.__dict__.items() if key not in ("_gv", "_kernels")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._kernels = kernels()
        self._gv = np.frombuffer(self._g, dtype=np.int64)

    # Never written in place: a deepcopy shares them (rules are frozen, the tables read-only, reset rebinds the decks).
    # The spaces are copied: each holds its own random stream, which sampling or seeding the copy's must not move.
    _SHARED_ON_COPY = frozenset({"rules", "_tables", "_encoding", "_floats", "_at", "_kernels", "_decks"})

    def __deepcopy__(self, memo: dict) -> raw_env:
        # As pickling does, but faster for search: the game's words copied as an array, read-only parts shared.
        twin = object.__new__(type(self))
        memo[id(self)] = twin
        for key, value in self.__dict__.items():
            if key == "_g":
                value = array("q", value)
            elif key == "_gv":
                continue
            elif key not in self._SHARED_ON_COPY:
                value = copy.deepcopy(value, memo)
            twin.__dict__[key] = value
        twin._gv = np.frombuffer(twin._g, dtype=np.int64)
        return twin

    # ------------------------------------------------------- the compiled game
    def _start_compiled(self) -> None:
        """The episode's game on the compiled core: a one-game state (``_kernels.one_game``) and its buffers.

        ``_g`` is an ``array.array`` of the state's 64-bit words (item reads and writes from Python at list
        speed, at each field's start, ``_at``, by name) and ``_gv`` a numpy view of the same memory for the
        kernels; ``_row`` and ``_mask`` hold the observation of seat ``_row_seat`` and the acting seat's
        mask, written by the kernels.
        """
        k = kernels()
        rules, n = self.rules, self.rules.num_players
        self._kernels = k
        self._tables = game_tables(rules)
        self._encoding, self._floats = one_game_encoding(rules)
        fresh = k.one_game(n, rules.max_bid + 1)  # room for one more trick: a finished hand is observed too
        self._at = at = k.field_starts(fresh)
        self._current_at, self._won_at = at.current_player, at.tricks_won  # read at every step
        self._num_cards = rules.num_cards
        self._g = array("q", fresh.tobytes())
        self._gv = np.frombuffer(self._g, dtype=np.int64)
        self._row = np.zeros(observation_size(rules), dtype=np.float32)  # the rules' vector (universal: built from it)
        self._mask = np.zeros(self.num_actions, dtype=np.int8)
        self._row_seat = -1

    def _deal(self, round_index: int) -> None:
        """Deal round ``round_index`` of the episode's decks into the compiled game (the core's deal of a batch of one)."""
        g, at = self._g, self._at
        g[at.round_index], g[at.action_count] = round_index, 0
        dealer = dealer_of_round(self._first_dealer, round_index, self.rules.num_players)
        self._kernels.env_deal(self._gv, self._tables, self._encoding, self._floats, self._row, self._mask,
                               np.array(self._decks[round_index], dtype=np.int8), dealer, self.rules.trump == "turned")
        self._row_seat = g[self._current_at]

    def _observe_into(self, seat: int) -> None:
        """The legal set, the acting seat's mask and seat ``seat``'s observation, written by the compiled encoder."""
        self._kernels.env_observe(self._gv, self._tables, self._encoding, self._floats, self._row, self._mask, seat)
        self._row_seat = seat

    @property
    def game(self) -> BlackoutGame | None:
        """The episode so far as a rules engine (None before the first reset): history, every hand, ``to_json()``.

        A new ``BlackoutGame`` at each read, dealt from the episode's decks and stepped through its actions;
        the env plays on the compiled core and never reads it, so stepping it leaves the env as it was.
        """
        if self._decks is None:
            return None
        game = BlackoutGame(self.rules, decks=self._decks, first_dealer=self._first_dealer, start_round=self._start_round)
        for action in self._moves:
            game.step(action)
        return game

    # ------------------------------------------------------------- spaces
    def observation_space(self, agent: str) -> spaces.Dict:
        """The observation space of an agent (the same object every call)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        """The action space of an agent (the same object every call)."""
        return self.action_spaces[agent]

    # -------------------------------------------------------------- reset
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start an episode. ``seed`` reseeds the env; ``options`` may fix the deals.

        Options: ``"decks"`` (deck orders, one per round, as ``BlackoutGame`` takes
        them), ``"deck"`` (the deck order of the first hand played), ``"round"`` (in
        hand episodes, the hand to play), ``"first_dealer"`` (the dealer of round 0).
        A bad seed, a bad option value or an unknown option raises ValueError (naming
        it, and the known options) and leaves the env as it was. (The one option
        ignored is ``"options"``, the placeholder that PettingZoo's ``api_test`` passes.)
        """
        check_seed(seed, generator=False)
        options = {} if options is None else options
        if not isinstance(options, Mapping):
            raise ValueError(f"options: expected a dict, got {type(options).__name__}")
        # PettingZoo's api_test calls reset(options={"options": 1}) to see that options are taken.
        unknown = sorted(map(repr, set(options) - set(RESET_OPTIONS) - {API_TEST_OPTION}))
        if unknown:
            raise ValueError(
                f"reset: unknown option(s) {', '.join(unknown)}; options: {', '.join(map(repr, RESET_OPTIONS))}"
            )
        if seed is not None or self._np_random is None:
            rng, rng_seed = seeding.np_random(None if seed is None else int(seed))  # (a numpy integer too)
        else:
            rng, rng_seed = self._np_random, self._np_random_seed
        saved_state = rng.bit_generator.state
        try:
            game = self._new_game(rng, options)
        except Exception:
            rng.bit_generator.state = saved_state  # a bad option leaves even the random stream as it was
            raise
        self._np_random, self._np_random_seed = rng, rng_seed
        self._decks, self._first_dealer, self._start_round = game.decks, game.first_dealer, game.start_round
        self._moves = []
        self._round_scores: list[list[int]] = []  # each finished hand's scores, as the engine's round_scores
        self._g[self._at.scores : self._at.scores + self.rules.num_players] = array("q", bytes(8 * self.rules.num_players))
        self._deal(game.round_index)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self._rewards_dirty = False
        self._done = False
        self._last_hand: list[dict[str, int]] = [dict(NO_LAST_HAND) for _ in range(self.rules.num_players)]
        self._build_infos(hand_over=False)
        self.agent_selection = self.possible_agents[game.current_player]
        self._skip_agent_selection = None
        if self.render_mode == "human":
            self.render()

    def _new_game(self, rng: np.random.Generator, options: Mapping[str, Any]) -> BlackoutGame:
        rules = self.rules
        start_round = 0
        if self.episode == "hand":
            start_round = options.get("round")
            if start_round is None:
                start_round = int(rng.integers(rules.num_rounds))
            elif isinstance(start_round, bool) or not isinstance(start_round, (int, np.integer)) or not (
                0 <= start_round < rules.num_rounds
            ):
                raise ValueError(
                    f"reset: option 'round' must be a hand of the match, 0..{rules.num_rounds - 1}, got {start_round!r}"
                )
            start_round = int(start_round)
        elif "round" in options:
            raise ValueError("reset: option 'round' is for episode='hand' (a match starts at round 0)")
        decks = options.get("decks")
        if "deck" in options:
            if decks is not None:
                raise ValueError("reset: give 'deck' (the first hand's deck) or 'decks' (one per round), not both")
            deck = options["deck"]
            checked = _check_deck(deck, rules.deck_size, "reset: option 'deck'")
            decks = {start_round: deck if isinstance(deck, DeckOrder) else checked}  # a DeckOrder keeps its dealer
        try:
            return BlackoutGame(
                rules,
                seed=int(rng.integers(2**63)),
                decks=decks,
                first_dealer=options.get("first_dealer"),
                start_round=start_round,
            )
        except ValueError as error:  # a DeckOrder for another dealer: named as the caller gave it
            engine_name = f"decks[{start_round}]: "
            if "deck" not in options or not str(error).startswith(engine_name):
                raise
            raise ValueError(f"reset: option 'deck': {str(error)[len(engine_name):]}") from None

    # --------------------------------------------------------------- step
    def step(self, action: Any) -> None:
        """The agent to act takes ``action`` (an int; None for an agent whose episode is over).

        With ``render_mode="human"`` the table is drawn after every step that acts.
        """
        if self.render_mode != "human":
            self._step(action)
            return
        acts = self._decks is not None and not (
            self.terminations.get(self.agent_selection, True) or self.truncations.get(self.agent_selection, True)
        )
        self._step(action)
        if acts:
            self.render()

    def _step(self, action: Any) -> None:
        if self._decks is None:
            raise RuntimeError("step() before reset(): call reset() to start an episode")
        agent = self.agent_selection
        if agent not in self.terminations:
            raise IllegalActionError("the episode is over and every agent has left it: call reset()")
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if type(action) is not int:
            action = self._coerce_action(action)
        if not 0 <= action < self.num_actions:
            raise IllegalActionError(
                f"{agent} cannot take action {action}: actions run 0..{self.num_actions - 1} "
                f"(cards 0..{self.rules.num_cards - 1}, then bids 0..{self.rules.max_bid})"
            )
        k = self._kernels
        moved = k.env_step(self._gv, self._tables, self._encoding, self._floats, self._row, self._mask, action)
        if moved == k.ILLEGAL:  # nothing has changed
            if self.illegal_action == "raise":  # the engine's words: the action, the rule, the legal ones
                raise IllegalActionError(illegal_action_message(self.view(agent), action))
            self._penalize(agent)
            return
        self._moves.append(action)
        self._cumulative_rewards[agent] = 0.0
        if self._rewards_dirty:
            self._clear_rewards()
            self._rewards_dirty = False
        if self._infos_stale:  # the step after a hand ended: the infos no longer say so
            for info in self.infos.values():
                info["hand_over"] = False
            self._infos_stale = False
        g = self._g
        if moved == k.MOVED:
            if action >= self._num_cards:
                self.infos[agent]["bid"] = action - self._num_cards
        elif moved == k.TRICK_OVER:
            winner = g[self._at.last_trick_winner]
            self.infos[self.possible_agents[winner]]["tricks_won"] = g[self._won_at + winner]
        elif self._finish_hand():
            return
        self._row_seat = current = g[self._current_at]  # env_step wrote its observation
        self.agent_selection = self.possible_agents[current]

    def _finish_hand(self) -> bool:
        """Score the hand just completed, then deal the next one or end the episode (True when it ended)."""
        k, g, at, n, rules = self._kernels, self._g, self._at, self.rules.num_players, self.rules
        bids, won = g[at.bids : at.bids + n], g[at.tricks_won : at.tricks_won + n]
        hand_scores = [rules.hand_score(bid, tricks) for bid, tricks in zip(bids, won)]
        self._round_scores.append(hand_scores)
        totals = array("q", [total + points for total, points in zip(g[at.scores : at.scores + n], hand_scores)])
        g[at.scores : at.scores + n] = totals
        round_index = g[at.round_index]
        for seat in range(n):
            self._last_hand[seat] = {
                "last_hand_round": round_index, "last_hand_bid": bids[seat], "last_hand_tricks": won[seat],
                "last_hand_score": hand_scores[seat],
            }
        done = self.episode == "hand" or round_index + 1 == rules.num_rounds
        if self.reward_mode != "win" or done:
            for agent, value in zip(self.possible_agents, seat_rewards(self.reward_mode, hand_scores, list(totals), done)):
                self.rewards[agent] = float(value) * self.reward_scale
            self._rewards_dirty = True
            self._accumulate_rewards()
        if not done:
            self._deal(round_index + 1)
            self._build_infos(hand_over=True)
            return False
        # The finished hand stays on the table: nobody to act, the last trick's leader still leading.
        g[at.phase], g[at.current_player], g[at.leader] = k.GAME_OVER, -1, g[at.last_trick_leader]
        self._row_seat = -1
        self._build_infos(hand_over=True)
        self._done = True
        self.terminations = dict.fromkeys(self.agents, True)
        self.agent_selection = self.possible_agents[(self._seat_of[self.agent_selection] + 1) % n]
        return True

    def _coerce_action(self, action: Any) -> int:
        if isinstance(action, np.ndarray) and action.shape in ((), (1,)) and np.issubdtype(action.dtype, np.integer):
            return int(action.reshape(()))
        if isinstance(action, np.integer) and not isinstance(action, np.bool_):
            return int(action)
        if action is None:
            raise IllegalActionError(f"{self.agent_selection} must act: None is only for agents whose episode is over")
        raise IllegalActionError(f"an action is an int, got {action!r} of type {type(action).__name__}")

    def _penalize(self, agent: str) -> None:
        """End the episode: the offender gets ``illegal_reward``, the others 0 (TerminateIllegalWrapper)."""
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self.rewards[agent] = self.illegal_reward
        self._rewards_dirty = True
        self._accumulate_rewards()
        self._done = True
        self.terminations = dict.fromkeys(self.agents, True)
        self.infos[agent]["illegal_action"] = True

    # -------------------------------------------------------------- infos
    def _build_infos(self, hand_over: bool) -> None:
        # From the compiled game: the hand in play, or the finished one when the episode has ended with it.
        g, at, n = self._g, self._at, self.rules.num_players
        round_index, hand_size = g[at.round_index], g[at.hand_size]
        bids, won = g[at.bids : at.bids + n], g[at.tricks_won : at.tricks_won + n]
        scores = g[at.scores : at.scores + n]
        # One type per key for the whole episode (see "Infos" in the module docstring); a bid of -1 is NO_BID.
        self.infos = {
            agent: {
                "seat": seat,
                "round": round_index,
                "hand_size": hand_size,
                "bid": bids[seat],
                "tricks_won": won[seat],
                "score": scores[seat],
                "hand_over": hand_over,
                **self._last_hand[seat],
                "illegal_action": False,
            }
            for seat, agent in enumerate(self.possible_agents)
            if agent in self.agents
        }
        self._infos_stale = hand_over

    # ------------------------------------------------------------ observe
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation": float32 vector, "action_mask": int8 mask}`` of an agent (fresh arrays)."""
        seat = self._seat_of[agent]
        if seat != self._row_seat:
            if self._decks is None:
                raise RuntimeError("observe() before reset(): call reset() to start an episode")
            self._observe_into(seat)
        vector = universal_observation(self._row, self.rules) if self._universal else self._row.copy()
        if self._done:  # the terminal-mask convention: all ones, so masked samplers never divide by zero
            return {"observation": vector, "action_mask": np.ones(self.num_actions, dtype=np.int8)}
        if seat == self._g[self._current_at]:
            return {"observation": vector, "action_mask": self._mask.copy()}
        return {"observation": vector, "action_mask": np.zeros(self.num_actions, dtype=np.int8)}

    def state(self) -> np.ndarray:
        """The full-information state: every hand and the public table, a float32 vector.

        For centralised critics, oracle inputs and search; never part of an
        observation. Layout: ``blackout_env.game.state.state_layout(rules)`` (the hands
        of every seat, then seat 0's observation of the table). At the end of a
        one-hand episode it shows the finished hand, as the observations do.
        """
        if self._decks is None:
            raise RuntimeError("state() before reset(): call reset() to start an episode")
        self._observe_into(0)
        return np.concatenate([hands_vector(self.rules, self._hands()), self._row])

    def view(self, agent: str) -> PlayerView:
        """What an agent may know now, as the bots take it: ``BlackoutGame.view`` of the same game.

        Built from the compiled game, as the observations are; at the end of a one-hand episode it
        shows the finished hand (the engine would have dealt the next).
        """
        seat = self._seat_of[agent]
        if self._decks is None:
            raise RuntimeError("view() before reset(): call reset() to start an episode")
        return one_game_view(self._g, self._at, self.rules, seat, self._round_scores)

    def _hands(self) -> list[tuple[int, ...]]:
        """Every seat's hand (the compiled game's bitsets as cards, ascending)."""
        return [bits_to_cards(bits) for bits in self._g[self._at.hands : self._at.hands + self.rules.num_players]]

    # ------------------------------------------------------------- render
    def render(self) -> str | np.ndarray | None:
        """Draw the table in ``render_mode`` (see the module docstring)."""
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi', 'human' or 'rgb_array'")
            return None
        if self._decks is None:
            raise RuntimeError("render() before reset(): there is no table to draw yet")
        seat = self.render_seat
        if seat is None:
            seat = self._seat_of.get(self.agent_selection, 0)
        view = self.view(self.possible_agents[seat])
        hands = self._hands() if self.spectator else None
        if self.render_mode == "rgb_array":
            return render_image(view, hands)
        text = render_text(view, hands)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release (no window is opened)."""
