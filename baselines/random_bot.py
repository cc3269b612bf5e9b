"""RandomBot: a uniformly random legal action."""

from __future__ import annotations

import numpy as np

from blackout_env.agents.policies import Explanation, action_reasons
from blackout_env.game.view import PlayerView

from .base import Bot

__all__ = ["RandomBot"]


class RandomBot(Bot):
    """Plays a legal action drawn uniformly at random from its generator."""

    name = "random"

    def act(self, view: PlayerView) -> int:
        return self._draw(self._check_turn(view))

    def explain(self, view: PlayerView) -> Explanation:
        """The action :meth:`act` would draw (the same draw from the generator) and the uniform chance of each."""
        legal = self._check_turn(view)
        chance = 1.0 / len(legal)
        return Explanation(
            self._draw(legal), "random", action_reasons(legal, probabilities=dict.fromkeys(legal, chance)), None,
            "a uniform random choice: every legal action has the same probability",
        )

    def _draw(self, legal: tuple[int, ...]) -> int:
        return int(legal[int(self.rng.integers(len(legal)))])

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """One uniformly random legal action per row of an action ``mask`` (``obs`` is unused).

        Raises ValueError when a row has no legal action.
        """
        mask = np.asarray(mask).astype(bool)
        if mask.ndim != 2:
            raise ValueError(f"mask: expected a 2-D array (batch, actions), got shape {mask.shape}")
        counts = mask.sum(axis=1)
        if (counts == 0).any():
            raise ValueError(f"mask: row {int(np.argmin(counts))} has no legal action")
        # The k-th legal action of a row, k uniform in 0..count-1, via the cumulative count.
        picks = (self.rng.random(len(mask)) * counts).astype(np.int64)
        cumulative = np.cumsum(mask, axis=1)
        return (cumulative > picks[:, None]).argmax(axis=1)
