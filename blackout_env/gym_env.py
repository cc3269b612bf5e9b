"""Blackout as a single-agent Gymnasium environment: one learner against opponent bots.

``gym.make("blackout/Blackout-v0")`` (after ``import blackout_env``) or
``gym.make("blackout_env:blackout/Blackout-v0")`` (no import needed) gives a
match against three heuristic bots. The learner sits in one seat (fixed, or
drawn per episode); after each of its actions the opponents play until it is
the learner's turn again or the episode is over.

- Observation: the learner's flat float32 vector from ``blackout_env.encoding``
  (``Box``; the same vector as the AEC env's ``"observation"``).
- Action: ``Discrete(rules.num_actions)``, cards then bids, as in the AEC env.
- Mask: :meth:`BlackoutGymEnv.action_masks` (for sb3-contrib's MaskablePPO)
  and ``info["action_mask"]`` (int8).
- Reward: the learner's reward of the AEC env (``"score"``, ``"zero_sum"`` or
  ``"win"``, times ``reward_scale``) collected over its action and the
  opponents' actions that follow.
- Illegal actions: ``"penalize"`` by default here (the episode ends with
  ``illegal_reward``), because Gymnasium's tools (``check_env``, agents without
  masks) sample from the whole action space; ``"raise"`` as in the AEC env.

Opponents: a name (``"random"``, ``"heuristic"``, ``"search"``: bots from
``blackout_baselines.make_bot``, imported only when first needed), an object with
``act(view) -> int`` (and optionally ``seed(int)``), or a callable
``f(view) -> int``; one for every other seat, or a list with one per other seat
in clockwise order from the learner. Bots with ``seed`` are reseeded from the
env's seed at every seeded ``reset``; plain callables cannot be, so a game with
them is reproducible only if they are deterministic.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from .aec import raw_env
from .encoding import observation_bounds
from .engine import IllegalActionError
from .rules import Rules
from .view import PlayerView

__all__ = ["BlackoutGymEnv", "OPPONENT_NAMES"]

OPPONENT_NAMES = ("random", "heuristic", "search")
Opponent = Any  # a name, an object with act(view), or a callable(view) -> int


def _make_named_bot(name: str, seed: int | None) -> Any:
    # Imported here: blackout_env must not import blackout_baselines at module level.
    try:
        baselines = importlib.import_module("blackout_baselines")
    except ImportError as error:  # pragma: no cover - baselines ships with this package
        raise ValueError(f"opponent {name!r} needs the baselines package: {error}") from None
    return baselines.make_bot(name, seed=seed)


class _Seat:
    """An opponent in one seat: acts from a view, reseeded at reset when it can be."""

    def __init__(self, spec: Opponent) -> None:
        if isinstance(spec, str):
            if spec not in OPPONENT_NAMES:
                raise ValueError(f"opponents: unknown bot {spec!r}; names: {', '.join(OPPONENT_NAMES)}, or a callable")
            self.name, self._bot, self._act = spec, None, None
        elif hasattr(spec, "act") and callable(spec.act):
            self.name, self._bot, self._act = getattr(spec, "name", type(spec).__name__), spec, spec.act
        elif callable(spec):
            self.name, self._bot, self._act = getattr(spec, "__name__", "callable"), None, spec
        else:
            raise ValueError(
                f"opponents: expected a bot name ({', '.join(OPPONENT_NAMES)}), an object with act(view) "
                f"or a callable(view) -> int, got {spec!r}"
            )

    def seed(self, seed: int) -> None:
        if self._act is None:  # a named bot, created on first use
            self._bot = _make_named_bot(self.name, seed)
            self._act = self._bot.act
        elif self._bot is not None and callable(getattr(self._bot, "seed", None)):
            self._bot.seed(seed)

    def act(self, view: PlayerView) -> int:
        return self._act(view)


class BlackoutGymEnv(gym.Env):
    """One learner against opponents (see the module docstring).

    Args:
        rules: as for the AEC env (a ``Rules``, preset name, YAML path or mapping).
        opponents: one spec for every other seat, or a list of one per other seat
            clockwise from the learner (names, bots or callables).
        learner_seat: the learner's seat, or ``"random"`` to draw it at every reset.
        episode, reward, reward_scale, illegal_action, illegal_reward: as for the AEC env
            (``illegal_action`` defaults to ``"penalize"`` here).
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
    ) -> None:
        self._aec = raw_env(
            rules=rules,
            episode=episode,
            reward=reward,
            reward_scale=reward_scale,
            illegal_action=illegal_action,
            illegal_reward=illegal_reward,
            render_mode=render_mode,
            spectator=spectator,
        )
        self.rules = rules = self._aec.rules
        n = rules.num_players
        if learner_seat != "random" and (
            isinstance(learner_seat, bool) or not isinstance(learner_seat, (int, np.integer)) or not 0 <= learner_seat < n
        ):
            raise ValueError(f"learner_seat: must be a seat 0..{n - 1} or 'random', got {learner_seat!r}")
        self.learner_seat_spec = learner_seat
        if isinstance(opponents, (list, tuple)):
            if len(opponents) != n - 1:
                raise ValueError(f"opponents: a list needs one opponent per other seat ({n - 1}), got {len(opponents)}")
            specs = list(opponents)
        else:
            specs = [opponents] * (n - 1)
        # One object per seat, so two seats of one named bot keep separate random streams.
        self._opponents = [_Seat(spec) for spec in specs]
        self.render_mode = render_mode
        low, high = observation_bounds(rules)
        self.observation_space = spaces.Box(low=low.copy(), high=high.copy(), dtype=np.float32)
        self.action_space = spaces.Discrete(rules.num_actions)
        self.learner_seat: int = 0 if learner_seat == "random" else int(learner_seat)
        """The learner's seat in the current episode."""
        self._over = True

    @property
    def game(self):
        """The engine of the current episode."""
        return self._aec.game

    @property
    def aec_env(self) -> raw_env:
        """The underlying AEC environment."""
        return self._aec

    # ------------------------------------------------------------------ api
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start an episode; ``options`` as for the AEC env (fixed deals, the hand to play)."""
        super().reset(seed=seed)
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
            raise
        self.learner_seat = seat
        self._learner = self._aec.possible_agents[seat]
        self._aec.render_seat = seat
        for opponent, bot_seed in zip(self._opponents, bot_seeds):
            opponent.seed(bot_seed)
        self._over = False
        self._play_opponents()
        return self._observation(), self._info()

    def step(self, action: Any):
        """The learner acts; then the opponents play until the learner's turn or the end."""
        if self._over:
            raise RuntimeError("step() with no episode running (not reset yet, or the episode ended): call reset()")
        aec = self._aec
        aec.step(action)  # raises IllegalActionError (nothing changed) under illegal_action="raise"
        self._play_opponents()
        reward = float(aec._cumulative_rewards[self._learner])
        terminated = aec.terminations[self._learner]
        if terminated:
            self._over = True
        return self._observation(), reward, terminated, False, self._info()

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as a bool array (sb3-contrib's MaskablePPO calls this)."""
        if self._aec.game is None:
            raise RuntimeError("action_masks() before reset(): call reset() to start an episode")
        return self._aec.observe(self._learner)["action_mask"].astype(bool)

    def render(self) -> str | np.ndarray | None:
        """Draw the table as the learner sees it (see ``render_mode``)."""
        return self._aec.render()

    def close(self) -> None:
        self._aec.close()

    # -------------------------------------------------------------- helpers
    def _play_opponents(self) -> None:
        aec = self._aec
        learner = self._learner
        seat = self.learner_seat
        n = self.rules.num_players
        while not aec.terminations[learner] and aec.agent_selection != learner:
            agent = aec.agent_selection
            opponent_seat = aec._seat_of[agent]
            view = aec.view(agent)
            action = self._opponents[(opponent_seat - seat) % n - 1].act(view)
            if type(action) is not int:
                action = int(action) if isinstance(action, (np.integer, np.ndarray)) else action
            if action not in view.legal_actions:
                raise IllegalActionError(
                    f"opponent {self._opponents[(opponent_seat - seat) % n - 1].name!r} in seat {opponent_seat} "
                    f"chose {action!r}, which is not legal; legal: {list(view.legal_actions)}"
                )
            aec.step(action)

    def _observation(self) -> np.ndarray:
        return self._aec.observe(self._learner)["observation"]

    def _info(self) -> dict[str, Any]:
        info = dict(self._aec.infos.get(self._learner, {}))
        if info.get("last_hand") is not None:
            info["last_hand"] = dict(info["last_hand"])
        info["action_mask"] = self._aec.observe(self._learner)["action_mask"]
        info["learner_seat"] = self.learner_seat
        return info

