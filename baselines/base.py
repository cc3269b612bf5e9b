"""The bot interface shared by every baseline.

A bot plays from a :class:`~blackout_env.game.view.PlayerView` only, so nothing it
decides can depend on another player's hidden cards. It owns a numpy
``Generator`` (``.rng``) for its random choices; :meth:`Bot.seed` resets it, so
the same seed and the same views give the same actions.
"""

from __future__ import annotations

import numpy as np

from blackout_env.game.view import PlayerView

__all__ = ["Bot"]


class Bot:
    """Base class of the baselines: a name, a seedable generator, ``act(view) -> action``."""

    name: str = "bot"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def seed(self, seed: int | None) -> None:
        """Reset the bot's random generator (``None`` draws fresh entropy)."""
        self.rng = np.random.default_rng(seed)

    def act(self, view: PlayerView) -> int:
        """The action (an int from ``view.legal_actions``) to take in ``view``."""
        raise NotImplementedError

    def _check_turn(self, view: PlayerView) -> tuple[int, ...]:
        """The legal actions of ``view``; a clear error when the view's player has none."""
        if not view.legal_actions:
            raise ValueError(
                f"{self.name}: player {view.player} has no legal action in this view "
                f"(phase {view.phase!r}, current player {view.current_player})"
            )
        return view.legal_actions

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
