"""Policies by name: ``load_policy("heuristic")``, ``load_policy("search:samples=64")``, ``load_policy("ppo:PATH")``.

A policy is anything with ``.name`` and ``.act(view) -> action``; bots also
have ``.seed(seed)``. A spec is ``NAME`` or ``NAME:ARGUMENT``; the part before
the first colon picks a loader from :data:`LOADERS`. For the bots the
argument is a comma-separated list of ``key=value`` options passed to the bot
(``search:samples=64,time_limit_ms=200``).

Loaders are registered in one place, :data:`LOADERS` (or with
:func:`register_policy`); a loader that needs torch imports it inside itself,
so resolving "random" or "heuristic" never imports torch.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Protocol

from blackout_env.rules import Rules
from blackout_env.view import PlayerView

__all__ = ["Policy", "LOADERS", "load_policy", "register_policy", "policy_names"]


class Policy(Protocol):
    """What evaluation and play need from a policy."""

    name: str

    def act(self, view: PlayerView) -> int: ...


Loader = Callable[[str | None, Rules | None, int | None], Policy]


def _parse_options(argument: str | None, spec: str) -> dict[str, Any]:
    """``"samples=64,time_limit_ms=200"`` -> ``{"samples": 64, "time_limit_ms": 200}``."""
    options: dict[str, Any] = {}
    if not argument:
        return options
    for item in argument.split(","):
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"policy {spec!r}: options are key=value pairs separated by commas, got {item!r}")
        value: Any = text.strip()
        for convert in (int, float):
            try:
                value = convert(value)
                break
            except ValueError:
                continue
        options[key] = value
    return options


def _bot_loader(bot_name: str) -> Loader:
    def load(argument: str | None, rules: Rules | None, seed: int | None) -> Policy:
        from blackout_baselines import make_bot

        return make_bot(bot_name, seed=seed, **_parse_options(argument, f"{bot_name}:{argument}"))

    load.__doc__ = f"The {bot_name} bot; the argument holds key=value options."
    return load


def _entry_point_loader(module: str, function: str) -> Loader:
    """A loader living in another module, imported only when used (e.g. torch checkpoints)."""

    def load(argument: str | None, rules: Rules | None, seed: int | None) -> Policy:
        return getattr(importlib.import_module(module), function)(argument, rules, seed)

    return load


LOADERS: dict[str, Loader] = {
    "random": _bot_loader("random"),
    "heuristic": _bot_loader("heuristic"),
    "search": _bot_loader("search"),
    # "ppo": the checkpoint shipped in training/checkpoints; "ppo:PATH": a trained checkpoint.
    "ppo": _entry_point_loader("blackout_training.policy_net", "load_ppo_policy"),
}
"""Spec prefix -> loader(argument, rules, seed). The one place where policy names are defined."""


def register_policy(prefix: str, loader: Loader) -> None:
    """Add (or replace) the loader for specs ``prefix`` and ``prefix:ARGUMENT``."""
    if not prefix or ":" in prefix:
        raise ValueError(f"policy prefix must be a non-empty name without ':', got {prefix!r}")
    LOADERS[prefix] = loader


def policy_names() -> list[str]:
    """The known spec prefixes."""
    return list(LOADERS)


def load_policy(spec: str | Policy, rules: Rules | str | None = None, seed: int | None = None) -> Policy:
    """The policy named by ``spec`` ("random", "heuristic", "search", "search:samples=64", "ppo:PATH").

    A policy object (anything with ``act``) is returned unchanged. Raises
    ValueError naming the spec and the known names when it names no policy, or
    the loader's reason (a missing checkpoint, an unknown option).
    """
    if not isinstance(spec, str):
        if callable(getattr(spec, "act", None)):
            return spec
        raise ValueError(f"a policy is a name such as 'heuristic' or an object with act(view), got {spec!r}")
    prefix, _, argument = spec.partition(":")
    loader = LOADERS.get(prefix.strip())
    if loader is None:
        raise ValueError(f"unknown policy {spec!r}; known policies: {', '.join(LOADERS)} (and NAME:OPTIONS)")
    resolved = Rules.resolve(rules) if rules is not None else None
    return loader(argument or None, resolved, seed)
