"""A policy seated at a table: the one way the envs and the trainer's league turn a policy into moves.

The Gym env (one game), the vector env (a batch of games) and the training package's league of
opponents (which its RLlib env uses too) all seat their opponents with :class:`Seat`. A policy is anything :func:`blackout_env.agents.policies.as_policy`
takes: a spec (``"heuristic"``, ``"search:samples=64"``, ``"ppo:PATH"``), an object with
``act(view) -> int`` or a callable ``f(view) -> int`` (the :class:`~blackout_env.agents.policies.Policy`
protocol). It may also offer, and a seat then uses:

- ``act_batch(obs, mask) -> actions``: many games' decisions from their observation rows
  (a trained network), with an ``observation`` attribute (``"rules"``, the default, or
  ``"universal"``) saying which vector it reads and which action space it answers in;
- ``batched(rules)``: an object whose ``act(engine, games)`` decides for many games of a
  batched engine at once from the engine's arrays, with the same actions as ``act(view)``
  (the heuristic bot's :class:`~blackout_baselines.heuristic_batch.BatchedHeuristic`), or None;
- ``seed(int)``: the env reseeds it at a seeded reset.

How a seat acts for a batch of games is its ``kind``:

==========  ========================================================================
``random``  the spec ``"random"`` in a batch: the engine's own uniform legal draws
``engine``  ``batched(rules).act(engine, games)``
``batch``   ``act_batch`` on the games' observation rows and masks
``view``    ``act(view)``, one game at a time (correct for any policy, and slow)
==========  ========================================================================

One game (:meth:`Seat.act`) always goes through ``act(view)`` (or ``act_batch`` on the
encoded view, for a policy that has only that).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..game.encoding import action_mask, encode
from ..game.rules import Rules
from ..game.universal import observation_kind, rules_actions, universal_action_mask, universal_observation
from .policies import as_policy, policy_names

if TYPE_CHECKING:
    from ..batched import BatchedBlackout
    from ..game.view import PlayerView

__all__ = ["KINDS", "Seat"]

KINDS = ("random", "engine", "batch", "view")
"""How a :class:`Seat` decides for a batch of games (see the module docstring)."""


class Seat:
    """A policy seated at a table of ``rules``.

    Args:
        spec: a policy spec, a policy object or a callable (see the module docstring).
        rules: the table's rules (a spec is loaded for them).
        observation: what the table's batched engine observes (``"rules"`` or ``"universal"``).
        batched: the seat plays in a batch of games (the vector env, the league): ``"random"`` then
            draws in the engine and a policy with ``batched`` or ``act_batch`` is asked in batch.
        seed: passed to the policy's loader for a spec.

    Raises ValueError naming the spec when it names no policy (or a policy that cannot play here).
    """

    def __init__(
        self, spec: Any, rules: Rules, observation: str = "rules", *, batched: bool = True, seed: int | None = None
    ) -> None:
        self.rules = rules
        self._engine_policies: dict[Rules, Any] = {}
        batch_only = callable(getattr(spec, "act_batch", None)) and not callable(getattr(spec, "act", None))
        if not batch_only and not isinstance(spec, str) and not callable(spec) and not callable(getattr(spec, "act", None)):
            raise ValueError(
                f"opponents: expected a policy spec ({', '.join(policy_names())}, NAME:OPTIONS), an object with "
                f"act(view) or act_batch(obs, mask), or a callable(view) -> int; {spec!r} names no policy"
            )
        try:  # names through the one registry of policy specs, as evaluation and play do
            self.policy: Any = spec if batch_only else as_policy(spec, rules, seed)
        except ValueError as error:
            raise ValueError(f"opponents: {error}") from None
        self.name: str = spec if isinstance(spec, str) else getattr(self.policy, "name", None) or type(spec).__name__
        self.observation = "rules"
        """What a ``batch`` seat's policy reads, and the action space it answers in."""
        if callable(getattr(self.policy, "act_batch", None)):
            try:
                self.observation = observation_kind(getattr(self.policy, "observation", "rules"))
            except ValueError as error:
                raise ValueError(f"opponents: {self.name!r}: {error}") from None
        if batched and spec == "random":
            self.kind = "random"
        elif batched and self.engine_policy(rules) is not None:
            self.kind = "engine"
        elif batched and callable(getattr(self.policy, "act_batch", None)) and not (
            self.observation == "rules" and observation == "universal"  # the engine makes universal vectors only
        ):
            self.kind = "batch"
        else:
            self.kind = "view"
        if batched and self.kind == "view" and not callable(getattr(self.policy, "act", None)):
            raise ValueError(
                f"opponents: {self.name!r} reads the rules-sized observation and has no act(view), "
                "so it cannot play in an env built with observation='universal'"
            )

    def __repr__(self) -> str:
        return f"Seat({self.name!r}, kind={self.kind!r})"

    def seed(self, seed: int) -> None:
        """Reseed the policy, when it can be."""
        reseed = getattr(self.policy, "seed", None)
        if callable(reseed):
            reseed(seed)

    def engine_policy(self, rules: Rules) -> Any:
        """The policy's ``batched(rules)`` (made once per rule set), or None when it has none."""
        make = getattr(self.policy, "batched", None)
        if not callable(make):
            return None
        cached = self._engine_policies
        if rules not in cached:
            if len(cached) >= 64:  # a table distribution meets many rule sets: only recent ones kept
                cached.clear()
            cached[rules] = make(rules)
        return cached[rules]

    # ------------------------------------------------------------ one game
    def act(self, view: PlayerView) -> int:
        """The action for one view."""
        if callable(getattr(self.policy, "act", None)):
            return self.policy.act(view)
        obs, mask = encode(view)[None], action_mask(view)[None]
        return int(self._act_batch(obs, mask, view.rules, "rules")[0])

    # ----------------------------------------------------------- many games
    def act_games(
        self,
        engine: BatchedBlackout,
        games: np.ndarray,
        seats: np.ndarray,
        observe: Callable[[], tuple[np.ndarray, np.ndarray]],
        rng: np.random.Generator | None = None,
    ) -> np.ndarray:
        """Actions (int64, in ``engine.rules``' action space) for ``games`` of ``engine``, as the seat's kind decides.

        ``seats`` are the seats to act in those games; ``observe()`` gives their observation rows (in the
        engine's observation kind) and legal-action rows (int8, ``engine.rules``' actions), and is called
        only by a ``batch`` seat; ``rng`` draws a ``random`` seat's moves. Legality is the caller's to check.
        """
        if self.kind == "random":
            return engine.random_actions(rng)[games]
        if self.kind == "engine":
            return np.asarray(self.engine_policy(engine.rules).act(engine, games), dtype=np.int64)
        if self.kind == "batch":
            obs, mask = observe()
            return self._act_batch(obs, mask, engine.rules, engine.observation)
        actions = np.empty(len(games), dtype=np.int64)
        for k, (game, seat) in enumerate(zip(games.tolist(), seats.tolist())):
            actions[k] = int(self.policy.act(engine.view(game, seat)))
        return actions

    def _act_batch(self, obs: np.ndarray, mask: np.ndarray, rules: Rules, given: str) -> np.ndarray:
        """``act_batch`` on observation rows of kind ``given``, translated to and from what the policy reads."""
        if self.observation == "universal":
            if given == "rules":
                obs = universal_observation(obs, rules)
            mask = universal_action_mask(mask, rules)
        chosen = np.asarray(self.policy.act_batch(obs, mask))
        if chosen.shape != (len(obs),) or chosen.dtype.kind not in "iu":
            raise ValueError(
                f"opponent {self.name!r}: act_batch returned {chosen.dtype} {chosen.shape}; expected {len(obs)} int actions"
            )
        if self.observation == "universal":
            chosen = rules_actions(chosen, rules, missing=-1)  # -1: refused as illegal by the caller
        return chosen.astype(np.int64, copy=False)
