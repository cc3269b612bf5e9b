"""Bots that play Blackout from a player's view: random, heuristic, search, ismcts.

Every bot has a ``name``, ``act(view) -> action`` on a
:class:`~blackout_env.game.view.PlayerView` (never the hidden cards), a numpy
generator ``rng`` and ``seed(seed)``. Make one by name with :func:`make_bot`.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

from .base import Bot
from .heuristic import HeuristicBot
from .ismcts import ISMCTSBot
from .random_bot import RandomBot
from .search import SearchBot

__all__ = ["Bot", "RandomBot", "HeuristicBot", "SearchBot", "ISMCTSBot", "make_bot", "option_error", "BOTS"]

BOTS: dict[str, type[Bot]] = {"random": RandomBot, "heuristic": HeuristicBot, "search": SearchBot, "ismcts": ISMCTSBot}
"""The bots by name."""


def make_bot(name: str, seed: int | None = None, **kwargs: Any) -> Bot:
    """A bot by name ("random", "heuristic", "search", "ismcts"), seeded; ``kwargs`` go to its constructor.

    Raises ValueError naming the known bots for an unknown name, and naming the
    option for an option the bot does not take.
    """
    try:
        cls = BOTS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown bot {name!r}; bots: {', '.join(BOTS)}") from None
    try:
        return cls(seed=seed, **kwargs)
    except TypeError as error:
        raise ValueError(f"bot {name!r}: {option_error(cls, kwargs, error)}") from None


def option_error(cls: type, kwargs: dict[str, Any], error: TypeError) -> str:
    """``error`` (a bot's constructor refusing ``kwargs``) in words: the unknown option and the ones ``cls`` takes."""
    found = re.search(r"unexpected keyword argument '([^']+)'", str(error))
    if found is None or found.group(1) not in kwargs:  # not about an option given: the bot's own error
        return str(error)
    named = [key for key, parameter in inspect.signature(cls).parameters.items()
             if key not in ("seed", "prior") and parameter.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    return f"unknown option {found.group(1)!r}; " + (f"its options: {', '.join(named)}" if named else "it takes no options")
