"""Policies by name: ``load_policy("heuristic")``, ``load_policy("search:samples=64")``, ``load_policy("ppo:PATH")``.

The spec grammar and the registry live in :mod:`blackout_env.agents.policies` (the
Gym env resolves its opponents there, and ``blackout_env`` may not import this
package); this module re-exports them, so ``blackout_training.agents.policies`` and
``blackout_env.agents.policies`` are one registry: a name registered through either
works everywhere (evaluation, play, training opponents, Gym opponents).
"""

from __future__ import annotations

from blackout_env.agents import policies as _policies
from blackout_env.agents.policies import *  # noqa: F403 - the one registry, re-exported

__all__ = list(_policies.__all__)
