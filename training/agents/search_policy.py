"""``ppo+search``: IS-MCTS guided by a trained policy (the shipped ``ppo`` generalist by default).

:class:`~blackout_baselines.ISMCTSBot` searches as the ``ismcts`` policy does;
the policy's probability of each legal action at the decision is a
progressive bias at the root (``prior_weight * probability / (visits + 1)`` on
the action's UCB value), so the first simulations go to the moves the policy
likes and the search's own statistics take over as they accumulate. One
forward pass of the network per decision.

Spec: ``ppo+search`` or ``ppo+search:simulations=400,prior_weight=1,checkpoint=PATH``
(any other option of ``ismcts``; 400 simulations by default, 100 fewer than
``ismcts``, so that with the network's pass it takes less time per decision
than OpenSpiel's C++ IS-MCTS at 500: 0.73x-0.82x its CPU time, where 500 of its own take 0.94x
(docs/ismcts.md, "Speed"); ``checkpoint`` defaults to the shipped generalist, so
``ppo+search`` plays every table ``ppo`` plays; ``checkpoint=training/agents/checkpoints/ppo_standard_4p.pt``
guides it with the standard 4-player specialist instead, at that table only).
``prior_margin=M`` keeps the network's own choice unless the search's is more than M better in mean
scaled score: 0.1 by default (docs/held-out.md: with it ``ppo+search`` is behind ``ppo`` on none
of the held-out rows; without it, on three per-trick rows); ``prior_margin=none`` plays the most
visited action, as ``ismcts`` does. ``margin_scale=stake`` (the default) makes M a share of the points
the seat still has at stake once its bid is in, so that late in a hand a sure trick worth a point is
not held back by a margin sized for the whole hand (docs/positions.md); ``margin_scale=hand``, M of the
whole hand's range, as before issue 51.

``ppo+search-deep`` is the same search at :data:`DEEP_OPTIONS` (1,600 simulations, the last three tricks of every
simulation solved exactly, where the margin is ``endgame_margin``, 0 by default): the strongest bot shipped, about six times ``ppo+search``'s time per decision
(docs/ismcts.md, "The strongest bot"). Its spec takes the same options.
"""

from __future__ import annotations

from blackout_baselines import ISMCTSBot, option_error

from blackout_env import Rules
from blackout_env.agents.policies import SeededPolicy, parse_options, pop_file, pop_seed

from .policy_net import load_policy_bot

__all__ = ["DEEP_OPTIONS", "DEFAULT_MARGIN_SCALE", "DEFAULT_PRIOR_MARGIN", "DEFAULT_SIMULATIONS", "load_ppo_search",
           "load_ppo_search_deep"]

DEFAULT_SIMULATIONS = 400
"""Simulations per decision of ``ppo+search`` unless the spec gives ``simulations`` or ``time_ms``."""

DEFAULT_PRIOR_MARGIN = 0.1
"""``prior_margin`` of ``ppo+search`` unless the spec gives one (``prior_margin=none``: off)."""

DEFAULT_MARGIN_SCALE = "stake"
"""``margin_scale`` of ``ppo+search``: the margin is a share of the points the seat still has at stake in the hand."""

DEEP_OPTIONS = {"simulations": 1600, "endgame": 3}
"""What ``ppo+search-deep`` changes in ``ppo+search``: four times the simulations, and the last three tricks of
every simulation solved exactly, there without the margin (``endgame_margin``: docs/ismcts.md, "The strongest bot")."""


def load_ppo_search(argument: str | None, rules: Rules | None, seed: int | None) -> ISMCTSBot | SeededPolicy:
    """The loader behind the policy spec ``ppo+search`` (``blackout_env.agents.policies``)."""
    return _load("ppo+search", argument, rules, seed, {"simulations": DEFAULT_SIMULATIONS})


def load_ppo_search_deep(argument: str | None, rules: Rules | None, seed: int | None) -> ISMCTSBot | SeededPolicy:
    """The loader behind ``ppo+search-deep``: ``ppo+search`` at :data:`DEEP_OPTIONS` unless the spec says otherwise."""
    return _load("ppo+search-deep", argument, rules, seed, DEEP_OPTIONS)


def _load(name: str, argument: str | None, rules: Rules | None, seed: int | None,
          defaults: dict[str, int]) -> ISMCTSBot | SeededPolicy:
    spec = name if argument is None else f"{name}:{argument}"
    options = parse_options(argument, spec)
    checkpoint = pop_file(options, "checkpoint", spec)
    fixed = pop_seed(options, spec)
    if "prior" in options:
        raise ValueError(f"policy {spec!r}: prior is the network's ({name} sets it); choose the network with checkpoint=PATH")
    if "simulations" in options or "time_ms" in options:  # a budget of the spec's own replaces the default one
        defaults = {key: value for key, value in defaults.items() if key != "simulations"}
    options = {**defaults, **options}
    margin = options.get("prior_margin", DEFAULT_PRIOR_MARGIN)
    options["prior_margin"] = None if isinstance(margin, str) and margin.lower() == "none" else margin
    options.setdefault("margin_scale", DEFAULT_MARGIN_SCALE)
    seed = seed if fixed is None else fixed
    policy = load_policy_bot(checkpoint, rules, seed=seed)
    try:
        bot = ISMCTSBot(seed=seed, prior=policy.action_probabilities, **options)
    except TypeError as error:  # an option the bot does not take
        words = option_error(ISMCTSBot, options, error)
        raise ValueError(f"policy {spec!r}: {words}{' (and checkpoint)' if words.startswith('unknown option') else ''}") from None
    except ValueError as error:
        raise ValueError(f"policy {spec!r}: {error}") from None
    bot.name = name
    bot.checkpoint = policy.checkpoint
    return bot if fixed is None else SeededPolicy(bot, fixed)
