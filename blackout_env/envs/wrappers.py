"""Wrappers of the AEC env for libraries that read rewards their own way.

:class:`ActingSeatRewards`: every seat's rewards, delivered at its own decisions.

In Blackout a hand's score reaches every seat when its last card falls, which is
usually another seat's move. The AEC env reports it the PettingZoo way: in
``rewards`` after that move, and in every seat's ``last()`` at its next turn.
Libraries that credit each step's reward to the seat that acted in it
(Tianshou's ``PettingZooEnv`` with ``MultiAgentPolicyManager``; the usual SB3
self-play wrapper that reads ``rewards[agent]`` after the agent's own ``step``)
drop every reward that arrives on another seat's move: most of the game's
reward (for 4 players, about three quarters) never reaches training.

``ActingSeatRewards(env)`` changes only when rewards are reported:

- After each ``step``, ``rewards`` is nonzero for the seat that just acted
  only: the sum of everything it earned since its previous decision, this move
  included (``_cumulative_rewards``, and so ``last()`` at its next turn, hold it
  until it acts again, as PettingZoo's API asks). What a seat earns after its
  last move of a hand arrives with its next decision (its first bid of the next
  hand), one decision later than the move that earned it.
- When the game's episode ends, every other seat gets one more turn, its
  **end decision**, in clockwise order from the seat that made the last move:
  its observation is its final one, its mask is all ones (any action is
  accepted and ignored; ``None`` too), and the step delivers what it still had
  to receive. ``terminations`` turn true for all seats after the last end
  decision; then the usual PettingZoo dead steps (``step(None)``) follow.

So the sum of the rewards each seat receives at its own steps equals the sum
of the AEC env's rewards to it (with ``reward="score"``: its match score).
Libraries that read ``last()`` as PettingZoo intends need no wrapper.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo.utils.wrappers import BaseWrapper

__all__ = ["ActingSeatRewards"]


class ActingSeatRewards(BaseWrapper):
    """Deliver each seat's rewards at its own decisions, and give every seat an end decision (module docstring).

    Args:
        env: a Blackout AEC env (``blackout_env.env()`` or ``raw_env()``, possibly wrapped).
    """

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self._pending: dict[str, float] = {}
        self._end_queue: list[str] = []
        self._ending = False

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start an episode of the wrapped env; nothing is owed to anyone yet."""
        self.env.reset(seed=seed, options=options)
        self.agents = list(self.env.agents)
        self._pending = dict.fromkeys(self.agents, 0.0)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: self.env.infos[agent] for agent in self.agents}
        self.agent_selection = self.env.agent_selection
        self._skip_agent_selection = None
        self._end_queue = []
        self._ending = False

    def step(self, action: Any) -> None:
        """The selected seat acts (or takes its end decision); it receives what it is owed."""
        agent = self.agent_selection
        if self.terminations.get(agent) or self.truncations.get(agent):
            self._was_dead_step(action)
            return
        if self._ending:
            self._end_decision(agent, action)
            return
        self.env.step(action)  # raises on an illegal action before anything here changes
        for seat, reward in self.env.rewards.items():
            self._pending[seat] += reward
        self._deliver(agent)
        self.infos = {seat: self.env.infos.get(seat, self.infos[seat]) for seat in self.agents}
        if any(self.env.terminations.values()) or any(self.env.truncations.values()):
            # The game is over: the other seats, clockwise from the last mover, each get an end decision.
            start = self.agents.index(agent)
            self._end_queue = [self.agents[(start + k) % len(self.agents)] for k in range(1, len(self.agents))]
            self._ending = True
            self.agent_selection = self._end_queue[0]
        else:
            self.agent_selection = self.env.agent_selection

    def observe(self, agent: str) -> Any:
        """The wrapped env's observation; at end decisions and after the end, the mask is all ones."""
        observation = self.env.observe(agent)
        if self._ending or any(self.terminations.values()):
            observation = dict(observation)
            observation["action_mask"] = np.ones_like(observation["action_mask"])
        return observation

    def _deliver(self, agent: str) -> None:
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self.rewards[agent] = self._pending[agent]
        self._pending[agent] = 0.0
        # PettingZoo's cumulative reward: what a seat received since its own last step (0 for the others).
        self._cumulative_rewards[agent] = self.rewards[agent]

    def _end_decision(self, agent: str, action: Any) -> None:
        space = self.action_space(agent)
        if action is not None:
            try:
                valid = space.contains(np.asarray(action, dtype=np.int64).reshape(()))
            except (TypeError, ValueError):
                valid = False
            if not valid:
                raise ValueError(f"{agent}'s end decision: an action of {space} (it is ignored) or None, got {action!r}")
        self._deliver(agent)
        self._end_queue.pop(0)
        if self._end_queue:
            self.agent_selection = self._end_queue[0]
            return
        self._ending = False
        self.truncations = {seat: bool(self.env.truncations.get(seat, False)) for seat in self.agents}
        self.terminations = {seat: not self.truncations[seat] for seat in self.agents}
        self.agent_selection = self.agents[(self.agents.index(agent) + 1) % len(self.agents)]
