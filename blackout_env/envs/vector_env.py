"""Blackout as a native Gymnasium vector env: thousands of games on the batched engine, one learner per game.

``gym.make_vec("blackout_env:blackout/Blackout-v0", num_envs=4096,
vectorization_mode="vector_entry_point", opponents="random")`` builds a
:class:`BlackoutVectorEnv` (it is the ``vector_entry_point`` of every Gymnasium
id in :mod:`blackout_env.envs.registration`); it is the single-agent env
(:class:`blackout_env.envs.gym_env.BlackoutGymEnv`) played in ``num_envs`` games at
once on :class:`blackout_env.batched.BatchedBlackout`, without a Python loop
over games.

- **Learner**: one seat per game, ``learner_seat`` (default 0), or
  ``"random"``: drawn per game at the start of each of its episodes.
- **Step**: the learner acts in every game at once; then the opponents play,
  in batch (partial steps of the batched engine: only the games where an
  opponent is to act move), until every game is back at a learner decision.
- **Observation**: ``(num_envs, observation_size)`` float32, the learner's vector
  of :mod:`blackout_env.game.encoding`, or with ``observation="universal"`` the
  universal vector of :mod:`blackout_env.game.universal` (one size for every rule
  set); ``single_observation_space`` is the one-game ``Box``,
  ``single_action_space`` is ``Discrete(rules.num_actions)`` either way (as the
  single-agent env).
- **Reward**: the learner's reward (``"score"``, ``"zero_sum"`` or ``"win"``,
  times ``reward_scale``) collected over its action and the opponents' moves
  that follow, as in the single-agent env.
- **Autoreset**: same step (``metadata["autoreset_mode"]`` is
  ``AutoresetMode.SAME_STEP``), as the batched engine, pgx and EnvPool: in the
  step where a game's episode ends, ``terminated`` is true and the reward is
  the finished episode's, while the observation, mask and infos are already
  those of the learner's first decision in the next episode. Episodes end only
  by termination (``truncated`` is always false), so no value is ever
  bootstrapped from a final observation, and none is returned.
- **Masks**: ``action_masks()`` (bool, for sb3-contrib) and
  ``info["action_mask"]`` (int8). Every observation returned is a decision of
  the learner, so no mask is ever all zeros.
- **Infos**: numeric arrays of one shape and dtype for the whole run, every
  key in every step (no None, no objects), so any library can stack them:

  =====================  =========  =================================================================
  key                    dtype      value, per game
  =====================  =========  =================================================================
  ``action_mask``        int8       ``(num_envs, num_actions)``: the learner's legal actions
  ``learner_seat``       int64      the learner's seat in the (new) episode
  ``round``              int64      the round of the learner's decision
  ``score``              int64      the learner's total so far in the (new) episode
  ``hand_over``          bool       a hand ended during this step
  ``last_hand_bid``      int64      the learner's bid in the hand that ended in this step, else -1
  ``last_hand_tricks``   int64      the tricks it took in that hand, else -1
  ``last_hand_score``    int64      its score in that hand, else 0
  ``final_score``        int64      its total of the episode that ended in this step, else 0
  =====================  =========  =================================================================

Opponents: one spec for every other seat, or a list of one per other seat,
clockwise from the learner, each seated by :class:`~blackout_env.agents.seating.Seat`
(as in the Gym env and the trainer's league), which asks a policy in batch where
it can (the seat's ``kind``): ``"random"`` is drawn by the batched engine for every
game still waiting for the learner (the fast path: no observation is built, and
the moves, legal by construction, are not checked); ``"heuristic"`` decides for
every game at once from the engine's arrays (its ``batched(rules)``, identical
actions); a policy with ``act_batch(obs, mask)`` (``"ppo"``, ``"ppo:PATH"``) gets
the rows of every game where it is to act, in the observation its ``observation``
attribute names (``"rules"`` or ``"universal"``, in either env; a rules-sized one
in a universal env is asked through ``act(view)``, refused without it); any
other spec of :mod:`blackout_env.agents.policies`, object with ``act(view)`` or
callable ``f(view)`` is asked game by game with the engine's
:class:`~blackout_env.game.view.PlayerView` (correct but slow).

Bad input raises a clear error and steps nothing: an opponent spec that names
no policy, ``num_envs`` < 1, learner actions of the wrong shape or illegal
(:class:`~blackout_env.game.engine.IllegalActionError` naming the game, seat and
action). An opponent that returns an illegal action (or fails) in ``step``
raises ``IllegalActionError`` naming the game, the seat, the opponent and the
action, and the step is undone: every game is as it was before the call (the
learner's action and the opponents' earlier moves of that step are taken back;
a bot's own random generator is not). With only ``"random"`` opponents, whose
moves are legal by construction, nothing needs keeping for that. In ``reset``
the env is left unstarted: ``reset()`` again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import batch_space

from .._checks import check_seed
from ..agents.seating import Seat
from ..batched import BatchedBlackout, BatchStep, action_array
from ..game.encoding import observation_bounds
from ..game.engine import IllegalActionError, action_to_str
from ..game.rules import Rules
from ..game.universal import observation_kind, universal_bounds
from .gym_env import check_learner_seat, opponent_specs

try:  # Gymnasium >= 1.1 names the autoreset modes
    from gymnasium.vector import AutoresetMode

    _SAME_STEP: Any = AutoresetMode.SAME_STEP
except ImportError:  # pragma: no cover - older Gymnasium
    _SAME_STEP = "SameStep"

__all__ = ["BlackoutVectorEnv", "INFO_KEYS"]

INFO_KEYS = (
    "action_mask",
    "learner_seat",
    "round",
    "score",
    "hand_over",
    "last_hand_bid",
    "last_hand_tricks",
    "last_hand_score",
    "final_score",
)
"""The keys of every ``info`` the vector env returns (see the module docstring)."""
RESET_OPTIONS = ("decks", "rounds")


class BlackoutVectorEnv(VectorEnv):
    """``num_envs`` games, one learner seat in each, opponents stepped in batch (see the module docstring).

    Args:
        num_envs: how many games.
        rules: a :class:`Rules`, a preset name, a YAML path or a mapping of overrides.
        opponents: one spec for every other seat, or a list of one per other seat clockwise from the learner.
        learner_seat: the learner's seat in every game, or ``"random"`` (drawn per game and episode).
        episode, reward, reward_scale: as for the single-agent env.
        illegal_action: only ``"raise"``: an illegal learner action raises and steps nothing
            (mask the policy with ``action_masks()`` or ``info["action_mask"]``).
        render_mode: only None (render one game with ``BlackoutGymEnv``).
        copy: return fresh observation arrays (default); False returns a read-only buffer that the
            next step overwrites (faster: copy what you keep), as Gymnasium's ``copy`` of vector envs.
        observation: ``"rules"`` (the rules-sized vector) or ``"universal"`` (one size for every rule set).
        seed: seeds the decks, the learner seats and the random opponents (``reset(seed=...)`` reseeds).
        illegal_reward, spectator: the single env's; refused here (no penalty, no rendering), by name.
    """

    metadata = {"autoreset_mode": _SAME_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int = 1024,
        rules: Rules | str | Mapping[str, Any] | None = None,
        opponents: Any = "heuristic",
        learner_seat: int | str = 0,
        episode: str = "match",
        reward: str = "score",
        reward_scale: float = 1.0,
        illegal_action: str = "raise",
        render_mode: str | None = None,
        copy: bool = True,
        observation: str = "rules",
        seed: int | None = None,
        illegal_reward: float | None = None,
        spectator: bool | None = None,
    ) -> None:
        # (the single env's options, which gym.make_vec passes on: refused by name, not with a TypeError)
        if illegal_reward is not None:
            raise ValueError(
                f"illegal_reward: the vector env raises on an illegal action and gives no penalty (got {illegal_reward!r}); "
                "use the single env (illegal_action='penalize') for a penalty"
            )
        if spectator is not None:
            raise ValueError(f"spectator: the vector env does not render (got {spectator!r}); use BlackoutGymEnv")
        observation = observation_kind(observation)
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs: expected a positive int (how many games), got {num_envs!r}")
        rules = Rules.resolve(rules)
        n = rules.num_players
        check_learner_seat(learner_seat, n)
        if illegal_action != "raise":
            raise ValueError(
                f"illegal_action: the vector env supports only 'raise' (got {illegal_action!r}); "
                "sample actions with the mask (action_masks() or info['action_mask'])"
            )
        if render_mode is not None:
            raise ValueError(f"render_mode: the vector env does not render (got {render_mode!r}); use BlackoutGymEnv")
        specs = opponent_specs(opponents, n)
        # One Seat per distinct spec: one batched call per move for a policy that sits in several seats.
        distinct: dict[int, Seat] = {}
        for spec in specs:
            if id(spec) not in distinct:
                distinct[id(spec)] = Seat(spec, rules, observation)
        self._opponents = [distinct[id(spec)] for spec in specs]
        self._distinct_opponents = list(distinct.values())
        # The BatchedBlackout checks episode, reward and reward_scale.
        self.engine = BatchedBlackout(
            rules, int(num_envs), episode=episode, reward=reward, reward_scale=reward_scale, copy=bool(copy),
            observation=observation,
        )
        """The batched engine holding the games (read-only for users)."""
        self.rules = rules
        self.num_envs = int(num_envs)
        self.num_players = n
        self.learner_seat_spec = learner_seat
        self.render_mode = None
        self.observation_kind = observation
        low, high = universal_bounds() if observation == "universal" else observation_bounds(rules)
        self.single_observation_space = spaces.Box(low=low.copy(), high=high.copy(), dtype=np.float32)
        self.single_action_space = spaces.Discrete(rules.num_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._rows = np.arange(self.num_envs)
        self._hand_score = self.engine._t.hand_score  # Rules.hand_score of every (bid, tricks won): the engine's table
        self._rng = np.random.default_rng(seed)
        self._seed_engine = seed is not None
        self._learner = np.zeros(self.num_envs, dtype=np.int8)
        self._mask: np.ndarray | None = None
        # Opponents whose moves are not legal by construction: a step keeps what it needs to be undone.
        self._undoable = any(opponent.kind != "random" for opponent in self._distinct_opponents)

    # ------------------------------------------------------------------ api
    @property
    def learner_seats(self) -> np.ndarray:
        """The learner's seat in every game's current episode (a copy)."""
        return self._learner.astype(np.int64)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start a new episode in every game; returns ``(observations, infos)`` at the learner's first decisions.

        ``options``: ``"decks"`` (deck orders, ``(num_envs, num_rounds, deck_size)``) and
        ``"rounds"`` (with ``episode="hand"``, the hand each game plays), as ``BatchedBlackout.reset``.
        """
        options = {} if options is None else options
        if not isinstance(options, Mapping):
            raise ValueError(f"options: expected a dict, got {type(options).__name__}")
        unknown = sorted(map(str, set(options) - set(RESET_OPTIONS)))
        if unknown:
            raise ValueError(f"reset: unknown option(s) {', '.join(map(repr, unknown))}; options: {', '.join(RESET_OPTIONS)}")
        if isinstance(seed, (list, tuple, np.ndarray)):
            raise ValueError(
                f"reset: seed {seed!r:.60} is a list; the games share one generator, so give one int "
                f"(Gymnasium's one-seed-per-sub-env lists are for envs that step copies of one env)"
            )
        check_seed(seed, generator=False)
        rng = np.random.default_rng(seed) if seed is not None else self._rng
        saved_state = rng.bit_generator.state
        engine_seed = int(rng.integers(2**63)) if seed is not None or self._seed_engine else None
        try:  # bad decks or rounds: refused before any game changes
            out = self.engine.reset(seed=engine_seed, decks=options.get("decks"), rounds=options.get("rounds"))
        except Exception:
            rng.bit_generator.state = saved_state
            raise
        self._rng, self._seed_engine = rng, False
        self._learner = self._draw_seats(self.num_envs)
        for opponent in self._distinct_opponents:
            opponent.seed(int(self._rng.integers(2**31)))
        self._mask = None  # (until the opponents have played: a failure leaves the env unstarted)
        tally = _Tally(self.num_envs)
        self._collect(out, tally)
        out = self._play_opponents(out, tally)
        return self._finish(out, tally)

    def step(self, actions: Any):
        """The learner acts in every game; the opponents play until it is the learner's turn in every game again.

        Returns ``(observations, rewards, terminations, truncations, infos)`` (see the module docstring).
        """
        if self._mask is None:
            raise RuntimeError("step() before reset(): call reset() first")
        actions = self._check_actions(actions)
        tally = _Tally(self.num_envs)
        tally.score_before = self.engine.scores[self._rows, self._learner].astype(np.int64)
        saved = self._save() if self._undoable else None
        try:
            # (the actions were checked against the learner's mask above: the engine need not check again)
            out = self.engine._advance(actions, None, observe=False)
            self._collect(out, tally)
            out = self._play_opponents(out, tally)
        except Exception:
            if saved is not None:
                self._restore(saved)
            raise
        observations, infos = self._finish(out, tally)
        return observations, tally.rewards, tally.terminated, np.zeros(self.num_envs, dtype=bool), infos

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in every game, bool ``(num_envs, num_actions)`` (for sb3-contrib)."""
        if self._mask is None:
            raise RuntimeError("action_masks() before reset(): call reset() first")
        return self._mask.astype(bool)

    # -------------------------------------------------------------- helpers
    def _draw_seats(self, count: int) -> np.ndarray:
        if self.learner_seat_spec == "random":
            return self._rng.integers(self.num_players, size=count).astype(np.int8)
        return np.full(count, int(self.learner_seat_spec), dtype=np.int8)

    def _check_actions(self, actions: Any) -> np.ndarray:
        array = action_array(actions, self.num_envs)
        self._check_legal(self._rows, array, self._mask, who="the learner")
        return array

    def _check_legal(self, games: np.ndarray, actions: np.ndarray, mask: np.ndarray, who: str) -> None:
        """Raise IllegalActionError, naming the first game, unless ``actions`` are legal in ``mask`` in ``games``."""
        chosen = actions[games]
        inside = (chosen >= 0) & (chosen < self.rules.num_actions)
        legal = inside & (mask[games, np.where(inside, chosen, 0)] != 0)
        if legal.all():
            return
        bad = games[~legal]
        game = int(bad[0])
        action = int(actions[game])
        seat = int(self.engine.current_player[game])
        legal = np.flatnonzero(mask[game]).tolist()
        if 0 <= action < self.rules.num_actions:
            what = f"action {action} ({action_to_str(action, self.rules.num_cards)})"
        else:
            what = f"action {action} (outside 0..{self.rules.num_actions - 1})"
        more = f" ({bad.size - 1} other games too)" if bad.size > 1 else ""
        raise IllegalActionError(
            f"game {game}, seat {seat}: {who} chose {what}, which is not legal; legal: {legal}{more}. No game was stepped."
        )

    def _play_opponents(self, out: BatchStep, tally: _Tally) -> BatchStep:
        """Opponent moves, in batch, until the learner is to act in every game."""
        engine = self.engine
        if len(self._distinct_opponents) == 1 and self._distinct_opponents[0].kind == "random":
            # The fast path: only the games still waiting for the learner move, with random legal
            # actions drawn for them alone; a game back at a learner decision stays there.
            waiting = np.flatnonzero(out.current_player != self._learner)
            while waiting.size:
                out = engine._random_step(waiting, self._rng)
                self._collect(out, tally)
                waiting = waiting[engine.current_player[waiting] != self._learner[waiting]]
            return out
        while True:
            waiting = out.current_player != self._learner
            if not waiting.any():
                return out
            actions = self._opponent_actions(out, waiting)
            out = engine.step(actions, active=waiting, observe=False)
            self._collect(out, tally)

    def _opponent_actions(self, out: BatchStep, waiting: np.ndarray) -> np.ndarray:
        engine = self.engine
        n = self.num_players
        actions = np.zeros(self.num_envs, dtype=np.int64)
        mask = engine.action_mask()
        games = np.flatnonzero(waiting)
        seats = out.current_player[games].astype(np.int64)
        which = (seats - self._learner[games]) % n - 1  # index into the opponents, clockwise from the learner
        observed: list[np.ndarray] = []  # the engine's observations, built once and only for a batch seat

        def observe() -> np.ndarray:
            if not observed:
                observed.append(engine.observe())
            return observed[0]

        for opponent in self._distinct_opponents:
            mine = np.isin(which, [k for k, o in enumerate(self._opponents) if o is opponent])
            rows = games[mine]
            if not rows.size:
                continue
            actions[rows] = opponent.act_games(engine, rows, seats[mine], lambda rows=rows: (observe()[rows], mask[rows]),
                                             self._rng)
            self._check_legal(rows, actions, mask, who=f"opponent {opponent.name!r}")
        return actions

    def _save(self) -> tuple[dict[str, np.ndarray], dict[str, Any], dict[str, Any], np.ndarray]:
        """What a step changes: the engine's arrays and random stream, this env's stream and learner seats."""
        engine = self.engine
        # (the fields of the games' state are views of its one array, ``_state``: copied with it; the
        # read-only rule tables never change)
        arrays = {
            name: value.copy() for name, value in vars(engine).items()
            if isinstance(value, np.ndarray) and value.base is None and value.flags.writeable
        }
        return arrays, engine._rng.bit_generator.state, self._rng.bit_generator.state, self._learner.copy()

    def _restore(self, saved: tuple[dict[str, np.ndarray], dict[str, Any], dict[str, Any], np.ndarray]) -> None:
        arrays, engine_rng, rng, learner = saved
        for name, value in arrays.items():
            getattr(self.engine, name)[...] = value  # in place: the fields' views read the same memory
        self.engine._rng.bit_generator.state = engine_rng
        self._rng.bit_generator.state = rng
        self._learner = learner

    def _collect(self, out: BatchStep, tally: _Tally) -> None:
        """Add what the learner earned in one (partial) step; a finished episode gets its new learner seat.

        Rewards come only with the end of a hand, and a game ends at most one hand per vector step
        (after a hand the learner bids before any card of the next is played).
        """
        engine = self.engine
        over = engine.hand_over
        if not over.any():
            return
        games = np.flatnonzero(over)
        seats = self._learner[games]
        tally.rewards[games] += out.rewards[games, seats]
        bids = engine.last_hand_bids[games, seats]
        tricks = engine.last_hand_tricks[games, seats]
        score = self._hand_score[bids, tricks]
        tally.hand_over[games] = True
        tally.last_hand_bid[games] = bids
        tally.last_hand_tricks[games] = tricks
        tally.last_hand_score[games] = score
        done = out.done[games]
        ended = games[done]
        if ended.size:
            # The engine has already zeroed the new episode's scores: the total is the score before
            # this vector step plus the hand that ended it.
            tally.terminated[ended] = True
            tally.final_score[ended] = tally.score_before[ended] + score[done]
            self._learner[ended] = self._draw_seats(ended.size)

    def _finish(self, out: BatchStep, tally: _Tally) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The learner's observations and infos now (every game is at a learner decision)."""
        engine = self.engine
        self._mask = mask = engine.action_mask()
        infos = {
            "action_mask": mask.copy(),  # the caller's: editing it must not change what the env accepts
            "learner_seat": self._learner.astype(np.int64),
            "round": engine.round_index.astype(np.int64),
            "score": engine.scores[self._rows, self._learner].astype(np.int64),
            "hand_over": tally.hand_over,
            "last_hand_bid": tally.last_hand_bid,
            "last_hand_tricks": tally.last_hand_tricks,
            "last_hand_score": tally.last_hand_score,
            "final_score": tally.final_score,
        }
        return engine.observe(), infos


class _Tally:
    """What one vector step collects for the learner, per game."""

    def __init__(self, num_envs: int) -> None:
        self.rewards = np.zeros(num_envs, dtype=np.float32)
        self.terminated = np.zeros(num_envs, dtype=bool)
        self.hand_over = np.zeros(num_envs, dtype=bool)
        self.last_hand_bid = np.full(num_envs, -1, dtype=np.int64)
        self.last_hand_tricks = np.full(num_envs, -1, dtype=np.int64)
        self.last_hand_score = np.zeros(num_envs, dtype=np.int64)
        self.final_score = np.zeros(num_envs, dtype=np.int64)
        self.score_before = np.zeros(num_envs, dtype=np.int64)
