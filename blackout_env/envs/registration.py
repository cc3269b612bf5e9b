"""Registered environment ids, in the ``blackout`` namespace (run on ``import blackout_env``).

PettingZoo (AEC): ``pettingzoo.make("aec", "blackout/Blackout-v0", **kwargs)``, with
PettingZoo 1.27 or later (earlier versions have no registry: there, use
``blackout_env.env(**kwargs)``, which works with every supported version).

Gymnasium (one learner against bots; ``gym.make("blackout_env:<id>")`` works
without importing anything first):

=================================  =========================================================
id                                 what
=================================  =========================================================
``blackout/Blackout-v0``           a standard match (4 players, 10 cards down to 1) against 3 heuristic bots
``blackout/BlackoutHand-v0``       one hand per episode (hand size drawn from the match) against heuristic bots
``blackout/BlackoutVsRandom-v0``   a standard match against 3 random bots
=================================  =========================================================

Every keyword of :class:`blackout_env.envs.gym_env.BlackoutGymEnv` may be passed to
``gym.make`` to change the defaults (``rules``, ``opponents``, ``learner_seat``, ...).

Each Gymnasium id also has a ``vector_entry_point``, the batched
:class:`blackout_env.envs.vector_env.BlackoutVectorEnv`:
``gym.make_vec("blackout_env:blackout/Blackout-v0", num_envs=4096,
vectorization_mode="vector_entry_point", opponents="random")``.
"""

from __future__ import annotations

import inspect
from typing import Any

__all__ = ["GYM_IDS", "PETTINGZOO_IDS", "register_envs"]

PETTINGZOO_IDS: dict[str, dict[str, Any]] = {"blackout/Blackout-v0": {}}
GYM_IDS: dict[str, dict[str, Any]] = {
    "blackout/Blackout-v0": {},
    "blackout/BlackoutHand-v0": {"episode": "hand"},
    "blackout/BlackoutVsRandom-v0": {"opponents": "random"},
}


def register_envs() -> None:
    """Register the ids above with PettingZoo and Gymnasium (idempotent)."""
    import gymnasium
    import pettingzoo

    # PettingZoo's registry (pettingzoo.register, aec_registry) arrived in 1.27; older
    # versions, which libraries such as AgileRL pin, have nothing to register into.
    aec_registry = getattr(pettingzoo, "aec_registry", None)
    if aec_registry is not None and callable(getattr(pettingzoo, "register", None)):
        for env_id, kwargs in PETTINGZOO_IDS.items():
            if env_id not in aec_registry:
                pettingzoo.register("aec", env_id, entry_point="blackout_env.envs.aec:env", kwargs=kwargs)
    vector: dict[str, str] = {}
    if "vector_entry_point" in inspect.signature(gymnasium.register).parameters:  # (Gymnasium >= 1.0)
        vector["vector_entry_point"] = "blackout_env.envs.vector_env:BlackoutVectorEnv"
    for env_id, kwargs in GYM_IDS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point="blackout_env.envs.gym_env:BlackoutGymEnv", kwargs=kwargs, **vector)
