"""Blackout as a single-agent Gymnasium environment: one learner against opponent bots.

``gym.make("blackout/Blackout-v0")`` (after ``import blackout_env``) or
``gym.make("blackout_env:blackout/Blackout-v0")`` (no import needed) gives a
match against three heuristic bots. The learner sits in one seat (fixed, or
drawn per episode); after each of its actions the opponents play until it is
the learner's turn again or the episode is over.

- Observation: the learner's flat float32 vector from ``blackout_env.game.encoding``
  (``Box``; the same vector as the AEC env's ``"observation"``), or with
  ``observation="universal"`` the universal vector of ``blackout_env.game.universal``.
- Action: ``Discrete(rules.num_actions)``, cards then bids, as in the AEC env.
- Mask: :meth:`BlackoutGymEnv.action_masks` (for sb3-contrib's MaskablePPO)
  and ``info["action_mask"]`` (int8). At the end of an episode the mask is all
  ones (the terminal-mask convention of the AEC env and pgx: a masked sampler
  never divides by zero).
- Info: the learner's AEC info (``blackout_env.envs.aec.INFO_KEYS``: ``seat``,
  ``round``, ``hand_size``, ``bid`` (-1 before it bids), ``tricks_won``,
  ``score``, ``hand_over`` (here: a hand ended during this step, by the learner's card or the
  opponents'), ``last_hand_round``/``_bid``/``_tricks``/``_score``,
  ``illegal_action``), then ``action_mask`` and ``learner_seat``: the same keys
  with one type and shape at every step, so ``gym.make_vec`` (sync and async)
  stacks them.
- ``state()``: the full-information state of the table (every hand; see
  ``blackout_env.game.state``), for centralised critics and oracle inputs.
- ``render_mode="human"`` draws the table at ``reset()`` and after every ``step()``.
- ``copy.deepcopy`` and pickle copy a running env with its game and opponents:
  the copy continues the same episode, independently of the original.
- Reward: the learner's reward of the AEC env (``"score"``, ``"zero_sum"`` or
  ``"win"``, times ``reward_scale``) collected over its action and the
  opponents' actions that follow.
- Illegal actions: ``"penalize"`` by default here (the episode ends with
  ``illegal_reward``), because Gymnasium's tools (``check_env``, agents without
  masks) sample from the whole action space; ``"raise"`` as in the AEC env.

Opponents: a policy spec (``"random"``, ``"heuristic"``, ``"search:samples=2"``,
``"ppo:PATH"``: anything :mod:`blackout_env.agents.policies` resolves, loaded when the env
is made, its module imported only then), an object with ``act(view) -> int`` (and
optionally ``seed(int)``), or a callable ``f(view) -> int``; one for every other
seat, or a list with one per other seat in clockwise order from the learner.
Policies with ``seed`` are reseeded from the env's seed at every seeded
``reset``; plain callables cannot be, so a game with them is reproducible only
if they are deterministic. Each is seated by :class:`~blackout_env.agents.seating.Seat`,
as in the vector env and the trainer's league (here one view at a time).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from .._checks import check_seed
from ..agents.seating import Seat
from ..game.encoding import observation_bounds
from ..game.engine import IllegalActionError
from ..game.rules import Rules
from ..game.universal import universal_bounds
from .aec import raw_env

__all__ = ["BlackoutGymEnv", "OPPONENT_NAMES"]

OPPONENT_NAMES = ("random", "heuristic", "search")
"""The baseline bots by name (any spec of :mod:`blackout_env.agents.policies` is accepted)."""
Opponent = Any  # a policy spec, an object with act(view), or a callable(view) -> int



def check_learner_seat(learner_seat: Any, num_players: int) -> None:
    """Refuse a ``learner_seat`` that is neither a seat 0..n-1 nor ``"random"``."""
    if learner_seat != "random" and (
        isinstance(learner_seat, bool)
        or not isinstance(learner_seat, (int, np.integer))
        or not 0 <= learner_seat < num_players
    ):
        raise ValueError(f"learner_seat: must be a seat 0..{num_players - 1} or 'random', got {learner_seat!r}")


def opponent_specs(opponents: Any, num_players: int) -> list[Any]:
    """One opponent spec per other seat: ``opponents`` is one spec for every seat, or a list of n - 1."""
    if isinstance(opponents, (list, tuple)):
        if len(opponents) != num_players - 1:
            raise ValueError(
                f"opponents: a list needs one opponent per other seat ({num_players - 1}), got {len(opponents)}"
            )
        return list(opponents)
    return [opponents] * (num_players - 1)

class BlackoutGymEnv(gym.Env):
    """One learner against opponents (see the module docstring).

    Args:
        rules: as for the AEC env (a ``Rules``, preset name, YAML path or mapping).
        opponents: one spec for every other seat, or a list of one per other seat
            clockwise from the learner (names, bots or callables).
        learner_seat: the learner's seat, or ``"random"`` to draw it at every reset.
        episode, reward, reward_scale, illegal_action, illegal_reward: as for the AEC env
            (``illegal_action`` defaults to ``"penalize"`` here).
        observation: ``"rules"`` (the rules-sized vector) or ``"universal"`` (one size for every rule set).
        render_mode: ``"ansi"``, ``"human"`` or ``"rgb_array"``; the table is seen by
            the learner, or by a spectator with ``spectator=True``.
    """

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 2}

    def __init__(
        self,
        rules: Rules | str | Mapping[str, Any] | None = None,
        opponents: Opponent | Sequence[Opponent] = "heuristic",
        learner_seat: int | str = 0,
        episode: str = "match",
        reward: str = "score",
        reward_scale: float = 1.0,
        illegal_action: str = "penalize",
        illegal_reward: float = -1.0,
        render_mode: str | None = None,
        spectator: bool = False,
        observation: str = "rules",
    ) -> None:
        self._aec = raw_env(
            rules=rules,
            episode=episode,
            reward=reward,
            reward_scale=reward_scale,
            illegal_action=illegal_action,
            illegal_reward=illegal_reward,
            # "human" is drawn here, once per learner step: the AEC env gives the text.
            render_mode="ansi" if render_mode == "human" else render_mode,
            spectator=spectator,
            observation=observation,
        )
        self.rules = rules = self._aec.rules
        n = rules.num_players
        check_learner_seat(learner_seat, n)
        self.learner_seat_spec = learner_seat
        specs = opponent_specs(opponents, n)
        # One object per seat, so two seats of one named bot keep separate random streams.
        self._opponents = [Seat(spec, rules, batched=False) for spec in specs]
        self.render_mode = render_mode
        low, high = (universal_bounds() if self._aec.observation_kind == "universal" else observation_bounds(rules))
        self.observation_space = spaces.Box(low=low.copy(), high=high.copy(), dtype=np.float32)
        self.action_space = spaces.Discrete(rules.num_actions)
        self.learner_seat: int = 0 if learner_seat == "random" else int(learner_seat)
        """The learner's seat in the current episode."""
        self._over, self._hand_over = True, False
        self._learner: str | None = None

    @property
    def game(self):
        """The episode so far as a rules engine, replayed when read (the AEC env's ``game``)."""
        return self._aec.game

    @property
    def aec_env(self) -> raw_env:
        """The underlying AEC environment."""
        return self._aec

    # ------------------------------------------------------------------ api
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start an episode; ``options`` as for the AEC env (fixed deals, the hand to play)."""
        check_seed(seed, generator=False)
        # A refused reset leaves the env as it was, its random stream included (as the AEC env's does).
        saved = self._np_random, self._np_random_seed
        super().reset(seed=None if seed is None else int(seed))  # (a numpy integer too)
        rng = self.np_random
        saved_state = rng.bit_generator.state
        n = self.rules.num_players
        seat = int(rng.integers(n)) if self.learner_seat_spec == "random" else self.learner_seat
        aec_seed = int(rng.integers(2**31))
        bot_seeds = [int(s) for s in rng.integers(2**31, size=n - 1)]
        try:
            self._aec.reset(seed=aec_seed, options=options)  # raises on bad options, before anything changes
        except Exception:
            rng.bit_generator.state = saved_state
            self._np_random, self._np_random_seed = saved
            raise
        self.learner_seat = seat
        self._learner = self._aec.possible_agents[seat]
        self._aec.render_seat = seat
        for opponent, bot_seed in zip(self._opponents, bot_seeds):
            opponent.seed(bot_seed)
        self._over, self._hand_over = False, False
        self._play_opponents_or_stop()
        if self.render_mode == "human":
            self.render()
        return self._observation(), self._info()

    def step(self, action: Any):
        """The learner acts; then the opponents play until the learner's turn or the end."""
        if self._over:
            raise RuntimeError("step() with no episode running (not reset yet, the episode ended, or an opponent "
                               "failed): call reset()")
        aec = self._aec
        aec.step(action)  # raises IllegalActionError (nothing changed) under illegal_action="raise"
        self._hand_over = bool(aec.infos[self._learner]["hand_over"])
        # The learner's reward: what the AEC env paid it in its own step and in the opponents' steps that follow.
        reward = float(aec.rewards[self._learner]) + self._play_opponents_or_stop()
        terminated = aec.terminations[self._learner]
        self._over = terminated  # (False until now: step() refuses to run after the end)
        if self.render_mode == "human":
            self.render()
        return self._observation(), reward, terminated, False, self._info()

    def state(self) -> np.ndarray:
        """The full-information state (every hand and the public table): the AEC env's ``state()``."""
        return self._aec.state()

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as a bool array (sb3-contrib's MaskablePPO calls this)."""
        if self._learner is None:
            raise RuntimeError("action_masks() before reset(): call reset() to start an episode")
        return self._aec.observe(self._learner)["action_mask"].astype(bool)

    def render(self) -> str | np.ndarray | None:
        """Draw the table as the learner sees it (see ``render_mode``)."""
        drawing = self._aec.render()
        if self.render_mode == "human":
            print(drawing)
            return None
        return drawing

    def close(self) -> None:
        self._aec.close()

    # -------------------------------------------------------------- helpers
    def _play_opponents_or_stop(self) -> float:
        """:meth:`_play_opponents`; an opponent that fails (raises, or chooses an illegal action) ends the episode:
        the turn is still the opponent's, and the learner's next action must not be played in its seat."""
        try:
            return self._play_opponents()
        except BaseException:
            self._over = True
            raise

    def _play_opponents(self) -> float:
        """Let the opponents act until the learner's turn or the end; returns the learner's reward meanwhile."""
        aec = self._aec
        learner = self._learner
        seat = self.learner_seat
        n = self.rules.num_players
        reward = 0.0
        while not aec.terminations[learner] and aec.agent_selection != learner:
            agent = aec.agent_selection
            view = aec.view(agent)
            opponent_seat = view.player
            action = self._opponents[(opponent_seat - seat) % n - 1].act(view)
            if type(action) is not int:
                action = int(action) if isinstance(action, (np.integer, np.ndarray)) else action
            if action not in view.legal_actions:
                raise IllegalActionError(
                    f"opponent {self._opponents[(opponent_seat - seat) % n - 1].name!r} in seat {opponent_seat} "
                    f"chose {action!r}, which is not legal; legal: {list(view.legal_actions)}"
                )
            aec.step(action)
            reward += aec.rewards[learner]
            self._hand_over |= bool(aec.infos[learner]["hand_over"])  # (the next move clears the AEC env's flag)
        return reward

    def _observation(self) -> np.ndarray:
        return self._aec.observe(self._learner)["observation"]

    def _info(self) -> dict[str, Any]:
        info = dict(self._aec.infos[self._learner])  # flat: every value an int or a bool
        info["hand_over"] = self._hand_over  # a hand ended in this step: the learner's move or the opponents'
        info["action_mask"] = self._aec.observe(self._learner)["action_mask"]
        info["learner_seat"] = self.learner_seat
        return info

